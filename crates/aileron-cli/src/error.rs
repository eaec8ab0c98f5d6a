//! Why a command of `aileron` or `aileron-server` could not do its work.
//! `main` prints the message after `aileron: ` and exits 2 (`aileron
//! launch` prints an enforcement it cannot set up as `aileron: not
//! launching: ...` and exits 1).

use aileron_hooks::Agent;
use aileron_hooks::jsonedit::SyntaxError;
use std::io;
use std::net::AddrParseError;
use std::path::{Path, PathBuf};

/// What the commands report. Every variant's message is the line shown to
/// the user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // Usage.
    #[error("unknown agent `{name}` (expected one of: {})", agent_names())]
    UnknownAgent { name: String },
    #[error("cannot import from `{agent}`; supported agents: {}", supported.join(", "))]
    CannotImportFrom {
        agent: String,
        supported: &'static [&'static str],
    },
    /// A path given to an option (`--cwd`, `--policy`) that does not resolve.
    #[error("{option} {}: {source}", path.display())]
    BadPath {
        option: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error("--upstream {why} (expected postgres://HOST:PORT)")]
    BadUpstream { why: String },
    #[error("--header {0}: expected NAME: VALUE")]
    BadHeader(String),
    #[error("--listen {text}: {source} (expected IP:PORT, e.g. 127.0.0.1:7878)")]
    BadListen {
        text: String,
        source: AddrParseError,
    },
    #[error("--format {0}: expected yaml or json")]
    UnknownFormat(String),
    #[error("--role {0}: expected agent or approver")]
    UnknownRole(String),
    #[error("nothing to launch")]
    NothingToLaunch,
    /// `--policy FILE` (or `check FILE`) that is missing or a directory.
    #[error("{}: {why}", path.display())]
    PolicyFile { path: PathBuf, why: &'static str },
    /// `aileron why ID` found no such decision in the log.
    #[error("no decision with id `{id}` in {}", path.display())]
    NoSuchDecision { id: String, path: PathBuf },
    /// `aileron why ID`: a prefix of several ids.
    #[error("`{id}` begins {count} decision ids in {}; give more of it", path.display())]
    AmbiguousDecision {
        id: String,
        count: usize,
        path: PathBuf,
    },
    /// A file the command would write exists, and `--force` was not given.
    #[error("{} already exists; use --force to overwrite it", path.display())]
    Exists { path: PathBuf },

    // The environment.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(#[source] io::Error),
    #[error("the current directory {} is not UTF-8", path.display())]
    CurrentDirNotUtf8 { path: PathBuf },
    #[error("HOME is not set to an absolute path")]
    NoHome,
    /// `aileron install` writes the path of the binary into the hooks.
    #[error("cannot find the aileron binary's own path: {0}")]
    OwnPath(#[source] io::Error),
    #[error("cannot find the aileron executable: {0}")]
    Executable(#[source] io::Error),
    #[error("{} is missing; reinstall aileron", path.display())]
    ShimMissing { path: PathBuf },
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] io::Error),

    // Files.
    /// A file or directory could not be read, written, created, linked,
    /// secured (its mode), set up or listened on (`action`: `read`,
    /// `write`, ...).
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// `aileron explain --action -`.
    #[error("stdin: {0}")]
    ReadStdin(#[source] io::Error),
    /// `aileron explain --action FILE`.
    #[error("{}: {source}", path.display())]
    ReadAction { path: PathBuf, source: io::Error },
    #[error("{}: invalid action: {source}", path.display())]
    InvalidAction {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// `aileron import` without `-o`.
    #[error("cannot write the policy: {0}")]
    WritePolicy(#[source] io::Error),
    /// `aileron rules import FILE`.
    #[error("{}: {source}", path.display())]
    ReadRules { path: PathBuf, source: io::Error },
    /// `aileron rules export -o FILE`.
    #[error("{}: {source}", path.display())]
    WriteRules { path: PathBuf, source: io::Error },
    #[error("no audit log at {} yet", path.display())]
    NoAuditLog { path: PathBuf },
    #[error(
        "no Claude Code settings found; looked for {} (name one with --from FILE)",
        paths(looked)
    )]
    NoClaudeSettings { looked: Vec<PathBuf> },

    // An agent's settings, edited for a launch session.
    #[error("cannot add Aileron's hook to {}: {source}", path.display())]
    AddGeminiHook { path: PathBuf, source: Box<Error> },
    #[error("cannot turn the agent's self-updater off in {}: {source}", path.display())]
    UpdaterOff { path: PathBuf, source: Box<Error> },
    #[error("cannot add the gate plugin to OPENCODE_CONFIG_CONTENT: {0}")]
    AddGatePlugin(#[source] Box<Error>),
    #[error(transparent)]
    SettingsSyntax(#[from] SyntaxError),
    #[error("the settings are not a JSON object")]
    SettingsNotAnObject,
    #[error("the config is not a JSON object")]
    ConfigNotAnObject,
    #[error("`{0}` is not an object")]
    KeyNotAnObject(&'static str),
    #[error("`{0}` is not a list")]
    KeyNotAList(&'static str),

    // Launching.
    /// The kernel cannot do what `--enforce` asked.
    #[error("--enforce exec: {0} on this kernel")]
    CannotEnforceExec(#[source] aileron_supervisor::Error),
    #[error("--enforce files: {0} on this system")]
    CannotEnforceFiles(#[source] aileron_supervisor::Error),
    #[error("--enforce net: {0} on this system")]
    CannotEnforceNet(#[source] aileron_supervisor::Error),
    /// The box could not be set up for the session.
    #[error("the box: {0}")]
    Lockdown(#[source] aileron_supervisor::Error),
    /// The egress proxy could not start.
    #[error(transparent)]
    Proxy(#[from] aileron_proxy::Error),
    /// A gateway of the session (the egress proxy, a database gateway) did not come up.
    #[error("{what} did not start: {why}")]
    GatewayDidNotStart { what: String, why: String },
    #[error("cannot run {program}: not found in PATH")]
    NotInPath { program: String },
    /// The program could not be started, enforced or waited for.
    #[error("cannot run {program}: {source}")]
    Run { program: String, source: Box<Error> },
    /// Starting or waiting for a process.
    #[error("{0}")]
    Process(#[source] io::Error),

    // Other crates.
    #[error(transparent)]
    Hooks(#[from] aileron_hooks::Error),
    #[error(transparent)]
    Supervisor(#[from] aileron_supervisor::Error),
    #[error(transparent)]
    Audit(#[from] aileron_audit::Error),
    /// What `aileron-server` reports: an [`aileron_server::Error`], boxed
    /// so that `aileron`, which never serves, does not link the server's
    /// code (only `From` makes one).
    #[error(transparent)]
    Server(Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    /// An [`Error::Io`] of `action` on `path`, for `map_err`.
    pub fn io(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> Error {
        move |source| Error::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl From<aileron_server::Error> for Error {
    fn from(e: aileron_server::Error) -> Self {
        Error::Server(Box::new(e))
    }
}

/// The agents `aileron hook` and `aileron install` take.
fn agent_names() -> String {
    let names: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
    names.join(", ")
}

fn paths(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages are those the commands printed before their errors
    /// were typed (`aileron: ` is `main`'s).
    #[test]
    fn messages() {
        let gone = || io::Error::from(io::ErrorKind::NotFound);
        let why = gone().to_string();
        assert_eq!(
            Error::io("listen on", Path::new("/run/s.sock"))(gone()).to_string(),
            format!("cannot listen on /run/s.sock: {why}")
        );
        assert_eq!(
            Error::UnknownAgent { name: "vim".into() }.to_string(),
            "unknown agent `vim` (expected one of: claude-code, codex, gemini, cursor, cline, opencode)"
        );
        assert_eq!(
            Error::NoClaudeSettings {
                looked: vec!["/h/a.json".into(), "b.json".into()]
            }
            .to_string(),
            "no Claude Code settings found; looked for /h/a.json, b.json (name one with --from FILE)"
        );
        let run = Error::Run {
            program: "claude".into(),
            source: Box::new(Error::io("create", Path::new("/a"))(gone())),
        };
        assert_eq!(
            run.to_string(),
            format!("cannot run claude: cannot create /a: {why}")
        );
        let edit = Error::AddGatePlugin(Box::new(Error::KeyNotAList("plugin")));
        assert_eq!(
            edit.to_string(),
            "cannot add the gate plugin to OPENCODE_CONFIG_CONTENT: `plugin` is not a list"
        );
        let server = Error::from(aileron_server::Error::EmptyTokenFile {
            path: "/d/agent.token".into(),
        });
        assert_eq!(server.to_string(), "/d/agent.token: empty token file");
    }
}
