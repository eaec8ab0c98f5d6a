//! `aileron launch -- PROGRAM [ARGS]`: run an agent with its shell pointed
//! at `aileron-sh`, a fresh session, and a scrubbed environment.

use super::{EXIT_POLICY, current_dir, load};
use aileron_config::LoadOptions;
use aileron_engine::glob::Glob;
use aileron_session::{Config, Decider, TtyPrompter};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Args {
    pub policy: Option<PathBuf>,
    pub program: Vec<String>,
}

pub fn run(args: Args) -> Result<u8, String> {
    let cwd = current_dir()?;
    // Refuse to start under a policy that does not load: fail closed, say why.
    let loaded = match load(args.policy.clone(), cwd.clone()) {
        Ok(l) => l,
        Err(diags) => {
            eprintln!("{diags}");
            eprintln!("aileron: not launching: the policy does not load");
            return Ok(EXIT_POLICY);
        }
    };
    let (program, program_args) = args.program.split_first().ok_or("nothing to launch")?;
    let shim = shim_path()?;
    let session_id = random_id()?;
    let runtime = runtime_dir(&session_id)?;
    let bin = runtime.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    let real_shell = real_shell(&runtime);
    let shell_name = Path::new(&real_shell)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("bash")
        .to_owned();
    // Agents check the shell's name (Claude Code wants bash or zsh), so the shim wears it.
    let shim_link = bin.join(&shell_name);
    symlink(&shim, &shim_link).map_err(|e| format!("cannot link {}: {e}", shim_link.display()))?;
    if shell_name != "bash" {
        let _ = symlink(&shim, bin.join("bash"));
    }
    let socket = runtime.join("session.sock");

    let (env, secrets) = scrubbed_env(&loaded.policy.env.scrub, &loaded.policy.env.passthrough);
    let agent = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned);
    let mut opts = LoadOptions::from_env(cwd.clone());
    opts.policy_path = args
        .policy
        .map(|p| if p.is_absolute() { p } else { cwd.join(p) });
    let decider = Decider::new(
        Config {
            cache_dir: Some(opts.data_dir.join("cache")),
            session_id: Some(session_id.clone()),
            agent: agent.clone(),
            real_shell: real_shell.clone(),
            secrets,
            adapter: "shim".into(),
            load: opts,
        },
        Box::new(TtyPrompter::default()),
    );
    let listener = std::os::unix::net::UnixListener::bind(&socket)
        .map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
    aileron_session::server::serve(listener, Arc::new(decider));

    let shim_shell = shim_link.to_string_lossy().into_owned();
    let mut args: Vec<String> = program_args.to_vec();
    if agent.as_deref() == Some("claude") {
        // Claude Code takes hooks and disallowed tools for one session on
        // its command line, so every tool call (not only shell commands)
        // is decided here without touching the user's settings files.
        let settings = runtime.join("claude-settings.json");
        let aileron = std::env::current_exe()
            .map_err(|e| format!("cannot find the aileron executable: {e}"))?;
        let json = aileron_hooks::install::claude_code_session_settings(&aileron.to_string_lossy());
        std::fs::write(&settings, json.to_string())
            .map_err(|e| format!("cannot write {}: {e}", settings.display()))?;
        let mut extra = vec![
            "--settings".to_owned(),
            settings.to_string_lossy().into_owned(),
        ];
        let disabled = loaded.policy.disabled_tools(CLAUDE_CODE_TOOLS);
        if !disabled.is_empty() {
            extra.push("--disallowedTools".to_owned());
            extra.push(disabled.join(","));
        }
        args.splice(0..0, extra);
    }
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).env_clear().envs(env);
    cmd.env("SHELL", &shim_shell)
        .env("CLAUDE_CODE_SHELL", &shim_shell)
        .env("GOOSE_SHELL", &shim_shell)
        .env("AILERON_SESSION", &session_id)
        .env("AILERON_SOCKET", &socket)
        .env("AILERON_REAL_SHELL", &real_shell);
    if agent.as_deref() == Some("gemini") {
        // Gemini CLI runs `bash` by name from PATH and ignores $SHELL.
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", bin.display()));
    }
    let status = cmd.status();
    let _ = std::fs::remove_dir_all(&runtime);
    let status = status.map_err(|e| format!("cannot run {program}: {e}"))?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(sig)) => 128u8.wrapping_add(sig as u8),
        _ => 1,
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

/// `aileron-sh` beside this executable.
fn shim_path() -> Result<PathBuf, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find the aileron executable: {e}"))?;
    let shim = exe.with_file_name("aileron-sh");
    if shim.is_file() {
        Ok(shim)
    } else {
        Err(format!("{} is missing; reinstall aileron", shim.display()))
    }
}

/// The shell to exec after a decision: the user's `$SHELL` when it is a
/// real absolute path (not a shim), else bash. Recorded once, here.
fn real_shell(runtime: &Path) -> String {
    let candidate = std::env::var("SHELL").unwrap_or_default();
    let p = Path::new(&candidate);
    let usable = p.is_absolute()
        && std::fs::canonicalize(p).is_ok_and(|real| {
            real.file_name()
                .is_some_and(|n| n != "aileron-sh" && n != "aileron")
                && !real.starts_with(runtime)
        })
        && std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    if usable {
        candidate
    } else if Path::new("/bin/bash").exists() {
        "/bin/bash".into()
    } else {
        "/bin/sh".into()
    }
}

/// The environment without scrubbed variables (passthrough wins), and the
/// scrubbed values, which the audit log must never show.
pub fn scrubbed_env(
    scrub: &[String],
    passthrough: &[String],
) -> (Vec<(String, String)>, Vec<String>) {
    let scrub: Vec<Glob> = scrub.iter().map(|p| Glob::plain(p)).collect();
    let keep: Vec<Glob> = passthrough.iter().map(|p| Glob::plain(p)).collect();
    let mut env = Vec::new();
    let mut secrets = Vec::new();
    for (k, v) in std::env::vars() {
        let scrubbed = scrub.iter().any(|g| g.is_match(&k)) && !keep.iter().any(|g| g.is_match(&k));
        // Nothing from an outer session leaks in.
        if k.starts_with("AILERON_") {
            continue;
        }
        if scrubbed {
            secrets.push(v);
        } else {
            env.push((k, v));
        }
    }
    (env, secrets)
}

fn random_id() -> Result<String, String> {
    let mut bytes = [0u8; 12];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A private directory for the session's socket and shim links.
fn runtime_dir(id: &str) -> Result<PathBuf, String> {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| Path::new(d).is_dir())
        .map(|d| PathBuf::from(d).join("aileron"))
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/aileron-{uid}")));
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot secure {}: {e}", base.display()))?;
    let dir = base.join(id);
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}
