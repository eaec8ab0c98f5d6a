//! Why the shim could not read what it was asked to run, and so runs nothing.

use crate::MAX_SCRIPT;
use crate::stdin_script::MAX_STDIN;

/// What reading a script or the program on stdin reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot check the script {path}: {source}")]
    ScriptUnreadable {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot check the script {path}: it is longer than {MAX_SCRIPT} bytes")]
    ScriptTooLong { path: String },
    #[error("cannot check the script {path}: it holds a NUL byte")]
    ScriptHoldsNul { path: String },
    #[error("cannot read the program on stdin: {0}")]
    StdinUnreadable(#[source] std::io::Error),
    #[error("the program on stdin is longer than {MAX_STDIN} bytes, too long to check")]
    StdinTooLong,
    #[error("cannot create a pipe for the program on stdin")]
    StdinPipe,
    #[error("cannot size a pipe for the program on stdin")]
    StdinPipeSize,
    #[error("cannot pass the program on stdin to the shell")]
    StdinHandOver,
}
