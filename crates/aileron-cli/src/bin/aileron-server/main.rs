//! `aileron-server`: `aileron serve`, `aileron proxy` (and `proxy postgres`), `aileron token` and `aileron rules`.
//!
//! The only binary with an async runtime, a database driver and the
//! dashboard's assets. `aileron` hands these commands to it (`exec`, so it
//! is the same process), which keeps `aileron` itself small and quick to
//! start for `aileron hook`, which runs before every tool call of an agent.

mod adopt;
mod gateway;
mod postgres;
mod proxy;
mod rules;
mod serve;
mod token;

use clap::{Parser, Subcommand};

/// Many small allocations per request on several threads (the JSON of an
/// action, its audit record, the log row): glibc's allocator spent a
/// seventh of `/api/evaluate`'s time in its own locking and consolidation.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status when a rules file is invalid.
pub const EXIT_POLICY: u8 = 1;

/// Aileron's server: the HTTP API, the dashboard, the approval queue and the rule store.
#[derive(Parser)]
#[command(name = "aileron", bin_name = "aileron", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the HTTP API, the dashboard and the approval queue (loopback by default).
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = aileron_server::DEFAULT_LISTEN)]
        listen: String,
        /// Database URL: sqlite://PATH or postgres://... (default: $AILERON_DATA/aileron.db).
        #[arg(long)]
        database: Option<String>,
        /// The server's own policy: for actions outside every registered
        /// project, and the judges and audit log of all (default: the
        /// aileron.yaml found from the directory the server runs in).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// A project whose actions are decided by its own policy: ROOT (its
        /// policy ROOT/aileron.yaml) or ROOT=POLICY; repeatable. An action's
        /// session.cwd selects the project it lies in; the server reads no
        /// other directory for it.
        #[arg(long = "project", value_name = "ROOT[=POLICY]", value_parser = parse_project)]
        projects: Vec<aileron_server::projects::Project>,
        /// Another Host name to accept (the server reached by name); repeatable.
        #[arg(long = "allow-host")]
        allow_host: Vec<String>,
        /// What the action log keeps: an age (12h, 30d, 52w) or a number of
        /// actions (1000000); one of each may be given. Older rows are deleted
        /// in the background. Default: everything. The log takes about 1.5 KB
        /// an action: 1.5 GB a million (measured: 1,490 bytes on SQLite,
        /// 1,565 on PostgreSQL).
        #[arg(long, value_name = "AGE|COUNT")]
        retain: Vec<aileron_server::retention::Keep>,
        /// Log lines (failed requests, asks, the server's events on stderr) as text or json.
        #[arg(long, value_name = "FORMAT", default_value = "text")]
        log_format: aileron_server::ops::LogFormat,
        /// Serve GET /metrics without a token (by default it needs one, an agent token is enough).
        #[arg(long)]
        metrics_public: bool,
        /// Connections served at once (at most what the open-file limit
        /// allows); when reached, those holding no request are closed.
        #[arg(long, value_name = "N", default_value_t = aileron_server::listen::Limits::default().max_connections)]
        max_connections: usize,
        /// Asks of one session waiting for a person at once; more are denied.
        #[arg(long, value_name = "N", default_value_t = aileron_server::listen::Limits::default().asks_per_session)]
        max_asks_per_session: usize,
        /// Asks under one agent token waiting for a person at once; more are denied.
        #[arg(long, value_name = "N", default_value_t = aileron_server::listen::Limits::default().asks_per_token)]
        max_asks_per_token: usize,
    },
    /// The egress gateway: an HTTP(S) proxy that decides each request (and
    /// each CONNECT tunnel) by the policy before forwarding it. `aileron
    /// launch` starts one for its session. `aileron proxy postgres`: the
    /// database gateway.
    #[command(args_conflicts_with_subcommands = true)]
    Proxy {
        #[command(subcommand)]
        gateway: Option<Box<ProxyGateway>>,
        /// Address to listen on (port 0: any free port).
        #[arg(long, default_value = "127.0.0.1:8118")]
        listen: String,
        #[command(flatten)]
        options: gateway::Options,
        /// The agent's own model endpoints (set by `aileron launch`).
        #[arg(long = "agent-api", hide = true)]
        agent_apis: Vec<String>,
        /// Write the CA bundle the agent's tools trust here (set by `aileron launch`).
        #[arg(long, hide = true)]
        trust_dir: Option<PathBuf>,
    },
    /// API tokens of `aileron serve`.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// The server's database rules (layer 7): list, export to a file, import from one.
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
    },
}

#[derive(Subcommand)]
enum ProxyGateway {
    /// The database gateway: a PostgreSQL wire-protocol proxy that decides
    /// each SQL statement by the policy before the server sees it (TLS
    /// from clients refused; authentication passed through to the server).
    Postgres {
        /// Address to listen on (port 0: any free port).
        #[arg(long, default_value = "127.0.0.1:6432")]
        listen: String,
        /// The real server: postgres://HOST:PORT (a Unix socket: postgres://%2Frun%2Fpostgresql:5432).
        #[arg(long)]
        upstream: String,
        #[command(flatten)]
        options: gateway::Options,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a token and print it (once).
    Create {
        /// agent (submits actions) or approver (decides approvals, changes rules).
        #[arg(long)]
        role: String,
        /// A name to recognise it by.
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        database: Option<String>,
    },
}

#[derive(Subcommand)]
enum RulesCommand {
    /// List the database rules.
    List {
        #[arg(long)]
        database: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Print (or write) the database rules as a rules file.
    Export {
        #[arg(long, default_value = "yaml")]
        format: String,
        #[arg(long)]
        database: Option<String>,
        /// Write to this file instead of standard output.
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// Add or update the rules of a file (a rules file, or the buckets of an aileron.yaml).
    Import {
        file: PathBuf,
        #[arg(long)]
        database: Option<String>,
    },
}

/// Creates the data directory and opens (creating and migrating) the
/// database, for `token` and `rules`: what `serve` does first.
async fn open_database(
    cfg: &aileron_server::Config,
) -> Result<aileron_server::db::Db, aileron_server::Error> {
    use aileron_server::Error;
    aileron_server::create_private_dir(&cfg.data_dir).map_err(|source| Error::CreateDataDir {
        path: cfg.data_dir.clone(),
        source,
    })?;
    let url = cfg.database_url();
    aileron_server::db::Db::open(&url)
        .await
        .map_err(|source| Error::OpenDatabase {
            url: aileron_server::redact_url(&url),
            source,
        })
}

fn parse_project(spec: &str) -> Result<aileron_server::projects::Project, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?;
    aileron_server::projects::Project::parse(spec, &cwd)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve {
            listen,
            database,
            policy,
            projects,
            allow_host,
            retain,
            log_format,
            metrics_public,
            max_connections,
            max_asks_per_session,
            max_asks_per_token,
        } => serve::run(serve::Args {
            listen: Some(listen),
            database,
            policy,
            projects,
            allow_host,
            retain,
            log_format,
            metrics_public,
            limits: aileron_server::listen::Limits {
                max_connections,
                asks_per_session: max_asks_per_session,
                asks_per_token: max_asks_per_token,
                ..Default::default()
            },
        }),
        Command::Proxy {
            gateway: Some(gateway),
            ..
        } => {
            let ProxyGateway::Postgres {
                listen,
                upstream,
                options,
            } = *gateway;
            postgres::run(postgres::Args {
                listen,
                options,
                upstream,
            })
        }
        Command::Proxy {
            gateway: None,
            listen,
            options,
            agent_apis,
            trust_dir,
        } => proxy::run(proxy::Args {
            listen,
            options,
            agent_apis,
            trust_dir,
        }),
        Command::Token {
            command:
                TokenCommand::Create {
                    role,
                    name,
                    database,
                },
        } => token::create(token::Args {
            role,
            name,
            database,
        }),
        Command::Rules { command } => match command {
            RulesCommand::List { database, json } => rules::list(database, json),
            RulesCommand::Export {
                format,
                database,
                output,
            } => rules::export(database, &format, output),
            RulesCommand::Import { file, database } => rules::import(database, file),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("aileron: {e}");
            ExitCode::from(2)
        }
    }
}
