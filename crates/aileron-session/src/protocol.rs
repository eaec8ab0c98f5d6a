//! What adapters (the shim, the hooks) and the launch session say to each
//! other: one JSON line each way over a Unix socket.

use aileron_engine::Action;
use serde::{Deserialize, Serialize};

/// Something the agent wants to do: a shell line, or (from a hook) any
/// other tool call already lowered into an [`Action`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Request {
    /// The shell line; for a non-shell action, a one-line description.
    pub line: String,
    /// Absolute working directory of the agent: where the policy is found.
    pub cwd: String,
    /// Where a shell line runs, when the tool names its own directory: it
    /// places the line's paths, never which policy applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_cwd: Option<String>,
    /// The shim's arguments, for the audit trail. For a shell's `-c` form
    /// the launch session takes the line from them, not from `line`: the
    /// `-c` text, less a known agent wrapper, which only the session (that
    /// knows the user's home directory) takes off.
    pub argv: Vec<String>,
    /// A non-shell tool call, lowered (one call may touch several files or
    /// URLs). Empty: `line` is a shell line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
    /// The agent's own session id (hooks); the launch session's otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Adapter name for the audit trail (`hook:claude-code`); the decider's otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// The agent can ask its human itself: an ask is answered `ask`, not prompted.
    #[serde(default)]
    pub agent_asks: bool,
    /// When the adapter started waiting (Unix nanoseconds): a "reject" given
    /// after it rejects this request too (the cascade across hook processes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_since: Option<u128>,
    /// The longest the adapter's caller waits (seconds): a prompt's timeout
    /// is cut to fit, so that the answer arrives before the agent gives up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_budget: Option<u64>,
    /// The same call again (a permission request after its pre-tool event):
    /// not counted for the doom loop or `rate`.
    #[serde(default)]
    pub repeat: bool,
    /// A program's traffic seen by a gateway (the egress proxy), not a
    /// call of the agent's own: no doom loop.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub traffic: bool,
    /// An exec inside a command already allowed (that command's line): a
    /// verdict of the policy's default gives way to it, and a command
    /// already approved as part of it is not asked again. Set only by the
    /// session's own exec supervisor, never read from a socket.
    #[serde(skip)]
    pub within: Option<String>,
    /// Why an exec inside a command is decided on its own whatever its
    /// name (its file is setuid, setgid or has capabilities): `within`
    /// then neither gives way nor reuses an approval. Set only by the
    /// session's own exec supervisor.
    #[serde(skip)]
    pub alone: Option<String>,
    /// The file an exec loads (`shell.exe`), when the supervisor saw it.
    #[serde(skip)]
    pub exe: Option<String>,
    /// The process that sent the request (`SO_PEERCRED`), which waits for
    /// the answer: the session may take the terminal from its group to
    /// ask. Set by the session's socket, never read from it.
    #[serde(skip)]
    pub peer: Option<u32>,
}

/// What `aileron approve` says to a launch session (a JSON line with an
/// `op` field, which no [`Request`] has), with the session's approver key
/// (`crate::registry`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Control {
    /// The asks waiting for an answer from another channel than the terminal.
    ListAsks { key: String },
    /// Answers one of them.
    AnswerAsk {
        key: String,
        id: String,
        answer: crate::board::WireAnswer,
    },
}

/// The session's reply to a [`Control`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ControlReply {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub asks: Vec<crate::board::PendingAsk>,
    /// Requests queued behind the ask shown (one ask at a time).
    #[serde(default)]
    pub queued: usize,
}

/// The decision, and what the adapter must do.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Response {
    pub allow: bool,
    /// `allow`, `deny` or `ask` (the last only when the request said `agent_asks`).
    #[serde(default)]
    pub decision: String,
    /// The one line to print on stderr (or hand the agent) when not allowed.
    pub message: Option<String>,
    /// The rule that decided, if any.
    #[serde(default)]
    pub rule: Option<String>,
    /// The shell to exec on allow, as recorded at launch.
    pub real_shell: String,
}

impl Response {
    /// A refusal that did not come from the policy (malformed request, I/O).
    pub fn refused(message: String, real_shell: &str) -> Response {
        Response {
            allow: false,
            decision: "deny".to_owned(),
            message: Some(message),
            rule: None,
            real_shell: real_shell.to_owned(),
        }
    }
}

/// What `aileron-sh` sends when it asks before the C library has started
/// (`aileron_shim::prestart`), and what it gets back. That code can neither
/// allocate nor write JSON, so both ways are plain bytes:
///
/// - request: [`ShimCall::MAGIC`], the number of arguments including
///   `argv[0]` in decimal and a newline, then the working directory and
///   each argument, each ended by a NUL. The count makes a request cut
///   short (the shim failed while sending) malformed, never another
///   command line. The shim then shuts down its writing side.
/// - reply: one byte, then its fields: `x` COUNT newline SHELL NUL and
///   COUNT arguments, `argv[0]` first, each ended by a NUL (exec the real
///   shell with exactly these arguments, which
///   `aileron_shell::invocation::real_shell_argv` made from the shim's),
///   `d` MESSAGE (print it, run nothing, exit 126), or `f` (not answered
///   here: start the full shim, which asks in JSON). The count makes a
///   reply cut short unreadable, never another command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShimCall {
    pub cwd: String,
    pub arg0: String,
    /// The arguments after `argv[0]`.
    pub args: Vec<String>,
}

/// Why a [`ShimCall`] could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShimCallError {
    /// Not a request as the shim writes it.
    #[error(transparent)]
    Malformed(#[from] MalformedCall),
    /// A field is not UTF-8: the full shim must read it (it decides and
    /// runs the same lossily read text).
    #[error("a field of the request is not UTF-8")]
    NotUtf8,
}

/// How a [`ShimCall`] is not what the shim writes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MalformedCall {
    #[error("it does not start with the shim's header")]
    NoHeader,
    #[error("it has no argument count")]
    NoCount,
    #[error("its argument count is not a positive number")]
    BadCount,
    #[error("its last field is not ended by a NUL")]
    Unterminated,
    #[error("it does not hold as many arguments as it says")]
    WrongCount,
    #[error("it names no working directory and program")]
    NoCwdOrProgram,
    #[error("its working directory {0:?} is not absolute")]
    RelativeCwd(String),
}

impl ShimCall {
    /// The first bytes of a request; a JSON request starts with `{`.
    pub const MAGIC: &'static [u8] = b"aileron-sh 2\n";

    pub fn decode(bytes: &[u8]) -> Result<ShimCall, ShimCallError> {
        let body = bytes
            .strip_prefix(Self::MAGIC)
            .ok_or(MalformedCall::NoHeader)?;
        let (count, fields) = body
            .iter()
            .position(|&b| b == b'\n')
            .map(|n| (&body[..n], &body[n + 1..]))
            .ok_or(MalformedCall::NoCount)?;
        let count: usize = std::str::from_utf8(count)
            .ok()
            .and_then(|c| c.parse().ok())
            .filter(|&c| c >= 1)
            .ok_or(MalformedCall::BadCount)?;
        let fields = fields
            .strip_suffix(b"\0")
            .ok_or(MalformedCall::Unterminated)?;
        let fields = fields
            .split(|&b| b == 0)
            .map(|f| String::from_utf8(f.to_vec()).map_err(|_| ShimCallError::NotUtf8))
            .collect::<Result<Vec<String>, _>>()?;
        if fields.len() != count + 1 {
            return Err(MalformedCall::WrongCount.into());
        }
        let mut fields = fields.into_iter();
        let (Some(cwd), Some(arg0)) = (fields.next(), fields.next()) else {
            return Err(MalformedCall::NoCwdOrProgram.into());
        };
        if !cwd.starts_with('/') {
            return Err(MalformedCall::RelativeCwd(cwd).into());
        }
        Ok(ShimCall {
            cwd,
            arg0,
            args: fields.collect(),
        })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Self::MAGIC.to_vec();
        out.extend_from_slice(format!("{}\n", self.args.len() + 1).as_bytes());
        for field in [&self.cwd, &self.arg0].into_iter().chain(&self.args) {
            out.extend_from_slice(field.as_bytes());
            out.push(0);
        }
        out
    }
}

/// The session's answer to a [`ShimCall`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShimReply {
    /// Allowed: exec `shell` with `argv` (`argv[0]` first).
    Exec { shell: String, argv: Vec<String> },
    /// Not allowed: the one line to print (without its newline).
    Refuse(String),
    /// Not a form the session answers from raw arguments (a script, a
    /// shell reading stdin, a probe): the full shim takes over.
    FullShim,
}

impl ShimReply {
    /// The first byte of each kind of reply.
    pub const EXEC: u8 = b'x';
    pub const REFUSE: u8 = b'd';
    pub const FULL_SHIM: u8 = b'f';

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            ShimReply::Exec { shell, argv } => {
                out.push(Self::EXEC);
                out.extend_from_slice(format!("{}\n", argv.len()).as_bytes());
                for field in std::iter::once(shell).chain(argv) {
                    out.extend_from_slice(field.as_bytes());
                    out.push(0);
                }
            }
            ShimReply::Refuse(message) => {
                out.push(Self::REFUSE);
                out.extend_from_slice(message.trim_end_matches('\n').as_bytes());
            }
            ShimReply::FullShim => out.push(Self::FULL_SHIM),
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shim_call_reads_back_as_written() {
        let call = ShimCall {
            cwd: "/work/repo".into(),
            arg0: "-bash".into(),
            args: vec!["-c".into(), String::new(), "ls 'a b'".into()],
        };
        let bytes = call.encode();
        assert!(bytes.starts_with(b"aileron-sh 2\n4\n/work/repo\0-bash\0-c\0\0ls 'a b'\0"));
        assert_eq!(ShimCall::decode(&bytes), Ok(call));
    }

    #[test]
    fn a_malformed_shim_call_is_an_error() {
        let malformed =
            |bytes: &[u8]| matches!(ShimCall::decode(bytes), Err(ShimCallError::Malformed(_)));
        assert!(malformed(b"{\"line\":\"ls\"}"));
        assert!(malformed(b"aileron-sh 2\n3\n/w\0sh\0-c\0ls"));
        assert!(malformed(b"aileron-sh 2\n1\n/w\0"));
        assert!(malformed(b"aileron-sh 2\n1\nw\0sh\0"));
        assert!(malformed(b"aileron-sh 2\n0\n/w\0"));
        assert!(malformed(b"aileron-sh 2\n/w\0sh\0"));
        // Cut short after a whole field: a different command line, were
        // it not for the count.
        assert!(malformed(b"aileron-sh 2\n4\n/w\0sh\0-o\0pipefail\0"));
        assert!(malformed(b"aileron-sh 2\n2\n/w\0sh\0-c\0ls\0"));
        let no_args = ShimCall::decode(b"aileron-sh 2\n1\n/w\0sh\0").unwrap();
        assert!(no_args.args.is_empty());
        assert_eq!(
            ShimCall::decode(b"aileron-sh 2\n3\n/w\0sh\0-c\0echo \xff\0"),
            Err(ShimCallError::NotUtf8)
        );
    }

    #[test]
    fn shim_replies_are_one_kind_byte_and_their_fields() {
        let exec = ShimReply::Exec {
            shell: "/bin/bash".into(),
            argv: vec!["/bin/bash".into(), "-c".into(), String::new()],
        };
        assert_eq!(exec.encode(), b"x3\n/bin/bash\0/bin/bash\0-c\0\0");
        let refuse = ShimReply::Refuse("aileron: denied: no (r1)\n".into());
        assert_eq!(refuse.encode(), b"daileron: denied: no (r1)");
        assert_eq!(ShimReply::FullShim.encode(), b"f");
    }
}
