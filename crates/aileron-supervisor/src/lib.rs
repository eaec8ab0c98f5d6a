//! Kernel enforcement for `aileron launch` (Linux).
//!
//! The shim decides what an agent hands to `$SHELL`, and hooks decide what
//! an agent reports; neither sees a program that an allowed program starts.
//! Here the agent's whole process tree runs under a seccomp filter that
//! stops every `execve`/`execveat` until the launch session has decided it
//! ([`supervise`]), and under a Landlock domain and a private mount
//! namespace that keep Aileron's own files out of its reach ([`files`]).
//! See `docs/enforcement.md` for what this covers and what it does not.
//!
//! Only Linux has the means. Elsewhere [`exec_support`] and
//! [`files_support`] say so, and `files`, `spawn` and `supervise` hold
//! only what `aileron launch` names, with types that cannot be made
//! (`unsupported.rs`): the code that would start an enforced session
//! compiles, and cannot run.

mod error;
#[cfg(target_os = "linux")]
pub mod fdpass;
#[cfg(target_os = "linux")]
pub mod files;
#[cfg(target_os = "linux")]
pub mod filter;
#[cfg(target_os = "linux")]
pub mod proc;
#[cfg(target_os = "linux")]
pub mod spawn;
#[cfg(target_os = "linux")]
pub mod supervise;

#[cfg(not(target_os = "linux"))]
mod unsupported;
#[cfg(not(target_os = "linux"))]
pub use unsupported::{files, spawn, supervise};

pub use error::Error;

/// Whether this kernel can stop every exec of the tree for a decision
/// (`--enforce exec`), or why not.
pub fn exec_support() -> Result<(), Error> {
    files::seccomp_notify_available()
}

/// Whether this system can lock Aileron's files away from the tree
/// (`--enforce files`), or why not.
pub fn files_support() -> Result<(), Error> {
    files::mount_namespace_available()
}

/// What `aileron launch` asks the kernel to enforce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Enforce {
    /// Every exec of the tree decided (seccomp user notification).
    pub exec: bool,
    /// Aileron's files locked (Landlock and read-only mounts).
    pub files: bool,
}

impl Enforce {
    pub const ALL: Enforce = Enforce {
        exec: true,
        files: true,
    };
    pub const NONE: Enforce = Enforce {
        exec: false,
        files: false,
    };

    /// Reads `--enforce`'s value: `exec`, `files`, `all` or `none`, comma-separated.
    pub fn parse(text: &str) -> Result<Enforce, Error> {
        let mut e = Enforce::NONE;
        for part in text.split(',').map(str::trim) {
            match part {
                "exec" => e.exec = true,
                "files" => e.files = true,
                "all" => e = Enforce::ALL,
                "none" => {}
                other => return Err(Error::UnknownEnforce(other.to_owned())),
            }
        }
        Ok(e)
    }

    pub fn is_none(self) -> bool {
        self == Enforce::NONE
    }

    /// `exec and files`, `exec`, ...: for the banner and the audit log.
    pub fn describe(self) -> &'static str {
        match (self.exec, self.files) {
            (true, true) => "exec and files",
            (true, false) => "exec",
            (false, true) => "files",
            (false, false) => "none",
        }
    }
}
