//! Why the audit log could not be read back.

use std::path::PathBuf;

/// What [`read`](crate::read), [`follow`](crate::follow) and
/// [`Filter::validate`](crate::Filter::validate) report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A `since` or `until` that is no time the filter reads.
    #[error(
        "`{text}` is neither an RFC 3339 time (2026-11-22T10:00:00Z), a date (2026-11-22) nor a duration before now (30s, 10m, 2h, 1d, 1w)"
    )]
    BadTime { text: String },
    /// The log at `path` could not be opened or read.
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Error {
    /// Whether the log does not exist (yet).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}
