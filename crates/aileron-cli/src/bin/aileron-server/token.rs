//! `aileron token create`: a new API token, shown once; the database keeps
//! only its SHA-256.

use crate::serve::runtime;
use aileron_cli::Error;
use aileron_server::Config;
use aileron_server::auth::Role;
use std::process::ExitCode;

pub struct Args {
    pub role: String,
    pub name: Option<String>,
    pub database: Option<String>,
}

pub fn create(args: Args) -> Result<ExitCode, Error> {
    let role = match args.role.as_str() {
        "agent" => Role::Agent,
        "approver" => Role::Approver,
        _ => return Err(Error::UnknownRole(args.role)),
    };
    let mut cfg = Config::from_env();
    cfg.database_url = args.database;
    let token = runtime()?.block_on(async {
        let db = crate::open_database(&cfg).await?;
        let t = aileron_server::create_token(&db, role, args.name.as_deref()).await;
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
