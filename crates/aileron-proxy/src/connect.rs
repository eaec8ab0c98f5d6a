//! Reaching the upstream: a name is resolved once, and an address that is
//! the proxy's own (or Aileron's server's) is refused before any byte is
//! sent, whatever name led to it.

use hyper_util::rt::TokioIo;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::net::TcpStream;

/// Addresses requests must never be forwarded to.
#[derive(Clone, Debug, Default)]
pub struct Refused(pub Arc<Vec<SocketAddr>>);

impl Refused {
    /// Whether `addr` is one of them (an unspecified listen address stands
    /// for every local address on its port).
    pub fn covers(&self, addr: &SocketAddr) -> bool {
        let addr = SocketAddr::new(reached(addr.ip()), addr.port());
        self.0.iter().any(|own| {
            own.port() == addr.port()
                && (own.ip() == addr.ip()
                    || (own.ip().is_unspecified() && (addr.ip().is_loopback() || is_local(&addr))))
        })
    }
}

/// The address a connection to `ip` reaches: an IPv4-mapped IPv6 address
/// is the IPv4 one, and an unspecified one (`0.0.0.0`, `::`) this host's
/// loopback, as the kernel routes it.
fn reached(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(a) if a.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(a) if a.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    }
}

fn is_local(addr: &SocketAddr) -> bool {
    std::net::TcpListener::bind(SocketAddr::new(addr.ip(), 0)).is_ok()
}

/// Opens a TCP connection to `host:port`, refusing the proxy's own addresses.
pub async fn open(host: &str, port: u16, refused: &Refused) -> std::io::Result<TcpStream> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port)).await?.collect();
    if addrs.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("`{host}` has no address"),
        ));
    }
    if let Some(own) = addrs.iter().find(|a| refused.covers(a)) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{host}:{port} is {own}, Aileron's own address: not forwarded"),
        ));
    }
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                set_buffer(&s, libc::SO_RCVBUF);
                return Ok(s);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::ErrorKind::NotConnected.into()))
}

/// The connector of the forwarding clients: [`open`] for each new connection.
#[derive(Clone, Debug, Default)]
pub struct Guarded {
    pub refused: Refused,
}

impl tower_service::Service<http::Uri> for Guarded {
    type Response = TokioIo<TcpStream>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let refused = self.refused.clone();
        Box::pin(async move {
            let host = uri
                .host()
                .ok_or_else(|| std::io::Error::other("no host to connect to"))?
                .trim_matches(['[', ']'])
                .to_owned();
            let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
                Some("https") | Some("wss") => 443,
                _ => 80,
            });
            open(&host, port, &refused).await.map(TokioIo::new)
        })
    }
}

/// Socket buffers of this size: a download passes with fewer wake-ups of
/// the proxy between its two sockets.
const SOCKET_BUFFER: libc::c_int = 1 << 20;

/// Sets `option` (`SO_RCVBUF` / `SO_SNDBUF`) of `socket` to [`SOCKET_BUFFER`].
pub fn set_buffer(socket: &impl std::os::fd::AsRawFd, option: libc::c_int) {
    let size = SOCKET_BUFFER;
    // SAFETY: a valid descriptor and a c_int option value of the right size.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}
