//! Slow and flooding clients (issue 29): a connection trickling its
//! request head is closed after the header timeout, an idle one after the
//! idle timeout, a flood of them never keeps another client out (also
//! past the connection cap), a request in flight is never cut; asks beyond
//! a session's or an agent token's cap are refused with the reason; and
//! HTTP/2 requests are checked by their `:authority`.

mod support;

use aileron_server::Server;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{Api, Env, WAIT, shell};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The default header timeout (`Limits::default()`), as a user gets it.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Raises this process's open-file limit to its hard limit (the clients
/// and the server share the process); the limit now.
fn raise_nofile() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct given.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = lim.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
    lim.rlim_cur
}

/// Opens `n` connections that each send the first bytes of a request head
/// and then one more byte every 500 ms, never finishing it.
async fn tricklers(addr: std::net::SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"POST /api/evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await
            .unwrap();
        conns.push(s);
    }
    conns
}

/// Writes a byte to each open connection; the number still open.
async fn trickle(conns: &mut [TcpStream]) -> usize {
    let mut open = 0;
    for s in conns.iter_mut() {
        if s.write_all(b"a").await.is_ok() && !closed_now(s).await {
            open += 1;
        }
    }
    open
}

/// Whether the server closed `s` (a read sees the end, or an error); a
/// trickled head is never answered.
async fn closed_now(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 512];
    match s.try_read(&mut buf) {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Ok(0) | Err(_) => true,
        Ok(n) => panic!(
            "a request head that never ended was answered: {}",
            String::from_utf8_lossy(&buf[..n])
        ),
    }
}

/// A decision on a fresh connection, and how long it took.
async fn timed_evaluate(api: &Api, i: usize) -> Duration {
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let started = Instant::now();
    let r = client
        .post(api.url("/api/evaluate"))
        .bearer_auth(api.agent())
        .json(&shell(
            &format!("ok-{i}"),
            "git status",
            &api.server.app.cfg.cwd,
            "s",
        ))
        .timeout(WAIT)
        .send()
        .await
        .expect("the server answers beside the slow connections");
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["decision"], "allow", "{v}");
    started.elapsed()
}

/// Posts `body` with the agent token in a task of its own: the status and
/// the answer.
fn post_later(api: &Api, path: &str, body: Value) -> tokio::task::JoinHandle<(u16, Value)> {
    let (client, url, token) = (api.client.clone(), api.url(path), api.agent().to_owned());
    tokio::spawn(async move {
        let r = client.post(url).bearer_auth(token).json(&body).send().await;
        support::json_of(r.expect("the server answers")).await
    })
}

fn env_with_policy() -> Env {
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        "version: 1\ndefault: allow\nask:\n  - {id: ask-push, command: \"git push *\"}\n",
    );
    env
}

/// 2,000 connections trickling request heads: the server keeps answering
/// others promptly, and closes every one of them once the header timeout
/// has passed since its first byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickling_connections_are_closed_and_keep_no_one_out() {
    assert!(raise_nofile() >= 4_500, "the test needs 4,500 descriptors");
    let env = env_with_policy();
    let api = env.start().await;
    let began = Instant::now();
    let mut conns = tricklers(api.server.addr, 2_000).await;
    let mut slowest = Duration::ZERO;
    let mut i = 0;
    // Until past the timeout: answers stay prompt while the flood trickles.
    while began.elapsed() < HEADER_TIMEOUT - Duration::from_secs(1) {
        assert_eq!(
            trickle(&mut conns).await,
            2_000,
            "closed before the timeout"
        );
        slowest = slowest.max(timed_evaluate(&api, i).await);
        i += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        slowest < Duration::from_secs(2),
        "a decision took {slowest:?} beside 2,000 slow connections"
    );
    let deadline = began + HEADER_TIMEOUT + Duration::from_secs(5);
    loop {
        let open = trickle(&mut conns).await;
        if open == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{open} trickling connections still open {:?} after their first byte",
            began.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    timed_evaluate(&api, i).await;
    api.server.shutdown().await;
}

/// One slowloris connection is closed after the header timeout, not before.
#[tokio::test]
async fn a_slowloris_connection_is_closed_after_the_header_timeout() {
    let env = env_with_policy();
    let api = env.start().await;
    let mut conns = tricklers(api.server.addr, 1).await;
    let began = Instant::now();
    while trickle(&mut conns).await == 1 {
        assert!(
            began.elapsed() < HEADER_TIMEOUT + Duration::from_secs(3),
            "still open"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let lived = began.elapsed();
    assert!(
        lived >= HEADER_TIMEOUT - Duration::from_millis(300),
        "closed after {lived:?}, before the header timeout"
    );
    api.server.shutdown().await;
}

/// With a small connection cap, a flood past it waits in the backlog while
/// the connections holding no request are shed: another client still gets
/// its decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_cap_a_client_still_gets_in() {
    raise_nofile();
    let env = env_with_policy();
    let mut cfg = env.config();
    cfg.limits.max_connections = 50;
    let api = Api::new(Server::start(cfg).await.unwrap());
    // Idle connections (sending nothing) and trickling ones, far past the cap.
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(api.server.addr).await.unwrap());
    }
    let mut conns = tricklers(api.server.addr, 300).await;
    for i in 0..5 {
        trickle(&mut conns).await;
        let took = timed_evaluate(&api, i).await;
        assert!(took < Duration::from_secs(5), "took {took:?} at the cap");
    }
    api.server.shutdown().await;
}

/// A connection with no request in flight is closed after the idle
/// timeout; a request in flight (an ask waiting for a person longer than
/// both timeouts) is not cut, and its connection is kept for the next one.
#[tokio::test]
async fn idle_connections_close_and_requests_in_flight_stay() {
    let env = env_with_policy();
    let mut cfg = env.config();
    cfg.limits.header_timeout = Some(Duration::from_secs(1));
    cfg.limits.idle_timeout = Some(Duration::from_secs(2));
    let api = Api::new(Server::start(cfg).await.unwrap());

    let mut idle = TcpStream::connect(api.server.addr).await.unwrap();
    let began = Instant::now();
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(WAIT, idle.read(&mut buf))
        .await
        .expect("the idle connection is closed")
        .unwrap_or(0);
    assert_eq!(n, 0);
    assert!(began.elapsed() >= Duration::from_millis(1_700));

    // An ask answered after 4 s, past both timeouts, on one connection.
    let ask = shell("push-1", "git push origin main", &env.proj, "s1");
    let waiting = post_later(&api, "/api/evaluate", ask);
    api.wait_pending("push-1").await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let (status, v) = api
        .post(
            "/api/pending-actions/push-1/decision",
            api.admin(),
            &json!({"decision": "once"}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    let (status, v) = waiting.await.unwrap();
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["decision"], "allow", "{v}");
    api.server.shutdown().await;
}

/// Asks of one session beyond its cap are refused with the reason (a deny,
/// recorded in the action log); asks under one agent token beyond its cap
/// are refused by `/api/pending-actions` with 429 and the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_beyond_the_caps_are_refused() {
    let env = env_with_policy();
    let api = env.start().await;
    let caps = api.server.app.cfg.limits.clone();
    let mut waiting = Vec::new();
    for i in 0..caps.asks_per_session {
        let id = format!("push-{i}");
        let ask = shell(&id, &format!("git push origin b{i}"), &env.proj, "flood");
        waiting.push(post_later(&api, "/api/evaluate", ask));
        api.wait_pending(&id).await;
    }
    let v = api
        .evaluate(&shell(
            "push-over",
            "git push origin over",
            &env.proj,
            "flood",
        ))
        .await;
    assert_eq!(v["decision"], "deny", "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("too many asks waiting for a person: this session has 16"),
        "{reason}"
    );
    // Not in the queue, and in the action log with its reason.
    let (_, pending) = api.get("/api/pending-actions").await;
    assert!(!pending.to_string().contains("push-over"));
    let (_, log) = api.get("/api/actions?session=flood&limit=100").await;
    assert!(log.to_string().contains("too many asks waiting"), "{log}");
    // Another session still asks.
    let other = shell("push-other", "git push origin other", &env.proj, "other");
    waiting.push(post_later(&api, "/api/evaluate", other));
    api.wait_pending("push-other").await;

    // The adapters' queue: per agent token, across sessions.
    let shown = caps.asks_per_session + 1;
    for i in shown..caps.asks_per_token {
        let id = format!("adapter-{i}");
        let body = json!({"action": shell(&id, "deploy", &env.proj, &format!("a{i}")),
            "reason": "the agent's own words", "timeout_secs": 60});
        waiting.push(post_later(&api, "/api/pending-actions", body));
        api.wait_pending(&id).await;
    }
    let body = json!({"action": shell("adapter-over", "deploy", &env.proj, "fresh"),
        "reason": "one more"});
    let (status, v) = api.post("/api/pending-actions", api.agent(), &body).await;
    assert_eq!(status, 429, "{v}");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("this agent token has 64"),
        "{v}"
    );
    // An approver's answers are not capped: the admin answers one.
    let (status, _) = api
        .post(
            "/api/pending-actions/push-0/decision",
            api.admin(),
            &json!({"decision": "reject"}),
        )
        .await;
    assert_eq!(status, 200);
    api.server.shutdown().await;
    drop(waiting);
}

/// HTTP/2 with prior knowledge: served, and checked by `:authority` (no
/// `Host` header); an HTTP/1 absolute target naming another host is
/// refused even with a good `Host`.
#[tokio::test]
async fn http2_requests_are_checked_by_their_authority() {
    let env = env_with_policy();
    let api = env.start().await;
    let h2 = reqwest::Client::builder()
        .no_proxy()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let r = h2
        .post(api.url("/api/evaluate"))
        .bearer_auth(api.agent())
        .json(&shell("h2-1", "git status", &env.proj, "h2"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.version(), reqwest::Version::HTTP_2);
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["decision"], "allow");

    let port = api.server.addr.port();
    let evil = reqwest::Client::builder()
        .no_proxy()
        .http2_prior_knowledge()
        .resolve("evil.example", api.server.addr)
        .build()
        .unwrap();
    let r = evil
        .get(format!("http://evil.example:{port}/api/action-schemas"))
        .bearer_auth(api.agent())
        .send()
        .await
        .unwrap();
    assert_eq!(r.version(), reqwest::Version::HTTP_2);
    assert_eq!(r.status(), 403);

    let mut s = TcpStream::connect(api.server.addr).await.unwrap();
    let req = format!(
        "GET http://evil.example:{port}/api/action-schemas HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        api.agent()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    let r = api
        .req(Method::GET, "/api/action-schemas", Some(api.agent()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    api.server.shutdown().await;
}
