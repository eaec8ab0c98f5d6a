//! Copy-on-write package caches.
//!
//! The box lets the tree write the package caches (`~/.cargo/registry`,
//! `~/.npm`, `~/.cache`...), or a build in it could not fetch. But a cache
//! holds code the user's next build *outside* the box compiles or runs as
//! it is (cargo checks an unpacked crate by its `.cargo-ok` marker only, Go
//! a module directory not at all): a tree that may write it there would
//! reach past the box. So in the box each cache is an overlay: the host's
//! cache below, read-only, and above it a directory of the session's own
//! (kept per project by `aileron launch`), where every change the tree
//! makes lands. The host's cache keeps its bytes; the box sees its own
//! downloads and the host's.
//!
//! Where the kernel refuses the overlay (an upper directory on a file
//! system that cannot hold one, a kernel before 5.11 in a user
//! namespace), the cache is read-only in the box instead, and one line on
//! the terminal says so: never writable through to the host.

use crate::Error;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One cache's overlay, prepared before the fork.
pub struct Overlay {
    target: CString,
    options: CString,
    /// The flags a read-only remount of the cache keeps, if it comes to that.
    kept: libc::c_ulong,
}

impl Overlay {
    /// The overlay of `cache` whose changes land below `upper` (made
    /// here, with the overlay's work directory beside it).
    pub fn prepare(cache: &Path, upper: &Path) -> Result<Overlay, Error> {
        let made = |p: PathBuf| {
            std::fs::create_dir_all(&p)
                .map(|()| p.clone())
                .map_err(|source| Error::Overlay { path: p, source })
        };
        let changes = made(upper.join("upper"))?;
        let work = made(upper.join("work"))?;
        let options = format!(
            "lowerdir={},upperdir={},workdir={},userxattr",
            escaped(cache),
            escaped(&changes),
            escaped(&work)
        );
        let target =
            CString::new(cache.as_os_str().as_bytes()).map_err(|_| Error::PathHoldsNul {
                path: cache.to_path_buf(),
            })?;
        Ok(Overlay {
            kept: crate::files::kept_flags(&target),
            target,
            options: CString::new(options).map_err(|_| Error::PathHoldsNul {
                path: upper.to_path_buf(),
            })?,
        })
    }

    /// Mounts the overlay over the cache; where the kernel refuses it,
    /// makes the cache read-only instead and returns false.
    ///
    /// # Safety
    /// Between fork and exec, in the box's mount namespace (made private).
    pub unsafe fn mount(&self) -> std::io::Result<bool> {
        // SAFETY: strings prepared before the fork.
        unsafe {
            if libc::mount(
                c"overlay".as_ptr(),
                self.target.as_ptr(),
                c"overlay".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                self.options.as_ptr().cast(),
            ) == 0
            {
                return Ok(true);
            }
            for (flags, what) in [
                (libc::MS_BIND | libc::MS_REC, std::ptr::null()),
                (
                    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | self.kept,
                    std::ptr::null(),
                ),
            ] {
                if libc::mount(
                    self.target.as_ptr(),
                    self.target.as_ptr(),
                    std::ptr::null(),
                    flags,
                    what,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(false)
        }
    }
}

impl Overlay {
    /// Gives the mounted overlay `rights` in the Landlock `ruleset`.
    ///
    /// # Safety
    /// Between fork and exec, after [`Overlay::mount`].
    pub unsafe fn writable_in(&self, ruleset: i32, rights: u64) -> std::io::Result<()> {
        // SAFETY: a path prepared before the fork; the descriptor is closed.
        unsafe {
            let fd = libc::open(
                self.target.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            );
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let added = crate::files::add_rule(ruleset, fd, rights);
            libc::close(fd);
            added
        }
    }
}

/// A path as overlay's options take it: `,`, `:` and `\` escaped.
fn escaped(p: &Path) -> String {
    let mut out = String::new();
    for c in p.to_string_lossy().chars() {
        if matches!(c, ',' | ':' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_in_paths_are_escaped() {
        assert_eq!(escaped(Path::new("/a,b:c\\d")), "/a\\,b\\:c\\\\d");
    }
}
