//! Why the server could not start, and why a request could not be served:
//! its data directory, database, tokens and files, a policy that does not
//! load, the action log.

use crate::SERVER_FILE;
use aileron_engine::Diagnostics;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// What this crate reports. Every variant's message is the line shown to
/// the user (after `aileron: `), or the `error` of an HTTP answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // Starting (`Server::start`; the `token` and `rules` commands too).
    #[error("{}: {source}", path.display())]
    CreateDataDir { path: PathBuf, source: io::Error },
    #[error("{}: {source}", path.display())]
    ReadApprovers { path: PathBuf, source: io::Error },
    #[error("{}: {source}", path.display())]
    ApproversNotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// The database could not be opened or migrated (`url` shown without
    /// its password: [`redact_url`](crate::redact_url)).
    #[error("database {url}: {source}")]
    OpenDatabase { url: String, source: sqlx::Error },
    #[error("{}: {source}", path.display())]
    ReadTokenFile { path: PathBuf, source: io::Error },
    #[error("{}: {source}", path.display())]
    CreateTokenFile { path: PathBuf, source: io::Error },
    #[error("{}: empty token file", path.display())]
    EmptyTokenFile { path: PathBuf },
    /// A token could not be registered in the database.
    #[error("database: {0}")]
    StoreToken(#[source] sqlx::Error),
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: io::Error },
    /// The listener's own address could not be read.
    #[error("{0}")]
    LocalAddr(#[source] io::Error),
    /// `server.json`, for local adapters, could not be written.
    #[error("{SERVER_FILE}: {source}")]
    WriteServerFile { source: io::Error },

    // Serving.
    /// A query of the database failed (reading tokens or rules, deleting a
    /// rule).
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    /// A stored rule of layer 7 whose source is not JSON.
    #[error("rule `{id}`: stored source is not JSON: {source}")]
    StoredRuleNotJson {
        id: String,
        source: serde_json::Error,
    },
    /// A stored rule of layer 7 that no longer compiles.
    #[error("{0}")]
    StoredRuleInvalid(Diagnostics),
    /// No policy is in force for a working directory.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A blocking task (loading a policy, appending to the audit log) did
    /// not finish.
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
    /// A decision could not be appended to the JSONL audit log.
    #[error("{}: {source}", path.display())]
    AppendAudit { path: PathBuf, source: io::Error },
    #[error("the action log writer has stopped")]
    WriterStopped,
    /// An ask waited for is no longer in `pending_actions`.
    #[error("the ask `{0}` is no longer in the database")]
    AskGone(String),
    /// A batch of the action log could not be stored (one error, shared by
    /// the batch's decisions).
    #[error("database error: {0}")]
    StoreActions(#[source] Arc<crate::db::StoreError>),
}

/// Why no policy is in force for a working directory. Kept with the
/// cached policy until its files or the server's rules change, so it is
/// `Clone`.
#[derive(Clone, Debug, thiserror::Error)]
pub enum PolicyError {
    /// The files of layers 1 to 6 do not load.
    #[error("the policy does not load: {}", headline(.0))]
    DoesNotLoad(Diagnostics),
    /// They do, but not with the database rules (layer 7) added.
    #[error("the policy does not load with the server's rules: {}", headline(.0))]
    ConflictsWithRules(Diagnostics),
    /// The request's working directory selects no policy.
    #[error(transparent)]
    Cwd(crate::projects::BadCwd),
}

/// The first diagnostic's headline, and how many more there are.
fn headline(d: &Diagnostics) -> String {
    let first = d.0.first().map(|d| d.headline()).unwrap_or_default();
    if d.0.len() > 1 {
        format!("{first} (and {} more)", d.0.len() - 1)
    } else {
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages are those the server printed and answered before its
    /// errors were typed.
    #[test]
    fn messages() {
        let io = || io::Error::from(io::ErrorKind::PermissionDenied);
        let denied = io().to_string();
        assert_eq!(
            Error::WriteServerFile { source: io() }.to_string(),
            format!("server.json: {denied}")
        );
        assert_eq!(
            Error::EmptyTokenFile {
                path: "/d/admin.token".into()
            }
            .to_string(),
            "/d/admin.token: empty token file"
        );
        assert_eq!(
            Error::Listen {
                addr: "127.0.0.1:1".parse().unwrap(),
                source: io()
            }
            .to_string(),
            format!("cannot listen on 127.0.0.1:1: {denied}")
        );
        let at = aileron_engine::diagnostic::Pos { line: 3, col: 5 };
        let diag = |m: &str| aileron_engine::Diagnostic::at("a.yaml", "", at, m);
        let two = Diagnostics(vec![diag("bad"), diag("worse")]);
        assert_eq!(
            Error::from(PolicyError::DoesNotLoad(two.clone())).to_string(),
            "the policy does not load: a.yaml:3:5: error: bad (and 1 more)"
        );
        assert_eq!(
            PolicyError::ConflictsWithRules(Diagnostics(vec![diag("bad")])).to_string(),
            "the policy does not load with the server's rules: a.yaml:3:5: error: bad"
        );
        assert_eq!(
            Error::StoreActions(Arc::new(sqlx::Error::PoolClosed.into())).to_string(),
            format!("database error: {}", sqlx::Error::PoolClosed)
        );
        assert_eq!(
            Error::Database(sqlx::Error::PoolClosed).to_string(),
            sqlx::Error::PoolClosed.to_string()
        );
    }
}
