//! macOS: libproc's descriptions that it gives for any process, also one
//! of another user (the root-owned `login` between a terminal and its
//! shell): `PROC_PIDT_SHORTBSDINFO` for the parent,
//! `PROC_PIDUNIQIDENTIFIERINFO` for the identity, `proc_pidpath`; and
//! `LOCAL_PEERPID` for a socket's peer.

use super::ProcStat;
use std::ffi::c_int;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// `PROC_PIDUNIQIDENTIFIERINFO` (XNU's `sys/proc_info.h`, not in the SDK).
const PROC_PIDUNIQIDENTIFIERINFO: c_int = 17;

/// `struct proc_uniqidentifierinfo` (56 bytes; the two words after
/// `p_idversion` were reserved in older headers). Only `p_uniqueid` is read.
#[repr(C)]
#[allow(dead_code)]
struct UniqueIdentifier {
    p_uuid: [u8; 16],
    /// Assigned at fork, kept across exec, never reused until the next boot.
    p_uniqueid: u64,
    p_puniqueid: u64,
    p_idversion: i32,
    p_orig_ppidversion: i32,
    p_reserve2: u64,
    p_reserve3: u64,
}

const _: () = assert!(std::mem::size_of::<UniqueIdentifier>() == 56);

/// One of `pid`'s descriptions, of type `T` (all plain integers and bytes).
fn describe<T>(pid: u32, flavor: c_int) -> io::Result<T> {
    let mut out = std::mem::MaybeUninit::<T>::zeroed();
    let size = std::mem::size_of::<T>() as c_int;
    // SAFETY: out is a buffer of `size` bytes for the description.
    let n = unsafe { libc::proc_pidinfo(pid as c_int, flavor, 0, out.as_mut_ptr().cast(), size) };
    if n == size {
        // SAFETY: the kernel filled it; every bit pattern is valid for T.
        Ok(unsafe { out.assume_init() })
    } else if n <= 0 {
        Err(last_error())
    } else {
        Err(io::Error::other("libproc gave a short description"))
    }
}

/// libproc's error, or "no such process" where it set none.
fn last_error() -> io::Error {
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(0) | None => io::Error::from_raw_os_error(libc::ESRCH),
        _ => e,
    }
}

pub(super) fn read(pid: u32) -> io::Result<Option<ProcStat>> {
    // The identity is read before and after the parent: a number reused in
    // between would show another identity.
    let before: UniqueIdentifier = describe(pid, PROC_PIDUNIQIDENTIFIERINFO)?;
    let short: libc::proc_bsdshortinfo = describe(pid, libc::PROC_PIDT_SHORTBSDINFO)?;
    let after: UniqueIdentifier = describe(pid, PROC_PIDUNIQIDENTIFIERINFO)?;
    if before.p_uniqueid != after.p_uniqueid || short.pbsi_pid != pid {
        return Err(io::Error::other("the process changed while it was read"));
    }
    // A number names a process: its threads have none.
    Ok(Some(ProcStat {
        ppid: short.pbsi_ppid,
        tgid: pid,
        start: after.p_uniqueid,
    }))
}

pub(super) fn exe(pid: u32) -> io::Result<PathBuf> {
    let mut buf = vec![0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
    // SAFETY: buf is a buffer of the size passed.
    let n = unsafe { libc::proc_pidpath(pid as c_int, buf.as_mut_ptr().cast(), buf.len() as u32) };
    if n <= 0 {
        return Err(last_error());
    }
    buf.truncate(n as usize);
    Ok(PathBuf::from(std::ffi::OsString::from_vec(buf)))
}

pub(super) fn cwd(pid: u32) -> io::Result<PathBuf> {
    let info: libc::proc_vnodepathinfo = describe(pid, libc::PROC_PIDVNODEPATHINFO)?;
    let path: Vec<u8> = info
        .pvi_cdir
        .vip_path
        .iter()
        .flatten()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    if path.is_empty() {
        return Err(io::Error::other("libproc gave no working directory"));
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(path)))
}

/// `LOCAL_PEERPID`: the process that connected.
pub(super) fn peer_pid(stream: &UnixStream) -> Option<u32> {
    let pid: libc::pid_t = super::socket_option(stream, libc::SOL_LOCAL, libc::LOCAL_PEERPID)?;
    (pid > 0).then_some(pid as u32)
}
