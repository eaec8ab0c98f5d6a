//! `aileron proxy` against the same upstream reached directly, in one run
//! (issue 18): the latency a request gains through the proxy, plain HTTP
//! and inside inspected TLS once the host's certificate is minted (goal
//! ≤ 1 ms at the median), the throughput of a large download (goal ≥ 50%
//! of direct; plain HTTP and an HTTPS tunnel the proxy does not open, by
//! HTTP's CONNECT and by its SOCKS5 front), and the memory each idle client
//! connection holds in the proxy (goal ≤ 64 KiB).
//!
//! The proxy is the installed binary, run on its own with a policy that
//! allows the bench's requests (each one is decided and written to the
//! audit log, as in use). The upstream and the clients are plain threads
//! with keep-alive connections, so what differs between the two columns is
//! the proxy.
//!
//! Then the same 16 MiB download by curl from inside `aileron launch
//! --enforce all`'s box, through the session's proxy listening in the
//! box's network namespace (issue 30's goal: ≥ 50% of direct), beside curl
//! outside the box, direct and through the proxy above.

mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

const POLICY: &str = r#"version: 1
default: deny
settings:
  proxy:
    inspect: [localhost]
allow:
  - {id: bench, when: {type: http.request, http.host: {in: [127.0.0.1, localhost]}}}
"#;

/// The large download's size.
const BIG: usize = 16 << 20;

/// Anything a request can be written to and a response read from.
trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

/// An HTTP/1.1 upstream: `/small` answers two bytes, `/big` [`BIG`] bytes;
/// keep-alive, a thread per connection; over TLS when `tls` is given.
fn upstream(tls: Option<Arc<rustls::ServerConfig>>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let tls = tls.clone();
            std::thread::spawn(move || {
                let _ = conn.set_nodelay(true);
                let stream: Box<dyn Stream> = match tls {
                    Some(cfg) => Box::new(rustls::StreamOwned::new(
                        rustls::ServerConnection::new(cfg).unwrap(),
                        conn,
                    )),
                    None => Box::new(conn),
                };
                serve(stream);
            });
        }
    });
    addr
}

fn serve(stream: Box<dyn Stream>) {
    let mut reader = BufReader::new(stream);
    let big = vec![b'x'; BIG];
    loop {
        let mut path = String::new();
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if path.is_empty() {
                path = line.split(' ').nth(1).unwrap_or("/").to_owned();
            } else if line == "\r\n" {
                break;
            }
        }
        let body: &[u8] = if path.ends_with("/big") { &big } else { b"ok" };
        let out = reader.get_mut();
        let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
        if out.write_all(head.as_bytes()).is_err() || out.write_all(body).is_err() {
            return;
        }
        let _ = out.flush();
    }
}

/// A keep-alive client connection.
struct Client {
    reader: BufReader<Box<dyn Stream>>,
    sink: Vec<u8>,
}

impl Client {
    fn new(stream: Box<dyn Stream>) -> Client {
        Client {
            reader: BufReader::with_capacity(64 * 1024, stream),
            sink: vec![0; 64 * 1024],
        }
    }

    /// Sends `GET target` and reads the whole response; the body's length.
    fn get(&mut self, target: &str, host: &str) -> usize {
        let req = format!("GET {target} HTTP/1.1\r\nhost: {host}\r\n\r\n");
        let s = self.reader.get_mut();
        s.write_all(req.as_bytes()).unwrap();
        s.flush().unwrap();
        let (status, len) = read_head(&mut self.reader);
        assert_eq!(status, 200, "GET {target}");
        let mut left = len;
        while left > 0 {
            let n = left.min(self.sink.len());
            self.reader.read_exact(&mut self.sink[..n]).unwrap();
            left -= n;
        }
        len
    }
}

/// The status and content length of a response head.
fn read_head(r: &mut impl BufRead) -> (u16, usize) {
    let mut line = String::new();
    let mut status = 0;
    let mut len = 0;
    loop {
        line.clear();
        assert!(r.read_line(&mut line).unwrap() > 0, "connection closed");
        if status == 0 {
            status = line.split(' ').nth(1).unwrap().parse().unwrap();
        } else if line == "\r\n" {
            return (status, len);
        } else if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().unwrap();
        }
    }
}

fn tcp(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    s
}

fn tls_client(roots_pem: &str, stream: TcpStream) -> Box<dyn Stream> {
    tls_client_for("localhost", roots_pem, stream)
}

fn tls_client_for(name: &'static str, roots_pem: &str, stream: TcpStream) -> Box<dyn Stream> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::pem::PemObject::pem_slice_iter(roots_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let conn = rustls::ClientConnection::new(Arc::new(cfg), name.try_into().unwrap()).unwrap();
    Box::new(rustls::StreamOwned::new(conn, stream))
}

/// Through the proxy into an inspected tunnel to `upstream`.
fn tunnel(proxy: SocketAddr, upstream: SocketAddr, proxy_ca: &str) -> Client {
    let mut s = tcp(proxy);
    let host = format!("localhost:{}", upstream.port());
    write!(s, "CONNECT {host} HTTP/1.1\r\nhost: {host}\r\n\r\n").unwrap();
    let mut r = BufReader::new(s);
    assert_eq!(read_head(&mut r).0, 200, "CONNECT");
    assert!(r.buffer().is_empty());
    Client::new(tls_client(proxy_ca, r.into_inner()))
}

/// Through the proxy into a tunnel it does not open (127.0.0.1 is not
/// inspected), decided by host and port, then TLS end to end.
fn opaque_tunnel(proxy: SocketAddr, upstream: SocketAddr, upstream_ca: &str) -> Client {
    let mut s = tcp(proxy);
    let host = format!("127.0.0.1:{}", upstream.port());
    write!(s, "CONNECT {host} HTTP/1.1\r\nhost: {host}\r\n\r\n").unwrap();
    let mut r = BufReader::new(s);
    assert_eq!(read_head(&mut r).0, 200, "CONNECT");
    Client::new(tls_client_for("127.0.0.1", upstream_ca, r.into_inner()))
}

/// Through the proxy's SOCKS5 front into a tunnel (decided as the CONNECT
/// above), then TLS end to end.
fn socks_tunnel(proxy: SocketAddr, upstream: SocketAddr, upstream_ca: &str) -> Client {
    let mut s = tcp(proxy);
    let mut request = vec![5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1];
    request.extend_from_slice(&upstream.port().to_be_bytes());
    s.write_all(&request).unwrap();
    let mut reply = [0u8; 12];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(reply[..4], [5, 0, 5, 0], "SOCKS5 CONNECT");
    Client::new(tls_client_for("127.0.0.1", upstream_ca, s))
}

/// A test CA and a certificate for localhost (and 127.0.0.1) it signed.
fn upstream_tls() -> (String, Arc<rustls::ServerConfig>) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )
    .unwrap();
    (ca_cert.pem(), Arc::new(cfg))
}

struct Proxy {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_proxy(aileron: &Path, dir: &Path, home: &Path, upstream_ca: &Path) -> Proxy {
    let mut child = support::isolated(aileron, dir, home)
        .env("AILERON_DATA", home.join(".aileron"))
        .env("SSL_CERT_FILE", upstream_ca)
        .args(["proxy", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("aileron proxy: listening on http://")
        .unwrap_or_else(|| panic!("proxy said {line:?}"))
        .parse()
        .unwrap();
    Proxy { child, addr }
}

/// The download clients the box's figure is taken with, each started as
/// `PROGRAM... URL`: on every line it reads it downloads URL (through
/// `http_proxy` when set) and answers the status, the size and its own
/// time, so that the launch and the client's start stay out of the figure.
const CLIENTS: &[(&str, &[&str])] = &[
    // curl as a user runs it: a connection a download, its `time_total`.
    (
        "curl",
        &[
            "sh",
            "-c",
            r#"while read -r _; do curl -sS -o /dev/null -w '%{http_code} %{size_download} %{time_total}\n' "$0" || echo failed; done"#,
        ],
    ),
    // One keep-alive connection read into a 1 MiB buffer: a client
    // faster than curl, so that the proxy's part shows.
    ("python3 (keep-alive)", &["python3", "download.py"]),
];

/// The keep-alive client of [`CLIENTS`], a file of the project (`python3
/// -c` is asked by the built-in `inline-interpreter` rule).
const DOWNLOAD_PY: &str = r#"
import os, socket, sys, time
from urllib.parse import urlsplit
url, proxy = sys.argv[1], os.environ.get("http_proxy")
origin = urlsplit(url)
via = urlsplit(proxy) if proxy else origin
target = url if proxy else origin.path
request = f"GET {target} HTTP/1.1\r\nhost: {origin.netloc}\r\n\r\n".encode()
conn = socket.create_connection((via.hostname, via.port))
conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
buf = memoryview(bytearray(1 << 20))
for _ in sys.stdin:
    start = time.perf_counter()
    conn.sendall(request)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(4096)
        if not chunk:
            sys.exit("the connection closed")
        head += chunk
    head, _, body = head.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.lower().split(":", 1) for line in lines[1:])
    length, got = int(fields["content-length"]), len(body)
    while got < length:
        n = conn.recv_into(buf[: min(len(buf), length - got)])
        if n == 0:
            sys.exit("the connection closed")
        got += n
    print(lines[0].split()[1], got, time.perf_counter() - start, flush=True)
"#;

/// The proxy variables: the clients outside the box get only those the
/// bench gives them; `aileron launch` sets its own.
const PROXY_VARS: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
];

/// A running client of [`CLIENTS`].
struct Downloader {
    child: Child,
    ask: Option<ChildStdin>,
    answers: BufReader<ChildStdout>,
    /// Where the loop's stderr (and `aileron launch`'s) goes.
    errors: PathBuf,
}

impl Downloader {
    /// Starts `cmd ... CLIENT url`, its stderr to `errors`.
    fn start(mut cmd: Command, client: &[&str], url: &str, errors: PathBuf) -> Downloader {
        for var in PROXY_VARS {
            cmd.env_remove(var);
        }
        let mut child = cmd
            .args(client)
            .arg(url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&errors).unwrap())
            .spawn()
            .unwrap();
        Downloader {
            ask: child.stdin.take(),
            answers: BufReader::new(child.stdout.take().unwrap()),
            child,
            errors,
        }
    }

    /// One download of [`BIG`] bytes; curl's time for it.
    fn get(&mut self) -> Duration {
        let ask = self.ask.as_mut().unwrap();
        ask.write_all(b"\n").unwrap();
        ask.flush().unwrap();
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        let fields: Vec<&str> = line.split_whitespace().collect();
        let big = BIG.to_string();
        assert!(
            fields.len() == 3 && fields[0] == "200" && fields[1] == big,
            "the download answered {line:?}: {}",
            std::fs::read_to_string(&self.errors).unwrap_or_default()
        );
        Duration::from_secs_f64(fields[2].parse().unwrap())
    }
}

impl Drop for Downloader {
    /// The client ends at the end of its input, and the launched tree with it.
    fn drop(&mut self) {
        drop(self.ask.take());
        let _ = self.child.wait();
    }
}

/// The 16 MiB download by each client of [`CLIENTS`] inside `aileron
/// launch --enforce all`'s box (through the session's proxy in the box's
/// namespace, by the variables the session sets) beside the same client
/// outside it, direct and through `proxy`.
fn boxed_download(aileron: &Path, tmp: &Path, proxy: SocketAddr, upstream: SocketAddr) {
    let (dir, home) = (tmp.join("boxed"), tmp.join("boxed-home"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(dir.join("aileron.yaml"), "version: 1\ndefault: allow\n").unwrap();
    std::fs::write(dir.join("download.py"), DOWNLOAD_PY).unwrap();
    let url = format!("http://{upstream}/big");
    for (name, client) in CLIENTS {
        // `env` starts the client outside, as `aileron launch --` inside.
        let outside = || support::isolated("/usr/bin/env", &dir, &home);
        let direct = Downloader::start(outside(), client, &url, tmp.join("direct.err"));
        let mut via = outside();
        via.env("http_proxy", format!("http://{proxy}"));
        let via = Downloader::start(via, client, &url, tmp.join("via.err"));
        let mut launch = support::isolated(aileron, &dir, &home);
        launch.args(["launch", "--enforce", "all", "--"]);
        let boxed = Downloader::start(launch, client, &url, tmp.join("boxed.err"));
        let mut downloaders = [direct, via, boxed];
        let medians = support::interleaved_timed(
            &format!("16 MiB download by {name} (its own time)"),
            40,
            &[
                "direct, outside the box",
                "through the proxy, outside the box",
                "in the box (--enforce all), through the session's proxy",
            ],
            |i| downloaders[i].get(),
        );
        println!(
            "{name} in the box, through the proxy in its namespace: {:.0}% of direct's throughput (goal ≥ 50%)",
            100.0 * medians[0].as_secs_f64() / medians[2].as_secs_f64()
        );
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The proxy's resident memory per idle connection (each served one
/// request first, so it is fully set up), in KiB.
fn idle_memory(proxy: &Proxy, n: usize, mut open: impl FnMut() -> Client) -> f64 {
    // Warm up the allocator and the pools with a first batch.
    let warm: Vec<Client> = (0..n / 4).map(|_| open()).collect();
    drop(warm);
    std::thread::sleep(Duration::from_millis(300));
    let before = rss_kib(proxy.child.id());
    let held: Vec<Client> = (0..n).map(|_| open()).collect();
    std::thread::sleep(Duration::from_millis(300));
    let after = rss_kib(proxy.child.id());
    drop(held);
    (after.saturating_sub(before)) as f64 / n as f64
}

fn bench(c: &mut Criterion) {
    let support::Project { tmp, dir, home } = support::Project::go(POLICY);
    let aileron = support::installed_binary("aileron", tmp.path());
    support::installed_binary("aileron-server", tmp.path());
    support::installed_binary("aileron-sh", tmp.path());
    let (upstream_ca, tls_cfg) = upstream_tls();
    let ca_file = tmp.path().join("upstream-ca.pem");
    std::fs::write(&ca_file, &upstream_ca).unwrap();
    let plain = upstream(None);
    let secure = upstream(Some(tls_cfg));
    let proxy = start_proxy(&aileron, &dir, &home, &ca_file);
    let proxy_ca = std::fs::read_to_string(home.join(".aileron/proxy-ca/ca.pem")).unwrap();

    let small = format!("http://{plain}/small");
    let big = format!("http://{plain}/big");
    let host = plain.to_string();
    let tls_host = format!("localhost:{}", secure.port());
    // Fresh connections before each measurement: the proxy closes a
    // keep-alive connection idle for 30 s, as servers do.
    let direct = || Client::new(Box::new(tcp(plain)));
    let via = || Client::new(Box::new(tcp(proxy.addr)));
    let direct_tls = || Client::new(tls_client(&upstream_ca, tcp(secure)));
    let via_tls = || tunnel(proxy.addr, secure, &proxy_ca);
    via_tls().get("/small", &tls_host); // the host's certificate is minted

    let mut g = c.benchmark_group("proxy");
    g.measurement_time(Duration::from_secs(6)).sample_size(60);
    let mut client = direct();
    g.bench_function("plain GET, direct", |b| {
        b.iter(|| client.get("/small", &host))
    });
    let mut client = via();
    g.bench_function("plain GET, through the proxy", |b| {
        b.iter(|| client.get(&small, &host))
    });
    let mut client = direct_tls();
    g.bench_function("HTTPS GET, direct", |b| {
        b.iter(|| client.get("/small", &tls_host))
    });
    let mut client = via_tls();
    g.bench_function("HTTPS GET, through the proxy (inspected)", |b| {
        b.iter(|| client.get("/small", &tls_host))
    });
    g.throughput(Throughput::Bytes(BIG as u64));
    g.sample_size(10);
    let mut client = direct();
    g.bench_function("16 MiB download, direct", |b| {
        b.iter(|| client.get("/big", &host))
    });
    let mut client = via();
    g.bench_function("16 MiB download, through the proxy", |b| {
        b.iter(|| client.get(&big, &host))
    });
    g.finish();
    let (mut direct, mut via) = (direct(), via());
    let (mut direct_tls, mut via_tls) = (direct_tls(), via_tls());

    support::interleaved(
        "plain GET (keep-alive)",
        2000,
        &mut [
            ("direct", &mut || {
                direct.get("/small", &host);
            }),
            ("through the proxy (decided, audited)", &mut || {
                via.get(&small, &host);
            }),
        ],
    );
    support::interleaved(
        "HTTPS GET (keep-alive)",
        2000,
        &mut [
            ("direct", &mut || {
                direct_tls.get("/small", &tls_host);
            }),
            ("through the proxy, TLS inspected", &mut || {
                via_tls.get("/small", &tls_host);
            }),
        ],
    );
    support::interleaved(
        "16 MiB download",
        60,
        &mut [
            ("direct", &mut || {
                direct.get("/big", &host);
            }),
            ("through the proxy", &mut || {
                via.get(&big, &host);
            }),
        ],
    );
    let direct_https = format!("127.0.0.1:{}", secure.port());
    let mut direct_tls_ip = Client::new(tls_client_for("127.0.0.1", &upstream_ca, tcp(secure)));
    let mut tunnelled = opaque_tunnel(proxy.addr, secure, &upstream_ca);
    let mut socks = socks_tunnel(proxy.addr, secure, &upstream_ca);
    support::interleaved(
        "16 MiB download over HTTPS",
        60,
        &mut [
            ("direct", &mut || {
                direct_tls_ip.get("/big", &direct_https);
            }),
            (
                "through a CONNECT tunnel of the proxy (not inspected)",
                &mut || {
                    tunnelled.get("/big", &direct_https);
                },
            ),
            ("through a SOCKS5 tunnel of the proxy", &mut || {
                socks.get("/big", &direct_https);
            }),
        ],
    );
    boxed_download(&aileron, tmp.path(), proxy.addr, plain);
    let plain_idle = idle_memory(&proxy, 400, || {
        let mut c = Client::new(Box::new(tcp(proxy.addr)));
        c.get(&small, &host);
        c
    });
    let tls_idle = idle_memory(&proxy, 200, || {
        let mut c = tunnel(proxy.addr, secure, &proxy_ca);
        c.get("/small", &tls_host);
        c
    });
    println!(
        "proxy memory per idle connection: {plain_idle:.1} KiB plain, {tls_idle:.1} KiB inside inspected TLS"
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
