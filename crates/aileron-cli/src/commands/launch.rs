//! `aileron launch -- PROGRAM [ARGS]`: run an agent with its shell pointed
//! at `aileron-sh`, a fresh session, and a scrubbed environment.

use super::{EXIT_POLICY, current_dir, launch_agents, launch_gateways, launch_proxy, load};
use aileron_cli::Error;
use aileron_cli::launch_box;
use aileron_config::LoadOptions;
use aileron_engine::glob::Glob;
use aileron_session::{Config, Decider, TtyPrompter};
use aileron_supervisor::Enforce;
use aileron_supervisor::files::{Lockdown, Spec};
use aileron_supervisor::supervise::Supervisor;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Args {
    pub policy: Option<PathBuf>,
    /// `--enforce`: None is "all that the kernel supports".
    pub enforce: Option<String>,
    /// No start-up banner.
    pub quiet: bool,
    /// `--no-proxy`: no egress proxy for the session.
    pub no_proxy: bool,
    pub program: Vec<String>,
}

pub fn run(args: Args) -> Result<u8, Error> {
    let cwd = current_dir()?;
    // Refuse to start under a policy that does not load: fail closed, say why.
    let loaded = match load(args.policy.clone(), cwd.clone()) {
        Ok(l) => l,
        Err(diags) => {
            eprintln!("{diags}");
            eprintln!("aileron: not launching: the policy does not load");
            return Ok(EXIT_POLICY);
        }
    };
    let (program, program_args) = args.program.split_first().ok_or(Error::NothingToLaunch)?;
    // Commands typed into an interactive shell are decided too (bash), or
    // the shell is not started: no silent gap.
    let interactive = match interactive_shell(program, program_args) {
        Ok(i) => i,
        Err(message) => {
            eprintln!("aileron: not launching: {message}");
            return Ok(EXIT_POLICY);
        }
    };
    let asked_enforce = args.enforce.is_some();
    let quiet = args.quiet;
    let no_proxy = args.no_proxy;
    let enforce = match enforcement(args.enforce.as_deref()) {
        Ok(e) => e,
        Err(message) => {
            eprintln!("aileron: not launching: {message}");
            return Ok(EXIT_POLICY);
        }
    };
    // Orphans of the tree (a double fork, a daemon) stay descendants of
    // this process: the session refuses its descendants as approvers.
    #[cfg(target_os = "linux")]
    if let Err(e) = aileron_session::process::keep_orphans() {
        eprintln!("aileron: not launching: cannot keep the agent's orphans in the session: {e}");
        return Ok(EXIT_POLICY);
    }
    let shim = shim_path()?;
    let session_id = random_id()?;
    let runtime = runtime_dir(&session_id)?;
    let bin = runtime.join("bin");
    std::fs::create_dir_all(&bin).map_err(Error::io("create", &bin))?;
    let real_shell = real_shell(&runtime);
    let shell_name = Path::new(&real_shell)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("bash")
        .to_owned();
    // Agents check the shell's name (Claude Code wants bash or zsh), so the shim wears it.
    let shim_link = bin.join(&shell_name);
    symlink(&shim, &shim_link).map_err(Error::io("link", &shim_link))?;
    if shell_name != "bash" {
        let _ = symlink(&shim, bin.join("bash"));
    }
    let socket = runtime.join("session.sock");

    // The judges' API keys stay with the session, never with the agent
    // (whatever `passthrough` says).
    let mut scrub = loaded.policy.env.scrub.clone();
    let judge_keys: Vec<String> = loaded
        .policy
        .judges
        .values()
        .filter_map(|j| j.api_key_env.clone())
        .collect();
    scrub.extend(judge_keys.iter().cloned());
    let passthrough: Vec<String> = loaded
        .policy
        .env
        .passthrough
        .iter()
        .filter(|p| !judge_keys.iter().any(|k| Glob::plain(p).is_match(k)))
        .cloned()
        .collect();
    let (env, secrets) = scrubbed_env(&scrub, &passthrough);
    let agent = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned);
    let mut opts = LoadOptions::from_env(cwd.clone());
    let opts_data_dir = opts.data_dir.clone();
    opts.policy_path = args
        .policy
        .map(|p| if p.is_absolute() { p } else { cwd.join(p) });
    let args_policy = opts.policy_path.clone();
    let decider = Arc::new(Decider::new(
        Config {
            cache_dir: Some(opts.data_dir.join("cache")),
            session_id: Some(session_id.clone()),
            agent: agent.clone(),
            real_shell: real_shell.clone(),
            secrets,
            adapter: "shim".into(),
            load: opts,
        },
        Box::new(TtyPrompter::default()),
    ));
    let listener =
        std::os::unix::net::UnixListener::bind(&socket).map_err(Error::io("listen on", &socket))?;
    aileron_session::server::serve(listener, Arc::clone(&decider));

    let shim_shell = shim_link.to_string_lossy().into_owned();
    let mut args: Vec<String> = program_args.to_vec();
    let aileron = std::env::current_exe().map_err(Error::Executable)?;
    if interactive {
        let rc = runtime.join("bashrc");
        std::fs::write(&rc, gate_rcfile(&aileron)).map_err(Error::io("write", &rc))?;
        decider.gate_the_launched_shell();
        args.splice(
            0..0,
            ["--rcfile".to_owned(), rc.to_string_lossy().into_owned()],
        );
    }
    // Asks the terminal cannot take without fighting the agent for it wait
    // for `aileron approve`, which finds the session by its file.
    let approver_key = random_id()?;
    decider.enable_board(approver_key.clone());
    let _registration = aileron_session::registry::register(
        &opts_data_dir,
        &aileron_session::registry::Entry {
            id: session_id.clone(),
            socket: socket.clone(),
            pid: std::process::id(),
            agent: agent.clone(),
            policy: policy_files(&loaded, &opts_data_dir, &cwd, args_policy.as_deref()),
            cwd: cwd.to_string_lossy().into_owned(),
            started: aileron_session::decider::now_rfc3339(),
        },
        &approver_key,
    )
    .map_err(Error::io(
        "write",
        &aileron_session::registry::dir(&opts_data_dir),
    ))?;
    let hidden = vec![aileron_session::registry::key_path(
        &opts_data_dir,
        &session_id,
    )];
    let setup = match agent.as_deref() {
        Some(name) => launch_agents::setup(
            name,
            &launch_agents::SetupContext {
                aileron: &aileron,
                runtime: &runtime,
                shim_bin: &bin,
                policy: &loaded.policy,
                env: &env,
                boxed: enforce.files && aileron_supervisor::files::landlock_abi() > 0,
            },
        )?,
        None => launch_agents::AgentSetup::default(),
    };
    args.splice(0..0, setup.args.iter().cloned());
    let launch_argv: Vec<String> = std::iter::once(program.clone())
        .chain(args.iter().cloned())
        .collect();
    let resolved = if enforce.is_none() {
        PathBuf::from(program)
    } else {
        find_program(program, &env).ok_or_else(|| Error::NotInPath {
            program: program.clone(),
        })?
    };
    let mut cmd = std::process::Command::new(&resolved);
    std::os::unix::process::CommandExt::arg0(&mut cmd, program);
    cmd.args(args).env_clear().envs(env.iter().cloned());
    cmd.env("SHELL", &shim_shell)
        .env("CLAUDE_CODE_SHELL", &shim_shell)
        .env("GOOSE_SHELL", &shim_shell)
        .env("AILERON_SESSION", &session_id)
        .env("AILERON_SOCKET", &socket)
        .env("AILERON_REAL_SHELL", &real_shell);
    cmd.envs(setup.env.iter().cloned());
    // The gateways ask this session, as the shim does.
    let for_session = launch_proxy::ForSession {
        aileron: &aileron,
        socket: &socket,
        session: &session_id,
        agent: agent.as_deref(),
        policy: args_policy.as_deref(),
        cwd: &cwd,
    };
    // The project's hard links are looked for (a walk of its files, the
    // longest part of the box's set-up in a large checkout) while the
    // proxy starts.
    let links = enforce.files.then(|| {
        let project = loaded
            .project_file
            .as_deref()
            .and_then(Path::parent)
            .unwrap_or(&cwd);
        let roots = [project.to_path_buf(), cwd.clone()];
        std::thread::spawn(move || launch_box::HardLinks::walk(&roots))
    });
    // The egress proxy: the agent's tree reaches the network through it,
    // each request decided by this session.
    let proxy = if no_proxy {
        decider.record_session_note("no egress proxy in this session (--no-proxy)");
        None
    } else {
        match start_proxy(&StartProxy {
            for_session: &for_session,
            runtime: &runtime,
            loaded: &loaded,
            env: &env,
            data_dir: &opts_data_dir,
            boxed: enforce.net,
        }) {
            Ok((proxy, proxy_env)) => {
                for name in ["NO_PROXY", "no_proxy"] {
                    cmd.env_remove(name);
                }
                cmd.envs(proxy_env);
                Some(proxy)
            }
            Err(e) => {
                eprintln!("aileron: not launching: {e} (--no-proxy launches without it)");
                let _ = std::fs::remove_dir_all(&runtime);
                return Ok(EXIT_POLICY);
            }
        }
    };
    // The database gateways the policy names (`settings.gateways`).
    let gateways = match launch_gateways::start(
        &for_session,
        loaded
            .policy
            .settings
            .gateways
            .as_deref()
            .unwrap_or_default(),
        enforce.net,
    ) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("aileron: not launching: {e}");
            let _ = std::fs::remove_dir_all(&runtime);
            return Ok(EXIT_POLICY);
        }
    };
    for (name, value) in launch_gateways::env(&gateways, &env) {
        match value {
            Some(v) => cmd.env(name, v),
            None => cmd.env_remove(name),
        };
    }
    for note in &setup.notes {
        eprintln!("aileron: {note}");
        decider.record_session_note(note);
    }
    for note in &setup.recorded {
        decider.record_session_note(note);
    }
    if enforce != Enforce::ALL {
        decider.record_session_note(&format!(
            "the kernel enforces {} in this session{}",
            enforce.describe(),
            if asked_enforce {
                " (--enforce)"
            } else {
                " (all this system supports)"
            }
        ));
    }
    if !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!(
            "{}",
            banner(
                &policy_files(&loaded, &opts_data_dir, &cwd, args_policy.as_deref()),
                enforce,
                &decider,
                loaded.policy.settings.ask_mode == Some(aileron_engine::AskMode::Ui),
                interactive,
                proxy.as_ref(),
                &gateways,
            )
        );
    }
    let status = if enforce.is_none() {
        // A middle process adopts and reaps the tree's orphans, as under
        // enforcement (`aileron_supervisor::spawn`).
        #[cfg(target_os = "linux")]
        aileron_supervisor::spawn::keep_orphans(&mut cmd);
        cmd.spawn().map_err(Error::Process).and_then(|mut child| {
            decider.set_agent_pid(child.id());
            child.wait().map_err(Error::Process)
        })
    } else {
        let audit_dir = aileron_config::audit_log_path(
            &loaded.policy,
            loaded.project_file.as_deref(),
            &LoadOptions {
                data_dir: opts_data_dir.clone(),
                ..LoadOptions::from_env(cwd.clone())
            },
        )
        .parent()
        .map(Path::to_path_buf);
        let base = loaded
            .project_file
            .as_deref()
            .and_then(Path::parent)
            .unwrap_or(&cwd);
        let environment = LoadOptions {
            data_dir: opts_data_dir.clone(),
            ..LoadOptions::from_env(cwd.clone())
        }
        .environment();
        let settings = &loaded.policy.settings;
        let mut hidden = hidden;
        let mut writable = None;
        if enforce.files {
            hidden.extend(box_masks(
                &loaded.policy,
                agent.as_deref(),
                base,
                &environment,
                &decider,
            ));
            hidden.extend(closed_sockets(
                settings.sockets.as_deref().unwrap_or_default(),
                Path::new(&environment.home),
                base,
                &runtime,
                &decider,
            ));
            // The session's own terminal: what its standard streams are.
            let own = launch_box::own_streams();
            hidden.extend(launch_box::other_terminals(Path::new("/dev/pts"), &own));
            writable = box_writable(
                settings.writable.as_deref(),
                agent.as_deref(),
                &environment,
                base,
                &cwd,
                env.iter()
                    .find(|(k, _)| k == "PATH")
                    .map_or("", |(_, v)| v.as_str()),
                &decider,
            );
        }
        // The proxy answers the box's DNS, when there is one.
        let dns = match enforce.net {
            true => proxy.as_ref().and_then(|p| p.child.adopter()),
            false => None,
        };
        // The gateways' listeners in the box's network: the proxy's first.
        let net = enforce.net.then(|| {
            proxy
                .as_ref()
                .map(|p| (&p.address, &p.child))
                .into_iter()
                .chain(gateways.iter().map(|g| (&g.address, &g.child)))
                .filter_map(|(address, child)| {
                    Some((launch_proxy::port_of(address)?, child.adopter()?))
                })
                .collect::<Vec<_>>()
        });
        run_enforced(
            cmd,
            program,
            enforce,
            &decider,
            &shim,
            launch_argv,
            &env,
            &cwd,
            &runtime,
            &opts_data_dir,
            audit_dir,
            &setup,
            &environment,
            BoxParts {
                writable,
                hidden,
                net,
                dns,
                links,
                project: base.to_path_buf(),
                opened_sockets: settings
                    .sockets
                    .iter()
                    .flatten()
                    .map(|p| launch_box::policy_path(p, Path::new(&environment.home), base))
                    .collect(),
            },
        )
        .and_then(|mut child| {
            decider.set_agent_pid(child.id());
            child.wait().map_err(Error::Process)
        })
    };
    drop(proxy);
    drop(gateways);
    for file in &setup.copied_back {
        if let Some(why) = file.put_back() {
            eprintln!("aileron: {why}");
            decider.record_session_note(&why);
        }
    }
    let _ = std::fs::remove_dir_all(&runtime);
    let status = status.map_err(|e| Error::Run {
        program: program.clone(),
        source: Box::new(e),
    })?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(sig)) => 128u8.wrapping_add(sig as u8),
        _ => 1,
    })
}

/// What the session's egress proxy is started from.
struct StartProxy<'a> {
    for_session: &'a launch_proxy::ForSession<'a>,
    runtime: &'a Path,
    loaded: &'a aileron_config::Loaded,
    env: &'a [(String, String)],
    data_dir: &'a Path,
    /// The box has a network of its own.
    boxed: bool,
}

/// Starts the session's proxy; the variables that send the agent through it.
fn start_proxy(
    s: &StartProxy,
) -> Result<(launch_proxy::SessionProxy, Vec<(String, String)>), Error> {
    let home = s
        .env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| PathBuf::from(v))
        .unwrap_or_default();
    let agent_apis = aileron_proxy::agents::model_endpoints(s.for_session.agent, s.env, &home);
    let inspect = s
        .loaded
        .policy
        .settings
        .proxy_inspect
        .as_ref()
        .is_some_and(|h| !h.is_empty());
    let proxy = launch_proxy::start(&launch_proxy::Start {
        session: s.for_session,
        runtime: s.runtime,
        inspect,
        boxed: s.boxed,
        agent_apis: &agent_apis,
    })?;
    // Aileron's own server is reached directly (its token is the session's).
    let no_proxy: Vec<String> = aileron_session::remote::Remote::discover(s.data_dir)
        .map(|r| r.hosts().into_iter().map(str::to_owned).collect())
        .unwrap_or_default();
    let env = proxy.env(&no_proxy);
    Ok((proxy, env))
}

/// The policy files in force: the project's (or `--policy`), and the
/// user's settings when they exist.
fn policy_files(
    loaded: &aileron_config::Loaded,
    data_dir: &Path,
    cwd: &Path,
    explicit: Option<&Path>,
) -> Vec<String> {
    let opts = LoadOptions {
        data_dir: data_dir.to_path_buf(),
        ..LoadOptions::from_env(cwd.to_path_buf())
    };
    let mut files: Vec<String> = explicit
        .map(Path::to_path_buf)
        .or_else(|| loaded.project_file.clone())
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let user = opts.home.join(".aileron").join("settings.yaml");
    if opts.user_settings && user.is_file() {
        files.push(user.to_string_lossy().into_owned());
    }
    files
}

/// The start-up lines: the session is active, under which policy, what
/// the kernel enforces, and where asks will appear.
fn banner(
    files: &[String],
    enforce: Enforce,
    decider: &Decider,
    dashboard_mode: bool,
    interactive: bool,
    proxy: Option<&launch_proxy::SessionProxy>,
    gateways: &[launch_gateways::SessionGateway],
) -> String {
    let home = std::env::var("HOME").unwrap_or_default();
    let short = |f: &String| match f.strip_prefix(&home) {
        Some(rest) if !home.is_empty() => format!("~{rest}"),
        _ => f.clone(),
    };
    let policy = if files.is_empty() {
        "built-in rules only (no aileron.yaml)".to_owned()
    } else {
        files.iter().map(short).collect::<Vec<_>>().join(" + ")
    };
    let asks = match decider.dashboard() {
        Some(url) if dashboard_mode => format!("the dashboard {url}"),
        _ => {
            let there = "`aileron approve` in another terminal";
            if std::fs::File::open("/dev/tty").is_ok() {
                format!("this terminal, or {there} while the program is full-screen")
            } else {
                there.to_owned()
            }
        }
    };
    let mut text = format!(
        "aileron: session active · policy {policy} · kernel enforces {} · asks: {asks}",
        enforce.describe()
    );
    match proxy {
        Some(p) => {
            text.push_str(&format!(
                "\naileron: web requests go through the egress proxy http://{}",
                p.address
            ));
            if p.trust.is_some() {
                text.push_str(" (TLS inspected as settings.proxy.inspect says)");
            }
            if enforce.net {
                text.push_str(
                    "; the box has no other way out (its own network; SOCKS5 at the same address)",
                );
            }
        }
        None if enforce.net => {
            text.push_str("\naileron: no egress proxy (--no-proxy): the box has no network")
        }
        None => text.push_str("\naileron: no egress proxy: web requests are not decided"),
    }
    if enforce.files {
        text.push_str("\naileron: the box: writes only in the project, the temporary directories, the agent's state and the caches; credential stores and the host's sockets closed (settings.enforce opens them)");
    }
    if !enforce.files {
        text.push_str("\naileron: files are not locked: the agent's programs can read your files, the approver key included; an ask is only as safe as the agent is well-behaved");
    }
    for (i, g) in gateways.iter().enumerate() {
        text.push_str(&format!(
            "\naileron: SQL to {} goes through the gateway postgres://{}{}",
            g.upstream,
            g.address,
            if i == 0 { " (PGHOST, PGPORT)" } else { "" }
        ));
    }
    if interactive {
        text.push_str("\naileron: every line typed into this shell is decided before it runs");
    }
    text
}

/// Whether `program ARGS` starts an interactive shell: Ok(true) for a
/// bash that takes the session's rc file (a DEBUG trap decides each line
/// typed), an error for any other interactive shell (its lines would go
/// undecided), Ok(false) for everything else.
fn interactive_shell(program: &str, args: &[String]) -> Result<bool, String> {
    use aileron_shell::invocation::{self, Invocation};
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    const SHELLS: &[&str] = &[
        "bash", "sh", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "ash", "yash", "nu",
        "elvish", "xonsh",
    ];
    if !SHELLS.contains(&name) {
        return Ok(false);
    }
    let flag_i = args
        .iter()
        .take_while(|a| a.starts_with('-') && *a != "--" && *a != "-")
        .any(|a| a == "-i" || (!a.starts_with("--") && a.contains('i')));
    let reads_terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
    let interactive = match invocation::parse(args) {
        Invocation::Shell => reads_terminal || flag_i,
        _ => false,
    };
    if !interactive {
        return Ok(false);
    }
    let refuse = |why: &str| {
        Err(format!(
            "{why}: the commands typed into it would not be decided. Launch an agent, give the shell a command (`aileron launch -- {name} -c '...'`), or start bash without that option"
        ))
    };
    if name != "bash" {
        return refuse(&format!("`{name}` would start an interactive shell"));
    }
    for a in args {
        let login =
            a == "--login" || (a.starts_with('-') && !a.starts_with("--") && a.contains('l'));
        if login
            || matches!(
                a.as_str(),
                "--norc" | "--rcfile" | "--init-file" | "--posix" | "--restricted" | "-r"
            )
        {
            return refuse(&format!("bash `{a}` would not read the session's rc file"));
        }
    }
    Ok(true)
}

/// The rc file of an interactive bash under launch: the user's
/// `~/.bashrc`, then a DEBUG trap (with `extdebug`, a non-zero return
/// skips the command) that asks the session about each line typed, once,
/// before any of it runs: the line is read from the history (which the
/// trap keeps on and unfiltered), and a line missing from it is refused.
/// The prompt's command number (`\#`) tells a new line from the rest of
/// one already decided (its other commands, the prompt command).
fn gate_rcfile(aileron: &Path) -> String {
    let exe = aileron.to_string_lossy().replace('\'', r"'\''");
    format!(
        r#"# Written by `aileron launch`: each line typed here is decided by the session.
if [ -f "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi
__aileron_gate() {{
    HISTCONTROL=
    HISTIGNORE=
    [[ $HISTSIZE =~ ^[1-9] ]] || HISTSIZE=500
    set -o history
    local c='\#'
    c=${{c@P}}
    if [[ $c == "$__aileron_c" ]]; then
        return "$__aileron_v"
    fi
    __aileron_c=$c
    local h n
    h=$(HISTTIMEFORMAT= builtin history 1)
    h=${{h#"${{h%%[![:space:]]*}}"}}
    n=${{h%%[!0-9]*}}
    h=${{h#"$n"}}
    h=${{h#\*}}
    h=${{h#  }}
    if [[ -z $n || $n == "$__aileron_h" ]]; then
        builtin printf '%s
' "aileron: denied: this line is not in the shell's history, so it was not checked; type it again" >&2
        __aileron_v=1
        return 1
    fi
    __aileron_h=$n
    if '{exe}' gate -- "$h"; then __aileron_v=0; else __aileron_v=1; fi
    return "$__aileron_v"
}}
__aileron_c='\#'
__aileron_c=${{__aileron_c@P}}
__aileron_h=
__aileron_v=0
shopt -s extdebug
trap '__aileron_gate' DEBUG
"#
    )
}

/// What to enforce: `--enforce` as asked (refused where the kernel cannot),
/// or by default all that the kernel supports, said on the terminal.
#[cfg(target_os = "linux")]
fn enforcement(asked: Option<&str>) -> Result<Enforce, Error> {
    let exec_support = aileron_supervisor::exec_support();
    let files_support = aileron_supervisor::files_support();
    let net_support = aileron_supervisor::net_support();
    match asked {
        Some(text) => {
            let e = Enforce::parse(text)?;
            if e.exec
                && let Err(why) = exec_support
            {
                return Err(Error::CannotEnforceExec(why));
            }
            if e.files
                && let Err(why) = files_support
            {
                return Err(Error::CannotEnforceFiles(why));
            }
            if e.net
                && let Err(why) = net_support
            {
                return Err(Error::CannotEnforceNet(why));
            }
            if e.is_none() {
                eprintln!(
                    "aileron: --enforce none: programs the agent's commands start are not decided, and its files are not locked"
                );
            }
            Ok(e)
        }
        None => {
            let e = Enforce {
                exec: exec_support.is_ok(),
                files: files_support.is_ok(),
                net: net_support.is_ok(),
            };
            for (on, what, why) in [
                (e.exec, "exec", &exec_support),
                (e.files, "files", &files_support),
                (e.net, "the network", &net_support),
            ] {
                if let (false, Err(why)) = (on, why) {
                    eprintln!("aileron: cannot enforce {what} here: {why}");
                }
            }
            Ok(e)
        }
    }
}

/// Kernel enforcement needs Linux: elsewhere `--enforce` takes only
/// `none`, which is also the default, said on the terminal.
#[cfg(not(target_os = "linux"))]
fn enforcement(asked: Option<&str>) -> Result<Enforce, Error> {
    let e = Enforce::parse(asked.unwrap_or("none"))?;
    if !e.is_none() {
        return Err(aileron_supervisor::Error::NeedsLinux.into());
    }
    eprintln!(
        "aileron: --enforce none{}: programs the agent's commands start are not decided, and its files are not locked",
        if asked.is_none() {
            " (kernel enforcement needs Linux)"
        } else {
            ""
        }
    );
    Ok(e)
}

/// What the box is made of, besides Aileron's own files.
struct BoxParts {
    /// The only places the tree writes (None: everywhere but `/proc`).
    writable: Option<Vec<PathBuf>>,
    /// Read as absent or empty: credential stores, denied files, the
    /// approver key, the host's sockets.
    hidden: Vec<PathBuf>,
    /// A network of the box's own (`--enforce net`): each gateway's port
    /// and where to hand it the listener made there.
    net: Option<Vec<(u16, std::os::fd::OwnedFd)>>,
    /// With `net` and a proxy: where to hand the proxy the box's DNS
    /// sockets (`127.0.0.1:53`), whose names it answers by policy.
    dns: Option<std::os::fd::OwnedFd>,
    /// The walk of the project's hard links, started before the proxy.
    links: Option<std::thread::JoinHandle<launch_box::HardLinks>>,
    /// The project's directory, searched for other names of what is
    /// masked or locked.
    project: PathBuf,
    /// The host's Unix sockets the policy opens (`settings.enforce.sockets`).
    opened_sockets: Vec<PathBuf>,
}

#[allow(clippy::too_many_arguments)]
fn run_enforced(
    cmd: std::process::Command,
    program: &str,
    enforce: Enforce,
    decider: &Arc<Decider>,
    shim: &Path,
    launch_argv: Vec<String>,
    env: &[(String, String)],
    cwd: &Path,
    runtime: &Path,
    data_dir: &Path,
    audit_dir: Option<PathBuf>,
    agent: &launch_agents::AgentSetup,
    environment: &aileron_engine::Environment,
    parts: BoxParts,
) -> Result<std::process::Child, Error> {
    let BoxParts {
        writable,
        hidden,
        net,
        dns,
        links,
        project,
        opened_sockets,
    } = parts;
    let writable = writable.map(|mut w| {
        w.extend(agent.writable.iter().cloned());
        w
    });
    let (ports, adopters): (Vec<u16>, Vec<std::os::fd::OwnedFd>) =
        net.as_ref().map_or((Vec::new(), Vec::new()), |n| {
            n.iter()
                .filter_map(|(port, a)| Some((*port, a.try_clone().ok()?)))
                .unzip()
        });
    let lockdown = if enforce.files {
        // What masked files show: empty, read-only (made before the
        // session's files are locked, and locked with them).
        let cover = runtime.join("masked");
        std::fs::write(&cover, b"").map_err(Error::io("write", &cover))?;
        let (mut protect, mut secrets) = locked_paths(cwd, environment, data_dir, runtime, agent);
        // The approver key: the agent does not answer its own asks; and
        // the credential stores.
        secrets.extend(hidden);
        // The audit log's directory exists before it is locked: the agent
        // cannot put a link to /dev/null in its place.
        if let Some(dir) = audit_dir {
            std::fs::create_dir_all(&dir).map_err(Error::io("create", &dir))?;
            protect.push(dir);
        }
        let _ = std::fs::create_dir_all(data_dir);
        // What makes git run a command later, beyond the top repository's.
        protect.extend(launch_box::git_code(&project, Path::new(&environment.home)));
        let walked = match links.map(std::thread::JoinHandle::join) {
            Some(Ok(walked)) => walked,
            // Not started, or it panicked: walked here.
            _ => launch_box::HardLinks::walk(&[project.clone(), cwd.to_path_buf()]),
        };
        let (secret_aliases, locked_links) = hard_links(
            walked,
            &project,
            cwd,
            &secrets,
            &protect,
            writable.as_deref(),
            decider,
        );
        secrets.extend(secret_aliases);
        protect.extend(locked_links);
        let unreadable =
            launch_box::kept_unreadable(&secrets, writable.as_deref().unwrap_or_default());
        // The package caches, copy-on-write: the tree's changes land in a
        // directory of the project's, the host's caches keep their bytes.
        let caches = launch_box::cache_overlays(Path::new(&environment.home), &project, data_dir);
        if !caches.is_empty() {
            decider.record_session_note(&format!(
                "the box gives these package caches a copy of their own (the host's keep their bytes): {}",
                path_list(&caches.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>())
            ));
        }
        decider.pin_policy(
            std::time::SystemTime::now(),
            protect
                .iter()
                .filter(|p| p.ends_with(aileron_config::POLICY_FILE) && p.is_file())
                .cloned()
                .collect(),
        );
        Some(
            Lockdown::prepare(&Spec {
                protect: &protect,
                secrets: &secrets,
                cover: Some(&cover),
                writable: writable.as_deref(),
                unreadable: &unreadable,
                listen: net.is_some().then_some(ports.as_slice()),
                dns: dns.as_ref().map(|_| runtime),
                caches: &caches,
            })
            .map_err(Error::Lockdown)?,
        )
    } else if enforce.net {
        Some(
            Lockdown::prepare(&Spec {
                listen: Some(&ports),
                dns: dns.as_ref().map(|_| runtime),
                ..Spec::default()
            })
            .map_err(Error::Lockdown)?,
        )
    } else {
        None
    };
    decider.trust_shim(shim);
    if let Ok(me) = std::env::current_exe() {
        decider.trust_aileron(&me);
    }
    let for_supervisor = Arc::clone(decider);
    let session_dir = runtime.to_path_buf();
    let env = env.to_vec();
    let started = Arc::new(std::sync::OnceLock::<Arc<Supervisor>>::new());
    let slot = Arc::clone(&started);
    let received = aileron_supervisor::spawn::Received {
        // Each gateway accepts on its listener; the session keeps no copy,
        // so that a gateway that dies leaves the tree with no way out.
        on_box_listeners: move |listeners: Vec<std::os::fd::OwnedFd>| {
            let (gateways, resolver) = listeners.split_at(adopters.len().min(listeners.len()));
            for (listener, adopter) in gateways.iter().zip(&adopters) {
                if let Err(e) = launch_proxy::adopt(adopter, listener) {
                    eprintln!("aileron: a gateway could not take its listener in the box: {e}");
                }
            }
            // The box's DNS sockets (after the gateways'): the proxy answers them.
            for (socket, proxy) in resolver.iter().zip(std::iter::repeat(&dns).flatten()) {
                if let Err(e) = launch_proxy::adopt_dns(proxy, socket) {
                    eprintln!("aileron: the proxy could not take the box's DNS socket: {e}");
                }
            }
        },
        on_listener: move |fd| {
            let reach = aileron_supervisor::Reach {
                session_dirs: vec![session_dir],
                opened: opened_sockets,
            };
            let supervisor = Supervisor::new(fd, for_supervisor, launch_argv, &env, reach);
            supervisor.start();
            let _ = slot.set(supervisor);
        },
    };
    let child = aileron_supervisor::spawn::spawn(cmd, program, enforce, lockdown, received)?;
    if let Some(supervisor) = started.get() {
        supervisor.set_root(child.id());
    }
    Ok(child)
}

/// The project's hard links made before the session
/// (`launch_box::HardLinks`), each kind named in the audit log: (those to
/// mask: other names of what is masked; those to lock: other names of what
/// is locked, and, when the box confines writes, of a file with a name
/// outside the `writable` places, which a write through the link would
/// change).
fn hard_links(
    mut links: launch_box::HardLinks,
    project: &Path,
    cwd: &Path,
    secrets: &[PathBuf],
    protect: &[PathBuf],
    writable: Option<&[PathBuf]>,
    decider: &Decider,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let roots = [project.to_path_buf(), cwd.to_path_buf()];
    let masked = links.aliases(secrets);
    let mut locked = links.aliases(protect);
    let mut outside = Vec::new();
    if let Some(writable) = writable {
        links.find_elsewhere(writable, &roots);
        outside = links.leading_out();
        outside.retain(|p| !secrets.contains(p) && !masked.contains(p) && !locked.contains(p));
    }
    let notes = [
        (
            "the box also masks these hard links to what it masks",
            &masked,
        ),
        (
            "the box also locks these hard links to what it locks",
            &locked,
        ),
        (
            "the box locks these hard links to a file with a name outside the places it lets the tree write (written through, they would change it)",
            &outside,
        ),
    ];
    // A copy made with `cp -al` links every file: the note names a few.
    const NAMED: usize = 20;
    for (what, paths) in notes {
        let more = paths.len().saturating_sub(NAMED);
        let named = path_list(&paths[..paths.len() - more]);
        match (paths.is_empty(), more) {
            (true, _) => {}
            (false, 0) => decider.record_session_note(&format!("{what}: {named}")),
            (false, n) => decider.record_session_note(&format!("{what}: {named} and {n} more")),
        }
    }
    if links.cut_short {
        decider.record_session_note(&format!(
            "the box looked for hard links among the first {} entries of the project only: a link beyond them is not locked",
            launch_box::WALK_LIMIT
        ));
    }
    locked.extend(outside);
    (masked, locked)
}

/// `a, b, c`: paths in an audit note.
fn path_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the box masks (`aileron_cli::launch_box`): the credential stores
/// and the project's files a rule denies reading, each kind named in a
/// `session.start` audit line.
fn box_masks(
    policy: &aileron_engine::Policy,
    agent: Option<&str>,
    base: &Path,
    environment: &aileron_engine::Environment,
    decider: &Decider,
) -> Vec<PathBuf> {
    let sock = std::env::var_os("SSH_AUTH_SOCK").map(PathBuf::from);
    let mut masked = launch_box::masked(
        environment,
        agent,
        policy.settings.readable.as_deref().unwrap_or_default(),
        base,
        sock.as_deref(),
    );
    if !masked.is_empty() {
        decider.record_session_note(&format!(
            "the box masks these credential stores (settings.enforce.readable gives one back): {}",
            path_list(&masked)
        ));
    }
    let (reads, truncated) = launch_box::denied_reads(policy, base);
    if !reads.is_empty() || truncated {
        decider.record_session_note(&format!(
            "the box masks the project's files a rule denies reading: {}{}",
            path_list(&reads),
            if truncated {
                format!(
                    " (only the first {} entries of the project were looked at)",
                    launch_box::WALK_LIMIT
                )
            } else {
                String::new()
            }
        ));
    }
    masked.extend(reads);
    masked
}

/// Where the box lets the tree write (`launch_box::writable_places`), or
/// None, said in the audit log, when this kernel has no Landlock (then
/// `settings.enforce.writable`, which needs it, stops the launch).
fn box_writable(
    extra: Option<&[String]>,
    agent: Option<&str>,
    environment: &aileron_engine::Environment,
    base: &Path,
    cwd: &Path,
    path: &str,
    decider: &Decider,
) -> Option<Vec<PathBuf>> {
    if aileron_supervisor::files::landlock_abi() == 0 && extra.is_none() {
        decider.record_session_note(
            "the box does not confine writes: this kernel has no Landlock (Linux 5.13+)",
        );
        return None;
    }
    let tmpdir = std::env::var_os("TMPDIR").map(PathBuf::from);
    Some(launch_box::writable_places(&launch_box::Writable {
        agent,
        home: Path::new(&environment.home),
        base,
        cwd,
        tmpdir: tmpdir.as_deref(),
        extra: extra.unwrap_or_default(),
        path,
        terminals: &launch_box::own_streams(),
    }))
}

/// The host's Unix sockets the box closes (`launch_box::host_sockets`),
/// named in the audit log.
fn closed_sockets(
    open: &[String],
    home: &Path,
    base: &Path,
    runtime: &Path,
    decider: &Decider,
) -> Vec<PathBuf> {
    // Not listed: said on the terminal and in the audit log, never silent.
    let table = std::fs::read_to_string("/proc/net/unix").unwrap_or_else(|e| {
        let why = format!(
            "the box cannot list the host's Unix sockets (/proc/net/unix: {e}): none is closed"
        );
        eprintln!("aileron: {why}");
        decider.record_session_note(&why);
        String::new()
    });
    let open: Vec<PathBuf> = open
        .iter()
        .map(|p| launch_box::policy_path(p, home, base))
        .collect();
    let closed = launch_box::host_sockets(&table, &[runtime.to_path_buf()], &open);
    if !closed.is_empty() {
        decider.record_session_note(&format!(
            "the box closes the host's Unix sockets (settings.enforce.sockets opens one): {}",
            path_list(&closed)
        ));
    }
    closed
}

/// The paths the agent's tree may not write (`protect`) or read
/// (`secrets`) under `--enforce files`: what the built-in self-protection
/// rules name (`aileron_engine::builtin::kernel_locked`, from the same
/// tables), as it exists now, and Aileron's data and session directories.
fn locked_paths(
    cwd: &Path,
    env: &aileron_engine::Environment,
    data_dir: &Path,
    runtime: &Path,
    agent: &launch_agents::AgentSetup,
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    use aileron_engine::builtin::{Lock, kernel_locked};
    let dirs: Vec<String> = cwd
        .ancestors()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    let mut protect = vec![data_dir.to_path_buf()];
    if agent.writable.is_empty() {
        protect.push(runtime.to_path_buf());
    } else {
        // The session's own files, but for the places the agent writes.
        if let Ok(entries) = std::fs::read_dir(runtime) {
            protect.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| !agent.writable.contains(p)),
            );
        }
        protect.extend(agent.locked.iter().cloned());
    }
    for (path, lock) in kernel_locked(env, &dirs) {
        let path = PathBuf::from(path);
        // A name the rules protect, whose contents are not theirs (`.git`).
        if lock == Lock::Entry && path.is_dir() {
            continue;
        }
        protect.push(path);
    }
    let mut secrets = Vec::new();
    if let Ok(entries) = std::fs::read_dir(data_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("aileron.db") || name.contains("token") {
                secrets.push(e.path());
            }
        }
    }
    (protect, secrets)
}

/// `program` as a path: itself if it names one, else the first match in
/// the agent's PATH (the exec that starts the agent is checked against it).
fn find_program(program: &str, env: &[(String, String)]) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())?;
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// `aileron-sh` beside this executable.
fn shim_path() -> Result<PathBuf, Error> {
    let exe = std::env::current_exe().map_err(Error::Executable)?;
    let shim = exe.with_file_name("aileron-sh");
    if shim.is_file() {
        Ok(shim)
    } else {
        Err(Error::ShimMissing { path: shim })
    }
}

/// The shell to exec after a decision: the user's `$SHELL` when it is a
/// real absolute path (not a shim), else bash. Recorded once, here.
fn real_shell(runtime: &Path) -> String {
    let candidate = std::env::var("SHELL").unwrap_or_default();
    let p = Path::new(&candidate);
    let usable = p.is_absolute()
        && std::fs::canonicalize(p).is_ok_and(|real| {
            real.file_name()
                .is_some_and(|n| n != "aileron-sh" && n != "aileron")
                && !real.starts_with(runtime)
        })
        && std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    if usable {
        candidate
    } else if Path::new("/bin/bash").exists() {
        "/bin/bash".into()
    } else {
        "/bin/sh".into()
    }
}

/// The environment without scrubbed variables (passthrough wins), and the
/// scrubbed values, which the audit log must never show.
pub fn scrubbed_env(
    scrub: &[String],
    passthrough: &[String],
) -> (Vec<(String, String)>, Vec<String>) {
    let scrub: Vec<Glob> = scrub.iter().map(|p| Glob::plain(p)).collect();
    let keep: Vec<Glob> = passthrough.iter().map(|p| Glob::plain(p)).collect();
    let mut env = Vec::new();
    let mut secrets = Vec::new();
    for (k, v) in std::env::vars() {
        let scrubbed = scrub.iter().any(|g| g.is_match(&k)) && !keep.iter().any(|g| g.is_match(&k));
        // Nothing from an outer session leaks in.
        if k.starts_with("AILERON_") {
            continue;
        }
        if scrubbed {
            secrets.push(v);
        } else {
            env.push((k, v));
        }
    }
    (env, secrets)
}

fn random_id() -> Result<String, Error> {
    let mut bytes = [0u8; 12];
    let urandom = Path::new("/dev/urandom");
    std::fs::File::open(urandom)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(Error::io("read", urandom))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A private directory for the session's socket and shim links.
fn runtime_dir(id: &str) -> Result<PathBuf, Error> {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| Path::new(d).is_dir())
        .map(|d| PathBuf::from(d).join("aileron"))
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/aileron-{uid}")));
    std::fs::create_dir_all(&base).map_err(Error::io("create", &base))?;
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700))
        .map_err(Error::io("secure", &base))?;
    let dir = base.join(id);
    std::fs::create_dir(&dir).map_err(Error::io("create", &dir))?;
    Ok(dir)
}
