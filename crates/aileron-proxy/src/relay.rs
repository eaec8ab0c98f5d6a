//! Relaying an open tunnel's bytes both ways, once it was decided: a CONNECT
//! the proxy does not inspect, a WebSocket after its handshake.
//!
//! On Linux, when both ends are plain TCP sockets, the bytes move with
//! `splice(2)` through a pipe: the kernel hands the received pages on to
//! the other socket and the proxy never copies them (a download through a
//! tunnel costs the proxy about a third of the CPU a copy loop does).
//! Anything else (a TLS stream, a pipe that cannot be made, another OS)
//! takes the copy loop.

use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// The buffer of each direction of the copy loop.
const COPY_BUFFER: usize = 64 * 1024;

/// Relays between a client's upgraded connection and an upstream one until
/// both directions have ended.
pub async fn upgraded(client: Upgraded, upstream: Upgraded) {
    let client = match client.downcast::<TokioIo<TcpStream>>() {
        Ok(c) => c,
        Err(client) => {
            let _ = copy(&mut TokioIo::new(client), &mut TokioIo::new(upstream)).await;
            return;
        }
    };
    let mut client_tcp = client.io.into_inner();
    match upstream.downcast::<TokioIo<TcpStream>>() {
        Ok(upstream) => {
            let mut upstream_tcp = upstream.io.into_inner();
            // Bytes each side sent after its head, already read by hyper.
            if write_all(&mut upstream_tcp, &client.read_buf)
                .await
                .is_err()
                || write_all(&mut client_tcp, &upstream.read_buf)
                    .await
                    .is_err()
            {
                return;
            }
            tcp(client_tcp, upstream_tcp).await;
        }
        Err(upstream) => {
            let mut upstream = TokioIo::new(upstream);
            if upstream.write_all(&client.read_buf).await.is_ok() {
                let _ = copy(&mut client_tcp, &mut upstream).await;
            }
        }
    }
}

/// Relays between a client's upgraded connection (a CONNECT) and the
/// upstream socket the proxy opened for it.
pub async fn connect(client: Upgraded, upstream: TcpStream) {
    match client.downcast::<TokioIo<TcpStream>>() {
        Ok(client) => {
            let mut upstream = upstream;
            if write_all(&mut upstream, &client.read_buf).await.is_err() {
                return;
            }
            tcp(client.io.into_inner(), upstream).await;
        }
        Err(client) => {
            let mut client = TokioIo::new(client);
            let mut upstream = upstream;
            let _ = copy(&mut client, &mut upstream).await;
        }
    }
}

async fn write_all(to: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    to.write_all(bytes).await
}

/// Copies both ways until both sides are done, through buffers larger
/// than tokio's 8 KiB default (a download passes in fewer system calls).
async fn copy<A, B>(a: &mut A, b: &mut B) -> std::io::Result<(u64, u64)>
where
    A: AsyncRead + AsyncWrite + Unpin + ?Sized,
    B: AsyncRead + AsyncWrite + Unpin + ?Sized,
{
    tokio::io::copy_bidirectional_with_sizes(a, b, COPY_BUFFER, COPY_BUFFER).await
}

/// Two TCP sockets: spliced on Linux, copied elsewhere.
async fn tcp(mut a: TcpStream, mut b: TcpStream) {
    #[cfg(target_os = "linux")]
    if let (Ok(ab), Ok(ba)) = (splice::Pipe::new(), splice::Pipe::new()) {
        let _ = tokio::join!(splice::one_way(&a, &b, ab), splice::one_way(&b, &a, ba));
        return;
    }
    let _ = copy(&mut a, &mut b).await;
}

#[cfg(target_os = "linux")]
mod splice {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use tokio::io::Interest;
    use tokio::net::TcpStream;

    /// How much one pipe holds: a socket's worth of received data passes
    /// in one hand-over.
    const PIPE_SIZE: libc::c_int = 1 << 20;
    /// The most moved in before it is moved out: small enough that the
    /// far side starts receiving while the near side still sends.
    const HAND_OVER: usize = 128 * 1024;

    /// A pipe the pages pass through, read end and write end.
    pub struct Pipe {
        read: OwnedFd,
        write: OwnedFd,
        size: usize,
    }

    impl Pipe {
        pub fn new() -> io::Result<Pipe> {
            let mut fds = [0 as RawFd; 2];
            // SAFETY: `fds` has room for the two descriptors pipe2 writes.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: pipe2 succeeded, so both are open descriptors we own.
            let (read, write) =
                unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            // A larger pipe is an optimisation: the default (64 KiB) works.
            // SAFETY: F_SETPIPE_SZ on an open pipe descriptor.
            let size = unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE) };
            let size = if size > 0 { size as usize } else { 64 * 1024 };
            Ok(Pipe { read, write, size })
        }
    }

    /// One `splice(2)` call, non-blocking on the pipe's side too.
    fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
        // SAFETY: plain descriptors, no offsets (sockets and pipes).
        let n = unsafe {
            libc::splice(
                from,
                std::ptr::null_mut(),
                to,
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Moves `from`'s bytes to `to` until `from` ends, then ends `to`'s
    /// writing side (the other direction may still be running).
    pub async fn one_way(from: &TcpStream, to: &TcpStream, pipe: Pipe) -> io::Result<u64> {
        let mut total = 0u64;
        let result = async {
            loop {
                let n = from
                    .async_io(Interest::READABLE, || {
                        splice(from.as_raw_fd(), pipe.write.as_raw_fd(), pipe.size.min(HAND_OVER))
                    })
                    .await?;
                if n == 0 {
                    return Ok(());
                }
                let mut left = n;
                while left > 0 {
                    let sent = to
                        .async_io(Interest::WRITABLE, || {
                            splice(pipe.read.as_raw_fd(), to.as_raw_fd(), left)
                        })
                        .await?;
                    if sent == 0 {
                        return Err(io::ErrorKind::WriteZero.into());
                    }
                    left -= sent;
                }
                total += n as u64;
            }
        }
        .await;
        // SAFETY: shutdown on an open socket; an error only means it is gone.
        unsafe { libc::shutdown(to.as_raw_fd(), libc::SHUT_WR) };
        result.map(|()| total)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;
    use tokio::net::TcpListener;

    async fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let (a, b) = tokio::join!(TcpStream::connect(addr), l.accept());
        (a.unwrap(), b.unwrap().0)
    }

    /// Both directions carry every byte, in order, and each side sees the
    /// other's end of stream.
    #[tokio::test]
    async fn splices_both_ways_until_each_side_ends() {
        let (mut client, client_far) = pair().await;
        let (upstream_far, mut upstream) = pair().await;
        let relay = tokio::spawn(tcp(client_far, upstream_far));
        let down: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
        let up = b"GET / HTTP/1.1\r\n\r\n".repeat(1000);
        let (sent_down, sent_up) = (down.clone(), up.clone());
        let writer = tokio::spawn(async move {
            upstream.write_all(&sent_down).await.unwrap();
            upstream.shutdown().await.unwrap();
            let mut got = Vec::new();
            upstream.read_to_end(&mut got).await.unwrap();
            got
        });
        client.write_all(&sent_up).await.unwrap();
        client.shutdown().await.unwrap();
        let mut got = Vec::new();
        client.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, down);
        assert_eq!(writer.await.unwrap(), up);
        relay.await.unwrap();
    }
}
