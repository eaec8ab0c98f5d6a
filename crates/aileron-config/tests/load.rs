//! Finding, layering and caching policy files on a real file system.

use aileron_config::{CacheOutcome, LoadOptions, load};
use aileron_engine::{Action, Decision, Layer, LineContext, Session, State};
use std::fs;
use std::path::Path;

struct Fixture {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(root.join("home/.aileron")).unwrap();
        fs::create_dir_all(root.join("proj/src/deep")).unwrap();
        Fixture { _dir: dir, root }
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn opts(&self, cwd: &str) -> LoadOptions {
        LoadOptions {
            cwd: self.root.join(cwd),
            policy_path: None,
            home: self.root.join("home"),
            data_dir: self.root.join("home/.aileron"),
            user_settings: true,
            auto_profiles: true,
            run_tests: false,
            server_rules: false,
        }
    }
}

fn decide(policy: &aileron_engine::Policy, cwd: &Path, line: &str) -> (Decision, Option<String>) {
    let cwd = cwd.to_string_lossy();
    let session = Session::default();
    let cx = LineContext {
        cwd: &cwd,
        session: &session,
        timestamp: "2026-01-05T12:00:00Z".parse().ok(),
        id: "t",
        exe: None,
    };
    let v = policy.evaluate_line(line, &cx, &State::default()).verdict;
    (v.decision, v.rule)
}

#[test]
fn the_project_file_is_found_by_walking_up() {
    let f = Fixture::new();
    f.write("proj/aileron.yaml", "version: 1\ndefault: deny\n");
    let loaded = load(&f.opts("proj/src/deep"), None).unwrap();
    assert_eq!(loaded.project_file, Some(f.root.join("proj/aileron.yaml")));
    assert_eq!(loaded.policy.default.as_str(), "deny");
}

#[test]
fn layers_come_in_spec_order_and_each_profile_once() {
    let f = Fixture::new();
    f.write("proj/go.mod", "module x\n");
    f.write("proj/Cargo.toml", "[package]\n");
    f.write(
        "proj/team.yaml",
        "version: 1\nprofiles: [lang/go, ./more.yaml]\nallow: [\"make *\"]\n",
    );
    f.write("proj/more.yaml", "version: 1\nallow: [\"just *\"]\n");
    f.write(
        "proj/aileron.yaml",
        "version: 1\nprofiles: [./team.yaml, lang/python]\n",
    );
    f.write(
        "home/.aileron/settings.yaml",
        "version: 1\nsettings: {timeout: 7}\n",
    );
    let policy = load(&f.opts("proj"), None).unwrap().policy;
    let names: Vec<(String, Layer)> = policy.sources.clone();
    let p = |s: &str| f.root.join(s).to_string_lossy().into_owned();
    let expected = vec![
        ("<builtin>/os/linux".to_owned(), Layer::Os),
        ("<builtin>/lang/go".to_owned(), Layer::Lang),
        ("<builtin>/lang/rust".to_owned(), Layer::Lang),
        (p("proj/more.yaml"), Layer::Profile),
        (p("proj/team.yaml"), Layer::Profile),
        ("<builtin>/lang/python".to_owned(), Layer::Profile),
        (p("proj/aileron.yaml"), Layer::Project),
        (p("home/.aileron/settings.yaml"), Layer::User),
    ];
    if cfg!(target_os = "linux") {
        assert_eq!(names, expected);
    }
    assert_eq!(policy.settings.timeout, Some(7));
    assert_eq!(
        decide(&policy, &f.root.join("proj"), "go test ./...").0,
        Decision::Allow
    );
    assert_eq!(
        decide(&policy, &f.root.join("proj"), "just build").0,
        Decision::Allow
    );
}

#[test]
fn user_settings_cannot_cancel_a_project_deny() {
    let f = Fixture::new();
    f.write(
        "proj/aileron.yaml",
        "version: 1\ndeny:\n  - {id: no-push, command: \"git push *\"}\n",
    );
    f.write(
        "home/.aileron/settings.yaml",
        "version: 1\nallow:\n  - {override: no-push, command: \"git push *\"}\n",
    );
    let err = load(&f.opts("proj"), None).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(
            "settings.yaml:3:16: error: `override: no-push`: deny rules cannot be overridden"
        ),
        "{text}"
    );

    // Nor outrank it with a higher priority.
    f.write(
        "home/.aileron/settings.yaml",
        "version: 1\nallow:\n  - {command: \"git push *\", priority: 900}\n",
    );
    let policy = load(&f.opts("proj"), None).unwrap().policy;
    assert_eq!(
        decide(&policy, &f.root.join("proj"), "git push origin x"),
        (Decision::Deny, Some("no-push".into()))
    );
}

#[test]
fn the_policy_files_in_force_are_protected() {
    let f = Fixture::new();
    f.write("proj/team-rules.yml", "version: 1\n");
    f.write(
        "proj/aileron.yaml",
        "version: 1\nprofiles: [./team-rules.yml]\ndefault: allow\n",
    );
    let policy = load(&f.opts("proj"), None).unwrap().policy;
    let cwd = f.root.join("proj");
    for line in [
        "echo 'allow: [\"*\"]' >> team-rules.yml",
        "rm ../proj/team-rules.yml",
        "echo x > ~/.aileron/settings.yaml",
    ] {
        assert_eq!(
            decide(&policy, &cwd, line),
            (Decision::Deny, Some("builtin:protect-policy".into())),
            "{line}"
        );
    }
    let mut write = Action {
        kind: "fs.write".into(),
        ..Action::default()
    };
    write
        .facets
        .insert("fs".into(), serde_json::json!({"path": "team-rules.yml"}));
    write.session.cwd = Some(cwd.to_string_lossy().into_owned());
    write.normalize();
    assert_eq!(
        policy.evaluate(&write, &State::default()).decision,
        Decision::Deny
    );
}

#[test]
fn the_cache_is_used_until_a_source_changes() {
    let f = Fixture::new();
    let cache = f.root.join("cache");
    f.write("proj/team.yaml", "version: 1\nallow: [\"make *\"]\n");
    f.write("proj/aileron.yaml", "version: 1\nprofiles: [./team.yaml]\n");
    let opts = f.opts("proj");
    assert_eq!(load(&opts, Some(&cache)).unwrap().cache, CacheOutcome::Miss);
    let hit = load(&opts, Some(&cache)).unwrap();
    assert_eq!(hit.cache, CacheOutcome::Hit);
    assert_eq!(
        decide(&hit.policy, &f.root.join("proj"), "make all").0,
        Decision::Allow
    );

    // A profile's content changes: the cached policy is not used.
    f.write("proj/team.yaml", "version: 1\ndeny: [\"make *\"]\n");
    let reloaded = load(&opts, Some(&cache)).unwrap();
    assert_eq!(reloaded.cache, CacheOutcome::Miss);
    assert_eq!(
        decide(&reloaded.policy, &f.root.join("proj"), "make all").0,
        Decision::Deny
    );

    // One changed byte anywhere in an entry, and it is not used.
    let entry = fs::read_dir(&cache)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let good = fs::read(&entry).unwrap();
    for at in [0, 8, good.len() / 2, good.len() - 1] {
        let mut bad = good.clone();
        bad[at] ^= 0x01;
        fs::write(&entry, bad).unwrap();
        assert_eq!(load(&opts, Some(&cache)).unwrap().cache, CacheOutcome::Miss);
        fs::write(&entry, &good).unwrap();
    }

    // A corrupt cache file is ignored, never trusted.
    for entry in fs::read_dir(&cache).unwrap() {
        fs::write(entry.unwrap().path(), "{not json").unwrap();
    }
    let again = load(&opts, Some(&cache)).unwrap();
    assert_eq!(again.cache, CacheOutcome::Miss);
    assert_eq!(
        decide(&again.policy, &f.root.join("proj"), "make all").0,
        Decision::Deny
    );
}

#[test]
fn an_invalid_policy_is_never_cached_and_says_where() {
    let f = Fixture::new();
    let cache = f.root.join("cache");
    f.write(
        "proj/aileron.yaml",
        "version: 1\nallow:\n  - {command: \"ls\", priority: high}\n",
    );
    let err = load(&f.opts("proj"), Some(&cache)).unwrap_err();
    assert!(
        err.to_string()
            .contains("aileron.yaml:3:31: error: `priority` must be an integer, found a string"),
        "{err}"
    );
    assert!(!cache.exists() || fs::read_dir(&cache).unwrap().next().is_none());
}

#[test]
fn failing_policy_tests_refuse_the_policy_when_asked_to_run_them() {
    let f = Fixture::new();
    f.write(
        "proj/aileron.yaml",
        "version: 1\ntests:\n  - {command: \"ls\", expect: deny}\n",
    );
    let mut opts = f.opts("proj");
    opts.run_tests = true;
    let err = load(&opts, None).unwrap_err().to_string();
    assert!(
        err.contains("aileron.yaml:3:5: error: policy test `ls` failed: expected deny, got allow"),
        "{err}"
    );
}

#[test]
fn no_project_file_still_enforces_builtins_and_asks_by_default() {
    let f = Fixture::new();
    let loaded = load(&f.opts("proj"), None).unwrap();
    assert_eq!(loaded.project_file, None);
    let cwd = f.root.join("proj");
    assert_eq!(
        decide(&loaded.policy, &cwd, "terraform apply").0,
        Decision::Ask
    );
    assert_eq!(decide(&loaded.policy, &cwd, "rm -rf ~").0, Decision::Deny);
}

/// A long-running adapter keeps the decoded policy between requests
/// (`load_with_memo`), but never one whose sources changed: an included
/// file rewritten with the same length, or the project file itself.
#[test]
fn a_kept_policy_is_reused_only_while_every_source_is_unchanged() {
    use aileron_config::{Memo, load_with_memo};
    use std::sync::Arc;
    let f = Fixture::new();
    let cache = f.root.join("home/.aileron/cache");
    f.write(
        "proj/aileron.yaml",
        "version: 1\ndefault: deny\nprofiles: [./more.yaml]\n",
    );
    f.write("proj/more.yaml", "version: 1\nallow: [\"just *\"]\n");
    let cwd = f.root.join("proj");
    let memo = Memo::default();
    let first = load_with_memo(&f.opts("proj"), Some(&cache), &memo).unwrap();
    let again = load_with_memo(&f.opts("proj"), Some(&cache), &memo).unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "unchanged sources: the same policy"
    );
    assert_eq!(decide(&again.policy, &cwd, "just build").0, Decision::Allow);

    // Same length, so neither size nor a coarse mtime would tell.
    f.write("proj/more.yaml", "version: 1\nallow: [\"make *\"]\n");
    let changed = load_with_memo(&f.opts("proj"), Some(&cache), &memo).unwrap();
    assert!(!Arc::ptr_eq(&first, &changed));
    assert_eq!(
        decide(&changed.policy, &cwd, "just build").0,
        Decision::Deny
    );
    assert_eq!(
        decide(&changed.policy, &cwd, "make build").0,
        Decision::Allow
    );

    f.write(
        "proj/aileron.yaml",
        "version: 1\ndefault: allow\nprofiles: [./more.yaml]\n",
    );
    let project = load_with_memo(&f.opts("proj"), Some(&cache), &memo).unwrap();
    assert_eq!(
        decide(&project.policy, &cwd, "just build").0,
        Decision::Allow
    );
    assert_eq!(project.policy.default.as_str(), "allow");
}

/// Between full checks the kept policy is compared with its sources by
/// their metadata (`statx`), trusted only for what has not changed in the
/// second before the check. Once everything is settled, the changes that
/// matter are still seen at once: a rewritten source of the same length, a
/// nearer `aileron.yaml`, a language marker that adds a profile.
#[test]
fn a_kept_policy_sees_changes_made_after_its_sources_settled() {
    use aileron_config::{Memo, load_with_memo};
    use std::sync::Arc;
    let f = Fixture::new();
    let cache = f.root.join("home/.aileron/cache");
    f.write(
        "proj/aileron.yaml",
        "version: 1\ndefault: deny\nprofiles: [./more.yaml]\n",
    );
    f.write("proj/more.yaml", "version: 1\nallow: [\"just *\"]\n");
    // Old enough to be trusted by their metadata alone.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let cwd = f.root.join("proj/src");
    let memo = Memo::default();
    let first = load_with_memo(&f.opts("proj/src"), Some(&cache), &memo).unwrap();
    let again = load_with_memo(&f.opts("proj/src"), Some(&cache), &memo).unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    assert_eq!(decide(&again.policy, &cwd, "just build").0, Decision::Allow);

    f.write("proj/more.yaml", "version: 1\nallow: [\"make *\"]\n");
    let changed = load_with_memo(&f.opts("proj/src"), Some(&cache), &memo).unwrap();
    assert_eq!(
        decide(&changed.policy, &cwd, "just build").0,
        Decision::Deny,
        "a same-length rewrite of an included file"
    );

    std::thread::sleep(std::time::Duration::from_millis(2100));
    load_with_memo(&f.opts("proj/src"), Some(&cache), &memo).unwrap();
    f.write("proj/Cargo.toml", "[package]\nname = \"x\"\n");
    let rust = load_with_memo(&f.opts("proj/src"), Some(&cache), &memo).unwrap();
    assert!(
        rust.policy
            .sources
            .iter()
            .any(|(name, _)| name.contains("lang/rust")),
        "a new language marker adds its profile: {:?}",
        rust.policy.sources
    );

    std::thread::sleep(std::time::Duration::from_millis(2100));
    load_with_memo(&f.opts("proj/src"), Some(&cache), &memo).unwrap();
    f.write("proj/src/aileron.yaml", "version: 1\ndefault: allow\n");
    let nearer = load_with_memo(&f.opts("proj/src"), Some(&cache), &memo).unwrap();
    assert_eq!(
        nearer.project_file.as_deref(),
        Some(f.root.join("proj/src/aileron.yaml").as_path()),
        "a nearer aileron.yaml is the project's"
    );
}
