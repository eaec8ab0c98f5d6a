//! `settings.ask_mode: ui` end to end: a real shim and a real hook send
//! their ask to a real `aileron serve`, a human answers through the API,
//! and the command runs (or not). With the server gone they fall back to
//! the terminal, and with no terminal either they deny. Every decision of
//! a connected adapter lands in the server's action log.

mod support;

use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use support::{Project, WAIT, no_tty};

const POLICY: &str = "version: 1\nsettings:\n  ask_mode: ui\n  timeout: 20\nallow: [\"echo *\"]\nask: [\"touch *\"]\n";

struct Server {
    child: Child,
    url: String,
    admin: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(p: &Project) -> Server {
    let data = p.home.join(".aileron");
    let child = p
        .aileron(&["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("aileron serve starts");
    // Dropped (killed and waited for) on every path, a failed start included.
    let mut server = Server {
        child,
        url: String::new(),
        admin: String::new(),
    };
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(text) = std::fs::read_to_string(data.join("server.json"))
            && let Ok(v) = serde_json::from_str::<Value>(&text)
            && v["pid"] == server.child.id()
        {
            let admin = std::fs::read_to_string(data.join("admin.token")).unwrap();
            server.url = v["url"].as_str().unwrap().to_owned();
            server.admin = admin.trim().to_owned();
            return server;
        }
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One request with the admin token; the JSON answer.
fn call(s: &Server, method: &str, path: &str, body: &str) -> Value {
    let authority = s.url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(authority).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        s.admin,
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let body = raw.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {raw}"))
}

/// Waits until exactly one action is pending; its id.
fn pending_id(s: &Server) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let v = call(s, "GET", "/api/pending-actions", "");
        if let Some(first) = v["pending"].as_array().and_then(|a| a.first()) {
            return first["id"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "nothing became pending: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn decide(s: &Server, id: &str, body: &str) {
    let v = call(
        s,
        "POST",
        &format!("/api/pending-actions/{id}/decision"),
        body,
    );
    assert_eq!(v["ok"], true, "{v}");
}

#[test]
fn a_shim_ask_waits_in_the_queue_and_runs_once_approved() {
    let p = Project::new(POLICY);
    let s = serve(&p);
    let mut shim = p.shim(&["-c", "touch made"]);
    no_tty(&mut shim)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = shim.spawn().unwrap();
    let id = pending_id(&s);
    assert!(!p.path("made").exists(), "ran before the answer");
    decide(&s, &id, r#"{"decision":"once"}"#);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(p.path("made").exists());
    // The server's log has the decision, with the human's answer.
    let log = call(&s, "GET", "/api/actions?limit=10", "");
    let actions = log["actions"].as_array().unwrap();
    let rec = actions
        .iter()
        .find(|a| a["action"]["summary"] == "touch made" && a["adapter"] == "shim")
        .unwrap_or_else(|| panic!("{log}"));
    // A person decided, on the dashboard.
    assert_eq!(rec["outcome"], "approved-once", "{rec}");
    assert_eq!(rec["source"], "human", "{rec}");
    assert_eq!(rec["approver"], "dashboard", "{rec}");
}

#[test]
fn feedback_in_the_dashboard_reaches_the_agent_and_nothing_runs() {
    let p = Project::new(POLICY);
    let s = serve(&p);
    let mut shim = p.shim(&["-c", "touch made"]);
    no_tty(&mut shim)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = shim.spawn().unwrap();
    let id = pending_id(&s);
    decide(
        &s,
        &id,
        r#"{"decision":"feedback","reason":"use the Makefile target"}"#,
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "aileron: rejected: use the Makefile target\n"
    );
    assert!(!p.path("made").exists());
}

#[test]
fn a_hook_ask_goes_to_the_queue_instead_of_the_agent() {
    let p = Project::new(POLICY);
    let s = serve(&p);
    let event = format!(
        r#"{{"session_id":"s1","cwd":"{}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"touch made"}}}}"#,
        p.dir.display()
    );
    let mut hook = p.aileron(&["hook", "claude-code"]);
    no_tty(&mut hook)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = hook.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.as_bytes())
        .unwrap();
    let id = pending_id(&s);
    decide(&s, &id, r#"{"decision":"once"}"#);
    let out = child.wait_with_output().unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "allow",
        "{answer}"
    );
}

#[test]
fn with_the_server_gone_and_no_terminal_the_ask_is_denied() {
    let p = Project::new(POLICY);
    let s = serve(&p);
    drop(s); // killed; server.json stays behind, pointing nowhere
    let mut shim = p.shim(&["-c", "touch made"]);
    let out = no_tty(&mut shim).output().unwrap();
    assert_eq!(out.status.code(), Some(126));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(
            "aileron: denied: approval needed but the approval server cannot be reached"
        ),
        "{err}"
    );
    assert!(err.contains("no terminal"), "{err}");
    assert!(!p.path("made").exists());
    // An allowed command still runs: a dead server costs nothing else.
    let out = no_tty(&mut p.shim(&["-c", "echo ok"])).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
}

#[test]
fn a_rule_saved_through_the_api_is_seen_by_the_next_shim_command() {
    let p = Project::new(POLICY);
    let s = serve(&p);
    // Layer 7 can add a deny (and cannot outrank a file's deny).
    let v = call(
        &s,
        "POST",
        "/api/rules",
        r#"{"id":"no-echo-secrets","decision":"deny","command":"echo secret*","description":"no secrets on stdout"}"#,
    );
    assert_eq!(v["id"], "no-echo-secrets", "{v}");
    let out = no_tty(&mut p.shim(&["-c", "echo secret-value"]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "aileron: denied: no secrets on stdout (rule no-echo-secrets)\n"
    );
    // Deleted: the next command runs again (`echo *` is allowed by the file).
    call(&s, "DELETE", "/api/rules/no-echo-secrets", "");
    let out = no_tty(&mut p.shim(&["-c", "echo secret-value"]))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "secret-value\n");
}
