//! The approval queue as stored (`pending_actions`): an ask's row is
//! inserted once, decided once (a conditional UPDATE: exactly one answer
//! wins, whichever server it reached), and kept a while after.

use super::{Db, DbResult};
use sqlx::Row;

/// An ask as stored.
#[derive(Clone, Debug)]
pub struct PendingRow {
    pub id: String,
    pub session: Option<String>,
    /// `evaluate` or `adapter`.
    pub origin: String,
    /// What was asked (see `pending::fingerprint`).
    pub fingerprint: String,
    /// The dashboard's view, JSON.
    pub view: String,
    /// The replica that made it.
    pub owner: String,
    pub created_at: String,
    pub deadline_us: i64,
    /// `None` while it waits.
    pub answer: Option<StoredAnswer>,
    /// After an "always": the session's always answers, JSON.
    pub grants: Option<String>,
    /// An answer reached a caller: the id is spent.
    pub delivered: bool,
}

/// A decision as stored.
#[derive(Clone, Debug)]
pub struct StoredAnswer {
    /// `once`, `always`, `reject`, `feedback` or `timeout`.
    pub answer: String,
    pub reason: Option<String>,
    pub reviewer: Option<String>,
    /// `dashboard`, `webhook:ID`, `cascade` or `clock`.
    pub channel: String,
    /// The replica that stored it.
    pub by: String,
    pub at_us: i64,
}

const COLUMNS: &str = "id, session, origin, fingerprint, view, owner, created_at, deadline_us, \
     state, answer, reason, reviewer, channel, decided_by, decided_us, grants, delivered_us";

/// Decides rows (`WHERE` to add, from `$7`): binds [`bind_answer!`].
const DECIDE: &str = "UPDATE pending_actions SET state = 'decided', answer = $1, reason = $2, \
     reviewer = $3, channel = $4, decided_by = $5, decided_us = $6";

/// Binds a [`StoredAnswer`] as `$1` to `$6` of [`DECIDE`].
macro_rules! bind_answer {
    ($q:expr, $a:expr) => {{
        let a: &StoredAnswer = $a;
        $q.bind(&a.answer)
            .bind(&a.reason)
            .bind(&a.reviewer)
            .bind(&a.channel)
            .bind(&a.by)
            .bind(a.at_us)
    }};
}

/// A row of `COLUMNS` (the same code for both drivers' rows).
macro_rules! pending_row {
    ($r:expr) => {{
        let r = $r;
        let state: String = r.try_get("state")?;
        let answer = if state == "pending" {
            None
        } else {
            Some(StoredAnswer {
                answer: r
                    .try_get::<Option<String>, _>("answer")?
                    .unwrap_or_default(),
                reason: r.try_get("reason")?,
                reviewer: r.try_get("reviewer")?,
                channel: r
                    .try_get::<Option<String>, _>("channel")?
                    .unwrap_or_default(),
                by: r
                    .try_get::<Option<String>, _>("decided_by")?
                    .unwrap_or_default(),
                at_us: r.try_get::<Option<i64>, _>("decided_us")?.unwrap_or(0),
            })
        };
        PendingRow {
            id: r.try_get("id")?,
            session: r.try_get("session")?,
            origin: r.try_get("origin")?,
            fingerprint: r.try_get("fingerprint")?,
            view: r.try_get("view")?,
            owner: r.try_get("owner")?,
            created_at: r.try_get("created_at")?,
            deadline_us: r.try_get("deadline_us")?,
            answer,
            grants: r.try_get("grants")?,
            delivered: r.try_get::<Option<i64>, _>("delivered_us")?.is_some(),
        }
    }};
}

impl Db {
    /// Stores a new ask (waiting); false when an ask with its id exists.
    pub async fn insert_pending(&self, row: &PendingRow) -> DbResult<bool> {
        on_db!(self, p => {
            Ok(sqlx::query(
                "INSERT INTO pending_actions (id, session, origin, fingerprint, view, owner, created_at, deadline_us, state) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending') ON CONFLICT (id) DO NOTHING",
            )
            .bind(&row.id)
            .bind(&row.session)
            .bind(&row.origin)
            .bind(&row.fingerprint)
            .bind(&row.view)
            .bind(&row.owner)
            .bind(&row.created_at)
            .bind(row.deadline_us)
            .execute(p)
            .await?
            .rows_affected()
                == 1)
        })
    }

    /// The ask stored under `id`.
    pub async fn pending_row(&self, id: &str) -> DbResult<Option<PendingRow>> {
        let sql = format!("SELECT {COLUMNS} FROM pending_actions WHERE id = $1");
        on_db!(self, p => {
            let row = sqlx::query(&sql).bind(id).fetch_optional(p).await?;
            Ok(match row {
                Some(r) => Some(pending_row!(&r)),
                None => None,
            })
        })
    }

    /// Every ask still waiting, oldest first.
    pub async fn waiting_rows(&self) -> DbResult<Vec<PendingRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM pending_actions WHERE state = 'pending' ORDER BY created_at, id"
        );
        on_db!(self, p => {
            let rows = sqlx::query(&sql).fetch_all(p).await?;
            let mut out = Vec::with_capacity(rows.len());
            for r in &rows {
                out.push(pending_row!(r));
            }
            Ok(out)
        })
    }

    /// Decides the ask `id` if it still waits: the row as decided when this
    /// decision won, `None` when another was there first (or there is no
    /// such ask).
    pub async fn decide_pending(&self, id: &str, a: &StoredAnswer) -> DbResult<Option<PendingRow>> {
        let sql = format!("{DECIDE} WHERE id = $7 AND state = 'pending' RETURNING {COLUMNS}");
        on_db!(self, p => {
            let row = bind_answer!(sqlx::query(&sql), a)
                .bind(id)
                .fetch_optional(p)
                .await?;
            Ok(match row {
                Some(r) => Some(pending_row!(&r)),
                None => None,
            })
        })
    }

    /// Decides, as `a` says, the adapters' asks still waiting in `session`
    /// other than `except` (a reject's cascade); returns their ids.
    pub async fn decide_session_asks(
        &self,
        session: &str,
        except: &str,
        a: &StoredAnswer,
    ) -> DbResult<Vec<String>> {
        let sql = format!(
            "{DECIDE} WHERE session = $7 AND id <> $8 AND origin = 'adapter' AND state = 'pending' \
             RETURNING id"
        );
        on_db!(self, p => {
            let rows = bind_answer!(sqlx::query(&sql), a)
                .bind(session)
                .bind(except)
                .fetch_all(p)
                .await?;
            rows.iter().map(|r| r.try_get("id")).collect()
        })
    }

    /// The ids of at most `limit` asks still waiting whose deadline is
    /// before `now_us`.
    pub async fn overdue_asks(&self, now_us: i64, limit: i64) -> DbResult<Vec<String>> {
        on_db!(self, p => {
            let rows = sqlx::query(
                "SELECT id FROM pending_actions WHERE state = 'pending' AND deadline_us < $1 \
                 ORDER BY deadline_us LIMIT $2",
            )
            .bind(now_us)
            .bind(limit)
            .fetch_all(p)
            .await?;
            rows.iter().map(|r| r.try_get("id")).collect()
        })
    }

    /// Marks the answer to `id` as delivered (first time only); true when
    /// this call marked it: a caller asking again under a decided id gets
    /// the answer only then, so that one answer allows one action.
    pub async fn mark_delivered(&self, id: &str, now_us: i64) -> DbResult<bool> {
        on_db!(self, p => {
            let done = sqlx::query(
                "UPDATE pending_actions SET delivered_us = $2 WHERE id = $1 AND state = 'decided' AND delivered_us IS NULL",
            )
            .bind(id)
            .bind(now_us)
            .execute(p)
            .await?;
            Ok(done.rows_affected() == 1)
        })
    }

    /// Stores the session's "always" answers after the one given to `id`.
    pub async fn set_grants(&self, id: &str, grants: &str) -> DbResult<()> {
        on_db!(self, p => {
            sqlx::query("UPDATE pending_actions SET grants = $2 WHERE id = $1")
                .bind(id)
                .bind(grants)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    /// The "always" answers stored for `session`, oldest first.
    pub async fn session_grants(&self, session: &str) -> DbResult<Vec<String>> {
        on_db!(self, p => {
            let rows = sqlx::query(
                "SELECT grants FROM pending_actions WHERE session = $1 AND grants IS NOT NULL \
                 ORDER BY decided_us",
            )
            .bind(session)
            .fetch_all(p)
            .await?;
            rows.iter().map(|r| r.try_get("grants")).collect()
        })
    }

    /// Deletes the asks decided before `before_us`; returns how many.
    pub async fn prune_decided_asks(&self, before_us: i64) -> DbResult<u64> {
        on_db!(self, p => {
            Ok(sqlx::query("DELETE FROM pending_actions WHERE state = 'decided' AND decided_us < $1")
                .bind(before_us)
                .execute(p)
                .await?
                .rows_affected())
        })
    }
}

impl Db {
    /// The PostgreSQL pool, where servers can share the database (and
    /// LISTEN); `None` on SQLite.
    pub fn postgres(&self) -> Option<&sqlx::PgPool> {
        match self {
            Db::Postgres(p) => Some(p),
            Db::Sqlite(_) => None,
        }
    }
}
