//! `aileron rules list|export|import`: the server's database rules (layer 7)
//! to and from files, without loss.

use crate::serve::runtime;
use aileron_config::server_rules::{self, RuleEntry};
use aileron_server::Config;
use aileron_server::app::App;
use aileron_server::db::Db;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Opens the database with the server's validation and export logic.
async fn open(
    database: Option<String>,
) -> Result<(Arc<App>, tokio::sync::watch::Sender<bool>), String> {
    let mut cfg = Config::from_env();
    cfg.database_url = database;
    aileron_server::create_private_dir(&cfg.data_dir)
        .map_err(|e| format!("{}: {e}", cfg.data_dir.display()))?;
    let url = cfg.database_url();
    let db = Db::open(&url)
        .await
        .map_err(|e| format!("database {}: {e}", aileron_server::redact_url(&url)))?;
    let (tx, rx) = tokio::sync::watch::channel(false);
    let app = App::new(cfg, db, rx).await.map_err(|e| e.to_string())?;
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

pub fn list(database: Option<String>, json_out: bool) -> Result<ExitCode, String> {
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
) -> Result<ExitCode, String> {
    let text = runtime()?.block_on(async {
        let (app, _stop) = open(database).await?;
        let e = entries(&app);
        app.db.close().await;
        Ok::<_, String>(match format {
            "yaml" => server_rules::render(&e),
            "json" => {
                let rules: Vec<Value> = e.iter().map(|e| Value::Object(e.to_mapping())).collect();
                let mut s = serde_json::to_string_pretty(&json!({"rules": rules})).expect("JSON");
                s.push('\n');
                s
            }
            other => return Err(format!("--format {other}: expected yaml or json")),
        })
    })?;
    match output {
        None => print!("{text}"),
        Some(p) => std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?,
    }
    Ok(ExitCode::SUCCESS)
}

pub fn import(database: Option<String>, file: PathBuf) -> Result<ExitCode, String> {
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
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
