//! Talking to a running `aileron serve` from an adapter (the shim, a hook):
//! a blocking HTTP/1.1 client on a plain `TcpStream` — no async runtime on
//! the hot path, and nothing at all unless a server is configured.
//!
//! A server is used when `AILERON_SERVER` (its URL) and `AILERON_TOKEN` (an
//! agent token) are set, or when `$AILERON_DATA/server.json` and
//! `$AILERON_DATA/agent.token` (written by `aileron serve`) exist. Then:
//! every decision is also recorded in its action log, and with
//! `settings.ask_mode: ui` an ask waits in its approval queue (the
//! dashboard) instead of on the terminal. A server that cannot be reached
//! never allows anything: the adapter falls back to the terminal or denies.

use crate::prompt::{AlwaysScope, Answer, Question};
use aileron_audit::AuditRecord;
use aileron_engine::Action;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

/// How long recording a decision may take before it is given up (the
/// local audit log has it anyway).
const RECORD_TIMEOUT: Duration = Duration::from_millis(500);
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

/// A reachable-looking server: where, and the agent token to show it.
#[derive(Clone, Debug)]
pub struct Remote {
    /// `host:port`.
    authority: String,
    token: String,
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

    /// `url` must be `http://host:port` (loopback or a trusted network: the
    /// token travels in clear).
    pub fn new(url: &str, token: &str) -> Option<Remote> {
        let rest = url.strip_prefix("http://")?;
        let authority = rest.split('/').next()?.to_owned();
        if authority.is_empty() || token.is_empty() {
            return None;
        }
        Some(Remote {
            authority,
            token: token.to_owned(),
        })
    }

    /// Adds the decision to the server's action log.
    pub fn record(&self, record: &AuditRecord) -> Result<(), String> {
        let body = serde_json::to_vec(record).map_err(|e| e.to_string())?;
        let (status, text) = self.post("/api/actions", &body, RECORD_TIMEOUT)?;
        match status {
            200..=299 => Ok(()),
            _ => Err(format!(
                "the server answered {status}: {}",
                error_text(&text)
            )),
        }
    }

    /// Puts the ask in the server's approval queue and waits for a human.
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
        let wait = q.timeout + Duration::from_secs(5);
        let (status, text) = match self.post("/api/pending-actions", &body, wait) {
            Ok(r) => r,
            Err(e) => {
                return Answer::Unavailable(format!("the approval server cannot be reached ({e})"));
            }
        };
        if !(200..=299).contains(&status) {
            return Answer::Unavailable(format!(
                "the approval server answered {status}: {}",
                error_text(&text)
            ));
        }
        let v: Value = serde_json::from_slice(&text).unwrap_or(Value::Null);
        let exact = crate::prompt::escape_glob(&q.command);
        match v.get("answer").and_then(Value::as_str) {
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
            other => Answer::Unavailable(format!(
                "the approval server gave no answer Aileron knows ({other:?})"
            )),
        }
    }

    fn post(&self, path: &str, body: &[u8], timeout: Duration) -> Result<(u16, Vec<u8>), String> {
        let addr = self
            .authority
            .to_socket_addrs()
            .map_err(|e| format!("{}: {e}", self.authority))?
            .next()
            .ok_or_else(|| format!("{}: no address", self.authority))?;
        let mut stream =
            TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(timeout))
            .and_then(|()| stream.set_write_timeout(Some(timeout)))
            .map_err(|e| e.to_string())?;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.authority,
            self.token,
            body.len()
        );
        stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(body))
            .map_err(|e| e.to_string())?;
        let mut response = Vec::new();
        stream
            .read_to_end(&mut response)
            .map_err(|e| e.to_string())?;
        parse_response(&response)
    }
}

/// Status and body of an HTTP/1.1 response (plain or chunked).
fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("an incomplete HTTP response")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("an HTTP response without a status")?;
    let body = &raw[split + 4..];
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    if !chunked {
        return Ok((status, body.to_vec()));
    }
    let mut out = Vec::new();
    let mut rest = body;
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a broken chunked body")?;
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&rest[..line_end])
                .split(';')
                .next()
                .unwrap_or("")
                .trim(),
            16,
        )
        .map_err(|_| "a broken chunk size")?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok((status, out));
        }
        if rest.len() < size + 2 {
            return Err("a truncated chunked body".into());
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

fn error_text(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    v.get("error")
        .and_then(Value::as_str)
        .map_or_else(|| String::from_utf8_lossy(body).into_owned(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_and_chunked_responses() {
        let plain = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(parse_response(plain).unwrap(), (200, b"{}".to_vec()));
        let chunked =
            b"HTTP/1.1 409 Conflict\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), (409, b"abcde".to_vec()));
        assert!(parse_response(b"HTTP/1.1 200").is_err());
    }

    #[test]
    fn only_plain_http_urls() {
        assert!(Remote::new("http://127.0.0.1:7878", "t").is_some());
        assert!(Remote::new("https://x", "t").is_none());
        assert!(Remote::new("http://127.0.0.1:1", "").is_none());
    }
}
