//! `aileron`: write, check, test and understand a policy; install the
//! agents' hooks and answer them; launch an agent under a policy.
//!
//! `aileron hook` runs before every tool call of an agent, so this binary
//! starts the lean way (see `aileron_cli::lean`) and leaves the server
//! commands to `aileron-server`.

#![no_main]

mod commands;

use aileron_cli::lean::{self, OneShot};
use clap::{Parser, Subcommand};
use std::ffi::{CStr, OsString, c_char, c_int};
use std::path::PathBuf;

/// Never frees during `aileron hook` (one decision, then exit); the
/// system allocator for every other command.
#[global_allocator]
static ALLOC: OneShot = OneShot::off();

/// The command line (its headline is `about`, a sentence kept whole).
#[derive(Parser)]
#[command(
    name = "aileron",
    version,
    about = "Aileron decides every shell command and tool call of an AI coding agent \
             (allow, deny, or ask you) by the policy in aileron.yaml.",
    long_about = None
)]
struct Cli {
    /// Colour the output of explain, audit, status and why: auto (on a
    /// terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    color: commands::paint::When,
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
    /// Validate a policy and everything it composes, warn about rules that
    /// do not do what they say, and run its tests.
    Check {
        /// Policy file (default: the nearest aileron.yaml).
        path: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Fail (exit 1) when there are warnings, as for errors (for CI).
        #[arg(long)]
        deny_warnings: bool,
    },
    /// Run the policy's `tests:` examples.
    Test {
        /// Policy file (default: the nearest aileron.yaml).
        path: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Show how one shell command (or any Action) is decided, and why.
    Explain(commands::explain::Args),
    /// Print the JSON Schema of aileron.yaml.
    Schema,
    /// The policy in force and its files, the hooks installed per agent,
    /// the server, the data directory.
    Status(commands::status::Args),
    /// One decision of the audit log: its record, its rule's file:line, and
    /// how the current policy decides it now.
    Why(commands::why::Args),
    /// The MCP gateway: run an MCP server behind it (`aileron mcp -- npx
    /// -y @modelcontextprotocol/server-github`); each tool call, resource
    /// read and prompt is decided by the policy before the server sees it.
    Mcp(commands::mcp::Args),
    /// Print a shell completion script: `source <(aileron completions bash)`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `aileron man | man -l -`.
    Man,
    /// Show (and follow) the audit log: one line per decision.
    Audit {
        /// The log file (default: `settings.audit_log` of the policy in force).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Only these decisions (allow, deny, ask, judge; comma-separated).
        #[arg(long, value_parser = commands::audit::decisions)]
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
        /// Sum up the LLM judge's calls (tokens, cache hits, verdicts,
        /// latency) instead of printing lines.
        #[arg(long, conflicts_with = "follow")]
        judge: bool,
        /// JSON lines instead of text (with --judge: one JSON object).
        #[arg(long)]
        json: bool,
    },
    /// Run the LLM judge by hand: on one action, or over the audit log.
    Judge {
        #[command(subcommand)]
        command: JudgeCommand,
    },
    /// Decide one tool call of an agent: its hook event on stdin, its answer on stdout.
    ///
    /// Any failure answers deny, in the agent's format and blocking exit code.
    Hook {
        /// The agent whose event format to read and answer.
        #[arg(value_parser = commands::agents())]
        agent: String,
    },
    /// Route every tool call of an agent through `aileron hook` (writes its hook configuration).
    Install {
        /// The agent whose hook configuration to write.
        #[arg(value_parser = commands::agents())]
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
        #[arg(value_parser = commands::agents())]
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
        /// What the kernel enforces (Linux): `exec` (every program the agent's
        /// tree starts is decided), `files` (Aileron's own files locked),
        /// `all`, or `none`. Default: all that this kernel supports.
        #[arg(long, value_name = "WHAT")]
        enforce: Option<String>,
        /// No start-up banner.
        #[arg(long, short = 'q')]
        quiet: bool,
        /// Start no egress proxy: the agent's web requests are not decided
        /// (only what its hooks and shell commands say).
        #[arg(long)]
        no_proxy: bool,
        /// The program and its arguments.
        #[arg(last = true, required = true)]
        program: Vec<String>,
    },
    /// Answer the asks of running `aileron launch` sessions (or of the
    /// server's queue) from another terminal: o once, s/p/u always, r reject,
    /// f feedback.
    Approve(commands::approve::Cli),
    /// Decide one line typed into an interactive bash under `aileron launch`.
    #[command(hide = true)]
    Gate {
        #[arg(allow_hyphen_values = true)]
        line: String,
    },
    // The server commands run `aileron-server` with their arguments
    // untouched: it has their options and their `--help`.
    /// Serve the HTTP API, the dashboard and the approval queue (loopback by default).
    #[command(disable_help_flag = true)]
    Serve {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// The egress gateway: an HTTP(S) proxy that decides each request by the
    /// policy; `aileron proxy postgres`: the database gateway.
    #[command(disable_help_flag = true)]
    Proxy {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// API tokens of `aileron serve`.
    #[command(disable_help_flag = true)]
    Token {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// The server's database rules (layer 7): list, export to a file, import from one.
    #[command(disable_help_flag = true)]
    Rules {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
}

#[derive(Subcommand)]
enum JudgeCommand {
    /// Run the judge on one command (or Action) and print the exact request
    /// sent and its verdict. The model is asked afresh: no cache.
    Try(commands::judge::TryArgs),
    /// Run the judge over the last N actions of the audit log and print what
    /// it would decide next to what was decided.
    Replay {
        /// How many of the log's last records.
        #[arg(long, value_name = "N")]
        last: usize,
        /// The judge to ask (default: as `judge try` chooses, per action).
        #[arg(long)]
        judge: Option<String>,
        /// Policy file (default: the nearest aileron.yaml).
        #[arg(long)]
        policy: Option<PathBuf>,
        /// The log file (default: `settings.audit_log` of the policy in force).
        #[arg(long)]
        file: Option<PathBuf>,
        /// One JSON line per row instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[unsafe(no_mangle)]
extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // SAFETY: argv holds argc C strings, as the C runtime promises.
    let hook = argc >= 2 && unsafe { CStr::from_ptr(*argv.add(1)) } == c"hook";
    // SAFETY: nothing has been allocated yet, and this is first thing in main.
    unsafe {
        if hook {
            ALLOC.switch_on();
        }
        lean::start();
    }
    lean::finish(run())
}

fn run() -> u8 {
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
    if matches!(
        cli.command,
        Command::Check { .. }
            | Command::Test { .. }
            | Command::Explain(_)
            | Command::Schema
            | Command::Status { .. }
            | Command::Why { .. }
            | Command::Completions { .. }
            | Command::Man
            | Command::Audit { .. }
    ) {
        // A report read by `head` or `less` that stops early ends the
        // command quietly, as for other Unix tools (the lean start ignores
        // SIGPIPE, and printing then panicked on the closed pipe).
        // SAFETY: restoring a signal's default action has no preconditions.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    commands::paint::init(cli.color);
    let result = match cli.command {
        Command::Init { force } => commands::init::run(force),
        Command::Check {
            path,
            json,
            deny_warnings,
        } => commands::check::run(path, json, true, deny_warnings),
        Command::Test { path, json } => commands::check::run(path, json, false, false),
        Command::Explain(args) => commands::explain::run(args),
        Command::Audit {
            file,
            decision,
            session,
            since,
            until,
            limit,
            follow,
            judge,
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
                judge,
                json,
            })
        }
        Command::Judge {
            command: JudgeCommand::Try(args),
        } => commands::judge::try_one(args),
        Command::Judge {
            command:
                JudgeCommand::Replay {
                    last,
                    judge,
                    policy,
                    file,
                    json,
                },
        } => commands::judge::replay(commands::judge::ReplayArgs {
            policy,
            file,
            judge,
            last,
            json,
        }),
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
        Command::Launch {
            policy,
            enforce,
            quiet,
            no_proxy,
            program,
        } => commands::launch::run(commands::launch::Args {
            policy,
            enforce,
            quiet,
            no_proxy,
            program,
        }),
        Command::Approve(args) => commands::approve::run(args.into()),
        Command::Gate { line } => Ok(commands::shell_gate::run(&line)),
        Command::Serve { .. }
        | Command::Proxy { .. }
        | Command::Token { .. }
        | Command::Rules { .. } => Ok(exec_server()),
        Command::Status(args) => commands::status::run(args),
        Command::Why(args) => commands::why::run(args),
        Command::Mcp(args) => commands::mcp::run(args),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "aileron", &mut std::io::stdout());
            Ok(0)
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            clap_mangen::Man::new(cmd)
                .render(&mut std::io::stdout())
                .map(|()| 0)
                .map_err(aileron_cli::Error::Process)
        }
        Command::Schema => {
            println!(
                "{}",
                serde_json::to_string_pretty(&aileron_engine::schema::json_schema())
                    .expect("schema is JSON")
            );
            Ok(0)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("aileron: {e}");
            2
        }
    }
}

/// Runs `aileron-server` (installed beside this binary) in this process
/// with the same arguments; returns only if it cannot.
fn exec_server() -> u8 {
    use std::os::unix::process::CommandExt;
    let server = std::env::current_exe()
        .map(|exe| exe.with_file_name("aileron-server"))
        .unwrap_or_else(|_| PathBuf::from("aileron-server"));
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let err = std::process::Command::new(&server).args(args).exec();
    eprintln!(
        "aileron: cannot run {}: {err} (it is installed beside aileron by `cargo install --path crates/aileron-cli`)",
        server.display()
    );
    2
}
