//! What an approver says, through which channel, and what finally happened.

use std::fmt;
use std::time::Duration;

/// What the human (or another approver) is asked about.
#[derive(Clone, Debug)]
pub struct Question {
    /// The whole line the agent wants to run (a tool call's description).
    pub line: String,
    /// The simple command (or action summary) that needs approval.
    pub command: String,
    pub rule: Option<String>,
    pub reason: String,
    /// A prefix pattern to offer for "always" (`git push *`); empty for a
    /// non-shell action, whose "always" covers exactly that action.
    pub suggestion: String,
    pub timeout: Duration,
    /// What happens when nobody answers in time.
    pub allow_on_timeout: bool,
}

/// Where an "always" answer is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlwaysScope {
    /// In memory (and the hook session's file) until the session ends.
    Session,
    /// Appended to the project's `aileron.yaml`.
    Project,
    /// Appended to `~/.aileron/settings.yaml`.
    User,
}

/// An approver's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Once,
    /// Allow from now on what `pattern` matches: a command glob for a shell
    /// command; ignored for other actions, whose "always" pins the fields
    /// the human saw. Empty: exactly this command.
    Always(AlwaysScope, String),
    Reject,
    /// Reject, and tell the agent why so it can correct itself.
    Feedback(String),
    Timeout,
    /// Nobody can be asked; the text says why.
    Unavailable(String),
}

impl Answer {
    /// A person decided (not the clock, not a missing approver).
    pub fn by_a_person(&self) -> bool {
        matches!(
            self,
            Answer::Once | Answer::Always(..) | Answer::Reject | Answer::Feedback(_)
        )
    }
}

/// The channel an answer really came through, as the audit record names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Channel {
    /// The launch session's (or the shim's) terminal.
    Terminal,
    /// The dashboard or the server's approval API.
    Dashboard,
    /// `aileron approve`, attached to the launch session's socket.
    Approve,
    /// The agent's own permission prompt (its host asked its human).
    Agent,
    /// A webhook approver, by its id.
    Webhook(String),
    /// An LLM judge, by its name.
    Judge(String),
}

impl Channel {
    pub fn as_str(&self) -> &str {
        match self {
            Channel::Terminal => "terminal",
            Channel::Dashboard => "dashboard",
            Channel::Approve => "approve",
            Channel::Agent => "agent",
            Channel::Webhook(id) | Channel::Judge(id) => id,
        }
    }
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happened to a request that was not simply decided by the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Allowed after more than one answer (parts of one line).
    Approved,
    ApprovedOnce,
    ApprovedAlwaysSession,
    ApprovedAlwaysProject,
    ApprovedAlwaysUser,
    Rejected,
    /// Rejected with feedback for the agent.
    Corrected,
    /// Nobody answered in time: the rule's `on_timeout` allowed or denied.
    Timeout {
        allowed: bool,
    },
    /// Nobody could be asked.
    NoApprover,
    /// Handed to the agent to ask its human.
    AskedAgent,
    TooManyPrompts,
    /// An action with the same id was already waiting.
    DuplicateDenied,
    /// The LLM judge allowed it.
    JudgeAllowed,
    /// The LLM judge denied it.
    JudgeDenied,
    /// The judge gave no verdict: the rule's `fail_closed` decided.
    JudgeFailed {
        allowed: bool,
    },
}

impl Outcome {
    /// The form the audit log and the API use.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Approved => "approved",
            Outcome::ApprovedOnce => "approved-once",
            Outcome::ApprovedAlwaysSession => "approved-always-session",
            Outcome::ApprovedAlwaysProject => "approved-always-project",
            Outcome::ApprovedAlwaysUser => "approved-always-user",
            Outcome::Rejected => "rejected",
            Outcome::Corrected => "corrected",
            Outcome::Timeout { allowed: true } => "timeout-allow",
            Outcome::Timeout { allowed: false } => "timeout-deny",
            Outcome::NoApprover => "no-terminal",
            Outcome::AskedAgent => "asked-agent",
            Outcome::TooManyPrompts => "too-many-prompts",
            Outcome::DuplicateDenied => "duplicate-denied",
            Outcome::JudgeAllowed => "judge-allowed",
            Outcome::JudgeDenied => "judge-denied",
            Outcome::JudgeFailed { allowed: true } => "judge-failed-allow",
            Outcome::JudgeFailed { allowed: false } => "judge-failed-deny",
        }
    }

    pub(crate) fn always(scope: AlwaysScope) -> Outcome {
        match scope {
            AlwaysScope::Session => Outcome::ApprovedAlwaysSession,
            AlwaysScope::Project => Outcome::ApprovedAlwaysProject,
            AlwaysScope::User => Outcome::ApprovedAlwaysUser,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A command glob that matches exactly `command`.
pub fn escape_glob(command: &str) -> String {
    let mut out = String::with_capacity(command.len());
    for c in command.chars() {
        if matches!(c, '*' | '?' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The prefix pattern offered for "always": the program and its
/// subcommand (`git push origin main` → `git push *`).
pub fn suggest_prefix(command: &str) -> String {
    let words: Vec<&str> = command.split(' ').filter(|w| !w.is_empty()).collect();
    let keep = match words.as_slice() {
        [] => return String::new(),
        [_] => 1,
        [_, second, ..] if !second.starts_with('-') && !second.contains('/') => 2,
        _ => 1,
    };
    format!("{} *", escape_glob(&words[..keep].join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_escapes() {
        assert_eq!(suggest_prefix("git push origin main"), "git push *");
        assert_eq!(suggest_prefix("ls -la"), "ls *");
        assert_eq!(suggest_prefix("cat ./x"), "cat *");
        assert_eq!(escape_glob("echo *"), "echo \\*");
    }
}
