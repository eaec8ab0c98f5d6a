//! The agents Aileron has hooks for, and what each one's hook protocol can do.
//!
//! Formats and failure behaviour are documented, with sources, in
//! `docs/agents-hooks.md`.

use std::time::Duration;

/// An agent whose tool calls reach `aileron hook`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Agent {
    ClaudeCode,
    Codex,
    Gemini,
    Cursor,
    Cline,
    Opencode,
}

impl Agent {
    pub const ALL: [Agent; 6] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Cline,
        Agent::Opencode,
    ];

    /// The name on the command line (`aileron hook claude-code`).
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Cline => "cline",
            Agent::Opencode => "opencode",
        }
    }

    pub fn parse(name: &str) -> Option<Agent> {
        let name = match name {
            "claude" => "claude-code",
            "gemini-cli" => "gemini",
            "codex-cli" => "codex",
            other => other,
        };
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// How long the agent waits for a hook when nobody configured it
    /// otherwise; a hook that takes longer is skipped, i.e. the call runs.
    /// Aileron answers well before: a prompt's timeout is cut to fit.
    pub fn hook_timeout(self) -> Duration {
        Duration::from_secs(match self {
            Agent::ClaudeCode | Agent::Codex => 600,
            // Gemini CLI: 60,000 ms; Cursor: undocumented, assume the same.
            Agent::Gemini | Agent::Cursor => 60,
            // Cline: fixed, not configurable.
            Agent::Cline => 30,
            // Aileron's own plugin sets it.
            Agent::Opencode => 60,
        })
    }

    /// The longest a human may be asked inside the hook.
    pub fn prompt_budget(self) -> Duration {
        self.hook_timeout().saturating_sub(Duration::from_secs(5))
    }
}
