//! The egress gateway: an HTTP proxy that decides every request before it
//! leaves the machine, for `aileron proxy` and the proxy `aileron launch`
//! starts for its session.
//!
//! - [`lower`] turns a request's head (and, for LLM APIs, the start of its
//!   body) into an [`aileron_engine::Action`]; it is pure, like the engine.
//! - [`decide`] hands the Action to the one decision path every adapter
//!   uses: the launch session's socket, or a `Decider` of the proxy's own.
//! - `proxy` forwards what was allowed: plain HTTP by method and URL,
//!   CONNECT by host and port, and inside TLS it opens (`settings.proxy.inspect`)
//!   each request by method, URL and headers, with certificates from [`ca`].
//! - `socks` is the same listener's SOCKS5 front (RFC 1928): a CONNECT
//!   there is decided and carried as HTTP's CONNECT is, for TCP that is
//!   not HTTP (ssh, a database client).
//! - [`dns`] answers the box's name lookups over UDP and TCP: each name
//!   decided as a CONNECT to it is, and only an allowed one resolved.

pub mod agents;
pub mod ca;
mod connect;
pub mod dns;
pub mod lower;
mod meter;
mod proxy;
mod socks;

pub use aileron_session::decide::Origin;
pub use aileron_session::{Decide, SessionSocket};
pub use meter::UsageLog;
pub use proxy::{Config, Proxy};

use std::path::PathBuf;

/// What can stop the proxy from starting.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the proxy's certificate authority at {}: {why}", path.display())]
    Ca { path: PathBuf, why: String },
    #[error("TLS set-up: {0}")]
    Tls(String),
}

/// The hosts whose TLS is inspected (`settings.proxy.inspect`): globs of
/// host names, `*` for all.
#[derive(Clone, Debug, Default)]
pub struct Inspect {
    globs: Vec<aileron_engine::glob::Glob>,
}

impl Inspect {
    /// From the policy's `settings.proxy.inspect`.
    pub fn new(hosts: &[String]) -> Inspect {
        Inspect {
            globs: hosts
                .iter()
                .map(|h| aileron_engine::glob::Glob::plain(&h.to_ascii_lowercase()))
                .collect(),
        }
    }

    /// Nothing is inspected.
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }

    /// Whether `host` (lower case, as the target names it) is inspected.
    pub fn covers(&self, host: &str) -> bool {
        self.globs.iter().any(|g| g.is_match(host))
    }
}

/// The roots upstream certificates are checked against: the system's
/// (`SSL_CERT_FILE` and `SSL_CERT_DIR` too), as a browser would.
pub fn system_roots() -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    roots
}
