//! Kernel enforcement for `aileron launch` (Linux).
//!
//! The shim decides what an agent hands to `$SHELL`, and hooks decide what
//! an agent reports; neither sees a program that an allowed program starts.
//! Here the agent's whole process tree runs under a seccomp filter that
//! stops every `execve`/`execveat` until the launch session has decided it
//! ([`supervise`]), and under a Landlock domain and a private mount
//! namespace that keep Aileron's own files out of its reach ([`files`]).
//! See `docs/enforcement.md` for what this covers and what it does not.

mod error;
pub mod files;
pub mod filter;
pub mod proc;
pub mod spawn;
pub mod supervise;

pub use error::Error;

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
