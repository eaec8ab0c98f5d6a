pub mod approve;
pub mod audit;
pub mod check;
pub mod explain;
pub mod hook;
pub mod import;
pub mod init;
pub mod install;
pub mod judge;
pub mod launch;
pub mod launch_agents;
pub mod launch_gateways;
pub mod launch_proxy;
pub mod mcp;
pub mod paint;
pub mod shell_gate;
pub mod status;
pub mod why;

use aileron_cli::Error;
use aileron_config::{LoadOptions, Loaded};
use aileron_engine::Diagnostics;
use std::path::{Path, PathBuf};

/// Exit status when the policy is invalid or its tests fail.
pub const EXIT_POLICY: u8 = 1;

pub fn current_dir() -> Result<PathBuf, Error> {
    std::env::current_dir().map_err(Error::CurrentDir)
}

/// Loads the policy for the CLI: explicit path or the nearest aileron.yaml,
/// all layers, no cache (the CLI is where people edit policies).
pub fn load(policy: Option<PathBuf>, cwd: PathBuf) -> Result<Loaded, Diagnostics> {
    aileron_config::load(&options(policy, cwd), None)
}

/// The load options of [`load`].
pub fn options(policy: Option<PathBuf>, cwd: PathBuf) -> LoadOptions {
    let mut opts = LoadOptions::from_env(cwd);
    opts.policy_path = policy;
    opts
}

/// The agent names `hook`, `install` and `uninstall` take, listed in their
/// `--help` and completions (and the old spellings, accepted unlisted).
pub fn agents() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    let values = aileron_hooks::Agent::ALL.map(|a| {
        let aliases: &[&str] = match a.name() {
            "claude-code" => &["claude"],
            "gemini" => &["gemini-cli"],
            "codex" => &["codex-cli"],
            _ => &[],
        };
        PossibleValue::new(a.name()).aliases(aliases.iter().copied())
    });
    clap::builder::PossibleValuesParser::new(values)
}

/// What is wrong with a policy file named on the command line: missing,
/// or a directory.
pub fn policy_file_problem(path: &Path) -> Option<&'static str> {
    if path.is_dir() {
        Some("is a directory, not a policy file")
    } else if !path.exists() {
        Some("no such policy file")
    } else {
        None
    }
}

/// [`policy_file_problem`] as the error `main` prints (exit 2, as for any
/// file that cannot be read).
pub fn policy_file_error(path: &Path) -> Option<Error> {
    policy_file_problem(path).map(|why| Error::PolicyFile {
        path: path.to_path_buf(),
        why,
    })
}
