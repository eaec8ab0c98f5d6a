//! The action log's group commit, on a thread of its own.
//!
//! Every decision is stored (a row of the action log, and a line of its
//! JSONL audit log) before its answer is sent. The decisions waiting when
//! the writer is free go out together: their rows in one transaction,
//! their lines in one write per audit log; each is answered once both are
//! done. A plain thread rather than a task: its writes block, and it hands
//! no work to any other thread on the way.

use crate::Error;
use crate::db::{ActionRow, Db, StoreError, Writer};
use aileron_audit::AuditLog;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Rows written to the action log in one transaction, at most.
const WRITE_BATCH: usize = 256;
/// A batch begun with a few decisions waits this long for more before it
/// is written (PostgreSQL's `commit_delay` with `commit_siblings`): they
/// show that others are arriving, and a commit is mostly a fixed cost (its
/// WAL frames), so fewer, fuller batches take less CPU. At 32 clients,
/// 4-5 decisions a batch became about 12, and a decision's CPU fell by a
/// tenth; a lone client (batches of one) never waits, nor does a full
/// batch.
const LINGER: Duration = Duration::from_micros(250);
const LINGER_WHEN: std::ops::Range<usize> = 2..32;
/// Decisions queued for the writer, at most (senders wait beyond).
const QUEUE: usize = 4096;

/// One decision for the writer: its row, and the JSONL audit log its line
/// also goes to.
pub struct WriteReq {
    pub row: ActionRow,
    pub audit: Option<PathBuf>,
    /// The row's sequence number once both writes are done.
    pub done: oneshot::Sender<Result<i64, Error>>,
}

/// Starts the writer thread; it stops when every sender is dropped.
pub fn spawn(db: Db) -> mpsc::Sender<WriteReq> {
    let (tx, rx) = mpsc::channel(QUEUE);
    let rt = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("aileron-log-writer".into())
        .spawn(move || run(&db, &rt, rx))
        .expect("cannot start the action log writer thread");
    tx
}

fn run(db: &Db, rt: &tokio::runtime::Handle, mut rx: mpsc::Receiver<WriteReq>) {
    // sqlx gives a dropped PostgreSQL connection back to its pool on the
    // runtime (the thread's queries run there through `block_on`).
    let _runtime = rt.enter();
    let checkpoints = db.checkpoints();
    let mut batch = Vec::with_capacity(WRITE_BATCH);
    let mut writer: Option<Writer> = None;
    while let Some(first) = rx.blocking_recv() {
        batch.push(first);
        drain(&mut rx, &mut batch);
        if LINGER_WHEN.contains(&batch.len()) {
            std::thread::sleep(LINGER);
            drain(&mut rx, &mut batch);
        }
        let not_appended = append(&batch);
        let (rows, waiting): (Vec<ActionRow>, Vec<_>) =
            batch.drain(..).map(|r| (r.row, (r.audit, r.done))).unzip();
        let stored = match writer.as_mut() {
            Some(w) => w.insert_actions(&rows),
            None => db
                .log_writer(rt)
                .and_then(|w| writer.insert(w).insert_actions(&rows)),
        };
        if stored.is_err() {
            // A broken connection is not kept: the next batch opens another.
            writer = None;
        }
        let stored = stored.map_err(Arc::new);
        for (i, (audit, done)) in waiting.into_iter().enumerate() {
            let not_appended = audit.and_then(|path| {
                let (kind, why) = not_appended.get(&path)?.clone();
                Some(Error::AppendAudit {
                    path,
                    source: std::io::Error::new(kind, why),
                })
            });
            let result = match (&stored, not_appended) {
                (Err(e), _) => Err(Error::StoreActions(Arc::clone(e))),
                (Ok(_), Some(e)) => Err(e),
                (Ok(seqs), None) => seqs.get(i).copied().ok_or_else(|| {
                    Error::StoreActions(Arc::new(StoreError::Unnumbered {
                        inserted: rows.len(),
                        numbered: seqs.len(),
                    }))
                }),
            };
            let _ = done.send(result);
        }
        // After the answers: they do not wait for it.
        if let (Some(w), Some(c)) = (writer.as_mut(), &checkpoints)
            && c.wal_is_long()
        {
            w.finish_checkpoint();
        }
    }
}

/// Adds what is queued now to the batch, up to its size.
fn drain(rx: &mut mpsc::Receiver<WriteReq>, batch: &mut Vec<WriteReq>) {
    while batch.len() < WRITE_BATCH {
        match rx.try_recv() {
            Ok(req) => batch.push(req),
            Err(_) => break,
        }
    }
}

/// Appends the batch's JSONL lines, one write per audit log; returns the
/// logs that failed, with why (each of their decisions gets the error).
fn append(batch: &[WriteReq]) -> HashMap<PathBuf, (std::io::ErrorKind, String)> {
    let mut lines: HashMap<&PathBuf, Vec<u8>> = HashMap::new();
    for req in batch {
        if let Some(path) = &req.audit {
            let out = lines.entry(path).or_default();
            out.extend_from_slice(req.row.record.as_bytes());
            out.push(b'\n');
        }
    }
    lines
        .into_iter()
        .filter_map(|(path, bytes)| {
            let e = AuditLog::new(path.clone()).append_lines(&bytes).err()?;
            Some((path.clone(), (e.kind(), e.to_string())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn row(n: usize) -> ActionRow {
        ActionRow {
            action_id: format!("a-{n}"),
            time: "2026-11-27T12:00:00Z".into(),
            ts_us: 1_795_000_000_000_000 + n as i64,
            session: Some(format!("s-{}", n % 7)),
            agent: None,
            adapter: "server".into(),
            kind: "shell.exec".into(),
            summary: "git status".into(),
            decision: "allow".into(),
            outcome: None,
            source: "static".into(),
            rule: None,
            reason: "r".into(),
            approver: None,
            latency_us: 1,
            submitted_by: None,
            record: format!("{{\"n\":{n},\"pad\":\"{}\"}}", "x".repeat(1500)),
            action: None,
        }
    }

    /// Under a writer that never pauses, the background checkpoints alone
    /// never let the WAL start again (it grew to 151 MiB here); the writer
    /// finishes them, and the WAL stays short while far more than that is
    /// written through it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_wal_stays_short_under_a_writer_that_never_pauses() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&crate::db::default_url(dir.path())).await.unwrap();
        let wal = dir.path().join("aileron.db-wal");
        let tx = spawn(db.clone());
        const ROWS: usize = 40_000;
        let mut longest = 0;
        let mut done = futures_util::stream::iter(0..ROWS)
            .map(|n| {
                let tx = tx.clone();
                async move {
                    let (done, rx) = oneshot::channel();
                    let req = WriteReq {
                        row: row(n),
                        audit: None,
                        done,
                    };
                    tx.send(req).await.ok().unwrap();
                    rx.await.unwrap().unwrap()
                }
            })
            .buffer_unordered(64);
        let mut seqs = Vec::with_capacity(ROWS);
        while let Some(seq) = done.next().await {
            seqs.push(seq);
            if seqs.len() % 1000 == 0 {
                longest = longest.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
            }
        }
        seqs.sort_unstable();
        seqs.dedup();
        assert_eq!(seqs.len(), ROWS, "each decision stored once");
        // 40,000 rows of 1.7 KB: well over 64 MB through the WAL. The bound
        // is the one the docs promise (64 MiB): on a loaded machine (2 cores,
        // builds beside the test) the checkpoints finish later, and the WAL
        // reached 35-41 MiB where a bound of 32 had been asserted.
        assert!(longest <= 64 << 20, "the WAL grew to {} MiB", longest >> 20);
    }
}
