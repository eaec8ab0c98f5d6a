//! Helpers shared by the integration tests.
#![allow(dead_code)]

use aileron_audit::{AuditAction, AuditRecord};

pub fn record(time: &str, session: &str, decision: &str, summary: &str) -> AuditRecord {
    AuditRecord {
        time: time.into(),
        session: (!session.is_empty()).then(|| session.to_owned()),
        agent: Some("claude-code".into()),
        adapter: "shim".into(),
        cwd: Some("/work/p".into()),
        action: AuditAction {
            id: format!("a-{summary}"),
            kind: "shell.exec".into(),
            summary: summary.into(),
            facets: Default::default(),
        },
        decision: decision.into(),
        outcome: None,
        source: "static".into(),
        rule: Some("r1".into()),
        reason: "because".into(),
        approver: None,
        latency_us: 42,
        judge: None,
    }
}
