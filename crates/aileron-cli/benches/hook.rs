//! `aileron hook claude-code` end to end as a process per call (what Claude
//! Code pays before every tool call), beside `bash -c true` in the same
//! run, under ADR-0014's example policy with the compiled policy cached.
//! Goal (issue 4): under 2 ms median.

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

criterion_group!(benches, bench);
criterion_main!(benches);
