//! `aileron hook claude-code` end to end as a process per call (what Claude
//! Code pays before every tool call), beside `bash -c true` in the same
//! run, under ADR-0014's example policy with the compiled policy cached.
//! Goal (issue 4): under 2 ms median. Then a `judge` rule's verdict
//! reused from the on-disk cache beside a rule's allow (issue 16: the
//! cache hit adds at most 0.3 ms to a hook process).

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const POLICY: &str = r#"version: 1
profiles: ["lang/go"]
default: ask
allow:
  - "git status"
  - "git diff *"
  - "ls *"
  - when: {type: fs.read}
deny:
  - command: "git push origin main"
    description: "no direct push to main"
ask:
  - "git push *"
"#;

fn hook(aileron: &Path, dir: &Path, home: &Path, event: &[u8]) {
    let mut child = support::isolated(aileron, dir, home)
        .args(["hook", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(event).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "aileron hook failed");
}

/// The same, the event read from a file instead of a pipe the bench writes
/// after the spawn: what the hook itself costs, without the pipe hand-off.
fn hook_from_file(aileron: &Path, dir: &Path, home: &Path, event: &Path) {
    let status = support::isolated(aileron, dir, home)
        .args(["hook", "claude-code"])
        .stdin(std::fs::File::open(event).unwrap())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "aileron hook failed");
}

fn bash(dir: &Path) {
    let status = Command::new("/bin/bash")
        .args(["-c", "true"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

fn bench(c: &mut Criterion) {
    let support::Project { tmp, dir, home } = support::Project::go(POLICY);
    let aileron = support::installed_binary("aileron", tmp.path());
    let cwd = dir.to_string_lossy();
    let bash_event = format!(
        r#"{{"session_id":"bench","cwd":"{cwd}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"git status"}},"tool_use_id":"t"}}"#
    );
    let read_event = format!(
        r#"{{"session_id":"bench","cwd":"{cwd}","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{{"file_path":"{cwd}/main.go"}},"tool_use_id":"t"}}"#
    );
    hook(&aileron, &dir, &home, bash_event.as_bytes()); // fills the policy cache

    let mut g = c.benchmark_group("hook");
    g.measurement_time(Duration::from_secs(8)).sample_size(60);
    g.bench_function("bash -c true", |b| b.iter(|| bash(&dir)));
    // Alternate so the doom-loop check never turns the answer into an ask.
    let mut n = 0u64;
    g.bench_function("aileron hook claude-code (Bash, Read)", |b| {
        b.iter(|| {
            n += 1;
            let event = if n.is_multiple_of(2) {
                &bash_event
            } else {
                &read_event
            };
            hook(&aileron, &dir, &home, event.as_bytes())
        })
    });
    let files = [tmp.path().join("bash.json"), tmp.path().join("read.json")];
    std::fs::write(&files[0], &bash_event).unwrap();
    std::fs::write(&files[1], &read_event).unwrap();
    g.bench_function(
        "aileron hook claude-code, event from a file (Bash, Read)",
        |b| {
            b.iter(|| {
                n += 1;
                hook_from_file(&aileron, &dir, &home, &files[(n % 2) as usize])
            })
        },
    );
    g.finish();
    support::interleaved(
        "hook",
        1000,
        &mut [
            ("bash -c true", &mut || bash(&dir)),
            (
                "aileron hook claude-code (Bash, Read), event on a pipe",
                &mut || {
                    n += 1;
                    let event = [&bash_event, &read_event][(n % 2) as usize];
                    hook(&aileron, &dir, &home, event.as_bytes())
                },
            ),
        ],
    );
}

/// A policy whose `make *` a judge decides (verdicts kept an hour) and
/// whose `git status` a rule allows.
fn judged_policy(port: u16) -> String {
    format!(
        r#"version: 1
default: ask
judges:
  fast: {{provider: openai, base_url: "http://127.0.0.1:{port}/v1", model: m, api_key_env: AILERON_BENCH_KEY}}
allow:
  - "git status"
judge:
  - command: "make *"
    judge: fast
    cache_ttl: 3600
"#
    )
}

/// An OpenAI-compatible server on loopback that allows every action,
/// counting the requests it answered.
fn fake_judge() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Read};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let verdict = r#"{\"decision\":\"allow\",\"reason\":\"a build\"}"#;
            let reply = format!(
                r#"{{"id":"c","object":"chat.completion","model":"m","choices":[{{"index":0,"message":{{"role":"assistant","content":"{verdict}","refusal":null}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":120,"completion_tokens":9,"total_tokens":129}}}}"#
            );
            let _ = (&stream).write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                    reply.len()
                )
                .as_bytes(),
            );
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    (port, served)
}

fn judged(c: &mut Criterion) {
    let (port, served) = fake_judge();
    let support::Project { tmp, dir, home } = support::Project::go(&judged_policy(port));
    let aileron = support::installed_binary("aileron", tmp.path());
    let cwd = dir.to_string_lossy();
    let event = |session: u64, command: &str| {
        format!(
            r#"{{"session_id":"s{session}","cwd":"{cwd}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"{command}"}},"tool_use_id":"t"}}"#
        )
    };
    let run = |event: &str| {
        let mut child = support::isolated(&aileron, &dir, &home)
            .env("AILERON_BENCH_KEY", "k")
            .args(["hook", "claude-code"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let answer = String::from_utf8_lossy(&out.stdout);
        assert!(
            answer.contains(r#""permissionDecision":"allow""#),
            "{answer}"
        );
    };
    run(&event(0, "make all")); // the judge's verdict, now on disk
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1);
    // A new session each run: the doom-loop check never sees a repeat.
    let n = std::cell::Cell::new(0u64);
    let next = || {
        n.set(n.get() + 1);
        n.get()
    };
    support::interleaved(
        "hook, a judge's verdict from the disk cache",
        1000,
        &mut [
            ("aileron hook claude-code, allowed by a rule", &mut || {
                run(&event(next(), "git status"))
            }),
            (
                "aileron hook claude-code, judged (cached verdict)",
                &mut || run(&event(next(), "make all")),
            ),
        ],
    );
    assert_eq!(
        served.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "a cached verdict asked the model again"
    );
    let _ = c;
}

criterion_group!(benches, bench, judged);
criterion_main!(benches);
