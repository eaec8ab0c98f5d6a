//! `aileron import claude`: an agent's own permission rules as an aileron.yaml.

use std::path::PathBuf;
use std::process::ExitCode;

pub struct Args {
    pub agent: String,
    pub from: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    pub force: bool,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let _ = (&args.from, &args.output, args.force);
    Err(format!("import {} is not available yet", args.agent))
}
