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

use crate::fdpass::{receive_fd, send_fd, socket_pair};
use crate::files::Lockdown;
use crate::supervise::Listener;
use crate::{Enforce, Error, filter};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// What the parent receives from the child, on another thread.
pub struct Received<B, L> {
    /// Gets the listeners the box made in its network namespace, in the
    /// order of [`crate::files::Spec::listen`].
    pub on_box_listeners: B,
    /// With `exec`, gets the filter's listener (and, in a box with a
    /// network of its own, a window on its sockets) before the agent's
    /// first exec, which waits for it.
    pub on_listener: L,
}

/// Starts `cmd` under `enforce` and the `lockdown`.
pub fn spawn<B, L>(
    mut cmd: Command,
    program: &str,
    enforce: Enforce,
    lockdown: Option<Lockdown>,
    received: Received<B, L>,
) -> Result<Child, Error>
where
    B: FnOnce(Vec<OwnedFd>) + Send + 'static,
    L: FnOnce(Listener) + Send + 'static,
{
    let (parent_sock, child_sock) = socket_pair()?;
    let exec = enforce.exec;
    let listeners = lockdown.as_ref().map_or(0, Lockdown::listeners);
    // The supervisor makes the tree's connections where it can tell the
    // box's own sockets from the host's: in a network namespace of its own.
    let sockets = exec && lockdown.as_ref().is_some_and(Lockdown::own_network);
    let prog = filter::program(exec, sockets);
    let receiver = if exec || listeners > 0 {
        Some(std::thread::spawn(move || {
            let got: Vec<OwnedFd> = (0..listeners)
                .map_while(|_| receive_fd(&parent_sock))
                .collect();
            if got.len() == listeners && listeners > 0 {
                (received.on_box_listeners)(got);
            }
            let box_network = if sockets {
                match receive_fd(&parent_sock) {
                    Some(fd) => Some(fd),
                    None => return,
                }
            } else {
                None
            };
            if exec && let Some(notify) = receive_fd(&parent_sock) {
                (received.on_listener)(Listener {
                    notify,
                    box_network,
                });
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
                // (Before it: a process that is not dumpable cannot write
                // its own id maps.)
                l.enter(child_fd)?;
                if sockets {
                    let diag = crate::sockets::diag_socket()?;
                    let sent = send_fd(child_fd, diag.as_raw_fd());
                    drop(diag);
                    sent?;
                }
                not_dumpable()?;
                // This process stays outside the tree's PID namespace; its
                // child is the namespace's first process and goes on.
                fork_first(l)?;
                l.mount_proc();
                l.read_new_proc();
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
            not_dumpable()?;
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

/// The processes that never exec hold a copy of `aileron launch`'s memory
/// (its environment, the approver key): not dumpable, the tree cannot read
/// their /proc/PID/mem or environ. The agent is made dumpable again before
/// its exec ([`fork_keeper`]), for the supervisor to read it.
///
/// # Safety
/// Only between fork and exec.
unsafe fn not_dumpable() -> std::io::Result<()> {
    // SAFETY: a prctl on this process.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Starts `cmd` (without enforcement) with the same middle process as
/// [`spawn`]: the tree's orphans stay in the session (see [`fork_keeper`]).
pub fn keep_orphans(cmd: &mut Command) {
    // SAFETY: the closure makes only system calls (no allocation, no locks).
    unsafe { cmd.pre_exec(|| fork_keeper()) };
}

/// In the forked child, after it unshared a PID namespace: forks the
/// namespace's first process, which returns; this process only waits for
/// it and exits as it did. When the first process ends (its agent ended,
/// or `aileron launch` died and it was killed), the kernel kills every
/// process left in the namespace: nothing of the tree outlives the session.
///
/// # Safety
/// Only between fork and exec.
unsafe fn fork_first(lockdown: &Lockdown) -> std::io::Result<()> {
    // SAFETY: plain system calls in a forked child.
    unsafe {
        match libc::fork() {
            -1 => Err(std::io::Error::last_os_error()),
            0 => {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                // The parent is in another namespace: it reads as 0 here.
                if libc::getppid() != 0 {
                    libc::_exit(1);
                }
                Ok(())
            }
            first => wait_and_exit(first, Some(lockdown)),
        }
    }
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
                // The agent, about to exec: the supervisor (the same user,
                // without CAP_SYS_PTRACE) reads its exec from its memory.
                libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
                Ok(())
            }
            agent => wait_and_exit(agent, None),
        }
    }
}

/// How often the process outside the tree's PID namespace covers again
/// what the host uncovered ([`Lockdown::cover_again`]).
const COVER_EVERY: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 20_000_000,
};

/// Waits [`COVER_EVERY`] or until `changes` (an inotify descriptor, or
/// -1) reports a change, which it drains.
///
/// # Safety
/// Only between fork and exec.
unsafe fn wait_for_change(changes: i32) {
    // SAFETY: plain system calls on a stack buffer.
    unsafe {
        if changes < 0 {
            libc::nanosleep(&COVER_EVERY, std::ptr::null_mut());
            return;
        }
        let mut pfd = libc::pollfd {
            fd: changes,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = (COVER_EVERY.tv_nsec / 1_000_000) as i32;
        if libc::poll(&mut pfd, 1, ms) > 0 {
            let mut buf = [0u8; 4096];
            while libc::read(changes, buf.as_mut_ptr().cast(), buf.len()) > 0 {}
        }
    }
}

/// The middle process: reaps the tree's orphans until the agent ends, and
/// exits as it did; with `guard`, it also keeps the box's mounts in place.
unsafe fn wait_and_exit(agent: libc::pid_t, guard: Option<&Lockdown>) -> ! {
    // SAFETY: plain system calls in a forked child.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        // The agent answers the terminal's signals; this process outlives it.
        for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTSTP, libc::SIGHUP] {
            libc::signal(sig, libc::SIG_IGN);
        }
        // Including the pipe on which std learns that the exec happened.
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        // A rename over a locked path wakes the guard at once.
        let changes = guard.map_or(-1, |l| l.watch());
        loop {
            let mut status = 0;
            // Any child: the agent, or an orphan adopted (never left a zombie).
            let r = match guard {
                Some(l) => {
                    let r = libc::waitpid(-1, &mut status, libc::__WALL | libc::WNOHANG);
                    if r == 0 {
                        l.cover_again();
                        wait_for_change(changes);
                        continue;
                    }
                    r
                }
                None => libc::waitpid(-1, &mut status, libc::__WALL),
            };
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
