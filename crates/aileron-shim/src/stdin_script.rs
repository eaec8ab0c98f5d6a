//! A shell given no command reads its program from stdin. When stdin is a
//! pipe or a file, the shim reads the program first so it can be decided,
//! then puts the same bytes back on fd 0 (through a pipe) for the real shell.

use crate::Error;
use std::io::Read;

/// Longest program on stdin the shim checks; a pipe can hold it all.
pub(crate) const MAX_STDIN: usize = 1 << 20;

/// Reads all of stdin and replaces fd 0 with a pipe that yields the same bytes.
pub fn take() -> Result<String, Error> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_STDIN as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(Error::StdinUnreadable)?;
    if bytes.len() > MAX_STDIN {
        return Err(Error::StdinTooLong);
    }
    refill_stdin(&bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn refill_stdin(bytes: &[u8]) -> Result<(), Error> {
    let mut fds = [0i32; 2];
    // SAFETY: plain POSIX calls on descriptors this process owns; the pipe
    // holds all bytes or its write end does not block (`hold`), so the
    // write cannot block.
    unsafe {
        if libc::pipe(fds.as_mut_ptr()) != 0 {
            return Err(Error::StdinPipe);
        }
        let (read_end, write_end) = (fds[0], fds[1]);
        hold(write_end, bytes.len())?;
        let mut off = 0;
        while off < bytes.len() {
            let n = libc::write(write_end, bytes[off..].as_ptr().cast(), bytes.len() - off);
            if n <= 0 {
                return Err(Error::StdinHandOver);
            }
            off += n as usize;
        }
        libc::close(write_end);
        if libc::dup2(read_end, 0) < 0 {
            return Err(Error::StdinHandOver);
        }
        libc::close(read_end);
    }
    Ok(())
}

/// Makes the pipe hold `len` bytes with nobody reading: Linux sizes it.
#[cfg(target_os = "linux")]
fn hold(write_end: libc::c_int, len: usize) -> Result<(), Error> {
    // SAFETY: fcntl on a descriptor this process owns.
    if len > 60 * 1024
        && unsafe { libc::fcntl(write_end, libc::F_SETPIPE_SZ, MAX_STDIN as libc::c_int) } < 0
    {
        return Err(Error::StdinPipeSize);
    }
    Ok(())
}

/// Elsewhere a pipe holds what the system gives it (16 to 64 KiB on
/// macOS): its write end does not block, so a longer program is refused
/// (a write that would block fails) instead of waiting for ever.
#[cfg(not(target_os = "linux"))]
fn hold(write_end: libc::c_int, _len: usize) -> Result<(), Error> {
    // SAFETY: fcntl on a descriptor this process owns.
    if unsafe { libc::fcntl(write_end, libc::F_SETFL, libc::O_NONBLOCK) } < 0 {
        return Err(Error::StdinPipeSize);
    }
    Ok(())
}
