//! A scripted fake model server on 127.0.0.1 for the real agents' tests.
//!
//! The agents (Claude Code, Codex CLI, Gemini CLI, opencode) are run for
//! real and pointed at this server instead of their vendor's API. Each
//! request the server gets is answered by the test's script: the model
//! asks for the next tool call, or ends the turn with a text. Which step
//! comes next is read from the conversation in the request itself (how many
//! tool results it holds), not from a counter, so that side requests an
//! agent makes (titles, summaries, token counts) do not shift the script.
//!
//! The HTTP part is deliberately small: HTTP/1.1, one request per
//! connection (`Connection: close`), bodies by `Content-Length` or chunked,
//! answers written whole (an event stream is sent at once, then closed).

#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One HTTP request as the server received it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The request target, query string included.
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Value::Null` when it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The path without its query string.
    pub fn route(&self) -> &str {
        self.path.split('?').next().unwrap_or("")
    }
}

/// What the server answers.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A JSON body with this status.
    Json(u16, Value),
    /// A server-sent event stream: `(event name, data)` pairs, in order.
    Events(Vec<(Option<String>, String)>),
    /// Any body with its content type.
    Raw {
        status: u16,
        content_type: String,
        body: Vec<u8>,
    },
}

impl Reply {
    pub fn not_found() -> Reply {
        Reply::Json(404, serde_json::json!({"error": "not found"}))
    }

    /// An event stream of data-only events, each a JSON value.
    pub fn data_events(values: impl IntoIterator<Item = Value>) -> Reply {
        Reply::Events(values.into_iter().map(|v| (None, v.to_string())).collect())
    }

    /// An event stream of named events, each a JSON value.
    pub fn named_events<'a>(events: impl IntoIterator<Item = (&'a str, Value)>) -> Reply {
        Reply::Events(
            events
                .into_iter()
                .map(|(e, v)| (Some(e.to_owned()), v.to_string()))
                .collect(),
        )
    }

    fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        let (status, content_type, body) = match self {
            Reply::Json(status, v) => (
                *status,
                "application/json".to_owned(),
                v.to_string().into_bytes(),
            ),
            Reply::Events(events) => {
                let mut body = String::new();
                for (event, data) in events {
                    if let Some(e) = event {
                        body.push_str(&format!("event: {e}\n"));
                    }
                    for line in data.lines() {
                        body.push_str(&format!("data: {line}\n"));
                    }
                    body.push('\n');
                }
                (200, "text/event-stream".to_owned(), body.into_bytes())
            }
            Reply::Raw {
                status,
                content_type,
                body,
            } => (*status, content_type.clone(), body.clone()),
        };
        let reason = if status < 400 { "OK" } else { "Error" };
        write!(
            out,
            "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
            body.len()
        )?;
        out.write_all(&body)?;
        out.flush()
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// The running server; stops when dropped.
pub struct FakeModel {
    port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
}

impl FakeModel {
    /// Starts a server on 127.0.0.1 (a free port) answering with `handler`.
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake model");
        let port = listener.local_addr().expect("local addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        {
            let requests = requests.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let handler = handler.clone();
                    let requests = requests.clone();
                    std::thread::spawn(move || serve(conn, &*handler, &requests));
                }
            });
        }
        FakeModel {
            port,
            requests,
            stop,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(conn: TcpStream, handler: &Handler, requests: &Mutex<Vec<Request>>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(match conn.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    requests.lock().unwrap().push(request.clone());
    let reply = handler(&request);
    let mut out = conn;
    let _ = reply.write_to(&mut out);
}

fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (name, value) = h.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let header = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(len) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body = vec![0; len];
        reader.read_exact(&mut body).ok()?;
    }
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

/// One step of a scripted conversation, in the agent-neutral form each
/// protocol module turns into its own wire format.
#[derive(Clone, Debug)]
pub enum Step {
    /// Ask for a call of the agent's tool `name` with these arguments.
    Tool { name: String, input: Value },
    /// End the turn with this text.
    Say(String),
}

impl Step {
    pub fn tool(name: &str, input: Value) -> Step {
        Step::Tool {
            name: name.to_owned(),
            input,
        }
    }
}

/// A script: the steps in order. The step to answer with is the one after
/// as many steps as the conversation holds tool results; past the end, the
/// model says "done".
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub steps: Vec<Step>,
}

impl Script {
    pub fn new(steps: Vec<Step>) -> Script {
        Script { steps }
    }

    /// The step for a conversation that already holds `results` tool results.
    pub fn next(&self, results: usize) -> Step {
        self.steps
            .get(results)
            .cloned()
            .unwrap_or_else(|| Step::Say("done".to_owned()))
    }
}
