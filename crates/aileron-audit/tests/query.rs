//! Reading, filtering, following and formatting the log.

mod common;

use aileron_audit::{
    AuditAction, AuditLog, AuditRecord, Filter, FollowOptions, follow, format_line, format_rfc3339,
    read,
};
use aileron_engine::{Action, Decision, Verdict, VerdictSource};
use common::record;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// 2026-11-22T10:00:00Z
const NOW_SECS: u64 = 1_795_341_600;

fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(NOW_SECS)
}

fn ago(secs: u64) -> String {
    format_rfc3339(now() - Duration::from_secs(secs))
}

/// A log with a few records from two sessions over three days, plus junk.
fn sample(dir: &Path) -> PathBuf {
    let path = dir.join("audit.jsonl");
    let log = AuditLog::new(&path);
    let recs = [
        record(&ago(3 * 86_400), "s-1", "allow", "three days ago"),
        record(&ago(2 * 3600), "s-1", "deny", "two hours ago"),
        record(&ago(30 * 60), "s-2", "ask", "half an hour ago"),
        record(&ago(5 * 60), "s-2", "deny", "five minutes ago"),
        record(&ago(60), "s-1", "allow", "a minute ago"),
        record(&ago(0), "", "judge", "now"),
    ];
    for (i, r) in recs.iter().enumerate() {
        log.append(r).unwrap();
        if i == 2 {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            f.write_all(b"not json\n\n   \n{\"time\": \"2026\"}\n{\"time\":\"x\",\"adapter\":")
                .unwrap();
            f.write_all(b"\"shim\"}\n\xff\xfe garbage\n").unwrap();
        }
    }
    path
}

fn summaries(filter: &Filter, path: &Path) -> Vec<String> {
    read(path, filter, now())
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.action.summary)
        .collect()
}

fn f() -> Filter {
    Filter::default()
}

#[test]
fn read_returns_everything_and_counts_malformed_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let got = read(&path, &f(), now()).unwrap();
    assert_eq!(got.records.len(), 6);
    // `not json`, `{"time": "2026"}` (no adapter...), the record missing
    // its action, and the non-UTF-8 line; blank lines do not count.
    assert_eq!(got.malformed, 4);
    assert_eq!(got.end, std::fs::metadata(&path).unwrap().len());
    assert_eq!(got.records[0].action.summary, "three days ago");
}

#[test]
fn filters_by_decision_and_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let decision = |d: &str| Filter {
        decision: Some(d.into()),
        ..f()
    };
    assert_eq!(
        summaries(&decision("deny"), &path),
        ["two hours ago", "five minutes ago"]
    );
    assert_eq!(
        summaries(&decision("DENY, ask"), &path),
        ["two hours ago", "half an hour ago", "five minutes ago"]
    );
    assert_eq!(summaries(&decision("judge"), &path), ["now"]);
    assert!(summaries(&decision("maybe"), &path).is_empty());

    let session = Filter {
        session: Some("s-2".into()),
        ..f()
    };
    assert_eq!(
        summaries(&session, &path),
        ["half an hour ago", "five minutes ago"]
    );
    let both = Filter {
        session: Some("s-1".into()),
        decision: Some("allow".into()),
        ..f()
    };
    assert_eq!(summaries(&both, &path), ["three days ago", "a minute ago"]);
}

#[test]
fn filters_by_relative_and_absolute_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let since = |s: &str| Filter {
        since: Some(s.into()),
        ..f()
    };
    assert_eq!(
        summaries(&since("10m"), &path),
        ["five minutes ago", "a minute ago", "now"]
    );
    assert_eq!(summaries(&since("1h"), &path).len(), 4);
    assert_eq!(
        summaries(&since("2h"), &path).len(),
        5,
        "bounds are inclusive"
    );
    assert_eq!(summaries(&since("1d"), &path).len(), 5);
    assert_eq!(summaries(&since("1w"), &path).len(), 6);
    assert_eq!(summaries(&since("1h30m"), &path).len(), 4);
    assert_eq!(summaries(&since("now"), &path), ["now"]);
    // Absolute, in UTC and with an offset.
    assert_eq!(
        summaries(&since("2026-11-22T09:55:00Z"), &path),
        ["five minutes ago", "a minute ago", "now"]
    );
    assert_eq!(
        summaries(&since("2026-11-22T11:55:00+02:00"), &path),
        ["five minutes ago", "a minute ago", "now"]
    );
    // A date is midnight UTC.
    assert_eq!(summaries(&since("2026-11-22"), &path).len(), 5);

    let until = Filter {
        until: Some("1h".into()),
        ..f()
    };
    assert_eq!(
        summaries(&until, &path),
        ["three days ago", "two hours ago"]
    );
    let window = Filter {
        since: Some("2026-11-22T09:00:00Z".into()),
        until: Some("2026-11-22T09:59:00Z".into()),
        ..f()
    };
    assert_eq!(
        summaries(&window, &path),
        ["half an hour ago", "five minutes ago", "a minute ago"]
    );
}

#[test]
fn a_bad_time_is_an_error_that_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let bad = Filter {
        since: Some("yesterday".into()),
        ..f()
    };
    let e = read(&path, &bad, now()).unwrap_err();
    assert!(matches!(e, aileron_audit::Error::BadTime { .. }), "{e:?}");
    assert!(e.to_string().contains("yesterday"), "{e}");
    assert!(bad.validate(now()).is_err());
    assert!(f().validate(now()).is_ok());
}

#[test]
fn records_whose_time_cannot_be_read_are_left_out_of_time_windows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::new(&path);
    log.append(&record("last tuesday", "s", "allow", "odd"))
        .unwrap();
    log.append(&record(&ago(0), "s", "allow", "fine")).unwrap();
    assert_eq!(summaries(&f(), &path), ["odd", "fine"]);
    let since = Filter {
        since: Some("1h".into()),
        ..f()
    };
    assert_eq!(summaries(&since, &path), ["fine"]);
}

#[test]
fn limit_keeps_the_most_recent_matches() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let limit = |n, d: Option<&str>| Filter {
        limit: Some(n),
        decision: d.map(str::to_owned),
        ..f()
    };
    assert_eq!(summaries(&limit(2, None), &path), ["a minute ago", "now"]);
    assert_eq!(
        summaries(&limit(1, Some("deny")), &path),
        ["five minutes ago"]
    );
    assert_eq!(summaries(&limit(100, None), &path).len(), 6);
    assert!(summaries(&limit(0, None), &path).is_empty());
}

#[test]
fn a_missing_log_is_not_found_and_an_unfinished_last_line_is_left_for_later() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let e = read(&path, &f(), now()).unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert_eq!(
        e.to_string().split_once(": ").unwrap().0,
        path.display().to_string()
    );
    AuditLog::new(&path)
        .append(&record(&ago(0), "s", "allow", "whole"))
        .unwrap();
    let whole = std::fs::metadata(&path).unwrap().len();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"{\"time\":\"2026-11-22T").unwrap();
    let got = read(&path, &f(), now()).unwrap();
    assert_eq!(got.records.len(), 1);
    assert_eq!(got.malformed, 0, "a write in progress is not malformed");
    assert_eq!(got.end, whole);
}

/// Runs `follow` on a thread; its records come out of the channel.
fn follow_in_background(
    path: PathBuf,
    filter: Filter,
    from: Option<u64>,
    stop_after: usize,
) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let opts = FollowOptions {
            from,
            poll: Duration::from_millis(10),
            ..FollowOptions::new(now())
        };
        let mut seen = 0;
        follow(&path, &filter, &opts, |rec| {
            tx.send(rec.action.summary.clone()).unwrap();
            seen += 1;
            seen < stop_after
        })
        .unwrap();
        tx.send("<done>".into()).unwrap();
    });
    rx
}

fn next(rx: &mpsc::Receiver<String>) -> String {
    rx.recv_timeout(Duration::from_secs(10))
        .expect("follow delivered nothing within 10 s")
}

#[test]
fn follow_sees_lines_appended_after_it_starts_and_stops_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let filter = Filter {
        decision: Some("deny".into()),
        ..f()
    };
    let rx = follow_in_background(path.clone(), filter, None, 2);
    // Give it time to take the end of the file as its start.
    std::thread::sleep(Duration::from_millis(200));
    let log = AuditLog::new(&path);
    log.append(&record(&ago(0), "s", "allow", "filtered out"))
        .unwrap();
    log.append(&record(&ago(0), "s", "deny", "new deny 1"))
        .unwrap();
    // A line that arrives in two writes is delivered once it is whole.
    let line = serde_json::to_string(&record(&ago(0), "s", "deny", "new deny 2")).unwrap();
    let (a, b) = line.split_at(20);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(a.as_bytes()).unwrap();
    assert_eq!(next(&rx), "new deny 1");
    std::thread::sleep(Duration::from_millis(50));
    file.write_all(format!("{b}\n").as_bytes()).unwrap();
    assert_eq!(next(&rx), "new deny 2");
    assert_eq!(next(&rx), "<done>");
}

#[test]
fn follow_waits_for_the_file_and_starts_over_after_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("later/audit.jsonl");
    let rx = follow_in_background(path.clone(), f(), None, 4);
    std::thread::sleep(Duration::from_millis(100));
    let log = AuditLog::new(&path);
    // A file that appears after follow started is read from its beginning.
    log.append(&record(&ago(0), "s", "allow", "first")).unwrap();
    log.append(&record(&ago(0), "s", "allow", "second"))
        .unwrap();
    assert_eq!(next(&rx), "first");
    assert_eq!(next(&rx), "second");
    // Truncated (log rotated in place): start again from the top.
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    log.append(&record(&ago(0), "s", "allow", "after truncation"))
        .unwrap();
    assert_eq!(next(&rx), "after truncation");
    // Replaced by a new file (rename rotation).
    std::fs::rename(&path, dir.path().join("later/audit.jsonl.1")).unwrap();
    log.append(&record(&ago(0), "s", "allow", "in the new file"))
        .unwrap();
    assert_eq!(next(&rx), "in the new file");
    assert_eq!(next(&rx), "<done>");
}

#[test]
fn read_then_follow_from_its_end_misses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path());
    let got = read(&path, &f(), now()).unwrap();
    // Appended between the read and the start of follow.
    AuditLog::new(&path)
        .append(&record(&ago(0), "s", "ask", "in between"))
        .unwrap();
    let rx = follow_in_background(path, f(), Some(got.end), 1);
    assert_eq!(next(&rx), "in between");
    assert_eq!(next(&rx), "<done>");
}

#[test]
fn format_line_is_one_readable_line() {
    let mut rec = record("2026-11-22T10:00:00Z", "s-1234", "deny", "git push --force");
    rec.rule = Some("no-force-push".into());
    rec.reason = "force pushes rewrite history".into();
    assert_eq!(
        format_line(&rec),
        "2026-11-22T10:00:00Z  deny   shim  s-1234  git push --force  (rule no-force-push: force pushes rewrite history)"
    );

    let mut rec = record("2026-11-22T10:00:00.123Z", "", "ask", "rm -rf build");
    rec.rule = None;
    rec.source = "default".into();
    rec.reason = "no rule matched".into();
    rec.outcome = Some("approved-once".into());
    rec.approver = Some("terminal".into());
    assert_eq!(
        format_line(&rec),
        "2026-11-22T10:00:00Z  ask    shim  -  rm -rf build  (default: no rule matched)  → approved-once by terminal"
    );

    // What an agent ran cannot break the line or drive the terminal.
    let rec = record(
        "2026-11-22T10:00:00Z",
        "s",
        "allow",
        "printf 'a\\n' \n echo \u{1b}[2J\u{202e}x",
    );
    let line = format_line(&rec);
    assert!(!line.contains('\n') && !line.contains('\u{1b}') && !line.contains('\u{202e}'));
    assert!(line.contains("\\n echo \\u{1b}[2J\\u{202e}x"), "{line}");
}

#[test]
fn records_are_built_from_engine_actions_and_verdicts() {
    let action: Action = serde_json::from_value(serde_json::json!({
        "id": "a-7",
        "type": "http.request",
        "summary": "GET https://api.x/y?token=abc123",
        "facets": {"http": {"method": "GET", "url": "https://api.x/y?token=abc123"}},
        "session": {"id": "s-9", "agent": "codex", "cwd": "/work/p"}
    }))
    .unwrap();
    let verdict = Verdict {
        decision: Decision::Ask,
        source: VerdictSource::Default,
        rule: None,
        reason: "no rule matched".into(),
        approver: Some("terminal".into()),
    };
    let rec = AuditRecord::new(
        "2026-11-22T10:00:00Z",
        "hook:codex",
        &action,
        &verdict,
        1500,
    );
    assert_eq!(rec.session.as_deref(), Some("s-9"));
    assert_eq!(rec.agent.as_deref(), Some("codex"));
    assert_eq!(rec.cwd.as_deref(), Some("/work/p"));
    assert_eq!(rec.decision, "ask");
    assert_eq!(rec.source, "default");
    assert_eq!(rec.approver.as_deref(), Some("terminal"));
    assert_eq!(
        rec.action,
        AuditAction {
            id: "a-7".into(),
            kind: "http.request".into(),
            summary: "GET https://api.x/y?token=abc123".into(),
            facets: action.facets.clone(),
        }
    );
    let masked = rec.masked(&aileron_audit::Masker::default());
    assert_eq!(masked.action.summary, "GET https://api.x/y?token=***");
    assert_eq!(
        masked.action.facets["http"]["url"],
        "https://api.x/y?token=***"
    );

    // The JSON shape: `type`, absent options left out, and it reads back.
    let json: serde_json::Value = serde_json::from_str(&masked.to_json_line()).unwrap();
    assert_eq!(json["action"]["type"], "http.request");
    assert!(json.get("rule").is_none());
    let back: AuditRecord = serde_json::from_value(json).unwrap();
    assert_eq!(back, masked);
    // Unknown fields from newer writers are tolerated.
    let mut newer = serde_json::to_value(&masked).unwrap();
    newer["added_later"] = serde_json::json!(true);
    assert!(serde_json::from_value::<AuditRecord>(newer).is_ok());
}
