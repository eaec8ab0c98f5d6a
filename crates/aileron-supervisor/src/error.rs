//! Why enforcement could not be set up, and why an exec was killed at its
//! exec event.

#[cfg(target_os = "linux")]
use crate::proc::ReadError;
use std::io;
use std::path::PathBuf;

/// What this crate reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--enforce` got a value it does not take.
    #[error("--enforce: unknown value `{0}`: expected exec, files, net, all or none")]
    UnknownEnforce(String),
    /// A kernel setting that says what is available could not be read.
    #[error("cannot read {path}: {source}")]
    KernelSetting {
        path: &'static str,
        source: io::Error,
    },
    /// A system other than Linux: no seccomp, Landlock or mount namespaces.
    #[error("kernel enforcement needs Linux (seccomp, Landlock, mount namespaces)")]
    NeedsLinux,
    #[error("seccomp user notification is not available")]
    NoSeccompNotify,
    #[error("unprivileged user namespaces are disabled")]
    NoUserNamespaces,
    #[error("Landlock is not available, and settings.enforce.writable needs it")]
    NoLandlockForWritable,
    /// The box's `resolv.conf` (its DNS, the proxy's) cannot be written.
    #[error("cannot write the box's resolv.conf {}: {source}", path.display())]
    ResolvConf {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file that covers masked files in the box is missing.
    #[error("cannot use {} to cover masked files: {source}", path.display())]
    Cover {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A package cache's copy-on-write directory cannot be made.
    #[error("cannot make {} for a package cache's changes in the box: {source}", path.display())]
    Overlay {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A path to lock cannot be passed to the kernel.
    #[error("{} holds a NUL", path.display())]
    PathHoldsNul { path: PathBuf },
    #[error("cannot read the working directory: {0}")]
    WorkingDirectory(#[source] io::Error),
    #[error("cannot list /: {0}")]
    ListRoot(#[source] io::Error),
    #[error("Landlock: cannot create a ruleset: {0}")]
    LandlockRuleset(#[source] io::Error),
    #[error("Landlock: cannot allow writes under {}: {source}", path.display())]
    LandlockRule { path: PathBuf, source: io::Error },
    /// The socket pair that carries the filter's listener to the supervisor.
    #[error("cannot set up enforcement: socketpair: {0}")]
    SocketPair(#[source] io::Error),
    #[error("cannot start {program}: {source}")]
    Spawn { program: String, source: io::Error },
    /// At the exec event: what was loaded is not what was decided (`what`:
    /// the program, its arguments or its environment).
    #[error("the exec changed after it was decided ({0}): killed")]
    ExecChanged(&'static str),
    /// At the exec event: the program loaded cannot be looked at.
    #[error("cannot read the program loaded: {0}")]
    LoadedProgram(#[source] io::Error),
    /// At the exec event: the new image's arguments cannot be read.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Read(#[from] ReadError),
}
