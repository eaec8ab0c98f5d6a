//! The SOCKS5 front of the proxy's listener (RFC 1928), for TCP that is
//! not HTTP: ssh to a git host, a database client, any service port.
//!
//! No authentication (the listener is the session's own); CONNECT only.
//! A CONNECT is the same action as HTTP's `CONNECT host:port`
//! ([`Proxy::open_connect`]): decided by host and port under the
//! policy's `http.*` rules, inspected when the host is, refused when it
//! is Aileron's own address, and audited alike. Whatever does not parse
//! closes the connection; a client that has not finished its request
//! within [`HANDSHAKE_TIMEOUT`] too.

use crate::lower::{self, Target};
use crate::proxy::{NotOpened, Opened, Proxy};
use http::{HeaderMap, Method};
use std::io::ErrorKind;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// The first byte of every SOCKS5 message (no HTTP request begins with it).
pub const VERSION: u8 = 0x05;
/// The one authentication method offered: none.
const NO_AUTH: u8 = 0x00;
/// The method answer when the client offers no method the proxy takes.
const NO_ACCEPTABLE: u8 = 0xFF;
/// The only command served.
const CONNECT: u8 = 0x01;
/// What the reserved byte of a request and a reply holds.
const RESERVED: u8 = 0x00;
/// Address types.
const ATYP_IPV4: u8 = 0x01;
const ATYP_DOMAIN: u8 = 0x03;
const ATYP_IPV6: u8 = 0x04;

/// Reply codes (RFC 1928, section 6).
const SUCCEEDED: u8 = 0x00;
const GENERAL_FAILURE: u8 = 0x01;
const NOT_ALLOWED: u8 = 0x02;
const NETWORK_UNREACHABLE: u8 = 0x03;
const HOST_UNREACHABLE: u8 = 0x04;
const CONNECTION_REFUSED: u8 = 0x05;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;
const ADDRESS_TYPE_NOT_SUPPORTED: u8 = 0x08;

/// The reply to a connection that failed, by its error's kind; any other
/// kind is [`HOST_UNREACHABLE`]. An address refused as Aileron's own is
/// `PermissionDenied`: not allowed, as a rule would say.
const UNREACHABLE: [(ErrorKind, u8); 3] = [
    (ErrorKind::ConnectionRefused, CONNECTION_REFUSED),
    (ErrorKind::NetworkUnreachable, NETWORK_UNREACHABLE),
    (ErrorKind::PermissionDenied, NOT_ALLOWED),
];

/// How long a client has to send its greeting and request.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How far a message has arrived: `Need(n)`, the message is at least `n`
/// bytes long (more than are there); `Done`, it is whole.
#[derive(Debug, PartialEq)]
pub enum Parsed<T> {
    Need(usize),
    Done(T),
}

/// A message that is not SOCKS5 as RFC 1928 writes it.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum Malformed {
    #[error("version {0}, not SOCKS5")]
    Version(u8),
    #[error("a greeting that offers no authentication method")]
    NoMethods,
    #[error("the client ended in the middle of a message")]
    Truncated,
    #[error("reserved byte {0:#04x}, not 0")]
    Reserved(u8),
    #[error("address type {0:#04x}")]
    AddressType(u8),
    #[error("an empty domain name")]
    EmptyDomain,
    #[error("a domain name that is not UTF-8")]
    DomainNotText,
}

/// The client's greeting: the authentication methods it offers.
#[derive(Debug, PartialEq)]
pub struct Greeting {
    pub methods: Vec<u8>,
}

/// Where a request asks to connect.
#[derive(Debug, PartialEq)]
pub enum Host {
    Ip(IpAddr),
    Domain(String),
}

/// The client's request.
#[derive(Debug, PartialEq)]
pub struct Request {
    pub command: u8,
    pub host: Host,
    pub port: u16,
}

/// `VER NMETHODS METHODS...`.
pub fn parse_greeting(buf: &[u8]) -> Result<Parsed<Greeting>, Malformed> {
    check_version(buf)?;
    let Some(&n) = buf.get(1) else {
        return Ok(Parsed::Need(2));
    };
    if n == 0 {
        return Err(Malformed::NoMethods);
    }
    let end = 2 + usize::from(n);
    Ok(match buf.get(2..end) {
        Some(methods) => Parsed::Done(Greeting {
            methods: methods.to_vec(),
        }),
        None => Parsed::Need(end),
    })
}

/// `VER CMD RSV ATYP DST.ADDR DST.PORT`; the command is not checked here
/// (one not served is answered, not dropped).
pub fn parse_request(buf: &[u8]) -> Result<Parsed<Request>, Malformed> {
    check_version(buf)?;
    let [_, command, reserved, atyp, ..] = *buf else {
        return Ok(Parsed::Need(4));
    };
    if reserved != RESERVED {
        return Err(Malformed::Reserved(reserved));
    }
    let (start, len) = match atyp {
        ATYP_IPV4 => (4, 4),
        ATYP_IPV6 => (4, 16),
        ATYP_DOMAIN => match buf.get(4) {
            None => return Ok(Parsed::Need(5)),
            Some(0) => return Err(Malformed::EmptyDomain),
            Some(&n) => (5, usize::from(n)),
        },
        other => return Err(Malformed::AddressType(other)),
    };
    let end = start + len + 2;
    let Some(rest) = buf.get(start..end) else {
        return Ok(Parsed::Need(end));
    };
    let (addr, port) = rest.split_at(len);
    Ok(Parsed::Done(Request {
        command,
        host: host(atyp, addr)?,
        port: u16::from_be_bytes([port[0], port[1]]),
    }))
}

fn check_version(buf: &[u8]) -> Result<(), Malformed> {
    match buf.first() {
        Some(&v) if v != VERSION => Err(Malformed::Version(v)),
        _ => Ok(()),
    }
}

/// The address of type `atyp` (whose length the caller checked).
fn host(atyp: u8, addr: &[u8]) -> Result<Host, Malformed> {
    Ok(match atyp {
        ATYP_IPV4 => Host::Ip(IpAddr::V4(Ipv4Addr::from(
            <[u8; 4]>::try_from(addr).map_err(|_| Malformed::Truncated)?,
        ))),
        ATYP_IPV6 => Host::Ip(IpAddr::V6(Ipv6Addr::from(
            <[u8; 16]>::try_from(addr).map_err(|_| Malformed::Truncated)?,
        ))),
        _ => {
            let name = std::str::from_utf8(addr).map_err(|_| Malformed::DomainNotText)?;
            // A client may send an address as text (curl's --socks5-hostname).
            match name.parse() {
                Ok(ip) => Host::Ip(ip),
                Err(_) => Host::Domain(name.to_owned()),
            }
        }
    })
}

/// The target a request names, parsed as HTTP's CONNECT parses
/// `host:port` (the same canonical host, the same refusals).
pub fn target_of(request: &Request) -> Result<Target, lower::BadTarget> {
    let authority = match &request.host {
        Host::Ip(IpAddr::V6(ip)) => format!("[{ip}]:{}", request.port),
        Host::Ip(ip) => format!("{ip}:{}", request.port),
        Host::Domain(name) => format!("{name}:{}", request.port),
    };
    lower::parse_target(&Method::CONNECT, &authority)
}

/// `VER REP RSV ATYP BND.ADDR BND.PORT`; `0.0.0.0:0` when nothing is bound.
pub fn reply(code: u8, bound: Option<SocketAddr>) -> Vec<u8> {
    let bound = bound.unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)));
    let mut out = vec![VERSION, code, RESERVED];
    match bound.ip() {
        IpAddr::V4(ip) => {
            out.push(ATYP_IPV4);
            out.extend_from_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            out.push(ATYP_IPV6);
            out.extend_from_slice(&ip.octets());
        }
    }
    out.extend_from_slice(&bound.port().to_be_bytes());
    out
}

/// Why a handshake ended without a CONNECT to carry out.
#[derive(Debug, PartialEq)]
pub enum Ended {
    Malformed(Malformed),
    /// Answered with this reply (or method) code, then closed.
    Refused(u8),
    /// The answer could not be written.
    Gone,
}

impl From<Malformed> for Ended {
    fn from(m: Malformed) -> Ended {
        Ended::Malformed(m)
    }
}

/// Reads one message with `parse`, asking the stream for exactly the
/// bytes it still needs: nothing past the message is read.
async fn read_message<S, T>(
    stream: &mut S,
    parse: fn(&[u8]) -> Result<Parsed<T>, Malformed>,
) -> Result<T, Malformed>
where
    S: AsyncRead + Unpin,
{
    let mut buf = Vec::with_capacity(8);
    loop {
        match parse(&buf)? {
            Parsed::Done(message) => return Ok(message),
            Parsed::Need(n) => {
                let have = buf.len();
                buf.resize(n.max(have + 1), 0);
                stream
                    .read_exact(&mut buf[have..])
                    .await
                    .map_err(|_| Malformed::Truncated)?;
            }
        }
    }
}

/// Answers the greeting (no authentication, or nothing acceptable) and
/// reads the request; a command other than CONNECT, or an address type
/// not known, is answered and ends it.
pub async fn handshake<S>(stream: &mut S) -> Result<Request, Ended>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let greeting = read_message(stream, parse_greeting).await?;
    if !greeting.methods.contains(&NO_AUTH) {
        return Err(answer(stream, &[VERSION, NO_ACCEPTABLE], NO_ACCEPTABLE).await);
    }
    send(stream, &[VERSION, NO_AUTH]).await?;
    let request = match read_message(stream, parse_request).await {
        Err(Malformed::AddressType(_)) => {
            let code = ADDRESS_TYPE_NOT_SUPPORTED;
            return Err(answer(stream, &reply(code, None), code).await);
        }
        other => other?,
    };
    if request.command != CONNECT {
        let code = COMMAND_NOT_SUPPORTED;
        return Err(answer(stream, &reply(code, None), code).await);
    }
    Ok(request)
}

async fn send<S: AsyncWrite + Unpin>(stream: &mut S, bytes: &[u8]) -> Result<(), Ended> {
    stream.write_all(bytes).await.map_err(|_| Ended::Gone)
}

/// Sends a refusal; what ends the handshake.
async fn answer<S: AsyncWrite + Unpin>(stream: &mut S, bytes: &[u8], code: u8) -> Ended {
    match send(stream, bytes).await {
        Ok(()) => Ended::Refused(code),
        Err(gone) => gone,
    }
}

/// The reply to a CONNECT that was not opened.
fn failure(e: &NotOpened) -> u8 {
    match e {
        NotOpened::Denied(_) => NOT_ALLOWED,
        NotOpened::Tls(_) => GENERAL_FAILURE,
        NotOpened::Unreachable(e) => UNREACHABLE
            .iter()
            .find(|(kind, _)| *kind == e.kind())
            .map_or(HOST_UNREACHABLE, |(_, code)| *code),
    }
}

/// One SOCKS5 client: handshake, decision, then the tunnel (spliced, or
/// its TLS opened when the host is inspected).
pub async fn serve(proxy: Arc<Proxy>, mut stream: TcpStream) {
    let shaken = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(&mut stream)).await;
    let Ok(Ok(request)) = shaken else {
        return;
    };
    let target = match target_of(&request) {
        Ok(t) => Arc::new(t),
        Err(_) => {
            let _ = stream.write_all(&reply(GENERAL_FAILURE, None)).await;
            return;
        }
    };
    let opened = match proxy.open_connect(&target, &HeaderMap::new()).await {
        Ok(o) => o,
        Err(e) => {
            let _ = stream.write_all(&reply(failure(&e), None)).await;
            return;
        }
    };
    let bound = match &opened {
        Opened::Tunnel(upstream) => upstream.local_addr().ok(),
        Opened::Inspect(_) => None,
    };
    if stream.write_all(&reply(SUCCEEDED, bound)).await.is_ok() {
        proxy.tunnel(stream, target, opened).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done<T>(p: Result<Parsed<T>, Malformed>) -> T {
        match p {
            Ok(Parsed::Done(t)) => t,
            Ok(Parsed::Need(n)) => panic!("incomplete: needs {n} bytes"),
            Err(e) => panic!("malformed: {e}"),
        }
    }

    #[test]
    fn a_greeting_lists_its_methods() {
        let g = done(parse_greeting(&[5, 2, 0, 2]));
        assert_eq!(g.methods, [0, 2]);
    }

    #[test]
    fn a_greeting_in_pieces_says_how_much_it_needs() {
        assert_eq!(parse_greeting(&[]), Ok(Parsed::Need(2)));
        assert_eq!(parse_greeting(&[5]), Ok(Parsed::Need(2)));
        assert_eq!(parse_greeting(&[5, 3, 0]), Ok(Parsed::Need(5)));
    }

    #[test]
    fn a_greeting_of_another_version_or_without_methods_is_malformed() {
        assert_eq!(parse_greeting(&[4, 1, 0]), Err(Malformed::Version(4)));
        assert_eq!(parse_greeting(b"G"), Err(Malformed::Version(b'G')));
        assert_eq!(parse_greeting(&[5, 0]), Err(Malformed::NoMethods));
    }

    #[test]
    fn requests_of_each_address_type() {
        let v4 = done(parse_request(&[5, 1, 0, 1, 10, 0, 0, 7, 0x1f, 0x90]));
        assert_eq!(v4.command, CONNECT);
        assert_eq!(v4.host, Host::Ip(IpAddr::from([10, 0, 0, 7])));
        assert_eq!(v4.port, 8080);
        let mut v6 = vec![5, 1, 0, 4];
        v6.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        v6.extend_from_slice(&[0, 22]);
        let v6 = done(parse_request(&v6));
        assert_eq!(v6.host, Host::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)));
        assert_eq!(v6.port, 22);
        let mut name = vec![5, 1, 0, 3, 10];
        name.extend_from_slice(b"github.com");
        name.extend_from_slice(&[0, 22]);
        let name = done(parse_request(&name));
        assert_eq!(name.host, Host::Domain("github.com".into()));
    }

    #[test]
    fn an_address_sent_as_a_name_is_an_address() {
        let mut r = vec![5, 1, 0, 3, 9];
        r.extend_from_slice(b"127.0.0.1");
        r.extend_from_slice(&[0, 80]);
        assert_eq!(
            done(parse_request(&r)).host,
            Host::Ip(IpAddr::from([127, 0, 0, 1]))
        );
    }

    #[test]
    fn a_request_in_pieces_says_how_much_it_needs() {
        assert_eq!(parse_request(&[5, 1]), Ok(Parsed::Need(4)));
        assert_eq!(parse_request(&[5, 1, 0, 3]), Ok(Parsed::Need(5)));
        assert_eq!(parse_request(&[5, 1, 0, 3, 4, b'a']), Ok(Parsed::Need(11)));
        assert_eq!(
            parse_request(&[5, 1, 0, 1, 1, 2, 3, 4]),
            Ok(Parsed::Need(10))
        );
        assert_eq!(parse_request(&[5, 1, 0, 4]), Ok(Parsed::Need(22)));
    }

    #[test]
    fn malformed_requests_are_named() {
        assert_eq!(
            parse_request(&[4, 1, 0, 1, 1, 2, 3, 4, 0, 80]),
            Err(Malformed::Version(4))
        );
        assert_eq!(parse_request(&[5, 1, 9, 1]), Err(Malformed::Reserved(9)));
        assert_eq!(parse_request(&[5, 1, 0, 3, 0]), Err(Malformed::EmptyDomain));
        assert_eq!(parse_request(&[5, 1, 0, 2]), Err(Malformed::AddressType(2)));
        assert_eq!(
            parse_request(&[5, 1, 0, 3, 2, 0xff, 0xfe, 0, 80]),
            Err(Malformed::DomainNotText)
        );
    }

    #[test]
    fn a_target_is_parsed_as_http_connect_parses_it() {
        let name = |n: &str| Request {
            command: CONNECT,
            host: Host::Domain(n.into()),
            port: 22,
        };
        let t = target_of(&name("GitHub.com")).expect("a host name");
        assert_eq!((t.host.as_str(), t.port), ("github.com", 22));
        let v6 = Request {
            command: CONNECT,
            host: Host::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)),
            port: 5432,
        };
        assert_eq!(target_of(&v6).expect("v6").host, "::1");
        // A name that smuggles a port, a path or a user is refused.
        for bad in ["a.example:443", "a.example/x", "u@a.example", "a b"] {
            assert!(target_of(&name(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn replies_carry_the_bound_address() {
        assert_eq!(reply(NOT_ALLOWED, None), [5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
        let v4 = reply(SUCCEEDED, Some(SocketAddr::from(([127, 0, 0, 1], 4242))));
        assert_eq!(v4, [5, 0, 0, 1, 127, 0, 0, 1, 0x10, 0x92]);
        let v6 = reply(SUCCEEDED, Some(SocketAddr::from((Ipv6Addr::LOCALHOST, 1))));
        assert_eq!(v6.len(), 22);
        assert_eq!(v6[3], ATYP_IPV6);
    }

    /// The handshake against a client that sends `sent` and then closes:
    /// its outcome and what the proxy wrote back.
    async fn shake(sent: &[u8]) -> (Result<Request, Ended>, Vec<u8>) {
        let (mut client, mut server) = tokio::io::duplex(1024);
        client.write_all(sent).await.expect("write");
        client.shutdown().await.expect("shutdown");
        let outcome = handshake(&mut server).await;
        drop(server);
        let mut back = Vec::new();
        client.read_to_end(&mut back).await.expect("read");
        (outcome, back)
    }

    #[tokio::test]
    async fn a_connect_after_no_authentication_is_read_whole() {
        let (outcome, back) = shake(&[5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80]).await;
        assert_eq!(back, [5, 0]);
        let r = outcome.expect("a CONNECT");
        assert_eq!(
            (r.host, r.port),
            (Host::Ip(IpAddr::from([127, 0, 0, 1])), 80)
        );
    }

    #[tokio::test]
    async fn a_client_offering_only_passwords_is_told_none_is_acceptable() {
        let (outcome, back) = shake(&[5, 1, 2]).await;
        assert_eq!(outcome.unwrap_err(), Ended::Refused(NO_ACCEPTABLE));
        assert_eq!(back, [5, 0xff]);
    }

    #[tokio::test]
    async fn bind_and_udp_associate_are_not_supported() {
        for command in [0x02, 0x03] {
            let (outcome, back) = shake(&[5, 1, 0, 5, command, 0, 1, 1, 2, 3, 4, 0, 80]).await;
            assert_eq!(outcome.unwrap_err(), Ended::Refused(COMMAND_NOT_SUPPORTED));
            assert_eq!(back[..2], [5, 0]);
            assert_eq!(back[2..], reply(COMMAND_NOT_SUPPORTED, None));
        }
    }

    #[tokio::test]
    async fn an_unknown_address_type_is_answered_as_such() {
        let (outcome, back) = shake(&[5, 1, 0, 5, 1, 0, 9]).await;
        assert_eq!(
            outcome.unwrap_err(),
            Ended::Refused(ADDRESS_TYPE_NOT_SUPPORTED)
        );
        assert_eq!(back[2..], reply(ADDRESS_TYPE_NOT_SUPPORTED, None));
    }

    #[tokio::test]
    async fn a_client_that_stops_midway_is_truncated() {
        let (outcome, back) = shake(&[5, 2, 0]).await;
        assert_eq!(outcome.unwrap_err(), Ended::Malformed(Malformed::Truncated));
        assert!(back.is_empty(), "{back:?}");
        let (outcome, _) = shake(&[5, 1, 0, 5, 1, 0, 3, 20, b'a']).await;
        assert_eq!(outcome.unwrap_err(), Ended::Malformed(Malformed::Truncated));
    }

    #[tokio::test]
    async fn nothing_past_the_request_is_read() {
        let (mut client, mut server) = tokio::io::duplex(1024);
        client
            .write_all(&[5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80, b'S', b'S', b'H'])
            .await
            .expect("write");
        handshake(&mut server).await.expect("a CONNECT");
        let mut rest = [0u8; 3];
        server.read_exact(&mut rest).await.expect("the early bytes");
        assert_eq!(&rest, b"SSH");
    }
}
