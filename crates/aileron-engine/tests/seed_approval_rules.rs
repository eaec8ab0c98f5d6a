//! The approval-rules seed (002): its three worked examples written as
//! `aileron.yaml` rules, every operator and combinator of the pattern
//! dialect, SPEC 6's new operators, and SPEC 7's evaluation order.

mod common;

use aileron_engine::action::FieldPath;
use aileron_engine::glob::Glob;
use aileron_engine::pattern::{Cond, Matcher};
use aileron_engine::{Action, Decision, Layer, Rule, Sensitivity, State, VerdictSource};
use common::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------- worked examples

const EXAMPLE_1: &str = r#"version: 1
default: allow
deny:
  - id: no-destructive-sql-prod
    description: "destructive SQL on prod is human-only"
    scope: {integration: int-prod-pg}
    priority: 100
    when: {sql.verb: {in: [DROP, TRUNCATE, DELETE]}}
"#;

fn sql(verb: &str, integration: Option<&str>) -> Action {
    in_session(
        action(json!({
            "type": "sql.query",
            "facets": {"sql": {"verb": verb, "tables": ["users"], "text": format!("{verb} users")}}
        })),
        Some("postgres"),
        None,
        integration,
    )
}

#[test]
fn example_1_destructive_sql_on_prod_is_denied_for_that_integration_only() {
    let p = load(EXAMPLE_1);
    let cases: &[(&str, Option<&str>, &str)] = &[
        ("DROP", Some("int-prod-pg"), "deny"),
        ("TRUNCATE", Some("int-prod-pg"), "deny"),
        ("DELETE", Some("int-prod-pg"), "deny"),
        ("SELECT", Some("int-prod-pg"), "allow"),
        ("DROP", Some("int-staging-pg"), "allow"),
        ("DROP", None, "allow"),
    ];
    for (verb, integration, want) in cases {
        let v = decide(&p, &sql(verb, *integration));
        assert_eq!(
            v.decision.as_str(),
            *want,
            "{verb} on {integration:?}: {v:?}"
        );
    }
    let v = decide(&p, &sql("DROP", Some("int-prod-pg")));
    assert_eq!(v.rule.as_deref(), Some("no-destructive-sql-prod"));
    assert_eq!(v.source, VerdictSource::Static);
    assert_eq!(v.reason, "destructive SQL on prod is human-only");
    let v = decide(&p, &sql("DROP", Some("int-staging-pg")));
    assert_eq!((v.source, v.rule), (VerdictSource::Default, None));
}

const EXAMPLE_2: &str = r#"version: 1
default: allow
ask:
  - id: human-approves-http
    when: {type: http.request}
allow:
  - id: wiki-reads
    description: "allow internal-wiki reads"
    priority: 200
    when:
      http.method: GET
      http.url: {glob: "https://wiki.internal.example/*"}
"#;

fn http(method: &str, url: &str) -> Action {
    action(json!({"type": "http.request", "facets": {"http": {"method": method, "url": url}}}))
}

#[test]
fn example_2_get_requests_to_the_wiki_are_allowed_at_priority_200() {
    let p = load(EXAMPLE_2);
    assert_eq!(p.rule("wiki-reads").unwrap().priority, 200);
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "GET",
            "https://wiki.internal.example/page/1",
            "allow",
            "wiki-reads",
        ),
        (
            "get",
            "https://wiki.internal.example/",
            "allow",
            "wiki-reads",
        ),
        (
            "POST",
            "https://wiki.internal.example/page/1",
            "ask",
            "human-approves-http",
        ),
        (
            "GET",
            "https://evil.example/wiki.internal.example/",
            "ask",
            "human-approves-http",
        ),
        (
            "GET",
            "https://wiki.internal.example",
            "ask",
            "human-approves-http",
        ),
    ];
    for (method, url, decision, rule) in cases {
        let v = decide(&p, &http(method, url));
        assert_eq!(
            outcome(&v),
            (*decision, Some(*rule)),
            "{method} {url}: {v:?}"
        );
    }
    let v = decide(&p, &http("GET", "https://wiki.internal.example/x"));
    assert_eq!(v.source, VerdictSource::Static);
    assert_eq!(v.approver, None, "no approver call");
}

const EXAMPLE_3: &str = r#"version: 1
default: allow
ask:
  - id: big-model-calls
    description: "human-approve big-model calls"
    scope: {plugin: anthropic}
    priority: 50
    when:
      any:
        - llm.model: {glob: "claude-opus-*"}
        - llm.model: {glob: "gpt-4*"}
    approver: dashboard
    timeout: 300
    on_timeout: deny
"#;

fn llm(model: &str, plugin: &str) -> Action {
    in_session(
        action(json!({"type": "llm.request", "facets": {"llm": {"model": model}}})),
        Some(plugin),
        None,
        None,
    )
}

#[test]
fn example_3_big_model_calls_go_to_a_human_on_the_dashboard() {
    let p = load(EXAMPLE_3);
    let r = p.rule("big-model-calls").unwrap();
    assert_eq!(r.decision, Decision::Ask);
    assert_eq!(r.priority, 50);
    let a = r.approver.as_ref().expect("approver settings");
    assert_eq!(a.approver.as_deref(), Some("dashboard"));
    assert_eq!(a.timeout, Some(300));
    assert_eq!(a.on_timeout, Some(Decision::Deny));

    let cases: &[(&str, &str, &str)] = &[
        ("claude-opus-4", "anthropic", "ask"),
        ("gpt-4o", "anthropic", "ask"),
        ("gpt-4", "anthropic", "ask"),
        ("claude-haiku-4", "anthropic", "allow"),
        ("gpt-3.5-turbo", "anthropic", "allow"),
        ("claude-opus-4", "openai", "allow"),
    ];
    for (model, plugin, want) in cases {
        let v = decide(&p, &llm(model, plugin));
        assert_eq!(v.decision.as_str(), *want, "{model} via {plugin}: {v:?}");
    }
    let v = decide(&p, &llm("claude-opus-4", "anthropic"));
    assert_eq!(v.rule.as_deref(), Some("big-model-calls"));
    assert_eq!(v.approver.as_deref(), Some("dashboard"));
    assert_eq!(v.reason, "human-approve big-model calls");
}

// ---------------------------------------------------------------- operators

/// One action with many kinds of fields for the operator tables.
fn rich() -> Action {
    action(json!({
        "type": "http.request",
        "summary": "DELETE https://api.github.com/repos/acme/app",
        "verb": "DELETE",
        "sensitivity": "destructive",
        "tags": ["prod", "github"],
        "facets": {
            "http": {"method": "DELETE", "url": "https://api.github.com/repos/acme/app"},
            "sql": {"verb": "SELECT", "tables": ["users", "orders"]},
            "llm": {"model": "gpt-4o", "cost": 0.25, "tokens": 1200},
            "slack": {"channel": "#ops", "flag": true, "nothing": null}
        }
    }))
}

/// Does `when` (flow YAML) match `a`? Asked through a whole policy.
fn when_matches_in(when: &str, a: &Action, state: &State<'_>) -> bool {
    let yaml = format!("version: 1\ndefault: allow\ndeny:\n  - id: probe\n    when: {when}\n");
    let p = load(&yaml);
    let v = p.evaluate(a, state);
    v.rule.as_deref() == Some("probe")
}

fn when_matches(when: &str, a: &Action) -> bool {
    when_matches_in(when, a, &State::default())
}

#[track_caller]
fn table(a: &Action, cases: &[(&str, bool)]) {
    let mut wrong = Vec::new();
    for (when, want) in cases {
        if when_matches(when, a) != *want {
            wrong.push(format!("  {when}  → expected {want}"));
        }
    }
    assert!(wrong.is_empty(), "wrong matches:\n{}", wrong.join("\n"));
}

#[test]
fn normalize_fills_http_parts() {
    let a = rich();
    assert_eq!(a.facets["http"]["host"], "api.github.com");
    assert_eq!(a.facets["http"]["scheme"], "https");
    assert_eq!(a.facets["http"]["port"], 443);
    assert_eq!(a.facets["http"]["path"], "/repos/acme/app");
    assert_eq!(a.primary, "http");
}

#[test]
fn literal_sugar_is_equals() {
    table(
        &rich(),
        &[
            ("{http.method: DELETE}", true),
            ("{http.method: {equals: DELETE}}", true),
            ("{http.method: delete}", false),
            ("{http.method: {equals: delete}}", false),
            ("{http.port: 443}", true),
            ("{http.port: {equals: 443}}", true),
            // strict: a string is not a number
            ("{http.port: \"443\"}", false),
            ("{slack.flag: true}", true),
            ("{slack.flag: false}", false),
            ("{slack.flag: \"true\"}", false),
            ("{llm.cost: 0.25}", true),
        ],
    );
}

#[test]
fn bare_array_literal_has_two_meanings() {
    table(
        &rich(),
        &[
            // array field: element for element, order included
            ("{sql.tables: [users, orders]}", true),
            ("{sql.tables: [orders, users]}", false),
            ("{sql.tables: [users]}", false),
            ("{sql.tables: [users, orders, x]}", false),
            ("{tags: [prod, github]}", true),
            ("{tags: [github, prod]}", false),
            // scalar field: one of
            ("{http.method: [GET, DELETE]}", true),
            ("{http.method: [GET, HEAD]}", false),
            ("{http.port: [80, 443]}", true),
        ],
    );
}

#[test]
fn in_is_one_of_for_scalars_and_any_overlap_for_arrays() {
    table(
        &rich(),
        &[
            ("{http.method: {in: [GET, DELETE]}}", true),
            ("{http.method: {in: [GET, HEAD]}}", false),
            ("{http.port: {in: [80, 443]}}", true),
            ("{tags: {in: [dev, prod]}}", true),
            ("{tags: {in: [dev, staging]}}", false),
            ("{sql.tables: {in: [orders]}}", true),
            ("{sql.tables: {in: [payments]}}", false),
            ("{k8s.namespace: {in: [default]}}", false),
        ],
    );
}

#[test]
fn pattern_is_a_regex_with_inline_flags_on_strings_only() {
    table(
        &rich(),
        &[
            (
                r#"{http.url: {pattern: "^https://api\\.github\\.com/"}}"#,
                true,
            ),
            (
                r#"{http.url: {pattern: "^https://api\\.gitlab\\.com/"}}"#,
                false,
            ),
            // unanchored unless the regex says so
            (r#"{http.url: {pattern: "repos/acme"}}"#, true),
            (r#"{http.method: {pattern: "^delete$"}}"#, false),
            (r#"{http.method: {pattern: "(?i)^delete$"}}"#, true),
            // string-only
            (r#"{http.port: {pattern: "443"}}"#, false),
            (r#"{tags: {pattern: "prod"}}"#, false),
        ],
    );
}

#[test]
fn contains_is_case_insensitive_for_strings_and_strict_for_arrays() {
    table(
        &rich(),
        &[
            (r#"{http.url: {contains: "/repos/"}}"#, true),
            (r#"{http.url: {contains: "/REPOS/"}}"#, true),
            (r#"{summary: {contains: "Acme"}}"#, true),
            (r#"{http.url: {contains: "/sandbox/"}}"#, false),
            ("{tags: {contains: prod}}", true),
            ("{tags: {contains: PROD}}", false),
            // element membership, not substring of an element
            ("{tags: {contains: pro}}", false),
            ("{sql.tables: {contains: orders}}", true),
            ("{sql.tables: {contains: Orders}}", false),
            // neither string nor array
            ("{http.port: {contains: 4}}", false),
        ],
    );
}

#[test]
fn not_contains_is_the_inverse_and_true_for_other_values() {
    table(
        &rich(),
        &[
            (r#"{http.url: {notContains: "/sandbox/"}}"#, true),
            (r#"{http.url: {notContains: "GITHUB"}}"#, false),
            ("{tags: {notContains: prod}}", false),
            ("{tags: {notContains: dev}}", true),
            ("{tags: {notContains: PROD}}", true),
            // non-string non-array values
            ("{http.port: {notContains: \"4\"}}", true),
            ("{slack.flag: {notContains: x}}", true),
            ("{llm.cost: {notContains: 0}}", true),
        ],
    );
}

#[test]
fn glob_is_anchored_with_only_star_and_question_mark() {
    table(
        &rich(),
        &[
            (r#"{http.host: {glob: "*.github.com"}}"#, true),
            (r#"{http.host: {glob: "api.github.co?"}}"#, true),
            (r#"{http.host: {glob: "github.com"}}"#, false),
            (r#"{http.host: {glob: "api.github"}}"#, false),
            (r#"{http.url: {glob: "https://api.github.com/*"}}"#, true),
            // `**` is nothing special: two stars
            (r#"{http.url: {glob: "**/acme/app"}}"#, true),
            // no character classes: `[` is literal
            (r#"{http.host: {glob: "[a]pi.github.com"}}"#, false),
            // string-only
            (r#"{http.port: {glob: "44?"}}"#, false),
            (r#"{tags: {glob: "pro*"}}"#, false),
        ],
    );
    // Unlike a command glob, a trailing ` *` does not match the bare value.
    let a = shell("git diff");
    assert!(!when_matches(
        r#"{shell.command: {glob: "git diff *"}}"#,
        &a
    ));
    assert!(when_matches(r#"{shell.command: {glob: "git diff*"}}"#, &a));
}

#[test]
fn exists_tests_for_a_non_null_value() {
    table(
        &rich(),
        &[
            ("{http.method: {exists: true}}", true),
            ("{http.method: {exists: false}}", false),
            ("{http.query: {exists: true}}", false),
            ("{http.query: {exists: false}}", true),
            ("{k8s.namespace: {exists: false}}", true),
            ("{slack.nothing: {exists: true}}", false),
            ("{slack.nothing: {exists: false}}", true),
            ("{description: {exists: false}}", true),
            ("{tags: {exists: true}}", true),
        ],
    );
}

#[test]
fn combinators_nest_at_any_depth_and_mix_with_implicit_and() {
    let sandbox = action(json!({
        "type": "http.request",
        "facets": {"http": {"method": "PATCH", "url": "https://api.github.com/sandbox/x"}}
    }));
    // The seed's example.
    let seed = r#"{any: [{http.method: DELETE}, {http.method: PATCH}], not: {http.url: {contains: "/sandbox/"}}}"#;
    assert!(when_matches(seed, &rich()));
    assert!(!when_matches(seed, &sandbox));
    table(
        &rich(),
        &[
            // implicit AND
            (
                r#"{http.method: DELETE, http.url: {contains: "/repos/"}}"#,
                true,
            ),
            (
                r#"{http.method: DELETE, http.url: {contains: "/gists/"}}"#,
                false,
            ),
            ("{all: [{http.method: DELETE}, {primary: http}]}", true),
            ("{all: [{http.method: DELETE}, {primary: sql}]}", false),
            ("{any: [{http.method: GET}, {primary: sql}]}", false),
            ("{any: [{http.method: GET}, {primary: http}]}", true),
            ("{not: {http.method: GET}}", true),
            ("{not: {http.method: DELETE}}", false),
            ("{not: {not: {http.method: DELETE}}}", true),
            // depth, mixed with implicit AND at each level
            (
                "{all: [{any: [{not: {http.method: GET}}, {tags: {in: [x]}}], primary: http}], verb: DELETE}",
                true,
            ),
            (
                "{all: [{any: [{not: {http.method: DELETE}}, {tags: {in: [x]}}], primary: http}], verb: DELETE}",
                false,
            ),
            (
                "{any: [{all: [{tags: {contains: prod}}, {not: {sensitivity: read}}]}]}",
                true,
            ),
        ],
    );
}

#[test]
fn facets_prefix_and_top_level_fields() {
    table(
        &rich(),
        &[
            ("{facets.http.method: DELETE}", true),
            ("{facets.http.method: GET}", false),
            ("{facets.slack.channel: \"#ops\"}", true),
            // a plugin facet without the prefix
            ("{slack.channel: \"#ops\"}", true),
            ("{type: http.request}", true),
            ("{type: sql.query}", false),
            ("{verb: DELETE}", true),
            ("{sensitivity: destructive}", true),
            ("{sensitivity: read}", false),
            ("{primary: http}", true),
            ("{tags: {contains: github}}", true),
            (r#"{summary: {glob: "DELETE *"}}"#, true),
        ],
    );
}

#[test]
fn numeric_comparisons() {
    table(
        &rich(),
        &[
            ("{llm.cost: {gt: 0.10}}", true),
            ("{llm.cost: {gt: 0.25}}", false),
            ("{llm.cost: {gte: 0.25}}", true),
            ("{llm.tokens: {lt: 2000}}", true),
            ("{llm.tokens: {lt: 1200}}", false),
            ("{llm.tokens: {lte: 1200}}", true),
            ("{llm.tokens: {gt: 1199.5}}", true),
            ("{http.port: {gte: 443}}", true),
            // several operators in one mapping all hold
            ("{llm.tokens: {gte: 1000, lt: 2000}}", true),
            ("{llm.tokens: {gte: 1000, lt: 1100}}", false),
            // not numbers
            ("{http.method: {gt: 0}}", false),
            ("{deploy.replicas: {lt: 10}}", false),
        ],
    );
}

fn fs(kind: &str, path: &str) -> Action {
    action(json!({"type": kind, "facets": {"fs": {"path": path}}}))
}

#[test]
fn path_is_a_gitignore_style_glob_relative_to_the_policy_file() {
    let cases: &[(&str, &str, bool)] = &[
        ("src/**", "/p/src/main.rs", true),
        ("src/**", "/p/src/a/b/c.rs", true),
        ("src/*", "/p/src/main.rs", true),
        // `*` does not cross directories
        ("src/*", "/p/src/a/b.rs", false),
        ("**/*.rs", "/p/src/a/b.rs", true),
        // a bare name matches at any depth below the policy's directory
        ("*.pem", "/p/certs/x.pem", true),
        ("*.pem", "/elsewhere/x.pem", false),
        ("./src/main.rs", "/p/src/main.rs", true),
        ("./src/main.rs", "/p/lib/src/main.rs", false),
        ("~/.ssh/*", "/home/u/.ssh/id_rsa", true),
        ("~/.ssh/*", "/p/.ssh/id_rsa", false),
        ("/etc/**", "/etc/passwd", true),
        ("/etc/*", "/etc/ssl/certs/x", false),
        // a trailing slash means everything below
        ("secrets/", "/p/secrets/a/b", true),
        // relative to the policy's directory, not the action's
        ("src/**", "/q/src/main.rs", false),
        // fs.path is made absolute and normalized by Action::normalize
        ("src/main.rs", "src/../src/./main.rs", true),
    ];
    for (pattern, path, want) in cases {
        let when = format!(
            "{{fs.path: {{path: {}}}}}",
            serde_json::to_string(pattern).unwrap()
        );
        let got = when_matches(&when, &fs("fs.write", path));
        assert_eq!(got, *want, "path `{pattern}` vs {path}");
    }

    // Relative to the file's directory: the same rule in /q/aileron.yaml.
    let text =
        "version: 1\ndefault: allow\ndeny:\n  - {id: probe, when: {fs.path: {path: \"src/**\"}}}\n";
    let p = compile(&[source("/q/aileron.yaml", text, Layer::Project, "/q")]);
    assert_eq!(
        decide(&p, &fs("fs.write", "/q/src/x.rs")).decision,
        Decision::Deny
    );
    assert_eq!(
        decide(&p, &fs("fs.write", "/p/src/x.rs")).decision,
        Decision::Allow
    );

    // `path` also reads lists of paths (a shell command's writes).
    let mut a = shell("cp a b");
    a.facets["shell"]["writes"] = json!(["/tmp/b", "/p/src/b"]);
    assert!(when_matches("{shell.writes: {path: \"src/**\"}}", &a));
    assert!(!when_matches("{shell.writes: {path: \"lib/**\"}}", &a));
}

fn at(ts: &str) -> Action {
    let mut a = http("POST", "https://api.example/x");
    a.timestamp = ts.parse().ok();
    a
}

#[test]
fn time_windows_use_the_actions_timestamp_in_a_named_zone() {
    let office = r#"{timestamp: {time: {days: [mon, tue, wed, thu, fri], from: "09:00", to: "17:00", tz: "Europe/Paris"}}}"#;
    let night = r#"{timestamp: {time: {from: "22:00", to: "06:00"}}}"#;
    let weekend = "{timestamp: {time: {days: [sat, sun]}}}";
    let new_york = r#"{timestamp: {time: {from: "09:00", to: "17:00", tz: "America/New_York"}}}"#;
    let cases: &[(&str, &str, bool)] = &[
        // Monday 12:00 UTC = 13:00 in Paris
        (office, "2026-01-05T12:00:00Z", true),
        // Monday 07:30 UTC = 08:30 in Paris: too early
        (office, "2026-01-05T07:30:00Z", false),
        // Monday 08:00 UTC = 09:00 in Paris: `from` is inclusive
        (office, "2026-01-05T08:00:00Z", true),
        // Monday 16:00 UTC = 17:00 in Paris: `to` is exclusive
        (office, "2026-01-05T16:00:00Z", false),
        // Saturday
        (office, "2026-01-10T12:00:00Z", false),
        // Sunday 23:30 UTC is already Monday 00:30 in Paris, but outside hours
        (office, "2026-01-11T23:30:00Z", false),
        // same instant written with an offset
        (office, "2026-01-05T14:00:00+02:00", true),
        // a window past midnight (UTC by default)
        (night, "2026-01-05T23:30:00Z", true),
        (night, "2026-01-06T05:59:00Z", true),
        (night, "2026-01-05T12:00:00Z", false),
        (weekend, "2026-01-10T12:00:00Z", true),
        (weekend, "2026-01-05T12:00:00Z", false),
        // 12:00 UTC in January is 07:00 in New York
        (new_york, "2026-01-05T12:00:00Z", false),
        (new_york, "2026-01-05T15:00:00Z", true),
        // no timestamp (one that does not parse is refused when read): no match
        (office, "yesterday", false),
    ];
    for (when, ts, want) in cases {
        assert_eq!(when_matches(when, &at(ts)), *want, "{when} at {ts}");
    }
}

/// Other operators read the timestamp as RFC 3339 text in UTC, the form
/// adapters write; an equality is found through the index too.
#[test]
fn other_operators_read_the_timestamp_as_its_text() {
    let a = at("2026-01-05T13:00:00+01:00");
    table(
        &a,
        &[
            (
                "{type: http.request, timestamp: \"2026-01-05T12:00:00Z\"}",
                true,
            ),
            (
                "{type: http.request, timestamp: \"2026-01-05T13:00:00Z\"}",
                false,
            ),
            ("{timestamp: {in: [\"2026-01-05T12:00:00Z\"]}}", true),
            ("{timestamp: {pattern: \"^2026-01-05T12:\"}}", true),
            ("{timestamp: {glob: \"2026-01-05T*\"}}", true),
            ("{timestamp: {contains: \"01-05\"}}", true),
            ("{timestamp: {notContains: \"01-05\"}}", false),
            ("{timestamp: {exists: true}}", true),
        ],
    );
    table(
        &at(""),
        &[
            ("{timestamp: {exists: false}}", true),
            ("{timestamp: {notContains: \"01-05\"}}", true),
        ],
    );
}

fn post_at(ts: &str) -> Action {
    at(ts)
}

#[test]
fn rate_counts_matching_actions_of_the_session_history() {
    let when = "{type: http.request, http.method: POST, rate: {more_than: 3, seconds: 60}}";
    let now = post_at("2026-01-05T12:01:00Z");
    let recent = |secs_before: &[i64]| -> Vec<Action> {
        secs_before
            .iter()
            .map(|s| {
                let t = jiff::Timestamp::from_second(1_767_614_460 - s).unwrap();
                post_at(&t.to_string())
            })
            .collect()
    };
    assert_eq!(
        jiff::Timestamp::from_second(1_767_614_460)
            .unwrap()
            .to_string(),
        "2026-01-05T12:01:00Z"
    );
    let cases: &[(&[i64], bool)] = &[
        (&[], false),
        (&[10, 20], false),
        // three earlier + this one = four, more than three
        (&[10, 20, 30], true),
        (&[0, 59, 60], true),
        // outside the window
        (&[10, 20, 61], false),
        (&[10, 20, 3600], false),
    ];
    for (before, want) in cases {
        let history = recent(before);
        let state = State {
            approvals: &[],
            history: &history,
        };
        assert_eq!(
            when_matches_in(when, &now, &state),
            *want,
            "earlier: {before:?}"
        );
    }
    // Only actions matching the rule's other conditions count.
    let mut history = recent(&[10, 20]);
    history.push(http("GET", "https://api.example/x"));
    history[2].timestamp = "2026-01-05T12:00:50Z".parse().ok();
    let state = State {
        approvals: &[],
        history: &history,
    };
    assert!(!when_matches_in(when, &now, &state));
}

// ---------------------------------------------------------------- evaluation order

/// A session's (plugin, profile, integration).
type SessionScope = (
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
);

#[test]
fn priority_then_specificity_then_last_match_wins() {
    // Each case: rules in file order, the session, the expected winner.
    struct Case {
        rules: &'static str,
        session: SessionScope,
        winner: &'static str,
    }
    let cases = [
        // equal priority: integration (4) beats global (0)
        Case {
            rules: "allow:\n  - {id: global, priority: 100, when: {type: http.request}}\nask:\n  - {id: integ, priority: 100, scope: {integration: i1}, when: {type: http.request}}\n",
            session: (None, None, Some("i1")),
            winner: "integ",
        },
        // integration (4) beats plugin + profile (3)
        Case {
            rules: "allow:\n  - {id: integ, priority: 100, scope: {integration: i1}, when: {type: http.request}}\nask:\n  - {id: plug-prof, priority: 100, scope: {plugin: gh, profile: prod}, when: {type: http.request}}\n",
            session: (Some("gh"), Some("prod"), Some("i1")),
            winner: "integ",
        },
        // profile (2) beats plugin (1), whatever the order in the file
        Case {
            rules: "allow:\n  - {id: prof, priority: 100, scope: {profile: prod}, when: {type: http.request}}\nask:\n  - {id: plug, priority: 100, scope: {plugin: gh}, when: {type: http.request}}\n",
            session: (Some("gh"), Some("prod"), None),
            winner: "prof",
        },
        Case {
            rules: "ask:\n  - {id: plug, priority: 100, scope: {plugin: gh}, when: {type: http.request}}\nallow:\n  - {id: glob, priority: 100, when: {type: http.request}}\n",
            session: (Some("gh"), None, None),
            winner: "plug",
        },
        // a high-priority global rule beats a low-priority integration rule
        Case {
            rules: "allow:\n  - {id: global, priority: 200, when: {type: http.request}}\nask:\n  - {id: integ, priority: 100, scope: {integration: i1}, when: {type: http.request}}\n",
            session: (None, None, Some("i1")),
            winner: "global",
        },
        // equal priority and scope: the later rule wins
        Case {
            rules: "ask:\n  - {id: first, priority: 100, when: {type: http.request}}\n  - {id: second, priority: 100, when: {http.method: POST}}\n",
            session: (None, None, None),
            winner: "second",
        },
        Case {
            rules: "ask:\n  - {id: first, priority: 100, when: {http.method: POST}}\n  - {id: second, priority: 100, when: {type: http.request}}\n",
            session: (None, None, None),
            winner: "second",
        },
        // across buckets, too
        Case {
            rules: "ask:\n  - {id: asks, priority: 100, when: {type: http.request}}\nallow:\n  - {id: allows, priority: 100, when: {type: http.request}}\n",
            session: (None, None, None),
            winner: "allows",
        },
        Case {
            rules: "allow:\n  - {id: allows, priority: 100, when: {type: http.request}}\nask:\n  - {id: asks, priority: 100, when: {type: http.request}}\n",
            session: (None, None, None),
            winner: "asks",
        },
    ];
    for c in cases {
        let p = load(&format!("version: 1\n{}", c.rules));
        let (plugin, profile, integration) = c.session;
        let a = in_session(http("POST", "https://x/y"), plugin, profile, integration);
        let v = decide(&p, &a);
        assert_eq!(v.rule.as_deref(), Some(c.winner), "{}\n{v:?}", c.rules);
        let e = p.explain(&a, &State::default());
        assert_eq!(e.verdict, v, "explain agrees with evaluate");
    }
}

#[test]
fn the_last_match_wins_across_layers_too() {
    let team = "version: 1\nask:\n  - {id: team:http, when: {type: http.request}}\n";
    let proj = "version: 1\nprofiles: [./team.yaml]\nask:\n  - {id: proj:http, when: {type: http.request}}\n";
    let p = compile(&with_profiles(
        project(proj),
        &[profile_file("/p/team.yaml", team)],
    ));
    let e = p.explain(&http("GET", "https://x/"), &State::default());
    assert_eq!(e.verdict.rule.as_deref(), Some("proj:http"));
    let ids: Vec<&str> = e.matched.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["proj:http", "team:http"]);
    assert!(e.why.contains("last match wins"), "{}", e.why);
}

#[test]
fn scope_filters_by_session_and_all_dimensions_must_match() {
    let p = load(
        r#"version: 1
default: allow
deny:
  - id: gh-prod
    scope: {plugin: github, profile: prod}
    when: {type: http.request}
"#,
    );
    let cases: &[(SessionScope, &str)] = &[
        ((Some("github"), Some("prod"), None), "deny"),
        ((Some("github"), Some("prod"), Some("any")), "deny"),
        ((Some("github"), Some("dev"), None), "allow"),
        ((Some("gitlab"), Some("prod"), None), "allow"),
        ((Some("github"), None, None), "allow"),
        ((None, None, None), "allow"),
    ];
    for ((plugin, profile, integration), want) in cases {
        let a = in_session(
            http("DELETE", "https://x/"),
            *plugin,
            *profile,
            *integration,
        );
        assert_eq!(
            decide(&p, &a).decision.as_str(),
            *want,
            "{plugin:?} {profile:?} {integration:?}"
        );
    }
}

#[test]
fn default_deny_writes_allows_reads_and_denies_the_rest() {
    let p = load("version: 1\ndefault: deny_writes\n");
    let cases: Vec<(Action, &str)> = vec![
        (fs("fs.read", "/p/a"), "allow"),
        (fs("fs.list", "/p"), "allow"),
        (fs("fs.write", "/p/a"), "deny"),
        (http("GET", "https://x/"), "allow"),
        (http("HEAD", "https://x/"), "allow"),
        (http("POST", "https://x/"), "deny"),
        (sql("SELECT", None), "allow"),
        (sql("DELETE", None), "deny"),
        (sql("DROP", None), "deny"),
        (shell_read("ls"), "allow"),
        (shell("rm x"), "deny"),
        (
            action(json!({"type": "mcp.call", "facets": {"mcp": {"server": "s", "tool": "t"}}})),
            "deny",
        ),
    ];
    for (a, want) in &cases {
        let v = decide(&p, a);
        assert_eq!(v.decision.as_str(), *want, "{}: {v:?}", a.summary);
        assert_eq!(v.source, VerdictSource::Default);
        assert_eq!(v.rule, None);
        if *want == "deny" {
            assert_eq!(v.reason, "default-deny for non-read actions");
        }
    }
    // An explicit sensitivity wins over the guess from the type.
    let mut a = http("POST", "https://x/graphql");
    a.sensitivity = Some(Sensitivity::Read);
    assert_eq!(decide(&p, &a).decision, Decision::Allow);
}

#[test]
fn other_defaults() {
    for (default, want) in [("allow", "allow"), ("deny", "deny"), ("ask", "ask")] {
        let p = load(&format!("version: 1\ndefault: {default}\n"));
        let v = decide(&p, &http("GET", "https://x/"));
        assert_eq!(
            (v.decision.as_str(), v.source, v.rule.as_deref()),
            (want, VerdictSource::Default, None)
        );
        assert!(
            v.reason.contains(&format!("default: {default}")),
            "{}",
            v.reason
        );
    }
}

#[test]
fn disabled_rules_never_fire() {
    let p = load(
        r#"version: 1
default: allow
deny:
  - {id: switched-off, enabled: false, when: {type: http.request}}
  - {id: switched-on, enabled: true, when: {http.method: DELETE}}
"#,
    );
    assert_eq!(
        outcome(&decide(&p, &http("GET", "https://x/"))),
        ("allow", None)
    );
    assert_eq!(
        outcome(&decide(&p, &http("DELETE", "https://x/"))),
        ("deny", Some("switched-on"))
    );
    assert!(p.rule("switched-off").is_none());
    let (_, why) = p
        .inactive()
        .iter()
        .find(|(r, _)| r.id == "switched-off")
        .unwrap();
    assert!(why.contains("disabled"), "{why}");
    let e = p.explain(&http("GET", "https://x/"), &State::default());
    assert!(e.matched.is_empty(), "{:?}", e.matched);
}

#[test]
fn a_higher_layer_cannot_outrank_a_lower_layer_deny() {
    let team = "version: 1\ndeny:\n  - {id: team:no-delete, when: {http.method: DELETE}}\n";
    let proj = "version: 1\nprofiles: [./team.yaml]\nallow:\n  - {id: proj:all-http, priority: 5000, when: {type: http.request}}\n";
    let p = compile(&with_profiles(
        project(proj),
        &[profile_file("/p/team.yaml", team)],
    ));
    assert_eq!(
        outcome(&decide(&p, &http("DELETE", "https://x/"))),
        ("deny", Some("team:no-delete"))
    );
    assert_eq!(
        outcome(&decide(&p, &http("GET", "https://x/"))),
        ("allow", Some("proj:all-http"))
    );
    let e = p.explain(&http("DELETE", "https://x/"), &State::default());
    assert_eq!(e.verdict.rule.as_deref(), Some("team:no-delete"));
    assert!(e.why.contains("lower layer"), "{}", e.why);

    // The same through database rules added with `with_rules` (layer 7).
    let p = load("version: 1\ndeny:\n  - {id: no-delete, when: {http.method: DELETE}}\n");
    let db = db_rule("id: db-allow\ndecision: allow\npriority: 9999\nwhen: {type: http.request}\n");
    let p2 = p.with_rules(vec![db]).unwrap();
    assert_eq!(
        outcome(&decide(&p2, &http("DELETE", "https://x/"))),
        ("deny", Some("no-delete"))
    );
    assert_eq!(
        outcome(&decide(&p2, &http("GET", "https://x/"))),
        ("allow", Some("db-allow"))
    );

    // A built-in structural deny cannot be outranked either.
    let p = load(
        "version: 1\nallow:\n  - {id: all-shell, priority: 99999999, when: {type: shell.exec}}\n",
    );
    let a = shell_with("rm -rf /", DIR, Sensitivity::Destructive, &["rm-root"]);
    let v = decide(&p, &a);
    assert_eq!(
        (outcome(&v), v.source),
        (("deny", Some("builtin:rm-root")), VerdictSource::Builtin)
    );
}

#[test]
fn a_same_layer_allow_with_higher_priority_beats_a_deny() {
    // The invariant is about lower layers; inside one file priority decides.
    let p = load(
        "version: 1\ndeny:\n  - {id: d, when: {type: http.request}}\nallow:\n  - {id: a, priority: 300, when: {http.method: GET}}\n",
    );
    assert_eq!(
        outcome(&decide(&p, &http("GET", "https://x/"))),
        ("allow", Some("a"))
    );
    assert_eq!(
        outcome(&decide(&p, &http("PUT", "https://x/"))),
        ("deny", Some("d"))
    );
}

fn db_rule(text: &str) -> Rule {
    aileron_engine::parse_rule(&source("<database>/rule", text, Layer::Database, DIR), HOME)
        .unwrap_or_else(|d| panic!("{}", show(&d)))
}

#[test]
fn database_rules_override_by_id_like_files() {
    let p = load(
        "version: 1\nask:\n  - {id: ask-http, when: {type: http.request}}\ndeny:\n  - {id: no-delete, when: {http.method: DELETE}}\n",
    );
    let p2 = p
        .with_rules(vec![db_rule(
            "decision: allow\noverride: ask-http\nid: db-allow-get\nwhen: {http.method: GET}\n",
        )])
        .unwrap();
    assert_eq!(
        outcome(&decide(&p2, &http("GET", "https://x/"))),
        ("allow", Some("db-allow-get"))
    );
    assert_eq!(
        outcome(&decide(&p2, &http("POST", "https://x/"))),
        ("ask", None)
    );
    let err = p
        .with_rules(vec![db_rule(
            "decision: allow\noverride: no-delete\nid: x\nwhen: {http.method: GET}\n",
        )])
        .unwrap_err();
    assert!(
        err[0].message.contains("deny rules cannot be overridden"),
        "{}",
        show(&err)
    );
}

fn command_matcher(glob: &str) -> Matcher {
    Matcher::All(vec![
        Matcher::Field(FieldPath::Type, Cond::Equals("shell.exec".into())),
        Matcher::Field(
            FieldPath::Facet(vec!["shell".into(), "command".into()]),
            Cond::Glob(Glob::command(glob)),
        ),
    ])
}

#[test]
fn session_approvals_allow_but_never_beat_a_deny() {
    let p = load(
        r#"version: 1
ask:
  - {id: ask-push, command: "git push *"}
deny:
  - {id: no-push-main, command: "git push origin main"}
"#,
    );
    let approvals = vec![Rule::session_approval(
        "s-1",
        "git push *",
        command_matcher("git push *"),
        100,
        0,
    )];
    let state = State {
        approvals: &approvals,
        history: &[],
    };
    let v = p.evaluate(&shell("git push origin feature"), &state);
    assert_eq!(
        (v.decision, v.source, v.rule.as_deref()),
        (Decision::Allow, VerdictSource::Session, Some("s-1"))
    );
    let v = p.evaluate(&shell("git push origin main"), &state);
    assert_eq!(outcome(&v), ("deny", Some("no-push-main")));
    // Without the approval, the ask stands.
    assert_eq!(
        outcome(&decide(&p, &shell("git push origin feature"))),
        ("ask", Some("ask-push"))
    );

    // Even at a priority above the deny's.
    let approvals = vec![Rule::session_approval(
        "s-2",
        "git push *",
        command_matcher("git push *"),
        100_000,
        0,
    )];
    let state = State {
        approvals: &approvals,
        history: &[],
    };
    assert_eq!(
        outcome(&p.evaluate(&shell("git push origin main"), &state)),
        ("deny", Some("no-push-main"))
    );

    // Nor a built-in structural deny.
    let approvals = vec![Rule::session_approval(
        "s-3",
        "rm *",
        command_matcher("rm *"),
        1_000_000_000,
        0,
    )];
    let state = State {
        approvals: &approvals,
        history: &[],
    };
    let a = shell_with("rm -rf /", DIR, Sensitivity::Destructive, &["rm-root"]);
    assert_eq!(
        outcome(&p.evaluate(&a, &state)),
        ("deny", Some("builtin:rm-root"))
    );
}

#[test]
fn judge_bucket_parses_and_decides_judge_at_120() {
    let p = load(
        r#"version: 1
ask:
  - {id: ask-curl, command: "curl *"}
judge:
  - id: review-curl
    command: "curl *"
    model: gpt-4o-mini
    prompt: "Is this download safe?"
    cache_ttl: 600
    fail_closed: false
  - {id: review-wget, command: "wget *"}
deny:
  - {id: no-curl-evil, command: "curl evil*"}
"#,
    );
    let r = p.rule("review-curl").unwrap();
    assert_eq!((r.decision, r.priority), (Decision::Judge, 120));
    let j = r.judge.as_ref().unwrap();
    assert_eq!(j.model.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(j.prompt.as_deref(), Some("Is this download safe?"));
    assert_eq!(j.cache_ttl, Some(600));
    assert!(!j.fail_closed);
    // fail_closed defaults to true
    assert!(
        p.rule("review-wget")
            .unwrap()
            .judge
            .as_ref()
            .unwrap()
            .fail_closed
    );

    let v = decide(&p, &shell("curl https://x"));
    assert_eq!(outcome(&v), ("judge", Some("review-curl")));
    assert_eq!(v.approver.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(
        outcome(&decide(&p, &shell("curl evil.sh"))),
        ("deny", Some("no-curl-evil"))
    );
    assert_eq!(
        outcome(&decide(&p, &shell("wget x"))),
        ("judge", Some("review-wget"))
    );
}

#[test]
fn disabled_tools_are_those_a_blanket_deny_makes_useless() {
    let p = load(
        r#"version: 1
deny:
  - {id: no-bash, when: {type: tool.call, tool.name: Bash}}
  - {id: no-web, when: {tool.name: {in: [WebFetch, WebSearch]}}}
  - {id: no-mcp-gh, when: {type: tool.call, tool.name: {glob: "mcp__github__*"}}}
  - {id: no-lock-edits, when: {type: tool.call, tool.name: Edit, tool.input.path: {glob: "*.lock"}}}
  - {id: scoped, scope: {plugin: x}, when: {type: tool.call, tool.name: Write}}
ask:
  - {id: ask-read, when: {type: tool.call, tool.name: Read}}
"#,
    );
    let tools = [
        "Bash",
        "WebFetch",
        "WebSearch",
        "mcp__github__create_issue",
        "Edit",
        "Write",
        "Read",
        "Glob",
    ];
    assert_eq!(
        p.disabled_tools(&tools),
        ["Bash", "WebFetch", "WebSearch", "mcp__github__create_issue"]
    );
    // And such a tool call is indeed denied, whatever its input.
    let call = action(
        json!({"type": "tool.call", "facets": {"tool": {"name": "Bash", "input": {"command": "ls"}}}}),
    );
    assert_eq!(outcome(&decide(&p, &call)), ("deny", Some("no-bash")));
}

#[test]
fn an_mcp_tool_is_disabled_when_every_call_of_it_is_denied_whatever_its_arguments() {
    let p = load(
        r#"version: 1
default: allow
deny:
  - {id: no-gh-delete, when: {type: mcp.call, mcp.server: github, mcp.tool: {glob: "delete_*"}}}
  - {id: no-db, when: {mcp.server: db}}
  - {id: no-destructive, when: {type: mcp.call, mcp.annotations.destructiveHint: true}}
  - {id: no-secret-files, when: {type: mcp.call, mcp.tool: read_file, mcp.arguments.path: {glob: "*.pem"}}}
  - {id: scoped, scope: {plugin: x}, when: {type: mcp.call, mcp.tool: scoped}}
  - {id: not-reads, when: {type: mcp.call, mcp.server: fs, not: {mcp.tool: {pattern: "^read_"}}}}
  - {id: low-write, priority: 10, when: {type: mcp.call, mcp.tool: write_issue}}
allow:
  - {id: write-own-issues, priority: 20, when: {type: mcp.call, mcp.tool: write_issue, mcp.arguments.repo: mine}}
"#,
    );
    let call = |server: &str, tool: &str, annotations: Value| {
        let mut a = action(json!({
            "type": "mcp.call",
            "facets": {"mcp": {"server": server, "tool": tool, "annotations": annotations}}
        }));
        a.verb = tool.to_owned();
        a
    };
    // What every call of one tool shares (the MCP gateway's list).
    let fixed: Vec<&str> =
        "type primary verb sensitivity mcp.server mcp.tool mcp.annotations shell fs"
            .split(' ')
            .collect();
    let disabled = |server: &str, tool: &str, annotations: Value| {
        p.denies_all_like(&call(server, tool, annotations), &fixed)
    };
    assert!(disabled("github", "delete_repo", json!({})));
    assert!(!disabled("github", "create_issue", json!({})));
    assert!(disabled("db", "query", json!({})));
    assert!(disabled("x", "drop", json!({"destructiveHint": true})));
    assert!(!disabled("x", "drop", json!({"destructiveHint": false})));
    // Denied for some arguments only, or for some sessions only: listed.
    assert!(!disabled("fs", "read_file", json!({})));
    assert!(!disabled("x", "read_file", json!({})));
    assert!(!disabled("x", "scoped", json!({})));
    assert!(disabled("fs", "write_file", json!({})));
    // An allow of the deny's own layer ranked before it may decide a call.
    assert!(!disabled("x", "write_issue", json!({})));
    // And such a call is denied, whatever its arguments.
    let mut delete = call("github", "delete_repo", json!({}));
    delete.facets.insert(
        "mcp".into(),
        json!({"server": "github", "tool": "delete_repo", "arguments": {"x": 1}}),
    );
    assert_eq!(
        outcome(&decide(&p, &delete)),
        ("deny", Some("no-gh-delete"))
    );
}

#[test]
fn builtin_dynamic_asks_are_priority_150_and_overridable_by_id() {
    let p = load("version: 1\ndefault: allow\n");
    let piped = shell_with("bash", DIR, Sensitivity::Mutate, &["pipe-to-shell"]);
    let v = decide(&p, &piped);
    assert_eq!(
        (outcome(&v), v.source),
        (
            ("ask", Some("builtin:pipe-to-shell")),
            VerdictSource::Builtin
        )
    );
    assert_eq!(p.rule("builtin:pipe-to-shell").unwrap().priority, 150);

    // An allow at 100 does not beat it; at 160 it does (it is an ask, not a deny).
    let p = load("version: 1\nallow:\n  - {id: bash-100, command: \"bash\", priority: 100}\n");
    assert_eq!(
        decide(&p, &piped).rule.as_deref(),
        Some("builtin:pipe-to-shell")
    );
    let p = load("version: 1\nallow:\n  - {id: bash-160, command: \"bash\", priority: 160}\n");
    assert_eq!(decide(&p, &piped).rule.as_deref(), Some("bash-160"));

    // Cancelled by id.
    let p = load("version: 1\ndefault: allow\nallow:\n  - {override: \"builtin:pipe-to-shell\"}\n");
    assert_eq!(outcome(&decide(&p, &piped)), ("allow", None));

    // A structural rule cannot be cancelled.
    let text = "version: 1\nallow:\n  - {override: \"builtin:rm-root\"}\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        pos(text, "\"builtin:rm-root\"", 0),
        &["cannot be overridden"],
    );
}

#[test]
fn doom_loop_actions_ask_by_default_and_follow_the_policy() {
    let doom = action(
        json!({"type": "agent.doom_loop", "facets": {"agent": {"tool": "Bash", "input": {"command": "ls"}, "count": 3}}}),
    );
    let v = decide(&load("version: 1\ndefault: allow\n"), &doom);
    assert_eq!(outcome(&v), ("ask", Some("builtin:doom-loop")));
    let p = load(
        "version: 1\ndeny:\n  - {id: stop-loops, when: {type: agent.doom_loop, agent.count: {gte: 3}}}\n",
    );
    assert_eq!(outcome(&decide(&p, &doom)), ("deny", Some("stop-loops")));
}

#[test]
fn rules_with_when_apply_to_any_action_type() {
    let p = load(
        "version: 1\ndefault: allow\ndeny:\n  - {id: no-prod-tag, when: {tags: {contains: prod}}}\n",
    );
    let mut a = shell("ls");
    a.tags = vec!["prod".into()];
    assert_eq!(decide(&p, &a).rule.as_deref(), Some("no-prod-tag"));
    assert_eq!(decide(&p, &rich()).rule.as_deref(), Some("no-prod-tag"));
    let mcp = action(
        json!({"type": "mcp.call", "tags": ["prod"], "facets": {"mcp": {"server": "gh", "tool": "x", "arguments": {}}}}),
    );
    assert_eq!(decide(&p, &mcp).rule.as_deref(), Some("no-prod-tag"));

    // ADR fields plus `when`: a shell rule narrowed by the dialect.
    let p = load(
        "version: 1\ndefault: deny\nallow:\n  - {id: read-cat, command: \"cat *\", when: {sensitivity: read}}\n",
    );
    assert_eq!(
        outcome(&decide(&p, &shell_read("cat a"))),
        ("allow", Some("read-cat"))
    );
    assert_eq!(outcome(&decide(&p, &shell("cat a"))), ("deny", None));
}

#[test]
fn mcp_arguments_are_reachable_below_the_facet() {
    let p = load(
        "version: 1\ndefault: allow\ndeny:\n  - {id: no-main, when: {mcp.tool: push, mcp.arguments.branch: main}}\n",
    );
    let call = |branch: &str| {
        action(
            json!({"type": "mcp.call", "facets": {"mcp": {"server": "git", "tool": "push", "arguments": {"branch": branch}}}}),
        )
    };
    assert_eq!(
        outcome(&decide(&p, &call("main"))),
        ("deny", Some("no-main"))
    );
    assert_eq!(outcome(&decide(&p, &call("dev"))), ("allow", None));
}

#[test]
fn explain_lists_every_matching_rule_in_order() {
    let p = load(EXAMPLE_2);
    let e = p.explain(
        &http("GET", "https://wiki.internal.example/p"),
        &State::default(),
    );
    assert_eq!(e.verdict.rule.as_deref(), Some("wiki-reads"));
    let ids: Vec<&str> = e.matched.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["wiki-reads", "human-approves-http"]);
    assert!(e.considered >= 2);
    assert!(e.why.contains("priority 200"), "{}", e.why);
    let json: Value = serde_json::to_value(&e).unwrap();
    assert_eq!(json["verdict"]["decision"], "allow");
    assert_eq!(json["verdict"]["source"], "static");

    let e = p.explain(&sql("DROP", None), &State::default());
    assert!(e.matched.is_empty());
    assert!(e.why.contains("default"), "{}", e.why);
}

#[test]
fn contains_with_a_non_string_needle_on_a_string_field() {
    // JS-like `"...".includes(999)` is false; the engine lower-cases only
    // string needles and tests the empty string for others.
    table(
        &rich(),
        &[
            ("{http.url: {contains: 999}}", false),
            ("{summary: {contains: true}}", false),
            ("{http.url: {notContains: 999}}", true),
        ],
    );
}

#[test]
fn path_patterns_with_dot_dot_are_relative_to_the_policy_file() {
    let text = "version: 1\ndefault: allow\ndeny:\n  - {id: probe, when: {fs.path: {path: \"../shared/**\"}}}\n";
    let p = compile(&[source(
        "/p/sub/aileron.yaml",
        text,
        Layer::Project,
        "/p/sub",
    )]);
    assert_eq!(
        outcome(&decide(&p, &fs("fs.write", "/p/shared/x"))),
        ("deny", Some("probe"))
    );
    assert_eq!(
        outcome(&decide(&p, &fs("fs.write", "/p/sub/x"))),
        ("allow", None)
    );
}
