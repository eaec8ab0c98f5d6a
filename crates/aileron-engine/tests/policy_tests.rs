//! SPEC 5 `tests:`: examples checked by `aileron test`, run with
//! `Policy::run_tests`. Action-form examples here; command-form examples
//! (which go through the shell analysis) are in `shell_lines.rs`.

mod common;

use aileron_engine::{Decision, VerdictSource};
use common::*;

const POLICY: &str = r#"version: 1
default: ask
allow:
  - {id: wiki-get, when: {type: http.request, http.method: GET, http.host: wiki.internal.example}}
deny:
  - {id: no-delete, description: "no deletes", when: {type: http.request, http.method: DELETE}}
  - {id: secret-file, when: {fs.path: {path: "sub/secret.txt"}}}
  - {id: weekdays-only, when: {type: sql.query, timestamp: {time: {days: [sat, sun]}}}}
tests:
  - name: wiki reads are allowed
    action: {type: http.request, facets: {http: {method: GET, url: "https://wiki.internal.example/x"}}}
    expect: allow
    rule: wiki-get
  - action: {type: http.request, facets: {http: {method: DELETE, url: "https://api.example/y"}}}
    expect: allow
  - action: {type: http.request, facets: {http: {method: GET, url: "https://wiki.internal.example/y"}}}
    expect: allow
    rule: no-delete
  - action: {type: sql.query, facets: {sql: {verb: SELECT, text: "SELECT 1"}}}
    expect: ask
    rule: weekdays-only
  - action: {type: fs.read, facets: {fs: {path: secret.txt}}}
    cwd: sub
    expect: deny
    rule: secret-file
  - action: {type: sql.query, facets: {sql: {verb: SELECT, text: "SELECT 1"}}}
    expect: ask
  - action: {type: sql.query, timestamp: "2026-01-10T12:00:00Z", facets: {sql: {verb: SELECT, text: "SELECT 2"}}}
    expect: deny
    rule: weekdays-only
"#;

#[test]
fn examples_pass_and_fail_with_location_and_failure_text() {
    let p = load(POLICY);
    let out = p.run_tests();
    assert_eq!(out.len(), 7);
    let summary: Vec<(&str, bool)> = out.iter().map(|o| (o.name.as_str(), o.passed)).collect();
    assert_eq!(
        summary,
        [
            ("wiki reads are allowed", true),
            // without `name:`, the action's summary names the example
            ("DELETE https://api.example/y", false),
            ("GET https://wiki.internal.example/y", false),
            ("SELECT 1", false),
            ("read /p/sub/secret.txt", true),
            ("SELECT 1", true),
            ("SELECT 2", true),
        ]
    );
    let loc = |needle: &str, nth: usize| {
        let (l, c) = pos(POLICY, needle, nth);
        format!("{FILE}:{l}:{c}")
    };
    assert_eq!(out[0].location, loc("name: wiki reads", 0));
    assert_eq!(
        out[1].location,
        loc(
            "action: {type: http.request, facets: {http: {method: DELETE",
            0
        )
    );
    assert_eq!(out[0].failure, None);
    assert_eq!(out[0].expected, "allow");
    assert_eq!(out[0].got.rule.as_deref(), Some("wiki-get"));

    // Wrong decision: says both, and the rule and reason that decided.
    assert_eq!(out[1].expected, "allow");
    assert_eq!(out[1].got.decision, Decision::Deny);
    let f = out[1].failure.as_deref().unwrap();
    assert!(f.contains("expected allow, got deny"), "{f}");
    assert!(f.contains("no-delete") && f.contains("no deletes"), "{f}");

    // Right decision, wrong rule.
    let f = out[2].failure.as_deref().unwrap();
    assert_eq!(f, "expected rule `no-delete`, got `wiki-get`");

    // Right decision, but the default decided.
    let f = out[3].failure.as_deref().unwrap();
    assert_eq!(f, "expected rule `weekdays-only`, got the default");
    assert_eq!(out[3].got.source, VerdictSource::Default);

    // `cwd:` is relative to the file's directory; fs paths are made absolute against it.
    assert_eq!(out[4].got.rule.as_deref(), Some("secret-file"));
}

#[test]
fn a_failing_default_decision_names_the_default() {
    let text = "version: 1\ndefault: deny\ntests:\n  - {action: {type: mcp.call, facets: {mcp: {server: gh, tool: x}}}, expect: allow}\n";
    let out = load(text).run_tests();
    assert_eq!(out.len(), 1);
    let f = out[0].failure.as_deref().unwrap();
    assert!(f.starts_with("expected allow, got deny ("), "{f}");
    assert!(f.contains("default: deny"), "{f}");
    assert_eq!(out[0].location, format!("{FILE}:4:5"));
    assert_eq!(out[0].name, "gh/x");
}

#[test]
fn examples_of_profile_files_run_but_not_those_of_builtin_profiles() {
    let team = "version: 1\nask:\n  - {id: team:kubectl, command: \"kubectl *\"}\ntests:\n  - {action: {type: http.request, facets: {http: {method: GET, url: \"https://x/\"}}}, expect: ask}\n";
    let proj = "version: 1\nprofiles: [lang/go, ./team.yaml]\ntests:\n  - {action: {type: fs.read, facets: {fs: {path: a}}}, expect: ask}\n";
    let p = compile(&with_profiles(
        project(proj),
        &[profile_file("/p/team.yaml", team)],
    ));
    let out = p.run_tests();
    let locations: Vec<&str> = out.iter().map(|o| o.location.as_str()).collect();
    assert_eq!(locations, ["/p/team.yaml:5:5", "/p/aileron.yaml:4:5"]);
    assert!(out.iter().all(|o| o.passed), "{out:?}");
}

#[test]
fn judge_is_a_valid_expectation() {
    let text = r#"version: 1
judge:
  - {id: review, model: m, when: {type: tool.call}}
tests:
  - {action: {type: tool.call, facets: {tool: {name: Bash, input: {command: ls}}}}, expect: judge, rule: review}
"#;
    let out = load(text).run_tests();
    assert!(out[0].passed, "{:?}", out[0]);
    assert_eq!(out[0].got.approver.as_deref(), Some("m"));
}

#[test]
fn outcomes_serialize_for_json_output() {
    let out = load(POLICY).run_tests();
    let v = serde_json::to_value(&out[1]).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["expected"], "allow");
    assert_eq!(v["got"]["decision"], "deny");
    assert_eq!(v["got"]["rule"], "no-delete");
    assert!(v["failure"].as_str().unwrap().contains("expected allow"));
}
