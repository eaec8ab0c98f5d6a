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
pub mod shell_gate;

use aileron_cli::Error;
use aileron_config::{LoadOptions, Loaded};
use aileron_engine::Diagnostics;
use std::path::PathBuf;

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
