//! The append path: file creation, modes, and recovery from a torn line.

mod common;

use aileron_audit::{AuditLog, Filter, read};
use std::os::unix::fs::PermissionsExt;
use std::time::SystemTime;

#[test]
fn append_creates_directories_and_file_with_private_modes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/audit.jsonl");
    let log = AuditLog::new(&path);
    assert_eq!(log.path(), path);
    log.append(&common::record(
        "2026-11-22T10:00:00Z",
        "s-1",
        "allow",
        "ls",
    ))
    .unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir.path().join("a")), 0o700);
    assert_eq!(mode(&dir.path().join("a/b")), 0o700);
    // An existing directory keeps its mode.
    std::fs::set_permissions(
        dir.path().join("a/b"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    log.append(&common::record(
        "2026-11-22T10:00:01Z",
        "s-1",
        "deny",
        "rm -rf /",
    ))
    .unwrap();
    assert_eq!(mode(&dir.path().join("a/b")), 0o755);

    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.ends_with('\n'));
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["action"]["type"], "shell.exec");
    assert_eq!(first["decision"], "allow");
    assert_eq!(first["latency_us"], 42);
    assert!(first.get("outcome").is_none(), "None fields are left out");
}

#[test]
fn a_line_torn_by_a_dead_writer_does_not_swallow_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::new(&path);
    log.append(&common::record("2026-11-22T10:00:00Z", "s", "allow", "one"))
        .unwrap();
    // A writer died halfway through its line.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"time\":\"2026-11-22T10:00:01Z\",\"sess");
    std::fs::write(&path, text).unwrap();
    log.append(&common::record("2026-11-22T10:00:02Z", "s", "deny", "two"))
        .unwrap();
    let got = read(&path, &Filter::default(), SystemTime::now()).unwrap();
    let summaries: Vec<&str> = got
        .records
        .iter()
        .map(|r| r.action.summary.as_str())
        .collect();
    assert_eq!(summaries, ["one", "two"]);
    assert_eq!(got.malformed, 1);
}

#[test]
fn append_reports_what_it_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    // The parent "directory" is a file.
    std::fs::write(dir.path().join("f"), "").unwrap();
    let log = AuditLog::new(dir.path().join("f/audit.jsonl"));
    assert!(
        log.append(&common::record("2026-11-22T10:00:00Z", "s", "allow", "x"))
            .is_err()
    );
}
