//! Operating the server: `/healthz`, `/readyz` (and 503 when the database
//! is gone: a SQLite file removed, a PostgreSQL stopped), `/metrics` moving
//! with evaluations, judge calls and asks, request ids, the retention
//! pruning while evaluations are answered, and the drain of a shutdown.
//! The SIGTERM of a real `aileron serve` is in aileron-cli's tests/serve.rs.

#[path = "support/fake_llm.rs"]
mod fake_llm;
mod support;

// The database gateway's tests start their clusters the same way.
#[path = "../../aileron-postgres/tests/support/cluster.rs"]
mod cluster;

use aileron_server::db::{ActionQuery, ActionRow, Db};
use aileron_server::retention::{self, Retention};
use aileron_server::{JudgeKeys, Server};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use support::{Api, Env, WAIT, shell};

const POLICY: &str = "version: 1\ndefault: allow\nsettings: {timeout: 20}\ndeny:\n  - {id: no-rm, command: \"rm *\"}\nask:\n  - {id: ask-push, command: \"git push *\"}\n";

/// The samples of a Prometheus text exposition: `name{labels}` → value.
fn samples(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').expect("a sample: NAME VALUE");
            (k.to_owned(), v.parse().expect("a number"))
        })
        .collect()
}

async fn metrics(api: &Api) -> HashMap<String, f64> {
    let r = api
        .req(Method::GET, "/metrics", Some(api.agent()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    samples(&r.text().await.unwrap())
}

/// How much each of `keys` moved from `before` to `after`.
fn moved(before: &HashMap<String, f64>, after: &HashMap<String, f64>, key: &str) -> f64 {
    after.get(key).copied().unwrap_or(0.0) - before.get(key).copied().unwrap_or(0.0)
}

/// Posts `body` in a task of its own: the status, `Retry-After` and the body.
fn post_later(
    api: &Api,
    path: &str,
    body: Value,
) -> tokio::task::JoinHandle<(u16, Option<String>, Value)> {
    let request = api
        .req(Method::POST, path, Some(api.agent()))
        .json(&body)
        .send();
    tokio::spawn(async move {
        let r = request.await.unwrap();
        let retry = r
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let (status, v) = support::json_of(r).await;
        (status, retry, v)
    })
}

async fn get_text(api: &Api, path: &str, host: Option<&str>) -> (u16, String) {
    let mut r = api.req(Method::GET, path, None);
    if let Some(h) = host {
        r = r.header("host", h);
    }
    let r = r.send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn health_readiness_and_metrics_without_a_browser_credential() {
    let env = Env::new();
    env.write("proj/aileron.yaml", POLICY);
    let api = env.start().await;
    // No token, and any Host: probes name the server by its address.
    for host in [None, Some("10.1.2.3:7878")] {
        assert_eq!(get_text(&api, "/healthz", host).await, (200, "ok\n".into()));
        assert_eq!(get_text(&api, "/readyz", host).await, (200, "ok\n".into()));
    }
    // Metrics need a token (an agent's is enough), whatever the Host.
    let r = api.req(Method::GET, "/metrics", None).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = api
        .req(Method::GET, "/metrics", Some("ail_wrong"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = api
        .req(Method::GET, "/metrics", Some(api.agent()))
        .header("host", "10.1.2.3:7878")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    let before = metrics(&api).await;
    let cwd = &env.proj;
    let mut answers: HashMap<String, f64> = HashMap::new();
    for (i, cmd) in ["ls", "make build", "terraform plan", "rm -rf build"]
        .iter()
        .enumerate()
    {
        let v = api.evaluate(&shell(&format!("m{i}"), cmd, cwd, "ms")).await;
        let key = format!(
            "aileron_decisions_total{{decision={},source={}}}",
            v["decision"], v["source"]
        );
        *answers.entry(key).or_default() += 1.0;
    }
    let (s, _) = api
        .post("/api/evaluate", api.agent(), &json!("not an action"))
        .await;
    assert_eq!(s, 400);
    // An ask: the gauge holds it while it waits.
    let asking = post_later(
        &api,
        "/api/evaluate",
        shell("m-ask", "git push origin main", cwd, "ms"),
    );
    api.wait_pending("m-ask").await;
    let waiting = metrics(&api).await;
    assert_eq!(waiting["aileron_pending_asks"], 1.0);
    let (s, v) = api
        .post(
            "/api/pending-actions/m-ask/decision",
            api.admin(),
            &json!({"decision": "once", "reviewer": "ops"}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(asking.await.unwrap().2["decision"], "allow");
    let after = metrics(&api).await;
    let m = |k: &str| moved(&before, &after, k);
    *answers
        .entry("aileron_decisions_total{decision=\"allow\",source=\"human\"}".into())
        .or_default() += 1.0;
    assert!(answers.contains_key("aileron_decisions_total{decision=\"deny\",source=\"static\"}"));
    for (key, n) in &answers {
        assert_eq!(m(key), *n, "{key}");
    }
    assert_eq!(m("aileron_evaluate_seconds_count"), 5.0);
    assert_eq!(m("aileron_evaluate_seconds_bucket{le=\"+Inf\"}"), 5.0);
    assert!(m("aileron_evaluate_seconds_sum") > 0.0);
    assert_eq!(after["aileron_pending_asks"], 0.0);
    let evaluate = |status: &str| {
        format!(
            "aileron_http_requests_total{{method=\"POST\",route=\"/api/evaluate\",status=\"{status}\"}}"
        )
    };
    assert_eq!(m(&evaluate("200")), 5.0);
    assert_eq!(m(&evaluate("400")), 1.0);
    assert_eq!(
        m(
            "aileron_http_requests_total{method=\"POST\",route=\"/api/pending-actions/{id}/decision\",status=\"200\"}"
        ),
        1.0
    );
    // The buckets are cumulative.
    let buckets: Vec<f64> = after
        .iter()
        .filter(|(k, _)| k.starts_with("aileron_evaluate_seconds_bucket"))
        .map(|(_, v)| *v)
        .collect();
    assert!(buckets.len() > 10);
    assert!(
        buckets
            .iter()
            .all(|b| *b <= after["aileron_evaluate_seconds_count"])
    );
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_public_needs_no_token_but_the_host() {
    let env = Env::new();
    let mut cfg = env.config();
    cfg.metrics_public = true;
    let api = Api::new(Server::start(cfg).await.unwrap());
    let (s, body) = get_text(&api, "/metrics", None).await;
    assert_eq!(s, 200);
    assert!(body.contains("# TYPE aileron_decisions_total counter"));
    let (s, _) = get_text(&api, "/metrics", Some("evil.example")).await;
    assert_eq!(s, 403);
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn judge_calls_are_counted_by_verdict() {
    use fake_llm::{Fake, KEY, Wire};
    let fake = Fake::start(Wire::OpenAi, Duration::ZERO, |seen| {
        if seen.user_text().contains("make deploy") {
            json!({"decision": "deny", "reason": "deploys"})
        } else {
            json!({"decision": "allow", "reason": "builds"})
        }
    });
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        &format!(
            "version: 1\ndefault: allow\njudges:\n  fast: {{provider: openai, base_url: \"{}\", model: m, api_key_env: JUDGE_KEY, timeout: 2}}\njudge:\n  - {{id: judge-make, command: \"make *\"}}\n",
            fake.base_url
        ),
    );
    let mut cfg = env.config();
    cfg.judge_keys = Some(JudgeKeys::new([("JUDGE_KEY".into(), KEY.into())]));
    let api = Api::new(Server::start(cfg).await.unwrap());
    let before = metrics(&api).await;
    for (i, cmd) in ["make build", "make test", "make deploy"]
        .iter()
        .enumerate()
    {
        api.evaluate(&shell(&format!("j{i}"), cmd, &env.proj, "js"))
            .await;
    }
    let after = metrics(&api).await;
    let m = |k: &str| moved(&before, &after, k);
    assert_eq!(m("aileron_judge_calls_total{result=\"allow\"}"), 2.0);
    assert_eq!(m("aileron_judge_calls_total{result=\"deny\"}"), 1.0);
    assert_eq!(
        m("aileron_decisions_total{decision=\"deny\",source=\"llm\"}"),
        1.0
    );
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn request_ids_are_kept_or_made_and_echoed() {
    let env = Env::new();
    let api = env.start().await;
    let id_of = |r: &reqwest::Response| {
        r.headers()
            .get("x-request-id")
            .expect("every answer has a request id")
            .to_str()
            .unwrap()
            .to_owned()
    };
    for (path, token) in [
        ("/healthz", None),
        ("/api/rules", Some(api.admin())),
        ("/api/rules", None),
        ("/nope", None),
    ] {
        let r = api
            .req(Method::GET, path, token)
            .header("x-request-id", "client-abc.123")
            .send()
            .await
            .unwrap();
        assert_eq!(id_of(&r), "client-abc.123", "{path}");
    }
    let r = api
        .req(Method::GET, "/healthz", None)
        .header("x-request-id", "no spaces allowed")
        .send()
        .await
        .unwrap();
    let made = id_of(&r);
    assert_ne!(made, "no spaces allowed");
    assert_eq!(made.len(), 36, "{made}");
    let r = api.req(Method::GET, "/healthz", None).send().await.unwrap();
    let other = id_of(&r);
    assert_eq!(other.len(), 36);
    assert_ne!(made, other);
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn readiness_fails_when_the_sqlite_file_is_gone() {
    let env = Env::new();
    let api = env.start().await;
    assert_eq!(get_text(&api, "/readyz", None).await.0, 200);
    let db = env.data.join("aileron.db");
    let moved_away = env.data.join("elsewhere.db");
    std::fs::rename(&db, &moved_away).unwrap();
    let (s, body) = get_text(&api, "/readyz", None).await;
    assert_eq!(s, 503);
    assert_eq!(body, format!("database: {} is gone\n", db.display()));
    // Liveness is not readiness.
    assert_eq!(get_text(&api, "/healthz", None).await.0, 200);
    std::fs::copy(&moved_away, &db).unwrap();
    let (s, body) = get_text(&api, "/readyz", None).await;
    assert_eq!(s, 503);
    assert_eq!(body, format!("database: {} was replaced\n", db.display()));
    std::fs::remove_file(&db).unwrap();
    std::fs::rename(&moved_away, &db).unwrap();
    assert_eq!(get_text(&api, "/readyz", None).await.0, 200);
    // A server's policy that does not load: not ready, and why.
    env.write("proj/aileron.yaml", "version: 1\ndefault: sometimes\n");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (s, body) = get_text(&api, "/readyz", None).await;
    assert_eq!(s, 503);
    assert!(body.starts_with("the policy does not load: "), "{body}");
    assert_eq!(body.lines().count(), 1, "{body}");
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn readiness_fails_when_postgresql_stops() {
    let Some((cluster, url)) = cluster::Cluster::start() else {
        eprintln!("skipped: no PostgreSQL (install Debian's `postgresql`)");
        return;
    };
    let env = Env::new();
    let mut cfg = env.config();
    cfg.database_url = Some(url);
    let api = Api::new(Server::start(cfg).await.unwrap());
    assert_eq!(get_text(&api, "/readyz", None).await, (200, "ok\n".into()));
    cluster.stop();
    let started = Instant::now();
    let (s, body) = get_text(&api, "/readyz", None).await;
    assert_eq!(s, 503);
    assert!(body.starts_with("database: "), "{body}");
    assert_eq!(body.lines().count(), 1, "{body}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(get_text(&api, "/healthz", None).await.0, 200);
    api.server.shutdown().await;
}

/// A row of the log as the server writes it, at `ts_us`.
fn row(n: usize, ts_us: i64, session: &str) -> ActionRow {
    let time = jiff::Timestamp::from_microsecond(ts_us)
        .unwrap()
        .to_string();
    let id = format!("{session}-{n}");
    let record = json!({"time": time, "session": session, "adapter": "server",
        "action": {"id": id, "type": "shell.exec", "summary": "ls",
            "facets": {"shell": {"command": "ls"}}},
        "decision": "allow", "source": "default", "reason": "r", "latency_us": 1});
    ActionRow {
        action_id: id,
        time,
        ts_us,
        session: Some(session.into()),
        agent: None,
        adapter: "server".into(),
        kind: "shell.exec".into(),
        summary: "ls".into(),
        decision: "allow".into(),
        outcome: None,
        source: "default".into(),
        rule: None,
        reason: "r".into(),
        approver: None,
        latency_us: 1,
        submitted_by: None,
        record: record.to_string(),
        action: None,
    }
}

async fn count(db: &Db, session: &str) -> usize {
    db.actions(&ActionQuery {
        session: Some(session.into()),
        limit: 1_000_000,
        ..Default::default()
    })
    .await
    .unwrap()
    .len()
}

#[tokio::test(flavor = "multi_thread")]
async fn retention_prunes_old_rows_while_evaluations_are_answered() {
    const OLD: usize = 20_000;
    let env = Env::new();
    env.write("proj/aileron.yaml", POLICY);
    // A log with 20,000 actions of two days ago and 10 of now.
    aileron_server::create_private_dir(&env.data).unwrap();
    let url = aileron_server::db::default_url(&env.data);
    let db = Db::open(&url).await.unwrap();
    let two_days_ago = jiff::Timestamp::now().as_microsecond() - 2 * 86_400_000_000;
    let rows: Vec<ActionRow> = (0..OLD).map(|n| row(n, two_days_ago, "old")).collect();
    for chunk in rows.chunks(500) {
        db.insert_actions(chunk.to_vec()).await.unwrap();
    }
    let now = jiff::Timestamp::now().as_microsecond();
    let fresh: Vec<ActionRow> = (0..10).map(|n| row(n, now, "fresh")).collect();
    db.insert_actions(fresh).await.unwrap();
    db.close().await;

    let mut cfg = env.config();
    cfg.retention = Retention::of(&["1d".parse().unwrap()]);
    let api = Api::new(Server::start(cfg).await.unwrap());
    // Evaluations go on while the background task deletes.
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut answered = 0;
    loop {
        let t = Instant::now();
        let v = api
            .evaluate(&shell(&format!("r{answered}"), "ls", &env.proj, "during"))
            .await;
        assert_eq!(v["decision"], "allow", "{v}");
        slowest = slowest.max(t.elapsed());
        answered += 1;
        if count(&api.server.app.db, "old").await == 0 {
            break;
        }
        assert!(started.elapsed() < WAIT, "the old rows are still there");
    }
    assert!(answered >= 5, "pruned too fast to see: {answered}");
    assert!(
        slowest < Duration::from_secs(2),
        "an evaluation waited {slowest:?}"
    );
    assert_eq!(count(&api.server.app.db, "fresh").await, 10);
    assert_eq!(count(&api.server.app.db, "during").await, answered);
    assert_eq!(api.server.app.ops.metrics.pruned_total(), OLD as u64);

    // By count: the newest rows stay.
    let (_tx, stop) = tokio::sync::watch::channel(false);
    let keep = Retention::of(&["5".parse().unwrap()]);
    let n = retention::prune(&api.server.app.db, keep, &stop, |_| {})
        .await
        .unwrap();
    assert_eq!(n, 10 + answered as u64 - 5);
    let left = api
        .server
        .app
        .db
        .actions(&ActionQuery {
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(left.len(), 5);
    let newest: Vec<String> = (answered - 5..answered)
        .rev()
        .map(|i| format!("\"r{i}\""))
        .collect();
    for (r, id) in left.iter().zip(&newest) {
        assert!(r.record.contains(id), "{} should be {id}", r.record);
    }
    api.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_answers_waiting_asks_503_and_leaves_them_undecided() {
    let env = Env::new();
    env.write("proj/aileron.yaml", POLICY);
    let api = env.start().await;
    let waiting = post_later(
        &api,
        "/api/evaluate",
        shell("s-ask", "git push origin main", &env.proj, "ss"),
    );
    api.wait_pending("s-ask").await;
    let adapter = post_later(
        &api,
        "/api/pending-actions",
        json!({"action": shell("s-adapter", "git push", &env.proj, "ss2"),
            "rule": "ask-push", "timeout_secs": 60}),
    );
    api.wait_pending("s-adapter").await;
    let started = Instant::now();
    api.server.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let (status, retry, body) = waiting.await.unwrap();
    assert_eq!(status, 503, "{body}");
    assert_eq!(retry.as_deref(), Some("1"));
    assert!(
        body["error"].as_str().unwrap().contains("not decided"),
        "{body}"
    );
    assert_eq!(adapter.await.unwrap().0, 503);
    // Nothing was decided: neither ask is in the log.
    let db = Db::open(&aileron_server::db::default_url(&env.data))
        .await
        .unwrap();
    assert_eq!(count(&db, "ss").await, 0);
    assert_eq!(count(&db, "ss2").await, 0);
    db.close().await;
}

/// Actions as agents send them: shell lines, file reads and writes, web
/// requests, MCP calls.
fn realistic(i: usize, cwd: &std::path::Path) -> Value {
    let c = cwd.to_string_lossy();
    let session = json!({"id": "measure", "agent": "claude-code", "cwd": c});
    let mut a = match i % 8 {
        0 => {
            json!({"type": "shell.exec", "facets": {"shell": {"command": "cargo test -p aileron-server --test ops -- --nocapture"}}})
        }
        1 => {
            json!({"type": "shell.exec", "facets": {"shell": {"command": "git status --short && git diff --stat"}}})
        }
        2 => {
            json!({"type": "shell.exec", "facets": {"shell": {"command": "rg -n 'fn evaluate' crates/ | head -20"}}})
        }
        3 => {
            json!({"type": "fs.read", "facets": {"fs": {"path": format!("{c}/crates/aileron-server/src/app.rs")}}})
        }
        4 => json!({"type": "fs.write", "facets": {"fs": {"path": format!("{c}/src/lib.rs")}}}),
        5 => {
            json!({"type": "http.request", "facets": {"http": {"method": "GET", "url": "https://docs.rs/axum/latest/axum/middleware/index.html"}}})
        }
        6 => {
            json!({"type": "mcp.call", "facets": {"mcp": {"server": "github", "tool": "create_issue",
            "arguments": {"repo": "aileron-dev/aileron", "title": "readyz: say why", "body": "The probe should name the failing check."}}}})
        }
        _ => {
            json!({"type": "shell.exec", "facets": {"shell": {"command": "npm run build && npm test -- --watch=false"}}})
        }
    };
    a["session"] = session;
    a
}

/// Measures the action log's size per action: a million rows (or
/// `AILERON_MEASURE_ROWS`) copied from realistic decisions of the real
/// path, written through the log's own insert in batches of 256 as the
/// writer does; SQLite, and PostgreSQL where it is installed. Run:
/// `cargo test --release -p aileron-server --test ops -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: a million rows"]
async fn action_log_bytes_per_action() {
    let rows: usize = std::env::var("AILERON_MEASURE_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let env = Env::new();
    env.write("proj/aileron.yaml", POLICY);
    let api = env.start().await;
    for i in 0..8 {
        let mut a = realistic(i, &env.proj);
        a["id"] = json!(format!("template-{i}"));
        api.evaluate(&a).await;
    }
    let templates = api
        .server
        .app
        .db
        .actions(&ActionQuery {
            session: Some("measure".into()),
            limit: 8,
            ..Default::default()
        })
        .await
        .unwrap();
    api.server.shutdown().await;
    assert_eq!(templates.len(), 8);
    let sqlite = env.root.join("measure.db");
    // `AILERON_MEASURE_DB`: sqlite or postgres alone.
    let only = std::env::var("AILERON_MEASURE_DB").unwrap_or_default();
    let mut targets = Vec::new();
    if only != "postgres" {
        targets.push((
            "SQLite".to_owned(),
            format!("sqlite://{}", sqlite.display()),
        ));
    }
    let cluster = (only != "sqlite").then(cluster::Cluster::start).flatten();
    if let Some((_, url)) = &cluster {
        targets.push(("PostgreSQL".into(), url.clone()));
    }
    for (name, url) in targets {
        let db = Db::open(&url).await.unwrap();
        let started = Instant::now();
        let base = jiff::Timestamp::now().as_microsecond() - 86_400_000_000;
        let mut batch = Vec::with_capacity(256);
        for n in 0..rows {
            let t = &templates[n % templates.len()];
            let rec: Value = serde_json::from_str(&t.record).unwrap();
            let old_id = rec["action"]["id"].as_str().unwrap();
            let old_time = rec["time"].as_str().unwrap();
            let id = aileron_server::auth::new_uuid();
            let ts_us = base + n as i64 * 50;
            let mut r = row(n, ts_us, "s");
            let session = format!("{:08x}-5e55-4000-8000-{:012x}", n / 500, n / 500);
            r.record = t
                .record
                .replace(old_id, &id)
                .replace(old_time, &r.time)
                .replace("\"measure\"", &format!("\"{session}\""));
            r.action = t.action.as_ref().map(|a| {
                a.replace(old_id, &id)
                    .replace("\"measure\"", &format!("\"{session}\""))
            });
            let rec: Value = serde_json::from_str(&r.record).unwrap();
            let text = |k: &str| rec[k].as_str().map(str::to_owned);
            r.action_id = id;
            r.session = Some(session);
            r.agent = text("agent");
            r.kind = rec["action"]["type"].as_str().unwrap().into();
            r.summary = rec["action"]["summary"].as_str().unwrap().into();
            r.decision = text("decision").unwrap();
            r.outcome = text("outcome");
            r.source = text("source").unwrap();
            r.rule = text("rule");
            r.reason = text("reason").unwrap();
            r.latency_us = 900;
            r.submitted_by = Some("3f2a9c4e1b7d6a05".into());
            batch.push(r);
            if batch.len() == 256 || n + 1 == rows {
                db.insert_actions(std::mem::take(&mut batch)).await.unwrap();
            }
        }
        let took = started.elapsed();
        let bytes: i64 = match &db {
            Db::Sqlite(p) => {
                sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                    .execute(p)
                    .await
                    .unwrap();
                let size = std::fs::metadata(&sqlite).unwrap().len() as i64;
                // Room for the next database.
                std::fs::remove_file(&sqlite).unwrap();
                size
            }
            Db::Postgres(p) => {
                use sqlx::Row;
                sqlx::query("VACUUM ANALYZE actions")
                    .execute(p)
                    .await
                    .unwrap();
                sqlx::query("SELECT pg_total_relation_size('actions') AS n")
                    .fetch_one(p)
                    .await
                    .unwrap()
                    .get("n")
            }
        };
        let avg_record: usize = templates.iter().map(|t| t.record.len()).sum::<usize>() / 8;
        let avg_action: usize = templates
            .iter()
            .map(|t| t.action.as_ref().map_or(0, String::len))
            .sum::<usize>()
            / 8;
        println!(
            "{name}: {rows} actions in {took:.1?}: {bytes} bytes, {} bytes per action \
             (record JSON {avg_record} B, action JSON {avg_action} B on average)",
            bytes / rows as i64
        );
        db.close().await;
    }
}
