//! `aileron-sh`: the shell an agent gets under `aileron launch` (the binary
//! is built by `aileron-cli`, so that one `cargo install` brings both).
//!
//! It reads what the agent asked the shell to run, has it decided (by the
//! launch session over its socket, or on its own when called directly),
//! and then either `exec`s the real shell with the original arguments
//! untouched, or runs nothing, prints one line and exits 126.
//!
//! Start-up is lean: no async runtime, no argument-parsing library, and the
//! compiled policy comes from the on-disk cache when its sources are unchanged.
//! Under a launch session a `-c` line does not even reach [`main`]: the
//! binary's entry point asks the session first ([`prestart`], x86-64 Linux).

#[cfg(all(
    target_os = "linux",
    target_arch = "x86_64",
    target_pointer_width = "64"
))]
pub mod prestart;
mod stdin_script;

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
    let line = match invocation {
        Invocation::Probe => return exec(&standalone_shell(), &arg0, &args),
        Invocation::Command(cmd) => harness::model_command(cmd),
        Invocation::Script(path) => match std::fs::read_to_string(cwd.join(&path)) {
            Ok(text) => text,
            // What cannot be read cannot be checked.
            Err(e) => {
                return deny(&format!(
                    "aileron: denied: cannot read the script {path} to check it: {e}"
                ));
            }
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
    let req = Request {
        line,
        cwd: cwd.to_string_lossy().into_owned(),
        argv: args.clone(),
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
            decider.decide(&req)
        }
    };
    if !response.allow {
        return deny(response.message.as_deref().unwrap_or("aileron: denied"));
    }
    exec(&response.real_shell, &arg0, &args)
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

fn exec(shell: &str, arg0: &str, args: &[String]) -> u8 {
    let err = std::process::Command::new(shell)
        .arg0(invocation::real_shell_arg0(arg0, shell))
        .args(args)
        .exec();
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
