//! Reading a policy for someone else: `aileron serve` decides an agent's
//! request with the policy of a project an admin registered, and a file
//! in that project (which the agent may have written) must not make the
//! server read anything outside it.
//!
//! A [`Confine`] names the directories such a policy may take files from:
//! the project file itself and the profiles it names by path. A file
//! outside them, reached through a link out of them, or not a regular
//! file (a FIFO would hang the reader) is refused with one message,
//! whatever the reason, so that the refusal tells nothing of the file
//! system beyond the project.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The directories a confined policy may read from (canonical paths).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confine {
    dirs: Vec<PathBuf>,
}

/// Why a confined read was refused; the message is the same for every
/// cause.
#[derive(Debug)]
pub(crate) struct Outside;

impl Confine {
    /// Confines to `dirs`, each resolved once now (the admin named them).
    pub fn new<I, P>(dirs: I) -> std::io::Result<Confine>
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        let dirs = dirs
            .into_iter()
            .map(|d| std::fs::canonicalize(d.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Confine { dirs })
    }

    /// The directories, canonical.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    fn holds(&self, path: &Path) -> bool {
        self.dirs.iter().any(|d| path.starts_with(d))
    }

    /// Reads `path` when it is a regular file inside the directories,
    /// also once every link on the way is followed: the check is made on
    /// the file that was opened (its path as the kernel gives it), so a
    /// link swapped in between changes nothing.
    pub(crate) fn read(&self, path: &Path) -> Result<String, Outside> {
        let lexical = PathBuf::from(aileron_engine::paths::normalize(&crate::path_str(path)));
        if !path.is_absolute() || !self.holds(&lexical) {
            return Err(Outside);
        }
        let file = open_nonblocking(&lexical).map_err(|_| Outside)?;
        let meta = file.metadata().map_err(|_| Outside)?;
        if !meta.is_file() || !self.holds(&opened_path(&file, &lexical).ok_or(Outside)?) {
            return Err(Outside);
        }
        let mut text = String::new();
        (&file).read_to_string(&mut text).map_err(|_| Outside)?;
        Ok(text)
    }
}

/// Opens for reading without blocking on a FIFO or a device.
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// Where the opened file is: the kernel's own record on Linux; elsewhere
/// the path resolved right after opening.
fn opened_path(file: &std::fs::File, path: &Path) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let _ = path;
        std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        std::fs::canonicalize(path).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_inside_and_refuses_links_out_fifos_and_dotdot() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (proj, outside) = (root.join("proj"), root.join("outside"));
        std::fs::create_dir_all(proj.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(proj.join("sub/p.yaml"), "version: 1\n").unwrap();
        std::fs::write(outside.join("secret"), "key: s3cret\n").unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), proj.join("link.yaml")).unwrap();
        std::os::unix::fs::symlink(&outside, proj.join("dir")).unwrap();
        let fifo = proj.join("fifo.yaml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let confine = Confine::new([&proj]).unwrap();
        assert_eq!(
            confine.read(&proj.join("sub/p.yaml")).unwrap(),
            "version: 1\n"
        );
        for refused in [
            proj.join("link.yaml"),
            proj.join("dir/secret"),
            proj.join("../outside/secret"),
            proj.join("fifo.yaml"),
            proj.join("missing.yaml"),
            proj.join("sub"),
            outside.join("secret"),
            PathBuf::from("proj/sub/p.yaml"),
        ] {
            assert!(confine.read(&refused).is_err(), "{}", refused.display());
        }
    }
}
