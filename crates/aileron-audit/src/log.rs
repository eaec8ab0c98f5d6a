//! Appending to the audit log so that many concurrent writers (every shim
//! invocation is its own process) never interleave or lose lines.

use crate::record::AuditRecord;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The audit log file (`settings.audit_log`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    pub fn new(path: impl Into<PathBuf>) -> AuditLog {
        AuditLog { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `rec` as one JSON line. The record is written as given: mask
    /// it first ([`AuditRecord::masked`]).
    ///
    /// Creates missing parent directories (mode 0700) and the file (mode
    /// 0600). The line goes out in one `write_all` on an `O_APPEND`
    /// descriptor while holding an exclusive `flock` on the file, so lines
    /// from concurrent writers, of any length, never interleave. A line left
    /// unterminated by a writer that died mid-write is closed off first, so
    /// that it cannot swallow this one.
    pub fn append(&self, rec: &AuditRecord) -> io::Result<()> {
        let mut line = serde_json::to_vec(rec).map_err(io::Error::other)?;
        line.push(b'\n');
        self.append_lines(&line)
    }

    /// Appends `lines`, whole JSON lines each ending in `\n` (as
    /// [`AuditRecord::to_json_line`] plus a newline), in one write under one
    /// lock: a server's group commit writes a batch of decisions at once.
    pub fn append_lines(&self, lines: &[u8]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let line = lines;
        let file = match self.open() {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
                }
                self.open()?
            }
            r => r?,
        };
        let _lock = Flock::exclusive(&file)?;
        let len = file.metadata()?.len();
        let mut last = [0u8; 1];
        let broken = len > 0 && file.read_at(&mut last, len - 1)? == 1 && last[0] != b'\n';
        let mut out = &file;
        if broken {
            let mut buf = Vec::with_capacity(line.len() + 1);
            buf.push(b'\n');
            buf.extend_from_slice(line);
            out.write_all(&buf)
        } else {
            out.write_all(line)
        }
    }

    fn open(&self) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&self.path)
    }
}

/// An exclusive `flock`, released when dropped (and in any case when the
/// file is closed).
struct Flock<'a>(&'a File);

impl<'a> Flock<'a> {
    fn exclusive(file: &'a File) -> io::Result<Flock<'a>> {
        loop {
            // SAFETY: flock on a descriptor we own for the lifetime of `file`.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Flock(file));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Flock<'_> {
    fn drop(&mut self) {
        // SAFETY: as above; a failed unlock is undone by close anyway.
        unsafe {
            libc::flock(self.0.as_raw_fd(), libc::LOCK_UN);
        }
    }
}
