//! The Anthropic Messages API as Claude Code speaks it, scripted, and a
//! driver that runs the real Claude Code CLI against it.
//!
//! What Claude Code 2.1.330 sends (seen on the wire): `POST
//! /v1/messages?beta=true` with `"stream": true`, `x-api-key` from
//! `ANTHROPIC_API_KEY`, a model of its own choosing, every built-in tool in
//! `tools`, and the whole conversation in `messages` (consecutive tool
//! calls and their results merged into one assistant and one user
//! message). In `-p` mode with `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`
//! it makes no other request (no title, no token count, no quota probe);
//! those are answered anyway: `count_tokens` with a count, a request
//! without tools with a plain text, anything else with a 404 in the API's
//! error shape.
//!
//! The step to answer with is [`Script::next`] of the number of
//! `tool_result` blocks in the request's messages: each step asks for one
//! tool call, whose result the next request carries.

#![allow(dead_code)]

use super::model::{FakeModel, Reply, Request, Script, Step};
use super::{AILERON, Project, run_agent};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A fake Anthropic API answering with `script`.
pub fn server(script: Script) -> FakeModel {
    FakeModel::start(move |req| answer(&script, req))
}

/// When each request of the main conversation arrived, with how many tool
/// results it carried.
type Arrivals = Arc<Mutex<Vec<(usize, Instant)>>>;

/// [`server`], noting when each request of the main conversation arrives.
fn timed_server(script: Script) -> (FakeModel, Arrivals) {
    let arrivals: Arrivals = Arc::default();
    let noted = arrivals.clone();
    let model = FakeModel::start(move |req| {
        let body = req.json();
        if req.route().ends_with("/v1/messages")
            && body["tools"].as_array().is_some_and(|t| !t.is_empty())
        {
            noted
                .lock()
                .unwrap()
                .push((tool_results(&body), Instant::now()));
        }
        answer(&script, req)
    });
    (model, arrivals)
}

/// How many `tool_result` blocks the conversation of a Messages request holds.
pub fn tool_results(body: &Value) -> usize {
    tool_result_blocks(body).len()
}

/// Every `tool_result` block of a Messages request, in order.
pub fn tool_result_blocks(body: &Value) -> Vec<&Value> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

/// A tool result's text (its content is a string or a list of blocks).
pub fn result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

fn answer(script: &Script, req: &Request) -> Reply {
    let route = req.route();
    if req.method != "POST" {
        return error(404, "not_found_error", "not found");
    }
    if route.ends_with("/v1/messages/count_tokens") {
        return Reply::Json(200, json!({"input_tokens": 100}));
    }
    if !route.ends_with("/v1/messages") {
        return error(404, "not_found_error", "not found");
    }
    let body = req.json();
    if !body.is_object() {
        return error(400, "invalid_request_error", "the body is not JSON");
    }
    let model = body["model"].as_str().unwrap_or("claude-fake").to_owned();
    let results = tool_results(&body);
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    // A side request (a title, a summary) gets a text: only the main
    // conversation, which offers tools, follows the script.
    let step = if has_tools {
        script.next(results)
    } else {
        Step::Say("Scripted session".to_owned())
    };
    let (block, stop) = match step {
        Step::Tool { name, input } => (
            json!({"type": "tool_use", "id": format!("toolu_fake{results:04}"),
                   "name": name, "input": input}),
            "tool_use",
        ),
        Step::Say(text) => (json!({"type": "text", "text": text}), "end_turn"),
    };
    let usage = json!({"input_tokens": 100, "output_tokens": 10,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    let id = format!("msg_fake{results:04}");
    if body["stream"] != true {
        return Reply::Json(
            200,
            json!({"id": id, "type": "message", "role": "assistant", "model": model,
                "content": [block], "stop_reason": stop, "stop_sequence": null, "usage": usage}),
        );
    }
    // The block starts empty and its content arrives as one delta, as the
    // API streams it.
    let (start, delta) = match block["type"].as_str() {
        Some("tool_use") => (
            json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
        ),
        _ => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": block["text"]}),
        ),
    };
    Reply::named_events([
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": id, "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": usage}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": start}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": 10}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ])
}

fn error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::Json(
        status,
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}

/// How Claude Code is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `claude` itself: no Aileron, or the hooks `aileron install
    /// claude-code --project` wrote into the project.
    Direct,
    /// `aileron launch --enforce none -- claude ...`.
    LaunchNone,
    /// `aileron launch --enforce all -- claude ...`.
    LaunchAll,
}

/// What one run of Claude Code left behind.
pub struct ClaudeRun {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// From start to exit, including Aileron's own start under launch.
    pub wall: Duration,
    /// Every request the fake model received, in order.
    pub requests: Vec<Request>,
    /// When each request of the main conversation arrived (from the
    /// start), with how many tool results it carried.
    pub turns: Vec<(usize, Duration)>,
    /// Whether it had to be killed after [`super::AGENT_TIMEOUT`].
    pub timed_out: bool,
}

impl ClaudeRun {
    /// The `--output-format json` result object (`Null` if stdout is not one).
    pub fn result(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or(Value::Null)
    }

    /// The Messages requests of the main conversation (those offering tools).
    pub fn conversation(&self) -> Vec<Value> {
        self.requests
            .iter()
            .filter(|r| r.route().ends_with("/v1/messages"))
            .map(Request::json)
            .filter(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty()))
            .collect()
    }

    /// The tool results the model was finally shown, in order: the last
    /// request of the conversation holds them all.
    pub fn tool_results(&self) -> Vec<Value> {
        self.conversation()
            .iter()
            .max_by_key(|b| tool_results(b))
            .map(|b| tool_result_blocks(b).into_iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether `needle` appears in any request sent to the model (the raw
    /// bytes, and the JSON decoded, so that an escaped form counts too).
    pub fn model_saw(&self, needle: &str) -> bool {
        self.requests.iter().any(|r| {
            String::from_utf8_lossy(&r.body).contains(needle) || contains_string(&r.json(), needle)
        })
    }

    /// The time from the model's first answer to its last request: the tool
    /// calls and Claude Code's work between them, without its start and exit.
    pub fn tool_loop(&self) -> Duration {
        match (self.turns.first(), self.turns.last()) {
            (Some((_, a)), Some((_, b))) => b.saturating_sub(*a),
            _ => Duration::ZERO,
        }
    }

    /// Everything needed to understand a failure.
    pub fn describe(&self) -> String {
        let results: Vec<String> = self
            .tool_results()
            .iter()
            .map(|r| format!("  {}: {}", r["tool_use_id"], result_text(r)))
            .collect();
        format!(
            "status {:?} after {:?}{}\nstdout: {}\nstderr: {}\ntool results:\n{}",
            self.status,
            self.wall,
            if self.timed_out { " (killed)" } else { "" },
            self.stdout,
            self.stderr,
            results.join("\n")
        )
    }
}

fn contains_string(v: &Value, needle: &str) -> bool {
    match v {
        Value::String(s) => s.contains(needle),
        Value::Array(a) => a.iter().any(|x| contains_string(x, needle)),
        Value::Object(o) => o
            .iter()
            .any(|(k, x)| k.contains(needle) || contains_string(x, needle)),
        _ => false,
    }
}

/// Runs `claude -p PROMPT` (the real CLI at `claude`) in project `p`, in
/// `mode`, against a fake model playing `script`; kills it after
/// [`super::AGENT_TIMEOUT`].
///
/// Claude Code runs non-interactively (`-p`, `--output-format json`,
/// stdin empty, no controlling terminal), in `bypassPermissions` mode
/// (`--dangerously-skip-permissions`; `IS_SANDBOX=1` lets root use it), so
/// that only Aileron can stop a tool call. Its home is the project's; the
/// only network it is given is the fake model on loopback, and everything
/// nonessential (update checks, telemetry, error reports) is off.
pub fn run_claude(p: &Project, claude: &Path, mode: Mode, script: &Script) -> ClaudeRun {
    let (model, arrivals) = timed_server(script.clone());
    let mut cmd = match mode {
        Mode::Direct => p.command(claude),
        Mode::LaunchNone | Mode::LaunchAll => {
            let enforce = if mode == Mode::LaunchNone {
                "none"
            } else {
                "all"
            };
            let mut c = p.command(AILERON);
            c.args(["launch", "--enforce", enforce, "--"]).arg(claude);
            c
        }
    };
    cmd.args([
        "-p",
        "Run the scripted steps.",
        "--output-format",
        "json",
        "--dangerously-skip-permissions",
        "--no-session-persistence",
    ]);
    claude_env(&mut cmd, p, &model.url());
    let start = Instant::now();
    let out = run_agent(&mut cmd);
    ClaudeRun {
        status: out.status,
        stdout: out.stdout,
        stderr: out.stderr,
        wall: out.wall,
        requests: model.requests(),
        turns: arrivals
            .lock()
            .unwrap()
            .iter()
            .map(|(n, t)| (*n, t.saturating_duration_since(start)))
            .collect(),
        timed_out: out.timed_out,
    }
}

/// Claude Code's environment for a test: the project's isolated one
/// ([`Project::command`]) minus anything of an outer Claude Code or
/// Anthropic configuration, pointed at the fake model.
pub fn claude_env(cmd: &mut Command, p: &Project, base_url: &str) {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("CLAUDE")
            || k.starts_with("ANTHROPIC_")
            || k.starts_with("AWS_")
            || k.starts_with("OTEL_")
            || k.to_ascii_lowercase().ends_with("_proxy")
        {
            cmd.env_remove(&k);
        }
    }
    cmd.env("ANTHROPIC_BASE_URL", base_url)
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .env("XDG_CONFIG_HOME", p.home.join(".config"))
        .env("XDG_CACHE_HOME", p.home.join(".cache"))
        .env("XDG_DATA_HOME", p.home.join(".local/share"))
        .env("XDG_STATE_HOME", p.home.join(".local/state"))
        // root may bypass permissions only in a sandbox; this is one.
        .env("IS_SANDBOX", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_BUG_COMMAND", "1")
        .env("DISABLE_COST_WARNINGS", "1")
        .env("CLAUDE_CODE_ENABLE_TELEMETRY", "0")
        .env("CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL", "1");
}
