//! The command line as a user meets it: real processes, real files.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn aileron(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aileron"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir.join("home"))
        .env_remove("AILERON_DATA")
        .output()
        .expect("aileron runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn project(yaml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    std::fs::write(dir.path().join("aileron.yaml"), yaml).unwrap();
    dir
}

#[test]
fn init_writes_a_policy_for_the_detected_languages_that_checks_clean() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname='x'\n").unwrap();
    std::fs::write(dir.path().join("package.json"), "{}").unwrap();
    let out = aileron(dir.path(), &["init"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("aileron.yaml")).unwrap();
    assert!(
        text.contains("profiles: [\"lang/rust\", \"lang/node\"]"),
        "{text}"
    );
    // The starter policy says what it means: no warnings either.
    let check = aileron(dir.path(), &["check", "--deny-warnings"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    assert!(
        stdout(&check).contains(" passed, 0 failed") && !stdout(&check).contains("warning"),
        "{}",
        stdout(&check)
    );
    // A second init refuses to overwrite.
    let again = aileron(dir.path(), &["init"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
}

#[test]
fn check_reports_an_unknown_operator_with_file_line_column_and_caret() {
    let dir = project(
        "version: 1\nask:\n  - id: deletes\n    when: {http.method: {equal: \"DELETE\"}}\n",
    );
    let out = aileron(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let file = dir.path().join("aileron.yaml");
    let head = format!(
        "{}:4:26: error: unknown operator `equal` (did you mean `equals`?); expected one of: equals, in,",
        file.display()
    );
    assert!(text.contains(&head), "{text}");
    assert!(
        text.contains("    when: {http.method: {equal: \"DELETE\"}}\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("\n    {}^", " ".repeat(25))),
        "{text}"
    );
}

#[test]
fn check_warns_about_an_allow_that_never_takes_effect() {
    // "Always for this project" appended an allow under the ask that asked.
    let yaml = "version: 1\nask:\n  - {id: push, command: \"git push *\"}\nallow:\n  - \"git push origin feature\"\n";
    let dir = project(yaml);
    let file = dir.path().join("aileron.yaml");
    let out = aileron(dir.path(), &["check"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "warnings do not fail: {text}");
    let head = format!(
        "{f}:5:5: warning: this allow rule never takes effect: `push` (ask rule at {f}:3:5, priority 100) \
         matches every action it matches and has a higher priority (100 > 50); give it `priority: 101` to take effect [allow-overridden]\n",
        f = file.display()
    );
    assert!(text.starts_with(&head), "{text}");
    assert!(
        text.contains("\n      - \"git push origin feature\"\n        ^\n"),
        "the rule's line and a caret: {text}"
    );
    assert!(
        text.contains(": valid (") && text.contains("\n1 warning\n"),
        "{text}"
    );

    let out = aileron(dir.path(), &["check", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["valid"], true);
    assert_eq!(report["errors"], serde_json::json!([]));
    let w = &report["warnings"][0];
    assert_eq!(w["severity"], "warning", "{report}");
    assert_eq!(w["code"], "allow-overridden", "{report}");
    assert_eq!((w["line"].as_u64(), w["col"].as_u64()), (Some(5), Some(5)));
    assert_eq!(w["source_line"], "  - \"git push origin feature\"");
    assert_eq!(report["warnings"].as_array().map(Vec::len), Some(1));

    // For CI: warnings fail like errors.
    let out = aileron(dir.path(), &["check", "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("1 warning, denied by --deny-warnings"),
        "{}",
        stdout(&out)
    );
    let out = aileron(dir.path(), &["check", "--json", "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(1));

    // At the suggested priority the allow takes effect: nothing to say.
    std::fs::write(
        &file,
        yaml.replace(
            "  - \"git push origin feature\"",
            "  - {command: \"git push origin feature\", priority: 101}",
        ),
    )
    .unwrap();
    let out = aileron(dir.path(), &["check", "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(!stdout(&out).contains("warning"), "{}", stdout(&out));
    // `aileron test` runs the examples only.
    std::fs::write(&file, yaml).unwrap();
    let out = aileron(dir.path(), &["test"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!stdout(&out).contains("warning"), "{}", stdout(&out));
}

#[test]
fn check_reports_every_problem_not_just_the_first() {
    let dir = project(
        "version: 1\ndefualt: ask\nallow:\n  - comand: \"git *\"\ndeny:\n  - when: {http.url: {pattern: \"([a-\"}}\n",
    );
    let out = aileron(dir.path(), &["check", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["valid"], false);
    let messages: Vec<String> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].contains("unknown key `defualt`")
            && messages[0].contains("did you mean `default`"),
        "{messages:?}"
    );
    assert!(messages[1].contains("unknown key `comand`"), "{messages:?}");
    assert!(messages[2].contains("invalid regex"), "{messages:?}");
    assert_eq!(report["errors"][0]["line"], 2);
}

#[test]
fn check_rejects_a_missing_profile_and_an_override_of_a_deny() {
    let dir = project("version: 1\nprofiles: [\"lang/goo\"]\n");
    let out = aileron(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains(":2:12: error: profile `lang/goo` does not exist"),
        "{}",
        stdout(&out)
    );

    let dir = project(
        "version: 1\nprofiles: [./team.yaml]\nallow:\n  - {override: no-push, command: \"git push *\"}\n",
    );
    std::fs::write(
        dir.path().join("team.yaml"),
        "version: 1\ndeny:\n  - {id: no-push, command: \"git push *\"}\n",
    )
    .unwrap();
    let out = aileron(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("deny rules cannot be overridden"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn test_reports_passes_and_failures_and_fails_the_exit_code() {
    let dir = project(
        "version: 1\nallow: [\"git status\"]\ntests:\n  - {command: \"git status\", expect: allow}\n  - {command: \"git push\", expect: allow}\n  - {action: {type: http.request, facets: {http: {method: GET, url: \"https://x.test/\"}}}, expect: ask}\n",
    );
    let out = aileron(dir.path(), &["test"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.ends_with("2 passed, 1 failed\n"), "{text}");
    assert!(
        text.contains("aileron.yaml:5:5: test failed: git push: expected allow, got ask"),
        "{text}"
    );
}

#[test]
fn explain_json_names_the_decision_rule_source_reason_and_commands() {
    let dir = project("version: 1\nallow: [\"git *\"]\n");
    let out = aileron(
        dir.path(),
        &["explain", "--json", "--", "git status; rm -rf x"],
    );
    assert!(out.status.success());
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["decision"], "ask");
    assert_eq!(v["rule"], Value::Null);
    assert_eq!(v["source"], "default");
    assert!(v["reason"].as_str().unwrap().contains("default"));
    let cmds = v["commands"].as_array().unwrap();
    assert_eq!(cmds.len(), 2, "{v}");
    assert_eq!(cmds[0]["command"], "git status");
    assert_eq!(cmds[0]["decision"], "allow");
    assert!(cmds[0]["rule"].as_str().unwrap().contains("allow[0]"));
    assert_eq!(cmds[1]["command"], "rm -rf x");
    assert_eq!(v["decisive_command"], 1);
}

#[test]
fn explain_in_words_shows_commands_rules_and_the_winner() {
    let dir = project(
        "version: 1\nallow: [\"git *\"]\ndeny:\n  - {id: no-push-main, command: \"git push origin main\", description: no direct push to main}\n",
    );
    let out = aileron(
        dir.path(),
        &["explain", "--", "git", "push", "origin", "main"],
    );
    let text = stdout(&out);
    assert!(text.contains("#0 git push origin main"), "{text}");
    assert!(text.contains("no-push-main"), "{text}");
    assert!(text.contains("has priority 200, higher than"), "{text}");
    assert!(
        text.trim_end()
            .ends_with("decision: deny (rule no-push-main): no direct push to main"),
        "{text}"
    );
}

#[test]
fn explain_an_action_from_a_file() {
    let dir = project(
        "version: 1\ndeny:\n  - id: no-prod-deletes\n    when: {type: http.request, http.method: DELETE, http.host: {glob: \"*.prod.example\"}}\n",
    );
    let action = dir.path().join("a.json");
    std::fs::write(&action, r#"{"type": "http.request", "facets": {"http": {"method": "delete", "url": "https://api.prod.example/v1/x"}}}"#).unwrap();
    let out = aileron(
        dir.path(),
        &["explain", "--json", "--action", action.to_str().unwrap()],
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["rule"], "no-prod-deletes");
    assert_eq!(v["source"], "static");
}

#[test]
fn a_broken_policy_makes_explain_deny_and_exit_1() {
    let dir = project("version: 1\nallow: [\n");
    let out = aileron(dir.path(), &["explain", "--json", "--", "ls"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["decision"], "deny");
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid YAML")
    );
}

#[test]
fn schema_is_json_schema_for_every_top_level_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = aileron(dir.path(), &["schema"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["$schema"], "https://json-schema.org/draft/2020-12/schema");
    for key in [
        "version", "profiles", "default", "settings", "env", "allow", "ask", "judge", "deny",
        "tests",
    ] {
        assert!(v["properties"][key].is_object(), "{key}");
    }
    assert!(v["$defs"]["operators"]["properties"]["path"].is_object());
}

#[test]
fn audit_shows_and_filters_what_the_shim_decided() {
    let dir = project("version: 1\nallow: [\"echo *\"]\ndeny: [\"touch *\"]\n");
    for line in ["echo one", "touch x", "echo two"] {
        let out = Command::new(env!("CARGO_BIN_EXE_aileron-sh"))
            .args(["-c", line])
            .current_dir(dir.path())
            .env("HOME", dir.path().join("home"))
            .env_remove("AILERON_SOCKET")
            .env_remove("AILERON_DATA")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(if line.starts_with("touch") { 126 } else { 0 }),
            "{line}"
        );
    }
    let all = aileron(dir.path(), &["audit"]);
    assert!(
        all.status.success(),
        "{}",
        String::from_utf8_lossy(&all.stderr)
    );
    let text = stdout(&all);
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.lines().nth(1).unwrap().contains("deny") && text.contains("touch x"),
        "{text}"
    );

    let denied = aileron(dir.path(), &["audit", "--decision", "deny", "--json"]);
    let lines: Vec<Value> = stdout(&denied)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["action"]["summary"], "touch x");
    assert!(lines[0]["rule"].as_str().unwrap().ends_with("deny[0]"));

    let last = aileron(dir.path(), &["audit", "-n", "1"]);
    assert!(stdout(&last).contains("echo two") && stdout(&last).lines().count() == 1);
    let bad = aileron(dir.path(), &["audit", "--since", "yesterday-ish"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn server_commands_run_aileron_server_and_say_so_when_it_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    // Beside its aileron-server (as installed): the server's own help.
    let out = aileron(dir.path(), &["serve", "--help"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout(&out).contains("Usage: aileron serve"),
        "{}",
        stdout(&out)
    );
    // A copy of `aileron` alone: one line naming what is missing, exit 2.
    let lone = dir.path().join("aileron");
    std::fs::copy(env!("CARGO_BIN_EXE_aileron"), &lone).unwrap();
    let out = Command::new(&lone)
        .args(["token", "create", "--role", "agent"])
        .env("HOME", dir.path().join("home"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("aileron: cannot run ") && err.contains("aileron-server"),
        "{err}"
    );
}
