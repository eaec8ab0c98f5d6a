//! `aileron`: write, check, test and understand a policy.

mod commands;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Aileron: a policy gate between AI coding agents and the world.
#[derive(Parser)]
#[command(name = "aileron", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write a starter aileron.yaml for the languages found in this project.
    Init {
        /// Overwrite an existing aileron.yaml.
        #[arg(long)]
        force: bool,
    },
    /// Validate a policy and everything it composes, and run its tests.
    Check {
        /// Policy file (default: the nearest aileron.yaml).
        path: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the policy's `tests:` examples.
    Test {
        /// Policy file (default: the nearest aileron.yaml).
        path: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Show how one shell command (or any Action) is decided, and why.
    Explain {
        /// Policy file (default: the nearest aileron.yaml).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// An Action as JSON (a file, or - for stdin) instead of a command.
        #[arg(long, conflicts_with = "command")]
        action: Option<PathBuf>,
        /// Working directory the command runs in (default: the current one).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// The command line; several words are joined with spaces.
        #[arg(last = true, required_unless_present = "action")]
        command: Vec<String>,
    },
    /// Print the JSON Schema of aileron.yaml.
    Schema,
    /// Show (and follow) the audit log: one line per decision.
    Audit {
        /// The log file (default: `settings.audit_log` of the policy in force).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Only these decisions (allow, deny, ask, judge; comma-separated).
        #[arg(long)]
        decision: Option<String>,
        /// Only this session id.
        #[arg(long)]
        session: Option<String>,
        /// From this time: RFC 3339, a date, or a duration back from now (10m, 2h, 1d).
        #[arg(long)]
        since: Option<String>,
        /// Until this time, written like --since.
        #[arg(long)]
        until: Option<String>,
        /// Only the last N matching lines.
        #[arg(long, short = 'n')]
        limit: Option<usize>,
        /// Keep printing new lines as they are written.
        #[arg(long, short = 'f')]
        follow: bool,
        /// JSON lines instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Decide one tool call of an agent: its hook event on stdin, its answer on stdout.
    ///
    /// AGENT: claude-code, codex, gemini, cursor, cline, opencode. Any
    /// failure answers deny, in the agent's format and blocking exit code.
    Hook {
        /// The agent whose event format to read and answer.
        agent: String,
    },
    /// Route every tool call of an agent through `aileron hook` (writes its hook configuration).
    Install {
        /// claude-code, codex, gemini, cursor, cline or opencode.
        agent: String,
        /// In this project (the default).
        #[arg(long, conflicts_with = "user")]
        project: bool,
        /// For every project of this user.
        #[arg(long)]
        user: bool,
    },
    /// Remove exactly what `aileron install` added.
    Uninstall {
        agent: String,
        #[arg(long, conflicts_with = "user")]
        project: bool,
        #[arg(long)]
        user: bool,
    },
    /// Turn an agent's own permission rules into an aileron.yaml.
    Import {
        /// The agent whose rules to read (claude).
        agent: String,
        /// Settings files to read (default: the agent's project and user settings).
        #[arg(long = "from")]
        from: Vec<PathBuf>,
        /// Where to write the policy (default: print it; `-` also prints).
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
        /// Overwrite an existing output file.
        #[arg(long)]
        force: bool,
    },
    /// Run an agent (or any program) with every shell command it runs decided by the policy.
    Launch {
        /// Policy file (default: the nearest aileron.yaml).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// The program and its arguments.
        #[arg(last = true, required = true)]
        program: Vec<String>,
    },
    /// Serve the HTTP API, the dashboard and the approval queue (loopback by default).
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = aileron_server::DEFAULT_LISTEN)]
        listen: String,
        /// Database URL: sqlite://PATH or postgres://... (default: $AILERON_DATA/aileron.db).
        #[arg(long)]
        database: Option<String>,
        /// Policy for actions whose working directory has no aileron.yaml.
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Another Host name to accept (the server reached by name); repeatable.
        #[arg(long = "allow-host")]
        allow_host: Vec<String>,
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

fn main() -> ExitCode {
    // The hook runs before every tool call: straight to it.
    let mut args = std::env::args_os();
    if let (Some(_), Some(cmd), Some(agent), None) =
        (args.next(), args.next(), args.next(), args.next())
        && cmd == "hook"
        && let Some(agent) = agent.to_str()
        && !agent.starts_with('-')
    {
        return commands::hook::run(agent);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Init { force } => commands::init::run(force),
        Command::Check { path, json } => commands::check::run(path, json, true),
        Command::Test { path, json } => commands::check::run(path, json, false),
        Command::Explain {
            policy,
            json,
            action,
            cwd,
            command,
        } => commands::explain::run(commands::explain::Args {
            policy,
            json,
            action,
            cwd,
            command,
        }),
        Command::Audit {
            file,
            decision,
            session,
            since,
            until,
            limit,
            follow,
            json,
        } => {
            let filter = aileron_audit::Filter {
                decision,
                session,
                since,
                until,
                limit,
            };
            commands::audit::run(commands::audit::Args {
                file,
                filter,
                follow,
                json,
            })
        }
        Command::Hook { agent } => Ok(commands::hook::run(&agent)),
        Command::Install {
            agent,
            project: _,
            user,
        } => commands::install::run(&agent, user, false),
        Command::Uninstall {
            agent,
            project: _,
            user,
        } => commands::install::run(&agent, user, true),
        Command::Import {
            agent,
            from,
            output,
            force,
        } => commands::import::run(commands::import::Args {
            agent,
            from,
            output,
            force,
        }),
        Command::Launch { policy, program } => {
            commands::launch::run(commands::launch::Args { policy, program })
        }
        Command::Serve {
            listen,
            database,
            policy,
            allow_host,
        } => commands::serve::run(commands::serve::Args {
            listen: Some(listen),
            database,
            policy,
            allow_host,
        }),
        Command::Token {
            command:
                TokenCommand::Create {
                    role,
                    name,
                    database,
                },
        } => commands::token::create(commands::token::Args {
            role,
            name,
            database,
        }),
        Command::Rules { command } => match command {
            RulesCommand::List { database, json } => commands::rules::list(database, json),
            RulesCommand::Export {
                format,
                database,
                output,
            } => commands::rules::export(database, &format, output),
            RulesCommand::Import { file, database } => commands::rules::import(database, file),
        },
        Command::Schema => {
            println!(
                "{}",
                serde_json::to_string_pretty(&aileron_engine::schema::json_schema())
                    .expect("schema is JSON")
            );
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("aileron: {msg}");
            ExitCode::from(2)
        }
    }
}
