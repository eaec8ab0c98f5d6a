//! A launch session's shared state and the decisions it makes for the shell
//! shim: the policy (through `aileron-config`), the session's "always"
//! answers, doom-loop detection, one terminal prompt at a time, rule
//! amendments, and the audit line for every decision.

pub mod board;
pub mod decide;
pub mod decider;
mod error;
pub mod exec;
pub mod notify;
pub mod pool;
pub mod process;
pub mod prompt;
pub mod protocol;
pub mod registry;
pub mod remote;
pub mod server;

pub use decide::{Decide, SessionSocket};
pub use decider::{Config, Decider, SavedApproval, SavedSession};
pub use error::Error;
pub use exec::{ExecCall, ExecRuling};
pub use prompt::{Answer, Prompter, TtyPrompter};
pub use protocol::{Control, ControlReply, Request, Response, ShimCall, ShimCallError, ShimReply};
