//! `aileron mcp`, the MCP gateway, in front of a real MCP server (the rmcp
//! test server, and the reference filesystem server from npm) and driven
//! by a stdio client as an agent drives a server: calls allowed and
//! answered, denied with the rule's reason before the server sees them,
//! disabled tools not listed, and bad input from either side.

mod support;

use serde_json::{Value, json};
use support::mcp::{Client, http_server, server_calls, test_server, tool_text};
use support::{LaunchSession, Project, PtyChild};

const POLICY: &str = r#"version: 1
default: allow
deny:
  - id: no-wipe
    description: wiping the notes loses them
    when: {type: mcp.call, mcp.server: notes, mcp.tool: wipe}
  - id: no-secret-notes
    description: secret notes stay out of the notes server
    when: {type: mcp.call, mcp.tool: write_note, mcp.arguments.name: secret}
  - id: no-needle
    description: the needle stays out
    when: {type: mcp.call, mcp.tool: echo, mcp.arguments.text: {contains: NEEDLE}}
  - id: no-unlisted-mutations
    description: a tool never listed changes things
    when: {type: mcp.call, mcp.tool: revealed, sensitivity: mutate}
  - id: no-private-resources
    description: private resources stay private
    when: {type: mcp.call, mcp.resource: {glob: "private:*"}}
"#;

/// The gateway in front of the rmcp test server, its calls logged.
fn notes(p: &Project) -> Client {
    notes_with(p, &[])
}

fn notes_with(p: &Project, args: &[&str]) -> Client {
    let server = test_server();
    let mut cmd = p.aileron(&["mcp", "--name", "notes"]);
    cmd.args(args)
        .arg("--")
        .arg(&server)
        .env("MCP_TEST_LOG", p.path("calls.jsonl"));
    let mut c = Client::spawn(cmd);
    c.initialize();
    c
}

fn calls(p: &Project) -> Vec<Value> {
    server_calls(&p.path("calls.jsonl"))
}

fn names_called(p: &Project) -> Vec<String> {
    calls(p)
        .iter()
        .map(|c| c["params"]["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn allowed_calls_are_answered_denied_ones_never_reach_the_server_and_disabled_tools_are_not_listed()
{
    let p = Project::new(POLICY);
    let mut c = notes(&p);
    let tools = c.tool_names();
    assert!(tools.contains(&"write_note".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"wipe".to_owned()), "{tools:?}");

    let answer = c.call("write_note", json!({"name": "todo", "text": "milk"}));
    assert_eq!(tool_text(&answer), ("written".to_owned(), false));
    let answer = c.call("read_note", json!({"name": "todo"}));
    assert_eq!(tool_text(&answer), ("milk".to_owned(), false));

    let answer = c.call("write_note", json!({"name": "secret", "text": "x"}));
    assert_eq!(
        tool_text(&answer),
        (
            "aileron: denied: secret notes stay out of the notes server (rule no-secret-notes)"
                .to_owned(),
            true
        )
    );
    // A disabled tool called anyway: decided, denied.
    let (text, error) = tool_text(&c.call("wipe", json!({})));
    assert!(error && text.contains("(rule no-wipe)"), "{text}");
    assert_eq!(names_called(&p), ["write_note", "read_note"]);

    let (status, stderr) = c.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("not shown to the agent") && stderr.contains("wipe"),
        "{stderr}"
    );
    // One audit line per decision, from the gateway.
    let audit = p.audit();
    let decided: Vec<(&str, &str)> = audit
        .iter()
        .map(|r| {
            (
                r["decision"].as_str().unwrap(),
                r["adapter"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        decided,
        [
            ("allow", "mcp"),
            ("allow", "mcp"),
            ("deny", "mcp"),
            ("deny", "mcp")
        ]
    );
    assert_eq!(
        audit[0]["action"]["facets"]["mcp"],
        json!({"server": "notes", "tool": "write_note", "arguments": {"name": "todo", "text": "milk"}})
    );
    assert_eq!(
        audit[1]["action"]["facets"]["mcp"]["annotations"],
        json!({"readOnlyHint": true})
    );
}

#[test]
fn resources_and_prompts_are_decided_too() {
    let p = Project::new(POLICY);
    let mut c = notes(&p);
    let answer = c.request("resources/read", json!({"uri": "notes:todo"}));
    assert_eq!(
        answer["result"]["contents"][0]["text"],
        "contents of notes:todo"
    );
    let answer = c.request("resources/read", json!({"uri": "private:diary"}));
    assert_eq!(answer["error"]["code"], -32001);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("(rule no-private-resources)"),
        "{answer}"
    );
    let answer = c.request(
        "prompts/get",
        json!({"name": "review", "arguments": {"x": "1"}}),
    );
    assert_eq!(
        answer["result"]["messages"][0]["content"]["text"],
        "the prompt review"
    );
    let seen = calls(&p);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0]["params"]["uri"], "notes:todo");
    c.finish();
    let audit = p.audit();
    assert_eq!(
        audit[1]["action"]["facets"]["mcp"]["resource"],
        "private:diary"
    );
    assert_eq!(audit[2]["action"]["facets"]["mcp"]["prompt"], "review");
}

#[test]
fn bad_input_from_the_client_is_refused_and_the_gateway_goes_on() {
    let p = Project::new(POLICY);
    let mut c = notes(&p);
    // Not JSON.
    c.send_raw(b"this is not json");
    let answer = c.recv().unwrap();
    assert_eq!(answer["error"]["code"], -32700);
    assert_eq!(answer["id"], Value::Null);
    // A key given twice: which one the server would read is not known.
    c.send_raw(
        br#"{"jsonrpc":"2.0","id":50,"method":"tools/call","params":{"name":"echo","name":"wipe"}}"#,
    );
    assert_eq!(c.recv().unwrap()["error"]["code"], -32700);
    // A batch: refused whole, no call in it reaches the server.
    c.send(&json!([
        {"jsonrpc": "2.0", "id": 51, "method": "tools/call", "params": {"name": "write_note", "arguments": {"name": "b", "text": "b"}}},
        {"jsonrpc": "2.0", "id": 52, "method": "tools/list"},
    ]));
    let answers = c.recv().unwrap();
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "{answers}");
    assert_eq!(answers[0]["id"], 51);
    assert_eq!(answers[0]["error"]["code"], -32600);
    // An answer to a request the server never sent: dropped.
    c.send(&json!({"jsonrpc": "2.0", "id": "nobody-asked", "result": {}}));
    assert!(c.quiet_for(300));
    // A call without an id (a notification): dropped, never run undecided.
    c.send(&json!({"jsonrpc": "2.0", "method": "tools/call",
                   "params": {"name": "write_note", "arguments": {"name": "n", "text": "n"}}}));
    assert!(c.quiet_for(300));
    // A tool never listed: still decided (no annotations: mutate).
    let (text, error) = tool_text(&c.call("revealed", json!({})));
    assert!(
        error && text.contains("(rule no-unlisted-mutations)"),
        "{text}"
    );
    // A huge argument is decided whole: the needle at its end is found.
    let big = "a".repeat(8 << 20);
    let answer = c.call("echo", json!({ "text": big }));
    assert_eq!(tool_text(&answer), (format!("{} bytes", 8 << 20), false));
    let answer = c.call("echo", json!({ "text": format!("{big}NEEDLE") }));
    let (text, error) = tool_text(&answer);
    assert!(error && text.contains("(rule no-needle)"), "{text}");
    // Over the limit: refused by its id, never held whole.
    let huge = "b".repeat(17 << 20);
    c.send(&json!({"jsonrpc": "2.0", "id": 60, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": huge}}}));
    let answer = c.recv().unwrap();
    assert_eq!(answer["id"], 60);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than 16 MiB")
    );
    // Still working, and the server saw only what was allowed.
    assert!(!tool_text(&c.call("read_note", json!({"name": "b"}))).1);
    assert_eq!(names_called(&p), ["echo", "read_note"]);
    let (status, stderr) = c.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("not JSON"), "{stderr}");
    assert!(stderr.contains("batch"), "{stderr}");
    assert!(stderr.contains("never sent"), "{stderr}");
    assert!(stderr.contains("without an id"), "{stderr}");
}

/// A server that writes junk, answers ids never asked, and its real answers.
const BAD_SERVER: &str = r#"
read -r line
echo 'Starting the server...'
echo '{"jsonrpc":"2.0","id":999,"result":{}}'
echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"bad","version":"1"}}}'
read -r line
"#;

#[test]
fn bad_input_from_the_server_is_dropped() {
    let p = Project::new(POLICY);
    let mut c = Client::start(&p, &[], &["/bin/sh", "-c", BAD_SERVER]);
    let answer = c.request("initialize", json!({}));
    assert_eq!(answer["result"]["serverInfo"]["name"], "bad");
    assert!(c.seen.is_empty(), "{:?}", c.seen);
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let (status, stderr) = c.wait();
    assert!(
        stderr.contains("not JSON") && stderr.contains("Starting the server"),
        "{stderr}"
    );
    assert!(stderr.contains("never sent (id 999)"), "{stderr}");
    // It ended while the client was there: said, and exit 1.
    assert!(
        stderr.contains("while the client was connected"),
        "{stderr}"
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
}

#[test]
fn a_server_that_dies_mid_call_answers_its_callers_with_an_error() {
    let p = Project::new(POLICY);
    let mut c = notes(&p);
    let answer = c.call("crash", json!({}));
    assert_eq!(answer["error"]["code"], -32000);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("exited") && message.contains("before answering"),
        "{message}"
    );
    let (status, stderr) = c.wait();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the MCP server notes") && stderr.contains("exit status: 3"),
        "{stderr}"
    );
}

#[test]
fn a_changed_tool_list_is_filtered_again() {
    let p = Project::new(POLICY);
    let mut c = notes(&p);
    assert!(c.tool_names().contains(&"write_note".to_owned()));
    // The policy changes, then the server's tools do.
    p.write(
        "aileron.yaml",
        &format!("{POLICY}  - {{id: no-writes, when: {{type: mcp.call, mcp.tool: write_note}}}}\n"),
    );
    assert_eq!(tool_text(&c.call("reveal", json!({}))).0, "revealed");
    assert!(
        c.seen
            .iter()
            .any(|m| m["method"] == "notifications/tools/list_changed"),
        "{:?}",
        c.seen
    );
    // The new tool is listed as the policy says (`no-unlisted-mutations`
    // denies its every call), and so is the old one under the new policy.
    let tools = c.tool_names();
    assert!(!tools.contains(&"revealed".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"write_note".to_owned()), "{tools:?}");
    assert!(tools.contains(&"read_note".to_owned()), "{tools:?}");
    let (_, stderr) = c.finish();
    assert!(stderr.contains("write_note, wipe, revealed"), "{stderr}");
}

#[test]
fn sampling_requests_from_the_server_pass_and_are_noted() {
    let p = Project::new(POLICY);
    let mut c = notes(&p);
    let answer = c.call("sample", json!({}));
    assert_eq!(tool_text(&answer).0, "the model test-model answered");
    assert!(
        c.seen
            .iter()
            .any(|m| m["method"] == "sampling/createMessage"),
        "{:?}",
        c.seen
    );
    c.finish();
    let note = p
        .audit()
        .into_iter()
        .find(|r| r["action"]["type"] == "mcp.server_request")
        .expect("an audit note for the sampling request");
    assert_eq!(note["adapter"], "mcp");
    assert_eq!(note["outcome"], "passed-through");
}

#[test]
fn under_launch_the_session_decides_and_an_unreachable_one_refuses() {
    let p = Project::new(POLICY);
    let session = LaunchSession::start_with(&p, &["--enforce", "none", "--no-proxy"]);
    let mut c = {
        let mut cmd = p.aileron(&["mcp", "--name", "notes", "--"]);
        cmd.arg(test_server())
            .env("MCP_TEST_LOG", p.path("calls.jsonl"))
            .env("AILERON_SOCKET", &session.socket);
        Client::spawn(cmd)
    };
    c.initialize();
    let (text, error) = tool_text(&c.call("write_note", json!({"name": "secret", "text": "x"})));
    assert!(error && text.contains("(rule no-secret-notes)"), "{text}");
    c.finish();
    let line = p
        .audit()
        .into_iter()
        .find(|r| r["adapter"] == "mcp")
        .expect("the session's audit line");
    assert_eq!(line["decision"], "deny");
    assert!(
        line["session"]
            .as_str()
            .is_some_and(|s| !s.starts_with("mcp-")),
        "{line}"
    );
    drop(session);

    // A session that cannot be reached: refused, never forwarded.
    let mut c = {
        let mut cmd = p.aileron(&["mcp", "--name", "notes", "--"]);
        cmd.arg(test_server())
            .env("MCP_TEST_LOG", p.path("calls.jsonl"))
            .env("AILERON_SOCKET", p.path("no-such.sock"));
        Client::spawn(cmd)
    };
    c.initialize();
    let (text, error) = tool_text(&c.call("read_note", json!({"name": "x"})));
    assert!(error && text.contains("cannot be reached"), "{text}");
    assert!(calls(&p).is_empty());
}

#[test]
fn a_policy_that_does_not_load_refuses_every_call() {
    let p = Project::new("version: 1\ndeny:\n  - {id: x, when: {mcp.nonsense: 1}}\n");
    let mut c = notes(&p);
    let (text, error) = tool_text(&c.call("read_note", json!({"name": "x"})));
    assert!(error && text.contains("the policy does not load"), "{text}");
    assert!(calls(&p).is_empty());
    let (_, stderr) = c.finish();
    assert!(stderr.contains("every call will be refused"), "{stderr}");
}

#[test]
fn the_reference_filesystem_server_reads_and_is_refused_a_write() {
    let Some(server) = support::npm::MCP_FILESYSTEM.installed() else {
        return;
    };
    let p = Project::new(
        r#"version: 1
default: allow
deny:
  - id: no-fs-writes
    description: the agent reads files through this server, it does not write them
    when: {type: mcp.call, mcp.server: filesystem, mcp.tool: {in: [write_file, edit_file]}}
"#,
    );
    p.write("data/hello.txt", "hello from the project\n");
    let data = p.path("data");
    let mut c = Client::start(
        &p,
        &["--name", "filesystem"],
        &[server.to_str().unwrap(), data.to_str().unwrap()],
    );
    c.initialize();
    let tools = c.tool_names();
    assert!(
        tools
            .iter()
            .any(|t| t == "read_text_file" || t == "read_file"),
        "{tools:?}"
    );
    assert!(!tools.contains(&"write_file".to_owned()), "{tools:?}");
    let read = if tools.contains(&"read_text_file".to_owned()) {
        "read_text_file"
    } else {
        "read_file"
    };
    let hello = data.join("hello.txt");
    let (text, error) = tool_text(&c.call(read, json!({"path": hello})));
    assert!(!error && text.contains("hello from the project"), "{text}");
    let target = data.join("new.txt");
    let (text, error) = tool_text(&c.call("write_file", json!({"path": target, "content": "x"})));
    assert!(error && text.contains("(rule no-fs-writes)"), "{text}");
    assert!(!target.exists());
    c.finish();
}

/// An MCP client as an agent is one: it starts `aileron mcp ...` (its
/// arguments), sends a call and then a ping without waiting, and prints
/// which answer came first and then the call's answer.
const ASKING_CLIENT: &str = r#"
import json, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def recv():
    return json.loads(p.stdout.readline())
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
recv()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "write_note", "arguments": {"name": "todo", "text": "milk"}}})
send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
first = recv()
open("first.txt", "w").write(str(first["id"]))
second = recv()
print("first=%s second=%s %s" % (first["id"], second["id"], second["result"]["content"][0]["text"]))
p.stdin.close()
p.wait()
"#;

#[test]
fn an_ask_holds_only_its_call_and_the_session_asks_on_the_terminal() {
    let p = Project::new(
        "version: 1\ndefault: allow\nask:\n  - {id: ask-writes, when: {type: mcp.call, mcp.tool: write_note}}\n",
    );
    p.write("client.py", ASKING_CLIENT);
    let server = test_server();
    let mut cmd = p.aileron(&[
        "launch",
        "--enforce",
        "none",
        "--no-proxy",
        "--",
        "python3",
        "client.py",
    ]);
    cmd.arg(support::AILERON)
        .args(["mcp", "--name", "notes", "--"])
        .arg(&server)
        .env("MCP_TEST_LOG", p.path("calls.jsonl"));
    let mut t = PtyChild::spawn(&mut cmd);
    let screen = t.expect("[o] allow once");
    assert!(screen.contains("notes/write_note"), "{screen}");
    // While the call waits for the human, the ping has been answered.
    let deadline = std::time::Instant::now() + support::WAIT;
    while !p.path("first.txt").exists() {
        assert!(std::time::Instant::now() < deadline, "the ping waited too");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(p.read("first.txt"), "3");
    assert!(
        calls(&p).is_empty(),
        "the call reached the server before its answer"
    );
    t.type_keys("o\n");
    let out = t.finish();
    assert_eq!(
        out.stdout.trim(),
        "first=3 second=2 written",
        "{}",
        out.stderr
    );
    assert_eq!(names_called(&p), ["write_note"]);
    let rec = p
        .audit()
        .into_iter()
        .find(|r| r["adapter"] == "mcp")
        .expect("the call's audit line");
    assert_eq!(rec["outcome"], "approved-once", "{rec}");
}

#[test]
fn a_remote_server_over_streamable_http_is_decided_alike() {
    let p = Project::new(POLICY);
    let log = p.path("http.jsonl");
    let url = http_server(log.clone());
    let mut c = Client::spawn(p.aileron(&["mcp", "--name", "notes", "--url", &url]));
    let answer = c.initialize();
    assert_eq!(answer["result"]["serverInfo"]["name"], "http-notes");
    assert_eq!(c.tool_names(), ["write_note"]);
    let answer = c.call("write_note", json!({"name": "todo", "text": "milk"}));
    assert_eq!(tool_text(&answer), ("written over http".to_owned(), false));
    assert!(
        c.seen
            .iter()
            .any(|m| m["method"] == "notifications/message"),
        "{:?}",
        c.seen
    );
    let (text, error) = tool_text(&c.call("write_note", json!({"name": "secret", "text": "x"})));
    assert!(error && text.contains("(rule no-secret-notes)"), "{text}");
    let (status, stderr) = c.finish();
    assert!(status.success(), "{stderr}");
    let requests = server_calls(&log);
    let tools: Vec<&Value> = requests.iter().map(|r| &r["tool"]).collect();
    assert_eq!(
        tools.iter().filter(|t| **t == "write_note").count(),
        1,
        "{requests:?}"
    );
    // After initialize, every request carries the session and the version;
    // the session is ended when the agent leaves.
    for r in &requests[1..] {
        assert_eq!(r["session"], "sess-1", "{r}");
        assert_eq!(r["version"], "2025-06-18", "{r}");
    }
    assert_eq!(requests.last().unwrap()["http"], "DELETE", "{requests:?}");
}

#[test]
fn a_remote_server_that_cannot_be_reached_answers_with_an_error() {
    let p = Project::new(POLICY);
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut c = Client::spawn(p.aileron(&["mcp", "--url", &url]));
    let answer = c.request("initialize", json!({}));
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&url) && message.contains("cannot be reached"),
        "{message}"
    );
    let (status, stderr) = c.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn a_client_that_closes_its_input_after_its_calls_still_gets_their_answers() {
    let p = Project::new(POLICY);
    let input = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "write_note", "arguments": {"name": "a", "text": "b"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "wipe"}}),
    ]
    .map(|m| m.to_string() + "\n")
    .concat();
    let mut cmd = p.aileron(&["mcp", "--name", "notes", "--"]);
    cmd.arg(test_server())
        .env("MCP_TEST_LOG", p.path("calls.jsonl"));
    let out = support::run(&mut cmd, input.as_bytes());
    assert!(out.status.success(), "{}", support::text(&out.stderr));
    let answers: Vec<Value> = support::text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let text_of = |id: i64| {
        let a = answers.iter().find(|a| a["id"] == id).expect("answered");
        tool_text(a).0
    };
    assert_eq!(text_of(2), "written");
    assert!(text_of(3).contains("(rule no-wipe)"));
    assert_eq!(names_called(&p), ["write_note"]);
}

/// An MCP server written with the Python SDK: `read_note`, and `wipe`,
/// which leaves a mark (the file `argv[1]`).
const PYTHON_NOTES: &str = r#"import pathlib, sys
from mcp.server.mcpserver import MCPServer

mark = pathlib.Path(sys.argv[1])
app = MCPServer("notes")

@app.tool(annotations={"readOnlyHint": True})
def read_note(name: str) -> str:
    """Reads a note."""
    return f"the note {name}"

@app.tool()
def wipe() -> str:
    """Wipes every note."""
    mark.write_text("wiped\n")
    return "wiped"

app.run()
"#;

/// The same server written with the TypeScript SDK (`argv`: the SDK's
/// install directory, the mark).
const TYPESCRIPT_NOTES: &str = r#"import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
const [sdkDir, mark] = process.argv.slice(2);
const require = createRequire(sdkDir + '/');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');
const server = new McpServer({ name: 'notes', version: '1.0.0' });
server.registerTool('read_note',
  { description: 'Reads a note.', inputSchema: { name: z.string() }, annotations: { readOnlyHint: true } },
  async ({ name }) => ({ content: [{ type: 'text', text: `the note ${name}` }] }));
server.registerTool('wipe', { description: 'Wipes every note.' }, async () => {
  writeFileSync(mark, 'wiped\n');
  return { content: [{ type: 'text', text: 'wiped' }] };
});
await server.connect(new StdioServerTransport());
"#;

/// The server command for each SDK, in `p`, its mark at `p/wiped`; an SDK
/// that cannot be installed is left out (outside CI: in CI it panics).
fn sdk_servers(p: &Project) -> Vec<(&'static str, Vec<String>)> {
    let mark = p.path("wiped").display().to_string();
    let mut servers = Vec::new();
    if let Some(python) = support::mcp::python_sdk() {
        p.write("notes.py", PYTHON_NOTES);
        let script = p.path("notes.py").display().to_string();
        servers.push((
            "python",
            vec![python.display().to_string(), script, mark.clone()],
        ));
    }
    if let Some(dir) = support::mcp::typescript_sdk() {
        p.write("notes.mjs", TYPESCRIPT_NOTES);
        let script = p.path("notes.mjs").display().to_string();
        servers.push((
            "typescript",
            vec![
                "node".into(),
                script,
                dir.display().to_string(),
                mark.clone(),
            ],
        ));
    }
    servers
}

/// A call of `wipe` with `id`, as one line.
fn wipe_line(id: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "wipe", "arguments": {}}})
    .to_string()
}

/// Messages that one reader takes for one message and another for
/// several: each must be refused whole, answered with an error naming the
/// line break, and audited. `(id, line)`; the ids are strings, apart from
/// the client's numbers.
fn smuggling_lines() -> Vec<(&'static str, Vec<u8>)> {
    let behind = |id: &str, method: &str, params: &str, sep: &str, smuggled: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"{method}","params":{{{params}"x":{sep}{}{sep}}}}}"#,
            wipe_line(smuggled)
        )
        .into_bytes()
    };
    let between = |id: &str, sep: &str, smuggled: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping"}}{sep}{}"#,
            wipe_line(smuggled)
        )
        .into_bytes()
    };
    let read_note = r#""name":"read_note","arguments":{"name":"a"},"#;
    vec![
        // The red team's: `wipe` behind `read_note`, then behind a `ping`.
        ("r1", behind("r1", "tools/call", read_note, "\r", "w1")),
        ("r2", behind("r2", "ping", "", "\r", "w2")),
        // Between two messages.
        ("r3", between("r3", "\r", "w3")),
        // A line ending in `\r\r\n`: a second, empty line to some readers.
        (
            "n4",
            format!("{}\r\r", wipe_line("n4").replace("wipe", "read_note")).into_bytes(),
        ),
        // U+2028 and U+0085 between two messages, and behind a call.
        ("r5", between("r5", "\u{2028}", "w5")),
        ("r6", between("r6", "\u{85}", "w6")),
        (
            "r7",
            behind("r7", "tools/call", read_note, "\u{2029}", "w7"),
        ),
    ]
}

#[test]
fn a_message_holding_a_line_break_is_refused_before_any_sdk_server_reads_it() {
    let p = Project::new(POLICY);
    for (sdk, server) in sdk_servers(&p) {
        let _ = std::fs::remove_file(p.audit_path());
        let server: Vec<&str> = server.iter().map(String::as_str).collect();
        let mut c = Client::start(&p, &["--name", "notes"], &server);
        c.initialize();
        assert_eq!(c.tool_names(), ["read_note"], "{sdk}");
        for (id, line) in smuggling_lines() {
            c.send_raw(&line);
            // A plain call after it: answered once the server read what
            // came before.
            let answer = c.call("read_note", json!({"name": "after"}));
            assert_eq!(
                tool_text(&answer),
                ("the note after".to_owned(), false),
                "{sdk}: {answer}"
            );
            assert!(
                !p.path("wiped").exists(),
                "{sdk}: the server ran wipe from {:?}",
                String::from_utf8_lossy(&line)
            );
            let refused = c.answer_to(&json!(id));
            let why = refused["error"]["message"].as_str().unwrap_or_default();
            assert!(
                refused["error"]["code"] == -32600 && why.contains("line break"),
                "{sdk}: {refused}"
            );
        }
        // `\r\n` ends a line as `\n` does, and U+2028 and U+0085 inside a
        // string are text (sent on escaped: no reader splits there).
        let crlf = br#"{"jsonrpc":"2.0","id":"crlf","method":"tools/call","params":{"name":"read_note","arguments":{"name":"crlf"}}}"#;
        c.send_raw(&[&crlf[..], b"\r"].concat());
        assert_eq!(
            tool_text(&c.answer_to(&json!("crlf"))),
            ("the note crlf".to_owned(), false),
            "{sdk}"
        );
        for text in ["a\u{2028}b", "a\u{85}b", "a\u{2029}b"] {
            let answer = c.call("read_note", json!({ "name": text }));
            assert_eq!(
                tool_text(&answer),
                (format!("the note {text}"), false),
                "{sdk}"
            );
        }
        let (status, stderr) = c.finish();
        assert!(status.success(), "{sdk}: {stderr}");
        assert!(!p.path("wiped").exists(), "{sdk}");
        // One audit line per refused message, naming what was refused.
        let refusals: Vec<Value> = p
            .audit()
            .into_iter()
            .filter(|r| r["rule"] == "builtin:mcp-framing")
            .collect();
        assert_eq!(
            refusals.len(),
            smuggling_lines().len(),
            "{sdk}: {refusals:?}"
        );
        assert!(refusals.iter().all(|r| r["decision"] == "deny"));
        let first = &refusals[0]["action"]["facets"]["mcp"];
        assert_eq!(first["tool"], "read_note", "{sdk}: {first}");
        // What a reader splitting at the break would have run.
        assert_eq!(
            first["pieces"],
            json!([{"id": "w1", "method": "tools/call", "tool": "wipe"}]),
            "{sdk}"
        );
    }
}

/// A server whose `tools/list` answer carries a `sampling/createMessage`
/// request behind raw carriage returns: one answer to a reader splitting
/// at `\n`, an answer and a request to one splitting at `\r` too.
const SMUGGLING_SERVER: &str = r#"
read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}'
read -r line
read -r line
printf '{"jsonrpc":"2.0","id":2,"result":{"tools":[],"x":\r{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":9}}\r}}\n'
read -r line
"#;

#[test]
fn a_server_message_holding_a_line_break_is_dropped_and_audited() {
    let p = Project::new(POLICY);
    let mut c = Client::start(
        &p,
        &["--name", "notes"],
        &["/bin/sh", "-c", SMUGGLING_SERVER],
    );
    c.initialize();
    let answer = c.request("tools/list", json!({}));
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("carriage return")),
        "{answer}"
    );
    assert!(c.quiet_for(300));
    assert!(
        c.seen.iter().all(|m| m.get("method").is_none()),
        "the client was sent a request: {:?}",
        c.seen
    );
    drop(c);
    let audit = p.audit();
    let refused: Vec<&Value> = audit
        .iter()
        .filter(|r| r["rule"] == "builtin:mcp-framing")
        .collect();
    assert_eq!(refused.len(), 1, "{audit:?}");
    let mcp = &refused[0]["action"]["facets"]["mcp"];
    assert_eq!(mcp["from"], "server");
    assert_eq!(mcp["pieces"][0]["method"], "sampling/createMessage");
}
