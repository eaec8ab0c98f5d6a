//! Many writers at once, as real processes (every shim invocation is one):
//! no line may be lost or interleaved with another, whatever its length.

mod common;

use aileron_audit::{AuditLog, AuditRecord};
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LOG: &str = "AILERON_AUDIT_TEST_CHILD_LOG";
const GO: &str = "AILERON_AUDIT_TEST_CHILD_GO";
const SUMMARY: &str = "AILERON_AUDIT_TEST_CHILD_SUMMARY";
const COUNT: &str = "AILERON_AUDIT_TEST_CHILD_COUNT";
const REPEAT: &str = "AILERON_AUDIT_TEST_CHILD_REPEAT";

/// Not a test of its own: when the parent tests run this test binary with
/// the variables above, this appends `COUNT` records whose summary is
/// `SUMMARY` repeated `REPEAT` times (an environment variable cannot hold
/// 128 KiB), as soon as the file `GO` exists. Otherwise it does nothing.
#[test]
fn child_writer() {
    let (Ok(log), Ok(go), Ok(summary)) = (
        std::env::var(LOG),
        std::env::var(GO),
        std::env::var(SUMMARY),
    ) else {
        return;
    };
    let count: usize = std::env::var(COUNT).map_or(1, |c| c.parse().unwrap());
    let summary = summary.repeat(std::env::var(REPEAT).map_or(1, |c| c.parse().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !Path::new(&go).exists() {
        assert!(Instant::now() < deadline, "the go file never appeared");
        std::thread::sleep(Duration::from_millis(1));
    }
    let log = AuditLog::new(log);
    for _ in 0..count {
        log.append(&common::record(
            "2026-11-22T10:00:00Z",
            "s-child",
            "allow",
            &summary,
        ))
        .unwrap();
    }
}

/// Starts one copy of this test binary running [`child_writer`] per
/// summary; each writes `count` records of that summary repeated `repeat` times.
fn spawn_writers(
    log: &Path,
    go: &Path,
    summaries: &[String],
    count: usize,
    repeat: usize,
) -> Vec<Child> {
    let exe = std::env::current_exe().unwrap();
    summaries
        .iter()
        .map(|s| {
            Command::new(&exe)
                .args(["child_writer", "--exact", "--test-threads=1", "--quiet"])
                .env(LOG, log)
                .env(GO, go)
                .env(SUMMARY, s)
                .env(COUNT, count.to_string())
                .env(REPEAT, repeat.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap()
        })
        .collect()
}

fn wait_all(children: Vec<Child>) {
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer failed");
    }
}

/// Every line of the file, each parsed; panics on an unterminated or
/// unparsable line.
fn lines(path: &Path) -> Vec<AuditRecord> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "the file ends mid-line");
    text.lines()
        .map(|l| {
            serde_json::from_str::<AuditRecord>(l).unwrap_or_else(|e| {
                panic!("bad line ({e}): {}", &l[..l.len().min(200)]);
            })
        })
        .collect()
}

#[test]
fn two_hundred_processes_append_two_hundred_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    // The parent directories do not exist yet: every writer races to create them.
    let log = dir.path().join("p/.aileron/audit.jsonl");
    let go = dir.path().join("go");
    let summaries: Vec<String> = (0..200)
        .map(|i| format!("echo writer-{i} {}", "x".repeat(i * 7 % 300)))
        .collect();
    let children = spawn_writers(&log, &go, &summaries, 1, 1);
    std::fs::write(&go, "").unwrap();
    wait_all(children);

    let records = lines(&log);
    assert_eq!(records.len(), 200);
    let got: BTreeSet<&str> = records.iter().map(|r| r.action.summary.as_str()).collect();
    let want: BTreeSet<&str> = summaries.iter().map(String::as_str).collect();
    assert_eq!(got, want);

    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
    assert_eq!(mode(&dir.path().join("p")), 0o700);
}

#[test]
fn large_records_from_concurrent_processes_do_not_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let go = dir.path().join("go");
    // 12 writers, 3 records each, every summary its own 1 KiB block
    // repeated 200 times: 200 KiB, far beyond PIPE_BUF and the 64 KiB a
    // single write often takes.
    let blocks: Vec<String> = (0..12u8)
        .map(|i| format!("{}|", char::from(b'a' + i).to_string().repeat(1023)))
        .collect();
    let children = spawn_writers(&log, &go, &blocks, 3, 200);
    std::fs::write(&go, "").unwrap();
    wait_all(children);

    let records = lines(&log);
    assert_eq!(records.len(), 36);
    for b in &blocks {
        let want = b.repeat(200);
        let n = records.iter().filter(|r| r.action.summary == want).count();
        assert_eq!(n, 3, "records of {}", &b[..1]);
    }
}

#[test]
fn threads_of_one_process_do_not_interleave_either() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    std::thread::scope(|scope| {
        for t in 0..16 {
            let path = &path;
            scope.spawn(move || {
                for i in 0..25 {
                    let summary = format!("t{t}-{i} {}", "y".repeat((t * 25 + i) * 97 % 20_000));
                    AuditLog::new(path)
                        .append(&common::record(
                            "2026-11-22T10:00:00Z",
                            "s",
                            "deny",
                            &summary,
                        ))
                        .unwrap();
                }
            });
        }
    });
    let records = lines(&path);
    assert_eq!(records.len(), 400);
    let distinct: BTreeSet<&str> = records.iter().map(|r| r.action.summary.as_str()).collect();
    assert_eq!(distinct.len(), 400);
}
