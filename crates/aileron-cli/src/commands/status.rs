//! `aileron status`: what is in force here, at a glance. It reports and
//! never fails: a policy that does not load, a server that does not
//! answer are lines of the report (exit 0).

use super::{current_dir, options, paint};
use aileron_cli::Error;
use aileron_hooks::Agent;
use aileron_hooks::install::{ConfigHomes, Target, installed};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// Policy file (default: the nearest aileron.yaml).
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// How long the server gets to accept a connection.
const SERVER_TIMEOUT: Duration = Duration::from_millis(800);

pub fn run(args: Args) -> Result<u8, Error> {
    let cwd = current_dir()?;
    let opts = options(args.policy, cwd.clone());
    let policy = policy(&opts);
    let hooks = hooks(&opts, &cwd);
    let launch = launch();
    let server = server(&opts.data_dir);
    let report = json!({
        "policy": policy,
        "hooks": hooks,
        "launch": launch,
        "server": server,
        "data_dir": opts.data_dir,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
    } else {
        print_text(&report);
    }
    Ok(0)
}

fn policy(opts: &aileron_config::LoadOptions) -> Value {
    match aileron_config::load(opts, None) {
        Ok(l) => {
            let audit = aileron_config::audit_log_path(&l.policy, l.project_file.as_deref(), opts);
            json!({
                "file": l.project_file,
                "valid": true,
                "rules": l.policy.rules().len(),
                "default": l.policy.default.as_str(),
                "sources": l.policy.sources.iter()
                    .map(|(n, layer)| json!({"name": n, "layer": layer.as_str()}))
                    .collect::<Vec<_>>(),
                "audit_log": audit,
                "errors": [],
            })
        }
        Err(d) => json!({
            "file": opts.policy_path.clone().or_else(|| aileron_config::find_project_file(&opts.cwd)),
            "valid": false,
            "errors": d.0.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        }),
    }
}

/// Per agent, the files of this project and of the user that hold its hook.
fn hooks(opts: &aileron_config::LoadOptions, cwd: &Path) -> Vec<Value> {
    let aileron = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "aileron".to_owned());
    Agent::ALL
        .iter()
        .map(|&agent| {
            let at = |user| {
                installed(&Target {
                    agent,
                    user,
                    cwd: cwd.to_path_buf(),
                    home: opts.home.clone(),
                    data_dir: opts.data_dir.clone(),
                    aileron: aileron.clone(),
                    homes: ConfigHomes::from_env(&opts.home),
                })
            };
            json!({"agent": agent.name(), "project": at(false), "user": at(true)})
        })
        .collect()
}

/// What the kernel enforces under `aileron launch` without `--enforce`:
/// all this system supports (nothing but on Linux), and why not the rest.
fn launch() -> Value {
    let exec = aileron_supervisor::exec_support();
    let files = aileron_supervisor::files_support();
    let net = aileron_supervisor::net_support();
    let enforce = aileron_supervisor::Enforce {
        exec: exec.is_ok(),
        files: files.is_ok(),
        net: net.is_ok(),
    };
    let part = |support: Result<(), aileron_supervisor::Error>| match support {
        Ok(()) => json!({"available": true}),
        Err(why) => json!({"available": false, "why": why.to_string()}),
    };
    let abi = aileron_supervisor::files::landlock_abi();
    let landlock = json!({
        "abi": abi,
        "writes_confined": abi >= 1,
        "abstract_sockets_scoped": abi >= 6 || net.is_ok(),
    });
    json!({"enforce": enforce.describe(), "exec": part(exec), "files": part(files), "net": part(net), "landlock": landlock})
}

/// The server the adapters would report to: `AILERON_SERVER` (one, or
/// several comma-separated), else the one `aileron serve` recorded in the
/// data directory, else the default address; and whether it (one of them)
/// accepts a connection within [`SERVER_TIMEOUT`].
fn server(data_dir: &Path) -> Value {
    let recorded = || -> Option<String> {
        let info: Value =
            serde_json::from_slice(&std::fs::read(data_dir.join("server.json")).ok()?).ok()?;
        Some(info.get("url")?.as_str()?.to_owned())
    };
    let (url, from) = match std::env::var("AILERON_SERVER") {
        Ok(u) if !u.is_empty() => (u, "AILERON_SERVER"),
        _ => match recorded() {
            Some(u) => (u, "server.json"),
            None => (
                format!("http://{}", aileron_server::DEFAULT_LISTEN),
                "default",
            ),
        },
    };
    // Several (replicas of one service): reachable when one is.
    let mut error = Some("not a URL".to_owned());
    for u in url.split(',').map(str::trim).filter(|u| !u.is_empty()) {
        match reach(u) {
            Ok(()) => {
                error = None;
                break;
            }
            Err(e) => error = Some(e),
        }
    }
    let reachable = error.is_none();
    json!({"url": url, "from": from, "reachable": reachable, "error": error})
}

/// Connects to the host and port of `url` (in a thread, so that a slow
/// name lookup cannot hold the command up either).
fn reach(url: &str) -> Result<(), String> {
    use std::net::{TcpStream, ToSocketAddrs};
    let (scheme, rest) = url.split_once("://").ok_or("not a URL")?;
    let authority = rest.split('/').next().unwrap_or_default().to_owned();
    let port = if scheme == "https" { 443 } else { 80 };
    let target = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority
    } else {
        format!("{authority}:{port}")
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result = (|| {
            let addr = target
                .to_socket_addrs()
                .map_err(|e| e.to_string())?
                .next()
                .ok_or("no address")?;
            TcpStream::connect_timeout(&addr, SERVER_TIMEOUT)
                .map(drop)
                .map_err(|e| e.to_string())
        })();
        let _ = tx.send(result);
    });
    rx.recv_timeout(SERVER_TIMEOUT + Duration::from_millis(200))
        .unwrap_or_else(|_| Err("no answer in time".to_owned()))
}

fn print_text(r: &Value) {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let p = &r["policy"];
    let file = p["file"].as_str().map_or(
        "no aileron.yaml (built-in rules only)".to_owned(),
        str::to_owned,
    );
    if p["valid"] == true {
        println!(
            "{}     {file} ({}, {} rules, default {})",
            paint::bold("policy"),
            paint::good("valid"),
            p["rules"],
            paint::decision(&s(&p["default"]), 0)
        );
        let sources: Vec<String> = p["sources"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| format!("{} ({})", s(&x["name"]), s(&x["layer"])))
            .collect();
        println!("  sources  {}", sources.join(", "));
        println!("  audit    {}", s(&p["audit_log"]));
    } else {
        println!(
            "{}     {file} ({})",
            paint::bold("policy"),
            paint::bad("does not load")
        );
        for e in p["errors"].as_array().into_iter().flatten() {
            println!("  {}", s(e));
        }
    }
    println!("{}", paint::bold("hooks"));
    for h in r["hooks"].as_array().into_iter().flatten() {
        let files =
            |k: &str| -> Vec<String> { h[k].as_array().into_iter().flatten().map(&s).collect() };
        let (project, user) = (files("project"), files("user"));
        let state = match (project.is_empty(), user.is_empty()) {
            (true, true) => paint::dim("not installed"),
            _ => {
                let mut parts = Vec::new();
                if !project.is_empty() {
                    parts.push(format!("project: {}", project.join(", ")));
                }
                if !user.is_empty() {
                    parts.push(format!("user: {}", user.join(", ")));
                }
                format!("{} ({})", paint::good("installed"), parts.join("; "))
            }
        };
        println!("  {:<12} {state}", s(&h["agent"]));
    }
    let launch = &r["launch"];
    let enforces = s(&launch["enforce"]);
    let enforces = if launch["exec"]["available"] == true && launch["files"]["available"] == true {
        paint::good(&enforces)
    } else {
        enforces
    };
    println!(
        "{}     kernel enforcement: {enforces} (aileron launch without --enforce)",
        paint::bold("launch")
    );
    for part in ["exec", "files"] {
        if launch[part]["available"] != true {
            println!("  {part:<9}{}", paint::dim(&s(&launch[part]["why"])));
        }
    }
    let sv = &r["server"];
    let reach = if sv["reachable"] == true {
        paint::good("reachable")
    } else {
        paint::dim(&format!("not reachable: {}", s(&sv["error"])))
    };
    println!(
        "{}     {} ({}): {reach}",
        paint::bold("server"),
        s(&sv["url"]),
        s(&sv["from"])
    );
    println!("{}       {}", paint::bold("data"), s(&r["data_dir"]));
}
