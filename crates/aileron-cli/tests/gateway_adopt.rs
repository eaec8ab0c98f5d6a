//! `aileron proxy --adopt-listeners FD` run for real, as `aileron launch`
//! runs it for the box: listening sockets made elsewhere (in the box's
//! network namespace) arrive over a `SOCK_SEQPACKET` pair, one a message,
//! and the proxy accepts on each as on its own listener; anything else is
//! refused and closed. The database gateway takes the same option, in
//! front of a real PostgreSQL reached by `psql`.

#![cfg(target_os = "linux")]

mod support;

#[path = "../../aileron-postgres/tests/support/cluster.rs"]
mod cluster;

use aileron_supervisor::fdpass;
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::proxy::{ProxyProcess, as_fd3, curl, line_for};
use support::upstream::Upstream;
use support::{AILERON, Project, WAIT, collect, no_tty, text};

/// Requests to the allowed upstream's port only; the default denies.
fn policy(allowed: &Upstream) -> String {
    format!(
        r#"version: 1
default: deny
allow:
  - id: the-upstream
    when: {{type: http.request, http.host: 127.0.0.1, http.port: {}}}
"#,
        allowed.port()
    )
}

/// A proxy adopting what is sent on the returned end of its channel.
fn adopting(p: &Project) -> (ProxyProcess, OwnedFd) {
    let (ours, theirs) = fdpass::socket_pair().expect("socket pair");
    let proxy = ProxyProcess::start_adopting(p, &theirs);
    (proxy, ours)
}

/// Sends `fd` over `channel`.
fn send(channel: &OwnedFd, fd: &impl AsRawFd) {
    fdpass::send_fd(channel.as_raw_fd(), fd.as_raw_fd()).expect("send a descriptor");
}

/// A listener on another loopback port, sent to the proxy and closed
/// here: only the proxy's copy is left to accept on it.
fn hand_over(channel: &OwnedFd) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    send(channel, &listener);
    addr
}

/// Waits until the proxy's stderr holds `n` lines containing `needle`.
fn await_lines(proxy: &ProxyProcess, needle: &str, n: usize) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let err = proxy.stderr();
        if err.matches(needle).count() >= n {
            return err;
        }
        assert!(
            Instant::now() < deadline,
            "no {n} lines with {needle:?}: {err}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_listener_sent_over_the_channel_is_served_as_the_proxy_s_own() {
    let up = Upstream::http();
    let other = Upstream::http();
    let p = Project::new(&policy(&up));
    let (mut proxy, channel) = adopting(&p);
    let adopted = format!("http://{}", hand_over(&channel));

    let ok = curl(&p, &["-x", &adopted, &up.url("/ok/adopted")]);
    ok.assert_upstream_answered("/ok/adopted");
    let denied = curl(&p, &["-x", &adopted, &other.url("/elsewhere")]);
    assert_eq!(denied.status, 403, "{denied:?}");
    assert!(
        denied.body.starts_with("aileron: denied"),
        "not the proxy's refusal: {denied:?}"
    );
    assert_eq!(other.connections(), 0, "a denied request reached its host");
    let line = line_for(&p, &format!("GET {}", up.url("/ok/adopted")));
    assert_eq!(
        (&line["decision"], &line["rule"]),
        (&"allow".into(), &"the-upstream".into())
    );
    assert_eq!(
        line_for(&p, &format!("GET {}", other.url("/elsewhere")))["decision"],
        "deny"
    );
    // Its own listener is served beside the adopted one.
    proxy.assert_serves(&p, &up);
    let again = curl(&p, &["-x", &adopted, &up.url("/ok/again")]);
    again.assert_upstream_answered("/ok/again");
}

#[test]
fn each_of_several_listeners_is_served_and_the_channel_s_end_stops_none() {
    let up = Upstream::http();
    let p = Project::new(&policy(&up));
    let (mut proxy, channel) = adopting(&p);
    let adopted: Vec<String> = (0..3)
        .map(|_| format!("http://{}", hand_over(&channel)))
        .collect();
    drop(channel);
    for (n, via) in adopted.iter().enumerate() {
        let path = format!("/ok/listener-{n}");
        curl(&p, &["-x", via, &up.url(&path)]).assert_upstream_answered(&path);
    }
    assert!(proxy.running(), "the channel's end ended the proxy");
    proxy.assert_serves(&p, &up);
    assert!(!proxy.stderr().contains("refused"), "{}", proxy.stderr());
}

/// A TCP socket bound to a loopback port and not listening.
fn bound_not_listening() -> OwnedFd {
    // SAFETY: plain socket calls on a descriptor made here.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let owned = OwnedFd::from_raw_fd(fd);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
        let r = libc::bind(
            fd,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(r, 0, "bind: {}", std::io::Error::last_os_error());
        owned
    }
}

/// A pipe's two ends (read, write), close-on-exec.
fn pipe() -> (std::fs::File, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both were just made and are ours.
    unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            OwnedFd::from_raw_fd(fds[1]),
        )
    }
}

#[test]
fn what_is_not_a_listening_tcp_socket_is_refused_closed_and_the_rest_served() {
    let up = Upstream::http();
    let p = Project::new(&policy(&up));
    let (mut proxy, channel) = adopting(&p);

    let (mut read_end, write_end) = pipe();
    send(&channel, &write_end);
    drop(write_end);
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
    send(&channel, &udp);
    send(&channel, &bound_not_listening());
    let (unix, _peer) = std::os::unix::net::UnixStream::pair().expect("unix pair");
    send(&channel, &unix);

    let err = await_lines(&proxy, "refused an adopted descriptor", 4);
    for why in [
        "not a socket",
        "not an IP socket",
        "not a TCP socket",
        "a TCP socket that is not listening",
    ] {
        assert!(
            err.lines().any(|l| l
                == format!("aileron proxy: refused an adopted descriptor: {why}")
                || l.starts_with(&format!(
                    "aileron proxy: refused an adopted descriptor: {why} ("
                ))),
            "no refusal saying {why:?}: {err}"
        );
    }
    // The proxy closed its copy of the pipe: the read end sees its end.
    let mut rest = Vec::new();
    let done = std::thread::spawn(move || read_end.read_to_end(&mut rest).map(|_| rest));
    let deadline = Instant::now() + WAIT;
    while !done.is_finished() {
        assert!(
            Instant::now() < deadline,
            "the refused pipe is still open in the proxy"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(done.join().unwrap().expect("read"), b"");

    let adopted = format!("http://{}", hand_over(&channel));
    curl(&p, &["-x", &adopted, &up.url("/ok/after")]).assert_upstream_answered("/ok/after");
    assert!(proxy.running());
}

/// `aileron proxy --adopt-listeners 3` run to its end, with `fd3` set
/// up by `give`: its exit status and stderr.
fn refused_at_start(p: &Project, give: impl FnOnce(&mut std::process::Command)) -> String {
    let mut cmd = p.command(AILERON);
    cmd.args(["proxy", "--listen", "127.0.0.1:0", "--adopt-listeners", "3"])
        .arg("--policy")
        .arg(p.path("aileron.yaml"))
        .env("AILERON_DATA", p.root.join("data"));
    give(&mut cmd);
    let out = support::run(&mut cmd, b"");
    let err = support::text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(support::text(&out.stdout).is_empty(), "it listened: {err}");
    assert!(
        err.starts_with("aileron: cannot adopt listeners from descriptor 3: "),
        "{err}"
    );
    err
}

#[test]
fn a_descriptor_that_is_not_a_seqpacket_socket_starts_no_proxy() {
    let up = Upstream::http();
    let p = Project::new(&policy(&up));
    let err = refused_at_start(&p, |cmd| {
        // SAFETY: close only, between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(cmd, || {
                libc::close(3);
                Ok(())
            });
        }
    });
    assert!(err.contains("Bad file descriptor"), "{err}");
    let (stream, _peer) = std::os::unix::net::UnixStream::pair().expect("pair");
    let err = refused_at_start(&p, |cmd| as_fd3(cmd, &stream));
    assert!(err.contains("not a Unix SOCK_SEQPACKET socket"), "{err}");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let err = refused_at_start(&p, |cmd| as_fd3(cmd, &listener));
    assert!(err.contains("not a Unix SOCK_SEQPACKET socket"), "{err}");
}

/// `aileron proxy postgres` in front of `db`, adopting what is sent on
/// the returned channel; killed when dropped.
struct PgGateway {
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    _out: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl PgGateway {
    fn start(p: &Project, db: &cluster::Cluster) -> (PgGateway, OwnedFd) {
        let (ours, theirs) = fdpass::socket_pair().expect("socket pair");
        let upstream = format!("postgres://127.0.0.1:{}", db.port);
        let mut cmd = p.aileron(&["proxy", "postgres", "--listen", "127.0.0.1:0"]);
        cmd.args(["--upstream", &upstream, "--adopt-listeners", "3"]);
        as_fd3(&mut cmd, &theirs);
        let mut child = no_tty(&mut cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn aileron proxy postgres");
        let stderr = collect(child.stderr.take().expect("stderr"));
        let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let first = out.next().and_then(Result::ok).unwrap_or_default();
        assert!(
            first.starts_with("aileron proxy postgres: listening on "),
            "{first:?} {}",
            text(&stderr.lock().unwrap())
        );
        let gw = PgGateway {
            child,
            stderr,
            _out: out,
        };
        (gw, ours)
    }

    fn stderr(&self) -> String {
        text(&self.stderr.lock().unwrap())
    }
}

impl Drop for PgGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_database_gateway_decides_each_statement_on_an_adopted_listener() {
    let Some((db, _)) = cluster::Cluster::start() else {
        // In CI a missing server is a failure, not a pass.
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "no PostgreSQL (install Debian's `postgresql`)"
        );
        eprintln!("skipped: no PostgreSQL (install Debian's `postgresql`)");
        return;
    };
    let p = Project::new(
        "version: 1
default: allow
deny:
  - id: no-drop
    description: the agent may not drop tables
    when: {type: sql.query, sql.verb: DROP}
",
    );
    let (gw, channel) = PgGateway::start(&p, &db);
    let adopted = hand_over(&channel);
    let conn = format!("postgres://aileron@{adopted}/postgres");
    let psql = |sql: &str| {
        let out = p
            .command("psql")
            .args(["-X", "-tA", &conn, "-c", sql])
            .output()
            .expect("psql");
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (status, _, err) = psql("CREATE TABLE t (id int)");
    assert_eq!(status, Some(0), "{err}");
    let (status, _, err) = psql("DROP TABLE t");
    assert_eq!(status, Some(1), "{err}");
    assert!(
        err.contains("aileron: denied: the agent may not drop tables (rule no-drop)"),
        "{err}"
    );
    let (status, out, err) = psql("SELECT count(*) FROM t");
    assert_eq!((status, out.trim()), (Some(0), "0"), "{err}");

    send(
        &channel,
        &std::net::UdpSocket::bind("127.0.0.1:0").expect("udp"),
    );
    let deadline = Instant::now() + WAIT;
    while !gw.stderr().contains("refused an adopted descriptor") {
        assert!(Instant::now() < deadline, "{}", gw.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        gw.stderr()
            .contains("aileron postgres: refused an adopted descriptor: not a TCP socket"),
        "{}",
        gw.stderr()
    );
}

/// A query of type A for `name`, id 0x4242.
fn dns_query(name: &str) -> Vec<u8> {
    let mut m = vec![0x42, 0x42, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in name.split('.') {
        m.push(label.len() as u8);
        m.extend_from_slice(label.as_bytes());
    }
    m.extend_from_slice(&[0, 0, 1, 0, 1]);
    m
}

/// The response code of a DNS reply to [`dns_query`].
fn rcode(reply: &[u8]) -> u8 {
    assert_eq!(&reply[..2], &[0x42, 0x42], "not the reply: {reply:?}");
    reply[3] & 0x0F
}

/// The box's DNS sockets, sent as such (`fdpass::FOR_DNS`): the proxy
/// answers names on the UDP socket and the TCP listener, each decided by
/// the policy (an allowed name resolved, another REFUSED); a UDP socket
/// sent as a gateway's listener is refused.
#[test]
fn dns_sockets_sent_as_such_are_answered_by_the_proxy() {
    use std::io::Write;
    let p = Project::new(
        "version: 1\ndefault: deny\nallow:\n  - id: local-names\n    when: {type: http.request, http.host: localhost}\n",
    );
    let (proxy, channel) = adopting(&p);
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind udp");
    let tcp = TcpListener::bind("127.0.0.1:0").expect("bind tcp");
    let (udp_addr, tcp_addr) = (udp.local_addr().unwrap(), tcp.local_addr().unwrap());
    for fd in [udp.as_raw_fd(), tcp.as_raw_fd()] {
        fdpass::send_fd_for(channel.as_raw_fd(), fd, fdpass::FOR_DNS).expect("send a DNS socket");
    }
    let stray = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind udp");
    send(&channel, &stray);
    drop((udp, tcp, stray));
    await_lines(&proxy, "refused an adopted descriptor: not a TCP socket", 1);

    let client = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    client.set_read_timeout(Some(WAIT)).unwrap();
    let mut buf = [0u8; 512];
    for (name, want) in [("localhost", 0), ("denied.example", 5)] {
        client.send_to(&dns_query(name), udp_addr).unwrap();
        let n = client.recv(&mut buf).expect("a reply over UDP");
        assert_eq!(rcode(&buf[..n]), want, "{name} over UDP");
    }
    let mut conn = std::net::TcpStream::connect(tcp_addr).expect("connect");
    conn.set_read_timeout(Some(WAIT)).unwrap();
    for (name, want) in [("localhost", 0), ("denied.example", 5)] {
        let q = dns_query(name);
        conn.write_all(&(q.len() as u16).to_be_bytes()).unwrap();
        conn.write_all(&q).unwrap();
        let mut len = [0u8; 2];
        conn.read_exact(&mut len).expect("a reply over TCP");
        let mut reply = vec![0u8; usize::from(u16::from_be_bytes(len))];
        conn.read_exact(&mut reply).unwrap();
        assert_eq!(rcode(&reply), want, "{name} over TCP");
    }
    // Each lookup decided and audited, over UDP and over TCP.
    let denied: Vec<_> = p
        .audit()
        .into_iter()
        .filter(|l| l["action"]["summary"] == "DNS A denied.example")
        .map(|l| l["decision"].clone())
        .collect();
    assert_eq!(denied, ["deny", "deny"], "{}", p.audit_text());
}
