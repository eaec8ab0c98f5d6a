//! Rules written in `aileron.yaml` decide the lowered actions: the facets
//! are the fields rules name.

use super::lowered;
use aileron_engine::{Action, Environment, Layer, Policy, Source, State};

fn policy(text: &str) -> Policy {
    let source = Source {
        name: "/p/aileron.yaml".into(),
        text: text.into(),
        layer: Layer::Project,
        base_dir: "/p".into(),
    };
    Policy::from_sources(&[source], &Environment::new("/home/u"))
        .unwrap_or_else(|d| panic!("policy does not load:\n{}", aileron_engine::Diagnostics(d)))
}

/// (decision, rule) of an action.
fn decide(p: &Policy, a: &Action) -> (String, Option<String>) {
    let v = p.evaluate(a, &State::default());
    (v.decision.as_str().to_owned(), v.rule)
}

fn is(decision: &str, rule: &str) -> (String, Option<String>) {
    (decision.into(), Some(rule.into()))
}

fn default(decision: &str) -> (String, Option<String>) {
    (decision.into(), None)
}

#[test]
fn pushes_to_one_git_host_are_denied_and_fetches_are_not() {
    let p = policy(
        "version: 1\ndefault: allow\ndeny:\n  - id: no-push\n    when: {type: http.request, git.operation: push, http.host: git.example.com}\n",
    );
    let push = lowered(
        "POST",
        "https://git.example.com/team/app.git/git-receive-pack",
        &[],
        None,
    );
    let advert = lowered(
        "GET",
        "https://git.example.com/team/app.git/info/refs?service=git-receive-pack",
        &[],
        None,
    );
    let fetch = lowered(
        "POST",
        "https://git.example.com/team/app.git/git-upload-pack",
        &[],
        None,
    );
    let other = lowered(
        "POST",
        "https://github.com/team/app.git/git-receive-pack",
        &[],
        None,
    );
    // The host as the proxy connects to it, however it was spelt.
    let spelt = lowered(
        "POST",
        "https://GIT.%65xample.com./team/app.git/git-receive-pack",
        &[],
        None,
    );
    assert_eq!(decide(&p, &push), is("deny", "no-push"));
    assert_eq!(decide(&p, &advert), is("deny", "no-push"));
    assert_eq!(decide(&p, &spelt), is("deny", "no-push"));
    assert_eq!(decide(&p, &fetch), default("allow"));
    assert_eq!(decide(&p, &other), default("allow"));
}

#[test]
fn kubectl_delete_in_prod_is_denied() {
    let p = policy(
        "version: 1\ndefault: allow\ndeny:\n  - id: no-delete-prod\n    when: {k8s.verb: [delete, deletecollection], k8s.namespace: prod}\n",
    );
    let k = |method: &str, path: &str| {
        lowered(method, &format!("https://10.0.0.1:6443{path}"), &[], None)
    };
    for (method, path) in [
        ("DELETE", "/api/v1/namespaces/prod/pods/web-1"),
        ("DELETE", "/apis/apps/v1/namespaces/prod/deployments/web"),
        ("DELETE", "/api/v1/namespaces/prod/pods"),
        ("DELETE", "/api/v1/namespaces/prod"),
        ("DELETE", "/api/v1/namespaces/pr%6Fd/pods/web-1"),
    ] {
        assert_eq!(
            decide(&p, &k(method, path)),
            is("deny", "no-delete-prod"),
            "{method} {path}"
        );
    }
    for (method, path) in [
        ("DELETE", "/api/v1/namespaces/dev/pods/web-1"),
        ("GET", "/api/v1/namespaces/prod/pods/web-1"),
        ("PATCH", "/api/v1/namespaces/prod/pods/web-1"),
        ("DELETE", "/api/v1/nodes/prod"),
    ] {
        assert_eq!(
            decide(&p, &k(method, path)),
            default("allow"),
            "{method} {path}"
        );
    }
}

#[test]
fn opus_class_models_are_asked_about() {
    let p = policy(
        "version: 1\ndefault: allow\nask:\n  - id: opus\n    when: {type: http.request, llm.model: {glob: \"*opus*\"}}\n  - id: unknown-model\n    when: {type: http.request, llm.provider: {exists: true}, llm.model: {exists: false}}\n",
    );
    let call = |url: &str, body: &str| lowered("POST", url, &[], Some(body));
    let anthropic = "https://api.anthropic.com/v1/messages";
    assert_eq!(
        decide(
            &p,
            &call(anthropic, r#"{"model":"claude-opus-4-1","max_tokens":10}"#)
        ),
        is("ask", "opus")
    );
    assert_eq!(
        decide(
            &p,
            &call(
                "https://openrouter.ai/api/v1/chat/completions",
                r#"{"model":"anthropic/claude-opus-4"}"#
            )
        ),
        is("ask", "opus")
    );
    assert_eq!(
        decide(
            &p,
            &call(anthropic, r#"{"model":"claude-haiku-4-5","max_tokens":10}"#)
        ),
        default("allow")
    );
    // A model hidden by a second `model` key is no model: asked about.
    assert_eq!(
        decide(
            &p,
            &call(
                anthropic,
                r#"{"model":"claude-haiku-4-5","model":"claude-opus-4-1"}"#
            )
        ),
        is("ask", "unknown-model")
    );
    assert_eq!(
        decide(
            &p,
            &lowered("GET", "https://api.anthropic.com/v1/models", &[], None)
        ),
        default("allow")
    );
}

#[test]
fn gets_to_one_api_are_allowed_and_the_rest_asked() {
    let p = policy(
        "version: 1\ndefault: ask\nallow:\n  - id: github-reads\n    when: {type: http.request, http.method: [GET, HEAD], http.host: api.github.com}\ndeny:\n  - id: no-tunnels\n    when: {type: http.request, http.tunnel: true, http.port: {in: [22]}}\n",
    );
    assert_eq!(
        decide(
            &p,
            &lowered("GET", "https://api.github.com/repos/x", &[], None)
        ),
        is("allow", "github-reads")
    );
    assert_eq!(
        decide(
            &p,
            &lowered("GET", "https://user@api.github.com/repos/x", &[], None)
        ),
        is("allow", "github-reads")
    );
    assert_eq!(
        decide(
            &p,
            &lowered(
                "POST",
                "https://api.github.com/repos/x/issues",
                &[],
                Some("{}")
            )
        ),
        default("ask")
    );
    // The host the request goes to, not the user in front of it.
    assert_eq!(
        decide(
            &p,
            &lowered("GET", "https://api.github.com@evil.test/repos/x", &[], None)
        ),
        default("ask")
    );
    assert_eq!(
        decide(&p, &lowered("CONNECT", "github.com:22", &[], None)),
        is("deny", "no-tunnels")
    );
    assert_eq!(
        decide(&p, &lowered("CONNECT", "github.com:443", &[], None)),
        default("ask")
    );
}

#[test]
fn the_new_facet_fields_are_known_to_the_policy() {
    // Misspelt fields of the proxy's facets are load errors.
    for field in [
        "git.operaton",
        "k8s.namespce",
        "llm.max_token",
        "ws.uri",
        "http.body",
    ] {
        let text = format!("version: 1\ndeny:\n  - {{id: a, when: {{{field}: x}}}}\n");
        let source = Source {
            name: "/p/aileron.yaml".into(),
            text,
            layer: Layer::Project,
            base_dir: "/p".into(),
        };
        assert!(
            Policy::from_sources(&[source], &Environment::new("/home/u")).is_err(),
            "{field}"
        );
    }
}
