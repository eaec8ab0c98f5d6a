//! `aileron mcp`'s tests: the rmcp test server (`aileron-mcp`'s example
//! `mcp_test_server`) and a stdio JSON-RPC client written by hand, as an
//! agent speaks to an MCP server: one JSON text per line.

use super::{Project, WAIT, collect, text};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The rmcp test server, built if it is missing or older than its source
/// (`cargo test --workspace` builds it with the examples).
pub fn test_server() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("the test's path");
            // target/PROFILE/deps/TEST → target/PROFILE/examples/
            let profile_dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
            let server = profile_dir.join("examples/mcp_test_server");
            let source = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../aileron-mcp/examples/mcp_test_server.rs");
            let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
            if modified(&server).is_none() || modified(&server) < modified(&source) {
                let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
                let status = Command::new(cargo)
                    .args([
                        "build",
                        "-q",
                        "-p",
                        "aileron-mcp",
                        "--example",
                        "mcp_test_server",
                    ])
                    .status()
                    .expect("run cargo");
                assert!(status.success(), "cannot build the MCP test server");
            }
            server
        })
        .clone()
}

/// `aileron mcp ARGS -- COMMAND` in `p`, driven as an MCP client.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    stderr: Arc<Mutex<Vec<u8>>>,
    next_id: i64,
    /// Messages read while waiting for another (notifications, requests).
    pub seen: Vec<Value>,
}

impl Client {
    pub fn start(p: &Project, gateway_args: &[&str], server: &[&str]) -> Client {
        let mut cmd = p.aileron(&["mcp"]);
        cmd.args(gateway_args).arg("--").args(server);
        Client::spawn(cmd)
    }

    /// `cmd` (an `aileron mcp` command), spawned.
    pub fn spawn(mut cmd: Command) -> Client {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        super::no_tty(&mut cmd);
        let mut child = cmd.spawn().expect("spawn aileron mcp");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = collect(child.stderr.take().expect("stderr"));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("aileron mcp wrote a line that is not JSON ({e}): {line}")
                });
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            next_id: 0,
            seen: Vec::new(),
        }
    }

    /// Writes one line as is.
    pub fn send_raw(&mut self, line: &[u8]) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(line).expect("write to aileron mcp");
        w.write_all(b"\n").expect("write to aileron mcp");
        w.flush().expect("flush");
    }

    pub fn send(&mut self, msg: &Value) {
        self.send_raw(msg.to_string().as_bytes());
    }

    /// The next message, or `None` after [`WAIT`].
    pub fn recv(&mut self) -> Option<Value> {
        self.lines.recv_timeout(WAIT).ok()
    }

    /// Whether a message comes within `ms` milliseconds.
    pub fn quiet_for(&mut self, ms: u64) -> bool {
        match self
            .lines
            .recv_timeout(std::time::Duration::from_millis(ms))
        {
            Ok(v) => {
                self.seen.push(v);
                false
            }
            Err(_) => true,
        }
    }

    /// The answer to the request with `id`; server requests met on the way
    /// are answered (sampling: a canned message; others: an empty result).
    pub fn answer_to(&mut self, id: &Value) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(i) = self
                .seen
                .iter()
                .position(|m| m.get("id") == Some(id) && m.get("method").is_none())
            {
                return self.seen.remove(i);
            }
            assert!(
                Instant::now() < deadline,
                "no answer to {id}; stderr: {}",
                self.stderr()
            );
            let Some(m) = self.recv() else {
                panic!("no answer to {id}; stderr: {}", self.stderr())
            };
            if let (Some(sid), Some(method)) =
                (m.get("id"), m.get("method").and_then(Value::as_str))
            {
                let result = match method {
                    "sampling/createMessage" => json!({
                        "role": "assistant", "model": "test-model",
                        "content": {"type": "text", "text": "hello"}, "stopReason": "endTurn"
                    }),
                    _ => json!({}),
                };
                let answer = json!({"jsonrpc": "2.0", "id": sid, "result": result});
                self.send(&answer);
            }
            self.seen.push(m);
        }
    }

    /// Sends a request and waits for its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer_to(&id)
    }

    /// `initialize` and `notifications/initialized`.
    pub fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"sampling": {}},
                "clientInfo": {"name": "aileron-test", "version": "1"},
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// The names `tools/list` answers with.
    pub fn tool_names(&mut self) -> Vec<String> {
        let answer = self.request("tools/list", json!({}));
        answer["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools in {answer}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// `tools/call`; its answer.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    pub fn stderr(&self) -> String {
        text(&self.stderr.lock().unwrap())
    }

    /// Closes the gateway's input and waits for it to exit.
    pub fn finish(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait for aileron mcp");
        // Let the stderr reader drain.
        std::thread::sleep(std::time::Duration::from_millis(50));
        (status, self.stderr())
    }

    /// Waits for the gateway to exit by itself.
    pub fn wait(mut self) -> (ExitStatus, String) {
        let status = self.child.wait().expect("wait for aileron mcp");
        std::thread::sleep(std::time::Duration::from_millis(50));
        (status, self.stderr())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a `tools/call` answer's first content, and whether it is an error.
pub fn tool_text(answer: &Value) -> (String, bool) {
    let result = &answer["result"];
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (text, result["isError"] == json!(true))
}

/// The calls the test server received (`$MCP_TEST_LOG`).
pub fn server_calls(log: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a call log line"))
        .collect()
}

/// A Streamable HTTP MCP server written by hand (HTTP/1.1, a connection
/// per request): `initialize` answers JSON (over several lines) with a
/// session id, `tools/list` and `tools/call` answer server-sent events (a
/// call's with a log notification first; lines ending in `\r`, `\n` and
/// `\r\n`, an answer's data over two lines), notifications get 202, DELETE
/// ends the session. Every request is appended to `log` as a JSON line:
/// its HTTP method, JSON-RPC method and tool, and the session and protocol
/// version headers it carried. Returns the endpoint's URL.
pub fn http_server(log: PathBuf) -> String {
    use std::net::TcpListener;
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let log = log.clone();
            std::thread::spawn(move || serve_http(conn, &log));
        }
    });
    url
}

fn serve_http(conn: std::net::TcpStream, log: &std::path::Path) {
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
    let mut head = String::new();
    let mut headers = std::collections::HashMap::new();
    if reader.read_line(&mut head).unwrap_or(0) == 0 {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    std::io::Read::read_exact(&mut reader, &mut body).expect("body");
    let http_method = head.split(' ').next().unwrap_or_default().to_owned();
    let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = msg["method"].as_str().unwrap_or_default().to_owned();
    let entry = json!({
        "http": http_method, "method": method, "tool": msg["params"]["name"],
        "session": headers.get("mcp-session-id"),
        "version": headers.get("mcp-protocol-version"),
    });
    {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("log");
        // One write: requests come on several threads at once.
        f.write_all(format!("{entry}\n").as_bytes()).expect("log");
    }
    let id = msg.get("id").cloned();
    let mut out = conn;
    let reply = |out: &mut std::net::TcpStream,
                 status: &str,
                 kind: &str,
                 extra: &str,
                 body: &str| {
        let _ = write!(
            out,
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
            body.len()
        );
    };
    // Each of the line ends SSE has (`\n`, `\r`, `\r\n`), and data over two lines.
    let event = |v: Value, end: &str| match v.get("result") {
        Some(result) => format!(
            "event: message{end}data: {{\"jsonrpc\": \"2.0\", \"id\": {},{end}data: \"result\": {result}}}{end}{end}",
            v["id"]
        ),
        None => format!("event: message{end}data: {v}{end}{end}"),
    };
    match (http_method.as_str(), method.as_str(), id) {
        ("DELETE", _, _) => reply(&mut out, "200 OK", "text/plain", "", ""),
        (_, "initialize", Some(id)) => {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "http-notes", "version": "1"}}});
            let pretty = serde_json::to_string_pretty(&answer).unwrap();
            reply(
                &mut out,
                "200 OK",
                "application/json",
                "Mcp-Session-Id: sess-1\r\n",
                &pretty,
            );
        }
        (_, "tools/list", Some(id)) => {
            let tools = json!([
                {"name": "write_note", "inputSchema": {"type": "object"}},
                {"name": "wipe", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": true}},
            ]);
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}});
            reply(
                &mut out,
                "200 OK",
                "text/event-stream",
                "",
                &event(answer, "\r"),
            );
        }
        (_, "tools/call", Some(id)) => {
            let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                              "params": {"level": "info", "data": "writing"}});
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": "written over http"}], "isError": false}});
            let body = format!("{}{}", event(note, "\n"), event(answer, "\r\n"));
            reply(&mut out, "200 OK", "text/event-stream", "", &body);
        }
        (_, _, Some(id)) => {
            let answer = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}});
            reply(
                &mut out,
                "200 OK",
                "application/json",
                "",
                &answer.to_string(),
            );
        }
        (_, _, None) => reply(&mut out, "202 Accepted", "text/plain", "", ""),
    }
}

/// The Python MCP SDK (pip `mcp`) at the version the framing tests pin.
pub const PYTHON_SDK: &str = "mcp==2.3.0";
/// The TypeScript MCP SDK (npm) at the version the framing tests pin.
pub const TYPESCRIPT_SDK: &str = "@modelcontextprotocol/sdk@1.32.2";

/// A Python with the Python MCP SDK: a virtual environment in the agents'
/// cache, made once. `None` (after saying why) when it cannot be made
/// outside CI.
pub fn python_sdk() -> Option<PathBuf> {
    let dir = super::npm::cache_dir().join(format!("python-{}", PYTHON_SDK.replace("==", "_")));
    let python = dir.join("venv/bin/python");
    let script = r#"python3 -m venv "$1/venv" && "$1/venv/bin/pip" install --quiet --disable-pip-version-check "$2""#;
    cached_install(&dir, &python, script, PYTHON_SDK)
}

/// A directory whose `node_modules` holds the TypeScript MCP SDK (and zod,
/// which it depends on), installed once into the agents' cache.
pub fn typescript_sdk() -> Option<PathBuf> {
    let dir =
        super::npm::cache_dir().join(format!("npm-{}", TYPESCRIPT_SDK.replace(['/', '@'], "_")));
    let package = dir.join("node_modules/@modelcontextprotocol/sdk/package.json");
    let script = r#"npm install --no-audit --no-fund --loglevel=error --prefix "$1" "$2""#;
    cached_install(&dir, &package, script, TYPESCRIPT_SDK).map(|_| dir)
}

/// Runs `script` (`sh`, `$1` the directory, `$2` the package) once per
/// directory, under a lock (test binaries install at once), and marks it
/// done; `probe` is the file the install leaves.
fn cached_install(dir: &Path, probe: &Path, script: &str, package: &str) -> Option<PathBuf> {
    let done = dir.join(".installed");
    if done.exists() && probe.exists() {
        return Some(probe.to_path_buf());
    }
    std::fs::create_dir_all(dir).expect("create the cache directory");
    let guarded = format!(r#"[ -e "$1/.installed" ] || {{ {script} && touch "$1/.installed"; }}"#);
    let out = Command::new("flock")
        .arg(dir.join(".install.lock"))
        .args(["sh", "-c", &guarded, "sh"])
        .arg(dir)
        .arg(package)
        .output();
    match out {
        Ok(o) if o.status.success() && probe.exists() => Some(probe.to_path_buf()),
        Ok(o) => super::npm::skip_or_fail(&format!(
            "installing {package} failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => super::npm::skip_or_fail(&format!("cannot install {package}: {e}")),
    }
}
