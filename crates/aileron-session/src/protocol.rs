//! What the shim and the launch session say to each other: one JSON line
//! each way over a Unix socket.

use serde::{Deserialize, Serialize};

/// A shell line the agent wants to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Request {
    pub line: String,
    /// Absolute working directory of the shim.
    pub cwd: String,
    /// The shim's arguments, for the audit trail.
    pub argv: Vec<String>,
}

/// The decision, and what the shim must do.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Response {
    pub allow: bool,
    /// The one line to print on stderr when not allowed.
    pub message: Option<String>,
    /// The shell to exec on allow, as recorded at launch.
    pub real_shell: String,
}
