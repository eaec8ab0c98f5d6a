//! An adapter talking to `aileron serve` (`session::remote`), against tiny
//! servers on 127.0.0.1 that answer as told: what is posted, each answer
//! the approval queue gives, and that every failure (nobody listening, a
//! bad status, a body that is not JSON or too long, a TLS error, silence)
//! is `Unavailable` or an error with a one-line reason, never an allow.

use aileron_audit::AuditRecord;
use aileron_engine::Action;
use aileron_session::prompt::{AlwaysScope, Answer, Question};
use aileron_session::remote::Remote;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// A request as the server read it.
struct Seen {
    head: String,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// The head and `Content-Length` body of one request; `None` when what
/// comes is not HTTP (a TLS handshake) or ends early.
fn read_request(stream: &mut impl Read) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
        if !buf[0].is_ascii_uppercase() {
            return None;
        }
    };
    let head = String::from_utf8(buf[..end].to_vec()).ok()?;
    let mut seen = Seen {
        head,
        body: buf[end + 4..].to_vec(),
    };
    let len: usize = seen
        .header("content-length")
        .map_or(Some(0), |v| v.parse().ok())?;
    while seen.body.len() < len {
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        seen.body.extend_from_slice(&chunk[..n]);
    }
    Some(seen)
}

/// A plain HTTP server giving `responses`, one a connection, in order;
/// its address and the requests it read.
fn serve(responses: Vec<Vec<u8>>) -> (String, Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for response in responses {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            if let Some(seen) = read_request(&mut stream) {
                let _ = tx.send(seen);
            }
            // The client may have hung up (a body it refused): not our business.
            let _ = stream.write_all(&response);
        }
    });
    (addr, rx)
}

/// A response with a `Content-Length` body.
fn response(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn action() -> Action {
    serde_json::from_value(json!({
        "type": "shell.exec",
        "summary": "rm *.log",
        "primary": "rm *.log",
    }))
    .unwrap()
}

fn question() -> Question {
    Question {
        line: "rm *.log && ls".to_owned(),
        command: "rm *.log".to_owned(),
        rule: Some("ask-rm".to_owned()),
        reason: "deletes files".to_owned(),
        suggestion: "rm *".to_owned(),
        timeout: Duration::from_secs(1),
        allow_on_timeout: false,
    }
}

fn record() -> AuditRecord {
    serde_json::from_value(json!({
        "time": "2026-01-02T03:04:05Z",
        "adapter": "shim",
        "action": {"id": "a1", "type": "shell.exec", "summary": "ls"},
        "decision": "allow",
        "source": "static",
        "rule": "allow-ls",
        "reason": "read only",
        "latency_us": 12,
    }))
    .unwrap()
}

/// The reason of an `Unavailable`, checked to be one line.
fn unavailable(answer: Answer) -> String {
    match answer {
        Answer::Unavailable(why) => {
            assert!(!why.contains('\n'), "{why:?}");
            why
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[test]
fn record_posts_the_json_with_the_bearer_token() {
    let (addr, seen) = serve(vec![response("201 Created", "{}")]);
    let remote = Remote::new(&format!("http://{addr}"), "agent-token").unwrap();
    remote.record(&record()).unwrap();
    let seen = seen.recv().unwrap();
    assert!(
        seen.head.starts_with("POST /api/actions HTTP/1.1\r\n"),
        "{}",
        seen.head
    );
    assert_eq!(seen.header("authorization"), Some("Bearer agent-token"));
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.header("host"), Some(addr.as_str()));
    assert_eq!(seen.json(), serde_json::to_value(record()).unwrap());
}

#[test]
fn record_reports_a_refusal_on_one_line() {
    let (addr, _seen) = serve(vec![response(
        "403 Forbidden",
        r#"{"error":"not an agent\ntoken"}"#,
    )]);
    let remote = Remote::new(&format!("http://{addr}"), "t").unwrap();
    let err = remote.record(&record()).unwrap_err().to_string();
    assert_eq!(err, "the server answered 403: not an agent token");
}

#[test]
fn ask_posts_the_question_and_returns_each_answer() {
    let answers = [
        (r#"{"answer":"once"}"#, Answer::Once),
        (r#"{"answer":"allow"}"#, Answer::Once),
        (
            r#"{"answer":"always"}"#,
            Answer::Always(AlwaysScope::Session, r"rm \*.log".to_owned()),
        ),
        (r#"{"answer":"reject"}"#, Answer::Reject),
        (r#"{"answer":"deny"}"#, Answer::Reject),
        (
            r#"{"answer":"feedback","feedback":"use trash instead"}"#,
            Answer::Feedback("use trash instead".to_owned()),
        ),
        (
            r#"{"answer":"feedback"}"#,
            Answer::Feedback("rejected".to_owned()),
        ),
        (r#"{"answer":"timeout"}"#, Answer::Timeout),
    ];
    let (addr, seen) = serve(answers.iter().map(|(b, _)| response("200 OK", b)).collect());
    let remote = Remote::new(&format!("http://{addr}/"), "agent-token").unwrap();
    for (body, expected) in answers {
        assert_eq!(remote.ask(&action(), &question()), expected, "{body}");
        let seen = seen.recv().unwrap();
        assert!(
            seen.head
                .starts_with("POST /api/pending-actions HTTP/1.1\r\n")
        );
        assert_eq!(seen.header("authorization"), Some("Bearer agent-token"));
        assert_eq!(
            seen.json(),
            json!({
                "action": serde_json::to_value(action()).unwrap(),
                "rule": "ask-rm",
                "reason": "deletes files",
                "timeout_secs": 1,
                "on_timeout": "deny",
            })
        );
    }
}

#[test]
fn an_answer_it_does_not_know_is_unavailable() {
    let (addr, _seen) = serve(vec![
        response("200 OK", r#"{"answer":"maybe"}"#),
        response("200 OK", r#"{"status":"pending"}"#),
        response("200 OK", "<html>\n</html>"),
    ]);
    let remote = Remote::new(&format!("http://{addr}"), "t").unwrap();
    let why = unavailable(remote.ask(&action(), &question()));
    assert!(
        why.contains("no answer Aileron knows") && why.contains("maybe"),
        "{why}"
    );
    let why = unavailable(remote.ask(&action(), &question()));
    assert!(why.contains("no answer Aileron knows"), "{why}");
    let why = unavailable(remote.ask(&action(), &question()));
    assert!(why.contains("not JSON"), "{why}");
}

#[test]
fn a_chunked_body_is_decoded() {
    let chunked = |status: &str, parts: &[&str]| {
        let mut r =
            format!("HTTP/1.1 {status}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
        for p in parts {
            r += &format!("{:x};ext=1\r\n{p}\r\n", p.len());
        }
        r += "0\r\n\r\n";
        r.into_bytes()
    };
    let (addr, _seen) = serve(vec![
        chunked(
            "200 OK",
            &[
                r#"{"answer":"#,
                r#""feedback","#,
                r#""feedback":"not on main"}"#,
            ],
        ),
        chunked("409 Conflict", &[r#"{"error":"a"#, r#"lready decided"}"#]),
    ]);
    let remote = Remote::new(&format!("http://{addr}"), "t").unwrap();
    assert_eq!(
        remote.ask(&action(), &question()),
        Answer::Feedback("not on main".to_owned())
    );
    assert_eq!(
        remote.record(&record()).unwrap_err().to_string(),
        "the server answered 409: already decided"
    );
}

#[test]
fn a_server_that_is_down_is_unavailable() {
    let addr = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let remote = Remote::new(&format!("http://{addr}"), "t").unwrap();
    let why = unavailable(remote.ask(&action(), &question()));
    assert!(
        why.starts_with("the approval server cannot be reached (") && why.contains("refused"),
        "{why}"
    );
    let err = remote.record(&record()).unwrap_err().to_string();
    assert!(err.contains("refused") && !err.contains('\n'), "{err}");
}

#[test]
fn a_server_error_is_unavailable() {
    let (addr, _seen) = serve(vec![
        response("500 Internal Server Error", r#"{"error":"database is locked"}"#),
        response("503 Service Unavailable", "overloaded,\r\n try later"),
        // A redirect is not followed (the token would go along).
        b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:1/\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
    ]);
    let remote = Remote::new(&format!("http://{addr}"), "t").unwrap();
    assert_eq!(
        unavailable(remote.ask(&action(), &question())),
        "the approval server answered 500: database is locked"
    );
    assert_eq!(
        unavailable(remote.ask(&action(), &question())),
        "the approval server answered 503: overloaded, try later"
    );
    assert_eq!(
        unavailable(remote.ask(&action(), &question())),
        "the approval server answered 307"
    );
}

#[test]
fn an_oversized_answer_is_refused() {
    let big = format!(r#"{{"answer":"once","pad":"{}"}}"#, "x".repeat(2 << 20));
    let (addr, _seen) = serve(vec![response("200 OK", &big)]);
    let remote = Remote::new(&format!("http://{addr}"), "t").unwrap();
    let why = unavailable(remote.ask(&action(), &question()));
    assert_eq!(
        why,
        "the approval server's answer (200) cannot be read (over 1048576 bytes, refused)"
    );
}

/// A server that reads one request, never answers, and keeps the
/// connection open for `secs`: its address, and its thread.
fn silent_server(secs: u64) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let held = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        read_request(&mut stream);
        std::thread::sleep(Duration::from_secs(secs));
    });
    (addr, held)
}

#[test]
fn a_silent_server_is_given_up_at_the_record_timeout() {
    let (addr, held) = silent_server(5);
    let remote = Remote::new(&format!("http://{addr}"), "t").unwrap();
    let started = Instant::now();
    let err = remote.record(&record()).unwrap_err().to_string();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(err.contains("no answer in time"), "{err}");
    drop(held);
}

#[test]
fn https_to_a_plain_http_server_fails_closed() {
    let (addr, _seen) = serve(vec![
        response("200 OK", r#"{"answer":"once"}"#),
        response("200 OK", "{}"),
    ]);
    let remote = Remote::new(&format!("https://{addr}"), "t").unwrap();
    let why = unavailable(remote.ask(&action(), &question()));
    assert!(
        why.starts_with("the approval server cannot be reached (TLS: "),
        "{why}"
    );
    let err = remote.record(&record()).unwrap_err().to_string();
    assert!(err.starts_with("TLS: "), "{err}");
}

/// A self-signed certificate for 127.0.0.1, and a TLS server with it
/// giving `responses` like [`serve`].
fn serve_tls(responses: Vec<Vec<u8>>) -> (String, String, Receiver<Seen>) {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert.cert.der().clone()], key)
    .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for response in responses {
            let Ok((tcp, _)) = listener.accept() else {
                return;
            };
            tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            // A client that refuses the certificate ends the handshake here.
            if let Some(seen) = read_request(&mut tls) {
                let _ = tx.send(seen);
                let _ = tls.write_all(&response);
                tls.conn.send_close_notify();
                let _ = tls.flush();
            }
        }
    });
    (addr, cert.cert.pem(), rx)
}

#[test]
fn an_untrusted_certificate_fails_closed() {
    if std::env::var_os("AILERON_SERVER_CA").is_some() {
        return; // trusted here; this test is about Mozilla's roots
    }
    let (addr, _pem, seen) = serve_tls(vec![response("200 OK", r#"{"answer":"once"}"#)]);
    let remote = Remote::new(&format!("https://{addr}"), "t").unwrap();
    let why = unavailable(remote.ask(&action(), &question()));
    assert!(
        why.starts_with("the approval server cannot be reached (TLS: ")
            && why.contains("certificate"),
        "{why}"
    );
    assert!(seen.try_recv().is_err());
}

/// Runs the `#[ignore]`d test `name` of this file in a child process with
/// `env` (setting a variable in this process would race the other tests).
fn run_child(name: &str, env: &[(&str, &std::ffi::OsStr)]) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--ignored", "--test-threads=1"])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn https_round_trip_with_the_servers_own_ca() {
    let (addr, pem, seen) = serve_tls(vec![
        response("200 OK", r#"{"answer":"always"}"#),
        response("201 Created", "{}"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, pem).unwrap();
    let url = format!("https://{addr}");
    run_child(
        "child_https_round_trip",
        &[
            ("AILERON_SERVER_CA", ca.as_os_str()),
            ("REMOTE_TEST_URL", url.as_ref()),
        ],
    );
    let seen = seen.recv().unwrap();
    assert!(
        seen.head
            .starts_with("POST /api/pending-actions HTTP/1.1\r\n")
    );
    assert_eq!(seen.header("authorization"), Some("Bearer agent-token"));
    assert_eq!(seen.json()["rule"], "ask-rm");
}

#[test]
#[ignore = "run by https_round_trip_with_the_servers_own_ca, in a child process"]
fn child_https_round_trip() {
    let url = std::env::var("REMOTE_TEST_URL").unwrap();
    let remote = Remote::new(&url, "agent-token").unwrap();
    assert_eq!(
        remote.ask(&action(), &question()),
        Answer::Always(AlwaysScope::Session, r"rm \*.log".to_owned())
    );
    remote.record(&record()).unwrap();
}

#[test]
fn a_bad_ca_file_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, "not a certificate\n").unwrap();
    run_child(
        "child_bad_ca_file",
        &[
            ("AILERON_SERVER_CA", ca.as_os_str()),
            ("REMOTE_TEST_URL", "https://127.0.0.1:1".as_ref()),
        ],
    );
}

#[test]
#[ignore = "run by a_bad_ca_file_fails_closed, in a child process"]
fn child_bad_ca_file() {
    let url = std::env::var("REMOTE_TEST_URL").unwrap();
    let remote = Remote::new(&url, "t").unwrap();
    let why = unavailable(remote.ask(&action(), &question()));
    assert!(
        why.contains("AILERON_SERVER_CA") && why.contains("no certificate"),
        "{why}"
    );
}

#[test]
fn the_proxy_variables_are_not_used() {
    // `aileron launch` points these at its own egress proxy; the server is
    // reached directly.
    let (addr, seen) = serve(vec![response("200 OK", r#"{"answer":"once"}"#)]);
    let url = format!("http://{addr}");
    let dead = std::ffi::OsStr::new("http://127.0.0.1:1");
    run_child(
        "child_direct",
        &[
            ("REMOTE_TEST_URL", url.as_ref()),
            ("HTTP_PROXY", dead),
            ("http_proxy", dead),
            ("HTTPS_PROXY", dead),
            ("ALL_PROXY", dead),
        ],
    );
    assert!(
        seen.recv()
            .unwrap()
            .head
            .starts_with("POST /api/pending-actions ")
    );
}

#[test]
#[ignore = "run by the_proxy_variables_are_not_used, in a child process"]
fn child_direct() {
    let url = std::env::var("REMOTE_TEST_URL").unwrap();
    let remote = Remote::new(&url, "t").unwrap();
    assert_eq!(remote.ask(&action(), &question()), Answer::Once);
}

/// A `Remote` printed for debugging never shows the agent token.
#[test]
fn debug_output_hides_the_token() {
    let remote =
        aileron_session::remote::Remote::new("http://127.0.0.1:9", "tok-SECRET-77").unwrap();
    let shown = format!("{remote:?}");
    assert!(!shown.contains("tok-SECRET-77"), "{shown}");
    assert!(shown.contains("127.0.0.1:9"), "{shown}");
}

#[test]
fn a_server_s_authority_and_host_for_the_gateways() {
    let r = aileron_session::remote::Remote::new("http://127.0.0.1:7878/dashboard", "t").unwrap();
    assert_eq!(r.authorities(), ["127.0.0.1:7878"]);
    assert_eq!(r.hosts(), ["127.0.0.1"]);
    let r = aileron_session::remote::Remote::new("http://[::1]:7878", "t").unwrap();
    assert_eq!(r.authorities(), ["[::1]:7878"]);
    assert_eq!(r.hosts(), ["::1"]);
}

/// An address nobody listens on.
fn dead_address() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().to_string()
}

#[test]
fn several_servers_the_next_answers_when_one_is_down_or_drops_the_ask() {
    let dead = dead_address();
    // The first takes the ask and drops the connection (a server killed
    // while it waits), the second is shutting down, the third answers.
    let (dropping, dropped) = serve(vec![Vec::new()]);
    let (stopping, stopped) = serve(vec![response(
        "503 Service Unavailable",
        r#"{"error":"the server is shutting down"}"#,
    )]);
    let (live, seen) = serve(vec![
        response("200 OK", r#"{"answer":"once"}"#),
        response("200 OK", r#"{"answer":"reject"}"#),
        response("201 Created", "{}"),
    ]);
    let urls = format!("http://{dead}, http://{dropping},http://{stopping},http://{live}");
    let remote = Remote::new(&urls, "t").unwrap();
    assert_eq!(remote.ask(&action(), &question()), Answer::Once);
    // Each was sent the same ask (the same action id).
    let sent = dropped.recv().unwrap().json();
    assert_eq!(stopped.recv().unwrap().json(), sent);
    assert_eq!(seen.recv().unwrap().json(), sent);
    // The server that answered is asked first from now on.
    assert_eq!(remote.url(), format!("http://{live}"));
    assert_eq!(remote.ask(&action(), &question()), Answer::Reject);
    remote.record(&record()).unwrap();
    assert!(
        seen.recv()
            .unwrap()
            .head
            .starts_with("POST /api/pending-actions ")
    );
    assert!(seen.recv().unwrap().head.starts_with("POST /api/actions "));
}

#[test]
fn several_servers_none_answering_is_unavailable_on_one_line() {
    let (a, b) = (dead_address(), dead_address());
    let remote = Remote::new(&format!("http://{a},http://{b}"), "t").unwrap();
    let why = unavailable(remote.ask(&action(), &question()));
    assert!(
        why.starts_with(&format!(
            "http://{a}: the approval server cannot be reached ("
        )) && why.contains(&format!(
            "; http://{b}: the approval server cannot be reached ("
        )),
        "{why}"
    );
    assert!(remote.record(&record()).is_err());
    // A refusal is an answer: the next server is not asked.
    let (refusing, _seen) = serve(vec![response("409 Conflict", r#"{"error":"taken"}"#)]);
    let (other, not_asked) = serve(vec![response("200 OK", r#"{"answer":"once"}"#)]);
    let remote = Remote::new(&format!("http://{refusing},http://{other}"), "t").unwrap();
    assert_eq!(
        unavailable(remote.ask(&action(), &question())),
        "the approval server answered 409: taken"
    );
    assert!(not_asked.try_recv().is_err());
}

#[test]
fn several_servers_a_record_goes_to_the_next_only_when_one_is_not_reached() {
    let dead = dead_address();
    let (live, seen) = serve(vec![response("201 Created", "{}")]);
    let remote = Remote::new(&format!("http://{dead},http://{live}"), "t").unwrap();
    remote.record(&record()).unwrap();
    assert!(seen.recv().unwrap().head.starts_with("POST /api/actions "));
    // A server that took the record and said nothing may have stored it.
    let (silent, held) = silent_server(2);
    let (other, not_sent) = serve(vec![response("201 Created", "{}")]);
    let remote = Remote::new(&format!("http://{silent},http://{other}"), "t").unwrap();
    let err = remote.record(&record()).unwrap_err().to_string();
    assert!(err.contains("no answer in time"), "{err}");
    assert!(not_sent.try_recv().is_err());
    drop(held);
}
