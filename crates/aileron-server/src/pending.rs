//! The queue of actions waiting for a human (SPEC 10, 12): entries keyed by
//! the Action's id, a broadcast of additions and removals for the SSE
//! stream, and the waiters of this server. Exactly one answer wins: the
//! database decides which (`replicas`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};

/// A human's (or the clock's) answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    Once,
    Always,
    Reject,
    Feedback,
    Timeout,
}

impl AnswerKind {
    /// `once | always | reject | feedback`, and `allow` (once) / `deny` (reject).
    pub fn parse(s: &str) -> Option<AnswerKind> {
        Some(match s {
            "once" | "allow" | "approve" => AnswerKind::Once,
            "always" => AnswerKind::Always,
            "reject" | "deny" => AnswerKind::Reject,
            "feedback" => AnswerKind::Feedback,
            _ => return None,
        })
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            AnswerKind::Once => "once",
            AnswerKind::Always => "always",
            AnswerKind::Reject => "reject",
            AnswerKind::Feedback => "feedback",
            AnswerKind::Timeout => "timeout",
        }
    }
}

/// The resolution of one pending entry.
#[derive(Clone, Debug, Serialize)]
pub struct Resolution {
    pub answer: AnswerKind,
    /// The reviewer's words (the feedback of `feedback`).
    pub reason: Option<String>,
    pub reviewer: Option<String>,
    /// Where the answer came from; `None`: not from a person (the server
    /// stopping, the clock).
    #[serde(skip)]
    pub channel: Option<aileron_decision::Channel>,
}

/// What the dashboard sees of a pending entry (also stored, as JSON, in
/// its row).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PendingView {
    pub id: String,
    pub action: Value,
    pub session: Option<String>,
    pub rule: Option<String>,
    pub reason: String,
    pub approver: Option<String>,
    pub created_at: String,
    pub timeout_secs: u64,
    pub on_timeout: String,
    /// `evaluate` (decided by the server) or `adapter` (enqueued by an adapter).
    pub origin: String,
    /// The LLM judge that sent this action on to a person (its verdict
    /// was `ask`), with what it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeView>,
    /// The agent token that asked (its id: 16 hex digits of its hash),
    /// for the caps on waiting asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// What a pending entry shows of the judge that escalated it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JudgeView {
    /// The judge's name in `judges:`.
    pub name: String,
    pub model: String,
    /// The judge's own one-line reason.
    pub reason: String,
}

/// An event of the SSE stream.
#[derive(Clone, Debug)]
pub enum Event {
    Pending(Arc<PendingView>),
    Removed { id: String, answer: String },
}

impl Event {
    pub fn name(&self) -> &'static str {
        match self {
            Event::Pending(_) => "pending",
            Event::Removed { .. } => "removed",
        }
    }

    pub fn data(&self) -> Value {
        match self {
            Event::Pending(v) => serde_json::to_value(&**v).unwrap_or(Value::Null),
            Event::Removed { id, answer } => json!({"id": id, "answer": answer}),
        }
    }
}

/// Why a decision was refused.
#[derive(Debug)]
pub enum ResolveError {
    /// Already answered (or timed out).
    Resolved,
    NotFound,
    /// The decision could not be stored: it is not one.
    Unstored(sqlx::Error),
}

/// One ask shown here: its view, and its waiters' channel.
struct Entry {
    view: Arc<PendingView>,
    done: watch::Sender<Option<Resolution>>,
}

/// The asks waiting, as this server shows them (its own and, on a shared
/// database, the other servers'), its waiters, and the dashboard's
/// stream. Who wins a decision is the database's to say
/// (`pending_actions`); this only delivers it.
pub struct Queue {
    entries: Mutex<HashMap<String, Entry>>,
    events: broadcast::Sender<Event>,
    /// Held while an ask is counted against the caps and put in: two asks
    /// of one session never both take its last place.
    pub(crate) admission: tokio::sync::Mutex<()>,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            entries: Mutex::default(),
            events: broadcast::channel(1024).0,
            admission: tokio::sync::Mutex::new(()),
        }
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Shows an ask that waits (here or on another server); false when it
    /// is shown already.
    pub fn show(&self, view: PendingView) -> bool {
        self.subscribe_to(view).1
    }

    /// Waits for the answer to the ask `view` (shown first when it is not).
    pub fn waiter(&self, view: PendingView) -> Waiter {
        Waiter {
            rx: self.subscribe_to(view).0,
        }
    }

    fn subscribe_to(&self, view: PendingView) -> (watch::Receiver<Option<Resolution>>, bool) {
        let shared = {
            let mut entries = self.lock();
            if let Some(e) = entries.get(&view.id) {
                return (e.done.subscribe(), false);
            }
            let shared = Arc::new(view);
            let (done, rx) = watch::channel(None);
            entries.insert(
                shared.id.clone(),
                Entry {
                    view: shared.clone(),
                    done,
                },
            );
            (rx, shared)
        };
        let _ = self.events.send(Event::Pending(shared.1));
        (shared.0, true)
    }

    /// Ends the ask `id` with `res`: its waiters here get it and the
    /// dashboards see it leave. False when it is not shown here.
    pub fn resolve(&self, id: &str, res: Resolution) -> bool {
        let Some(entry) = self.lock().remove(id) else {
            return false;
        };
        let answer = res.answer.as_str().to_owned();
        entry.done.send_replace(Some(res));
        let _ = self.events.send(Event::Removed {
            id: id.to_owned(),
            answer,
        });
        true
    }

    /// Takes the ask `id` off without an answer (it is gone from the
    /// database); its waiters get `None`.
    pub fn remove(&self, id: &str) -> bool {
        if self.lock().remove(id).is_none() {
            return false;
        }
        let _ = self.events.send(Event::Removed {
            id: id.to_owned(),
            answer: "withdrawn".into(),
        });
        true
    }

    /// Whether the ask `id` is shown (waits here or on another server).
    pub fn shows(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// Why `view` may not wait beside the asks shown: its session or its
    /// token has `limits`' number waiting already.
    pub fn over_limit(&self, view: &PendingView, limits: &crate::listen::Limits) -> Option<String> {
        let entries = self.lock();
        let count = |same: &dyn Fn(&PendingView) -> bool| {
            entries.values().filter(|e| same(&e.view)).count()
        };
        let session = view.session.as_deref();
        let token = view.token.as_deref();
        let full = |n: usize, cap: usize, whose: &str| {
            (n >= cap).then(|| {
                format!(
                    "too many asks waiting for a person: {whose} has {n} (the server's limit is {cap}); this action was not asked: wait for an answer, then send it again"
                )
            })
        };
        session
            .and_then(|s| {
                let n = count(&|v| v.session.as_deref() == Some(s));
                full(n, limits.asks_per_session, "this session")
            })
            .or_else(|| {
                let t = token?;
                let n = count(&|v| v.token.as_deref() == Some(t));
                full(n, limits.asks_per_token, "this agent token")
            })
    }

    /// The ids of the asks shown.
    pub fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    pub fn snapshot(&self) -> Vec<PendingView> {
        let entries = self.lock();
        let mut v: Vec<PendingView> = entries.values().map(|e| (*e.view).clone()).collect();
        v.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        v
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }
}

/// Waits for the answer to one ask.
pub struct Waiter {
    rx: watch::Receiver<Option<Resolution>>,
}

impl Waiter {
    /// The answer; `None` when the ask was taken off without one.
    pub async fn answer(&mut self) -> Option<Resolution> {
        match self.rx.wait_for(Option::is_some).await {
            Ok(r) => (*r).clone(),
            Err(_) => None,
        }
    }
}
