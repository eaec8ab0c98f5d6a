//! `POST /api/evaluate` under concurrent load on loopback (issue 20: the
//! goal is ≥ 20,000 decisions a second at 32 clients with p99 ≤ 5 ms on
//! SQLite, on the 2-core development VM). Every request is a full decision:
//! policy (project file + 50 database rules), the action-log row and the
//! JSONL audit line stored before the answer is sent.
//!
//! Issue 29: the same at 32 clients all under one session id, beside the
//! server's static page in the same run (goal: ≥ 0.45 of its rate, p99 ≤
//! 10 ms), under a `rate` rule that counts the session's actions, and on
//! a server without timeouts or connection cap (what they cost).
//!
//! The load comes from `wrk` when it is installed (Debian's `wrk`: a lean
//! C client, as a user would measure), else from keep-alive client threads
//! of this bench. The server runs in this process on a runtime of its own.
//!
//! `cargo bench -p aileron-server --bench evaluate`. Settings:
//! `AILERON_BENCH_SECONDS` (default 8 per run), `AILERON_BENCH_DATABASE`
//! (`postgres://...` to measure on PostgreSQL instead of SQLite),
//! `AILERON_BENCH_CLIENT=threads` (never wrk).

use aileron_server::listen::Limits;
use aileron_server::projects::Project;
use aileron_server::{Config, Server};
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// As the `aileron-server` binary runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// The same policy with a `rate` rule that counts the bench's action: each
/// evaluation matches it against the session's window (up to 1,024
/// earlier actions).
const RATE_RULE: &str = r#"  - id: git-flood
    when: {type: shell.exec, shell.binary: git, rate: {more_than: 100000, seconds: 60}}
"#;

fn main() {
    let seconds: u64 = std::env::var("AILERON_BENCH_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let database = std::env::var("AILERON_BENCH_DATABASE").ok();
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::write(proj.join("aileron.yaml"), POLICY).unwrap();
    let counted = root.join("proj-rate");
    std::fs::create_dir_all(&counted).unwrap();
    std::fs::write(counted.join("aileron.yaml"), format!("{POLICY}{RATE_RULE}")).unwrap();
    let projects = [&proj, &counted].map(|p| Project::parse(&p.to_string_lossy(), &root).unwrap());

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(start(
        &root,
        "data",
        &projects,
        database.clone(),
        Limits::default(),
    ));
    let wrk = std::env::var("AILERON_BENCH_CLIENT").as_deref() != Ok("threads")
        && Command::new("wrk").arg("--version").output().is_ok();
    println!(
        "on {}, {seconds} s per run, load from {}",
        if database.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        },
        if wrk { "wrk" } else { "client threads" }
    );
    println!(
        "{:<44} {:>8} {:>10} {:>10} {:>10}",
        "", "clients", "req/s", "p50", "p99"
    );
    let show = |what: &str, clients: usize, run: &Run| {
        println!(
            "{what:<44} {clients:>8} {:>10.0} {:>10.2?} {:>10.2?}",
            run.per_second, run.p50, run.p99
        );
    };
    let load = Load {
        wrk,
        seconds,
        dir: &root,
    };
    // The same page the dashboard loads: what the server does without a decision.
    let page = load.run(&server, 32, &Req::Get("/"));
    show("GET / (the dashboard's page)", 32, &page);
    for clients in [1usize, 8, 32] {
        // No session: no approvals, no history (a session repeating one
        // command is measured below).
        let run = load.run(&server, clients, &Req::Evaluate(None, &proj));
        show("POST /api/evaluate, no session", clients, &run);
    }
    let one = load.run(&server, 32, &Req::Evaluate(Some("bench-one"), &proj));
    show("POST /api/evaluate, one session", 32, &one);
    let rate = load.run(&server, 32, &Req::Evaluate(Some("bench-rate"), &counted));
    show("the same, a rate rule counting its actions", 32, &rate);
    println!(
        "one session / page: {:.2} (goal >= 0.45; p99 goal <= 10 ms)",
        one.per_second / page.per_second
    );
    // The same on a server without timeouts or caps: what they cost.
    let bare = rt.block_on(start(
        &root,
        "data-bare",
        &projects,
        database,
        Limits::none(),
    ));
    let run = load.run(&bare, 32, &Req::Evaluate(Some("bench-one"), &proj));
    show("the same, no timeouts nor caps", 32, &run);
    rt.block_on(bare.shutdown());
    rt.block_on(server.shutdown());
}

/// What the clients send.
enum Req<'a> {
    Get(&'static str),
    /// `git status` under this session id (or none), in the project.
    Evaluate(Option<&'a str>, &'a Path),
}

impl Req<'_> {
    fn method_path_body(&self) -> (&'static str, &'static str, String) {
        match self {
            Req::Get(path) => ("GET", path, String::new()),
            Req::Evaluate(session, proj) => {
                let mut s = json!({"cwd": proj});
                if let Some(id) = session {
                    s["id"] = json!(id);
                }
                let body = json!({"type": "shell.exec",
                    "facets": {"shell": {"command": "git status"}}, "session": s});
                ("POST", "/api/evaluate", body.to_string())
            }
        }
    }
}

/// How the load is made.
struct Load<'a> {
    wrk: bool,
    seconds: u64,
    dir: &'a Path,
}

impl Load<'_> {
    fn run(&self, server: &Server, clients: usize, req: &Req) -> Run {
        let (addr, token) = (server.addr, server.agent_token.as_str());
        if self.wrk {
            with_wrk(addr, token, clients, self.seconds, req, self.dir)
        } else {
            with_threads(addr, token, clients, self.seconds, req)
        }
    }
}

async fn start(
    root: &Path,
    data: &str,
    projects: &[Project],
    database: Option<String>,
    limits: Limits,
) -> Server {
    let mut cfg = Config::from_env();
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    cfg.data_dir = root.join(data);
    cfg.limits = limits;
    cfg.home = root.join("home");
    cfg.cwd = projects[0].root.clone();
    cfg.projects = projects.to_vec();
    cfg.user_settings = false;
    cfg.database_url = database;
    let server = Server::start(cfg).await.unwrap();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
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
    server
}

struct Run {
    per_second: f64,
    p50: Duration,
    p99: Duration,
}

/// `wrk` with a script that posts the action and prints the percentiles.
fn with_wrk(
    addr: SocketAddr,
    token: &str,
    clients: usize,
    seconds: u64,
    req: &Req,
    dir: &Path,
) -> Run {
    let (method, path, body) = req.method_path_body();
    let script = dir.join("load.lua");
    std::fs::write(
        &script,
        format!(
            r#"wrk.method = "{method}"
wrk.body = {body:?}
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer {token}"
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d\n", summary.requests,
    summary.duration, latency:percentile(50), latency:percentile(99),
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"#
        ),
    )
    .unwrap();
    let threads = clients.min(2);
    let out = Command::new("wrk")
        .args(["-t", &threads.to_string(), "-c", &clients.to_string()])
        .args(["-d", &format!("{seconds}s"), "-s"])
        .arg(&script)
        .arg(format!("http://{addr}{path}"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("wrk said: {text}"));
    let n: Vec<u64> = line.split(' ').map(|v| v.parse().unwrap()).collect();
    assert_eq!(n[4], 0, "wrk saw errors or non-2xx answers: {text}");
    Run {
        per_second: n[0] as f64 / (n[1] as f64 / 1e6),
        p50: Duration::from_micros(n[2]),
        p99: Duration::from_micros(n[3]),
    }
}

/// Keep-alive HTTP/1.1 clients on threads of their own.
fn with_threads(addr: SocketAddr, token: &str, clients: usize, seconds: u64, req: &Req) -> Run {
    let (method, path, b) = req.method_path_body();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {token}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{b}",
        b.len()
    );
    let req = req.as_str();
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let mut lat: Vec<Duration> = std::thread::scope(|s| {
        let tasks: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(move || {
                    let stream = TcpStream::connect(addr).unwrap();
                    stream.set_nodelay(true).unwrap();
                    let mut reader = BufReader::new(stream);
                    let mut lat = Vec::new();
                    while Instant::now() < until {
                        let t = Instant::now();
                        reader.get_mut().write_all(req.as_bytes()).unwrap();
                        read_response(&mut reader);
                        lat.push(t.elapsed());
                    }
                    lat
                })
            })
            .collect();
        tasks.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    let total = started.elapsed();
    lat.sort();
    let pct = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
    Run {
        per_second: lat.len() as f64 / total.as_secs_f64(),
        p50: pct(0.50),
        p99: pct(0.99),
    }
}

/// Reads one response (status 200, a content length) and its body.
fn read_response(r: &mut BufReader<TcpStream>) {
    let mut line = String::new();
    let mut len = 0;
    let mut status = 0;
    loop {
        line.clear();
        assert!(r.read_line(&mut line).unwrap() > 0, "connection closed");
        if status == 0 {
            status = line.split(' ').nth(1).unwrap().parse().unwrap();
        } else if line == "\r\n" {
            break;
        } else if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().unwrap();
        }
    }
    assert_eq!(status, 200);
    let mut body = vec![0; len];
    r.read_exact(&mut body).unwrap();
}
