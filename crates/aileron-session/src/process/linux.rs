//! Linux: a pidfd's description where the kernel gives one, else `/proc`.

use super::ProcStat;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// Asks the kernel through a pidfd (four cheap calls) where it can, else
/// reads `/proc/PID/stat`, which the kernel composes field by field at
/// each read (about 30 µs, the largest cost of a supervised exec before).
pub(super) fn read(pid: u32) -> std::io::Result<Option<ProcStat>> {
    match pidfs::read(pid) {
        Some(found) => found.map(Some),
        None => read_proc(pid),
    }
}

fn read_proc(pid: u32) -> std::io::Result<Option<ProcStat>> {
    let stat = read_proc_file(&format!("/proc/{pid}/stat"))?;
    let Some(fields) = StatFields::parse(&stat) else {
        return Ok(None);
    };
    // A task alone in its process is its leader; otherwise ask
    // `status` (several times dearer to produce).
    let tgid = if fields.threads <= 1 {
        Some(pid)
    } else {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|v| v.trim().parse().ok())
    };
    Ok(tgid.map(|tgid| ProcStat {
        ppid: fields.ppid,
        tgid,
        start: fields.start,
    }))
}

pub(super) fn exe(pid: u32) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe"))
}

pub(super) fn cwd(pid: u32) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd"))
}

/// `SO_PEERCRED`: the process that connected.
pub(super) fn peer_pid(stream: &UnixStream) -> Option<u32> {
    let cred: libc::ucred = super::socket_option(stream, libc::SOL_SOCKET, libc::SO_PEERCRED)?;
    (cred.pid > 0).then_some(cred.pid as u32)
}

/// `SO_PASSPIDFD`, `SCM_PIDFD` (asm-generic/socket.h, Linux 6.5).
const SO_PASSPIDFD: libc::c_int = 76;
const SCM_PIDFD: libc::c_int = 0x04;

/// Asks the kernel to attach to each message on the sockets `listener`
/// accepts the process that sent it (`SO_PASSCRED`, and `SO_PASSPIDFD`
/// where the kernel has it).
pub(super) fn pass_sender(listener: &std::os::unix::net::UnixListener) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    for (name, required) in [(libc::SO_PASSCRED, true), (SO_PASSPIDFD, false)] {
        // SAFETY: on is an int, as the option expects.
        let r = unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                libc::SOL_SOCKET,
                name,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r != 0 && required {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Reads the first bytes on `stream` into `buf`, with the process that
/// sent them (`SCM_CREDENTIALS`, `SCM_PIDFD`): the sender, not the process
/// that connected, which in a box is the supervisor.
pub(super) fn read_with_sender(
    stream: &UnixStream,
    buf: &mut [u8],
) -> std::io::Result<(usize, Option<super::Sender>)> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    #[repr(C, align(8))]
    struct Control([u8; 128]);
    let mut control = Control([0; 128]);
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: an all-zero msghdr is valid; the buffers are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = control.0.len() as _;
    let n = loop {
        // SAFETY: msg describes the buffers above.
        let n = unsafe { libc::recvmsg(stream.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 {
            break n as usize;
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    };
    let (mut pid, mut pidfd) = (None, None);
    // SAFETY: the kernel wrote msg_controllen bytes of cmsgs; each is read
    // within its length.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let data = libc::CMSG_DATA(c);
            if (*c).cmsg_level == libc::SOL_SOCKET {
                if (*c).cmsg_type == libc::SCM_CREDENTIALS {
                    let cred: libc::ucred = std::ptr::read_unaligned(data.cast());
                    pid = (cred.pid > 0).then_some(cred.pid as u32);
                } else if (*c).cmsg_type == SCM_PIDFD {
                    let fd: libc::c_int = std::ptr::read_unaligned(data.cast());
                    if fd >= 0 {
                        pidfd = Some(OwnedFd::from_raw_fd(fd));
                    }
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n, pid.map(|pid| super::Sender { pid, pidfd })))
}

/// Whether `sender` is `root` or descends from it (see [`peer_descends_from`]).
pub(super) fn sender_descends_from(sender: super::Sender, root: u32) -> Result<bool, String> {
    let task = match sender.pidfd {
        Some(fd) => Pinned {
            pid: sender.pid,
            fd: Some(fd),
        },
        None => Pinned::open(sender.pid)?,
    };
    descends_from(task, root)
}

/// `PR_SET_CHILD_SUBREAPER`: orphans of this process's tree are
/// re-parented to it instead of to init.
pub(super) fn keep_orphans() -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the process at the other end of `stream` descends from `root`
/// (or is it). Each step holds the process by a pidfd, so a number reused
/// by a new process is never taken for the one that connected or for its
/// parent: the peer's pidfd comes from the socket (`SO_PEERPIDFD`, Linux
/// 6.5; before, `pidfd_open` of its number at once), and a parent counts
/// only if the child still has it after the parent's pidfd is open (a
/// parent that ended meanwhile would have had its children re-parented).
pub(super) fn peer_descends_from(stream: &UnixStream, root: u32) -> Result<bool, String> {
    let pid = peer_pid(stream).ok_or("the system does not say which process connected")?;
    descends_from(Pinned::peer(stream, pid)?, root)
}

/// Whether `task` is `root` or descends from it, each step held by a pidfd.
fn descends_from(mut task: Pinned, root: u32) -> Result<bool, String> {
    // A parent that changes under the walk is read again, a few times.
    let mut retries = 8;
    for _ in 0..4096 {
        if task.pid == root {
            return Ok(true);
        }
        if task.pid <= 1 {
            return Ok(false);
        }
        let ppid = task.ppid()?;
        // 0: a parent outside this pid namespace, so not this session.
        if ppid == 0 {
            return Ok(false);
        }
        let parent = Pinned::open(ppid)?;
        if task.ppid()? == ppid {
            task = parent;
        } else if retries == 0 {
            return Err(format!("the parents of process {} keep changing", task.pid));
        } else {
            retries -= 1;
        }
    }
    Err("its parents go on without end".to_owned())
}

/// `SO_PEERPIDFD`: a pidfd of the process that connected.
fn peer_pidfd(stream: &UnixStream) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let mut fd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: fd and len describe a buffer of an int's size.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERPIDFD,
            (&mut fd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if fd < 0 {
        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A process and, where the kernel has pidfds (Linux 5.3), a pidfd that
/// names it and no other.
struct Pinned {
    pid: u32,
    fd: Option<std::os::fd::OwnedFd>,
}

impl Pinned {
    /// The process that connected on `stream`, as number `pid`.
    fn peer(stream: &UnixStream, pid: u32) -> Result<Pinned, String> {
        match peer_pidfd(stream) {
            Ok(fd) => Ok(Pinned { pid, fd: Some(fd) }),
            // Older than Linux 6.5: by its number, now.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOPROTOOPT | libc::EINVAL)) => {
                Pinned::open(pid)
            }
            Err(e) => Err(format!(
                "the process that connected cannot be held ({e}); it may have ended"
            )),
        }
    }

    /// Process `pid` as it is now.
    fn open(pid: u32) -> Result<Pinned, String> {
        use std::os::fd::{FromRawFd, OwnedFd};
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd >= 0 {
            // SAFETY: the descriptor was just opened and is ours alone.
            let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
            return Ok(Pinned { pid, fd: Some(fd) });
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            // Older than Linux 5.3: the number alone.
            Some(libc::ENOSYS) => Ok(Pinned { pid, fd: None }),
            _ => Err(format!("process {pid} cannot be held ({e})")),
        }
    }

    /// Its parent now: from its pidfd where the kernel describes one,
    /// else from `/proc`, read while the pidfd shows it still runs (so
    /// the number was still its own).
    fn ppid(&self) -> Result<u32, String> {
        let gone = |e: std::io::Error| format!("process {} cannot be read ({e})", self.pid);
        if let Some(fd) = &self.fd
            && let Some(info) = pidfs::describe_fd(fd, self.pid)
        {
            return info.map(|i| i.ppid).map_err(gone);
        }
        self.ppid_by_proc()
    }

    /// Its parent as `/proc` says, kept only if its pidfd (where there
    /// is one) shows it did not end meanwhile.
    fn ppid_by_proc(&self) -> Result<u32, String> {
        let gone = |e: std::io::Error| format!("process {} cannot be read ({e})", self.pid);
        let stat = read_proc(self.pid)
            .map_err(gone)?
            .ok_or_else(|| format!("process {} is described in a form not known", self.pid))?;
        if let Some(fd) = &self.fd {
            pidfs::alive(fd).map_err(gone)?;
        }
        Ok(stat.ppid)
    }
}

/// The fields of `/proc/PID/stat` the supervisor uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct StatFields {
    ppid: u32,
    /// Threads of its process.
    threads: u32,
    /// Clock ticks after boot.
    start: u64,
}

impl StatFields {
    /// Parses the file's text; None when it is not what the kernel writes.
    fn parse(stat: &[u8]) -> Option<StatFields> {
        // The command name (field 2) may hold any byte but ')', so fields
        // are counted from the last ')'.
        let close = stat.iter().rposition(|&b| b == b')')?;
        let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // fields[0] is field 3 (state): ppid is 4, num_threads 20, starttime 22.
        let number = |i: usize| fields.get(i)?.parse::<u64>().ok();
        Some(StatFields {
            ppid: u32::try_from(number(1)?).ok()?,
            threads: u32::try_from(number(17)?).ok()?,
            start: number(19)?,
        })
    }
}

/// Processes described through their pidfd (`PIDFD_GET_INFO`, Linux 6.13)
/// and named by their pidfs inode (unique since Linux 6.9 on 64-bit).
mod pidfs {
    use super::ProcStat;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::sync::OnceLock;

    /// `struct pidfd_info` as of its first version (64 bytes).
    #[repr(C)]
    #[derive(Default)]
    struct PidfdInfo {
        mask: u64,
        cgroupid: u64,
        pid: u32,
        tgid: u32,
        ppid: u32,
        ids: [u32; 8],
        exit_code: i32,
    }

    const PIDFD_INFO_PID: u64 = 1;
    /// `_IOWR(PIDFS_IOCTL_MAGIC, 11, struct pidfd_info)`.
    const PIDFD_GET_INFO: libc::c_ulong = (3 << 30) | (64 << 16) | (0xFF << 8) | 11;
    /// `PIDFD_THREAD` (`O_EXCL`): a pidfd for a thread, not only a leader.
    const PIDFD_THREAD: libc::c_int = libc::O_EXCL;

    /// `None` where this kernel cannot describe a pidfd: use `/proc` then.
    pub(super) fn read(pid: u32) -> Option<std::io::Result<ProcStat>> {
        works().then(|| describe(pid))
    }

    /// Whether this kernel describes a pidfd (asked once).
    fn works() -> bool {
        static WORKS: OnceLock<bool> = OnceLock::new();
        *WORKS.get_or_init(|| describe(std::process::id()).is_ok())
    }

    fn describe(pid: u32) -> std::io::Result<ProcStat> {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, PIDFD_THREAD) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the descriptor was just opened and is ours alone.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        describe_open(&fd, pid)
    }

    /// What pidfd `fd` (of process `pid`) says; `None` where this kernel
    /// cannot describe a pidfd.
    pub(super) fn describe_fd(fd: &OwnedFd, pid: u32) -> Option<std::io::Result<ProcStat>> {
        works().then(|| describe_open(fd, pid))
    }

    /// Whether the process of pidfd `fd` has not been reaped (signal 0).
    pub(super) fn alive(fd: &OwnedFd) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: signal 0 through a pidfd we own only checks the process.
        let r = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd.as_raw_fd(),
                0,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    fn describe_open(fd: &OwnedFd, pid: u32) -> std::io::Result<ProcStat> {
        use std::os::fd::AsRawFd;
        let mut info = PidfdInfo {
            mask: PIDFD_INFO_PID,
            ..PidfdInfo::default()
        };
        // SAFETY: info is a pidfd_info of the size the request encodes.
        if unsafe { libc::ioctl(fd.as_raw_fd(), PIDFD_GET_INFO, &mut info as *mut PidfdInfo) } != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        if info.mask & PIDFD_INFO_PID == 0 || info.pid != pid {
            return Err(std::io::Error::other("the pidfd describes another task"));
        }
        // SAFETY: an all-zero stat is valid for fstat to fill.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: st is a stat buffer, fd a descriptor we own.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(ProcStat {
            ppid: info.ppid,
            tgid: info.tgid,
            start: st.st_ino,
        })
    }
}

/// A `/proc` file, whole. Its size is not known before it is read (the
/// kernel writes it as it is read), so it is read into a buffer that
/// grows, without the size probe `std::fs::read` makes: these are read
/// for every exec the supervisor decides.
pub fn read_proc_file(path: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut out = vec![0u8; 4096];
    let mut len = 0;
    loop {
        if len == out.len() {
            out.resize(len * 2, 0);
        }
        match file.read(&mut out[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    out.truncate(len);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let line = b"42 (a) b (c)) S 7 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 3 0 987 0 0";
        assert_eq!(
            StatFields::parse(line),
            Some(StatFields {
                ppid: 7,
                threads: 3,
                start: 987
            })
        );
        assert_eq!(StatFields::parse(b"42 (a) S"), None);
    }

    #[test]
    fn proc_says_what_a_pidfd_says() {
        // Where the kernel has no pidfd description, /proc says the same.
        let me = read(std::process::id()).unwrap().unwrap();
        let by_proc = read_proc(std::process::id()).unwrap().unwrap();
        assert_eq!((by_proc.ppid, by_proc.tgid), (me.ppid, me.tgid));
    }

    /// A child that connects to `path` and waits until the other end
    /// closes (or, with `stay` false, ends at once); its pid.
    fn connecting_child(path: &std::path::Path, stay: bool) -> libc::pid_t {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: sockaddr_un is plain data; the path fits (a temp dir).
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, s) in addr.sun_path.iter_mut().zip(path.as_os_str().as_bytes()) {
            *d = *s as libc::c_char;
        }
        // SAFETY: the child makes only system calls on memory prepared
        // before the fork, then exits.
        unsafe {
            match libc::fork() {
                0 => {
                    let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                    let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
                    if libc::connect(fd, (&addr as *const libc::sockaddr_un).cast(), len) != 0 {
                        libc::_exit(2);
                    }
                    let mut b = 0u8;
                    if stay {
                        libc::read(fd, (&mut b as *mut u8).cast(), 1);
                    }
                    libc::_exit(0)
                }
                pid => pid,
            }
        }
    }

    #[test]
    fn a_child_is_of_this_tree_and_not_of_another() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let pid = connecting_child(&path, true);
        let (stream, _) = listener.accept().unwrap();
        let me = std::process::id();
        assert_eq!(peer_descends_from(&stream, me), Ok(true));
        assert_eq!(peer_descends_from(&stream, pid as u32), Ok(true));
        let mut other = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert_eq!(peer_descends_from(&stream, other.id()), Ok(false));
        other.kill().unwrap();
        other.wait().unwrap();
        drop(stream);
        // SAFETY: reaps our own child.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    }

    #[test]
    fn proc_names_the_parent_the_pidfd_names_while_the_process_lives() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let held = Pinned::open(child.id()).unwrap();
        assert!(held.fd.is_some());
        assert_eq!(held.ppid(), Ok(std::process::id()));
        assert_eq!(held.ppid_by_proc(), Ok(std::process::id()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(held.ppid().is_err());
        assert!(held.ppid_by_proc().is_err());
    }

    #[test]
    fn a_peer_that_is_gone_is_refused_not_let_through() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let pid = connecting_child(&path, false);
        let (stream, _) = listener.accept().unwrap();
        // SAFETY: reaps our own child: its number may now be anyone's.
        unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
        let got = peer_descends_from(&stream, std::process::id());
        assert!(got.is_err(), "{got:?}");
    }

    #[test]
    fn a_thread_names_its_process_as_its_group() {
        let pid = std::process::id();
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: gettid cannot fail.
            tx.send(unsafe { libc::gettid() } as u32).unwrap();
            done_rx.recv().ok();
        });
        let tid2 = rx.recv().unwrap();
        let seen = read(tid2).unwrap().unwrap();
        done_tx.send(()).unwrap();
        t.join().unwrap();
        assert_eq!(seen.tgid, pid);
        assert_ne!(tid2, pid);
    }
}
