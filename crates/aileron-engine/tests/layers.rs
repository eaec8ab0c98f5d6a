//! SPEC 4 and 8: the layers of a policy, how they merge, and the built-in
//! rules no layer can cancel or outrank (checked with `fs.*` actions and
//! hand-built shell actions, so without the shell analysis).

mod common;

use aileron_engine::{
    Action, Decision, Environment, Layer, Policy, Rule, Sensitivity, State, VerdictSource,
    parse_document,
};
use common::*;
use serde_json::json;

fn fs(kind: &str, path: &str) -> Action {
    action(json!({"type": kind, "facets": {"fs": {"path": path}}}))
}

fn os_linux() -> aileron_engine::Source {
    let mut s = builtin_profile("os/linux");
    s.layer = Layer::Os;
    s
}

fn lang_go() -> aileron_engine::Source {
    let mut s = builtin_profile("lang/go");
    s.layer = Layer::Lang;
    s
}

#[test]
fn every_builtin_profile_loads_and_passes_its_own_examples() {
    for (name, _) in aileron_engine::profiles::PROFILES {
        let src = builtin_profile(name);
        let doc = parse_document(&src, HOME).unwrap_or_else(|d| panic!("{name}:\n{}", show(&d)));
        assert!(!doc.rules.is_empty(), "{name} has rules");
        for r in &doc.rules {
            assert!(
                r.explicit_id,
                "{name}: every profile rule has an id ({})",
                r.id
            );
            assert!(
                r.id.starts_with(&format!("{name}:")),
                "{name}: ids are prefixed by the profile name: {}",
                r.id
            );
        }
        compile(&[src]);
    }
}

#[test]
fn sources_are_listed_lowest_layer_first() {
    let sources = vec![
        os_linux(),
        lang_go(),
        profile_file("/p/team.yaml", "version: 1\n"),
        project("version: 1\n"),
        user("version: 1\n"),
    ];
    let p = compile(&sources);
    let layers: Vec<Layer> = p.sources.iter().map(|(_, l)| *l).collect();
    assert_eq!(
        layers,
        [
            Layer::Os,
            Layer::Lang,
            Layer::Profile,
            Layer::Project,
            Layer::User
        ]
    );
    // Built-in profile examples are not the project's to run.
    let p = compile(&[os_linux(), lang_go(), project("version: 1\n")]);
    assert!(p.tests.is_empty());
}

#[test]
fn among_equals_the_more_local_layer_wins() {
    // os/linux allows `ls *` (read) at 50; the project asks at 50.
    let p = compile(&[
        os_linux(),
        project("version: 1\nask:\n  - {id: ask-ls, command: \"ls *\", priority: 50}\n"),
    ]);
    assert_eq!(
        outcome(&decide(&p, &shell_read("ls -la"))),
        ("ask", Some("ask-ls"))
    );

    // The project allows at 50 what a lower profile asks at 50.
    let team = "version: 1\nask:\n  - {id: team:ls, command: \"ls *\", priority: 50}\n";
    let p = compile(&[
        profile_file("/p/team.yaml", team),
        project("version: 1\nallow:\n  - {id: allow-ls, command: \"ls *\"}\n"),
    ]);
    assert_eq!(
        outcome(&decide(&p, &shell("ls"))),
        ("allow", Some("allow-ls"))
    );

    // The user's settings come after the project.
    let p = compile(&[
        project("version: 1\nallow:\n  - {id: proj, command: \"make *\"}\n"),
        user("version: 1\nask:\n  - {id: mine, command: \"make *\", priority: 50}\n"),
    ]);
    assert_eq!(outcome(&decide(&p, &shell("make"))), ("ask", Some("mine")));
}

#[test]
fn os_profile_rules_need_a_read_classification() {
    let p = compile(&[os_linux(), project("version: 1\ndefault: deny\n")]);
    assert_eq!(
        outcome(&decide(&p, &shell_read("cat README.md"))),
        ("allow", Some("os/linux:read-files"))
    );
    assert_eq!(
        decide(&p, &shell_read("cat README.md")).reason,
        "read-only file inspection"
    );
    // `cat a > b` is classified write by the analysis: not allowed by the profile.
    let mut w = shell_with("cat a > b", DIR, Sensitivity::Write, &[]);
    w.facets["shell"]["writes"] = json!(["/p/b"]);
    assert_eq!(outcome(&decide(&p, &w)), ("deny", None));
    assert_eq!(
        outcome(&decide(&p, &shell("sudo ls"))),
        ("ask", Some("os/linux:sudo"))
    );
}

#[test]
fn lower_layer_rules_can_be_overridden_by_any_higher_layer() {
    // A language profile's allow cancelled by the user's settings.
    let p = compile(&[
        lang_go(),
        project("version: 1\n"),
        user(
            "version: 1\nask:\n  - {override: \"lang/go:run\", id: ask-go-run, command: \"go run *\"}\n",
        ),
    ]);
    assert_eq!(
        outcome(&decide(&p, &shell("go run ."))),
        ("ask", Some("ask-go-run"))
    );
    assert_eq!(
        outcome(&decide(&p, &shell("go test ./..."))),
        ("allow", Some("lang/go:test"))
    );

    // A project's ask cancelled from the user's settings.
    let p = compile(&[
        project("version: 1\nask:\n  - {id: ask-docker, command: \"docker *\"}\n"),
        user(
            "version: 1\nallow:\n  - {override: ask-docker, id: my-docker, command: \"docker *\"}\n",
        ),
    ]);
    assert_eq!(
        outcome(&decide(&p, &shell("docker ps"))),
        ("allow", Some("my-docker"))
    );

    // A built-in dynamic ask cancelled from the user's settings.
    let p = compile(&[
        project("version: 1\ndefault: allow\n"),
        user("version: 1\nallow:\n  - {override: \"builtin:inline-interpreter\"}\n"),
    ]);
    let inline = shell_with(
        "python3 -c print(1)",
        DIR,
        Sensitivity::Mutate,
        &["inline-interpreter"],
    );
    assert_eq!(outcome(&decide(&p, &inline)), ("allow", None));
}

#[test]
fn a_higher_layer_cannot_override_a_lower_layers_rule_from_below() {
    // The project cannot cancel a rule of the user's settings (a higher layer).
    let d = errors_of(&[
        project("version: 1\nallow:\n  - {override: mine, command: \"x\"}\n"),
        user("version: 1\nask:\n  - {id: mine, command: \"x *\"}\n"),
    ]);
    assert_eq!(d.len(), 1, "{}", show(&d));
    assert!(
        d[0].message
            .contains("no rule with that id in a lower layer"),
        "{}",
        d[0]
    );
}

#[test]
fn database_rules_join_with_the_same_checks() {
    let p = load("version: 1\nask:\n  - {id: ask-http, when: {type: http.request}}\n");
    let db = |text: &str| {
        aileron_engine::parse_rule(&source("<db>/r", text, Layer::Database, "/"), HOME).unwrap()
    };
    // A duplicate id is refused.
    let err = p
        .with_rules(vec![db(
            "{decision: allow, id: ask-http, when: {type: http.request}}",
        )])
        .unwrap_err();
    assert!(
        err[0].message.contains("duplicate rule id `ask-http`"),
        "{}",
        show(&err)
    );
    // An unknown override is refused.
    let err = p
        .with_rules(vec![db(
            "{decision: allow, override: nope, when: {type: http.request}}",
        )])
        .unwrap_err();
    assert!(
        err[0].message.contains("no rule with that id"),
        "{}",
        show(&err)
    );
    // Disabled rules stay disabled, and a database rule can be disabled.
    let p2 = p
        .with_rules(vec![db(
            "{decision: deny, id: db-off, enabled: false, when: {type: http.request}}",
        )])
        .unwrap();
    let get = action(
        json!({"type": "http.request", "facets": {"http": {"method": "GET", "url": "https://x/"}}}),
    );
    assert_eq!(outcome(&decide(&p2, &get)), ("ask", Some("ask-http")));
    // The original policy is unchanged.
    let p3 = p
        .with_rules(vec![db(
            "{decision: deny, id: db-on, when: {type: http.request}}",
        )])
        .unwrap();
    assert_eq!(outcome(&decide(&p3, &get)), ("deny", Some("db-on")));
    assert_eq!(outcome(&decide(&p, &get)), ("ask", Some("ask-http")));
    // Applying twice keeps earlier database rules' layer order.
    let p4 = p3
        .with_rules(vec![db(
            "{decision: allow, id: db-later, priority: 200, when: {type: http.request}}",
        )])
        .unwrap();
    assert_eq!(outcome(&decide(&p4, &get)), ("allow", Some("db-later")));
}

#[test]
fn compile_from_documents_equals_from_sources() {
    let sources = with_profiles(
        project(
            "version: 1\nprofiles: [lang/go]\ndefault: deny\ndeny:\n  - {id: no-rm, command: \"rm *\"}\n",
        ),
        &[],
    );
    let docs = sources
        .iter()
        .map(|s| parse_document(s, HOME).unwrap())
        .collect();
    let a = Policy::compile(docs, &environment()).unwrap();
    let b = compile(&sources);
    for cmd in ["go test ./...", "rm x", "make"] {
        assert_eq!(decide(&a, &shell(cmd)), decide(&b, &shell(cmd)), "{cmd}");
    }
}

#[test]
fn a_compiled_policy_survives_a_cache_round_trip() {
    let p = load(
        r#"version: 1
profiles: [lang/go]
default: deny_writes
deny:
  - {id: no-delete, when: {http.method: DELETE, http.url: {pattern: "(?i)/REPOS/"}}}
  - {id: secrets, when: {fs.path: {path: "secrets/**"}}}
  - {id: weekend, when: {type: sql.query, timestamp: {time: {days: [sat, sun], tz: Europe/Paris}}}}
ask:
  - {id: push, command: "git push *", approver: dashboard}
"#,
    );
    let bytes = p.to_cache_bytes().unwrap();
    let back = Policy::from_cache_bytes(&bytes).unwrap();
    assert!(
        Policy::from_cache_bytes(&bytes[..bytes.len() / 2]).is_err(),
        "a truncated entry is refused"
    );
    let actions = vec![
        shell("git push origin x"),
        shell("go test ./..."),
        shell_read("ls"),
        action(
            json!({"type": "http.request", "facets": {"http": {"method": "DELETE", "url": "https://x/repos/y"}}}),
        ),
        fs("fs.write", "/p/secrets/a"),
        fs("fs.write", "/p/src/a"),
        action(
            json!({"type": "sql.query", "timestamp": "2026-01-10T10:00:00Z", "facets": {"sql": {"verb": "SELECT"}}}),
        ),
    ];
    for a in &actions {
        assert_eq!(decide(&p, a), decide(&back, a), "{}", a.summary);
    }
}

// ---------------------------------------------------------------- built-in rules (SPEC 8)

#[test]
fn writes_to_policy_settings_and_audit_files_are_denied_structurally() {
    let mut env = Environment::new(HOME);
    env.protected_files.push("/p/.claude/settings.json".into());
    let team = profile_file("/p/policies/team.yaml", "version: 1\n");
    let p = Policy::from_sources(
        &[team, project("version: 1\ndefault: allow\nallow:\n  - {id: all-fs, priority: 2000000000, when: {type: fs.write}}\n")],
        &env,
    )
    .unwrap();
    let cases: &[(&str, &str, Option<&str>)] = &[
        (
            "fs.write",
            "/p/aileron.yaml",
            Some("builtin:protect-policy"),
        ),
        // a new one in a subdirectory would become the nearest policy
        (
            "fs.write",
            "/p/sub/dir/aileron.yaml",
            Some("builtin:protect-policy"),
        ),
        (
            "fs.write",
            "/p/.aileron/audit.jsonl",
            Some("builtin:protect-policy"),
        ),
        (
            "fs.write",
            "/home/u/.aileron/settings.yaml",
            Some("builtin:protect-policy"),
        ),
        // (both protect-policy and protect-secrets cover the database)
        (
            "fs.write",
            "/home/u/.aileron/aileron.db",
            Some("builtin:protect-"),
        ),
        // a profile file in force
        (
            "fs.write",
            "/p/policies/team.yaml",
            Some("builtin:protect-policy"),
        ),
        // a hook configuration aileron installed
        (
            "fs.write",
            "/p/.claude/settings.json",
            Some("builtin:protect-policy"),
        ),
        ("fs.write", "/p/src/main.rs", Some("all-fs")),
        ("fs.write", "/p/policies/other.yaml", Some("all-fs")),
        // reading the policy is fine
        ("fs.read", "/p/aileron.yaml", None),
        // reading secrets under the data directory is not
        (
            "fs.read",
            "/home/u/.aileron/admin.token",
            Some("builtin:protect-secrets"),
        ),
        (
            "fs.read",
            "/home/u/.aileron/aileron.db",
            Some("builtin:protect-secrets"),
        ),
        (
            "fs.read",
            "/home/u/.aileron/tokens/agent.token",
            Some("builtin:protect-secrets"),
        ),
        ("fs.read", "/home/u/.aileron/settings.yaml", None),
    ];
    for (kind, path, rule) in cases {
        let v = decide(&p, &fs(kind, path));
        match rule {
            Some(prefix) if prefix.ends_with('-') => assert!(
                v.rule.as_deref().is_some_and(|r| r.starts_with(prefix)),
                "{kind} {path}: {v:?}"
            ),
            _ => assert_eq!(v.rule.as_deref(), *rule, "{kind} {path}: {v:?}"),
        }
        if rule.is_some_and(|r| r.starts_with("builtin:")) {
            assert_eq!(
                (v.decision, v.source),
                (Decision::Deny, VerdictSource::Builtin),
                "{kind} {path}"
            );
        }
    }
}

#[test]
fn the_data_directory_follows_the_environment() {
    let mut env = Environment::new(HOME);
    env.data_dir = "/var/lib/aileron".into();
    let p = Policy::from_sources(&[project("version: 1\ndefault: allow\n")], &env).unwrap();
    assert_eq!(
        decide(&p, &fs("fs.read", "/var/lib/aileron/admin.token"))
            .rule
            .as_deref(),
        Some("builtin:protect-secrets")
    );
    assert_eq!(
        decide(&p, &fs("fs.write", "/var/lib/aileron/audit.jsonl"))
            .rule
            .as_deref(),
        Some("builtin:protect-policy")
    );
}

#[test]
fn changing_shell_or_aileron_variables_is_denied_structurally() {
    let p = load(
        "version: 1\ndefault: allow\nallow:\n  - {id: all-shell, priority: 2000000000, when: {type: shell.exec}}\n",
    );
    let cases: &[(&[&str], &str)] = &[
        (&["SHELL"], "builtin:protect-env"),
        (&["AILERON_POLICY"], "builtin:protect-env"),
        (&["FOO", "AILERON_DATA"], "builtin:protect-env"),
        (&["PATH"], "all-shell"),
        (&["MY_AILERON_X"], "all-shell"),
        (&[], "all-shell"),
    ];
    for (vars, rule) in cases {
        let mut a = shell("make");
        a.facets["shell"]["env_changes"] = json!(vars);
        assert_eq!(decide(&p, &a).rule.as_deref(), Some(*rule), "{vars:?}");
    }
}

#[test]
fn catastrophic_commands_are_denied_whatever_the_policy_or_session_says() {
    let p = load(
        "version: 1\ndefault: allow\nallow:\n  - {id: all-shell, priority: 2000000000, when: {type: shell.exec}}\n",
    );
    let approvals = vec![Rule::session_approval(
        "s-all",
        "everything",
        aileron_engine::pattern::Matcher::Field(
            aileron_engine::action::FieldPath::Type,
            aileron_engine::pattern::Cond::Equals("shell.exec".into()),
        ),
        i64::MAX,
        0,
    )];
    let state = State {
        approvals: &approvals,
        history: &[],
    };
    for (tag, rule) in [
        ("rm-root", "builtin:rm-root"),
        ("mkfs", "builtin:mkfs"),
        ("dd-device", "builtin:dd-device"),
        ("fork-bomb", "builtin:fork-bomb"),
    ] {
        let a = shell_with("x", DIR, Sensitivity::Destructive, &[tag]);
        let v = p.evaluate(&a, &state);
        assert_eq!(
            (v.decision, v.source, v.rule.as_deref()),
            (Decision::Deny, VerdictSource::Builtin, Some(rule)),
            "{tag}"
        );
    }
    // Without a tag, the session approval decides.
    let v = p.evaluate(&shell("x"), &state);
    assert_eq!(
        (v.source, v.rule.as_deref()),
        (VerdictSource::Session, Some("s-all"))
    );
}

#[test]
fn dynamic_builtin_asks_by_tag() {
    let p = load("version: 1\ndefault: allow\n");
    for (tag, rule) in [
        ("pipe-to-shell", "builtin:pipe-to-shell"),
        ("eval", "builtin:eval"),
        ("base64-exec", "builtin:base64-exec"),
        ("remote-substitution", "builtin:remote-substitution"),
        ("inline-interpreter", "builtin:inline-interpreter"),
        ("opaque", "builtin:opaque"),
        ("unparsable", "builtin:unparsable"),
    ] {
        let a = shell_with("x", DIR, Sensitivity::Mutate, &[tag]);
        let v = decide(&p, &a);
        assert_eq!(
            (v.decision, v.source, v.rule.as_deref()),
            (Decision::Ask, VerdictSource::Builtin, Some(rule)),
            "{tag}"
        );
    }
    // The line the analysis cannot read is not overridable.
    let d = load_err1("version: 1\nallow:\n  - {override: \"builtin:unparsable\"}\n");
    assert!(d.message.contains("cannot be overridden"), "{d}");
}

#[test]
fn a_disabled_rule_does_not_override() {
    // Disabling a rule is the seed's first way to roll it back; a disabled
    // rule is not among "the enabled rules" of SPEC 7 and should have no effect.
    let p = load(
        "version: 1\nprofiles: [lang/go]\nask:\n  - {id: ask-go-test, override: \"lang/go:test\", enabled: false, command: \"go test *\"}\n",
    );
    assert_eq!(
        outcome(&decide(&p, &shell("go test ./..."))),
        ("allow", Some("lang/go:test"))
    );
    // The same through a database rule disabled from the dashboard.
    let p = load("version: 1\nask:\n  - {id: ask-http, when: {type: http.request}}\n");
    let db = aileron_engine::parse_rule(
        &source(
            "<db>/r",
            "{decision: allow, id: db, override: ask-http, enabled: false, when: {type: http.request}}",
            Layer::Database,
            "/",
        ),
        HOME,
    )
    .unwrap();
    let p = p.with_rules(vec![db]).unwrap();
    let get = action(
        json!({"type": "http.request", "facets": {"http": {"method": "GET", "url": "https://x/"}}}),
    );
    assert_eq!(outcome(&decide(&p, &get)), ("ask", Some("ask-http")));
}

#[test]
fn an_unreadable_line_is_at_least_ask_whatever_the_priority() {
    // SPEC 9: a parse error or input over the limits "is decided at least
    // ask"; SPEC 8: nothing can cancel a structural rule.
    let p = load(
        "version: 1\nallow:\n  - {id: everything, priority: 2000000000, when: {type: shell.exec}}\n",
    );
    let a = shell_with(
        "echo \"unterminated",
        DIR,
        Sensitivity::Mutate,
        &["unparsable"],
    );
    let v = decide(&p, &a);
    assert_eq!(
        (v.decision, v.rule.as_deref()),
        (Decision::Ask, Some("builtin:unparsable"))
    );
}
