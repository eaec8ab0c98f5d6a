//! `aileron proxy` run for real in a test's project, and the clients that
//! go through it: curl, raw bytes on a socket, and what the audit log says
//! about each request.

#![allow(dead_code)]

use super::{AILERON, Project, WAIT, collect, no_tty, run, text};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The variables that send a client through a proxy, or away from one:
/// a test's clients get only the ones it sets.
pub const PROXY_VARS: [&str; 8] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
];

/// `program` in the project's isolated environment, with no proxy
/// variables from outside.
pub fn client(p: &Project, program: &str) -> Command {
    let mut cmd = p.command(program);
    for k in PROXY_VARS {
        cmd.env_remove(k);
    }
    cmd
}

/// A running `aileron proxy --listen 127.0.0.1:0 --policy aileron.yaml` in
/// the project, with `AILERON_DATA` at `root/data`; killed when dropped.
pub struct ProxyProcess {
    child: Child,
    pub addr: SocketAddr,
    /// Its `AILERON_DATA`.
    pub data: PathBuf,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Requests [`ProxyProcess::assert_serves`] sent.
    served: AtomicUsize,
}

impl ProxyProcess {
    /// Upstream certificates checked against the system's roots only.
    pub fn start(p: &Project) -> ProxyProcess {
        ProxyProcess::start_with(p, None)
    }

    /// Upstream certificates checked against `roots` (`SSL_CERT_FILE`).
    pub fn start_trusting(p: &Project, roots: &Path) -> ProxyProcess {
        ProxyProcess::start_with(p, Some(roots))
    }

    /// Accepting also on the listeners sent over `channel` (one end of a
    /// `SOCK_SEQPACKET` pair), given to it as descriptor 3, as `aileron
    /// launch` gives it: `--adopt-listeners 3`.
    pub fn start_adopting(p: &Project, channel: &std::os::fd::OwnedFd) -> ProxyProcess {
        let mut cmd = client(p, AILERON);
        cmd.args(["proxy", "--adopt-listeners", "3"]);
        as_fd3(&mut cmd, channel);
        ProxyProcess::start_cmd(p, cmd, None)
    }

    fn start_with(p: &Project, roots: Option<&Path>) -> ProxyProcess {
        let mut cmd = client(p, AILERON);
        cmd.arg("proxy");
        ProxyProcess::start_cmd(p, cmd, roots)
    }

    /// `cmd` (`aileron proxy ...`) run listening on any port, with the
    /// project's policy and `AILERON_DATA` at `root/data`.
    fn start_cmd(p: &Project, mut cmd: Command, roots: Option<&Path>) -> ProxyProcess {
        let data = p.root.join("data");
        cmd.args(["--listen", "127.0.0.1:0", "--policy"])
            .arg(p.path("aileron.yaml"))
            .env("AILERON_DATA", &data)
            .env_remove("SSL_CERT_FILE")
            .env_remove("SSL_CERT_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(r) = roots {
            cmd.env("SSL_CERT_FILE", r);
        }
        // No terminal: an ask is answered by nobody, never on the test's tty.
        let mut child = no_tty(&mut cmd).spawn().expect("spawn aileron proxy");
        let stderr = collect(child.stderr.take().expect("stderr"));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line);
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let line = rx.recv_timeout(WAIT).unwrap_or_default();
        let mut proxy = ProxyProcess {
            child,
            addr: SocketAddr::from(([0, 0, 0, 0], 0)),
            data,
            stderr,
            served: AtomicUsize::new(0),
        };
        let Some(addr) = line
            .trim_end()
            .strip_prefix("aileron proxy: listening on http://")
            .and_then(|a| a.parse().ok())
        else {
            let _ = proxy.child.kill();
            let _ = proxy.child.wait();
            panic!(
                "aileron proxy did not say where it listens: {line:?}\nstderr: {}",
                proxy.stderr()
            );
        };
        proxy.addr = addr;
        proxy
    }

    /// `http://127.0.0.1:PORT`, for `curl -x` and the proxy variables.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The CA that signs for inspected hosts.
    pub fn ca_pem(&self) -> PathBuf {
        self.data.join("proxy-ca").join("ca.pem")
    }

    pub fn ca_key(&self) -> PathBuf {
        self.data.join("proxy-ca").join("ca-key.pem")
    }

    /// What it wrote to stderr so far.
    pub fn stderr(&self) -> String {
        text(&self.stderr.lock().unwrap())
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Asserts that a plain GET through it still gets `upstream`'s answer
    /// (`/ok/still-there/N`, a path of its own each time).
    pub fn assert_serves(&mut self, p: &Project, upstream: &super::upstream::Upstream) {
        assert!(
            self.running(),
            "the proxy exited; stderr: {}",
            self.stderr()
        );
        let n = self.served.fetch_add(1, Ordering::SeqCst);
        let path = format!("/ok/still-there/{n}");
        curl(p, &["-x", &self.url(), &upstream.url(&path)]).assert_upstream_answered(&path);
    }

    /// The body of a request sent as raw bytes ([`exchange`]).
    pub fn raw(&self, request: &[u8]) -> String {
        exchange(self.addr, request)
    }
}

impl Drop for ProxyProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Gives `fd` to the child `cmd` starts as its descriptor 3.
pub fn as_fd3(cmd: &mut Command, fd: &impl std::os::fd::AsRawFd) {
    use std::os::unix::process::CommandExt;
    let fd = fd.as_raw_fd();
    // SAFETY: dup2 and fcntl only, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // dup2 onto itself keeps close-on-exec: cleared by hand.
            let r = match fd {
                3 => libc::fcntl(3, libc::F_SETFD, 0),
                _ => libc::dup2(fd, 3),
            };
            match r {
                -1 => Err(std::io::Error::last_os_error()),
                _ => Ok(()),
            }
        });
    }
}

/// Every request inspected (`inspect: all`): GETs of `/ok*` allowed,
/// `/secret` denied by a rule, anything else by the default.
pub const INSPECT: &str = r#"version: 1
default: deny
settings:
  proxy:
    inspect: all
allow:
  - id: reads
    when: {type: http.request, http.method: GET, http.path: {glob: "/ok*"}}
deny:
  - id: no-secret
    description: the secret page
    when: {type: http.request, http.path: /secret}
"#;

/// Asserts that no tunnel was decided as one: under inspection its
/// requests are, each.
pub fn assert_no_tunnel_decided(p: &Project) {
    assert!(
        proxy_lines(p).iter().all(|l| !l["action"]["summary"]
            .as_str()
            .unwrap_or_default()
            .starts_with("CONNECT")),
        "{}",
        p.audit_text()
    );
}

/// What curl reported.
#[derive(Debug)]
pub struct Fetched {
    /// The final response's status (0: none).
    pub status: u16,
    /// The proxy's answer to CONNECT (0: no CONNECT).
    pub connect: u16,
    /// `1.1`, `2`, ...
    pub http_version: String,
    pub body: String,
    pub stderr: String,
    pub exit: i32,
}

impl Fetched {
    /// Asserts a 200 with the plain upstream's answer to `GET path`.
    pub fn assert_upstream_answered(&self, path: &str) {
        assert_eq!(self.status, 200, "{self:?}");
        assert_eq!(
            self.body,
            format!("upstream: GET {path} (0 bytes)\n"),
            "{self:?}"
        );
    }
}

/// Marks where the body curl printed ends and `--write-out` begins.
const WRITE_OUT: &str = "\n@@curl@@ %{http_code} %{http_connect} %{http_version}";

/// `curl -sS ARGS` in the project, with no proxy variables but the ones
/// the arguments name.
pub fn curl(p: &Project, args: &[&str]) -> Fetched {
    curl_as(client(p, "curl"), args)
}

/// `curl -sS ARGS` as `cmd`: a [`client`] with variables of the test's.
pub fn curl_as(mut cmd: Command, args: &[&str]) -> Fetched {
    cmd.args(["-sS", "--max-time", "15", "-w", WRITE_OUT])
        .args(args);
    let out = run(&mut cmd, b"");
    fetched(out.stdout, out.stderr, out.status.code().unwrap_or(-1))
}

/// Reads curl's output with [`WRITE_OUT`].
pub fn fetched(stdout: Vec<u8>, stderr: Vec<u8>, exit: i32) -> Fetched {
    let stdout = text(&stdout);
    let (body, codes) = stdout
        .rsplit_once("\n@@curl@@ ")
        .unwrap_or((stdout.as_str(), "0 0 0"));
    let mut codes = codes.split_whitespace();
    let mut number = || codes.next().and_then(|c| c.parse().ok()).unwrap_or(0);
    let (status, connect) = (number(), number());
    Fetched {
        status,
        connect,
        http_version: codes.next().unwrap_or_default().to_owned(),
        body: body.to_owned(),
        stderr: text(&stderr),
        exit,
    }
}

/// Sends `request` to `addr` as it is and returns the response read back
/// ([`read_response`]).
pub fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).expect("connect to the proxy");
    // The peer may answer and close before it reads everything.
    let _ = s.write_all(request);
    read_response(&mut s)
}

/// Reads one response: up to the end of its body by `content-length` (a
/// 101's head alone), or whatever arrives until the peer closes or 10 s
/// pass.
pub fn read_response(s: &mut TcpStream) -> String {
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    let mut got = Vec::new();
    let mut byte = [0u8];
    while let Ok(1) = s.read(&mut byte) {
        got.push(byte[0]);
        let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = text(&got[..end]);
        let length = head.to_ascii_lowercase().lines().find_map(|l| {
            l.strip_prefix("content-length:")?
                .trim()
                .parse::<usize>()
                .ok()
        });
        match length {
            _ if status_of(&head) == 101 => break,
            Some(n) if got.len() >= end + 4 + n => break,
            _ => {}
        }
    }
    text(&got)
}

/// The status code of a raw HTTP/1.1 response (0 when there is none).
pub fn status_of(response: &str) -> u16 {
    response
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// The proxy's audit lines in the project's log.
pub fn proxy_lines(p: &Project) -> Vec<Value> {
    p.audit()
        .into_iter()
        .filter(|r| r["adapter"] == "proxy")
        .collect()
}

/// The proxy's audit line whose summary is `summary`; panics when there
/// is none, or more than one.
pub fn line_for(p: &Project, summary: &str) -> Value {
    let lines: Vec<Value> = proxy_lines(p)
        .into_iter()
        .filter(|r| r["action"]["summary"] == summary)
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one audit line for {summary:?}; the log:\n{}",
        p.audit_text()
    );
    lines.into_iter().next().unwrap()
}
