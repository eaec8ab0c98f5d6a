//! Talking to a running `aileron serve` from an adapter (the shim, a hook):
//! a blocking HTTP client (`ureq`, over `http://` or `https://` with
//! rustls) — no async runtime on the hot path, and nothing at all unless a
//! server is configured.
//!
//! A server is used when `AILERON_SERVER` (its URL) and `AILERON_TOKEN` (an
//! agent token) are set, or when `$AILERON_DATA/server.json` and
//! `$AILERON_DATA/agent.token` (written by `aileron serve`) exist. Then:
//! every decision is also recorded in its action log, and with
//! `settings.ask_mode: ui` an ask waits in its approval queue (the
//! dashboard) instead of on the terminal. A server that cannot be reached
//! never allows anything: the adapter falls back to the terminal or denies.
//!
//! `AILERON_SERVER` may name several servers, comma-separated: replicas of
//! one service sharing a PostgreSQL database. A request goes to the one
//! that answered last; when it cannot be connected to, drops the
//! connection while an ask waits, or is shutting down (503), the next one
//! is tried, and an ask is sent again under the same action id, which the
//! servers take as the same ask (it waits on, or its answer comes at
//! once). When none answers, the same as one server down.
//!
//! An `https://` server's certificate is checked against Mozilla's roots,
//! or, when `AILERON_SERVER_CA` names a PEM file, against the certificates
//! in it instead (a server with its own CA or a self-signed certificate).

use crate::Error;
use crate::prompt::{AlwaysScope, Answer, Question};
use aileron_audit::AuditRecord;
use aileron_engine::Action;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long recording a decision may take before it is given up (the
/// local audit log has it anyway).
const RECORD_TIMEOUT: Duration = Duration::from_millis(500);
/// Connecting, the TLS handshake included.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
/// The largest answer read from the server; a longer one is refused.
const MAX_BODY: u64 = 1 << 20;
/// How much longer than an ask's timeout its answer is waited for (the
/// server answers at the timeout), and the least wait of an ask sent again.
const GRACE: Duration = Duration::from_secs(5);
/// A PEM file of the certificates to trust for an `https://` server.
const CA_VAR: &str = "AILERON_SERVER_CA";

/// Reachable-looking servers (one, or replicas of one service): where,
/// and the agent token to show them.
#[derive(Clone)]
pub struct Remote {
    /// At least one.
    servers: Vec<Server>,
    token: String,
    /// The server that answered last, tried first.
    current: Arc<AtomicUsize>,
}

#[derive(Clone)]
struct Server {
    /// `http://host:port` or `https://host:port`.
    base: String,
    /// Built at the first request (or why it cannot be).
    agent: OnceLock<Result<ureq::Agent, Arc<CaError>>>,
}

/// Never the token: a `Remote` printed for debugging shows only where.
impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bases: Vec<&str> = self.servers.iter().map(|s| s.base.as_str()).collect();
        f.debug_struct("Remote")
            .field("base", &bases.join(","))
            .field("token", &"***")
            .finish()
    }
}

/// Why the certificates `AILERON_SERVER_CA` names cannot be trusted
/// instead of Mozilla's roots (every message on one line).
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    #[error("{}", one_line(&format!("{CA_VAR} {}: {source}", path.display())))]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}", one_line(&format!("{CA_VAR} {}: {}", path.display(), describe(source, true))))]
    NotPem { path: PathBuf, source: ureq::Error },
    #[error("{}", one_line(&format!("{CA_VAR} {}: no certificate in it", path.display())))]
    NoCertificate { path: PathBuf },
}

impl Remote {
    /// From the environment or the data directory; `None` when no server is configured.
    pub fn discover(data_dir: &Path) -> Option<Remote> {
        let (url, token) = match (
            std::env::var("AILERON_SERVER"),
            std::env::var("AILERON_TOKEN"),
        ) {
            (Ok(u), Ok(t)) if !u.is_empty() && !t.is_empty() => (u, t),
            _ => {
                let info: Value =
                    serde_json::from_slice(&std::fs::read(data_dir.join("server.json")).ok()?)
                        .ok()?;
                let token = std::fs::read_to_string(data_dir.join("agent.token")).ok()?;
                (info.get("url")?.as_str()?.to_owned(), token)
            }
        };
        Remote::new(&url, token.trim())
    }

    /// The server's address (`scheme://host:port`): its dashboard (the
    /// one that answered last, of several).
    pub fn url(&self) -> &str {
        &self.servers[self.first()].base
    }

    /// The `host:port` of every server (an IPv6 host in brackets), where a
    /// gateway must never forward to.
    pub fn authorities(&self) -> Vec<&str> {
        self.servers.iter().map(|s| authority_of(&s.base)).collect()
    }

    /// The host of every server alone (no brackets), for `NO_PROXY`.
    pub fn hosts(&self) -> Vec<&str> {
        self.authorities().into_iter().map(host_of).collect()
    }

    /// `url` must be `https://host:port`, or `http://host:port` (loopback
    /// or a trusted network: the token travels in clear), or several of
    /// them separated by commas (an entry that is neither is left out). A
    /// path after the authority is ignored.
    pub fn new(url: &str, token: &str) -> Option<Remote> {
        if token.is_empty() {
            return None;
        }
        let servers: Vec<Server> = url.split(',').filter_map(server).collect();
        if servers.is_empty() {
            return None;
        }
        Some(Remote {
            servers,
            token: token.to_owned(),
            current: Arc::default(),
        })
    }

    /// The index of the server tried first.
    fn first(&self) -> usize {
        self.current.load(Ordering::Relaxed) % self.servers.len()
    }

    /// The servers in the order to try them: the one that answered last first.
    fn order(&self) -> impl Iterator<Item = usize> + use<'_> {
        let first = self.first();
        (0..self.servers.len()).map(move |k| (first + k) % self.servers.len())
    }

    /// Adds the decision to the server's action log (the next server's,
    /// when one cannot be connected to).
    pub fn record(&self, record: &AuditRecord) -> Result<(), Error> {
        let body = serde_json::to_vec(record).map_err(Error::Encode)?;
        let mut last = None;
        for i in self.order() {
            match self.record_on(&self.servers[i], &body) {
                Ok(()) => {
                    self.current.store(i, Ordering::Relaxed);
                    return Ok(());
                }
                // The record may have reached a server that did not
                // answer in time: only a server not reached is replaced.
                Err(e) => {
                    let next = match &e {
                        Error::ServerUnreachable { source, .. } => not_connected(source),
                        Error::ServerRefused { status, .. } => unavailable(*status),
                        _ => false,
                    };
                    last = Some(e);
                    if !next {
                        break;
                    }
                }
            }
        }
        Err(last.expect("at least one server"))
    }

    fn record_on(&self, server: &Server, body: &[u8]) -> Result<(), Error> {
        let (status, text) = self.post(server, "/api/actions", body, RECORD_TIMEOUT)?;
        match (status, text) {
            (200..=299, _) => Ok(()),
            (_, Ok(body)) => Err(Error::ServerRefused { status, body }),
            (_, Err(source)) => Err(Error::ServerAnswerUnreadable {
                status,
                source,
                tls: server.tls(),
            }),
        }
    }

    /// Puts the ask in the server's approval queue and waits for a human.
    /// A server that cannot be reached, drops the connection or is
    /// shutting down is replaced by the next, asked under the same action
    /// id: the same ask.
    pub fn ask(&self, action: &Action, q: &Question) -> Answer {
        let body = json!({
            "action": action,
            "rule": q.rule,
            "reason": q.reason,
            "timeout_secs": q.timeout.as_secs(),
            "on_timeout": if q.allow_on_timeout { "allow" } else { "deny" },
        });
        let body = serde_json::to_vec(&body).unwrap_or_default();
        // The server answers at the timeout; allow it a little longer.
        let deadline = Instant::now() + q.timeout + GRACE;
        let mut failed = Vec::new();
        for i in self.order() {
            let server = &self.servers[i];
            // Asked again: the server answers at the ask's own deadline.
            let wait = deadline
                .saturating_duration_since(Instant::now())
                .max(GRACE);
            match self.ask_on(server, &body, wait, q) {
                Ok(answer) => {
                    self.current.store(i, Ordering::Relaxed);
                    return answer;
                }
                Err(why) => failed.push((server.base.as_str(), why)),
            }
        }
        Answer::Unavailable(match failed.as_slice() {
            [(_, why)] => why.clone(),
            _ => one_line(
                &failed
                    .iter()
                    .map(|(base, why)| format!("{base}: {why}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
        })
    }

    /// The answer of one server; `Err` (why) when the next should be asked.
    fn ask_on(
        &self,
        server: &Server,
        body: &[u8],
        wait: Duration,
        q: &Question,
    ) -> Result<Answer, String> {
        let (status, text) = self
            .post(server, "/api/pending-actions", body, wait)
            .map_err(|e| format!("the approval server cannot be reached ({e})"))?;
        let text = text.map_err(|e| {
            format!(
                "the approval server's answer ({status}) cannot be read ({})",
                describe(&e, server.tls())
            )
        })?;
        if !(200..=299).contains(&status) {
            let why = format!("the approval server answered {}", answered(status, &text));
            return if unavailable(status) {
                Err(why)
            } else {
                Ok(Answer::Unavailable(why))
            };
        }
        let v: Value = match serde_json::from_slice(&text) {
            Ok(v) => v,
            Err(e) => {
                return Ok(Answer::Unavailable(format!(
                    "the approval server's answer is not JSON ({})",
                    one_line(&e.to_string())
                )));
            }
        };
        let exact = crate::prompt::escape_glob(&q.command);
        Ok(match v.get("answer").and_then(Value::as_str) {
            Some("once" | "allow") => Answer::Once,
            Some("always") => Answer::Always(AlwaysScope::Session, exact),
            Some("reject" | "deny") => Answer::Reject,
            Some("feedback") => Answer::Feedback(
                v.get("feedback")
                    .and_then(Value::as_str)
                    .unwrap_or("rejected")
                    .to_owned(),
            ),
            Some("timeout") => Answer::Timeout,
            other => Answer::Unavailable(one_line(&format!(
                "the approval server gave no answer Aileron knows ({other:?})"
            ))),
        })
    }

    /// The status of a JSON POST to `server`, and its body (at most
    /// [`MAX_BODY`] bytes) or why it cannot be read.
    fn post(
        &self,
        server: &Server,
        path: &str,
        body: &[u8],
        timeout: Duration,
    ) -> Result<(u16, Result<Vec<u8>, ureq::Error>), Error> {
        let agent = server
            .agent
            .get_or_init(|| agent(&server.base).map_err(Arc::new))
            .as_ref()
            .map_err(|e| Error::ServerCa(Arc::clone(e)))?;
        let mut response = agent
            .post(format!("{}{path}", server.base))
            .config()
            // As a socket's read and write timeouts did: a server that
            // stalls, or never answers, is given up after `timeout`.
            .timeout_per_read(Some(timeout))
            .timeout_per_write(Some(timeout))
            .timeout_recv_response(Some(timeout))
            .build()
            .header("Authorization", format!("Bearer {}", self.token))
            .content_type("application/json")
            .send(body)
            .map_err(|source| Error::ServerUnreachable {
                source,
                tls: server.tls(),
            })?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_vec();
        Ok((status, text))
    }
}

impl Server {
    fn tls(&self) -> bool {
        self.base.starts_with("https://")
    }
}

/// One server of `AILERON_SERVER`: `scheme://authority`, the rest left out.
fn server(url: &str) -> Option<Server> {
    let (scheme, rest) = url.trim().split_once("://")?;
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = rest.split('/').next()?;
    if authority.is_empty() {
        return None;
    }
    Some(Server {
        base: format!("{scheme}://{authority}"),
        agent: OnceLock::new(),
    })
}

fn authority_of(base: &str) -> &str {
    let rest = base.split_once("://").map_or(base, |(_, r)| r);
    rest.split('/').next().unwrap_or_default()
}

fn host_of(authority: &str) -> &str {
    let host = match authority.rsplit_once(':') {
        Some((h, p)) if p.parse::<u16>().is_ok() => h,
        _ => authority,
    };
    host.trim_matches(['[', ']'])
}

/// A server that is down or stopping (or a proxy before it saying so):
/// another may answer.
fn unavailable(status: u16) -> bool {
    matches!(status, 502..=504)
}

/// The request never reached the server.
fn not_connected(e: &ureq::Error) -> bool {
    use std::io::ErrorKind;
    match e {
        ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => true,
        ureq::Error::Timeout(t) => matches!(t, ureq::Timeout::Connect | ureq::Timeout::Resolve),
        ureq::Error::Io(io) => matches!(
            io.kind(),
            ErrorKind::ConnectionRefused
                | ErrorKind::ConnectionReset
                | ErrorKind::NotConnected
                | ErrorKind::AddrNotAvailable
                | ErrorKind::HostUnreachable
                | ErrorKind::NetworkUnreachable
        ),
        _ => false,
    }
}

/// The agent for one server: the connect timeout, no proxy (`aileron
/// launch` points `HTTP(S)_PROXY` at Aileron's own egress proxy, which is
/// not the way to the server), no redirects (the token goes nowhere else;
/// a 3xx is an answer like any other status that is not 2xx), and no
/// thread (no resolve, per-call or global timeout: those resolve the host
/// name on one). Cheap: the TLS configuration is made at the first
/// `https://` connection.
fn agent(base: &str) -> Result<ureq::Agent, CaError> {
    let mut config = ureq::Agent::config_builder()
        .proxy(None)
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .max_redirects(0)
        .max_redirects_will_error(false)
        .http_status_as_error(false)
        .user_agent(concat!("aileron/", env!("CARGO_PKG_VERSION")));
    if base.starts_with("https://")
        && let Some(path) = std::env::var_os(CA_VAR).filter(|p| !p.is_empty())
    {
        let roots = root_certs(Path::new(&path))?;
        config = config.tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build());
    }
    Ok(config.build().new_agent())
}

/// The certificates of a PEM file, to trust instead of Mozilla's roots.
fn root_certs(path: &Path) -> Result<ureq::tls::RootCerts, CaError> {
    let pem = std::fs::read(path).map_err(|source| CaError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        let item = item.map_err(|source| CaError::NotPem {
            path: path.to_path_buf(),
            source,
        })?;
        if let ureq::tls::PemItem::Certificate(c) = item {
            certs.push(c);
        }
    }
    if certs.is_empty() {
        return Err(CaError::NoCertificate {
            path: path.to_path_buf(),
        });
    }
    Ok(ureq::tls::RootCerts::from(certs))
}

/// Why a request (over TLS when `tls`) failed, on one line.
pub(crate) fn describe(e: &ureq::Error, tls: bool) -> String {
    let text = match e {
        // rustls reports a failed handshake as invalid data around its own
        // error.
        ureq::Error::Io(io)
            if tls && io.kind() == std::io::ErrorKind::InvalidData && io.get_ref().is_some() =>
        {
            format!("TLS: {io}")
        }
        ureq::Error::Rustls(t) => format!("TLS: {t}"),
        ureq::Error::Tls(t) => format!("TLS: {t}"),
        ureq::Error::Timeout(t) => format!("no answer in time ({t} timeout)"),
        ureq::Error::BodyExceedsLimit(_) => format!("over {MAX_BODY} bytes, refused"),
        other => other.to_string(),
    };
    one_line(&text)
}

/// `text` on one line: whitespace runs made one space, at most 300
/// characters.
fn one_line(text: &str) -> String {
    let mut out = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((cut, _)) = out.char_indices().nth(300) {
        out.truncate(cut);
        out.push('…');
    }
    out
}

/// `500: why` from a status and its body (`{"error": why}`, or the text).
pub(crate) fn answered(status: u16, body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let text = v
        .get("error")
        .and_then(Value::as_str)
        .map_or_else(|| String::from_utf8_lossy(body).into_owned(), str::to_owned);
    match one_line(&text) {
        t if t.is_empty() => status.to_string(),
        t => format!("{status}: {t}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_and_https_urls() {
        let r = Remote::new("http://127.0.0.1:7878/dashboard", "t").unwrap();
        assert_eq!(r.url(), "http://127.0.0.1:7878");
        let r = Remote::new("https://aileron.example:8443", "t").unwrap();
        assert_eq!(r.url(), "https://aileron.example:8443");
        assert!(Remote::new("ftp://x", "t").is_none());
        assert!(Remote::new("127.0.0.1:7878", "t").is_none());
        assert!(Remote::new("https://", "t").is_none());
        assert!(Remote::new("http://127.0.0.1:1", "").is_none());
        // Nothing is built before the first request.
        assert!(r.servers[0].agent.get().is_none());
        // Several, comma-separated; what is not a server is left out.
        let r = Remote::new(" http://a:1/x, ftp://b ,https://[::1]:3,", "t").unwrap();
        assert_eq!(r.authorities(), ["a:1", "[::1]:3"]);
        assert_eq!(r.hosts(), ["a", "::1"]);
        assert_eq!(r.order().collect::<Vec<_>>(), [0, 1]);
        r.current.store(1, Ordering::Relaxed);
        assert_eq!(r.order().collect::<Vec<_>>(), [1, 0]);
        assert_eq!(r.url(), "https://[::1]:3");
    }

    #[test]
    fn reasons_are_one_line() {
        assert_eq!(one_line("a\n  b\r\n\tc "), "a b c");
        let long = one_line(&"é".repeat(400));
        assert_eq!(long.chars().count(), 301);
        assert_eq!(answered(403, br#"{"error":"no\nway"}"#), "403: no way");
        assert_eq!(answered(502, b"<html>\n</html>"), "502: <html> </html>");
        assert_eq!(answered(307, b""), "307");
    }
}
