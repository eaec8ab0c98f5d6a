//! `aileron serve`, `aileron token`, `aileron rules` as processes: a
//! `kill -9` in the middle of writes, clean shutdown, rules round trips.

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const AILERON: &str = env!("CARGO_BIN_EXE_aileron");
const WAIT: Duration = Duration::from_secs(30);

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        for d in ["home", "proj"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        Env { _tmp: tmp, root }
    }

    fn cmd(&self, data: &str) -> Command {
        let mut c = Command::new(AILERON);
        c.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", self.root.join("home"))
            .env("AILERON_DATA", self.root.join(data))
            .current_dir(self.root.join("proj"));
        c
    }

    fn run(&self, data: &str, args: &[&str]) -> Output {
        self.cmd(data).args(args).output().unwrap()
    }

    /// Starts `aileron serve`; the caller waits for the child.
    fn serve(&self, data: &str) -> (Child, String) {
        self.serve_with(data, &[], Stdio::inherit())
    }

    /// Starts `aileron serve` with more arguments, its stderr to `stderr`.
    #[allow(clippy::zombie_processes)]
    fn serve_with(&self, data: &str, args: &[&str], stderr: Stdio) -> (Child, String) {
        let _ = std::fs::remove_file(self.root.join(data).join("server.json"));
        let mut child = self
            .cmd(data)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let info = self.root.join(data).join("server.json");
        let deadline = Instant::now() + WAIT;
        loop {
            if let Ok(text) = std::fs::read_to_string(&info)
                && let Ok(v) = serde_json::from_str::<Value>(&text)
                && v["pid"] == child.id()
            {
                let url = v["url"].as_str().unwrap().to_owned();
                return (child, url.trim_start_matches("http://").to_owned());
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server did not start");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A minimal HTTP/1.1 request; the status and the body.
fn http(
    addr: &str,
    method: &str,
    path: &str,
    token: &str,
    body: &str,
) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(WAIT))?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut resp = String::new();
    s.read_to_string(&mut resp)?;
    let status = resp
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad response: {resp:?}")))?;
    let body = resp
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

fn record(id: &str) -> String {
    json!({"time": "2026-01-01T00:00:00Z", "session": "kill", "adapter": "test",
        "action": {"id": id, "type": "shell.exec", "summary": "ls", "facets": {"shell": {"command": "ls"}}},
        "decision": "allow", "source": "static", "reason": "r", "latency_us": 1})
    .to_string()
}

#[test]
fn kill_9_in_the_middle_of_writes_leaves_a_consistent_database() {
    let env = Env::new();
    let (mut child, addr) = env.serve("data");
    let token = std::fs::read_to_string(env.root.join("data/agent.token")).unwrap();
    let token = token.trim().to_owned();
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4 {
        let (acked, stop, addr, token) = (acked.clone(), stop.clone(), addr.clone(), token.clone());
        writers.push(std::thread::spawn(move || {
            for i in 0..100_000 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let id = format!("w{w}-{i}");
                match http(&addr, "POST", "/api/actions", &token, &record(&id)) {
                    Ok((200, _)) => acked.lock().unwrap().push(id),
                    Ok((s, b)) => panic!("{s}: {b}"),
                    Err(_) => break, // the server is gone
                }
            }
        }));
    }
    // Let some writes through, then kill it while writes are in flight.
    let deadline = Instant::now() + WAIT;
    while acked.lock().unwrap().len() < 200 {
        assert!(Instant::now() < deadline, "writes too slow");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    stop.store(true, Ordering::SeqCst);
    for w in writers {
        w.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    // Reopen: integrity, and every acknowledged write is there.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let url = format!("sqlite://{}", env.root.join("data/aileron.db").display());
    rt.block_on(async {
        let db = aileron_server::db::Db::open(&url).await.unwrap();
        assert_eq!(db.integrity_check().await.unwrap(), "ok");
        let rows = db
            .actions(&aileron_server::db::ActionQuery {
                session: Some("kill".into()),
                limit: 1_000_000,
                ..Default::default()
            })
            .await
            .unwrap();
        let stored: std::collections::HashSet<String> = rows
            .iter()
            .map(|r| {
                serde_json::from_str::<Value>(&r.record).unwrap()["action"]["id"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        for id in &acked {
            assert!(stored.contains(id), "acknowledged {id} is missing");
        }
        assert!(stored.len() >= acked.len());
        db.close().await;
    });
    // The server starts again on the same data, then stops cleanly on SIGTERM.
    let (child, addr) = env.serve("data");
    let (s, body) = http(
        &addr,
        "GET",
        "/api/actions?session=kill&limit=1",
        &token,
        "",
    )
    .unwrap();
    assert_eq!(s, 200, "{body}");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        !env.root.join("data/server.json").exists(),
        "removed on a clean shutdown"
    );
}

const RULES: &str = r#"# rules to import
rules:
  - id: no-prod-deletes
    label: "deny: prod deletes"
    decision: deny
    description: no deletes on prod
    priority: 300
    scope: {integration: int-prod}
    when:
      type: http.request
      http.method: {in: [DELETE, PATCH]}
      not: {http.url: {contains: /sandbox/}}
  - id: ask-push
    decision: ask
    command: "git push *"
    timeout: 30
    on_timeout: deny
    enabled: false
deny:
  - "rm -rf /srv/*"
"#;

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn write(root: &Path, name: &str, text: &str) -> String {
    let p = root.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn rules_export_import_export_is_identical() {
    let env = Env::new();
    let src = write(&env.root, "rules.yaml", RULES);
    stdout(&env.run("d1", &["rules", "import", &src]));
    let e1 = stdout(&env.run("d1", &["rules", "export"]));
    assert!(e1.contains("- id: no-prod-deletes"), "{e1}");
    assert!(e1.contains("decision: deny"), "{e1}");
    // The server's copy is the same text.
    assert_eq!(
        std::fs::read_to_string(env.root.join("d1/server-rules.yaml")).unwrap(),
        e1
    );
    let f1 = write(&env.root, "e1.yaml", &e1);
    stdout(&env.run("d2", &["rules", "import", &f1]));
    let e2 = stdout(&env.run("d2", &["rules", "export"]));
    assert_eq!(e1, e2);
    // Through JSON too.
    let j = stdout(&env.run("d2", &["rules", "export", "--format", "json"]));
    let v: Value = serde_json::from_str(&j).unwrap();
    assert_eq!(v["rules"].as_array().unwrap().len(), 3);
    let fj = write(&env.root, "e.json", &j);
    stdout(&env.run("d3", &["rules", "import", &fj]));
    assert_eq!(stdout(&env.run("d3", &["rules", "export"])), e1);
    // Importing the same file again changes nothing.
    stdout(&env.run("d2", &["rules", "import", &f1]));
    assert_eq!(stdout(&env.run("d2", &["rules", "export"])), e1);
    let list = stdout(&env.run("d1", &["rules", "list"]));
    assert!(
        list.contains("no-prod-deletes") && list.contains("(disabled)"),
        "{list}"
    );
}

#[test]
fn an_invalid_rules_file_is_refused_whole() {
    let env = Env::new();
    let bad = write(
        &env.root,
        "bad.yaml",
        "rules:\n  - {id: ok, decision: allow, command: ls}\n  - {id: bad, decision: deny, when: {http.method: {equal: DELETE}}}\n",
    );
    let o = env.run("d", &["rules", "import", &bad]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("unknown operator `equal`"), "{out}");
    assert!(out.contains("bad.yaml"), "{out}");
    let list = stdout(&env.run("d", &["rules", "list"]));
    assert!(list.contains("no rules"), "{list}");
}

#[test]
fn token_create_prints_a_token_the_server_accepts() {
    let env = Env::new();
    let o = env.run(
        "data",
        &["token", "create", "--role", "approver", "--name", "bob"],
    );
    let token = stdout(&o).trim().to_owned();
    assert!(token.starts_with("ail_"), "{token}");
    let o = env.run("data", &["token", "create", "--role", "admin"]);
    assert_eq!(o.status.code(), Some(2));
    let (mut child, addr) = env.serve("data");
    let (s, body) = http(&addr, "GET", "/api/rules", &token, "").unwrap();
    assert_eq!(s, 200, "{body}");
    let (s, _) = http(&addr, "GET", "/api/rules", "ail_wrong", "").unwrap();
    assert_eq!(s, 401);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Sends the head of a request and the first half of its body; the
/// caller sends the rest with [`finish`].
fn start_request(addr: &str, token: &str, request_id: &str, body: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(WAIT)).unwrap();
    let half = body.len() / 2;
    write!(
        s,
        "POST /api/evaluate HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nX-Request-Id: {request_id}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        body.len(),
        &body[..half]
    )
    .unwrap();
    s.flush().unwrap();
    (s, body[half..].to_owned())
}

/// Sends the rest of a request; the whole response.
fn finish(mut s: TcpStream, rest: &str) -> String {
    s.write_all(rest.as_bytes()).unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    resp
}

/// SIGTERM: the listener closes, a request in flight is answered, a call
/// waiting for a person gets 503 (its ask left undecided, not in the log),
/// the log lines (JSON) carry the request ids, and the process exits 0
/// with the in-flight decision written.
#[test]
fn sigterm_finishes_the_request_in_flight_and_exits_0() {
    let env = Env::new();
    std::fs::write(
        env.root.join("proj/aileron.yaml"),
        "version: 1\ndefault: allow\nask:\n  - {id: ask-push, command: \"git push *\"}\n",
    )
    .unwrap();
    let (child, addr) = env.serve_with("data", &["--log-format", "json"], Stdio::piped());
    let read = |f: &str| {
        std::fs::read_to_string(env.root.join("data").join(f))
            .unwrap()
            .trim()
            .to_owned()
    };
    let (agent, admin) = (read("agent.token"), read("admin.token"));
    let cwd = env.root.join("proj").display().to_string();
    let action = |id: &str, cmd: &str| {
        json!({"id": id, "type": "shell.exec", "facets": {"shell": {"command": cmd}},
            "session": {"id": "term", "cwd": cwd}})
        .to_string()
    };
    // A call waiting for a person.
    let asking = {
        let (s, rest) = start_request(&addr, &agent, "term-ask-1", &action("t-ask", "git push"));
        std::thread::spawn(move || finish(s, &rest))
    };
    let deadline = Instant::now() + WAIT;
    loop {
        let (_, body) = http(&addr, "GET", "/api/pending-actions", &admin, "").unwrap();
        if body.contains("t-ask") {
            break;
        }
        assert!(Instant::now() < deadline, "the ask never waited: {body}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A request whose body has not all arrived yet.
    let (inflight, rest) = start_request(&addr, &agent, "term-flight-1", &action("t-ls", "ls"));
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let asked = asking.join().unwrap();
    assert!(asked.starts_with("HTTP/1.1 503"), "{asked}");
    assert!(asked.contains("x-request-id: term-ask-1"), "{asked}");
    // No new connections.
    let deadline = Instant::now() + WAIT;
    while TcpStream::connect(&addr).is_ok() {
        assert!(Instant::now() < deadline, "still accepting");
        std::thread::sleep(Duration::from_millis(20));
    }
    let answered = finish(inflight, &rest);
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    assert!(answered.contains("\"decision\":\"allow\""), "{answered}");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines: Vec<Value> = String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect();
    let line = lines
        .iter()
        .find(|l| l["request_id"] == "term-ask-1")
        .unwrap_or_else(|| panic!("no line for the ask: {lines:?}"));
    assert_eq!(line["status"], 503);
    assert_eq!(line["level"], "error");
    assert_eq!(line["path"], "/api/evaluate");
    // The decision in flight is in the log; the ask is not.
    let url = format!("sqlite://{}", env.root.join("data/aileron.db").display());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ids: Vec<String> = rt.block_on(async {
        let db = aileron_server::db::Db::open(&url).await.unwrap();
        let rows = db
            .actions(&aileron_server::db::ActionQuery {
                session: Some("term".into()),
                limit: 100,
                ..Default::default()
            })
            .await
            .unwrap();
        db.close().await;
        rows.iter().map(|r| r.record.clone()).collect()
    });
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert!(ids[0].contains("\"t-ls\""), "{ids:?}");
}

/// Where `aileron serve`'s standard output goes.
#[derive(Clone, Copy, Debug)]
enum Out {
    File,
    Pipe,
    Terminal,
}

/// What a first start of `aileron serve` prints with its standard output
/// to `out` (read until it names the agent token).
fn first_start_output(env: &Env, data: &str, out: Out) -> String {
    use std::os::fd::{FromRawFd, OwnedFd};
    let text = Arc::new(Mutex::new(String::new()));
    let mut cmd = env.cmd(data);
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::null());
    let file = env.root.join(format!("{data}.out"));
    let reader: Option<Box<dyn Read + Send>> = match out {
        Out::File => {
            cmd.stdout(std::fs::File::create(&file).unwrap());
            None
        }
        Out::Pipe => {
            cmd.stdout(Stdio::piped());
            None
        }
        Out::Terminal => {
            let (mut master, mut slave) = (0, 0);
            // SAFETY: openpty fills two descriptors; the rest may be null.
            let r = unsafe {
                libc::openpty(
                    &mut master,
                    &mut slave,
                    std::ptr::null_mut(),
                    std::ptr::null(),
                    std::ptr::null(),
                )
            };
            assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
            // SAFETY: both descriptors were just opened and are owned here.
            let (master, slave) =
                unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
            cmd.stdout(Stdio::from(slave));
            Some(Box::new(std::fs::File::from(master)))
        }
    };
    let mut child = cmd.spawn().unwrap();
    let reader = reader.or_else(|| {
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>)
    });
    if let Some(mut r) = reader {
        let text = text.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 1024];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                text.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    let deadline = Instant::now() + WAIT;
    let printed = loop {
        let now = match out {
            Out::File => std::fs::read_to_string(&file).unwrap_or_default(),
            _ => text.lock().unwrap().clone(),
        };
        if now.contains("agent token:") {
            break now;
        }
        assert!(Instant::now() < deadline, "{out:?}: no banner: {now:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    printed
}

/// The admin token is shown on a terminal only: with standard output a
/// file or a pipe (a journal, a container's log, read by more people than
/// the admin), even the first start names the 0600 token file instead.
#[test]
fn the_admin_token_reaches_a_terminal_only() {
    let env = Env::new();
    for (data, out) in [
        ("d-file", Out::File),
        ("d-pipe", Out::Pipe),
        ("d-tty", Out::Terminal),
    ] {
        let printed = first_start_output(&env, data, out);
        let token = std::fs::read_to_string(env.root.join(data).join("admin.token")).unwrap();
        let token = token.trim();
        assert!(token.starts_with("ail_"), "{token}");
        match out {
            Out::Terminal => assert!(printed.contains(&format!("#token={token}")), "{printed}"),
            Out::File | Out::Pipe => {
                assert!(
                    !printed.contains(token),
                    "{out:?}: the token is in the log: {printed}"
                );
                assert!(!printed.contains("ail_"), "{out:?}: {printed}");
                let file = env.root.join(data).join("admin.token");
                assert!(
                    printed.contains(&file.display().to_string()),
                    "{out:?}: {printed}"
                );
            }
        }
    }
}

/// `--project` names a directory that exists; a bad one stops the start
/// with one line naming it.
#[test]
fn a_project_that_is_not_a_directory_is_refused_at_start() {
    let env = Env::new();
    let o = env.run(
        "data",
        &["serve", "--listen", "127.0.0.1:0", "--project", "nowhere"],
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("project root `nowhere`"), "{err}");
}
