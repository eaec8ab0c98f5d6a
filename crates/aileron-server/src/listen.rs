//! The accept loop: HTTP/1.1 and HTTP/2 (h2c, prior knowledge) on each
//! connection through hyper's auto builder, with what `axum::serve` lacks
//! against slow and flooding clients:
//!
//! - a request's head must arrive within [`Limits::header_timeout`] of its
//!   first byte (a slowloris client trickling a header is closed);
//! - a connection with no request in flight is closed after
//!   [`Limits::idle_timeout`];
//! - at most [`Limits::max_connections`] connections are served at once
//!   (never more than the open-file limit leaves room for); the next one
//!   waits in the kernel's backlog while the connections that hold no
//!   request are shed, so a flood of idle or trickling connections cannot
//!   keep another client out.
//!
//! A request in flight is never cut by these: an ask waiting for a person
//! and the dashboard's event stream stay open as long as they need.

use axum::Router;
use axum::body::Body;
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// Descriptors kept for the database, the logs and the judges' calls when
/// the connection cap is fitted under the open-file limit.
const FD_RESERVE: u64 = 128;
/// While the connection cap is reached, a connection holding no request
/// for this long is closed to make room.
const SHED_AFTER: Duration = Duration::from_millis(500);
/// How often a connection checks its timeouts, at most.
const TICK_MAX: Duration = Duration::from_millis(250);
/// A failed `accept` (out of descriptors) is tried again after this.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

/// What one client may hold of the server (`aileron serve
/// --max-connections`, `--max-asks-per-session`, `--max-asks-per-token`;
/// the two timeouts are fixed there).
#[derive(Clone, Debug)]
pub struct Limits {
    /// From a request's first byte to the end of its head; `None`: no limit.
    pub header_timeout: Option<Duration>,
    /// A connection with no request in flight; `None`: kept open.
    pub idle_timeout: Option<Duration>,
    /// Connections served at once.
    pub max_connections: usize,
    /// Asks of one session waiting for a person at once.
    pub asks_per_session: usize,
    /// Asks under one agent token waiting for a person at once.
    pub asks_per_token: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            header_timeout: Some(Duration::from_secs(10)),
            idle_timeout: Some(Duration::from_secs(120)),
            max_connections: 4096,
            asks_per_session: 16,
            asks_per_token: 64,
        }
    }
}

impl Limits {
    /// No timeout and no cap (the benchmark's baseline).
    pub fn none() -> Limits {
        Limits {
            header_timeout: None,
            idle_timeout: None,
            max_connections: usize::MAX >> 4,
            asks_per_session: usize::MAX,
            asks_per_token: usize::MAX,
        }
    }

    fn tick(&self) -> Option<Duration> {
        let shortest = [self.header_timeout, self.idle_timeout]
            .into_iter()
            .flatten()
            .min()?;
        Some((shortest / 4).clamp(Duration::from_millis(10), TICK_MAX))
    }
}

/// Serves `router` on `listener` until `stop` turns true, then lets the
/// connections finish their requests (each closes once it holds none).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let cap = fitted_cap(limits.max_connections);
    let seats = Arc::new(Semaphore::new(cap));
    let limits = Arc::new(limits);
    let builder = Arc::new(auto::Builder::new(TokioExecutor::new()));
    let mut conns = JoinSet::new();
    loop {
        let seat = tokio::select! {
            seat = seats.clone().acquire_owned() => seat.expect("never closed"),
            _ = stopped(&mut stop) => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => continue,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    accept_failed(&e).await;
                    continue;
                }
            },
            _ = stopped(&mut stop) => break,
        };
        let conn = Conn {
            router: router.clone(),
            builder: builder.clone(),
            limits: limits.clone(),
            seats: seats.clone(),
            stop: stop.clone(),
        };
        conns.spawn(conn.run(stream, seat));
    }
    drop(listener);
    while conns.join_next().await.is_some() {}
    Ok(())
}

/// The connection cap, under the open-file limit (raised to its hard
/// limit first, as the server may need many descriptors).
fn fitted_cap(wanted: usize) -> usize {
    let soft = raise_nofile();
    let room = soft.saturating_sub(FD_RESERVE).max(16);
    let cap = wanted.min(usize::try_from(room).unwrap_or(usize::MAX));
    if cap < wanted && wanted < Limits::none().max_connections {
        crate::ops::write_line(
            crate::ops::LogFormat::Text,
            "warn",
            "connection cap lowered to fit the open-file limit",
            &[("max_connections", cap.into()), ("nofile", soft.into())],
        );
    }
    cap.max(1)
}

/// Raises the soft open-file limit to the hard one; returns the soft limit.
fn raise_nofile() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    lim.rlim_cur
}

/// An `accept` error: a connection that failed before it was taken is
/// skipped; anything else (out of descriptors) is logged and waited out.
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind::*;
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | ConnectionRefused
    ) {
        return;
    }
    crate::ops::write_line(
        crate::ops::LogFormat::Text,
        "warn",
        "accept failed",
        &[("error", e.to_string().into())],
    );
    tokio::time::sleep(ACCEPT_RETRY).await;
}

/// What a connection's task needs.
struct Conn {
    router: Router,
    builder: Arc<auto::Builder<TokioExecutor>>,
    limits: Arc<Limits>,
    seats: Arc<Semaphore>,
    stop: watch::Receiver<bool>,
}

impl Conn {
    /// Serves one connection until it ends, times out, or the server
    /// stops (then its requests finish and it closes).
    async fn run(mut self, stream: TcpStream, _seat: tokio::sync::OwnedSemaphorePermit) {
        let _ = stream.set_nodelay(true);
        let activity = Arc::new(Activity::new());
        let io = TokioIo::new(Watched {
            inner: stream,
            activity: activity.clone(),
        });
        let service = service(self.router.clone(), activity.clone());
        let conn = self.builder.serve_connection(io, service);
        tokio::pin!(conn);
        let mut tick = self.limits.tick().map(|t| {
            let mut i = tokio::time::interval(t);
            i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            i
        });
        let mut stopping = false;
        loop {
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = stopped(&mut self.stop), if !stopping => {
                    stopping = true;
                    conn.as_mut().graceful_shutdown();
                }
                _ = next_tick(&mut tick) => {
                    let crowded = self.seats.available_permits() == 0;
                    if activity.expired(&self.limits, crowded) {
                        // Dropping the connection closes its socket.
                        return;
                    }
                }
            }
        }
    }
}

/// Resolves once the server stops.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

async fn next_tick(tick: &mut Option<tokio::time::Interval>) {
    match tick {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// The router as a hyper service that counts the connection's requests in
/// flight (until their response body ends).
fn service(
    router: Router,
    activity: Arc<Activity>,
) -> impl hyper::service::Service<
    hyper::Request<Incoming>,
    Response = hyper::Response<Tracked>,
    Error = Infallible,
    Future = impl Future<Output = Result<hyper::Response<Tracked>, Infallible>> + Send,
> + Clone {
    hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let busy = Busy::begin(activity.clone());
        let mut router = router.clone();
        let res = tower_service::Service::call(&mut router, req.map(Body::new));
        async move {
            let res = res.await?;
            Ok(res.map(|body| Tracked { body, _busy: busy }))
        }
    })
}

/// Milliseconds since the first connection, for [`Activity`]'s stamps.
fn now_ms() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// What a connection is doing, as its timeouts need it.
struct Activity {
    /// Requests whose response has not ended.
    in_flight: AtomicU32,
    /// Bytes of a new request came while none was in flight.
    reading: AtomicBool,
    /// When the connection last held no request (opened, or its last
    /// response ended), or, while `reading`, when those bytes began.
    since: AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            in_flight: AtomicU32::new(0),
            reading: AtomicBool::new(false),
            since: AtomicU64::new(now_ms()),
        }
    }

    /// Bytes arrived: a request's head begins, unless one is in flight.
    fn read(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0 && !self.reading.load(Ordering::Relaxed) {
            self.since.store(now_ms(), Ordering::Relaxed);
            self.reading.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the connection holds no request and has outlived its
    /// timeout (a short one while the connection cap is reached).
    fn expired(&self, limits: &Limits, crowded: bool) -> bool {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return false;
        }
        let waited = Duration::from_millis(now_ms() - self.since.load(Ordering::Relaxed));
        let limit = if self.reading.load(Ordering::Relaxed) {
            limits.header_timeout
        } else {
            limits.idle_timeout
        };
        limit.is_some_and(|l| waited >= l) || (crowded && waited >= SHED_AFTER)
    }
}

/// A request in flight on its connection, from its head until its
/// response body is dropped.
struct Busy(Arc<Activity>);

impl Busy {
    fn begin(activity: Arc<Activity>) -> Busy {
        activity.in_flight.fetch_add(1, Ordering::Relaxed);
        activity.reading.store(false, Ordering::Relaxed);
        Busy(activity)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.since.store(now_ms(), Ordering::Relaxed);
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A response body that keeps its request counted until it ends.
pub struct Tracked {
    body: Body,
    _busy: Busy,
}

impl HttpBody for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The socket, noting when a request's first bytes arrive.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_expires_only_when_it_holds_no_request() {
        let limits = Limits {
            header_timeout: Some(Duration::ZERO),
            idle_timeout: None,
            ..Limits::default()
        };
        let a = Activity::new();
        assert!(!a.expired(&limits, false), "idle, no idle timeout");
        a.read();
        assert!(a.expired(&limits, false), "a head begun, past its timeout");
        let busy = Busy::begin(Arc::new(Activity::new()));
        assert!(!busy.0.expired(&limits, true), "a request in flight");
        let idle = busy.0.clone();
        drop(busy);
        assert!(!idle.expired(&limits, false));
        std::thread::sleep(SHED_AFTER);
        assert!(idle.expired(&limits, true), "shed when crowded");
    }
}
