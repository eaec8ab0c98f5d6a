//! The plumbing: the server as a child process, a thread reading the
//! client, this thread reading the server, a thread per call being decided
//! (an ask holds that call only). Lines are written whole under a lock per
//! direction; no lock is held while another is waited for.

use crate::gateway::{Effect, Gateway, Ruling};
use crate::message::{IdScan, MAX_CLIENT_MESSAGE, MAX_SERVER_MESSAGE};
use crate::{Origin, PolicyView};
use aileron_session::Decide;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the gateway runs, and for whom.
pub struct Setup {
    /// `mcp.server`.
    pub name: String,
    /// The server: a command to run, or a URL.
    pub upstream: Upstream,
    pub decide: Arc<dyn Decide>,
    pub origin: Origin,
    pub policy: PolicyView,
    /// Message size limits (client, server); [`MAX_CLIENT_MESSAGE`] and
    /// [`MAX_SERVER_MESSAGE`] by default.
    pub limits: (usize, usize),
}

/// Where the server is.
#[derive(Clone, Debug)]
pub enum Upstream {
    /// A command and its arguments, run as a child on stdio.
    Command(Vec<OsString>),
    /// A Streamable HTTP endpoint, with headers for every request
    /// (`Authorization`).
    Url {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// How a run ended.
#[derive(Debug)]
pub enum Ended {
    /// The client closed its side (once the calls it sent were decided,
    /// the server's input is closed); the server then exited with this
    /// status (or was killed when it did not within [`GRACE`]). Requests
    /// it left unanswered got an error.
    ClientClosed(Option<ExitStatus>),
    /// The server ended first; `unanswered` requests got an error.
    ServerEnded {
        status: Option<ExitStatus>,
        unanswered: usize,
    },
}

/// How long the server has to exit once its input is closed.
pub const GRACE: Duration = Duration::from_secs(5);

struct Shared {
    gateway: Mutex<Gateway>,
    to_client: Mutex<Box<dyn Write + Send>>,
    to_server: Mutex<Option<Box<dyn Write + Send>>>,
    /// The server's process (none for a URL).
    child: Option<Mutex<Child>>,
    decide: Arc<dyn Decide>,
    origin: Origin,
    policy: PolicyView,
    client_closed: std::sync::atomic::AtomicBool,
    /// Calls being decided, until what their decision says is written.
    deciding: std::sync::atomic::AtomicUsize,
}

/// Runs the gateway between a client (`client_in`, `client_out`) and the
/// server `setup.command` starts, until either side ends. An error: the
/// server could not be started.
pub fn run(
    setup: Setup,
    client_in: impl Read + Send + 'static,
    client_out: impl Write + Send + 'static,
) -> std::io::Result<Ended> {
    let (server_in, server_out, child): (Box<dyn Write + Send>, Box<dyn Read + Send>, _) =
        match &setup.upstream {
            Upstream::Command(command) => {
                let (program, args) = command
                    .split_first()
                    .ok_or_else(|| std::io::Error::other("no server command"))?;
                let mut child = Command::new(program)
                    .args(args)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::inherit())
                    .spawn()?;
                let stdout = child.stdout.take().expect("piped");
                let stdin = child.stdin.take().expect("piped");
                (Box::new(stdin), Box::new(stdout), Some(Mutex::new(child)))
            }
            Upstream::Url { url, headers } => {
                let (poster, answers) = crate::http::connect(url, headers.clone(), setup.limits.1)?;
                (Box::new(poster), Box::new(answers), None)
            }
        };
    let shared = Arc::new(Shared {
        gateway: Mutex::new(Gateway::new(&setup.name)),
        to_client: Mutex::new(Box::new(client_out)),
        to_server: Mutex::new(Some(server_in)),
        child,
        decide: setup.decide,
        origin: setup.origin,
        policy: setup.policy,
        client_closed: Default::default(),
        deciding: Default::default(),
    });
    let (client_limit, server_limit) = setup.limits;
    let client = Arc::clone(&shared);
    std::thread::Builder::new()
        .name("mcp-client".into())
        .spawn(move || read_client(&client, client_in, client_limit))?;
    Ok(read_server(&shared, server_out, server_limit))
}

fn read_client(shared: &Arc<Shared>, input: impl Read, limit: usize) {
    pump(shared, input, limit, |g, line| match line {
        Ok(line) => g.from_client(line),
        Err(id) => g.client_too_long(id, limit),
    });
    // The client is done: the server's input is closed, and it has a
    // while to exit.
    shared
        .client_closed
        .store(true, std::sync::atomic::Ordering::SeqCst);
    // The calls sent before the end are sent when decided (`printf ... |
    // aileron mcp` works as a client that waits).
    while shared.deciding.load(std::sync::atomic::Ordering::SeqCst) > 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(lock(&shared.to_server).take());
    if let Some(child) = &shared.child {
        wait_briefly(child);
    }
}

fn read_server(shared: &Arc<Shared>, output: impl Read, limit: usize) -> Ended {
    pump(shared, output, limit, |g, line| match line {
        Ok(line) => {
            let policy = std::cell::OnceCell::new();
            let disabled = |a: &aileron_engine::Action| {
                policy
                    .get_or_init(|| shared.policy.load_quietly())
                    .as_ref()
                    .is_some_and(|l| l.policy.denies_all_like(a, crate::lower::TOOL_FIXED))
            };
            g.from_server(line, &disabled)
        }
        Err(id) => g.server_too_long(id, limit),
    });
    // The server closed its output: it is ending (or useless).
    let status = shared.child.as_ref().and_then(wait_briefly);
    let client_closed = shared
        .client_closed
        .load(std::sync::atomic::Ordering::SeqCst);
    let why = match status {
        Some(s) => format!("exited ({s})"),
        None => "closed its output".to_owned(),
    };
    let effects = lock(&shared.gateway).server_gone(&why);
    let unanswered = effects.len();
    apply(shared, effects);
    if client_closed {
        Ended::ClientClosed(status)
    } else {
        Ended::ServerEnded { status, unanswered }
    }
}

/// The child's status once it exits (killed when it has not in [`GRACE`]).
fn wait_briefly(child: &Mutex<Child>) -> Option<ExitStatus> {
    let deadline = std::time::Instant::now() + GRACE;
    loop {
        match lock(child).try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if std::time::Instant::now() < deadline => {}
            Ok(None) => {
                let mut c = lock(child);
                let _ = c.kill();
                return c.wait().ok();
            }
            Err(_) => return None,
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Reads `input` a line at a time until it ends; `handle` gets each line,
/// or the id of one too long to hold, and says what to do.
fn pump(
    shared: &Arc<Shared>,
    input: impl Read,
    limit: usize,
    mut handle: impl FnMut(&mut Gateway, Result<&[u8], Option<serde_json::Value>>) -> Vec<Effect>,
) {
    let mut reader = BufReader::with_capacity(64 << 10, input);
    let mut line = Vec::new();
    loop {
        let effects = match read_line(&mut reader, &mut line, limit) {
            Line::Eof => return,
            Line::Whole if line.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Whole => handle(&mut lock(&shared.gateway), Ok(&line)),
            Line::TooLong(scan) => handle(&mut lock(&shared.gateway), Err(scan.id())),
        };
        apply(shared, effects);
    }
}

fn apply(shared: &Arc<Shared>, effects: Vec<Effect>) {
    for effect in effects {
        match effect {
            Effect::ToServer(line) => {
                if let Some(w) = lock(&shared.to_server).as_mut() {
                    // A server that stopped reading: its end shows on its output.
                    let _ = write_line(w, &line);
                }
            }
            Effect::ToClient(line) => {
                let _ = write_line(&mut *lock(&shared.to_client), &line);
            }
            Effect::Decide(call) => {
                let key = call.key.clone();
                let shared2 = Arc::clone(shared);
                shared
                    .deciding
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let spawned =
                    std::thread::Builder::new()
                        .name("mcp-decide".into())
                        .spawn(move || {
                            let req = shared2.origin.request(call.action, crate::ADAPTER);
                            let response = shared2.decide.decide(&req);
                            let ruling = Ruling {
                                allow: response.allow && response.decision != "ask",
                                message: response.message.as_deref(),
                            };
                            let effects = lock(&shared2.gateway).decided(&call.key, &ruling);
                            apply(&shared2, effects);
                            shared2
                                .deciding
                                .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                        });
                if let Err(e) = spawned {
                    // No thread to decide in: refused, as any call not decided.
                    let text = format!("aileron: denied: cannot decide the call: {e}");
                    let effects = lock(&shared.gateway).decided(
                        &key,
                        &Ruling {
                            allow: false,
                            message: Some(&text),
                        },
                    );
                    apply(shared, effects);
                    shared
                        .deciding
                        .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
            Effect::Audit(action) => shared.policy.note(&shared.origin, action),
            Effect::Refused { action, reason } => {
                shared.policy.refused(&shared.origin, action, reason)
            }
            Effect::Note(text) => eprintln!("aileron mcp: {text}"),
        }
    }
}

/// Writes one line and its `\n`, framed as every reader reads it
/// ([`crate::framing::frame`]): a line the gateway wrote itself (a
/// filtered `tools/list`, an error naming a rule) may hold U+2028 in a
/// string, which serde_json writes raw.
fn write_line(w: &mut dyn Write, line: &[u8]) -> std::io::Result<()> {
    let line = crate::framing::frame(line).map_err(|brk| {
        // Never so: what is passed on was framed when read, and serde_json
        // escapes control characters. Not written, rather than misread.
        eprintln!("aileron mcp: a line holding {} not written", brk.name);
        std::io::Error::other(brk.name)
    })?;
    let line = &line[..];
    // One write for the line and its newline where it fits a pipe's atomic size.
    if line.len() < 4096 {
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        w.write_all(&buf)?;
    } else {
        w.write_all(line)?;
        w.write_all(b"\n")?;
    }
    w.flush()
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What [`read_line`] read.
pub(crate) enum Line {
    /// A line, in the buffer (without its newline).
    Whole,
    /// A line longer than the limit, skipped; what its id is.
    TooLong(IdScan),
    Eof,
}

/// Reads one line into `buf`, holding at most `limit` bytes of it. A last
/// line without a newline counts.
pub(crate) fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>, limit: usize) -> Line {
    buf.clear();
    let mut scan: Option<IdScan> = None;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => &[],
        };
        if chunk.is_empty() {
            return match scan {
                Some(s) => Line::TooLong(s),
                None if buf.is_empty() => Line::Eof,
                None => Line::Whole,
            };
        }
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(n) => (&chunk[..n], Some(n + 1)),
            None => (chunk, None),
        };
        match &mut scan {
            Some(s) => s.feed(part),
            None if buf.len() + part.len() > limit => {
                let mut s = IdScan::default();
                s.feed(buf);
                s.feed(part);
                buf.clear();
                buf.shrink_to(64 << 10);
                scan = Some(s);
            }
            None => buf.extend_from_slice(part),
        }
        let used = done.unwrap_or(chunk.len());
        r.consume(used);
        if done.is_some() {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return match scan {
                Some(s) => Line::TooLong(s),
                None => Line::Whole,
            };
        }
    }
}

/// The default limits.
pub const LIMITS: (usize, usize) = (MAX_CLIENT_MESSAGE, MAX_SERVER_MESSAGE);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_written_holds_no_break_a_reader_splits_at() {
        let mut out = Vec::new();
        let line = serde_json::json!({"id": 1, "result": {"text": "a\u{2028}b\u{85}"}});
        write_line(&mut out, line.to_string().as_bytes()).unwrap();
        let want = br#"{"id":1,"result":{"text":"a\u2028b\u0085"}}"#;
        assert_eq!(out, [&want[..], b"\n"].concat());
        assert!(write_line(&mut out, b"{}\r{}").is_err());
    }

    #[test]
    fn lines_are_read_whole_or_skipped_past_the_limit() {
        let text = b"{\"id\":1}\r\n\n{\"id\":2,\"x\":\"0123456789\"}\n{\"id\":3}";
        let mut r = BufReader::with_capacity(4, &text[..]);
        let mut buf = Vec::new();
        assert!(matches!(read_line(&mut r, &mut buf, 20), Line::Whole));
        assert_eq!(buf, b"{\"id\":1}");
        assert!(matches!(read_line(&mut r, &mut buf, 20), Line::Whole));
        assert!(buf.is_empty());
        let Line::TooLong(scan) = read_line(&mut r, &mut buf, 20) else {
            panic!()
        };
        assert_eq!(scan.id(), Some(serde_json::json!(2)));
        assert!(matches!(read_line(&mut r, &mut buf, 20), Line::Whole));
        assert_eq!(buf, b"{\"id\":3}");
        assert!(matches!(read_line(&mut r, &mut buf, 20), Line::Eof));
    }
}
