//! The Gemini API as Gemini CLI 0.61 speaks it (`@google/genai` with an
//! API key and `GOOGLE_GEMINI_BASE_URL`), answered from a [`Script`], and a
//! driver that runs the real `gemini -p` against it in a [`Project`].
//!
//! Requests: `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` for
//! every turn of the conversation (one SSE event answers it whole),
//! `:generateContent` for side requests (the model router's complexity
//! classifier when the model is `auto`, the next-speaker check, summaries)
//! and `:countTokens`. A turn is a request that declares `tools`; the step
//! to answer with is picked by counting the `functionResponse` parts of its
//! `contents`. Side requests carry the conversation too, so they never get
//! a tool call: the ones that want JSON (`responseJsonSchema`) get an
//! object of that schema, the others a short text.

#![allow(dead_code)]

use super::model::{FakeModel, Reply, Request, Script, Step};
use super::{AGENT_TIMEOUT, Project, isolate, run_agent};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

/// The model the driver asks for (`-m`), so that no routing request is made.
pub const MODEL: &str = "gemini-2.5-flash";

/// A fake Gemini API answering from `script`.
pub fn serve(script: Script) -> FakeModel {
    FakeModel::start(move |req| answer(&script, req))
}

/// How many tool results the conversation in `body` holds.
pub fn function_responses(body: &Value) -> usize {
    body["contents"]
        .as_array()
        .map(|contents| {
            contents
                .iter()
                .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
                .filter(|p| p.get("functionResponse").is_some())
                .count()
        })
        .unwrap_or(0)
}

/// Every `functionResponse` part of a request body, in order.
pub fn tool_results(body: &Value) -> Vec<Value> {
    body["contents"]
        .as_array()
        .map(|contents| {
            contents
                .iter()
                .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
                .filter_map(|p| p.get("functionResponse").cloned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a request is a turn of the conversation (it declares tools).
pub fn is_turn(req: &Request) -> bool {
    req.json()["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty())
}

/// The answer to one request.
pub fn answer(script: &Script, req: &Request) -> Reply {
    let route = req.route();
    if req.method == "GET" {
        // Model listings.
        return Reply::Json(200, json!({"models": []}));
    }
    let body = req.json();
    if route.ends_with(":countTokens") {
        let chars = req.body.len() as u64;
        return Reply::Json(200, json!({"totalTokens": chars / 4 + 1}));
    }
    let streaming = route.ends_with(":streamGenerateContent");
    if !streaming && !route.ends_with(":generateContent") {
        return Reply::not_found();
    }
    let part = if is_turn(req) {
        match script.next(function_responses(&body)) {
            Step::Tool { name, input } => json!({
                "functionCall": {"name": name, "args": input},
                "thoughtSignature": "skip_thought_signature_validator",
            }),
            Step::Say(text) => json!({"text": text}),
        }
    } else if let Some(schema) = side_schema(&body) {
        json!({"text": side_json(&schema).to_string()})
    } else {
        json!({"text": "ok"})
    };
    let response = json!({
        "candidates": [{
            "content": {"role": "model", "parts": [part]},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
        "modelVersion": MODEL,
    });
    if streaming {
        Reply::data_events([response])
    } else {
        Reply::Json(200, response)
    }
}

/// The JSON schema a side request wants its answer in, if any.
fn side_schema(body: &Value) -> Option<Value> {
    let config = &body["generationConfig"];
    let schema = config
        .get("responseJsonSchema")
        .or_else(|| config.get("responseSchema"))
        .cloned();
    match schema {
        Some(s) => Some(s),
        None if config["responseMimeType"] == "application/json" => Some(json!({"type": "OBJECT"})),
        None => None,
    }
}

/// An answer of `schema`: the router's classifier rates the task simple,
/// the next-speaker check hands the turn back to the user, anything else
/// gets the simplest value of each type.
fn side_json(schema: &Value) -> Value {
    let props = schema["properties"].as_object();
    if props.is_some_and(|p| p.contains_key("complexity_score")) {
        return json!({"complexity_reasoning": "a scripted test", "complexity_score": 10});
    }
    if props.is_some_and(|p| p.contains_key("next_speaker")) {
        return json!({"reasoning": "the model finished", "next_speaker": "user"});
    }
    fill(schema)
}

fn fill(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let ty = schema["type"]
        .as_str()
        .unwrap_or("OBJECT")
        .to_ascii_uppercase();
    match ty.as_str() {
        "STRING" => json!("ok"),
        "INTEGER" | "NUMBER" => json!(1),
        "BOOLEAN" => json!(false),
        "ARRAY" => json!([]),
        _ => Value::Object(
            schema["properties"]
                .as_object()
                .map(|p| p.iter().map(|(k, v)| (k.clone(), fill(v))).collect())
                .unwrap_or_default(),
        ),
    }
}

/// How the driver runs Gemini CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `gemini` alone (hooks, if any, from the project's settings).
    Plain,
    /// `aileron launch --enforce ENFORCE -- gemini ...`.
    Launch(&'static str),
}

/// What one run left behind.
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    /// Every request the fake model got, in order.
    pub requests: Vec<Request>,
}

impl Run {
    /// Every request body as text, for "this never reached the model" checks.
    pub fn sent_text(&self) -> String {
        self.requests
            .iter()
            .map(|r| String::from_utf8_lossy(&r.body).into_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The tool results of the last turn: what the model saw of each call.
    pub fn tool_results(&self) -> Vec<Value> {
        self.requests
            .iter()
            .filter(|r| is_turn(r))
            .map(|r| tool_results(&r.json()))
            .max_by_key(Vec::len)
            .unwrap_or_default()
    }

    /// The turns the model was asked for.
    pub fn turns(&self) -> usize {
        self.requests.iter().filter(|r| is_turn(r)).count()
    }

    pub fn describe(&self) -> String {
        format!(
            "status {:?} after {:?}\nstdout:\n{}\nstderr:\n{}",
            self.status, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// The user settings every run gets in the isolated home: API-key auth,
/// nothing that reaches the network besides the model, nothing that waits.
pub fn user_settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {
            "enableAutoUpdate": false,
            "enableAutoUpdateNotification": false,
            "maxAttempts": 1,
        },
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "ide": {"enabled": false},
    })
}

/// Writes [`user_settings`] to `~/.gemini/settings.json` of `p` unless the
/// test wrote its own.
pub fn prepare_home(p: &Project) {
    let file = p.home.join(".gemini/settings.json");
    if !file.exists() {
        std::fs::create_dir_all(file.parent().unwrap()).expect("create ~/.gemini");
        std::fs::write(
            &file,
            serde_json::to_string_pretty(&user_settings()).unwrap(),
        )
        .expect("write ~/.gemini/settings.json");
    }
}

/// The command line of one run: `gemini -p PROMPT --yolo` (only Aileron can
/// stop a call), a pinned model, and the folder trusted for this run only
/// by `GEMINI_CLI_TRUST_WORKSPACE=true`: `--skip-trust` sets that variable
/// only after the settings were loaded, so the project's settings (and the
/// hooks in them) are dropped as untrusted.
pub fn command(p: &Project, gemini: &Path, mode: Mode, model: &FakeModel) -> Command {
    let mut args: Vec<String> = Vec::new();
    let mut cmd = match mode {
        Mode::Plain => p.command(gemini),
        Mode::Launch(enforce) => {
            let mut c = p.command(super::AILERON);
            args.extend(["launch", "--enforce", enforce, "--"].map(str::to_owned));
            args.push(gemini.to_string_lossy().into_owned());
            c.env_remove("AILERON_DATA");
            c
        }
    };
    args.extend(["-p", "Do the scripted steps.", "--yolo", "-m", MODEL].map(str::to_owned));
    cmd.args(args);
    isolate(&mut cmd, &p.home, &p.run);
    cmd.env("GEMINI_API_KEY", "test-key")
        .env("GOOGLE_GEMINI_BASE_URL", model.url())
        .env("GEMINI_CLI_NO_RELAUNCH", "true")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .env_remove("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
        .env_remove("GOOGLE_API_KEY")
        .env_remove("GOOGLE_GENAI_USE_VERTEXAI")
        .env_remove("GOOGLE_GENAI_USE_GCA")
        .env_remove("GOOGLE_CLOUD_PROJECT")
        .env_remove("HTTPS_PROXY")
        .env_remove("HTTP_PROXY")
        .env_remove("https_proxy")
        .env_remove("http_proxy")
        .env_remove("CI");
    cmd
}

/// Runs Gemini CLI in `p` with `script` as its model, without a terminal;
/// killed (with its process group) after [`AGENT_TIMEOUT`].
pub fn run(p: &Project, gemini: &Path, mode: Mode, script: Script) -> Run {
    prepare_home(p);
    let model = serve(script);
    let mut cmd = command(p, gemini, mode, &model);
    let out = run_agent(&mut cmd);
    assert!(
        !out.timed_out,
        "gemini ({mode:?}) did not finish within {AGENT_TIMEOUT:?}; {} requests; stderr:\n{}",
        model.requests().len(),
        out.stderr
    );
    Run {
        status: out.status,
        stdout: out.stdout,
        stderr: out.stderr,
        elapsed: out.wall,
        requests: model.requests(),
    }
}

/// The installed `gemini`, or None (after saying why) outside CI.
pub fn gemini() -> Option<PathBuf> {
    super::npm::GEMINI_CLI.installed()
}
