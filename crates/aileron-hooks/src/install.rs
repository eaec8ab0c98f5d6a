//! `aileron install AGENT` / `aileron uninstall AGENT`: the agent's hook
//! configuration, so that every tool call goes through `aileron hook`.
//!
//! JSON settings are edited as text ([`crate::jsonedit`]): the user's other
//! settings survive byte for byte, a second install changes nothing, and
//! uninstall takes out exactly what install put in — the entries, and the
//! keys and file it had to create (remembered in `$AILERON_DATA/installed.json`).
//!
//! The agent's MCP servers are put behind the MCP gateway as well ([`mcp`]).

use crate::Error;
use crate::agent::Agent;
use crate::jsonedit::{self, Node};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

mod mcp;

/// Where and what to install.
#[derive(Clone, Debug)]
pub struct Target {
    pub agent: Agent,
    /// For every project of the user, rather than this one.
    pub user: bool,
    /// The project directory.
    pub cwd: PathBuf,
    pub home: PathBuf,
    /// `$AILERON_DATA`, for the record of what was created.
    pub data_dir: PathBuf,
    /// The absolute path of the `aileron` binary, which the hook runs from
    /// files that stay on this machine (the user's settings, Claude Code's
    /// local project settings, a launch session's). A project file a team
    /// commits names `aileron` through `PATH` instead ([`PORTABLE`]).
    pub aileron: String,
    /// Where the agents keep their configuration when the environment says.
    pub homes: ConfigHomes,
}

/// The configuration directories the environment may move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigHomes {
    /// `$CODEX_HOME`, else `~/.codex`.
    pub codex: PathBuf,
    /// Claude Code's `.claude.json`: in `$CLAUDE_CONFIG_DIR`, else `~/.claude.json`.
    pub claude_json: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    pub config: PathBuf,
}

impl ConfigHomes {
    /// From this process's environment.
    pub fn from_env(home: &Path) -> ConfigHomes {
        ConfigHomes::with(home, |k| std::env::var_os(k))
    }

    /// From the variables `get` gives (an empty one is not set).
    pub fn with(home: &Path, get: impl Fn(&str) -> Option<OsString>) -> ConfigHomes {
        let var = |k: &str| get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        ConfigHomes {
            codex: var("CODEX_HOME").unwrap_or_else(|| home.join(".codex")),
            claude_json: var("CLAUDE_CONFIG_DIR")
                .map_or_else(|| home.join(".claude.json"), |d| d.join(".claude.json")),
            config: var("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")),
        }
    }
}

/// How a project file that is committed and shared names Aileron: the
/// command, found through `PATH` on each teammate's machine, never one
/// machine's absolute path.
pub const PORTABLE: &str = "aileron";

impl Target {
    /// What the hook runs: [`PORTABLE`] in a project file the team
    /// commits, this machine's binary everywhere else.
    fn program(&self) -> &str {
        if self.shared() {
            PORTABLE
        } else {
            &self.aileron
        }
    }

    /// Whether the file installed to is a project's shared one. Claude
    /// Code's project hooks go to its local settings, which stay on this
    /// machine.
    fn shared(&self) -> bool {
        !self.user && self.agent != Agent::ClaudeCode
    }
}

/// What happened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Hook files written or removed; empty when nothing had to change.
    pub changed: Vec<PathBuf>,
    /// MCP configuration files whose servers were put behind the gateway,
    /// or given back.
    pub servers: Vec<PathBuf>,
    /// Things the user must know (e.g. the agent wants the hook trusted).
    pub notes: Vec<String>,
}

/// Hooks in a JSON settings file: `hooks.<event>` arrays.
struct JsonHooks {
    file: PathBuf,
    /// Top-level members the file must have (Cursor's `version`).
    root: Vec<(&'static str, Value)>,
    events: Vec<(&'static str, Value)>,
}

/// The command line an agent runs: the binary's absolute path, quoted for `sh`.
pub fn hook_command(aileron: &str, agent: Agent) -> String {
    format!("{} hook {}", shell_quote(aileron), agent.name())
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A `{matcher: "*", hooks: [...]}` entry running the hook for every tool
/// (Claude Code's shape, which Codex and Gemini CLI copied).
fn hook_group(aileron: &str, agent: Agent) -> Value {
    let command = hook_command(aileron, agent);
    let timeout = agent.hook_timeout().as_secs();
    json!({"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": timeout}]})
}

/// Claude Code settings with Aileron's hooks and nothing else, for one
/// session (`claude --settings FILE`, written by `aileron launch`).
pub fn claude_code_session_settings(aileron: &str) -> Value {
    let group = hook_group(aileron, Agent::ClaudeCode);
    json!({"hooks": {"PreToolUse": [group.clone()], "PermissionRequest": [group]}})
}

/// Gemini CLI settings with Aileron's BeforeTool hook and nothing else, for
/// one session (merged into the settings `aileron launch -- gemini` gives
/// it); the same entry `aileron install gemini` writes, so Gemini CLI runs
/// it once when both are there.
pub fn gemini_session_settings(aileron: &str) -> Value {
    let command = hook_command(aileron, Agent::Gemini);
    let timeout_ms = Agent::Gemini.hook_timeout().as_millis() as u64;
    json!({"hooks": {"BeforeTool": [{"matcher": "*", "hooks": [{"name": "aileron",
        "type": "command", "command": command, "timeout": timeout_ms}]}]}})
}

/// Codex CLI `-c` overrides (root options, before any subcommand) that add
/// Aileron's PreToolUse hook for one invocation (`aileron launch -- codex`),
/// and trust that hook alone: Codex skips an untrusted hook silently, and
/// keeps trust as the hash of the hook's definition under `hooks.state`,
/// keyed by its place in the layer (here the session flags' first group).
/// No other hook's trust changes (`--dangerously-bypass-hook-trust` would
/// switch the check off for all of them).
pub fn codex_session_hooks(aileron: &str) -> Vec<String> {
    let command = hook_command(aileron, Agent::Codex);
    let timeout = Agent::Codex.hook_timeout().as_secs();
    let quoted = serde_json::to_string(&command).unwrap_or_default();
    // Codex hashes the normalized definition as compact JSON, keys sorted.
    let identity = format!(
        r#"{{"event_name":"pre_tool_use","hooks":[{{"async":false,"command":{quoted},"timeout":{timeout},"type":"command"}}],"matcher":"*"}}"#
    );
    let hash: String = sha256(identity.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    vec![
        "-c".to_owned(),
        // A JSON string is a TOML basic string.
        format!(
            r#"hooks.PreToolUse=[{{matcher="*",hooks=[{{type="command",command={quoted},timeout={timeout}}}]}}]"#
        ),
        "-c".to_owned(),
        format!(
            r#"hooks.state={{"/<session-flags>/config.toml:pre_tool_use:0:0"={{trusted_hash="sha256:{hash}"}}}}"#
        ),
    ]
}

/// SHA-256 (FIPS 180-4), for Codex's hook trust hash.
fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 32];
    for (i, x) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

fn json_hooks(t: &Target) -> Option<JsonHooks> {
    let base = if t.user { &t.home } else { &t.cwd };
    let command = hook_command(t.program(), t.agent);
    let timeout = t.agent.hook_timeout().as_secs();
    let group = hook_group(t.program(), t.agent);
    Some(match t.agent {
        Agent::ClaudeCode => JsonHooks {
            // A project's hooks go to Claude Code's local settings, which
            // it keeps out of git: `.claude/settings.json` is the team's.
            file: if t.user {
                base.join(".claude/settings.json")
            } else {
                repository_root(base).join(".claude/settings.local.json")
            },
            root: Vec::new(),
            events: vec![("PreToolUse", group.clone()), ("PermissionRequest", group)],
        },
        Agent::Codex => JsonHooks {
            file: base.join(".codex/hooks.json"),
            root: Vec::new(),
            events: vec![(
                "PreToolUse",
                json!({"matcher": "*", "hooks": [{"type": "command", "command": command,
                    "timeout": timeout, "statusMessage": "aileron"}]}),
            )],
        },
        Agent::Gemini => JsonHooks {
            file: base.join(".gemini/settings.json"),
            root: Vec::new(),
            events: vec![(
                "BeforeTool",
                json!({"matcher": "*", "hooks": [{"name": "aileron", "type": "command",
                    "command": command, "timeout": timeout * 1000}]}),
            )],
        },
        Agent::Cursor => {
            let entry = json!({"command": command, "timeout": timeout, "failClosed": true});
            JsonHooks {
                file: base.join(".cursor/hooks.json"),
                root: vec![("version", json!(1))],
                events: vec![
                    ("beforeShellExecution", entry.clone()),
                    ("beforeMCPExecution", entry.clone()),
                    ("beforeReadFile", entry),
                ],
            }
        }
        Agent::Cline | Agent::Opencode => return None,
    })
}

/// The root of the git work tree `dir` is in (where Claude Code reads
/// `.claude/settings.local.json` since 2.1.211), else `dir`.
fn repository_root(dir: &Path) -> &Path {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir)
}

/// Where an earlier Aileron put Claude Code's project hook: the team's
/// `.claude/settings.json`, with this machine's path to the binary.
fn legacy_json_hooks(t: &Target) -> Option<JsonHooks> {
    if t.user || t.agent != Agent::ClaudeCode {
        return None;
    }
    let mut h = json_hooks(t)?;
    h.file = t.cwd.join(".claude/settings.json");
    Some(h)
}

/// A file Aileron owns outright (Cline's hook script, opencode's plugin).
fn owned_file(t: &Target) -> Option<(PathBuf, String, u32)> {
    let command = hook_command(t.program(), t.agent);
    match t.agent {
        Agent::Cline => {
            let file = if t.user {
                t.home.join("Documents/Cline/Hooks/PreToolUse")
            } else {
                t.cwd.join(".clinerules/hooks/PreToolUse")
            };
            let script = format!(
                "#!/bin/sh\n# {MARKER}: every Cline tool call is decided by Aileron.\n# Remove with `aileron uninstall cline`.\nexec {command}\n"
            );
            Some((file, script, 0o755))
        }
        Agent::Opencode => {
            let file = if t.user {
                t.home.join(".config/opencode/plugins/aileron.js")
            } else {
                t.cwd.join(".opencode/plugins/aileron.js")
            };
            Some((file, opencode_plugin(t.program()), 0o644))
        }
        _ => None,
    }
}

/// The text of opencode's gate plugin, running the hook at `aileron`
/// (installed by `aileron install opencode`, and written for one session
/// by `aileron launch -- opencode`).
pub fn opencode_plugin(aileron: &str) -> String {
    OPENCODE_PLUGIN
        .replace(
            "@AILERON@",
            &serde_json::to_string(aileron).unwrap_or_default(),
        )
        .replace(
            "@TIMEOUT_MS@",
            &(Agent::Opencode.hook_timeout().as_millis() - 2000).to_string(),
        )
}

/// Marks files Aileron wrote, so that uninstall removes only those.
const MARKER: &str = "installed by aileron";

/// opencode's gate: a plugin whose `tool.execute.before` asks `aileron hook
/// opencode` and throws (blocking the call) unless it answered allow.
///
/// The hook runs synchronously and without a shell: `Bun.spawnSync` under
/// opencode (a Bun program), `node:child_process` `spawnSync` elsewhere.
/// Measured in opencode 1.18.33, an asynchronous spawn waits for opencode's
/// busy event loop (the first call of a session took 450-680 ms, later ones
/// a median of 21 ms); the synchronous one does not (50 ms, then 9 ms, most
/// of it the hook's own run). It fails closed: a hook that cannot start,
/// outlasts the timeout, exits non-zero or answers anything but
/// `{"decision":"allow"}` blocks the call.
const OPENCODE_PLUGIN: &str = r#"// installed by aileron: every opencode tool call is decided by Aileron.
// Remove with `aileron uninstall opencode`.
import { spawnSync } from "node:child_process";

const AILERON = @AILERON@;
const TIMEOUT_MS = @TIMEOUT_MS@;

// The hook's answer to `input`: { code, out, err, failed }; never throws.
const runHook =
  typeof Bun !== "undefined" && typeof Bun.spawnSync === "function"
    ? (input) => {
        try {
          const r = Bun.spawnSync([AILERON, "hook", "opencode"], {
            stdin: new TextEncoder().encode(input),
            stdout: "pipe",
            stderr: "pipe",
            timeout: TIMEOUT_MS,
            killSignal: "SIGKILL",
          });
          const failed = r.exitedDueToTimeout
            ? `no answer within ${TIMEOUT_MS} ms`
            : r.signalCode
              ? `killed by ${r.signalCode}`
              : null;
          return {
            code: r.exitCode === null ? -1 : r.exitCode,
            out: r.stdout ? r.stdout.toString() : "",
            err: r.stderr ? r.stderr.toString() : "",
            failed,
          };
        } catch (e) {
          return { code: -1, out: "", err: "", failed: String(e && e.message) };
        }
      }
    : (input) => {
        const r = spawnSync(AILERON, ["hook", "opencode"], {
          input,
          encoding: "utf8",
          timeout: TIMEOUT_MS,
          killSignal: "SIGKILL",
          maxBuffer: 16 * 1024 * 1024,
        });
        const failed = r.error ? String(r.error.message) : r.signal ? `killed by ${r.signal}` : null;
        return { code: r.status === null ? -1 : r.status, out: r.stdout || "", err: r.stderr || "", failed };
      };

export const AileronGate = async ({ directory, worktree }) => ({
  "tool.execute.before": async (input, output) => {
    const run = runHook(
      JSON.stringify({
        hook_event_name: "tool.execute.before",
        tool: input.tool,
        sessionID: input.sessionID,
        callID: input.callID,
        args: output.args,
        directory,
        worktree,
      }),
    );
    let answer = null;
    try {
      answer = JSON.parse(run.out);
    } catch {}
    // Anything but a clean "allow" blocks the call: fail closed.
    if (run.failed === null && run.code === 0 && answer !== null && answer.decision === "allow") {
      return;
    }
    const why =
      run.err.trim() ||
      (answer !== null && typeof answer.reason === "string" && answer.reason) ||
      `aileron: denied: the hook failed (${run.failed || (run.code === 0 ? "its answer is not an allow" : "exit " + run.code)})`;
    throw new Error(why);
  },
});
"#;

/// Installs the hook, and puts the gateway in front of the agent's MCP
/// servers. Idempotent. An MCP configuration that does not parse stops it
/// before anything is written.
pub fn install(t: &Target) -> Result<Report, Error> {
    mcp::check(t)?;
    let mut report = install_hooks(t)?;
    // After the hook: a file that holds both (Gemini CLI's settings) keeps
    // the hook in the bytes uninstall gives back before it takes the hook out.
    mcp::wrap(t, &mut report)?;
    Ok(report)
}

fn install_hooks(t: &Target) -> Result<Report, Error> {
    let mut report = Report::default();
    if let Some(legacy) = legacy_json_hooks(t) {
        // A hook the team committed, naming `aileron` through PATH, already
        // runs here: a second one would decide every call twice.
        if let Some(shared) = hooks_in(&legacy, |i| is_ours(i, t.agent) && !names_a_path(i))? {
            report.notes.push(format!(
                "{} already runs `aileron` through PATH; nothing added to {}",
                shared.display(),
                json_hooks(t)
                    .map(|h| h.file.display().to_string())
                    .unwrap_or_default()
            ));
            return Ok(report);
        }
        // One this machine's earlier install wrote there moves out of the
        // team's file.
        remove_json(
            t,
            &legacy,
            |i| is_ours(i, t.agent) && names_a_path(i),
            &mut report,
        )?;
    }
    if let Some(h) = json_hooks(t) {
        install_json(t, &h, &mut report)?;
    }
    if let Some((file, content, mode)) = owned_file(t) {
        install_owned(&file, &content, mode, &t.data_dir, &mut report)?;
    }
    report.notes.extend(notes(t));
    Ok(report)
}

/// Removes exactly what [`install`] added.
pub fn uninstall(t: &Target) -> Result<Report, Error> {
    let mut report = Report::default();
    mcp::unwrap(t, &mut report)?;
    if let Some(h) = json_hooks(t) {
        uninstall_json(t, &h, &mut report)?;
    }
    if let Some(legacy) = legacy_json_hooks(t) {
        uninstall_json(t, &legacy, &mut report)?;
    }
    if let Some((file, _, _)) = owned_file(t) {
        match std::fs::read_to_string(&file) {
            Ok(text) if text.contains(MARKER) => {
                std::fs::remove_file(&file).map_err(io_error("remove", &file))?;
                let mut record = Record::load(&t.data_dir);
                if let Some(entry) = record.files.remove(&*file.to_string_lossy()) {
                    remove_dirs(&entry.created_dirs);
                    record.save(&t.data_dir)?;
                }
                report.changed.push(file);
            }
            Ok(_) => return Err(Error::NotOurs { file }),
            Err(_) => {}
        }
    }
    Ok(report)
}

/// The files where [`install`] put Aileron's hook for `t` and it still is,
/// and those where an MCP server runs `aileron mcp` (`aileron status`);
/// empty when it is not installed there. `t.aileron`
/// is not compared: a hook of another aileron binary counts.
pub fn installed(t: &Target) -> Vec<PathBuf> {
    // Claude Code's project hook: the local settings, or the team's file
    // (an earlier install, or a portable hook the team committed).
    let mut found: Vec<PathBuf> = [json_hooks(t), legacy_json_hooks(t)]
        .into_iter()
        .flatten()
        .filter_map(|h| hooks_in(&h, |i| is_ours(i, t.agent)).ok().flatten())
        .collect();
    if let Some((file, _, _)) = owned_file(t)
        && std::fs::read_to_string(&file).is_ok_and(|text| text.contains(MARKER))
    {
        found.push(file);
    }
    for file in mcp::wrapped_files(t) {
        if !found.contains(&file) {
            found.push(file);
        }
    }
    found
}

fn notes(t: &Target) -> Vec<String> {
    let mut notes = Vec::new();
    if t.shared() {
        notes.push(format!(
            "the hook runs `{PORTABLE}` through PATH, so that the file can be committed: each teammate needs aileron on PATH"
        ));
        if !on_path(PORTABLE) {
            notes.push(format!(
                "`{PORTABLE}` is not on PATH here: the hook cannot start until it is (the binary is {})",
                t.aileron
            ));
        }
    } else if !t.user && t.agent == Agent::ClaudeCode {
        notes.push(
            "Claude Code's local settings (.claude/settings.local.json) hold this machine's path to aileron: keep the file out of git, as Claude Code does (.claude/settings.json, the team's, is left as it was)".to_owned(),
        );
    }
    notes.extend(agent_notes(t));
    notes
}

/// Whether `program` is an executable file in a `PATH` directory.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| {
            std::fs::metadata(d.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

fn agent_notes(t: &Target) -> Vec<String> {
    match t.agent {
        Agent::Codex => vec![
            "Codex runs a new hook only once you trust it: open /hooks in Codex and trust the aileron hook.".to_owned(),
        ],
        Agent::Gemini => vec![
            "Gemini CLI runs project hooks only in trusted folders, and some releases need hooks enabled in settings.".to_owned(),
        ],
        Agent::Cline => vec!["Enable hooks in Cline's settings (\"Enable Hooks\").".to_owned()],
        Agent::Cursor => vec!["Cursor runs project hooks only in trusted workspaces.".to_owned()],
        _ => Vec::new(),
    }
}

/// Whether the hook entry runs an `aileron` named by its path (this
/// machine's), rather than through `PATH`.
fn names_a_path(node: &Node) -> bool {
    let mut strings = Vec::new();
    node.strings(&mut strings);
    strings
        .iter()
        .any(|s| s.contains(" hook ") && (s.starts_with('/') || s.starts_with("'/")))
}

/// The file of `h` when one of its hook entries satisfies `pick`.
fn hooks_in(h: &JsonHooks, pick: impl Fn(&Node) -> bool) -> Result<Option<PathBuf>, Error> {
    let Some(text) = read_settings(&h.file)? else {
        return Ok(None);
    };
    let root = parse_settings(&h.file, &text)?;
    let found = match root.get("hooks") {
        Some(Node::Object { members, .. }) => members
            .iter()
            .any(|(_, _, arr)| matches!(arr, Node::Array { items, .. } if items.iter().any(&pick))),
        _ => false,
    };
    Ok(found.then(|| h.file.clone()))
}

fn is_ours(node: &Node, agent: Agent) -> bool {
    let mut strings = Vec::new();
    node.strings(&mut strings);
    let suffix = format!(" hook {}", agent.name());
    strings
        .iter()
        .any(|s| s.ends_with(&suffix) && s.contains("aileron"))
}

fn read_settings(file: &Path) -> Result<Option<String>, Error> {
    match std::fs::read_to_string(file) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error("read", file)(e)),
    }
}

fn parse_settings(file: &Path, text: &str) -> Result<Node, Error> {
    let root = jsonedit::parse(text).map_err(|source| Error::SettingsSyntax {
        file: file.to_path_buf(),
        source,
    })?;
    match root {
        Node::Object { .. } => Ok(root),
        _ => Err(Error::SettingsNotObject {
            file: file.to_path_buf(),
        }),
    }
}

fn install_json(t: &Target, h: &JsonHooks, report: &mut Report) -> Result<(), Error> {
    let existing = read_settings(&h.file)?;
    let mut record = Record::load(&t.data_dir);
    let mut created: Vec<String> = Vec::new();
    let mut text = existing.clone().unwrap_or_else(|| "{}\n".to_owned());
    // Each step re-parses: spans move as text goes in.
    for (key, value) in &h.root {
        let root = parse_settings(&h.file, &text)?;
        if root.get(key).is_none() {
            text = jsonedit::apply(&text, &jsonedit::add_member(&text, &root, key, value));
            created.push((*key).to_owned());
        }
    }
    for (event, item) in &h.events {
        let root = parse_settings(&h.file, &text)?;
        let Some(hooks) = root.get("hooks") else {
            let value = json!({ *event: [item] });
            text = jsonedit::apply(&text, &jsonedit::add_member(&text, &root, "hooks", &value));
            created.push("hooks".to_owned());
            created.push(format!("hooks.{event}"));
            continue;
        };
        if !matches!(hooks, Node::Object { .. }) {
            return Err(Error::HooksNotObject {
                file: h.file.clone(),
            });
        }
        match hooks.get(event) {
            None => {
                text = jsonedit::apply(
                    &text,
                    &jsonedit::add_member(&text, hooks, event, &json!([item])),
                );
                created.push(format!("hooks.{event}"));
            }
            Some(arr @ Node::Array { items, .. }) => {
                if !items.iter().any(|i| is_ours(i, t.agent)) {
                    text = jsonedit::apply(&text, &jsonedit::push_item(&text, arr, item));
                }
            }
            Some(_) => {
                return Err(Error::HooksEventNotList {
                    file: h.file.clone(),
                    event,
                });
            }
        }
    }
    if existing.as_deref() == Some(text.as_str()) {
        return Ok(());
    }
    if serde_json::from_str::<Value>(&text).is_err() && jsonedit::parse(&text).is_err() {
        return Err(Error::EditWouldBreak {
            file: h.file.clone(),
        });
    }
    let key = h.file.to_string_lossy().into_owned();
    let entry = record.files.entry(key).or_default();
    entry.created_file |= existing.is_none();
    if existing.is_none() {
        entry.created_dirs = missing_dirs(&h.file);
    }
    for c in created {
        if !entry.created.contains(&c) {
            entry.created.push(c);
        }
    }
    write_atomic(&h.file, &text)?;
    record.save(&t.data_dir)?;
    report.changed.push(h.file.clone());
    Ok(())
}

fn uninstall_json(t: &Target, h: &JsonHooks, report: &mut Report) -> Result<(), Error> {
    remove_json(t, h, |i| is_ours(i, t.agent), report)
}

/// Takes the hook entries `pick` chooses out of `h`'s file, then the keys
/// (and the file) install created for them if nothing else is left there.
fn remove_json(
    t: &Target,
    h: &JsonHooks,
    pick: impl Fn(&Node) -> bool,
    report: &mut Report,
) -> Result<(), Error> {
    let Some(original) = read_settings(&h.file)? else {
        return Ok(());
    };
    let mut text = original.clone();
    // Our entries, last first so earlier spans stay put.
    loop {
        let root = parse_settings(&h.file, &text)?;
        let mut edit = None;
        if let Some(Node::Object { members, .. }) = root.get("hooks") {
            for (_, _, arr) in members {
                if let Node::Array { items, .. } = arr
                    && let Some(i) = items.iter().rposition(&pick)
                {
                    edit = Some(jsonedit::remove_item(arr, i));
                    break;
                }
            }
        }
        match edit {
            Some(e) => text = jsonedit::apply(&text, &e),
            None => break,
        }
    }
    let mut record = Record::load(&t.data_dir);
    let key = h.file.to_string_lossy().into_owned();
    let entry = record.files.remove(&key).unwrap_or_default();
    // Then the keys install created, deepest first, if nothing else is in them.
    let mut created = entry.created.clone();
    created.sort_by_key(|c| std::cmp::Reverse(c.matches('.').count()));
    // Twice: a key may only be removable once another has gone.
    for path in created.iter().chain(&created) {
        let root = parse_settings(&h.file, &text)?;
        let (parent, name) = match path.rsplit_once('.') {
            Some((p, n)) => (root.get(p), n),
            None => (Some(&root), path.as_str()),
        };
        let name = name.to_owned();
        let name = name.as_str();
        let Some(parent) = parent else { continue };
        let removable = match parent.get(name) {
            Some(Node::Object { members, .. }) => members.is_empty(),
            Some(Node::Array { items, .. }) => items.is_empty(),
            // A scalar install added (Cursor's `version`) goes with the file's hooks.
            Some(Node::Scalar { .. }) => root.get("hooks").is_none(),
            None => false,
        };
        if removable && let Some(e) = jsonedit::remove_member(parent, name) {
            text = jsonedit::apply(&text, &e);
        }
    }
    if text == original {
        return Ok(());
    }
    let empty = matches!(parse_settings(&h.file, &text)?, Node::Object { ref members, .. } if members.is_empty());
    if entry.created_file && empty {
        std::fs::remove_file(&h.file).map_err(io_error("remove", &h.file))?;
        remove_dirs(&entry.created_dirs);
    } else {
        write_atomic(&h.file, &text)?;
    }
    record.save(&t.data_dir)?;
    report.changed.push(h.file.clone());
    Ok(())
}

fn install_owned(
    file: &Path,
    content: &str,
    mode: u32,
    data_dir: &Path,
    report: &mut Report,
) -> Result<(), Error> {
    match std::fs::read_to_string(file) {
        Ok(existing) if existing == content => return Ok(()),
        Ok(existing) if !existing.contains(MARKER) => {
            return Err(Error::ExistsNotOurs {
                file: file.to_path_buf(),
            });
        }
        _ => {}
    }
    let dirs = missing_dirs(file);
    write_atomic(file, content)?;
    if !dirs.is_empty() {
        let mut record = Record::load(data_dir);
        record
            .files
            .entry(file.to_string_lossy().into_owned())
            .or_default()
            .created_dirs = dirs;
        record.save(data_dir)?;
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode))
        .map_err(io_error("set the mode of", file))?;
    report.changed.push(file.to_path_buf());
    Ok(())
}

/// The directories above `file` that do not exist yet, deepest first.
fn missing_dirs(file: &Path) -> Vec<String> {
    file.ancestors()
        .skip(1)
        .take_while(|d| !d.exists())
        .map(|d| d.to_string_lossy().into_owned())
        .collect()
}

/// Removes directories install made, if nothing else has been put in them.
fn remove_dirs(dirs: &[String]) {
    for d in dirs {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
    }
}

/// An [`Error::Io`] of `action` on `path`, for `map_err`.
fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

fn write_atomic(file: &Path, text: &str) -> Result<(), Error> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(io_error("create", dir))?;
    }
    let tmp = file.with_extension(format!("aileron-{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).map_err(io_error("write", &tmp))?;
    // Keep the mode of the file being replaced.
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, file).map_err(io_error("replace", file))
}

/// What install created, so that uninstall can take it out again.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Record {
    files: BTreeMap<String, Created>,
    /// MCP configuration files, by canonical path.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    mcp: BTreeMap<String, mcp::WrappedFile>,
}

#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
struct Created {
    created_file: bool,
    /// Directories install made for the file, deepest first.
    #[serde(default)]
    created_dirs: Vec<String>,
    /// Dotted key paths install added (`hooks`, `hooks.PreToolUse`).
    created: Vec<String>,
}

impl Record {
    fn path(data_dir: &Path) -> PathBuf {
        data_dir.join("installed.json")
    }

    fn load(data_dir: &Path) -> Record {
        std::fs::read(Self::path(data_dir))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn save(&self, data_dir: &Path) -> Result<(), Error> {
        use std::os::unix::fs::PermissionsExt;
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        let path = Self::path(data_dir);
        write_atomic(&path, &text)?;
        // The MCP servers' entries may hold their credentials.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(io_error("set the mode of", &path))
    }
}

#[cfg(test)]
mod codex_session_tests {
    use super::*;

    #[test]
    fn sha256_matches_the_standard_vectors() {
        let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(sha256(&[b'a'; 1000])),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
    }

    #[test]
    fn codex_session_hooks_trust_exactly_the_hook_they_add() {
        let args = codex_session_hooks("/opt/aileron");
        assert_eq!(args.len(), 4);
        assert_eq!(
            args[1],
            r#"hooks.PreToolUse=[{matcher="*",hooks=[{type="command",command="/opt/aileron hook codex",timeout=600}]}]"#
        );
        assert!(
            args[3].starts_with(
                r#"hooks.state={"/<session-flags>/config.toml:pre_tool_use:0:0"={trusted_hash="sha256:"#
            ),
            "{}",
            args[3]
        );
    }
}
