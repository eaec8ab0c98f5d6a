//! The decision of one request, written once for every adapter.
//!
//! The shim, the hooks, the launch session's exec supervisor and the
//! server each receive a request their own way, load the policy their own
//! way, and ask a human their own way (a terminal prompt, the dashboard's
//! queue, the agent's host). Everything between is here, in [`Core`]:
//! the verdict under the session's approvals and `rate` history, the doom
//! loop, the ask with its timeout, the answer (once, always for the
//! session, the project or the user, reject, reject with feedback) with
//! its cascade, the rule an "always" adds at the asking rule's priority,
//! and the audit record with the channel an answer really came through.
//!
//! ```
//! use aileron_decision::{Core, Request, Step, Subject};
//! use aileron_engine::{Environment, Layer, LineContext, Policy, Session, Source};
//! let src = Source {
//!     name: "/repo/aileron.yaml".into(),
//!     text: "version: 1\ndefault: ask\nallow: [\"git status\"]\n".into(),
//!     layer: Layer::Project,
//!     base_dir: "/repo".into(),
//! };
//! let policy = Policy::from_sources(&[src], &Environment::new("/home/u")).unwrap();
//! let core = Core::new();
//! let session = Session::default();
//! let req = Request {
//!     session: Some("s1"),
//!     subject: Subject::Line("git status"),
//!     cx: LineContext { cwd: "/repo", session: &session, timestamp: "2026-01-01T00:00:00Z".parse().ok(), id: "a1", exe: None },
//!     now: "2026-01-01T00:00:00Z".parse().unwrap(),
//!     agent_asks: false,
//!     repeat: false,
//!     traffic: false,
//!     waiting_since: None,
//!     prompt_budget: None,
//!     default_timeout: std::time::Duration::from_secs(60),
//!     adjust: None,
//! };
//! match core.decide(&policy, &req) {
//!     Step::Done(d) => assert!(d.allow),
//!     Step::Ask(_) => unreachable!("`git status` is allowed"),
//! }
//! ```

pub mod amend;
mod answer;
mod core;
mod session;

/// Where the policy sends its asks: the engine's, since `settings.ask_mode`
/// is compiled into the policy.
pub use aileron_engine::AskMode;
pub use answer::{AlwaysScope, Answer, Channel, Outcome, Question, escape_glob, suggest_prefix};
pub use core::{
    Adjust, Amendment, Core, DOOM_LOOP_THRESHOLD, Decided, JudgeAsk, Pending, REJECTED_EARLIER,
    Request, Step, Subject, denied_message, judged_action, subject_action,
};
pub use session::{SavedApproval, SavedSession};

use aileron_audit::{AuditAction, AuditRecord};

/// What can go wrong around a decision (its records and amendments).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("the amended policy would not load, left unchanged: {0}")]
    WouldNotLoad(String),
    #[error("the `allow:` list is written in a form Aileron does not edit; add the rule by hand")]
    UneditableAllow,
}

/// Who asked and where, for the audit record.
pub struct Origin<'a> {
    /// RFC 3339 time of the request.
    pub time: &'a str,
    /// `shim`, `hook:claude-code`, `supervisor`, `server`.
    pub adapter: &'a str,
    pub session: Option<&'a str>,
    pub agent: Option<&'a str>,
    pub cwd: Option<&'a str>,
    pub latency_us: u64,
}

impl Decided {
    /// The audit record of this decision (not masked yet: the adapter's
    /// masker knows its secrets).
    pub fn record(&self, origin: &Origin<'_>) -> AuditRecord {
        AuditRecord {
            time: origin.time.to_owned(),
            session: origin.session.map(str::to_owned),
            agent: origin.agent.map(str::to_owned),
            adapter: origin.adapter.to_owned(),
            cwd: origin.cwd.map(str::to_owned),
            action: AuditAction::from_action(&self.action),
            decision: self.verdict.decision.as_str().to_owned(),
            outcome: self.outcome.map(|o| o.as_str().to_owned()),
            source: self.verdict.source.as_str().to_owned(),
            rule: self.verdict.rule.clone(),
            reason: self.verdict.reason.clone(),
            approver: self.verdict.approver.clone(),
            latency_us: origin.latency_us,
            judge: self.judge.clone(),
        }
    }
}
