//! `aileron mcp`: the MCP gateway, a stdio proxy the agent starts in place
//! of an MCP server (`aileron_mcp`).

use super::current_dir;
use aileron_cli::Error;
use aileron_config::LoadOptions;
use aileron_mcp::{Decide, Ended, Origin, SessionSocket, Setup, Upstream, stdio};
use aileron_session::{Decider, TtyPrompter};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    /// The server's name in rules (`mcp.server`); default: the command's
    /// file name. Give the name the agent's MCP configuration uses.
    #[arg(long)]
    pub name: Option<String>,
    /// Policy file (default: the nearest aileron.yaml). Under `aileron
    /// launch` the session decides with its own policy, unless this is given.
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// A remote MCP server's Streamable HTTP endpoint, instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// A header sent with every request to `--url` (`'Authorization: Bearer
    /// TOKEN'`); may be given again.
    #[arg(long, value_name = "NAME: VALUE", requires = "url")]
    pub header: Vec<String>,
    /// The MCP server's command and its arguments, after `--`.
    #[arg(
        last = true,
        required_unless_present = "url",
        value_name = "SERVER COMMAND"
    )]
    pub command: Vec<OsString>,
}

/// Exit status when the server cannot be started, or ended while the
/// client was still there.
const EXIT_SERVER: u8 = 1;

pub fn run(args: Args) -> Result<u8, Error> {
    let cwd = current_dir()?;
    let mut opts = LoadOptions::from_env(cwd.clone());
    if let Some(p) = &args.policy {
        opts.policy_path = Some(std::fs::canonicalize(p).map_err(|source| Error::BadPath {
            option: "--policy",
            path: p.clone(),
            source,
        })?);
    }
    let upstream = match &args.url {
        Some(url) => Upstream::Url {
            url: url.clone(),
            headers: headers(&args.header)?,
        },
        None => Upstream::Command(args.command.clone()),
    };
    let name = args.name.clone().unwrap_or_else(|| server_name(&upstream));
    let cache_dir = opts.data_dir.join("cache");
    let socket = std::env::var_os("AILERON_SOCKET")
        .filter(|s| !s.is_empty() && args.policy.is_none())
        .map(PathBuf::from);
    let launch_session = std::env::var("AILERON_SESSION")
        .ok()
        .filter(|s| !s.is_empty());
    let (decide, session): (Arc<dyn Decide>, Option<String>) = match socket {
        Some(socket) => (Arc::new(SessionSocket(socket)), launch_session),
        None => {
            // On its own, the gateway is one session: its "always" answers
            // hold until it stops.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let session = format!("mcp-{:x}-{nanos:x}", std::process::id());
            let decider = Decider::new(
                aileron_session::Config {
                    load: opts.clone(),
                    cache_dir: Some(cache_dir.clone()),
                    session_id: Some(session.clone()),
                    agent: None,
                    real_shell: String::new(),
                    secrets: Vec::new(),
                    adapter: aileron_mcp::ADAPTER.into(),
                },
                Box::new(TtyPrompter::default()),
            );
            (Arc::new(decider), Some(session))
        }
    };
    let policy = aileron_mcp::PolicyView::new(opts, Some(cache_dir));
    if let Err(why) = policy.load() {
        eprintln!("aileron mcp: {why}: every call will be refused");
    }
    let command_text = match &upstream {
        Upstream::Command(c) => c
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        Upstream::Url { url, .. } => url.clone(),
    };
    let setup = Setup {
        name: name.clone(),
        upstream,
        decide,
        origin: Origin {
            cwd: cwd.to_string_lossy().into_owned(),
            session,
            agent: None,
        },
        policy,
        limits: stdio::LIMITS,
    };
    match aileron_mcp::run(setup, std::io::stdin(), std::io::stdout()) {
        Err(e) => {
            eprintln!("aileron mcp: cannot start the MCP server `{command_text}`: {e}");
            Ok(EXIT_SERVER)
        }
        Ok(Ended::ClientClosed(_)) => Ok(0),
        Ok(Ended::ServerEnded { status, unanswered }) => {
            let how = status.map_or_else(
                || "closed its output".to_owned(),
                |s| format!("exited ({s})"),
            );
            eprintln!(
                "aileron mcp: the MCP server {name} (`{command_text}`) {how} while the client was connected; {unanswered} request(s) waiting for it got an error"
            );
            Ok(EXIT_SERVER)
        }
    }
}

/// The server's name by default: its command's file name, or its URL's host.
fn server_name(upstream: &Upstream) -> String {
    let name = match upstream {
        Upstream::Command(command) => command
            .first()
            .and_then(|c| Path::new(c).file_name())
            .map(|n| n.to_string_lossy().into_owned()),
        Upstream::Url { url, .. } => {
            let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            Some(host.to_owned()).filter(|h| !h.is_empty())
        }
    };
    name.unwrap_or_else(|| "mcp".to_owned())
}

/// `--header` values, as `(name, value)`.
fn headers(given: &[String]) -> Result<Vec<(String, String)>, Error> {
    given
        .iter()
        .map(|h| match h.split_once(':') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
            _ => Err(Error::BadHeader(h.clone())),
        })
        .collect()
}
