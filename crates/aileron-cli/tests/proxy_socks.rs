//! The SOCKS5 front of `aileron proxy` (issue 30) run for real: curl's
//! `--socks5-hostname`, a small SOCKS5 client of the test's own carrying
//! TCP that is not HTTP to an echo server, and HTTP's `CONNECT` doing the
//! same; what the client gets, whether the server was reached, and the
//! audit line.

mod support;

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use support::Project;
use support::proxy::{
    INSPECT, ProxyProcess, assert_no_tunnel_decided, curl, line_for, proxy_lines, read_response,
    status_of,
};
use support::upstream::{TestCa, Upstream};

/// A TCP server that sends back every byte it gets: no HTTP anywhere.
struct Echo {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Echo {
    fn on(bind: &str) -> Option<Echo> {
        let listener = TcpListener::bind(bind).ok()?;
        let addr = listener.local_addr().expect("address");
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, st) = (Arc::clone(&connections), Arc::clone(&stop));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut back = conn.try_clone().expect("clone");
                    let _ = std::io::copy(&mut conn, &mut back);
                });
            }
        });
        Some(Echo {
            addr,
            connections,
            stop,
        })
    }

    fn new() -> Echo {
        Echo::on("127.0.0.1:0").expect("bind an echo server")
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

/// Where a SOCKS5 request asks to go.
enum To<'a> {
    Addr(SocketAddr),
    Name(&'a str, u16),
}

/// What the proxy answered a SOCKS5 request: the reply code, the bound
/// address, and the stream (carrying the tunnel when the code is 0).
struct Answer {
    code: u8,
    bound: SocketAddr,
    stream: TcpStream,
}

/// A SOCKS5 client: greeting with no authentication, then `command`.
fn socks(proxy: SocketAddr, command: u8, to: To) -> Answer {
    let mut s = TcpStream::connect(proxy).expect("connect to the proxy");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    s.write_all(&[5, 1, 0]).expect("greeting");
    let mut method = [0u8; 2];
    s.read_exact(&mut method).expect("method");
    assert_eq!(method, [5, 0], "no authentication not chosen");
    let mut request = vec![5, command, 0];
    let port = match to {
        To::Addr(SocketAddr::V4(a)) => {
            request.push(1);
            request.extend_from_slice(&a.ip().octets());
            a.port()
        }
        To::Addr(SocketAddr::V6(a)) => {
            request.push(4);
            request.extend_from_slice(&a.ip().octets());
            a.port()
        }
        To::Name(name, port) => {
            request.extend_from_slice(&[3, name.len() as u8]);
            request.extend_from_slice(name.as_bytes());
            port
        }
    };
    request.extend_from_slice(&port.to_be_bytes());
    s.write_all(&request).expect("request");
    let mut head = [0u8; 4];
    s.read_exact(&mut head).expect("reply");
    assert_eq!([head[0], head[2]], [5, 0], "{head:?}");
    let ip = match head[3] {
        1 => {
            let mut a = [0u8; 4];
            s.read_exact(&mut a).expect("address");
            IpAddr::from(a)
        }
        4 => {
            let mut a = [0u8; 16];
            s.read_exact(&mut a).expect("address");
            IpAddr::from(a)
        }
        other => panic!("reply address type {other}"),
    };
    let mut port = [0u8; 2];
    s.read_exact(&mut port).expect("port");
    Answer {
        code: head[1],
        bound: SocketAddr::new(ip, u16::from_be_bytes(port)),
        stream: s,
    }
}

/// Sends `line` through `s` and asserts it comes back whole.
fn assert_echoes(s: &mut TcpStream, line: &[u8]) {
    s.write_all(line).expect("send through the tunnel");
    let mut back = vec![0u8; line.len()];
    s.read_exact(&mut back).expect("the echo");
    assert_eq!(back, line);
}

/// Asserts that the proxy closed `s` (nothing more comes, no hang).
fn assert_closed(s: &mut TcpStream) {
    let mut rest = Vec::new();
    let read = s.read_to_end(&mut rest);
    assert!(
        matches!(read, Ok(0))
            || matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
        "{read:?} {rest:?}"
    );
}

/// TCP to `allowed`'s port on 127.0.0.1, HTTP to `up`'s port on
/// localhost; anything else denied by the default.
fn policy(allowed: &Echo, up: &Upstream) -> String {
    format!(
        r#"version: 1
default: deny
allow:
  - id: echo
    when: {{type: http.request, http.host: 127.0.0.1, http.port: {}}}
  - id: web
    when: {{type: http.request, http.host: localhost, http.port: {}}}
"#,
        allowed.port(),
        up.port()
    )
}

/// The audit lines of the proxy whose summary is `summary`.
fn lines_for(p: &Project, summary: &str) -> Vec<Value> {
    proxy_lines(p)
        .into_iter()
        .filter(|l| l["action"]["summary"] == summary)
        .collect()
}

#[test]
fn curl_through_socks5_reaches_an_allowed_host_and_not_a_denied_one() {
    let (echo, up, other) = (Echo::new(), Upstream::http(), Upstream::http());
    let p = Project::new(&policy(&echo, &up));
    let proxy = ProxyProcess::start(&p);
    let front = proxy.addr.to_string();
    let url = |u: &Upstream, path: &str| format!("http://localhost:{}{path}", u.port());

    let ok = curl(&p, &["--socks5-hostname", &front, &url(&up, "/ok/socks")]);
    ok.assert_upstream_answered("/ok/socks");
    let line = line_for(&p, &format!("CONNECT localhost:{}", up.port()));
    assert_eq!(
        (&line["decision"], &line["rule"]),
        (&"allow".into(), &"web".into())
    );
    assert_eq!(line["action"]["facets"]["http"]["tunnel"], true);

    let denied = curl(&p, &["--socks5-hostname", &front, &url(&other, "/no")]);
    assert_ne!(denied.exit, 0, "{denied:?}");
    assert!(
        denied.stderr.contains("(2)") || denied.stderr.contains("not allowed"),
        "not SOCKS's refusal by ruleset: {denied:?}"
    );
    assert_eq!(other.connections(), 0, "a denied CONNECT reached its host");
    let line = line_for(&p, &format!("CONNECT localhost:{}", other.port()));
    assert_eq!(line["decision"], "deny");
    // The same host by its address is not the host the rule names.
    let by_address = curl(&p, &["--socks5", &front, &up.url("/by-address")]);
    assert_ne!(by_address.exit, 0, "{by_address:?}");
    assert_eq!(up.targets(), ["GET /ok/socks"]);
}

#[test]
fn tcp_that_is_not_http_passes_through_socks5_only_when_allowed() {
    let (echo, denied_echo, up) = (Echo::new(), Echo::new(), Upstream::http());
    let p = Project::new(&policy(&echo, &up));
    let proxy = ProxyProcess::start(&p);

    let mut ok = socks(proxy.addr, 1, To::Addr(echo.addr));
    assert_eq!(ok.code, 0);
    assert!(ok.bound.ip().is_loopback(), "bound {}", ok.bound);
    assert_ne!(ok.bound.port(), 0);
    assert_echoes(&mut ok.stream, b"SSH-2.0-OpenSSH_9.6\r\n");
    assert_echoes(&mut ok.stream, &[0u8, 1, 2, 255, 254]);
    let mut by_name = socks(proxy.addr, 1, To::Name("127.0.0.1", echo.port()));
    assert_eq!(by_name.code, 0);
    assert_echoes(&mut by_name.stream, b"again\n");
    assert_eq!(echo.connections(), 2);

    let mut refused = socks(proxy.addr, 1, To::Addr(denied_echo.addr));
    assert_eq!(refused.code, 2, "not 'connection not allowed by ruleset'");
    assert_closed(&mut refused.stream);
    assert_eq!(denied_echo.connections(), 0, "a denied CONNECT reached it");
    let summary = format!("CONNECT 127.0.0.1:{}", denied_echo.port());
    assert_eq!(line_for(&p, &summary)["decision"], "deny");

    // BIND and UDP ASSOCIATE: not supported, never decided.
    for command in [2, 3] {
        let mut other = socks(proxy.addr, command, To::Addr(echo.addr));
        assert_eq!(other.code, 7, "command {command}");
        assert_closed(&mut other.stream);
    }
    assert_eq!(echo.connections(), 2);
    assert_eq!(
        lines_for(&p, &format!("CONNECT 127.0.0.1:{}", echo.port())).len(),
        2
    );
}

#[test]
fn an_ipv6_target_is_decided_by_its_address() {
    let Some(echo6) = Echo::on("[::1]:0") else {
        eprintln!("no IPv6 loopback on this machine: skipped");
        return;
    };
    let p = Project::new(&format!(
        r#"version: 1
default: deny
allow:
  - id: echo6
    when: {{type: http.request, http.host: "::1", http.port: {}}}
"#,
        echo6.port()
    ));
    let proxy = ProxyProcess::start(&p);
    let mut ok = socks(proxy.addr, 1, To::Addr(echo6.addr));
    assert_eq!(ok.code, 0);
    assert_echoes(&mut ok.stream, b"over v6\n");
    let line = line_for(&p, &format!("CONNECT [::1]:{}", echo6.port()));
    assert_eq!(line["rule"], "echo6");
}

#[test]
fn http_connect_carries_tcp_that_is_not_http_to_any_allowed_port() {
    let (echo, denied_echo, up) = (Echo::new(), Echo::new(), Upstream::http());
    let p = Project::new(&policy(&echo, &up));
    let proxy = ProxyProcess::start(&p);
    let connect = |port: u16| {
        let mut s = TcpStream::connect(proxy.addr).expect("connect");
        let head = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
        s.write_all(head.as_bytes()).expect("CONNECT");
        let answer = read_response(&mut s);
        (status_of(&answer), answer, s)
    };
    let (status, answer, mut s) = connect(echo.port());
    assert_eq!(status, 200, "{answer}");
    assert_echoes(&mut s, b"PING\r\n");
    let (status, answer, _) = connect(denied_echo.port());
    assert_eq!(status, 403, "{answer}");
    assert_eq!(denied_echo.connections(), 0);

    // SOCKS's CONNECT to the same place is the same action.
    let mut via_socks = socks(proxy.addr, 1, To::Addr(echo.addr));
    assert_eq!(via_socks.code, 0);
    assert_echoes(&mut via_socks.stream, b"PING\r\n");
    let lines = lines_for(&p, &format!("CONNECT 127.0.0.1:{}", echo.port()));
    assert_eq!(lines.len(), 2, "{}", p.audit_text());
    let action = |l: &Value| {
        // Each action's own id; HTTP's CONNECT has its Host header.
        let mut a = l["action"].clone();
        a["id"] = Value::Null;
        a["facets"]["http"]["headers"] = Value::Null;
        a
    };
    assert_eq!(action(&lines[0]), action(&lines[1]));
    assert_eq!(
        (&lines[0]["rule"], &lines[1]["rule"]),
        (&"echo".into(), &"echo".into())
    );
}

#[test]
fn the_proxy_s_own_address_is_not_reached_through_socks5() {
    let p = Project::new("version: 1\ndefault: allow\n");
    let proxy = ProxyProcess::start(&p);
    let mut own = socks(proxy.addr, 1, To::Addr(proxy.addr));
    assert_eq!(own.code, 2);
    assert_closed(&mut own.stream);
}

#[test]
fn an_inspected_host_through_socks5_is_decided_request_by_request() {
    let ca = TestCa::new();
    let up = Upstream::https(&ca);
    let p = Project::new(INSPECT);
    let proxy = ProxyProcess::start_trusting(&p, &ca.pem);
    let (front, proxy_ca) = (proxy.addr.to_string(), proxy.ca_pem());
    let get = |path: &str| {
        let url = up.url(path);
        let args = [
            "--socks5-hostname",
            &front,
            "--cacert",
            proxy_ca.to_str().unwrap(),
            &url,
        ];
        curl(&p, &args)
    };
    get("/ok/inspected").assert_upstream_answered("/ok/inspected");
    let secret = get("/secret");
    assert_eq!(secret.status, 403, "{secret:?}");
    assert_eq!(up.targets(), ["GET /ok/inspected"]);
    assert_eq!(
        line_for(&p, &format!("GET {}", up.url("/secret")))["rule"],
        "no-secret"
    );
    assert_no_tunnel_decided(&p);
}

#[test]
fn a_client_that_does_not_finish_its_handshake_is_closed() {
    let p = Project::new("version: 1\ndefault: allow\n");
    let proxy = ProxyProcess::start(&p);
    let mut s = TcpStream::connect(proxy.addr).expect("connect");
    s.write_all(&[5, 1]).expect("half a greeting");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let start = Instant::now();
    assert_closed(&mut s);
    assert!(
        start.elapsed() < Duration::from_secs(25),
        "closed only after {:?}",
        start.elapsed()
    );
    assert!(proxy_lines(&p).is_empty(), "{}", p.audit_text());
}
