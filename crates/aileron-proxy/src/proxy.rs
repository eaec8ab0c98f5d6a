//! The proxy itself: each request (and each CONNECT that is not inspected)
//! is lowered, decided, and only then forwarded; bodies stream through.

use crate::ca::Authority;
use crate::connect::{self, Guarded, Refused};
use crate::lower::{self, Lowering, Target};
use crate::meter::{self, Metered, UsageLog};
use crate::socks;
use crate::{Error, Inspect};
use aileron_session::Decide;
use aileron_session::decide::Origin;
use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode, Uri, Version};
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};

/// A body either way: the client's or upstream's, streamed, or one the proxy wrote.
pub type Body = BoxBody<Bytes, hyper::Error>;

/// How long a client may take to send a request's head (slow clients).
const HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// The most a request's head may hold, and the most headers.
const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;
/// Reads from upstream this large: a download passes in fewer, larger
/// frames (each one a hand-over between the two connections' tasks).
/// Measured: 1 MiB took a plain download from 47-54% of direct to 53-64%
/// (256 KiB before). The price: a pooled upstream connection may keep up
/// to this much of its last read until its next one or its idle timeout.
const UPSTREAM_READ: usize = 1024 * 1024;
/// The buffer of each direction of a tunnel (256 KiB: 53-63% of direct,
/// against 50-58% with 64 KiB).
const SPLICE_BUFFER: usize = 256 * 1024;

type HttpClient = Client<Guarded, Body>;
type HttpsClient = Client<hyper_rustls::HttpsConnector<Guarded>, Body>;

/// What the proxy needs to run.
pub struct Config {
    /// Who decides.
    pub decide: Arc<dyn Decide>,
    /// The directory whose policy applies, and the session.
    pub origin: Origin,
    /// Hosts whose TLS is opened, with the CA that signs for them.
    pub inspect: Option<(Inspect, Arc<Authority>)>,
    /// Addresses never forwarded to: the proxy's own, Aileron's server.
    pub refused: Vec<SocketAddr>,
    /// The roots upstream certificates are checked against.
    pub roots: rustls::RootCertStore,
    /// The launched agent's own model endpoints (`scheme://host:port`):
    /// requests to them are tagged `agent-model-api`.
    pub agent_apis: Vec<String>,
    /// Where the token usage of LLM API calls is written.
    pub usage_log: Option<Arc<UsageLog>>,
}

/// A running proxy's shared state.
pub struct Proxy {
    decide: Arc<dyn Decide>,
    origin: Origin,
    inspect: Option<(Inspect, Arc<Authority>)>,
    refused: Refused,
    http: HttpClient,
    https: HttpsClient,
    /// HTTP/1.1 only: a WebSocket handshake inside TLS.
    https1: HttpsClient,
    tls_configs: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
    /// Host and port of the agent's own model endpoints.
    agent_apis: Vec<(String, u16)>,
    usage_log: Option<Arc<UsageLog>>,
    /// The box's DNS lookups being decided at once (`dns`).
    pub(crate) deciding: Arc<tokio::sync::Semaphore>,
}

impl Proxy {
    pub fn new(cfg: Config) -> Result<Arc<Proxy>, Error> {
        let refused = Refused(Arc::new(cfg.refused));
        let guarded = Guarded {
            refused: refused.clone(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Tls(e.to_string()))?
            .with_root_certificates(cfg.roots)
            .with_no_client_auth();
        let https_with = |h2: bool| {
            let b = hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(tls.clone())
                .https_only();
            let connector = if h2 {
                b.enable_http1()
                    .enable_http2()
                    .wrap_connector(guarded.clone())
            } else {
                b.enable_http1().wrap_connector(guarded.clone())
            };
            Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(60))
                .http1_read_buf_exact_size(UPSTREAM_READ)
                .build(connector)
        };
        Ok(Arc::new(Proxy {
            decide: cfg.decide,
            origin: cfg.origin,
            inspect: cfg.inspect,
            http: Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(60))
                .http1_read_buf_exact_size(UPSTREAM_READ)
                .build(guarded.clone()),
            https: https_with(true),
            https1: https_with(false),
            refused,
            tls_configs: Mutex::default(),
            agent_apis: cfg
                .agent_apis
                .iter()
                .filter_map(|e| {
                    let (_, authority) = e.split_once("://")?;
                    let (host, port) = authority.rsplit_once(':')?;
                    Some((host.to_owned(), port.parse().ok()?))
                })
                .collect(),
            usage_log: cfg.usage_log,
            deciding: Arc::new(tokio::sync::Semaphore::new(crate::dns::CONCURRENT)),
        }))
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
            connect::set_buffer(&stream, libc::SO_SNDBUF);
            tokio::spawn(Arc::clone(&self).client(stream));
        }
    }

    /// One client connection: SOCKS5 when its first byte is 5 (an HTTP
    /// request begins with a method's letter), HTTP otherwise. The byte is
    /// peeked, not read: the HTTP server reads the stream whole.
    async fn client(self: Arc<Self>, stream: TcpStream) {
        let mut first = [0u8; 1];
        match tokio::time::timeout(HEADER_TIMEOUT, stream.peek(&mut first)).await {
            Ok(Ok(1)) if first[0] == socks::VERSION => return socks::serve(self, stream).await,
            Ok(Ok(1)) => {}
            // Closed, failed, or silent for as long as a head may take.
            _ => return,
        }
        let service = service_fn(move |req| Arc::clone(&self).handle(req, None::<Arc<Target>>));
        let _ = http1_server()
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades()
            .await;
    }

    /// One request from a client; `tunnel` is the inspected CONNECT it came
    /// through. Boxed: a tunnel's requests are served by this same function.
    fn handle(
        self: Arc<Self>,
        req: Request<Incoming>,
        tunnel: Option<Arc<Target>>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>> {
        Box::pin(self.answer(req, tunnel))
    }

    async fn answer(
        self: Arc<Self>,
        req: Request<Incoming>,
        tunnel: Option<Arc<Target>>,
    ) -> Result<Response<Body>, Infallible> {
        if req.method() == Method::CONNECT {
            if tunnel.is_some() {
                return Ok(plain(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "aileron proxy: CONNECT inside a tunnel is not forwarded\n",
                ));
            }
            return Ok(self.connect(req).await);
        }
        let request_target = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .filter(|_| req.uri().scheme().is_none())
            .map(str::to_owned)
            .unwrap_or_else(|| req.uri().to_string());
        let parsed = match &tunnel {
            Some(t) => lower::origin_target(t, &request_target, host_header(req.headers())),
            None => lower::parse_target(req.method(), &request_target),
        };
        let target = match parsed {
            Ok(t) => t,
            Err(e) => return Ok(bad_target(&e)),
        };
        Ok(self.forward(req, target, tunnel.is_some()).await)
    }

    /// A CONNECT: opened and decided request by request (inspected), or
    /// decided by host and port and then spliced.
    async fn connect(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        let authority = req.uri().to_string();
        let target = match lower::parse_target(&Method::CONNECT, &authority) {
            Ok(t) => Arc::new(t),
            Err(e) => return bad_target(&e),
        };
        let opened = match self.open_connect(&target, req.headers()).await {
            Ok(o) => o,
            Err(NotOpened::Tls(e)) => {
                return plain(StatusCode::BAD_GATEWAY, &format!("aileron proxy: {e}\n"));
            }
            Err(NotOpened::Denied(refusal)) => return refusal,
            Err(NotOpened::Unreachable(e)) => return unreachable(&target, &e),
        };
        tokio::spawn(async move {
            if let Ok(upgraded) = hyper::upgrade::on(req).await {
                self.tunnel(TokioIo::new(upgraded), target, opened).await;
            }
        });
        Response::new(empty())
    }

    /// What a CONNECT to `target` (HTTP's or SOCKS's) leads to: TLS
    /// opened when the host is inspected (each request decided inside),
    /// otherwise the tunnel decided as one action by host and port and
    /// its upstream connected.
    pub(crate) async fn open_connect(
        &self,
        target: &Target,
        headers: &HeaderMap,
    ) -> Result<Opened, NotOpened> {
        if let Some((inspect, authority)) = &self.inspect
            && inspect.covers(&target.host)
        {
            let config = self
                .tls_config(&target.host, authority)
                .map_err(NotOpened::Tls)?;
            return Ok(Opened::Inspect(config));
        }
        let action = lower::lower(&Lowering {
            method: &Method::CONNECT,
            target,
            headers,
            tunnel: true,
            body_size: None,
            body: None,
        });
        self.decide(action, target)
            .await
            .map_err(NotOpened::Denied)?;
        connect::open(&target.host, target.port, &self.refused)
            .await
            .map(Opened::Tunnel)
            .map_err(NotOpened::Unreachable)
    }

    /// Carries an opened CONNECT's client stream: its requests served
    /// (inspected) or its bytes spliced with upstream's.
    pub(crate) async fn tunnel<C>(
        self: Arc<Self>,
        mut client: C,
        target: Arc<Target>,
        opened: Opened,
    ) where
        C: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        match opened {
            Opened::Inspect(config) => self.inspect_tunnel(client, target, config).await,
            Opened::Tunnel(mut upstream) => {
                let _ = splice(&mut client, &mut upstream).await;
            }
        }
    }

    /// Serves the requests a client sends inside an inspected tunnel.
    async fn inspect_tunnel<C>(
        self: Arc<Self>,
        client: C,
        target: Arc<Target>,
        config: Arc<rustls::ServerConfig>,
    ) where
        C: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        let Ok(tls) = acceptor.accept(client).await else {
            return;
        };
        let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
        let proxy = Arc::clone(&self);
        let service = service_fn(move |req| Arc::clone(&proxy).handle(req, Some(target.clone())));
        if h2 {
            let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .serve_connection(TokioIo::new(tls), service)
                .await;
        } else {
            let _ = http1_server()
                .serve_connection(TokioIo::new(tls), service)
                .with_upgrades()
                .await;
        }
    }

    /// The TLS server configuration that presents `host`'s minted certificate.
    fn tls_config(
        &self,
        host: &str,
        authority: &Authority,
    ) -> Result<Arc<rustls::ServerConfig>, Error> {
        let mut configs = self.tls_configs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = configs.get(host) {
            return Ok(Arc::clone(c));
        }
        let cert = authority.certificate_for(host)?;
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(Fixed(cert)));
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let config = Arc::new(config);
        if configs.len() >= 4096 {
            configs.clear();
        }
        configs.insert(host.to_owned(), Arc::clone(&config));
        Ok(config)
    }

    /// Decides, forwards and streams back one request.
    async fn forward(
        self: Arc<Self>,
        req: Request<Incoming>,
        target: Target,
        inside_tls: bool,
    ) -> Response<Body> {
        let mut req = req;
        let websocket = is_websocket(req.headers());
        let client_upgrade = websocket.then(|| hyper::upgrade::on(&mut req));
        let wanted = lower::body_wanted(req.method(), &target, req.headers());
        let (mut parts, incoming) = req.into_parts();
        let body_size = content_length(&parts.headers);
        let (prefix, rest) = match wanted {
            Some(limit) if !websocket => match read_prefix(incoming, limit).await {
                Ok(p) => p,
                Err(e) => {
                    return plain(
                        StatusCode::BAD_REQUEST,
                        &format!("aileron proxy: the request body could not be read: {e}\n"),
                    );
                }
            },
            _ => (Bytes::new(), Some(incoming)),
        };
        let mut action = lower::lower(&Lowering {
            method: &parts.method,
            target: &target,
            headers: &parts.headers,
            tunnel: false,
            body_size,
            body: wanted.map(|_| prefix.as_ref()),
        });
        action.id = self.origin.action_id();
        let metered = self
            .usage_log
            .clone()
            .filter(|_| action.facets.contains_key("llm"))
            .map(|log| (log, self.origin.placed(action.clone())));
        let rule = match self.decide(action, &target).await {
            Ok(rule) => rule,
            Err(refusal) => return refusal,
        };
        if metered.is_some() {
            // The usage is read from the bytes as they pass: no compression.
            parts.headers.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_static("identity"),
            );
        }
        strip_hop_by_hop(&mut parts.headers, websocket);
        parts.headers.remove(header::HOST);
        parts.uri = match upstream_uri(&target, inside_tls) {
            Ok(u) => u,
            Err(e) => return bad_target(&e),
        };
        // Each hop speaks its own version: the client's answer is in the
        // client's (an HTTP/1.0 upstream must not end a keep-alive client).
        let client_version = parts.version;
        parts.version = Version::HTTP_11;
        let body = with_prefix(prefix, rest);
        let upstream_req = Request::from_parts(parts, body);
        let sent = if !inside_tls {
            self.http.request(upstream_req).await
        } else if websocket {
            self.https1.request(upstream_req).await
        } else {
            self.https.request(upstream_req).await
        };
        let mut resp = match sent {
            Ok(r) => r,
            Err(e) => return unreachable(&target, &e),
        };
        if websocket && resp.status() == StatusCode::SWITCHING_PROTOCOLS {
            let theirs = hyper::upgrade::on(&mut resp);
            if let Some(ours) = client_upgrade {
                tokio::spawn(async move {
                    if let (Ok(a), Ok(b)) = (ours.await, theirs.await) {
                        let _ = splice(&mut TokioIo::new(a), &mut TokioIo::new(b)).await;
                    }
                });
            }
            let (parts, body) = resp.into_parts();
            return Response::from_parts(parts, body.boxed());
        }
        let (mut parts, body) = resp.into_parts();
        strip_hop_by_hop(&mut parts.headers, false);
        parts.version = client_version;
        let body = match metered {
            Some((log, action)) => Metered::new(body, move |usage| {
                meter::report(log, action, rule, usage);
            })
            .boxed(),
            None => body.boxed(),
        };
        Response::from_parts(parts, body)
    }

    /// The rule that allowed the action, or the answer to send instead.
    async fn decide(
        &self,
        action: aileron_engine::Action,
        target: &Target,
    ) -> Result<Option<String>, Response<Body>> {
        match self.verdict(action, target, |_| {}).await {
            Some(r) if r.allow => Ok(r.rule),
            Some(r) => Err(denied(&r)),
            None => Err(plain(
                StatusCode::FORBIDDEN,
                "aileron: denied: the decision failed\n",
            )),
        }
    }

    /// The session's answer to `action`, a program's traffic to `target`
    /// (tagged when that is the agent's model API), its request shaped by
    /// `shape`; None when the decision failed.
    pub(crate) async fn verdict(
        &self,
        mut action: aileron_engine::Action,
        target: &Target,
        shape: impl FnOnce(&mut aileron_session::Request),
    ) -> Option<aileron_session::Response> {
        if self
            .agent_apis
            .iter()
            .any(|(h, p)| *h == target.host && *p == target.port)
        {
            action
                .tags
                .push(aileron_engine::builtin::AGENT_MODEL_API.to_owned());
        }
        // A program's traffic: never a doom loop (`Request::traffic`).
        let mut req = self.origin.request(action, "proxy");
        req.traffic = true;
        shape(&mut req);
        let decide = Arc::clone(&self.decide);
        tokio::task::spawn_blocking(move || decide.decide(&req))
            .await
            .ok()
    }
}

/// A CONNECT allowed: TLS to open (inspected) or an upstream connected.
pub(crate) enum Opened {
    Inspect(Arc<rustls::ServerConfig>),
    Tunnel(TcpStream),
}

/// A CONNECT not opened, and why.
pub(crate) enum NotOpened {
    /// The host's certificate could not be made.
    Tls(Error),
    /// Denied; the HTTP answer that says so.
    Denied(Response<Body>),
    /// The upstream could not be connected (or is Aileron's own address).
    Unreachable(std::io::Error),
}

/// Copies both ways until both sides are done, through buffers larger
/// than tokio's 8 KiB default (a download passes in fewer system calls).
pub(crate) async fn splice<A, B>(a: &mut A, b: &mut B) -> std::io::Result<(u64, u64)>
where
    A: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + ?Sized,
    B: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + ?Sized,
{
    tokio::io::copy_bidirectional_with_sizes(a, b, SPLICE_BUFFER, SPLICE_BUFFER).await
}

/// The HTTP/1 server side, bounded against slow and flooding clients.
///
/// The head's size is `max_header_size`: `max_buf_size` alone bounds a
/// head only when it arrives in pieces (one read may overshoot it, and a
/// 100 KiB header sent at once was forwarded). No `pipeline_flush`: hyper
/// then skips flushing while unread bytes wait in its buffer, and a head
/// it refuses (malformed, too many headers, too large) stays there, so its
/// 400 or 431 was never sent before the close.
fn http1_server() -> hyper::server::conn::http1::Builder {
    let mut b = hyper::server::conn::http1::Builder::new();
    b.timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_header_size(MAX_HEAD)
        .max_buf_size(MAX_HEAD)
        .max_headers(MAX_HEADERS);
    b
}

/// Always the same certificate: the one for the host the CONNECT named
/// (and was decided for), whatever name the client's hello gives.
#[derive(Debug)]
struct Fixed(Arc<rustls::sign::CertifiedKey>);

impl rustls::server::ResolvesServerCert for Fixed {
    fn resolve(
        &self,
        _: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(Arc::clone(&self.0))
    }
}

fn upstream_uri(target: &Target, inside_tls: bool) -> Result<Uri, lower::BadTarget> {
    let scheme = if inside_tls { "https" } else { "http" };
    let host = if target.host.contains(':') {
        format!("[{}]", target.host)
    } else {
        target.host.clone()
    };
    let pq = if target.path_and_query.is_empty() {
        "/"
    } else {
        &target.path_and_query
    };
    format!("{scheme}://{host}:{}{pq}", target.port)
        .parse()
        .map_err(|e: http::uri::InvalidUri| lower::BadTarget::Unforwardable(e.to_string()))
}

fn host_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::HOST).and_then(|h| h.to_str().ok())
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn is_websocket(headers: &HeaderMap) -> bool {
    let has = |name: HeaderName, word: &str| {
        headers.get_all(name).iter().any(|v| {
            v.to_str()
                .is_ok_and(|s| s.split(',').any(|t| t.trim().eq_ignore_ascii_case(word)))
        })
    };
    has(header::UPGRADE, "websocket") && has(header::CONNECTION, "upgrade")
}

/// Takes out what concerns only this hop (RFC 9110 7.6.1), and whatever
/// `Connection` names; a WebSocket handshake keeps its upgrade.
fn strip_hop_by_hop(headers: &mut HeaderMap, websocket: bool) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|t| HeaderName::from_bytes(t.trim().as_bytes()).ok())
        .collect();
    for name in named {
        if !(websocket && name == header::UPGRADE) {
            headers.remove(name);
        }
    }
    for name in [
        "proxy-connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
    ] {
        headers.remove(name);
    }
    if websocket {
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    } else {
        headers.remove(header::CONNECTION);
        headers.remove(header::UPGRADE);
    }
}

/// Reads up to `limit` bytes of a body for the decision; the rest stays in
/// the stream (`None`: the body ended within the limit).
async fn read_prefix(
    mut body: Incoming,
    limit: usize,
) -> Result<(Bytes, Option<Incoming>), hyper::Error> {
    let mut buf = bytes::BytesMut::new();
    while buf.len() < limit {
        match body.frame().await {
            None => return Ok((buf.freeze(), None)),
            Some(frame) => {
                if let Ok(data) = frame?.into_data() {
                    buf.extend_from_slice(&data);
                }
            }
        }
    }
    Ok((buf.freeze(), Some(body)))
}

/// The bytes read for the decision, then the rest of the client's body.
fn with_prefix(prefix: Bytes, rest: Option<Incoming>) -> Body {
    match (prefix.is_empty(), rest) {
        (true, Some(rest)) => rest.boxed(),
        (_, None) => Full::new(prefix).map_err(|never| match never {}).boxed(),
        (false, Some(rest)) => {
            let first = futures_util::stream::once(async move { Ok(Frame::data(prefix)) });
            let rest = http_body_util::BodyStream::new(rest);
            StreamBody::new(futures_util::StreamExt::chain(first, rest)).boxed()
        }
    }
}

fn empty() -> Body {
    Full::new(Bytes::new())
        .map_err(|never| match never {})
        .boxed()
}

/// A short plain-text answer: what a tool prints is what the agent reads.
fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(
        Full::new(Bytes::from(text.to_owned()))
            .map_err(|never| match never {})
            .boxed(),
    );
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("keep-alive"));
    r
}

fn denied(r: &aileron_session::Response) -> Response<Body> {
    let message = r
        .message
        .clone()
        .unwrap_or_else(|| "aileron: denied".to_owned());
    let mut resp = plain(StatusCode::FORBIDDEN, &format!("{message}\n"));
    resp.headers_mut()
        .insert("x-aileron-decision", HeaderValue::from_static("deny"));
    if let Some(rule) = r
        .rule
        .as_deref()
        .and_then(|r| HeaderValue::from_str(r).ok())
    {
        resp.headers_mut().insert("x-aileron-rule", rule);
    }
    resp
}

fn bad_target(e: &lower::BadTarget) -> Response<Body> {
    let status = match e {
        lower::BadTarget::OriginForm => StatusCode::BAD_REQUEST,
        _ => StatusCode::BAD_REQUEST,
    };
    plain(status, &format!("aileron proxy: not forwarded: {e}\n"))
}

fn unreachable(target: &Target, e: &(dyn std::error::Error + 'static)) -> Response<Body> {
    // The client's error says only "client error (Connect)"; the cause
    // (refused, a certificate not trusted, ...) is in its sources.
    let mut why = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        why = format!("{why}: {s}");
        source = s.source();
    }
    plain(
        StatusCode::BAD_GATEWAY,
        &format!(
            "aileron proxy: cannot reach {}:{}: {why}\n",
            target.host, target.port
        ),
    )
}
