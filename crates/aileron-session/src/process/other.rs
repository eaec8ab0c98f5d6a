//! Systems other than Linux and macOS: no process is described, and no
//! socket names its peer. Every caller refuses what it cannot check.

use super::ProcStat;
use std::io;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "Aileron cannot read processes on this system",
    )
}

pub(super) fn read(_pid: u32) -> io::Result<Option<ProcStat>> {
    Err(unsupported())
}

pub(super) fn exe(_pid: u32) -> io::Result<PathBuf> {
    Err(unsupported())
}

pub(super) fn cwd(_pid: u32) -> io::Result<PathBuf> {
    Err(unsupported())
}

pub(super) fn peer_pid(_stream: &UnixStream) -> Option<u32> {
    None
}
