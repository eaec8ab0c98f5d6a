//! The launch session's socket: each shim connects, sends one request,
//! waits for its decision. Plain threads; no async runtime.

use crate::decider::Decider;
use crate::protocol::{Request, Response};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;

/// Accepts shims on `listener` until the process ends.
pub fn serve(listener: UnixListener, decider: Arc<Decider>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let decider = Arc::clone(&decider);
            std::thread::spawn(move || handle(stream, &decider));
        }
    })
}

fn handle(stream: UnixStream, decider: &Decider) {
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let response = match serde_json::from_str::<Request>(&line) {
        Ok(req) => decider.decide(&req),
        Err(e) => Response::refused(
            format!("aileron: denied: malformed request to the session: {e}"),
            decider.real_shell(),
        ),
    };
    let mut out = serde_json::to_string(&response).unwrap_or_default();
    out.push('\n');
    let _ = (&stream).write_all(out.as_bytes());
}

/// Sends `req` to the session at `socket` and waits for the decision.
pub fn request(socket: &Path, req: &Request) -> std::io::Result<Response> {
    let stream = UnixStream::connect(socket)?;
    let mut msg = serde_json::to_string(req).map_err(std::io::Error::other)?;
    msg.push('\n');
    (&stream).write_all(msg.as_bytes())?;
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line)?;
    serde_json::from_str(&line).map_err(std::io::Error::other)
}
