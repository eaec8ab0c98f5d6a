//! A bounded load on `POST /api/evaluate` (issue 20): 32 clients at once,
//! every request a full decision. What is checked is what a team relies on
//! under load: every request answered once, with its own action's id, and
//! every decision stored once, in the action log and in the JSONL audit
//! log, before its answer was sent. (The speed is a benchmark's business:
//! `cargo bench -p aileron-server --bench evaluate`.)

mod support;

use serde_json::{Value, json};
use std::collections::HashMap;
use support::Env;

const CLIENTS: usize = 32;
const PER_CLIENT: usize = 60;

const POLICY: &str = r#"version: 1
default: deny
allow:
  - "git status"
  - "ls *"
deny:
  - {id: no-curl, command: "curl *"}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_is_answered_once_and_logged_once() {
    let env = Env::new();
    env.write("proj/aileron.yaml", POLICY);
    let api = env.start().await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(CLIENTS)
        .build()
        .unwrap();
    let commands = [
        ("git status", "allow"),
        ("ls -la", "allow"),
        ("curl x", "deny"),
        ("make", "deny"),
    ];
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let client = client.clone();
        let url = api.url("/api/evaluate");
        let token = api.agent().to_owned();
        let proj = env.proj.to_string_lossy().into_owned();
        tasks.push(tokio::spawn(async move {
            let mut answers = Vec::with_capacity(PER_CLIENT);
            for i in 0..PER_CLIENT {
                let id = format!("load-{c}-{i}");
                let (command, _) = commands[(c + i) % commands.len()];
                let body = json!({"id": id, "type": "shell.exec",
                    "facets": {"shell": {"command": command}},
                    "session": {"id": format!("load-{c}"), "cwd": proj}});
                let r = client
                    .post(&url)
                    .bearer_auth(&token)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200, "{id}");
                let v: Value = r.json().await.unwrap();
                answers.push((id, command, v));
            }
            answers
        }));
    }
    let mut answered: HashMap<String, (String, String)> = HashMap::new();
    for t in tasks {
        for (id, command, v) in t.await.unwrap() {
            assert_eq!(v["id"], id.as_str(), "the answer is for the action sent");
            let decision = v["decision"].as_str().unwrap().to_owned();
            assert!(
                answered
                    .insert(id.clone(), (command.to_owned(), decision))
                    .is_none()
            );
        }
    }
    let sent = CLIENTS * PER_CLIENT;
    assert_eq!(answered.len(), sent);
    for (command, decision) in answered.values() {
        let expected = commands.iter().find(|(c, _)| c == command).unwrap().1;
        assert_eq!(decision, expected, "{command}");
    }

    // The action log: one row per request, with the decision answered.
    let query = aileron_server::db::ActionQuery {
        limit: (sent * 2) as i64,
        ..Default::default()
    };
    let rows = api.server.app.db.actions(&query).await.unwrap();
    let mut logged: HashMap<String, usize> = HashMap::new();
    for row in &rows {
        let rec: Value = serde_json::from_str(&row.record).unwrap();
        let id = rec["action"]["id"].as_str().unwrap().to_owned();
        if let Some((_, decision)) = answered.get(&id) {
            assert_eq!(
                rec["decision"],
                decision.as_str(),
                "{id} logged as answered"
            );
        }
        *logged.entry(id).or_default() += 1;
    }
    assert_eq!(logged.len(), sent, "every request is in the action log");
    assert!(logged.values().all(|n| *n == 1), "none logged twice");

    // The JSONL audit log: one line per request too.
    let audit = std::fs::read_to_string(env.proj.join(".aileron/audit.jsonl")).unwrap();
    let mut lines: HashMap<String, usize> = HashMap::new();
    for line in audit.lines() {
        let rec: Value = serde_json::from_str(line).expect("whole JSON lines");
        *lines
            .entry(rec["action"]["id"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    assert_eq!(lines.len(), sent, "every request is in the audit log");
    assert!(lines.values().all(|n| *n == 1), "no audit line twice");
    api.server.shutdown().await;
}
