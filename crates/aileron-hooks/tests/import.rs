//! `aileron_hooks::import::claude`: the generated aileron.yaml decides the
//! Claude Code tool calls the way Claude's own rules do (docs/agents-hooks.md
//! §1.5), with "no rule" meaning ask.

use aileron_engine::{
    Decision, Environment, Layer, LineContext, Policy, Session, Source, State, parse_document,
};
use aileron_hooks::Agent;
use aileron_hooks::import::{Imported, claude};
use serde_json::{Value, json};

const HOME: &str = "/home/u";
const CWD: &str = "/w/proj";

fn settings() -> Vec<(String, String)> {
    let user = json!({"permissions": {
        "allow": ["WebSearch"],
        "deny": ["Read(~/.ssh/**)", "Read(/agents/**)"],
    }});
    let project = json!({"permissions": {
        "allow": [
            "Bash(git diff:*)",
            "Bash(ls *)",
            "Bash(npm run *)",
            "Bash(npm test)",
            "Bash(echo *)",
            "Bash(cargo test:*)",
            "Read(./src/**)",
            "Edit(/src/**)",
            "Edit(docs/*.md)",
            "WebFetch(domain:docs.rs)",
            "WebFetch(domain:*.example.com)",
            "mcp__github",
            "mcp__linear__get_*",
            "Agent(Explore)",
            // not translatable
            "Write(./out/**)",
            "PowerShell(Get-ChildItem *)",
            "Bash(git add . && git commit *)",
            "Bash(echo \"hi\")",
            "Bash(echo $HOME)",
            "*",
            "mcp__x__y(arg)",
            "Cd(~/code/*)",
        ],
        "ask": [
            "Bash(git push *)",
            "mcp__github__delete_repo",
            "Read(logs/**)",
            "WebFetch(domain:example.*)",
            // not translatable
            "WebFetch(url:https://x.test)",
        ],
        "deny": [
            "Bash(rm -rf *)",
            "Bash(curl:*)",
            "Read(./secrets/**)",
            "Read(.env)",
            "Read(//etc/**)",
            "Edit(/src/generated/**)",
            "WebFetch(domain:evil.com)",
            "mcp__dangerous",
            // not translatable
            "Bash(run_in_background:true)",
            "Agent(model:opus)",
            "Read(!x)",
        ],
        "additionalDirectories": ["../shared"],
        "defaultMode": "acceptEdits",
    }});
    let local = json!({"permissions": {
        "allow": ["Bash(make:*)"],
        "deny": ["Bash(make deploy *)"],
    }});
    let team = json!({"permissions": {"deny": ["Edit(/gen/**)"]}});
    vec![
        ("~/.claude/settings.json".into(), user.to_string()),
        (".claude/settings.json".into(), project.to_string()),
        (".claude/settings.local.json".into(), local.to_string()),
        ("/w/team/claude.json".into(), team.to_string()),
    ]
}

fn imported() -> Imported {
    claude(&settings(), CWD, HOME).unwrap()
}

fn compile(yaml: &str) -> Policy {
    let src = Source {
        name: format!("{CWD}/aileron.yaml"),
        text: yaml.to_owned(),
        layer: Layer::Project,
        base_dir: CWD.into(),
    };
    Policy::from_sources(&[src], &Environment::new(HOME))
        .unwrap_or_else(|e| panic!("{e:?}\n{yaml}"))
}

/// Aileron's decision for one Claude Code tool call, as the hook sees it.
fn decide(policy: &Policy, tool: &str, input: Value) -> Decision {
    let event = json!({
        "session_id": "s1",
        "cwd": CWD,
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
    });
    let ev = aileron_hooks::event::parse(Agent::ClaudeCode, event.to_string().as_bytes()).unwrap();
    let lowered = aileron_hooks::lower::lower(&ev, HOME).unwrap();
    let state = State::default();
    if lowered.actions.is_empty() {
        let session = Session::default();
        let cx = LineContext {
            cwd: &lowered.cwd,
            session: &session,
            timestamp: "2026-01-01T00:00:00Z".parse().ok(),
            id: "a1",
            exe: None,
        };
        return policy
            .evaluate_line(&lowered.line, &cx, &state)
            .verdict
            .decision;
    }
    lowered
        .actions
        .iter()
        .map(|a| policy.evaluate(a, &state).decision)
        .max_by_key(|d| d.restrictiveness())
        .unwrap()
}

use Decision::{Allow, Ask, Deny};

fn check(policy: &Policy, cases: &[(&str, Value, Decision)]) {
    let mut wrong = Vec::new();
    for (tool, input, want) in cases {
        let got = decide(policy, tool, input.clone());
        if got != *want {
            wrong.push(format!("{tool} {input}: Claude {want:?}, Aileron {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn bash(cmd: &str) -> Value {
    json!({"command": cmd})
}

fn file(path: &str) -> Value {
    json!({"file_path": path})
}

#[test]
fn bash_rules_decide_as_claude_does() {
    let policy = compile(&imported().yaml);
    check(
        &policy,
        &[
            // `git diff:*` is `git diff *`, which matches the bare command too.
            ("Bash", bash("git diff"), Allow),
            ("Bash", bash("git diff HEAD~1 -- src"), Allow),
            ("Bash", bash("git diffx"), Ask),
            // `ls *` matches `ls` and `ls -la`, not `lsof`.
            ("Bash", bash("ls"), Allow),
            ("Bash", bash("ls -la src"), Allow),
            ("Bash", bash("lsof -i"), Ask),
            ("Bash", bash("npm run"), Allow),
            ("Bash", bash("npm run test --watch"), Allow),
            // Exact.
            ("Bash", bash("npm test"), Allow),
            ("Bash", bash("npm test --coverage"), Ask),
            ("Bash", bash("cargo test --lib"), Allow),
            // Compound: every part must be allowed; any denied part denies.
            ("Bash", bash("git diff && ls -la"), Allow),
            ("Bash", bash("git diff | ls"), Allow),
            ("Bash", bash("git diff && lsof"), Ask),
            ("Bash", bash("ls; rm -rf build"), Deny),
            ("Bash", bash("git diff && git push origin main"), Ask),
            ("Bash", bash("git push origin main"), Ask),
            ("Bash", bash("rm -rf /tmp/x"), Deny),
            ("Bash", bash("curl"), Deny),
            ("Bash", bash("curl https://example.com"), Deny),
            // Deny rules look past leading assignments; allow rules do not.
            ("Bash", bash("FOO=1 rm -rf x"), Deny),
            ("Bash", bash("FOO=1 git diff"), Ask),
            // A redirect target is checked as an Edit write.
            ("Bash", bash("echo hi"), Allow),
            ("Bash", bash("echo hi 2>&1"), Allow),
            ("Bash", bash("echo hi > out.txt"), Ask),
            ("Bash", bash("echo hi > secrets/k"), Deny),
            ("Bash", bash("echo hi >> src/generated/x.rs"), Deny),
            // The local settings file.
            ("Bash", bash("make"), Allow),
            ("Bash", bash("make -j4 all"), Allow),
            ("Bash", bash("make deploy"), Deny),
            ("Bash", bash("make deploy prod"), Deny),
            // No rule: ask.
            ("Bash", bash("python3 script.py"), Ask),
        ],
    );
}

#[test]
fn read_and_edit_rules_decide_as_claude_does() {
    let policy = compile(&imported().yaml);
    check(
        &policy,
        &[
            ("Read", file("/w/proj/src/main.rs"), Allow),
            ("Read", file("/w/proj/src/a/b/c.rs"), Allow),
            // `./secrets/**` is that directory, not `secrets2/`.
            ("Read", file("/w/proj/secrets/key"), Deny),
            ("Read", file("/w/proj/secrets2/key"), Ask),
            // A bare name at any depth; deny wins over the allow of src/.
            ("Read", file("/w/proj/.env"), Deny),
            ("Read", file("/w/proj/a/b/.env"), Deny),
            ("Read", file("/w/proj/src/.env"), Deny),
            ("Read", file("/w/proj/.env.local"), Ask),
            // `//` is absolute, `~/` the home directory.
            ("Read", file("/etc/passwd"), Deny),
            ("Read", file("/etcx/passwd"), Ask),
            ("Read", file("/home/u/.ssh/id_rsa"), Deny),
            ("Read", file("/home/u/.sshx"), Ask),
            // `/agents/**` of the user settings is below ~/.claude/.
            ("Read", file("/home/u/.claude/agents/a.md"), Deny),
            ("Read", file("/w/proj/agents/a.md"), Ask),
            // ask `logs/**`: any `logs` directory at any depth.
            ("Read", file("/w/proj/logs/x.log"), Ask),
            ("Read", file("/w/proj/src/logs/x.log"), Ask),
            // Grep and Glob follow the Read rules for their path. Stricter
            // than Claude Code: a search of src/ reads every file below it,
            // src/.env among them if it exists, which a deny names: ask.
            ("Grep", json!({"pattern": "fn", "path": "/w/proj/src"}), Ask),
            (
                "Grep",
                json!({"pattern": "k", "path": "/w/proj/secrets"}),
                Deny,
            ),
            (
                "Glob",
                json!({"pattern": "*.rs", "path": "/w/proj/src"}),
                Allow,
            ),
            ("Glob", json!({"pattern": "*.rs"}), Ask),
            // `Edit(/src/**)` in project settings: the project root's src/.
            ("Edit", file("/w/proj/src/lib.rs"), Allow),
            ("Write", file("/w/proj/src/new.rs"), Allow),
            (
                "NotebookEdit",
                json!({"notebook_path": "/w/proj/src/n.ipynb"}),
                Allow,
            ),
            ("Edit", file("/w/proj/src/generated/x.rs"), Deny),
            ("Edit", file("/w/proj/lib/src/x.rs"), Ask),
            // `docs/*.md`: `*` is one segment.
            ("Edit", file("/w/proj/docs/guide.md"), Allow),
            ("Edit", file("/w/proj/docs/sub/guide.md"), Ask),
            // A Read deny also blocks writes.
            ("Write", file("/w/proj/secrets/new"), Deny),
            ("Write", file("/w/proj/README.md"), Ask),
            // `/gen/**` of a file elsewhere: relative to that file.
            ("Edit", file("/w/team/gen/x"), Deny),
            ("Edit", file("/w/proj/gen/x"), Ask),
        ],
    );
}

#[test]
fn web_mcp_and_other_tools_decide_as_claude_does() {
    let policy = compile(&imported().yaml);
    let fetch = |url: &str| json!({"url": url, "prompt": "summarize"});
    check(
        &policy,
        &[
            ("WebFetch", fetch("https://docs.rs/serde"), Allow),
            ("WebFetch", fetch("https://www.docs.rs/serde"), Ask),
            // `*.example.com`: subdomains, not the apex.
            ("WebFetch", fetch("https://api.example.com/x"), Allow),
            ("WebFetch", fetch("https://a.b.example.com/"), Allow),
            ("WebFetch", fetch("https://example.com/"), Ask),
            ("WebFetch", fetch("https://example.com.evil.net/"), Ask),
            // `example.*`: one label.
            ("WebFetch", fetch("https://example.org/"), Ask),
            ("WebFetch", fetch("https://evil.com/x"), Deny),
            ("WebFetch", fetch("https://sub.evil.com/x"), Ask),
            ("WebFetch", fetch("https://other.test/"), Ask),
            ("WebSearch", json!({"query": "rust"}), Allow),
            // `mcp__github`: every tool of that server.
            ("mcp__github__create_issue", json!({"title": "x"}), Allow),
            ("mcp__github__delete_repo", json!({}), Ask),
            ("mcp__githubx__list", json!({}), Ask),
            ("mcp__linear__get_issue", json!({}), Allow),
            ("mcp__linear__create_issue", json!({}), Ask),
            ("mcp__dangerous__anything", json!({}), Deny),
            (
                "Agent",
                json!({"subagent_type": "Explore", "prompt": "x"}),
                Allow,
            ),
            ("Agent", json!({"subagent_type": "general-purpose"}), Ask),
            ("TodoWrite", json!({"todos": []}), Ask),
        ],
    );
}

#[test]
fn untranslatable_rules_are_reported_with_a_reason_never_dropped() {
    let got = imported();
    let reported: Vec<&str> = got.untranslated.iter().map(|(r, _)| r.as_str()).collect();
    let expected = [
        "Write(./out/**)",
        "PowerShell(Get-ChildItem *)",
        "Bash(git add . && git commit *)",
        "Bash(echo \"hi\")",
        "Bash(echo $HOME)",
        "*",
        "mcp__x__y(arg)",
        "Cd(~/code/*)",
        "WebFetch(url:https://x.test)",
        "Bash(run_in_background:true)",
        "Agent(model:opus)",
        "Read(!x)",
    ];
    for rule in expected {
        assert!(
            reported.contains(&rule),
            "{rule} not reported: {reported:?}"
        );
    }
    assert_eq!(reported.len(), expected.len(), "{:#?}", got.untranslated);
    let total: usize = settings()
        .iter()
        .map(|(_, t)| {
            let v: Value = serde_json::from_str(t).unwrap();
            ["allow", "ask", "deny"]
                .iter()
                .filter_map(|b| v["permissions"][b].as_array().map(Vec::len))
                .sum::<usize>()
        })
        .sum();
    assert_eq!(got.translated + got.untranslated.len(), total);
    let why = |rule: &str| {
        got.untranslated
            .iter()
            .find(|(r, _)| r == rule)
            .map(|(_, w)| w.clone())
            .unwrap()
    };
    assert!(
        why("Bash(run_in_background:true)").starts_with("deny rule in .claude/settings.json: ")
    );
    assert!(
        why("Write(./out/**)").contains("Edit("),
        "{}",
        why("Write(./out/**)")
    );
    assert!(why("*").contains("wildcards in allow"), "{}", why("*"));
    assert!(why("WebFetch(url:https://x.test)").contains("primary field"));
    // They are listed in the file too.
    assert!(got.yaml.contains("\n# Not translated:\n"));
    assert!(got.yaml.contains("\n#   Write(./out/**): allow rule in"));
}

#[test]
fn the_file_has_a_header_default_ask_and_a_description_per_rule() {
    let got = imported();
    let yaml = &got.yaml;
    assert!(
        yaml.starts_with("# Generated by `aileron import claude`"),
        "{yaml}"
    );
    assert!(yaml.contains("#   .claude/settings.json\n"));
    assert!(yaml.contains("\nversion: 1\n"));
    assert!(yaml.contains("\ndefault: ask\n"));
    assert!(
        yaml.contains("additionalDirectories [\"../shared\"]"),
        "{yaml}"
    );
    assert!(yaml.contains("defaultMode \"acceptEdits\""), "{yaml}");
    let src = Source {
        name: format!("{CWD}/aileron.yaml"),
        text: yaml.clone(),
        layer: Layer::Project,
        base_dir: CWD.into(),
    };
    let doc = parse_document(&src, HOME).unwrap();
    assert_eq!(doc.rules.len(), got.translated);
    for r in &doc.rules {
        let d = r.description.as_deref().unwrap_or_default();
        assert!(d.starts_with("Claude Code "), "{d}");
        assert!(d.contains("settings") || d.contains("claude.json"), "{d}");
    }
    assert!(
        yaml.contains("Claude Code deny `Bash(rm -rf *)` (.claude/settings.json)"),
        "{yaml}"
    );
    // Claude's order, and Aileron's default priorities give it.
    let (deny, ask, allow) = (
        yaml.find("\ndeny:").unwrap(),
        yaml.find("\nask:").unwrap(),
        yaml.find("\nallow:").unwrap(),
    );
    assert!(deny < ask && ask < allow);
    for r in &doc.rules {
        assert_eq!(r.priority, r.decision.default_priority());
    }
    assert!(Decision::Deny.default_priority() > Decision::Ask.default_priority());
    assert!(Decision::Ask.default_priority() > Decision::Allow.default_priority());
}

#[test]
fn bare_tools_wildcards_and_star_forms() {
    let files = vec![(
        "/w/proj/.claude/settings.json".to_owned(),
        json!({"permissions": {
            "allow": ["Bash(*)", "Read", "mcp__github__*", "WebFetch"],
            "ask": ["mcp__*"],
            "deny": ["Edit", "WebFetch(domain:*)"],
        }})
        .to_string(),
    )];
    let got = claude(&files, CWD, HOME).unwrap();
    assert!(got.untranslated.is_empty(), "{:?}", got.untranslated);
    let policy = compile(&got.yaml);
    check(
        &policy,
        &[
            ("Bash", bash("anything --at all"), Allow),
            ("Bash", bash("echo x > out.txt"), Deny), // the redirect is an Edit write
            ("Read", file("/anywhere/x"), Allow),
            ("Glob", json!({"pattern": "*"}), Allow),
            ("Edit", file("/w/proj/x"), Deny),
            ("mcp__github__x", json!({}), Ask), // ask is checked before allow
            ("WebFetch", json!({"url": "https://a.test/"}), Deny),
        ],
    );
    let files = vec![(
        "s.json".to_owned(),
        json!({"permissions": {"deny": ["*"]}}).to_string(),
    )];
    let policy = compile(&claude(&files, CWD, HOME).unwrap().yaml);
    check(
        &policy,
        &[
            ("Bash", bash("ls"), Deny),
            ("Read", file("/w/proj/a"), Deny),
            ("mcp__a__b", json!({}), Deny),
        ],
    );
}

#[test]
fn bad_json_is_an_error_with_file_line_and_column() {
    let files = vec![(
        ".claude/settings.json".to_owned(),
        "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls)\",]\n  }\n}\n".to_owned(),
    )];
    let err = claude(&files, CWD, HOME).unwrap_err().to_string();
    assert!(err.starts_with(".claude/settings.json:3:"), "{err}");
    let files = vec![(
        "s.json".to_owned(),
        json!({"permissions": {"allow": "Bash"}}).to_string(),
    )];
    let err = claude(&files, CWD, HOME).unwrap_err().to_string();
    assert!(err.contains("`permissions.allow` must be a list"), "{err}");
}

#[test]
fn settings_without_permissions_give_an_empty_policy_that_loads() {
    let files = vec![("s.json".to_owned(), "{}".to_owned())];
    let got = claude(&files, CWD, HOME).unwrap();
    assert_eq!((got.translated, got.untranslated.len()), (0, 0));
    let policy = compile(&got.yaml);
    check(&policy, &[("Bash", bash("ls"), Ask)]);
}

#[test]
fn glob_characters_in_the_working_directory_are_literal() {
    let cwd = "/w/a[1]";
    let files = vec![(
        ".claude/settings.json".to_owned(),
        json!({"permissions": {"deny": ["Read(./x/**)"]}}).to_string(),
    )];
    let got = claude(&files, cwd, HOME).unwrap();
    assert!(got.yaml.contains(r#"/w/a\\[1\\]/x/**"#), "{}", got.yaml);
    let src = Source {
        name: format!("{cwd}/aileron.yaml"),
        text: got.yaml,
        layer: Layer::Project,
        base_dir: cwd.into(),
    };
    let policy = Policy::from_sources(&[src], &Environment::new(HOME)).unwrap();
    let read = |path: &str| {
        let mut a: aileron_engine::Action =
            serde_json::from_value(json!({"type": "fs.read", "facets": {"fs": {"path": path}}}))
                .unwrap();
        a.normalize();
        policy.evaluate(&a, &State::default()).decision
    };
    assert_eq!(read("/w/a[1]/x/k"), Deny);
    assert_eq!(read("/w/a1/x/k"), Ask);
}
