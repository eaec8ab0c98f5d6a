//! `aileron serve`: the rules of layer 7, the action log and the human
//! approval queue, in SQLite (default, `$AILERON_DATA/aileron.db`) or
//! PostgreSQL, behind an authenticated HTTP API and the dashboard.
//!
//! [`Server::start`] binds, migrates, creates the first tokens and serves
//! until [`Server::shutdown`]; [`serve`] does the same until SIGINT/SIGTERM.
//! The engine stays pure: this crate is the only one with an async runtime.

pub mod api;
pub mod app;
pub mod auth;
pub mod db;
mod error;
pub mod listen;
pub mod metrics;
pub mod notify;
pub mod ops;
pub mod pending;
pub mod projects;
pub mod replicas;
pub mod retention;
pub mod rules;
pub mod verdicts;
mod writer;

use crate::auth::Role;
use crate::db::Db;
pub use crate::error::{Error, PolicyError};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The default listen address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";
pub const ADMIN_TOKEN_FILE: &str = "admin.token";
pub const AGENT_TOKEN_FILE: &str = "agent.token";
pub const SERVER_FILE: &str = "server.json";
pub const APPROVERS_FILE: &str = "approvers.json";

/// A webhook approver: who may call `/api/approvers/<id>/decision`, signed
/// with `secret`; with `url`, each action waiting for it is posted there
/// (signed the same way).
#[derive(Clone, Debug, serde::Deserialize)]
pub struct WebhookApprover {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    pub secret: String,
    /// `http://...` to notify of pending actions (a chat bridge, ...).
    #[serde(default)]
    pub url: Option<String>,
}

/// How the server runs.
#[derive(Clone, Debug)]
pub struct Config {
    pub listen: SocketAddr,
    /// `sqlite://PATH` or `postgres://...`; default `$AILERON_DATA/aileron.db`.
    pub database_url: Option<String>,
    /// `$AILERON_DATA`: tokens, `server.json`, the rules export.
    pub data_dir: PathBuf,
    pub home: PathBuf,
    /// The server's own policy (`--policy`), for actions outside every
    /// registered project; `None`: the `aileron.yaml` found from `cwd`.
    pub policy: Option<PathBuf>,
    /// The projects an admin registered (`--project`): an action's
    /// `session.cwd` selects among them and names nothing else.
    pub projects: Vec<projects::Project>,
    /// The directory the server runs in.
    pub cwd: PathBuf,
    /// Read `~/.aileron/settings.yaml` (layer 6) when loading policies.
    pub user_settings: bool,
    /// More `Host` values to accept (`name` or `name:port`), for a server
    /// reached by name.
    pub allowed_hosts: Vec<String>,
    /// Webhook approvers (also read from `$AILERON_DATA/approvers.json`).
    pub approvers: Vec<WebhookApprover>,
    /// Wait for a human when neither the rule nor the settings say.
    pub default_timeout: Duration,
    /// Write `$AILERON_DATA/server.json` for local adapters.
    pub write_server_file: bool,
    /// The judges' API keys by variable name, read instead of the
    /// environment (tests); `None`: the server's environment.
    pub judge_keys: Option<JudgeKeys>,
    /// What the action log keeps (`--retain`; default: everything).
    pub retention: retention::Retention,
    /// How log lines are written (`--log-format`).
    pub log_format: ops::LogFormat,
    /// `GET /metrics` without a token (`--metrics-public`).
    pub metrics_public: bool,
    /// How long a shutdown lets the requests in flight finish.
    pub drain_timeout: Duration,
    /// Slow and flooding clients: timeouts, the connection cap, the asks
    /// one session or agent token may keep waiting.
    pub limits: listen::Limits,
}

/// API keys of the LLM judges by the name of their variable. Its `Debug`
/// shows the names only.
#[derive(Clone, Default)]
pub struct JudgeKeys(Arc<std::collections::HashMap<String, String>>);

impl JudgeKeys {
    pub fn new(keys: impl IntoIterator<Item = (String, String)>) -> JudgeKeys {
        JudgeKeys(Arc::new(keys.into_iter().collect()))
    }

    /// The key held by variable `var`.
    pub fn get(&self, var: &str) -> Option<String> {
        self.0.get(var).cloned()
    }
}

impl std::fmt::Debug for JudgeKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

impl Config {
    /// Defaults from the environment: `$HOME`, `$AILERON_DATA`, the
    /// current directory.
    pub fn from_env() -> Config {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let opts = aileron_config::LoadOptions::from_env(cwd.clone());
        Config {
            listen: DEFAULT_LISTEN.parse().expect("a valid address"),
            database_url: None,
            data_dir: opts.data_dir,
            home: opts.home,
            policy: None,
            projects: Vec::new(),
            cwd,
            user_settings: true,
            allowed_hosts: Vec::new(),
            approvers: Vec::new(),
            default_timeout: Duration::from_secs(60),
            write_server_file: true,
            judge_keys: None,
            retention: retention::Retention::default(),
            log_format: ops::LogFormat::default(),
            metrics_public: false,
            drain_timeout: Duration::from_secs(30),
            limits: listen::Limits::default(),
        }
    }

    pub fn database_url(&self) -> String {
        self.database_url
            .clone()
            .unwrap_or_else(|| db::default_url(&self.data_dir))
    }

    /// Whether a request's `Host` (lower case) names this server.
    pub fn host_allowed(&self, host: &str) -> bool {
        let port = self.listen.port();
        let names = ["localhost", "127.0.0.1", "[::1]"];
        let ip = match self.listen.ip() {
            std::net::IpAddr::V4(v4) => v4.to_string(),
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        };
        let with_port = |n: &str| host == format!("{n}:{port}") || (port == 80 && host == n);
        names.iter().any(|n| with_port(n))
            || (!self.listen.ip().is_unspecified() && with_port(&ip))
            || self.allowed_hosts.iter().any(|a| {
                let a = a.to_ascii_lowercase();
                host == a || host == format!("{a}:{port}")
            })
    }
}

/// A running server.
pub struct Server {
    pub addr: SocketAddr,
    /// `http://ADDR`.
    pub url: String,
    pub admin_token: String,
    pub agent_token: String,
    /// True when this start created the data directory's tokens.
    pub first_start: bool,
    pub app: Arc<app::App>,
    shutdown: tokio::sync::watch::Sender<bool>,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<std::io::Result<()>>>>,
}

impl Server {
    /// Opens the database (creating and migrating it), makes the first
    /// tokens, binds and starts serving.
    pub async fn start(mut cfg: Config) -> Result<Server, Error> {
        create_private_dir(&cfg.data_dir).map_err(|source| Error::CreateDataDir {
            path: cfg.data_dir.clone(),
            source,
        })?;
        cfg.approvers.extend(read_approvers(&cfg.data_dir)?);
        let db = Db::open(&cfg.database_url())
            .await
            .map_err(|source| Error::OpenDatabase {
                url: redact_url(&cfg.database_url()),
                source,
            })?;
        let now = aileron_audit::now_rfc3339();
        let (admin_token, first_admin) =
            ensure_token(&db, &cfg.data_dir, ADMIN_TOKEN_FILE, Role::Admin, &now).await?;
        let (agent_token, _) =
            ensure_token(&db, &cfg.data_dir, AGENT_TOKEN_FILE, Role::Agent, &now).await?;
        let listener = tokio::net::TcpListener::bind(cfg.listen)
            .await
            .map_err(|source| Error::Listen {
                addr: cfg.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(Error::LocalAddr)?;
        cfg.listen = addr;
        let (tx, rx) = tokio::sync::watch::channel(false);
        let app = app::App::new(cfg.clone(), db, rx.clone()).await?;
        app.ops.started(&app).await?;
        app.export_rules().await;
        app.spawn_rules_watch();
        // The asks already waiting are shown, and the other servers heard,
        // before the first request.
        replicas::start(&app).await?;
        retention::spawn(&app);
        let router = api::router(app.clone());
        let task = tokio::spawn(listen::serve(listener, router, cfg.limits.clone(), rx));
        let url = format!("http://{addr}");
        if cfg.write_server_file {
            let info = serde_json::json!({"url": url, "pid": std::process::id()});
            app::write_atomic(
                &cfg.data_dir.join(SERVER_FILE),
                format!("{info}\n").as_bytes(),
                0o600,
            )
            .map_err(|source| Error::WriteServerFile { source })?;
        }
        Ok(Server {
            addr,
            url,
            admin_token,
            agent_token,
            first_start: first_admin,
            app,
            shutdown: tx,
            task: std::sync::Mutex::new(Some(task)),
        })
    }

    /// The dashboard's login link; the token is in the fragment, which
    /// browsers never send to the server.
    pub fn login_link(&self) -> String {
        format!("{}/#token={}", self.url, self.admin_token)
    }

    /// Stops accepting; answers the calls waiting for a person with 503
    /// (their asks stay undecided: the adapters send them again, to
    /// another server), lets the other requests in flight finish (at most
    /// `drain_timeout`), writes what the action log still holds, and
    /// removes `server.json`.
    pub async fn shutdown(&self) {
        let _ = self.shutdown.send(true);
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut task) = task
            && tokio::time::timeout(self.app.cfg.drain_timeout, &mut task)
                .await
                .is_err()
        {
            ops::log_event(
                &self.app.cfg,
                "warn",
                "shutdown: requests still running after the drain timeout were cut",
            );
            task.abort();
        }
        self.app.flush_log().await;
        if self.app.cfg.write_server_file {
            let _ = std::fs::remove_file(self.app.cfg.data_dir.join(SERVER_FILE));
        }
        self.app.db.close().await;
    }
}

/// Runs the server until SIGINT or SIGTERM.
pub async fn serve(cfg: Config) -> Result<(), Error> {
    let server = Server::start(cfg).await?;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "aileron serve: listening on {}", server.url);
    let data = &server.app.cfg.data_dir;
    // The admin token goes to a terminal only: a journal or a container's
    // log is read by more people than the admin.
    if is_terminal(1) {
        let _ = writeln!(out, "dashboard: {}", server.login_link());
    } else {
        let _ = writeln!(
            out,
            "dashboard: {}/#token=<the token in {}>",
            server.url,
            data.join(ADMIN_TOKEN_FILE).display()
        );
    }
    let _ = writeln!(
        out,
        "agent token: {}; rules export: {}",
        data.join(AGENT_TOKEN_FILE).display(),
        data.join(aileron_config::server_rules::SERVER_RULES_FILE)
            .display()
    );
    for p in &server.app.cfg.projects {
        let _ = writeln!(
            out,
            "project: {} (policy {})",
            p.root.display(),
            p.policy.display()
        );
    }
    if !server.app.cfg.retention.keeps_everything() {
        let _ = writeln!(out, "action log: keeping {}", server.app.cfg.retention);
    }
    let _ = out.flush();
    wait_for_signal().await;
    server.shutdown().await;
    Ok(())
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let term = async {
        match term.as_mut() {
            Some(t) => {
                t.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

fn is_terminal(fd: i32) -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(fd) == 1 }
}

/// `postgres://user:pass@host/db` without the password.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &creds[..c], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn read_approvers(data_dir: &Path) -> Result<Vec<WebhookApprover>, Error> {
    let path = data_dir.join(APPROVERS_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            serde_json::from_str(&text).map_err(|source| Error::ApproversNotJson { path, source })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(Error::ReadApprovers { path, source }),
    }
}

/// The token in `file` (created, mode 0600, when missing), registered in
/// the database. Returns it and whether it was created.
async fn ensure_token(
    db: &Db,
    dir: &Path,
    file: &str,
    role: Role,
    now: &str,
) -> Result<(String, bool), Error> {
    let path = dir.join(file);
    let (token, created) = match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => (t.trim().to_owned(), false),
        Ok(_) => return Err(Error::EmptyTokenFile { path }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let t = auth::new_token();
            write_secret(&path, &t).map_err(|source| Error::CreateTokenFile { path, source })?;
            (t, true)
        }
        Err(source) => return Err(Error::ReadTokenFile { path, source }),
    };
    db.insert_token(&auth::token_hash(&token), role.as_str(), Some(file), now)
        .await
        .map_err(Error::StoreToken)?;
    Ok((token, created))
}

fn write_secret(path: &Path, token: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    writeln!(f, "{token}")?;
    f.sync_all()
}

/// Creates a token of `role` in the database; returns it (shown once).
pub async fn create_token(db: &Db, role: Role, name: Option<&str>) -> Result<String, Error> {
    let token = auth::new_token();
    db.insert_token(
        &auth::token_hash(&token),
        role.as_str(),
        name,
        &aileron_audit::now_rfc3339(),
    )
    .await
    .map_err(Error::StoreToken)?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        let mut c = Config::from_env();
        c.listen = "127.0.0.1:4000".parse().unwrap();
        assert!(c.host_allowed("127.0.0.1:4000"));
        assert!(c.host_allowed("localhost:4000"));
        assert!(!c.host_allowed("evil.example:4000"));
        assert!(!c.host_allowed("localhost:4001"));
        c.allowed_hosts.push("aileron.internal".into());
        assert!(c.host_allowed("aileron.internal:4000"));
        assert_eq!(
            redact_url("postgres://u:secret@h/db"),
            "postgres://u:***@h/db"
        );
    }

    /// Every route of the router is described in openapi.json, and every
    /// description is routed.
    #[test]
    fn openapi_names_every_route() {
        let spec: serde_json::Value = serde_json::from_str(api::OPENAPI).unwrap();
        let paths = spec["paths"].as_object().unwrap();
        let src = include_str!("api.rs");
        let mut routed = std::collections::HashSet::new();
        for part in src.split(".route(").skip(1) {
            let Some(part) = part.trim_start().strip_prefix('"') else {
                continue;
            };
            let path = &part[..part.find('"').unwrap()];
            // The dashboard's page and files are not the API.
            if path == "/" || path.starts_with("/assets/") {
                continue;
            }
            let oa = path.replace("{*path}", "{path}");
            let end = [".route(", ".route_layer(", ".fallback("]
                .iter()
                .filter_map(|m| part.find(m))
                .min()
                .unwrap_or(part.len());
            let methods = &part[..end];
            let item = paths
                .get(&oa)
                .unwrap_or_else(|| panic!("{oa} is missing from openapi.json"));
            for m in ["get", "post", "delete"] {
                if methods.contains(&format!("{m}(")) {
                    assert!(
                        item.get(m).is_some(),
                        "{m} {oa} is missing from openapi.json"
                    );
                    let method = m.to_ascii_uppercase();
                    assert!(
                        metrics::ROUTES.contains(&(method.as_str(), path)),
                        "{method} {path} is missing from metrics::ROUTES"
                    );
                }
            }
            routed.insert(oa);
        }
        assert!(routed.len() >= 12, "found {} routes", routed.len());
        for p in paths.keys() {
            assert!(routed.contains(p), "{p} is described but not routed");
        }
    }
}
