//! The MCP gateway, `aileron mcp`: a stdio proxy in front of an MCP server.
//! The agent starts `aileron mcp -- SERVER COMMAND` in place of the server;
//! every JSON-RPC message passes through unchanged, but `tools/call`,
//! `resources/read` and `prompts/get`, which are decided first by the one
//! decision path every adapter uses, and `tools/list` answers, from which
//! the tools a blanket deny makes useless are taken out.
//!
//! - [`message`] (pure): JSON-RPC lines read strictly, answers written.
//! - [`framing`] (pure): the line breaks servers read besides `\n`; a
//!   message holding one is refused.
//! - [`lower`] (pure): a request → an `mcp.call` Action; which tools to hide.
//! - [`gateway`] (pure): what to do with each message, as [`gateway::Effect`]s.
//! - [`stdio`]: the server as a child process, threads, blocking I/O;
//!   [`http`]: or a remote server over Streamable HTTP (`--url`).
//!
//! Who decides is [`aileron_session::Decide`]: the launch session over
//! `$AILERON_SOCKET`, or a `Decider` of the gateway's own.

pub mod framing;
pub mod gateway;
pub mod http;
pub mod lower;
pub mod message;
pub mod stdio;

pub use aileron_session::{Decide, SessionSocket};
pub use stdio::{Ended, Setup, Upstream, run};

use aileron_audit::{AuditLog, AuditRecord, Masker};
use aileron_config::{LoadOptions, Loaded, Memo};
use aileron_engine::{Action, Decision, Verdict, VerdictSource};
use std::path::PathBuf;
use std::sync::Arc;

/// The adapter's name in the audit log.
pub const ADAPTER: &str = "mcp";

/// The rule a message refused for its framing is audited under
/// ([`framing`]).
pub const FRAMING_RULE: &str = "builtin:mcp-framing";

/// Where requests are decided from (the session's, shared by the gateways).
pub use aileron_session::decide::Origin;

/// The policy as the gateway itself reads it: which tools are disabled,
/// and where the audit notes go. (Calls are decided by the [`Decide`].)
pub struct PolicyView {
    pub load: LoadOptions,
    pub cache_dir: Option<PathBuf>,
    memo: Memo,
    masker: Masker,
}

impl PolicyView {
    pub fn new(load: LoadOptions, cache_dir: Option<PathBuf>) -> PolicyView {
        PolicyView {
            load,
            cache_dir,
            memo: Memo::default(),
            masker: Masker::new(Vec::new()),
        }
    }

    /// The policy in force, or why not.
    pub fn load(&self) -> Result<Arc<Loaded>, String> {
        aileron_config::load_with_memo(&self.load, self.cache_dir.as_deref(), &self.memo).map_err(
            |diags| {
                let first = diags.0.first().map(|d| d.headline()).unwrap_or_default();
                format!("the policy does not load: {first}")
            },
        )
    }

    /// [`PolicyView::load`], saying on stderr why not: a policy that does not
    /// load hides no tool (each call is refused when decided).
    fn load_quietly(&self) -> Option<Arc<Loaded>> {
        self.load()
            .inspect_err(|why| eprintln!("aileron mcp: {why}: tools/list is passed on whole"))
            .ok()
    }

    /// Writes an audit note: a request the server sent the client (passed
    /// on, not decided).
    pub fn note(&self, origin: &Origin, action: Action) {
        let verdict = Verdict {
            decision: Decision::Allow,
            source: VerdictSource::Builtin,
            rule: None,
            reason: "a request from the MCP server to the client: passed on, not decided".into(),
            approver: None,
        };
        self.append(origin, action, &verdict, "passed-through");
    }

    /// Writes the audit line of a message refused for how it is framed
    /// (`framing`): denied by the gateway itself, never decided by a rule.
    pub fn refused(&self, origin: &Origin, action: Action, reason: String) {
        let verdict = Verdict {
            decision: Decision::Deny,
            source: VerdictSource::Builtin,
            rule: Some(FRAMING_RULE.into()),
            reason,
            approver: None,
        };
        self.append(origin, action, &verdict, "refused");
    }

    fn append(&self, origin: &Origin, mut action: Action, verdict: &Verdict, outcome: &str) {
        let path = match self.load() {
            Ok(l) => {
                aileron_config::audit_log_path(&l.policy, l.project_file.as_deref(), &self.load)
            }
            Err(_) => self.load.data_dir.join("audit.jsonl"),
        };
        let now = jiff::Timestamp::now();
        let time = aileron_engine::action::timestamp_from_unix(now.as_second())
            .unwrap_or_else(|| "1970-01-01T00:00:00Z".into());
        action.timestamp = jiff::Timestamp::from_second(now.as_second()).ok();
        let mut action = origin.placed(action);
        action.normalize();
        let mut record = AuditRecord::new(time, ADAPTER, &action, verdict, 0);
        record.outcome = Some(outcome.into());
        let record = record.masked(&self.masker);
        if let Err(e) = AuditLog::new(path.clone()).append(&record) {
            eprintln!(
                "aileron mcp: cannot write the audit log {}: {e}",
                path.display()
            );
        }
    }
}
