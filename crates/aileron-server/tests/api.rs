//! `aileron serve`'s API against a real server on loopback with a real
//! SQLite file.

mod support;

use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{Api, Env, WAIT, http, json_of, shell};

/// Every endpoint, and which role it needs.
const AGENT_ENDPOINTS: &[(&str, &str)] = &[
    ("POST", "/api/evaluate"),
    ("GET", "/api/actions"),
    ("POST", "/api/actions"),
    ("POST", "/api/pending-actions"),
    ("GET", "/api/action-schemas"),
    ("GET", "/api/openapi.json"),
];
const APPROVER_ENDPOINTS: &[(&str, &str)] = &[
    ("GET", "/api/rules"),
    ("POST", "/api/rules"),
    ("GET", "/api/rules/x"),
    ("DELETE", "/api/rules/x"),
    ("POST", "/api/rules/preview"),
    ("GET", "/api/approvers"),
    ("GET", "/api/pending-actions"),
    ("GET", "/api/pending-actions/stream"),
    ("POST", "/api/pending-actions/x/decision"),
];

#[tokio::test(flavor = "multi_thread")]
async fn every_endpoint_refuses_missing_bad_and_underprivileged_tokens() {
    let env = Env::new();
    let api = env.start().await;
    for (m, path) in AGENT_ENDPOINTS.iter().chain(APPROVER_ENDPOINTS) {
        let method = Method::from_bytes(m.as_bytes()).unwrap();
        let r = api.req(method.clone(), path, None).send().await.unwrap();
        assert_eq!(r.status(), 401, "{m} {path} without a token");
        assert_eq!(r.headers()["www-authenticate"], "Bearer");
        let r = api
            .req(method.clone(), path, Some("ail_not-a-token"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{m} {path} with a bad token");
        let r = api
            .client
            .request(method.clone(), api.url(path))
            .header("authorization", format!("Basic {}", api.admin()))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{m} {path} with a non-bearer scheme");
    }
    for (m, path) in APPROVER_ENDPOINTS {
        let method = Method::from_bytes(m.as_bytes()).unwrap();
        let r = api
            .req(method, path, Some(api.agent()))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{m} {path} with an agent token");
    }
    // Unknown /api paths: 401 without a valid token, 404 with one.
    let r = api
        .req(Method::GET, "/api/nope", None)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = api
        .req(Method::GET, "/api/nope", Some(api.agent()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    // The agent endpoints accept the agent token (whatever the body says).
    let r = api
        .req(Method::GET, "/api/openapi.json", Some(api.agent()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn headers_host_check_and_no_cors() {
    let env = Env::new();
    let api = env.start().await;
    let r = api
        .req(Method::GET, "/api/rules", Some(api.admin()))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let h = r.headers();
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(
        h["content-security-policy"],
        "default-src 'self'; frame-ancestors 'none'"
    );
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["referrer-policy"], "no-referrer");
    assert!(h.keys().all(|k| !k.as_str().starts_with("access-control-")));
    // A preflight gets no CORS headers either.
    let r = api
        .req(Method::OPTIONS, "/api/rules", None)
        .header("origin", "https://evil.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert!(
        r.headers()
            .keys()
            .all(|k| !k.as_str().starts_with("access-control-"))
    );
    // DNS rebinding: a foreign Host is refused, even with a valid token.
    let r = api
        .req(Method::GET, "/api/rules", Some(api.admin()))
        .header("host", format!("evil.example:{}", api.server.addr.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(r.headers()["x-frame-options"], "DENY");
    let r = api
        .req(Method::GET, "/api/rules", Some(api.admin()))
        .header("host", format!("localhost:{}", api.server.addr.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // The dashboard.
    let r = api.req(Method::GET, "/", None).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let r = api
        .req(Method::GET, "/assets/index.html", None)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = api
        .req(Method::GET, "/assets/nope.js", None)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn first_start_files_and_login_link() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let api = env.start().await;
    assert!(api.server.first_start);
    for f in [
        "admin.token",
        "agent.token",
        "server.json",
        "aileron.db",
        "aileron.db-wal",
    ] {
        let mode = std::fs::metadata(env.data.join(f))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{f}");
    }
    let admin = std::fs::read_to_string(env.data.join("admin.token")).unwrap();
    assert_eq!(admin.trim(), api.admin());
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(env.data.join("server.json")).unwrap())
            .unwrap();
    assert_eq!(info["url"], api.server.url);
    assert_eq!(info["pid"], std::process::id());
    assert_eq!(
        api.server.login_link(),
        format!("{}/#token={}", api.server.url, api.admin())
    );
    assert!(env.data.join("aileron.db").is_file());
    assert!(env.data.join("server-rules.yaml").is_file());
    api.server.shutdown().await;
    assert!(
        !env.data.join("server.json").exists(),
        "removed on shutdown"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_crud_in_the_api_form_and_the_seed_shape() {
    let env = Env::new();
    let api = env.start().await;
    let admin = api.admin().to_owned();
    let rule = json!({
        "id": "no-deletes", "label": "deny deletes", "decision": "deny",
        "description": "no deletes on the API", "priority": 300,
        "when": {"type": "http.request", "http.method": "DELETE"},
    });
    let (s, v) = api.put_rule(&rule).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["id"], "no-deletes");
    let (s, got) = api.get("/api/rules/no-deletes").await;
    assert_eq!(s, 200);
    for k in ["id", "label", "decision", "description", "priority", "when"] {
        assert_eq!(got[k], rule[k], "{k}");
    }
    assert!(got["created_at"].is_string());
    // Upsert in place: the returned form goes back in unchanged.
    let mut edited = got.clone();
    edited["priority"] = json!(400);
    let (s, _) = api.put_rule(&edited).await;
    assert_eq!(s, 200);
    let (_, got2) = api.get("/api/rules/no-deletes").await;
    assert_eq!(got2["priority"], 400);
    assert_eq!(got2["created_at"], got["created_at"]);
    // The seed's shape: no id, scopeIntegrationId, source as JSON text.
    let (s, v) = api
        .put_rule(&json!({
            "label": "deny destructive SQL on prod",
            "scopeIntegrationId": "int-prod-pg",
            "priority": 100, "enabled": true,
            "source": "{\"sql.verb\":{\"in\":[\"DROP\",\"TRUNCATE\",\"DELETE\"]}}",
            "decision": "deny", "reason": "no destructive DDL on prod"
        }))
        .await;
    assert_eq!(s, 200, "{v}");
    let id = v["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    assert_eq!(v["rule"]["scope"], json!({"integration": "int-prod-pg"}));
    assert_eq!(v["rule"]["description"], "no destructive DDL on prod");
    // YAML body.
    let r = api
        .req(Method::POST, "/api/rules", Some(&admin))
        .header("content-type", "application/yaml")
        .body("id: ask-push\ndecision: ask\npriority: 150\ncommand: \"git push *\"\ntimeout: 5\n")
        .send()
        .await
        .unwrap();
    let (s, v) = json_of(r).await;
    assert_eq!(s, 200, "{v}");
    // List: priority descending, then id.
    let (_, list) = api.get("/api/rules").await;
    let ids: Vec<&str> = list["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["no-deletes", "ask-push", id.as_str()]);
    // The export file follows.
    let export = std::fs::read_to_string(env.data.join("server-rules.yaml")).unwrap();
    assert!(export.contains("- id: no-deletes"), "{export}");
    assert!(export.contains("label: deny deletes"), "{export}");
    // Delete: always ok.
    let r = api
        .req(Method::DELETE, "/api/rules/ask-push", Some(&admin))
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(r).await, (200, json!({"ok": true})));
    let r = api
        .req(Method::DELETE, "/api/rules/ask-push", Some(&admin))
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(r).await, (200, json!({"ok": true})));
    let (s, _) = api.get("/api/rules/ask-push").await;
    assert_eq!(s, 404);
    let export = std::fs::read_to_string(env.data.join("server-rules.yaml")).unwrap();
    assert!(!export.contains("ask-push"));
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_rules_are_refused_with_the_loaders_message_and_never_stored() {
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        "version: 1\ndeny:\n  - {id: file-deny, command: \"rm -rf *\"}\n",
    );
    let api = env.start().await;
    let before = std::fs::read_to_string(env.data.join("server-rules.yaml")).unwrap();
    let cases = [
        (
            json!({"id": "bad-op", "decision": "deny", "when": {"http.method": {"equal": "DELETE"}}}),
            "unknown operator `equal`",
        ),
        (
            json!({"id": "bad-re", "decision": "deny", "when": {"http.url": {"pattern": "("}}}),
            "regex",
        ),
        (
            json!({"id": "bad-key", "decision": "allow", "comand": "ls"}),
            "unknown key `comand`",
        ),
        (
            json!({"id": "bad-facet", "decision": "allow", "when": {"http.metod": "GET"}}),
            "metod",
        ),
        (
            json!({"id": "no-decision", "command": "ls"}),
            "a rule needs `decision`",
        ),
        (
            json!({"id": "bad-type", "decision": "ask", "timeout": "soon", "command": "ls"}),
            "`timeout` must be an integer",
        ),
        (
            json!({"id": "ovr", "decision": "allow", "override": "file-deny", "command": "rm -rf x"}),
            "deny rules cannot be overridden",
        ),
    ];
    for (rule, want) in cases {
        let (s, v) = api.put_rule(&rule).await;
        assert_eq!(s, 400, "{rule}: {v}");
        let msg = v["error"].as_str().unwrap();
        assert!(msg.contains(want), "{rule}: {msg}");
        let d = &v["diagnostics"][0];
        assert!(d["message"].is_string(), "{v}");
        if d["line"].as_u64().unwrap() > 0 {
            // FILE:LINE:COL: error: MESSAGE, as `aileron check` prints.
            let head = format!(
                "{}:{}:{}: error: ",
                d["file"].as_str().unwrap(),
                d["line"],
                d["col"]
            );
            assert!(msg.starts_with(&head), "{msg}");
        }
    }
    let (_, list) = api.get("/api/rules").await;
    assert_eq!(list["rules"], json!([]), "nothing stored");
    let after = std::fs::read_to_string(env.data.join("server-rules.yaml")).unwrap();
    assert_eq!(before, after);
    // A bad draft is refused by the preview too.
    let (s, v) = api
        .post(
            "/api/rules/preview",
            api.admin(),
            &json!({"draft": {"decision": "deny", "when": {"x.y": {"nope": 1}}}}),
        )
        .await;
    assert_eq!(s, 400, "{v}");
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_the_policy_overrides_is_saved_with_a_warning() {
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        "version: 1\nask:\n  - {id: push, command: \"git push *\"}\n",
    );
    let api = env.start().await;
    let rule =
        json!({"id": "push-feature", "decision": "allow", "command": "git push origin feature"});
    let file = env.proj.join("aileron.yaml");
    let check = |v: &Value| {
        let w = &v["warnings"][0];
        assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1), "{v}");
        assert_eq!(w["severity"], "warning", "{v}");
        assert_eq!(w["code"], "allow-overridden", "{v}");
        let msg = w["message"].as_str().unwrap();
        assert!(
            msg.contains(&format!(
                "`push` (ask rule at {}:3:5, priority 100)",
                file.display()
            )) && msg.ends_with("give it `priority: 100` to take effect"),
            "a higher layer wins a tie: {msg}"
        );
    };
    // The editor's check while typing says so ...
    let (s, v) = api
        .post("/api/rules/preview", api.admin(), &json!({"draft": rule}))
        .await;
    assert_eq!(s, 200, "{v}");
    check(&v);
    assert_eq!(v["warnings"][0]["file"], "draft", "{v}");
    // ... and so does the save, which still stores the rule.
    let (s, v) = api.put_rule(&rule).await;
    assert_eq!(s, 200, "{v}");
    check(&v);
    assert_eq!(v["warnings"][0]["file"], "rules/push-feature", "{v}");
    let (s, _) = api.get("/api/rules/push-feature").await;
    assert_eq!(s, 200, "stored");
    // At the priority it suggests, nothing to say.
    let (s, v) = api
        .put_rule(&json!({"id": "push-feature", "decision": "allow", "command": "git push origin feature", "priority": 100}))
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["warnings"], json!([]), "{v}");
    // A saved rule that hides others, stored or in the file, is told so.
    let (s, v) = api
        .put_rule(&json!({"id": "no-push", "decision": "deny", "command": "git push *"}))
        .await;
    assert_eq!(s, 200, "{v}");
    let hidden: Vec<(&str, &str)> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["code"].as_str().unwrap(), w["file"].as_str().unwrap()))
        .collect();
    let file = file.to_string_lossy();
    assert_eq!(
        hidden,
        [
            ("allow-overridden", "rules/push-feature"),
            ("shadowed-rule", file.as_ref())
        ],
        "{v}"
    );
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn evaluate_uses_the_file_policy_plus_database_rules_of_layer_7() {
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        "version: 1\ndefault: deny\nallow:\n  - \"git status\"\n  - \"ls *\"\ndeny:\n  - {id: no-curl, command: \"curl *\"}\n",
    );
    let api = env.start().await;
    let v = api
        .evaluate(&shell("a1", "git status", &env.proj, "s1"))
        .await;
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["source"], "static");
    // A shell line is decided by its most restrictive command.
    let v = api
        .evaluate(&shell("a2", "git status; curl https://x", &env.proj, "s1"))
        .await;
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["rule"], "no-curl");
    // A new database rule is seen by the very next evaluation.
    let (s, _) = api
        .put_rule(&json!({"id": "db-deny-ls", "decision": "deny", "command": "ls -la *", "description": "no long listings"}))
        .await;
    assert_eq!(s, 200);
    let v = api
        .evaluate(&shell("a3", "ls -la /tmp", &env.proj, "s1"))
        .await;
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["rule"], "db-deny-ls");
    assert_eq!(v["reason"], "no long listings");
    // Layer 7 never outranks a file's deny, whatever its priority.
    let (s, _) = api
        .put_rule(&json!({"id": "db-allow-curl", "decision": "allow", "command": "curl *", "priority": 100000}))
        .await;
    assert_eq!(s, 200);
    let v = api
        .evaluate(&shell("a4", "curl https://x", &env.proj, "s1"))
        .await;
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["rule"], "no-curl");
    // Deleting is seen at once too.
    api.req(Method::DELETE, "/api/rules/db-deny-ls", Some(api.admin()))
        .send()
        .await
        .unwrap();
    let v = api
        .evaluate(&shell("a5", "ls -la /tmp", &env.proj, "s1"))
        .await;
    assert_eq!(v["decision"], "allow", "{v}");
    // Built-in structural rules hold: the agent cannot read the tokens.
    let token_path = env.data.join("admin.token");
    let v = api
        .evaluate(&json!({"id": "a6", "type": "fs.read", "facets": {"fs": {"path": token_path}}, "session": {"id": "s1", "cwd": env.proj}}))
        .await;
    assert_eq!(v["decision"], "deny", "{v}");
    // An action without a working directory uses the server's own.
    let v = api
        .evaluate(&http("a7", "GET", "https://example.com/", "s2"))
        .await;
    assert_eq!(
        v["decision"], "deny",
        "default: deny of the server's cwd policy: {v}"
    );
    // Every decision is in the log and in the JSONL audit log.
    let (_, log) = api.get("/api/actions?session=s1").await;
    assert_eq!(log["actions"].as_array().unwrap().len(), 6);
    let audit = std::fs::read_to_string(env.proj.join(".aileron/audit.jsonl")).unwrap();
    assert_eq!(audit.lines().count(), 7, "{audit}");
    assert!(audit.contains("\"adapter\":\"server\""));
    api.server.shutdown().await;
}

/// An action's timestamp is read once, with the request: text that is not
/// RFC 3339 is refused, saying so, rather than never matching a `time` or
/// `rate` rule; a given time is the one the log keeps, as written.
#[tokio::test(flavor = "multi_thread")]
async fn evaluate_refuses_a_timestamp_that_is_not_rfc_3339() {
    let env = Env::new();
    env.write("proj/aileron.yaml", "version: 1\ndefault: allow\n");
    let api = env.start().await;
    let mut a = shell("t1", "ls", &env.proj, "st");
    a["timestamp"] = json!("yesterday");
    let (s, v) = api.post("/api/evaluate", api.agent(), &a).await;
    assert_eq!(s, 400, "{v}");
    let msg = v["error"].as_str().unwrap_or_default();
    assert!(
        msg.starts_with("invalid JSON body: invalid timestamp `yesterday`: expected RFC 3339"),
        "{msg}"
    );
    a["timestamp"] = json!("2026-01-05T12:00:00Z");
    let v = api.evaluate(&a).await;
    assert_eq!(v["decision"], "allow", "{v}");
    let (_, log) = api.get("/api/actions?session=st").await;
    let actions = log["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "the refused request is not logged: {log}");
    assert_eq!(actions[0]["time"], "2026-01-05T12:00:00Z", "{log}");
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_that_does_not_load_denies() {
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        "version: 1\nallow:\n  - {comand: ls}\n",
    );
    let api = env.start().await;
    let v = api.evaluate(&shell("b1", "ls", &env.proj, "s")).await;
    assert_eq!(v["decision"], "deny");
    assert!(
        v["reason"].as_str().unwrap().contains("does not load"),
        "{v}"
    );
    // Garbage is a 400, not an allow.
    let (s, _) = api
        .post("/api/evaluate", api.agent(), &json!({"no": "type"}))
        .await;
    assert_eq!(s, 400);
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn evaluate_waits_for_a_human_and_the_sse_stream_shows_it() {
    let env = Env::new();
    let api = std::sync::Arc::new(env.start().await);
    let (s, _) = api
        .put_rule(&json!({"id": "ask-post", "decision": "ask", "timeout": 15,
            "when": {"type": "http.request", "http.method": "POST"}}))
        .await;
    assert_eq!(s, 200);
    // The stream, opened before the ask.
    let mut stream = api.stream().await;
    let a = api.clone();
    let waiting = tokio::spawn(async move {
        a.evaluate(&http("h1", "POST", "https://api.example.com/x", "s1"))
            .await
    });
    let p = api.wait_pending("h1").await;
    assert_eq!(p["rule"], "ask-post");
    assert_eq!(p["action"]["type"], "http.request");
    assert!(!waiting.is_finished(), "evaluate waits");
    let mut seen = String::new();
    let deadline = Instant::now() + WAIT;
    while !seen.contains("event: pending") || !seen.contains("\"h1\"") {
        let chunk = tokio::time::timeout(WAIT, stream.chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
        assert!(Instant::now() < deadline);
    }
    let (s, v) = api
        .post(
            "/api/pending-actions/h1/decision",
            api.admin(),
            &json!({"decision": "once", "reviewer": "alice"}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    let v = tokio::time::timeout(WAIT, waiting).await.unwrap().unwrap();
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["source"], "human");
    assert_eq!(v["outcome"], "approved-once");
    assert_eq!(v["reviewer"], "alice");
    assert_eq!(v["verdict"]["decision"], "ask");
    // Answered on the dashboard, and recorded so (never `terminal`).
    assert_eq!(v["approver"], "dashboard", "{v}");
    let (_, log) = api.get("/api/actions?decision=ask").await;
    assert_eq!(log["actions"][0]["approver"], "dashboard", "{log}");
    while !seen.contains("event: removed") {
        let chunk = tokio::time::timeout(WAIT, stream.chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    // Feedback: denied, and the agent gets the words.
    let a = api.clone();
    let waiting = tokio::spawn(async move {
        a.evaluate(&http("h2", "POST", "https://api.example.com/y", "s1"))
            .await
    });
    api.wait_pending("h2").await;
    let (s, _) = api
        .post(
            "/api/pending-actions/h2/decision",
            api.admin(),
            &json!({"decision": "feedback", "reason": "use the sandbox URL"}),
        )
        .await;
    assert_eq!(s, 200);
    let v = waiting.await.unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["outcome"], "corrected");
    assert_eq!(v["feedback"], "use the sandbox URL");
    // "always": allowed now and for the rest of the session, without asking.
    let a = api.clone();
    let waiting = tokio::spawn(async move {
        a.evaluate(&http("h3", "POST", "https://api.example.com/z", "s2"))
            .await
    });
    api.wait_pending("h3").await;
    api.post(
        "/api/pending-actions/h3/decision",
        api.admin(),
        &json!({"decision": "always"}),
    )
    .await;
    assert_eq!(waiting.await.unwrap()["outcome"], "approved-always-session");
    let v = api
        .evaluate(&http("h4", "POST", "https://api.example.com/z", "s2"))
        .await;
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["source"], "session");
    // The log has the outcomes.
    let (_, log) = api.get("/api/actions?decision=ask").await;
    let outcomes: Vec<&str> = log["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["approved-always-session", "corrected", "approved-once"]
    );
    drop(stream);
    let api = std::sync::Arc::try_unwrap(api).ok().unwrap();
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_ask_times_out_to_on_timeout() {
    let env = Env::new();
    let api = env.start().await;
    api.put_rule(
        &json!({"id": "ask-allow", "decision": "ask", "timeout": 1, "on_timeout": "allow",
        "when": {"type": "http.request", "http.method": "PUT"}}),
    )
    .await;
    api.put_rule(&json!({"id": "ask-deny", "decision": "ask", "timeout": 1,
        "when": {"type": "http.request", "http.method": "PATCH"}}))
        .await;
    let t = Instant::now();
    let v = api.evaluate(&http("t1", "PUT", "https://x/", "s")).await;
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["outcome"], "timeout-allow");
    let v = api.evaluate(&http("t2", "PATCH", "https://x/", "s")).await;
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["outcome"], "timeout-deny");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("no answer within 1s")
    );
    // Too late: the entry is gone.
    let (s, _) = api
        .post(
            "/api/pending-actions/t2/decision",
            api.admin(),
            &json!({"decision": "once"}),
        )
        .await;
    assert_eq!(s, 409);
    let (s, _) = api
        .post(
            "/api/pending-actions/never/decision",
            api.admin(),
            &json!({"decision": "once"}),
        )
        .await;
    assert_eq!(s, 404);
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_decisions_on_one_pending_action_exactly_one_wins() {
    let env = Env::new();
    let api = std::sync::Arc::new(env.start().await);
    for round in 0..5 {
        let id = format!("c{round}");
        let a = api.clone();
        let body = json!({"action": {"id": id, "type": "tool.call", "facets": {"tool": {"name": "Bash", "input": {}}},
            "session": {"id": "s"}}, "rule": "r", "reason": "why", "timeout_secs": 15, "on_timeout": "deny"});
        let waiting =
            tokio::spawn(async move { a.post("/api/pending-actions", a.agent(), &body).await });
        api.wait_pending(&id).await;
        let mut tasks = Vec::new();
        for i in 0..8 {
            let a = api.clone();
            let id = id.clone();
            let d = if i % 2 == 0 { "once" } else { "reject" };
            tasks.push(tokio::spawn(async move {
                a.post(
                    &format!("/api/pending-actions/{id}/decision"),
                    a.admin(),
                    &json!({"decision": d}),
                )
                .await
            }));
        }
        let (codes, winner) = support::statuses_and_winner(tasks).await;
        assert_eq!(codes, [200, 409, 409, 409, 409, 409, 409, 409]);
        let (s, v) = waiting.await.unwrap();
        assert_eq!(s, 200);
        assert_eq!(
            v["answer"].as_str(),
            winner.as_deref(),
            "the adapter gets the winner's answer"
        );
    }
    let api = std::sync::Arc::try_unwrap(api).ok().unwrap();
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn action_log_filters_paging_and_agent_visibility() {
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        "version: 1\ndefault: allow\ndeny:\n  - {id: d, command: \"rm *\"}\n",
    );
    let api = env.start().await;
    for i in 0..7 {
        let cmd = if i % 2 == 0 { "ls" } else { "rm x" };
        api.evaluate(&shell(
            &format!("l{i}"),
            cmd,
            &env.proj,
            if i < 4 { "sa" } else { "sb" },
        ))
        .await;
    }
    // A record decided elsewhere, by another agent token.
    let other =
        aileron_server::create_token(&api.server.app.db, aileron_server::auth::Role::Agent, None)
            .await
            .unwrap();
    let rec = json!({"time": "2020-01-01T10:00:00Z", "session": "sc", "adapter": "hook:claude-code",
        "action": {"id": "x1", "type": "fs.read", "summary": "read /etc/hosts", "facets": {"fs": {"path": "/etc/hosts"}}},
        "decision": "allow", "source": "static", "rule": "r", "reason": "reads", "latency_us": 10});
    let (s, v) = api.post("/api/actions", &other, &rec).await;
    assert_eq!(s, 200, "{v}");
    let (s, _) = api
        .post("/api/actions", &other, &json!({"time": "x"}))
        .await;
    assert_eq!(s, 400);
    let (_, all) = api.get("/api/actions").await;
    assert_eq!(all["actions"].as_array().unwrap().len(), 8);
    let (_, deny) = api.get("/api/actions?decision=deny&session=sa").await;
    assert_eq!(deny["actions"].as_array().unwrap().len(), 2);
    let (_, t) = api.get("/api/actions?type=fs.read").await;
    assert_eq!(t["actions"][0]["action"]["id"], "x1");
    let (_, since) = api.get("/api/actions?since=1h").await;
    assert_eq!(
        since["actions"].as_array().unwrap().len(),
        7,
        "the record of 2020 is older"
    );
    let (_, until) = api.get("/api/actions?until=2020-01-02").await;
    assert_eq!(until["actions"].as_array().unwrap().len(), 1);
    // Paging: 3 + 3 + 2, newest first, no overlap.
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..5 {
        let q = match &cursor {
            Some(c) => format!("/api/actions?limit=3&cursor={c}"),
            None => "/api/actions?limit=3".to_owned(),
        };
        let (_, page) = api.get(&q).await;
        ids.extend(
            page["actions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["seq"].as_i64().unwrap()),
        );
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(ids.len(), 8);
    assert!(ids.windows(2).all(|w| w[0] > w[1]));
    // An agent token sees only what it submitted.
    let (_, mine) = api
        .post("/api/evaluate", &other, &shell("o1", "ls", &env.proj, "sc"))
        .await;
    assert_eq!(mine["decision"], "allow");
    let r = api
        .req(Method::GET, "/api/actions", Some(&other))
        .send()
        .await
        .unwrap();
    let (_, v) = json_of(r).await;
    assert_eq!(v["actions"].as_array().unwrap().len(), 2, "{v}");
    let (s, v) = api.post("/api/evaluate", &other, &json!({})).await;
    assert_eq!(s, 400, "{v}");
    // Preview over the log: would have matched.
    let (s, v) = api
        .post(
            "/api/rules/preview",
            api.admin(),
            &json!({"draft": {"decision": "deny", "when": {"shell.binary": "rm"}}, "lookbackLimit": 100000}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["matched"], 3);
    assert_eq!(v["total"], 9);
    assert_eq!(v["samples"].as_array().unwrap().len(), 3);
    assert_eq!(v["samples"][0]["sessionId"], "sb");
    let (_, v) = api
        .post(
            "/api/rules/preview",
            api.admin(),
            &json!({"draft": {"decision": "deny", "when": {"fs.path": {"path": "/etc/*"}}}}),
        )
        .await;
    assert_eq!(
        v["matched"], 1,
        "a record sent by an adapter is previewed too: {v}"
    );
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn restart_keeps_rules_actions_and_tokens() {
    let env = Env::new();
    let api = env.start().await;
    let admin = api.admin().to_owned();
    api.put_rule(
        &json!({"id": "keep", "label": "kept", "decision": "deny", "command": "shutdown *"}),
    )
    .await;
    let approver = aileron_server::create_token(
        &api.server.app.db,
        aileron_server::auth::Role::Approver,
        Some("bob"),
    )
    .await
    .unwrap();
    let v = api
        .evaluate(&shell("k1", "shutdown now", &env.proj, "s"))
        .await;
    assert_eq!(v["decision"], "deny");
    api.server.shutdown().await;
    let api = env.start().await;
    assert!(!api.server.first_start);
    assert_eq!(api.admin(), admin, "the same admin token");
    let r = api
        .req(Method::GET, "/api/rules/keep", Some(&approver))
        .send()
        .await
        .unwrap();
    let (s, v) = json_of(r).await;
    assert_eq!(s, 200, "the approver token still works: {v}");
    assert_eq!(v["label"], "kept");
    let (_, log) = api.get("/api/actions").await;
    assert_eq!(log["actions"][0]["action"]["id"], "k1");
    let v = api
        .evaluate(&shell("k2", "shutdown now", &env.proj, "s"))
        .await;
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["rule"], "keep");
    assert_eq!(api.server.app.db.integrity_check().await.unwrap(), "ok");
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn webhook_approvers_verify_signatures() {
    use hmac::{Hmac, Mac};
    let env = Env::new();
    std::fs::create_dir_all(&env.data).unwrap();
    std::fs::write(
        env.data.join("approvers.json"),
        r#"[{"id": "chat", "name": "Team chat", "secret": "s3cret"}]"#,
    )
    .unwrap();
    let api = std::sync::Arc::new(env.start().await);
    let (_, v) = api.get("/api/approvers").await;
    assert_eq!(v["human"][1]["id"], "chat");
    let a = api.clone();
    let body = json!({"action": {"id": "w1", "type": "tool.call", "facets": {"tool": {"name": "x"}}},
        "timeout_secs": 15});
    let waiting =
        tokio::spawn(async move { a.post("/api/pending-actions", a.agent(), &body).await });
    api.wait_pending("w1").await;
    let sign = |secret: &str, body: &[u8]| {
        let mut m = <Hmac<sha2::Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap();
        m.update(body);
        let bytes = m.finalize().into_bytes();
        format!(
            "sha256={}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        )
    };
    let payload = br#"{"id": "w1", "decision": "reject", "reason": "not now"}"#;
    let send = |path: &str, sig: Option<String>| {
        let mut r = api
            .client
            .post(api.url(path))
            .header("content-type", "application/json")
            .body(payload.to_vec());
        if let Some(s) = sig {
            r = r.header("x-aileron-signature", s);
        }
        r.send()
    };
    assert_eq!(
        send("/api/approvers/chat/decision", None)
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        send("/api/approvers/chat/decision", Some(sign("wrong", payload)))
            .await
            .unwrap()
            .status(),
        401
    );
    assert_eq!(
        send(
            "/api/approvers/nobody/decision",
            Some(sign("s3cret", payload))
        )
        .await
        .unwrap()
        .status(),
        404
    );
    assert_eq!(
        send("/api/approvers/chat/other", Some(sign("s3cret", payload)))
            .await
            .unwrap()
            .status(),
        404
    );
    let r = send(
        "/api/approvers/chat/decision",
        Some(sign("s3cret", payload)),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 200);
    let (s, v) = waiting.await.unwrap();
    assert_eq!(s, 200);
    assert_eq!(
        v,
        json!({"id": "w1", "answer": "reject", "reason": "not now", "reviewer": "chat"})
    );
    let r = send(
        "/api/approvers/chat/decision",
        Some(sign("s3cret", payload)),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 409);
    let api = std::sync::Arc::try_unwrap(api).ok().unwrap();
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn catalogs_and_openapi() {
    let env = Env::new();
    let api = env.start().await;
    let (s, v) = api.get("/api/action-schemas").await;
    assert_eq!(s, 200);
    let types: Vec<&str> = v["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["type"].as_str().unwrap())
        .collect();
    assert!(types.contains(&"shell.exec") && types.contains(&"http.request"));
    let http = v["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["type"] == "http.request")
        .unwrap();
    assert_eq!(http["facets"], json!(["http", "git", "k8s", "llm", "ws"]));
    for field in [
        "http.body_size",
        "git.operation",
        "k8s.namespace",
        "llm.max_tokens",
        "ws.url",
    ] {
        assert!(
            http["fields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == field),
            "{field}"
        );
    }
    assert_eq!(v["facets"]["k8s"][0], "verb");
    // The MCP gateway's fields.
    let mcp = v["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["type"] == "mcp.call")
        .unwrap();
    for field in ["mcp.annotations", "mcp.resource", "mcp.prompt"] {
        assert!(
            mcp["fields"].as_array().unwrap().iter().any(|f| f == field),
            "{field}"
        );
    }
    assert!(
        v["operators"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o == "glob")
    );
    let (s, v) = api.get("/api/openapi.json").await;
    assert_eq!(s, 200);
    assert_eq!(v["openapi"], "3.1.0");
    for (_, path) in AGENT_ENDPOINTS.iter().chain(APPROVER_ENDPOINTS) {
        let p = path.replace("/x/", "/{id}/");
        let p = if p == "/api/rules/x" {
            "/api/rules/{id}".to_owned()
        } else {
            p
        };
        assert!(v["paths"].get(&p).is_some(), "{p}");
    }
    api.server.shutdown().await;
}

#[allow(dead_code)]
fn _assert_api_is_send(a: Api) -> impl Send {
    a
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_windows_count_the_sessions_history_even_across_a_restart() {
    let env = Env::new();
    env.write("proj/aileron.yaml", "version: 1\ndefault: allow\n");
    let api = env.start().await;
    let (s, v) = api
        .put_rule(
            &json!({"id": "too-many", "decision": "deny", "priority": 300,
            "when": {"type": "http.request", "rate": {"more_than": 2, "seconds": 600}}}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    let mut decisions = Vec::new();
    for i in 0..4 {
        let mut a = http(&format!("r{i}"), "GET", "https://x/", "rs");
        a["session"]["cwd"] = json!(env.proj);
        decisions.push(api.evaluate(&a).await["decision"].clone());
    }
    assert_eq!(decisions.last().unwrap(), "deny", "{decisions:?}");
    assert_eq!(decisions[0], "allow");
    // Another session is not counted.
    let mut a = http("other", "GET", "https://x/", "rs2");
    a["session"]["cwd"] = json!(env.proj);
    assert_eq!(api.evaluate(&a).await["decision"], "allow");
    api.server.shutdown().await;
    let api = env.start().await;
    let mut a = http("r9", "GET", "https://x/", "rs");
    a["session"]["cwd"] = json!(env.proj);
    let v = api.evaluate(&a).await;
    assert_eq!(
        v["decision"], "deny",
        "the history came back from the log: {v}"
    );
    assert_eq!(v["rule"], "too-many");
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rules_written_by_another_process_are_picked_up() {
    let env = Env::new();
    let api = env.start().await;
    // Another writer on the same database (as `aileron rules import` is).
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let db = aileron_server::db::Db::open(&env.config().database_url())
        .await
        .unwrap();
    let other = aileron_server::app::App::new(env.config(), db, rx)
        .await
        .unwrap();
    let entry = aileron_config::server_rules::RuleEntry::from_mapping(
        json!({"id": "from-cli", "decision": "deny", "command": "make *"})
            .as_object()
            .unwrap()
            .clone(),
    );
    other.upsert_rules(vec![entry], None).await.unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        let (s, _) = api.get("/api/rules/from-cli").await;
        if s == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "never picked up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let v = api.evaluate(&shell("m1", "make all", &env.proj, "s")).await;
    assert_eq!(v["rule"], "from-cli", "{v}");
    other.db.close().await;
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn always_and_reject_cascade_over_the_sessions_waiting_actions() {
    let env = Env::new();
    let api = std::sync::Arc::new(env.start().await);
    api.put_rule(&json!({"id": "ask-del", "decision": "ask", "timeout": 15,
        "when": {"type": "http.request", "http.method": "DELETE"}}))
        .await;
    let spawn = |id: &str, url: &str, session: &str| {
        let a = api.clone();
        let action = http(id, "DELETE", url, session);
        tokio::spawn(async move { a.evaluate(&action).await })
    };
    // always: the same action waiting twice in the session; one answer approves both.
    let first = spawn("x1", "https://x/1", "sa");
    api.wait_pending("x1").await;
    let second = spawn("x2", "https://x/1", "sa");
    api.wait_pending("x2").await;
    let other = spawn("x3", "https://x/2", "sa");
    api.wait_pending("x3").await;
    let (s, _) = api
        .post(
            "/api/pending-actions/x1/decision",
            api.admin(),
            &json!({"decision": "always"}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(first.await.unwrap()["decision"], "allow");
    let v = second.await.unwrap();
    assert_eq!(v["decision"], "allow", "{v}");
    assert!(!other.is_finished(), "a different action still waits");
    // reject: every other waiting action of the session is rejected too.
    let fourth = spawn("x4", "https://x/4", "sa");
    api.wait_pending("x4").await;
    let elsewhere = {
        let a = api.clone();
        let action = http("y1", "DELETE", "https://x/4", "sb");
        tokio::spawn(async move { a.post("/api/evaluate", a.agent(), &action).await })
    };
    api.wait_pending("y1").await;
    let (s, _) = api
        .post(
            "/api/pending-actions/x3/decision",
            api.admin(),
            &json!({"decision": "reject"}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(other.await.unwrap()["outcome"], "rejected");
    let v = fourth.await.unwrap();
    assert_eq!(v["decision"], "deny");
    assert!(
        v["reason"].as_str().unwrap().contains("earlier request"),
        "{v}"
    );
    assert!(!elsewhere.is_finished(), "another session is not touched");
    // Shutdown answers what still waits 503, undecided: send it again.
    api.server.shutdown().await;
    let (s, v) = elsewhere.await.unwrap();
    assert_eq!(s, 503, "{v}");
    assert!(v["error"].as_str().unwrap().contains("not decided"), "{v}");
}

/// Reads one HTTP/1.1 request (head and body) and answers 200.
async fn accept_one(listener: &tokio::net::TcpListener) -> (String, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (mut s, _) = tokio::time::timeout(WAIT, listener.accept())
        .await
        .unwrap()
        .unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(WAIT, s.read(&mut chunk))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "closed early");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if buf.len() >= end + 4 + len {
                let body = buf[end + 4..end + 4 + len].to_vec();
                s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await
                    .unwrap();
                return (head, body);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_webhook_approver_is_notified_and_answers_through_its_callback() {
    use hmac::{Hmac, Mac};
    let env = Env::new();
    let chat = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    std::fs::create_dir_all(&env.data).unwrap();
    std::fs::write(
        env.data.join("approvers.json"),
        json!([{"id": "chat", "secret": "k3y", "url": format!("http://{}/hook", chat.local_addr().unwrap())}]).to_string(),
    )
    .unwrap();
    let api = std::sync::Arc::new(env.start().await);
    api.put_rule(
        &json!({"id": "ask-chat", "decision": "ask", "approver": "chat", "timeout": 15,
        "when": {"type": "mcp.call", "mcp.tool": "delete_repo"}}),
    )
    .await;
    let a = api.clone();
    let waiting = tokio::spawn(async move {
        a.evaluate(&json!({"id": "n1", "type": "mcp.call", "facets": {"mcp": {"server": "github", "tool": "delete_repo", "arguments": {}}}}))
            .await
    });
    let (head, body) = accept_one(&chat).await;
    assert!(head.starts_with("post /hook "), "{head}");
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(b"k3y").unwrap();
    mac.update(&body);
    let want: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        head.contains(&format!("x-aileron-signature: sha256={want}")),
        "{head}"
    );
    let note: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(note["pending"]["id"], "n1");
    assert_eq!(note["pending"]["approver"], "chat");
    let callback = note["callback"].as_str().unwrap().to_owned();
    assert_eq!(
        callback,
        format!("{}/api/approvers/chat/decision", api.server.url)
    );
    // The chat service answers.
    let answer = br#"{"id": "n1", "decision": "once", "reviewer": "carol"}"#;
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(b"k3y").unwrap();
    mac.update(answer);
    let sig: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let r = api
        .client
        .post(&callback)
        .header("x-aileron-signature", format!("sha256={sig}"))
        .body(answer.to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v = waiting.await.unwrap();
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["reviewer"], "carol");
    // The answer came through the webhook approver.
    assert_eq!(v["approver"], "chat", "{v}");
    api.server.shutdown().await;
}

/// "Always" answered on the dashboard pins what the terminal's "exactly"
/// pins: the command as the human saw it, not its program or a prefix.
#[tokio::test(flavor = "multi_thread")]
async fn always_on_the_dashboard_pins_the_command_as_the_terminal_does() {
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        "version: 1\ndefault: deny\nask:\n  - {id: ask-push, command: \"git push *\", priority: 100, timeout: 15}\n",
    );
    let api = std::sync::Arc::new(env.start().await);
    let proj = env.proj.clone();
    let a = api.clone();
    let first = tokio::spawn(async move {
        a.evaluate(&shell("p1", "git push origin main", &proj, "s"))
            .await
    });
    api.wait_pending("p1").await;
    let (s, _) = api
        .post(
            "/api/pending-actions/p1/decision",
            api.admin(),
            &json!({"decision": "always"}),
        )
        .await;
    assert_eq!(s, 200);
    let v = first.await.unwrap();
    assert_eq!(v["outcome"], "approved-always-session", "{v}");
    assert_eq!(v["approver"], "dashboard", "{v}");
    // The same command: allowed by the session's approval, above the ask rule.
    let v = api
        .evaluate(&shell("p2", "git push origin main", &env.proj, "s"))
        .await;
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["rule"], "session:always[0]", "{v}");
    // Another push is still the rule's to ask.
    let proj = env.proj.clone();
    let a = api.clone();
    let other = tokio::spawn(async move {
        a.evaluate(&shell("p3", "git push origin dev", &proj, "s"))
            .await
    });
    api.wait_pending("p3").await;
    api.post(
        "/api/pending-actions/p3/decision",
        api.admin(),
        &json!({"decision": "reject"}),
    )
    .await;
    assert_eq!(other.await.unwrap()["decision"], "deny");
    let api = std::sync::Arc::try_unwrap(api).ok().unwrap();
    api.server.shutdown().await;
}
