//! The action log writer's connection: a batch of rows in one transaction.
//!
//! It is blocking, and lives on the writer's own thread
//! ([`crate::writer`]). SQLite is written through its C library directly
//! (rusqlite, on the same `libsqlite3-sys` as sqlx): sqlx's driver hands
//! every statement to a thread of its own and back, which was a fifth of
//! the server's CPU under load. PostgreSQL keeps sqlx: its round trips go
//! to the server anyway.

use super::{ActionRow, Db};
use sqlx::Row;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::runtime::Handle;

/// Why a batch of rows was not stored.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Sqlx(#[from] sqlx::Error),
    #[error("SQLite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(
        "the action log needs a database file: an in-memory SQLite database is one per connection"
    )]
    NoFile,
    /// A writer that panicked stored nothing it can vouch for.
    #[error("the action log writer panicked: {0}")]
    Panicked(String),
    #[error("{inserted} rows inserted, {numbered} numbers returned")]
    Unnumbered { inserted: usize, numbered: usize },
}

/// The SQLite WAL is checkpointed by [`Db::checkpoints`], off the
/// writer's path: done inline (SQLite's default, every 1,000 pages) it
/// stalled a commit every few hundred batches. Often, so each is short.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);
/// A WAL this long (pages) is made to start again (8 MiB): the shorter,
/// the less [`Writer::finish_checkpoint`] has left to copy.
const RESTART_AFTER_FRAMES: i64 = 2048;
/// Should the background checkpoints be starved of CPU, the writer's own
/// (SQLite's automatic checkpoint, after a commit) keep the WAL to about
/// this many pages (64 MiB).
const WAL_SAFETY_NET: i64 = 16384;
/// The checkpoints' niceness: they take the CPU the requests leave.
#[cfg(target_os = "linux")]
const CHECKPOINT_NICE: libc::c_int = 10;

/// The WAL file is cut back to this after a checkpoint lets it restart.
const WAL_SIZE_LIMIT: i64 = 64 << 20;

/// The start of both backends' inserts: the log's columns, in the order
/// of the values bound.
macro_rules! insert_into_actions {
    () => {
        "INSERT INTO actions (action_id, time, ts_us, session, agent, adapter, type, summary, \
         decision, outcome, source, rule, reason, approver, latency_us, submitted_by, record, \
         action) "
    };
}

const INSERT: &str = concat!(
    insert_into_actions!(),
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
);

/// The writer's own connection: its page cache stays warm from batch to
/// batch (from a pool, each batch would take whichever connection is free,
/// whose cache the previous batch, written through another, made stale).
pub enum Writer {
    Sqlite(rusqlite::Connection),
    Postgres(sqlx::pool::PoolConnection<sqlx::Postgres>, Handle),
}

impl Db {
    /// Opens the action log writer's connection. Blocking: it is called on
    /// the writer's thread (or in `spawn_blocking`); `rt` runs PostgreSQL's.
    pub fn log_writer(&self, rt: &Handle) -> Result<Writer, StoreError> {
        match self {
            Db::Sqlite(pool) => {
                let path = pool.connect_options().get_filename().to_path_buf();
                if path.as_os_str().is_empty() || path.as_os_str() == ":memory:" {
                    return Err(StoreError::NoFile);
                }
                let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                    | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let c = rusqlite::Connection::open_with_flags(path, flags)?;
                // As the pool's connections (Db::open), but checkpoints are
                // left to Db::checkpoints (past WAL_SAFETY_NET, its own).
                c.busy_timeout(Duration::from_secs(10))?;
                c.execute_batch(&format!(
                    "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
                     PRAGMA wal_autocheckpoint = {WAL_SAFETY_NET}; PRAGMA journal_size_limit = {WAL_SIZE_LIMIT};"
                ))?;
                Ok(Writer::Sqlite(c))
            }
            Db::Postgres(pool) => Ok(Writer::Postgres(rt.block_on(pool.acquire())?, rt.clone())),
        }
    }

    /// Appends rows through a connection of its own, off the runtime's
    /// threads; returns their sequence numbers in the rows' order.
    pub async fn insert_actions(&self, rows: Vec<ActionRow>) -> Result<Vec<i64>, StoreError> {
        let (db, rt) = (self.clone(), Handle::current());
        tokio::task::spawn_blocking(move || db.log_writer(&rt)?.insert_actions(&rows))
            .await
            .map_err(|e| StoreError::Panicked(e.to_string()))?
    }

    /// Starts the SQLite WAL's checkpoints, on a thread of their own at a
    /// low priority (a PASSIVE checkpoint waits for no one and blocks no
    /// one; it copies pages, and at the writer's own priority it took a
    /// core from the requests for milliseconds at a time). They stop when
    /// the returned guard is dropped. Nothing to do on PostgreSQL.
    pub fn checkpoints(&self) -> Option<Checkpoints> {
        let Db::Sqlite(pool) = self else { return None };
        let path = pool.connect_options().get_filename().to_path_buf();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let long = Arc::new(AtomicBool::new(false));
        let wal_long = Arc::clone(&long);
        std::thread::Builder::new()
            .name("aileron-checkpoint".into())
            .spawn(move || {
                lower_priority();
                let Ok(c) = rusqlite::Connection::open(&path) else {
                    return;
                };
                let _ = c.busy_timeout(Duration::from_secs(1));
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(CHECKPOINT_EVERY)
                {
                    // A failure (busy, closing) is retried at the next turn.
                    let frames =
                        c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(1));
                    if frames.is_ok_and(|n| n >= RESTART_AFTER_FRAMES) {
                        wal_long.store(true, Ordering::Relaxed);
                    }
                }
            })
            .ok()?;
        Some(Checkpoints { _stop: stop, long })
    }
}

/// Gives the calling thread (only) [`CHECKPOINT_NICE`]: on Linux a thread id
/// is a process id to `setpriority`. Elsewhere the checkpoints keep the
/// writer's priority.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls with no pointers.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, CHECKPOINT_NICE);
    }
}

/// Keeps [`Db::checkpoints`] going while it lives.
pub struct Checkpoints {
    _stop: std::sync::mpsc::Sender<()>,
    long: Arc<AtomicBool>,
}

impl Checkpoints {
    /// Whether the writer should finish a checkpoint itself (once; see
    /// [`Writer::finish_checkpoint`]).
    pub fn wal_is_long(&self) -> bool {
        self.long.swap(false, Ordering::Relaxed)
    }
}

impl Writer {
    /// Checkpoints what the background checkpoints left, between two
    /// batches: with the writer idle, nothing is appended meanwhile, so the
    /// whole WAL is copied and the next batch starts it again from its
    /// beginning (cut to [`WAL_SIZE_LIMIT`]). A background checkpoint never
    /// catches up with a writer that commits every millisecond, and the WAL
    /// would grow without end. Cheap: the background copied all but the
    /// last moments' pages.
    pub fn finish_checkpoint(&mut self) {
        if let Writer::Sqlite(c) = self {
            let _ = c.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        }
    }

    /// Appends rows in one transaction; returns their sequence numbers, in
    /// the rows' order. All or none: an error rolls the batch back.
    pub fn insert_actions(&mut self, rows: &[ActionRow]) -> Result<Vec<i64>, StoreError> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Writer::Sqlite(c) => insert_sqlite(c, rows),
            Writer::Postgres(c, rt) => rt.block_on(insert_postgres(c, rows)),
        }
    }
}

/// One prepared statement, run once per row: in-process, a row costs no
/// round trip, and `last_insert_rowid` is its sequence number.
fn insert_sqlite(c: &mut rusqlite::Connection, rows: &[ActionRow]) -> Result<Vec<i64>, StoreError> {
    // IMMEDIATE: the write lock is taken at BEGIN, not upgraded later
    // (an upgrade can fail with SQLITE_BUSY whatever the busy timeout).
    let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut seqs = Vec::with_capacity(rows.len());
    {
        let mut insert = tx.prepare_cached(INSERT)?;
        for r in rows {
            insert.execute(rusqlite::params![
                r.action_id,
                r.time,
                r.ts_us,
                r.session,
                r.agent,
                r.adapter,
                r.kind,
                r.summary,
                r.decision,
                r.outcome,
                r.source,
                r.rule,
                r.reason,
                r.approver,
                r.latency_us,
                r.submitted_by,
                r.record,
                r.action,
            ])?;
            seqs.push(tx.last_insert_rowid());
        }
    }
    tx.commit()?;
    Ok(seqs)
}

/// The whole batch in one statement, one round trip (a statement is its
/// own transaction): a column of each kind as an array, the rows made by
/// `UNNEST`. One statement text whatever the batch's size, so it is
/// prepared once.
async fn insert_postgres(
    c: &mut sqlx::PgConnection,
    rows: &[ActionRow],
) -> Result<Vec<i64>, StoreError> {
    fn column<'a, T>(rows: &'a [ActionRow], f: impl Fn(&'a ActionRow) -> T) -> Vec<T> {
        rows.iter().map(f).collect()
    }
    let mut got = sqlx::query(concat!(
        insert_into_actions!(),
        "SELECT * FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], \
         $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], \
         $13::text[], $14::text[], $15::bigint[], $16::text[], $17::text[], $18::text[]) \
         RETURNING seq"
    ))
    .bind(column(rows, |r| r.action_id.as_str()))
    .bind(column(rows, |r| r.time.as_str()))
    .bind(column(rows, |r| r.ts_us))
    .bind(column(rows, |r| r.session.as_deref()))
    .bind(column(rows, |r| r.agent.as_deref()))
    .bind(column(rows, |r| r.adapter.as_str()))
    .bind(column(rows, |r| r.kind.as_str()))
    .bind(column(rows, |r| r.summary.as_str()))
    .bind(column(rows, |r| r.decision.as_str()))
    .bind(column(rows, |r| r.outcome.as_deref()))
    .bind(column(rows, |r| r.source.as_str()))
    .bind(column(rows, |r| r.rule.as_deref()))
    .bind(column(rows, |r| r.reason.as_str()))
    .bind(column(rows, |r| r.approver.as_deref()))
    .bind(column(rows, |r| r.latency_us))
    .bind(column(rows, |r| r.submitted_by.as_deref()))
    .bind(column(rows, |r| r.record.as_str()))
    .bind(column(rows, |r| r.action.as_deref()))
    .fetch_all(c)
    .await?
    .iter()
    .map(|r| r.try_get::<i64, _>("seq"))
    .collect::<Result<Vec<i64>, _>>()?;
    // The rows take their numbers in UNNEST's order; the order RETURNING
    // lists them in is not promised.
    got.sort_unstable();
    if got.len() != rows.len() {
        return Err(StoreError::Unnumbered {
            inserted: rows.len(),
            numbered: got.len(),
        });
    }
    Ok(got)
}
