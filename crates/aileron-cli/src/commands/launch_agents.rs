//! What `aileron launch` does for a known agent so that the session sees
//! its tool calls, not only its shell: per-session hook settings on the
//! agent's command line or in its environment, never in the user's files.
//! One function per agent; an agent with no per-session configuration gets
//! a note saying which of its actions the session cannot see.

use aileron_cli::Error;
use aileron_engine::Policy;
use std::path::{Path, PathBuf};

/// What a known agent is started with under `aileron launch`.
#[derive(Default)]
pub struct AgentSetup {
    /// Put before the user's arguments.
    pub args: Vec<String>,
    /// Added to the agent's environment.
    pub env: Vec<(String, String)>,
    /// Said on the terminal and in the session's audit note.
    pub notes: Vec<String>,
    /// Said in the session's audit note only.
    pub recorded: Vec<String>,
    /// Places in the session's runtime directory the agent writes (a
    /// session home): left writable when the kernel locks the rest.
    pub writable: Vec<PathBuf>,
    /// Files in those places that stay read-only (the hook settings).
    pub locked: Vec<PathBuf>,
    /// Files the agent keeps in the box under another name, copied back
    /// when the session ends.
    pub copied_back: Vec<aileron_cli::launch_box::CopiedBack>,
    /// The agent's settings file for this session only (JSON with
    /// comments), where settings the box needs are written.
    pub settings: Option<PathBuf>,
}

/// What the session needs to set an agent up.
pub struct SetupContext<'a> {
    /// The aileron executable the hooks run.
    pub aileron: &'a Path,
    /// The session's private runtime directory (removed at the end).
    pub runtime: &'a Path,
    /// The directory holding the shim under the shell's names.
    pub shim_bin: &'a Path,
    /// The session's policy.
    pub policy: &'a Policy,
    /// The agent's environment as launch will pass it.
    pub env: &'a [(String, String)],
    /// The agent runs in the box (its writes confined).
    pub boxed: bool,
}

/// The setup for `agent` (the program's file name), if it is a known agent.
pub fn setup(agent: &str, cx: &SetupContext) -> Result<AgentSetup, Error> {
    let mut setup = match agent {
        "claude" => claude_code(cx),
        "gemini" => gemini_cli(cx),
        "codex" => codex(cx),
        "opencode" => opencode(cx),
        _ => Ok(AgentSetup::default()),
    }?;
    if cx.boxed {
        self_updater_off(agent, &mut setup)?;
    }
    Ok(setup)
}

/// How each agent's self-updater is turned off for one run: it would
/// replace the agent's own program, outside the box, with what it
/// downloaded in it.
enum UpdaterOff {
    /// A variable set in the agent's environment.
    Env(&'static str, &'static str),
    /// Arguments put before the user's.
    Args(&'static [&'static str]),
    /// Keys of an object of the session's settings file
    /// ([`AgentSetup::settings`]) set to false.
    SettingsOff(&'static str, &'static [&'static str]),
}

/// The agents whose self-updater the box turns off, and how.
const SELF_UPDATERS: &[(&str, &str, UpdaterOff)] = &[
    (
        "claude",
        "Claude Code",
        UpdaterOff::Env("DISABLE_AUTOUPDATER", "1"),
    ),
    (
        "opencode",
        "opencode",
        UpdaterOff::Env("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ),
    (
        "codex",
        "Codex",
        UpdaterOff::Args(&["-c", "check_for_update_on_startup=false"]),
    ),
    // Gemini CLI 0.61: `general.enableAutoUpdate` (formerly
    // `disableAutoUpdate`) keeps it from running `npm install -g`, and
    // `general.enableAutoUpdateNotification` (formerly `disableUpdateNag`)
    // from asking the registry at all; no variable turns either off.
    (
        "gemini",
        "Gemini CLI",
        UpdaterOff::SettingsOff(
            "general",
            &["enableAutoUpdate", "enableAutoUpdateNotification"],
        ),
    ),
];

/// Turns `agent`'s self-updater off and says so in one line (a settings
/// file that cannot be changed stops the launch).
fn self_updater_off(agent: &str, setup: &mut AgentSetup) -> Result<(), Error> {
    let Some((_, name, off)) = SELF_UPDATERS.iter().find(|(a, _, _)| *a == agent) else {
        return Ok(());
    };
    match off {
        UpdaterOff::Env(k, v) => setup.env.push(((*k).to_owned(), (*v).to_owned())),
        UpdaterOff::Args(a) => setup.args.extend(a.iter().map(|s| (*s).to_owned())),
        UpdaterOff::SettingsOff(object, keys) => {
            let Some(file) = &setup.settings else {
                setup.notes.push(format!(
                    "{name}'s self-updater stays on: the session has no settings file of its own to turn it off in (the box keeps it from writing the agent's program)"
                ));
                return Ok(());
            };
            let text = std::fs::read_to_string(file).map_err(Error::io("read", file))?;
            let off = aileron_cli::launch_box::settings_off(&text, object, keys).map_err(|e| {
                Error::UpdaterOff {
                    path: file.clone(),
                    source: Box::new(e),
                }
            })?;
            std::fs::write(file, off).map_err(Error::io("write", file))?;
        }
    }
    setup.recorded.push(format!(
        "{name}'s self-updater is off in the box (it would replace the agent's program outside it): update it outside a session"
    ));
    Ok(())
}

/// Claude Code takes hooks and disallowed tools for one session on its
/// command line, so every tool call (not only shell commands) is decided
/// here without touching the user's settings files.
fn claude_code(cx: &SetupContext) -> Result<AgentSetup, Error> {
    let settings = cx.runtime.join("claude-settings.json");
    let json = aileron_hooks::install::claude_code_session_settings(&cx.aileron.to_string_lossy());
    std::fs::write(&settings, json.to_string()).map_err(Error::io("write", &settings))?;
    let mut args = vec![
        "--settings".to_owned(),
        settings.to_string_lossy().into_owned(),
    ];
    let disabled = cx.policy.disabled_tools(CLAUDE_CODE_TOOLS);
    if !disabled.is_empty() {
        args.push("--disallowedTools".to_owned());
        args.push(disabled.join(","));
    }
    let mut setup = AgentSetup {
        args,
        ..AgentSetup::default()
    };
    if cx.boxed {
        claude_code_config_in_box(cx, &mut setup)?;
    }
    Ok(setup)
}

/// In the box, Claude Code keeps `~/.claude.json` in `~/.claude` (its
/// `CLAUDE_CONFIG_DIR`, the same directory it uses anyway), where the box
/// lets it replace the file; the session copies it there at the start and
/// back at the end. A `CLAUDE_CONFIG_DIR` the user set is left alone.
fn claude_code_config_in_box(cx: &SetupContext, setup: &mut AgentSetup) -> Result<(), Error> {
    let var = |name: &str| cx.env.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    if var("CLAUDE_CONFIG_DIR").is_some() {
        return Ok(());
    }
    let Some(home) = var("HOME").filter(|h| h.starts_with('/')) else {
        return Ok(());
    };
    let config_dir = Path::new(home).join(".claude");
    std::fs::create_dir_all(&config_dir).map_err(Error::io("create", &config_dir))?;
    let original = Path::new(home).join(".claude.json");
    let copy = config_dir.join(".claude.json");
    let at_start = std::fs::read(&original).ok();
    match &at_start {
        Some(bytes) => std::fs::write(&copy, bytes).map_err(Error::io("write", &copy))?,
        None => {
            let _ = std::fs::remove_file(&copy);
        }
    }
    setup.env.push((
        "CLAUDE_CONFIG_DIR".to_owned(),
        config_dir.to_string_lossy().into_owned(),
    ));
    setup.copied_back.push(aileron_cli::launch_box::CopiedBack {
        original,
        copy,
        at_start,
        inert: Some(&aileron_cli::launch_box::CLAUDE_STATE),
    });
    Ok(())
}

/// Gemini CLI runs `bash` by name from PATH and ignores `$SHELL`: the shim
/// goes first on PATH. Its other tool calls are decided by Aileron's
/// BeforeTool hook, for this session only. Gemini CLI 0.61 takes no
/// settings on its command line, and reads a system settings file
/// (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`) only when the file and every
/// directory above it belong to root and no one else can write them, which
/// a session's directory never does for a user. So the session gets its own
/// Gemini home (`GEMINI_CLI_HOME`) in the runtime directory: every entry of
/// the user's home is a link to the real one, and so is every entry of
/// `~/.gemini` but `settings.json`, which is the user's settings with the
/// hook added. History, credentials, trust and extensions stay the user's;
/// the user's files are not changed.
fn gemini_cli(cx: &SetupContext) -> Result<AgentSetup, Error> {
    let var = |name: &str| {
        cx.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let path = var("PATH").unwrap_or_default();
    let mut setup = AgentSetup {
        env: vec![(
            "PATH".to_owned(),
            format!("{}:{path}", cx.shim_bin.display()),
        )],
        ..AgentSetup::default()
    };
    let home = var("GEMINI_CLI_HOME")
        .or_else(|| var("HOME"))
        .filter(|h| h.starts_with('/'));
    match home {
        Some(home) => {
            let session_home = gemini_session_home(cx, Path::new(home), path)?;
            // Gemini writes its state there; its settings carry the hook.
            let settings = session_home.join(".gemini/settings.json");
            setup.locked.push(settings.clone());
            setup.settings = Some(settings);
            setup.writable.push(session_home.clone());
            setup.env.push((
                "GEMINI_CLI_HOME".to_owned(),
                session_home.to_string_lossy().into_owned(),
            ));
        }
        None => setup.notes.push(
            "Gemini CLI: no home directory to take its settings from, so only its shell commands are decided (not its file, web and MCP tools)".to_owned(),
        ),
    }
    if var("GEMINI_RESTRICTED_MODE") == Some("true")
        || var("GEMINI_CLI_TRUST_WORKSPACE") == Some("false")
    {
        setup.notes.push(
            "Gemini CLI runs no hooks in a folder it does not trust: only its shell commands are decided (not its file, web and MCP tools)".to_owned(),
        );
    }
    Ok(setup)
}

/// Files Gemini CLI may create in `~/.gemini` during a session: linked
/// before they exist, so that they land in the user's `~/.gemini`.
const GEMINI_STATE_FILES: &[&str] = &[
    "projects.json",
    "installation_id",
    "google_accounts.json",
    "oauth_creds.json",
    "trustedFolders.json",
    "mcp-oauth-tokens.json",
    "a2a-oauth-tokens.json",
    "policy_integrity.json",
    "keybindings.json",
];

/// The session's Gemini home (see [`gemini_cli`]), built from `home`.
fn gemini_session_home(
    cx: &SetupContext,
    home: &Path,
    path: &str,
) -> Result<std::path::PathBuf, Error> {
    use std::os::unix::fs::symlink;
    let real = home.join(".gemini");
    let session_home = cx.runtime.join("gemini-home");
    let dir = session_home.join(".gemini");
    std::fs::create_dir_all(&dir).map_err(Error::io("set up", &dir))?;
    // Gemini's own state directories, made where Gemini makes them on its
    // first run, so that what it writes there outlives the session.
    for d in ["tmp", "history"] {
        let _ = std::fs::create_dir_all(real.join(d));
    }
    let names = |d: &Path| -> Vec<std::ffi::OsString> {
        std::fs::read_dir(d)
            .map(|r| r.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default()
    };
    for name in names(home) {
        if name != ".gemini" {
            symlink(home.join(&name), session_home.join(&name))
                .map_err(Error::io("set up", &session_home.join(&name)))?;
        }
    }
    let mut inner = names(&real);
    inner.extend(GEMINI_STATE_FILES.iter().map(std::ffi::OsString::from));
    inner.sort();
    inner.dedup();
    for name in inner {
        if name != "settings.json" {
            symlink(real.join(&name), dir.join(&name))
                .map_err(Error::io("set up", &dir.join(&name)))?;
        }
    }
    let user = real.join("settings.json");
    let text = match std::fs::read_to_string(&user) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "{}".to_owned(),
        Err(e) => return Err(Error::io("read", &user)(e)),
    };
    let hook = aileron_hooks::install::gemini_session_settings(&cx.aileron.to_string_lossy());
    let mut group = hook["hooks"]["BeforeTool"][0].clone();
    // Gemini CLI runs a hook as `bash -c COMMAND`, bash found on the hook's
    // PATH: the agent's own, without the shim, so that the hook is not a
    // shell command of the session to decide (and refuse) first.
    group["hooks"][0]["env"] = serde_json::json!({"PATH": path});
    let merged = gemini_add_hook(&text, &group).map_err(|e| Error::AddGeminiHook {
        path: user.clone(),
        source: Box::new(e),
    })?;
    let settings = dir.join("settings.json");
    std::fs::write(&settings, merged).map_err(Error::io("set up", &settings))?;
    Ok(session_home)
}

/// `text` (Gemini settings, JSON with comments) with `group` added to
/// `hooks.BeforeTool`; every other byte as it was.
fn gemini_add_hook(text: &str, group: &serde_json::Value) -> Result<String, Error> {
    use aileron_hooks::jsonedit::{self, Node};
    let text = if text.trim().is_empty() { "{}" } else { text };
    let root = jsonedit::parse(text)?;
    if !matches!(root, Node::Object { .. }) {
        return Err(Error::SettingsNotAnObject);
    }
    let edit = match root.get("hooks") {
        None => jsonedit::add_member(
            text,
            &root,
            "hooks",
            &serde_json::json!({"BeforeTool": [group]}),
        ),
        Some(hooks @ Node::Object { .. }) => match hooks.get("BeforeTool") {
            None => jsonedit::add_member(text, hooks, "BeforeTool", &serde_json::json!([group])),
            Some(list @ Node::Array { .. }) => jsonedit::push_item(text, list, group),
            Some(_) => return Err(Error::KeyNotAList("hooks.BeforeTool")),
        },
        Some(_) => return Err(Error::KeyNotAnObject("hooks")),
    };
    Ok(jsonedit::apply(text, &edit))
}

/// Codex CLI takes config overrides for one invocation (`-c`, before any
/// subcommand), hooks among them: the session's PreToolUse hook, trusted
/// by its hash, decides every `exec_command`, `apply_patch`, `view_image`
/// and MCP call. Codex runs commands with the passwd entry's shell, never
/// `$SHELL` or `PATH`, so the shim does not see them.
fn codex(cx: &SetupContext) -> Result<AgentSetup, Error> {
    Ok(AgentSetup {
        args: aileron_hooks::install::codex_session_hooks(&cx.aileron.to_string_lossy()),
        notes: vec![
            "Codex runs its commands with the login shell from the passwd entry, not $SHELL: each tool call is decided by a hook, but what the model types into a running command with write_stdin (an interactive shell, a REPL) is not; only --enforce exec decides the programs that starts".to_owned(),
        ],
        ..AgentSetup::default()
    })
}

/// Claude Code's built-in tools, for `--disallowedTools` (SPEC 10).
const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Bash",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "Read",
    "Glob",
    "Grep",
    "LS",
    "WebFetch",
    "WebSearch",
    "Agent",
    "Task",
    "TodoWrite",
];

/// opencode loads plugins named in `OPENCODE_CONFIG_CONTENT`, a config
/// merged over the user's own files: the session's gate plugin (written in
/// the runtime directory) decides every tool call, the user's
/// `OPENCODE_CONFIG_CONTENT` is kept with the plugin added to its list.
/// opencode runs its bash tool with `$SHELL -c`, the shim, as well.
fn opencode(cx: &SetupContext) -> Result<AgentSetup, Error> {
    let dir = cx.runtime.join("opencode");
    std::fs::create_dir_all(&dir).map_err(Error::io("create", &dir))?;
    let plugin = dir.join("aileron.js");
    std::fs::write(
        &plugin,
        aileron_hooks::install::opencode_plugin(&cx.aileron.to_string_lossy()),
    )
    .map_err(Error::io("write", &plugin))?;
    let user = cx
        .env
        .iter()
        .find(|(k, _)| k == "OPENCODE_CONFIG_CONTENT")
        .map(|(_, v)| v.as_str())
        .unwrap_or_default();
    let content = opencode_add_plugin(user, &file_url(&plugin))
        .map_err(|e| Error::AddGatePlugin(Box::new(e)))?;
    let mut notes = Vec::new();
    if cx
        .env
        .iter()
        .any(|(k, v)| k == "OPENCODE_PURE" && !v.is_empty() && v != "0" && v != "false")
    {
        notes.push(
            "OPENCODE_PURE is set: opencode loads no plugins, so only its bash tool's commands are decided, not its reads, edits or fetches".to_owned(),
        );
    }
    Ok(AgentSetup {
        env: vec![("OPENCODE_CONFIG_CONTENT".to_owned(), content)],
        notes,
        ..AgentSetup::default()
    })
}

/// `text` (an opencode config, JSON with comments, maybe empty) with `url`
/// added to its `plugin` list; every other byte as it was.
fn opencode_add_plugin(text: &str, url: &str) -> Result<String, Error> {
    use aileron_hooks::jsonedit::{self, Node};
    let text = if text.trim().is_empty() { "{}" } else { text };
    let root = jsonedit::parse(text)?;
    if !matches!(root, Node::Object { .. }) {
        return Err(Error::ConfigNotAnObject);
    }
    let item = serde_json::json!(url);
    let edit = match root.get("plugin") {
        None => jsonedit::add_member(text, &root, "plugin", &serde_json::json!([item])),
        Some(list @ Node::Array { .. }) => jsonedit::push_item(text, list, &item),
        Some(_) => return Err(Error::KeyNotAList("plugin")),
    };
    Ok(jsonedit::apply(text, &edit))
}

/// `file://` URL of an absolute path, percent-encoding what a URL path cannot hold.
fn file_url(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut url = "file://".to_owned();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            url.push(char::from(b));
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}
