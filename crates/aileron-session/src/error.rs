//! Why an adapter could not reach the launch session, or a configured
//! `aileron serve` could not take a decision's record.

use crate::remote::{self, CaError};
use std::path::PathBuf;
use std::sync::Arc;

/// What [`server::request`](crate::server::request) and
/// [`Remote::record`](crate::remote::Remote::record) report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The launch session's socket could not be connected to, written or read.
    #[error("the launch session at {} cannot be reached: {source}", socket.display())]
    SessionUnreachable {
        socket: PathBuf,
        source: std::io::Error,
    },
    /// The request could not be written, or the answer read, as the JSON
    /// line the protocol says.
    #[error("the launch session at {} cannot be reached: {source}", socket.display())]
    SessionProtocol {
        socket: PathBuf,
        source: serde_json::Error,
    },
    /// A record could not be written as JSON for the server.
    #[error("{0}")]
    Encode(#[source] serde_json::Error),
    /// `AILERON_SERVER_CA` names no usable certificates (found at the
    /// first request, and reported again at every later one).
    #[error(transparent)]
    ServerCa(Arc<CaError>),
    /// The request to the server failed: connection, TLS, timeout.
    #[error("{}", remote::describe(source, *tls))]
    ServerUnreachable { source: ureq::Error, tls: bool },
    /// The server answered with a status that is not a success.
    #[error("the server answered {}", remote::answered(*status, body))]
    ServerRefused { status: u16, body: Vec<u8> },
    /// The server's answer could not be read.
    #[error("the server answered {status} ({})", remote::describe(source, *tls))]
    ServerAnswerUnreadable {
        status: u16,
        source: ureq::Error,
        tls: bool,
    },
}
