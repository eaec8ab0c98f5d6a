//! The OpenAI chat completions API (`POST /v1/chat/completions`) on top of
//! [`super::model`], as opencode's bundled `@ai-sdk/openai-compatible`
//! provider speaks it, and a driver that runs the real opencode against it.
//!
//! The model's next step is picked by counting the `role: "tool"` messages
//! in the request ([`Script::next`]). Requests that offer no tools are side
//! requests (opencode asks the small model for a session title before the
//! first turn); they get a plain text answer and never a tool call.

#![allow(dead_code)]

use super::model::{FakeModel, Reply, Request, Script, Step};
use super::{AGENT_TIMEOUT, AILERON, Project, isolate, run_agent, text};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The model's name in the fake provider (`fake/m`).
pub const PROVIDER: &str = "fake";
pub const MODEL: &str = "m";

/// What a title or other side request is answered with.
pub const SIDE_TEXT: &str = "Scripted session";

/// How many tool results the conversation in this request body holds.
pub fn tool_results(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == "tool").count())
        .unwrap_or(0)
}

/// A request that offers the model no tools (a title, a summary).
pub fn is_side_request(body: &Value) -> bool {
    body["tools"].as_array().is_none_or(|t| t.is_empty())
}

/// The server's handler for `script`.
pub fn handler(script: Script) -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    move |req: &Request| {
        if req.method != "POST" || !req.route().ends_with("/chat/completions") {
            return Reply::not_found();
        }
        let body = req.json();
        let step = if is_side_request(&body) {
            Step::Say(SIDE_TEXT.to_owned())
        } else {
            script.next(tool_results(&body))
        };
        let id = format!("call_{}", tool_results(&body));
        if body["stream"] == true {
            stream(&step, &id)
        } else {
            whole(&step, &id)
        }
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

fn usage() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
}

/// A streamed answer: the tool call's arguments arrive in two deltas, the
/// way real servers split them; then the finish reason, usage and `[DONE]`.
fn stream(step: &Step, id: &str) -> Reply {
    let mut events = Vec::new();
    match step {
        Step::Tool { name, input } => {
            let args = input.to_string();
            let cut = args
                .char_indices()
                .nth(args.chars().count() / 2)
                .map_or(0, |(i, _)| i);
            events.push(chunk(
                json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": id,
                    "type": "function", "function": {"name": name, "arguments": &args[..cut]}}]}),
                None,
            ));
            events.push(chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": &args[cut..]}}]}),
                None,
            ));
            events.push(chunk(json!({}), Some("tool_calls")));
        }
        Step::Say(t) => {
            events.push(chunk(json!({"role": "assistant", "content": t}), None));
            events.push(chunk(json!({}), Some("stop")));
        }
    }
    let mut last = chunk(json!({}), None);
    last["choices"] = json!([]);
    last["usage"] = usage();
    events.push(last);
    let mut events: Vec<(Option<String>, String)> =
        events.into_iter().map(|v| (None, v.to_string())).collect();
    events.push((None, "[DONE]".to_owned()));
    Reply::Events(events)
}

fn whole(step: &Step, id: &str) -> Reply {
    let (message, finish) = match step {
        Step::Tool { name, input } => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
                "function": {"name": name, "arguments": input.to_string()}}]}),
            "tool_calls",
        ),
        Step::Say(t) => (json!({"role": "assistant", "content": t}), "stop"),
    };
    Reply::Json(
        200,
        json!({"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage()}),
    )
}

/// The tool results opencode sent back, in order: `(tool_call_id, content)`,
/// from the longest conversation the server saw.
pub fn results_seen(requests: &[Request]) -> Vec<(String, String)> {
    let mut best: Vec<(String, String)> = Vec::new();
    for r in requests {
        let body = r.json();
        let found: Vec<(String, String)> = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                let content = match &m["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (m["tool_call_id"].as_str().unwrap_or("").to_owned(), content)
            })
            .collect();
        if found.len() >= best.len() {
            best = found;
        }
    }
    best
}

/// The result the model got for step `n` of the script (0-based).
pub fn result_of(requests: &[Request], n: usize) -> Option<String> {
    let id = format!("call_{n}");
    results_seen(requests)
        .into_iter()
        .find(|(i, _)| *i == id)
        .map(|(_, c)| c)
}

/// How opencode is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode<'a> {
    /// `opencode run` on its own (with or without the installed plugin).
    Direct,
    /// `aileron launch --enforce ENFORCE -- opencode run`.
    Launch(&'a str),
}

/// What one opencode run left behind.
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub requests: Vec<Request>,
    /// When each request for the next step came, from the start of the run.
    pub turns: Vec<Duration>,
}

impl Run {
    /// Everything the model was sent, bodies as text.
    pub fn sent(&self) -> String {
        self.requests
            .iter()
            .map(|r| text(&r.body))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The mean time from one step's request to the next: the tool call
    /// in between, opencode's own work and Aileron's (None under two steps).
    pub fn per_step(&self) -> Option<Duration> {
        let t = &self.turns;
        if t.len() < 3 {
            return None;
        }
        // From the first tool call's request to the last request.
        Some((t[t.len() - 1] - t[0]) / (t.len() as u32 - 1))
    }

    pub fn describe(&self) -> String {
        format!(
            "status {:?} after {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// The project's `opencode.json`: the fake provider as the only model,
/// every permission allowed (only Aileron stops a call), nothing that
/// reaches out (sharing, updates, language servers, formatters).
pub fn config(model: &FakeModel) -> Value {
    json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {PROVIDER: {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": format!("{}/v1", model.url()), "apiKey": "fake-key"},
            "models": {MODEL: {"name": "Fake model", "tool_call": true,
                "limit": {"context": 200000, "output": 8192}}},
        }},
        "model": format!("{PROVIDER}/{MODEL}"),
        "small_model": format!("{PROVIDER}/{MODEL}"),
        "enabled_providers": [PROVIDER],
        "permission": {"*": "allow"},
        "autoupdate": false,
        "share": "disabled",
        "lsp": false,
        "formatter": false,
        "snapshot": false,
    })
}

/// Writes [`config`] as the user's `opencode.json` in the project's
/// isolated home (`~/.config/opencode`), so that the project's own files
/// are the user's to compare before and after.
pub fn write_config(p: &Project, model: &FakeModel) {
    let dir = p.home.join(".config/opencode");
    std::fs::create_dir_all(&dir).expect("create the opencode config dir");
    let text = serde_json::to_string_pretty(&config(model)).unwrap() + "\n";
    std::fs::write(dir.join("opencode.json"), text).expect("write opencode.json");
}

/// The environment opencode gets on top of [`isolate`]: its own XDG
/// directories under the project's home, and every download or fetch off.
pub fn opencode_env(cmd: &mut Command, p: &Project) {
    isolate(cmd, &p.home, &p.run);
    let h = &p.home;
    cmd.env("XDG_CONFIG_HOME", h.join(".config"))
        .env("XDG_DATA_HOME", h.join(".local/share"))
        .env("XDG_CACHE_HOME", h.join(".cache"))
        .env("XDG_STATE_HOME", h.join(".local/state"))
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("OPENCODE_DISABLE_CLAUDE_CODE", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_TERMINAL_TITLE", "1")
        // With a plugin, opencode waits for `npm install @opencode-ai/plugin`
        // in every config directory before the first turn (17 s or more, and
        // the registry). Offline, that fails at once and opencode goes on.
        .env("npm_config_offline", "true")
        .env("npm_config_update_notifier", "false")
        .env_remove("OPENCODE_CONFIG")
        .env_remove("OPENCODE_CONFIG_CONTENT")
        .env_remove("OPENCODE_CONFIG_DIR")
        .env_remove("OPENCODE_PERMISSION");
}

/// Runs `opencode run PROMPT` in `p` in `mode`, against a fresh fake model
/// playing `script` (its provider written as the user's config in the
/// isolated home). `None` when opencode cannot be installed (outside CI).
pub fn run_opencode(p: &Project, mode: Mode, script: Script, prompt: &str) -> Option<Run> {
    let opencode = super::npm::OPENCODE.installed()?;
    let started = Instant::now();
    let turns: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let answer = handler(script);
    let seen = Arc::clone(&turns);
    let model = FakeModel::start(move |req: &Request| {
        if !is_side_request(&req.json()) {
            seen.lock().unwrap().push(started.elapsed());
        }
        answer(req)
    });
    write_config(p, &model);
    let mut cmd = match mode {
        Mode::Direct => Command::new(&opencode),
        Mode::Launch(enforce) => {
            let mut c = Command::new(AILERON);
            c.args(["launch", "--enforce", enforce, "--"])
                .arg(&opencode);
            c
        }
    };
    cmd.args(["run", "--model", &format!("{PROVIDER}/{MODEL}"), prompt]);
    opencode_env(&mut cmd, p);
    // opencode takes its directory from $PWD when it is set.
    cmd.current_dir(&p.dir).env("PWD", &p.dir);
    let out = run_agent(&mut cmd);
    assert!(
        !out.timed_out,
        "{cmd:?} did not finish within {AGENT_TIMEOUT:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout, out.stderr
    );
    let turns = turns.lock().unwrap().clone();
    Some(Run {
        status: out.status,
        stdout: out.stdout,
        stderr: out.stderr,
        elapsed: out.wall,
        requests: model.requests(),
        turns,
    })
}

/// The opencode program, for tests that need its path.
pub fn opencode() -> Option<PathBuf> {
    super::npm::OPENCODE.installed()
}

/// `p`'s file `rel` as bytes, or None.
pub fn bytes(p: &Project, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(p.path(rel)).ok()
}

pub fn exists(p: &Project, rel: &str) -> bool {
    Path::new(&p.path(rel)).exists()
}
