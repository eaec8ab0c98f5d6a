//! Storage: SQLite (default) or PostgreSQL, behind one small API.
//!
//! Both backends run the same SQL (`$1` placeholders work in both); the
//! [`on_db!`] macro expands a query once per backend so that each is
//! compiled against its own driver, without sqlx's `Any`.

use sqlx::Row;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use std::borrow::Cow;
use std::str::FromStr;
use std::time::Duration;

/// A connection pool to either backend.
#[derive(Clone, Debug)]
pub enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

macro_rules! on_db {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            Db::Sqlite($pool) => $body,
            Db::Postgres($pool) => $body,
        }
    };
}

pub type DbResult<T> = Result<T, sqlx::Error>;

// The approval queue's rows (`pending_actions`).
mod pending;
pub use pending::{PendingRow, StoredAnswer};
// The action log's writer connection.
mod action_log;
pub use action_log::{StoreError, Writer};

/// The schema's migrations, in order (`[init, judge_verdicts, pending_actions]`).
fn migrator(sqls: [&'static str; 3]) -> Migrator {
    let names = ["init", "judge_verdicts", "pending_actions"];
    Migrator {
        migrations: Cow::Owned(
            sqls.iter()
                .zip(names)
                .zip(1..)
                .map(|((sql, name), version)| {
                    Migration::new(
                        version,
                        Cow::Borrowed(name),
                        MigrationType::Simple,
                        Cow::Borrowed(sql),
                        false,
                    )
                })
                .collect(),
        ),
        ignore_missing: false,
        locking: true,
        no_tx: false,
    }
}

/// The default database URL for a data directory.
pub fn default_url(data_dir: &std::path::Path) -> String {
    format!("sqlite://{}", data_dir.join("aileron.db").display())
}

/// Creates the SQLite file of `url` readable by its owner only (0600, as
/// the token files), before SQLite would create it with the umask's mode
/// (0644): it holds the actions, their commands and the token hashes.
/// SQLite gives its `-wal` and `-shm` files the database's mode.
fn create_private(url: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let Some(path) = sqlite_path(url) else {
        return;
    };
    // Exists already, or cannot be made: SQLite reports what is wrong.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
}

/// The file of a SQLite URL (`None`: PostgreSQL, or in memory).
pub fn sqlite_path(url: &str) -> Option<std::path::PathBuf> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return None;
    }
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    let path = path.split('?').next().unwrap_or(path);
    (!path.is_empty() && path != ":memory:").then(|| path.into())
}
impl Db {
    /// Opens (creating a SQLite file if needed) and migrates.
    pub async fn open(url: &str) -> DbResult<Db> {
        let db = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(10))
                .connect(url)
                .await?;
            migrator([
                include_str!("../migrations/postgres/0001_init.sql"),
                include_str!("../migrations/postgres/0002_judge_verdicts.sql"),
                include_str!("../migrations/postgres/0003_pending_actions.sql"),
            ])
            .run(&pool)
            .await?;
            Db::Postgres(pool)
        } else {
            create_private(url);
            let opts = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                // In WAL mode a committed transaction is in the log file
                // before the commit returns: a killed process loses nothing;
                // only a power cut may lose the last commits.
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(Duration::from_secs(10))
                .foreign_keys(true);
            let pool = SqlitePoolOptions::new()
                .max_connections(4)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(opts)
                .await?;
            migrator([
                include_str!("../migrations/sqlite/0001_init.sql"),
                include_str!("../migrations/sqlite/0002_judge_verdicts.sql"),
                include_str!("../migrations/sqlite/0003_pending_actions.sql"),
            ])
            .run(&pool)
            .await?;
            Db::Sqlite(pool)
        };
        Ok(db)
    }

    pub async fn close(&self) {
        on_db!(self, p => p.close().await)
    }

    // ---- tokens ----------------------------------------------------------

    pub async fn token_role(&self, hash: &str) -> DbResult<Option<String>> {
        on_db!(self, p => {
            let row = sqlx::query("SELECT role FROM tokens WHERE hash = $1")
                .bind(hash)
                .fetch_optional(p)
                .await?;
            row.map(|r| r.try_get::<String, _>("role")).transpose()
        })
    }

    pub async fn insert_token(
        &self,
        hash: &str,
        role: &str,
        name: Option<&str>,
        now: &str,
    ) -> DbResult<()> {
        on_db!(self, p => {
            sqlx::query("INSERT INTO tokens (hash, role, name, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING")
                .bind(hash)
                .bind(role)
                .bind(name)
                .bind(now)
                .execute(p)
                .await?;
        });
        Ok(())
    }

    // ---- rules -----------------------------------------------------------

    /// Every rule, in layer order (position).
    pub async fn rules(&self) -> DbResult<Vec<RuleRow>> {
        on_db!(self, p => {
            let rows = sqlx::query(
                "SELECT id, label, source, created_by, created_at, updated_at FROM approval_rules ORDER BY position, id",
            )
            .fetch_all(p)
            .await?;
            rows.iter()
                .map(|r| {
                    Ok(RuleRow {
                        id: r.try_get("id")?,
                        label: r.try_get("label")?,
                        source: r.try_get("source")?,
                        created_by: r.try_get("created_by")?,
                        created_at: r.try_get("created_at")?,
                        updated_at: r.try_get("updated_at")?,
                    })
                })
                .collect()
        })
    }

    /// Inserts or updates rules (a rule keeps its position when updated),
    /// in one transaction. Returns the new `rules_version`.
    pub async fn upsert_rules(&self, rules: &[RuleWrite]) -> DbResult<i64> {
        on_db!(self, p => {
            let mut tx = p.begin().await?;
            for r in rules {
                // One statement (the position computed inside it), so that the
                // transaction writes from its first statement: no lock upgrade.
                sqlx::query(
                    "INSERT INTO approval_rules (id, position, label, scope_plugin_id, scope_profile_id, scope_integration_id, \
                     priority, enabled, decision, reason, source, created_by, created_at, updated_at) \
                     VALUES ($1, (SELECT COALESCE(MAX(position), 0) + 1 FROM approval_rules), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
                     ON CONFLICT (id) DO UPDATE SET label = excluded.label, scope_plugin_id = excluded.scope_plugin_id, \
                     scope_profile_id = excluded.scope_profile_id, scope_integration_id = excluded.scope_integration_id, \
                     priority = excluded.priority, enabled = excluded.enabled, decision = excluded.decision, \
                     reason = excluded.reason, source = excluded.source, updated_at = excluded.updated_at",
                )
                .bind(&r.id)
                .bind(&r.label)
                .bind(&r.scope_plugin)
                .bind(&r.scope_profile)
                .bind(&r.scope_integration)
                .bind(r.priority)
                .bind(i64::from(r.enabled))
                .bind(&r.decision)
                .bind(&r.reason)
                .bind(&r.source)
                .bind(&r.created_by)
                .bind(&r.now)
                .bind(&r.now)
                .execute(&mut *tx)
                .await?;
            }
            let version: i64 = sqlx::query(
                "UPDATE meta SET value = value + 1 WHERE key = 'rules_version' RETURNING value",
            )
            .fetch_one(&mut *tx)
            .await?
            .try_get("value")?;
            tx.commit().await?;
            Ok(version)
        })
    }

    /// Deletes a rule; returns the rows deleted and the new `rules_version`.
    pub async fn delete_rule(&self, id: &str) -> DbResult<(u64, i64)> {
        on_db!(self, p => {
            let mut tx = p.begin().await?;
            let n = sqlx::query("DELETE FROM approval_rules WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            let version: i64 = sqlx::query(
                "UPDATE meta SET value = value + 1 WHERE key = 'rules_version' RETURNING value",
            )
            .fetch_one(&mut *tx)
            .await?
            .try_get("value")?;
            tx.commit().await?;
            Ok((n, version))
        })
    }

    /// Bumped by every change of the rules.
    pub async fn rules_version(&self) -> DbResult<i64> {
        on_db!(self, p => {
            sqlx::query("SELECT value FROM meta WHERE key = 'rules_version'")
                .fetch_one(p)
                .await?
                .try_get("value")
        })
    }

    // ---- the action log --------------------------------------------------

    /// The log, newest first, filtered.
    pub async fn actions(&self, q: &ActionQuery) -> DbResult<Vec<StoredAction>> {
        let mut sql =
            String::from("SELECT seq, record, action, submitted_by FROM actions WHERE 1 = 1");
        let mut n = 0;
        let mut next = || {
            n += 1;
            format!("${n}")
        };
        let mut texts: Vec<&str> = Vec::new();
        let mut ints: Vec<i64> = Vec::new();
        // Text parameters first, then integers, so that binding order is simple.
        if let Some(s) = &q.session {
            sql += &format!(" AND session = {}", next());
            texts.push(s);
        }
        if !q.decisions.is_empty() {
            let marks: Vec<String> = q.decisions.iter().map(|_| next()).collect();
            sql += &format!(" AND decision IN ({})", marks.join(", "));
            texts.extend(q.decisions.iter().map(String::as_str));
        }
        if let Some(t) = &q.kind {
            sql += &format!(" AND type = {}", next());
            texts.push(t);
        }
        if let Some(t) = &q.submitted_by {
            sql += &format!(" AND submitted_by = {}", next());
            texts.push(t);
        }
        if let Some(s) = q.since_us {
            sql += &format!(" AND ts_us >= {}", next());
            ints.push(s);
        }
        if let Some(u) = q.until_us {
            sql += &format!(" AND ts_us <= {}", next());
            ints.push(u);
        }
        if let Some(c) = q.before_seq {
            sql += &format!(" AND seq < {}", next());
            ints.push(c);
        }
        sql += &format!(" ORDER BY seq DESC LIMIT {}", next());
        ints.push(q.limit);
        on_db!(self, p => {
            let mut query = sqlx::query(&sql);
            for t in &texts {
                query = query.bind(*t);
            }
            for i in &ints {
                query = query.bind(*i);
            }
            let rows = query.fetch_all(p).await?;
            rows.iter()
                .map(|r| {
                    Ok(StoredAction {
                        seq: r.try_get("seq")?,
                        record: r.try_get("record")?,
                        action: r.try_get("action")?,
                        submitted_by: r.try_get("submitted_by")?,
                    })
                })
                .collect()
        })
    }

    /// Deletes at most `limit` of the rows below `bound` in time or in
    /// sequence (one statement, its own transaction); returns how many.
    pub async fn prune_actions(&self, by: PruneBy, bound: i64, limit: i64) -> DbResult<u64> {
        let col = match by {
            PruneBy::Time => "ts_us",
            PruneBy::Seq => "seq",
        };
        let sql = format!(
            "DELETE FROM actions WHERE seq IN \
             (SELECT seq FROM actions WHERE {col} < $1 ORDER BY {col} LIMIT $2)"
        );
        on_db!(self, p => {
            Ok(sqlx::query(&sql)
                .bind(bound)
                .bind(limit)
                .execute(p)
                .await?
                .rows_affected())
        })
    }

    /// The sequence number of the newest row of the log.
    pub async fn last_seq(&self) -> DbResult<Option<i64>> {
        on_db!(self, p => {
            sqlx::query("SELECT MAX(seq) AS seq FROM actions")
                .fetch_one(p)
                .await?
                .try_get("seq")
        })
    }

    /// The schema's migrations as recorded in the database: version, and
    /// whether it was applied whole.
    pub async fn applied_migrations(&self) -> DbResult<Vec<(i64, bool)>> {
        on_db!(self, p => {
            let rows = sqlx::query("SELECT version, success FROM _sqlx_migrations ORDER BY version")
                .fetch_all(p)
                .await?;
            rows.iter()
                .map(|r| Ok((r.try_get("version")?, r.try_get("success")?)))
                .collect()
        })
    }

    // ---- judge verdicts --------------------------------------------------

    /// The verdict stored under `key` that has not expired at `now`
    /// (seconds since the epoch): `(decision, reason)` as written.
    pub async fn judge_verdict(&self, key: &str, now: i64) -> DbResult<Option<(String, String)>> {
        on_db!(self, p => {
            let row = sqlx::query(
                "SELECT decision, reason FROM judge_verdicts WHERE key = $1 AND expires_at > $2",
            )
            .bind(key)
            .bind(now)
            .fetch_optional(p)
            .await?;
            row.map(|r| Ok((r.try_get("decision")?, r.try_get("reason")?)))
                .transpose()
        })
    }

    /// Stores a verdict until `expires_at`, then drops the expired rows and
    /// the soonest to expire beyond `max_rows`, in one transaction.
    pub async fn put_judge_verdict(
        &self,
        key: &str,
        decision: &str,
        reason: &str,
        expires_at: i64,
        now: i64,
        max_rows: i64,
    ) -> DbResult<()> {
        on_db!(self, p => {
            let mut tx = p.begin().await?;
            sqlx::query(
                "INSERT INTO judge_verdicts (key, decision, reason, expires_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (key) DO UPDATE SET decision = excluded.decision, reason = excluded.reason, \
                 expires_at = excluded.expires_at",
            )
            .bind(key)
            .bind(decision)
            .bind(reason)
            .bind(expires_at)
            .execute(&mut *tx)
            .await?;
            sqlx::query("DELETE FROM judge_verdicts WHERE expires_at <= $1")
                .bind(now)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "DELETE FROM judge_verdicts WHERE key NOT IN \
                 (SELECT key FROM judge_verdicts ORDER BY expires_at DESC, key LIMIT $1)",
            )
            .bind(max_rows)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(())
        })
    }

    /// Runs SQLite's integrity check (PostgreSQL: a trivial query).
    pub async fn integrity_check(&self) -> DbResult<String> {
        match self {
            Db::Sqlite(p) => {
                let row = sqlx::query("PRAGMA integrity_check").fetch_one(p).await?;
                row.try_get::<String, _>(0)
            }
            Db::Postgres(p) => {
                sqlx::query("SELECT 1").execute(p).await?;
                Ok("ok".into())
            }
        }
    }
}

/// What [`Db::prune_actions`] compares its bound with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PruneBy {
    /// `ts_us`: the decision's time, microseconds since the epoch.
    Time,
    /// `seq`: the row's sequence number.
    Seq,
}

/// A rule as stored.
#[derive(Clone, Debug)]
pub struct RuleRow {
    pub id: String,
    pub label: Option<String>,
    /// The API form, JSON.
    pub source: String,
    pub created_by: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// A rule to store.
#[derive(Clone, Debug)]
pub struct RuleWrite {
    pub id: String,
    pub label: Option<String>,
    pub scope_plugin: Option<String>,
    pub scope_profile: Option<String>,
    pub scope_integration: Option<String>,
    pub priority: i64,
    pub enabled: bool,
    pub decision: String,
    pub reason: Option<String>,
    pub source: String,
    pub created_by: Option<String>,
    pub now: String,
}

/// One row of the action log to write.
#[derive(Clone, Debug)]
pub struct ActionRow {
    pub action_id: String,
    pub time: String,
    pub ts_us: i64,
    pub session: Option<String>,
    pub agent: Option<String>,
    pub adapter: String,
    pub kind: String,
    pub summary: String,
    pub decision: String,
    pub outcome: Option<String>,
    pub source: String,
    pub rule: Option<String>,
    pub reason: String,
    pub approver: Option<String>,
    pub latency_us: i64,
    pub submitted_by: Option<String>,
    pub record: String,
    pub action: Option<String>,
}

/// Filters of the action log.
#[derive(Clone, Debug, Default)]
pub struct ActionQuery {
    pub session: Option<String>,
    pub decisions: Vec<String>,
    pub kind: Option<String>,
    pub submitted_by: Option<String>,
    pub since_us: Option<i64>,
    pub until_us: Option<i64>,
    pub before_seq: Option<i64>,
    pub limit: i64,
}

/// One row of the action log as read.
#[derive(Clone, Debug)]
pub struct StoredAction {
    pub seq: i64,
    pub record: String,
    pub action: Option<String>,
    pub submitted_by: Option<String>,
}
