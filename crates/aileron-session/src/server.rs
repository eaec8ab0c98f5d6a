//! The launch session's socket: each shim connects, sends one request,
//! waits for its decision. Plain threads; no async runtime.
//!
//! A request is a JSON line ([`Request`]), or the raw arguments of a shim
//! that asks before its C library has started ([`ShimCall`]).

use crate::Error;
use crate::decider::Decider;
use crate::pool::{Pool, Waited, Waiter};
use crate::protocol::{
    Control, ControlReply, Request, Response, ShimCall, ShimCallError, ShimReply,
};
use aileron_shell::harness;
use aileron_shell::invocation::{self, Invocation};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Accepts shims on `listener` until the process ends, each taken by a
/// thread already waiting in `accept` ([`crate::pool`]).
pub fn serve(listener: UnixListener, decider: Arc<Decider>) {
    if let Err(e) = crate::process::pass_sender(&listener) {
        // Then no request says who sent it: approvals and contexts refused.
        eprintln!("aileron: the session cannot tell who sends each request: {e}");
    }
    Pool::start(Shims { listener, decider }, "aileron-session", MAX_WAITING);
}

/// Threads that wait in `accept` at most; more end after their request.
const MAX_WAITING: usize = 4;

struct Shims {
    listener: UnixListener,
    decider: Arc<Decider>,
}

impl Waiter for Shims {
    type Work = UnixStream;

    fn wait(&self) -> Waited<UnixStream> {
        match self.listener.accept() {
            Ok((stream, _)) => Waited::Work(stream),
            Err(_) => {
                // Out of descriptors, say: not a busy loop.
                std::thread::sleep(Duration::from_millis(10));
                Waited::Again
            }
        }
    }

    fn handle(&self, stream: UnixStream) {
        handle(stream, &self.decider);
    }
}

/// The longest raw shim request read: well above Linux's limit on a
/// program's arguments (a quarter of the stack limit, 2 MiB by default).
const MAX_SHIM_CALL: u64 = 16 << 20;

/// The first read of a request (its sender is asked of this one): a
/// `BufReader`'s size, the rest read after it.
const FIRST_READ: usize = 8 << 10;

fn handle(stream: UnixStream, decider: &Decider) {
    let mut first = vec![0u8; FIRST_READ];
    let Ok((n, sender)) = crate::process::read_with_sender(&stream, &mut first) else {
        return;
    };
    first.truncate(n);
    let peer = sender.as_ref().map(|s| s.pid);
    let mut reader = BufReader::new(std::io::Cursor::new(first).chain(&stream));
    if reader
        .fill_buf()
        .is_ok_and(|b| b.first() == ShimCall::MAGIC.first())
    {
        let mut bytes = Vec::new();
        let reply = match reader.take(MAX_SHIM_CALL + 1).read_to_end(&mut bytes) {
            Ok(_) if bytes.len() as u64 > MAX_SHIM_CALL => ShimReply::Refuse(
                "aileron: denied: the command's arguments are too long to check".into(),
            ),
            Ok(_) => answer_shim_call(&bytes, decider, peer),
            Err(_) => return,
        };
        let _ = (&stream).write_all(&reply.encode());
        return;
    }
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    if let Ok(control) = serde_json::from_str::<Control>(&line) {
        let ours = sender
            .ok_or_else(|| "the system does not say which process sent it".to_owned())
            .and_then(|s| crate::process::sender_descends_from(s, std::process::id()));
        let reply = answer_control(control, decider, ours);
        let mut out = serde_json::to_string(&reply).unwrap_or_default();
        out.push('\n');
        let _ = (&stream).write_all(out.as_bytes());
        return;
    }
    let response = match serde_json::from_str::<Request>(&line) {
        Ok(mut req) => {
            req.peer = peer;
            if req.actions.is_empty()
                && let Invocation::Command(cmd) = invocation::parse(&req.argv)
            {
                // The full shim's `-c` form: the line is the session's to
                // unwrap, with the home it knows (see `Request::argv`).
                req.line = harness::model_command(cmd, &decider.home());
            }
            let response = decider.decide(&req);
            if response.allow
                && req.actions.is_empty()
                && let Some(pid) = peer
            {
                decider.expect_hand_over(pid, None, req.line.clone(), &req.cwd);
            }
            response
        }
        Err(e) => Response::refused(
            format!("aileron: denied: malformed request to the session: {e}"),
            decider.real_shell(),
        ),
    };
    let mut out = serde_json::to_string(&response).unwrap_or_default();
    out.push('\n');
    let _ = (&stream).write_all(out.as_bytes());
}

/// Decides a raw shim call as the full shim would decide its `-c` form,
/// and answers with the arguments the real shell is to run with; any other
/// form is left to the full shim.
fn answer_shim_call(bytes: &[u8], decider: &Decider, peer: Option<u32>) -> ShimReply {
    let call = match ShimCall::decode(bytes) {
        Ok(call) => call,
        // The full shim decides the arguments as read lossily, and runs
        // that same text; the early path would run the original bytes.
        Err(ShimCallError::NotUtf8) => return ShimReply::FullShim,
        Err(ShimCallError::Malformed(e)) => {
            return ShimReply::Refuse(format!(
                "aileron: denied: malformed request to the session: {e}"
            ));
        }
    };
    let Invocation::Command(cmd) = invocation::parse(&call.args) else {
        return ShimReply::FullShim;
    };
    // Options that make the shell run a file nobody decided: refused
    // before anything is decided.
    let args = match invocation::checked_args(&call.args) {
        Ok(args) => args,
        Err(refused) => return ShimReply::Refuse(refused.to_string()),
    };
    let req = Request {
        line: harness::model_command(cmd, &decider.home()),
        cwd: call.cwd,
        argv: call.args,
        peer,
        ..Request::default()
    };
    let response = decider.decide(&req);
    if response.allow {
        let argv = invocation::real_shell_argv(&response.real_shell, args);
        if let Some(pid) = peer {
            decider.expect_hand_over(pid, Some(argv.clone()), req.line, &req.cwd);
        }
        ShimReply::Exec {
            argv,
            shell: response.real_shell,
        }
    } else {
        ShimReply::Refuse(
            response
                .message
                .unwrap_or_else(|| "aileron: denied".to_owned()),
        )
    }
}

/// Lists or answers the asks waiting for `aileron approve`: only with
/// the session's approver key, and never for a process of the session's
/// own tree (the agent does not answer its own asks). `ours` says whether
/// the peer descends from this process (`aileron launch`, whose tree
/// keeps its orphans), or why that cannot be told: then refused too.
fn answer_control(control: Control, decider: &Decider, ours: Result<bool, String>) -> ControlReply {
    let refuse = |why: &str| ControlReply {
        ok: false,
        error: Some(why.to_owned()),
        ..ControlReply::default()
    };
    let key = match &control {
        Control::ListAsks { key } | Control::AnswerAsk { key, .. } => key,
    };
    if !decider.has_board() {
        return refuse("this session takes no answers from `aileron approve`");
    }
    if !decider.approver_key_is(key) {
        return refuse("wrong approver key for this session");
    }
    match ours {
        Ok(false) => {}
        Ok(true) => return refuse("the session's own programs cannot answer its asks"),
        Err(why) => {
            return refuse(&format!(
                "refused: cannot tell whether the process asking is one of the session's own: {why}"
            ));
        }
    }
    match control {
        Control::ListAsks { .. } => {
            let (asks, queued) = decider.waiting_asks();
            ControlReply {
                ok: true,
                asks,
                queued,
                ..ControlReply::default()
            }
        }
        Control::AnswerAsk { id, answer, .. } => match decider.answer_waiting(&id, &answer) {
            Ok(()) => ControlReply {
                ok: true,
                ..ControlReply::default()
            },
            Err(why) => refuse(&why),
        },
    }
}

/// Sends `control` to the session at `socket` and reads its reply.
pub fn control(socket: &Path, control: &Control) -> Result<ControlReply, Error> {
    exchange(socket, control)
}

/// Sends `req` to the session at `socket` and waits for the decision.
pub fn request(socket: &Path, req: &Request) -> Result<Response, Error> {
    exchange(socket, req)
}

/// One JSON line to the session at `socket`, one JSON line back.
fn exchange<T: serde::Serialize, R: serde::de::DeserializeOwned>(
    socket: &Path,
    msg: &T,
) -> Result<R, Error> {
    let unreachable = |source| Error::SessionUnreachable {
        socket: socket.to_path_buf(),
        source,
    };
    let protocol = |source| Error::SessionProtocol {
        socket: socket.to_path_buf(),
        source,
    };
    let stream = UnixStream::connect(socket).map_err(unreachable)?;
    let mut line = serde_json::to_string(msg).map_err(protocol)?;
    line.push('\n');
    (&stream).write_all(line.as_bytes()).map_err(unreachable)?;
    let mut line = String::new();
    BufReader::new(&stream)
        .read_line(&mut line)
        .map_err(unreachable)?;
    serde_json::from_str(&line).map_err(protocol)
}
