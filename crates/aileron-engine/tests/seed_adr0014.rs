//! ADR-0014 (seed 000): the `aileron.yaml` schema, its examples and its glob
//! examples, decided as the ADR says. Shell commands are given as
//! ready-made simple-command actions (see `common::shell`), so these tests
//! do not depend on the shell analysis; `shell_lines.rs` repeats the key
//! cases through `evaluate_line`.

mod common;

use aileron_engine::{AskMode, Decision, DefaultPolicy, Layer, VerdictSource};
use common::*;

const MINIMAL_GO: &str = r#"version: 1
profiles: ["lang/go"]
default: ask
"#;

const FULL: &str = r#"version: 1
profiles: ["lang/go"]
default: ask

settings:
  audit_log: .aileron/audit.jsonl
  timeout: 30

env:
  scrub:
    - "AWS_*"
    - "GITHUB_TOKEN"
    - "*_SECRET"
    - "OPENAI_*"
  passthrough:
    - "HOME"
    - "PATH"
    - "GOPATH"

allow:
  - "git status"
  - "git diff *"
  - "git log *"
  - "cat *"
  - "ls *"
  - "task *"

deny:
  - command: "git push origin main"
    description: "no direct push to main"
  - command: "rm -rf /*"
    description: "no recursive delete outside project"

ask:
  - "git add *"
  - "git commit *"
  - "git push *"
  - "docker *"
  - "curl *"
"#;

const STRUCTURE: &str = r#"version: 1

profiles:
  - "lang/go"
  - "./team-policy.yaml"

default: ask          # allow | deny | ask — when no rule matches

settings:
  ask_mode: terminal  # terminal | ui
  audit_log: .aileron/audit.jsonl
  timeout: 30         # seconds before auto-deny on ask

env:
  scrub:
    - "AWS_*"
    - "*_SECRET"
  passthrough:
    - "HOME"
    - "PATH"

allow:
  - "go test ./..."
  - command: "git diff *"
    description: "read-only git diffs"

deny:
  - command: "rm -rf *"
    description: "block recursive force delete"

ask:
  - "git push *"
"#;

const TEAM_POLICY: &str = r#"version: 1
allow:
  - {id: team:make, command: "make *"}
ask:
  - {id: team:kubectl, command: "kubectl *", description: "touches a cluster"}
"#;

const LONG_FORM_DENY: &str = r#"version: 1
deny:
  - id: "deny-rm-rf"
    command: "rm -rf *"
    working_dir: "/production/*"
    description: "block rm -rf in production dirs"
    priority: 250
allow:
  - {id: allow-rm-240, command: "rm *", priority: 240}
"#;

#[test]
fn minimal_go_policy_loads_and_uses_the_go_profile() {
    let p = load(MINIMAL_GO);
    assert_eq!(p.default, DefaultPolicy::Ask);
    assert_eq!(
        p.sources,
        vec![
            ("<builtin>/lang/go".to_owned(), Layer::Profile),
            (FILE.to_owned(), Layer::Project)
        ]
    );
    let cases: &[(&str, &str, Option<&str>)] = &[
        ("go test ./...", "allow", Some("lang/go:test")),
        ("go build ./cmd/x", "allow", Some("lang/go:build")),
        ("go vet ./...", "allow", Some("lang/go:vet")),
        ("go get example.com/x@latest", "ask", Some("lang/go:get")),
        ("make all", "ask", None),
    ];
    for (cmd, decision, rule) in cases {
        let v = decide(&p, &shell(cmd));
        assert_eq!(outcome(&v), (*decision, *rule), "{cmd}: {v:?}");
    }
}

#[test]
fn full_policy_decides_as_the_adr_says() {
    let p = load(FULL);
    let cases: &[(&str, &str, Option<String>)] = &[
        ("git status", "allow", Some(auto_id("allow", 0))),
        ("git diff HEAD", "allow", Some(auto_id("allow", 1))),
        ("git diff", "allow", Some(auto_id("allow", 1))),
        ("git log --oneline", "allow", Some(auto_id("allow", 2))),
        ("cat README.md", "allow", Some(auto_id("allow", 3))),
        ("ls -la", "allow", Some(auto_id("allow", 4))),
        ("task build", "allow", Some(auto_id("allow", 5))),
        // deny (200) beats ask `git push *` (100)
        ("git push origin main", "deny", Some(auto_id("deny", 0))),
        ("git push origin feature", "ask", Some(auto_id("ask", 2))),
        ("git add .", "ask", Some(auto_id("ask", 0))),
        ("git commit -m wip", "ask", Some(auto_id("ask", 1))),
        ("docker ps", "ask", Some(auto_id("ask", 3))),
        ("curl x", "ask", Some(auto_id("ask", 4))),
        ("rm -rf /tmp", "deny", Some(auto_id("deny", 1))),
        ("go test ./...", "allow", Some("lang/go:test".to_owned())),
        // anchored: `git status` does not match `git status --short`
        ("git status --short", "ask", None),
        ("make build", "ask", None),
    ];
    for (cmd, decision, rule) in cases {
        let v = decide(&p, &shell(cmd));
        assert_eq!(outcome(&v), (*decision, rule.as_deref()), "{cmd}: {v:?}");
    }
}

#[test]
fn full_policy_verdicts_carry_source_reason_and_approver() {
    let p = load(FULL);

    let v = decide(&p, &shell("git push origin main"));
    assert_eq!(v.source, VerdictSource::Static);
    assert_eq!(v.reason, "no direct push to main");
    assert_eq!(v.approver, None);

    let v = decide(&p, &shell("rm -rf /tmp"));
    assert_eq!(v.reason, "no recursive delete outside project");

    // A rule without description explains itself by its pattern.
    let v = decide(&p, &shell("docker ps"));
    assert_eq!(v.source, VerdictSource::Static);
    assert!(v.reason.contains("docker *"), "{}", v.reason);
    assert_eq!(v.approver.as_deref(), Some("terminal"));

    let v = decide(&p, &shell("make build"));
    assert_eq!(v.source, VerdictSource::Default);
    assert_eq!(v.rule, None);
    assert_eq!(v.reason, "no rule matched; `default: ask`");
    assert_eq!(v.approver.as_deref(), Some("terminal"));
}

#[test]
fn full_policy_settings_and_env() {
    let p = load(FULL);
    assert_eq!(
        p.settings.audit_log.as_deref(),
        Some(".aileron/audit.jsonl")
    );
    assert_eq!(p.settings.timeout, Some(30));
    assert_eq!(
        p.env.scrub,
        ["AWS_*", "GITHUB_TOKEN", "*_SECRET", "OPENAI_*"]
    );
    assert_eq!(p.env.passthrough, ["HOME", "PATH", "GOPATH"]);
}

#[test]
fn top_level_structure_example_loads_with_both_profiles() {
    let sources = with_profiles(
        project(STRUCTURE),
        &[profile_file("/p/team-policy.yaml", TEAM_POLICY)],
    );
    let names: Vec<&str> = sources.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["<builtin>/lang/go", "/p/team-policy.yaml", FILE],
        "profiles come before the file that names them, in order"
    );
    let p = compile(&sources);
    assert_eq!(p.default, DefaultPolicy::Ask);
    assert_eq!(p.settings.ask_mode, Some(AskMode::Terminal));
    assert_eq!(
        p.settings.audit_log.as_deref(),
        Some(".aileron/audit.jsonl")
    );
    assert_eq!(p.settings.timeout, Some(30));
    assert_eq!(p.env.scrub, ["AWS_*", "*_SECRET"]);
    assert_eq!(p.env.passthrough, ["HOME", "PATH"]);

    let cases: &[(&str, &str, Option<String>)] = &[
        // Both the project's "go test ./..." and lang/go:test match at 50;
        // the project is the later layer, and among equals the last wins.
        ("go test ./...", "allow", Some(auto_id("allow", 0))),
        ("go test -run X ./pkg", "allow", Some("lang/go:test".into())),
        ("git diff HEAD~1", "allow", Some(auto_id("allow", 1))),
        ("rm -rf build", "deny", Some(auto_id("deny", 0))),
        ("git push origin x", "ask", Some(auto_id("ask", 0))),
        ("make all", "allow", Some("team:make".into())),
        ("kubectl get pods", "ask", Some("team:kubectl".into())),
        ("docker ps", "ask", None),
    ];
    for (cmd, decision, rule) in cases {
        let v = decide(&p, &shell(cmd));
        assert_eq!(outcome(&v), (*decision, rule.as_deref()), "{cmd}: {v:?}");
    }
    assert_eq!(
        decide(&p, &shell("git diff HEAD~1")).reason,
        "read-only git diffs"
    );
    assert_eq!(
        decide(&p, &shell("rm -rf build")).reason,
        "block recursive force delete"
    );
    assert_eq!(
        decide(&p, &shell("kubectl get pods")).reason,
        "touches a cluster"
    );
}

#[test]
fn long_form_deny_with_working_dir_and_priority() {
    let p = load(LONG_FORM_DENY);
    let r = p.rule("deny-rm-rf").expect("rule by its id");
    assert_eq!(r.priority, 250);
    assert_eq!(r.decision, Decision::Deny);
    let cases: &[(&str, &str, &str, &str)] = &[
        ("rm -rf build", "/production/app", "deny", "deny-rm-rf"),
        ("rm -rf build", "/production/app/sub", "deny", "deny-rm-rf"),
        // working_dir does not match: the allow at 240 decides
        ("rm -rf build", "/home/dev/app", "allow", "allow-rm-240"),
        ("rm -rf build", "/production", "allow", "allow-rm-240"),
        // command does not match (`rm -rf *` needs -rf)
        ("rm -f build", "/production/app", "allow", "allow-rm-240"),
    ];
    for (cmd, cwd, decision, rule) in cases {
        let v = decide(&p, &shell_in(cmd, cwd));
        assert_eq!(
            outcome(&v),
            (*decision, Some(*rule)),
            "{cmd} in {cwd}: {v:?}"
        );
    }
    assert_eq!(
        decide(&p, &shell_in("rm -rf build", "/production/app")).reason,
        "block rm -rf in production dirs"
    );
}

#[test]
fn glob_examples_of_the_adr() {
    // (pattern, command, matches)
    let cases: &[(&str, &str, bool)] = &[
        ("go test *", "go test ./...", true),
        ("git * --force", "git push --force", true),
        ("git * --force", "git push origin main --force", true),
        ("git * --force", "git push origin main", false),
        ("*.sh", "script.sh", true),
        ("*.sh", "path/to/script.sh", true),
        ("*.sh", "script.sh.bak", false),
        // a trailing ` *` also matches the bare command
        ("git diff *", "git diff", true),
        ("git diff *", "git diff HEAD~1", true),
        ("git diff *", "git diffx", false),
        ("go test *", "go test", true),
        // anchored at both ends
        ("git status", "git status --short", false),
        ("git *", "xgit status", false),
        // a binary given by path is not the bare name
        ("git *", "./git status", false),
        ("git *", "/tmp/x/git status", false),
        // `*` crosses spaces and `/`; `?` is one character; `\*` a literal star
        ("rm -rf /*", "rm -rf /home/u/x", true),
        ("l?", "ls", true),
        ("l?", "l", false),
        ("echo \\*", "echo *", true),
        ("echo \\*", "echo x", false),
    ];
    for (pattern, cmd, want) in cases {
        let yaml = format!(
            "version: 1\ndefault: deny\nallow:\n  - {{id: probe, command: {}}}\n",
            serde_json::to_string(pattern).unwrap()
        );
        let p = load(&yaml);
        let v = decide(&p, &shell(cmd));
        let got = v.rule.as_deref() == Some("probe");
        assert_eq!(got, *want, "`{pattern}` vs `{cmd}`: {v:?}");
    }
}

#[test]
fn bucket_default_priorities() {
    let p = load(
        r#"version: 1
allow: [{id: a, command: "x *"}]
ask: [{id: k, command: "x *"}]
judge: [{id: j, command: "x *"}]
deny: [{id: d, command: "x *"}]
"#,
    );
    for (id, prio) in [("a", 50), ("k", 100), ("j", 120), ("d", 200)] {
        assert_eq!(p.rule(id).unwrap().priority, prio, "{id}");
    }
    // With defaults: deny > judge > ask > allow.
    assert_eq!(outcome(&decide(&p, &shell("x 1"))), ("deny", Some("d")));

    // Without the deny, judge (120) wins over ask (100); without both, ask over allow.
    let p = load(
        "version: 1\nallow: [{id: a, command: \"x *\"}]\nask: [{id: k, command: \"x *\"}]\njudge: [{id: j, command: \"x *\"}]\n",
    );
    assert_eq!(outcome(&decide(&p, &shell("x 1"))), ("judge", Some("j")));
    let p =
        load("version: 1\nallow: [{id: a, command: \"x *\"}]\nask: [{id: k, command: \"x *\"}]\n");
    assert_eq!(outcome(&decide(&p, &shell("x 1"))), ("ask", Some("k")));

    // An explicit priority changes the order.
    let p = load(
        "version: 1\nallow: [{id: a, command: \"x *\", priority: 150}]\nask: [{id: k, command: \"x *\"}]\n",
    );
    assert_eq!(outcome(&decide(&p, &shell("x 1"))), ("allow", Some("a")));
}

#[test]
fn short_form_is_the_same_as_command() {
    let short = load("version: 1\ndefault: deny\nallow:\n  - \"git log *\"\n  - \"npm run *\"\n");
    let long = load(
        "version: 1\ndefault: deny\nallow:\n  - command: \"git log *\"\n  - {command: \"npm run *\"}\n",
    );
    for cmd in [
        "git log",
        "git log -p",
        "git logx",
        "npm run test",
        "npm run",
        "npm install",
        "git status",
    ] {
        let (a, b) = (decide(&short, &shell(cmd)), decide(&long, &shell(cmd)));
        assert_eq!(a.decision, b.decision, "{cmd}");
        assert_eq!(a.rule, b.rule, "{cmd}");
        assert_eq!(a.source, b.source, "{cmd}");
    }
    // A short-form rule applies to shell commands only.
    let v = decide(
        &short,
        &action(
            serde_json::json!({"type": "tool.call", "summary": "git log", "facets": {"tool": {"name": "git log"}}}),
        ),
    );
    assert_eq!(outcome(&v), ("deny", None));
}

#[test]
fn all_match_fields_and_together() {
    let p = load(
        r#"version: 1
default: allow
deny:
  - id: all-four
    command: "git *"
    binary: "git"
    args_contain: "push"
    working_dir: "/srv/*"
"#,
    );
    let cases: &[(&str, &str, &str)] = &[
        ("git push origin main", "/srv/app", "deny"),
        ("git push", "/srv/app/sub", "deny"),
        // working_dir fails
        ("git push origin main", "/p", "allow"),
        // args_contain fails
        ("git status", "/srv/app", "allow"),
        // command and binary fail
        ("hg push", "/srv/app", "allow"),
        // args contain "push" but the binary is not `git`
        ("echo git push", "/srv/app", "allow"),
    ];
    for (cmd, cwd, decision) in cases {
        let v = decide(&p, &shell_in(cmd, cwd));
        assert_eq!(v.decision.as_str(), *decision, "{cmd} in {cwd}: {v:?}");
    }

    // Each field alone.
    let p = load(
        r#"version: 1
default: allow
deny:
  - {id: by-binary, binary: "terraform"}
  - {id: by-args, args_contain: "--force"}
  - {id: by-dir, working_dir: "/secret/*"}
"#,
    );
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        ("terraform apply", "/p", "deny", Some("by-binary")),
        // `binary` matches argv[0] as written, and a deny written for a
        // name also holds for that program given by its path (an allow
        // would not: SPEC 9).
        ("/usr/bin/terraform apply", "/p", "deny", Some("by-binary")),
        ("git push --force", "/p", "deny", Some("by-args")),
        ("ls -la", "/secret/x", "deny", Some("by-dir")),
        ("ls -la", "/p", "allow", None),
    ];
    for (cmd, cwd, decision, rule) in cases {
        let v = decide(&p, &shell_in(cmd, cwd));
        assert_eq!(outcome(&v), (*decision, *rule), "{cmd} in {cwd}: {v:?}");
    }
}

#[test]
fn working_dir_expands_home() {
    let p = load(
        "version: 1\ndefault: allow\ndeny:\n  - {id: in-home, command: \"rm *\", working_dir: \"~/prod/*\"}\n",
    );
    let v = decide(&p, &shell_in("rm x", "/home/u/prod/app"));
    assert_eq!(outcome(&v), ("deny", Some("in-home")));
    let v = decide(&p, &shell_in("rm x", "/p"));
    assert_eq!(outcome(&v), ("allow", None));
}

#[test]
fn override_cancels_a_lower_layer_allow_or_ask() {
    // Cancel an allow of a built-in profile without a replacement.
    let p = load("version: 1\nprofiles: [\"lang/go\"]\nallow:\n  - {override: \"lang/go:test\"}\n");
    let v = decide(&p, &shell("go test ./..."));
    assert_eq!(outcome(&v), ("ask", None), "the profile's allow is gone");
    assert!(p.rule("lang/go:test").is_none());
    let (_, why) = p
        .inactive()
        .iter()
        .find(|(r, _)| r.id == "lang/go:test")
        .expect("listed as inactive");
    assert!(why.contains("overridden"), "{why}");
    // Other rules of the profile stay.
    assert_eq!(
        outcome(&decide(&p, &shell("go build ./..."))),
        ("allow", Some("lang/go:build"))
    );

    // Cancel an ask of a profile file and replace it.
    let sources = with_profiles(
        project(
            "version: 1\nprofiles: [\"./team-policy.yaml\"]\nallow:\n  - {id: kubectl-get, override: \"team:kubectl\", command: \"kubectl get *\"}\n",
        ),
        &[profile_file("/p/team-policy.yaml", TEAM_POLICY)],
    );
    let p = compile(&sources);
    assert_eq!(
        outcome(&decide(&p, &shell("kubectl get pods"))),
        ("allow", Some("kubectl-get"))
    );
    assert_eq!(
        outcome(&decide(&p, &shell("kubectl delete pod x"))),
        ("ask", None),
        "the cancelled ask no longer applies to anything"
    );
}

#[test]
fn overriding_a_deny_is_a_load_error() {
    let team = "version: 1\ndeny:\n  - {id: team:no-push, command: \"git push *\"}\n";
    let text = "version: 1\nprofiles: [\"./team.yaml\"]\nallow:\n  - {override: \"team:no-push\", command: \"git push origin feature\"}\n";
    let d = errors_of(&with_profiles(
        project(text),
        &[profile_file("/p/team.yaml", team)],
    ));
    assert_eq!(d.len(), 1, "{}", show(&d));
    assert_diag(
        &d[0],
        FILE,
        pos(text, "\"team:no-push\"", 0),
        &["override: team:no-push", "deny rules cannot be overridden"],
    );
}

#[test]
fn user_settings_cannot_cancel_or_outrank_a_project_deny() {
    let proj = "version: 1\ndeny:\n  - {id: no-push-main, command: \"git push origin main\"}\n";

    // Cancelling it is a load error, reported in the user's file.
    let user_text = "version: 1\nallow:\n  - {override: no-push-main, command: \"git push *\"}\n";
    let d = errors_of(&[project(proj), user(user_text)]);
    assert_eq!(d.len(), 1, "{}", show(&d));
    assert_diag(
        &d[0],
        USER_FILE,
        pos(user_text, "no-push-main", 0),
        &["deny rules cannot be overridden"],
    );

    // Outranking it with a higher priority has no effect.
    let user_text =
        "version: 1\nallow:\n  - {id: my-push, command: \"git push *\", priority: 10000}\n";
    let p = compile(&[project(proj), user(user_text)]);
    assert_eq!(
        outcome(&decide(&p, &shell("git push origin main"))),
        ("deny", Some("no-push-main"))
    );
    assert_eq!(
        outcome(&decide(&p, &shell("git push origin feature"))),
        ("allow", Some("my-push"))
    );
    let e = p.explain(&shell("git push origin main"), &Default::default());
    assert_eq!(e.verdict.rule.as_deref(), Some("no-push-main"));
    assert_eq!(e.matched.len(), 2);
    assert!(e.why.contains("lower layer"), "{}", e.why);
}

#[test]
fn user_settings_add_personal_rules_and_settings() {
    let proj = "version: 1\ndefault: ask\nsettings: {timeout: 30, audit_log: .aileron/audit.jsonl}\nask:\n  - {id: docker, command: \"docker *\"}\n";
    let user_text = "version: 1\nsettings: {ask_mode: ui}\nallow:\n  - {id: my-docker-ps, command: \"docker ps\", priority: 150}\n";
    let p = compile(&[project(proj), user(user_text)]);
    assert_eq!(
        outcome(&decide(&p, &shell("docker ps"))),
        ("allow", Some("my-docker-ps"))
    );
    let v = decide(&p, &shell("docker run x"));
    assert_eq!(outcome(&v), ("ask", Some("docker")));
    // ask_mode: ui sends questions to the dashboard.
    assert_eq!(v.approver.as_deref(), Some("dashboard"));
    assert_eq!(p.settings.timeout, Some(30));
    assert_eq!(
        p.settings.audit_log.as_deref(),
        Some(".aileron/audit.jsonl")
    );
}

#[test]
fn default_and_settings_are_last_writer_wins() {
    let team = "version: 1\ndefault: deny\nsettings: {timeout: 10, ask_mode: ui}\n";
    let cases: &[(&str, Option<&str>, DefaultPolicy)] = &[
        // the project says nothing: the profile's default stays
        (
            "version: 1\nprofiles: [./team.yaml]\n",
            None,
            DefaultPolicy::Deny,
        ),
        (
            "version: 1\nprofiles: [./team.yaml]\ndefault: allow\n",
            None,
            DefaultPolicy::Allow,
        ),
        (
            "version: 1\nprofiles: [./team.yaml]\ndefault: allow\n",
            Some("version: 1\ndefault: deny_writes\n"),
            DefaultPolicy::DenyWrites,
        ),
        (
            "version: 1\nprofiles: [./team.yaml]\ndefault: allow\n",
            Some("version: 1\n"),
            DefaultPolicy::Allow,
        ),
    ];
    for (proj, user_text, want) in cases {
        let mut sources = with_profiles(project(proj), &[profile_file("/p/team.yaml", team)]);
        if let Some(u) = user_text {
            sources.push(user(u));
        }
        let p = compile(&sources);
        assert_eq!(p.default, *want, "{proj} / {user_text:?}");
    }

    let p = compile(&with_profiles(
        project("version: 1\nprofiles: [./team.yaml]\nsettings: {timeout: 30}\n"),
        &[profile_file("/p/team.yaml", team)],
    ));
    assert_eq!(p.settings.timeout, Some(30), "the later layer wins");
    assert_eq!(
        p.settings.ask_mode,
        Some(AskMode::Ui),
        "unset keys keep the lower value"
    );
    // No layer sets `default`: ask.
    assert_eq!(load("version: 1\n").default, DefaultPolicy::Ask);
}

#[test]
fn env_scrub_is_a_union_and_passthrough_is_kept() {
    let team =
        "version: 1\nenv:\n  scrub: [\"AWS_*\", \"GITHUB_TOKEN\"]\n  passthrough: [\"HOME\"]\n";
    let proj = "version: 1\nprofiles: [./team.yaml]\nenv:\n  scrub: [\"*_SECRET\", \"AWS_*\"]\n  passthrough: [\"GITHUB_TOKEN\", \"PATH\"]\n";
    let user_text = "version: 1\nenv:\n  scrub: [\"OPENAI_*\", \"PATH\"]\n";
    let mut sources = with_profiles(project(proj), &[profile_file("/p/team.yaml", team)]);
    sources.push(user(user_text));
    let p = compile(&sources);
    assert_eq!(
        p.env.scrub,
        ["AWS_*", "GITHUB_TOKEN", "*_SECRET", "OPENAI_*", "PATH"],
        "union across layers, each once"
    );
    // Passthrough at any layer beats scrub: a later layer's scrub does not
    // remove an earlier passthrough and vice versa; both lists are kept.
    assert_eq!(p.env.passthrough, ["HOME", "GITHUB_TOKEN", "PATH"]);
}

#[test]
fn adr_rules_apply_to_shell_commands_only() {
    let p = load(
        "version: 1\ndefault: allow\ndeny:\n  - {id: no-curl, command: \"curl *\"}\n  - {id: no-bin, binary: \"curl\"}\n",
    );
    let http = action(serde_json::json!({
        "type": "http.request",
        "summary": "curl x",
        "verb": "curl",
        "facets": {"http": {"method": "GET", "url": "https://x/"}, "shell": {"command": "curl x", "binary": "curl"}}
    }));
    assert_eq!(outcome(&decide(&p, &http)), ("allow", None));
    assert_eq!(outcome(&decide(&p, &shell("curl x"))).0, "deny");
}

#[test]
fn plain_words_like_off_and_y_are_strings() {
    // In YAML 1.2 (core schema) only true/false are booleans.
    let p = load(
        "version: 1\ndefault: allow\ndeny:\n  - {id: off, command: \"shutdown *\", description: y}\n  - {id: no, command: \"halt\"}\n",
    );
    assert_eq!(
        outcome(&decide(&p, &shell("shutdown now"))),
        ("deny", Some("off"))
    );
    assert_eq!(decide(&p, &shell("shutdown now")).reason, "y");
    assert_eq!(outcome(&decide(&p, &shell("halt"))), ("deny", Some("no")));
}
