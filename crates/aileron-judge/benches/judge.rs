//! What the judge adds to a decision: a verdict from the memory cache (the
//! launch session, the server), from the disk cache (a shim or hook
//! process), and a full call to a fake OpenAI-compatible server on
//! 127.0.0.1 that answers at once (the judge's own cost over the model's).
//! Goals (issue 16): a cache hit ≤ 50 µs in process; a judged call ≤ 2 ms
//! over the server's latency.

#[path = "../tests/support/mod.rs"]
mod support;

use aileron_judge::{Bench, Call, Input, JudgeConfig, Provider};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::io::{BufReader, Write};
use std::net::TcpListener;
use std::time::Duration;

/// A keep-alive server answering every request with one verdict.
fn fake_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let body = json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"decision\": \"allow\", \"reason\": \"build output\"}"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 12}
    })
    .to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let _ = stream.set_nodelay(true);
            let body = body.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                while support::read_message(&mut reader).is_some() {
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

fn bench(c: &mut Criterion) {
    let cfg = JudgeConfig {
        name: "fast".into(),
        provider: Provider::OpenAi,
        base_url: fake_server(),
        model: "m".into(),
        api_key_env: None,
        timeout: Duration::from_secs(5),
        max_tokens: 300,
        temperature: 0.0,
    };
    let action = json!({
        "type": "shell.exec", "summary": "rm -rf target/debug",
        "facets": {"shell": {"command": "rm -rf target/debug", "binary": "rm", "argv": ["rm", "-rf", "target/debug"]}},
        "commands": ["rm -rf target/debug"]
    });
    let call = Call {
        judge: &cfg,
        input: Input {
            rule: Some("judge-deletes"),
            rule_prompt: Some("Allow only the deletion of build output."),
            action: &action,
        },
        cache_ttl: Some(Duration::from_secs(3600)),
    };
    let mut g = c.benchmark_group("judge");
    let memory = Bench::in_memory();
    memory.decide(&call).unwrap();
    g.bench_function("cache hit, memory", |b| {
        b.iter(|| assert!(memory.decide(&call).unwrap().cached))
    });
    let dir = tempfile::tempdir().unwrap();
    Bench::with_disk(dir.path()).decide(&call).unwrap();
    g.bench_function("cache hit, disk (a new process's bench)", |b| {
        b.iter(|| assert!(Bench::with_disk(dir.path()).decide(&call).unwrap().cached))
    });
    let uncached = Call {
        cache_ttl: None,
        ..call
    };
    g.bench_function("call, server answering at once", |b| {
        b.iter(|| assert!(!memory.decide(&uncached).unwrap().cached))
    });
    // The fake's own latency: the same request over a kept-alive socket,
    // no judge (the call above minus this is what the judge adds).
    let request = aileron_judge::Judge::new(cfg.clone(), None).exchange(&call.input);
    let body = serde_json::to_vec(&request.body).unwrap();
    let addr = cfg
        .base_url
        .trim_start_matches("http://")
        .trim_end_matches("/v1");
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    socket.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(socket.try_clone().unwrap());
    g.bench_function("the fake alone, raw HTTP", |b| {
        b.iter(|| {
            let head = format!(
                "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).unwrap();
            socket.write_all(&body).unwrap();
            support::read_message(&mut reader).unwrap();
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
