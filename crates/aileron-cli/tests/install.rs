//! `aileron install` / `uninstall` on real settings files with unrelated
//! content: the hook goes in, a second install changes nothing, uninstall
//! leaves every file byte for byte as it was (or gone, if install made it),
//! and the installed hook really runs `aileron hook` for the agent. The
//! files a team commits name `aileron` through PATH, never this machine's
//! path to it; Claude Code's project hook goes to its local settings.

mod support;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use support::{AILERON, Project, path_with_aileron};

/// Each agent, the file install writes in a project, and the settings a
/// user might already have there (comments and trailing commas where the
/// agent reads JSONC).
const AGENTS: &[(&str, &str, &str)] = &[
    (
        "claude-code",
        ".claude/settings.local.json",
        "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(ls *)\"]},\n  \"hooks\": {\n    \"PostToolUse\": [{\"matcher\": \"Edit\", \"hooks\": [{\"type\": \"command\", \"command\": \"prettier -w\"}]}]\n  }\n}\n",
    ),
    (
        "codex",
        ".codex/hooks.json",
        "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}]}}",
    ),
    (
        "gemini",
        ".gemini/settings.json",
        "{\n    // my settings\n    \"theme\": \"GitHub\",\n    \"tools\": {\"exclude\": [\"web_fetch\"],},\n}\n",
    ),
    (
        "cursor",
        ".cursor/hooks.json",
        "{\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [{\"command\": \"./format.sh\"}]\n  }\n}\n",
    ),
];

fn aileron(p: &Project, args: &[&str]) -> std::process::Output {
    let out = p.aileron(args).output().unwrap();
    assert!(
        out.status.success(),
        "aileron {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn hook_commands(settings: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(hooks) = settings["hooks"].as_object() else {
        return out;
    };
    for groups in hooks.values() {
        for g in groups.as_array().unwrap() {
            match g["hooks"].as_array() {
                Some(hs) => out.extend(
                    hs.iter()
                        .filter_map(|h| h["command"].as_str().map(str::to_owned)),
                ),
                None => out.extend(g["command"].as_str().map(str::to_owned)),
            }
        }
    }
    out
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out)
        }),
        _ => {}
    }
}

/// Reads JSON or JSONC (comments, trailing commas) the way the agents do.
fn parse_jsonc(text: &str) -> Value {
    let mut clean = String::new();
    for line in text.lines() {
        let l = line.trim_start();
        if !l.starts_with("//") {
            clean.push_str(line);
            clean.push('\n');
        }
    }
    let clean = clean.replace(",}", "}").replace(",\n}", "\n}");
    serde_json::from_str(&clean).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn install_twice_then_uninstall_leaves_every_file_as_it_was() {
    for (agent, file, original) in AGENTS {
        let p = Project::new("version: 1\n");
        p.write(file, original);
        aileron(&p, &["install", agent]);
        let installed = p.read(file);
        assert_ne!(&installed, original, "{agent}: nothing installed");
        // The user's settings are still there, and ours were added.
        let v = parse_jsonc(&installed);
        let commands = hook_commands(&v);
        // Claude Code's local settings name this machine's binary; the
        // files a team commits name `aileron` through PATH.
        let ours = if *agent == "claude-code" {
            let canonical = std::fs::canonicalize(AILERON).unwrap();
            format!("{} hook {agent}", canonical.display())
        } else {
            format!("aileron hook {agent}")
        };
        assert!(commands.contains(&ours), "{agent}: {commands:?}");
        // Every value the user had is still there.
        let mut theirs = Vec::new();
        strings(&parse_jsonc(original), &mut theirs);
        let mut now = Vec::new();
        strings(&v, &mut now);
        for s in &theirs {
            assert!(now.contains(s), "{agent}: `{s}` lost");
        }
        // Idempotent.
        let out = aileron(&p, &["install", agent]);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("already installed"),
            "{agent}"
        );
        assert_eq!(
            p.read(file),
            installed,
            "{agent}: second install changed it"
        );
        // Uninstall: byte for byte.
        aileron(&p, &["uninstall", agent]);
        assert_eq!(&p.read(file), original, "{agent}: not restored");
        let out = aileron(&p, &["uninstall", agent]);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("not installed"),
            "{agent}"
        );
    }
}

#[test]
fn a_file_install_created_goes_away_with_its_directories() {
    for agent in support::AGENTS {
        for user in [false, true] {
            let p = Project::new("version: 1\n");
            let before = everything(&p);
            let mut args = vec!["install", agent];
            if user {
                args.push("--user");
            }
            aileron(&p, &args);
            assert_ne!(everything(&p), before, "{agent} {user}: nothing written");
            args[0] = "uninstall";
            aileron(&p, &args);
            // Only the data directory's record of installs may remain.
            let after: Vec<String> = everything(&p)
                .into_iter()
                .filter(|f| !f.contains("/.aileron"))
                .collect();
            let before: Vec<String> = before
                .into_iter()
                .filter(|f| !f.contains("/.aileron"))
                .collect();
            assert_eq!(after, before, "{agent} user={user}");
        }
    }
}

#[test]
fn a_file_aileron_did_not_write_is_left_alone() {
    let p = Project::new("version: 1\n");
    p.write(".clinerules/hooks/PreToolUse", "#!/bin/sh\necho mine\n");
    let out = p.aileron(&["install", "cline"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("was not written by aileron"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        p.read(".clinerules/hooks/PreToolUse"),
        "#!/bin/sh\necho mine\n"
    );
}

#[test]
fn broken_settings_are_refused_with_their_place_and_not_touched() {
    let p = Project::new("version: 1\n");
    let broken = "{\n  \"model\": \"opus\"\n  \"hooks\": {}\n}\n";
    p.write(".claude/settings.json", broken);
    let out = p.aileron(&["install", "claude-code"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("settings.json: line 3, column 3"), "{err}");
    assert_eq!(p.read(".claude/settings.json"), broken);
}

#[test]
fn the_installed_cline_script_runs_the_hook() {
    let p = Project::new("version: 1\ndeny: [\"git push *\"]\n");
    aileron(&p, &["install", "cline"]);
    let script = p.path(".clinerules/hooks/PreToolUse");
    let event = format!(
        r#"{{"hookName":"PreToolUse","taskId":"t1","workspaceRoots":["{}"],"preToolUse":{{"toolName":"execute_command","parameters":{{"command":"git push origin main"}}}}}}"#,
        p.dir.display()
    );
    let answer = run_with_stdin(p.command(&script).env("PATH", path_with_aileron()), &event);
    let v: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(v["cancel"], true, "{v}");
}

/// The opencode plugin, run by Node.js as opencode would import it: an
/// allowed call goes on, a denied one throws with Aileron's reason.
#[test]
fn the_installed_opencode_plugin_blocks_denied_calls() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let Some(node) = std::env::split_paths(&path)
        .map(|d| d.join("node"))
        .find(|n| n.is_file())
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "node is needed for the opencode plugin test (apt-get install nodejs)"
        );
        eprintln!("SKIPPED: no node to run the opencode plugin");
        return;
    };
    let p = Project::new("version: 1\nallow: [\"git status\"]\ndeny: [\"git push *\"]\n");
    aileron(&p, &["install", "opencode"]);
    let plugin = p.path(".opencode/plugins/aileron.js");
    let driver = format!(
        r#"import {{ AileronGate }} from "{plugin}";
const hooks = await AileronGate({{ directory: "{dir}", worktree: "{dir}" }});
for (const command of ["git status", "git push origin main"]) {{
  try {{
    await hooks["tool.execute.before"]({{ tool: "bash", sessionID: "ses_1", callID: "c" }}, {{ args: {{ command }} }});
    console.log("ALLOWED " + command);
  }} catch (e) {{
    console.log("BLOCKED " + command + " :: " + e.message);
  }}
}}
"#,
        plugin = plugin.display(),
        dir = p.dir.display()
    );
    p.write("driver.mjs", &driver);
    let out = p
        .command(node)
        .arg(p.path("driver.mjs"))
        .env("PATH", path_with_aileron())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "ALLOWED git status\nBLOCKED git push origin main :: aileron: denied: matched `git push *` (rule ".to_owned()
            + &p.path("aileron.yaml").display().to_string()
            + ":deny[0])\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What identifies this machine in a file: the test's temporary root (the
/// project, home and data directory are below it) and the directory of the
/// aileron binary.
fn machine_paths(p: &Project) -> Vec<String> {
    let bin = std::fs::canonicalize(AILERON).unwrap();
    vec![
        p.root.display().to_string(),
        Path::new(AILERON).parent().unwrap().display().to_string(),
        bin.parent().unwrap().display().to_string(),
    ]
}

/// Every file below the project a team would commit: all of them but
/// Aileron's own data directory and Claude Code's local settings.
fn committed_files(p: &Project) -> Vec<String> {
    tree(&p.dir)
        .into_iter()
        .filter(|f| Path::new(f).is_file())
        .filter(|f| !f.contains("/.aileron/") && !f.ends_with("/.claude/settings.local.json"))
        .collect()
}

#[test]
fn the_files_a_team_commits_hold_no_path_of_this_machine() {
    for agent in support::AGENTS {
        let p = Project::new("version: 1\n");
        let out = aileron(&p, &["install", agent, "--project"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let committed = committed_files(&p);
        let written: Vec<&String> = committed
            .iter()
            .filter(|f| !f.ends_with("/aileron.yaml"))
            .collect();
        if agent == "claude-code" {
            // The hook is this machine's own: in the local settings, and
            // the output says so.
            assert!(written.is_empty(), "{written:?}");
            let local = p.read(".claude/settings.local.json");
            let bin = std::fs::canonicalize(AILERON).unwrap();
            assert!(local.contains(&bin.display().to_string()), "{local}");
            assert!(stdout.contains(".claude/settings.local.json"), "{stdout}");
            assert!(stdout.contains("keep the file out of git"), "{stdout}");
        } else {
            assert_eq!(written.len(), 1, "{agent}: {committed:?}");
            assert!(stdout.contains("through PATH"), "{agent}: {stdout}");
        }
        for file in &committed {
            let text = std::fs::read_to_string(file).unwrap();
            for path in machine_paths(&p) {
                assert!(
                    !text.contains(&path),
                    "{agent}: {file} names {path}:\n{text}"
                );
            }
        }
        // The user's own files keep the binary's absolute path.
        let q = Project::new("version: 1\n");
        aileron(&q, &["install", agent, "--user"]);
        let user_files: Vec<String> = tree(&q.home)
            .into_iter()
            .filter(|f| Path::new(f).is_file() && !f.contains("/.aileron"))
            .collect();
        assert_eq!(user_files.len(), 1, "{agent}: {user_files:?}");
        let text = std::fs::read_to_string(&user_files[0]).unwrap();
        let bin = std::fs::canonicalize(AILERON).unwrap();
        assert!(text.contains(&bin.display().to_string()), "{agent}: {text}");
    }
}

/// The installed JSON hooks of the agents whose project file is shared run
/// `aileron hook` once `aileron` is on PATH, and decide: a denied command
/// is refused in the agent's own answer format.
#[test]
fn the_hooks_a_team_commits_run_where_aileron_is_on_path() {
    let cases = [
        (
            "codex",
            ".codex/hooks.json",
            r#"{"session_id":"s","cwd":"CWD","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push origin main"},"tool_use_id":"t"}"#,
            r#""permissionDecision":"deny""#,
        ),
        (
            "gemini",
            ".gemini/settings.json",
            r#"{"session_id":"s","cwd":"CWD","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"git push origin main"}}"#,
            r#""decision":"deny""#,
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            r#"{"conversation_id":"c","hook_event_name":"beforeShellExecution","command":"git push origin main","cwd":"CWD","workspace_roots":["CWD"]}"#,
            r#""permission":"deny""#,
        ),
    ];
    for (agent, file, event, denied) in cases {
        let p = Project::new("version: 1\ndeny: [\"git push *\"]\n");
        aileron(&p, &["install", agent, "--project"]);
        let mut commands = hook_commands(&parse_jsonc(&p.read(file)));
        commands.dedup();
        assert_eq!(commands, vec![format!("aileron hook {agent}")], "{agent}");
        let event = event.replace("CWD", &p.dir.display().to_string());
        for command in commands {
            let answer = run_with_stdin(
                p.command("/bin/sh")
                    .args(["-c", &command])
                    .env("PATH", path_with_aileron()),
                &event,
            );
            assert!(answer.contains(denied), "{agent}: {answer}");
        }
    }
}

/// A hook an earlier `aileron install claude-code` wrote into the team's
/// `.claude/settings.json`, with this machine's path, moves to the local
/// settings; one the team committed naming `aileron` is left to run alone.
#[test]
fn claude_code_project_hooks_leave_the_team_s_settings() {
    let team = r#"{"permissions": {"allow": ["Bash(ls *)"]}, "hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier -w"}]}]}}"#;
    let legacy_hook = |command: &str| {
        let mut v: Value = serde_json::from_str(team).unwrap();
        let group = serde_json::json!({"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 600}]});
        v["hooks"]["PreToolUse"].as_array_mut().unwrap().push(group);
        serde_json::to_string_pretty(&v).unwrap()
    };
    let p = Project::new("version: 1\n");
    p.write(
        ".claude/settings.json",
        &legacy_hook(&format!("{AILERON} hook claude-code")),
    );
    let out = aileron(&p, &["install", "claude-code"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(".claude/settings.json"), "{stdout}");
    assert_eq!(
        parse_jsonc(&p.read(".claude/settings.json")),
        serde_json::from_str::<Value>(team).unwrap()
    );
    let local = parse_jsonc(&p.read(".claude/settings.local.json"));
    assert_eq!(hook_commands(&local).len(), 2, "{local}");
    // Uninstall takes it out of both.
    p.write(
        ".claude/settings.json",
        &legacy_hook(&format!("{AILERON} hook claude-code")),
    );
    aileron(&p, &["uninstall", "claude-code"]);
    assert!(!p.path(".claude/settings.local.json").exists());
    assert_eq!(
        parse_jsonc(&p.read(".claude/settings.json")),
        serde_json::from_str::<Value>(team).unwrap()
    );

    // The team's portable hook already runs: nothing is added.
    let q = Project::new("version: 1\n");
    let shared = legacy_hook("aileron hook claude-code");
    q.write(".claude/settings.json", &shared);
    let out = aileron(&q, &["install", "claude-code"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("already runs `aileron` through PATH"),
        "{stdout}"
    );
    assert_eq!(q.read(".claude/settings.json"), shared);
    assert!(!q.path(".claude/settings.local.json").exists());
    // `aileron status` finds it there.
    assert_status_names(&q, "claude-code", ".claude/settings.json");
}

/// `aileron status` names `file` on `agent`'s line.
fn assert_status_names(p: &Project, agent: &str, file: &str) {
    let status = aileron(p, &["status"]);
    let stdout = String::from_utf8_lossy(&status.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.contains(agent) && l.contains(file)),
        "{stdout}"
    );
}

/// Claude Code reads a git repository's local settings at its root: the
/// hook goes there when installed from a directory below it.
#[test]
fn claude_code_local_settings_go_to_the_repository_root() {
    let p = Project::new("version: 1\n");
    std::fs::create_dir_all(p.path(".git")).unwrap();
    std::fs::create_dir_all(p.path("sub/dir")).unwrap();
    let in_sub = |verb: &str| {
        let out = p
            .aileron(&[verb, "claude-code"])
            .current_dir(p.path("sub/dir"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{verb}: {err}");
    };
    in_sub("install");
    let local = p.read(".claude/settings.local.json");
    assert!(local.contains("hook claude-code"), "{local}");
    assert!(!p.path("sub/dir/.claude").exists());
    in_sub("uninstall");
    assert!(!p.path(".claude").exists());
}

fn run_with_stdin(cmd: &mut Command, input: &str) -> String {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file and directory of the project's scratch directory and of
/// its home, sorted.
fn everything(p: &Project) -> Vec<String> {
    let mut all = tree(&p.root);
    all.extend(tree(&p.home));
    all.sort();
    all
}

/// Every file and directory under `root`, sorted.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            out.push(path.display().to_string());
            if e.file_type().unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

/// An agent's MCP configuration as a user may have it: servers the agent
/// starts, remote ones over Streamable HTTP, one the gateway cannot serve,
/// and settings of its own.
struct McpCase {
    agent: &'static str,
    user: bool,
    /// Below the project (below the home directory for `user`).
    file: &'static str,
    original: &'static str,
    /// Each wrapped server (a JSON pointer to its entry; its name in TOML)
    /// and the gateway's arguments after the program.
    wrapped: &'static [(&'static str, &'static [&'static str])],
    /// Servers left as they were, each with a note naming it.
    left: &'static [(&'static str, &'static str)],
    /// Extra environment of every `aileron` run.
    env: &'static [(&'static str, &'static str)],
}

const MCP_CASES: &[McpCase] = &[
    McpCase {
        agent: "claude-code",
        user: false,
        file: ".mcp.json",
        original: r#"{
  "mcpServers": {
    "notes": {"command": "node", "args": ["srv.js", "--db", "notes.db"], "env": {"TOKEN": "${NOTES_TOKEN}"}},
    "linear": {
      "type": "http",
      "url": "https://mcp.linear.example/mcp",
      "headers": {"Authorization": "Bearer ${LINEAR_KEY}"}
    },
    "old": {"type": "sse", "url": "https://old.example/sse"}
  }
}
"#,
        wrapped: &[
            (
                "/mcpServers/notes",
                &["--", "node", "srv.js", "--db", "notes.db"],
            ),
            (
                "/mcpServers/linear",
                &[
                    "--url",
                    "https://mcp.linear.example/mcp",
                    "--header",
                    "Authorization: Bearer ${LINEAR_KEY}",
                ],
            ),
        ],
        left: &[("/mcpServers/old", "`old`")],
        env: &[],
    },
    McpCase {
        agent: "claude-code",
        user: true,
        file: ".claude.json",
        original: r#"{
  "numStartups": 12,
  "mcpServers": {
    "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {}},
    "docs": {"type": "http", "url": "https://docs.example/mcp"}
  },
  "projects": {
    "/home/me/app": {
      "allowedTools": [],
      "mcpServers": {"db": {"command": "db-mcp"}}
    }
  }
}"#,
        wrapped: &[
            (
                "/mcpServers/github",
                &["--", "npx", "-y", "@modelcontextprotocol/server-github"],
            ),
            ("/mcpServers/docs", &["--url", "https://docs.example/mcp"]),
            ("/projects/~1home~1me~1app/mcpServers/db", &["--", "db-mcp"]),
        ],
        left: &[],
        env: &[],
    },
    McpCase {
        agent: "codex",
        user: false,
        file: ".codex/config.toml",
        original: "# Codex settings\nmodel = \"o3\"\n\n[mcp_servers.notes]\ncommand = \"node\" # the notes\nargs = [\"srv.js\"]\nenv = { TOKEN = \"t\" }\n\n[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\nhttp_headers = { \"X-Team\" = \"core\" }\n\n[mcp_servers.tracker]\nurl = \"https://tracker.example/mcp\"\nbearer_token_env_var = \"TRACKER_TOKEN\"\n",
        wrapped: &[
            ("notes", &["--", "node", "srv.js"]),
            (
                "docs",
                &[
                    "--url",
                    "https://docs.example/mcp",
                    "--header",
                    "X-Team: core",
                ],
            ),
        ],
        left: &[("tracker", "bearer_token_env_var")],
        env: &[],
    },
    McpCase {
        agent: "codex",
        user: true,
        file: "codex-home/config.toml",
        original: "[mcp_servers.notes]\ncommand = \"node\"\nargs = [\"srv.js\"]\n\n[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\n",
        wrapped: &[
            ("notes", &["--", "node", "srv.js"]),
            ("docs", &["--url", "https://docs.example/mcp"]),
        ],
        left: &[],
        env: &[("CODEX_HOME", "codex-home")],
    },
    McpCase {
        agent: "gemini",
        user: false,
        file: ".gemini/settings.json",
        original: r#"{
    // my settings
    "theme": "GitHub",
    "mcpServers": {
        "notes": {"command": "node", "args": ["srv.js"], "cwd": "./tools", "trust": false},
        "search": {"httpUrl": "https://search.example/mcp", "headers": {"X-Key": "$SEARCH_KEY"}, "timeout": 5000},
        "events": {"url": "https://events.example/sse"},
    },
}
"#,
        wrapped: &[
            ("/mcpServers/notes", &["--", "node", "srv.js"]),
            (
                "/mcpServers/search",
                &[
                    "--url",
                    "https://search.example/mcp",
                    "--header",
                    "X-Key: $SEARCH_KEY",
                ],
            ),
        ],
        left: &[("/mcpServers/events", "`events`")],
        env: &[],
    },
    McpCase {
        agent: "cursor",
        user: false,
        file: ".cursor/mcp.json",
        original: r#"{"mcpServers": {"notes": {"command": "npx", "args": ["-y", "notes-mcp"], "env": {"K": "v"}}, "tracker": {"url": "https://tracker.example/mcp", "headers": {"Authorization": "Bearer x"}}}}"#,
        wrapped: &[
            ("/mcpServers/notes", &["--", "npx", "-y", "notes-mcp"]),
            (
                "/mcpServers/tracker",
                &[
                    "--url",
                    "https://tracker.example/mcp",
                    "--header",
                    "Authorization: Bearer x",
                ],
            ),
        ],
        left: &[],
        env: &[],
    },
    McpCase {
        agent: "opencode",
        user: false,
        file: "opencode.json",
        original: r#"{
  "$schema": "https://opencode.ai/config.json",
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    "notes": {"type": "local", "command": ["bun", "x", "notes-mcp"], "enabled": true, "environment": {"K": "v"}},
    "sentry": {"type": "remote", "url": "https://mcp.sentry.example/mcp", "headers": {"Authorization": "Bearer {env:SENTRY}"}}
  }
}
"#,
        wrapped: &[
            ("/mcp/notes", &["--", "bun", "x", "notes-mcp"]),
            (
                "/mcp/sentry",
                &[
                    "--url",
                    "https://mcp.sentry.example/mcp",
                    "--header",
                    "Authorization: Bearer {env:SENTRY}",
                ],
            ),
        ],
        left: &[],
        env: &[],
    },
];

impl McpCase {
    fn path(&self, p: &Project) -> std::path::PathBuf {
        if self.user {
            p.home.join(self.file)
        } else {
            p.path(self.file)
        }
    }

    fn toml(&self) -> bool {
        self.file.ends_with(".toml")
    }

    /// `aileron VERB AGENT [--user]` in `p`, which must succeed; its stdout.
    fn run(&self, p: &Project, verb: &str) -> String {
        let mut cmd = p.aileron(&[verb, self.agent]);
        if self.user {
            cmd.arg("--user");
        }
        for (k, v) in self.env {
            cmd.env(k, p.home.join(v));
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "aileron {verb} {}: {}",
            self.agent,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What the wrapped servers run: `aileron` through PATH in a file the
    /// team commits, this machine's binary in the user's own.
    fn program(&self) -> String {
        if self.user {
            std::fs::canonicalize(AILERON)
                .unwrap()
                .display()
                .to_string()
        } else {
            "aileron".to_owned()
        }
    }
}

/// A JSON (with comments) configuration, read as the agent reads it.
fn jsonc(text: &str) -> Value {
    aileron_hooks::jsonedit::parse(text)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
        .to_value()
}

/// An entry's command line: `command` and `args`, or opencode's list.
fn command_line(entry: &Value) -> Vec<String> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap_or_else(|| panic!("not a list: {v}"))
            .iter()
            .map(|s| s.as_str().unwrap().to_owned())
            .collect()
    };
    match &entry["command"] {
        Value::String(c) => {
            let mut line = vec![c.clone()];
            if !entry["args"].is_null() {
                line.extend(strings(&entry["args"]));
            }
            line
        }
        list => strings(list),
    }
}

/// A TOML array of strings as `toml_edit` writes it.
fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

#[test]
fn mcp_servers_go_behind_the_gateway_and_come_back_byte_for_byte() {
    for case in MCP_CASES {
        let what = format!("{} {}", case.agent, case.file);
        let p = Project::new("version: 1\n");
        let path = case.path(&p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, case.original).unwrap();
        let stdout = case.run(&p, "install");
        assert!(
            stdout.contains(&format!(
                "MCP servers behind the MCP gateway in {}",
                path.display()
            )),
            "{what}: {stdout}"
        );
        let installed = std::fs::read_to_string(&path).unwrap();
        let program = case.program();
        for (at, args) in case.wrapped {
            let name = at.rsplit('/').next().unwrap();
            let mut expected = vec![program.clone()];
            expected.extend(["mcp", "--name", name].map(str::to_owned));
            expected.extend(args.iter().map(|a| (*a).to_owned()));
            if case.toml() {
                let table = format!("[mcp_servers.{name}]\n");
                let section = installed
                    .split_once(&table)
                    .unwrap_or_else(|| panic!("{what}: no {table} in {installed}"))
                    .1;
                let section = section.split("\n[").next().unwrap();
                assert!(
                    section.contains(&format!("command = {:?}", expected[0]))
                        && section.contains(&format!("args = {}", toml_list(&expected[1..]))),
                    "{what}: {name} runs {expected:?}? {section}"
                );
                assert!(!section.contains("url ="), "{what}: {section}");
                // Codex passes a server only the variables it is told:
                // the gateway's, for `aileron launch`.
                assert!(
                    section.contains(r#"env_vars = ["AILERON_SOCKET", "AILERON_SESSION","#),
                    "{what}: {section}"
                );
            } else {
                let v = jsonc(&installed);
                let entry = v.pointer(at).unwrap_or_else(|| panic!("{what}: no {at}"));
                assert_eq!(command_line(entry), expected, "{what}: {at}");
                for key in ["url", "httpUrl", "headers"] {
                    assert!(entry.get(key).is_none(), "{what}: {at} keeps {key}");
                }
            }
        }
        for (at, named) in case.left {
            assert!(
                stdout.contains(named),
                "{what}: no note about {at}: {stdout}"
            );
            if !case.toml() {
                assert_eq!(
                    jsonc(&installed).pointer(at),
                    jsonc(case.original).pointer(at),
                    "{what}: {at} changed"
                );
            }
        }
        // Every other setting is still there.
        if !case.toml() {
            let (mut before, mut after) = (jsonc(case.original), jsonc(&installed));
            for (at, _) in case.wrapped {
                *before.pointer_mut(at).unwrap() = Value::Null;
                *after.pointer_mut(at).unwrap() = Value::Null;
            }
            after.as_object_mut().unwrap().remove("hooks");
            assert_eq!(after, before, "{what}");
        } else {
            assert!(
                installed.starts_with(case.original.split("[mcp_servers").next().unwrap()),
                "{what}: {installed}"
            );
        }

        // A second install changes nothing.
        let again = case.run(&p, "install");
        assert!(again.contains("already installed"), "{what}: {again}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), installed, "{what}");

        // Uninstall: the very bytes.
        let stdout = case.run(&p, "uninstall");
        assert!(
            stdout.contains(&format!("MCP servers given back in {}", path.display())),
            "{what}: {stdout}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            case.original.as_bytes(),
            "{what}: not given back byte for byte"
        );
        let again = case.run(&p, "uninstall");
        assert!(again.contains("not installed"), "{what}: {again}");
        assert_eq!(std::fs::read(&path).unwrap(), case.original.as_bytes());
    }
}

#[test]
fn an_mcp_configuration_that_does_not_parse_stops_install_with_its_place() {
    let cases = [
        (
            "claude-code",
            ".mcp.json",
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {\"command\": \"y\"}\n  }\n}\n",
            ":4:5: expected `,` or `}`",
            ".claude/settings.local.json",
        ),
        (
            "codex",
            ".codex/config.toml",
            "[mcp_servers.notes]\ncommand = \"node\nargs = []\n",
            ":2:",
            ".codex/hooks.json",
        ),
        (
            "opencode",
            "opencode.json",
            "{\"mcp\": {\"notes\": {\"type\": \"local\", \"command\": [\"x\"]}}",
            ":1:",
            ".opencode/plugins/aileron.js",
        ),
    ];
    for (agent, file, broken, place, hook) in cases {
        let p = Project::new("version: 1\n");
        p.write(file, broken);
        let before = everything(&p);
        let out = p.aileron(&["install", agent]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{agent}: {stderr}");
        let at = format!("{}{place}", p.path(file).display());
        assert!(stderr.contains(&at), "{agent}: wanted {at} in {stderr}");
        assert!(stderr.contains("hint:"), "{agent}: {stderr}");
        // Nothing written: not the file, not the hook, not a record.
        assert_eq!(p.read(file), broken, "{agent}");
        assert!(!p.path(hook).exists(), "{agent}: the hook went in");
        assert_eq!(everything(&p), before, "{agent}");
    }
}

/// The command line install writes, run as the agent runs it: the server
/// behind it answers through the gateway, and a call the policy denies
/// never reaches it. For a server the agent starts and a remote one.
#[test]
fn the_wrapped_command_lines_run_the_servers_through_the_gateway() {
    use support::mcp::{Client, http_server, server_calls, test_server, tool_text};
    let p = Project::new(
        "version: 1\ndefault: allow\ndeny:\n  - id: no-wipe\n    description: wiping loses the notes\n    when: {type: mcp.call, mcp.tool: wipe}\n",
    );
    let calls = p.path("calls.jsonl");
    let http_log = p.path("http.jsonl");
    let url = http_server(http_log.clone());
    let config = serde_json::json!({"mcpServers": {
        "notes": {"command": test_server(), "args": [], "env": {"MCP_TEST_LOG": calls}},
        "remote": {"type": "http", "url": url},
    }});
    p.write(".mcp.json", &serde_json::to_string_pretty(&config).unwrap());
    aileron(&p, &["install", "claude-code"]);
    let installed = jsonc(&p.read(".mcp.json"));
    for name in ["notes", "remote"] {
        let entry = &installed["mcpServers"][name];
        let line = command_line(entry);
        assert_eq!(line[..4], ["aileron", "mcp", "--name", name], "{entry}");
        let mut cmd = p.command(&line[0]);
        cmd.args(&line[1..]).env("PATH", path_with_aileron());
        for (k, v) in entry["env"].as_object().into_iter().flatten() {
            cmd.env(k, v.as_str().unwrap());
        }
        let mut client = Client::spawn(cmd);
        client.initialize();
        let (text, error) =
            tool_text(&client.call("write_note", serde_json::json!({"name": "a", "text": "b"})));
        assert!(!error, "{name}: {text}; {}", client.stderr());
        let (text, error) = tool_text(&client.call("wipe", serde_json::json!({})));
        assert!(error, "{name}: {text}");
        assert_eq!(
            text, "aileron: denied: wiping loses the notes (rule no-wipe)",
            "{name}"
        );
        let (status, stderr) = client.finish();
        assert!(status.success(), "{name}: {stderr}");
    }
    let notes: Vec<String> = server_calls(&calls)
        .iter()
        .map(|c| c["params"]["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(notes, ["write_note"], "the stdio server saw {notes:?}");
    let remote: Vec<String> = server_calls(&http_log)
        .iter()
        .filter(|c| c["method"] == "tools/call")
        .map(|c| c["tool"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(remote, ["write_note"], "the remote server saw {remote:?}");
    // And `aileron status` names the file.
    assert_status_names(&p, "claude-code", ".mcp.json");
}

/// A file the user changed after install: uninstall gives back the servers
/// aileron wrapped, keeps the user's changes, and says so; a wrapped entry
/// the user edited is left.
#[test]
fn a_file_changed_after_install_gets_back_only_the_wrapped_servers() {
    let p = Project::new("version: 1\n");
    let original = "{\n  \"mcpServers\": {\n    \"notes\": {\"command\": \"node\", \"args\": [\"srv.js\"]},\n    \"db\": {\"command\": \"db-mcp\"}\n  }\n}\n";
    p.write(".cursor/mcp.json", original);
    aileron(&p, &["install", "cursor"]);
    let installed = p.read(".cursor/mcp.json");
    // The user adds a server and a setting, and edits `db` by hand.
    let mut v = jsonc(&installed);
    v["mcpServers"]["extra"] = serde_json::json!({"command": "extra-mcp"});
    v["mcpServers"]["db"]["env"] = serde_json::json!({"DB": "x"});
    v["theme"] = Value::from("dark");
    p.write(
        ".cursor/mcp.json",
        &serde_json::to_string_pretty(&v).unwrap(),
    );
    let out = aileron(&p, &["uninstall", "cursor"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("changed after aileron wrapped its MCP servers")
            && stdout.contains("(notes)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("db no longer read as aileron wrote"),
        "{stdout}"
    );
    let now = jsonc(&p.read(".cursor/mcp.json"));
    let before = jsonc(original);
    assert_eq!(now["mcpServers"]["notes"], before["mcpServers"]["notes"]);
    assert_eq!(now["mcpServers"]["extra"]["command"], "extra-mcp");
    assert_eq!(now["theme"], "dark");
    assert_eq!(
        command_line(&now["mcpServers"]["db"])[..2],
        ["aileron", "mcp"]
    );

    // TOML alike: Codex's servers back, the server added since kept.
    let original =
        "model = \"o3\"\n\n[mcp_servers.notes]\ncommand = \"node\"\nargs = [\"srv.js\"]\n";
    let extra = "\n[mcp_servers.extra]\ncommand = \"extra-mcp\"\n";
    p.write(".codex/config.toml", original);
    aileron(&p, &["install", "codex"]);
    p.write(
        ".codex/config.toml",
        &(p.read(".codex/config.toml") + extra),
    );
    let out = aileron(&p, &["uninstall", "codex"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("(notes)"), "{stdout}");
    assert_eq!(p.read(".codex/config.toml"), original.to_owned() + extra);
}
