//! The OpenAI Responses API as Codex CLI speaks it, on top of the fake
//! model server ([`super::model`]), and a driver that runs the real Codex
//! CLI (`codex exec`) against it in a test project.
//!
//! What Codex 0.169 sends (API-key auth, a custom provider with
//! `wire_api = "responses"`): `POST /v1/responses`, a plain JSON body (no
//! `content-encoding`; request compression is only for ChatGPT sign-in),
//! `stream: true`, the conversation in `input` (messages, `function_call`
//! / `function_call_output`, `custom_tool_call` / `custom_tool_call_output`
//! items), the tools in `tools`. With the model `gpt-5.5` (known to Codex's
//! bundled catalog) the tools include `exec_command` (a function: `cmd`,
//! `workdir`, `tty`, `yield_time_ms`, `login`, ...), `write_stdin`,
//! `view_image` and the freeform (`custom`) tool `apply_patch`, whose input
//! is the patch text itself. The answer is an event stream:
//! `response.created`, `response.output_item.added` / `.done` per item,
//! `response.completed` with `usage`. Nothing else is asked for
//! (`/v1/models` is answered anyway, with an empty list).

#![allow(dead_code)]

use super::model::{FakeModel, Reply, Request, Script, Step};
use super::{AGENT_TIMEOUT, Project, run_agent, text};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

/// The model Codex is told to use: in its bundled catalog, so that it
/// offers `apply_patch` (unknown models get fallback metadata without it).
pub const MODEL: &str = "gpt-5.5";

/// The variable holding the fake API key (`env_key` of the provider).
pub const KEY_VAR: &str = "FAKE_MODEL_KEY";

/// How many tool results the conversation in a request body holds.
pub fn results(body: &Value) -> usize {
    body["input"].as_array().map_or(0, |items| {
        items
            .iter()
            .filter(|i| {
                matches!(
                    i["type"].as_str(),
                    Some("function_call_output" | "custom_tool_call_output")
                )
            })
            .count()
    })
}

/// The tool outputs in a request body, in order: `(call_id, output text)`.
pub fn outputs(body: &Value) -> Vec<(String, String)> {
    body["input"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|i| {
                    matches!(
                        i["type"].as_str(),
                        Some("function_call_output" | "custom_tool_call_output")
                    )
                })
                .map(|i| {
                    let out = match &i["output"] {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (i["call_id"].as_str().unwrap_or("").to_owned(), out)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The names of the tools a request offers.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The output item for one step. `apply_patch` is a freeform tool: its
/// input is the patch text (a JSON string in the step).
fn item(step: &Step, n: usize) -> Value {
    match step {
        Step::Tool { name, input } if name == "apply_patch" => json!({
            "type": "custom_tool_call",
            "id": format!("ctc_{n}"),
            "call_id": format!("call_{n}"),
            "name": name,
            "input": input.as_str().map(str::to_owned).unwrap_or_else(|| input.to_string()),
            "status": "completed",
        }),
        Step::Tool { name, input } => json!({
            "type": "function_call",
            "id": format!("fc_{n}"),
            "call_id": format!("call_{n}"),
            "name": name,
            "arguments": input.to_string(),
            "status": "completed",
        }),
        Step::Say(t) => json!({
            "type": "message",
            "id": format!("msg_{n}"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": t, "annotations": []}],
        }),
    }
}

/// The answer to one request: the script's next step as a Responses stream.
pub fn reply(req: &Request, script: &Script) -> Reply {
    let route = req.route();
    if req.method == "GET" && route.ends_with("/models") {
        return Reply::Json(200, json!({"object": "list", "data": [], "models": []}));
    }
    if req.method != "POST" || !route.ends_with("/responses") {
        return Reply::not_found();
    }
    let body = req.json();
    if body.is_null() {
        return Reply::Json(400, json!({"error": {"message": "the body is not JSON"}}));
    }
    let n = results(&body);
    let item = item(&script.next(n), n);
    let id = format!("resp_{n}");
    Reply::named_events([
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": id, "status": "in_progress"}}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {"id": id, "status": "completed",
                "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": 15}}}),
        ),
    ])
}

/// A fake model answering Codex with `script`.
pub fn start(script: Script) -> FakeModel {
    FakeModel::start(move |req| reply(req, &script))
}

/// How Codex is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Codex alone, no Aileron (for the overhead baseline).
    Plain,
    /// After `aileron install codex --project`: the project's hooks.json.
    /// Codex runs project hooks only in a trusted project and once the hook
    /// is trusted in `/hooks`; the test trusts the project in the user's
    /// config and passes `--dangerously-bypass-hook-trust` for the latter.
    Hooks,
    /// `aileron launch --enforce MODE -- codex ...` (no install).
    Launch(&'static str),
}

/// What one Codex run left behind.
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
    pub requests: Vec<Request>,
}

impl Run {
    /// The requests to `/v1/responses`, their bodies parsed.
    pub fn bodies(&self) -> Vec<Value> {
        self.requests
            .iter()
            .filter(|r| r.route().ends_with("/responses"))
            .map(Request::json)
            .collect()
    }

    /// Every byte sent to the model, as text (bodies and headers).
    pub fn sent(&self) -> String {
        self.requests
            .iter()
            .map(|r| {
                let headers: String = r
                    .headers
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}\n"))
                    .collect();
                format!("{} {}\n{headers}\n{}\n", r.method, r.path, text(&r.body))
            })
            .collect()
    }

    /// The tool outputs of the last request, by call id.
    pub fn outputs(&self) -> Vec<(String, String)> {
        self.bodies().last().map(outputs).unwrap_or_default()
    }

    /// The output of the call for step `n` (0-based) as the model got it.
    pub fn output(&self, n: usize) -> String {
        let id = format!("call_{n}");
        self.outputs()
            .into_iter()
            .find(|(c, _)| *c == id)
            .map(|(_, o)| o)
            .unwrap_or_else(|| panic!("no output for step {n}; outputs: {:?}", self.outputs()))
    }

    /// Says what happened, for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "status {:?} after {:?}\n--- stdout\n{}\n--- stderr\n{}\n--- outputs\n{:#?}",
            self.status,
            self.wall,
            self.stdout,
            self.stderr,
            self.outputs()
        )
    }
}

/// The Codex CLI from npm, or None (skipped) where it cannot be installed.
pub fn codex() -> Option<PathBuf> {
    super::npm::CODEX.installed()
}

/// `$HOME/.codex/config.toml` for the test: the fake provider, the project
/// trusted, and nothing that reaches the network (plugin marketplace sync,
/// update checks, analytics).
pub fn write_config(p: &Project, model: &FakeModel) {
    let dir = p.home.join(".codex");
    std::fs::create_dir_all(&dir).expect("create CODEX_HOME");
    let config = format!(
        r#"model = "{MODEL}"
model_provider = "fake"
check_for_update_on_startup = false

[features]
plugins = false

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "{KEY_VAR}"
request_max_retries = 0
stream_max_retries = 0

[projects.{proj}]
trust_level = "trusted"
"#,
        url = model.url(),
        proj = serde_json::to_string(&p.dir.to_string_lossy()).unwrap(),
    );
    std::fs::write(dir.join("config.toml"), config).expect("write config.toml");
}

/// Runs `codex exec PROMPT` in `p` the way `mode` says, against a fake
/// model answering with `script`. None when Codex is not installed.
pub fn run_codex(p: &Project, mode: Mode, script: &Script) -> Option<Run> {
    let codex = codex()?;
    let model = start(script.clone());
    write_config(p, &model);
    let mut exec_args: Vec<String> = vec![
        "exec".into(),
        "--skip-git-repo-check".into(),
        // Only Aileron may stop a call: no approvals, no Codex sandbox.
        "--dangerously-bypass-approvals-and-sandbox".into(),
        "--color".into(),
        "never".into(),
    ];
    if mode == Mode::Hooks {
        // Stands for the user trusting the hook in `/hooks`.
        exec_args.push("--dangerously-bypass-hook-trust".into());
    }
    exec_args.push("Do what the script says.".into());
    let mut cmd = match mode {
        Mode::Plain | Mode::Hooks => {
            let mut c = p.command(&codex);
            c.args(&exec_args);
            c
        }
        Mode::Launch(enforce) => {
            let mut c = p.aileron(&["launch", "--enforce", enforce, "--"]);
            c.arg(&codex).args(&exec_args);
            c
        }
    };
    cmd.env(KEY_VAR, "sk-fake-model").env("NO_COLOR", "1");
    let out = run_agent(&mut cmd);
    assert!(
        !out.timed_out,
        "codex ({mode:?}) did not finish within {AGENT_TIMEOUT:?}"
    );
    Some(Run {
        status: out.status,
        stdout: out.stdout,
        stderr: out.stderr,
        wall: out.wall,
        requests: model.requests(),
    })
}
