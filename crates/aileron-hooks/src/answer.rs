//! Answering in each agent's own format.
//!
//! Every agent lets a call through on some hook failures (a crash, a
//! timeout, an exit code it does not know, output it cannot parse), so a
//! deny is said every way the agent understands at once: its JSON on
//! stdout, the reason on stderr, and its blocking exit code.

use crate::agent::Agent;
use serde_json::json;

/// What the hook decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Allow {
        reason: String,
    },
    Deny {
        reason: String,
    },
    /// Hand the question to the agent's own prompt.
    Ask {
        reason: String,
    },
}

/// What the hook process prints and how it exits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub stdout: String,
    pub stderr: String,
    pub exit: u8,
}

/// Can `agent` ask its own human for this event (and act on the answer)?
pub fn agent_can_ask(agent: Agent, hook_event: &str) -> bool {
    match agent {
        // PermissionRequest: "no opinion" shows Claude Code's own dialog.
        Agent::ClaudeCode => matches!(hook_event, "PreToolUse" | "PermissionRequest"),
        // Codex's PermissionRequest: "no opinion" leaves it to Codex's approval.
        Agent::Codex if hook_event == "PermissionRequest" => true,
        Agent::Cursor => matches!(hook_event, "beforeShellExecution" | "beforeMCPExecution"),
        // Codex treats `ask` as a failed hook (the call runs); Gemini CLI
        // accepts it but does not block; Cline and opencode have no ask.
        Agent::Codex | Agent::Gemini | Agent::Cline | Agent::Opencode => false,
    }
}

/// The reply for `outcome` to `agent`'s `hook_event`.
pub fn render(agent: Agent, hook_event: &str, outcome: &Outcome) -> Reply {
    // Only agents that can ask are ever handed an ask; any other gets a deny.
    let outcome = match outcome {
        Outcome::Ask { reason } if !agent_can_ask(agent, hook_event) => Outcome::Deny {
            reason: reason.clone(),
        },
        o => o.clone(),
    };
    let (stdout, blocking) = match agent {
        // Claude Code and Codex answer a permission request the same way.
        Agent::ClaudeCode | Agent::Codex if hook_event == "PermissionRequest" => match &outcome {
            Outcome::Allow { .. } => (
                json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                    "decision": {"behavior": "allow"}}}),
                false,
            ),
            Outcome::Deny { reason } => (
                json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                    "decision": {"behavior": "deny", "message": reason}}}),
                // Exit 2 is not honoured here; the JSON is what counts.
                false,
            ),
            // No opinion: Claude Code shows its own dialog.
            Outcome::Ask { .. } => return reply(String::new(), String::new(), 0),
        },
        Agent::ClaudeCode => {
            let (decision, reason) = match &outcome {
                Outcome::Allow { reason } => ("allow", reason),
                Outcome::Deny { reason } => ("deny", reason),
                Outcome::Ask { reason } => ("ask", reason),
            };
            (
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                    "permissionDecision": decision, "permissionDecisionReason": reason}}),
                decision == "deny",
            )
        }
        Agent::Codex => match &outcome {
            // `allow` without a rewritten input is an error to Codex: say nothing.
            Outcome::Allow { .. } => return reply(String::new(), String::new(), 0),
            Outcome::Deny { reason } | Outcome::Ask { reason } => (
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                    "permissionDecision": "deny", "permissionDecisionReason": reason}}),
                true,
            ),
        },
        Agent::Gemini | Agent::Opencode => match &outcome {
            Outcome::Allow { reason } => (json!({"decision": "allow", "reason": reason}), false),
            Outcome::Deny { reason } | Outcome::Ask { reason } => {
                (json!({"decision": "deny", "reason": reason}), true)
            }
        },
        Agent::Cursor => match &outcome {
            Outcome::Allow { .. } => (json!({"permission": "allow"}), false),
            Outcome::Deny { reason } => (
                json!({"permission": "deny", "user_message": reason, "agent_message": reason}),
                true,
            ),
            Outcome::Ask { reason } => (
                json!({"permission": "ask", "user_message": reason, "agent_message": reason}),
                false,
            ),
        },
        // Cline reads the JSON whatever the exit code, and treats a failing
        // hook as "go on": the JSON must carry the deny.
        Agent::Cline => match &outcome {
            Outcome::Allow { .. } => (json!({"cancel": false}), false),
            Outcome::Deny { reason } | Outcome::Ask { reason } => {
                return reply(
                    json!({"cancel": true, "errorMessage": reason}).to_string(),
                    format!("{reason}\n"),
                    0,
                );
            }
        },
    };
    let stdout = stdout.to_string();
    if blocking {
        let reason = match &outcome {
            Outcome::Deny { reason } | Outcome::Ask { reason } | Outcome::Allow { reason } => {
                reason
            }
        };
        reply(stdout, format!("{reason}\n"), 2)
    } else {
        reply(stdout, String::new(), 0)
    }
}

/// A deny for a failure before the event could be read: in the agent's
/// pre-tool format (what it most likely sent), with its blocking exit code.
pub fn failure(agent: Agent, reason: &str) -> Reply {
    let event = match agent {
        Agent::ClaudeCode | Agent::Codex => "PreToolUse",
        Agent::Gemini => "BeforeTool",
        Agent::Cursor => "beforeShellExecution",
        Agent::Cline => "PreToolUse",
        Agent::Opencode => "tool.execute.before",
    };
    render(
        agent,
        event,
        &Outcome::Deny {
            reason: reason.to_owned(),
        },
    )
}

fn reply(mut stdout: String, stderr: String, exit: u8) -> Reply {
    if !stdout.is_empty() {
        stdout.push('\n');
    }
    Reply {
        stdout,
        stderr,
        exit,
    }
}
