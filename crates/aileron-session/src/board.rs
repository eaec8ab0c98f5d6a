//! Asks that wait in the launch session for an answer from another
//! channel than its terminal (`aileron approve`, attached to the session's
//! socket): when the agent owns the terminal (a full-screen program in raw
//! mode, another foreground job), the session never reads it.
//!
//! The board only carries the answer: the decision stays with the
//! session's `Core::answer`, as for a terminal prompt.

use crate::prompt::{AlwaysScope, Answer, Question};
use serde::{Deserialize, Serialize};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// One ask as `aileron approve` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAsk {
    /// Answers name it (`aileron approve --answer ID ...`).
    pub id: String,
    /// The command (or action summary) that needs an answer.
    pub command: String,
    /// The whole line it is part of.
    pub line: String,
    /// The simple commands of the line, as the policy saw them.
    #[serde(default)]
    pub commands: Vec<String>,
    /// The action's type (`shell.exec`, `fs.write`, ...).
    #[serde(default)]
    pub kind: String,
    pub rule: Option<String>,
    pub reason: String,
    /// The prefix an "always" may take instead of exactly the command
    /// (empty: not a shell command, "always" covers exactly this action).
    #[serde(default)]
    pub suggestion: String,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// When it started waiting (RFC 3339).
    #[serde(default)]
    pub since: String,
    /// Seconds left before the timeout decides.
    #[serde(default)]
    pub timeout_secs: u64,
    /// `allow` or `deny`: what the timeout decides.
    #[serde(default)]
    pub on_timeout: String,
}

impl PendingAsk {
    /// The view of `q`, with what the caller knows about the request.
    pub fn of(q: &Question) -> PendingAsk {
        PendingAsk {
            command: q.command.clone(),
            line: q.line.clone(),
            rule: q.rule.clone(),
            reason: q.reason.clone(),
            suggestion: q.suggestion.clone(),
            timeout_secs: q.timeout.as_secs(),
            on_timeout: if q.allow_on_timeout { "allow" } else { "deny" }.to_owned(),
            ..PendingAsk::default()
        }
    }
}

/// An answer on the wire: `once`, `session`, `project`, `user` (with the
/// pattern "always" covers: empty for exactly the command), `reject`,
/// `feedback` (with its text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "lowercase")]
pub enum WireAnswer {
    Once,
    Session {
        #[serde(default)]
        pattern: String,
    },
    Project {
        #[serde(default)]
        pattern: String,
    },
    User {
        #[serde(default)]
        pattern: String,
    },
    Reject,
    Feedback {
        text: String,
    },
}

impl WireAnswer {
    /// The answer for the ask `q` waits with: an "always" pattern is
    /// exactly the command, or the prefix the ask offered; nothing else.
    pub fn to_answer(&self, ask: &PendingAsk) -> Result<Answer, String> {
        let always = |scope, pattern: &str| {
            let exact = crate::prompt::escape_glob(&ask.command);
            if pattern.is_empty() || pattern == exact || pattern == ask.command {
                Ok(Answer::Always(scope, exact))
            } else if !ask.suggestion.is_empty() && pattern == ask.suggestion {
                Ok(Answer::Always(scope, ask.suggestion.clone()))
            } else {
                Err(format!(
                    "an \"always\" covers exactly `{}`{}",
                    ask.command,
                    if ask.suggestion.is_empty() {
                        String::new()
                    } else {
                        format!(" or the prefix `{}`", ask.suggestion)
                    }
                ))
            }
        };
        match self {
            WireAnswer::Once => Ok(Answer::Once),
            WireAnswer::Session { pattern } => always(AlwaysScope::Session, pattern),
            WireAnswer::Project { pattern } => always(AlwaysScope::Project, pattern),
            WireAnswer::User { pattern } => always(AlwaysScope::User, pattern),
            WireAnswer::Reject => Ok(Answer::Reject),
            WireAnswer::Feedback { text } if text.trim().is_empty() => {
                Err("feedback needs a text".to_owned())
            }
            WireAnswer::Feedback { text } => Ok(Answer::Feedback(text.trim().to_owned())),
        }
    }
}

/// The asks waiting for another channel, and their answers.
#[derive(Default)]
pub struct Board {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    next: u64,
    slots: Vec<Slot>,
}

struct Slot {
    view: PendingAsk,
    deadline: Instant,
    answer: Option<Answer>,
}

impl Board {
    /// Puts `view` on the board and waits for its answer, at most `timeout`.
    /// `posted` runs once it is listed (a notification).
    pub fn wait(
        &self,
        mut view: PendingAsk,
        timeout: Duration,
        posted: impl FnOnce(&PendingAsk),
    ) -> Answer {
        let deadline = Instant::now() + timeout;
        let id = {
            let mut st = self.lock();
            st.next += 1;
            view.id = st.next.to_string();
            view.since = crate::decider::now_rfc3339();
            st.slots.push(Slot {
                view: view.clone(),
                deadline,
                answer: None,
            });
            view.id.clone()
        };
        self.changed.notify_all();
        posted(&view);
        let mut st = self.lock();
        loop {
            let pos = st.slots.iter().position(|s| s.view.id == id);
            if let Some(i) = pos
                && st.slots[i].answer.is_some()
            {
                let slot = st.slots.remove(i);
                return slot.answer.unwrap_or(Answer::Timeout);
            }
            let left = match deadline.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left,
                _ => {
                    st.slots.retain(|s| s.view.id != id);
                    return Answer::Timeout;
                }
            };
            st = self
                .changed
                .wait_timeout(st, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// What waits, oldest first, with the seconds each has left.
    pub fn list(&self) -> Vec<PendingAsk> {
        let now = Instant::now();
        self.lock()
            .slots
            .iter()
            .filter(|s| s.answer.is_none())
            .map(|s| PendingAsk {
                timeout_secs: s.deadline.saturating_duration_since(now).as_secs(),
                ..s.view.clone()
            })
            .collect()
    }

    /// Answers the ask `id`.
    pub fn answer(&self, id: &str, answer: &WireAnswer) -> Result<(), String> {
        let mut st = self.lock();
        let slot = st
            .slots
            .iter_mut()
            .find(|s| s.view.id == id && s.answer.is_none())
            .ok_or_else(|| format!("no ask {id} is waiting (answered, or timed out)"))?;
        slot.answer = Some(answer.to_answer(&slot.view)?);
        drop(st);
        self.changed.notify_all();
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask() -> PendingAsk {
        PendingAsk {
            command: "git push origin main".into(),
            suggestion: "git push *".into(),
            ..PendingAsk::default()
        }
    }

    #[test]
    fn an_always_covers_exactly_the_command_or_the_offered_prefix() {
        let exact = WireAnswer::Session {
            pattern: String::new(),
        };
        assert_eq!(
            exact.to_answer(&ask()),
            Ok(Answer::Always(
                AlwaysScope::Session,
                "git push origin main".into()
            ))
        );
        let prefix = WireAnswer::Project {
            pattern: "git push *".into(),
        };
        assert_eq!(
            prefix.to_answer(&ask()),
            Ok(Answer::Always(AlwaysScope::Project, "git push *".into()))
        );
        let other = WireAnswer::User {
            pattern: "*".into(),
        };
        assert!(other.to_answer(&ask()).is_err());
        let empty = WireAnswer::Feedback { text: " ".into() };
        assert!(empty.to_answer(&ask()).is_err());
    }

    #[test]
    fn a_waiting_ask_is_listed_answered_and_gone() {
        let board = std::sync::Arc::new(Board::default());
        let b = std::sync::Arc::clone(&board);
        let waiter = std::thread::spawn(move || b.wait(ask(), Duration::from_secs(20), |_| {}));
        let id = loop {
            if let Some(a) = board.list().first() {
                break a.id.clone();
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(board.answer("nope", &WireAnswer::Once).is_err());
        board.answer(&id, &WireAnswer::Once).unwrap();
        assert_eq!(waiter.join().unwrap(), Answer::Once);
        assert!(board.list().is_empty());
        assert!(board.answer(&id, &WireAnswer::Reject).is_err());
    }

    #[test]
    fn nobody_answering_is_a_timeout() {
        let board = Board::default();
        let a = board.wait(ask(), Duration::from_millis(30), |_| {});
        assert_eq!(a, Answer::Timeout);
        assert!(board.list().is_empty());
    }
}
