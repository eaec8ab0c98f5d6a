//! The gateway itself: one task per direction of each connection.
//!
//! The client's side reads every message the client sends: the startup
//! phase is answered (TLS and GSS encryption refused with `N`, a cancel
//! request passed to the server, the settings of the startup message that
//! change name resolution or identity decided, a refusal a `FATAL`
//! error), authentication is relayed as it comes,
//! and after it each `Query`, `Parse` and `FunctionCall` is lowered and
//! decided before it is forwarded; other messages stream through.
//!
//! A refusal is the server's own error: the gateway forwards, in place of
//! the refused message, one that the server cannot parse (a `Query` or
//! `Parse` whose text is a token known only to this connection) and, on
//! the way back, replaces the server's syntax error naming that token
//! with its own `ErrorResponse` (SQLSTATE 42501 and the rule and reason).
//! So the answer comes in its place among the answers to what the client
//! pipelined, the server discards the rest of an extended-protocol batch
//! until `Sync`, aborts the transaction, and sends `ReadyForQuery`, all as
//! it does for any error; and the connection stays usable.

use crate::lower::{self, Context};
use crate::wire::{self, Header, ReadError, Severity, Startup, Violation};
use crate::{Decide, Origin};
use aileron_engine::Action;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

/// Buffer sizes of each side.
const BUFFER: usize = 32 * 1024;
/// How long a client may take to send its startup message (the server's
/// `authentication_timeout` is a minute too).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a cancel request waits for the server to take it.
const CANCEL_WAIT: Duration = Duration::from_secs(5);
/// The most refusals waiting for their server error on one connection.
const MAX_MARKERS: usize = 1024;
/// The most statements remembered by name on one connection.
const MAX_PREPARED: usize = 10_000;

type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;
type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// The database server the gateway forwards to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Upstream {
    Tcp {
        host: String,
        port: u16,
    },
    /// A Unix socket (`.s.PGSQL.PORT` in a directory).
    Unix(PathBuf),
}

impl Upstream {
    /// `postgres://HOST[:PORT]` (or `postgresql://`); a user, a database
    /// and parameters are ignored (each client names its own), except
    /// `host=/dir`, and a host that is a directory (`%2Frun%2Fpostgresql`):
    /// the server's Unix socket in that directory.
    pub fn parse(url: &str) -> Result<Upstream, String> {
        let rest = url
            .strip_prefix("postgres://")
            .or_else(|| url.strip_prefix("postgresql://"))
            .ok_or_else(|| format!("{url:?}: not a postgres:// URL"))?;
        let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let query = tail.split_once('?').map(|(_, q)| q).unwrap_or_default();
        let param = |name: &str| {
            query
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, _)| *k == name)
                .map(|(_, v)| decode_percent(v))
        };
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (h, p) = v6
                    .split_once(']')
                    .ok_or_else(|| format!("{url:?}: an IPv6 address without its ]"))?;
                (h.to_owned(), p.strip_prefix(':').unwrap_or_default())
            }
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (decode_percent(h), p),
                None => (decode_percent(authority), ""),
            },
        };
        let port = match (port, param("port")) {
            ("", None) => 5432,
            ("", Some(p)) => p.parse().map_err(|_| format!("{url:?}: a bad port"))?,
            (p, _) => p.parse().map_err(|_| format!("{url:?}: a bad port"))?,
        };
        let host = param("host").unwrap_or(host);
        if host.starts_with('/') {
            return Ok(Upstream::Unix(
                PathBuf::from(host).join(format!(".s.PGSQL.{port}")),
            ));
        }
        if host.is_empty() {
            return Err(format!("{url:?}: no host"));
        }
        Ok(Upstream::Tcp { host, port })
    }

    async fn connect(&self) -> std::io::Result<(ReadHalf, WriteHalf)> {
        match self {
            Upstream::Tcp { host, port } => {
                let s = TcpStream::connect((host.as_str(), *port)).await?;
                let _ = s.set_nodelay(true);
                let (r, w) = s.into_split();
                Ok((Box::new(r), Box::new(w)))
            }
            Upstream::Unix(path) => {
                let s = tokio::net::UnixStream::connect(path).await?;
                let (r, w) = s.into_split();
                Ok((Box::new(r), Box::new(w)))
            }
        }
    }
}

impl std::fmt::Display for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Upstream::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Upstream::Tcp { host, port } => write!(f, "{host}:{port}"),
            Upstream::Unix(p) => write!(f, "{}", p.display()),
        }
    }
}

fn decode_percent(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// What the gateway needs to run.
pub struct Config {
    /// Who decides.
    pub decide: Arc<dyn Decide>,
    /// The directory whose policy applies, and the session.
    pub origin: Origin,
    pub upstream: Upstream,
}

/// A running gateway.
pub struct Gateway {
    decide: Arc<dyn Decide>,
    origin: Origin,
    upstream: Upstream,
}

impl Gateway {
    pub fn new(cfg: Config) -> Arc<Gateway> {
        Arc::new(Gateway {
            decide: cfg.decide,
            origin: cfg.origin,
            upstream: cfg.upstream,
        })
    }

    /// Serves clients on `listener` until the process ends.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors, say: not a busy loop.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let gw = Arc::clone(&self);
            tokio::spawn(async move { gw.connection(stream).await });
        }
    }

    /// One client connection, start to end.
    pub async fn connection(self: Arc<Self>, client: TcpStream) {
        let (cr, cw) = client.into_split();
        let mut cr = BufReader::with_capacity(BUFFER, cr);
        let mut cw = BufWriter::with_capacity(BUFFER, cw);
        let startup = loop {
            let read = tokio::time::timeout(STARTUP_TIMEOUT, wire::read_startup(&mut cr));
            let Ok(read) = read.await else {
                fatal(
                    &mut cw,
                    "08P01",
                    "aileron: the startup message did not come in time",
                )
                .await;
                return;
            };
            match read {
                Ok(Some(Startup::Ssl | Startup::GssEnc)) => {
                    // No encryption between the client and the gateway.
                    if wire::send(&mut cw, b"N").await.is_err() {
                        return;
                    }
                }
                Ok(Some(Startup::Cancel(raw))) => {
                    self.cancel(&raw).await;
                    return;
                }
                Ok(Some(s)) => break s,
                Ok(None) | Err(ReadError::Io(_)) => return,
                Err(ReadError::Violation(v)) => {
                    fatal(&mut cw, v.code, &format!("aileron: {v}")).await;
                    return;
                }
            }
        };
        if startup.param("replication").is_some_and(|v| {
            !matches!(
                v.to_ascii_lowercase().as_str(),
                "false" | "off" | "no" | "0"
            )
        }) {
            fatal(
                &mut cw,
                "42501",
                "aileron: replication connections are not passed through the gateway",
            )
            .await;
            return;
        }
        let user = startup.param("user").unwrap_or_default().to_owned();
        let database = startup
            .param("database")
            .filter(|d| !d.is_empty())
            .unwrap_or(&user)
            .to_owned();
        let Startup::Start { raw, params } = startup else {
            return;
        };
        // Settings that change how names resolve or who runs the
        // statements are decided before the server sees the connection.
        let settings = crate::startup::actions(&params, &Context::new(&database, &user));
        let doubt_names = settings
            .iter()
            .any(|a| a.tags.iter().any(|t| t == aileron_engine::builtin::DYNAMIC));
        if let Some(first) = settings.first() {
            let line = first.summary.clone();
            if let Err(message) = self.verdict(line, settings).await {
                fatal(&mut cw, "42501", &message).await;
                return;
            }
        }
        let (ur, uw) = match self.upstream.connect().await {
            Ok(s) => s,
            Err(e) => {
                fatal(
                    &mut cw,
                    "08006",
                    &format!(
                        "aileron: cannot reach the database at {}: {e}",
                        self.upstream
                    ),
                )
                .await;
                return;
            }
        };
        let ur = BufReader::with_capacity(BUFFER, ur);
        let mut uw = BufWriter::with_capacity(BUFFER, uw);
        if wire::send(&mut uw, &raw).await.is_err() {
            return;
        }
        let shared = Arc::new(Shared::default());
        let (fatal_tx, fatal_rx) = mpsc::channel(1);
        let mut writer = tokio::spawn(server_to_client(ur, cw, Arc::clone(&shared), fatal_rx));
        let mut conn = Conn {
            gw: &self,
            shared,
            user,
            database,
            prepared: HashMap::new(),
            doubt_escapes: false,
            doubt_encoding: false,
            doubt_names,
            batches: 0,
            nonce: std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish(),
            refusals: 0,
            scratch: vec![0; 64 * 1024],
            body: Vec::new(),
        };
        tokio::select! {
            r = conn.run(&mut cr, &mut uw) => {
                if let Err(ReadError::Violation(v)) = r {
                    let _ = fatal_tx
                        .send(wire::error_response(Severity::Fatal, v.code, &format!("aileron: {v}"), None, None))
                        .await;
                }
                let _ = uw.flush().await;
                let _ = uw.shutdown().await;
                drop(fatal_tx);
                let _ = writer.await;
            }
            _ = &mut writer => {}
        }
    }

    /// Decides `actions` as one request (`line`: what a prompt shows);
    /// `Err`: the message for the client.
    async fn verdict(&self, line: String, actions: Vec<Action>) -> Result<(), String> {
        let req = crate::request(&self.origin, line, actions);
        let decide = Arc::clone(&self.decide);
        match tokio::task::spawn_blocking(move || decide.decide(&req)).await {
            Ok(r) if r.allow => Ok(()),
            Ok(r) => Err(r.message.unwrap_or_else(|| "aileron: denied".to_owned())),
            Err(_) => Err("aileron: denied: the decision failed".to_owned()),
        }
    }

    /// Passes a cancel request to the server, and waits for it to close.
    async fn cancel(&self, raw: &[u8]) {
        let Ok((mut r, mut w)) = self.upstream.connect().await else {
            return;
        };
        if wire::send(&mut w, raw).await.is_ok() {
            let mut sink = [0u8; 64];
            let _ = tokio::time::timeout(CANCEL_WAIT, async {
                while tokio::io::AsyncReadExt::read(&mut r, &mut sink)
                    .await
                    .is_ok_and(|n| n > 0)
                {}
            })
            .await;
        }
    }
}

/// Sends a FATAL error and flushes: the connection ends.
async fn fatal<W: AsyncWrite + Unpin>(w: &mut W, code: &str, message: &str) {
    let _ = wire::send(
        w,
        &wire::error_response(Severity::Fatal, code, message, None, None),
    )
    .await;
    let _ = w.shutdown().await;
}

/// What both directions of a connection share.
#[derive(Default)]
struct Shared {
    /// The server said `ReadyForQuery` once: authentication is over.
    ready: watch::Sender<bool>,
    refusals: Mutex<Refusals>,
    /// The server said `standard_conforming_strings` is off, once.
    escapes: AtomicBool,
    /// The server said `client_encoding` is something else than UTF8, once.
    not_utf8: AtomicBool,
}

/// The refusals whose server error has not come back yet.
#[derive(Default)]
struct Refusals {
    waiting: VecDeque<Refusal>,
    /// `ReadyForQuery` messages seen after authentication.
    readies: u64,
}

struct Refusal {
    /// The text the server is sent in place of the refused statement.
    token: String,
    /// The error the client gets in place of the server's.
    error: Vec<u8>,
    /// How many batches (`Sync`, `Query`, `FunctionCall`) were sent before it.
    batch: u64,
}

impl Shared {
    /// The error to send in place of the server's `ErrorResponse` `body`,
    /// if it answers one of this connection's refusals.
    fn replacement(&self, body: &[u8]) -> Option<Vec<u8>> {
        let fields = wire::error_fields(body);
        let field = |c: u8| fields.iter().find(|(k, _)| *k == c).map(|(_, v)| *v);
        if field(b'C') != Some(b"42601") {
            return None;
        }
        let message = field(b'M')?;
        let mut r = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
        let i = r.waiting.iter().position(|w| {
            message
                .windows(w.token.len())
                .any(|m| m == w.token.as_bytes())
        })?;
        r.waiting.remove(i).map(|w| w.error)
    }

    /// A `ReadyForQuery` passed: the refusals of the batches it ends can
    /// no longer be answered.
    fn ready_for_query(&self) {
        if !*self.ready.borrow() {
            self.ready.send_replace(true);
            return;
        }
        let mut r = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
        r.readies += 1;
        let done = r.readies;
        r.waiting.retain(|w| w.batch >= done);
    }

    fn parameter(&self, name: &[u8], value: &[u8]) {
        match name {
            b"standard_conforming_strings" if !value.eq_ignore_ascii_case(b"on") => {
                self.escapes.store(true, Ordering::SeqCst)
            }
            b"client_encoding"
                if !value.eq_ignore_ascii_case(b"UTF8")
                    && !value.eq_ignore_ascii_case(b"UTF-8") =>
            {
                self.not_utf8.store(true, Ordering::SeqCst)
            }
            _ => {}
        }
    }
}

/// The server's side: every message relayed to the client, a refusal's
/// provoked error replaced, `ReadyForQuery` and `ParameterStatus` watched.
async fn server_to_client(
    mut ur: BufReader<ReadHalf>,
    mut cw: BufWriter<tokio::net::tcp::OwnedWriteHalf>,
    shared: Arc<Shared>,
    mut fatal_rx: mpsc::Receiver<Vec<u8>>,
) {
    let mut scratch = vec![0u8; 64 * 1024];
    let mut body = Vec::new();
    loop {
        if ur.buffer().is_empty() && cw.flush().await.is_err() {
            return;
        }
        let head = tokio::select! {
            biased;
            Some(last) = fatal_rx.recv() => {
                let _ = wire::send(&mut cw, &last).await;
                let _ = cw.shutdown().await;
                return;
            }
            h = wire::read_header(&mut ur) => h,
        };
        let h = match head {
            Ok(Some(h)) => h,
            Ok(None) | Err(ReadError::Io(_)) => break,
            Err(ReadError::Violation(v)) => {
                let message = format!("aileron: the database sent a malformed message: {v}");
                let _ = wire::send(
                    &mut cw,
                    &wire::error_response(Severity::Fatal, "08P01", &message, None, None),
                )
                .await;
                break;
            }
        };
        let held = matches!(h.tag, b'E' | b'Z' | b'S') && h.len <= wire::MAX_HELD;
        let sent = if held {
            if wire::read_body(&mut ur, h.len, &mut body).await.is_err() {
                break;
            }
            let replaced = match h.tag {
                b'E' => shared.replacement(&body),
                b'Z' => {
                    shared.ready_for_query();
                    None
                }
                _ => {
                    if let Some((name, value)) = wire::parameter_status(&body) {
                        shared.parameter(name, value);
                    }
                    None
                }
            };
            match replaced {
                Some(error) => cw.write_all(&error).await,
                None => match cw.write_all(&h.bytes()).await {
                    Ok(()) => cw.write_all(&body).await,
                    Err(e) => Err(e),
                },
            }
        } else {
            match cw.write_all(&h.bytes()).await {
                Ok(()) => wire::relay(&mut ur, &mut cw, h.len, &mut scratch).await,
                Err(e) => Err(e),
            }
        };
        if sent.is_err() {
            return;
        }
    }
    let _ = cw.flush().await;
    let _ = cw.shutdown().await;
}

/// The client's side of one connection.
struct Conn<'g> {
    gw: &'g Gateway,
    shared: Arc<Shared>,
    user: String,
    database: String,
    /// Statements prepared on this connection (`PREPARE`, a named `Parse`).
    prepared: HashMap<String, String>,
    /// Something allowed may have turned `standard_conforming_strings` off,
    /// or changed the client's encoding, before the server says so.
    doubt_escapes: bool,
    doubt_encoding: bool,
    /// Something allowed may have changed `search_path`: only names
    /// qualified by `pg_catalog` are trusted for the rest of the connection.
    doubt_names: bool,
    /// Batches sent: `Sync`, `Query`, `FunctionCall` (each answered by one
    /// `ReadyForQuery`).
    batches: u64,
    /// Makes this connection's refusal tokens its own.
    nonce: u64,
    refusals: u64,
    scratch: Vec<u8>,
    body: Vec<u8>,
}

/// What a refused message is replaced with.
enum Provoke<'a> {
    Query,
    Parse(&'a [u8]),
}

impl Conn<'_> {
    async fn run(
        &mut self,
        cr: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
        uw: &mut BufWriter<WriteHalf>,
    ) -> Result<(), ReadError> {
        loop {
            if cr.buffer().is_empty() {
                uw.flush().await?;
            }
            let Some(h) = wire::read_header(cr).await? else {
                return Ok(());
            };
            if !*self.shared.ready.borrow() && h.tag != b'p' {
                // A message of the query phase before authentication ended:
                // it waits, as the server would make it.
                uw.flush().await?;
                let mut ready = self.shared.ready.subscribe();
                if ready.wait_for(|r| *r).await.is_err() {
                    return Ok(());
                }
            }
            match h.tag {
                b'Q' | b'P' if h.len > wire::MAX_QUERY => {
                    wire::skip(cr, h.len, &mut self.scratch).await?;
                    let message = format!(
                        "aileron: the SQL text is over the gateway's limit ({} bytes; at most {})",
                        h.len,
                        wire::MAX_QUERY
                    );
                    let provoke = if h.tag == b'Q' {
                        Provoke::Query
                    } else {
                        Provoke::Parse(b"")
                    };
                    self.refuse(uw, provoke, "54000", &message).await?;
                    if h.tag == b'Q' {
                        self.batches += 1;
                    }
                }
                b'F' if h.len > wire::MAX_HELD => {
                    return Err(
                        Violation::protocol("a FunctionCall over the gateway's limit").into(),
                    );
                }
                b'Q' | b'P' | b'F' => {
                    wire::read_body(cr, h.len, &mut self.body).await?;
                    let body = std::mem::take(&mut self.body);
                    let done = self.decided(uw, h, &body).await;
                    self.body = body;
                    done?;
                    if h.tag != b'P' {
                        self.batches += 1;
                    }
                }
                // Bind, Describe, Execute, Close, Flush, Sync, the COPY data
                // of a statement decided, and authentication responses.
                b'B' | b'D' | b'E' | b'C' | b'H' | b'S' | b'd' | b'c' | b'f' | b'p' => {
                    uw.write_all(&h.bytes()).await?;
                    wire::relay(cr, uw, h.len, &mut self.scratch).await?;
                    if h.tag == b'S' {
                        self.batches += 1;
                    }
                }
                b'X' => {
                    forward(uw, h, &[]).await?;
                    uw.flush().await?;
                    return Ok(());
                }
                t => {
                    return Err(
                        Violation::protocol(format!("invalid frontend message type {t}")).into(),
                    );
                }
            }
        }
    }

    /// Decides a `Query`, `Parse` or `FunctionCall` (its `body`), and sends
    /// it on, or what provokes the error that answers for it.
    async fn decided(
        &mut self,
        uw: &mut BufWriter<WriteHalf>,
        h: Header,
        body: &[u8],
    ) -> Result<(), ReadError> {
        let (what, provoke) = match h.tag {
            b'Q' => (
                lower::Lowering::Text(wire::query_text(body)?),
                Provoke::Query,
            ),
            b'P' => {
                let parse = wire::parse_message(body)?;
                (
                    lower::Lowering::Text(parse.text),
                    Provoke::Parse(parse.name),
                )
            }
            // A refused call is answered as a failed one: an error, then
            // ReadyForQuery, which a refused Query gets too.
            _ => (
                lower::Lowering::FunctionCall(wire::function_call_oid(body)?),
                Provoke::Query,
            ),
        };
        uw.flush().await?;
        match self.decide(what).await {
            Ok(()) => {
                if let (Provoke::Parse(name), lower::Lowering::Text(text)) = (&provoke, what)
                    && !name.is_empty()
                    && self.prepared.len() < MAX_PREPARED
                {
                    self.prepared.insert(
                        String::from_utf8_lossy(name).into_owned(),
                        String::from_utf8_lossy(text).into_owned(),
                    );
                }
                forward(uw, h, body).await?;
            }
            Err(message) => self.refuse(uw, provoke, "42501", &message).await?,
        }
        Ok(())
    }

    /// Decides what the client sent; `Err`: the message for the client.
    async fn decide(&mut self, what: lower::Lowering<'_>) -> Result<(), String> {
        let lowered = {
            let prepared = &self.prepared;
            let lookup = |name: &str| prepared.get(name).cloned();
            let cx = Context {
                database: &self.database,
                user: &self.user,
                backslash_escapes: self.doubt_escapes || self.shared.escapes.load(Ordering::SeqCst),
                prepared: &lookup,
                trusted_names: !self.doubt_names,
            };
            let utf8 = !self.doubt_encoding && !self.shared.not_utf8.load(Ordering::SeqCst);
            what.lower(utf8, &cx)
        };
        if lowered.actions.is_empty() {
            // Blanks and comments: the server runs nothing.
            return Ok(());
        }
        self.gw.verdict(lowered.line, lowered.actions).await?;
        if lowered.changes_reading {
            self.doubt_escapes = true;
            self.doubt_encoding = true;
        }
        self.doubt_names |= lowered.changes_names;
        for (name, text) in lowered.prepares {
            if self.prepared.len() < MAX_PREPARED {
                self.prepared.insert(name, text);
            }
        }
        Ok(())
    }

    /// Sends the server a message it cannot parse in place of a refused one,
    /// and waits for its error to answer with `message` instead.
    async fn refuse(
        &mut self,
        uw: &mut BufWriter<WriteHalf>,
        provoke: Provoke<'_>,
        code: &str,
        message: &str,
    ) -> std::io::Result<()> {
        self.refusals += 1;
        let token = format!(
            "aileron_refused_{:016x}",
            self.nonce.wrapping_add(self.refusals)
        );
        let error = wire::error_response(
            Severity::Error,
            code,
            message,
            Some("The Aileron gateway did not send the statement to the server."),
            None,
        );
        {
            let mut r = self
                .shared
                .refusals
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if r.waiting.len() >= MAX_MARKERS {
                r.waiting.pop_front();
            }
            r.waiting.push_back(Refusal {
                token: token.clone(),
                error,
                batch: self.batches,
            });
        }
        let bytes = match provoke {
            Provoke::Query => wire::query_message(&token),
            Provoke::Parse(name) => wire::parse_message_bytes(name, &token),
        };
        uw.write_all(&bytes).await
    }
}

async fn forward<W: AsyncWrite + Unpin>(w: &mut W, h: Header, body: &[u8]) -> std::io::Result<()> {
    w.write_all(&h.bytes()).await?;
    w.write_all(body).await
}
