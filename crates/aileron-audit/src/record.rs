//! The shape of one audit line (SPEC 11).

use crate::mask::Masker;
use aileron_engine::{Action, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One decision, as written to the audit log: one JSON object per line.
///
/// Readers ignore fields they do not know, so newer writers may add some.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When the decision was made, RFC 3339.
    pub time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Which adapter asked: `shim`, `hook:claude-code`, `cli`, ...
    pub adapter: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    pub action: AuditAction,
    /// The verdict: `allow`, `deny`, `ask` or `judge`.
    pub decision: String,
    /// What finally happened after an `ask` or `judge`: `approved-once`,
    /// `approved-always-session`, `approved-always-project`,
    /// `approved-always-user`, `rejected`, `corrected`, `timeout-allow`, `timeout-deny`,
    /// `no-terminal`, `asked-agent`, ... (`aileron_decision::Outcome`)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Who or what reached the verdict: `static`, `default`, `builtin`,
    /// `human`, `llm`, `session`.
    pub source: String,
    /// The deciding rule's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(default)]
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
    /// Time from receiving the action to the final answer, in microseconds.
    #[serde(default)]
    pub latency_us: u64,
    /// The LLM judge's call, when a judge decided (or was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeUse>,
}

/// What one judge call cost and said (`aileron audit --judge` sums these).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeUse {
    /// The judge's name in `judges:`.
    pub name: String,
    pub model: String,
    /// `allow`, `deny`, `ask`, or `error` (the rule's `fail_closed` decided).
    pub verdict: String,
    /// Reused from the cache: no request was made.
    #[serde(default)]
    pub cached: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    #[serde(default)]
    pub latency_ms: u64,
}

/// The part of the [`Action`] the audit log keeps.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AuditAction {
    #[serde(default)]
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub facets: Map<String, Value>,
}

impl AuditAction {
    pub fn from_action(action: &Action) -> AuditAction {
        AuditAction {
            id: action.id.clone(),
            kind: action.kind.to_string(),
            summary: action.summary.clone(),
            facets: action
                .facets
                .iter()
                .map(|(k, v)| (k.clone(), clipped(v)))
                .collect(),
        }
    }
}

/// Longest string kept whole in a logged facet: a tool's input can be a
/// whole file (a 20 MB write), which the log needs to name, not to hold.
pub const MAX_LOGGED_STRING: usize = 16 * 1024;

fn clipped(v: &Value) -> Value {
    match v {
        Value::String(s) if s.len() > MAX_LOGGED_STRING => {
            let mut end = MAX_LOGGED_STRING;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            Value::String(format!(
                "{}…[{} more bytes not logged]",
                &s[..end],
                s.len() - end
            ))
        }
        Value::Array(items) => Value::Array(items.iter().map(clipped).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), clipped(v))).collect())
        }
        other => other.clone(),
    }
}

impl AuditRecord {
    /// A record of `verdict` for `action`, with the session, agent and
    /// working directory taken from the action. `outcome` is left empty.
    /// The record is not masked: call [`AuditRecord::masked`] before writing.
    pub fn new(
        time: impl Into<String>,
        adapter: impl Into<String>,
        action: &Action,
        verdict: &Verdict,
        latency_us: u64,
    ) -> AuditRecord {
        let source = match serde_json::to_value(verdict.source) {
            Ok(Value::String(s)) => s,
            _ => String::new(),
        };
        AuditRecord {
            time: time.into(),
            session: action.session.id.clone(),
            agent: action.session.agent.clone(),
            adapter: adapter.into(),
            cwd: action.session.cwd.clone(),
            action: AuditAction::from_action(action),
            decision: verdict.decision.as_str().to_owned(),
            outcome: None,
            source,
            rule: verdict.rule.clone(),
            reason: verdict.reason.clone(),
            approver: verdict.approver.clone(),
            latency_us,
            judge: None,
        }
    }

    /// A copy with credentials masked in the summary, the reason, the
    /// working directory and every string inside the facets.
    pub fn masked(&self, masker: &Masker) -> AuditRecord {
        let mut rec = self.clone();
        rec.action.summary = masker.mask(&rec.action.summary);
        rec.reason = masker.mask(&rec.reason);
        if let Some(cwd) = &mut rec.cwd {
            *cwd = masker.mask(cwd);
        }
        masker.mask_map(&mut rec.action.facets);
        rec
    }

    /// The record as one JSON line, without the newline.
    pub fn to_json_line(&self) -> String {
        // A struct of strings, maps and integers always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_strings_are_clipped_on_a_char_boundary_and_say_so() {
        let mut a = Action {
            kind: "fs.write".into(),
            ..Action::default()
        };
        let content = "é".repeat(MAX_LOGGED_STRING); // two bytes each
        a.facets.insert(
            "tool".into(),
            serde_json::json!({"name": "Write", "input": {"content": content, "file_path": "/p/x"}}),
        );
        let logged = AuditAction::from_action(&a);
        let text = logged.facets["tool"]["input"]["content"].as_str().unwrap();
        assert_eq!(
            text,
            format!(
                "{}…[{} more bytes not logged]",
                "é".repeat(MAX_LOGGED_STRING / 2),
                MAX_LOGGED_STRING
            )
        );
        assert_eq!(logged.facets["tool"]["input"]["file_path"], "/p/x");
    }
}
