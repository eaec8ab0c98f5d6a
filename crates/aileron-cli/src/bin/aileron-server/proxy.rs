//! `aileron proxy`: the egress gateway, on its own or for a launch session.

use crate::adopt::DnsSocket;
use crate::gateway;
use aileron_cli::Error;
use aileron_proxy::{Config, Inspect, Origin, Proxy, ca::Authority};
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

pub struct Args {
    pub listen: String,
    pub options: gateway::Options,
    /// The agent's own model endpoints (`scheme://host:port`), tagged.
    pub agent_apis: Vec<String>,
    /// Where to write the CA bundle and certificate the agent's tools
    /// trust (`ca-bundle.pem`, `proxy-ca.pem`), when TLS is inspected.
    pub trust_dir: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode, Error> {
    // The settings the proxy itself needs (which hosts to inspect): a
    // policy that does not load starts no proxy.
    let started = match gateway::start(&args.listen, &args.options, "proxy", "the proxy")? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let (opts, loaded, bound) = (&started.opts, &started.loaded, started.bound);
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
    let origin = Origin {
        cwd: started.cwd.to_string_lossy().into_owned(),
        session: started.session.clone(),
        agent: args.options.agent.clone(),
    };
    let mut refused = vec![bound];
    refused.extend(server_address(&opts.data_dir));
    if let (Some(dir), Some(authority)) = (&args.trust_dir, &authority) {
        authority.write_trust(dir, &aileron_proxy::ca::system_roots_pem())?;
    }
    let proxy = Proxy::new(Config {
        decide: Arc::clone(&started.decide),
        origin,
        inspect: authority.clone().map(|a| (inspect, a)),
        refused,
        roots: aileron_proxy::system_roots(),
        agent_apis: args.agent_apis,
        usage_log: Some(Arc::new(aileron_proxy::UsageLog {
            path: aileron_config::audit_log_path(
                &loaded.policy,
                loaded.project_file.as_deref(),
                opts,
            ),
            masker: aileron_audit::Masker::new(Vec::new()),
        })),
    })?;
    // The first line says where: `aileron launch` reads it.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "aileron proxy: listening on http://{bound}");
    if args.options.session_socket.is_none() {
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
    let mut listening = started.listening;
    let answering = Arc::clone(&proxy);
    listening.answer_dns(Arc::new(move |socket| {
        let proxy = Arc::clone(&answering);
        Box::pin(async move {
            match socket {
                DnsSocket::Udp(s) => proxy.serve_dns_udp(s).await,
                DnsSocket::Tcp(l) => proxy.serve_dns_tcp(l).await,
            }
        })
    }));
    listening.serve(move |listener| Arc::clone(&proxy).serve(listener))?;
    Ok(ExitCode::SUCCESS)
}

/// Where `aileron serve` listens (each replica), when this user runs one:
/// never forwarded to.
fn server_address(data_dir: &std::path::Path) -> Vec<SocketAddr> {
    let Some(remote) = aileron_session::remote::Remote::discover(data_dir) else {
        return Vec::new();
    };
    remote
        .authorities()
        .into_iter()
        .flat_map(|a| a.to_socket_addrs().into_iter().flatten())
        .collect()
}
