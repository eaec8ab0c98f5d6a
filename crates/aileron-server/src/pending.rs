//! The queue of actions waiting for a human (SPEC 10, 12): entries keyed by
//! the Action's id, a broadcast of additions and removals for the SSE
//! stream, and exactly-once resolution.

use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, oneshot};

/// How many resolved ids are remembered, to answer 409 instead of 404.
const RESOLVED_MEMORY: usize = 4096;

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

/// What the dashboard sees of a pending entry.
#[derive(Clone, Debug, Serialize)]
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
    /// `evaluate` (decided by this server) or `adapter` (enqueued by a local adapter).
    pub origin: &'static str,
    /// The LLM judge that sent this action on to a person (its verdict
    /// was `ask`), with what it said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeView>,
}

/// What a pending entry shows of the judge that escalated it.
#[derive(Clone, Debug, Serialize)]
pub struct JudgeView {
    /// The judge's name in `judges:`.
    pub name: String,
    pub model: String,
    /// The judge's own one-line reason.
    pub reason: String,
}

struct Entry {
    view: PendingView,
    tx: oneshot::Sender<Resolution>,
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

/// Why a resolution was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum ResolveError {
    /// Already answered (or timed out).
    Resolved,
    NotFound,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    resolved: HashSet<String>,
    resolved_order: VecDeque<String>,
}

/// The queue.
pub struct Queue {
    inner: Mutex<Inner>,
    events: broadcast::Sender<Event>,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            inner: Mutex::default(),
            events: broadcast::channel(1024).0,
        }
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds an entry; `None` when one with the same id is already waiting.
    pub fn add(self: &Arc<Self>, view: PendingView) -> Option<Waiter> {
        let (tx, rx) = oneshot::channel();
        let id = view.id.clone();
        let shared = Arc::new(view.clone());
        {
            let mut inner = self.lock();
            if inner.entries.contains_key(&id) {
                return None;
            }
            inner.resolved.remove(&id);
            inner.entries.insert(id.clone(), Entry { view, tx });
        }
        let _ = self.events.send(Event::Pending(shared));
        Some(Waiter {
            queue: self.clone(),
            id,
            rx: Some(rx),
        })
    }

    /// Resolves an entry; exactly one resolution per entry succeeds.
    pub fn resolve(&self, id: &str, resolution: Resolution) -> Result<(), ResolveError> {
        let entry = {
            let mut inner = self.lock();
            match inner.entries.remove(id) {
                Some(e) => {
                    inner.remember(id);
                    e
                }
                None if inner.resolved.contains(id) => return Err(ResolveError::Resolved),
                None => return Err(ResolveError::NotFound),
            }
        };
        let answer = resolution.answer.as_str().to_owned();
        // The waiter may have gone (client disconnected): still resolved.
        let _ = entry.tx.send(resolution);
        let _ = self.events.send(Event::Removed {
            id: id.to_owned(),
            answer,
        });
        Ok(())
    }

    /// Removes an entry nobody answered (timeout, or the waiter left).
    fn withdraw(&self, id: &str, why: &str) {
        let removed = {
            let mut inner = self.lock();
            let removed = inner.entries.remove(id).is_some();
            if removed {
                inner.remember(id);
            }
            removed
        };
        if removed {
            let _ = self.events.send(Event::Removed {
                id: id.to_owned(),
                answer: why.to_owned(),
            });
        }
    }

    pub fn snapshot(&self) -> Vec<PendingView> {
        let inner = self.lock();
        let mut v: Vec<PendingView> = inner.entries.values().map(|e| e.view.clone()).collect();
        v.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        v
    }

    /// Ids of the entries of one session, other than `except`.
    pub fn session_entries(&self, session: &str, except: &str) -> Vec<PendingView> {
        let inner = self.lock();
        inner
            .entries
            .values()
            .filter(|e| e.view.session.as_deref() == Some(session) && e.view.id != except)
            .map(|e| e.view.clone())
            .collect()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }
}

impl Inner {
    fn remember(&mut self, id: &str) {
        if self.resolved.insert(id.to_owned()) {
            self.resolved_order.push_back(id.to_owned());
            if self.resolved_order.len() > RESOLVED_MEMORY
                && let Some(old) = self.resolved_order.pop_front()
            {
                self.resolved.remove(&old);
            }
        }
    }
}

/// Waits for an entry's resolution; withdraws the entry when dropped early.
pub struct Waiter {
    queue: Arc<Queue>,
    id: String,
    rx: Option<oneshot::Receiver<Resolution>>,
}

impl Waiter {
    /// The answer, or `Timeout` after `timeout`.
    pub async fn wait(mut self, timeout: std::time::Duration) -> Resolution {
        let rx = self.rx.as_mut().expect("a waiter waits once");
        let got = tokio::time::timeout(timeout, rx).await;
        let mut rx = self.rx.take().expect("still there");
        match got {
            Ok(Ok(r)) => r,
            _ => {
                self.queue.withdraw(&self.id, "timeout");
                // A decision may have arrived just before the withdrawal.
                match rx.try_recv() {
                    Ok(r) => r,
                    Err(_) => Resolution {
                        answer: AnswerKind::Timeout,
                        reason: None,
                        reviewer: None,
                        channel: None,
                    },
                }
            }
        }
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if self.rx.is_some() {
            self.queue.withdraw(&self.id, "withdrawn");
        }
    }
}
