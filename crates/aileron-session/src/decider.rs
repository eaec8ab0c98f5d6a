//! Deciding one request for a session: a shell line (the shim, a hook's
//! shell tool) or any other action (a hook's file, web, MCP or other tool
//! call). Policy, session approvals, the doom-loop check, the human's
//! answer, the audit line.

use crate::amend;
use crate::prompt::{AlwaysScope, Answer, Prompter, Question, suggest_prefix};
use crate::protocol::{Request, Response};
use crate::remote::Remote;
use aileron_audit::{AuditAction, AuditLog, AuditRecord, Masker};
use aileron_config::LoadOptions;
use aileron_engine::action::FieldPath;
use aileron_engine::glob::Glob;
use aileron_engine::pattern::{Cond, Matcher};
use aileron_engine::{
    Action, CommandVerdict, Decision, LineContext, LineVerdict, Policy, Rule, Session, State,
    Verdict,
};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Identical lines in a row that make a doom loop (SPEC 10).
pub const DOOM_LOOP_THRESHOLD: usize = 3;
/// How long to wait for a human when neither the rule nor the settings say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Actions of a session kept for `rate` windows.
const HISTORY_LEN: usize = 1024;
/// Asks for one line before giving up on approving its parts one by one.
const MAX_PROMPTS_PER_LINE: usize = 8;

/// How a decider is set up.
pub struct Config {
    pub load: LoadOptions,
    pub cache_dir: Option<PathBuf>,
    pub session_id: Option<String>,
    pub agent: Option<String>,
    /// The shell to exec on allow.
    pub real_shell: String,
    /// Values of scrubbed variables: never written to the audit log.
    pub secrets: Vec<String>,
    /// Adapter name for the audit trail (`shim`).
    pub adapter: String,
}

#[derive(Default)]
struct SessionState {
    approvals: Vec<Rule>,
    /// What the approvals were made from, to save them (hooks live one call).
    saved_approvals: Vec<SavedApproval>,
    /// The session's latest actions, for `rate` matchers.
    history: VecDeque<Action>,
    recent: VecDeque<String>,
    /// Bumped by every "reject": requests waiting since before it are rejected too.
    reject_epoch: u64,
    /// When the last "reject" was given (Unix nanoseconds), for other processes.
    last_reject: u128,
}

/// An "always for this session" answer, as kept between hook processes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SavedApproval {
    /// Shell commands matching a command glob.
    Command { pattern: String, priority: i64 },
    /// Actions of `kind` whose fields equal these values.
    Action {
        kind: String,
        fields: Vec<(String, String)>,
        priority: i64,
    },
}

/// What a session remembers between the hook processes of one agent session.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SavedSession {
    #[serde(default)]
    pub approvals: Vec<SavedApproval>,
    #[serde(default)]
    pub recent: Vec<String>,
    #[serde(default)]
    pub history: Vec<Action>,
    #[serde(default)]
    pub last_reject: u128,
}

/// Actions of a hook session kept on disk for `rate` windows.
const SAVED_HISTORY_LEN: usize = 64;

/// What is being decided.
enum Subject<'a> {
    Line(&'a str),
    /// A tool call's description and its actions.
    Actions(&'a str, &'a [Action]),
}

/// The session's shared state; one per launch (or per shim call without one).
pub struct Decider {
    cfg: Config,
    /// Per agent session (hooks under one launch may report several).
    states: Mutex<HashMap<String, SessionState>>,
    /// One prompt at a time, even when the agent runs commands in parallel.
    prompt_lock: Mutex<()>,
    prompter: Box<dyn Prompter>,
    masker: Masker,
    /// A running `aileron serve`, when one is configured.
    remote: Option<Remote>,
    /// The latest policy, kept decoded for the next request while its
    /// sources are unchanged (the launch session decides many), and freed
    /// only when another replaces it: the shim execs with it still alive
    /// instead of spending longer freeing every rule than deciding took.
    last_policy: aileron_config::Memo,
    /// Processes running a decided command (the exec supervisor's view).
    pub(crate) contexts: crate::exec::Contexts,
    /// `real_shell` with its links resolved, as an exec names it.
    real_shell_path: String,
    /// The shim's file, under an exec supervisor (`trust_shim`).
    pub(crate) shim_exe: std::sync::OnceLock<String>,
    /// The `aileron` executable, whose `hook` an agent may run (`trust_aileron`).
    pub(crate) aileron_exe: std::sync::OnceLock<String>,
    /// When the launch started, and the project files the kernel locks (`pin_policy`).
    pinned: std::sync::OnceLock<(std::time::SystemTime, Vec<PathBuf>)>,
    /// Project files this session amended itself ("always" answers).
    amended: Mutex<Vec<PathBuf>>,
}

struct Outcome {
    allow: bool,
    /// The verdict's decision was handed to the agent to ask its human.
    agent_asks: bool,
    message: Option<String>,
    verdict: Verdict,
    action: Action,
    answer: Option<&'static str>,
}

impl Decider {
    pub fn new(cfg: Config, prompter: Box<dyn Prompter>) -> Decider {
        let masker = Masker::new(cfg.secrets.clone());
        let remote = Remote::discover(&cfg.load.data_dir);
        let real_shell_path = std::fs::canonicalize(&cfg.real_shell).map_or_else(
            |_| cfg.real_shell.clone(),
            |p| p.to_string_lossy().into_owned(),
        );
        Decider {
            contexts: crate::exec::Contexts::default(),
            shim_exe: std::sync::OnceLock::new(),
            aileron_exe: std::sync::OnceLock::new(),
            pinned: std::sync::OnceLock::new(),
            amended: Mutex::default(),
            real_shell_path,
            remote,
            cfg,
            states: Mutex::default(),
            prompt_lock: Mutex::new(()),
            prompter,
            masker,
            last_policy: aileron_config::Memo::default(),
        }
    }

    pub fn real_shell(&self) -> &str {
        &self.cfg.real_shell
    }

    /// The directory `aileron launch` started in: whose policy decides the
    /// execs that no decided command started.
    pub(crate) fn launch_cwd(&self) -> String {
        self.cfg.load.cwd.to_string_lossy().into_owned()
    }

    /// The real shell's file, as the kernel loads it.
    pub fn real_shell_path(&self) -> &str {
        &self.real_shell_path
    }

    /// The user's home directory, as the session was set up with it
    /// (agent wrappers are recognized against it).
    pub fn home(&self) -> std::borrow::Cow<'_, str> {
        self.cfg.load.home.to_string_lossy()
    }

    /// Decides `req`, asking the human when the policy says so, and writes the audit line.
    pub fn decide(&self, req: &Request) -> Response {
        let started = Instant::now();
        let key = self.session_key(req);
        let epoch = self.with_state(&key, |st| st.reject_epoch);
        let mut opts = self.cfg.load.clone();
        opts.cwd = PathBuf::from(&req.cwd);
        let now = now_rfc3339();
        let session = Session {
            id: req.session.clone().or_else(|| self.cfg.session_id.clone()),
            agent: req.agent.clone().or_else(|| self.cfg.agent.clone()),
            cwd: Some(req.cwd.clone()),
            ..Session::default()
        };
        let id = action_id();
        let actions: Vec<Action> = req
            .actions
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut a = a.clone();
                if a.id.is_empty() {
                    a.id = if req.actions.len() == 1 {
                        id.clone()
                    } else {
                        format!("{id}.{i}")
                    };
                }
                if a.timestamp.is_empty() {
                    a.timestamp = now.clone();
                }
                a.session = session.clone();
                a.normalize();
                a
            })
            .collect();
        let subject = if actions.is_empty() {
            Subject::Line(&req.line)
        } else {
            Subject::Actions(&req.line, &actions)
        };
        let rejected_meanwhile = req
            .waiting_since
            .is_some_and(|t| self.with_state(&key, |st| st.last_reject) > t);
        let loaded =
            aileron_config::load_with_memo(&opts, self.cfg.cache_dir.as_deref(), &self.last_policy);
        let loaded = loaded.map_err(|diags| {
            let first = diags.0.first().map(|d| d.headline()).unwrap_or_default();
            let more = if diags.0.len() > 1 {
                format!(" (and {} more)", diags.0.len() - 1)
            } else {
                String::new()
            };
            format!("the policy does not load: {first}{more}")
        });
        let loaded = loaded.and_then(|l| match self.untrusted_policy(l.project_file.as_deref()) {
            Some(why) => Err(why),
            None => Ok(l),
        });
        let (outcome, audit_path) = match loaded {
            Err(reason) => {
                let verdict = Verdict {
                    decision: Decision::Deny,
                    source: aileron_engine::VerdictSource::Default,
                    rule: None,
                    reason,
                    approver: None,
                };
                let message = Some(format!("aileron: denied: {}", verdict.reason));
                let outcome = Outcome::refused(
                    message,
                    verdict,
                    subject_action(&subject, &session, &now),
                    None,
                );
                (outcome, self.cfg.load.data_dir.join("audit.jsonl"))
            }
            Ok(loaded) => {
                let audit = aileron_config::audit_log_path(
                    &loaded.policy,
                    loaded.project_file.as_deref(),
                    &opts,
                );
                let cx = LineContext {
                    cwd: req.shell_cwd.as_deref().unwrap_or(&req.cwd),
                    session: &session,
                    timestamp: &now,
                    id: &id,
                    exe: req.exe.as_deref(),
                };
                let outcome = if rejected_meanwhile {
                    let lv = self.evaluate(&loaded.policy, &key, &subject, &cx);
                    let (verdict, action, _) = most_restrictive(&lv, None, &subject, &cx);
                    Outcome::refused(
                        Some(REJECTED_EARLIER.to_owned()),
                        verdict,
                        action,
                        Some("rejected"),
                    )
                } else {
                    self.decide_loaded(
                        &loaded.policy,
                        loaded.project_file.as_deref(),
                        req,
                        &key,
                        &subject,
                        &cx,
                        epoch,
                    )
                };
                (outcome, audit)
            }
        };
        let record = AuditRecord {
            time: now.clone(),
            session: session.id.clone(),
            agent: session.agent.clone(),
            adapter: req
                .adapter
                .clone()
                .unwrap_or_else(|| self.cfg.adapter.clone()),
            cwd: Some(req.cwd.clone()),
            action: AuditAction::from_action(&outcome.action),
            decision: outcome.verdict.decision.as_str().to_owned(),
            outcome: outcome.answer.map(str::to_owned),
            source: serde_json::to_value(outcome.verdict.source)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            rule: outcome.verdict.rule.clone(),
            reason: outcome.verdict.reason.clone(),
            approver: outcome.verdict.approver.clone(),
            latency_us: started.elapsed().as_micros() as u64,
        };
        let record = record.masked(&self.masker);
        if let Some(remote) = &self.remote {
            // The server's log is a copy; the local one below is the record.
            let _ = remote.record(&record);
        }
        if let Err(e) = AuditLog::new(audit_path.clone()).append(&record) {
            // An action that cannot be recorded does not run.
            return Response::refused(
                format!(
                    "aileron: denied: cannot write the audit log {}: {e}",
                    audit_path.display()
                ),
                &self.cfg.real_shell,
            );
        }
        let decision = if outcome.allow {
            "allow"
        } else if outcome.agent_asks {
            "ask"
        } else {
            "deny"
        };
        Response {
            allow: outcome.allow,
            decision: decision.to_owned(),
            message: outcome.message,
            rule: outcome.verdict.rule.clone(),
            real_shell: self.cfg.real_shell.clone(),
        }
    }

    /// Pins the policy for a launch whose files the kernel locks: project
    /// files other than `locked` that changed after `since` (an
    /// `aileron.yaml` the agent wrote in a subdirectory, or in a directory
    /// it put in place of the project's) decide nothing.
    pub fn pin_policy(&self, since: std::time::SystemTime, locked: Vec<PathBuf>) {
        let _ = self.pinned.set((since, locked));
    }

    /// Why the project file `path` may not decide for this session, if so.
    fn untrusted_policy(&self, path: Option<&Path>) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        let (since, locked) = self.pinned.get()?;
        let path = path?;
        if locked.iter().any(|l| l == path) || self.amended.lock().ok()?.iter().any(|a| a == path) {
            return None;
        }
        let changed = std::fs::metadata(path).ok().and_then(|m| {
            let t = std::time::UNIX_EPOCH
                + Duration::new(m.ctime().max(0) as u64, m.ctime_nsec().max(0) as u32);
            (t > *since).then_some(())
        });
        changed.map(|()| {
            format!(
                "{} was written after this session started; restart `aileron launch` to use it",
                path.display()
            )
        })
    }

    /// Writes the audit line of an exec refused before the policy could
    /// decide it (unreadable, no path, changed after its check).
    pub fn record_refused_exec(&self, pid: u32, why: &str) {
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd"))
            .map_or_else(|_| self.cfg.load.cwd.clone(), PathBuf::from);
        self.record_event(
            "shell.exec",
            &format!("an exec of process {pid}"),
            "deny",
            why,
            cwd,
        );
    }

    /// Writes an audit line about the session itself (`session.start`:
    /// what the kernel does not enforce).
    pub fn record_session_note(&self, why: &str) {
        self.record_event(
            "session.start",
            "aileron launch",
            "allow",
            why,
            self.cfg.load.cwd.clone(),
        );
    }

    fn record_event(&self, kind: &str, summary: &str, decision: &str, why: &str, cwd: PathBuf) {
        let mut opts = self.cfg.load.clone();
        opts.cwd = cwd.clone();
        let audit = match aileron_config::load_with_memo(
            &opts,
            self.cfg.cache_dir.as_deref(),
            &self.last_policy,
        ) {
            Ok(l) => aileron_config::audit_log_path(&l.policy, l.project_file.as_deref(), &opts),
            Err(_) => self.cfg.load.data_dir.join("audit.jsonl"),
        };
        let mut action = Action {
            id: action_id(),
            timestamp: now_rfc3339(),
            kind: kind.into(),
            summary: summary.into(),
            ..Action::default()
        };
        action.session.id = self.cfg.session_id.clone();
        action.session.agent = self.cfg.agent.clone();
        let record = AuditRecord {
            time: action.timestamp.clone(),
            session: self.cfg.session_id.clone(),
            agent: self.cfg.agent.clone(),
            adapter: "supervisor".into(),
            cwd: Some(cwd.to_string_lossy().into_owned()),
            action: AuditAction::from_action(&action),
            decision: decision.into(),
            outcome: None,
            source: "builtin".into(),
            rule: None,
            reason: why.to_owned(),
            approver: None,
            latency_us: 0,
        }
        .masked(&self.masker);
        if let Err(e) = AuditLog::new(audit.clone()).append(&record) {
            eprintln!(
                "aileron: cannot write the audit log {}: {e}",
                audit.display()
            );
        }
    }

    /// The state kept for a session between hook processes.
    pub fn export_session(&self, session: &str) -> SavedSession {
        self.with_state(session, |st| SavedSession {
            approvals: st.saved_approvals.clone(),
            recent: st.recent.iter().cloned().collect(),
            history: st
                .history
                .iter()
                .rev()
                .take(SAVED_HISTORY_LEN)
                .rev()
                .map(without_tool_input)
                .collect(),
            last_reject: st.last_reject,
        })
    }

    /// Restores what [`Decider::export_session`] saved.
    pub fn import_session(&self, session: &str, saved: SavedSession) {
        for approval in &saved.approvals {
            self.remember(session, approval.clone());
        }
        self.with_state(session, |st| {
            st.recent = saved.recent.into_iter().collect();
            st.history = saved.history.into_iter().collect();
            st.last_reject = saved.last_reject;
        });
    }

    fn session_key(&self, req: &Request) -> String {
        req.session
            .clone()
            .or_else(|| self.cfg.session_id.clone())
            .unwrap_or_default()
    }

    #[allow(clippy::too_many_arguments)]
    fn decide_loaded(
        &self,
        policy: &Policy,
        project_file: Option<&Path>,
        req: &Request,
        key: &str,
        subject: &Subject<'_>,
        cx: &LineContext<'_>,
        epoch: u64,
    ) -> Outcome {
        let doom = self.doom_loop(policy, key, subject, cx, !req.repeat);
        let mut prompts = 0;
        let mut recorded = req.repeat;
        loop {
            let lv = self.evaluate(policy, key, subject, cx);
            if prompts == 0 && !recorded {
                self.record_history(policy, key, &lv);
                recorded = true;
            }
            let (verdict, action, command) = most_restrictive(&lv, doom.as_ref(), subject, cx);
            let verdict = match &req.within {
                Some(enclosing) => inherited(verdict, &lv, enclosing, cx, &self.home()),
                None => verdict,
            };
            match verdict.decision {
                Decision::Allow => {
                    let answer = (prompts > 0).then_some("approved");
                    return Outcome::allowed(verdict, action, answer);
                }
                Decision::Deny => {
                    let message = Some(denied_message("denied", &verdict));
                    return Outcome::refused(message, verdict, action, None);
                }
                Decision::Ask | Decision::Judge => {}
            }
            let ask_in_ui = policy.settings.ask_mode.as_deref() == Some("ui");
            if req.agent_asks && !ask_in_ui {
                // The agent's own prompt asks its human (SPEC 10).
                let message = Some(denied_message("approval needed", &verdict));
                let mut o = Outcome::refused(message, verdict, action, Some("asked-agent"));
                o.agent_asks = true;
                return o;
            }
            if prompts == MAX_PROMPTS_PER_LINE {
                let message = Some(denied_message("denied", &verdict));
                return Outcome::refused(message, verdict, action, Some("too-many-prompts"));
            }
            // One prompt at a time; a reject or an "always" given while we
            // waited applies to us too.
            let _turn = self.prompt_lock.lock().unwrap_or_else(|p| p.into_inner());
            if self.with_state(key, |st| st.reject_epoch) != epoch {
                return Outcome::refused(
                    Some(REJECTED_EARLIER.to_owned()),
                    verdict,
                    action,
                    Some("rejected"),
                );
            }
            let again = self.evaluate(policy, key, subject, cx);
            if most_restrictive(&again, doom.as_ref(), subject, cx)
                .0
                .decision
                != verdict.decision
            {
                continue;
            }
            prompts += 1;
            let rule = verdict.rule.as_deref().and_then(|id| policy.rule(id));
            let timeout = rule
                .and_then(|r| r.approver.as_ref()?.timeout)
                .or(policy.settings.timeout)
                .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
                .min(req.prompt_budget.map_or(Duration::MAX, Duration::from_secs));
            let on_timeout = rule
                .and_then(|r| r.approver.as_ref()?.on_timeout)
                .or(policy.settings.on_timeout)
                .unwrap_or(Decision::Deny);
            let (line, suggestion) = match subject {
                Subject::Line(line) => ((*line).to_owned(), suggest_prefix(&command)),
                Subject::Actions(line, _) => ((*line).to_owned(), String::new()),
            };
            let question = Question {
                line,
                command: command.clone(),
                rule: verdict.rule.clone(),
                reason: verdict.reason.clone(),
                suggestion,
                timeout,
                allow_on_timeout: on_timeout == Decision::Allow,
            };
            let (answer, channel) = match (&self.remote, ask_in_ui) {
                (Some(remote), true) => match remote.ask(&action, &question) {
                    // The server is down: the terminal, or deny.
                    Answer::Unavailable(why) => match self.prompter.ask(&question) {
                        Answer::Unavailable(also) => (
                            Answer::Unavailable(format!("{why}, and {also}")),
                            "terminal",
                        ),
                        a => (a, "terminal"),
                    },
                    a => (a, "dashboard"),
                },
                _ => (self.prompter.ask(&question), "terminal"),
            };
            let mut verdict = verdict;
            if matches!(
                answer,
                Answer::Once | Answer::Always(..) | Answer::Reject | Answer::Feedback(_)
            ) {
                // A person decided: the record says so, and where.
                verdict.source = aileron_engine::VerdictSource::Human;
                verdict.approver = Some(channel.to_owned());
            }
            match answer {
                Answer::Once => {
                    return Outcome::allowed(verdict, action, Some("approved-once"));
                }
                Answer::Always(scope, pattern) => {
                    let priority = rule.map_or(Decision::Ask.default_priority(), |r| r.priority);
                    let approval = match subject {
                        Subject::Line(_) => SavedApproval::Command { pattern, priority },
                        Subject::Actions(..) => SavedApproval::Action {
                            kind: action.kind.clone(),
                            fields: approval_fields(&action),
                            priority,
                        },
                    };
                    self.remember(key, approval.clone());
                    if scope != AlwaysScope::Session
                        && let Err(e) = self.amend(scope, &approval, project_file, cx.cwd)
                    {
                        eprintln!("aileron: could not save the rule: {e}");
                    }
                    if lv.commands.len() <= 1 {
                        let answer = match scope {
                            AlwaysScope::Session => "approved-always-session",
                            AlwaysScope::Project => "approved-always-project",
                            AlwaysScope::User => "approved-always-user",
                        };
                        return Outcome::allowed(verdict, action, Some(answer));
                    }
                    // Other parts of the line may still need an answer.
                }
                Answer::Reject => {
                    self.note_reject(key);
                    let message = Some(format!("aileron: rejected: the user rejected `{command}`"));
                    return Outcome::refused(message, verdict, action, Some("rejected"));
                }
                Answer::Feedback(text) => {
                    self.note_reject(key);
                    let message = Some(format!("aileron: rejected: {text}"));
                    return Outcome::refused(message, verdict, action, Some("corrected"));
                }
                Answer::Timeout => {
                    let message = format!(
                        "aileron: denied: no answer within {}s ({})",
                        timeout.as_secs(),
                        rule_label(&verdict)
                    );
                    return if on_timeout == Decision::Allow {
                        Outcome::allowed(verdict, action, Some("timeout"))
                    } else {
                        Outcome::refused(Some(message), verdict, action, Some("timeout"))
                    };
                }
                Answer::Unavailable(why) => {
                    let message = Some(format!(
                        "aileron: denied: approval needed but {why} ({})",
                        rule_label(&verdict)
                    ));
                    return Outcome::refused(message, verdict, action, Some("no-terminal"));
                }
            }
        }
    }

    fn note_reject(&self, key: &str) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        self.with_state(key, |st| {
            st.reject_epoch += 1;
            st.last_reject = now;
        });
    }

    /// Records the request; when it is the third identical one in a row,
    /// the policy's verdict on an `agent.doom_loop` action.
    fn doom_loop(
        &self,
        policy: &Policy,
        key: &str,
        subject: &Subject<'_>,
        cx: &LineContext<'_>,
        record: bool,
    ) -> Option<(Verdict, Action)> {
        let (tool, input, repeated) = match subject {
            Subject::Line(line) => ("shell".to_owned(), (*line).to_owned(), line.to_string()),
            Subject::Actions(line, actions) => {
                let tool = actions
                    .first()
                    .and_then(|a| a.facets.get("tool")?.get("name")?.as_str())
                    .map_or_else(|| actions[0].kind.clone(), str::to_owned);
                let repeated = serde_json::to_string(
                    &actions
                        .iter()
                        .map(|a| (&a.kind, &a.facets))
                        .collect::<Vec<_>>(),
                )
                .unwrap_or_default();
                (tool, (*line).to_owned(), repeated)
            }
        };
        // Kept as a digest: a session's saved state must not grow with the
        // size of its calls (a 20 MB write).
        let repeated = digest(&repeated);
        let looping = self.with_state(key, |st| {
            // A repeat (a permission request for a call already counted) is
            // checked against the count, not added to it.
            if record {
                st.recent.push_back(repeated.clone());
                if st.recent.len() > DOOM_LOOP_THRESHOLD {
                    st.recent.pop_front();
                }
            }
            st.recent.len() == DOOM_LOOP_THRESHOLD && st.recent.iter().all(|l| *l == repeated)
        });
        if !looping {
            return None;
        }
        let mut action = Action {
            id: format!("{}.doom", cx.id),
            timestamp: cx.timestamp.to_owned(),
            kind: "agent.doom_loop".into(),
            summary: format!("the same {tool} call {DOOM_LOOP_THRESHOLD} times in a row: {input}"),
            session: cx.session.clone(),
            ..Action::default()
        };
        action.facets.insert(
            "agent".into(),
            serde_json::json!({"tool": tool, "input": input, "count": DOOM_LOOP_THRESHOLD}),
        );
        action.normalize();
        let verdict = policy.evaluate(&action, &State::default());
        Some((verdict, action))
    }

    fn remember(&self, key: &str, approval: SavedApproval) {
        let (matcher, label, priority) = match &approval {
            SavedApproval::Command { pattern, priority } => (
                Matcher::All(vec![
                    Matcher::Field(FieldPath::Type, Cond::Equals("shell.exec".into())),
                    Matcher::Field(
                        FieldPath::Facet(vec!["shell".into(), "command".into()]),
                        Cond::Glob(Glob::command(pattern)),
                    ),
                ]),
                format!("command: {pattern}"),
                *priority,
            ),
            SavedApproval::Action {
                kind,
                fields,
                priority,
            } => {
                let mut all = vec![Matcher::Field(
                    FieldPath::Type,
                    Cond::Equals(kind.as_str().into()),
                )];
                for (path, value) in fields {
                    let Ok(path) = FieldPath::parse(path) else {
                        return;
                    };
                    all.push(Matcher::Field(path, Cond::Equals(value.as_str().into())));
                }
                let label = fields
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                (Matcher::All(all), format!("{kind}: {label}"), *priority)
            }
        };
        self.with_state(key, |st| {
            if st.saved_approvals.contains(&approval) {
                return;
            }
            let seq = st.approvals.len() as u32;
            let id = format!("session:always[{seq}]");
            st.approvals
                .push(Rule::session_approval(&id, &label, matcher, priority, seq));
            st.saved_approvals.push(approval);
        });
    }

    fn amend(
        &self,
        scope: AlwaysScope,
        approval: &SavedApproval,
        project_file: Option<&Path>,
        cwd: &str,
    ) -> Result<(), String> {
        let path = match scope {
            AlwaysScope::Project => project_file.map_or_else(
                || Path::new(cwd).join(aileron_config::POLICY_FILE),
                Path::to_path_buf,
            ),
            _ => self.cfg.load.home.join(".aileron").join("settings.yaml"),
        };
        if let Ok(mut amended) = self.amended.lock() {
            amended.push(path.clone());
        }
        let comment = format!("added by aileron on {}", &now_rfc3339()[..10]);
        let home = self.cfg.load.home.to_string_lossy();
        match approval {
            SavedApproval::Command { pattern, .. } => {
                amend::append_allow(&path, pattern, &comment, &home)
            }
            SavedApproval::Action { kind, fields, .. } => {
                let mut when = vec![("type".to_owned(), kind.clone())];
                when.extend(fields.iter().cloned());
                amend::append_allow_when(&path, &when, &comment, &home)
            }
        }
    }

    /// The request's verdict under the session's approvals and history.
    fn evaluate(
        &self,
        policy: &Policy,
        key: &str,
        subject: &Subject<'_>,
        cx: &LineContext<'_>,
    ) -> LineVerdict {
        self.with_state(key, |st| {
            let SessionState {
                approvals, history, ..
            } = st;
            let state = State {
                approvals,
                history: history.make_contiguous(),
            };
            match subject {
                Subject::Line(line) => policy.evaluate_line(line, cx, &state),
                Subject::Actions(_, actions) => {
                    let commands: Vec<CommandVerdict> = actions
                        .iter()
                        .map(|a| CommandVerdict {
                            command: a.summary.clone(),
                            action: a.clone(),
                            parent: None,
                            notes: Vec::new(),
                            verdict: policy.evaluate(a, &state),
                            explanation: None,
                            files: Vec::new(),
                        })
                        .collect();
                    let decisive = (0..commands.len()).max_by_key(|&i| {
                        // Most restrictive; the first among equals.
                        (
                            commands[i].verdict.decision.restrictiveness(),
                            usize::MAX - i,
                        )
                    });
                    LineVerdict {
                        verdict: commands[decisive.unwrap_or(0)].verdict.clone(),
                        decisive,
                        commands,
                        opaque: None,
                    }
                }
            }
        })
    }

    /// Adds the request's actions to the history `rate` counts (once per
    /// request). Under a policy without `rate` rules nothing reads it, so
    /// none is kept (a hook would load and save it on every call).
    fn record_history(&self, policy: &Policy, key: &str, lv: &LineVerdict) {
        let counted = policy.rate_window().is_some();
        self.with_state(key, |st| {
            if !counted {
                st.history.clear();
                return;
            }
            for c in &lv.commands {
                if st.history.len() == HISTORY_LEN {
                    st.history.pop_front();
                }
                st.history.push_back(c.action.clone());
            }
        });
    }

    fn with_state<T>(&self, key: &str, f: impl FnOnce(&mut SessionState) -> T) -> T {
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        f(states.entry(key.to_owned()).or_default())
    }
}

impl Outcome {
    fn allowed(verdict: Verdict, action: Action, answer: Option<&'static str>) -> Outcome {
        Outcome {
            allow: true,
            agent_asks: false,
            message: None,
            verdict,
            action,
            answer,
        }
    }

    fn refused(
        message: Option<String>,
        verdict: Verdict,
        action: Action,
        answer: Option<&'static str>,
    ) -> Outcome {
        Outcome {
            allow: false,
            agent_asks: false,
            message,
            verdict,
            action,
            answer,
        }
    }
}

/// A short fixed-size stand-in for a request, for the doom-loop count.
fn digest(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("{:016x}:{}", h.finish(), text.len())
}

/// An action as `rate` windows need it, without the tool's raw input
/// (file contents), so that saved history stays small.
fn without_tool_input(a: &Action) -> Action {
    let mut a = a.clone();
    if let Some(serde_json::Value::Object(tool)) = a.facets.get_mut("tool") {
        tool.remove("input");
    }
    a
}

const REJECTED_EARLIER: &str =
    "aileron: rejected: the user rejected an earlier request of this session";

/// The fields an "always" answer for a non-shell action pins: what the
/// human saw, no more (the file, the host, the MCP tool, the tool name).
fn approval_fields(a: &Action) -> Vec<(String, String)> {
    let pick: &[&str] = match a.kind.as_str() {
        "fs.read" | "fs.write" | "fs.list" => &["fs.path"],
        "http.request" => &["http.method", "http.host"],
        "mcp.call" => &["mcp.server", "mcp.tool"],
        "tool.call" => &["tool.name"],
        _ => &["summary"],
    };
    pick.iter()
        .filter_map(|path| {
            let value = if *path == "summary" {
                Some(a.summary.clone())
            } else {
                let mut parts = path.split('.');
                let facet = a.facets.get(parts.next()?)?;
                facet.get(parts.next()?)?.as_str().map(str::to_owned)
            };
            value.map(|v| ((*path).to_owned(), v))
        })
        .collect()
}

/// The request's verdict, the action it is about and the command to show.
fn most_restrictive(
    lv: &LineVerdict,
    doom: Option<&(Verdict, Action)>,
    subject: &Subject<'_>,
    cx: &LineContext<'_>,
) -> (Verdict, Action, String) {
    let (mut verdict, mut action, mut command) = match lv.decisive {
        Some(i) => (
            lv.verdict.clone(),
            lv.commands[i].action.clone(),
            lv.commands[i].command.clone(),
        ),
        None => {
            let action = subject_action(subject, cx.session, cx.timestamp);
            let command = action.summary.clone();
            (lv.verdict.clone(), action, command)
        }
    };
    if let Some((dv, da)) = doom
        && dv.decision.restrictiveness() > verdict.decision.restrictiveness()
    {
        verdict = dv.clone();
        action = da.clone();
        if let Subject::Line(line) = subject {
            command = (*line).to_owned();
        }
    }
    (verdict, action, command)
}

/// The action to record when no single part of the request decided.
fn subject_action(subject: &Subject<'_>, session: &Session, now: &str) -> Action {
    match subject {
        Subject::Actions(_, actions) => actions[0].clone(),
        Subject::Line(line) => {
            let mut a = Action {
                kind: "shell.exec".into(),
                timestamp: now.to_owned(),
                summary: (*line).to_owned(),
                session: session.clone(),
                ..Action::default()
            };
            a.facets.insert(
                "shell".into(),
                serde_json::json!({"command": line, "line": line}),
            );
            a.normalize();
            a
        }
    }
}

fn rule_label(v: &Verdict) -> String {
    match &v.rule {
        Some(r) => format!("rule {r}"),
        None => "default".to_owned(),
    }
}

/// `aileron: denied: REASON (rule ID)`.
/// An exec inside an allowed command: an `ask` default gives way to that
/// command (its approval answers for what it starts), and a command it
/// already had approved is not asked again.
fn inherited(
    verdict: Verdict,
    lv: &LineVerdict,
    enclosing: &str,
    cx: &LineContext<'_>,
    home: &str,
) -> Verdict {
    let inherit = |reason: String| Verdict {
        decision: Decision::Allow,
        reason,
        ..verdict.clone()
    };
    match verdict.decision {
        // A `deny` default stays a deny: the user wants unknown programs
        // refused wherever they run.
        Decision::Allow | Decision::Deny => verdict,
        _ if verdict.source == aileron_engine::VerdictSource::Default => inherit(format!(
            "no rule applies; started by `{enclosing}`, which was allowed"
        )),
        Decision::Ask | Decision::Judge => {
            let in_line = |c: &aileron_engine::CommandVerdict| {
                let binary = c.action.facet_str("shell", "binary").unwrap_or_default();
                let argv = c
                    .action
                    .facets
                    .get("shell")
                    .and_then(|f| f.get("argv")?.as_array().cloned())
                    .unwrap_or_default();
                let args: Vec<&str> = argv.iter().skip(1).filter_map(|a| a.as_str()).collect();
                args.len() + 1 == argv.len()
                    && crate::exec::line_runs(enclosing, cx.cwd, home, binary, &args)
            };
            // Every command of the exec that needs an answer was part of the line.
            let all_approved = lv
                .commands
                .iter()
                .filter(|c| c.verdict.decision != Decision::Allow)
                .all(in_line);
            if all_approved {
                inherit(format!("part of `{enclosing}`, which was approved"))
            } else {
                verdict
            }
        }
    }
}

pub fn denied_message(word: &str, v: &Verdict) -> String {
    format!("aileron: {word}: {} ({})", v.reason, rule_label(v))
}

/// The current time, RFC 3339 UTC (adapters read the clock; the engine does not).
pub fn now_rfc3339() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    aileron_engine::action::timestamp_from_unix(d.as_secs() as i64)
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

/// A unique id for the actions of one request: time, process and a counter.
fn action_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!(
        "{nanos:x}-{:x}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
