//! The server's state and what it does, independent of HTTP: rules (stored,
//! validated, compiled, exported), policies per working directory, session
//! state, evaluation with human approval, the action log.

use crate::auth::{self, Caller, Role};
use crate::db::{ActionRow, Db};
use crate::pending::{AnswerKind, JudgeView, PendingView, Queue, Resolution};
use crate::projects::Project;
use crate::replicas::{NewAsk, Opened};
use crate::rules::{Invalid, Saved, StoredRule};
use crate::writer::WriteReq;
use crate::{Config, Error, PolicyError};
use aileron_audit::{AuditAction, AuditRecord, Masker};
use aileron_config::LoadOptions;
use aileron_config::server_rules::{self, RuleEntry};
use aileron_decision::{
    AlwaysScope, Answer, Channel, Core, Decided, Origin, Outcome, Pending, Step, Subject,
};
use aileron_engine::{
    Action, Decision, Diagnostics, LineContext, Policy, Rule, Verdict, VerdictSource,
};
use arc_swap::ArcSwap;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, oneshot};

/// Actions of a session kept for `rate` matchers.
const HISTORY_LEN: usize = 1024;
/// How often a cached policy's files are checked for changes.
const RECHECK: Duration = Duration::from_secs(1);
/// A cached policy is reloaded from its files at least this often (new
/// language files, new settings file).
const RELOAD: Duration = Duration::from_secs(30);
/// Policies of this many working directories are kept.
const MAX_POLICIES: usize = 1024;

/// The compiled rules of layer 7, as one snapshot.
pub struct RuleSet {
    pub generation: u64,
    pub rules: Vec<StoredRule>,
}

impl RuleSet {
    pub fn compiled(&self) -> Vec<Rule> {
        self.rules.iter().map(|r| r.rule.clone()).collect()
    }
}

/// A policy ready for one working directory.
pub struct Resolved {
    pub policy: Policy,
    pub project_file: Option<PathBuf>,
    pub audit_path: PathBuf,
}

struct Cached {
    generation: u64,
    result: Result<Arc<Resolved>, PolicyError>,
    base: Option<Arc<(Policy, Option<PathBuf>, PathBuf)>>,
    stamps: Vec<(PathBuf, Option<(SystemTime, u64)>)>,
    checked_at: Instant,
    loaded_at: Instant,
}

/// Everything a request handler needs.
pub struct App {
    pub cfg: Config,
    pub db: Db,
    pub rules: ArcSwap<RuleSet>,
    rules_lock: tokio::sync::Mutex<()>,
    /// Read on every evaluation, replaced (copied) when one is (re)loaded.
    policies: ArcSwap<HashMap<String, Arc<Cached>>>,
    /// Sessions' approvals, history and rejects, and the decision itself.
    pub(crate) core: Core,
    /// Bumped when an answer changed a session (an "always", a reject):
    /// the asks waiting in it step again (the cascade).
    pub(crate) session_changed: tokio::sync::watch::Sender<u64>,
    /// The LLM judges of `judge` rules and their verdicts (in memory, and
    /// in the database's `judge_verdicts`).
    judges: aileron_judge::Bench,
    pub queue: Arc<Queue>,
    /// This server among those sharing the database (`replicas`): a
    /// random id, in the rows it writes to `pending_actions`.
    pub replica: String,
    pub(crate) http: crate::notify::HttpClient,
    /// Read on every request, replaced (copied) when a new token is seen.
    tokens: ArcSwap<HashMap<String, Role>>,
    writer: mpsc::Sender<WriteReq>,
    masker: Masker,
    /// The database's `rules_version` the current rule set was read at.
    rules_seen: AtomicI64,
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// Counters (`/metrics`) and what readiness checks against.
    pub ops: crate::ops::Ops,
    /// Sessions being restored from the log: one restore each, the
    /// session's other requests wait for it.
    restoring: std::sync::Mutex<HashMap<String, Arc<tokio::sync::OnceCell<()>>>>,
}

/// The final answer to `POST /api/evaluate`.
#[derive(Debug, serde::Serialize)]
pub struct EvalOutcome {
    pub id: String,
    /// `allow` or `deny`: what the agent must do.
    pub decision: Decision,
    pub source: VerdictSource,
    pub rule: Option<String>,
    pub reason: String,
    pub approver: Option<String>,
    /// The policy's verdict before any human.
    pub verdict: Verdict,
    /// What happened to an ask: approved-once, approved-always-session,
    /// rejected, corrected, timeout, ...
    pub outcome: Option<String>,
    pub feedback: Option<String>,
    pub reviewer: Option<String>,
}

pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

fn deny(reason: impl Into<String>) -> Verdict {
    Verdict {
        decision: Decision::Deny,
        source: VerdictSource::Default,
        rule: None,
        reason: reason.into(),
        approver: None,
    }
}

impl App {
    pub async fn new(
        cfg: Config,
        db: Db,
        shutdown: tokio::sync::watch::Receiver<bool>,
    ) -> Result<Arc<App>, Error> {
        let judges = judge_bench(&cfg, &db);
        let app = Arc::new(App {
            cfg,
            db: db.clone(),
            rules: ArcSwap::from_pointee(RuleSet {
                generation: 0,
                rules: Vec::new(),
            }),
            rules_lock: tokio::sync::Mutex::new(()),
            policies: ArcSwap::default(),
            core: Core::new(),
            session_changed: tokio::sync::watch::channel(0).0,
            judges,
            queue: Arc::new(Queue::default()),
            replica: auth::new_uuid(),
            http: crate::notify::client(),
            tokens: ArcSwap::default(),
            writer: crate::writer::spawn(db.clone()),
            masker: Masker::new(Vec::new()),
            rules_seen: AtomicI64::new(-1),
            shutdown,
            ops: crate::ops::Ops::default(),
            restoring: std::sync::Mutex::default(),
        });
        app.reload_rules().await?;
        Ok(app)
    }

    fn home(&self) -> String {
        self.cfg.home.to_string_lossy().into_owned()
    }

    // ---- tokens ----------------------------------------------------------

    /// The caller a bearer token stands for, if it is known.
    pub async fn caller(&self, token: &str) -> Result<Option<Caller>, Error> {
        let hash = auth::token_hash(token);
        let id = hash[..16].to_owned();
        let known = self.tokens.load().get(&hash).copied();
        let role = match known {
            Some(r) => Some(r),
            None => {
                let role = self
                    .db
                    .token_role(&hash)
                    .await?
                    .and_then(|r| Role::parse(&r));
                if let Some(r) = role {
                    self.tokens.rcu(|t| {
                        let mut t = if t.len() > 10_000 {
                            HashMap::new()
                        } else {
                            HashMap::clone(t)
                        };
                        t.insert(hash.clone(), r);
                        t
                    });
                }
                role
            }
        };
        Ok(role.map(|role| Caller { role, id }))
    }

    // ---- rules -----------------------------------------------------------

    /// Reads every rule from the database and compiles them. A stored rule
    /// that no longer compiles is left out and reported.
    pub async fn reload_rules(&self) -> Result<(), Error> {
        let _guard = self.rules_lock.lock().await;
        let version = self.db.rules_version().await?;
        let rows = self.db.rules().await?;
        let home = self.home();
        let mut rules = Vec::new();
        for row in &rows {
            match StoredRule::from_row(row, &home) {
                Ok(r) => rules.push(r),
                Err(e) => eprintln!("aileron serve: a stored rule does not load, left out: {e}"),
            }
        }
        let generation = self.rules.load().generation + 1;
        self.rules.store(Arc::new(RuleSet { generation, rules }));
        self.rules_seen.store(version, Ordering::SeqCst);
        Ok(())
    }

    /// Our own write made `version`: no reload is needed for it, unless
    /// another process wrote in between (then the watch reloads).
    fn saw_own_write(&self, version: i64) {
        let _ = self.rules_seen.compare_exchange(
            version - 1,
            version,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }

    /// Reloads the rules when the database's `version` is not the one they
    /// were read at.
    pub(crate) async fn rules_version_seen(&self, version: i64) {
        if version == self.rules_seen.load(Ordering::SeqCst) {
            return;
        }
        if let Err(e) = self.reload_rules().await {
            eprintln!("aileron serve: cannot reload the rules: {e}");
        } else {
            self.export_rules().await;
        }
    }

    /// Reloads the rules when another process (another server on the same
    /// PostgreSQL, `aileron rules import`) changed them; checks every
    /// second (on PostgreSQL, the database also says so at once: `replicas`).
    pub fn spawn_rules_watch(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let mut stop = self.shutdown.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
                let Some(app) = weak.upgrade() else { return };
                if let Ok(v) = app.db.rules_version().await {
                    app.rules_version_seen(v).await;
                }
            }
        });
    }

    /// The server's own policy (its `--policy` or working directory), used
    /// to check that rules compile together with a file policy.
    async fn default_base(&self) -> Policy {
        let opts = self.load_options(None);
        let loaded = tokio::task::spawn_blocking(move || aileron_config::load(&opts, None)).await;
        match loaded {
            Ok(Ok(l)) => l.policy,
            _ => Policy::compile(Vec::new(), &self.load_options(None).environment())
                .expect("the built-in rules compile"),
        }
    }

    /// The judges (`judges:`) of the server's own policy, which a stored
    /// `judge` rule may name.
    pub async fn judges_defined(&self) -> Vec<aileron_engine::JudgeDef> {
        self.default_base().await.judges.into_values().collect()
    }

    /// Validates `entries` (new or changed) against the stored rules and
    /// stores them in one transaction; refuses all of them if one is
    /// invalid. The linter's warnings about them come with what was saved.
    pub async fn upsert_rules(
        &self,
        entries: Vec<RuleEntry>,
        caller: Option<&Caller>,
    ) -> Result<Saved, Invalid> {
        let home = self.home();
        let _guard = self.rules_lock.lock().await;
        let current = self.rules.load_full();
        let now = aileron_audit::now_rfc3339();
        let mut fresh = Vec::new();
        let mut errors = Vec::new();
        for e in entries {
            if e.id.trim().is_empty() {
                return Err(Invalid::msg("a rule needs a non-empty `id`"));
            }
            match e.compile(&format!("rules/{}", e.id), &home) {
                Ok(rule) => {
                    let old = current.rules.iter().find(|r| r.entry.id == e.id);
                    fresh.push(StoredRule {
                        created_by: old
                            .map_or_else(|| caller.map(|c| c.id.clone()), |o| o.created_by.clone()),
                        created_at: old.map_or_else(|| now.clone(), |o| o.created_at.clone()),
                        updated_at: now.clone(),
                        entry: e,
                        rule,
                    });
                }
                Err(d) => errors.extend(d),
            }
        }
        if !errors.is_empty() {
            return Err(Invalid::diags(errors));
        }
        // The whole layer as it would be, compiled over the server's own policy.
        let next: Vec<StoredRule> = fresh
            .iter()
            .filter(|f| !current.rules.iter().any(|r| r.entry.id == f.entry.id))
            .cloned()
            .collect();
        // Keep positions: replace in place where the id existed.
        let mut ordered: Vec<StoredRule> = Vec::new();
        for r in current.rules.iter() {
            match fresh.iter().find(|f| f.entry.id == r.entry.id) {
                Some(f) => ordered.push(f.clone()),
                None => ordered.push(r.clone()),
            }
        }
        ordered.extend(next);
        let base = self.default_base().await;
        let policy = base
            .with_rules(ordered.iter().map(|r| r.rule.clone()).collect())
            .map_err(Invalid::diags)?;
        let ids: Vec<&str> = fresh.iter().map(|r| r.entry.id.as_str()).collect();
        let warnings = crate::rules::warnings_about(&policy, &ids);
        let writes: Vec<_> = fresh.iter().map(|r| r.write(&now)).collect();
        let version = self
            .db
            .upsert_rules(&writes)
            .await
            .map_err(|e| Invalid::msg(format!("database error: {e}")))?;
        self.saw_own_write(version);
        self.publish_rules(ordered).await;
        Ok(Saved {
            rules: fresh,
            warnings,
        })
    }

    /// The linter's warnings about a draft rule of the rule editor: the
    /// stored rules with it saved, over the server's own policy. None when
    /// they do not compile together (saving says why).
    pub async fn draft_warnings(&self, draft: Rule) -> Vec<aileron_engine::Diagnostic> {
        let id = draft.id.clone();
        let rules = crate::rules::with_draft(&self.rules.load_full().rules, draft);
        match self.default_base().await.with_rules(rules) {
            Ok(policy) => crate::rules::warnings_about(&policy, &[&id]),
            Err(_) => Vec::new(),
        }
    }

    pub async fn delete_rule(&self, id: &str) -> Result<bool, Error> {
        let _guard = self.rules_lock.lock().await;
        let (n, version) = self.db.delete_rule(id).await?;
        self.saw_own_write(version);
        let current = self.rules.load_full();
        let rest: Vec<StoredRule> = current
            .rules
            .iter()
            .filter(|r| r.entry.id != id)
            .cloned()
            .collect();
        self.publish_rules(rest).await;
        Ok(n > 0)
    }

    /// Makes a new rule set current (the next evaluation sees it) and
    /// exports it to `$AILERON_DATA/server-rules.yaml`.
    async fn publish_rules(&self, rules: Vec<StoredRule>) {
        let generation = self.rules.load().generation + 1;
        let text = server_rules::render(&rules.iter().map(|r| r.entry.clone()).collect::<Vec<_>>());
        self.rules.store(Arc::new(RuleSet { generation, rules }));
        let path = self.cfg.data_dir.join(server_rules::SERVER_RULES_FILE);
        let res =
            tokio::task::spawn_blocking(move || write_atomic(&path, text.as_bytes(), 0o644)).await;
        if let Ok(Err(e)) = res {
            eprintln!("aileron serve: cannot export the rules: {e}");
        }
    }

    /// Writes the export once at start.
    pub async fn export_rules(&self) {
        let rules = self.rules.load_full();
        self.publish_rules(rules.rules.clone()).await;
    }

    // ---- policies --------------------------------------------------------

    /// How to load the server's own policy (`None`: its `--policy`, else
    /// the `aileron.yaml` found from the directory it runs in) or a
    /// registered project's.
    fn load_options(&self, project: Option<&Project>) -> LoadOptions {
        let mut opts = LoadOptions::from_env(self.cfg.cwd.clone());
        opts.home = self.cfg.home.clone();
        opts.data_dir = self.cfg.data_dir.clone();
        opts.user_settings = self.cfg.user_settings;
        // The server adds its database rules itself, fresh.
        opts.server_rules = false;
        match project {
            Some(p) => {
                opts.cwd = p.root.clone();
                opts.policy_path = Some(p.policy.clone());
            }
            None => opts.policy_path = self.cfg.policy.clone(),
        }
        opts
    }

    /// The policy in force for an action's working directory, with the
    /// database rules as layer 7: the registered project it lies in, else
    /// the server's own policy. A project's policy takes its judges and its
    /// audit log from the server's own (`projects`: the trust boundary).
    pub async fn policy_for(&self, cwd: Option<&str>) -> Result<Arc<Resolved>, Error> {
        let project = crate::projects::select(&self.cfg.projects, cwd)
            .map_err(|e| Error::Policy(PolicyError::Cwd(e)))?;
        let own = self.resolve(None, None).await?;
        match project {
            None => Ok(own),
            Some(p) => self.resolve(Some(p), Some(&own)).await,
        }
    }

    /// The cached policy of the server (`project: None`) or of a project,
    /// loaded again when its files or the server's rules changed. `own`:
    /// the server's policy, whose judges and audit log a project's takes.
    async fn resolve(
        &self,
        project: Option<&Project>,
        own: Option<&Resolved>,
    ) -> Result<Arc<Resolved>, Error> {
        let key = project
            .map(|p| p.root.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rules = self.rules.load_full();
        let cached = self.policies.load().get(&key).cloned();
        if let Some(c) = &cached
            && c.checked_at.elapsed() < RECHECK
            && c.generation == rules.generation
        {
            return c.result.clone().map_err(Error::Policy);
        }
        let opts = self.load_options(project);
        let mut base = None;
        if let Some(c) = &cached {
            let unchanged = c.loaded_at.elapsed() < RELOAD
                && c.base.is_some()
                && stamps_of(&opts, c.base.as_ref().map(|b| &b.0)) == c.stamps;
            if unchanged {
                base = c.base.clone();
            }
        }
        let base = match base {
            Some(b) => Ok(b),
            None => {
                let o = opts.clone();
                let confined = match (project, own) {
                    (Some(p), Some(own)) => Some((p.confine(), own.policy.judges.clone())),
                    _ => None,
                };
                let loaded = tokio::task::spawn_blocking(move || match confined {
                    Some((Ok(confine), judges)) => {
                        aileron_config::load_confined(&o, &confine, judges)
                    }
                    Some((Err(e), _)) => Err(Diagnostics(vec![aileron_engine::Diagnostic::file(
                        &o.cwd.to_string_lossy(),
                        format!("the project's root cannot be read: {e}"),
                    )])),
                    None => aileron_config::load(&o, None),
                })
                .await?;
                match loaded {
                    Ok(l) => {
                        let audit = match own {
                            Some(own) => own.audit_path.clone(),
                            None => aileron_config::audit_log_path(
                                &l.policy,
                                l.project_file.as_deref(),
                                &opts,
                            ),
                        };
                        Ok(Arc::new((l.policy, l.project_file, audit)))
                    }
                    Err(d) => Err(d),
                }
            }
        };
        let loaded_at = match (&cached, &base) {
            (Some(c), Ok(b)) if c.base.as_ref().is_some_and(|cb| Arc::ptr_eq(cb, b)) => c.loaded_at,
            _ => Instant::now(),
        };
        let (result, base) = match base {
            Err(d) => (Err(PolicyError::DoesNotLoad(d)), None),
            Ok(b) => {
                let combined = b.0.with_rules(rules.compiled());
                let r = match combined {
                    Ok(policy) => Ok(Arc::new(Resolved {
                        policy,
                        project_file: b.1.clone(),
                        audit_path: b.2.clone(),
                    })),
                    Err(d) => Err(PolicyError::ConflictsWithRules(Diagnostics(d))),
                };
                (r, Some(b))
            }
        };
        let stamps = stamps_of(&opts, base.as_ref().map(|b| &b.0));
        let entry = Arc::new(Cached {
            generation: rules.generation,
            result: result.clone(),
            base,
            stamps,
            checked_at: Instant::now(),
            loaded_at,
        });
        self.policies.rcu(|map| {
            let mut map = if map.len() >= MAX_POLICIES {
                HashMap::new()
            } else {
                HashMap::clone(map)
            };
            map.insert(key.clone(), Arc::clone(&entry));
            map
        });
        result.map_err(Error::Policy)
    }

    // ---- evaluation ------------------------------------------------------

    /// Gives a session not seen since the start its latest actions from
    /// the log, so `rate` windows survive a restart, and its "always"
    /// answers.
    async fn restore_session(&self, id: &str) {
        if self.core.knows(id) {
            return;
        }
        // Once, however many of its requests come meanwhile (32 clients of
        // a new session each read its log and parsed a thousand actions).
        let once = {
            let mut m = self.restoring.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(m.entry(id.to_owned()).or_default())
        };
        once.get_or_init(|| self.load_session(id)).await;
        let mut m = self.restoring.lock().unwrap_or_else(|p| p.into_inner());
        m.remove(id);
    }

    /// Reads the session's latest actions and its grants into the core.
    async fn load_session(&self, id: &str) {
        let rows = self
            .db
            .actions(&crate::db::ActionQuery {
                session: Some(id.to_owned()),
                limit: HISTORY_LEN as i64,
                ..Default::default()
            })
            .await
            .unwrap_or_default();
        let home = self.home();
        let mut history = Vec::new();
        for row in rows.iter().rev() {
            if let Some(a) = row
                .action
                .as_deref()
                .and_then(|a| serde_json::from_str::<Action>(a).ok())
            {
                history.extend(matchable_actions(a, &home));
            }
        }
        let skip = history.len().saturating_sub(HISTORY_LEN);
        if !self.core.knows(id) {
            self.core.seed_history(id, history.into_iter().skip(skip));
            // Its "always" answers given on another server, or before a restart.
            self.restore_grants(id).await;
        }
    }

    /// Fills what the client left out: id, timestamp, normalized fields.
    pub fn prepare(&self, action: &mut Action) {
        if action.id.is_empty() {
            action.id = auth::new_uuid();
        }
        if action.timestamp.is_none() {
            // To the millisecond, as the audit log writes its times.
            action.timestamp = aileron_audit::now_rfc3339().parse().ok();
        }
        action.normalize();
    }

    /// Decides an action; an ask waits for a human (or the timeout).
    pub async fn evaluate(&self, mut action: Action, caller: &Caller) -> EvalOutcome {
        let started = Instant::now();
        let given = action.timestamp.is_some();
        self.prepare(&mut action);
        // The time the client gave, else the server's (to the millisecond).
        let time = match action.timestamp {
            Some(t) if given => t.to_string(),
            Some(t) => format!("{t:.3}"),
            None => aileron_audit::now_rfc3339(),
        };
        let resolved = self.policy_for(action.session.cwd.as_deref()).await;
        if let Some(id) = &action.session.id {
            self.restore_session(id).await;
        }
        let (mut decided, policy_verdict, audit_path, reviewer) = match &resolved {
            Ok(r) => {
                let (decided, policy_verdict, reviewer) =
                    self.decide(&r.policy, &action, caller).await;
                (decided, policy_verdict, r.audit_path.clone(), reviewer)
            }
            Err(e) => {
                let verdict = deny(e.to_string());
                let decided = Decided::refused(None, verdict.clone(), action.clone(), None);
                (
                    decided,
                    verdict,
                    self.cfg.data_dir.join("audit.jsonl"),
                    None,
                )
            }
        };
        // The API's log keeps the action as it was submitted.
        decided.action = action.clone();
        let record = decided.record(&Origin {
            time: &time,
            adapter: "server",
            session: action.session.id.as_deref(),
            agent: action.session.agent.as_deref(),
            cwd: action.session.cwd.as_deref(),
            latency_us: started.elapsed().as_micros() as u64,
        });
        let mut out = EvalOutcome {
            id: action.id.clone(),
            decision: decided.decision(),
            source: decided.verdict.source,
            rule: decided.verdict.rule.clone(),
            reason: decided.verdict.reason.clone(),
            approver: decided.verdict.approver.clone(),
            verdict: policy_verdict,
            outcome: decided.outcome.map(|o| o.as_str().to_owned()),
            feedback: decided.feedback.clone(),
            reviewer,
        };
        if let Err(e) = self
            .record(record, Some(&action), Some(caller), Some(audit_path))
            .await
        {
            // A decision that cannot be recorded does not let the action run.
            out.decision = Decision::Deny;
            out.source = VerdictSource::Default;
            out.reason = format!("the decision cannot be recorded: {e}");
        }
        out
    }

    /// Steps `action` through the decision core, asking on the dashboard.
    /// Returns the decision, the policy's verdict before any human, and
    /// who answered.
    async fn decide(
        &self,
        policy: &Policy,
        action: &Action,
        caller: &Caller,
    ) -> (Decided, Verdict, Option<String>) {
        let cwd = action.session.cwd.clone().unwrap_or_else(|| "/".into());
        let req = aileron_decision::Request {
            session: action.session.id.as_deref(),
            subject: Subject::Actions(&action.summary, std::slice::from_ref(action)),
            cx: LineContext {
                cwd: &cwd,
                session: &action.session,
                timestamp: action.timestamp,
                id: &action.id,
                exe: None,
            },
            now: jiff::Timestamp::now(),
            agent_asks: false,
            repeat: false,
            traffic: false,
            waiting_since: None,
            prompt_budget: None,
            default_timeout: self.cfg.default_timeout,
            adjust: None,
        };
        let mut step = self.core.decide(policy, &req);
        let mut asked: Option<Verdict> = None;
        let mut reviewer = None;
        // The judge that sent the ask on to a person, and what it said.
        let mut judged: Option<JudgeView> = None;
        loop {
            match step {
                Step::Done(d) => {
                    let policy_verdict = asked.unwrap_or_else(|| d.verdict.clone());
                    return (d, policy_verdict, reviewer);
                }
                // A `judge` rule's judge first (a blocking HTTP call).
                Step::Ask(pending) if pending.judge.is_some() => {
                    asked.get_or_insert_with(|| pending.verdict.clone());
                    let judge = pending.judge.as_ref().map(|j| j.config());
                    step = tokio::task::block_in_place(|| self.core.judge(&self.judges, pending));
                    self.ops.metrics.judge_called(&step);
                    if let (Step::Ask(p), Some(judge)) = (&step, judge) {
                        judged = Some(judge_view(&judge, &p.verdict.reason));
                    }
                }
                Step::Ask(pending) => {
                    asked.get_or_insert_with(|| pending.verdict.clone());
                    // Boxed: the wait's state is most of this future's
                    // size, and most evaluations never ask.
                    step = Box::pin(self.ask_dashboard(
                        policy,
                        &req,
                        action,
                        pending,
                        judged.take(),
                        &mut reviewer,
                        caller,
                    ))
                    .await;
                }
            }
        }
    }

    /// Puts an ask in the approval queue and waits for its answer, or for
    /// an answer elsewhere in the session that decides it (the cascade).
    /// `caller`: the token asking, counted against the asks' caps.
    #[allow(clippy::too_many_arguments)]
    async fn ask_dashboard(
        &self,
        policy: &Policy,
        req: &aileron_decision::Request<'_>,
        action: &Action,
        pending: Pending,
        judge: Option<JudgeView>,
        reviewer: &mut Option<String>,
        caller: &Caller,
    ) -> Step {
        let verdict = &pending.verdict;
        let reason = if verdict.decision == Decision::Judge && judge.is_none() {
            format!(
                "{} (no judge is defined for this rule: a human decides)",
                verdict.reason
            )
        } else {
            verdict.reason.clone()
        };
        let view = PendingView {
            id: action.id.clone(),
            action: self.masked_action(action),
            session: action.session.id.clone(),
            rule: verdict.rule.clone(),
            reason,
            approver: verdict.approver.clone(),
            created_at: aileron_audit::now_rfc3339(),
            timeout_secs: pending.question.timeout.as_secs(),
            on_timeout: if pending.question.allow_on_timeout {
                "allow"
            } else {
                "deny"
            }
            .to_owned(),
            origin: "evaluate".into(),
            judge,
            token: Some(caller.id.clone()),
        };
        let ask = NewAsk {
            fingerprint: crate::replicas::fingerprint("evaluate", action),
            timeout: pending.question.timeout,
            view,
        };
        let mut ask = match self.open_ask(ask).await {
            Ok(Opened::Waiting(ask)) => ask,
            // Asked again (through another server): answered meanwhile.
            Ok(Opened::Decided(res)) => {
                return self
                    .apply_answer(policy, req, action, pending, res, reviewer)
                    .await;
            }
            Ok(Opened::Taken) => {
                let why = deny(crate::replicas::id_taken(&action.id));
                return Step::Done(Decided::refused(
                    None,
                    why,
                    action.clone(),
                    Some(Outcome::DuplicateDenied),
                ));
            }
            // Too many asks of this session or token wait already.
            Ok(Opened::Full(why)) => {
                return Step::Done(Decided::refused(None, deny(why), action.clone(), None));
            }
            Err(e) => return self.unanswerable(policy, req, pending, &e),
        };
        let mut changed = self.session_changed.subscribe();
        let res = {
            let wait = self.answer_of(&mut ask);
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    res = &mut wait => break res,
                    Ok(()) = changed.changed(), if req.session.is_some() => {
                        let Step::Done(d) = self.core.resume(policy, req, pending.clone()) else {
                            continue;
                        };
                        let (answer, why) = if d.allow {
                            (AnswerKind::Once, "approved by an \"always\" answer in this session")
                        } else {
                            (AnswerKind::Reject, crate::replicas::REJECTED_EARLIER)
                        };
                        let cascade = Resolution {
                            answer,
                            reason: Some(why.into()),
                            reviewer: None,
                            channel: None,
                        };
                        // A person's answer that got there first wins (and
                        // one that cannot be stored is none: keep waiting).
                        if let Ok(Some(_)) = self.store_answer(&action.id, &cascade).await {
                            return Step::Done(d);
                        }
                    }
                }
            }
        };
        match res {
            Ok(res) => {
                self.apply_answer(policy, req, action, pending, res, reviewer)
                    .await
            }
            Err(e) => self.unanswerable(policy, req, pending, &e),
        }
    }

    /// An ask whose answer cannot be stored or read: denied, with why.
    fn unanswerable(
        &self,
        policy: &Policy,
        req: &aileron_decision::Request<'_>,
        pending: Pending,
        e: &Error,
    ) -> Step {
        let why = format!("the approval queue cannot be used ({e})");
        self.core.answer(
            policy,
            req,
            pending,
            Answer::Unavailable(why),
            Channel::Dashboard,
        )
    }

    /// Applies the answer to an ask of this server's: the decision, and
    /// for an "always" the session's new approvals, which the other
    /// servers on the database take too.
    async fn apply_answer(
        &self,
        policy: &Policy,
        req: &aileron_decision::Request<'_>,
        action: &Action,
        pending: Pending,
        res: Resolution,
        reviewer: &mut Option<String>,
    ) -> Step {
        reviewer.clone_from(&res.reviewer);
        let answer = match res.answer {
            AnswerKind::Once => Answer::Once,
            AnswerKind::Always => Answer::Always(AlwaysScope::Session, String::new()),
            AnswerKind::Reject => Answer::Reject,
            AnswerKind::Feedback => {
                Answer::Feedback(res.reason.clone().unwrap_or_else(|| "rejected".into()))
            }
            AnswerKind::Timeout => Answer::Timeout,
        };
        let always = matches!(answer, Answer::Always(..));
        let changes_session = matches!(
            answer,
            Answer::Always(..) | Answer::Reject | Answer::Feedback(_)
        );
        // A cascade's answer (no channel) came through the dashboard too.
        let channel = res.channel.clone().unwrap_or(Channel::Dashboard);
        let mut step = self.core.answer(policy, req, pending, answer, channel);
        if let (Step::Done(d), AnswerKind::Reject, Some(why)) = (&mut step, res.answer, &res.reason)
        {
            // The reviewer's words are the reason.
            d.verdict.reason.clone_from(why);
        }
        if always && let Some(session) = &action.session.id {
            self.publish_grants(&action.id, session).await;
        }
        if changes_session {
            self.session_changed.send_modify(|n| *n += 1);
        }
        step
    }

    pub fn masked_action(&self, action: &Action) -> Value {
        let mut v = serde_json::to_value(action).unwrap_or(Value::Null);
        self.masker.mask_value(&mut v);
        v
    }

    // ---- the action log --------------------------------------------------

    /// Waits (at most 10 s) until the log's writer has taken every
    /// decision sent to it; closing the pool then waits for the batch
    /// being written.
    pub async fn flush_log(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.writer.capacity() < self.writer.max_capacity() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    /// Stores a decision in the action log (and, with `audit_path`, appends
    /// it to the JSONL audit log). Returns the row's sequence number.
    pub async fn record(
        &self,
        record: AuditRecord,
        action: Option<&Action>,
        caller: Option<&Caller>,
        audit_path: Option<PathBuf>,
    ) -> Result<i64, Error> {
        let record = record.masked(&self.masker);
        let action_json = match action {
            Some(a) => self.masked_action(a),
            None => action_from_record(&record),
        };
        let ts_us = parse_time_us(&record.time).unwrap_or_else(now_us);
        let row = ActionRow {
            action_id: record.action.id.clone(),
            time: record.time.clone(),
            ts_us,
            session: record.session.clone(),
            agent: record.agent.clone(),
            adapter: record.adapter.clone(),
            kind: record.action.kind.clone(),
            summary: record.action.summary.clone(),
            decision: record.decision.clone(),
            outcome: record.outcome.clone(),
            source: record.source.clone(),
            rule: record.rule.clone(),
            reason: record.reason.clone(),
            approver: record.approver.clone(),
            latency_us: record.latency_us.min(i64::MAX as u64) as i64,
            submitted_by: caller.map(|c| c.id.clone()),
            record: record.to_json_line(),
            action: Some(action_json.to_string()),
        };
        let (done, rx) = oneshot::channel();
        self.writer
            .send(WriteReq {
                row,
                audit: audit_path,
                done,
            })
            .await
            .map_err(|_| Error::WriterStopped)?;
        rx.await.map_err(|_| Error::WriterStopped)?
    }
}

/// The server's judges: verdicts cached in memory and in the database;
/// API keys from the environment (or the configuration's, in tests).
fn judge_bench(cfg: &Config, db: &Db) -> aileron_judge::Bench {
    let bench = aileron_judge::Bench::with_store(crate::verdicts::DbVerdicts::new(db.clone()));
    match &cfg.judge_keys {
        Some(keys) => {
            let keys = keys.clone();
            bench.keys(move |var| keys.get(var))
        }
        None => bench,
    }
}

/// What a pending entry shows of the judge whose verdict was `ask`:
/// `reason` is the ask's (`judge NAME: WHAT IT SAID`).
fn judge_view(judge: &aileron_judge::JudgeConfig, reason: &str) -> JudgeView {
    let said = reason
        .strip_prefix(&format!("judge {}: ", judge.name))
        .unwrap_or(reason);
    JudgeView {
        name: judge.name.clone(),
        model: judge.model.clone(),
        reason: said.to_owned(),
    }
}

/// The actions a rule is matched against for an action: a shell line not
/// yet analysed stands for its simple commands.
pub fn matchable_actions(action: Action, home: &str) -> Vec<Action> {
    if action.kind == "shell.exec" && action.facet_str("shell", "binary").is_none() {
        let line = action
            .facet_str("shell", "line")
            .or_else(|| action.facet_str("shell", "command"))
            .map(str::to_owned);
        if let Some(line) = line {
            let cwd = action.session.cwd.clone().unwrap_or_else(|| "/".into());
            let cx = LineContext {
                cwd: &cwd,
                session: &action.session,
                timestamp: action.timestamp,
                id: &action.id,
                exe: None,
            };
            let acts = aileron_engine::command_line::shell_actions(&line, &cx, home).actions;
            if !acts.is_empty() {
                return acts;
            }
        }
    }
    vec![action]
}

/// An Action rebuilt from an audit record (for previews of records that
/// adapters sent).
pub fn action_from_record(rec: &AuditRecord) -> Value {
    let mut a = Action {
        id: rec.action.id.clone(),
        timestamp: rec.time.parse().ok(),
        kind: rec.action.kind.as_str().into(),
        summary: rec.action.summary.clone(),
        facets: rec.action.facets.clone(),
        ..Action::default()
    };
    a.session.id = rec.session.clone();
    a.session.agent = rec.agent.clone();
    a.session.cwd = rec.cwd.clone();
    a.normalize();
    serde_json::to_value(&a).unwrap_or(Value::Null)
}

/// An audit record for an action that has none yet (fields by hand).
pub fn audit_action(action: &Action) -> AuditAction {
    AuditAction::from_action(action)
}

/// Modification stamps of the files a policy came from, and of the
/// project file that would be found now.
fn stamps_of(
    opts: &LoadOptions,
    policy: Option<&Policy>,
) -> Vec<(PathBuf, Option<(SystemTime, u64)>)> {
    let mut paths: Vec<PathBuf> = policy
        .map(|p| {
            p.sources
                .iter()
                .filter(|(n, _)| n.starts_with('/'))
                .map(|(n, _)| PathBuf::from(n))
                .collect()
        })
        .unwrap_or_default();
    if opts.policy_path.is_none()
        && let Some(found) = aileron_config::find_project_file(&opts.cwd)
    {
        paths.push(found);
    }
    if opts.user_settings {
        paths.push(opts.data_dir.join("settings.yaml"));
    }
    paths
        .into_iter()
        .map(|p| {
            let stamp = std::fs::metadata(&p)
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())));
            (p, stamp)
        })
        .collect()
}

/// RFC 3339 to microseconds since the epoch.
pub fn parse_time_us(s: &str) -> Option<i64> {
    let ts: jiff::Timestamp = s.parse().ok()?;
    Some(ts.as_microsecond())
}

/// Writes a file by renaming a complete temporary file over it.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id()
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// Keeps the decision answer consistent for an adapter's enqueued ask.
pub fn answer_json(res: &Resolution) -> Value {
    let mut v = json!({"answer": res.answer.as_str()});
    if res.answer == AnswerKind::Feedback {
        v["feedback"] = json!(res.reason);
    } else if let Some(r) = &res.reason {
        v["reason"] = json!(r);
    }
    if let Some(r) = &res.reviewer {
        v["reviewer"] = json!(r);
    }
    v
}
