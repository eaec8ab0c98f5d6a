//! What the gateway does with each message, as a state machine with no
//! I/O: a line from the client or the server in, [`Effect`]s out (lines to
//! write, calls to decide, notes to log). The plumbing (`stdio`) carries
//! them out.
//!
//! - Client → server: every message passes unchanged but `tools/call`,
//!   `resources/read` and `prompts/get`, which are decided first
//!   ([`Effect::Decide`], then [`Gateway::decided`]). Input that is not one
//!   JSON-RPC message is answered with an error and never forwarded; a
//!   batch is refused whole (MCP 2025-06-18 has no batches), so that no call
//!   inside one can pass undecided.
//! - Server → client: passed unchanged but answers to `tools/list`, from
//!   which disabled tools are taken out; answers to ids the client never
//!   sent are dropped; requests (sampling, roots, elicitation) are passed
//!   and noted; a batch is passed element by element.

use crate::framing::{self, Break};
use crate::lower::{self, Catalog};
use crate::message::{self, Message, Parsed, code};
use aileron_engine::Action;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The most calls waiting for a decision at once; more are refused.
pub const MAX_DECIDING: usize = 64;

/// Something the plumbing must do.
#[derive(Debug)]
pub enum Effect {
    /// A line for the server (no newline).
    ToServer(Vec<u8>),
    /// A line for the client (no newline).
    ToClient(Vec<u8>),
    /// Decide `action`; then hand the answer to [`Gateway::decided`].
    Decide(Call),
    /// A request from the server to the client, passed on: written to the
    /// audit log as a note (not decided).
    Audit(Action),
    /// A message refused for how it is framed: written to the audit log as
    /// denied, with `reason`.
    Refused { action: Action, reason: String },
    /// A line for the user (stderr).
    Note(String),
}

/// A call waiting for its decision.
#[derive(Debug)]
pub struct Call {
    /// The id's text ([`message::key`]).
    pub key: String,
    pub action: Action,
}

struct Deciding {
    id: Value,
    method: String,
    /// The line to forward if allowed.
    line: Vec<u8>,
    cancelled: bool,
}

/// The gateway's state for one client and one server.
pub struct Gateway {
    server: String,
    catalog: Catalog,
    /// Client requests forwarded to the server, waiting for its answer:
    /// their method.
    forwarded: HashMap<String, (Value, String)>,
    deciding: HashMap<String, Deciding>,
    /// Server requests passed to the client, waiting for its answer.
    asked: HashMap<String, String>,
}

/// How a decision came out (`aileron_session::Response`, as far as the
/// gateway needs it).
pub struct Ruling<'a> {
    pub allow: bool,
    /// Why not, in one line (`aileron: denied: REASON (rule ID)`).
    pub message: Option<&'a str>,
}

impl Gateway {
    /// `server` is `mcp.server` of every Action.
    pub fn new(server: &str) -> Gateway {
        Gateway {
            server: server.to_owned(),
            catalog: Catalog::default(),
            forwarded: HashMap::new(),
            deciding: HashMap::new(),
            asked: HashMap::new(),
        }
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    /// Client requests not answered yet (forwarded or being decided).
    pub fn pending(&self) -> usize {
        self.forwarded.len() + self.deciding.len()
    }

    /// A line from the client.
    pub fn from_client(&mut self, line: &[u8]) -> Vec<Effect> {
        let line = match framing::frame(line) {
            Ok(framed) => framed,
            Err(brk) => return self.client_break(line, brk),
        };
        let line = &line[..];
        match message::parse(line) {
            Parsed::NotJson(why) => vec![
                Effect::ToClient(message::error(
                    None,
                    code::PARSE_ERROR,
                    &format!("aileron: refused: the message is not JSON ({why})"),
                )),
                Effect::Note(format!(
                    "the client sent a line that is not JSON ({why}): refused"
                )),
            ],
            Parsed::Invalid { id, why } => vec![
                Effect::ToClient(message::error(
                    id.as_ref(),
                    code::INVALID_REQUEST,
                    &format!("aileron: refused: not a JSON-RPC message ({why})"),
                )),
                Effect::Note(format!("the client sent {why}: refused")),
            ],
            Parsed::Batch(items) => self.client_batch(items),
            Parsed::One(m) => self.client_message(m, line),
        }
    }

    /// A line from the client that a server would read as more than one:
    /// refused whole, answered by its id, audited.
    fn client_break(&mut self, line: &[u8], brk: &'static Break) -> Vec<Effect> {
        let (id, reason) = framing_refusal(line, brk, "client");
        vec![
            Effect::ToClient(message::error(
                id.as_ref(),
                code::INVALID_REQUEST,
                &format!(
                    "aileron: refused: {reason}; send each message on one line, ending in \\n"
                ),
            )),
            Effect::Note(format!(
                "the client sent a message holding {}: refused: {}",
                brk.name,
                excerpt(line)
            )),
            Effect::Refused {
                action: framing_action(&self.server, "client", line, brk),
                reason,
            },
        ]
    }

    fn client_batch(&mut self, items: Vec<Value>) -> Vec<Effect> {
        // Answered per request, as a batch is; notifications get nothing.
        let answers: Vec<Value> = items
            .iter()
            .filter_map(|item| {
                let id = item.get("id").filter(|id| !id.is_null())?;
                Some(json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": code::INVALID_REQUEST,
                    "message": "aileron: refused: JSON-RPC batches are not passed on \
                                (MCP has none since 2025-06-18): send each message alone",
                }}))
            })
            .collect();
        let mut out = vec![Effect::Note(format!(
            "the client sent a batch of {} messages: refused whole",
            items.len()
        ))];
        if !answers.is_empty() {
            out.push(Effect::ToClient(
                Value::Array(answers).to_string().into_bytes(),
            ));
        }
        out
    }

    fn client_message(&mut self, m: Message, line: &[u8]) -> Vec<Effect> {
        match m {
            Message::Request { id, method, params } => {
                let key = message::key(&id);
                if self.forwarded.contains_key(&key) || self.deciding.contains_key(&key) {
                    return vec![Effect::ToClient(message::error(
                        Some(&id),
                        code::INVALID_REQUEST,
                        "aileron: refused: a request with this id is still waiting for its answer",
                    ))];
                }
                if !lower::DECIDED.contains(&method.as_str()) {
                    self.forwarded.insert(key, (id, method));
                    return vec![Effect::ToServer(line.to_vec())];
                }
                if self.deciding.len() >= MAX_DECIDING {
                    return vec![refusal(
                        &id,
                        &method,
                        &format!(
                            "aileron: refused: {MAX_DECIDING} calls are already waiting for a decision"
                        ),
                    )];
                }
                match lower::lower(&self.server, &method, params.as_ref(), &self.catalog) {
                    Err(why) => vec![Effect::ToClient(message::error(
                        Some(&id),
                        code::INVALID_PARAMS,
                        &format!("aileron: refused: {why}"),
                    ))],
                    Ok(action) => {
                        self.deciding.insert(
                            key.clone(),
                            Deciding {
                                id,
                                method,
                                line: line.to_vec(),
                                cancelled: false,
                            },
                        );
                        vec![Effect::Decide(Call { key, action })]
                    }
                }
            }
            Message::Notification { method, .. } if lower::DECIDED.contains(&method.as_str()) => {
                // A call without an id would go undecided to a server that
                // runs it anyway: it is not a notification MCP has.
                vec![Effect::Note(format!(
                    "the client sent {method} without an id: dropped, not decided"
                ))]
            }
            Message::Notification { method, params } => {
                // A call the client gave up on while it was decided is
                // not sent once decided.
                if method == "notifications/cancelled"
                    && let Some(id) = params.as_ref().and_then(|p| p.get("requestId"))
                    && let Some(d) = self.deciding.get_mut(&message::key(id))
                {
                    d.cancelled = true;
                }
                vec![Effect::ToServer(line.to_vec())]
            }
            Message::Response { id, .. } => {
                let key = message::key(&id);
                if self.asked.remove(&key).is_some() {
                    vec![Effect::ToServer(line.to_vec())]
                } else {
                    vec![Effect::Note(format!(
                        "the client answered a request the server never sent (id {key}): dropped"
                    ))]
                }
            }
        }
    }

    /// The decision of the call `key` ([`Effect::Decide`]).
    pub fn decided(&mut self, key: &str, ruling: &Ruling<'_>) -> Vec<Effect> {
        let Some(d) = self.deciding.remove(key) else {
            // Answered meanwhile (the server ended).
            return Vec::new();
        };
        if d.cancelled {
            return vec![Effect::Note(format!(
                "the client cancelled {} (id {key}) while it was decided: not sent",
                d.method
            ))];
        }
        if ruling.allow {
            self.forwarded.insert(key.to_owned(), (d.id, d.method));
            return vec![Effect::ToServer(d.line)];
        }
        let text = ruling.message.unwrap_or("aileron: denied");
        vec![refusal(&d.id, &d.method, text)]
    }

    /// A line from the server. `disabled` says whether a tool is disabled.
    pub fn from_server(&mut self, line: &[u8], disabled: &dyn Fn(&Action) -> bool) -> Vec<Effect> {
        let line = match framing::frame(line) {
            Ok(framed) => framed,
            Err(brk) => return self.server_break(line, brk),
        };
        let line = &line[..];
        match message::parse(line) {
            Parsed::NotJson(why) => self.unreadable_answer(
                line,
                format!("the server wrote a line that is not JSON ({why})"),
            ),
            Parsed::Invalid { why, .. } => {
                self.unreadable_answer(line, format!("the server wrote {why}"))
            }
            Parsed::Batch(items) => {
                let mut out = Vec::new();
                for item in items {
                    // serde_json writes U+2028 raw in a string: the
                    // plumbing escapes it as it writes the line.
                    let text = item.to_string().into_bytes();
                    match message::classify(item) {
                        Parsed::One(m) => out.extend(self.server_message(m, &text, disabled)),
                        _ => out.push(Effect::Note(format!(
                            "the server wrote a batch holding something that is not a message: dropped: {}",
                            excerpt(&text)
                        ))),
                    }
                }
                out
            }
            Parsed::One(m) => self.server_message(m, line, disabled),
        }
    }

    /// A line from the server that a client would read as more than one:
    /// dropped (its caller answered), audited.
    fn server_break(&mut self, line: &[u8], brk: &'static Break) -> Vec<Effect> {
        let (_, reason) = framing_refusal(line, brk, "server");
        let mut out = self.unreadable_answer(line, format!("the server wrote {}", brk.name));
        out.push(Effect::Refused {
            action: framing_action(&self.server, "server", line, brk),
            reason,
        });
        out
    }

    fn server_message(
        &mut self,
        m: Message,
        line: &[u8],
        disabled: &dyn Fn(&Action) -> bool,
    ) -> Vec<Effect> {
        match m {
            Message::Response { id, result } => {
                let key = message::key(&id);
                let Some((_, method)) = self.forwarded.remove(&key) else {
                    return vec![Effect::Note(format!(
                        "the server answered a request the client never sent (id {key}): dropped"
                    ))];
                };
                if method == "tools/list"
                    && let Some(result) = result
                {
                    self.catalog.learn(&result);
                    if let Some((kept, removed)) =
                        lower::without_disabled(&self.server, &result, disabled)
                    {
                        return vec![
                            Effect::ToClient(message::response(&id, kept)),
                            Effect::Note(format!(
                                "tools/list: not shown to the agent, every call of them being denied: {}",
                                removed.join(", ")
                            )),
                        ];
                    }
                }
                vec![Effect::ToClient(line.to_vec())]
            }
            Message::Request { id, method, params } => {
                self.asked.insert(message::key(&id), method.clone());
                let mut a = Action {
                    kind: "mcp.server_request".into(),
                    verb: method.clone(),
                    summary: format!("{} asks the client: {method}", self.server),
                    ..Action::default()
                };
                a.facets.insert(
                    "mcp".into(),
                    json!({"server": self.server, "arguments": params.unwrap_or(Value::Null)}),
                );
                vec![Effect::Audit(a), Effect::ToClient(line.to_vec())]
            }
            Message::Notification { .. } => vec![Effect::ToClient(line.to_vec())],
        }
    }

    /// A line from the server that cannot be passed on: dropped, and when
    /// it names the id of a request waiting for its answer (a key given
    /// twice, say), that request gets an error instead of waiting forever.
    fn unreadable_answer(&mut self, line: &[u8], what: String) -> Vec<Effect> {
        let mut out = vec![Effect::Note(format!("{what}: dropped: {}", excerpt(line)))];
        let mut scan = message::IdScan::default();
        scan.feed(line);
        if let Some(id) = scan.id()
            && self.forwarded.remove(&message::key(&id)).is_some()
        {
            out.push(Effect::ToClient(message::error(
                Some(&id),
                code::SERVER_GONE,
                &format!("aileron: the MCP server's answer cannot be passed on: {what}"),
            )));
        }
        out
    }

    /// The server is gone: an error for every client request not answered.
    pub fn server_gone(&mut self, why: &str) -> Vec<Effect> {
        let text = format!(
            "aileron: the MCP server {} {why} before answering",
            self.server
        );
        let mut out = Vec::new();
        let forwarded = std::mem::take(&mut self.forwarded);
        let deciding = std::mem::take(&mut self.deciding);
        let mut ids: Vec<Value> = forwarded.into_values().map(|(id, _)| id).collect();
        ids.extend(
            deciding
                .into_values()
                .filter(|d| !d.cancelled)
                .map(|d| d.id),
        );
        for id in ids {
            out.push(Effect::ToClient(message::error(
                Some(&id),
                code::SERVER_GONE,
                &text,
            )));
        }
        out
    }

    /// A message too long to hold, from the client, whose id `id` was
    /// found: answered, never forwarded.
    pub fn client_too_long(&mut self, id: Option<Value>, limit: usize) -> Vec<Effect> {
        let why = format!(
            "aileron: refused: the message is longer than {} MiB",
            limit >> 20
        );
        vec![
            Effect::ToClient(message::error(id.as_ref(), code::INVALID_REQUEST, &why)),
            Effect::Note(format!(
                "the client sent a message longer than {} MiB (id {}): refused",
                limit >> 20,
                id.as_ref().map_or("unknown".into(), message::key)
            )),
        ]
    }

    /// An answer too long to hold, from the server: its caller gets an error.
    pub fn server_too_long(&mut self, id: Option<Value>, limit: usize) -> Vec<Effect> {
        let mut out = vec![Effect::Note(format!(
            "the server wrote a message longer than {} MiB: dropped",
            limit >> 20
        ))];
        if let Some(id) = id
            && self.forwarded.remove(&message::key(&id)).is_some()
        {
            out.push(Effect::ToClient(message::error(
                Some(&id),
                code::SERVER_GONE,
                &format!(
                    "aileron: the MCP server's answer is longer than {} MiB: not passed on",
                    limit >> 20
                ),
            )));
        }
        out
    }
}

/// A refused request's answer: for a tool call, a tool error the model
/// reads; for other requests, a JSON-RPC error.
fn refusal(id: &Value, method: &str, text: &str) -> Effect {
    Effect::ToClient(if method == "tools/call" {
        message::tool_error(id, text)
    } else {
        message::error(Some(id), code::DENIED, text)
    })
}

/// The id of a line refused for `brk`, and why it is refused.
fn framing_refusal(line: &[u8], brk: &Break, from: &str) -> (Option<Value>, String) {
    let mut scan = message::IdScan::default();
    scan.feed(line);
    let reason = format!(
        "the message from the {from} holds {}, a line break to {}: the other side \
         would read another message than the one the gateway read",
        brk.name, brk.readers
    );
    (scan.id(), reason)
}

/// The audit line's Action of a message refused for `brk` (`from` the
/// client or the server): what the gateway read, and what a reader that
/// splits at every break would read.
fn framing_action(server: &str, from: &str, line: &[u8], brk: &Break) -> Action {
    let read = serde_json::from_slice::<Value>(line).ok();
    // A name as long as the line is the line's problem, not the log's.
    let field = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .map(|s| s.chars().take(200).collect::<String>())
    };
    let method = field(read.as_ref().and_then(|v| v.get("method")));
    let tool = field(read.as_ref().and_then(|v| v.pointer("/params/name")));
    let mut facet = json!({
        "server": server,
        "from": from,
        "break": brk.label,
        "pieces": framing::pieces(line),
    });
    for (key, value) in [("method", &method), ("tool", &tool)] {
        if let Some(v) = value {
            facet[key] = json!(v);
        }
    }
    let mut a = Action {
        kind: "mcp.message".into(),
        verb: method.unwrap_or_else(|| "unreadable".into()),
        summary: format!(
            "{server}: a message from the {from} holding {}: refused",
            brk.name
        ),
        ..Action::default()
    };
    a.facets.insert("mcp".into(), facet);
    a
}

/// The start of a line, for a note.
fn excerpt(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(120)]);
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if line.len() > 120 {
        format!("{text}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(e: &Effect) -> Value {
        match e {
            Effect::ToServer(l) | Effect::ToClient(l) => serde_json::from_slice(l).unwrap(),
            other => panic!("not a line: {other:?}"),
        }
    }

    fn never(_: &Action) -> bool {
        false
    }

    /// Sends `line` (a call), which must be decided; then `allow` or a denial.
    fn decide(g: &mut Gateway, line: &[u8], allow: bool, message: &str) -> Vec<Effect> {
        let fx = g.from_client(line);
        let [Effect::Decide(call)] = &fx[..] else {
            panic!("{fx:?}")
        };
        g.decided(
            &call.key,
            &Ruling {
                allow,
                message: Some(message),
            },
        )
    }

    fn list(g: &mut Gateway, tools: Value) -> Vec<Effect> {
        g.from_client(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        let answer = json!({"jsonrpc":"2.0","id":1,"result":{"tools": tools}}).to_string();
        g.from_server(answer.as_bytes(), &|a: &Action| a.verb == "wipe")
    }

    #[test]
    fn messages_other_than_calls_pass_unchanged() {
        let mut g = Gateway::new("s");
        let line = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"x":1}}"#;
        assert!(matches!(&g.from_client(line)[..], [Effect::ToServer(l)] if l == line));
        let answer = br#"{"jsonrpc":"2.0","id":0,"result":{"y":2}}"#;
        assert!(matches!(&g.from_server(answer, &never)[..], [Effect::ToClient(l)] if l == answer));
        let n = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(&g.from_client(n)[..], [Effect::ToServer(l)] if l == n));
        let n = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        assert!(matches!(&g.from_server(n, &never)[..], [Effect::ToClient(l)] if l == n));
        assert_eq!(g.pending(), 0);
    }

    #[test]
    fn a_call_is_decided_before_it_reaches_the_server() {
        let mut g = Gateway::new("s");
        list(
            &mut g,
            json!([{"name": "read", "annotations": {"readOnlyHint": true}}]),
        );
        let line = br#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"read","arguments":{"p":1}}}"#;
        let fx = g.from_client(line);
        let [Effect::Decide(call)] = &fx[..] else {
            panic!("{fx:?}")
        };
        assert_eq!(call.key, r#""c1""#);
        assert_eq!(
            call.action.sensitivity,
            Some(aileron_engine::Sensitivity::Read)
        );
        let fx = g.decided(
            &call.key,
            &Ruling {
                allow: true,
                message: None,
            },
        );
        assert!(matches!(&fx[..], [Effect::ToServer(l)] if l == line));
        let fx = g.from_server(
            br#"{"jsonrpc":"2.0","id":"c1","result":{"content":[]}}"#,
            &never,
        );
        assert!(matches!(&fx[..], [Effect::ToClient(_)]));

        let line = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write"}}"#;
        let fx = decide(
            &mut g,
            line,
            false,
            "aileron: denied: no writes (rule no-write)",
        );
        assert_eq!(
            text(&fx[0]),
            json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text",
                "text":"aileron: denied: no writes (rule no-write)"}],"isError":true}})
        );
        // A denied resource read is a JSON-RPC error.
        let line = br#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x:y"}}"#;
        let fx = decide(&mut g, line, false, "aileron: denied: r");
        assert_eq!(text(&fx[0])["error"]["code"], json!(code::DENIED));
        assert_eq!(g.pending(), 0);
    }

    #[test]
    fn disabled_tools_are_not_listed_and_a_change_is_listed_again() {
        let mut g = Gateway::new("s");
        let fx = list(&mut g, json!([{"name": "read"}, {"name": "wipe"}]));
        assert_eq!(text(&fx[0])["result"]["tools"], json!([{"name": "read"}]));
        assert!(matches!(&fx[1], Effect::Note(n) if n.contains("wipe")));
        let n = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        assert!(matches!(&g.from_server(n, &never)[..], [Effect::ToClient(l)] if l == n));
        let fx = list(&mut g, json!([{"name": "wipe"}, {"name": "new"}]));
        assert_eq!(text(&fx[0])["result"]["tools"], json!([{"name": "new"}]));
        // Calling it anyway is still decided.
        let fx = g.from_client(
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wipe"}}"#,
        );
        assert!(matches!(&fx[..], [Effect::Decide(_)]));
    }

    #[test]
    fn bad_input_from_the_client_is_answered_and_never_forwarded() {
        let mut g = Gateway::new("s");
        let fx = g.from_client(b"not json");
        assert_eq!(text(&fx[0])["error"]["code"], json!(code::PARSE_ERROR));
        assert_eq!(text(&fx[0])["id"], Value::Null);
        let fx = g.from_client(br#"{"id":5,"method":"tools/call","params":"x"}"#);
        assert_eq!(text(&fx[0])["id"], json!(5));
        let fx = g.from_client(br#"{"id":6,"method":"tools/call","params":{}}"#);
        assert_eq!(text(&fx[0])["error"]["code"], json!(code::INVALID_PARAMS));
        // A batch: every request in it refused, none forwarded or decided.
        let batch = json!([{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wipe"}},
            {"jsonrpc":"2.0","method":"notifications/initialized"},
            {"jsonrpc":"2.0","id":8,"method":"tools/list"}]);
        let fx = g.from_client(batch.to_string().as_bytes());
        assert!(
            fx.iter()
                .all(|e| !matches!(e, Effect::ToServer(_) | Effect::Decide(_)))
        );
        let answers = fx
            .iter()
            .find(|e| matches!(e, Effect::ToClient(_)))
            .unwrap();
        let answers = text(answers);
        assert_eq!(answers.as_array().unwrap().len(), 2);
        assert_eq!(answers[0]["id"], json!(7));
        // A call without an id: not forwarded, not decided.
        let fx =
            g.from_client(br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"wipe"}}"#);
        assert!(matches!(&fx[..], [Effect::Note(n)] if n.contains("without an id")));
        // An answer to nothing the server asked.
        let fx = g.from_client(br#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
        assert!(matches!(&fx[..], [Effect::Note(_)]));
        // An id still waiting is not reused.
        g.from_client(br#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#);
        let fx = g.from_client(
            br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"x"}}"#,
        );
        assert!(matches!(&fx[..], [Effect::ToClient(_)]));
        assert_eq!(g.pending(), 1);
        let fx = g.client_too_long(Some(json!(11)), 16 << 20);
        assert_eq!(text(&fx[0])["id"], json!(11));
    }

    #[test]
    fn bad_input_from_the_server_is_dropped() {
        let mut g = Gateway::new("s");
        assert!(matches!(
            &g.from_server(b"Starting server...", &never)[..],
            [Effect::Note(_)]
        ));
        // An answer that cannot be passed on: its caller gets an error.
        g.from_client(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
        let fx = g.from_server(
            br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[],"tools":[]}}"#,
            &never,
        );
        assert!(matches!(&fx[0], Effect::Note(n) if n.contains("twice")));
        assert_eq!(text(&fx[1])["id"], json!(7));
        assert_eq!(g.pending(), 0);
        let fx = g.from_server(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, &never);
        assert!(matches!(&fx[..], [Effect::Note(n)] if n.contains("never sent")));
        // A batch is passed element by element.
        g.from_client(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        let fx = g.from_server(
            br#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"notifications/message","params":{}}]"#,
            &never,
        );
        assert_eq!(
            fx.iter()
                .filter(|e| matches!(e, Effect::ToClient(_)))
                .count(),
            2
        );
    }

    #[test]
    fn server_requests_pass_and_are_noted() {
        let mut g = Gateway::new("s");
        let req = br#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[]}}"#;
        let fx = g.from_server(req, &never);
        assert!(matches!(&fx[0], Effect::Audit(a) if a.verb == "sampling/createMessage"));
        assert!(matches!(&fx[1], Effect::ToClient(l) if l == req));
        let answer = br#"{"jsonrpc":"2.0","id":"s1","result":{"role":"assistant"}}"#;
        assert!(matches!(&g.from_client(answer)[..], [Effect::ToServer(l)] if l == answer));
        // Answered once only.
        assert!(matches!(&g.from_client(answer)[..], [Effect::Note(_)]));
    }

    #[test]
    fn when_the_server_ends_every_waiting_request_gets_an_error() {
        let mut g = Gateway::new("s");
        g.from_client(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        g.from_client(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}"#);
        let fx = g.server_gone("exited (exit status: 3)");
        let mut ids: Vec<Value> = fx.iter().map(|e| text(e)["id"].clone()).collect();
        ids.sort_by_key(|v| v.as_i64());
        assert_eq!(ids, [json!(1), json!(2)]);
        assert!(
            text(&fx[0])["error"]["message"]
                .as_str()
                .unwrap()
                .contains("exited")
        );
        // The decision that comes after has nothing to answer.
        assert!(
            g.decided(
                "2",
                &Ruling {
                    allow: true,
                    message: None
                }
            )
            .is_empty()
        );
    }

    #[test]
    fn a_message_a_server_would_read_as_two_is_refused_and_audited() {
        let mut g = Gateway::new("notes");
        let wipe = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wipe"}}"#;
        for (id, line) in [
            (json!(1), format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"read","x":{wipe}}}}}"#).replace(wipe, &format!("\r{wipe}\r"))),
            (json!(3), format!("{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{{\"x\":\r{wipe}\r}}}}")),
            (json!(5), format!("{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}}\u{2028}{wipe}")),
        ] {
            let fx = g.from_client(line.as_bytes());
            assert!(
                fx.iter().all(|e| !matches!(e, Effect::ToServer(_) | Effect::Decide(_))),
                "{fx:?}"
            );
            assert_eq!(text(&fx[0])["id"], id);
            assert_eq!(text(&fx[0])["error"]["code"], json!(code::INVALID_REQUEST));
            let Some(Effect::Refused { action, reason }) = fx.last() else {
                panic!("{fx:?}")
            };
            assert!(reason.contains("line break"), "{reason}");
            assert_eq!(action.kind, "mcp.message");
            // What a reader splitting at the break would have run.
            let pieces = action.facets["mcp"]["pieces"].as_array().unwrap();
            let smuggled = json!({"id": 2, "method": "tools/call", "tool": "wipe"});
            assert!(pieces.contains(&smuggled), "{pieces:?}");
        }
        assert_eq!(g.pending(), 0);
    }

    #[test]
    fn a_line_break_inside_a_string_is_passed_on_escaped() {
        let mut g = Gateway::new("s");
        let line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"t\":\"a\u{2028}b\u{85}\"}}";
        let fx = g.from_client(line.as_bytes());
        let [Effect::ToServer(sent)] = &fx[..] else {
            panic!("{fx:?}")
        };
        assert_eq!(
            std::str::from_utf8(sent).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"t":"a\u2028b\u0085"}}"#
        );
        // From the server alike.
        let answer = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"\u{2029}\"}}";
        let fx = g.from_server(answer.as_bytes(), &never);
        let [Effect::ToClient(l)] = &fx[..] else {
            panic!("{fx:?}")
        };
        assert_eq!(
            std::str::from_utf8(l).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"t":"\u2029"}}"#
        );
    }

    #[test]
    fn a_server_line_holding_a_line_break_is_dropped_and_its_caller_answered() {
        let mut g = Gateway::new("s");
        g.from_client(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#);
        let sampling =
            r#"{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{}}"#;
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"tools\":[],\"x\":\r{sampling}\r}}}}"
        );
        let fx = g.from_server(line.as_bytes(), &never);
        assert!(matches!(&fx[0], Effect::Note(n) if n.contains("carriage return")));
        assert_eq!(text(&fx[1])["id"], json!(7));
        assert_eq!(text(&fx[1])["error"]["code"], json!(code::SERVER_GONE));
        assert!(
            matches!(&fx[2], Effect::Refused { action, .. } if action.facets["mcp"]["from"] == "server")
        );
        assert_eq!(fx.len(), 3);
        assert_eq!(g.pending(), 0);
    }

    #[test]
    fn a_call_cancelled_while_decided_is_not_sent() {
        let mut g = Gateway::new("s");
        let fx = g.from_client(
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}"#,
        );
        let [Effect::Decide(call)] = &fx[..] else {
            panic!()
        };
        let cancel =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#;
        assert!(matches!(&g.from_client(cancel)[..], [Effect::ToServer(_)]));
        let fx = g.decided(
            &call.key,
            &Ruling {
                allow: true,
                message: None,
            },
        );
        assert!(matches!(&fx[..], [Effect::Note(_)]));
    }
}
