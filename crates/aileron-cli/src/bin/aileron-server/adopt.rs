//! `--adopt-listeners FD`: listening sockets made in another network
//! namespace (the box's, by `aileron launch`) that a gateway accepts on
//! as on its own: no relay process, no bytes copied.
//!
//! FD is an inherited Unix `SOCK_SEQPACKET` socket. Each message on it
//! carries one descriptor (`SCM_RIGHTS`): a TCP socket already bound and
//! listening. Each is served by the gateway's own accept loop, beside its
//! `--listen` socket; anything else is refused with one line on stderr and
//! closed. The end of the channel only stops the reading.

use aileron_cli::Error;
use std::future::Future;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

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
        serve: Arc<F>,
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

    fn receive<F, Fut>(self, name: &str, runtime: &tokio::runtime::Handle, serve: &Arc<F>)
    where
        F: Fn(tokio::net::TcpListener) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        while let Some(fd) = sys::receive(&self.0) {
            let listener = match sys::listening_tcp(fd) {
                Ok(l) => l,
                Err(why) => {
                    eprintln!("{name}: refused an adopted descriptor: {why}");
                    continue;
                }
            };
            let serve = Arc::clone(serve);
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

#[cfg(target_os = "linux")]
mod sys {
    use std::os::fd::{AsRawFd, OwnedFd};

    /// Whether `fd` is a Unix `SOCK_SEQPACKET` socket.
    pub fn check_channel(fd: &OwnedFd) -> Result<(), String> {
        let kind = (sockopt(fd, libc::SO_DOMAIN), sockopt(fd, libc::SO_TYPE));
        match kind {
            (Ok(libc::AF_UNIX), Ok(libc::SOCK_SEQPACKET)) => Ok(()),
            (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
            _ => Err("not a Unix SOCK_SEQPACKET socket".into()),
        }
    }

    /// The next descriptor sent; None at the channel's end.
    pub fn receive(channel: &OwnedFd) -> Option<OwnedFd> {
        aileron_supervisor::fdpass::receive_fd(channel)
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

    pub fn check_channel(_: &OwnedFd) -> Result<(), String> {
        Err(LINUX_ONLY.into())
    }

    pub fn receive(_: &OwnedFd) -> Option<OwnedFd> {
        None
    }

    pub fn listening_tcp(_: OwnedFd) -> Result<std::net::TcpListener, String> {
        Err(LINUX_ONLY.into())
    }
}
