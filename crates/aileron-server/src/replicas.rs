//! One approval queue for every server on the database, and asks that
//! outlive the server they were made on.
//!
//! Every ask is a row of `pending_actions` (migration 0003): inserted when
//! it starts to wait, decided by one conditional `UPDATE ... WHERE id = $1
//! AND state = 'pending'` (exactly one answer wins, whichever server it
//! reached: the others get 409), kept a day after. Each server shows the
//! waiting rows on its dashboard and holds the waiters of the requests it
//! serves ([`crate::pending::Queue`]).
//!
//! On PostgreSQL, several `aileron serve` share the database as one
//! service: the database announces each new, decided or changed ask on
//! `aileron_pending` and each change of the rules on `aileron_rules`
//! (triggers, so that whoever writes is heard), and every server LISTENs
//! on one connection: it shows the others' asks, wakes its own waiters
//! when another server decided, applies a reject's cascade and the
//! session approvals of an "always", and reloads the rules at once. Every
//! 5 s (and when the listening connection was lost) a server reads the
//! waiting rows again. Every second any server times out the asks past
//! their deadline (the one waiting for an ask does at the deadline; the
//! others a second later, for asks whose server died): stored once too.
//!
//! A request that asks again under the same Action id (an adapter that
//! lost its server and tries the next one) attaches to the same row: it
//! waits for it, or, decided within the last 10 minutes, gets its answer
//! at once. The row must be the same ask (origin and action, without id
//! and time: its fingerprint); another action under that id is refused.

use crate::Error;
use crate::app::{App, now_us};
use crate::db::{PendingRow, StoredAnswer};
use crate::pending::{AnswerKind, PendingView, Resolution, ResolveError, Waiter};
use aileron_decision::{Channel, SavedApproval};
use aileron_engine::Action;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Where the database announces asks (`{e: new | decided | changed, id,
/// owner, by}`).
pub const PENDING_CHANNEL: &str = "aileron_pending";
/// Where the database announces a new `rules_version`.
pub const RULES_CHANNEL: &str = "aileron_rules";
/// Why an ask under an id that is taken (waiting, or answered) is refused.
pub fn id_taken(id: &str) -> String {
    format!(
        "an action with id `{id}` is already waiting or was answered (an id allows one action: send a new one under a new id)"
    )
}

/// The reason of an ask rejected by a reject of its session.
pub const REJECTED_EARLIER: &str = "the user rejected an earlier request of this session";
/// A request asking again under a decided ask's id gets its answer this
/// long after the decision; later, the id is refused.
const REATTACH: Duration = Duration::from_secs(600);
/// Decided asks are deleted this long after their decision.
const KEEP_DECIDED: Duration = Duration::from_secs(24 * 3600);
/// How often the deadlines are checked.
const SWEEP: Duration = Duration::from_secs(1);
/// How long past its deadline an ask waits for its own server's clock
/// before any server times it out.
const SWEEP_GRACE: Duration = Duration::from_secs(1);
/// Asks timed out by one sweep, at most.
const SWEEP_BATCH: i64 = 100;
/// How often a server on PostgreSQL reads the waiting asks again.
const RESYNC: Duration = Duration::from_secs(5);
/// How often decided asks are pruned.
const PRUNE: Duration = Duration::from_secs(600);

/// An ask to put in the queue.
pub struct NewAsk {
    pub view: PendingView,
    /// [`fingerprint`] of the action.
    pub fingerprint: String,
    pub timeout: Duration,
}

/// What became of an ask put in the queue.
pub enum Opened {
    /// It waits (made now, or made earlier under the same id).
    Waiting(Ask),
    /// Asked again, and decided meanwhile: the answer.
    Decided(Resolution),
    /// The id is another action's, or too old.
    Taken,
    /// Too many asks of its session or token wait already: why.
    Full(String),
}

/// An ask this server waits for.
pub struct Ask {
    id: String,
    waiter: Waiter,
    deadline_us: i64,
}

/// What identifies an ask across retries: the SHA-256 of its origin
/// (`evaluate`, `adapter`) and the action without its id and time.
pub fn fingerprint(origin: &str, action: &Action) -> String {
    let mut v = serde_json::to_value(action).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.remove("id");
        m.remove("timestamp");
    }
    let mut h = Sha256::new();
    h.update(origin.as_bytes());
    h.update([0]);
    h.update(v.to_string().as_bytes());
    crate::auth::hex(&h.finalize())
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// An answer as stored by server `by`.
fn stored(res: &Resolution, by: &str) -> StoredAnswer {
    StoredAnswer {
        answer: res.answer.as_str().to_owned(),
        reason: res.reason.clone(),
        reviewer: res.reviewer.clone(),
        channel: match &res.channel {
            Some(Channel::Webhook(id)) => format!("webhook:{id}"),
            Some(c) => c.as_str().to_owned(),
            None if res.answer == AnswerKind::Timeout => "clock".to_owned(),
            None => "cascade".to_owned(),
        },
        by: by.to_owned(),
        at_us: now_us(),
    }
}

/// A stored answer as the waiters take it; one this version does not
/// know is a reject.
pub fn resolution(a: &StoredAnswer) -> Resolution {
    let answer = match a.answer.as_str() {
        "once" => AnswerKind::Once,
        "always" => AnswerKind::Always,
        "feedback" => AnswerKind::Feedback,
        "timeout" => AnswerKind::Timeout,
        _ => AnswerKind::Reject,
    };
    let channel = match a.channel.as_str() {
        "dashboard" => Some(Channel::Dashboard),
        c => c
            .strip_prefix("webhook:")
            .map(|id| Channel::Webhook(id.to_owned())),
    };
    Resolution {
        answer,
        reason: a.reason.clone(),
        reviewer: a.reviewer.clone(),
        channel,
    }
}

/// A person's reject (or feedback): the session's other asks are rejected.
fn rejects_session(res: &Resolution) -> bool {
    res.channel.is_some() && matches!(res.answer, AnswerKind::Reject | AnswerKind::Feedback)
}

impl App {
    /// Puts an ask in the queue, or, when the database has one under its
    /// id already (asked again, through this server or another), attaches
    /// to it.
    pub async fn open_ask(&self, ask: NewAsk) -> Result<Opened, Error> {
        let NewAsk {
            view,
            fingerprint,
            timeout,
        } = ask;
        let id = view.id.clone();
        let _admitting = self.queue.admission.lock().await;
        // A new ask (not one asked again under its id) counts against the caps.
        if !self.queue.shows(&id)
            && self.db.pending_row(&id).await?.is_none()
            && let Some(why) = self.queue.over_limit(&view, &self.cfg.limits)
        {
            return Ok(Opened::Full(why));
        }
        let now = now_us();
        let row = PendingRow {
            id: id.clone(),
            session: view.session.clone(),
            origin: view.origin.clone(),
            fingerprint,
            view: serde_json::to_string(&view).unwrap_or_default(),
            owner: self.replica.clone(),
            created_at: view.created_at.clone(),
            deadline_us: now.saturating_add(micros(timeout)),
            answer: None,
            grants: None,
            delivered: false,
        };
        let created = self.db.insert_pending(&row).await?;
        let (view, deadline_us) = if created {
            (view, row.deadline_us)
        } else {
            let Some(found) = self.db.pending_row(&id).await? else {
                return Ok(Opened::Taken);
            };
            if found.fingerprint != row.fingerprint {
                return Ok(Opened::Taken);
            }
            if let Some(a) = &found.answer {
                // Once only: an answer that reached its caller is spent (a
                // replayed id never gets a second allow out of one answer).
                let fresh = now.saturating_sub(a.at_us) <= micros(REATTACH)
                    && self.db.mark_delivered(&id, now).await?;
                return Ok(if fresh {
                    Opened::Decided(resolution(a))
                } else {
                    Opened::Taken
                });
            }
            let shown = serde_json::from_str(&found.view).unwrap_or(view);
            (shown, found.deadline_us)
        };
        let waiter = self.queue.waiter(view.clone());
        if created {
            self.notify_approver(&view);
        }
        // A decision stored before the waiter was there reached nobody.
        if let Some(a) = self.db.pending_row(&id).await?.and_then(|r| r.answer) {
            self.queue.resolve(&id, resolution(&a));
        }
        Ok(Opened::Waiting(Ask {
            id,
            waiter,
            deadline_us,
        }))
    }

    /// Tells the ask's webhook approver, if it has one with a `url`.
    fn notify_approver(&self, view: &PendingView) {
        let approver = view
            .approver
            .as_deref()
            .and_then(|a| self.cfg.approvers.iter().find(|w| w.id == a));
        if let Some(a) = approver {
            let url = format!("http://{}", self.cfg.listen);
            crate::notify::pending(&self.http, a, view, &url);
        }
    }

    /// The answer to an ask: whoever gave it, on whichever server; at the
    /// deadline, the timeout (stored, unless an answer got there first).
    pub async fn answer_of(&self, ask: &mut Ask) -> Result<Resolution, Error> {
        let left = u64::try_from(ask.deadline_us.saturating_sub(now_us())).unwrap_or(0);
        let res = match tokio::time::timeout(Duration::from_micros(left), ask.waiter.answer()).await
        {
            Ok(Some(res)) => Ok(res),
            // Taken off without an answer: as the database has it.
            Ok(None) => self
                .db
                .pending_row(&ask.id)
                .await?
                .and_then(|r| r.answer)
                .map(|a| resolution(&a))
                .ok_or_else(|| Error::AskGone(ask.id.clone())),
            Err(_) => self.time_out(&ask.id).await,
        }?;
        // The id is spent: asking again under it is refused.
        self.db.mark_delivered(&ask.id, now_us()).await?;
        Ok(res)
    }

    /// Times out the ask `id`; the answer that got there first, if one did.
    async fn time_out(&self, id: &str) -> Result<Resolution, Error> {
        let timeout = Resolution {
            answer: AnswerKind::Timeout,
            reason: None,
            reviewer: None,
            channel: None,
        };
        if self.store_answer(id, &timeout).await?.is_some() {
            return Ok(timeout);
        }
        let a = self
            .db
            .pending_row(id)
            .await?
            .and_then(|r| r.answer)
            .ok_or_else(|| Error::AskGone(id.to_owned()))?;
        let res = resolution(&a);
        self.queue.resolve(id, res.clone());
        Ok(res)
    }

    /// Stores `res` as the answer to `id` if none is yet, and gives it to
    /// the waiters here; the row as decided, or `None` when another
    /// answer was there first.
    pub(crate) async fn store_answer(
        &self,
        id: &str,
        res: &Resolution,
    ) -> Result<Option<PendingRow>, sqlx::Error> {
        let row = self
            .db
            .decide_pending(id, &stored(res, &self.replica))
            .await?;
        if row.is_some() {
            self.queue.resolve(id, res.clone());
        }
        Ok(row)
    }

    /// A person's answer to the ask `id` (the dashboard, a webhook): the
    /// first one stored wins and reaches whoever waits for it, here or on
    /// another server; a reject also rejects the session's other asks.
    pub async fn decide_ask(&self, id: &str, res: Resolution) -> Result<(), ResolveError> {
        let won = self
            .store_answer(id, &res)
            .await
            .map_err(ResolveError::Unstored)?;
        let Some(row) = won else {
            let row = self
                .db
                .pending_row(id)
                .await
                .map_err(ResolveError::Unstored)?;
            let Some(row) = row else {
                return Err(ResolveError::NotFound);
            };
            // Shown here still: no longer.
            self.take(id, Some(row), None);
            return Err(ResolveError::Resolved);
        };
        if rejects_session(&res)
            && let (Some(session), Some(a)) = (&row.session, &row.answer)
        {
            self.session_rejected(session, a.at_us);
            self.reject_session_asks(session, id).await;
        }
        Ok(())
    }

    /// A reject given at `at_us` in `session`: the asks waiting here in it
    /// step again, and are rejected.
    fn session_rejected(&self, session: &str, at_us: i64) {
        let at =
            jiff::Timestamp::from_microsecond(at_us).unwrap_or_else(|_| jiff::Timestamp::now());
        self.core.reject_session(session, at);
        self.session_changed.send_modify(|n| *n += 1);
    }

    /// Rejects the adapters' asks waiting in `session` but `except`, on
    /// every server (the servers' own asks see the reject when they step
    /// again).
    async fn reject_session_asks(&self, session: &str, except: &str) {
        let res = Resolution {
            answer: AnswerKind::Reject,
            reason: Some(REJECTED_EARLIER.into()),
            reviewer: None,
            channel: None,
        };
        let a = stored(&res, &self.replica);
        match self.db.decide_session_asks(session, except, &a).await {
            Ok(ids) => {
                for id in ids {
                    self.queue.resolve(&id, res.clone());
                }
            }
            // They wait on for a person: nothing is allowed.
            Err(e) => eprintln!("aileron serve: the session's other asks cannot be rejected: {e}"),
        }
    }

    /// After an "always" to the ask `id`: the session's approvals, stored
    /// for the other servers (and this one, restarted).
    pub(crate) async fn publish_grants(&self, id: &str, session: &str) {
        let grants = self.core.approvals(session);
        let Ok(text) = serde_json::to_string(&grants) else {
            return;
        };
        if let Err(e) = self.db.set_grants(id, &text).await {
            eprintln!("aileron serve: an \"always\" answer cannot be shared: {e}");
        }
    }

    /// The "always" answers stored for a session this server has not seen.
    pub(crate) async fn restore_grants(&self, session: &str) {
        let Ok(rows) = self.db.session_grants(session).await else {
            return;
        };
        for text in rows {
            if let Ok(grants) = serde_json::from_str::<Vec<SavedApproval>>(&text) {
                self.core.remember_approvals(session, grants);
            }
        }
    }

    /// Brings this server's view of the ask `id` to the database's `row`;
    /// `event` is what the database announced about it.
    fn take(&self, id: &str, row: Option<PendingRow>, event: Option<&str>) {
        let Some(row) = row else {
            self.queue.remove(id);
            return;
        };
        let Some(a) = &row.answer else {
            if let Ok(view) = serde_json::from_str(&row.view) {
                self.queue.show(view);
            }
            return;
        };
        let res = resolution(a);
        self.queue.resolve(id, res.clone());
        let Some(session) = &row.session else {
            return;
        };
        if event == Some("decided") && rejects_session(&res) {
            self.session_rejected(session, a.at_us);
        }
        if event == Some("changed")
            && self.core.knows(session)
            && let Some(grants) = row
                .grants
                .as_deref()
                .and_then(|g| serde_json::from_str::<Vec<SavedApproval>>(g).ok())
        {
            self.core.remember_approvals(session, grants);
            self.session_changed.send_modify(|n| *n += 1);
        }
    }

    /// What the database announced on [`PENDING_CHANNEL`].
    async fn on_pending(&self, payload: &str) {
        #[derive(serde::Deserialize)]
        struct Note {
            e: String,
            id: String,
            owner: Option<String>,
            by: Option<String>,
        }
        let Ok(note) = serde_json::from_str::<Note>(payload) else {
            return;
        };
        let mine = |who: &Option<String>| who.as_deref() == Some(self.replica.as_str());
        // What this server did itself, it has done here already.
        match note.e.as_str() {
            "new" if mine(&note.owner) => return,
            "decided" if mine(&note.by) => return,
            _ => {}
        }
        match self.db.pending_row(&note.id).await {
            Ok(row) => self.take(&note.id, row, Some(&note.e)),
            // The next resync catches up.
            Err(e) => eprintln!("aileron serve: cannot read the ask `{}`: {e}", note.id),
        }
    }

    /// Shows every ask waiting in the database, and ends those shown
    /// here that no longer wait.
    pub(crate) async fn resync(&self) -> Result<(), sqlx::Error> {
        let rows = self.db.waiting_rows().await?;
        let waiting: HashSet<String> = rows.iter().map(|r| r.id.clone()).collect();
        for row in rows {
            if let Ok(view) = serde_json::from_str(&row.view) {
                self.queue.show(view);
            }
        }
        for id in self.queue.ids() {
            if !waiting.contains(&id) {
                let row = self.db.pending_row(&id).await?;
                self.take(&id, row, None);
            }
        }
        Ok(())
    }

    /// Times out the asks past their deadline whose own server did not.
    async fn time_out_overdue(&self) {
        let before = now_us().saturating_sub(micros(SWEEP_GRACE));
        let Ok(ids) = self.db.overdue_asks(before, SWEEP_BATCH).await else {
            return;
        };
        for id in ids {
            let _ = self.time_out(&id).await;
        }
    }
}

/// Starts keeping this server in step with the database: shows the asks
/// waiting there (made before a restart, or by the other servers), and
/// starts the sweep and, on PostgreSQL, the listener, which LISTENs before
/// this returns.
pub async fn start(app: &Arc<App>) -> Result<(), Error> {
    let listener = match app.db.postgres() {
        Some(pool) => {
            let mut l = sqlx::postgres::PgListener::connect_with(pool).await?;
            l.listen_all([PENDING_CHANNEL, RULES_CHANNEL]).await?;
            Some(l)
        }
        None => None,
    };
    app.resync().await?;
    if let Some(l) = listener {
        tokio::spawn(listen(Arc::downgrade(app), l, app.shutdown.clone()));
    }
    tokio::spawn(sweep(Arc::downgrade(app), app.shutdown.clone()));
    Ok(())
}

/// The listener: what the database announces, until the server stops.
async fn listen(
    app: Weak<App>,
    mut listener: sqlx::postgres::PgListener,
    mut stop: watch::Receiver<bool>,
) {
    let mut failing = false;
    loop {
        let got = tokio::select! {
            got = listener.try_recv() => got,
            _ = stop.wait_for(|s| *s) => return,
        };
        let Some(app) = app.upgrade() else { return };
        match got {
            Ok(Some(n)) => {
                failing = false;
                match n.channel() {
                    PENDING_CHANNEL => app.on_pending(n.payload()).await,
                    RULES_CHANNEL => {
                        if let Ok(v) = n.payload().parse() {
                            app.rules_version_seen(v).await;
                        }
                    }
                    _ => {}
                }
            }
            // The connection was lost and made again: what was announced
            // meanwhile is not, read it.
            Ok(None) => {
                let _ = app.resync().await;
                if let Ok(v) = app.db.rules_version().await {
                    app.rules_version_seen(v).await;
                }
            }
            Err(sqlx::Error::PoolClosed) => return,
            Err(e) => {
                if !failing {
                    eprintln!(
                        "aileron serve: not listening to the database (tries again every second): {e}"
                    );
                }
                failing = true;
                drop(app);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
            }
        }
    }
}

/// Every second: the asks past their deadline; on PostgreSQL every 5 s
/// the waiting asks again; every 10 minutes the old decided ones deleted.
async fn sweep(app: Weak<App>, mut stop: watch::Receiver<bool>) {
    let mut resynced = Instant::now();
    let mut pruned: Option<Instant> = None;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(SWEEP) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let Some(app) = app.upgrade() else { return };
        app.time_out_overdue().await;
        if app.db.postgres().is_some() && resynced.elapsed() >= RESYNC {
            let _ = app.resync().await;
            resynced = Instant::now();
        }
        if pruned.is_none_or(|t| t.elapsed() >= PRUNE) {
            let before = now_us().saturating_sub(micros(KEEP_DECIDED));
            let _ = app.db.prune_decided_asks(before).await;
            pruned = Some(Instant::now());
        }
    }
}
