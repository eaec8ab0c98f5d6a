//! `aileron serve`: the HTTP API, the dashboard and the approval queue.

use aileron_cli::Error;
use aileron_server::Config;
use std::path::PathBuf;
use std::process::ExitCode;

pub struct Args {
    pub listen: Option<String>,
    pub database: Option<String>,
    pub policy: Option<PathBuf>,
    pub projects: Vec<aileron_server::projects::Project>,
    pub allow_host: Vec<String>,
    pub retain: Vec<aileron_server::retention::Keep>,
    pub log_format: aileron_server::ops::LogFormat,
    pub metrics_public: bool,
    pub limits: aileron_server::listen::Limits,
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let mut cfg = Config::from_env();
    if let Some(text) = args.listen {
        cfg.listen = text
            .parse()
            .map_err(|source| Error::BadListen { text, source })?;
    }
    cfg.database_url = args.database;
    cfg.policy = match args.policy {
        Some(path) => Some(
            std::fs::canonicalize(&path).map_err(|source| Error::BadPath {
                option: "--policy",
                path,
                source,
            })?,
        ),
        None => None,
    };
    cfg.projects = args.projects;
    cfg.allowed_hosts = args.allow_host;
    cfg.retention = aileron_server::retention::Retention::of(&args.retain);
    cfg.log_format = args.log_format;
    cfg.metrics_public = args.metrics_public;
    cfg.limits = args.limits;
    runtime()?.block_on(aileron_server::serve(cfg))?;
    Ok(ExitCode::SUCCESS)
}

/// A runtime for the commands that talk to the database or serve.
pub fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)
}
