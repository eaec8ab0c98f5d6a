//! Aileron's audit log (SPEC 11): every decision, from every adapter, is one
//! JSON line appended to `settings.audit_log` (default `.aileron/audit.jsonl`
//! beside the policy).
//!
//! - [`AuditRecord`] is the line; [`AuditRecord::new`] builds one from an
//!   engine [`Action`](aileron_engine::Action) and
//!   [`Verdict`](aileron_engine::Verdict).
//! - [`Masker`] masks secrets: scrubbed environment values and anything that
//!   looks like a credential in a command, URL or header. Mask every record
//!   ([`AuditRecord::masked`]) before writing it.
//! - [`AuditLog::append`] writes a line so that concurrent writers never
//!   interleave or lose lines.
//! - [`read`], [`follow`] and [`format_line`] serve `aileron audit`.
//!
//! ```
//! use aileron_audit::{AuditAction, AuditLog, AuditRecord, Filter, Masker};
//! let dir = tempfile::tempdir().unwrap();
//! let log = AuditLog::new(dir.path().join(".aileron/audit.jsonl"));
//! let rec = AuditRecord {
//!     time: "2026-11-22T10:00:00Z".into(),
//!     session: Some("s-1234".into()),
//!     agent: Some("claude-code".into()),
//!     adapter: "shim".into(),
//!     cwd: None,
//!     action: AuditAction {
//!         id: "a1".into(),
//!         kind: "shell.exec".into(),
//!         summary: "curl -H 'Authorization: Bearer abc123' https://api.x/y".into(),
//!         facets: Default::default(),
//!     },
//!     decision: "allow".into(),
//!     outcome: None,
//!     source: "static".into(),
//!     rule: Some("curl".into()),
//!     reason: "reads are fine".into(),
//!     approver: None,
//!     latency_us: 120,
//!     judge: None,
//! };
//! log.append(&rec.masked(&Masker::new(vec![]))).unwrap();
//! let got = aileron_audit::read_now(log.path(), &Filter::default()).unwrap();
//! assert_eq!(
//!     got.records[0].action.summary,
//!     "curl -H 'Authorization: Bearer ***' https://api.x/y"
//! );
//! ```

mod error;
mod log;
mod mask;
mod query;
mod record;
mod time;

pub use error::Error;
pub use log::AuditLog;
pub use mask::{MASK, MIN_SECRET_LEN, Masker, sensitive_name};
pub use query::{
    Filter, FollowOptions, POLL_INTERVAL, ReadResult, clean, follow, format_line, read, read_now,
};
pub use record::{AuditAction, AuditRecord, JudgeUse};
pub use time::{format_rfc3339, now_rfc3339};
