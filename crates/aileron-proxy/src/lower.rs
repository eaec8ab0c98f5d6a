//! One request through the proxy, as the [`Action`] the policy decides.
//!
//! Pure, like the engine: the proxy passes what it read of the request
//! (method, [`Target`], headers, and for LLM APIs the start of the body)
//! and gets the action back; nothing here reads a file, a clock or the
//! network.
//!
//! Every request is an `http.request`:
//!
//! - `verb` and `http.method`: the method, in upper case.
//! - `http.url`: the canonical URL, [`Target::url`]:
//!   `scheme://host[:port]/path?query`, the port only when it is not the
//!   scheme's default, an IPv6 host in brackets, never the userinfo. A
//!   CONNECT's URL is its origin without a path, `https://example.com`
//!   (`https://example.com:8443` for another port): a tunnel is taken for
//!   TLS whatever its port, and its requests are not seen. Its `summary`
//!   is `CONNECT example.com:443`, as curl shows it; everyone else's is
//!   `METHOD URL`.
//! - `http.scheme`, `http.host`, `http.port`: the target's ([`Target`]);
//!   `http.path` (null for a CONNECT) and `http.query` (absent when there
//!   is none) as normalised there.
//! - `http.headers`: lower-case name → value, the values of a repeated
//!   header joined with `, `, credentials (`authorization`, `cookie`,
//!   `x-api-key`, any name that says it holds a secret) written
//!   `[masked]`.
//! - `http.body_size`: the Content-Length, when there is one.
//! - `http.tunnel`: `true` for a CONNECT decided by host and port alone.
//!
//! Tables add facets by what the request is: `git` (smart HTTP),
//! `k8s` (the Kubernetes API), `llm` (OpenAI, Anthropic, Gemini and
//! compatible APIs), `ws` (a WebSocket). The path decides, not the host:
//! a request is read as its server reads it, whoever serves it.
//!
//! Sensitivity: the most a facet says (a git push `mutate`, a git fetch
//! `read` even when it is a POST, a Kubernetes delete `destructive`, a
//! WebSocket `mutate`: what passes through it is not seen); without one,
//! the method's: GET, HEAD, OPTIONS, TRACE and CONNECT `read`, DELETE
//! `destructive`, any other `mutate`. A tunnel (CONNECT, TLS not
//! inspected) is `mutate`: anything may pass through it.

mod git;
mod k8s;
mod llm;
mod target;
mod usage;

pub use llm::{LLM_BODY_LIMIT, body_wanted};
pub use target::{BadTarget, Scheme, Target, host_header_agrees, origin_target, parse_target};
pub use usage::{Usage, UsageScanner, usage};

use aileron_engine::{Action, Sensitivity};
use http::{HeaderMap, HeaderName, Method, header};
use serde_json::{Map, Value, json};

/// What a masked header value is written as.
pub const MASKED: &str = "[masked]";

/// What the proxy knows about one request.
pub struct Lowering<'a> {
    pub method: &'a Method,
    pub target: &'a Target,
    pub headers: &'a HeaderMap,
    /// A CONNECT decided by host and port (TLS not inspected).
    pub tunnel: bool,
    /// Content-Length when known.
    pub body_size: Option<u64>,
    /// The start of the request body, when [`body_wanted`] asked for it:
    /// all of it when it is shorter than what was asked for. A body known
    /// to be cut short (shorter than `body_size`, or as long as was asked
    /// for without a `body_size`) is not read.
    pub body: Option<&'a [u8]>,
}

/// The action the policy decides for one request.
pub fn lower(req: &Lowering<'_>) -> Action {
    let t = req.target;
    let method = req.method.as_str().to_ascii_uppercase();
    let connect = method == "CONNECT";
    let url = t.url();
    let mut http = Map::new();
    let mut put = |k: &str, v: Value| {
        http.insert(k.to_owned(), v);
    };
    put("method", Value::from(method.as_str()));
    put("url", Value::from(url.as_str()));
    put("scheme", Value::from(t.scheme.as_str()));
    put("host", Value::from(t.host.as_str()));
    put("port", Value::from(t.port));
    put(
        "path",
        if connect {
            Value::Null
        } else {
            Value::from(t.path())
        },
    );
    if let Some(q) = t.query() {
        put("query", Value::from(q));
    }
    put("headers", headers_facet(req.headers));
    if let Some(n) = req.body_size {
        put("body_size", Value::from(n));
    }
    if req.tunnel {
        put("tunnel", Value::Bool(true));
    }
    let mut facets = Map::new();
    facets.insert("http".into(), Value::Object(http));
    let mut sensitivity = None;
    if !connect {
        let seen = Seen::new(&method, req);
        for facet in FACETS.iter().filter_map(|f| f(&seen)) {
            sensitivity = sensitivity.max(facet.sensitivity);
            facets.insert(facet.name.into(), facet.value);
        }
    }
    let sensitivity = sensitivity.unwrap_or_else(|| match req.tunnel {
        true => Sensitivity::Mutate,
        false => method_sensitivity(&method),
    });
    let summary = if connect {
        format!("CONNECT {}", t.authority())
    } else {
        format!("{method} {url}")
    };
    let mut action = Action {
        kind: aileron_engine::ActionType::HttpRequest,
        summary,
        verb: method,
        sensitivity: Some(sensitivity),
        primary: "http".into(),
        facets,
        ..Action::default()
    };
    action.normalize();
    action
}

/// Methods that are not `mutate`.
const METHOD_SENSITIVITY: &[(&str, Sensitivity)] = &[
    ("GET", Sensitivity::Read),
    ("HEAD", Sensitivity::Read),
    ("OPTIONS", Sensitivity::Read),
    ("TRACE", Sensitivity::Read),
    ("CONNECT", Sensitivity::Read),
    ("DELETE", Sensitivity::Destructive),
];

fn method_sensitivity(method: &str) -> Sensitivity {
    lookup(METHOD_SENSITIVITY, method).unwrap_or(Sensitivity::Mutate)
}

/// The value `key` has in a table of pairs.
fn lookup<T: Copy>(table: &[(&str, T)], key: &str) -> Option<T> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// Headers whose values are credentials, besides every name
/// [`aileron_audit::sensitive_name`] takes for a secret's.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "anthropic-api-key",
];

fn secret_header(name: &str) -> bool {
    SECRET_HEADERS.contains(&name) || aileron_audit::sensitive_name(name)
}

fn headers_facet(headers: &HeaderMap) -> Value {
    let mut out = Map::new();
    for name in headers.keys() {
        let value = if secret_header(name.as_str()) {
            MASKED.to_owned()
        } else {
            headers
                .get_all(name)
                .iter()
                .map(|v| String::from_utf8_lossy(v.as_bytes()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.insert(name.as_str().to_owned(), Value::from(value));
    }
    Value::Object(out)
}

/// A facet a table adds, and the sensitivity it implies.
struct Facet {
    name: &'static str,
    value: Value,
    sensitivity: Option<Sensitivity>,
}

/// The facet tables, each `None` for a request it does not describe.
const FACETS: &[fn(&Seen<'_>) -> Option<Facet>] = &[git::facet, k8s::facet, llm::facet, ws_facet];

/// What the tables read of one request.
struct Seen<'a> {
    /// Upper case.
    method: &'a str,
    target: &'a Target,
    /// The path with every escape decoded, as servers route on it
    /// (`/v1beta/models/m%3AgenerateContent` is Gemini's).
    path: String,
    /// The query's pairs, decoded.
    query: Vec<(String, String)>,
    headers: &'a HeaderMap,
    /// The body, when it is whole.
    body: Option<&'a [u8]>,
}

impl<'a> Seen<'a> {
    fn new(method: &'a str, req: &Lowering<'a>) -> Seen<'a> {
        let t = req.target;
        Seen {
            method,
            target: t,
            path: decoded_path(t.path()),
            query: url::form_urlencoded::parse(t.query().unwrap_or_default().as_bytes())
                .into_owned()
                .collect(),
            headers: req.headers,
            body: req.body.filter(|b| match req.body_size {
                Some(n) => b.len() as u64 == n,
                None => b.len() < LLM_BODY_LIMIT,
            }),
        }
    }

    /// The values of query parameter `name`, in order.
    fn query_values(&self, name: &str) -> impl Iterator<Item = &str> {
        self.query
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn decoded_path(path: &str) -> String {
    percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned()
}

/// Whether a comma-separated header lists `word` (in any case).
fn header_has(headers: &HeaderMap, name: HeaderName, word: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        String::from_utf8_lossy(v.as_bytes())
            .split(',')
            .any(|t| t.trim().eq_ignore_ascii_case(word))
    })
}

/// `ws { url }`: a `ws`/`wss` URL, or an upgrade to WebSocket
/// (`Upgrade: websocket` and `Connection: upgrade`); the URL under `ws`
/// or `wss` as the target is plain or TLS.
fn ws_facet(seen: &Seen<'_>) -> Option<Facet> {
    let t = seen.target;
    let upgrade = header_has(seen.headers, header::UPGRADE, "websocket")
        && header_has(seen.headers, header::CONNECTION, "upgrade");
    let scheme = match t.scheme {
        Scheme::Ws | Scheme::Wss => t.scheme,
        Scheme::Http if upgrade => Scheme::Ws,
        Scheme::Https if upgrade => Scheme::Wss,
        _ => return None,
    };
    Some(Facet {
        name: "ws",
        value: json!({"url": format!("{}{}", t.origin_as(scheme), t.path_and_query)}),
        sensitivity: Some(Sensitivity::Mutate),
    })
}
