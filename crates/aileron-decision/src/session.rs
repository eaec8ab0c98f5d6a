//! What a session remembers between its requests: "always" answers, the
//! history `rate` rules count, the doom-loop window, the last "reject".

use aileron_engine::action::FieldPath;
use aileron_engine::glob::Glob;
use aileron_engine::pattern::{Cond, Matcher};
use aileron_engine::{Action, Rule};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;

/// Actions of a session kept for `rate` windows.
pub(crate) const HISTORY_LEN: usize = 1024;
/// The history's buffer holds up to this many before its oldest are
/// dropped at once (a slice for the evaluation without moving it on
/// every push, as a ring buffer made contiguous would).
const HISTORY_BUFFER: usize = HISTORY_LEN + HISTORY_LEN / 4;
/// Actions of a session kept when it is saved (a hook session's file).
const SAVED_HISTORY_LEN: usize = 64;

/// An "always for this session" answer, as kept between processes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SavedApproval {
    /// Shell commands matching a command glob.
    Command { pattern: String, priority: i64 },
    /// Actions of `kind` whose fields equal these values.
    Action {
        kind: String,
        fields: Vec<(String, String)>,
        priority: i64,
    },
}

impl SavedApproval {
    /// The priority the approval holds (that of the rule that asked).
    pub fn priority(&self) -> i64 {
        match self {
            SavedApproval::Command { priority, .. } | SavedApproval::Action { priority, .. } => {
                *priority
            }
        }
    }

    /// The session-layer rule this approval stands for; `None` for a saved
    /// field path this version does not know.
    pub(crate) fn rule(&self, seq: u32) -> Option<Rule> {
        let (matcher, label) = match self {
            SavedApproval::Command { pattern, .. } => (
                Matcher::All(vec![
                    Matcher::Field(FieldPath::Type, Cond::Equals("shell.exec".into())),
                    Matcher::Field(
                        FieldPath::Facet(vec!["shell".into(), "command".into()]),
                        Cond::Glob(Glob::command(pattern)),
                    ),
                ]),
                format!("command: {pattern}"),
            ),
            SavedApproval::Action { kind, fields, .. } => {
                let mut all = vec![Matcher::Field(
                    FieldPath::Type,
                    Cond::Equals(kind.as_str().into()),
                )];
                for (path, value) in fields {
                    let path = FieldPath::parse(path).ok()?;
                    all.push(Matcher::Field(path, Cond::Equals(value.as_str().into())));
                }
                let label = fields
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                (Matcher::All(all), format!("{kind}: {label}"))
            }
        };
        let id = format!("session:always[{seq}]");
        Some(Rule::session_approval(
            &id,
            &label,
            matcher,
            self.priority(),
            seq,
        ))
    }
}

/// What a session remembers between the processes of one agent session
/// (each hook call is its own process).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SavedSession {
    #[serde(default)]
    pub approvals: Vec<SavedApproval>,
    #[serde(default)]
    pub recent: Vec<String>,
    #[serde(default)]
    pub history: Vec<Action>,
    /// When the last "reject" was given (Unix nanoseconds).
    #[serde(default)]
    pub last_reject: u128,
}

/// One session's state.
#[derive(Default)]
pub(crate) struct SessionState {
    /// Shared with the evaluations under way: one takes them (an atomic
    /// count) and evaluates without holding the session's lock.
    pub approvals: Arc<Vec<Rule>>,
    /// What the approvals were made from, to save them.
    pub saved_approvals: Vec<SavedApproval>,
    /// The session's latest actions, for `rate` matchers (oldest first;
    /// [`SessionState::history`] is the window).
    history: Vec<Action>,
    /// Digests of the latest requests, for the doom loop.
    pub recent: VecDeque<String>,
    /// Bumped by every "reject": asks waiting since before it are rejected too.
    pub reject_epoch: u64,
    /// When the last "reject" was given (Unix nanoseconds), for other processes.
    pub last_reject: u128,
}

impl SessionState {
    pub fn remember(&mut self, approval: SavedApproval) {
        if self.saved_approvals.contains(&approval) {
            return;
        }
        let Some(rule) = approval.rule(self.approvals.len() as u32) else {
            return;
        };
        Arc::make_mut(&mut self.approvals).push(rule);
        self.saved_approvals.push(approval);
    }

    pub fn push_history(&mut self, action: Action) {
        if self.history.len() >= HISTORY_BUFFER {
            self.history.drain(..self.history.len() - HISTORY_LEN + 1);
        }
        self.history.push(action);
    }

    /// The latest [`HISTORY_LEN`] actions, oldest first.
    pub fn history(&self) -> &[Action] {
        &self.history[self.history.len().saturating_sub(HISTORY_LEN)..]
    }

    pub fn clear_history(&mut self) {
        self.history.clear();
    }

    pub fn export(&self) -> SavedSession {
        SavedSession {
            approvals: self.saved_approvals.clone(),
            recent: self.recent.iter().cloned().collect(),
            history: self
                .history()
                .iter()
                .rev()
                .take(SAVED_HISTORY_LEN)
                .rev()
                .map(without_tool_input)
                .collect(),
            last_reject: self.last_reject,
        }
    }

    pub fn import(&mut self, saved: SavedSession) {
        for approval in saved.approvals {
            self.remember(approval);
        }
        self.recent = saved.recent.into_iter().collect();
        self.history = saved.history;
        self.last_reject = saved.last_reject;
    }
}

/// An action as `rate` windows need it, without the tool's raw input
/// (file contents), so that saved history stays small.
fn without_tool_input(a: &Action) -> Action {
    let mut a = a.clone();
    if let Some(serde_json::Value::Object(tool)) = a.facets.get_mut("tool") {
        tool.remove("input");
    }
    a
}

/// The fields an "always" answer for a non-shell action pins: what the
/// human saw, no more (the file, the method and URL, the MCP tool, the
/// tool name).
pub(crate) fn approval_fields(a: &Action) -> Vec<(String, String)> {
    let pick: &[&str] = match a.kind.as_str() {
        "fs.read" | "fs.write" | "fs.list" => &["fs.path"],
        "http.request" => &["http.method", "http.url"],
        "mcp.call" => &["mcp.server", "mcp.tool"],
        "tool.call" => &["tool.name"],
        _ => &["summary"],
    };
    pick.iter()
        .filter_map(|path| {
            let value = if *path == "summary" {
                Some(a.summary.clone())
            } else {
                let mut parts = path.split('.');
                let facet = a.facets.get(parts.next()?)?;
                facet.get(parts.next()?)?.as_str().map(str::to_owned)
            };
            value.map(|v| ((*path).to_owned(), v))
        })
        .collect()
}
