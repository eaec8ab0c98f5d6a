//! The server on PostgreSQL. The test starts its own throw-away cluster on
//! loopback (Debian's `postgresql` package: `initdb` and `pg_ctl` under
//! /usr/lib/postgresql/*/bin; as root it runs them as the `postgres` user)
//! and stops it at the end. Set `AILERON_TEST_POSTGRES_URL` to use an
//! existing database instead. Without either, the test says so and passes.

mod support;

use reqwest::Method;
use serde_json::json;
use support::{Env, json_of, shell};

// The database gateway's tests start their clusters the same way.
#[path = "../../aileron-postgres/tests/support/cluster.rs"]
mod cluster;
use cluster::Cluster;

#[tokio::test(flavor = "multi_thread")]
async fn the_api_on_postgresql() {
    let (cluster, url) = match std::env::var("AILERON_TEST_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => (None, u),
        _ => match Cluster::start() {
            Some((c, u)) => (Some(c), u),
            None => {
                eprintln!(
                    "skipped: no PostgreSQL (install Debian's `postgresql`, or set AILERON_TEST_POSTGRES_URL)"
                );
                return;
            }
        },
    };
    let env = Env::new();
    // A session of its own, so that a shared database can be reused.
    let ps = format!("ps-{}", aileron_server::auth::new_uuid());
    let ps = ps.as_str();
    env.write(
        "proj/aileron.yaml",
        "version: 1\ndefault: allow\ndeny:\n  - {id: file-deny, command: \"rm *\"}\n",
    );
    let mut cfg = env.config();
    cfg.database_url = Some(url.clone());
    let api = support::Api::new(aileron_server::Server::start(cfg.clone()).await.unwrap());
    // Rules: stored, validated, evaluated, layer 7 under the file's deny.
    let (s, v) = api
        .put_rule(
            &json!({"id": "pg-deny", "label": "on pg", "decision": "deny", "command": "make *",
            "scope_plugin_id": null}),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = api
        .put_rule(
            &json!({"id": "pg-bad", "decision": "deny", "when": {"http.method": {"equal": "X"}}}),
        )
        .await;
    assert_eq!(s, 400, "{v}");
    let (s, _) = api
        .put_rule(
            &json!({"id": "pg-allow-rm", "decision": "allow", "command": "rm *", "priority": 9999}),
        )
        .await;
    assert_eq!(s, 200);
    let v = api.evaluate(&shell("p1", "make all", &env.proj, ps)).await;
    assert_eq!(v["rule"], "pg-deny", "{v}");
    let v = api.evaluate(&shell("p2", "rm x", &env.proj, ps)).await;
    assert_eq!(v["rule"], "file-deny", "{v}");
    let v = api.evaluate(&shell("p3", "ls", &env.proj, ps)).await;
    assert_eq!(v["decision"], "allow", "{v}");
    // The log with filters and paging.
    let (_, log) = api
        .get(&format!("/api/actions?session={ps}&decision=deny"))
        .await;
    assert_eq!(log["actions"].as_array().unwrap().len(), 2, "{log}");
    let (_, page) = api.get(&format!("/api/actions?session={ps}&limit=2")).await;
    let cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let (_, page2) = api
        .get(&format!(
            "/api/actions?session={ps}&limit=2&cursor={cursor}"
        ))
        .await;
    assert_eq!(page2["actions"][0]["action"]["id"], "p1");
    // Tokens made by the CLI path work.
    let approver = aileron_server::create_token(
        &api.server.app.db,
        aileron_server::auth::Role::Approver,
        None,
    )
    .await
    .unwrap();
    let r = api
        .req(Method::DELETE, "/api/rules/pg-allow-rm", Some(&approver))
        .send()
        .await
        .unwrap();
    assert_eq!(json_of(r).await.0, 200);
    api.server.shutdown().await;
    // Restart: everything is still there.
    let api = support::Api::new(aileron_server::Server::start(cfg).await.unwrap());
    let (_, rules) = api.get("/api/rules").await;
    let ids: Vec<&str> = rules["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"pg-deny") && !ids.contains(&"pg-allow-rm"),
        "{ids:?}"
    );
    let (_, log) = api.get(&format!("/api/actions?session={ps}")).await;
    assert!(log["actions"].as_array().unwrap().len() >= 3);
    support::check_judge_verdicts(&api.server.app.db);
    api.server.shutdown().await;
    drop(cluster);
}
