//! The launch session's socket: each shim connects, sends one request,
//! waits for its decision. Plain threads; no async runtime.

use crate::decider::Decider;
use crate::protocol::{Request, Response};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};

/// Idle workers kept for the next commands; more are started while all
/// are busy (a prompt holds its worker until the human answers, and the
/// other commands must not wait behind it).
const IDLE_WORKERS: usize = 8;

/// Accepts shims on `listener` until the process ends.
///
/// Requests go to worker threads that stay for the next request, instead
/// of a new thread (its stack, its allocator arena) per command.
pub fn serve(listener: UnixListener, decider: Arc<Decider>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (jobs, queue) = channel::<UnixStream>();
        let queue = Arc::new(Mutex::new(queue));
        let idle = Arc::new(AtomicUsize::new(0));
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            // Only this thread sends, so a worker counted idle now will
            // take this very stream.
            if idle.load(Ordering::SeqCst) == 0 {
                let (queue, idle, decider) = (queue.clone(), idle.clone(), decider.clone());
                std::thread::spawn(move || work(&queue, &idle, &decider));
            }
            if jobs.send(stream).is_err() {
                return;
            }
        }
    })
}

fn work(queue: &Mutex<Receiver<UnixStream>>, idle: &AtomicUsize, decider: &Decider) {
    loop {
        idle.fetch_add(1, Ordering::SeqCst);
        let next = queue.lock().unwrap_or_else(|p| p.into_inner()).recv();
        idle.fetch_sub(1, Ordering::SeqCst);
        let Ok(stream) = next else { return };
        handle(stream, decider);
        if idle.load(Ordering::SeqCst) >= IDLE_WORKERS {
            return;
        }
    }
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
