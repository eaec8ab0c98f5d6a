//! `aileron proxy`: the egress gateway, on its own or for a launch session.

use aileron_cli::Error;
use aileron_config::LoadOptions;
use aileron_proxy::{Config, Decide, Inspect, Origin, Proxy, SessionSocket, ca::Authority};
use aileron_session::{Decider, TtyPrompter};
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

pub struct Args {
    pub listen: String,
    pub policy: Option<PathBuf>,
    /// The launch session that decides (its socket), when started by `aileron launch`.
    pub session_socket: Option<PathBuf>,
    pub session: Option<String>,
    pub agent: Option<String>,
    /// The agent's own model endpoints (`scheme://host:port`), tagged.
    pub agent_apis: Vec<String>,
    /// Where to write the CA bundle and certificate the agent's tools
    /// trust (`ca-bundle.pem`, `proxy-ca.pem`), when TLS is inspected.
    pub trust_dir: Option<PathBuf>,
}

/// Exit status when the policy does not load.
const EXIT_POLICY: u8 = 1;

pub fn run(args: Args) -> Result<ExitCode, Error> {
    let listen: SocketAddr = args.listen.parse().map_err(|source| Error::BadListen {
        text: args.listen.clone(),
        source,
    })?;
    let cwd = std::env::current_dir().map_err(Error::CurrentDir)?;
    let mut opts = LoadOptions::from_env(cwd.clone());
    opts.policy_path = match &args.policy {
        Some(p) => Some(std::fs::canonicalize(p).map_err(|source| Error::BadPath {
            option: "--policy",
            path: p.clone(),
            source,
        })?),
        None => None,
    };
    // The settings the proxy itself needs (which hosts to inspect): a
    // policy that does not load starts no proxy.
    let loaded = match aileron_config::load(&opts, Some(&opts.data_dir.join("cache"))) {
        Ok(l) => l,
        Err(diags) => {
            eprintln!("{diags}");
            eprintln!("aileron: not starting the proxy: the policy does not load");
            return Ok(ExitCode::from(EXIT_POLICY));
        }
    };
    let inspect = Inspect::new(
        loaded
            .policy
            .settings
            .proxy_inspect
            .as_deref()
            .unwrap_or_default(),
    );
    let authority = if inspect.is_empty() {
        None
    } else {
        Some(Arc::new(Authority::load_or_create(
            &opts.data_dir.join("proxy-ca"),
        )?))
    };
    // On its own, the proxy is one session: its "always" answers hold
    // until it stops.
    let session = args.session.clone().or_else(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Some(format!("proxy-{:x}-{nanos:x}", std::process::id()))
    });
    let origin = Origin {
        cwd: cwd.to_string_lossy().into_owned(),
        session: session.clone(),
        agent: args.agent.clone(),
    };
    let decide: Arc<dyn Decide> = match &args.session_socket {
        Some(socket) => Arc::new(SessionSocket(socket.clone())),
        None => Arc::new(Decider::new(
            aileron_session::Config {
                cache_dir: Some(opts.data_dir.join("cache")),
                session_id: session,
                agent: args.agent.clone(),
                real_shell: String::new(),
                secrets: Vec::new(),
                adapter: "proxy".into(),
                load: opts.clone(),
            },
            Box::new(TtyPrompter::default()),
        )),
    };
    let runtime = crate::serve::runtime()?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(listen))
        .map_err(|source| Error::Io {
            action: "listen on",
            path: PathBuf::from(&args.listen),
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| Error::Io {
        action: "listen on",
        path: PathBuf::from(&args.listen),
        source,
    })?;
    let mut refused = vec![bound];
    refused.extend(server_address(&opts.data_dir));
    if let (Some(dir), Some(authority)) = (&args.trust_dir, &authority) {
        authority.write_trust(dir, &aileron_proxy::ca::system_roots_pem())?;
    }
    let proxy = Proxy::new(Config {
        decide,
        origin,
        inspect: authority.clone().map(|a| (inspect, a)),
        refused,
        roots: aileron_proxy::system_roots(),
        agent_apis: args.agent_apis,
        usage_log: Some(Arc::new(aileron_proxy::UsageLog {
            path: aileron_config::audit_log_path(
                &loaded.policy,
                loaded.project_file.as_deref(),
                &opts,
            ),
            masker: aileron_audit::Masker::new(Vec::new()),
        })),
    })?;
    // The first line says where: `aileron launch` reads it.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "aileron proxy: listening on http://{bound}");
    if args.session_socket.is_none() {
        let _ = writeln!(
            out,
            "  export HTTP_PROXY=http://{bound} HTTPS_PROXY=http://{bound} http_proxy=http://{bound} https_proxy=http://{bound}"
        );
        if let Some(a) = &authority {
            let _ = writeln!(
                out,
                "  TLS inspection: trust {} (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, ...)",
                a.cert_path().display()
            );
        }
    }
    let _ = out.flush();
    drop(out);
    runtime.block_on(proxy.serve(listener));
    Ok(ExitCode::SUCCESS)
}

/// Where `aileron serve` listens, when this user runs one: never forwarded to.
fn server_address(data_dir: &std::path::Path) -> Vec<SocketAddr> {
    let Some(remote) = aileron_session::remote::Remote::discover(data_dir) else {
        return Vec::new();
    };
    let url = remote.url();
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or_default();
    authority
        .to_socket_addrs()
        .map(|a| a.collect())
        .unwrap_or_default()
}
