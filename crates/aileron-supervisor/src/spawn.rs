//! Starting the agent under enforcement.
//!
//! Between fork and exec the child takes on, in this order: its private
//! mount namespace with Aileron's files read-only (`files`), no new
//! privileges, the Landlock domain, and the seccomp filter, whose listener
//! it sends to the supervisor over a socket pair. It then forks once more:
//! the agent is the grandchild, and the child only waits for it and exits
//! with its status. That keeps the agent's own execs (a launcher script
//! that execs `node`) away from `aileron launch`'s wait for its child, so
//! the supervisor can watch them like any other. If `aileron launch` dies,
//! the child and then the agent are killed (`PR_SET_PDEATHSIG`); the
//! agent's descendants live on, but every exec they try fails (`ENOSYS`:
//! the filter's listener is gone). The child is also the tree's child
//! subreaper: orphans are re-parented to it, not to init, and it reaps
//! them ([`keep_orphans`] gives an unenforced launch the same).

use crate::files::Lockdown;
use crate::{Enforce, Error, filter};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// Starts `cmd` under `enforce`; with `exec`, `on_listener` gets the
/// filter's listener (on another thread) before the agent's first exec,
/// which waits for it.
pub fn spawn(
    mut cmd: Command,
    program: &str,
    enforce: Enforce,
    lockdown: Option<Lockdown>,
    on_listener: impl FnOnce(OwnedFd) + Send + 'static,
) -> Result<Child, Error> {
    let (parent_sock, child_sock) = socket_pair()?;
    let prog = filter::program(enforce.exec);
    let exec = enforce.exec;
    let receiver = if exec {
        Some(std::thread::spawn(move || {
            if let Some(fd) = receive_fd(&parent_sock) {
                on_listener(fd);
            }
        }))
    } else {
        drop(parent_sock);
        None
    };
    let child_fd = child_sock.as_raw_fd();
    let lockdown = lockdown.map(std::sync::Arc::new);
    let in_child = lockdown.clone();
    // SAFETY: the closure runs in the forked child and makes only system
    // calls on memory prepared before the fork (no allocation, no locks).
    unsafe {
        cmd.pre_exec(move || {
            if let Some(l) = &in_child {
                l.enter()?;
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(l) = &in_child {
                l.restrict()?;
            }
            let fd = filter::install(&prog, exec);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if exec {
                let sent = send_fd(child_fd, fd);
                libc::close(fd);
                sent?;
            }
            libc::close(child_fd);
            fork_keeper()
        });
    }
    let child = cmd.spawn().map_err(|source| Error::Spawn {
        program: program.to_owned(),
        source,
    });
    drop(child_sock);
    if child.is_err()
        && let Some(r) = receiver
    {
        let _ = r.join();
    }
    child
}

/// Starts `cmd` (without enforcement) with the same middle process as
/// [`spawn`]: the tree's orphans stay in the session (see [`fork_keeper`]).
pub fn keep_orphans(cmd: &mut Command) {
    // SAFETY: the closure makes only system calls (no allocation, no locks).
    unsafe { cmd.pre_exec(|| fork_keeper()) };
}

/// In the forked child: makes it the tree's child subreaper and forks the
/// agent. Returns in the agent; the child stays as the middle process,
/// which adopts every orphan of the tree, so that a process that double
/// forks or daemonizes is still a descendant of `aileron launch` (the
/// session refuses its descendants as approvers), and reaps them.
///
/// # Safety
/// Only between fork and exec.
unsafe fn fork_keeper() -> std::io::Result<()> {
    // SAFETY: plain system calls in a forked child.
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let parent = libc::getpid();
        match libc::fork() {
            -1 => Err(std::io::Error::last_os_error()),
            0 => {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            }
            agent => wait_and_exit(agent),
        }
    }
}

/// The middle process: reaps the tree's orphans until the agent ends, and
/// exits as it did.
unsafe fn wait_and_exit(agent: libc::pid_t) -> ! {
    // SAFETY: plain system calls in a forked child.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        // The agent answers the terminal's signals; this process outlives it.
        for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTSTP, libc::SIGHUP] {
            libc::signal(sig, libc::SIG_IGN);
        }
        // Including the pipe on which std learns that the exec happened.
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        loop {
            let mut status = 0;
            // Any child: the agent, or an orphan adopted (never left a zombie).
            let r = libc::waitpid(-1, &mut status, libc::__WALL);
            if r == agent {
                if libc::WIFEXITED(status) {
                    libc::_exit(libc::WEXITSTATUS(status));
                }
                if libc::WIFSIGNALED(status) {
                    libc::_exit(128 + libc::WTERMSIG(status));
                }
            } else if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(1);
            }
        }
    }
}

fn socket_pair() -> Result<(OwnedFd, OwnedFd), Error> {
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

/// Sends descriptor `fd` over `sock`; no allocation (runs after fork).
fn send_fd(sock: i32, fd: i32) -> std::io::Result<()> {
    let mut byte = [0u8; 1];
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

fn receive_fd(sock: &OwnedFd) -> Option<OwnedFd> {
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
        Some(OwnedFd::from_raw_fd(fd))
    }
}
