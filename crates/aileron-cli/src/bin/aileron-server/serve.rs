//! `aileron serve`: the HTTP API, the dashboard and the approval queue.

use aileron_server::Config;
use std::path::PathBuf;
use std::process::ExitCode;

pub struct Args {
    pub listen: Option<String>,
    pub database: Option<String>,
    pub policy: Option<PathBuf>,
    pub allow_host: Vec<String>,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let mut cfg = Config::from_env();
    if let Some(l) = args.listen {
        cfg.listen = l
            .parse()
            .map_err(|e| format!("--listen {l}: {e} (expected IP:PORT, e.g. 127.0.0.1:7878)"))?;
    }
    cfg.database_url = args.database;
    cfg.policy = match args.policy {
        Some(p) => {
            Some(std::fs::canonicalize(&p).map_err(|e| format!("--policy {}: {e}", p.display()))?)
        }
        None => None,
    };
    cfg.allowed_hosts = args.allow_host;
    runtime()?
        .block_on(aileron_server::serve(cfg))
        .map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// A runtime for the commands that talk to the database or serve.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}
