//! What the egress proxy needs from the engine: `settings.proxy.inspect`
//! (validated, merged last-writer-wins) and `builtin:agent-model-api`, the
//! allowance of the launched agent's own model endpoint, which a policy's
//! ask or deny about web requests still beats.

mod common;

use common::*;
use serde_json::json;

#[test]
fn inspect_takes_all_or_host_globs_and_the_later_layer_wins() {
    let p = load("version: 1\nsettings:\n  proxy:\n    inspect: all\n");
    assert_eq!(p.settings.proxy_inspect, Some(vec!["*".to_owned()]));
    let p =
        load("version: 1\nsettings:\n  proxy:\n    inspect: [API.example.com, \"*.internal\"]\n");
    assert_eq!(
        p.settings.proxy_inspect,
        Some(vec!["api.example.com".to_owned(), "*.internal".to_owned()])
    );
    let p = compile(&[
        project("version: 1\nsettings:\n  proxy:\n    inspect: all\n"),
        user("version: 1\nsettings:\n  proxy:\n    inspect: [a.example]\n"),
    ]);
    assert_eq!(p.settings.proxy_inspect, Some(vec!["a.example".to_owned()]));
    assert_eq!(load("version: 1\n").settings.proxy_inspect, None);
}

#[test]
fn a_bad_inspect_value_is_a_load_error_with_its_place() {
    let text = "version: 1\nsettings:\n  proxy:\n    inspect: everything\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        pos(text, "everything", 0),
        &["invalid `inspect` value `everything`", "expected `all`"],
    );
    let text = "version: 1\nsettings:\n  proxy:\n    inspect: [\"https://a.example/x\"]\n";
    let d = load_err1(text);
    assert_diag(&d, FILE, pos(text, "\"https", 0), &["invalid host pattern"]);
    let text = "version: 1\nsettings:\n  proxy:\n    inspekt: all\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        pos(text, "inspekt", 0),
        &["unknown key `inspekt`"],
    );
}

fn model_call(tags: &[&str]) -> aileron_engine::Action {
    action(json!({
        "type": "http.request",
        "tags": tags,
        "facets": {"http": {"method": "POST", "url": "https://api.anthropic.com/v1/messages"}},
    }))
}

#[test]
fn the_agents_own_model_api_is_allowed_by_default_but_not_over_the_policy() {
    let p = load("version: 1\ndefault: ask\n");
    let v = decide(&p, &model_call(&["agent-model-api"]));
    assert_eq!(outcome(&v), ("allow", Some("builtin:agent-model-api")));
    // Without the proxy's tag, the same request is the default's.
    assert_eq!(outcome(&decide(&p, &model_call(&[]))).0, "ask");
    // The policy's own word about web requests wins.
    let p = load("version: 1\nask:\n  - {id: web, when: {type: http.request}}\n");
    assert_eq!(
        outcome(&decide(&p, &model_call(&["agent-model-api"]))),
        ("ask", Some("web"))
    );
    let p =
        load("version: 1\ndeny:\n  - {id: no-anthropic, when: {http.host: api.anthropic.com}}\n");
    assert_eq!(
        outcome(&decide(&p, &model_call(&["agent-model-api"]))),
        ("deny", Some("no-anthropic"))
    );
    // And it can be switched off by id.
    let p = load(
        "version: 1\ndefault: deny\nask:\n  - {id: off, override: \"builtin:agent-model-api\", when: {type: tool.call}}\n",
    );
    assert_eq!(
        outcome(&decide(&p, &model_call(&["agent-model-api"]))).0,
        "deny"
    );
}
