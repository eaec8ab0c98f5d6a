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
pub mod overlay;
#[cfg(target_os = "linux")]
pub mod proc;
#[cfg(target_os = "linux")]
pub mod sockets;
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

/// Whether the tree can have a network namespace of its own (`--enforce
/// net`), or why not: the same user namespaces as `files`.
pub fn net_support() -> Result<(), Error> {
    files::mount_namespace_available()
}

/// The host's Unix sockets the tree may still connect to in a box with a
/// network of its own (every socket bound inside the box is its own).
#[derive(Clone, Debug, Default)]
pub struct Reach {
    /// Directories whose sockets are the session's (its runtime directory).
    pub session_dirs: Vec<std::path::PathBuf>,
    /// Sockets the policy opens (`settings.enforce.sockets`).
    pub opened: Vec<std::path::PathBuf>,
}

/// What `aileron launch` asks the kernel to enforce.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Enforce {
    /// Every exec of the tree decided (seccomp user notification).
    pub exec: bool,
    /// The box's files: writes confined, Aileron's files locked, secrets
    /// masked, host sockets closed (Landlock and a mount namespace).
    pub files: bool,
    /// The box's network: a namespace of its own, reaching out only
    /// through the session's gateways.
    pub net: bool,
}

impl Enforce {
    pub const ALL: Enforce = Enforce {
        exec: true,
        files: true,
        net: true,
    };
    pub const NONE: Enforce = Enforce {
        exec: false,
        files: false,
        net: false,
    };

    /// Reads `--enforce`'s value: `exec`, `files`, `net`, `all` or `none`,
    /// comma-separated.
    pub fn parse(text: &str) -> Result<Enforce, Error> {
        let mut e = Enforce::NONE;
        for part in text.split(',').map(str::trim) {
            match part {
                "exec" => e.exec = true,
                "files" => e.files = true,
                "net" => e.net = true,
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

    /// Whether the tree runs in a box (a mount or network namespace).
    pub fn boxed(self) -> bool {
        self.files || self.net
    }

    /// `exec, files and net`, `exec`, `none`...: for the banner and the audit log.
    pub fn describe(self) -> String {
        let parts: Vec<&str> = [
            (self.exec, "exec"),
            (self.files, "files"),
            (self.net, "net"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        match parts.as_slice() {
            [] => "none".to_owned(),
            [one] => (*one).to_owned(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Enforce;

    #[test]
    fn enforce_reads_and_says_its_parts() {
        assert_eq!(Enforce::parse("all").unwrap(), Enforce::ALL);
        assert_eq!(Enforce::ALL.describe(), "exec, files and net");
        let e = Enforce::parse("exec, net").unwrap();
        assert_eq!(e.describe(), "exec and net");
        assert!(e.boxed());
        assert_eq!(Enforce::NONE.describe(), "none");
        assert!(Enforce::parse("network").is_err());
    }
}
