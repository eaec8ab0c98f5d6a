//! Servers a test reaches through the egress proxy, on loopback: a plain
//! HTTP/1.1 server (keep-alive, bodies of any size counted as they
//! stream in), the same over TLS with a test CA of its own, and git's
//! smart HTTP (`git http-backend` run as CGI per request). Each records
//! what it was sent, so that a test can say whether a request arrived.

#![allow(dead_code)]

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The most of a request body an upstream keeps (it counts all of it).
const KEEP_BODY: usize = 4 << 20;

/// One request as an upstream received it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    /// The request target as sent (`/path?query`).
    pub target: String,
    /// Names in lower case, in order.
    pub headers: Vec<(String, String)>,
    /// How many body bytes arrived (after chunked decoding).
    pub body_len: u64,
    /// The first [`KEEP_BODY`] bytes of the body.
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The target without its query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }
}

/// What an upstream answers.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// 200 with a text body.
    pub fn text(body: impl Into<String>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: body.into().into_bytes(),
        }
    }

    /// `status` with a JSON body.
    pub fn json(status: u16, v: &serde_json::Value) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: v.to_string().into_bytes(),
        }
    }

    fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut head = format!("HTTP/1.1 {} Whatever\r\n", self.status);
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if self.status != 101 {
            head.push_str(&format!("content-length: {}\r\n", self.body.len()));
        }
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        out.write_all(&self.body)?;
        out.flush()
    }
}

/// The default answer: `upstream: METHOD TARGET (N bytes)`.
pub fn echo(seen: &Seen) -> Reply {
    Reply::text(format!(
        "upstream: {} {} ({} bytes)\n",
        seen.method, seen.target, seen.body_len
    ))
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

struct Shared {
    handler: Box<Handler>,
    seen: Mutex<Vec<Seen>>,
    /// Body bytes received so far, over every request: a test sees a body
    /// arrive while the client is still sending it.
    body_bytes: AtomicU64,
    connections: AtomicUsize,
    tls: Option<Arc<rustls::ServerConfig>>,
}

/// A running upstream; stops accepting when dropped.
pub struct Upstream {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
}

impl Upstream {
    /// Plain HTTP on 127.0.0.1, answering [`echo`].
    pub fn http() -> Upstream {
        Upstream::start("127.0.0.1:0", None, echo)
    }

    /// Plain HTTP on 127.0.0.1 answering with `handler`.
    pub fn http_with(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Upstream {
        Upstream::start("127.0.0.1:0", None, handler)
    }

    /// HTTPS on 127.0.0.1 with a certificate of `ca`, answering [`echo`].
    pub fn https(ca: &TestCa) -> Upstream {
        Upstream::start("127.0.0.1:0", Some(ca.server_config()), echo)
    }

    /// Plain HTTP on 127.0.0.1 that accepts a WebSocket upgrade (101) and
    /// then echoes every byte (frames are not read: the proxy splices
    /// bytes); [`echo`] for anything else.
    pub fn websocket_echo() -> Upstream {
        Upstream::http_with(|seen| {
            if !seen
                .header("upgrade")
                .is_some_and(|u| u.eq_ignore_ascii_case("websocket"))
            {
                return echo(seen);
            }
            Reply {
                status: 101,
                headers: vec![
                    ("upgrade".into(), "websocket".into()),
                    ("connection".into(), "Upgrade".into()),
                    // For the key of RFC 6455's example, which the tests send.
                    (
                        "sec-websocket-accept".into(),
                        "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".into(),
                    ),
                ],
                body: Vec::new(),
            }
        })
    }

    /// Plain HTTP on `[::1]`; `None` when this machine has no IPv6 loopback.
    pub fn http_ipv6() -> Option<Upstream> {
        TcpListener::bind("[::1]:0").ok()?;
        Some(Upstream::start("[::1]:0", None, echo))
    }

    fn start(
        bind: &str,
        tls: Option<Arc<rustls::ServerConfig>>,
        handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> Upstream {
        let listener = TcpListener::bind(bind).expect("bind an upstream");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            handler: Box::new(handler),
            seen: Mutex::default(),
            body_bytes: AtomicU64::new(0),
            connections: AtomicUsize::new(0),
            tls,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (Arc::clone(&shared), Arc::clone(&stop));
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                s.connections.fetch_add(1, Ordering::SeqCst);
                let s = Arc::clone(&s);
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
                    match &s.tls {
                        Some(config) => {
                            let Ok(tls) = rustls::ServerConnection::new(Arc::clone(config)) else {
                                return;
                            };
                            serve(rustls::StreamOwned::new(tls, conn), &s);
                        }
                        None => serve(conn, &s),
                    }
                });
            }
        });
        Upstream { addr, shared, stop }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `host:port` as a URL writes it (`[::1]:PORT` for IPv6).
    pub fn authority(&self) -> String {
        self.addr.to_string()
    }

    /// `http://HOST:PORT{path}` (`https` for a TLS upstream).
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.shared.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}{path}", self.authority())
    }

    /// Every request received so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// The targets of every request received so far.
    pub fn targets(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| format!("{} {}", s.method, s.target))
            .collect()
    }

    /// Body bytes received so far (requests still arriving included).
    pub fn body_bytes(&self) -> u64 {
        self.shared.body_bytes.load(Ordering::SeqCst)
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::SeqCst)
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

/// Serves requests on one connection until the client closes it.
fn serve<S: Read + Write>(stream: S, shared: &Shared) {
    let mut reader = BufReader::new(stream);
    while let Some(mut seen) = read_head(&mut reader) {
        let chunked = seen
            .header("transfer-encoding")
            .is_some_and(|v| v.contains("chunked"));
        let length = seen
            .header("content-length")
            .and_then(|v| v.parse::<u64>().ok());
        let read = read_body(&mut reader, chunked, length.unwrap_or(0), &mut |chunk| {
            seen.body_len += chunk.len() as u64;
            shared
                .body_bytes
                .fetch_add(chunk.len() as u64, Ordering::SeqCst);
            let room = KEEP_BODY.saturating_sub(seen.body.len());
            seen.body.extend_from_slice(&chunk[..room.min(chunk.len())]);
        });
        if read.is_err() {
            return;
        }
        let close = seen
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        shared.seen.lock().unwrap().push(seen.clone());
        let reply = (shared.handler)(&seen);
        if reply.write_to(reader.get_mut()).is_err() || close {
            return;
        }
        if reply.status == 101 {
            return echo_bytes(reader);
        }
    }
}

/// After a switch of protocols: every byte back as it came.
fn echo_bytes<S: Read + Write>(mut reader: BufReader<S>) {
    loop {
        let got = match reader.fill_buf() {
            Ok([]) | Err(_) => return,
            Ok(b) => b.to_vec(),
        };
        reader.consume(got.len());
        if reader.get_mut().write_all(&got).is_err() || reader.get_mut().flush().is_err() {
            return;
        }
    }
}

/// The request line and headers (names in lower case), the body still to
/// read; `None` at the end of the connection.
fn read_head(r: &mut impl BufRead) -> Option<Seen> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let mut seen = Seen {
        method: parts.next()?.to_owned(),
        target: parts.next()?.to_owned(),
        headers: Vec::new(),
        body_len: 0,
        body: Vec::new(),
    };
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            return Some(seen);
        }
        let (name, value) = h.split_once(':')?;
        seen.headers
            .push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
}

/// Reads a body (chunked, or `length` bytes), handing each piece to `sink`.
fn read_body(
    r: &mut impl BufRead,
    chunked: bool,
    length: u64,
    sink: &mut dyn FnMut(&[u8]),
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 << 10];
    let mut copy = |r: &mut dyn BufRead, mut n: u64| -> std::io::Result<()> {
        while n > 0 {
            let want = buf.len().min(n as usize);
            let got = r.read(&mut buf[..want])?;
            if got == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            sink(&buf[..got]);
            n -= got as u64;
        }
        Ok(())
    };
    if !chunked {
        return copy(r, length);
    }
    loop {
        let mut size = String::new();
        r.read_line(&mut size)?;
        let size = u64::from_str_radix(size.trim().split(';').next().unwrap_or("x"), 16)
            .map_err(|_| std::io::Error::other("bad chunk size"))?;
        if size == 0 {
            // Trailers, if any, up to the blank line.
            loop {
                let mut t = String::new();
                if r.read_line(&mut t)? == 0 || t.trim_end().is_empty() {
                    return Ok(());
                }
            }
        }
        copy(r, size)?;
        let mut crlf = String::new();
        r.read_line(&mut crlf)?;
    }
}

/// A certificate authority of the test's own, which the system does not
/// trust: `pem` is its certificate, for `--cacert` and `SSL_CERT_FILE`.
pub struct TestCa {
    _dir: tempfile::TempDir,
    pub pem: PathBuf,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    pub fn new() -> TestCa {
        let mut params = CertificateParams::default();
        params
            .distinguished_name
            .push(DnType::CommonName, "Aileron proxy tests' upstream CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        let cert = params.self_signed(&key).expect("CA certificate");
        let dir = tempfile::tempdir().expect("temp dir");
        let pem = dir.path().join("upstream-ca.pem");
        std::fs::write(&pem, cert.pem()).expect("write the CA");
        TestCa {
            _dir: dir,
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A server configuration for `localhost`, 127.0.0.1 and ::1
    /// (HTTP/1.1 by ALPN).
    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let names = ["localhost", "127.0.0.1", "::1"].map(str::to_owned);
        let mut params = CertificateParams::new(names).expect("leaf names");
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        let key = KeyPair::generate().expect("leaf key");
        let cert = params.signed_by(&key, &self.issuer).expect("leaf");
        let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(cert.der().to_vec())], der)
        .expect("TLS server configuration");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

/// Git's smart HTTP over an [`Upstream`]: each request is `git http-backend`
/// run as CGI on the repositories under `root` (pushes allowed: it runs
/// for an authenticated `REMOTE_USER`).
pub fn git_server(root: &Path) -> Upstream {
    let root = root.to_path_buf();
    Upstream::http_with(move |seen| http_backend(&root, seen))
}

fn http_backend(root: &Path, seen: &Seen) -> Reply {
    let (path, query) = seen.target.split_once('?').unwrap_or((&seen.target, ""));
    let mut cmd = Command::new("git");
    cmd.arg("http-backend")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", &seen.method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", seen.body.len().to_string())
        .env("REMOTE_USER", "tester")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, var) in [
        ("content-type", "CONTENT_TYPE"),
        ("content-encoding", "HTTP_CONTENT_ENCODING"),
        ("git-protocol", "GIT_PROTOCOL"),
    ] {
        if let Some(v) = seen.header(name) {
            cmd.env(var, v);
        }
    }
    let mut child = cmd.spawn().expect("git http-backend");
    let mut stdin = child.stdin.take().expect("stdin");
    let body = seen.body.clone();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let out = child.wait_with_output().expect("git http-backend output");
    let _ = writer.join();
    let text = &out.stdout;
    let split = text
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4))
        .or_else(|| {
            text.windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, i + 2))
        })
        .unwrap_or((text.len(), text.len()));
    let mut reply = Reply {
        status: 200,
        headers: Vec::new(),
        body: text[split.1..].to_vec(),
    };
    for line in String::from_utf8_lossy(&text[..split.0]).lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            reply.status = value
                .split_whitespace()
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or(500);
        } else {
            reply.headers.push((name.to_owned(), value.to_owned()));
        }
    }
    if !out.status.success() && reply.status == 200 {
        reply.status = 500;
        reply.body = out.stderr;
    }
    reply
}
