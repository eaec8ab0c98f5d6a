//! Fake OpenAI-compatible and Anthropic servers on 127.0.0.1 answering
//! with the real response shapes (or failing in scripted ways), and the
//! judge, actions and checks the tests share.

#![allow(dead_code)]

use aileron_judge::{Error, Input, Judge, JudgeConfig, Provider, Ruling};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const KEY: &str = "sk-test-SECRET-1234";

/// How long past its timeout a failing call may take (2 cores, tests in
/// parallel: generous).
pub const MARGIN: Duration = Duration::from_millis(1500);

/// One scripted reply.
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    /// Before the status line.
    pub stall_head: Duration,
    /// After the headers, before the body.
    pub stall_body: Duration,
    /// The body written a byte at a time, this long between bytes.
    pub trickle: Option<Duration>,
    /// No `content-length`: the body ends when the connection closes.
    pub close_delimited: bool,
    /// Hang up after reading the request, without a word.
    pub hang_up: bool,
}

impl Reply {
    pub fn json(body: Value) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: body.to_string().into_bytes(),
            stall_head: Duration::ZERO,
            stall_body: Duration::ZERO,
            trickle: None,
            close_delimited: false,
            hang_up: false,
        }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply {
            status,
            body: body.as_bytes().to_vec(),
            ..Reply::json(json!({}))
        }
    }
}

/// The requests a fake received: head and body.
type Seen = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// A server that answers each request with the next reply (the last repeats).
pub struct Fake {
    pub url: String,
    requests: Seen,
}

impl Fake {
    pub fn start(replies: Vec<Reply>) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests: Seen = Arc::default();
        let seen = requests.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(stream) = stream else { return };
                let reply = replies[n.min(replies.len() - 1)].clone();
                let seen = seen.clone();
                std::thread::spawn(move || answer(stream, &reply, &seen));
            }
        });
        Fake { url, requests }
    }

    pub fn requests(&self) -> Vec<(String, Vec<u8>)> {
        self.requests.lock().unwrap().clone()
    }

    /// The JSON body of the `n`th request.
    pub fn sent(&self, n: usize) -> Value {
        serde_json::from_slice(&self.requests()[n].1).unwrap()
    }
}

/// One HTTP message's head and its `content-length` body; `None` at the
/// end of the stream.
pub fn read_message(reader: &mut impl BufRead) -> Option<(String, Vec<u8>)> {
    let mut head = String::new();
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; len];
    reader.read_exact(&mut body).ok()?;
    Some((head, body))
}

fn answer(mut stream: std::net::TcpStream, reply: &Reply, seen: &Seen) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let Some(message) = read_message(&mut reader) else {
        return;
    };
    seen.lock().unwrap().push(message);
    if reply.hang_up {
        return;
    }
    std::thread::sleep(reply.stall_head);
    let mut out = format!(
        "HTTP/1.1 {} X\r\ncontent-type: application/json\r\nconnection: close\r\n",
        reply.status
    );
    if !reply.close_delimited {
        out.push_str(&format!("content-length: {}\r\n", reply.body.len()));
    }
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    if stream.write_all(out.as_bytes()).is_err() || stream.flush().is_err() {
        return;
    }
    std::thread::sleep(reply.stall_body);
    match reply.trickle {
        Some(gap) => {
            for byte in &reply.body {
                if stream.write_all(&[*byte]).is_err() {
                    return;
                }
                std::thread::sleep(gap);
            }
        }
        None => {
            let _ = stream.write_all(&reply.body);
        }
    }
}

pub fn config(provider: Provider, base: &str, timeout: Duration) -> JudgeConfig {
    JudgeConfig {
        name: "fast".into(),
        provider,
        base_url: match provider {
            Provider::OpenAi => format!("{base}/v1"),
            Provider::Anthropic => base.to_owned(),
        },
        model: "judge-model".into(),
        api_key_env: Some("AILERON_TEST_KEY".into()),
        timeout,
        max_tokens: 200,
        temperature: 0.0,
    }
}

pub fn judge(provider: Provider, base: &str, timeout: Duration) -> Judge {
    Judge::new(config(provider, base, timeout), Some(KEY.into()))
}

/// An OpenAI chat completion whose message is `content`.
pub fn openai(content: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "judge-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": null}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 321, "completion_tokens": 17, "total_tokens": 338}
    })
}

/// An Anthropic message with one `verdict` tool call.
pub fn anthropic(input: Value) -> Value {
    anthropic_content(
        json!([{"type": "tool_use", "id": "toolu_1", "name": "verdict", "input": input}]),
        "tool_use",
    )
}

/// An Anthropic message with these content blocks.
pub fn anthropic_content(content: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "judge-model",
        "content": content,
        "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 400, "output_tokens": 30}
    })
}

pub fn action(summary: &str) -> Value {
    json!({"type": "shell.exec", "summary": summary, "facets": {"shell": {"command": summary}}})
}

pub fn input(action: &Value) -> Input<'_> {
    Input {
        rule: Some("judge-deletes"),
        rule_prompt: Some("Is this deletion limited to build output?"),
        action,
    }
}

/// What a failed call ended in: the error, its audit text, how long it
/// took. Checks that it failed (no verdict) within `timeout` + [`MARGIN`]
/// and that the key shows nowhere in the error.
pub fn fails(judge: &Judge) -> (Error, String, Duration) {
    let a = action("make deploy");
    let started = Instant::now();
    let got = judge.decide(&input(&a));
    let took = started.elapsed();
    let e = match got {
        Ok(r) => panic!("a verdict, not a failure: {r:?}"),
        Err(e) => e,
    };
    let text = e.to_string();
    let limit = judge.config().timeout + MARGIN;
    assert!(took < limit, "{text}: took {took:?}, over {limit:?}");
    assert_no_key(&text);
    assert_no_key(&format!("{e:?}"));
    assert!(!text.contains('\n'), "one line for the audit: {text:?}");
    (e, text, took)
}

/// A successful call's ruling, the key nowhere in it.
pub fn rules(judge: &Judge) -> Ruling {
    let a = action("make deploy");
    let r = judge.decide(&input(&a)).unwrap();
    assert_no_key(&format!("{r:?}"));
    r
}

pub fn assert_no_key(text: &str) {
    assert!(!text.contains(KEY), "the key leaked: {text}");
    assert!(!text.contains("SECRET"), "part of the key leaked: {text}");
}
