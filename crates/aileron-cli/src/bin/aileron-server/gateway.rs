//! What every gateway of `aileron-server` (the egress proxy, the database
//! gateway) starts with: the policy found and loaded (one that does not
//! load starts nothing), the session, who decides (the launch session's
//! socket or a `Decider` of its own), the runtime and the listening
//! sockets: its own, and those `aileron launch` hands it from the box.

use aileron_cli::Error;
use aileron_config::{LoadOptions, Loaded};
use aileron_session::{Decide, Decider, SessionSocket, TtyPrompter};
use std::future::Future;
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
    /// Listeners to accept on besides `--listen` (set by `aileron
    /// launch`): FD is an inherited Unix `SOCK_SEQPACKET` socket, each
    /// message on it one listening TCP socket (`SCM_RIGHTS`), made inside
    /// the box's network namespace. See `adopt`.
    #[arg(long, hide = true, value_name = "FD")]
    pub adopt_listeners: Option<i32>,
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
    pub listening: Listening,
    pub bound: SocketAddr,
}

/// Where a gateway accepts: its own listener and the adopted ones.
pub struct Listening {
    runtime: tokio::runtime::Runtime,
    listener: tokio::net::TcpListener,
    adopt: Option<Adopt>,
    /// What answers the box's DNS sockets, when this gateway does.
    dns: Option<crate::adopt::ServeDns>,
}

/// The `--adopt-listeners` channel, and what begins its lines on stderr.
struct Adopt {
    channel: crate::adopt::Channel,
    name: String,
}

impl Listening {
    /// Answers the box's DNS sockets, when `aileron launch` hands any
    /// over, with `dns` (the proxy's responder).
    pub fn answer_dns(&mut self, dns: crate::adopt::ServeDns) {
        self.dns = Some(dns);
    }

    /// Serves the gateway's listener with `serve` until the process ends,
    /// and each adopted listener with the same function as it arrives.
    pub fn serve<F, Fut>(self, serve: F) -> Result<(), Error>
    where
        F: Fn(tokio::net::TcpListener) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let serve = Arc::new(serve);
        if let Some(a) = self.adopt {
            let handle = self.runtime.handle().clone();
            let servers = crate::adopt::Servers {
                gateway: Arc::clone(&serve),
                dns: self.dns,
            };
            a.channel.serve_each(a.name, handle, servers)?;
        }
        self.runtime.block_on(serve(self.listener));
        Ok(())
    }
}

/// Loads the policy and binds `listen`; `Ok(Err(code))`: the policy does
/// not load (said on stderr), and `adapter` does not start.
pub fn start(
    listen: &str,
    c: &Options,
    adapter: &str,
    what: &str,
) -> Result<Result<Started, ExitCode>, Error> {
    // Owned first: nothing opened meanwhile can take the number over.
    let adopt = c
        .adopt_listeners
        .map(crate::adopt::Channel::inherit)
        .transpose()?
        .map(|channel| Adopt {
            channel,
            name: format!("aileron {adapter}"),
        });
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
        listening: Listening {
            runtime,
            listener,
            adopt,
            dns: None,
        },
        bound,
    }))
}
