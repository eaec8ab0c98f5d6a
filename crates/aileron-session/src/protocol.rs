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
    /// The shim's arguments, for the audit trail.
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
