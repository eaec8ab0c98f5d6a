//! Fake LLM providers on 127.0.0.1 for the judge's tests: an
//! OpenAI-compatible `/chat/completions` and Anthropic's `/v1/messages`,
//! answering with the real response shapes (usage blocks included). The
//! verdict of each request is chosen by the test from the request's body;
//! every request (headers and body) is kept.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The API key the tests give the server's judges.
pub const KEY: &str = "sk-judge-test-SECRET-4242";

/// Which wire format the fake speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

/// One request as the fake received it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// Header lines, lower-cased names: `name: value`.
    pub headers: Vec<String>,
    pub body: Value,
}

impl Seen {
    /// The user message: the rule's question and the action's data block.
    pub fn user_text(&self) -> String {
        let messages = self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let user = messages.iter().find(|m| m["role"] == "user");
        user.and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned()
    }
}

type Answer = Box<dyn Fn(&Seen) -> Value + Send + Sync>;

/// A fake provider.
pub struct Fake {
    /// The `base_url` a policy gives its judge.
    pub base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    /// Answers each request with the verdict `answer` picks from it
    /// (`{"decision": ..., "reason": ...}`), after `stall`.
    pub fn start(
        wire: Wire,
        stall: Duration,
        answer: impl Fn(&Seen) -> Value + Send + Sync + 'static,
    ) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let base_url = match wire {
            Wire::OpenAi => format!("http://{addr}/v1"),
            Wire::Anthropic => format!("http://{addr}"),
        };
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = seen.clone();
        let answer: Arc<Answer> = Arc::new(Box::new(answer));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (log, answer) = (log.clone(), answer.clone());
                std::thread::spawn(move || serve_one(stream, wire, stall, &log, &**answer));
            }
        });
        Fake { base_url, seen }
    }

    /// Always the same verdict.
    pub fn always(wire: Wire, stall: Duration, verdict: Value) -> Fake {
        Fake::start(wire, stall, move |_| verdict.clone())
    }

    pub fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve_one(
    mut stream: std::net::TcpStream,
    wire: Wire,
    stall: Duration,
    log: &Mutex<Vec<Seen>>,
    answer: &(dyn Fn(&Seen) -> Value + Send + Sync),
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut headers = Vec::new();
    let mut len = 0;
    let mut first = true;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        if std::mem::take(&mut first) {
            continue; // the request line
        }
        let line = line.trim_end().to_owned();
        if let Some((name, value)) = line.split_once(':') {
            let name = name.to_ascii_lowercase();
            if name == "content-length" {
                len = value.trim().parse().unwrap_or(0);
            }
            headers.push(format!("{name}:{value}"));
        }
    }
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let seen = Seen {
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let verdict = answer(&seen);
    log.lock().unwrap().push(seen);
    std::thread::sleep(stall);
    let reply = match wire {
        Wire::OpenAi => json!({
            "id": "chatcmpl-9", "object": "chat.completion", "created": 1_750_000_000,
            "model": "judge-model-2025",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": verdict.to_string(), "refusal": null},
                         "logprobs": null, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 250, "completion_tokens": 9, "total_tokens": 259,
                      "prompt_tokens_details": {"cached_tokens": 0}},
            "system_fingerprint": "fp_test"
        }),
        Wire::Anthropic => json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": "toolu_01", "name": "verdict", "input": verdict}],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 310, "output_tokens": 22, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}
        }),
    }
    .to_string();
    let _ = stream.write_all(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
            reply.len()
        )
        .as_bytes(),
    );
}

/// A loopback URL where nothing listens (a provider that is down).
pub fn closed_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}/v1")
}
