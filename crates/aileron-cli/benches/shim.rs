//! `aileron-sh -c 'true'` beside `bash -c 'true'`: what the shim adds to
//! every command an agent runs (process start, cached policy load,
//! analysis, evaluation, audit line), under ADR-0014's full example policy.
//! The interleaved runs also time the shim inside an `aileron launch`
//! session, where it asks the session instead of loading the policy.
//! Prints the peak resident memory of one bash and one shim at the end
//! (with GNU time, when /usr/bin/time exists).

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

const ADR_FULL_POLICY: &str = r#"version: 1
profiles: ["lang/go"]
default: ask

settings:
  audit_log: .aileron/audit.jsonl
  timeout: 30

env:
  scrub:
    - "AWS_*"
    - "GITHUB_TOKEN"
    - "*_SECRET"
    - "OPENAI_*"
  passthrough:
    - "HOME"
    - "PATH"
    - "GOPATH"

allow:
  - "git status"
  - "git diff *"
  - "git log *"
  - "cat *"
  - "ls *"
  - "task *"
  - "true"

deny:
  - command: "git push origin main"
    description: "no direct push to main"
  - command: "rm -rf /*"
    description: "no recursive delete outside project"

ask:
  - "git add *"
  - "git commit *"
  - "git push *"
  - "docker *"
  - "curl *"
"#;

fn run(program: &Path, dir: &Path, home: &Path) {
    run_in(program, "true", dir, home, None);
}

/// With `session`, as under `aileron launch`: the shim asks the session
/// over its socket instead of loading the policy itself.
fn run_in(program: &Path, line: &str, dir: &Path, home: &Path, session: Option<&str>) {
    let mut cmd = support::isolated(program, dir, home);
    cmd.args(["-c", line]).stdin(Stdio::null());
    if let Some(socket) = session {
        cmd.env("AILERON_SOCKET", socket);
    }
    let status = cmd.status().unwrap();
    assert!(status.success(), "{} -c {line:?} failed", program.display());
}

/// An `aileron launch` session in `dir` whose program waits for its stdin
/// to close; returns it and its socket.
fn launch_session(aileron: &Path, dir: &Path, home: &Path) -> (Child, String) {
    let mut child = support::isolated(aileron, dir, home)
        .args(["launch", "--", "/bin/sh", "-c"])
        .arg(r#"printf '%s\n' "$AILERON_SOCKET"; exec cat >/dev/null"#)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut socket = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut socket)
        .unwrap();
    let socket = socket.trim().to_owned();
    assert!(
        !socket.is_empty(),
        "aileron launch gave its program no socket"
    );
    (child, socket)
}

fn bench(c: &mut Criterion) {
    let support::Project { tmp, dir, home } = support::Project::go(ADR_FULL_POLICY);
    let shim = support::installed_binary("aileron-sh", tmp.path());
    run(&shim, &dir, &home); // fills the compiled-policy cache
    let aileron = support::installed_binary("aileron", tmp.path());
    let (mut session, socket) = launch_session(&aileron, &dir, &home);
    // The session counts identical lines in a row as a doom loop (which
    // asks), so each of its runs carries a different comment.
    let mut runs = 0;
    let mut numbered = move || {
        runs += 1;
        format!("true #{runs}")
    };
    run_in(&shim, &numbered(), &dir, &home, Some(&socket));

    let mut g = c.benchmark_group("shell");
    g.measurement_time(Duration::from_secs(8)).sample_size(60);
    g.bench_function("bash -c true", |b| {
        b.iter(|| run(Path::new("/bin/bash"), &dir, &home))
    });
    g.bench_function("aileron-sh -c true", |b| b.iter(|| run(&shim, &dir, &home)));
    g.finish();
    support::interleaved(
        "shell",
        1000,
        &mut [
            ("bash -c true", &mut || {
                run(Path::new("/bin/bash"), &dir, &home)
            }),
            ("aileron-sh -c true", &mut || run(&shim, &dir, &home)),
            (
                "aileron-sh -c 'true #N', in an `aileron launch` session",
                &mut || run_in(&shim, &numbered(), &dir, &home, Some(&socket)),
            ),
        ],
    );
    drop(session.stdin.take()); // the session's program ends, and with it the session
    session.wait().unwrap();

    // Peak memory of one shim process, measured by GNU time (a fork of this
    // bench would count the bench's own pages).
    for program in [Path::new("/bin/bash"), shim.as_path()] {
        let out = support::isolated("/usr/bin/time", &dir, &home)
            .args(["-f", "%M"])
            .arg(program)
            .args(["-c", "true"])
            .output();
        if let Ok(out) = out {
            let kib = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            println!("peak RSS of `{} -c true`: {kib} KiB", program.display());
        }
    }
    let audit = std::fs::read_to_string(dir.join(".aileron/audit.jsonl")).unwrap_or_default();
    println!("audit lines written by the shim: {}", audit.lines().count());
}

criterion_group!(benches, bench);
criterion_main!(benches);
