//! What every gateway of `aileron-server` (the egress proxy, the database
//! gateway) starts with: the policy found and loaded (one that does not
//! load starts nothing), the session, who decides (the launch session's
//! socket or a `Decider` of its own), the runtime and the listening socket.

use aileron_cli::Error;
use aileron_config::{LoadOptions, Loaded};
use aileron_session::{Decide, Decider, SessionSocket, TtyPrompter};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Exit status when the policy does not load.
const EXIT_POLICY: u8 = 1;

/// The options every gateway takes besides where it listens.
#[derive(clap::Args)]
pub struct Options {
    /// The policy file (default: aileron.yaml found from the current directory).
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// The launch session that decides (its socket; set by `aileron launch`).
    #[arg(long, hide = true)]
    pub session_socket: Option<PathBuf>,
    #[arg(long, hide = true)]
    pub session: Option<String>,
    #[arg(long, hide = true)]
    pub agent: Option<String>,
}

/// A gateway ready to serve.
pub struct Started {
    pub opts: LoadOptions,
    pub loaded: Loaded,
    pub cwd: PathBuf,
    /// The session: the launch session's, or the gateway's own (its
    /// "always" answers hold until it stops).
    pub session: Option<String>,
    pub decide: Arc<dyn Decide>,
    pub runtime: tokio::runtime::Runtime,
    pub listener: tokio::net::TcpListener,
    pub bound: SocketAddr,
}

/// Loads the policy and binds `listen`; `Ok(Err(code))`: the policy does
/// not load (said on stderr), and `adapter` does not start.
pub fn start(
    listen: &str,
    c: &Options,
    adapter: &str,
    what: &str,
) -> Result<Result<Started, ExitCode>, Error> {
    let text = listen;
    let listen: SocketAddr = text.parse().map_err(|source| Error::BadListen {
        text: text.to_owned(),
        source,
    })?;
    let cwd = std::env::current_dir().map_err(Error::CurrentDir)?;
    let mut opts = LoadOptions::from_env(cwd.clone());
    opts.policy_path = match &c.policy {
        Some(p) => Some(std::fs::canonicalize(p).map_err(|source| Error::BadPath {
            option: "--policy",
            path: p.clone(),
            source,
        })?),
        None => None,
    };
    let loaded = match aileron_config::load(&opts, Some(&opts.data_dir.join("cache"))) {
        Ok(l) => l,
        Err(diags) => {
            eprintln!("{diags}");
            eprintln!("aileron: not starting {what}: the policy does not load");
            return Ok(Err(ExitCode::from(EXIT_POLICY)));
        }
    };
    let session = c.session.clone().or_else(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Some(format!("{adapter}-{:x}-{nanos:x}", std::process::id()))
    });
    let decide: Arc<dyn Decide> = match &c.session_socket {
        Some(socket) => Arc::new(SessionSocket(socket.clone())),
        None => Arc::new(Decider::new(
            aileron_session::Config {
                cache_dir: Some(opts.data_dir.join("cache")),
                session_id: session.clone(),
                agent: c.agent.clone(),
                real_shell: String::new(),
                secrets: Vec::new(),
                adapter: adapter.into(),
                load: opts.clone(),
            },
            Box::new(TtyPrompter::default()),
        )),
    };
    let runtime = crate::serve::runtime()?;
    let bind_error = |source| Error::Io {
        action: "listen on",
        path: PathBuf::from(text),
        source,
    };
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(listen))
        .map_err(bind_error)?;
    let bound = listener.local_addr().map_err(bind_error)?;
    Ok(Ok(Started {
        opts,
        loaded,
        cwd,
        session,
        decide,
        runtime,
        listener,
        bound,
    }))
}
