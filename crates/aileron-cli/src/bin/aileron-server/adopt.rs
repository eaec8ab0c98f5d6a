//! `--adopt-listeners FD`: listening sockets made in another network
//! namespace (the box's, by `aileron launch`) that a gateway accepts on
//! as on its own: no relay process, no bytes copied.
//!
//! FD is an inherited Unix `SOCK_SEQPACKET` socket. Each message on it
//! carries one descriptor (`SCM_RIGHTS`): a TCP socket already bound and
//! listening. Each is served by the gateway's own accept loop, beside its
//! `--listen` socket; anything else is refused with one line on stderr and
//! closed. The end of the channel only stops the reading.
//!
//! A message whose byte is `fdpass::FOR_DNS` carries instead one of the
//! box's DNS sockets (UDP, or a listening TCP socket), answered by the
//! proxy's DNS responder; a gateway without one refuses it.

use aileron_cli::Error;
use std::future::Future;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

/// One of the box's DNS sockets, handed over to be answered (made only
/// where listeners are adopted: Linux).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub enum DnsSocket {
    Udp(tokio::net::UdpSocket),
    Tcp(tokio::net::TcpListener),
}

/// What answers the box's DNS sockets (the proxy's responder).
pub type ServeDns =
    Arc<dyn Fn(DnsSocket) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// What a gateway serves the descriptors it adopts with.
pub struct Servers<F> {
    pub gateway: Arc<F>,
    pub dns: Option<ServeDns>,
}

/// The channel listeners arrive on.
pub struct Channel(OwnedFd);

impl Channel {
    /// Takes inherited descriptor `fd`: refused unless it is an open Unix
    /// `SOCK_SEQPACKET` socket (and not a standard stream).
    pub fn inherit(fd: i32) -> Result<Channel, Error> {
        let refuse = |why: String| Error::Io {
            action: "adopt listeners from",
            path: PathBuf::from(format!("descriptor {fd}")),
            source: std::io::Error::other(why),
        };
        if fd <= 2 {
            return Err(refuse("a standard stream".into()));
        }
        // SAFETY: F_GETFD only asks whether the descriptor is open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            return Err(refuse(std::io::Error::last_os_error().to_string()));
        }
        // SAFETY: open (checked above) and handed to this process to own.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        // Not passed on to anything this process starts.
        // SAFETY: a valid descriptor.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        sys::check_channel(&owned).map_err(refuse)?;
        Ok(Channel(owned))
    }

    /// Receives listeners on a thread of its own (receiving blocks) until
    /// the channel ends, each served by `serve` on `runtime`; `name`
    /// begins the line that refuses a descriptor.
    pub fn serve_each<F, Fut>(
        self,
        name: String,
        runtime: tokio::runtime::Handle,
        serve: Servers<F>,
    ) -> Result<(), Error>
    where
        F: Fn(tokio::net::TcpListener) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        std::thread::Builder::new()
            .name("adopt-listeners".into())
            .spawn(move || self.receive(&name, &runtime, &serve))
            .map(drop)
            .map_err(|source| Error::Io {
                action: "start the thread that adopts listeners from",
                path: PathBuf::from("--adopt-listeners"),
                source,
            })
    }

    fn receive<F, Fut>(self, name: &str, runtime: &tokio::runtime::Handle, serve: &Servers<F>)
    where
        F: Fn(tokio::net::TcpListener) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        while let Some((fd, what)) = sys::receive(&self.0) {
            if what == sys::FOR_DNS {
                match (&serve.dns, sys::dns_socket(fd)) {
                    (Some(dns), Ok(socket)) => serve_dns(runtime, dns, socket),
                    (None, _) => eprintln!(
                        "{name}: refused an adopted descriptor: this gateway answers no DNS"
                    ),
                    (_, Err(why)) => eprintln!("{name}: refused an adopted DNS socket: {why}"),
                }
                continue;
            }
            let listener = match sys::listening_tcp(fd) {
                Ok(l) => l,
                Err(why) => {
                    eprintln!("{name}: refused an adopted descriptor: {why}");
                    continue;
                }
            };
            let serve = Arc::clone(&serve.gateway);
            let name = name.to_owned();
            runtime.spawn(async move {
                match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => serve(l).await,
                    Err(e) => eprintln!("{name}: cannot accept on an adopted listener: {e}"),
                }
            });
        }
    }
}

/// Answers `socket` with `dns` on `runtime` (the tokio socket is made
/// there: it needs the runtime's reactor).
fn serve_dns(runtime: &tokio::runtime::Handle, dns: &ServeDns, socket: sys::Dns) {
    let dns = Arc::clone(dns);
    runtime.spawn(async move {
        match socket.into_tokio() {
            Ok(s) => dns(s).await,
            Err(e) => eprintln!("aileron proxy: cannot answer on an adopted DNS socket: {e}"),
        }
    });
}

#[cfg(target_os = "linux")]
mod sys {
    use std::os::fd::{AsRawFd, OwnedFd};

    pub use aileron_supervisor::fdpass::FOR_DNS;

    /// A DNS socket handed over: UDP, or a listening TCP socket.
    pub enum Dns {
        Udp(std::net::UdpSocket),
        Tcp(std::net::TcpListener),
    }

    impl Dns {
        /// The socket for tokio (in the runtime: it needs its reactor).
        pub fn into_tokio(self) -> std::io::Result<super::DnsSocket> {
            use super::DnsSocket;
            match self {
                Dns::Udp(s) => tokio::net::UdpSocket::from_std(s).map(DnsSocket::Udp),
                Dns::Tcp(l) => tokio::net::TcpListener::from_std(l).map(DnsSocket::Tcp),
            }
        }
    }

    /// Whether `fd` is a Unix `SOCK_SEQPACKET` socket.
    pub fn check_channel(fd: &OwnedFd) -> Result<(), String> {
        let kind = (sockopt(fd, libc::SO_DOMAIN), sockopt(fd, libc::SO_TYPE));
        match kind {
            (Ok(libc::AF_UNIX), Ok(libc::SOCK_SEQPACKET)) => Ok(()),
            (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
            _ => Err("not a Unix SOCK_SEQPACKET socket".into()),
        }
    }

    /// The next descriptor sent and what it is for; None at the channel's end.
    pub fn receive(channel: &OwnedFd) -> Option<(OwnedFd, u8)> {
        aileron_supervisor::fdpass::receive_fd_for(channel)
    }

    /// `fd` as a DNS socket: a bound IPv4 or IPv6 UDP socket, or a
    /// listening TCP one; otherwise why not (`fd` is closed).
    pub fn dns_socket(fd: OwnedFd) -> Result<Dns, String> {
        let family = sockopt(&fd, libc::SO_DOMAIN).map_err(|e| format!("not a socket ({e})"))?;
        if family != libc::AF_INET && family != libc::AF_INET6 {
            return Err(format!("not an IP socket (address family {family})"));
        }
        let kind = (sockopt(&fd, libc::SO_TYPE), sockopt(&fd, libc::SO_PROTOCOL));
        if !matches!(kind, (Ok(libc::SOCK_DGRAM), Ok(libc::IPPROTO_UDP))) {
            return listening_tcp(fd).map(Dns::Tcp);
        }
        let udp = std::net::UdpSocket::from(fd);
        if udp.local_addr().map_or(true, |a| a.port() == 0) {
            return Err("a UDP socket that is not bound".into());
        }
        udp.set_nonblocking(true)
            .map_err(|e| format!("cannot make it non-blocking ({e})"))?;
        Ok(Dns::Udp(udp))
    }

    /// `fd` as a listener, if it is a listening TCP socket (IPv4 or
    /// IPv6); otherwise why not (`fd` is closed).
    pub fn listening_tcp(fd: OwnedFd) -> Result<std::net::TcpListener, String> {
        let family = sockopt(&fd, libc::SO_DOMAIN).map_err(|e| format!("not a socket ({e})"))?;
        if family != libc::AF_INET && family != libc::AF_INET6 {
            return Err(format!("not an IP socket (address family {family})"));
        }
        let tcp = (sockopt(&fd, libc::SO_TYPE), sockopt(&fd, libc::SO_PROTOCOL));
        if !matches!(tcp, (Ok(libc::SOCK_STREAM), Ok(libc::IPPROTO_TCP))) {
            return Err("not a TCP socket".into());
        }
        if sockopt(&fd, libc::SO_ACCEPTCONN).ok() != Some(1) {
            return Err("a TCP socket that is not listening".into());
        }
        let listener = std::net::TcpListener::from(fd);
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("cannot make it non-blocking ({e})"))?;
        Ok(listener)
    }

    /// An integer socket option at `SOL_SOCKET`.
    fn sockopt(fd: &OwnedFd, name: libc::c_int) -> std::io::Result<libc::c_int> {
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: a valid descriptor and an int-sized buffer with its length.
        let r = unsafe {
            libc::getsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                name,
                (&mut value as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if r == -1 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(value)
    }
}

/// Listeners come from the box, which only Linux has.
#[cfg(not(target_os = "linux"))]
mod sys {
    use std::os::fd::OwnedFd;

    const LINUX_ONLY: &str = "listeners are adopted on Linux only";

    pub const FOR_DNS: u8 = 1;

    /// Never made: nothing is adopted elsewhere.
    pub enum Dns {}

    impl Dns {
        pub fn into_tokio(self) -> std::io::Result<super::DnsSocket> {
            match self {}
        }
    }

    pub fn dns_socket(_: OwnedFd) -> Result<Dns, String> {
        Err(LINUX_ONLY.into())
    }

    pub fn check_channel(_: &OwnedFd) -> Result<(), String> {
        Err(LINUX_ONLY.into())
    }

    pub fn receive(_: &OwnedFd) -> Option<(OwnedFd, u8)> {
        None
    }

    pub fn listening_tcp(_: OwnedFd) -> Result<std::net::TcpListener, String> {
        Err(LINUX_ONLY.into())
    }
}
