//! What `aileron launch` does for a known agent so that the session sees
//! its tool calls, not only its shell: per-session hook settings on the
//! agent's command line or in its environment, never in the user's files.
//! One function per agent; an agent with no per-session configuration gets
//! a note saying which of its actions the session cannot see.

use aileron_engine::Policy;
use std::path::Path;

/// What a known agent is started with under `aileron launch`.
#[derive(Default)]
pub struct AgentSetup {
    /// Put before the user's arguments.
    pub args: Vec<String>,
    /// Added to the agent's environment.
    pub env: Vec<(String, String)>,
    /// Said on the terminal and in the session's audit note.
    pub notes: Vec<String>,
}

/// What the session needs to set an agent up.
pub struct SetupContext<'a> {
    /// The aileron executable the hooks run.
    pub aileron: &'a Path,
    /// The session's private runtime directory (removed at the end).
    pub runtime: &'a Path,
    /// The directory holding the shim under the shell's names.
    pub shim_bin: &'a Path,
    /// The session's policy.
    pub policy: &'a Policy,
    /// The agent's environment as launch will pass it.
    pub env: &'a [(String, String)],
}

/// The setup for `agent` (the program's file name), if it is a known agent.
pub fn setup(agent: &str, cx: &SetupContext) -> Result<AgentSetup, String> {
    match agent {
        "claude" => claude_code(cx),
        "gemini" => gemini_cli(cx),
        "codex" => codex(cx),
        _ => Ok(AgentSetup::default()),
    }
}

/// Claude Code takes hooks and disallowed tools for one session on its
/// command line, so every tool call (not only shell commands) is decided
/// here without touching the user's settings files.
fn claude_code(cx: &SetupContext) -> Result<AgentSetup, String> {
    let settings = cx.runtime.join("claude-settings.json");
    let json = aileron_hooks::install::claude_code_session_settings(&cx.aileron.to_string_lossy());
    std::fs::write(&settings, json.to_string())
        .map_err(|e| format!("cannot write {}: {e}", settings.display()))?;
    let mut args = vec![
        "--settings".to_owned(),
        settings.to_string_lossy().into_owned(),
    ];
    let disabled = cx.policy.disabled_tools(CLAUDE_CODE_TOOLS);
    if !disabled.is_empty() {
        args.push("--disallowedTools".to_owned());
        args.push(disabled.join(","));
    }
    Ok(AgentSetup {
        args,
        ..AgentSetup::default()
    })
}

/// Gemini CLI runs `bash` by name from PATH and ignores `$SHELL`.
fn gemini_cli(cx: &SetupContext) -> Result<AgentSetup, String> {
    let path = cx
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())
        .unwrap_or_default();
    Ok(AgentSetup {
        env: vec![(
            "PATH".to_owned(),
            format!("{}:{path}", cx.shim_bin.display()),
        )],
        ..AgentSetup::default()
    })
}

/// Codex CLI takes config overrides for one invocation (`-c`, before any
/// subcommand), hooks among them: the session's PreToolUse hook, trusted
/// by its hash, decides every `exec_command`, `apply_patch`, `view_image`
/// and MCP call. Codex runs commands with the passwd entry's shell, never
/// `$SHELL` or `PATH`, so the shim does not see them.
fn codex(cx: &SetupContext) -> Result<AgentSetup, String> {
    Ok(AgentSetup {
        args: aileron_hooks::install::codex_session_hooks(&cx.aileron.to_string_lossy()),
        notes: vec![
            "Codex runs its commands with the login shell from the passwd entry, not $SHELL: each tool call is decided by a hook, but what the model types into a running command with write_stdin (an interactive shell, a REPL) is not; only --enforce exec decides the programs that starts".to_owned(),
        ],
        ..AgentSetup::default()
    })
}

/// Claude Code's built-in tools, for `--disallowedTools` (SPEC 10).
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Bash",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "Read",
    "Glob",
    "Grep",
    "LS",
    "WebFetch",
    "WebSearch",
    "Agent",
    "Task",
    "TodoWrite",
];
