//! What the system says about a process: who it is and who its parent is
//! ([`ProcStat`]), the program it runs, its working directory, and which
//! process is at the other end of a Unix socket.
//!
//! Linux answers through pidfds and `/proc` (`linux.rs`), macOS through
//! libproc and `LOCAL_PEERPID` (`macos.rs`). Elsewhere every question is
//! an error (`other.rs`), and each caller refuses what it cannot check:
//! an `aileron approve` whose process is not known is turned away, a shim
//! whose program is not known gets no context.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "linux")]
pub use linux::read_proc_file;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod other;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
use other as imp;

use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// Who a process (or a thread) is: its parent, its thread group, and an
/// identity that names it even after its number is reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    pub ppid: u32,
    /// The thread group (process) the task belongs to.
    pub tgid: u32,
    /// The task's identity. On Linux its pidfs inode number where the
    /// kernel describes a pidfd (Linux 6.13+; never reused while it runs),
    /// else its start time in clock ticks after boot (`/proc/PID/stat`):
    /// one kind per kernel, so the two are never compared. On macOS its
    /// unique id (`p_uniqueid`, never reused until the next boot).
    pub start: u64,
}

impl ProcStat {
    /// Asks the kernel who `pid` is. `Ok(None)` when its answer cannot be
    /// read (a malformed `/proc` file); an error when there is no such
    /// process or the system cannot say.
    pub fn read(pid: u32) -> std::io::Result<Option<ProcStat>> {
        imp::read(pid)
    }
}

/// A process's identity ([`ProcStat::start`]).
pub fn start_time(pid: u32) -> Option<u64> {
    Some(ProcStat::read(pid).ok()??.start)
}

/// The program file `pid` runs.
pub fn exe(pid: u32) -> std::io::Result<PathBuf> {
    imp::exe(pid)
}

/// The working directory of `pid`.
pub fn cwd(pid: u32) -> std::io::Result<PathBuf> {
    imp::cwd(pid)
}

/// The process at the other end of `stream`, as the kernel recorded it
/// when it connected (`SO_PEERCRED`, `LOCAL_PEERPID`); `None` where the
/// system does not say.
pub fn peer_pid(stream: &UnixStream) -> Option<u32> {
    imp::peer_pid(stream)
}

/// The process that sent a message on a Unix socket, as the kernel
/// attached it to the message (Linux), or as it connected (elsewhere).
pub struct Sender {
    pub pid: u32,
    /// A pidfd of it, where the kernel attached one (`SCM_PIDFD`).
    #[cfg(target_os = "linux")]
    pidfd: Option<std::os::fd::OwnedFd>,
}

/// Makes each message on the sockets `listener` accepts carry the process
/// that sent it: a connection the box's supervisor made for the tree
/// (`aileron_supervisor::sockets`) has the supervisor as its peer, so the
/// session's servers ask the sender. Nothing to do elsewhere.
pub fn pass_sender(listener: &std::os::unix::net::UnixListener) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    return linux::pass_sender(listener);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = listener;
        Ok(())
    }
}

/// Reads the first bytes on `stream` into `buf`, and the process that sent
/// them; `None` where the system does not say (callers refuse).
pub fn read_with_sender(
    stream: &UnixStream,
    buf: &mut [u8],
) -> std::io::Result<(usize, Option<Sender>)> {
    #[cfg(target_os = "linux")]
    return linux::read_with_sender(stream, buf);
    #[cfg(not(target_os = "linux"))]
    {
        use std::io::Read;
        let n = (&*stream).read(buf)?;
        Ok((n, peer_pid(stream).map(|pid| Sender { pid })))
    }
}

/// Whether `sender` is `root` or one of its descendants (see
/// [`peer_descends_from`]).
pub fn sender_descends_from(sender: Sender, root: u32) -> Result<bool, String> {
    #[cfg(target_os = "linux")]
    return linux::sender_descends_from(sender, root);
    #[cfg(not(target_os = "linux"))]
    parents_lead_to(sender.pid, root)
}

/// Makes this process the child subreaper of the tree it starts: an
/// orphan of that tree is re-parented to it, not to init, so it stays a
/// descendant. Linux only (`PR_SET_CHILD_SUBREAPER`); an error elsewhere.
pub fn keep_orphans() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    return linux::keep_orphans();
    #[cfg(not(target_os = "linux"))]
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "only Linux keeps a tree's orphans (PR_SET_CHILD_SUBREAPER)",
    ))
}

/// Whether the process that connected on `stream` is `root` or one of its
/// descendants; an error says why that cannot be told (callers refuse).
/// On Linux each step holds the process by a pidfd (see `linux.rs`);
/// elsewhere the parents are read by number (a process that double forks
/// leaves the tree there: no subreaper).
pub fn peer_descends_from(stream: &UnixStream, root: u32) -> Result<bool, String> {
    #[cfg(target_os = "linux")]
    return linux::peer_descends_from(stream, root);
    #[cfg(not(target_os = "linux"))]
    {
        let pid = peer_pid(stream).ok_or("the system does not say which process connected")?;
        parents_lead_to(pid, root)
    }
}

/// Whether the parents of `pid` lead to `root`, read by number.
#[cfg(not(target_os = "linux"))]
fn parents_lead_to(pid: u32, root: u32) -> Result<bool, String> {
    let mut p = pid;
    for _ in 0..4096 {
        if p == root {
            return Ok(true);
        }
        if p <= 1 {
            return Ok(false);
        }
        p = match ProcStat::read(p) {
            Ok(Some(stat)) => stat.ppid,
            Ok(None) => return Err(format!("process {p} is described in a form not known")),
            Err(e) => return Err(format!("process {p} cannot be read ({e})")),
        };
    }
    Err("its parents go on without end".to_owned())
}

/// The option `name` of `stream`'s socket at `level`, a value of type `T`
/// (plain integers), when the system gives one of that size.
#[cfg(any(target_os = "linux", target_os = "macos"))]
fn socket_option<T>(stream: &UnixStream, level: libc::c_int, name: libc::c_int) -> Option<T> {
    use std::os::fd::AsRawFd;
    let mut value = std::mem::MaybeUninit::<T>::zeroed();
    let size = std::mem::size_of::<T>();
    let mut len = size as libc::socklen_t;
    // SAFETY: value and len describe a buffer of the size passed.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            level,
            name,
            value.as_mut_ptr().cast(),
            &mut len,
        )
    };
    // SAFETY: the system filled it; every bit pattern is valid for T.
    (r == 0 && len as usize == size).then(|| unsafe { value.assume_init() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_named_the_same_by_each_read_and_differently_from_another() {
        let me = ProcStat::read(std::process::id()).unwrap().unwrap();
        assert_eq!(me.tgid, std::process::id());
        // SAFETY: getppid cannot fail.
        assert_eq!(me.ppid, unsafe { libc::getppid() } as u32);
        assert_eq!(ProcStat::read(std::process::id()).unwrap(), Some(me));
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let other = ProcStat::read(child.id()).unwrap().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!((other.ppid, other.tgid), (std::process::id(), child.id()));
        assert_ne!(other.start, me.start);
        // Gone: no description.
        assert!(ProcStat::read(child.id()).is_err());
    }

    #[test]
    fn a_process_runs_its_program_in_its_directory() {
        let me = std::process::id();
        assert_eq!(
            exe(me).unwrap().canonicalize().unwrap(),
            std::env::current_exe().unwrap().canonicalize().unwrap()
        );
        assert_eq!(
            cwd(me).unwrap().canonicalize().unwrap(),
            std::env::current_dir().unwrap().canonicalize().unwrap()
        );
    }

    #[test]
    fn a_socket_names_the_process_that_connected() {
        let (a, b) = UnixStream::pair().unwrap();
        assert_eq!(peer_pid(&a), Some(std::process::id()));
        assert_eq!(peer_pid(&b), Some(std::process::id()));
    }
}
