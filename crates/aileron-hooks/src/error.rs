//! Why a hook event cannot be decided, and why install, uninstall or
//! import could not do their work.

use crate::jsonedit::SyntaxError;
use aileron_engine::Diagnostics;
use std::io;
use std::path::PathBuf;

/// What this crate reports. Every variant's message is the line shown to
/// the user (after `aileron: denied: ` for a hook event).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // A hook event that cannot be read (`event::parse`).
    #[error("the hook event is empty")]
    EmptyEvent,
    #[error("the hook event is not valid JSON: {0}")]
    EventNotJson(#[source] serde_json::Error),
    #[error("the hook event is not a JSON object")]
    EventNotObject,
    /// An event of a kind Aileron does not decide.
    #[error(
        "`{event}` is not an event Aileron decides (expected {})",
        or_list(expected)
    )]
    NotDecided {
        event: String,
        expected: &'static [&'static str],
    },
    #[error("the hook event has no `{key}`")]
    MissingField { key: &'static str },
    #[error("the hook event has no `{key}` object")]
    MissingObject { key: &'static str },
    #[error("`{key}` is empty in the hook event")]
    EmptyField { key: &'static str },
    #[error("`{key}` is not a string in the hook event")]
    NotAString { key: &'static str },
    #[error("`{key}` is not an object in the hook event")]
    NotAnObject { key: &'static str },
    #[error("`{key}` is not an absolute path: {path}")]
    RelativePath { key: &'static str, path: String },
    /// Cursor: neither `cwd` nor `workspace_roots`.
    #[error("the hook event has no `cwd` and no `workspace_roots`")]
    NoWorkingDirectory,
    /// Cline: the first of `workspaceRoots`.
    #[error("the workspace root is not an absolute path: {0}")]
    RelativeWorkspaceRoot(String),
    /// Cursor's MCP event carries its tool input as a JSON string.
    #[error("`tool_input` is not valid JSON: {0}")]
    ToolInputNotJson(#[source] serde_json::Error),
    #[error("`tool_input` is not an object")]
    ToolInputNotObject,

    // A tool call that names nothing to decide (`lower::lower`).
    #[error("the {tool} call has no `command`")]
    NoCommand { tool: String },
    #[error("the {tool} call names no file")]
    NoFile { tool: String },
    #[error("the {tool} call has no patch text")]
    NoPatchText { tool: String },
    #[error("the {tool} call names no file Aileron can find in its patch")]
    NoFileInPatch { tool: String },

    // An agent's configuration (`install`, `uninstall`).
    /// A file or directory could not be read, created, written, replaced,
    /// removed or given its mode (`action`: `read`, `create`, ...).
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("{}: {source}", file.display())]
    SettingsSyntax { file: PathBuf, source: SyntaxError },
    #[error("{}: the settings are not a JSON object", file.display())]
    SettingsNotObject { file: PathBuf },
    #[error("{}: `hooks` is not an object", file.display())]
    HooksNotObject { file: PathBuf },
    #[error("{}: `hooks.{event}` is not a list", file.display())]
    HooksEventNotList { file: PathBuf, event: &'static str },
    #[error("{}: the edit would break the file; left unchanged", file.display())]
    EditWouldBreak { file: PathBuf },
    /// An agent's MCP configuration that is not JSON (with comments) or
    /// TOML: install and uninstall change no file.
    #[error(
        "{}:{line}:{column}: {what}\n  hint: the agent's MCP servers are configured there; fix the file (or move it away) and run the command again: no file was changed",
        file.display()
    )]
    McpConfigSyntax {
        file: PathBuf,
        line: usize,
        column: usize,
        what: String,
    },
    /// Uninstall found the file Aileron would own, but not its marker.
    #[error("{} was not written by aileron; left alone", file.display())]
    NotOurs { file: PathBuf },
    /// Install found the file Aileron would own, written by someone else.
    #[error(
        "{} exists and was not written by aileron; left alone (merge it by hand)",
        file.display()
    )]
    ExistsNotOurs { file: PathBuf },

    // Claude Code's settings (`import::claude`).
    #[error(
        "{path}:{}:{}: invalid settings JSON: {source}",
        source.line(),
        source.column()
    )]
    SettingsJson {
        path: String,
        source: serde_json::Error,
    },
    #[error("{path}: `permissions` must be an object")]
    PermissionsNotObject { path: String },
    #[error("{path}: `permissions.{bucket}` must be a list of rules")]
    BucketNotList { path: String, bucket: &'static str },
    #[error("the generated policy does not load (a bug in `aileron import`):\n{0}")]
    GeneratedPolicy(Diagnostics),
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[&str]) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        let sep = match i {
            0 => "",
            _ if i + 1 == items.len() => " or ",
            _ => ", ",
        };
        out.push_str(sep);
        out.push_str(item);
    }
    out
}
