//! `aileron mcp` against the same MCP server reached directly, in one run
//! (issue 19): the latency a `tools/call` gains through the gateway, which
//! decides it (policy, audit line) before passing it on (goal ≤ 0.5 ms at
//! the median), and the latency of a message it only passes on, `ping`
//! (goal ≤ 50 µs).
//!
//! The server is the rmcp test server (`aileron-mcp`'s example, built in
//! release), the gateway the installed binary on its own (a Decider of its
//! own, the project's policy, an audit line per call); the client writes a
//! request and reads its answer, one at a time, on each connection in
//! turn, so that what differs between the two columns is the gateway.

#[allow(dead_code)] // the process benches' helpers this one does not use
mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const POLICY: &str = r#"version: 1
default: allow
deny:
  - {id: no-wipe, when: {type: mcp.call, mcp.tool: wipe}}
  - {id: no-secrets, when: {type: mcp.call, mcp.arguments.text: {contains: SECRET}}}
"#;

/// An MCP connection over a child's stdio, initialized.
struct Conn {
    child: Child,
    w: ChildStdin,
    r: BufReader<ChildStdout>,
    id: u64,
    line: String,
}

impl Conn {
    fn start(mut cmd: Command) -> Conn {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut c = Conn {
            w: child.stdin.take().unwrap(),
            r: BufReader::new(child.stdout.take().unwrap()),
            child,
            id: 0,
            line: String::new(),
        };
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
                          "clientInfo": {"name": "bench", "version": "1"}});
        c.request("initialize", &init);
        c.w.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .unwrap();
        c.request("tools/list", &json!({}));
        c
    }

    /// Sends a request and reads until its answer.
    fn request(&mut self, method: &str, params: &Value) -> Value {
        self.id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        let mut bytes = msg.to_string().into_bytes();
        bytes.push(b'\n');
        self.w.write_all(&bytes).unwrap();
        loop {
            self.line.clear();
            assert!(
                self.r.read_line(&mut self.line).unwrap() > 0,
                "the connection ended"
            );
            let v: Value = serde_json::from_str(&self.line).unwrap();
            if v["id"] == json!(self.id) {
                return v;
            }
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The rmcp test server, built in release beside the bench.
fn test_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let server = dir.join("examples/mcp_test_server");
    assert!(
        server.exists(),
        "build it first: cargo build --release -p aileron-mcp --example mcp_test_server"
    );
    server
}

/// Times each connection's `run` in turn, `runs` times, and prints each
/// median and what the gateway adds to the direct one.
fn paired(title: &str, runs: usize, direct: &mut dyn FnMut(), gated: &mut dyn FnMut()) {
    let (mut a, mut b) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        let t = Instant::now();
        direct();
        a.push(t.elapsed());
        let t = Instant::now();
        gated();
        b.push(t.elapsed());
    }
    let pct = |v: &mut Vec<Duration>, q: f64| {
        v.sort();
        v[((v.len() as f64 * q) as usize).min(v.len() - 1)]
    };
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let (a50, b50) = (pct(&mut a, 0.5), pct(&mut b, 0.5));
    let (a90, b90) = (pct(&mut a, 0.9), pct(&mut b, 0.9));
    println!("{title}: {runs} runs each, interleaved");
    println!(
        "  direct              p50 {:>8.1} µs  p90 {:>8.1} µs",
        us(a50),
        us(a90)
    );
    println!(
        "  through aileron mcp p50 {:>8.1} µs  p90 {:>8.1} µs",
        us(b50),
        us(b90)
    );
    println!("  added at the median     {:>8.1} µs", us(b50) - us(a50));
}

fn bench(c: &mut Criterion) {
    let p = support::Project::go(POLICY);
    let server = test_server();
    let aileron = support::installed_binary("aileron", p.tmp.path());
    let data = p.tmp.path().join("data");
    let mut direct = Conn::start(support::isolated(&server, &p.dir, &p.home));
    let mut gated = {
        let mut cmd = support::isolated(&aileron, &p.dir, &p.home);
        cmd.env("AILERON_DATA", &data)
            .args(["mcp", "--name", "notes", "--"])
            .arg(&server);
        Conn::start(cmd)
    };
    let call = json!({"name": "echo", "arguments": {"text": "hello"}});
    // The call is decided and answered, not refused.
    let answer = gated.request("tools/call", &call);
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    paired(
        "tools/call (decided, audited)",
        3000,
        &mut || {
            direct.request("tools/call", &call);
        },
        &mut || {
            gated.request("tools/call", &call);
        },
    );
    paired(
        "ping (passed on)",
        5000,
        &mut || {
            direct.request("ping", &json!({}));
        },
        &mut || {
            gated.request("ping", &json!({}));
        },
    );
    let mut g = c.benchmark_group("mcp");
    g.bench_function("tools_call/direct", |b| {
        b.iter(|| direct.request("tools/call", &call))
    });
    g.bench_function("tools_call/aileron_mcp", |b| {
        b.iter(|| gated.request("tools/call", &call))
    });
    g.bench_function("ping/direct", |b| {
        b.iter(|| direct.request("ping", &json!({})))
    });
    g.bench_function("ping/aileron_mcp", |b| {
        b.iter(|| gated.request("ping", &json!({})))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
