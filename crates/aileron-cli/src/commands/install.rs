//! `aileron install AGENT` / `aileron uninstall AGENT`.

use aileron_cli::Error;
use aileron_hooks::Agent;
use aileron_hooks::install::{self, ConfigHomes, Target};

pub fn run(agent: &str, user: bool, remove: bool) -> Result<u8, Error> {
    let Some(agent) = Agent::parse(agent) else {
        return Err(Error::UnknownAgent {
            name: agent.to_owned(),
        });
    };
    let cwd = super::current_dir()?;
    let load = aileron_config::LoadOptions::from_env(cwd.clone());
    let aileron = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(Error::OwnPath)?;
    let target = Target {
        agent,
        user,
        cwd,
        home: load.home.clone(),
        data_dir: load.data_dir.clone(),
        aileron: aileron.to_string_lossy().into_owned(),
        homes: ConfigHomes::from_env(&load.home),
    };
    let report = if remove {
        install::uninstall(&target)
    } else {
        install::install(&target)
    }?;
    let verb = if remove { "removed from" } else { "written to" };
    if report.changed.is_empty() && report.servers.is_empty() {
        let state = if remove {
            "not installed"
        } else {
            "already installed"
        };
        println!("aileron: {} hook {state}; nothing changed", agent.name());
    }
    for f in &report.changed {
        println!("aileron: {} hook {verb} {}", agent.name(), f.display());
    }
    let servers = if remove {
        "given back in"
    } else {
        "behind the MCP gateway in"
    };
    for f in &report.servers {
        println!(
            "aileron: {} MCP servers {servers} {}",
            agent.name(),
            f.display()
        );
    }
    for n in &report.notes {
        println!("note: {n}");
    }
    Ok(0)
}
