//! `aileron-sh`: the shell an agent gets under `aileron launch` (the binary
//! is built by `aileron-cli`, so that one `cargo install` brings both).
//!
//! It reads what the agent asked the shell to run, has it decided (by the
//! launch session over its socket, or on its own when called directly),
//! and then either `exec`s the real shell so that it runs only what was
//! decided, or runs nothing, prints one line and exits 126.
//!
//! Only what was decided: the real shell is neither a login shell nor
//! interactive and reads no start-up file, the variables it would run as
//! code are taken out of its environment, options that name a file for it
//! to run are refused, and a script runs as the text that was read and
//! decided, not from its file again (see `aileron_shell::invocation`).
//!
//! Start-up is lean: no async runtime, no argument-parsing library, and the
//! compiled policy comes from the on-disk cache when its sources are unchanged.
//! Under a launch session a `-c` line does not even reach [`main`]: the
//! binary's entry point asks the session first ([`prestart`], x86-64 Linux).

mod error;
#[cfg(all(
    target_os = "linux",
    target_arch = "x86_64",
    target_pointer_width = "64"
))]
pub mod prestart;
mod stdin_script;

pub use error::Error;

use aileron_config::LoadOptions;
use aileron_session::{Config, Decider, Request, TtyPrompter};
use aileron_shell::harness;
use aileron_shell::invocation::{self, Invocation};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

/// Exit status of a command that was not allowed to run (as bash's "cannot execute").
const EXIT_DENIED: u8 = 126;

/// The whole shim: parse, decide, exec or refuse. Returns only to refuse,
/// with the exit status.
pub fn main() -> u8 {
    let mut argv = std::env::args_os().map(|a| a.to_string_lossy().into_owned());
    let arg0 = argv.next().unwrap_or_else(|| "aileron-sh".into());
    let args: Vec<String> = argv.collect();
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            return deny(&format!(
                "aileron: denied: cannot read the working directory: {e}"
            ));
        }
    };
    let invocation = invocation::parse(&args);
    if invocation != Invocation::Probe
        && let Some(why) = unsafe_locale()
    {
        return deny(&format!("aileron: denied: {why}"));
    }
    // What the real shell is given: no login or interactive mode, no
    // option that makes it run a file.
    let mut shell_args = match invocation::checked_args(&args) {
        Ok(a) => a,
        Err(refused) => return deny(&refused.to_string()),
    };
    let is_command = matches!(invocation, Invocation::Command(_));
    let line = match invocation {
        Invocation::Probe => {
            let shell = standalone_shell();
            return exec(&shell, invocation::real_shell_argv(&shell, shell_args));
        }
        // Agent wrappers are taken off by whoever decides, with the home
        // directory it knows (below, or the launch session).
        Invocation::Command(cmd) => cmd,
        // Read once: what runs is the text decided, not the file again.
        Invocation::Script(path) => match read_script(&path, &cwd.join(&path)) {
            Ok(text) => {
                shell_args = invocation::with_script_text(&shell_args, text.clone());
                text
            }
            // What cannot be read cannot be checked.
            Err(e) => return deny(&format!("aileron: denied: {e}")),
        },
        // Not a terminal: the program comes from stdin. Read it, decide it,
        // and hand the same bytes to the real shell through a pipe.
        Invocation::Shell if !stdin_is_terminal() => match stdin_script::take() {
            Ok(text) => text,
            Err(e) => return deny(&format!("aileron: denied: {e}")),
        },
        Invocation::Shell => {
            let mut l = shell_name(&arg0).to_owned();
            for a in &args {
                l.push(' ');
                l.push_str(a);
            }
            l
        }
    };
    let mut req = Request {
        line,
        cwd: cwd.to_string_lossy().into_owned(),
        argv: args,
        ..Request::default()
    };
    let session_answer = std::env::var_os("AILERON_SOCKET")
        .filter(|s| !s.is_empty())
        .and_then(|socket| {
            aileron_session::server::request(std::path::Path::new(&socket), &req).ok()
        });
    // Kept alive until the exec, which frees it faster than dropping would.
    let decider;
    let response = match session_answer {
        Some(r) => r,
        // Called directly, or the session is gone: decide here, fail closed.
        None => {
            decider = standalone(cwd);
            if is_command {
                req.line = harness::model_command(std::mem::take(&mut req.line), &decider.home());
            }
            decider.decide(&req)
        }
    };
    if !response.allow {
        return deny(response.message.as_deref().unwrap_or("aileron: denied"));
    }
    let shell = &response.real_shell;
    exec(shell, invocation::real_shell_argv(shell, shell_args))
}

/// The longest script the shim reads: it runs as one argument (`-c TEXT`),
/// and Linux takes at most 128 KiB per argument, its NUL included.
pub(crate) const MAX_SCRIPT: usize = 128 * 1024 - 1;

/// Reads the script `shown` (at `file`) once (a FIFO or a device is never
/// read twice), as the text that is decided and then run.
fn read_script(shown: &str, file: &std::path::Path) -> Result<String, Error> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_SCRIPT as u64 + 1).read_to_end(&mut bytes))
        .map_err(|source| Error::ScriptUnreadable {
            path: shown.to_owned(),
            source,
        })?;
    if bytes.len() > MAX_SCRIPT {
        return Err(Error::ScriptTooLong {
            path: shown.to_owned(),
        });
    }
    if bytes.contains(&0) {
        return Err(Error::ScriptHoldsNul {
            path: shown.to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Why bash would read the line in another character set than the
/// analysis does, if it would (see `aileron_shell::locale`).
fn unsafe_locale() -> Option<String> {
    aileron_shell::locale::unsafe_environment(|k| {
        std::env::var_os(k).map(|v| v.to_string_lossy().into_owned())
    })
}

fn standalone(cwd: PathBuf) -> Decider {
    let load = LoadOptions::from_env(cwd);
    let cfg = Config {
        cache_dir: Some(load.data_dir.join("cache")),
        session_id: std::env::var("AILERON_SESSION")
            .ok()
            .filter(|s| !s.is_empty()),
        agent: None,
        real_shell: standalone_shell(),
        secrets: Vec::new(),
        adapter: "shim".into(),
        load,
    };
    Decider::new(cfg, Box::new(TtyPrompter::default()))
}

/// Without a session, the real shell is a fixed path, never one from
/// `PATH` or a variable the agent can change.
fn standalone_shell() -> String {
    if std::path::Path::new("/bin/bash").exists() {
        "/bin/bash".into()
    } else {
        "/bin/sh".into()
    }
}

fn shell_name(arg0: &str) -> &str {
    let base = arg0
        .rsplit('/')
        .next()
        .unwrap_or(arg0)
        .trim_start_matches('-');
    if base.is_empty() || base == "aileron-sh" {
        "bash"
    } else {
        base
    }
}

/// Execs `shell` with `argv` (`argv[0]` first), without the variables it
/// would run as code.
fn exec(shell: &str, argv: Vec<String>) -> u8 {
    let mut cmd = std::process::Command::new(shell);
    let mut argv = argv.into_iter();
    if let Some(arg0) = argv.next() {
        cmd.arg0(arg0);
    }
    cmd.args(argv);
    for (name, _) in std::env::vars_os() {
        if invocation::runs_as_code(&name.to_string_lossy()) {
            cmd.env_remove(name);
        }
    }
    let err = cmd.exec();
    deny(&format!(
        "aileron: denied: cannot run the shell {shell}: {err}"
    ))
}

fn deny(message: &str) -> u8 {
    eprintln!("{message}");
    EXIT_DENIED
}

fn stdin_is_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal()
}
