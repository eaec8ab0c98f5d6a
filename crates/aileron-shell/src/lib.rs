//! Static analysis of bash command lines.
//!
//! [`analyse`] turns one command line into the simple commands it would run,
//! seen through everything an agent can use to hide a command from a filter:
//! lists and pipelines, subshells, `$(...)`, backticks, process substitution,
//! `bash -c` payloads, wrappers such as `sudo`, `env`, `xargs` or
//! `find -exec`, quoting (`$'\x72\x6d'` is `rm`) and option forms that run a
//! program (`git -c core.pager=...`). Each [`SimpleCommand`] carries what the
//! policy engine needs to decide it: its decoded argv, the files it writes,
//! the environment variables it changes, a [`Sensitivity`] and [`tags`] for
//! the built-in rules.
//!
//! Before a line is analysed, [`invocation`] reads a shell's own arguments
//! (`bash -lc CMD`) for the line it will run, and [`harness`] takes off the
//! wrapper an agent puts around the model's command.
//!
//! The crate is pure: no I/O, no clock, no global state. Its cost is bounded
//! by [`Limits`]; input over a limit is reported as opaque, never analysed
//! partially and never allowed to hang.

mod analyse;
mod classify;
mod error;
pub mod harness;
pub mod invocation;
pub mod leaves;
mod loads;
pub mod locale;
mod paths;
mod prescan;
mod vars;
mod words;

pub use analyse::analyse;
pub use error::Error;
pub use paths::normalize as normalize_path;

/// Tags attached to simple commands. Built-in rules match on them.
pub mod tags {
    /// A shell or interpreter reading its program from a pipe (`| sh`).
    pub const PIPE_TO_SHELL: &str = "pipe-to-shell";
    /// `eval` of a string.
    pub const EVAL: &str = "eval";
    /// Base64 (or hex) decoding piped into execution.
    pub const BASE64_EXEC: &str = "base64-exec";
    /// `$(curl ...)` / `$(wget ...)`: remote content substituted into a command.
    pub const REMOTE_SUBSTITUTION: &str = "remote-substitution";
    /// `python -c`, `node -e`, `perl -e`, ...: a program given inline.
    pub const INLINE_INTERPRETER: &str = "inline-interpreter";
    /// Something the analysis cannot see through (command name from a
    /// variable, non-literal `bash -c` payload, dynamic write target, ...).
    pub const OPAQUE: &str = "opaque";
    /// Recursive delete of `/`, `/*`, `~`, `$HOME`.
    pub const RM_ROOT: &str = "rm-root";
    /// `mkfs`, `mkfs.*`.
    pub const MKFS: &str = "mkfs";
    /// `dd of=/dev/...` to a block device.
    pub const DD_DEVICE: &str = "dd-device";
    /// A function that calls itself in a background pipeline (`:(){ :|:& };:`).
    pub const FORK_BOMB: &str = "fork-bomb";
    /// A force push (`git push --force`, `-f`, `+refspec`).
    pub const FORCE_PUSH: &str = "force-push";
    /// An environment assignment that makes a program run another one
    /// (`LD_PRELOAD`, `BASH_ENV`, `GIT_SSH_COMMAND`, `PAGER`, ...).
    pub const ENV_EXEC: &str = "env-exec";
}

/// How much a command can change: the scale of SPEC 3.
///
/// The default is [`Sensitivity::Mutate`], the level of an unknown command, so
/// that a record built without a classification fails closed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sensitivity {
    /// Only reads (ls, cat, git status, grep, ...).
    Read,
    /// Creates or changes file content (redirects, tee, cp, touch, sed -i, ...).
    Write,
    /// Deletes, moves, changes permissions or ownership, or is unknown.
    #[default]
    Mutate,
    /// Catastrophic and hard to undo (rm -rf /, force push, mkfs, dd to a device, DROP).
    Destructive,
}

impl Sensitivity {
    pub fn as_str(self) -> &'static str {
        match self {
            Sensitivity::Read => "read",
            Sensitivity::Write => "write",
            Sensitivity::Mutate => "mutate",
            Sensitivity::Destructive => "destructive",
        }
    }
}

/// Bounds on the cost of [`analyse`].
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Longest command line analysed, in bytes.
    pub max_len: usize,
    /// Deepest nesting of substitutions, subshells and `bash -c` payloads.
    pub max_depth: usize,
    /// Most simple commands reported for one line.
    pub max_commands: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_len: 64 * 1024,
            max_depth: 16,
            max_commands: 512,
        }
    }
}

/// Where the analysis runs: paths in write targets are resolved against it.
#[derive(Clone, Debug)]
pub struct Context<'a> {
    /// Absolute working directory of the command.
    pub cwd: &'a str,
    /// Absolute home directory, for `~` and `$HOME`.
    pub home: &'a str,
    pub limits: Limits,
}

/// The result of analysing one command line.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// Every simple command the line would run, outermost first, in source
    /// order. Wrappers and their inner commands are both present.
    pub commands: Vec<SimpleCommand>,
    /// Set when the line as a whole cannot be analysed (parse error, over a
    /// limit). The reason is one line for people. `commands` may then be empty.
    pub opaque: Option<String>,
}

/// One command the line would run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimpleCommand {
    /// Decoded argv joined by single spaces, followed by the redirections as
    /// written (`echo hi > out.txt`). Leading assignments are not part of it.
    pub command: String,
    /// argv[0] decoded, exactly as written otherwise (`./git` stays `./git`).
    pub binary: String,
    /// Decoded arguments after argv[0].
    pub argv: Vec<String>,
    /// Names of environment variables this command sets, exports or unsets:
    /// prefix assignments (`FOO=1 cmd`), bare assignments, `export`,
    /// `unset`, `declare`/`typeset`/`readonly`/`local`, `env VAR=..`, `env -u VAR`,
    /// `read VAR`, `printf -v VAR`, `mapfile VAR`, `let VAR=..`.
    /// `env -i`, which clears the whole environment, is reported as `*`,
    /// `SHELL` and `AILERON_*`.
    pub env_changes: Vec<String>,
    /// Absolute, normalized paths this command writes, creates, truncates,
    /// deletes, moves or changes the mode of (redirects, tee, cp/mv/rm, sed -i,
    /// touch, truncate, dd of=, ln, chmod, ...). May contain glob characters
    /// when the command line did (`rm *.yaml`). Brace expressions are
    /// expanded (`rm a.{x,y}` writes `a.x` and `a.y`); a copy or move into
    /// what may be a directory also lists `DEST/basename(SRC)`.
    pub writes: Vec<String>,
    /// Absolute, normalized paths of the other non-option arguments that look
    /// like paths (contain `/`, start with `.` or `~`, or name a file that a
    /// known reader reads). Used to protect secrets from being read.
    pub reads: Vec<String>,
    pub sensitivity: Sensitivity,
    /// Tags from [`tags`], sorted, no duplicates.
    pub tags: Vec<&'static str>,
    /// One-line explanations for people of each tag and each peeled wrapper,
    /// e.g. "inner command of `sudo`", "payload of `bash -c`".
    pub notes: Vec<String>,
    /// Index in [`Analysis::commands`] of the command this one was found
    /// inside (wrapper, substitution, `bash -c`), if any.
    pub parent: Option<usize>,
}
