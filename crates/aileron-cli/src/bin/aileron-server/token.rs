//! `aileron token create`: a new API token, shown once; the database keeps
//! only its SHA-256.

use crate::serve::runtime;
use aileron_server::Config;
use aileron_server::auth::Role;
use aileron_server::db::Db;
use std::process::ExitCode;

pub struct Args {
    pub role: String,
    pub name: Option<String>,
    pub database: Option<String>,
}

pub fn create(args: Args) -> Result<ExitCode, String> {
    let role = match args.role.as_str() {
        "agent" => Role::Agent,
        "approver" => Role::Approver,
        other => return Err(format!("--role {other}: expected agent or approver")),
    };
    let mut cfg = Config::from_env();
    cfg.database_url = args.database;
    aileron_server::create_private_dir(&cfg.data_dir)
        .map_err(|e| format!("{}: {e}", cfg.data_dir.display()))?;
    let url = cfg.database_url();
    let token = runtime()?.block_on(async {
        let db = Db::open(&url)
            .await
            .map_err(|e| format!("database {}: {e}", aileron_server::redact_url(&url)))?;
        let t = aileron_server::create_token(&db, role, args.name.as_deref())
            .await
            .map_err(|e| e.to_string());
        db.close().await;
        t
    })?;
    println!("{token}");
    eprintln!(
        "aileron: a new {} token; it is shown only this once (send it as `Authorization: Bearer TOKEN`)",
        role.as_str()
    );
    Ok(ExitCode::SUCCESS)
}
