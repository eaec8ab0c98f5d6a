//! The PostgreSQL frontend/backend protocol, version 3, as far as the
//! gateway reads it: the startup phase's messages (no type byte), the
//! framing of every later message (a type byte and a length that counts
//! itself), the bodies of the messages the gateway decides (`Query`,
//! `Parse`, `FunctionCall`) or watches (`ErrorResponse`,
//! `ParameterStatus`, `ReadyForQuery`), and the messages it writes.
//!
//! Every length is checked before anything is read or allocated: a
//! negative one, one shorter than its header, or one over the limit is a
//! [`Violation`], never a panic or an unbounded read.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The protocol version the startup message asks for: 3.x.
pub const PROTOCOL_MAJOR: i32 = 3;
/// An SSLRequest's code (in place of a protocol version).
pub const SSL_REQUEST: i32 = 80_877_103;
/// A GSSENCRequest's code.
pub const GSSENC_REQUEST: i32 = 80_877_104;
/// A CancelRequest's code.
pub const CANCEL_REQUEST: i32 = 80_877_102;
/// The longest startup-phase message, as the server takes it
/// (`MAX_STARTUP_PACKET_LENGTH`).
pub const MAX_STARTUP: usize = 10_000;
/// The longest SQL text the gateway decides (a `Query` or `Parse` body):
/// over it, the message is refused (its bytes skipped, the connection kept).
pub const MAX_QUERY: usize = 1 << 20;
/// The longest message body the gateway holds in memory to read it
/// (`FunctionCall`, and the server's `ErrorResponse`); others stream through.
pub const MAX_HELD: usize = MAX_QUERY + 64 * 1024;

/// A message the protocol does not allow, said as the server says it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Violation {
    /// SQLSTATE: `08P01` (protocol violation) unless said otherwise.
    pub code: &'static str,
    pub message: String,
}

impl Violation {
    pub fn protocol(message: impl Into<String>) -> Violation {
        Violation {
            code: "08P01",
            message: message.into(),
        }
    }
}

/// What a client says before it is authenticated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Startup {
    /// Asks for TLS.
    Ssl,
    /// Asks for GSSAPI encryption.
    GssEnc,
    /// Cancels a running query of another connection: the whole message,
    /// passed to the server as it is.
    Cancel(Vec<u8>),
    /// The startup message: the whole message (passed on as it is) and its
    /// parameters (`user`, `database`, `options`, ...).
    Start {
        raw: Vec<u8>,
        params: Vec<(String, String)>,
    },
}

impl Startup {
    /// A parameter of the startup message.
    pub fn param(&self, name: &str) -> Option<&str> {
        match self {
            Startup::Start { params, .. } => params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str()),
            _ => None,
        }
    }
}

/// Reads one startup-phase message. `Ok(None)`: the client left first.
pub async fn read_startup<R: AsyncRead + Unpin>(r: &mut R) -> Result<Option<Startup>, ReadError> {
    let mut len = [0u8; 4];
    if !read_or_eof(r, &mut len).await? {
        return Ok(None);
    }
    let len = i32::from_be_bytes(len);
    if len < 8 || len as usize > MAX_STARTUP {
        return Err(Violation::protocol(format!("invalid length of startup packet: {len}")).into());
    }
    let mut raw = vec![0u8; len as usize];
    raw[..4].copy_from_slice(&len.to_be_bytes());
    r.read_exact(&mut raw[4..]).await?;
    let code = i32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]);
    match code {
        SSL_REQUEST if len == 8 => Ok(Some(Startup::Ssl)),
        GSSENC_REQUEST if len == 8 => Ok(Some(Startup::GssEnc)),
        // 4 bytes of process id, and a key of 4 (protocol 3.0) to 256 bytes (3.2).
        CANCEL_REQUEST if (16..=268).contains(&len) => Ok(Some(Startup::Cancel(raw))),
        SSL_REQUEST | GSSENC_REQUEST | CANCEL_REQUEST => {
            Err(Violation::protocol(format!("invalid length of startup packet: {len}")).into())
        }
        v if v >> 16 == PROTOCOL_MAJOR => {
            let params = startup_params(&raw[8..])?;
            Ok(Some(Startup::Start { raw, params }))
        }
        v => Err(Violation {
            code: "0A000",
            message: format!(
                "unsupported frontend protocol {}.{}: the gateway speaks 3",
                v >> 16,
                v & 0xffff
            ),
        }
        .into()),
    }
}

/// `name NUL value NUL ... NUL`, as the server reads it: every name and
/// value UTF-8 (the startup packet is read before any encoding is set,
/// and the names the gateway reads are ASCII), the list ended by an empty
/// name that is the message's last byte.
fn startup_params(mut body: &[u8]) -> Result<Vec<(String, String)>, Violation> {
    let bad =
        || Violation::protocol("invalid startup packet layout: expected terminator as last byte");
    let mut params = Vec::new();
    loop {
        let (name, rest) = cstr(body).ok_or_else(bad)?;
        if name.is_empty() {
            return if rest.is_empty() {
                Ok(params)
            } else {
                Err(bad())
            };
        }
        let (value, rest) = cstr(rest).ok_or_else(bad)?;
        params.push((
            String::from_utf8_lossy(name).into_owned(),
            String::from_utf8_lossy(value).into_owned(),
        ));
        body = rest;
    }
}

/// A message's type and the length of its body (the length field less its
/// own four bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub tag: u8,
    pub len: usize,
}

impl Header {
    /// The five bytes that start the message.
    pub fn bytes(&self) -> [u8; 5] {
        let n = (self.len as u32 + 4).to_be_bytes();
        [self.tag, n[0], n[1], n[2], n[3]]
    }
}

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Violation(#[from] Violation),
}

/// Reads a message's header. `Ok(None)`: the peer closed the connection
/// between messages. A length below 4 (negative included) is a violation.
pub async fn read_header<R: AsyncRead + Unpin>(r: &mut R) -> Result<Option<Header>, ReadError> {
    let mut head = [0u8; 5];
    if !read_or_eof(r, &mut head).await? {
        return Ok(None);
    }
    let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]);
    if len < 4 {
        return Err(Violation::protocol(format!("invalid message length {len}")).into());
    }
    Ok(Some(Header {
        tag: head[0],
        len: len as usize - 4,
    }))
}

/// Fills `buf`; false when the stream ended before its first byte.
async fn read_or_eof<R: AsyncRead + Unpin>(r: &mut R, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]).await? {
            0 if got == 0 => return Ok(false),
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => got += n,
        }
    }
    Ok(true)
}

/// Reads a body of `len` bytes into `buf` (reused between messages).
pub async fn read_body<R: AsyncRead + Unpin>(
    r: &mut R,
    len: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    buf.clear();
    buf.resize(len, 0);
    r.read_exact(buf).await?;
    Ok(())
}

/// Copies `len` bytes from `r` to `w` through `scratch`, holding no more
/// than its size.
pub async fn relay<R, W>(
    r: &mut R,
    w: &mut W,
    mut len: usize,
    scratch: &mut [u8],
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    while len > 0 {
        let want = len.min(scratch.len());
        let n = r.read(&mut scratch[..want]).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        w.write_all(&scratch[..n]).await?;
        len -= n;
    }
    Ok(())
}

/// Skips `len` bytes of `r`.
pub async fn skip<R: AsyncRead + Unpin>(
    r: &mut R,
    len: usize,
    scratch: &mut [u8],
) -> std::io::Result<()> {
    relay(r, &mut tokio::io::sink(), len, scratch).await
}

/// A NUL-terminated string at the start of `b`, and what follows it.
pub fn cstr(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = b.iter().position(|&c| c == 0)?;
    Some((&b[..end], &b[end + 1..]))
}

/// A `Query` body: the text, NUL-terminated, and nothing after it (the
/// server reads up to the first NUL and refuses what follows).
pub fn query_text(body: &[u8]) -> Result<&[u8], Violation> {
    match cstr(body) {
        Some((text, [])) => Ok(text),
        _ => Err(Violation::protocol(
            "invalid message format: a Query is one NUL-terminated string",
        )),
    }
}

/// A `Parse` body's statement name and SQL text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseMsg<'a> {
    pub name: &'a [u8],
    pub text: &'a [u8],
}

/// `name NUL text NUL int16 n, n × int32`, exactly, as the server reads it.
pub fn parse_message(body: &[u8]) -> Result<ParseMsg<'_>, Violation> {
    let bad = || Violation::protocol("invalid message format: a Parse message");
    let (name, rest) = cstr(body).ok_or_else(bad)?;
    let (text, rest) = cstr(rest).ok_or_else(bad)?;
    if rest.len() < 2 {
        return Err(bad());
    }
    let n = i16::from_be_bytes([rest[0], rest[1]]);
    if n < 0 || rest.len() != 2 + 4 * n as usize {
        return Err(bad());
    }
    Ok(ParseMsg { name, text })
}

/// A `FunctionCall`'s function (its object id).
pub fn function_call_oid(body: &[u8]) -> Result<u32, Violation> {
    match body {
        [a, b, c, d, ..] => Ok(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => Err(Violation::protocol(
            "invalid message format: a FunctionCall message",
        )),
    }
}

/// The fields of an `ErrorResponse` or `NoticeResponse` body: (code, value).
pub fn error_fields(body: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = Vec::new();
    let mut rest = body;
    while let [code, tail @ ..] = rest {
        if *code == 0 {
            break;
        }
        match cstr(tail) {
            Some((value, next)) => {
                out.push((*code, value));
                rest = next;
            }
            None => break,
        }
    }
    out
}

/// A `ParameterStatus` body: name and value.
pub fn parameter_status(body: &[u8]) -> Option<(&[u8], &[u8])> {
    let (name, rest) = cstr(body)?;
    let (value, _) = cstr(rest)?;
    Some((name, value))
}

/// How bad an `ErrorResponse` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The statement failed; the connection goes on.
    Error,
    /// The connection ends.
    Fatal,
}

/// An `ErrorResponse` message: severity, SQLSTATE, message, and an
/// optional detail and hint.
pub fn error_response(
    severity: Severity,
    code: &str,
    message: &str,
    detail: Option<&str>,
    hint: Option<&str>,
) -> Vec<u8> {
    let sev = match severity {
        Severity::Error => "ERROR",
        Severity::Fatal => "FATAL",
    };
    let mut body = Vec::with_capacity(64 + message.len());
    let mut field = |code: u8, value: &str| {
        body.push(code);
        // A NUL inside would end the field early: none gets in.
        body.extend(value.bytes().filter(|&b| b != 0));
        body.push(0);
    };
    field(b'S', sev);
    field(b'V', sev);
    field(b'C', code);
    field(b'M', message);
    if let Some(d) = detail {
        field(b'D', d);
    }
    if let Some(h) = hint {
        field(b'H', h);
    }
    body.push(0);
    message_bytes(b'E', &body)
}

/// A message of type `tag` with `body`.
pub fn message_bytes(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(5 + body.len());
    m.extend_from_slice(
        &Header {
            tag,
            len: body.len(),
        }
        .bytes(),
    );
    m.extend_from_slice(body);
    m
}

/// A `Query` message with `text`.
pub fn query_message(text: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(text.len() + 1);
    body.extend_from_slice(text.as_bytes());
    body.push(0);
    message_bytes(b'Q', &body)
}

/// A `Parse` message: statement `name`, `text`, no parameter types.
pub fn parse_message_bytes(name: &[u8], text: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(name.len() + text.len() + 4);
    body.extend_from_slice(name);
    body.push(0);
    body.extend_from_slice(text.as_bytes());
    body.push(0);
    body.extend_from_slice(&0i16.to_be_bytes());
    message_bytes(b'P', &body)
}

/// Writes `bytes` and flushes.
pub async fn send<W: AsyncWrite + Unpin>(w: &mut W, bytes: &[u8]) -> std::io::Result<()> {
    w.write_all(bytes).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parse_body_is_read_exactly() {
        let mut b = b"s1\0SELECT $1\0".to_vec();
        b.extend_from_slice(&1i16.to_be_bytes());
        b.extend_from_slice(&23i32.to_be_bytes());
        let p = parse_message(&b).unwrap();
        assert_eq!((p.name, p.text), (&b"s1"[..], &b"SELECT $1"[..]));
        // A parameter count that does not fit, a negative one, a trailing byte.
        let mut short = b"\0SELECT 1\0".to_vec();
        short.extend_from_slice(&2i16.to_be_bytes());
        assert!(parse_message(&short).is_err());
        let mut neg = b"\0SELECT 1\0".to_vec();
        neg.extend_from_slice(&(-1i16).to_be_bytes());
        assert!(parse_message(&neg).is_err());
        let mut extra = b"\0SELECT 1\0".to_vec();
        extra.extend_from_slice(&0i16.to_be_bytes());
        extra.push(0);
        assert!(parse_message(&extra).is_err());
        assert!(parse_message(b"no nul").is_err());
    }

    #[test]
    fn a_query_is_one_string_and_nothing_after() {
        assert_eq!(query_text(b"SELECT 1\0").unwrap(), b"SELECT 1");
        assert!(query_text(b"SELECT 1\0; DROP TABLE t\0").is_err());
        assert!(query_text(b"SELECT 1").is_err());
    }

    #[test]
    fn an_error_response_round_trips_through_its_fields() {
        let m = error_response(Severity::Error, "42501", "no\0pe", Some("d"), None);
        assert_eq!(m[0], b'E');
        let len = i32::from_be_bytes([m[1], m[2], m[3], m[4]]) as usize;
        assert_eq!(len + 1, m.len());
        let f = error_fields(&m[5..]);
        assert!(f.contains(&(b'C', &b"42501"[..])));
        assert!(f.contains(&(b'M', &b"nope"[..])));
        assert!(f.contains(&(b'D', &b"d"[..])));
    }

    #[tokio::test]
    async fn startup_lengths_are_checked_before_reading() {
        for len in [-1i32, 0, 7, 10_001, i32::MAX] {
            let bytes = len.to_be_bytes();
            let r = read_startup(&mut &bytes[..]).await;
            assert!(matches!(r, Err(ReadError::Violation(_))), "{len}: {r:?}");
        }
        let mut ssl = 8i32.to_be_bytes().to_vec();
        ssl.extend_from_slice(&SSL_REQUEST.to_be_bytes());
        assert_eq!(
            read_startup(&mut &ssl[..]).await.unwrap(),
            Some(Startup::Ssl)
        );
        let mut start = Vec::new();
        let body = b"user\0u\0database\0d\0\0";
        start.extend_from_slice(&(8 + body.len() as i32).to_be_bytes());
        start.extend_from_slice(&(3i32 << 16).to_be_bytes());
        start.extend_from_slice(body);
        let s = read_startup(&mut &start[..]).await.unwrap().unwrap();
        assert_eq!(
            (s.param("user"), s.param("database")),
            (Some("u"), Some("d"))
        );
        // The list must end with the message.
        let mut bad = start.clone();
        let n = bad.len();
        bad[n - 1] = b'x';
        assert!(read_startup(&mut &bad[..]).await.is_err());
        assert_eq!(read_startup(&mut &b""[..]).await.unwrap(), None);
    }

    #[tokio::test]
    async fn message_lengths_below_the_header_are_violations() {
        for len in [-5i32, 0, 3] {
            let mut m = vec![b'Q'];
            m.extend_from_slice(&len.to_be_bytes());
            assert!(matches!(
                read_header(&mut &m[..]).await,
                Err(ReadError::Violation(_))
            ));
        }
        let m = [b'S', 0, 0, 0, 4];
        assert_eq!(
            read_header(&mut &m[..]).await.unwrap(),
            Some(Header { tag: b'S', len: 0 })
        );
        // Cut short inside the header: an error, not a clean end.
        assert!(matches!(
            read_header(&mut &m[..3]).await,
            Err(ReadError::Io(_))
        ));
    }
}
