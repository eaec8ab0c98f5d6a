//! `judge` rules through the real shim against a fake OpenAI-compatible
//! server on 127.0.0.1: allowed, denied, escalated to a human (none here:
//! denied), failing closed at the judge's timeout, and reused from the
//! cache by the next shim process without a second request.

mod support;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{Project, run_no_tty, text};

const KEY: &str = "sk-judge-test-SECRET-42";

/// A chat-completions server answering every request with `verdict`,
/// after `stall`; counts the requests and keeps their bodies.
struct Fake {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Fake {
    fn start(verdict: Value, stall: Duration) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
        let seen = bodies.clone();
        let reply = json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "judge-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": verdict.to_string()}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 250, "completion_tokens": 9, "total_tokens": 259}
        })
        .to_string();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let (seen, reply) = (seen.clone(), reply.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut len = 0;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; len];
                    reader.read_exact(&mut body).unwrap();
                    seen.lock()
                        .unwrap()
                        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                    std::thread::sleep(stall);
                    let _ = stream.write_all(
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                            reply.len()
                        )
                        .as_bytes(),
                    );
                });
            }
        });
        Fake { url, bodies }
    }

    fn requests(&self) -> usize {
        self.bodies.lock().unwrap().len()
    }
}

/// A policy whose `make *` commands the judge at `url` decides.
fn policy(url: &str, extra: &str) -> String {
    format!(
        "version: 1\ndefault: deny\nsettings: {{audit_log: .aileron/audit.jsonl}}\njudges:\n  fast: {{provider: openai, base_url: \"{url}\", model: judge-model, api_key_env: JUDGE_KEY, timeout: 2}}\njudge:\n  - {{id: judge-make, command: \"make *\", prompt: \"Allow only building.\"{extra}}}\n"
    )
}

/// Targets for the commands the tests run.
const MAKEFILE: &str = "build test clean deploy:\n\t@touch $@.done\n";

/// A project with `policy` and the Makefile.
fn project(policy: &str) -> Project {
    let p = Project::new(policy);
    p.write("Makefile", MAKEFILE);
    p
}

/// `aileron-sh -c LINE` with no terminal and the key in its environment.
fn shim(p: &Project, line: &str) -> std::process::Output {
    run_no_tty(p.shim(&["-c", line]).env("JUDGE_KEY", KEY))
}

#[test]
fn the_judge_allows_and_the_audit_line_says_who_and_what_it_cost() {
    let fake = Fake::start(
        json!({"decision": "allow", "reason": "builds the project"}),
        Duration::ZERO,
    );
    let p = project(&policy(&fake.url, ""));
    let out = shim(&p, "make build");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(p.path("build.done").exists(), "the command ran");
    let audit = p.audit();
    let rec = &audit[0];
    assert_eq!(rec["source"], "llm", "{rec}");
    assert_eq!(rec["outcome"], "judge-allowed");
    assert_eq!(rec["approver"], "judge:fast");
    assert_eq!(rec["rule"], "judge-make");
    assert_eq!(rec["judge"]["model"], "judge-model");
    assert_eq!(rec["judge"]["prompt_tokens"], 250);
    assert_eq!(rec["judge"]["completion_tokens"], 9);
    assert_eq!(rec["judge"]["cached"], false);
    assert!(
        rec["reason"]
            .as_str()
            .unwrap()
            .contains("builds the project"),
        "{rec}"
    );
    // What the judge got: the action as data, the rule's question.
    let sent = fake.bodies.lock().unwrap()[0].clone();
    let user = sent["messages"][1]["content"].as_str().unwrap().to_owned();
    assert!(user.contains("Allow only building."), "{user}");
    assert!(user.contains("\"summary\":\"make build\""), "{user}");
    // The key is in no record.
    assert!(!p.audit_text().contains(KEY));
}

#[test]
fn the_judge_denies_with_its_reason() {
    let fake = Fake::start(
        json!({"decision": "deny", "reason": "deploys to production"}),
        Duration::ZERO,
    );
    let p = project(&policy(&fake.url, ""));
    let out = shim(&p, "make deploy");
    assert_eq!(out.status.code(), Some(126));
    assert!(!p.path("deploy.done").exists(), "the command did not run");
    assert_eq!(
        text(&out.stderr),
        "aileron: denied: judge fast: deploys to production (rule judge-make)\n"
    );
    assert_eq!(p.audit()[0]["outcome"], "judge-denied");
}

#[test]
fn a_judge_s_ask_goes_to_a_human_and_without_one_is_denied() {
    let fake = Fake::start(
        json!({"decision": "ask", "reason": "cannot tell what clean removes"}),
        Duration::ZERO,
    );
    let p = project(&policy(&fake.url, ""));
    let out = shim(&p, "make clean");
    assert_eq!(out.status.code(), Some(126));
    let err = text(&out.stderr);
    assert!(err.contains("no terminal"), "{err}");
    let rec = &p.audit()[0];
    assert_eq!(rec["outcome"], "no-terminal", "{rec}");
    assert_eq!(rec["judge"]["verdict"], "ask", "{rec}");
}

#[test]
fn a_judge_that_does_not_answer_in_time_fails_closed_or_open_as_the_rule_says() {
    let fake = Fake::start(
        json!({"decision": "allow", "reason": "late"}),
        Duration::from_secs(5),
    );
    let p = project(&policy(&fake.url, ""));
    let started = std::time::Instant::now();
    let out = shim(&p, "make build");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the 2 s timeout held"
    );
    assert_eq!(out.status.code(), Some(126));
    let rec = &p.audit()[0];
    assert_eq!(rec["outcome"], "judge-failed-deny", "{rec}");
    assert!(
        rec["reason"]
            .as_str()
            .unwrap()
            .contains("did not answer within"),
        "{rec}"
    );
    // `fail_closed: false`: the same failure allows.
    let p = project(&policy(&fake.url, ", fail_closed: false"));
    let out = shim(&p, "make build");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(p.audit()[0]["outcome"], "judge-failed-allow");
    // No key in the environment: fails closed, saying which variable.
    let p = project(&policy(&fake.url, ""));
    let out = run_no_tty(&mut p.shim(&["-c", "make build"]));
    assert_eq!(out.status.code(), Some(126));
    assert!(
        text(&out.stderr).contains("$JUDGE_KEY is not set"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_next_shim_reuses_a_cached_verdict_without_asking_the_model() {
    let fake = Fake::start(
        json!({"decision": "allow", "reason": "builds"}),
        Duration::ZERO,
    );
    let p = project(&policy(&fake.url, ", cache_ttl: 600"));
    for _ in 0..2 {
        let out = shim(&p, "make build");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    assert_eq!(fake.requests(), 1, "the second came from the cache");
    let audit = p.audit();
    assert_eq!(audit[0]["judge"]["cached"], false);
    assert_eq!(audit[1]["judge"]["cached"], true);
    assert_eq!(audit[1]["outcome"], "judge-allowed");
    // Another command is judged.
    shim(&p, "make test");
    assert_eq!(fake.requests(), 2);
}

/// Under `aileron launch` the judge's key stays with the session: the
/// agent's environment has no trace of it, and the session still judges.
#[test]
fn under_launch_the_key_is_the_session_s_not_the_agent_s() {
    let fake = Fake::start(
        json!({"decision": "allow", "reason": "builds"}),
        Duration::ZERO,
    );
    let p = project(&policy(&fake.url, ""));
    let script = r#"echo "key=${JUDGE_KEY:-none}"; $SHELL -c 'make build'; echo "make=$?""#;
    let out = run_no_tty(
        p.aileron(&["launch", "--enforce", "none", "--", "bash", "-c", script])
            .env("JUDGE_KEY", KEY),
    );
    assert_eq!(
        text(&out.stdout),
        "key=none\nmake=0\n",
        "stderr: {}",
        text(&out.stderr)
    );
    assert!(p.path("build.done").exists());
    assert!(p.audit().iter().any(|r| r["outcome"] == "judge-allowed"));
    assert!(!p.audit_text().contains(KEY));
}

/// The same judge through `aileron hook claude-code`: a Bash tool call the
/// judge allows is allowed in Claude Code's own answer, one it denies is
/// denied with the judge's reason, and the hook's audit line says so.
#[test]
fn claude_code_s_hook_asks_the_same_judge() {
    let fake = Fake::start(
        json!({"decision": "deny", "reason": "deploys to production"}),
        Duration::ZERO,
    );
    let p = project(&policy(&fake.url, ""));
    let event = |command: &str| {
        json!({
            "session_id": "s-judge", "transcript_path": "/dev/null",
            "cwd": p.dir.display().to_string(), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}
        })
        .to_string()
    };
    let mut cmd = p.aileron(&["hook", "claude-code"]);
    cmd.env("JUDGE_KEY", KEY)
        .env("AILERON_DATA", p.root.join("data"));
    support::no_tty(&mut cmd);
    let out = support::run(&mut cmd, event("make deploy").as_bytes());
    let answer: Value = serde_json::from_str(text(&out.stdout).trim())
        .unwrap_or_else(|e| panic!("{e}: {:?} / {:?}", text(&out.stdout), text(&out.stderr)));
    let decided = &answer["hookSpecificOutput"];
    assert_eq!(decided["permissionDecision"], "deny", "{answer}");
    assert!(
        decided["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("judge fast: deploys to production"),
        "{answer}"
    );
    let rec = p.audit().pop().unwrap();
    assert_eq!(rec["adapter"], "hook:claude-code", "{rec}");
    assert_eq!(rec["outcome"], "judge-denied", "{rec}");
    assert_eq!(rec["judge"]["name"], "fast", "{rec}");
    assert_eq!(fake.requests(), 1);
}

#[test]
fn a_judge_defined_in_the_user_s_settings_decides_the_project_s_rule() {
    let fake = Fake::start(
        json!({"decision": "allow", "reason": "builds the project"}),
        Duration::ZERO,
    );
    // The model and its key variable are the user's; the project names
    // the judge only.
    let p = project(
        "version: 1\ndefault: deny\nsettings: {audit_log: .aileron/audit.jsonl}\njudge:\n  - {id: judge-make, command: \"make *\", judge: fast}\n",
    );
    let settings = p.home.join(".aileron/settings.yaml");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        format!(
            "judges:\n  fast: {{provider: openai, base_url: \"{}\", model: judge-model, api_key_env: JUDGE_KEY, timeout: 2}}\n",
            fake.url
        ),
    )
    .unwrap();
    let out = shim(&p, "make build");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(p.path("build.done").exists(), "the command ran");
    let rec = &p.audit()[0];
    assert_eq!(rec["approver"], "judge:fast", "{rec}");
    assert_eq!(fake.requests(), 1);
}
