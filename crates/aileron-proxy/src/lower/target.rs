//! The request target: what arrives on the proxy's request line (or inside
//! an inspected tunnel), as the host and port the proxy connects to and
//! the policy sees.
//!
//! One normalisation serves both, so that a rule about `example.com`
//! holds for every spelling a client could use for it: hosts are read as
//! browsers read them (WHATWG URL: lower case, IDNA to punycode, percent
//! escapes decoded, IPv4 in any of its number forms written dotted,
//! IPv6 compressed and without brackets, an IPv4-mapped IPv6 address as
//! the IPv4 one, one trailing dot dropped), and
//! the path has its dot segments resolved and its escaped unreserved
//! characters decoded (RFC 3986 6.2.2), which changes nothing a server
//! sees. Whatever two parsers could read differently is refused rather
//! than guessed: a space or control character, a backslash, a fragment,
//! two `@`, an IPv6 address without brackets, an empty or bad port.

use http::Method;
use url::{Host, Url};

/// The schemes the proxy forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    Http,
    Https,
    Ws,
    Wss,
}

impl Scheme {
    /// Every scheme, for lookups by name.
    const ALL: [Scheme; 4] = [Scheme::Http, Scheme::Https, Scheme::Ws, Scheme::Wss];

    /// The name as a URL writes it: `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
            Scheme::Ws => "ws",
            Scheme::Wss => "wss",
        }
    }

    /// 80 or 443.
    pub fn default_port(self) -> u16 {
        if self.is_tls() { 443 } else { 80 }
    }

    /// `https` and `wss`.
    pub fn is_tls(self) -> bool {
        matches!(self, Scheme::Https | Scheme::Wss)
    }

    /// By name, in any case.
    fn parse(name: &str) -> Option<Scheme> {
        Scheme::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a request goes, canonical: what the proxy connects to and sends,
/// and what the policy sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub scheme: Scheme,
    /// Lower-case ASCII (IDNA names as punycode), IPv4 dotted (an
    /// IPv4-mapped IPv6 address too), IPv6 compressed and without
    /// brackets; never empty.
    pub host: String,
    /// Never 0; the scheme's default when the URL gives none.
    pub port: u16,
    /// `/path?query`, normalised; empty for a CONNECT, which has none.
    pub path_and_query: String,
    /// The request line named a user (`http://user:pass@host/`): not part
    /// of the target, and not to be forwarded.
    pub userinfo: bool,
}

impl Target {
    /// `host:port`, an IPv6 address in brackets: what a CONNECT names.
    pub fn authority(&self) -> String {
        format!("{}:{}", bracketed(&self.host), self.port)
    }

    /// `host`, or `host:port` when the port is not the scheme's default:
    /// the value of a `Host` header for this target.
    pub fn host_header(&self) -> String {
        if self.port == self.scheme.default_port() {
            bracketed(&self.host).into_owned()
        } else {
            self.authority()
        }
    }

    /// `scheme://host[:port]`, the port only when it is not the default.
    pub fn origin(&self) -> String {
        self.origin_as(self.scheme)
    }

    /// [`Target::origin`] under another scheme (`wss` for an upgrade to
    /// WebSocket over `https`).
    pub(crate) fn origin_as(&self, scheme: Scheme) -> String {
        // The port is written when it is not the default of the scheme the
        // URL names (a CONNECT's 80 is written under https).
        let port = if self.port == scheme.default_port() {
            String::new()
        } else {
            format!(":{}", self.port)
        };
        format!("{scheme}://{}{port}", bracketed(&self.host))
    }

    /// The canonical URL: [`Target::origin`] and the path and query, never
    /// the userinfo. A CONNECT's has no path: `https://example.com`.
    pub fn url(&self) -> String {
        format!("{}{}", self.origin(), self.path_and_query)
    }

    /// The path: the target's up to `?`; empty for a CONNECT.
    pub fn path(&self) -> &str {
        self.path_and_query
            .split_once('?')
            .map_or(&self.path_and_query, |(p, _)| p)
    }

    /// The query, without `?`; `None` when the target has none.
    pub fn query(&self) -> Option<&str> {
        self.path_and_query.split_once('?').map(|(_, q)| q)
    }
}

/// Why a request target is not forwarded. Each message is one line, and
/// what it quotes of the request is escaped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadTarget {
    #[error("empty request target")]
    Empty,
    #[error(
        "origin-form request target (`/path`): a request to the proxy itself, not through it; a proxy is sent absolute URLs (`http://host/path`)"
    )]
    OriginForm,
    #[error("request target {0} is not an absolute URL such as http://host/path")]
    NotAbsolute(String),
    #[error("request target in a tunnel {0} is neither a path (`/path`) nor an https URL")]
    NotOriginForm(String),
    #[error("unsupported scheme {0}: http, https, ws and wss are forwarded")]
    UnknownScheme(String),
    #[error("request target {target} has {what} at byte {at}")]
    ForbiddenChar {
        target: String,
        what: &'static str,
        at: usize,
    },
    #[error("CONNECT target {0} is a URL; CONNECT takes host:port")]
    ConnectUrl(String),
    #[error("CONNECT target {0} has a path; CONNECT takes host:port only")]
    ConnectPath(String),
    #[error("CONNECT target {0} has no port; CONNECT takes host:port")]
    ConnectNoPort(String),
    #[error("CONNECT target {0} names a user; CONNECT takes host:port only")]
    ConnectUserinfo(String),
    #[error("{0} has no host")]
    EmptyHost(String),
    #[error("{0} has more than one `@`: which part is the host is ambiguous")]
    AmbiguousUserinfo(String),
    #[error("{0} has an IPv6 address without brackets; write [::1]:443")]
    UnbracketedIpv6(String),
    #[error("bad port {port} in {target}: a port is a number from 1 to 65535")]
    BadPort { target: String, port: String },
    #[error("bad host {host}: {why}")]
    BadHost { host: String, why: String },
    #[error("bad Host header {0}: expected host or host:port")]
    BadHostHeader(String),
    #[error("the Host header names {found}, but the request goes to {target}")]
    HostMismatch { found: String, target: String },
    #[error("a request inside the tunnel to {tunnel} names {found}")]
    TunnelMismatch { found: String, tunnel: String },
    /// Set by the proxy when a target this module accepted cannot be
    /// written as the URI it sends.
    #[error("the target cannot be forwarded: {0}")]
    Unforwardable(String),
}

/// Parses what follows the method on the proxy's request line: a CONNECT's
/// authority-form (`host:port`, `[::1]:443`), anyone else's absolute-form
/// (`http://host[:port]/path?query`, also `https`, `ws`, `wss`).
///
/// A CONNECT's target has scheme `https` (a tunnel is taken for TLS,
/// whatever its port) and no path. Userinfo is not part of the target:
/// [`Target::userinfo`] says it was there.
pub fn parse_target(method: &Method, request_target: &str) -> Result<Target, BadTarget> {
    if request_target.is_empty() {
        return Err(BadTarget::Empty);
    }
    check_chars(request_target)?;
    if *method == Method::CONNECT {
        return parse_connect(request_target);
    }
    if request_target.starts_with('/') || request_target == "*" {
        return Err(BadTarget::OriginForm);
    }
    let Some((scheme, rest)) = request_target.split_once("://") else {
        return Err(BadTarget::NotAbsolute(shown(request_target)));
    };
    let scheme = Scheme::parse(scheme).ok_or_else(|| {
        if scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        {
            BadTarget::UnknownScheme(shown(scheme))
        } else {
            BadTarget::NotAbsolute(shown(request_target))
        }
    })?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (userinfo, host_port) = match authority.split('@').collect::<Vec<_>>()[..] {
        [host_port] => (false, host_port),
        [_, host_port] => (true, host_port),
        _ => return Err(BadTarget::AmbiguousUserinfo(shown(request_target))),
    };
    let (host, port) = host_and_port(host_port, request_target)?;
    let port = port.unwrap_or(scheme.default_port());
    let mut target = Target {
        scheme,
        host,
        port,
        path_and_query: String::new(),
        userinfo,
    };
    target.path_and_query = normalised_path(&target, tail)?;
    Ok(target)
}

/// The target of a request read inside an inspected tunnel: origin-form
/// (`/path?query`), or absolute-form (`https://host/path`, as HTTP/2
/// requests arrive), on the CONNECT's host and port.
///
/// A `Host` header (or absolute URL) that names another host or port than
/// the CONNECT, after the same normalisation, is refused: the request
/// would be decided for one host and routed by the server to another
/// (domain fronting). A `Host` without a port means the scheme's default.
pub fn origin_target(
    connect: &Target,
    origin_form: &str,
    host_header: Option<&str>,
) -> Result<Target, BadTarget> {
    if origin_form.is_empty() {
        return Err(BadTarget::Empty);
    }
    check_chars(origin_form)?;
    let mut target = Target {
        path_and_query: String::new(),
        userinfo: false,
        ..connect.clone()
    };
    let tail = if origin_form.starts_with('/') {
        origin_form
    } else if origin_form.contains("://") {
        let named = parse_target(&Method::GET, origin_form)?;
        if !named.scheme.is_tls() || (&named.host, named.port) != (&connect.host, connect.port) {
            return Err(BadTarget::TunnelMismatch {
                found: shown(&named.origin()),
                tunnel: connect.authority(),
            });
        }
        target.scheme = named.scheme;
        target.userinfo = named.userinfo;
        target.path_and_query = named.path_and_query;
        ""
    } else {
        return Err(BadTarget::NotOriginForm(shown(origin_form)));
    };
    if let Some(h) = host_header {
        let (host, port) = parse_host_header(h, target.scheme)?;
        if (&host, port) != (&target.host, target.port) {
            return Err(BadTarget::HostMismatch {
                found: shown(h),
                target: connect.authority(),
            });
        }
    }
    if !tail.is_empty() {
        target.path_and_query = normalised_path(&target, tail)?;
    }
    Ok(target)
}

/// Whether a plain HTTP request's `Host` header names its target (after
/// the same normalisation; no port is the scheme's default). The proxy
/// sends the target's own `Host` whatever this says.
pub fn host_header_agrees(target: &Target, host_header: &str) -> bool {
    parse_host_header(host_header, target.scheme)
        .is_ok_and(|(host, port)| host == target.host && port == target.port)
}

fn parse_connect(request_target: &str) -> Result<Target, BadTarget> {
    if request_target.contains("://") {
        return Err(BadTarget::ConnectUrl(shown(request_target)));
    }
    if request_target.contains(['/', '?']) {
        return Err(BadTarget::ConnectPath(shown(request_target)));
    }
    if request_target.contains('@') {
        return Err(BadTarget::ConnectUserinfo(shown(request_target)));
    }
    let (host, port) = host_and_port(request_target, request_target)?;
    let port = port.ok_or_else(|| BadTarget::ConnectNoPort(shown(request_target)))?;
    Ok(Target {
        scheme: Scheme::Https,
        host,
        port,
        path_and_query: String::new(),
        userinfo: false,
    })
}

/// A `Host` header's host and port (the scheme's default when it has none).
fn parse_host_header(value: &str, scheme: Scheme) -> Result<(String, u16), BadTarget> {
    let bad = || BadTarget::BadHostHeader(shown(value));
    if value.is_empty() || value.contains(['/', '?', '@']) {
        return Err(bad());
    }
    check_chars(value).map_err(|_| bad())?;
    let (host, port) = host_and_port(value, value).map_err(|_| bad())?;
    Ok((host, port.unwrap_or(scheme.default_port())))
}

/// Refuses what parsers disagree on: spaces and control characters (the
/// WHATWG parser drops some, HTTP parsers stop at others), `\` (a `/` to
/// browsers, not to servers) and a fragment (never sent to a server).
fn check_chars(s: &str) -> Result<(), BadTarget> {
    let found = s.char_indices().find_map(|(at, c)| {
        let what = match c {
            ' ' => "a space",
            '\\' => "a backslash",
            '#' => "a fragment (`#`)",
            c if c.is_control() => "a control character",
            c if c.is_whitespace() => "a space",
            _ => return None,
        };
        Some((at, what))
    });
    match found {
        Some((at, what)) => Err(BadTarget::ForbiddenChar {
            target: shown(s),
            what,
            at,
        }),
        None => Ok(()),
    }
}

/// `host[:port]` (the host bracketed if it is IPv6) → canonical host and
/// the port if one is written. `whole` is quoted in errors.
fn host_and_port(s: &str, whole: &str) -> Result<(String, Option<u16>), BadTarget> {
    let (host, port) = if let Some(inner) = s.strip_prefix('[') {
        let Some((_, after)) = inner.split_once(']') else {
            return Err(BadTarget::BadHost {
                host: shown(s),
                why: "`[` without `]`".into(),
            });
        };
        let host = &s[..s.len() - after.len()];
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None => {
                    return Err(BadTarget::BadHost {
                        host: shown(s),
                        why: "text after `]` that is not a port".into(),
                    });
                }
            },
        }
    } else {
        match s.matches(':').count() {
            0 => (s, None),
            1 => s
                .split_once(':')
                .map(|(h, p)| (h, Some(p)))
                .unwrap_or((s, None)),
            _ => return Err(BadTarget::UnbracketedIpv6(shown(whole))),
        }
    };
    if host.is_empty() {
        return Err(BadTarget::EmptyHost(shown(whole)));
    }
    let port = port.map(|p| parse_port(p, whole)).transpose()?;
    Ok((canonical_host(host, whole)?, port))
}

fn parse_port(p: &str, whole: &str) -> Result<u16, BadTarget> {
    let bad = || BadTarget::BadPort {
        target: shown(whole),
        port: shown(p),
    };
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match p.parse::<u16>() {
        Ok(port) if port != 0 => Ok(port),
        _ => Err(bad()),
    }
}

/// The host as WHATWG reads it under `http`, then held to what DNS can
/// name: letters, digits, `-`, `_`, non-empty labels.
fn canonical_host(raw: &str, whole: &str) -> Result<String, BadTarget> {
    let bad = |why: String| BadTarget::BadHost {
        host: shown(raw),
        why,
    };
    let url = Url::parse(&format!("http://{raw}/")).map_err(|e| bad(e.to_string()))?;
    match url.host() {
        Some(Host::Ipv4(a)) => Ok(a.to_string()),
        // An IPv4-mapped address (`::ffff:127.0.0.1`) is the IPv4 host.
        Some(Host::Ipv6(a)) => Ok(a
            .to_ipv4_mapped()
            .map_or_else(|| a.to_string(), |v4| v4.to_string())),
        Some(Host::Domain(d)) => {
            let d = d.strip_suffix('.').unwrap_or(d);
            if d.is_empty() {
                return Err(BadTarget::EmptyHost(shown(whole)));
            }
            if let Some(c) = d
                .chars()
                .find(|&c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
            {
                return Err(bad(format!("{c:?} is not a character of a host name")));
            }
            if d.split('.').any(str::is_empty) {
                return Err(bad("an empty label (`..`, or a leading dot)".into()));
            }
            Ok(d.to_owned())
        }
        None => Err(BadTarget::EmptyHost(shown(whole))),
    }
}

/// `tail` (`/path?query`, `?query` or nothing) as WHATWG resolves it under
/// the target, with escapes normalised.
fn normalised_path(target: &Target, tail: &str) -> Result<String, BadTarget> {
    let url = Url::parse(&format!("{}{tail}", target.origin())).map_err(|e| {
        BadTarget::NotAbsolute(format!(
            "{} ({e})",
            shown(&format!("{}{tail}", target.origin()))
        ))
    })?;
    let mut out = normalised_escapes(url.path());
    if let Some(q) = url.query() {
        out.push('?');
        out.push_str(&normalised_escapes(q));
    }
    Ok(out)
}

/// Decodes escaped unreserved characters (`%7E` → `~`, `%61` → `a`) and
/// writes the other escapes in upper case (RFC 3986 6.2.2.1-2): the same
/// resource for every server, one spelling for the policy.
fn normalised_escapes(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|&c| (c as char).to_digit(16));
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (hex(i + 1), hex(i + 2))
        {
            let c = (h * 16 + l) as u8;
            if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
                out.push(c as char);
            } else {
                out.push_str(&format!("%{c:02X}"));
            }
            i += 3;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or_default();
        out.push(ch);
        i += ch.len_utf8().max(1);
    }
    out
}

/// An IPv6 address in brackets, a name as it is.
fn bracketed(host: &str) -> std::borrow::Cow<'_, str> {
    if host.contains(':') {
        format!("[{host}]").into()
    } else {
        host.into()
    }
}

/// Request text quoted in a message: in backticks, escaped (one line
/// whatever it holds), cut at 200 characters.
pub(crate) fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(200).flat_map(char::escape_debug).collect();
    if s.chars().count() > 200 {
        out.push('…');
    }
    format!("`{out}`")
}
