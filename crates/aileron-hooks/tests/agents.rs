//! `aileron_hooks::run` in process, agent by agent: the documented example
//! payloads (`tests/fixtures/<agent>/*.json`) in, the documented answers
//! (`expected_answers.md`) out; the Action each tool call becomes, read back
//! from the audit log; failing closed on every kind of bad input; the
//! built-in protections through each agent's tools; and the state an agent
//! session keeps between hook processes (doom loop, "always").
//!
//! Every test runs in its own temporary directory: `proj/` (the agent's
//! working directory, holding `aileron.yaml`), `home/` and `data/`, and a
//! terminal path that does not exist, so no human can ever be asked.

use aileron_hooks::{Agent, Environment, Reply};
use serde_json::{Value, json};
use std::fs::File;
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};

/// The paths the documented payloads use, replaced by the sandbox's.
const FIXTURE_PROJECT: &str = "/home/user/project";
const FIXTURE_HOME: &str = "/home/user";

const NO_TERMINAL: &str = "approval needed but there is no terminal to ask on";

/// One rule per tool kind, so that the rule that decided tells how the call
/// was lowered. Nothing is allowed by default.
const KINDS_POLICY: &str = r#"version: 1
default: deny
allow:
  - {id: allow-src-write, when: {type: fs.write, fs.path: {path: "src/**"}}}
  - {id: allow-read-src, when: {type: fs.read, fs.path: {path: "src/**"}}}
  - {id: allow-list, when: {type: fs.list}}
  - {id: allow-search, when: {type: fs.read, fs.op: search}}
  - {id: allow-docs, when: {type: http.request, http.host: example.com}}
  - {id: allow-resources, when: {type: mcp.call, mcp.server: github, mcp.tool: {pattern: "^repo://"}}}
  - {id: allow-npm, command: "npm install"}
  - {id: allow-rg, command: "rg *"}
ask:
  - {id: ask-push, command: "git push *"}
  - {id: ask-rm, command: "rm -rf *"}
  - {id: ask-github, when: {type: mcp.call, mcp.tool: create_issue}}
  - {id: ask-notebook, when: {type: fs.write, fs.path: {path: "*.ipynb"}}}
deny:
  - {id: deny-secrets, when: {type: fs.read, fs.path: {path: "secrets/**"}}}
  - {id: deny-env-write, when: {type: fs.write, fs.path: {path: ".env"}}}
  - {id: deny-tools, when: {type: tool.call}}
  - {id: deny-search, when: {type: http.request, tool.name: {in: [WebSearch, google_web_search, websearch]}}}
  - {id: deny-localhost, when: {type: http.request, http.host: localhost}}
  - {id: deny-sed, command: "sed *"}
"#;

/// Everything allowed (so only built-in rules and the session can say no).
const ALLOW_ALL: &str = r#"version: 1
default: allow
allow:
  - {id: all-writes, when: {type: fs.write}}
  - {id: all-reads, when: {type: fs.read}}
"#;

/// Three shell commands, one per decision.
const DECISIONS_POLICY: &str = r#"version: 1
default: deny
allow:
  - {id: ok-echo, command: "echo ok"}
  - {id: ok-mcp, when: {type: mcp.call, mcp.tool: list_issues}}
  - {id: ok-read, when: {type: fs.read, fs.path: {path: "src/**"}}}
ask:
  - {id: ask-echo, command: "echo maybe"}
  - {id: ask-mcp, when: {type: mcp.call, mcp.tool: create_issue}}
  - {id: ask-read, when: {type: fs.read, fs.path: {path: "secrets/**"}}}
deny:
  - {id: no-echo, command: "echo no"}
  - {id: no-mcp, when: {type: mcp.call, mcp.tool: delete_repo}}
"#;

// ---------------------------------------------------------------------------
// The sandbox

struct Sandbox {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    proj: PathBuf,
    home: PathBuf,
    data: PathBuf,
    env: Environment,
    /// Where the decider writes its audit lines for this project.
    audit_path: PathBuf,
}

impl Sandbox {
    fn new(policy: &str) -> Sandbox {
        Sandbox::with_data_dir(policy, None)
    }

    /// With the data directory at `home/<rel>` (the real default is `~/.aileron`).
    fn with_data_dir(policy: &str, in_home: Option<&str>) -> Sandbox {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical temp dir");
        let proj = root.join("proj");
        let home = root.join("home");
        let data = match in_home {
            Some(rel) => home.join(rel),
            None => root.join("data"),
        };
        for d in [&proj, &home, &data] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        std::fs::write(proj.join("aileron.yaml"), policy).expect("write policy");
        let env = Environment {
            load: aileron_config::LoadOptions {
                cwd: proj.clone(),
                policy_path: None,
                home: home.clone(),
                data_dir: data.clone(),
                user_settings: false,
                auto_profiles: false,
                run_tests: false,
                server_rules: false,
            },
            socket: None,
            tty: root.join("no-tty").to_string_lossy().into_owned(),
        };
        let audit_path = match aileron_config::load(&env.load, None) {
            Ok(loaded) => aileron_config::audit_log_path(
                &loaded.policy,
                loaded.project_file.as_deref(),
                &env.load,
            ),
            // A policy that does not load: recorded under the data directory.
            Err(_) => data.join("audit.jsonl"),
        };
        Sandbox {
            _tmp: tmp,
            root,
            proj,
            home,
            data,
            env,
            audit_path,
        }
    }

    fn proj_str(&self) -> String {
        self.proj.to_string_lossy().into_owned()
    }

    fn home_str(&self) -> String {
        self.home.to_string_lossy().into_owned()
    }

    fn data_str(&self) -> String {
        self.data.to_string_lossy().into_owned()
    }

    /// `text` with the documented paths and `{proj}`, `{home}`, `{data}` made the sandbox's.
    fn paths(&self, text: &str) -> String {
        text.replace(FIXTURE_PROJECT, &self.proj_str())
            .replace(FIXTURE_HOME, &self.home_str())
            .replace("{proj}", &self.proj_str())
            .replace("{home}", &self.home_str())
            .replace("{data}", &self.data_str())
    }

    /// The documented payload `tests/fixtures/<agent>/<file>`, in this sandbox.
    fn fixture(&self, agent: Agent, file: &str) -> Value {
        let path = fixtures_dir().join(agent.name()).join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        serde_json::from_str(&self.paths(&text))
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
    }

    fn run(&self, agent: Agent, event: &Value) -> Reply {
        self.run_bytes(agent, event.to_string().as_bytes())
    }

    fn run_bytes(&self, agent: Agent, input: &[u8]) -> Reply {
        aileron_hooks::run(agent, input, &self.env)
    }

    fn audit(&self) -> Vec<Value> {
        read_jsonl(&self.audit_path)
    }

    /// Runs `event` and reads what the agent sees and what was recorded:
    /// exactly one new audit line, or none when `recorded` is false.
    fn decide(&self, agent: Agent, event: &Value) -> Decided {
        self.decide_bytes(
            agent,
            &hook_event(agent, event),
            event.to_string().as_bytes(),
        )
    }

    /// [`Sandbox::decide`] for an event already serialized, named `hook_event`.
    fn decide_bytes(&self, agent: Agent, hook_event: &str, input: &[u8]) -> Decided {
        let before = self.audit().len();
        let reply = self.run_bytes(agent, input);
        let (seen, message) = answer_of(agent, hook_event, &reply);
        let after = self.audit();
        assert!(
            after.len() <= before + 1,
            "{} lines written for one call: {:?}",
            after.len() - before,
            &after[before..]
        );
        Decided {
            seen,
            message,
            audit: after.get(before).cloned(),
            reply,
        }
    }

    /// Like [`Sandbox::decide`], insisting on the audit line.
    fn decide_audited(&self, agent: Agent, event: &Value) -> (Seen, String, Value) {
        let d = self.decide(agent, event);
        let audit = d.audit.unwrap_or_else(|| {
            panic!(
                "no audit line for {} {event}; answer {:?}",
                agent.name(),
                d.reply
            )
        });
        (d.seen, d.message, audit)
    }
}

struct Decided {
    seen: Seen,
    message: String,
    audit: Option<Value>,
    reply: Reply,
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line is not JSON ({e}): {l}"))
        })
        .collect()
}

/// `facets.a.b.c` of an audit record's action (`a.b.c` given).
fn facet<'v>(audit: &'v Value, path: &str) -> &'v Value {
    path.split('.')
        .fold(&audit["action"]["facets"], |v, k| &v[k])
}

// ---------------------------------------------------------------------------
// Reading the answers the way each agent does

/// What the agent does with the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    Allow,
    Deny,
    /// The agent asks its human (Claude Code `ask` or an empty
    /// PermissionRequest answer; Cursor `ask`).
    Ask,
}

/// The event name `agent` sent in `event`.
fn hook_event(agent: Agent, event: &Value) -> String {
    let key = match agent {
        Agent::Cline => "hookName",
        _ => "hook_event_name",
    };
    match event.get(key).and_then(Value::as_str) {
        Some(name) => name.to_owned(),
        None => default_event(agent).to_owned(),
    }
}

/// The pre-tool event of `agent`, for answers to input that could not be read.
fn default_event(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::Cline => "PreToolUse",
        Agent::Gemini => "BeforeTool",
        Agent::Cursor => "beforeShellExecution",
        Agent::Opencode => "tool.execute.before",
    }
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    k.sort_unstable();
    k
}

/// What `agent` makes of `r`, answering its `event`, and the message it
/// shows. Checks the answer is exactly one of the documented forms
/// (`expected_answers.md`): any other output is a failed hook, which most
/// agents let through.
fn answer_of(agent: Agent, event: &str, r: &Reply) -> (Seen, String) {
    let ctx = format!("{} {event} answered {r:?}", agent.name());
    let body: Option<Value> = if r.stdout.is_empty() {
        None
    } else {
        let line = r
            .stdout
            .strip_suffix('\n')
            .unwrap_or_else(|| panic!("stdout does not end in a newline: {ctx}"));
        assert!(!line.contains('\n'), "stdout is not one line: {ctx}");
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {ctx}"));
        assert!(v.is_object(), "stdout is not a JSON object: {ctx}");
        Some(v)
    };
    let text = |v: &Value, what: &str| -> String {
        let s = v
            .as_str()
            .unwrap_or_else(|| panic!("{what} is not a string: {ctx}"));
        assert!(!s.trim().is_empty(), "{what} is empty: {ctx}");
        s.to_owned()
    };
    // A deny is also said with the blocking exit code and the reason on
    // stderr (Codex and Gemini need both).
    let blocking = |reason: &str| {
        assert_eq!(r.exit, 2, "a deny exits 2: {ctx}");
        assert_eq!(r.stderr, format!("{reason}\n"), "stderr: {ctx}");
    };
    let quiet = || {
        assert_eq!(r.exit, 0, "exit: {ctx}");
        assert_eq!(r.stderr, "", "stderr: {ctx}");
    };
    match agent {
        Agent::ClaudeCode if event == "PermissionRequest" => {
            // Exit 2 is not honoured here: the JSON decides.
            quiet();
            let Some(v) = body else {
                return (Seen::Ask, String::new());
            };
            assert_eq!(keys(&v), ["hookSpecificOutput"], "{ctx}");
            let h = &v["hookSpecificOutput"];
            assert_eq!(keys(h), ["decision", "hookEventName"], "{ctx}");
            assert_eq!(h["hookEventName"], "PermissionRequest", "{ctx}");
            let d = &h["decision"];
            match d["behavior"].as_str() {
                Some("allow") => {
                    assert_eq!(keys(d), ["behavior"], "{ctx}");
                    (Seen::Allow, String::new())
                }
                Some("deny") => {
                    assert_eq!(keys(d), ["behavior", "message"], "{ctx}");
                    (Seen::Deny, text(&d["message"], "decision.message"))
                }
                _ => panic!("no decision.behavior: {ctx}"),
            }
        }
        Agent::ClaudeCode | Agent::Codex => {
            let Some(v) = body else {
                // Codex: empty stdout and exit 0 is its only allow.
                assert_eq!(agent, Agent::Codex, "Claude Code gets no decision: {ctx}");
                quiet();
                return (Seen::Allow, String::new());
            };
            assert_eq!(keys(&v), ["hookSpecificOutput"], "{ctx}");
            let h = &v["hookSpecificOutput"];
            assert_eq!(
                keys(h),
                [
                    "hookEventName",
                    "permissionDecision",
                    "permissionDecisionReason"
                ],
                "{ctx}"
            );
            assert_eq!(h["hookEventName"], "PreToolUse", "{ctx}");
            let reason = text(&h["permissionDecisionReason"], "permissionDecisionReason");
            match (agent, h["permissionDecision"].as_str()) {
                (Agent::ClaudeCode, Some("allow")) => {
                    quiet();
                    (Seen::Allow, reason)
                }
                (Agent::ClaudeCode, Some("ask")) => {
                    quiet();
                    (Seen::Ask, reason)
                }
                (_, Some("deny")) => {
                    blocking(&reason);
                    (Seen::Deny, reason)
                }
                // Codex treats `allow` (without updatedInput) and `ask` as a
                // failed hook: the call runs.
                _ => panic!("not a decision {} acts on: {ctx}", agent.name()),
            }
        }
        Agent::Gemini | Agent::Opencode => {
            let v = body.unwrap_or_else(|| panic!("no decision: {ctx}"));
            assert_eq!(keys(&v), ["decision", "reason"], "{ctx}");
            let reason = text(&v["reason"], "reason");
            match v["decision"].as_str() {
                Some("allow") => {
                    quiet();
                    (Seen::Allow, reason)
                }
                Some("deny") => {
                    blocking(&reason);
                    (Seen::Deny, reason)
                }
                // Gemini CLI lets `ask` through; the opencode bridge has none.
                _ => panic!("not a decision {} acts on: {ctx}", agent.name()),
            }
        }
        Agent::Cursor => {
            let v = body.unwrap_or_else(|| panic!("no permission: {ctx}"));
            match v["permission"].as_str() {
                Some("allow") => {
                    assert_eq!(keys(&v), ["permission"], "{ctx}");
                    quiet();
                    (Seen::Allow, String::new())
                }
                Some("deny") => {
                    assert_eq!(
                        keys(&v),
                        ["agent_message", "permission", "user_message"],
                        "{ctx}"
                    );
                    let m = text(&v["user_message"], "user_message");
                    assert_eq!(v["agent_message"], v["user_message"], "{ctx}");
                    blocking(&m);
                    (Seen::Deny, m)
                }
                Some("ask") => {
                    // Enforced only by these two gates.
                    assert!(
                        matches!(event, "beforeShellExecution" | "beforeMCPExecution"),
                        "Cursor does not enforce ask for {event}: {ctx}"
                    );
                    let m = text(&v["user_message"], "user_message");
                    quiet();
                    (Seen::Ask, m)
                }
                _ => panic!("no permission: {ctx}"),
            }
        }
        Agent::Cline => {
            // Cline has no blocking exit code: the JSON says it, always exit 0.
            assert_eq!(r.exit, 0, "{ctx}");
            let v = body.unwrap_or_else(|| panic!("no answer: {ctx}"));
            match v["cancel"].as_bool() {
                Some(false) => {
                    assert_eq!(keys(&v), ["cancel"], "{ctx}");
                    assert_eq!(r.stderr, "", "{ctx}");
                    (Seen::Allow, String::new())
                }
                Some(true) => {
                    assert_eq!(keys(&v), ["cancel", "errorMessage"], "{ctx}");
                    let m = text(&v["errorMessage"], "errorMessage");
                    assert_eq!(r.stderr, format!("{m}\n"), "{ctx}");
                    (Seen::Deny, m)
                }
                None => panic!("no `cancel`: {ctx}"),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Documented payloads, reshaped

/// The agent's session id in `event`.
fn session_of(agent: Agent, event: &Value) -> String {
    let key = session_key(agent);
    event[key].as_str().unwrap_or_default().to_owned()
}

fn session_key(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::Gemini => "session_id",
        Agent::Cursor => "conversation_id",
        Agent::Cline => "taskId",
        Agent::Opencode => "sessionID",
    }
}

fn with_session(agent: Agent, mut event: Value, session: &str) -> Value {
    event[session_key(agent)] = json!(session);
    event
}

/// The tool's arguments inside `event`.
fn tool_input(agent: Agent, event: &mut Value) -> &mut Value {
    match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::Gemini | Agent::Cursor => {
            &mut event["tool_input"]
        }
        Agent::Cline => &mut event["preToolUse"]["parameters"],
        Agent::Opencode => &mut event["args"],
    }
}

/// A shell tool call of `agent` running `command` (Cursor: beforeShellExecution).
fn shell_event(sb: &Sandbox, agent: Agent, command: &str) -> Value {
    if agent == Agent::Cursor {
        let mut ev = sb.fixture(agent, "beforeShellExecution.json");
        ev["command"] = json!(command);
        return ev;
    }
    let mut ev = sb.fixture(agent, "bash.json");
    tool_input(agent, &mut ev)["command"] = json!(command);
    ev
}

/// A file write of `agent` to `path` (Cursor: preToolUse `Write`; Codex: `apply_patch`).
fn write_event(sb: &Sandbox, agent: Agent, path: &str) -> Value {
    match agent {
        Agent::Codex => patch_event(sb, &format!("*** Add File: {path}\n+x\n")),
        Agent::Cursor => {
            let mut ev = sb.fixture(agent, "bash.json");
            ev["tool_name"] = json!("Write");
            ev["tool_input"] = json!({"file_path": path, "content": "x\n"});
            ev
        }
        _ => {
            let mut ev = sb.fixture(agent, "write.json");
            let key = match agent {
                Agent::Cline => "path",
                Agent::Opencode => "filePath",
                _ => "file_path",
            };
            tool_input(agent, &mut ev)[key] = json!(path);
            ev
        }
    }
}

/// A Codex `apply_patch` with `hunks` between the patch markers.
fn patch_event(sb: &Sandbox, hunks: &str) -> Value {
    let mut ev = sb.fixture(Agent::Codex, "write.json");
    ev["tool_input"]["command"] = json!(format!("*** Begin Patch\n{hunks}*** End Patch\n"));
    ev
}

/// A file read of `agent` (Cursor: beforeReadFile; Codex: `cat` through its shell tool).
fn read_event(sb: &Sandbox, agent: Agent, path: &str) -> Value {
    match agent {
        Agent::Codex => shell_event(sb, agent, &format!("cat {path}")),
        Agent::Cursor => {
            let mut ev = sb.fixture(agent, "beforeReadFile.json");
            ev["file_path"] = json!(path);
            ev
        }
        _ => {
            let mut ev = sb.fixture(agent, "read.json");
            let key = match agent {
                Agent::Cline => "path",
                Agent::Opencode => "filePath",
                _ => "file_path",
            };
            tool_input(agent, &mut ev)[key] = json!(path);
            ev
        }
    }
}

/// An MCP call of `agent` to `github`'s `tool` (Codex, Claude Code: `mcp__github__TOOL`).
fn mcp_event(sb: &Sandbox, agent: Agent, tool: &str) -> Value {
    let file = match agent {
        Agent::Cursor => "beforeMCPExecution.json",
        _ => "mcp.json",
    };
    let mut ev = sb.fixture(agent, file);
    match agent {
        Agent::ClaudeCode | Agent::Codex => ev["tool_name"] = json!(format!("mcp__github__{tool}")),
        Agent::Gemini => {
            ev["tool_name"] = json!(format!("mcp_github_{tool}"));
            ev["mcp_context"]["tool_name"] = json!(tool);
        }
        Agent::Cursor => ev["tool_name"] = json!(tool),
        Agent::Cline => ev["preToolUse"]["parameters"]["tool_name"] = json!(tool),
        Agent::Opencode => panic!("opencode names no MCP server"),
    }
    ev
}

// ---------------------------------------------------------------------------
// Every documented payload, one per tool kind per agent

/// What one documented payload must come to under [`KINDS_POLICY`].
struct Case {
    file: &'static str,
    seen: Seen,
    /// The action's `type` in the audit log; "" when the event is not one
    /// Aileron decides (nothing is recorded).
    kind: &'static str,
    /// Facets the action must have (`{proj}` is the project directory).
    facets: &'static [(&'static str, &'static str)],
    /// The policy's verdict (before asking anyone).
    verdict: &'static str,
    rule: Option<&'static str>,
}

const fn case(
    file: &'static str,
    seen: Seen,
    kind: &'static str,
    facets: &'static [(&'static str, &'static str)],
    verdict: &'static str,
    rule: Option<&'static str>,
) -> Case {
    Case {
        file,
        seen,
        kind,
        facets,
        verdict,
        rule,
    }
}

use Seen::{Allow, Ask, Deny};

const CLAUDE_CASES: &[Case] = &[
    case(
        "bash.json",
        Ask,
        "shell.exec",
        &[
            ("shell.command", "git push origin main"),
            ("shell.working_dir", "{proj}"),
        ],
        "ask",
        Some("ask-push"),
    ),
    case(
        "edit.json",
        Allow,
        "fs.write",
        &[("fs.path", "{proj}/src/lib.rs"), ("tool.name", "Edit")],
        "allow",
        Some("allow-src-write"),
    ),
    case(
        "glob.json",
        Allow,
        "fs.list",
        &[("fs.path", "{proj}"), ("tool.name", "Glob")],
        "allow",
        Some("allow-list"),
    ),
    case(
        "grep.json",
        Ask,
        "fs.read",
        &[("fs.path", "{proj}"), ("fs.op", "search")],
        "ask",
        Some("deny-secrets"),
    ),
    case(
        "mcp.json",
        Ask,
        "mcp.call",
        &[
            ("mcp.server", "github"),
            ("mcp.tool", "create_issue"),
            ("mcp.arguments.owner", "acme"),
        ],
        "ask",
        Some("ask-github"),
    ),
    case(
        "multiedit.json",
        Allow,
        "fs.write",
        &[("fs.path", "{proj}/src/lib.rs"), ("tool.name", "MultiEdit")],
        "allow",
        Some("allow-src-write"),
    ),
    case(
        "notebookedit.json",
        Ask,
        "fs.write",
        &[("fs.path", "{proj}/analysis.ipynb")],
        "ask",
        Some("ask-notebook"),
    ),
    case(
        "other.json",
        Deny,
        "tool.call",
        &[
            ("tool.name", "Agent"),
            ("tool.input.subagent_type", "Explore"),
        ],
        "deny",
        Some("deny-tools"),
    ),
    case(
        "permission_request.json",
        Ask,
        "shell.exec",
        &[("shell.command", "rm -rf node_modules")],
        "ask",
        Some("ask-rm"),
    ),
    case(
        "read.json",
        Deny,
        "fs.read",
        &[("fs.path", "{proj}/secrets/prod.env")],
        "deny",
        Some("deny-secrets"),
    ),
    case(
        "webfetch.json",
        Allow,
        "http.request",
        &[
            ("http.host", "example.com"),
            ("http.url", "https://example.com/docs/api"),
            ("http.method", "GET"),
        ],
        "allow",
        Some("allow-docs"),
    ),
    case(
        "websearch.json",
        Deny,
        "http.request",
        &[("tool.name", "WebSearch"), ("http.method", "GET")],
        "deny",
        Some("deny-search"),
    ),
    case(
        "write.json",
        Deny,
        "fs.write",
        &[("fs.path", "{proj}/.env")],
        "deny",
        Some("deny-env-write"),
    ),
];

const CODEX_CASES: &[Case] = &[
    case(
        "bash.json",
        Deny,
        "shell.exec",
        &[("shell.command", "git push --force origin main")],
        "ask",
        Some("ask-push"),
    ),
    case(
        "edit.json",
        Allow,
        "fs.write",
        &[
            ("fs.path", "{proj}/src/lib.rs"),
            ("fs.op", "write"),
            ("tool.name", "apply_patch"),
        ],
        "allow",
        Some("allow-src-write"),
    ),
    case(
        "glob.json",
        Allow,
        "shell.exec",
        &[
            ("shell.command", "rg --files -g *.pem"),
            ("shell.binary", "rg"),
        ],
        "allow",
        Some("allow-rg"),
    ),
    case(
        "grep.json",
        Deny,
        "shell.exec",
        &[("shell.command", "rg -n AWS_SECRET_ACCESS_KEY .")],
        "ask",
        Some("deny-secrets"),
    ),
    case(
        "mcp.json",
        Deny,
        "mcp.call",
        &[
            ("mcp.server", "github"),
            ("mcp.tool", "create_issue"),
            ("mcp.arguments.repo", "project"),
        ],
        "ask",
        Some("ask-github"),
    ),
    case(
        "read.json",
        Deny,
        "shell.exec",
        &[("shell.command", "sed -n 1,200p secrets/prod.env")],
        "deny",
        Some("deny-sed"),
    ),
    case(
        "write.json",
        Deny,
        "fs.write",
        &[("fs.path", "{proj}/.env"), ("fs.op", "create")],
        "deny",
        Some("deny-env-write"),
    ),
];

const GEMINI_CASES: &[Case] = &[
    case(
        "bash.json",
        Deny,
        "shell.exec",
        &[
            ("shell.command", "git push --force origin main"),
            ("shell.working_dir", "{proj}"),
        ],
        "ask",
        Some("ask-push"),
    ),
    case(
        "edit.json",
        Allow,
        "fs.write",
        &[("fs.path", "{proj}/src/lib.rs"), ("tool.name", "replace")],
        "allow",
        Some("allow-src-write"),
    ),
    case(
        "glob.json",
        Allow,
        "fs.list",
        &[("fs.path", "{proj}")],
        "allow",
        Some("allow-list"),
    ),
    case(
        "grep.json",
        Deny,
        "fs.read",
        &[("fs.path", "{proj}"), ("fs.op", "search")],
        "ask",
        Some("deny-secrets"),
    ),
    case(
        "list.json",
        Allow,
        "fs.list",
        &[("fs.path", "{proj}/secrets")],
        "allow",
        Some("allow-list"),
    ),
    case(
        "mcp.json",
        Deny,
        "mcp.call",
        &[
            ("mcp.server", "github"),
            ("mcp.tool", "create_issue"),
            ("mcp.arguments.title", "Crash on start"),
        ],
        "ask",
        Some("ask-github"),
    ),
    case(
        "other.json",
        Deny,
        "tool.call",
        &[("tool.name", "save_memory")],
        "deny",
        Some("deny-tools"),
    ),
    case(
        "read.json",
        Deny,
        "fs.read",
        &[("fs.path", "{proj}/secrets/prod.env")],
        "deny",
        Some("deny-secrets"),
    ),
    // `src/**/*.rs` is allowed, `Cargo.toml` is not: the most restrictive part decides.
    case(
        "read_many.json",
        Deny,
        "fs.read",
        &[("fs.path", "{proj}/Cargo.toml")],
        "deny",
        None,
    ),
    case(
        "webfetch.json",
        Allow,
        "http.request",
        &[
            ("http.host", "example.com"),
            ("http.url", "https://example.com/docs/api"),
        ],
        "allow",
        Some("allow-docs"),
    ),
    case(
        "websearch.json",
        Deny,
        "http.request",
        &[("tool.name", "google_web_search")],
        "deny",
        Some("deny-search"),
    ),
    case(
        "write.json",
        Deny,
        "fs.write",
        &[("fs.path", "{proj}/.env")],
        "deny",
        Some("deny-env-write"),
    ),
];

const CURSOR_CASES: &[Case] = &[
    case("afterFileEdit.json", Deny, "", &[], "", None),
    case(
        "bash.json",
        Allow,
        "shell.exec",
        &[
            ("shell.command", "npm install"),
            ("shell.working_dir", "{proj}"),
        ],
        "allow",
        Some("allow-npm"),
    ),
    case(
        "beforeMCPExecution.json",
        Ask,
        "mcp.call",
        &[
            ("mcp.tool", "create_issue"),
            ("mcp.server", "npx -y @modelcontextprotocol/server-github"),
            ("mcp.arguments.owner", "acme"),
        ],
        "ask",
        Some("ask-github"),
    ),
    case(
        "beforeReadFile.json",
        Deny,
        "fs.read",
        &[("fs.path", "{proj}/secrets/prod.env")],
        "deny",
        Some("deny-secrets"),
    ),
    case(
        "beforeShellExecution.json",
        Ask,
        "shell.exec",
        &[("shell.command", "git push --force origin main")],
        "ask",
        Some("ask-push"),
    ),
    case("beforeSubmitPrompt.json", Deny, "", &[], "", None),
];

const CLINE_CASES: &[Case] = &[
    case(
        "bash.json",
        Deny,
        "shell.exec",
        &[("shell.command", "git push --force origin main")],
        "ask",
        Some("ask-push"),
    ),
    case(
        "edit.json",
        Allow,
        "fs.write",
        &[
            ("fs.path", "{proj}/src/lib.rs"),
            ("tool.name", "replace_in_file"),
        ],
        "allow",
        Some("allow-src-write"),
    ),
    case(
        "glob.json",
        Allow,
        "fs.list",
        &[("fs.path", "{proj}/secrets")],
        "allow",
        Some("allow-list"),
    ),
    case(
        "grep.json",
        Deny,
        "fs.read",
        &[("fs.path", "{proj}"), ("fs.op", "search")],
        "ask",
        Some("deny-secrets"),
    ),
    case(
        "mcp.json",
        Deny,
        "mcp.call",
        &[
            ("mcp.server", "github"),
            ("mcp.tool", "create_issue"),
            ("mcp.arguments.owner", "acme"),
        ],
        "ask",
        Some("ask-github"),
    ),
    case(
        "mcp_resource.json",
        Allow,
        "mcp.call",
        &[
            ("mcp.server", "github"),
            ("mcp.tool", "repo://acme/project/issues"),
        ],
        "allow",
        Some("allow-resources"),
    ),
    case(
        "other.json",
        Deny,
        "http.request",
        &[("http.host", "localhost"), ("tool.name", "browser_action")],
        "deny",
        Some("deny-localhost"),
    ),
    case(
        "read.json",
        Deny,
        "fs.read",
        &[("fs.path", "{proj}/secrets/prod.env")],
        "deny",
        Some("deny-secrets"),
    ),
    case(
        "webfetch.json",
        Allow,
        "http.request",
        &[("http.host", "example.com")],
        "allow",
        Some("allow-docs"),
    ),
    case(
        "write.json",
        Deny,
        "fs.write",
        &[("fs.path", "{proj}/.env")],
        "deny",
        Some("deny-env-write"),
    ),
];

const OPENCODE_CASES: &[Case] = &[
    case(
        "bash.json",
        Deny,
        "shell.exec",
        &[("shell.command", "git push --force origin main")],
        "ask",
        Some("ask-push"),
    ),
    case(
        "edit.json",
        Allow,
        "fs.write",
        &[("fs.path", "{proj}/src/lib.rs"), ("tool.name", "edit")],
        "allow",
        Some("allow-src-write"),
    ),
    case(
        "glob.json",
        Allow,
        "fs.list",
        &[("fs.path", "{proj}")],
        "allow",
        Some("allow-list"),
    ),
    case(
        "grep.json",
        Deny,
        "fs.read",
        &[("fs.path", "{proj}"), ("fs.op", "search")],
        "ask",
        Some("deny-secrets"),
    ),
    case(
        "list.json",
        Allow,
        "fs.list",
        &[("fs.path", "{proj}/secrets")],
        "allow",
        Some("allow-list"),
    ),
    // opencode names MCP tools `<server>_<tool>`, indistinguishable from others.
    case(
        "mcp.json",
        Deny,
        "tool.call",
        &[
            ("tool.name", "github_create_issue"),
            ("tool.input.owner", "acme"),
        ],
        "deny",
        Some("deny-tools"),
    ),
    case(
        "other.json",
        Deny,
        "tool.call",
        &[("tool.name", "task")],
        "deny",
        Some("deny-tools"),
    ),
    case(
        "read.json",
        Deny,
        "fs.read",
        &[("fs.path", "{proj}/secrets/prod.env")],
        "deny",
        Some("deny-secrets"),
    ),
    case(
        "webfetch.json",
        Allow,
        "http.request",
        &[("http.host", "example.com")],
        "allow",
        Some("allow-docs"),
    ),
    case(
        "websearch.json",
        Deny,
        "http.request",
        &[("tool.name", "websearch")],
        "deny",
        Some("deny-search"),
    ),
    case(
        "write.json",
        Deny,
        "fs.write",
        &[("fs.path", "{proj}/.env")],
        "deny",
        Some("deny-env-write"),
    ),
];

fn cases(agent: Agent) -> &'static [Case] {
    match agent {
        Agent::ClaudeCode => CLAUDE_CASES,
        Agent::Codex => CODEX_CASES,
        Agent::Gemini => GEMINI_CASES,
        Agent::Cursor => CURSOR_CASES,
        Agent::Cline => CLINE_CASES,
        Agent::Opencode => OPENCODE_CASES,
    }
}

fn rule_label(rule: Option<&str>) -> String {
    match rule {
        Some(r) => format!("(rule {r})"),
        None => "(default)".to_owned(),
    }
}

/// Every documented payload of `agent` is answered in its format with the
/// decision [`KINDS_POLICY`] gives, and lowered into the expected Action.
fn documented_payloads(agent: Agent) {
    let sb = Sandbox::new(KINDS_POLICY);
    assert_eq!(
        sb.audit_path,
        sb.proj.join(".aileron/audit.jsonl"),
        "the audit log is beside the policy"
    );
    let mut files: Vec<String> = std::fs::read_dir(fixtures_dir().join(agent.name()))
        .expect("fixture dir")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".json"))
        .collect();
    files.sort();
    let mut covered: Vec<String> = cases(agent).iter().map(|c| c.file.to_owned()).collect();
    covered.sort();
    assert_eq!(files, covered, "every fixture has an expectation");

    for c in cases(agent) {
        let ev = sb.fixture(agent, c.file);
        let what = format!("{} {}", agent.name(), c.file);
        let d = sb.decide(agent, &ev);
        assert_eq!(d.seen, c.seen, "{what}: {:?}", d.reply);
        let label = rule_label(c.rule);
        if c.kind.is_empty() {
            // Not an event Aileron decides: a deny, in the pre-tool format.
            assert!(d.audit.is_none(), "{what}: recorded {:?}", d.audit);
            assert!(
                d.message.starts_with("aileron: denied: `")
                    && d.message.contains("is not an event Aileron decides"),
                "{what}: {}",
                d.message
            );
            continue;
        }
        let audit = d.audit.unwrap_or_else(|| panic!("{what}: no audit line"));
        match (c.seen, c.verdict) {
            (Allow, _) => {
                if !d.message.is_empty() {
                    assert_eq!(d.message, format!("aileron: allowed {label}"), "{what}");
                }
            }
            (Ask, _) if d.message.is_empty() => {
                // Claude Code's PermissionRequest: no opinion, its own dialog asks.
                assert_eq!(audit["outcome"], "asked-agent", "{what}");
            }
            (Ask, _) => {
                assert!(
                    d.message.starts_with("aileron: approval needed: ")
                        && d.message.ends_with(&label),
                    "{what}: {}",
                    d.message
                );
                assert_eq!(audit["outcome"], "asked-agent", "{what}");
            }
            (Deny, "ask") => {
                assert_eq!(
                    d.message,
                    format!("aileron: denied: {NO_TERMINAL} {label}"),
                    "{what}"
                );
                assert_eq!(audit["outcome"], "no-terminal", "{what}");
            }
            (Deny, _) => assert!(
                d.message.starts_with("aileron: denied: ") && d.message.ends_with(&label),
                "{what}: {}",
                d.message
            ),
        }
        assert_eq!(audit["action"]["type"], c.kind, "{what}: {audit}");
        assert_eq!(audit["decision"], c.verdict, "{what}: {audit}");
        assert_eq!(audit["rule"].as_str(), c.rule, "{what}: {audit}");
        for (path, value) in c.facets {
            assert_eq!(
                facet(&audit, path),
                &json!(sb.paths(value)),
                "{what}: facets.{path} in {audit}"
            );
        }
        assert!(
            !audit["action"]["summary"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{what}: no summary in {audit}"
        );
        assert_eq!(audit["session"], json!(session_of(agent, &ev)), "{what}");
        assert_eq!(audit["agent"], agent.name(), "{what}");
        assert_eq!(audit["adapter"], format!("hook:{}", agent.name()), "{what}");
        assert_eq!(audit["cwd"], json!(sb.proj_str()), "{what}");
    }
}

#[test]
fn claude_code_documented_payloads() {
    documented_payloads(Agent::ClaudeCode);
}

#[test]
fn codex_documented_payloads() {
    documented_payloads(Agent::Codex);
}

#[test]
fn gemini_documented_payloads() {
    documented_payloads(Agent::Gemini);
}

#[test]
fn cursor_documented_payloads() {
    documented_payloads(Agent::Cursor);
}

#[test]
fn cline_documented_payloads() {
    documented_payloads(Agent::Cline);
}

#[test]
fn opencode_documented_payloads() {
    documented_payloads(Agent::Opencode);
}

#[test]
fn fs_paths_are_absolute_and_normalized_whatever_the_agent_sent() {
    let sb = Sandbox::new(ALLOW_ALL);
    let p = sb.proj_str();
    for (agent, sent, expected) in [
        (
            Agent::ClaudeCode,
            format!("{p}/src/./a/../lib.rs"),
            format!("{p}/src/lib.rs"),
        ),
        (
            Agent::Gemini,
            "src//lib.rs".to_owned(),
            format!("{p}/src/lib.rs"),
        ),
        (
            Agent::Cline,
            "./src/../src/lib.rs".to_owned(),
            format!("{p}/src/lib.rs"),
        ),
        (
            Agent::ClaudeCode,
            "~/notes.md".to_owned(),
            format!("{}/notes.md", sb.home_str()),
        ),
        (
            Agent::Opencode,
            "src/lib.rs".to_owned(),
            format!("{p}/src/lib.rs"),
        ),
        (
            Agent::Cursor,
            format!("/{p}//src/lib.rs"),
            format!("{p}/src/lib.rs"),
        ),
        (
            Agent::Codex,
            "src/../README.md".to_owned(),
            format!("{p}/README.md"),
        ),
    ] {
        let (seen, _, audit) = sb.decide_audited(agent, &write_event(&sb, agent, &sent));
        assert_eq!(seen, Seen::Allow, "{} {sent}", agent.name());
        assert_eq!(audit["action"]["type"], "fs.write");
        assert_eq!(
            facet(&audit, "fs.path"),
            &json!(expected),
            "{} {sent}",
            agent.name()
        );
    }
}

// ---------------------------------------------------------------------------
// Allow, deny, ask

#[test]
fn allow_deny_and_ask_in_each_agent_s_format() {
    let sb = Sandbox::new(DECISIONS_POLICY);
    for agent in Agent::ALL {
        let name = agent.name();
        let (seen, _, audit) = sb.decide_audited(agent, &shell_event(&sb, agent, "echo ok"));
        assert_eq!(seen, Seen::Allow, "{name}");
        assert_eq!(audit["decision"], "allow");

        let (seen, message, audit) = sb.decide_audited(agent, &shell_event(&sb, agent, "echo no"));
        assert_eq!(seen, Seen::Deny, "{name}");
        assert_eq!(
            message, "aileron: denied: matched `command: echo no` (rule no-echo)",
            "{name}"
        );
        assert_eq!(audit["rule"], "no-echo");

        let (seen, message, audit) =
            sb.decide_audited(agent, &shell_event(&sb, agent, "echo maybe"));
        assert_eq!(audit["decision"], "ask", "{name}");
        match agent {
            // These can ask their human themselves.
            Agent::ClaudeCode | Agent::Cursor => {
                assert_eq!(seen, Seen::Ask, "{name}");
                assert_eq!(
                    message,
                    "aileron: approval needed: matched `command: echo maybe` (rule ask-echo)",
                    "{name}"
                );
                assert_eq!(audit["outcome"], "asked-agent", "{name}");
            }
            _ => {
                assert_eq!(seen, Seen::Deny, "{name}");
                assert_eq!(
                    message,
                    format!("aileron: denied: {NO_TERMINAL} (rule ask-echo)"),
                    "{name}"
                );
                assert_eq!(audit["outcome"], "no-terminal", "{name}");
            }
        }
    }
}

#[test]
fn claude_code_permission_request_allows_denies_or_leaves_the_dialog() {
    let sb = Sandbox::new(DECISIONS_POLICY);
    let request = |command: &str| {
        let mut ev = sb.fixture(Agent::ClaudeCode, "permission_request.json");
        ev["tool_input"]["command"] = json!(command);
        ev
    };
    let (seen, _, _) = sb.decide_audited(Agent::ClaudeCode, &request("echo ok"));
    assert_eq!(seen, Seen::Allow);
    let (seen, message, _) = sb.decide_audited(Agent::ClaudeCode, &request("echo no"));
    assert_eq!(seen, Seen::Deny);
    assert_eq!(
        message,
        "aileron: denied: matched `command: echo no` (rule no-echo)"
    );
    // No opinion: an empty answer, and Claude Code shows its own dialog.
    let d = sb.decide(Agent::ClaudeCode, &request("echo maybe"));
    assert_eq!(d.seen, Seen::Ask);
    assert_eq!(
        d.reply,
        Reply {
            stdout: String::new(),
            stderr: String::new(),
            exit: 0
        }
    );
}

/// Codex has a PermissionRequest event too (accepted by `event::parse`); its
/// answer is not PreToolUse's: openai/codex `codex-rs/hooks/src/schema.rs`
/// `PermissionRequestHookSpecificOutputWire {hookEventName, decision:
/// {behavior, message}}`, `deny_unknown_fields`, so a PreToolUse-shaped
/// answer does not parse and Codex goes on with its normal approval.
#[test]
fn codex_permission_request_is_answered_in_its_own_format() {
    let sb = Sandbox::new(DECISIONS_POLICY);
    let mut ev = shell_event(&sb, Agent::Codex, "echo no");
    ev["hook_event_name"] = json!("PermissionRequest");
    let r = sb.run(Agent::Codex, &ev);
    let reason = "aileron: denied: matched `command: echo no` (rule no-echo)";
    let stdout: Value = serde_json::from_str(&r.stdout).expect("a JSON answer");
    assert_eq!(
        stdout,
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": reason}}}),
        "{r:?}"
    );
}

#[test]
fn cursor_asks_only_at_its_shell_and_mcp_gates() {
    let sb = Sandbox::new(DECISIONS_POLICY);
    let c = Agent::Cursor;
    // beforeMCPExecution: allow, deny, ask.
    for (tool, expected, rule) in [
        ("list_issues", Seen::Allow, "ok-mcp"),
        ("delete_repo", Seen::Deny, "no-mcp"),
        ("create_issue", Seen::Ask, "ask-mcp"),
    ] {
        let (seen, _, audit) = sb.decide_audited(c, &mcp_event(&sb, c, tool));
        assert_eq!(seen, expected, "{tool}");
        assert_eq!(audit["rule"], rule, "{tool}");
    }
    // preToolUse: `ask` is not enforced there, so it is a deny.
    let mut ev = sb.fixture(c, "bash.json");
    ev["tool_input"]["command"] = json!("echo maybe");
    let (seen, message, _) = sb.decide_audited(c, &ev);
    assert_eq!(seen, Seen::Deny);
    assert_eq!(
        message,
        format!("aileron: denied: {NO_TERMINAL} (rule ask-echo)")
    );
    ev["tool_input"]["command"] = json!("echo ok");
    assert_eq!(sb.decide_audited(c, &ev).0, Seen::Allow);
    // beforeReadFile: allow or deny only.
    let p = sb.proj_str();
    let (seen, _, _) = sb.decide_audited(c, &read_event(&sb, c, &format!("{p}/src/lib.rs")));
    assert_eq!(seen, Seen::Allow);
    let (seen, message, _) =
        sb.decide_audited(c, &read_event(&sb, c, &format!("{p}/secrets/prod.env")));
    assert_eq!(seen, Seen::Deny);
    assert_eq!(
        message,
        format!("aileron: denied: {NO_TERMINAL} (rule ask-read)")
    );
}

#[test]
fn an_ask_is_a_deny_for_agents_that_cannot_ask_whatever_the_tool() {
    let sb = Sandbox::new(DECISIONS_POLICY);
    for agent in [Agent::Codex, Agent::Gemini, Agent::Cline] {
        let (seen, message, audit) =
            sb.decide_audited(agent, &mcp_event(&sb, agent, "create_issue"));
        assert_eq!(seen, Seen::Deny, "{}", agent.name());
        assert_eq!(
            message,
            format!("aileron: denied: {NO_TERMINAL} (rule ask-mcp)")
        );
        assert_eq!(audit["action"]["type"], "mcp.call");
    }
    let p = sb.proj_str();
    for agent in [Agent::Gemini, Agent::Cline, Agent::Opencode] {
        let (seen, message, _) =
            sb.decide_audited(agent, &read_event(&sb, agent, &format!("{p}/secrets/a")));
        assert_eq!(seen, Seen::Deny, "{}", agent.name());
        assert_eq!(
            message,
            format!("aileron: denied: {NO_TERMINAL} (rule ask-read)")
        );
    }
}

// ---------------------------------------------------------------------------
// Failing closed

/// `agent`'s bash payload with `f` applied (Cursor: beforeShellExecution).
fn broken(sb: &Sandbox, agent: Agent, f: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut ev = shell_event(sb, agent, "echo ok");
    f(&mut ev);
    ev.to_string().into_bytes()
}

/// Bad inputs for `agent`, each with what the message must say.
fn bad_events(sb: &Sandbox, agent: Agent) -> Vec<(&'static str, Vec<u8>, String)> {
    let mut v: Vec<(&'static str, Vec<u8>, String)> = vec![
        ("empty stdin", Vec::new(), "the hook event is empty".into()),
        (
            "blank stdin",
            b" \n\t\r\n".to_vec(),
            "the hook event is empty".into(),
        ),
        (
            "malformed JSON",
            br#"{"session_id": "s", "tool_name": "Bash", "#.to_vec(),
            "the hook event is not valid JSON".into(),
        ),
        (
            "trailing garbage",
            [
                shell_event(sb, agent, "echo ok").to_string().as_bytes(),
                b" x",
            ]
            .concat(),
            "the hook event is not valid JSON".into(),
        ),
        (
            "not UTF-8",
            b"{\"tool_name\": \"\xff\xfe\"}".to_vec(),
            "the hook event is not valid JSON".into(),
        ),
        (
            "nested too deep",
            [vec![b'['; 100_000], vec![b']'; 100_000]].concat(),
            "the hook event is not valid JSON".into(),
        ),
        (
            "an array",
            b"[1, 2]".to_vec(),
            "the hook event is not a JSON object".into(),
        ),
        (
            "a string",
            b"\"Bash\"".to_vec(),
            "the hook event is not a JSON object".into(),
        ),
        (
            "null",
            b"null".to_vec(),
            "the hook event is not a JSON object".into(),
        ),
        (
            "a number",
            b"42".to_vec(),
            "the hook event is not a JSON object".into(),
        ),
    ];
    let (tool_key, cwd_key, cwd) = match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::Gemini => ("tool_name", "cwd", json!("project")),
        Agent::Cursor => ("command", "cwd", json!("project")),
        Agent::Cline => ("toolName", "workspaceRoots", json!(["project"])),
        Agent::Opencode => ("tool", "directory", json!("project")),
    };
    let drop_tool = |e: &mut Value| {
        let obj = if agent == Agent::Cline {
            &mut e["preToolUse"]
        } else {
            e
        };
        obj.as_object_mut().expect("object").remove(tool_key);
    };
    v.push((
        "no tool name",
        broken(sb, agent, drop_tool),
        format!("the hook event has no `{tool_key}`"),
    ));
    v.push((
        "an empty tool name",
        broken(sb, agent, |e| {
            let obj = if agent == Agent::Cline {
                &mut e["preToolUse"]
            } else {
                e
            };
            obj[tool_key] = json!("");
        }),
        format!("`{tool_key}` is empty in the hook event"),
    ));
    v.push((
        "a relative cwd",
        broken(sb, agent, |e| e[cwd_key] = cwd),
        "not an absolute path: project".into(),
    ));
    // The tool's arguments are not an object.
    if agent != Agent::Cursor {
        let key = match agent {
            Agent::Cline => "parameters",
            Agent::Opencode => "args",
            _ => "tool_input",
        };
        v.push((
            "arguments not an object",
            broken(sb, agent, |e| {
                let obj = if agent == Agent::Cline {
                    &mut e["preToolUse"]
                } else {
                    e
                };
                obj[key] = json!("rm -rf /");
            }),
            format!("`{key}` is not an object in the hook event"),
        ));
    }
    // A shell call with nothing to run.
    if agent != Agent::Cursor {
        v.push((
            "a shell call without a command",
            broken(sb, agent, |e| {
                tool_input(agent, e)
                    .as_object_mut()
                    .expect("object")
                    .remove("command");
            }),
            "call has no `command`".into(),
        ));
    }
    // An event it does not decide.
    let other_event = match agent {
        Agent::ClaudeCode | Agent::Codex => Some(("hook_event_name", "PostToolUse")),
        Agent::Gemini => Some(("hook_event_name", "AfterTool")),
        Agent::Cursor => Some(("hook_event_name", "stop")),
        Agent::Cline => Some(("hookName", "PostToolUse")),
        Agent::Opencode => None,
    };
    if let Some((key, name)) = other_event {
        v.push((
            "an event it does not decide",
            broken(sb, agent, |e| e[key] = json!(name)),
            format!("`{name}` is not an event Aileron decides"),
        ));
    }
    v
}

#[test]
fn bad_events_are_denied_in_each_agent_s_format() {
    let sb = Sandbox::new(ALLOW_ALL);
    for agent in Agent::ALL {
        for (what, input, expected) in bad_events(&sb, agent) {
            let r = sb.run_bytes(agent, &input);
            let event = serde_json::from_slice::<Value>(&input)
                .ok()
                .filter(Value::is_object)
                .map_or_else(
                    || default_event(agent).to_owned(),
                    |e| hook_event(agent, &e),
                );
            // An event name Aileron does not decide is answered in the pre-tool format.
            let event = match event.as_str() {
                "PostToolUse" | "AfterTool" | "stop" => default_event(agent).to_owned(),
                _ => event,
            };
            let (seen, message) = answer_of(agent, &event, &r);
            assert_eq!(seen, Seen::Deny, "{} {what}: {r:?}", agent.name());
            assert!(
                message.starts_with("aileron: denied: ") && message.contains(&expected),
                "{} {what}: {message:?} does not say {expected:?}",
                agent.name()
            );
        }
    }
    assert!(
        sb.audit().is_empty(),
        "nothing was decided: {:?}",
        sb.audit()
    );
}

#[test]
fn an_event_over_64_mib_is_refused_unread() {
    let sb = Sandbox::new(ALLOW_ALL);
    let limit = aileron_hooks::event::MAX_EVENT_BYTES;
    assert_eq!(limit, 64 << 20);
    let mut huge = br#"{"pad": ""#.to_vec();
    huge.resize(limit - 1, b'a');
    huge.extend_from_slice(b"\"}");
    assert_eq!(huge.len(), limit + 1);
    for agent in Agent::ALL {
        let r = sb.run_bytes(agent, &huge);
        let (seen, message) = answer_of(agent, default_event(agent), &r);
        assert_eq!(seen, Seen::Deny, "{}", agent.name());
        assert_eq!(
            message,
            "aileron: denied: the hook event is larger than 64 MiB",
            "{}",
            agent.name()
        );
    }
}

#[test]
fn a_5_mb_event_is_decided_normally() {
    let sb = Sandbox::new(KINDS_POLICY);
    let p = sb.proj_str();
    let path = format!("{p}/src/big.rs");
    let pad = "x".repeat(5 << 20);
    for agent in Agent::ALL {
        let ev = match agent {
            // Cursor sends the whole file it is about to read.
            Agent::Cursor => {
                let mut ev = read_event(&sb, agent, &path);
                ev["content"] = json!(pad);
                ev
            }
            // Others: 5 MB in a field Aileron does not read (what a large
            // write costs is in `a_session_s_saved_state_...`).
            _ => {
                let mut ev = write_event(&sb, agent, &path);
                ev["padding"] = json!(pad);
                ev
            }
        };
        let input = ev.to_string().into_bytes();
        assert!(input.len() > 5 << 20);
        let d = sb.decide_bytes(agent, &hook_event(agent, &ev), &input);
        let (seen, audit) = (d.seen, d.audit.expect("an audit line"));
        assert_eq!(seen, Seen::Allow, "{}", agent.name());
        assert_eq!(facet(&audit, "fs.path"), &json!(path), "{}", agent.name());
    }
}

/// A hook process loads and saves its session's state on every call, so
/// that state must not grow with what the calls carry: after a few large
/// writes, every later call of the session (even `ls`) would pay for them,
/// and past the agent's timeout the agent runs the call unchecked.
#[test]
fn a_session_s_saved_state_does_not_grow_with_the_size_of_its_calls() {
    let sb = Sandbox::new(ALLOW_ALL);
    let size = 512 << 10;
    let path = format!("{}/src/big.rs", sb.proj_str());
    for i in 0..4 {
        let mut ev = write_event(&sb, Agent::ClaudeCode, &path);
        ev["tool_input"]["content"] = json!(i.to_string().repeat(size));
        assert_eq!(sb.decide_audited(Agent::ClaudeCode, &ev).0, Seen::Allow);
    }
    let state: u64 = walk(&sb.data.join("sessions"))
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    assert!(
        state < size as u64,
        "the session state is {state} bytes after four calls of {size} bytes"
    );
}

#[test]
fn a_policy_that_does_not_load_denies_naming_file_and_line() {
    for (policy, line, says) in [
        (
            "version: 1\ndefault: allow\nallow:\n  - {id: x, command: [unclosed\n",
            0,
            "",
        ),
        (
            "version: 1\ndefault: allow\ndefualt: allow\n",
            3,
            "unknown key `defualt`",
        ),
        (
            "version: 1\ndefault: allow\ndeny:\n  - {id: x, when: {type: fs.write, fs.path: {globb: x}}}\n",
            4,
            "unknown operator `globb`",
        ),
    ] {
        let sb = Sandbox::new(policy);
        let file = sb.proj.join("aileron.yaml");
        for agent in Agent::ALL {
            let ev = shell_event(&sb, agent, "echo ok");
            let r = sb.run(agent, &ev);
            let (seen, message) = answer_of(agent, &hook_event(agent, &ev), &r);
            assert_eq!(seen, Seen::Deny, "{} {policy:?}", agent.name());
            let prefix = format!(
                "aileron: denied: the policy does not load: {}:",
                file.display()
            );
            assert!(
                message.starts_with(&prefix),
                "{} {policy:?}: {message}",
                agent.name()
            );
            if line > 0 {
                assert!(
                    message.starts_with(&format!("{prefix}{line}:")) && message.contains(says),
                    "{} {policy:?}: {message}",
                    agent.name()
                );
            } else {
                // A YAML syntax error: some line of the file, and "error".
                let rest = &message[prefix.len()..];
                assert!(
                    rest.split(':')
                        .next()
                        .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n > 0)),
                    "{} no line number: {message}",
                    agent.name()
                );
                assert!(rest.contains("error"), "{message}");
            }
        }
        // Claude Code's permission request: its own deny.
        let ev = sb.fixture(Agent::ClaudeCode, "permission_request.json");
        let r = sb.run(Agent::ClaudeCode, &ev);
        let (seen, message) = answer_of(Agent::ClaudeCode, "PermissionRequest", &r);
        assert_eq!(seen, Seen::Deny, "{policy:?}");
        assert!(message.contains("the policy does not load"), "{message}");
        // Recorded where the data lives, since the policy's own place is unknown.
        let audit = read_jsonl(&sb.data.join("audit.jsonl"));
        assert_eq!(audit.len(), Agent::ALL.len() + 1, "{policy:?}");
        assert!(audit.iter().all(|a| a["decision"] == "deny"), "{audit:?}");
    }
}

#[test]
fn internal_errors_are_denied_with_what_went_wrong() {
    // The session's state cannot be kept: the data directory is a file.
    let sb = Sandbox::new(ALLOW_ALL);
    let mut env = sb.env.clone();
    let file = sb.root.join("not-a-dir");
    std::fs::write(&file, "").unwrap();
    env.load.data_dir = file.clone();
    for agent in Agent::ALL {
        let ev = shell_event(&sb, agent, "echo ok");
        let r = aileron_hooks::run(agent, ev.to_string().as_bytes(), &env);
        let (seen, message) = answer_of(agent, &hook_event(agent, &ev), &r);
        assert_eq!(seen, Seen::Deny, "{}", agent.name());
        assert!(
            message.starts_with(&format!(
                "aileron: denied: cannot keep the session's state under {}/sessions",
                file.display()
            )),
            "{}: {message}",
            agent.name()
        );
    }

    // The audit log cannot be written: an action that is not recorded does not run.
    let sb = Sandbox::new(ALLOW_ALL);
    std::fs::write(sb.proj.join(".aileron"), "not a directory").unwrap();
    for agent in Agent::ALL {
        let ev = shell_event(&sb, agent, "echo ok");
        let r = sb.run(agent, &ev);
        let (seen, message) = answer_of(agent, &hook_event(agent, &ev), &r);
        assert_eq!(seen, Seen::Deny, "{}", agent.name());
        assert!(
            message.starts_with(&format!(
                "aileron: denied: cannot write the audit log {}/.aileron/audit.jsonl",
                sb.proj_str()
            )),
            "{}: {message}",
            agent.name()
        );
    }

    // Under `aileron launch`, a session that cannot be reached.
    let sb = Sandbox::new(ALLOW_ALL);
    let mut env = sb.env.clone();
    let socket = sb.root.join("gone.sock");
    env.socket = Some(socket.clone());
    for agent in Agent::ALL {
        let ev = shell_event(&sb, agent, "echo ok");
        let r = aileron_hooks::run(agent, ev.to_string().as_bytes(), &env);
        let (seen, message) = answer_of(agent, &hook_event(agent, &ev), &r);
        assert_eq!(seen, Seen::Deny, "{}", agent.name());
        assert!(
            message.starts_with(&format!(
                "aileron: denied: the launch session at {} cannot be reached",
                socket.display()
            )),
            "{}: {message}",
            agent.name()
        );
    }
}

#[test]
fn a_call_that_names_nothing_to_decide_is_denied() {
    let sb = Sandbox::new(ALLOW_ALL);
    // A write without a file.
    for agent in [
        Agent::ClaudeCode,
        Agent::Gemini,
        Agent::Cline,
        Agent::Opencode,
    ] {
        let mut ev = sb.fixture(agent, "write.json");
        let input = tool_input(agent, &mut ev);
        for key in ["file_path", "path", "filePath"] {
            input.as_object_mut().unwrap().remove(key);
        }
        let (seen, message) = answer_of(agent, &hook_event(agent, &ev), &sb.run(agent, &ev));
        assert_eq!(seen, Seen::Deny, "{}", agent.name());
        assert!(message.ends_with("call names no file"), "{message}");
    }
    // A Codex patch that names no file Aileron can find.
    let ev = patch_event(&sb, "garbage\n");
    let (seen, message) = answer_of(Agent::Codex, "PreToolUse", &sb.run(Agent::Codex, &ev));
    assert_eq!(seen, Seen::Deny);
    assert_eq!(
        message,
        "aileron: denied: the apply_patch call names no file Aileron can find in its patch"
    );
    // Cursor's MCP arguments are a JSON string; one that does not parse.
    let mut ev = mcp_event(&sb, Agent::Cursor, "create_issue");
    ev["tool_input"] = json!("{\"owner\": ");
    let (seen, message) = answer_of(
        Agent::Cursor,
        "beforeShellExecution",
        &sb.run(Agent::Cursor, &ev),
    );
    assert_eq!(seen, Seen::Deny);
    assert!(
        message.contains("`tool_input` is not valid JSON"),
        "{message}"
    );
    assert!(sb.audit().is_empty());
}

// ---------------------------------------------------------------------------
// The built-in protections, through every agent's tools

#[test]
fn writes_to_policy_hook_configs_and_aileron_data_are_denied_even_when_all_writes_are_allowed() {
    let sb = Sandbox::new(ALLOW_ALL);
    let (p, h) = (sb.proj_str(), sb.home_str());
    let targets = [
        format!("{p}/aileron.yaml"),
        format!("{p}/sub/aileron.yaml"),
        format!("{p}/.claude/settings.json"),
        format!("{p}/.claude/settings.local.json"),
        format!("{p}/.codex/hooks.json"),
        format!("{p}/.gemini/settings.json"),
        format!("{p}/.cursor/hooks.json"),
        format!("{p}/.clinerules/hooks/PreToolUse"),
        format!("{p}/.opencode/plugins/aileron.ts"),
        format!("{p}/.aileron/audit.jsonl"),
        format!("{h}/.aileron/settings.yaml"),
        format!("{h}/.claude/settings.json"),
        format!("{h}/.codex/hooks.json"),
        // The session state, where "always" answers are kept.
        format!("{}/sessions/claude-code/s.json", sb.data_str()),
    ];
    for agent in Agent::ALL {
        // The control: an ordinary file is allowed.
        let (seen, _, _) =
            sb.decide_audited(agent, &write_event(&sb, agent, &format!("{p}/notes.md")));
        assert_eq!(seen, Seen::Allow, "{}", agent.name());
        for target in &targets {
            let (seen, message, audit) = sb.decide_audited(agent, &write_event(&sb, agent, target));
            assert_eq!(seen, Seen::Deny, "{} {target}", agent.name());
            assert!(
                message.ends_with("(rule builtin:protect-policy)"),
                "{} {target}: {message}",
                agent.name()
            );
            assert_eq!(audit["action"]["type"], "fs.write");
            assert_eq!(facet(&audit, "fs.path"), &json!(target));
        }
    }
}

#[test]
fn edits_and_deletes_of_protected_files_are_denied_too() {
    let sb = Sandbox::new(ALLOW_ALL);
    let p = sb.proj_str();
    let target = format!("{p}/aileron.yaml");
    let mut events = Vec::new();
    for (agent, file, key) in [
        (Agent::ClaudeCode, "edit.json", "file_path"),
        (Agent::ClaudeCode, "multiedit.json", "file_path"),
        (Agent::Gemini, "edit.json", "file_path"),
        (Agent::Cline, "edit.json", "path"),
        (Agent::Opencode, "edit.json", "filePath"),
    ] {
        let mut ev = sb.fixture(agent, file);
        tool_input(agent, &mut ev)[key] = json!(target);
        events.push((agent, ev));
    }
    let mut ev = sb.fixture(Agent::ClaudeCode, "notebookedit.json");
    ev["tool_input"]["notebook_path"] = json!(format!("{p}/.claude/settings.json"));
    events.push((Agent::ClaudeCode, ev));
    let mut ev = sb.fixture(Agent::Cursor, "bash.json");
    ev["tool_name"] = json!("Delete");
    ev["tool_input"] = json!({"file_path": target});
    events.push((Agent::Cursor, ev));
    events.push((
        Agent::Codex,
        patch_event(&sb, "*** Delete File: aileron.yaml\n"),
    ));
    for (agent, ev) in events {
        let (seen, message, _) = sb.decide_audited(agent, &ev);
        assert_eq!(seen, Seen::Deny, "{} {ev}", agent.name());
        assert!(
            message.ends_with("(rule builtin:protect-policy)"),
            "{message}"
        );
    }
}

#[test]
fn path_tricks_in_file_tools_are_normalized_and_still_denied() {
    let sb = Sandbox::new(ALLOW_ALL);
    let (p, h) = (sb.proj_str(), sb.home_str());
    let policy = format!("{p}/aileron.yaml");
    let settings = format!("{h}/.aileron/settings.yaml");
    let tricks = [
        (format!("{p}/src/../aileron.yaml"), &policy),
        (format!("/{p}//aileron.yaml"), &policy),
        (format!("{p}/./src/./../aileron.yaml"), &policy),
        (format!("{p}/src/../../proj/aileron.yaml"), &policy),
        ("aileron.yaml".to_owned(), &policy),
        ("./src/../aileron.yaml".to_owned(), &policy),
        ("~/.aileron/settings.yaml".to_owned(), &settings),
        ("~/x/../.aileron//settings.yaml".to_owned(), &settings),
        (format!("{h}/.aileron/./settings.yaml"), &settings),
    ];
    for agent in Agent::ALL {
        for (sent, expected) in &tricks {
            // Codex and Cline resolve every path against the workspace: `~`
            // is a directory name to them.
            if sent.starts_with('~') && matches!(agent, Agent::Codex | Agent::Cline) {
                continue;
            }
            let (seen, message, audit) = sb.decide_audited(agent, &write_event(&sb, agent, sent));
            assert_eq!(seen, Seen::Deny, "{} {sent}", agent.name());
            assert!(
                message.ends_with("(rule builtin:protect-policy)"),
                "{} {sent}: {message}",
                agent.name()
            );
            assert_eq!(
                facet(&audit, "fs.path"),
                &json!(expected),
                "{} {sent}",
                agent.name()
            );
        }
    }
}

/// A link is a path trick the file system resolves: writing through
/// `proj/notes.md -> aileron.yaml` writes the policy. (`ln -s` is an
/// ordinary command, and a cloned repository may hold such links.)
#[test]
fn writes_through_a_symlink_to_a_protected_file_are_denied() {
    let sb = Sandbox::new(ALLOW_ALL);
    let p = sb.proj_str();
    std::fs::create_dir_all(sb.proj.join(".claude")).unwrap();
    std::os::unix::fs::symlink("aileron.yaml", sb.proj.join("notes.md")).unwrap();
    std::os::unix::fs::symlink(".claude", sb.proj.join("cfg")).unwrap();
    for agent in Agent::ALL {
        for (sent, really) in [
            (format!("{p}/notes.md"), format!("{p}/aileron.yaml")),
            (
                format!("{p}/cfg/settings.json"),
                format!("{p}/.claude/settings.json"),
            ),
        ] {
            let (seen, message, _) = sb.decide_audited(agent, &write_event(&sb, agent, &sent));
            assert_eq!(
                seen,
                Seen::Deny,
                "{}: a write to {sent} writes {really} ({message})",
                agent.name()
            );
        }
    }
}

#[test]
fn reading_the_data_dir_s_secrets_is_denied() {
    let sb = Sandbox::new(ALLOW_ALL);
    let d = sb.data_str();
    for agent in Agent::ALL {
        let (seen, _, _) = sb.decide_audited(
            agent,
            &read_event(&sb, agent, &format!("{}/src/lib.rs", sb.proj_str())),
        );
        assert_eq!(seen, Seen::Allow, "{}", agent.name());
        for secret in ["admin.token", "aileron.db", "tokens/agent.token"] {
            let path = format!("{d}/{secret}");
            let (seen, message, audit) = sb.decide_audited(agent, &read_event(&sb, agent, &path));
            assert_eq!(seen, Seen::Deny, "{} {path}", agent.name());
            assert!(
                message.ends_with("(rule builtin:protect-secrets)"),
                "{} {path}: {message}",
                agent.name()
            );
            assert_eq!(audit["rule"], "builtin:protect-secrets");
        }
    }
    // Searching the data directory itself.
    let mut ev = sb.fixture(Agent::ClaudeCode, "grep.json");
    ev["tool_input"]["path"] = json!(d);
    let (seen, _, _) = sb.decide_audited(Agent::ClaudeCode, &ev);
    assert_eq!(seen, Seen::Deny);
}

/// With the data directory where it is by default (`~/.aileron`), a content
/// search of the home directory reads the token as surely as `grep -r . ~`,
/// which the shell analysis denies. (Claude Code's Grep runs `rg --hidden`.)
#[test]
fn searching_a_directory_above_the_data_dir_is_denied_like_grep_r() {
    let sb = Sandbox::with_data_dir(ALLOW_ALL, Some(".aileron"));
    let h = sb.home_str();
    // The shell analysis: a recursive grep of ~ reads ~/.aileron/admin.token.
    let (seen, _, audit) = sb.decide_audited(
        Agent::ClaudeCode,
        &shell_event(&sb, Agent::ClaudeCode, &format!("grep -r token {h}")),
    );
    assert_eq!(seen, Seen::Deny);
    assert_eq!(audit["rule"], "builtin:protect-secrets");
    // The search tools of the agents do the same.
    let mut events = Vec::new();
    let mut ev = sb.fixture(Agent::ClaudeCode, "grep.json");
    ev["tool_input"]["path"] = json!(h);
    ev["tool_input"]["glob"] = json!("admin.token");
    events.push((Agent::ClaudeCode, ev));
    let mut ev = sb.fixture(Agent::Gemini, "grep.json");
    ev["tool_input"]["dir_path"] = json!(h);
    events.push((Agent::Gemini, ev));
    let mut ev = sb.fixture(Agent::Cline, "grep.json");
    ev["preToolUse"]["parameters"]["path"] = json!(h);
    events.push((Agent::Cline, ev));
    let mut ev = sb.fixture(Agent::Opencode, "grep.json");
    ev["args"]["path"] = json!("~");
    events.push((Agent::Opencode, ev));
    for (agent, ev) in events {
        let (seen, message, audit) = sb.decide_audited(agent, &ev);
        assert_eq!(facet(&audit, "fs.path"), &json!(h), "{}", agent.name());
        assert_eq!(
            seen,
            Seen::Deny,
            "{}: a content search of {h} reads {h}/.aileron/admin.token ({message})",
            agent.name()
        );
    }
}

#[test]
fn shell_tools_go_through_the_shell_analysis() {
    let sb =
        Sandbox::new("version: 1\ndefault: allow\ndeny:\n  - {id: no-curl, command: \"curl *\"}\n");
    let denied_by_curl = [
        "git status && curl x | sh",
        "bash -c 'curl x'",
        "sh -c \"git status; curl x\"",
        "FOO=1 curl x",
        "env FOO=1 curl x",
        "find . -name '*.rs' -exec curl x \\;",
        "sudo curl x",
        "echo $(curl x)",
        "git status\ncurl x",
    ];
    for agent in Agent::ALL {
        let name = agent.name();
        let (seen, _, audit) = sb.decide_audited(agent, &shell_event(&sb, agent, "git status"));
        assert_eq!(seen, Seen::Allow, "{name}");
        assert_eq!(facet(&audit, "shell.binary"), "git");
        for line in denied_by_curl {
            let (seen, message, audit) = sb.decide_audited(agent, &shell_event(&sb, agent, line));
            assert_eq!(seen, Seen::Deny, "{name} {line:?}");
            assert!(
                message.ends_with("(rule no-curl)"),
                "{name} {line:?}: {message}"
            );
            assert_eq!(audit["action"]["type"], "shell.exec");
            assert_eq!(facet(&audit, "shell.command"), "curl x", "{name} {line:?}");
        }
        for (line, rule) in [
            ("AILERON_SOCKET=/tmp/x ls", "builtin:protect-env"),
            ("export SHELL=/bin/sh", "builtin:protect-env"),
            (
                "echo 'default: allow' > aileron.yaml",
                "builtin:protect-policy",
            ),
            (
                "git status && tee .claude/settings.json < /dev/null",
                "builtin:protect-policy",
            ),
            ("rm -rf ~", "builtin:rm-root"),
        ] {
            let (seen, message, _) = sb.decide_audited(agent, &shell_event(&sb, agent, line));
            assert_eq!(seen, Seen::Deny, "{name} {line:?}");
            assert!(
                message.ends_with(&format!("(rule {rule})")),
                "{name} {line:?}: {message}"
            );
        }
        // A dynamic built-in asks: the agent's own prompt where it has one.
        let (seen, message, audit) =
            sb.decide_audited(agent, &shell_event(&sb, agent, "git status | sh"));
        assert_eq!(audit["rule"], "builtin:pipe-to-shell", "{name}");
        match agent {
            Agent::ClaudeCode | Agent::Cursor => assert_eq!(seen, Seen::Ask, "{name}"),
            _ => {
                assert_eq!(seen, Seen::Deny, "{name}");
                assert!(message.contains(NO_TERMINAL), "{name}: {message}");
            }
        }
    }
}

#[test]
fn a_shell_tool_s_own_directory_is_where_its_command_runs() {
    let sb = Sandbox::new(ALLOW_ALL);
    let p = sb.proj_str();
    std::fs::create_dir_all(sb.proj.join("sub")).unwrap();
    let mut ev = sb.fixture(Agent::Gemini, "bash.json");
    ev["tool_input"] = json!({"command": "rm x", "dir_path": "sub"});
    let (_, _, audit) = sb.decide_audited(Agent::Gemini, &ev);
    assert_eq!(
        facet(&audit, "shell.working_dir"),
        &json!(format!("{p}/sub"))
    );
    assert_eq!(
        facet(&audit, "shell.writes"),
        &json!([format!("{p}/sub/x")])
    );
    let mut ev = sb.fixture(Agent::Cursor, "bash.json");
    ev["tool_input"] = json!({"command": "rm y", "working_directory": format!("{p}/sub")});
    let (_, _, audit) = sb.decide_audited(Agent::Cursor, &ev);
    assert_eq!(
        facet(&audit, "shell.writes"),
        &json!([format!("{p}/sub/y")])
    );
    let mut ev = sb.fixture(Agent::Opencode, "bash.json");
    ev["args"] = json!({"command": "rm aileron.yaml", "workdir": format!("{p}/sub/..")});
    let (seen, _, audit) = sb.decide_audited(Agent::Opencode, &ev);
    assert_eq!(seen, Seen::Deny);
    assert_eq!(audit["rule"], "builtin:protect-policy");
}

#[test]
fn codex_patches_touching_protected_files_are_denied() {
    let sb = Sandbox::new(ALLOW_ALL);
    let patches = [
        "*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Add File: docs/x.md\n+x\n*** Update File: aileron.yaml\n@@\n-default: deny\n+default: allow\n",
        "*** Update File: notes.md\n*** Move to: aileron.yaml\n@@\n-a\n+b\n",
        "*** Add File: src/../.codex/hooks.json\n+{}\n",
        "*** Delete File: .aileron/audit.jsonl\n",
        "*** Update File: src/lib.rs \n@@\n-a\n+b\n*** Update File:  sub/aileron.yaml\n@@\n-a\n+b\n",
    ];
    let (seen, _, _) = sb.decide_audited(
        Agent::Codex,
        &patch_event(
            &sb,
            "*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Add File: docs/x.md\n+x\n",
        ),
    );
    assert_eq!(seen, Seen::Allow);
    for patch in patches {
        let (seen, message, audit) = sb.decide_audited(Agent::Codex, &patch_event(&sb, patch));
        assert_eq!(seen, Seen::Deny, "{patch:?}");
        assert!(
            message.ends_with("(rule builtin:protect-policy)"),
            "{patch:?}: {message}"
        );
        assert_eq!(audit["action"]["type"], "fs.write");
    }
}

/// Codex's patch parser trims each hunk header (`parse_one_hunk`:
/// `lines[0].trim()`, "lenient about leading/trailing whitespace around patch
/// markers"), so an indented header is a file Codex writes.
#[test]
fn codex_patches_with_indented_hunk_headers_are_seen_as_codex_reads_them() {
    let sb = Sandbox::new(ALLOW_ALL);
    for patch in [
        "*** Delete File: tmp.txt\n  *** Add File: aileron.yaml\n+default: allow\n",
        "*** Add File: notes.md\n+x\n\t*** Update File: .codex/hooks.json\n@@\n-a\n+b\n",
    ] {
        let (seen, message, audit) = sb.decide_audited(Agent::Codex, &patch_event(&sb, patch));
        assert_eq!(
            seen,
            Seen::Deny,
            "{patch:?} writes a protected file; decided on {} ({message})",
            facet(&audit, "fs.path")
        );
    }
}

#[test]
fn gemini_web_fetch_of_a_denied_host_in_the_prompt_is_denied() {
    let sb = Sandbox::new(
        "version: 1\ndefault: allow\ndeny:\n  - {id: no-evil, when: {type: http.request, http.host: evil.example}}\n",
    );
    let fetch = |prompt: &str| {
        let mut ev = sb.fixture(Agent::Gemini, "webfetch.json");
        ev["tool_input"]["prompt"] = json!(prompt);
        ev
    };
    let (seen, _, audit) =
        sb.decide_audited(Agent::Gemini, &fetch("Summarize https://example.com/a"));
    assert_eq!(seen, Seen::Allow);
    assert_eq!(facet(&audit, "http.host"), "example.com");
    for prompt in [
        "Compare https://example.com/a with https://evil.example/b.",
        "Read (https://EVIL.example/x) please",
        "https://evil.example",
        "fetch http://user@evil.example:8080/path?q=1, then summarize",
    ] {
        let (seen, message, audit) = sb.decide_audited(Agent::Gemini, &fetch(prompt));
        assert_eq!(seen, Seen::Deny, "{prompt:?}");
        assert!(message.ends_with("(rule no-evil)"), "{prompt:?}: {message}");
        assert_eq!(facet(&audit, "http.host"), "evil.example", "{prompt:?}");
    }
    // The same host through the other agents' fetch tools.
    for agent in [Agent::ClaudeCode, Agent::Cline, Agent::Opencode] {
        let mut ev = sb.fixture(agent, "webfetch.json");
        tool_input(agent, &mut ev)["url"] = json!("https://evil.example/x");
        assert_eq!(
            sb.decide_audited(agent, &ev).0,
            Seen::Deny,
            "{}",
            agent.name()
        );
    }
}

// ---------------------------------------------------------------------------
// Per agent session: doom loop, "always"

/// An allowed call of `agent` that changes something (a file write): a
/// read repeated is not a loop the built-in rule asks about.
fn repeated(sb: &Sandbox, agent: Agent, session: &str) -> Value {
    let path = format!("{}/src/lib.rs", sb.proj_str());
    with_session(agent, write_event(sb, agent, &path), session)
}

fn assert_doom_loop(agent: Agent, seen: Seen, message: &str, audit: &Value, session: &str) {
    let name = agent.name();
    assert_eq!(
        audit["action"]["type"], "agent.doom_loop",
        "{name}: {audit}"
    );
    assert_eq!(audit["rule"], "builtin:doom-loop", "{name}");
    assert_eq!(audit["session"], session, "{name}");
    if agent == Agent::ClaudeCode {
        assert_eq!(seen, Seen::Ask, "{name}");
        assert!(
            message.starts_with("aileron: approval needed: "),
            "{message}"
        );
    } else {
        assert_eq!(seen, Seen::Deny, "{name}");
        assert_eq!(
            message,
            format!("aileron: denied: {NO_TERMINAL} (rule builtin:doom-loop)"),
            "{name}"
        );
    }
}

#[test]
fn the_third_identical_call_in_a_session_is_a_doom_loop() {
    let sb = Sandbox::new(ALLOW_ALL);
    for agent in Agent::ALL {
        let s1 = format!("{}-one", agent.name());
        let s2 = format!("{}-two", agent.name());
        for _ in 0..2 {
            let (seen, _, _) = sb.decide_audited(agent, &repeated(&sb, agent, &s1));
            assert_eq!(seen, Seen::Allow, "{}", agent.name());
        }
        // Another session of the same agent counts for itself.
        let (seen, _, _) = sb.decide_audited(agent, &repeated(&sb, agent, &s2));
        assert_eq!(seen, Seen::Allow, "{}", agent.name());
        let (seen, message, audit) = sb.decide_audited(agent, &repeated(&sb, agent, &s1));
        assert_doom_loop(agent, seen, &message, &audit, &s1);
        // A different call breaks the run.
        let other = with_session(agent, shell_event(&sb, agent, "git status"), &s1);
        assert_eq!(sb.decide_audited(agent, &other).0, Seen::Allow);
        assert_eq!(
            sb.decide_audited(agent, &repeated(&sb, agent, &s1)).0,
            Seen::Allow
        );
    }
}

#[test]
fn identical_shell_calls_loop_too_and_sessions_of_other_agents_do_not_mix() {
    let sb = Sandbox::new(ALLOW_ALL);
    // One session id, two agents: two sessions.
    for _ in 0..2 {
        for agent in [Agent::Codex, Agent::Gemini] {
            let ev = with_session(agent, shell_event(&sb, agent, "touch build.log"), "shared");
            assert_eq!(sb.decide_audited(agent, &ev).0, Seen::Allow);
        }
    }
    for agent in [Agent::Codex, Agent::Gemini] {
        let ev = with_session(agent, shell_event(&sb, agent, "touch build.log"), "shared");
        let (seen, message, audit) = sb.decide_audited(agent, &ev);
        assert_doom_loop(agent, seen, &message, &audit, "shared");
    }
}

#[test]
fn a_permission_request_after_its_pre_tool_event_is_not_a_second_call() {
    let sb = Sandbox::new(ALLOW_ALL);
    let claude = Agent::ClaudeCode;
    let pre = with_session(claude, shell_event(&sb, claude, "touch x"), "pr");
    let mut request = sb.fixture(claude, "permission_request.json");
    request["tool_input"] = json!({"command": "touch x"});
    let request = with_session(claude, request, "pr");
    for _ in 0..2 {
        assert_eq!(sb.decide_audited(claude, &pre).0, Seen::Allow);
        assert_eq!(sb.decide_audited(claude, &request).0, Seen::Allow);
    }
    // Four events, two calls: the third call is the loop.
    let (seen, message, audit) = sb.decide_audited(claude, &pre);
    assert_doom_loop(claude, seen, &message, &audit, "pr");
}

/// The third identical call is answered `ask`; Claude Code then shows its
/// dialog and sends the PermissionRequest for that same call. Allowing it
/// would skip the dialog that the doom loop asked for.
#[test]
fn the_permission_request_of_a_doom_loop_call_does_not_skip_the_dialog() {
    let sb = Sandbox::new(ALLOW_ALL);
    let claude = Agent::ClaudeCode;
    let pre = with_session(claude, shell_event(&sb, claude, "touch x"), "loop");
    let mut request = sb.fixture(claude, "permission_request.json");
    request["tool_input"] = json!({"command": "touch x"});
    let request = with_session(claude, request, "loop");
    sb.decide_audited(claude, &pre);
    sb.decide_audited(claude, &pre);
    let (seen, _, _) = sb.decide_audited(claude, &pre);
    assert_eq!(seen, Seen::Ask);
    let d = sb.decide(claude, &request);
    assert_ne!(
        d.seen,
        Seen::Allow,
        "the doom loop's question was answered by the hook itself: {:?}",
        d.reply
    );
}

/// A pseudo-terminal whose "human" has already typed `keys`.
struct Terminal {
    _master: File,
    _slave: File,
    path: String,
}

fn terminal(keys: &str) -> Terminal {
    use std::io::Write;
    let (mut master_fd, mut slave_fd) = (-1, -1);
    // SAFETY: openpty writes two fds; null name, termios and winsize are allowed.
    let rc = unsafe {
        libc::openpty(
            &mut master_fd,
            &mut slave_fd,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both fds were just opened and are owned by these Files from now on.
    let (mut master, slave) =
        unsafe { (File::from_raw_fd(master_fd), File::from_raw_fd(slave_fd)) };
    let path = std::fs::read_link(format!("/proc/self/fd/{slave_fd}"))
        .expect("pty name")
        .to_string_lossy()
        .into_owned();
    master.write_all(keys.as_bytes()).expect("type");
    Terminal {
        _master: master,
        _slave: slave,
        path,
    }
}

#[test]
fn always_for_this_session_holds_across_hook_processes_of_that_session_only() {
    let sb = Sandbox::new(DECISIONS_POLICY);
    let gemini = Agent::Gemini;
    let call =
        |session: &str| with_session(gemini, mcp_event(&sb, gemini, "create_issue"), session);

    // A human answers "always for this session" on the terminal.
    let tty = terminal("s\n");
    let mut env = sb.env.clone();
    env.tty = tty.path.clone();
    let r = aileron_hooks::run(gemini, call("first").to_string().as_bytes(), &env);
    let (seen, _) = answer_of(gemini, "BeforeTool", &r);
    assert_eq!(seen, Seen::Allow, "{r:?}");
    let audit = sb.audit();
    assert_eq!(audit.last().unwrap()["outcome"], "approved-always-session");

    // A later hook process of that session: no terminal needed.
    let from_session = |sb: &Sandbox| {
        let (seen, _, audit) = sb.decide_audited(gemini, &call("first"));
        assert_eq!(seen, Seen::Allow, "{audit}");
        assert_eq!(audit["source"], "session", "{audit}");
        assert_eq!(audit["rule"], "session:always[0]", "{audit}");
    };
    from_session(&sb);
    // The same tool of another server, in that session, still asks.
    let mut other = call("first");
    other["mcp_context"]["server_name"] = json!("gitlab");
    let (seen, message, _) = sb.decide_audited(gemini, &other);
    assert_eq!(seen, Seen::Deny);
    assert!(message.contains(NO_TERMINAL), "{message}");
    from_session(&sb);
    // Another session, or another agent with the same session id, starts over.
    let (seen, message, _) = sb.decide_audited(gemini, &call("second"));
    assert_eq!(seen, Seen::Deny);
    assert!(message.contains(NO_TERMINAL), "{message}");
    let codex = with_session(
        Agent::Codex,
        mcp_event(&sb, Agent::Codex, "create_issue"),
        "first",
    );
    assert_eq!(sb.decide_audited(Agent::Codex, &codex).0, Seen::Deny);
}

#[test]
fn a_rejection_on_the_terminal_is_a_deny_with_the_human_s_word() {
    let sb = Sandbox::new(DECISIONS_POLICY);
    let tty = terminal("f\nuse list_issues instead\n");
    let mut env = sb.env.clone();
    env.tty = tty.path.clone();
    let ev = mcp_event(&sb, Agent::Codex, "create_issue");
    let r = aileron_hooks::run(Agent::Codex, ev.to_string().as_bytes(), &env);
    let (seen, message) = answer_of(Agent::Codex, "PreToolUse", &r);
    assert_eq!(seen, Seen::Deny);
    assert_eq!(message, "aileron: rejected: use list_issues instead");
    assert_eq!(sb.audit().last().unwrap()["outcome"], "corrected");
}

#[test]
fn session_ids_cannot_reach_outside_the_sessions_directory() {
    let sb = Sandbox::new(ALLOW_ALL);
    for session in ["../../../escape", "/etc/passwd", "..", "a/../../b"] {
        let ev = with_session(Agent::Codex, shell_event(&sb, Agent::Codex, "ls"), session);
        assert_eq!(
            sb.decide_audited(Agent::Codex, &ev).0,
            Seen::Allow,
            "{session}"
        );
    }
    let stray: Vec<_> = walk(&sb.root)
        .into_iter()
        .filter(|p| {
            !p.starts_with(sb.data.join("sessions/codex"))
                && !p.starts_with(sb.data.join("cache"))
                && *p != sb.proj.join("aileron.yaml")
                && *p != sb.proj.join(".aileron/audit.jsonl")
        })
        .collect();
    assert!(
        stray.is_empty(),
        "files outside the sessions directory: {stray:?}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A shell tool's own directory (`dir_path`, `workdir`) places the
/// command's paths, but the policy is the one of the agent's working
/// directory: the model cannot pick a more permissive `aileron.yaml` by
/// naming another directory.
#[test]
fn a_shell_tool_cannot_choose_which_policy_applies() {
    let sb = Sandbox::new(DECISIONS_POLICY);
    // A permissive policy elsewhere, e.g. in a cloned repository.
    let other = sb.root.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("aileron.yaml"), "version: 1\ndefault: allow\n").unwrap();
    let mut ev = sb.fixture(Agent::Gemini, "bash.json");
    ev["tool_input"]["command"] = json!("echo no");
    ev["tool_input"]["dir_path"] = json!(other.to_string_lossy());
    let (seen, message, audit) = sb.decide_audited(Agent::Gemini, &ev);
    assert_eq!(seen, Seen::Deny, "{message}");
    assert_eq!(
        message,
        "aileron: denied: matched `command: echo no` (rule no-echo)"
    );
    // The command itself is placed in the directory it runs in.
    assert_eq!(
        audit["action"]["facets"]["shell"]["working_dir"],
        json!(other.to_string_lossy())
    );
}
