//! The box's DNS: the proxy answers the names a program of the box looks
//! up (`getaddrinfo`, `dig`, Node's `dns`), over UDP and TCP (RFC 1035,
//! RFC 7766), on the sockets `aileron launch` makes at `127.0.0.1:53` in
//! the box's network namespace.
//!
//! A positive list: a standard query (opcode 0) with one question, class
//! IN, type A or AAAA, at most one EDNS OPT record (RFC 6891), and a name
//! of letters, digits and hyphens. What is not a query is dropped (a
//! response, less than a header); a malformed query is `FORMERR`, another
//! opcode `NOTIMP`, another class or type `REFUSED` (only address lookups
//! leave the box), an EDNS version other than 0 `BADVERS`.
//!
//! A name is decided before anything is resolved, as the proxy decides
//! `CONNECT name:443` (the same action, with a `dns` facet and the summary
//! `DNS A name`), by the session: a name the policy does not allow is
//! `REFUSED` and never reaches the host's resolver, whose own queries
//! would carry it out. A lookup never waits for a human: an `ask` is
//! answered at once as not allowed (the connection itself, made through
//! the proxy, is where a human is asked), and a decision that takes longer
//! than [`DECISION_WAIT`] (a judge) is `SERVFAIL`, which resolvers retry.
//! An allowed name is answered with the host's own resolution (its
//! `getaddrinfo`), each record [`TTL`] seconds.

use crate::lower::{self, Lowering, Target};
use crate::proxy::Proxy;
use aileron_engine::Action;
use http::{HeaderMap, Method};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::sync::Semaphore;

/// How long an answer may be kept: short, so that a policy changed
/// during the session applies to the next lookup.
pub const TTL: u32 = 30;
/// The longest a lookup waits for its decision: below the C library's
/// 5 s per try, so that the resolver gets `SERVFAIL` and tries again
/// rather than giving up.
pub const DECISION_WAIT: Duration = Duration::from_secs(3);
/// The longest a prompt for a lookup could wait (a policy that sends
/// asks to the dashboard, which the session cannot hand back).
const PROMPT_BUDGET_SECS: u64 = 2;
/// Lookups answered at once, and decisions under way at once; past that,
/// queries wait in the socket.
pub const CONCURRENT: usize = 64;
/// How long a TCP client may stay silent between queries.
const TCP_IDLE: Duration = Duration::from_secs(10);
/// The largest UDP answer without EDNS (RFC 1035), and the largest this
/// responder sends with it (the DNS flag day's 1232).
const UDP_PLAIN: usize = 512;
const UDP_EDNS: u16 = 1232;

const HEADER: usize = 12;
const QR: u16 = 1 << 15;
const TC: u16 = 1 << 9;
const RD: u16 = 1 << 8;
const RA: u16 = 1 << 7;
const CD: u16 = 1 << 4;
const OPCODE_QUERY: u16 = 0;
const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;
const TYPE_OPT: u16 = 41;
const CLASS_IN: u16 = 1;
/// A compression pointer to the question's name (right after the header).
const NAME_POINTER: [u8; 2] = [0xC0, HEADER as u8];
/// Extended DNS Errors (RFC 8914): the option, and its info codes.
const OPT_EDE: u16 = 15;
const EDE_BLOCKED: u16 = 15;
const EDE_NOT_SUPPORTED: u16 = 21;

/// Response codes (RFC 1035 4.1.1; `BadVers` is RFC 6891's extended 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rcode {
    NoError,
    FormErr,
    ServFail,
    NxDomain,
    NotImp,
    Refused,
    BadVers,
}

impl Rcode {
    fn value(self) -> u16 {
        match self {
            Rcode::NoError => 0,
            Rcode::FormErr => 1,
            Rcode::ServFail => 2,
            Rcode::NxDomain => 3,
            Rcode::NotImp => 4,
            Rcode::Refused => 5,
            Rcode::BadVers => 16,
        }
    }
}

/// The record types looked up, by their number.
const RECORDS: &[(u16, &str)] = &[(TYPE_A, "A"), (TYPE_AAAA, "AAAA")];

/// A query's EDNS record: what the client takes over UDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edns {
    pub udp_size: u16,
    pub version: u8,
}

/// A query that parsed: a standard query with one question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub id: u16,
    flags: u16,
    /// The question as sent, echoed as it is (resolvers vary the case of
    /// its letters and compare).
    question: Vec<u8>,
    /// The name in lower case, labels joined by dots, no final dot; None
    /// when a label holds anything but letters, digits and hyphens.
    pub name: Option<String>,
    pub qtype: u16,
    pub qclass: u16,
    pub edns: Option<Edns>,
}

/// A message that gets no address lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unanswered {
    /// Not answered at all: shorter than a header, or a response.
    Dropped,
    /// Answered with `rcode` alone, the header's id and flags echoed.
    Error { id: u16, flags: u16, rcode: Rcode },
}

/// Reads `msg` as a query, strictly.
pub fn parse(msg: &[u8]) -> Result<Query, Unanswered> {
    let Some(header) = msg.get(..HEADER) else {
        return Err(Unanswered::Dropped);
    };
    let word = |i: usize| u16::from_be_bytes([header[i], header[i + 1]]);
    let (id, flags) = (word(0), word(2));
    if flags & QR != 0 {
        return Err(Unanswered::Dropped);
    }
    let error = |rcode| Unanswered::Error { id, flags, rcode };
    if (flags >> 11) & 0xF != OPCODE_QUERY {
        return Err(error(Rcode::NotImp));
    }
    let (qd, an, ns, ar) = (word(4), word(6), word(8), word(10));
    if qd != 1 || an != 0 || ns != 0 || ar > 1 {
        return Err(error(Rcode::FormErr));
    }
    let mut r = Reader { msg, at: HEADER };
    let start = r.at;
    let name = r.name().ok_or(error(Rcode::FormErr))?;
    let (qtype, qclass) = (
        r.u16().ok_or(error(Rcode::FormErr))?,
        r.u16().ok_or(error(Rcode::FormErr))?,
    );
    let question = msg[start..r.at].to_vec();
    let edns = if ar == 1 {
        Some(r.opt().ok_or(error(Rcode::FormErr))?)
    } else {
        None
    };
    if r.at != msg.len() {
        return Err(error(Rcode::FormErr));
    }
    Ok(Query {
        id,
        flags,
        question,
        name,
        qtype,
        qclass,
        edns,
    })
}

/// A cursor over a message; None past its end or at what is not allowed.
struct Reader<'a> {
    msg: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let bytes = self.msg.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(bytes)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    /// A name of plain labels (no compression: a query has nothing to
    /// point to), at most 255 bytes on the wire. Its text, or None
    /// inside when a label is not a host name's.
    fn name(&mut self) -> Option<Option<String>> {
        let start = self.at;
        let mut labels = Vec::new();
        let mut host = true;
        loop {
            let len = usize::from(*self.take(1)?.first()?);
            if len == 0 {
                break;
            }
            if len > 63 {
                return None;
            }
            let label = self.take(len)?;
            host &= label
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'-');
            labels.push(label.to_ascii_lowercase());
        }
        if self.at - start > 255 {
            return None;
        }
        let text = labels
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect::<Vec<_>>()
            .join(".");
        Some((host && !labels.is_empty()).then_some(text))
    }

    /// An OPT record (RFC 6891): the root name, type 41, its options
    /// whole (read past, not interpreted).
    fn opt(&mut self) -> Option<Edns> {
        if self.take(1)? != [0] || self.u16()? != TYPE_OPT {
            return None;
        }
        let udp_size = self.u16()?;
        let ttl = self.take(4)?;
        let version = ttl[1];
        let len = usize::from(self.u16()?);
        let mut options = Reader {
            msg: self.take(len)?,
            at: 0,
        };
        while options.at < options.msg.len() {
            options.u16()?;
            let n = usize::from(options.u16()?);
            options.take(n)?;
        }
        Some(Edns { udp_size, version })
    }
}

/// What a query is answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The name's addresses of the type asked (none: the name has only
    /// the other type's).
    Addresses(Vec<IpAddr>),
    /// The host's resolver knows no such name.
    NoName,
    /// Not resolved, and why (in the Extended DNS Error's text).
    Refused(String),
    /// Not answered now: the decision or the host's resolver failed.
    Failed(String),
}

/// The reply to `q`, at most `limit` bytes (a longer one is sent without
/// its records and with TC set: the client asks again over TCP).
pub fn reply(q: &Query, answer: &Answer, limit: usize) -> Vec<u8> {
    let full = build(q, answer, true);
    if full.len() <= limit {
        return full;
    }
    build(q, answer, false)
}

fn build(q: &Query, answer: &Answer, records: bool) -> Vec<u8> {
    let bad_version = q.edns.is_some_and(|e| e.version != 0);
    let (rcode, ede) = if bad_version {
        (Rcode::BadVers, None)
    } else {
        match answer {
            Answer::Addresses(_) => (Rcode::NoError, None),
            Answer::NoName => (Rcode::NxDomain, None),
            Answer::Refused(why) if is_address_query(q) => {
                (Rcode::Refused, Some((EDE_BLOCKED, why)))
            }
            Answer::Refused(why) => (Rcode::Refused, Some((EDE_NOT_SUPPORTED, why))),
            Answer::Failed(_) => (Rcode::ServFail, None),
        }
    };
    let addresses = match answer {
        Answer::Addresses(a) if records && !bad_version => a.as_slice(),
        _ => &[],
    };
    let mut flags = QR | RA | (q.flags & (0xF << 11 | RD | CD)) | (rcode.value() & 0xF);
    if !records {
        flags |= TC;
    }
    let mut out = Vec::with_capacity(512);
    for word in [q.id, flags, 1, addresses.len() as u16, 0] {
        out.extend_from_slice(&word.to_be_bytes());
    }
    out.extend_from_slice(&u16::from(q.edns.is_some()).to_be_bytes());
    out.extend_from_slice(&q.question);
    for ip in addresses {
        let (kind, data) = match ip {
            IpAddr::V4(a) => (TYPE_A, a.octets().to_vec()),
            IpAddr::V6(a) => (TYPE_AAAA, a.octets().to_vec()),
        };
        out.extend_from_slice(&NAME_POINTER);
        for word in [kind, CLASS_IN] {
            out.extend_from_slice(&word.to_be_bytes());
        }
        out.extend_from_slice(&TTL.to_be_bytes());
        out.extend_from_slice(&(data.len() as u16).to_be_bytes());
        out.extend_from_slice(&data);
    }
    if q.edns.is_some() {
        opt(&mut out, rcode, ede);
    }
    out
}

/// The reply's OPT record: this responder's UDP size, the extended rcode,
/// and an Extended DNS Error saying why, when there is one.
fn opt(out: &mut Vec<u8>, rcode: Rcode, ede: Option<(u16, &String)>) {
    let mut options = Vec::new();
    if let Some((code, why)) = ede {
        // Short enough for any answer: one line.
        let text: String = why.chars().take(200).collect();
        options.extend_from_slice(&OPT_EDE.to_be_bytes());
        options.extend_from_slice(&((2 + text.len()) as u16).to_be_bytes());
        options.extend_from_slice(&code.to_be_bytes());
        options.extend_from_slice(text.as_bytes());
    }
    out.push(0);
    out.extend_from_slice(&TYPE_OPT.to_be_bytes());
    out.extend_from_slice(&UDP_EDNS.to_be_bytes());
    out.push((rcode.value() >> 4) as u8);
    out.extend_from_slice(&[0, 0, 0]);
    out.extend_from_slice(&(options.len() as u16).to_be_bytes());
    out.extend_from_slice(&options);
}

/// An error answer to what did not parse (no question echoed).
pub fn error_reply(id: u16, flags: u16, rcode: Rcode) -> Vec<u8> {
    let flags = QR | RA | (flags & (0xF << 11 | RD | CD)) | (rcode.value() & 0xF);
    let mut out = Vec::with_capacity(HEADER);
    for word in [id, flags, 0, 0, 0, 0] {
        out.extend_from_slice(&word.to_be_bytes());
    }
    out
}

/// Whether `q` is one the responder looks up: class IN, type A or AAAA.
fn is_address_query(q: &Query) -> bool {
    q.qclass == CLASS_IN && record_name(q.qtype).is_some()
}

fn record_name(qtype: u16) -> Option<&'static str> {
    RECORDS.iter().find(|(t, _)| *t == qtype).map(|(_, n)| *n)
}

/// The largest reply a UDP client of `q` takes.
fn udp_limit(q: &Query) -> usize {
    match q.edns {
        Some(e) => usize::from(e.udp_size.clamp(UDP_PLAIN as u16, UDP_EDNS)),
        None => UDP_PLAIN,
    }
}

/// Where a query arrived, which bounds its reply.
#[derive(Clone, Copy)]
enum Transport {
    Udp,
    Tcp,
}

impl Proxy {
    /// Answers the queries that arrive on `socket` until the process ends.
    pub async fn serve_dns_udp(self: Arc<Self>, socket: UdpSocket) {
        let socket = Arc::new(socket);
        let slots = Arc::new(Semaphore::new(CONCURRENT));
        let mut buf = vec![0u8; 65_535];
        loop {
            let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
                return;
            };
            let (n, from) = match socket.recv_from(&mut buf).await {
                Ok(got) => got,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let (proxy, socket, msg) = (Arc::clone(&self), Arc::clone(&socket), buf[..n].to_vec());
            tokio::spawn(async move {
                if let Some(out) = proxy.respond(&msg, Transport::Udp).await {
                    let _ = socket.send_to(&out, from).await;
                }
                drop(permit);
            });
        }
    }

    /// Answers DNS over TCP (RFC 7766) on `listener` until the process ends.
    pub async fn serve_dns_tcp(self: Arc<Self>, listener: TcpListener) {
        let slots = Arc::new(Semaphore::new(CONCURRENT));
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            };
            let (proxy, slots) = (Arc::clone(&self), Arc::clone(&slots));
            tokio::spawn(async move { proxy.dns_connection(stream, &slots).await });
        }
    }

    /// One TCP client: length-prefixed queries answered in turn, until it
    /// closes, stays silent for [`TCP_IDLE`] or sends what gets no answer.
    async fn dns_connection(self: &Arc<Self>, mut stream: TcpStream, slots: &Semaphore) {
        loop {
            let mut len = [0u8; 2];
            let read = tokio::time::timeout(TCP_IDLE, stream.read_exact(&mut len)).await;
            if !matches!(read, Ok(Ok(_))) {
                return;
            }
            let mut msg = vec![0u8; usize::from(u16::from_be_bytes(len))];
            let read = tokio::time::timeout(TCP_IDLE, stream.read_exact(&mut msg)).await;
            if !matches!(read, Ok(Ok(_))) {
                return;
            }
            let Ok(_permit) = slots.acquire().await else {
                return;
            };
            let Some(out) = self.respond(&msg, Transport::Tcp).await else {
                return;
            };
            let mut framed = (out.len() as u16).to_be_bytes().to_vec();
            framed.extend_from_slice(&out);
            if stream.write_all(&framed).await.is_err() {
                return;
            }
        }
    }

    /// The reply to one message; None when it gets none.
    async fn respond(self: &Arc<Self>, msg: &[u8], transport: Transport) -> Option<Vec<u8>> {
        let q = match parse(msg) {
            Ok(q) => q,
            Err(Unanswered::Dropped) => return None,
            Err(Unanswered::Error { id, flags, rcode }) => {
                return Some(error_reply(id, flags, rcode));
            }
        };
        let answer = self.look_up(&q).await;
        let limit = match transport {
            Transport::Udp => udp_limit(&q),
            Transport::Tcp => usize::from(u16::MAX),
        };
        Some(reply(&q, &answer, limit))
    }

    /// Decides and, when allowed, resolves `q`.
    async fn look_up(self: &Arc<Self>, q: &Query) -> Answer {
        if q.edns.is_some_and(|e| e.version != 0) {
            return Answer::Failed("EDNS version".into());
        }
        let Some(kind) = record_name(q.qtype).filter(|_| q.qclass == CLASS_IN) else {
            return Answer::Refused("aileron: only A and AAAA lookups leave the box".into());
        };
        let Some((target, action)) = q.name.as_deref().and_then(|n| lookup_action(n, kind)) else {
            return Answer::Refused("aileron: not a host name".into());
        };
        let decided = self.decide_lookup(action, target.clone()).await;
        match decided {
            Err(_) => Answer::Failed("the decision takes longer than a lookup waits".into()),
            Ok(None) => Answer::Refused("aileron: denied: the decision failed".into()),
            Ok(Some(r)) if r.allow => resolve(&target.host, q.qtype).await,
            Ok(Some(r)) => Answer::Refused(
                r.message
                    .unwrap_or_else(|| format!("aileron: {}", r.decision)),
            ),
        }
    }

    /// The session's answer to a lookup's `action`, never held for a
    /// person (an ask comes back at once); `Err` past [`DECISION_WAIT`].
    /// The decision runs on its own task holding one of [`CONCURRENT`]
    /// permits until it ends (a slow judge), though the lookup was
    /// answered: a flood of names cannot start more decisions than that.
    async fn decide_lookup(
        self: &Arc<Self>,
        action: Action,
        target: Target,
    ) -> Result<Option<aileron_session::Response>, tokio::time::error::Elapsed> {
        let proxy = Arc::clone(self);
        let deciding = async move {
            let permit = Arc::clone(&proxy.deciding).acquire_owned().await.ok()?;
            let decision = tokio::spawn(async move {
                let answer = proxy
                    .verdict(action, &target, |req| {
                        req.agent_asks = true;
                        req.prompt_budget = Some(PROMPT_BUDGET_SECS);
                    })
                    .await;
                drop(permit);
                answer
            });
            decision.await.ok().flatten()
        };
        tokio::time::timeout(DECISION_WAIT, deciding).await
    }
}

/// The action a lookup of `name` (record type `kind`) is decided as:
/// `CONNECT name:443`'s, with the summary `DNS A name` and a `dns` facet;
/// None when `name` is not a host the proxy would connect to.
pub fn lookup_action(name: &str, kind: &str) -> Option<(Target, Action)> {
    let target = lower::parse_target(&Method::CONNECT, &format!("{name}:443")).ok()?;
    let mut action = lower::lower(&Lowering {
        method: &Method::CONNECT,
        target: &target,
        headers: &HeaderMap::new(),
        tunnel: true,
        body_size: None,
        body: None,
    });
    action.summary = format!("DNS {kind} {}", target.host);
    let facet = serde_json::json!({"name": target.host, "type": kind});
    action.facets.insert("dns".into(), facet);
    Some((target, action))
}

/// The host's own resolution of `host`, the addresses of type `qtype`.
async fn resolve(host: &str, qtype: u16) -> Answer {
    let host = host.to_owned();
    let found = tokio::task::spawn_blocking(move || getaddrinfo(&host)).await;
    let addrs = match found {
        Ok(Ok(addrs)) => addrs,
        Ok(Err(Lookup::NoName)) => return Answer::NoName,
        Ok(Err(Lookup::NoData)) => return Answer::Addresses(Vec::new()),
        Ok(Err(Lookup::Failed(why))) => return Answer::Failed(why),
        Err(_) => return Answer::Failed("the lookup did not finish".into()),
    };
    let mut seen = std::collections::HashSet::new();
    let wanted: Vec<IpAddr> = addrs
        .into_iter()
        .filter(|ip| (qtype == TYPE_A) == ip.is_ipv4() && seen.insert(*ip))
        .collect();
    Answer::Addresses(wanted)
}

/// Why the host's resolver gave no address.
enum Lookup {
    NoName,
    NoData,
    Failed(String),
}

/// `getaddrinfo(host)` for both families, in the resolver's order.
fn getaddrinfo(host: &str) -> Result<Vec<IpAddr>, Lookup> {
    let c = std::ffi::CString::new(host).map_err(|_| Lookup::NoName)?;
    // SAFETY: hints is plain data; all-zero is "no preference".
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_family = libc::AF_UNSPEC;
    hints.ai_socktype = libc::SOCK_STREAM;
    let mut list: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: a NUL-ended name, hints, and a pointer to fill.
    let r = unsafe { libc::getaddrinfo(c.as_ptr(), std::ptr::null(), &hints, &mut list) };
    if r != 0 {
        return Err(match r {
            libc::EAI_NONAME => Lookup::NoName,
            libc::EAI_NODATA => Lookup::NoData,
            _ => Lookup::Failed(format!("the host's resolver failed ({r})")),
        });
    }
    let mut out = Vec::new();
    let mut at = list;
    while !at.is_null() {
        // SAFETY: a node of the list getaddrinfo returned, freed below.
        let node = unsafe { &*at };
        if let Some(addr) = socket_addr(node) {
            out.push(addr.ip());
        }
        at = node.ai_next;
    }
    // SAFETY: the list getaddrinfo returned, freed once.
    unsafe { libc::freeaddrinfo(list) };
    Ok(out)
}

/// The address of one `getaddrinfo` result.
fn socket_addr(node: &libc::addrinfo) -> Option<SocketAddr> {
    if node.ai_addr.is_null() {
        return None;
    }
    // SAFETY: ai_addr points to a sockaddr of ai_family's kind.
    unsafe {
        match node.ai_family {
            libc::AF_INET => {
                let a = &*node.ai_addr.cast::<libc::sockaddr_in>();
                let ip = std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
                Some(SocketAddr::from((ip, 0)))
            }
            libc::AF_INET6 => {
                let a = &*node.ai_addr.cast::<libc::sockaddr_in6>();
                Some(SocketAddr::from((
                    std::net::Ipv6Addr::from(a.sin6_addr.s6_addr),
                    0,
                )))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query for `name` of `qtype`, with an OPT record when `edns`.
    fn query(name: &str, qtype: u16, edns: Option<u16>) -> Vec<u8> {
        let mut m = vec![
            0x12,
            0x34,
            0x01,
            0x00,
            0,
            1,
            0,
            0,
            0,
            0,
            0,
            u8::from(edns.is_some()),
        ];
        for label in name.split('.').filter(|l| !l.is_empty()) {
            m.push(label.len() as u8);
            m.extend_from_slice(label.as_bytes());
        }
        m.push(0);
        m.extend_from_slice(&qtype.to_be_bytes());
        m.extend_from_slice(&CLASS_IN.to_be_bytes());
        if let Some(size) = edns {
            m.extend_from_slice(&[0, 0, 41]);
            m.extend_from_slice(&size.to_be_bytes());
            m.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        }
        m
    }

    fn rcode_of(reply: &[u8]) -> u16 {
        u16::from_be_bytes([reply[2], reply[3]]) & 0xF
    }

    #[test]
    fn an_address_query_parses_with_its_name_in_lower_case() {
        let q = parse(&query("Example.COM", TYPE_A, Some(4096))).unwrap();
        assert_eq!(q.name.as_deref(), Some("example.com"));
        assert_eq!((q.id, q.qtype, q.qclass), (0x1234, TYPE_A, CLASS_IN));
        assert_eq!(
            q.edns,
            Some(Edns {
                udp_size: 4096,
                version: 0
            })
        );
        // The question is echoed as sent.
        let r = reply(
            &q,
            &Answer::Addresses(vec!["192.0.2.1".parse().unwrap()]),
            512,
        );
        assert!(r.windows(7).any(|w| w == b"Example"));
        assert_eq!(rcode_of(&r), 0);
        assert_eq!(u16::from_be_bytes([r[6], r[7]]), 1);
    }

    #[test]
    fn what_is_not_a_query_is_dropped_or_refused_as_the_rfc_says() {
        assert_eq!(parse(&[0; 11]), Err(Unanswered::Dropped));
        let mut response = query("a.example", TYPE_A, None);
        response[2] |= 0x80;
        assert_eq!(parse(&response), Err(Unanswered::Dropped));
        let mut status = query("a.example", TYPE_A, None);
        status[2] |= 2 << 3;
        assert!(matches!(
            parse(&status),
            Err(Unanswered::Error {
                rcode: Rcode::NotImp,
                ..
            })
        ));
        for bad in [
            {
                let mut two = query("a.example", TYPE_A, None);
                two[5] = 2;
                two
            },
            {
                let mut trailing = query("a.example", TYPE_A, None);
                trailing.push(0);
                trailing
            },
            // A compression pointer in the question.
            vec![0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xC0, 12, 0, 1, 0, 1],
            // A label longer than 63.
            query(&"a".repeat(64), TYPE_A, None),
        ] {
            assert!(
                matches!(
                    parse(&bad),
                    Err(Unanswered::Error {
                        rcode: Rcode::FormErr,
                        ..
                    })
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_name_that_is_not_a_host_s_parses_without_a_name() {
        let q = parse(&query("a_b.example", TYPE_A, None)).unwrap();
        assert_eq!(q.name, None);
        let mut binary = query("xx.example", TYPE_A, None);
        binary[13] = 0xFF;
        assert_eq!(parse(&binary).unwrap().name, None);
    }

    /// A lookup is decided as the CONNECT to the name on 443 is: the same
    /// facets, with the `dns` facet beside them.
    #[test]
    fn a_lookup_is_the_action_of_connect_to_the_name() {
        let (target, lookup) = lookup_action("Registry.Example", "AAAA").unwrap();
        let connect = lower::lower(&Lowering {
            method: &Method::CONNECT,
            target: &lower::parse_target(&Method::CONNECT, "registry.example:443").unwrap(),
            headers: &HeaderMap::new(),
            tunnel: true,
            body_size: None,
            body: None,
        });
        assert_eq!(target.host, "registry.example");
        assert_eq!(lookup.facets["http"], connect.facets["http"]);
        assert_eq!(
            (lookup.kind.clone(), lookup.verb.clone()),
            (connect.kind, connect.verb)
        );
        assert_eq!(lookup.summary, "DNS AAAA registry.example");
        assert_eq!(lookup.facets["dns"]["type"], "AAAA");
        assert!(lookup_action("a b.example", "A").is_none());
    }

    #[test]
    fn a_long_answer_over_udp_is_truncated_whole() {
        let q = parse(&query("a.example", TYPE_AAAA, None)).unwrap();
        let many: Vec<IpAddr> = (0..40u16)
            .map(|i| IpAddr::from([0x2001, 0xdb8, 0, 0, 0, 0, 0, i]))
            .collect();
        let r = reply(&q, &Answer::Addresses(many.clone()), udp_limit(&q));
        assert!(r.len() <= 512);
        assert_ne!(u16::from_be_bytes([r[2], r[3]]) & TC, 0);
        assert_eq!(u16::from_be_bytes([r[6], r[7]]), 0);
        let whole = reply(&q, &Answer::Addresses(many), usize::from(u16::MAX));
        assert_eq!(u16::from_be_bytes([whole[6], whole[7]]), 40);
    }

    #[test]
    fn a_refusal_says_why_to_an_edns_client() {
        let q = parse(&query("a.example", TYPE_A, Some(1232))).unwrap();
        let r = reply(&q, &Answer::Refused("aileron: denied: x".into()), 1232);
        assert_eq!(rcode_of(&r), 5);
        assert!(r.windows(18).any(|w| w == b"aileron: denied: x"));
    }

    #[test]
    fn an_edns_version_past_0_is_badvers() {
        let mut m = query("a.example", TYPE_A, Some(1232));
        let at = m.len() - 5;
        m[at] = 1;
        let q = parse(&m).unwrap();
        let r = reply(&q, &Answer::Failed(String::new()), 1232);
        assert_eq!(rcode_of(&r), 0);
        // The OPT's extended rcode: 16 >> 4.
        assert_eq!(r[r.len() - 6], 1);
    }

    /// Every prefix and every one-byte change of valid queries parses or
    /// is refused, never panics, and what parses is answered.
    #[test]
    fn malformed_input_never_panics() {
        let seeds = [
            query("example.com", TYPE_A, Some(4096)),
            query("a.b.c.example", TYPE_AAAA, None),
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for seed in &seeds {
            for n in 0..=seed.len() {
                let _ = parse(&seed[..n]);
            }
            for i in 0..seed.len() {
                for b in [0u8, 1, 0x3F, 0x40, 0x80, 0xC0, 0xFF] {
                    let mut m = seed.clone();
                    m[i] = b;
                    if let Ok(q) = parse(&m) {
                        let _ = reply(&q, &Answer::Refused("x".into()), 512);
                    }
                }
            }
        }
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 80) as usize;
            let m: Vec<u8> = (0..len).map(|i| (state >> (i % 56)) as u8).collect();
            if let Ok(q) = parse(&m) {
                let _ = reply(&q, &Answer::Addresses(vec![]), 512);
            }
        }
    }
}
