//! `aileron rules list|export|import`: the server's database rules (layer 7)
//! to and from files, without loss.

use crate::serve::runtime;
use aileron_cli::Error;
use aileron_config::server_rules::{self, RuleEntry};
use aileron_server::Config;
use aileron_server::app::App;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Opens the database with the server's validation and export logic.
async fn open(
    database: Option<String>,
) -> Result<(Arc<App>, tokio::sync::watch::Sender<bool>), aileron_server::Error> {
    let mut cfg = Config::from_env();
    cfg.database_url = database;
    let db = crate::open_database(&cfg).await?;
    let (tx, rx) = tokio::sync::watch::channel(false);
    let app = App::new(cfg, db, rx).await?;
    Ok((app, tx))
}

fn entries(app: &App) -> Vec<RuleEntry> {
    app.rules
        .load()
        .rules
        .iter()
        .map(|r| r.entry.clone())
        .collect()
}

pub fn list(database: Option<String>, json_out: bool) -> Result<ExitCode, Error> {
    runtime()?.block_on(async {
        let (app, _stop) = open(database).await?;
        let set = app.rules.load_full();
        if json_out {
            let rules: Vec<Value> = set.rules.iter().map(|r| r.to_json()).collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({"rules": rules})).expect("JSON")
            );
        } else if set.rules.is_empty() {
            println!("no rules in the database");
        } else {
            for r in &set.rules {
                println!(
                    "{:<6} {:>5} {}{}  {}{}",
                    r.rule.decision.as_str(),
                    r.rule.priority,
                    r.entry.id,
                    if r.rule.enabled { "" } else { " (disabled)" },
                    r.entry
                        .label
                        .as_deref()
                        .map(|l| format!("{l}: "))
                        .unwrap_or_default(),
                    r.rule.reason(),
                );
            }
        }
        app.db.close().await;
        Ok(ExitCode::SUCCESS)
    })
}

pub fn export(
    database: Option<String>,
    format: &str,
    output: Option<PathBuf>,
) -> Result<ExitCode, Error> {
    let text = runtime()?.block_on(async {
        let (app, _stop) = open(database).await?;
        let e = entries(&app);
        app.db.close().await;
        Ok::<_, Error>(match format {
            "yaml" => server_rules::render(&e),
            "json" => {
                let rules: Vec<Value> = e.iter().map(|e| Value::Object(e.to_mapping())).collect();
                let mut s = serde_json::to_string_pretty(&json!({"rules": rules})).expect("JSON");
                s.push('\n');
                s
            }
            other => return Err(Error::UnknownFormat(other.to_owned())),
        })
    })?;
    match output {
        None => print!("{text}"),
        Some(path) => {
            std::fs::write(&path, text).map_err(|source| Error::WriteRules { path, source })?
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn import(database: Option<String>, file: PathBuf) -> Result<ExitCode, Error> {
    let text = std::fs::read_to_string(&file).map_err(|source| Error::ReadRules {
        path: file.clone(),
        source,
    })?;
    let cfg = Config::from_env();
    let home = cfg.home.to_string_lossy().into_owned();
    let name = file.to_string_lossy().into_owned();
    let parsed = match server_rules::parse_file(&name, &text, &home, aileron_server::auth::new_uuid)
    {
        Ok(p) => p,
        Err(d) => {
            println!("{}", aileron_engine::Diagnostics(d));
            return Ok(ExitCode::from(crate::EXIT_POLICY));
        }
    };
    let n = parsed.len();
    runtime()?.block_on(async {
        let (app, _stop) = open(database).await?;
        let res = app
            .upsert_rules(parsed.into_iter().map(|(e, _)| e).collect(), None)
            .await;
        app.db.close().await;
        match res {
            Ok(saved) => {
                if !saved.warnings.is_empty() {
                    println!("{}", aileron_engine::Diagnostics(saved.warnings));
                }
                eprintln!("aileron: imported {n} rule(s) from {name}");
                Ok(ExitCode::SUCCESS)
            }
            Err(i) => {
                println!("{}", i.message);
                Ok(ExitCode::from(crate::EXIT_POLICY))
            }
        }
    })
}
