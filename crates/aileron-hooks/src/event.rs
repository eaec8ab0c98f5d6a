//! Reading one hook event: each agent's JSON, down to the same few facts.

use crate::Error;
use crate::agent::Agent;
use serde_json::{Map, Value};

/// One tool call, as any agent reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolEvent {
    pub agent: Agent,
    /// The agent's event name (`PreToolUse`, `BeforeTool`, `beforeReadFile`, ...).
    pub hook_event: String,
    /// The agent's session (conversation, task) id.
    pub session: Option<String>,
    /// Absolute working directory of the agent.
    pub cwd: String,
    /// The tool's name as the agent sends it.
    pub tool: String,
    /// The tool's arguments (an object).
    pub input: Value,
    /// The MCP server, when the event names it apart from the tool.
    pub mcp_server: Option<String>,
}

/// The largest event read; a bigger one is refused (and so denied).
pub const MAX_EVENT_BYTES: usize = 64 << 20;

/// Parses `bytes` as `agent`'s hook event. The error says what is wrong.
pub fn parse(agent: Agent, bytes: &[u8]) -> Result<ToolEvent, Error> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::EmptyEvent);
    }
    let value: Value = serde_json::from_slice(bytes).map_err(Error::EventNotJson)?;
    let Value::Object(obj) = value else {
        return Err(Error::EventNotObject);
    };
    match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::Gemini => standard(agent, &obj),
        Agent::Cursor => cursor(&obj),
        Agent::Cline => cline(&obj),
        Agent::Opencode => opencode(&obj),
    }
}

/// Claude Code, Codex CLI and Gemini CLI share one shape:
/// `session_id`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`.
fn standard(agent: Agent, obj: &Map<String, Value>) -> Result<ToolEvent, Error> {
    let hook_event = string(obj, "hook_event_name")?;
    let expected: &'static [&'static str] = match agent {
        Agent::Gemini => &["BeforeTool"],
        _ => &["PreToolUse", "PermissionRequest"],
    };
    if !expected.contains(&hook_event.as_str()) {
        return Err(Error::NotDecided {
            event: hook_event,
            expected,
        });
    }
    let mcp_server = obj
        .get("mcp_server")
        .and_then(|m| m.get("name"))
        .or_else(|| obj.get("mcp_context").and_then(|m| m.get("server_name")))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut tool = string(obj, "tool_name")?;
    // Gemini CLI names MCP tools in ways that changed between versions;
    // `mcp_context` is the stable part.
    if agent == Agent::Gemini
        && let Some(name) = obj
            .get("mcp_context")
            .and_then(|m| m.get("tool_name"))
            .and_then(Value::as_str)
    {
        tool = name.to_owned();
    }
    Ok(ToolEvent {
        agent,
        hook_event,
        session: optional(obj, "session_id"),
        cwd: absolute(obj, "cwd")?,
        tool,
        input: object(obj, "tool_input")?,
        mcp_server,
    })
}

/// Cursor: one event per kind of gate, each with its own fields.
fn cursor(obj: &Map<String, Value>) -> Result<ToolEvent, Error> {
    let hook_event = string(obj, "hook_event_name")?;
    let root = obj
        .get("workspace_roots")
        .and_then(|r| r.get(0))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let cwd = match obj.get("cwd").and_then(Value::as_str) {
        Some(c) if !c.is_empty() => c.to_owned(),
        _ => root.ok_or(Error::NoWorkingDirectory)?,
    };
    if !cwd.starts_with('/') {
        return Err(Error::RelativePath {
            key: "cwd",
            path: cwd,
        });
    }
    let (tool, input, mcp_server) = match hook_event.as_str() {
        "beforeShellExecution" => {
            let command = string(obj, "command")?;
            (
                "Shell".to_owned(),
                serde_json::json!({"command": command}),
                None,
            )
        }
        "beforeReadFile" => {
            let path = string(obj, "file_path")?;
            (
                "Read".to_owned(),
                serde_json::json!({"file_path": path}),
                None,
            )
        }
        "beforeMCPExecution" => {
            let tool = string(obj, "tool_name")?;
            // `tool_input` is a JSON string here.
            let input = match obj.get("tool_input") {
                Some(Value::String(s)) => {
                    serde_json::from_str(s).map_err(Error::ToolInputNotJson)?
                }
                Some(v @ Value::Object(_)) => v.clone(),
                Some(Value::Null) | None => Value::Object(Map::new()),
                Some(_) => return Err(Error::ToolInputNotObject),
            };
            let server = obj
                .get("url")
                .or_else(|| obj.get("command"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            (tool, input, Some(server.unwrap_or_default()))
        }
        "preToolUse" => (string(obj, "tool_name")?, object(obj, "tool_input")?, None),
        _ => {
            return Err(Error::NotDecided {
                event: hook_event,
                expected: &[
                    "beforeShellExecution",
                    "beforeReadFile",
                    "beforeMCPExecution",
                    "preToolUse",
                ],
            });
        }
    };
    Ok(ToolEvent {
        agent: Agent::Cursor,
        hook_event,
        session: optional(obj, "conversation_id"),
        cwd,
        tool,
        input,
        mcp_server,
    })
}

/// Cline: `{taskId, workspaceRoots, preToolUse: {toolName, parameters}}`.
fn cline(obj: &Map<String, Value>) -> Result<ToolEvent, Error> {
    let hook_event = string(obj, "hookName")?;
    if hook_event != "PreToolUse" {
        return Err(Error::NotDecided {
            event: hook_event,
            expected: &["PreToolUse"],
        });
    }
    let cwd = obj
        .get("workspaceRoots")
        .and_then(|r| r.get(0))
        .and_then(Value::as_str)
        .ok_or(Error::MissingField {
            key: "workspaceRoots",
        })?
        .to_owned();
    if !cwd.starts_with('/') {
        return Err(Error::RelativeWorkspaceRoot(cwd));
    }
    let call = obj
        .get("preToolUse")
        .and_then(Value::as_object)
        .ok_or(Error::MissingObject { key: "preToolUse" })?;
    let tool = string(call, "toolName")?;
    let mut input = object(call, "parameters")?;
    // MCP arguments arrive as a JSON string.
    if let Some(Value::String(s)) = input.get("arguments")
        && let Ok(v) = serde_json::from_str::<Value>(s)
    {
        input["arguments"] = v;
    }
    let mcp_server = input
        .get("server_name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(ToolEvent {
        agent: Agent::Cline,
        hook_event,
        session: optional(obj, "taskId"),
        cwd,
        tool,
        input,
        mcp_server,
    })
}

/// opencode: what Aileron's plugin sends (`tool`, `sessionID`, `args`, `directory`).
fn opencode(obj: &Map<String, Value>) -> Result<ToolEvent, Error> {
    Ok(ToolEvent {
        agent: Agent::Opencode,
        hook_event: optional(obj, "hook_event_name")
            .unwrap_or_else(|| "tool.execute.before".into()),
        session: optional(obj, "sessionID"),
        cwd: absolute(obj, "directory")?,
        tool: string(obj, "tool")?,
        input: object(obj, "args")?,
        mcp_server: None,
    })
}

fn string(obj: &Map<String, Value>, key: &'static str) -> Result<String, Error> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(Error::EmptyField { key }),
        Some(_) => Err(Error::NotAString { key }),
        None => Err(Error::MissingField { key }),
    }
}

fn optional(obj: &Map<String, Value>, key: &str) -> Option<String> {
    match obj.get(key)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn absolute(obj: &Map<String, Value>, key: &'static str) -> Result<String, Error> {
    let path = string(obj, key)?;
    if path.starts_with('/') {
        Ok(path)
    } else {
        Err(Error::RelativePath { key, path })
    }
}

fn object(obj: &Map<String, Value>, key: &'static str) -> Result<Value, Error> {
    match obj.get(key) {
        Some(v @ Value::Object(_)) => Ok(v.clone()),
        Some(Value::Null) | None => Ok(Value::Object(Map::new())),
        Some(_) => Err(Error::NotAnObject { key }),
    }
}
