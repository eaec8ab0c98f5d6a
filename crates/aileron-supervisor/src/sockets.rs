//! The connections the tree makes, made by the supervisor.
//!
//! A Unix socket is a file: a process of the box could reach a service of
//! the host (`docker.sock`, an `ssh-agent`, D-Bus) through its path, across
//! the network namespace, and Landlock (before its Unix-socket right) does
//! not stop it. The sockets of the host that exist at launch are covered
//! by the box's mounts; one the host makes later, in a place the tree can
//! reach, is not. So the filter stops every `connect` (and every `sendto`
//! that names an address) and the supervisor makes the call itself, on
//! the caller's own socket (`pidfd_getfd`):
//!
//! - a Unix path is resolved as the caller would (its root, its working
//!   directory), and connected only if the socket was bound in the box's
//!   network namespace (a `sock_diag` dump of it), is one of the session's
//!   own, or is one the policy opens (`settings.enforce.sockets`);
//! - any other address (TCP, UDP, an abstract name, which the box's own
//!   namespace scopes) is passed on as read.
//!
//! The supervisor connects to the file it checked (`/proc/self/fd/N` of
//! its `O_PATH` descriptor), never to the caller's memory again: a thread
//! that rewrites the address, or renames another socket over the path,
//! after the check gains nothing. The peer then sees the supervisor as
//! the process that connected (`SO_PEERCRED`); the session's own servers
//! read the sender of each message instead (`SO_PASSCRED`).

use std::collections::HashSet;
use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The largest address a caller may give (`struct sockaddr_storage`).
const MAX_ADDRESS: usize = std::mem::size_of::<libc::sockaddr_storage>();
/// The largest datagram `sendto` copies from the caller.
const MAX_DATAGRAM: usize = 1 << 20;

/// What the supervisor answers a stopped socket call with.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// The call's return value.
    Value(i64),
    /// The call fails with this error, as the kernel would have failed it.
    Errno(i32),
    /// Refused (`EACCES`): the socket is the host's; the audit log says why.
    Refused { path: PathBuf, why: String },
}

/// The sockets the tree may connect to, and how to tell the box's own.
pub struct Sockets {
    /// A `NETLINK_SOCK_DIAG` socket made in the box's network namespace.
    diag: Mutex<OwnedFd>,
    /// Directories whose sockets are the session's own (its runtime
    /// directory): reachable from the box.
    session_dirs: Vec<PathBuf>,
    /// Host sockets the policy opens (`settings.enforce.sockets`).
    opened: Vec<PathBuf>,
}

/// A socket file's identity, as `stat` and `sock_diag` both give it.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
struct FileId {
    major: u32,
    minor: u32,
    /// The low 32 bits of the inode number (`unix_diag_vfs` carries no more).
    ino: u32,
}

impl FileId {
    fn of(st: &libc::stat) -> FileId {
        FileId {
            major: libc::major(st.st_dev),
            minor: libc::minor(st.st_dev),
            ino: st.st_ino as u32,
        }
    }
}

impl Sockets {
    pub fn new(diag: OwnedFd, session_dirs: Vec<PathBuf>, opened: Vec<PathBuf>) -> Sockets {
        Sockets {
            diag: Mutex::new(diag),
            session_dirs,
            opened,
        }
    }

    /// `connect(fd, addr, len)` of process `pid`, made on its socket.
    /// `valid` says whether the stopped call still stands (checked once
    /// the caller's socket is held, so that its number was not reused).
    pub fn connect(&self, pid: u32, args: [u64; 6], valid: impl Fn() -> bool) -> Answer {
        let (sock, address) = match self.take(pid, args[0], args[1], args[2], &valid) {
            Ok(got) => got,
            Err(answer) => return answer,
        };
        // SAFETY: address holds len bytes of a socket address.
        let r = unsafe { libc::connect(sock.as_raw_fd(), address.as_ptr(), address.len()) };
        result(r as i64)
    }

    /// `sendto(fd, buf, len, flags, addr, addrlen)` with an address: the
    /// datagram is copied and sent from the caller's socket.
    pub fn sendto(&self, pid: u32, args: [u64; 6], valid: impl Fn() -> bool) -> Answer {
        let len = args[2] as usize;
        if len > MAX_DATAGRAM {
            return Answer::Errno(libc::EMSGSIZE);
        }
        let mut data = vec![0u8; len];
        if crate::proc::read_memory(pid, args[1], &mut data).is_err() {
            return Answer::Errno(libc::EFAULT);
        }
        let (sock, address) = match self.take(pid, args[0], args[4], args[5], &valid) {
            Ok(got) => got,
            Err(answer) => return answer,
        };
        // SAFETY: data and address are buffers of the lengths given.
        let r = unsafe {
            libc::sendto(
                sock.as_raw_fd(),
                data.as_ptr().cast(),
                data.len(),
                args[3] as i32 | libc::MSG_NOSIGNAL,
                address.as_ptr(),
                address.len(),
            )
        };
        result(r as i64)
    }

    /// The caller's socket and the address to use: its own, or, for a
    /// Unix path, the checked file's.
    fn take(
        &self,
        pid: u32,
        fd: u64,
        addr: u64,
        len: u64,
        valid: &impl Fn() -> bool,
    ) -> Result<(OwnedFd, Address), Answer> {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > MAX_ADDRESS {
            return Err(Answer::Errno(libc::EINVAL));
        }
        let mut bytes = vec![0u8; len];
        if crate::proc::read_memory(pid, addr, &mut bytes).is_err() {
            return Err(Answer::Errno(libc::EFAULT));
        }
        let sock = caller_socket(pid, fd as i32, valid)?;
        let address = match unix_path(&bytes) {
            Some(path) => self.checked(pid, path)?,
            None => Address::Raw(bytes),
        };
        Ok((sock, address))
    }

    /// The box's path to a socket, resolved as process `pid` would, and
    /// allowed, as an address naming the file that was checked.
    fn checked(&self, pid: u32, path: &[u8]) -> Result<Address, Answer> {
        let named = PathBuf::from(OsStr::from_bytes(path));
        let file = open_as(pid, &named).map_err(|e| Answer::Errno(errno(&e)))?;
        let st = fstat(&file).map_err(|e| Answer::Errno(errno(&e)))?;
        // Not a socket: the kernel answers that itself (ECONNREFUSED).
        if st.st_mode & libc::S_IFMT == libc::S_IFSOCK && !self.reachable(FileId::of(&st)) {
            return Err(Answer::Refused {
                why: format!(
                    "the box closes the host's Unix socket {} (settings.enforce.sockets opens one)",
                    named.display()
                ),
                path: named,
            });
        }
        Ok(Address::file(file))
    }

    /// Whether the tree may connect to the socket file `id`.
    fn reachable(&self, id: FileId) -> bool {
        let host = self
            .opened
            .iter()
            .cloned()
            .chain(self.session_dirs.iter().flat_map(|d| {
                std::fs::read_dir(d)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
            }))
            .any(|p| stat(&p).is_ok_and(|st| FileId::of(&st) == id));
        host || self.bound_in_box().is_ok_and(|ids| ids.contains(&id))
    }

    /// The files of the Unix sockets bound in the box's network namespace.
    fn bound_in_box(&self) -> std::io::Result<HashSet<FileId>> {
        let diag = self.diag.lock().unwrap_or_else(|e| e.into_inner());
        diag::bound(diag.as_raw_fd())
    }
}

/// An address to give the kernel.
enum Address {
    /// The caller's bytes, as read.
    Raw(Vec<u8>),
    /// A socket file, held open while `/proc/self/fd/N` names it.
    File {
        _held: OwnedFd,
        address: libc::sockaddr_un,
    },
}

impl Address {
    fn file(fd: OwnedFd) -> Address {
        // SAFETY: an all-zero sockaddr_un is valid.
        let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        a.sun_family = libc::AF_UNIX as libc::sa_family_t;
        let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
        for (d, s) in a.sun_path.iter_mut().zip(path.bytes()) {
            *d = s as libc::c_char;
        }
        Address::File {
            _held: fd,
            address: a,
        }
    }

    /// A `sockaddr` of [`Address::len`] bytes, valid while `self` lives.
    fn as_ptr(&self) -> *const libc::sockaddr {
        match self {
            Address::Raw(b) => b.as_ptr().cast(),
            Address::File { address, .. } => (address as *const libc::sockaddr_un).cast(),
        }
    }

    fn len(&self) -> libc::socklen_t {
        match self {
            Address::Raw(b) => b.len() as libc::socklen_t,
            Address::File { .. } => std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
        }
    }
}

/// The path of a Unix address naming a file (not an abstract name, not
/// an unnamed socket), up to its NUL as the kernel reads it.
fn unix_path(bytes: &[u8]) -> Option<&[u8]> {
    let family = u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]);
    if i32::from(family) != libc::AF_UNIX {
        return None;
    }
    let path = &bytes[2..];
    if path.first().is_none_or(|&b| b == 0) {
        return None;
    }
    let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
    Some(&path[..end])
}

/// `pidfd_open`'s flag for a thread's own pidfd (Linux 6.9).
const PIDFD_THREAD: libc::c_int = libc::O_EXCL;

/// The caller's descriptor `fd`, duplicated into this process. `pid` is
/// the calling thread's id: a thread that is not its process's first
/// (Node's and dig's resolvers connect from one) needs a thread pidfd,
/// which kernels before 6.9 do not make (the first thread's then).
fn caller_socket(pid: u32, fd: i32, valid: &impl Fn() -> bool) -> Result<OwnedFd, Answer> {
    // SAFETY: pidfd_open takes a pid and flags.
    let mut pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, PIDFD_THREAD) };
    if pidfd < 0 {
        // SAFETY: as above.
        pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    }
    if pidfd < 0 {
        return Err(Answer::Errno(libc::ESRCH));
    }
    // SAFETY: the descriptor was just opened and is ours alone.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as i32) };
    if !valid() {
        return Err(Answer::Errno(libc::ESRCH));
    }
    // SAFETY: pidfd_getfd takes a pidfd, a descriptor number and flags.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        let e = std::io::Error::last_os_error();
        return Err(Answer::Errno(errno(&e)));
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(got as i32) })
}

/// Opens `path` (`O_PATH`) as process `pid` sees it: from its root, in
/// its mount namespace, a relative path from its working directory.
/// Magic links (`/proc/self/fd/…`) would be this process's: refused.
fn open_as(pid: u32, path: &Path) -> std::io::Result<OwnedFd> {
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd"))?;
        if !cwd.is_absolute() {
            return Err(std::io::Error::from_raw_os_error(libc::EACCES));
        }
        cwd.join(path)
    };
    let root = open_path(Path::new(&format!("/proc/{pid}/root")), -1, 0)?;
    open_path(
        &full,
        root.as_raw_fd(),
        RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
    )
}

const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_IN_ROOT: u64 = 0x10;

/// `openat2(dir, path, O_PATH | O_CLOEXEC, resolve)` (`dir` -1: the cwd).
fn open_path(path: &Path, dir: i32, resolve: u64) -> std::io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: an all-zero open_how is valid (no flags, no resolve).
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
    how.resolve = resolve;
    let dir = if dir < 0 { libc::AT_FDCWD } else { dir };
    // SAFETY: c is a C string and how an open_how of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn fstat(fd: &OwnedFd) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero stat is valid; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a stat buffer.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

fn stat(path: &Path) -> std::io::Result<libc::stat> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: an all-zero stat is valid; stat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: c is a C string and st a stat buffer.
    if unsafe { libc::stat(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EACCES)
}

fn result(r: i64) -> Answer {
    if r < 0 {
        Answer::Errno(errno(&std::io::Error::last_os_error()))
    } else {
        Answer::Value(r)
    }
}

/// A `NETLINK_SOCK_DIAG` socket in the calling process's network
/// namespace (made by the box's first process, after it entered its own).
pub fn diag_socket() -> std::io::Result<OwnedFd> {
    // SAFETY: socket() with constant arguments.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The `sock_diag` dump of a namespace's Unix sockets (linux/unix_diag.h).
mod diag {
    use super::FileId;
    use std::collections::HashSet;

    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const UDIAG_SHOW_VFS: u32 = 0x02;
    const UNIX_DIAG_VFS: u16 = 1;
    const NLMSG_HDR: usize = 16;
    /// `struct unix_diag_msg`.
    const DIAG_MSG: usize = 16;

    /// The socket files bound in the namespace of `fd`.
    pub fn bound(fd: i32) -> std::io::Result<HashSet<FileId>> {
        send_request(fd)?;
        let mut found = HashSet::new();
        let mut buf = vec![0u8; 32 << 10];
        loop {
            // SAFETY: buf is a buffer of its length.
            let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(e);
            }
            if read_messages(&buf[..n as usize], &mut found)? {
                return Ok(found);
            }
        }
    }

    fn send_request(fd: i32) -> std::io::Result<()> {
        let mut req = Vec::with_capacity(NLMSG_HDR + 24);
        let len = (NLMSG_HDR + 24) as u32;
        req.extend(len.to_ne_bytes());
        req.extend(SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        req.extend(((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
        req.extend(1u32.to_ne_bytes()); // sequence
        req.extend(0u32.to_ne_bytes()); // port id: the kernel's
        // struct unix_diag_req
        req.push(libc::AF_UNIX as u8);
        req.push(0); // protocol
        req.extend(0u16.to_ne_bytes());
        req.extend(u32::MAX.to_ne_bytes()); // every state
        req.extend(0u32.to_ne_bytes()); // any inode
        req.extend(UDIAG_SHOW_VFS.to_ne_bytes());
        req.extend([0u8; 8]); // cookie
        // SAFETY: req is a buffer of its length.
        let n = unsafe { libc::send(fd, req.as_ptr().cast(), req.len(), 0) };
        if n != req.len() as isize {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Reads the messages of one `recv`; true once the dump is done.
    fn read_messages(mut b: &[u8], found: &mut HashSet<FileId>) -> std::io::Result<bool> {
        let bad = || std::io::Error::from_raw_os_error(libc::EPROTO);
        while b.len() >= NLMSG_HDR {
            let len = u32::from_ne_bytes(b[0..4].try_into().map_err(|_| bad())?) as usize;
            let kind = u16::from_ne_bytes([b[4], b[5]]);
            if len < NLMSG_HDR || len > b.len() {
                return Err(bad());
            }
            match i32::from(kind) {
                libc::NLMSG_DONE => return Ok(true),
                libc::NLMSG_ERROR => return Err(bad()),
                _ => {}
            }
            if len >= NLMSG_HDR + DIAG_MSG {
                read_attributes(&b[NLMSG_HDR + DIAG_MSG..len], found);
            }
            b = &b[(len + 3) & !3..];
            if b.len() < NLMSG_HDR {
                break;
            }
        }
        Ok(false)
    }

    fn read_attributes(mut a: &[u8], found: &mut HashSet<FileId>) {
        while a.len() >= 4 {
            let len = usize::from(u16::from_ne_bytes([a[0], a[1]]));
            let kind = u16::from_ne_bytes([a[2], a[3]]);
            if len < 4 || len > a.len() {
                return;
            }
            if kind == UNIX_DIAG_VFS && len >= 12 {
                let ino = u32::from_ne_bytes([a[4], a[5], a[6], a[7]]);
                // The kernel's own dev_t: major in the top 12 bits.
                let dev = u32::from_ne_bytes([a[8], a[9], a[10], a[11]]);
                found.insert(FileId {
                    major: dev >> 20,
                    minor: dev & 0xf_ffff,
                    ino,
                });
            }
            a = &a[((len + 3) & !3).min(a.len())..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unix_address_names_a_file_only_with_a_path() {
        let mut a = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        assert_eq!(unix_path(&a), None, "unnamed");
        a.extend(b"\0abstract");
        assert_eq!(unix_path(&a), None, "abstract");
        let mut p = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        p.extend(b"/run/x.sock\0junk");
        assert_eq!(unix_path(&p), Some(&b"/run/x.sock"[..]));
        let mut inet = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        inet.extend([0u8; 14]);
        assert_eq!(unix_path(&inet), None);
    }

    #[test]
    fn the_dump_lists_the_files_of_bound_sockets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let fd = diag_socket().unwrap();
        let bound = diag::bound(fd.as_raw_fd()).unwrap();
        let st = stat(&path).unwrap();
        assert!(bound.contains(&FileId::of(&st)), "{bound:?}");
    }
}
