//! `aileron hook AGENT` as the agents run it: a process with the event on
//! stdin, whose stdout, stderr and exit code are the answer. The formats
//! themselves are pinned in `crates/aileron-hooks/tests/agents.rs`; here,
//! what only a real process shows: exit codes and streams, unknown agents,
//! input that never parses, large events, and many hooks of one session at
//! once.

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{AGENTS, Project, no_tty, run, text};

const POLICY: &str = r#"version: 1
default: deny
allow:
  - {id: ok, command: "echo ok"}
deny:
  - {id: no, command: "echo no"}
"#;

const DENIED: &str = "aileron: denied: matched `command: echo no` (rule no)";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../aileron-hooks/tests/fixtures")
}

/// The documented payload `fixtures/<agent>/<file>`, in project `p`.
fn fixture(p: &Project, agent: &str, file: &str) -> Value {
    let path = fixtures().join(agent).join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .replace("/home/user/project", &p.dir.to_string_lossy())
        .replace("/home/user", &p.home.to_string_lossy());
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A shell tool call of `agent` running `command` (Cursor: beforeShellExecution).
fn shell_event(p: &Project, agent: &str, command: &str) -> Value {
    if agent == "cursor" {
        let mut ev = fixture(p, agent, "beforeShellExecution.json");
        ev["command"] = json!(command);
        return ev;
    }
    let mut ev = fixture(p, agent, "bash.json");
    let input = match agent {
        "cline" => &mut ev["preToolUse"]["parameters"],
        "opencode" => &mut ev["args"],
        _ => &mut ev["tool_input"],
    };
    input["command"] = json!(command);
    ev
}

fn data_dir(p: &Project) -> PathBuf {
    p.root.join("data")
}

/// `aileron hook AGENT` in the project, isolated, with no terminal.
fn hook(p: &Project, agent: &str) -> Command {
    let mut cmd = p.aileron(&["hook", agent]);
    cmd.env("AILERON_DATA", data_dir(p))
        .env("XDG_CONFIG_HOME", p.home.join(".config"))
        .env("XDG_DATA_HOME", p.home.join(".local/share"));
    no_tty(&mut cmd);
    cmd
}

fn answer(p: &Project, agent: &str, input: &[u8]) -> Output {
    run(&mut hook(p, agent), input)
}

/// stdout as the one JSON object it must be (`None` when empty).
fn stdout_json(out: &Output) -> Option<Value> {
    let s = text(&out.stdout);
    if s.is_empty() {
        return None;
    }
    let line = s
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("stdout without a final newline: {s:?}"));
    assert!(!line.contains('\n'), "stdout is not one line: {s:?}");
    Some(serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {s:?}")))
}

/// What `agent` must get for a deny with `reason`: stdout, stderr, exit code.
fn deny_answer(agent: &str, reason: &str) -> (Option<Value>, String, i32) {
    let blocking = |v: Value| (Some(v), format!("{reason}\n"), 2);
    match agent {
        "claude-code" | "codex" => blocking(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason}})),
        "gemini" | "opencode" => blocking(json!({"decision": "deny", "reason": reason})),
        "cursor" => blocking(json!({"permission": "deny",
            "user_message": reason, "agent_message": reason})),
        // Cline honours the JSON whatever the exit code, and no exit code blocks.
        "cline" => (
            Some(json!({"cancel": true, "errorMessage": reason})),
            format!("{reason}\n"),
            0,
        ),
        other => panic!("no such agent {other}"),
    }
}

fn assert_denied(agent: &str, out: &Output, reason: &str) {
    let (stdout, stderr, code) = deny_answer(agent, reason);
    assert_eq!(stdout_json(out), stdout, "{agent} stdout");
    assert_eq!(text(&out.stderr), stderr, "{agent} stderr");
    assert_eq!(out.status.code(), Some(code), "{agent} exit");
}

/// The reason `agent` was given for a deny, checking the whole answer's shape.
fn denied_reason(agent: &str, out: &Output) -> String {
    let reason = text(&out.stderr).trim_end().to_owned();
    assert!(
        reason.starts_with("aileron: denied: "),
        "{agent}: stderr {reason:?}, stdout {:?}",
        text(&out.stdout)
    );
    assert_denied(agent, out, &reason);
    reason
}

#[test]
fn allowed_and_denied_calls_as_each_agent_sees_them() {
    let p = Project::new(POLICY);
    for agent in AGENTS {
        let ev = shell_event(&p, agent, "echo ok");
        let out = answer(&p, agent, ev.to_string().as_bytes());
        let allowed = "aileron: allowed (rule ok)";
        let expected = match agent {
            "claude-code" => Some(json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": allowed}})),
            // Anything but silence is a failed hook to Codex.
            "codex" => None,
            "gemini" | "opencode" => Some(json!({"decision": "allow", "reason": allowed})),
            "cursor" => Some(json!({"permission": "allow"})),
            "cline" => Some(json!({"cancel": false})),
            _ => unreachable!(),
        };
        assert_eq!(stdout_json(&out), expected, "{agent} stdout");
        assert_eq!(text(&out.stderr), "", "{agent} stderr");
        assert_eq!(out.status.code(), Some(0), "{agent} exit");

        let ev = shell_event(&p, agent, "echo no");
        let out = answer(&p, agent, ev.to_string().as_bytes());
        assert_denied(agent, &out, DENIED);
    }
    let audit = p.audit();
    assert_eq!(audit.len(), 2 * AGENTS.len(), "{audit:?}");
    for (i, agent) in AGENTS.iter().enumerate() {
        for (j, decision) in ["allow", "deny"].iter().enumerate() {
            let line = &audit[2 * i + j];
            assert_eq!(line["agent"], *agent);
            assert_eq!(line["adapter"], format!("hook:{agent}"));
            assert_eq!(line["decision"], *decision);
            assert_eq!(line["action"]["type"], "shell.exec");
        }
    }
}

#[test]
fn claude_code_permission_request_answers_exit_0() {
    let p = Project::new(POLICY);
    let mut ev = fixture(&p, "claude-code", "permission_request.json");
    ev["tool_input"]["command"] = json!("echo no");
    let out = answer(&p, "claude-code", ev.to_string().as_bytes());
    assert_eq!(
        stdout_json(&out),
        Some(
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": DENIED}}})
        )
    );
    assert_eq!(out.status.code(), Some(0));
    ev["tool_input"]["command"] = json!("echo ok");
    let out = answer(&p, "claude-code", ev.to_string().as_bytes());
    assert_eq!(
        stdout_json(&out),
        Some(
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}}})
        )
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn an_unknown_agent_exits_2_and_says_which_agents_there_are() {
    let p = Project::new(POLICY);
    let ev = shell_event(&p, "claude-code", "echo ok");
    for name in ["vim", "Claude-Code", "claude-code "] {
        let out = answer(&p, name, ev.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(2), "{name:?}");
        assert_eq!(text(&out.stdout), "", "{name:?}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "aileron: unknown agent `{name}` (expected one of: claude-code, codex, gemini, cursor, cline, opencode)\n"
            ),
            "{name:?}"
        );
    }
    // The agents' other names.
    for (alias, agent) in [
        ("claude", "claude-code"),
        ("codex-cli", "codex"),
        ("gemini-cli", "gemini"),
    ] {
        let ev = shell_event(&p, agent, "echo no");
        assert_denied(agent, &answer(&p, alias, ev.to_string().as_bytes()), DENIED);
    }
}

#[test]
fn empty_or_unreadable_stdin_is_a_deny() {
    let p = Project::new(POLICY);
    for agent in AGENTS {
        for (input, says) in [
            (&b""[..], "aileron: denied: the hook event is empty"),
            (b"\n", "aileron: denied: the hook event is empty"),
            (
                b"{\"tool_name\":",
                "aileron: denied: the hook event is not valid JSON",
            ),
            (
                b"[]",
                "aileron: denied: the hook event is not a JSON object",
            ),
        ] {
            let out = answer(&p, agent, input);
            let reason = denied_reason(agent, &out);
            assert!(reason.starts_with(says), "{agent} {input:?}: {reason}");
        }
    }
    // Nothing was decided, so nothing is in the project's log.
    assert_eq!(p.audit_text(), "");
}

#[test]
fn a_policy_that_does_not_load_is_a_deny_naming_the_file_and_line() {
    let p = Project::new("version: 1\ndefault: allow\nask:\n  - {id: x, comand: \"echo ok\"}\n");
    let policy = p.path("aileron.yaml");
    for agent in AGENTS {
        let ev = shell_event(&p, agent, "echo ok");
        let out = answer(&p, agent, ev.to_string().as_bytes());
        let reason = denied_reason(agent, &out);
        assert!(
            reason.starts_with(&format!(
                "aileron: denied: the policy does not load: {}:4:",
                policy.display()
            )) && reason.contains("comand"),
            "{agent}: {reason}"
        );
    }
}

#[test]
fn the_event_s_cwd_decides_not_the_hook_s_own_directory() {
    let p = Project::new(POLICY);
    for agent in AGENTS {
        let ev = shell_event(&p, agent, "echo no");
        let out = run(hook(&p, agent).current_dir("/"), ev.to_string().as_bytes());
        assert_denied(agent, &out, DENIED);
    }
    assert_eq!(p.audit().len(), AGENTS.len());
}

#[test]
fn a_launch_session_that_cannot_be_reached_is_a_deny() {
    let p = Project::new(POLICY);
    let socket = p.run.join("nobody.sock");
    for agent in AGENTS {
        let ev = shell_event(&p, agent, "echo ok");
        let mut cmd = hook(&p, agent);
        cmd.env("AILERON_SOCKET", &socket);
        let out = run(&mut cmd, ev.to_string().as_bytes());
        let reason = denied_reason(agent, &out);
        assert!(
            reason.starts_with(&format!(
                "aileron: denied: the launch session at {} cannot be reached",
                socket.display()
            )),
            "{agent}: {reason}"
        );
    }
}

#[test]
fn large_events_are_answered_in_time() {
    let p = Project::new(POLICY);
    let file = format!("{}/src/lib.rs", p.dir.display());
    // Cursor sends the whole file it is about to read: 20 MB of it. `run`
    // kills the hook and fails after 20 s.
    let mut ev = fixture(&p, "cursor", "beforeReadFile.json");
    ev["file_path"] = json!(file);
    ev["content"] = json!("a".repeat(20 << 20));
    let out = answer(&p, "cursor", ev.to_string().as_bytes());
    // Reads are not allowed by this policy: a deny by default, decided.
    let reason = denied_reason("cursor", &out);
    assert_eq!(
        reason,
        "aileron: denied: no rule matched; `default: deny` (default)"
    );
    let audit = p.audit();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["action"]["facets"]["fs"]["path"], json!(file));

    // Over 64 MiB: refused without reading the rest.
    let mut huge = shell_event(&p, "claude-code", "echo ok")
        .to_string()
        .into_bytes();
    huge.truncate(huge.len() - 1);
    huge.extend_from_slice(br#","padding":""#);
    huge.resize(65 << 20, b'x');
    huge.extend_from_slice(b"\"}");
    let out = answer(&p, "claude-code", &huge);
    assert_denied(
        "claude-code",
        &out,
        "aileron: denied: the hook event is larger than 64 MiB",
    );
}

#[test]
fn sixteen_hooks_of_one_session_at_once_all_answer_and_keep_the_state_whole() {
    // A `rate` rule, so that the session's state keeps its actions.
    let p = Project::new(
        "version: 1\ndefault: deny\nallow:\n  - {id: numbered, command: \"echo ok *\"}\ndeny:\n  - {id: flood, when: {type: shell.exec, rate: {more_than: 100, seconds: 60}}}\n",
    );
    let session = "5f0c3a8e-2b1d-4c7e-9a61-3e8d2f4b7c10";
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let ev = shell_event(&p, "claude-code", &format!("echo ok {i}"));
            assert_eq!(ev["session_id"], session);
            let mut cmd = hook(&p, "claude-code");
            std::thread::spawn(move || run(&mut cmd, ev.to_string().as_bytes()))
        })
        .collect();
    for t in threads {
        let out = t.join().expect("hook thread");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let v = stdout_json(&out).expect("an answer");
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "allow",
            "{v}"
        );
    }
    // Each hook read the state the one before it left, under the lock.
    let state_file = data_dir(&p)
        .join("sessions/claude-code")
        .join(format!("{session}.json"));
    let state: Value = serde_json::from_str(&std::fs::read_to_string(&state_file).unwrap())
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", state_file.display()));
    assert_eq!(
        state["history"].as_array().map(Vec::len),
        Some(16),
        "{state}"
    );
    assert_eq!(state["recent"].as_array().map(Vec::len), Some(3), "{state}");
    // One whole line per call.
    let audit = p.audit();
    assert_eq!(audit.len(), 16);
    let mut commands: Vec<String> = audit
        .iter()
        .map(|a| {
            assert_eq!(a["session"], session);
            assert_eq!(a["decision"], "allow");
            a["action"]["facets"]["shell"]["command"]
                .as_str()
                .expect("command")
                .to_owned()
        })
        .collect();
    commands.sort();
    let mut expected: Vec<String> = (0..16).map(|i| format!("echo ok {i}")).collect();
    expected.sort();
    assert_eq!(commands, expected);
}

#[test]
fn without_rate_rules_a_hook_session_keeps_no_action_history() {
    let p = Project::new("version: 1\ndefault: deny\nallow:\n  - \"echo ok *\"\n");
    for i in 0..3 {
        let ev = shell_event(&p, "claude-code", &format!("echo ok {i}"));
        let out = run(&mut hook(&p, "claude-code"), ev.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let state_file = data_dir(&p)
        .join("sessions/claude-code")
        .join("5f0c3a8e-2b1d-4c7e-9a61-3e8d2f4b7c10.json");
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(&state_file).unwrap()).unwrap();
    assert_eq!(state["history"], json!([]), "{state}");
    // The doom-loop count is kept all the same.
    assert_eq!(state["recent"].as_array().map(Vec::len), Some(3), "{state}");
}

#[test]
fn a_rate_rule_counts_a_hook_session_s_calls_across_processes() {
    let p = Project::new(
        "version: 1\ndefault: allow\ndeny:\n  - id: too-many-printfs\n    description: more than 2 printfs a minute\n    when: {type: shell.exec, shell.binary: printf, rate: {more_than: 2, seconds: 60}}\n",
    );
    let decide = |cmd: &str| {
        let ev = shell_event(&p, "claude-code", cmd);
        run(&mut hook(&p, "claude-code"), ev.to_string().as_bytes())
    };
    for cmd in ["printf a", "printf b"] {
        let out = decide(cmd);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(
            stdout_json(&out).unwrap()["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
    }
    // The third within the minute, each call a new process.
    let reason = denied_reason("claude-code", &decide("printf c"));
    assert!(reason.contains("too-many-printfs"), "{reason}");
}
