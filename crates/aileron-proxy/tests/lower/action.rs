//! The Action of one request: the `http` facet, sensitivity, and the
//! facets the tables add (git, k8s, llm, ws).

use super::{headers, lowered, target};
use aileron_engine::{Action, Sensitivity};
use aileron_proxy::lower::{LLM_BODY_LIMIT, Lowering, MASKED, body_wanted, lower, origin_target};
use http::Method;
use serde_json::{Value, json};

fn facet<'a>(a: &'a Action, name: &str) -> Option<&'a Value> {
    a.facets.get(name)
}

/// The names of the action's facets, sorted.
fn facet_names(a: &Action) -> Vec<&str> {
    let mut v: Vec<&str> = a.facets.keys().map(String::as_str).collect();
    v.sort();
    v
}

#[test]
fn a_get_is_a_read_http_request_with_its_url_parts() {
    let a = lowered(
        "GET",
        "https://API.github.com/repos/x?per_page=5",
        &[("accept", "application/json"), ("user-agent", "curl/8")],
        None,
    );
    assert_eq!(a.kind, "http.request");
    assert_eq!(a.primary, "http");
    assert_eq!(a.verb, "GET");
    assert_eq!(a.summary, "GET https://api.github.com/repos/x?per_page=5");
    assert_eq!(a.sensitivity, Some(Sensitivity::Read));
    assert_eq!(
        a.facets["http"],
        json!({
            "method": "GET",
            "url": "https://api.github.com/repos/x?per_page=5",
            "scheme": "https",
            "host": "api.github.com",
            "port": 443,
            "path": "/repos/x",
            "query": "per_page=5",
            "headers": {"accept": "application/json", "user-agent": "curl/8"},
        })
    );
    assert_eq!(facet_names(&a), ["http"]);
    assert!(
        a.id.is_empty() && a.timestamp.is_none(),
        "the proxy's to fill"
    );
}

#[test]
fn the_url_never_holds_the_userinfo() {
    let a = lowered("GET", "http://user:secret@b.test:8080/x", &[], None);
    assert_eq!(a.facets["http"]["url"], "http://b.test:8080/x");
    assert_eq!(a.facets["http"]["host"], "b.test");
    assert!(!a.summary.contains("secret"));
    let a = lowered("GET", "http://[::1]:8080/", &[], None);
    assert_eq!(a.facets["http"]["url"], "http://[::1]:8080/");
    assert_eq!(a.facets["http"]["host"], "::1");
}

#[test]
fn sensitivity_by_method() {
    for (m, s) in [
        ("GET", Sensitivity::Read),
        ("HEAD", Sensitivity::Read),
        ("OPTIONS", Sensitivity::Read),
        ("TRACE", Sensitivity::Read),
        ("POST", Sensitivity::Mutate),
        ("PUT", Sensitivity::Mutate),
        ("PATCH", Sensitivity::Mutate),
        ("PROPFIND", Sensitivity::Mutate),
        ("DELETE", Sensitivity::Destructive),
        // Methods are read in upper case, as lenient servers take them.
        ("get", Sensitivity::Read),
        ("delete", Sensitivity::Destructive),
    ] {
        let a = lowered(m, "https://x.test/thing", &[], None);
        assert_eq!(a.sensitivity, Some(s), "{m}");
        assert_eq!(a.verb, m.to_ascii_uppercase());
        assert_eq!(a.facets["http"]["method"], m.to_ascii_uppercase());
    }
}

#[test]
fn a_tunnel_is_named_by_its_authority_and_has_no_path() {
    let a = lowered(
        "CONNECT",
        "example.com:443",
        &[("host", "example.com:443")],
        None,
    );
    assert_eq!(a.summary, "CONNECT example.com:443");
    assert_eq!(a.verb, "CONNECT");
    // Anything may pass through an uninspected tunnel.
    assert_eq!(a.sensitivity, Some(Sensitivity::Mutate));
    let http = &a.facets["http"];
    assert_eq!(http["url"], "https://example.com");
    assert_eq!(http["scheme"], "https");
    assert_eq!(http["host"], "example.com");
    assert_eq!(http["port"], 443);
    assert_eq!(http["path"], Value::Null, "no path is known");
    assert_eq!(http.get("query"), None);
    assert_eq!(http["tunnel"], true);
    assert_eq!(facet_names(&a), ["http"]);
    let a = lowered("CONNECT", "example.com:8443", &[], None);
    assert_eq!(a.facets["http"]["url"], "https://example.com:8443");
    assert_eq!(a.summary, "CONNECT example.com:8443");
    let a = lowered("CONNECT", "[::1]:22", &[], None);
    assert_eq!(a.summary, "CONNECT [::1]:22");
    assert_eq!(a.facets["http"]["url"], "https://[::1]:22");
    // A CONNECT whose requests are each decided (TLS inspected) only opens
    // a connection.
    let method = Method::CONNECT;
    let t = target(&method, "example.com:443");
    let a = lower(&Lowering {
        method: &method,
        target: &t,
        headers: &headers(&[]),
        tunnel: false,
        body_size: None,
        body: None,
    });
    assert_eq!(a.sensitivity, Some(Sensitivity::Read));
    assert_eq!(a.facets["http"].get("tunnel"), None);
}

#[test]
fn credential_headers_are_masked_and_repeated_ones_joined() {
    let a = lowered(
        "GET",
        "https://x.test/",
        &[
            ("authorization", "Bearer sk-123"),
            ("proxy-authorization", "Basic dXNlcjpwYXNz"),
            ("cookie", "session=abc"),
            ("set-cookie", "a=1"),
            ("x-api-key", "k1"),
            ("api-key", "k2"),
            ("x-goog-api-key", "k3"),
            ("anthropic-api-key", "k4"),
            ("x-auth-token", "k5"),
            ("private-token", "k6"),
            ("x-amz-security-token", "k7"),
            ("accept", "text/html"),
            ("accept", "application/json"),
            ("x-forwarded-for", "10.0.0.1"),
            ("anthropic-version", "2023-06-01"),
        ],
        None,
    );
    let h = &a.facets["http"]["headers"];
    for name in [
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "anthropic-api-key",
        "x-auth-token",
        "private-token",
        "x-amz-security-token",
    ] {
        assert_eq!(h[name], MASKED, "{name}");
    }
    assert_eq!(MASKED, "[masked]");
    assert_eq!(h["accept"], "text/html, application/json");
    assert_eq!(h["x-forwarded-for"], "10.0.0.1");
    assert_eq!(h["anthropic-version"], "2023-06-01");
    let text = serde_json::to_string(&a).unwrap();
    for secret in ["sk-123", "dXNlcjpwYXNz", "abc", "k1", "k4", "k7"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
}

#[test]
fn body_size_is_the_content_length() {
    let a = lowered("POST", "https://x.test/upload", &[], Some("hello"));
    assert_eq!(a.facets["http"]["body_size"], 5);
    let a = lowered("GET", "https://x.test/", &[], None);
    assert_eq!(a.facets["http"].get("body_size"), None);
}

// ---- git ---------------------------------------------------------------------

#[test]
fn git_smart_http_fetches_and_pushes() {
    for (method, url, remote, op, service, s) in [
        (
            "GET",
            "https://github.com/org/repo.git/info/refs?service=git-upload-pack",
            "https://github.com/org/repo.git",
            "fetch",
            "upload-pack",
            Sensitivity::Read,
        ),
        (
            "POST",
            "https://github.com/org/repo.git/git-upload-pack",
            "https://github.com/org/repo.git",
            "fetch",
            "upload-pack",
            Sensitivity::Read,
        ),
        (
            "GET",
            "https://github.com/org/repo/info/refs?service=git-receive-pack",
            "https://github.com/org/repo",
            "push",
            "receive-pack",
            Sensitivity::Mutate,
        ),
        (
            "POST",
            "http://git.example.com:8080/scm/team/app.git/git-receive-pack",
            "http://git.example.com:8080/scm/team/app.git",
            "push",
            "receive-pack",
            Sensitivity::Mutate,
        ),
        // Escaped, as the server decodes it.
        (
            "POST",
            "https://git.example.com/r/git-rec%65ive-pack",
            "https://git.example.com/r",
            "push",
            "receive-pack",
            Sensitivity::Mutate,
        ),
        // The service named twice: the stricter.
        (
            "GET",
            "https://git.example.com/r/info/refs?service=git-upload-pack&service=git-receive-pack",
            "https://git.example.com/r",
            "push",
            "receive-pack",
            Sensitivity::Mutate,
        ),
        (
            "GET",
            "https://git.example.com/r/info/refs?service=git%2Dreceive%2Dpack",
            "https://git.example.com/r",
            "push",
            "receive-pack",
            Sensitivity::Mutate,
        ),
    ] {
        let a = lowered(method, url, &[], None);
        assert_eq!(
            facet(&a, "git"),
            Some(&json!({"remote": remote, "operation": op, "service": service})),
            "{method} {url}"
        );
        assert_eq!(a.sensitivity, Some(s), "{method} {url}");
    }
    for (method, url) in [
        ("GET", "https://github.com/org/repo/info/refs"),
        (
            "GET",
            "https://github.com/org/repo/info/refs?service=git-upload-archive",
        ),
        ("GET", "https://github.com/org/repo/git-receive-pack"),
        (
            "POST",
            "https://github.com/org/repo/info/refs?service=git-receive-pack",
        ),
        ("POST", "https://github.com/org/repo/git-receive-pack/x"),
    ] {
        assert_eq!(
            facet(&lowered(method, url, &[], None), "git"),
            None,
            "{method} {url}"
        );
    }
}

// ---- Kubernetes ---------------------------------------------------------------

#[test]
fn kubernetes_requests_are_read_as_the_apiserver_reads_them() {
    let cases: &[(&str, &str, Value, Sensitivity)] = &[
        (
            "GET",
            "/api/v1/namespaces/prod/pods/web-1",
            json!({"verb": "get", "namespace": "prod", "resource": "pods", "name": "web-1", "group": "", "version": "v1"}),
            Sensitivity::Read,
        ),
        (
            "GET",
            "/api/v1/namespaces/prod/pods",
            json!({"verb": "list", "namespace": "prod", "resource": "pods", "group": "", "version": "v1"}),
            Sensitivity::Read,
        ),
        (
            "GET",
            "/api/v1/namespaces/prod/pods?watch=true&resourceVersion=1",
            json!({"verb": "watch", "namespace": "prod", "resource": "pods", "group": "", "version": "v1"}),
            Sensitivity::Read,
        ),
        (
            "GET",
            "/api/v1/pods?watch=1",
            json!({"verb": "watch", "resource": "pods", "group": "", "version": "v1"}),
            Sensitivity::Read,
        ),
        (
            "GET",
            "/api/v1/pods?watch=false",
            json!({"verb": "list", "resource": "pods", "group": "", "version": "v1"}),
            Sensitivity::Read,
        ),
        (
            "GET",
            "/api/v1/watch/namespaces/prod/pods/web-1",
            json!({"verb": "watch", "namespace": "prod", "resource": "pods", "name": "web-1", "group": "", "version": "v1"}),
            Sensitivity::Read,
        ),
        (
            "GET",
            "/api/v1/namespaces/prod/pods/web-1/log",
            json!({"verb": "get", "namespace": "prod", "resource": "pods", "name": "web-1", "subresource": "log", "group": "", "version": "v1"}),
            Sensitivity::Read,
        ),
        (
            "POST",
            "/api/v1/namespaces/prod/pods/web-1/exec?command=sh",
            json!({"verb": "create", "namespace": "prod", "resource": "pods", "name": "web-1", "subresource": "exec", "group": "", "version": "v1"}),
            Sensitivity::Mutate,
        ),
        (
            "POST",
            "/apis/apps/v1/namespaces/prod/deployments",
            json!({"verb": "create", "namespace": "prod", "resource": "deployments", "group": "apps", "version": "v1"}),
            Sensitivity::Mutate,
        ),
        (
            "PUT",
            "/apis/apps/v1/namespaces/prod/deployments/web/scale",
            json!({"verb": "update", "namespace": "prod", "resource": "deployments", "name": "web", "subresource": "scale", "group": "apps", "version": "v1"}),
            Sensitivity::Mutate,
        ),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/prod/deployments/web",
            json!({"verb": "patch", "namespace": "prod", "resource": "deployments", "name": "web", "group": "apps", "version": "v1"}),
            Sensitivity::Mutate,
        ),
        (
            "DELETE",
            "/apis/apps/v1/namespaces/prod/deployments/web",
            json!({"verb": "delete", "namespace": "prod", "resource": "deployments", "name": "web", "group": "apps", "version": "v1"}),
            Sensitivity::Destructive,
        ),
        (
            "DELETE",
            "/api/v1/namespaces/prod/pods",
            json!({"verb": "deletecollection", "namespace": "prod", "resource": "pods", "group": "", "version": "v1"}),
            Sensitivity::Destructive,
        ),
        // Cluster-scoped.
        (
            "GET",
            "/api/v1/nodes/node-1",
            json!({"verb": "get", "resource": "nodes", "name": "node-1", "group": "", "version": "v1"}),
            Sensitivity::Read,
        ),
        (
            "DELETE",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin",
            json!({"verb": "delete", "resource": "clusterroles", "name": "admin", "group": "rbac.authorization.k8s.io", "version": "v1"}),
            Sensitivity::Destructive,
        ),
        // A namespace itself: its namespace is its name.
        (
            "DELETE",
            "/api/v1/namespaces/prod",
            json!({"verb": "delete", "namespace": "prod", "resource": "namespaces", "name": "prod", "group": "", "version": "v1"}),
            Sensitivity::Destructive,
        ),
        (
            "PUT",
            "/api/v1/namespaces/prod/finalize",
            json!({"verb": "update", "namespace": "prod", "resource": "namespaces", "name": "prod", "subresource": "finalize", "group": "", "version": "v1"}),
            Sensitivity::Mutate,
        ),
        (
            "GET",
            "/api/v1/namespaces",
            json!({"verb": "list", "resource": "namespaces", "group": "", "version": "v1"}),
            Sensitivity::Read,
        ),
        // Decoded, as the apiserver decodes the path.
        (
            "DELETE",
            "/api/v1/namespaces/pr%6fd/pods/web-1",
            json!({"verb": "delete", "namespace": "prod", "resource": "pods", "name": "web-1", "group": "", "version": "v1"}),
            Sensitivity::Destructive,
        ),
        (
            "GET",
            "/api/v1/proxy/namespaces/prod/services/web/a/b",
            json!({"verb": "proxy", "namespace": "prod", "resource": "services", "name": "web", "group": "", "version": "v1"}),
            Sensitivity::Mutate,
        ),
    ];
    for (method, path, k8s, s) in cases {
        let a = lowered(
            method,
            &format!("https://k8s.example.com:6443{path}"),
            &[],
            None,
        );
        assert_eq!(facet(&a, "k8s"), Some(k8s), "{method} {path}");
        assert_eq!(a.sensitivity, Some(*s), "{method} {path}");
    }
    for path in [
        "/api",
        "/api/v1",
        "/apis/apps/v1",
        "/apis/apps",
        "/version",
        "/healthz",
        "/api/v1/watch",
    ] {
        let a = lowered("GET", &format!("https://k8s.example.com{path}"), &[], None);
        assert_eq!(facet(&a, "k8s"), None, "{path}");
    }
}

// ---- LLM APIs -----------------------------------------------------------------

fn llm(url: &str, body: &str) -> Option<Value> {
    facet(
        &lowered(
            "POST",
            url,
            &[("content-type", "application/json")],
            Some(body),
        ),
        "llm",
    )
    .cloned()
}

#[test]
fn llm_calls_by_provider_model_limit_and_streaming() {
    for (url, body, want) in [
        (
            "https://api.openai.com/v1/chat/completions",
            r#"{"model":"gpt-4o","messages":[],"max_tokens":100,"stream":true}"#,
            json!({"provider": "openai", "model": "gpt-4o", "max_tokens": 100, "stream": true}),
        ),
        (
            "https://api.openai.com/v1/chat/completions",
            r#"{"model":"o3","max_completion_tokens":5000,"max_tokens":10}"#,
            json!({"provider": "openai", "model": "o3", "max_tokens": 5000, "stream": false}),
        ),
        (
            "https://api.openai.com/v1/responses",
            r#"{"model":"gpt-5","input":"hi","max_output_tokens":64}"#,
            json!({"provider": "openai", "model": "gpt-5", "max_tokens": 64, "stream": false}),
        ),
        (
            "https://api.openai.com/v1/embeddings",
            r#"{"model":"text-embedding-3-small","input":"x"}"#,
            json!({"provider": "openai", "model": "text-embedding-3-small", "stream": false}),
        ),
        (
            "https://api.openai.com/v1/completions",
            r#"{"model":"gpt-3.5-turbo-instruct","prompt":"x"}"#,
            json!({"provider": "openai", "model": "gpt-3.5-turbo-instruct", "stream": false}),
        ),
        // Any OpenAI-compatible server: the path decides.
        (
            "http://localhost:11434/v1/chat/completions",
            r#"{"model":"llama3.1:8b","messages":[]}"#,
            json!({"provider": "openai", "model": "llama3.1:8b", "stream": false}),
        ),
        (
            "https://openrouter.ai/api/v1/chat/completions",
            r#"{"model":"anthropic/claude-opus-4","messages":[]}"#,
            json!({"provider": "openai", "model": "anthropic/claude-opus-4", "stream": false}),
        ),
        (
            "https://api.anthropic.com/v1/messages",
            r#"{"model":"claude-opus-4-1","max_tokens":1024,"messages":[],"stream":true}"#,
            json!({"provider": "anthropic", "model": "claude-opus-4-1", "max_tokens": 1024, "stream": true}),
        ),
        (
            "https://api.anthropic.com/v1/messages/count_tokens",
            r#"{"model":"claude-sonnet-4-5","messages":[]}"#,
            json!({"provider": "anthropic", "model": "claude-sonnet-4-5", "stream": false}),
        ),
        (
            "https://llm-gateway.internal/v1/messages",
            r#"{"model":"claude-haiku-4-5","max_tokens":1}"#,
            json!({"provider": "anthropic", "model": "claude-haiku-4-5", "max_tokens": 1, "stream": false}),
        ),
        // A known host's provider, whatever shape it serves.
        (
            "https://api.anthropic.com/v1/chat/completions",
            r#"{"model":"claude-opus-4-1"}"#,
            json!({"provider": "anthropic", "model": "claude-opus-4-1", "stream": false}),
        ),
        (
            "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
            r#"{"model":"gemini-2.5-flash"}"#,
            json!({"provider": "gemini", "model": "gemini-2.5-flash", "stream": false}),
        ),
        // Gemini: the model and streaming from the path.
        (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent",
            r#"{"contents":[],"generationConfig":{"maxOutputTokens":2048}}"#,
            json!({"provider": "gemini", "model": "gemini-2.5-pro", "max_tokens": 2048, "stream": false}),
        ),
        (
            "https://generativelanguage.googleapis.com/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            r#"{"contents":[],"generation_config":{"max_output_tokens":10}}"#,
            json!({"provider": "gemini", "model": "gemini-2.5-flash", "max_tokens": 10, "stream": true}),
        ),
        (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-pro%3AcountTokens",
            r#"{}"#,
            json!({"provider": "gemini", "model": "gemini-pro", "stream": false}),
        ),
        (
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
            r#"{"contents":[]}"#,
            json!({"provider": "gemini", "model": "gemini-2.5-pro", "stream": false}),
        ),
    ] {
        assert_eq!(llm(url, body), Some(want), "{url} {body}");
    }
}

#[test]
fn an_llm_body_that_cannot_be_read_says_only_what_is_known() {
    let url = "https://api.anthropic.com/v1/messages";
    let only_provider = Some(json!({"provider": "anthropic"}));
    for body in [
        "",
        "not json",
        r#"{"model":"claude-opus-4-1","max_tokens":10"#,
        r#"["model","claude"]"#,
        // Named twice: servers differ on which one counts.
        r#"{"model":"claude-haiku-4-5","max_tokens":1,"model":"claude-opus-4-1"}"#,
        r#"{"model":"a","generationConfig":{},"generation_config":{}}"#,
    ] {
        assert_eq!(llm(url, body), only_provider, "{body}");
    }
    // A field of another type is left out, the rest is read.
    assert_eq!(
        llm(url, r#"{"model":7,"max_tokens":"many","stream":true}"#),
        Some(json!({"provider": "anthropic", "stream": true}))
    );
    let method = Method::POST;
    let t = target(&method, url);
    let body = br#"{"model":"claude-opus-4-1","max_tokens":10}"#;
    let lower_with = |hdrs: &[(&str, &str)], body_size: Option<u64>, body: &[u8]| {
        let a = lower(&Lowering {
            method: &method,
            target: &t,
            headers: &headers(hdrs),
            tunnel: false,
            body_size,
            body: Some(body),
        });
        a.facets["llm"].clone()
    };
    // Whole: read.
    assert_eq!(
        lower_with(&[], Some(body.len() as u64), body)["model"],
        "claude-opus-4-1"
    );
    assert_eq!(lower_with(&[], None, body)["model"], "claude-opus-4-1");
    // Cut short: the start is not taken for the whole.
    assert_eq!(
        lower_with(&[], Some(2 << 20), body),
        json!({"provider": "anthropic"})
    );
    let big = vec![b' '; LLM_BODY_LIMIT];
    assert_eq!(
        lower_with(&[], None, &big),
        json!({"provider": "anthropic"})
    );
    // Compressed: not read.
    assert_eq!(
        lower_with(
            &[("content-encoding", "gzip")],
            Some(body.len() as u64),
            body
        ),
        json!({"provider": "anthropic"})
    );
    // Never read: still the provider.
    let a = lower(&Lowering {
        method: &method,
        target: &t,
        headers: &headers(&[]),
        tunnel: false,
        body_size: Some(10),
        body: None,
    });
    assert_eq!(a.facets["llm"], json!({"provider": "anthropic"}));
}

#[test]
fn only_posts_to_llm_paths_are_llm_calls() {
    for (method, url) in [
        ("GET", "https://api.openai.com/v1/chat/completions"),
        ("GET", "https://api.openai.com/v1/models"),
        ("POST", "https://api.openai.com/v1/files"),
        ("POST", "https://api.anthropic.com/v1/messages/batches"),
        ("POST", "https://x.test/v2/completions"),
        ("POST", "https://x.test/models/gemini-pro:predict"),
        ("POST", "https://x.test/v1beta/models/:generateContent"),
        ("POST", "https://x.test/v1beta/gemini-pro:generateContent"),
    ] {
        let a = lowered(method, url, &[], Some("{}"));
        assert_eq!(facet(&a, "llm"), None, "{method} {url}");
    }
}

#[test]
fn body_wanted_only_for_llm_calls() {
    let want = |method: Method, url: &str, hdrs: &[(&str, &str)]| {
        body_wanted(&method, &target(&method, url), &headers(hdrs))
    };
    assert_eq!(LLM_BODY_LIMIT, 1 << 20);
    assert_eq!(
        want(
            Method::POST,
            "https://api.openai.com/v1/chat/completions",
            &[]
        ),
        Some(LLM_BODY_LIMIT)
    );
    assert_eq!(
        want(
            Method::POST,
            "http://localhost:8000/v1/messages",
            &[("content-encoding", "identity")]
        ),
        Some(LLM_BODY_LIMIT)
    );
    assert_eq!(
        want(
            Method::POST,
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent",
            &[]
        ),
        Some(LLM_BODY_LIMIT)
    );
    assert_eq!(
        want(
            Method::GET,
            "https://api.openai.com/v1/chat/completions",
            &[]
        ),
        None
    );
    assert_eq!(
        want(Method::POST, "https://api.github.com/repos/x/issues", &[]),
        None
    );
    assert_eq!(
        want(
            Method::POST,
            "https://api.openai.com/v1/chat/completions",
            &[("content-encoding", "gzip")]
        ),
        None
    );
    // Inside an inspected tunnel too.
    let tunnel = target(&Method::CONNECT, "api.openai.com:443");
    let t = origin_target(&tunnel, "/v1/chat/completions", Some("api.openai.com")).unwrap();
    assert_eq!(
        body_wanted(&Method::POST, &t, &headers(&[])),
        Some(LLM_BODY_LIMIT)
    );
}

// ---- WebSocket ----------------------------------------------------------------

#[test]
fn websocket_upgrades_get_a_ws_url() {
    let upgrade = [
        ("upgrade", "websocket"),
        ("connection", "keep-alive, Upgrade"),
    ];
    let a = lowered("GET", "http://chat.test:8080/socket?room=1", &upgrade, None);
    assert_eq!(
        facet(&a, "ws"),
        Some(&json!({"url": "ws://chat.test:8080/socket?room=1"}))
    );
    assert_eq!(
        a.sensitivity,
        Some(Sensitivity::Mutate),
        "what passes is not seen"
    );
    let a = lowered("GET", "wss://chat.test/socket", &[], None);
    assert_eq!(
        facet(&a, "ws"),
        Some(&json!({"url": "wss://chat.test/socket"}))
    );
    assert_eq!(a.facets["http"]["scheme"], "wss");
    // Inside an inspected tunnel: wss.
    let method = Method::GET;
    let tunnel = target(&Method::CONNECT, "chat.test:443");
    let t = origin_target(&tunnel, "/socket", Some("chat.test")).unwrap();
    let a = lower(&Lowering {
        method: &method,
        target: &t,
        headers: &headers(&upgrade),
        tunnel: false,
        body_size: None,
        body: None,
    });
    assert_eq!(
        facet(&a, "ws"),
        Some(&json!({"url": "wss://chat.test/socket"}))
    );
    // Not an upgrade: both headers are needed.
    for hdrs in [
        &[("upgrade", "websocket")][..],
        &[("connection", "upgrade")][..],
        &[("upgrade", "h2c"), ("connection", "upgrade")][..],
    ] {
        let a = lowered("GET", "http://chat.test/socket", hdrs, None);
        assert_eq!(facet(&a, "ws"), None, "{hdrs:?}");
        assert_eq!(a.sensitivity, Some(Sensitivity::Read));
    }
}
