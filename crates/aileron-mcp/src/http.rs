//! The Streamable HTTP transport, client side (`aileron mcp --url`): the
//! gateway speaks stdio to the agent and HTTP to a remote MCP server. Each
//! line for the server is POSTed (a thread per message, as an answer may
//! stream for as long as the call runs); each message the server answers
//! with, as one JSON body or as server-sent events, becomes a line on a
//! pipe that the gateway reads as it reads a child's output. So the
//! decisions are the stdio gateway's own.
//!
//! The session id the server gives (`Mcp-Session-Id`) and the protocol
//! version agreed at `initialize` go with every later POST; the session is
//! ended with a DELETE when the agent leaves. A POST that fails answers its
//! request with an error. Not done: the GET stream a server may open for
//! requests of its own outside any call (most send them within the call's
//! answer, which is read).

use crate::message::{self, Message, Parsed, code};
use std::io::{BufRead, BufReader, PipeReader, PipeWriter, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

struct Inner {
    url: String,
    headers: Vec<(String, String)>,
    agent: ureq::Agent,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    /// Where the server's messages go, one line each; `None` once closed.
    out: Mutex<Option<PipeWriter>>,
    limit: usize,
}

/// The server's side for the gateway: a writer whose lines are POSTed, and
/// the reader its answers come out of.
pub fn connect(
    url: &str,
    headers: Vec<(String, String)>,
    limit: usize,
) -> std::io::Result<(Poster, PipeReader)> {
    let (reader, writer) = std::io::pipe()?;
    let agent = ureq::Agent::config_builder()
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .http_status_as_error(false)
        .user_agent(concat!("aileron-mcp/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent();
    let inner = Arc::new(Inner {
        url: url.to_owned(),
        headers,
        agent,
        session: Mutex::new(None),
        version: Mutex::new(None),
        out: Mutex::new(Some(writer)),
        limit,
    });
    Ok((
        Poster {
            inner,
            buf: Vec::new(),
        },
        reader,
    ))
}

/// Lines written to it are POSTed to the server, each on its own thread.
pub struct Poster {
    inner: Arc<Inner>,
    buf: Vec<u8>,
}

impl Write for Poster {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        while let Some(n) = self.buf.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.buf.drain(..=n).collect();
            line.pop();
            let inner = Arc::clone(&self.inner);
            std::thread::Builder::new()
                .name("mcp-post".into())
                .spawn(move || inner.post(&line))?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The agent left: the session is ended, and the gateway's reader sees
/// the end of the server's output.
impl Drop for Poster {
    fn drop(&mut self) {
        let session = lock(&self.inner.session).clone();
        if let Some(id) = session {
            let mut req = self.inner.agent.delete(&self.inner.url);
            for (k, v) in &self.inner.headers {
                req = req.header(k, v);
            }
            if let Some(v) = lock(&self.inner.version).as_deref() {
                req = req.header("MCP-Protocol-Version", v);
            }
            let _ = req.header("Mcp-Session-Id", &id).call();
        }
        drop(lock(&self.inner.out).take());
    }
}

impl Inner {
    /// POSTs one message and passes on what comes back.
    fn post(&self, line: &[u8]) {
        // What is sent was read by the gateway: one JSON-RPC message.
        let (id, method) = match message::parse(line) {
            Parsed::One(Message::Request { id, method, .. }) => (Some(id), Some(method)),
            _ => (None, None),
        };
        let mut req = self
            .agent
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .content_type("application/json");
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        if let Some(s) = lock(&self.session).as_deref() {
            req = req.header("Mcp-Session-Id", s);
        }
        if let Some(v) = lock(&self.version).as_deref() {
            req = req.header("MCP-Protocol-Version", v);
        }
        let fail = |why: String| {
            if let Some(id) = &id {
                self.emit(&message::error(
                    Some(id),
                    code::SERVER_GONE,
                    &format!("aileron: the MCP server at {}: {why}", self.url),
                ));
            } else {
                eprintln!("aileron mcp: {}: {why}", self.url);
            }
        };
        let response = match req.send(line) {
            Ok(r) => r,
            Err(e) => return fail(format!("cannot be reached: {e}")),
        };
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        if let Some(s) = header("mcp-session-id") {
            lock(&self.session).get_or_insert(s);
        }
        let kind = header("content-type")
            .unwrap_or_default()
            .to_ascii_lowercase();
        let body = response.into_body().into_reader();
        if !(200..300).contains(&status) {
            let mut text = Vec::new();
            let _ = body.take(300).read_to_end(&mut text);
            let text = String::from_utf8_lossy(&text);
            return fail(format!("HTTP {status}: {}", text.trim()));
        }
        if kind.starts_with("text/event-stream") {
            self.events(body, method.as_deref());
        } else if kind.starts_with("application/json") {
            let mut bytes = Vec::new();
            match body.take(self.limit as u64 + 1).read_to_end(&mut bytes) {
                Ok(n) if n > self.limit => {
                    fail(format!("an answer longer than {} MiB", self.limit >> 20))
                }
                Ok(_) => self.message(bytes, method.as_deref()),
                Err(e) => fail(format!("its answer cannot be read: {e}")),
            }
        } else if id.is_some() {
            fail(format!("HTTP {status} without a JSON-RPC answer"));
        }
    }

    /// Reads server-sent events: each event's data is one message.
    fn events(&self, body: impl Read, method: Option<&str>) {
        let mut lines = SseLines::new(BufReader::with_capacity(64 << 10, body), self.limit);
        let mut line = Vec::new();
        let mut data: Vec<u8> = Vec::new();
        loop {
            match lines.next(&mut line) {
                crate::stdio::Line::Eof => break,
                crate::stdio::Line::TooLong(_) => {
                    eprintln!(
                        "aileron mcp: {}: an event longer than {} MiB: dropped",
                        self.url,
                        self.limit >> 20
                    );
                    data.clear();
                }
                crate::stdio::Line::Whole if line.is_empty() => {
                    if !data.is_empty() {
                        self.message(std::mem::take(&mut data), method);
                    }
                }
                crate::stdio::Line::Whole => {
                    // `data` alone is a field with an empty value.
                    let field = if line == b"data" { b"data:" } else { &line[..] };
                    if let Some(rest) = field.strip_prefix(b"data:") {
                        let rest = rest.strip_prefix(b" ").unwrap_or(rest);
                        if !data.is_empty() {
                            data.push(b'\n');
                        }
                        data.extend_from_slice(rest);
                    }
                }
            }
        }
        if !data.is_empty() {
            self.message(data, method);
        }
    }

    /// One message from the server, as one line: a line break outside a
    /// string is white space, written as a space; one inside a string
    /// (strict JSON has none) is left for the gateway to refuse.
    fn message(&self, mut bytes: Vec<u8>, method: Option<&str>) {
        crate::framing::join_lines(&mut bytes);
        if method == Some("initialize")
            && let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes)
            && let Some(version) = v["result"]["protocolVersion"].as_str()
        {
            *lock(&self.version) = Some(version.to_owned());
        }
        self.emit(&bytes);
    }

    fn emit(&self, line: &[u8]) {
        if let Some(w) = lock(&self.out).as_mut() {
            let mut bytes = Vec::with_capacity(line.len() + 1);
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
            let _ = w.write_all(&bytes);
        }
    }
}

/// The lines of a server-sent event stream: each ends at `\r\n`, `\n` or
/// `\r` (the SSE specification), at most `limit` bytes of each kept.
struct SseLines<R> {
    reader: R,
    limit: usize,
    /// The last line ended at `\r`: a `\n` right after it ends nothing.
    after_cr: bool,
}

impl<R: BufRead> SseLines<R> {
    fn new(reader: R, limit: usize) -> SseLines<R> {
        SseLines {
            reader,
            limit,
            after_cr: false,
        }
    }

    /// The next line into `buf` (without its end).
    fn next(&mut self, buf: &mut Vec<u8>) -> crate::stdio::Line {
        use crate::stdio::Line;
        buf.clear();
        let mut too_long = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => &[],
            };
            if chunk.is_empty() {
                return match (too_long, buf.is_empty()) {
                    (true, _) => Line::TooLong(Default::default()),
                    (false, true) => Line::Eof,
                    (false, false) => Line::Whole,
                };
            }
            if std::mem::take(&mut self.after_cr) && chunk[0] == b'\n' {
                self.reader.consume(1);
                continue;
            }
            let end = chunk.iter().position(|&b| b == b'\n' || b == b'\r');
            let part = &chunk[..end.unwrap_or(chunk.len())];
            if buf.len() + part.len() > self.limit {
                too_long = true;
                buf.clear();
            } else if !too_long {
                buf.extend_from_slice(part);
            }
            let used = part.len() + usize::from(end.is_some());
            if let Some(n) = end {
                self.after_cr = chunk[n] == b'\r';
            }
            self.reader.consume(used);
            if end.is_some() {
                return if too_long {
                    Line::TooLong(Default::default())
                } else {
                    Line::Whole
                };
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stdio::Line;

    /// Every line of `text` read in pieces of `size` bytes.
    fn lines(text: &[u8], size: usize, limit: usize) -> Vec<Option<String>> {
        let mut r = SseLines::new(BufReader::with_capacity(size, text), limit);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match r.next(&mut buf) {
                Line::Eof => return out,
                Line::TooLong(_) => out.push(None),
                Line::Whole => out.push(Some(String::from_utf8(buf.clone()).unwrap())),
            }
        }
    }

    #[test]
    fn event_lines_end_at_cr_lf_and_crlf() {
        let text = b"data: a\rdata: b\r\n\r\ndata: c\n\rid: 1\r";
        let want = ["data: a", "data: b", "", "data: c", "", "id: 1"].map(|s| Some(s.to_owned()));
        for size in [1, 2, 3, 64] {
            assert_eq!(lines(text, size, 100), want, "read {size} bytes at a time");
        }
        assert_eq!(
            lines(b"data: 0123456789\r\ndata: x", 4, 10),
            [None, Some("data: x".to_owned())]
        );
    }
}
