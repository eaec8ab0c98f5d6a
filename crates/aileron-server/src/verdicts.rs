//! The LLM judge's verdicts in the server's database (`judge_verdicts`),
//! so that an identical action is not judged again within its rule's
//! `cache_ttl`, after a restart too, and by every server sharing a
//! PostgreSQL database.
//!
//! [`aileron_judge::Bench`] calls a [`VerdictStore`] on its blocking path
//! (the server runs the judge in `block_in_place`), so this one waits for
//! the database on the runtime it was made in. A lookup or write that
//! fails or takes longer than [`DB_WAIT`] is a cache miss: the model is
//! asked. A row that does not read back as a whole verdict is never used.

use crate::db::Db;
use aileron_judge::cache::{Key, MAX_ENTRIES, VerdictStore};
use aileron_judge::{JudgeDecision, MAX_REASON_CHARS, Verdict};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The longest the judge's path waits for the database.
pub const DB_WAIT: Duration = Duration::from_secs(2);

/// Verdicts kept in the database.
pub struct DbVerdicts {
    db: Db,
    runtime: tokio::runtime::Handle,
    /// Rows kept at most.
    max_rows: usize,
}

impl DbVerdicts {
    /// A store on `db`; must be made inside the server's runtime.
    pub fn new(db: Db) -> DbVerdicts {
        DbVerdicts {
            db,
            runtime: tokio::runtime::Handle::current(),
            max_rows: MAX_ENTRIES,
        }
    }

    /// Keeps at most `rows` verdicts (default [`MAX_ENTRIES`]).
    pub fn max_rows(mut self, rows: usize) -> DbVerdicts {
        self.max_rows = rows;
        self
    }

    /// Runs a database call from the judge's blocking path, within [`DB_WAIT`].
    fn wait<T>(&self, call: impl Future<Output = crate::db::DbResult<T>>) -> Option<T> {
        let call = tokio::time::timeout(DB_WAIT, call);
        tokio::task::block_in_place(|| self.runtime.block_on(call))
            .ok()?
            .ok()
    }
}

fn epoch_secs(t: SystemTime) -> Option<i64> {
    Some(
        t.duration_since(UNIX_EPOCH)
            .ok()?
            .as_secs()
            .min(i64::MAX as u64) as i64,
    )
}

/// A stored row as a verdict, if it is one: a known decision and a
/// non-empty one-line reason no longer than a judge's.
pub fn verdict_of(decision: &str, reason: &str) -> Option<Verdict> {
    let decision = JudgeDecision::parse(decision)?;
    let ok = !reason.trim().is_empty()
        && !reason.chars().any(char::is_control)
        && reason.chars().count() <= MAX_REASON_CHARS;
    ok.then(|| Verdict {
        decision,
        reason: reason.to_owned(),
    })
}

impl VerdictStore for DbVerdicts {
    fn get(&self, key: &Key, now: SystemTime) -> Option<Verdict> {
        let now = epoch_secs(now)?;
        let key = key.hex();
        let (decision, reason) = self.wait(self.db.judge_verdict(&key, now))??;
        verdict_of(&decision, &reason)
    }

    fn put(&self, key: &Key, verdict: &Verdict, ttl: Duration, now: SystemTime) {
        let (Some(at), Some(until)) = (epoch_secs(now), now.checked_add(ttl)) else {
            return;
        };
        let Some(until) = epoch_secs(until) else {
            return;
        };
        // What `get` would not trust is not written.
        let reason: String = verdict
            .reason
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if verdict_of(verdict.decision.as_str(), &reason).is_none() {
            return;
        }
        let key = key.hex();
        let _ = self.wait(self.db.put_judge_verdict(
            &key,
            verdict.decision.as_str(),
            &reason,
            until,
            at,
            self.max_rows.min(i64::MAX as usize) as i64,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_whole_verdict_is_read_back() {
        assert_eq!(
            verdict_of("deny", "deletes the repo"),
            Some(Verdict {
                decision: JudgeDecision::Deny,
                reason: "deletes the repo".into()
            })
        );
        for (d, r) in [
            ("allow-ish", "fine"),
            ("ALLOW", "fine"),
            ("", "fine"),
            ("allow", ""),
            ("allow", "  "),
            ("allow", "two\nlines"),
        ] {
            assert!(verdict_of(d, r).is_none(), "{d:?} {r:?}");
        }
        let long = "x".repeat(MAX_REASON_CHARS + 1);
        assert!(verdict_of("allow", &long).is_none());
    }
}
