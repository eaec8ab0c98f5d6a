//! Passing descriptors between processes over a Unix socket pair
//! (`SCM_RIGHTS`), one descriptor a message: the seccomp listener and the
//! box's in-namespace listeners from the agent's child to `aileron
//! launch`, and those listeners on to the gateways that accept on them.
//! Sending allocates nothing, so it may run between fork and exec.

use crate::Error;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A connected pair of `SOCK_SEQPACKET` sockets (message boundaries kept),
/// both close-on-exec.
pub fn socket_pair() -> Result<(OwnedFd, OwnedFd), Error> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(Error::SocketPair(std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are ours.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

const CMSG_SPACE: usize = 24; // CMSG_SPACE(sizeof(int)) on 64-bit Linux

/// Room for one descriptor's control message, aligned as `cmsghdr`.
#[repr(C, align(8))]
struct Control([u8; CMSG_SPACE]);

fn iovec(byte: &mut [u8; 1]) -> libc::iovec {
    libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    }
}

/// A one-byte message with room for one descriptor; `iov` and `control`
/// must outlive its use. No allocation (used after fork).
fn message(iov: &mut libc::iovec, control: &mut Control) -> libc::msghdr {
    // SAFETY: msghdr is plain data; all-zero is a valid empty message.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = CMSG_SPACE as _;
    msg
}

/// What a descriptor handed to a gateway is for: the message's one byte.
/// A listener the gateway serves as its own.
pub const FOR_GATEWAY: u8 = 0;
/// A socket of the box's DNS (UDP, or a TCP listener), which the proxy
/// answers (`aileron_proxy::dns`).
pub const FOR_DNS: u8 = 1;

/// Sends descriptor `fd` over `sock`; no allocation (runs after fork).
pub fn send_fd(sock: i32, fd: i32) -> std::io::Result<()> {
    send_fd_for(sock, fd, FOR_GATEWAY)
}

/// Sends descriptor `fd` over `sock`, the message's byte saying what it
/// is `for` ([`FOR_GATEWAY`], [`FOR_DNS`]); no allocation.
pub fn send_fd_for(sock: i32, fd: i32, what: u8) -> std::io::Result<()> {
    let mut byte = [what];
    let mut iov = iovec(&mut byte);
    let mut buf = Control([0; CMSG_SPACE]);
    let msg = message(&mut iov, &mut buf);
    // SAFETY: the control buffer holds one cmsg with room for an int.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(4) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>(), fd);
        if libc::sendmsg(sock, &msg, 0) != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The next descriptor sent over `sock`; None when the other end closed
/// or the message held none.
pub fn receive_fd(sock: &OwnedFd) -> Option<OwnedFd> {
    receive_fd_for(sock).map(|(fd, _)| fd)
}

/// The next descriptor sent over `sock` and what it is for (the byte of
/// [`send_fd_for`]); None when the other end closed or the message held none.
pub fn receive_fd_for(sock: &OwnedFd) -> Option<(OwnedFd, u8)> {
    let mut byte = [0u8; 1];
    let mut iov = iovec(&mut byte);
    let mut buf = Control([0; CMSG_SPACE]);
    let mut msg = message(&mut iov, &mut buf);
    // SAFETY: recvmsg fills the buffers described by msg.
    unsafe {
        if libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) != 1 {
            return None;
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<i32>());
        Some((OwnedFd::from_raw_fd(fd), byte[0]))
    }
}
