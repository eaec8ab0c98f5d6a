//! `judge` rules through `POST /api/evaluate` against fake OpenAI-compatible
//! and Anthropic servers on 127.0.0.1: allowed, denied, escalated to the
//! dashboard's queue (a person answers), failing closed when the provider
//! is slow or down, and a verdict reused from the server's database (also
//! after a restart) with no second request to the provider. The API key is
//! in no API answer, the action log or the audit log.

#[path = "support/fake_llm.rs"]
mod fake_llm;
mod support;

use aileron_server::{JudgeKeys, Server};
use fake_llm::{Fake, KEY, Wire, closed_url};
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{Api, Env, shell};

/// A project policy: `make *` is judged by `fast` at `url` (its key in
/// `JUDGE_KEY`); `extra` is added to the rule.
fn policy(provider: &str, url: &str, extra: &str) -> String {
    format!(
        "version: 1\ndefault: allow\nsettings: {{timeout: 20}}\njudges:\n  fast: {{provider: {provider}, base_url: \"{url}\", model: judge-model, api_key_env: JUDGE_KEY, timeout: 2}}\njudge:\n  - {{id: judge-make, command: \"make *\", prompt: \"Allow only building.\"{extra}}}\n"
    )
}

/// A server whose judges read their key from the test, not the environment.
async fn start(env: &Env) -> Api {
    let mut cfg = env.config();
    cfg.judge_keys = Some(JudgeKeys::new([("JUDGE_KEY".into(), KEY.into())]));
    Api::new(Server::start(cfg).await.expect("server starts"))
}

/// The newest record of the action log for `id`.
async fn logged(api: &Api, id: &str) -> Value {
    let (_, v) = api.get("/api/actions?limit=1000").await;
    v["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["action"]["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id} is not in the log: {v}"))
}

/// The key is nowhere a person or a log can read it: the API's answers
/// (the log, the queue, the approvers, the rules) and the audit log.
async fn assert_no_key(api: &Api, env: &Env, answers: &[&Value]) {
    let mut texts: Vec<String> = answers.iter().map(|v| v.to_string()).collect();
    for path in [
        "/api/actions?limit=1000",
        "/api/pending-actions",
        "/api/approvers",
        "/api/rules",
    ] {
        let (status, v) = api.get(path).await;
        assert_eq!(status, 200, "{path}: {v}");
        texts.push(v.to_string());
    }
    texts.push(std::fs::read_to_string(env.proj.join(".aileron/audit.jsonl")).unwrap_or_default());
    for t in texts {
        assert!(!t.contains(KEY), "the key leaked: {t}");
        assert!(!t.contains("SECRET"), "part of the key leaked: {t}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_judge_allows_and_denies_an_evaluated_action() {
    let fake = Fake::start(Wire::OpenAi, Duration::ZERO, |seen| {
        if seen.user_text().contains("make deploy") {
            json!({"decision": "deny", "reason": "deploys to production"})
        } else {
            json!({"decision": "allow", "reason": "builds the project"})
        }
    });
    let env = Env::new();
    env.write("proj/aileron.yaml", &policy("openai", &fake.base_url, ""));
    let api = start(&env).await;

    let allowed = api
        .evaluate(&shell("j1", "make build", &env.proj, "s1"))
        .await;
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    assert_eq!(allowed["source"], "llm");
    assert_eq!(allowed["approver"], "judge:fast");
    assert_eq!(allowed["rule"], "judge-make");
    assert_eq!(allowed["outcome"], "judge-allowed");
    assert_eq!(allowed["verdict"]["decision"], "judge");
    assert_eq!(allowed["reason"], "judge fast: builds the project");

    let denied = api
        .evaluate(&shell("j2", "make deploy", &env.proj, "s1"))
        .await;
    assert_eq!(denied["decision"], "deny", "{denied}");
    assert_eq!(denied["outcome"], "judge-denied");
    assert_eq!(denied["reason"], "judge fast: deploys to production");

    // The request: the key in its header, the action as data.
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    assert!(
        seen[0]
            .headers
            .iter()
            .any(|h| h == &format!("authorization: Bearer {KEY}")),
        "{:?}",
        seen[0].headers
    );
    let user = seen[0].user_text();
    assert!(user.contains("Allow only building."), "{user}");
    assert!(user.contains("\"summary\":\"make build\""), "{user}");

    // The log and the audit line: who decided and what it cost.
    let rec = logged(&api, "j1").await;
    assert_eq!(rec["source"], "llm", "{rec}");
    assert_eq!(rec["judge"]["name"], "fast");
    assert_eq!(rec["judge"]["model"], "judge-model");
    assert_eq!(rec["judge"]["verdict"], "allow");
    assert_eq!(rec["judge"]["cached"], false);
    assert_eq!(rec["judge"]["prompt_tokens"], 250);
    assert_eq!(rec["judge"]["completion_tokens"], 9);
    assert!(rec["judge"]["latency_ms"].is_u64(), "{rec}");
    assert_eq!(logged(&api, "j2").await["judge"]["verdict"], "deny");
    let audit = std::fs::read_to_string(env.proj.join(".aileron/audit.jsonl")).unwrap();
    let line: Value = serde_json::from_str(audit.lines().next().unwrap()).unwrap();
    assert_eq!(line["judge"]["prompt_tokens"], 250, "{line}");
    assert_eq!(line["outcome"], "judge-allowed");

    // The dashboard can offer the policy's judges (never their keys).
    let (_, approvers) = api.get("/api/approvers").await;
    assert_eq!(
        approvers["llm"],
        json!([{"id": "fast", "name": "fast", "kind": "judge", "provider": "openai", "model": "judge-model"}]),
        "{approvers}"
    );
    assert_no_key(&api, &env, &[&allowed, &denied]).await;
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_judge_s_ask_waits_in_the_queue_with_its_reason_and_a_person_decides() {
    let fake = Fake::always(
        Wire::Anthropic,
        Duration::ZERO,
        json!({"decision": "ask", "reason": "cannot tell what clean removes"}),
    );
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        &policy("anthropic", &fake.base_url, ""),
    );
    let api = std::sync::Arc::new(start(&env).await);

    // A person allows the first one.
    let a = api.clone();
    let action = shell("k1", "make clean", &env.proj, "s1");
    let waiting = tokio::spawn(async move { a.evaluate(&action).await });
    let entry = api.wait_pending("k1").await;
    assert_eq!(
        entry["judge"],
        json!({"name": "fast", "model": "judge-model", "reason": "cannot tell what clean removes"}),
        "{entry}"
    );
    assert_eq!(
        entry["reason"],
        "judge fast: cannot tell what clean removes"
    );
    assert_eq!(entry["rule"], "judge-make");
    // The key went in Anthropic's header, and nowhere a person can see.
    assert!(
        fake.seen()[0]
            .headers
            .iter()
            .any(|h| h == &format!("x-api-key: {KEY}"))
    );
    assert_no_key(&api, &env, &[&entry]).await;
    let (status, v) = api
        .post(
            "/api/pending-actions/k1/decision",
            api.admin(),
            &json!({"decision": "allow", "reviewer": "alice"}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    let out = waiting.await.unwrap();
    assert_eq!(out["decision"], "allow", "{out}");
    assert_eq!(out["source"], "human");
    assert_eq!(out["outcome"], "approved-once");
    assert_eq!(out["reviewer"], "alice");
    assert_eq!(out["verdict"]["decision"], "judge");
    let rec = logged(&api, "k1").await;
    assert_eq!(rec["judge"]["verdict"], "ask", "{rec}");
    assert_eq!(
        rec["judge"]["prompt_tokens"], 310,
        "Anthropic's input_tokens"
    );
    assert_eq!(rec["judge"]["completion_tokens"], 22);

    // A person denies the next one.
    let a = api.clone();
    let action = shell("k2", "make clean all", &env.proj, "s2");
    let waiting = tokio::spawn(async move { a.evaluate(&action).await });
    api.wait_pending("k2").await;
    let (status, _) = api
        .post(
            "/api/pending-actions/k2/decision",
            api.admin(),
            &json!({"decision": "deny"}),
        )
        .await;
    assert_eq!(status, 200);
    let out = waiting.await.unwrap();
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["outcome"], "rejected");
    assert_eq!(fake.requests(), 2);
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_judge_that_is_slow_or_down_fails_closed_with_the_reason() {
    let slow = Fake::always(
        Wire::OpenAi,
        Duration::from_secs(5),
        json!({"decision": "allow", "reason": "late"}),
    );
    let env = Env::new();
    env.write("proj/aileron.yaml", &policy("openai", &slow.base_url, ""));
    let api = start(&env).await;
    let started = Instant::now();
    let out = api
        .evaluate(&shell("t1", "make build", &env.proj, "s1"))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the judge's 2 s timeout held"
    );
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["source"], "llm");
    assert_eq!(out["outcome"], "judge-failed-deny");
    let reason = out["reason"].as_str().unwrap();
    assert!(reason.contains("did not answer within"), "{reason}");
    assert!(reason.contains("fail_closed: true"), "{reason}");
    let rec = logged(&api, "t1").await;
    assert_eq!(rec["judge"]["verdict"], "error", "{rec}");
    assert_eq!(rec["reason"], out["reason"]);
    api.server.shutdown().await;

    // Nothing listens where the provider should be.
    let env = Env::new();
    env.write("proj/aileron.yaml", &policy("openai", &closed_url(), ""));
    let api = start(&env).await;
    let out = api
        .evaluate(&shell("t2", "make build", &env.proj, "s1"))
        .await;
    assert_eq!(out["decision"], "deny", "{out}");
    assert_eq!(out["outcome"], "judge-failed-deny");
    let reason = out["reason"].as_str().unwrap();
    assert!(reason.contains("cannot be reached"), "{reason}");
    assert_no_key(&api, &env, &[&out]).await;
    api.server.shutdown().await;

    // `fail_closed: false`: the same failure allows, and says so.
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        &policy("openai", &closed_url(), ", fail_closed: false"),
    );
    let api = start(&env).await;
    let out = api
        .evaluate(&shell("t3", "make build", &env.proj, "s1"))
        .await;
    assert_eq!(out["decision"], "allow", "{out}");
    assert_eq!(out["outcome"], "judge-failed-allow");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .contains("fail_closed: false")
    );
    api.server.shutdown().await;
}

/// Runs SQL on the server's SQLite file.
async fn sql(api: &Api, query: &str) {
    let aileron_server::db::Db::Sqlite(pool) = &api.server.app.db else {
        panic!("SQLite expected")
    };
    sqlx::query(query).execute(pool).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_verdict_is_reused_from_the_database_also_after_a_restart() {
    let fake = Fake::always(
        Wire::OpenAi,
        Duration::ZERO,
        json!({"decision": "allow", "reason": "builds the project"}),
    );
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        &policy("openai", &fake.base_url, ", cache_ttl: 3600"),
    );
    let api = start(&env).await;
    let first = api
        .evaluate(&shell("c1", "make build", &env.proj, "s1"))
        .await;
    assert_eq!(first["decision"], "allow", "{first}");
    // The same action (another id, another session): no second request.
    let second = api
        .evaluate(&shell("c2", "make build", &env.proj, "s2"))
        .await;
    assert_eq!(second["decision"], "allow", "{second}");
    assert_eq!(second["source"], "llm");
    assert_eq!(fake.requests(), 1);
    assert_eq!(logged(&api, "c1").await["judge"]["cached"], false);
    let rec = logged(&api, "c2").await;
    assert_eq!(rec["judge"]["cached"], true, "{rec}");
    assert_eq!(rec["judge"]["verdict"], "allow");
    // Another action is judged.
    api.evaluate(&shell("c3", "make test", &env.proj, "s2"))
        .await;
    assert_eq!(fake.requests(), 2);
    api.server.shutdown().await;

    // A new server on the same SQLite file: still no request.
    let api = start(&env).await;
    let third = api
        .evaluate(&shell("c4", "make build", &env.proj, "s3"))
        .await;
    assert_eq!(third["decision"], "allow", "{third}");
    assert_eq!(fake.requests(), 2, "the verdict came from the database");
    let rec = logged(&api, "c4").await;
    assert_eq!(rec["judge"]["cached"], true, "{rec}");
    let audit = std::fs::read_to_string(env.proj.join(".aileron/audit.jsonl")).unwrap();
    let line: Value = serde_json::from_str(audit.lines().last().unwrap()).unwrap();
    assert_eq!(line["judge"]["cached"], true, "{line}");
    assert_eq!(line["source"], "llm");
    api.server.shutdown().await;

    // A row that is not a verdict, or has expired, is never trusted: the
    // model is asked again (each time after a restart, so the memory
    // cache has nothing either).
    for (n, corrupt) in [
        "UPDATE judge_verdicts SET decision = 'allow-ish'",
        "UPDATE judge_verdicts SET reason = ''",
        "UPDATE judge_verdicts SET expires_at = 1",
    ]
    .into_iter()
    .enumerate()
    {
        let api = start(&env).await;
        sql(&api, corrupt).await;
        let before = fake.requests();
        let id = format!("x{n}");
        let out = api
            .evaluate(&shell(&id, "make build", &env.proj, "s4"))
            .await;
        assert_eq!(out["decision"], "allow", "{out}");
        assert_eq!(fake.requests(), before + 1, "{corrupt}: asked again");
        assert_eq!(logged(&api, &id).await["judge"]["cached"], false);
        api.server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_verdict_table_is_bounded_and_drops_expired_rows() {
    let env = Env::new();
    let api = start(&env).await;
    support::check_judge_verdicts(&api.server.app.db);
    let aileron_server::db::Db::Sqlite(pool) = &api.server.app.db else {
        panic!("SQLite expected")
    };
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM judge_verdicts")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(rows, 3);
    api.server.shutdown().await;
}

/// A rule naming a judge the server's policy does not define is refused
/// with the loader's message; one naming a defined judge is stored with
/// its judge fields.
#[tokio::test(flavor = "multi_thread")]
async fn stored_rules_name_a_judge_of_the_server_s_policy() {
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        &policy("openai", "http://127.0.0.1:9/v1", ""),
    );
    let api = start(&env).await;
    let rule = json!({
        "id": "judge-deploys", "decision": "judge", "judge": "fast",
        "prompt": "Only staging.", "cache_ttl": 600, "fail_closed": false,
        "when": {"type": "shell.exec", "shell.command": {"glob": "deploy *"}},
    });
    let (status, v) = api.put_rule(&rule).await;
    assert_eq!(status, 200, "{v}");
    let (_, got) = api.get("/api/rules/judge-deploys").await;
    for k in ["judge", "prompt", "cache_ttl", "fail_closed"] {
        assert_eq!(got[k], rule[k], "{k}: {got}");
    }
    let mut bad = rule.clone();
    bad["id"] = json!("judge-typo");
    bad["judge"] = json!("fsat");
    let (status, v) = api.put_rule(&bad).await;
    assert_eq!(status, 400, "{v}");
    let error = v["error"].as_str().unwrap();
    assert!(
        error.contains("names judge `fsat`, which no `judges:` defines; defined: fast"),
        "{error}"
    );
    assert!(error.starts_with("rules/judge-typo:"), "{error}");
    let (status, _) = api
        .req(Method::GET, "/api/rules/judge-typo", Some(api.admin()))
        .send()
        .await
        .map(|r| (r.status().as_u16(), ()))
        .unwrap();
    assert_eq!(status, 404, "nothing stored");
    api.server.shutdown().await;
}
