//! How long the action log keeps its rows (`--retain 30d`, `--retain
//! 1000000`), and the task that deletes the rest: small batches, each its
//! own short transaction with a pause after it, so that the log's writer
//! (SQLite has one writer at a time) and the evaluations never wait long.

use crate::app::{App, now_us};
use crate::db::{Db, DbResult, PruneBy};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rows deleted by one statement.
pub const BATCH: i64 = 1000;
/// The least pause after a batch; a slow batch is followed by a pause as
/// long as it took, so that pruning holds the database at most half the time.
const PAUSE: Duration = Duration::from_millis(20);
/// How often the log is pruned (the first time at start).
const EVERY: Duration = Duration::from_secs(60);

/// One `--retain` value: an age (`12h`, `30d`, `52w`; also `s`, `m` for
/// minutes) or a number of rows (`1000000`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    Age(Duration),
    Rows(u64),
}

/// A `--retain` value that is neither.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "`{0}`: expected an age such as 12h, 30d or 52w (units s, m, h, d, w), or a number of actions such as 1000000"
)]
pub struct BadKeep(pub String);

impl std::str::FromStr for Keep {
    type Err = BadKeep;

    fn from_str(s: &str) -> Result<Keep, BadKeep> {
        let bad = || BadKeep(s.to_owned());
        let t = s.trim().replace('_', "");
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: u64 = num.parse().map_err(|_| bad())?;
        if n == 0 {
            return Err(bad());
        }
        let secs = match unit {
            "" => return Ok(Keep::Rows(n)),
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            "w" => 7 * 86_400,
            _ => return Err(bad()),
        };
        n.checked_mul(secs)
            .map(|s| Keep::Age(Duration::from_secs(s)))
            .ok_or_else(bad)
    }
}

/// What the action log keeps: rows younger than `max_age` and the newest
/// `max_rows`; nothing set keeps everything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retention {
    pub max_age: Option<Duration>,
    pub max_rows: Option<u64>,
}

impl Retention {
    /// From the `--retain` values (an age and a count may both be given).
    pub fn of(keeps: &[Keep]) -> Retention {
        let mut r = Retention::default();
        for k in keeps {
            match *k {
                Keep::Age(a) => r.max_age = Some(r.max_age.map_or(a, |b| b.min(a))),
                Keep::Rows(n) => r.max_rows = Some(r.max_rows.map_or(n, |m| m.min(n))),
            }
        }
        r
    }

    pub fn keeps_everything(&self) -> bool {
        self.max_age.is_none() && self.max_rows.is_none()
    }
}

impl std::fmt::Display for Retention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let age = self.max_age.map(|a| {
            let s = a.as_secs();
            let (n, unit) = [(86_400, "day"), (3600, "hour"), (60, "minute")]
                .into_iter()
                .find(|(u, _)| s % u == 0)
                .map_or((s, "second"), |(u, name)| (s / u, name));
            format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
        });
        let rows = self.max_rows.map(|n| format!("the last {n} actions"));
        match (age, rows) {
            (None, None) => f.write_str("everything"),
            (Some(a), None) => write!(f, "{a}"),
            (None, Some(r)) => write!(f, "{r}"),
            (Some(a), Some(r)) => write!(f, "{a}, at most {r}"),
        }
    }
}

/// Deletes what `retention` does not keep, `BATCH` rows a statement,
/// until nothing is left to delete or `stop` says so. Returns the rows
/// deleted; `counted` hears of each batch.
pub async fn prune(
    db: &Db,
    retention: Retention,
    stop: &tokio::sync::watch::Receiver<bool>,
    counted: impl Fn(u64),
) -> DbResult<u64> {
    let mut total = 0;
    if let Some(age) = retention.max_age {
        let before = now_us().saturating_sub(age.as_micros().min(i64::MAX as u128) as i64);
        total += batches(stop, &counted, || {
            db.prune_actions(PruneBy::Time, before, BATCH)
        })
        .await?;
    }
    if let Some(rows) = retention.max_rows
        && let Some(last) = db.last_seq().await?
    {
        // Sequence numbers only grow: the newest `rows` are above this.
        let below = last.saturating_sub(i64::try_from(rows).unwrap_or(i64::MAX)) + 1;
        total += batches(stop, &counted, || {
            db.prune_actions(PruneBy::Seq, below, BATCH)
        })
        .await?;
    }
    Ok(total)
}

/// Runs `delete` (one batch) until it deletes less than a batch.
async fn batches<F, Fut>(
    stop: &tokio::sync::watch::Receiver<bool>,
    counted: &impl Fn(u64),
    delete: F,
) -> DbResult<u64>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = DbResult<u64>>,
{
    let mut total = 0;
    while !*stop.borrow() {
        let started = Instant::now();
        let n = delete().await?;
        total += n;
        counted(n);
        if n < BATCH as u64 {
            break;
        }
        tokio::time::sleep(started.elapsed().max(PAUSE)).await;
    }
    Ok(total)
}

/// Prunes the log now and every minute until the server stops.
pub fn spawn(app: &Arc<App>) {
    let retention = app.cfg.retention;
    if retention.keeps_everything() {
        return;
    }
    let weak = Arc::downgrade(app);
    let mut stop = app.shutdown.clone();
    tokio::spawn(async move {
        loop {
            let Some(app) = weak.upgrade() else { return };
            let metrics = &app.ops.metrics;
            match prune(&app.db, retention, &stop, |n| metrics.pruned(n)).await {
                Ok(0) => {}
                Ok(n) => crate::ops::log_event(
                    &app.cfg,
                    "info",
                    &format!("retention: deleted {n} actions (keeping {retention})"),
                ),
                Err(e) => crate::ops::log_event(
                    &app.cfg,
                    "error",
                    &format!("retention: cannot prune the action log: {e}"),
                ),
            }
            drop(app);
            tokio::select! {
                _ = tokio::time::sleep(EVERY) => {}
                _ = stop.wait_for(|s| *s) => return,
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_values() {
        let day = Duration::from_secs(86_400);
        assert_eq!("30d".parse(), Ok(Keep::Age(30 * day)));
        assert_eq!("52w".parse(), Ok(Keep::Age(364 * day)));
        assert_eq!("12h".parse(), Ok(Keep::Age(day / 2)));
        assert_eq!("1000000".parse(), Ok(Keep::Rows(1_000_000)));
        assert_eq!("1_000_000".parse(), Ok(Keep::Rows(1_000_000)));
        for bad in [
            "",
            "0",
            "0d",
            "30x",
            "d",
            "-5",
            "1.5d",
            "99999999999999999999w",
        ] {
            assert!(bad.parse::<Keep>().is_err(), "{bad}");
        }
        let r = Retention::of(&[Keep::Age(30 * day), Keep::Rows(10), Keep::Rows(5)]);
        assert_eq!(r.max_rows, Some(5));
        assert_eq!(r.to_string(), "30 days, at most the last 5 actions");
        assert_eq!(Retention::default().to_string(), "everything");
    }
}
