//! `aileron install` / `uninstall` on real settings files with unrelated
//! content: the hook goes in, a second install changes nothing, uninstall
//! leaves every file byte for byte as it was (or gone, if install made it),
//! and the installed hook really runs `aileron hook` for the agent.

mod support;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use support::{AILERON, Project};

/// Each agent, the file install writes in a project, and the settings a
/// user might already have there (comments and trailing commas where the
/// agent reads JSONC).
const AGENTS: &[(&str, &str, &str)] = &[
    (
        "claude-code",
        ".claude/settings.json",
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
        let ours = format!("{AILERON} hook {agent}");
        let canonical = std::fs::canonicalize(AILERON).unwrap();
        let ours_canonical = format!("{} hook {agent}", canonical.display());
        assert!(
            commands.iter().any(|c| *c == ours || *c == ours_canonical),
            "{agent}: {commands:?}"
        );
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
            let before = tree(&p.root);
            let mut args = vec!["install", agent];
            if user {
                args.push("--user");
            }
            aileron(&p, &args);
            assert_ne!(tree(&p.root), before, "{agent} {user}: nothing written");
            args[0] = "uninstall";
            aileron(&p, &args);
            // Only the data directory's record of installs may remain.
            let after: Vec<String> = tree(&p.root)
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
    let answer = run_with_stdin(&mut p.command(&script), &event);
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
    let out = p.command(node).arg(p.path("driver.mjs")).output().unwrap();
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
