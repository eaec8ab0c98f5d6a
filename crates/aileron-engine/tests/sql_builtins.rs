//! What the database gateway needs from the engine: the `sql.database` and
//! `sql.user` fields, the built-in asks for SQL the analysis cannot read
//! (`builtin:sql-unparsable`, structural) or see through
//! (`builtin:sql-dynamic`, which a policy may override by id), and
//! `settings.gateways` (validated with its place, merged last-writer-wins).

mod common;

use aileron_engine::{Action, ActionType, Decision, Gateway, Sensitivity, VerdictSource};
use common::*;
use serde_json::json;

fn sql(verb: &str, tags: &[&str]) -> Action {
    let mut a = Action {
        kind: ActionType::SqlQuery,
        verb: verb.into(),
        sensitivity: Some(Sensitivity::Mutate),
        primary: "sql".into(),
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        ..Action::default()
    };
    a.facets.insert(
        "sql".into(),
        json!({"verb": verb, "tables": ["users"], "text": "x", "database": "app", "user": "agent"}),
    );
    a
}

#[test]
fn sql_the_analysis_cannot_read_or_see_through_is_asked() {
    let p = load("version: 1\ndefault: allow\n");
    for (tag, rule) in [
        ("unparsable", "builtin:sql-unparsable"),
        ("dynamic", "builtin:sql-dynamic"),
    ] {
        let v = decide(&p, &sql("DO", &[tag]));
        assert_eq!(
            (v.decision, v.source, v.rule.as_deref()),
            (Decision::Ask, VerdictSource::Builtin, Some(rule)),
            "{tag}"
        );
    }
    assert_eq!(decide(&p, &sql("SELECT", &[])).decision, Decision::Allow);
    // A shell command tagged `dynamic` is none of their business.
    let v = decide(
        &p,
        &shell_with("x", "/p", Sensitivity::Mutate, &["dynamic"]),
    );
    assert_ne!(v.rule.as_deref(), Some("builtin:sql-dynamic"));
}

#[test]
fn dynamic_sql_may_be_allowed_by_id_unparsable_sql_may_not() {
    let p = load("version: 1\ndefault: allow\nallow:\n  - {override: \"builtin:sql-dynamic\"}\n");
    assert_eq!(
        decide(&p, &sql("DO", &["dynamic"])).decision,
        Decision::Allow
    );
    let d = load_err1("version: 1\nallow:\n  - {override: \"builtin:sql-unparsable\"}\n");
    assert!(d.message.contains("cannot be overridden"), "{d}");
    // A deny still beats the ask.
    let p = load(
        "version: 1\ndefault: allow\ndeny:\n  - {id: no-do, when: {type: sql.query, sql.verb: DO}}\n",
    );
    let v = decide(&p, &sql("DO", &["dynamic"]));
    assert_eq!(
        (v.decision, v.rule.as_deref()),
        (Decision::Deny, Some("no-do"))
    );
}

#[test]
fn rules_read_the_database_and_the_user() {
    let p = load(
        "version: 1
default: allow
deny:
  - id: prod-writes
    when: {type: sql.query, sql.database: app, sql.user: agent, sql.tables: {in: [users]}}
",
    );
    let v = decide(&p, &sql("UPDATE", &[]));
    assert_eq!(
        (v.decision, v.rule.as_deref()),
        (Decision::Deny, Some("prod-writes"))
    );
    let d = load_err1("version: 1\ndeny:\n  - {when: {sql.databse: app}}\n");
    assert!(d.message.contains("databse"), "{d}");
}

#[test]
fn gateways_are_read_and_the_later_layer_wins() {
    let p = load(
        "version: 1
settings:
  gateways:
    - postgres: {upstream: \"postgres://127.0.0.1:5432\"}
    - postgres: {upstream: \"postgresql://db.internal:6543\", listen: \"127.0.0.1:6432\"}
",
    );
    assert_eq!(
        p.settings.gateways,
        Some(vec![
            Gateway::Postgres {
                upstream: "postgres://127.0.0.1:5432".into(),
                listen: None
            },
            Gateway::Postgres {
                upstream: "postgresql://db.internal:6543".into(),
                listen: Some("127.0.0.1:6432".into())
            },
        ])
    );
    let p = compile(&[
        project(
            "version: 1\nsettings:\n  gateways: [{postgres: {upstream: \"postgres://a:1\"}}]\n",
        ),
        user("version: 1\nsettings:\n  gateways: []\n"),
    ]);
    assert_eq!(p.settings.gateways, Some(vec![]));
    assert_eq!(load("version: 1\n").settings.gateways, None);
}

#[test]
fn a_bad_gateway_is_a_load_error_with_its_place() {
    for (text, at, words) in [
        (
            "version: 1\nsettings:\n  gateways: {postgres: {upstream: \"postgres://a:1\"}}\n",
            "{postgres",
            &["`gateways` must be a list"][..],
        ),
        (
            "version: 1\nsettings:\n  gateways:\n    - mysql: {upstream: \"mysql://a\"}\n",
            "mysql:",
            &["unknown key `mysql`", "postgres"][..],
        ),
        (
            "version: 1\nsettings:\n  gateways:\n    - postgres: {listen: \"127.0.0.1:0\"}\n",
            "postgres:",
            &["needs `upstream"][..],
        ),
        (
            "version: 1\nsettings:\n  gateways:\n    - postgres: {upstream: \"http://a:1\"}\n",
            "\"http",
            &["invalid `upstream`", "postgres://HOST:PORT"][..],
        ),
        (
            "version: 1\nsettings:\n  gateways:\n    - postgres: {upstream: \"postgres://a:1\", listen: \"localhost\"}\n",
            "\"localhost",
            &["invalid `listen`", "IP:PORT"][..],
        ),
        (
            "version: 1\nsettings:\n  gateways:\n    - postgres: {upstream: \"postgres://a:1\", port: 1}\n",
            "port:",
            &["unknown key `port`"][..],
        ),
    ] {
        let d = load_err1(text);
        assert_diag(&d, FILE, pos(text, at, 0), words);
    }
}

#[test]
fn a_possible_call_or_a_hidden_write_is_asked_even_under_a_verb_rule() {
    // A rule allowing by verb alone meets `SELECT t.wipe FROM t` and
    // `SELECT setval(...)`: the built-ins ask first (priority 150).
    let p = load(
        "version: 1\ndefault: deny\nallow:\n  - {id: reads, when: {type: sql.query, sql.verb: SELECT}}\n",
    );
    for (tag, rule) in [
        ("field-call", "builtin:sql-field-call"),
        ("write-in-read", "builtin:sql-write-in-read"),
    ] {
        let v = decide(&p, &sql("SELECT", &[tag]));
        assert_eq!(
            (v.decision, v.source, v.rule.as_deref()),
            (Decision::Ask, VerdictSource::Builtin, Some(rule)),
            "{tag}"
        );
    }
    assert_eq!(decide(&p, &sql("SELECT", &[])).decision, Decision::Allow);
    // Each may be cancelled by id, the other staying.
    let p =
        load("version: 1\ndefault: allow\nallow:\n  - {override: \"builtin:sql-field-call\"}\n");
    assert_eq!(
        decide(&p, &sql("SELECT", &["field-call"])).decision,
        Decision::Allow
    );
    assert_eq!(
        decide(&p, &sql("SELECT", &["write-in-read"])).decision,
        Decision::Ask
    );
}

#[test]
fn qualified_columns_may_be_allowed_in_reads_above_the_built_in() {
    // Finer than the override: a rule above priority 150 for reads only.
    let p = load(
        "version: 1
default: deny
allow:
  - id: joins
    priority: 160
    when: {type: sql.query, sql.database: app, sensitivity: read, tags: {contains: field-call}}
",
    );
    let mut join = sql("SELECT", &["field-call"]);
    join.sensitivity = Some(Sensitivity::Read);
    let v = decide(&p, &join);
    assert_eq!(
        (v.decision, v.rule.as_deref()),
        (Decision::Allow, Some("joins"))
    );
    // A field call that also writes is still asked about.
    let mut writes = sql("SELECT", &["field-call", "write-in-read"]);
    writes.sensitivity = Some(Sensitivity::Write);
    assert_eq!(decide(&p, &writes).decision, Decision::Ask);
}
