//! Deciding one shell line for a session: policy, session approvals, the
//! doom-loop check, the human's answer, the audit line.

use crate::amend;
use crate::prompt::{AlwaysScope, Answer, Prompter, Question, suggest_prefix};
use crate::protocol::{Request, Response};
use aileron_audit::{AuditAction, AuditLog, AuditRecord, Masker};
use aileron_config::LoadOptions;
use aileron_engine::glob::Glob;
use aileron_engine::pattern::{Cond, Matcher};
use aileron_engine::{
    Action, Decision, LineContext, LineVerdict, Policy, Rule, Session, State, Verdict,
};
use std::collections::VecDeque;
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
    /// The session's latest actions, for `rate` matchers.
    history: VecDeque<Action>,
    recent: VecDeque<String>,
    /// Bumped by every "reject": requests waiting since before it are rejected too.
    reject_epoch: u64,
}

/// The session's shared state; one per launch (or per shim call without one).
pub struct Decider {
    cfg: Config,
    state: Mutex<SessionState>,
    /// One prompt at a time, even when the agent runs commands in parallel.
    prompt_lock: Mutex<()>,
    prompter: Box<dyn Prompter>,
    masker: Masker,
    /// The latest policy, freed only when the next one replaces it: the
    /// shim execs with it still alive instead of spending longer freeing
    /// every rule than deciding took.
    last_policy: Mutex<Option<aileron_config::Loaded>>,
}

struct Outcome {
    allow: bool,
    message: Option<String>,
    verdict: Verdict,
    action: Action,
    answer: Option<&'static str>,
}

impl Decider {
    pub fn new(cfg: Config, prompter: Box<dyn Prompter>) -> Decider {
        let masker = Masker::new(cfg.secrets.clone());
        Decider {
            cfg,
            state: Mutex::default(),
            prompt_lock: Mutex::new(()),
            prompter,
            masker,
            last_policy: Mutex::default(),
        }
    }

    pub fn real_shell(&self) -> &str {
        &self.cfg.real_shell
    }

    /// Decides `req`, asking the human when the policy says so, and writes the audit line.
    pub fn decide(&self, req: &Request) -> Response {
        let started = Instant::now();
        let epoch = self.lock_state().reject_epoch;
        let mut opts = self.cfg.load.clone();
        opts.cwd = PathBuf::from(&req.cwd);
        let now = now_rfc3339();
        let session = Session {
            id: self.cfg.session_id.clone(),
            agent: self.cfg.agent.clone(),
            cwd: Some(req.cwd.clone()),
            ..Session::default()
        };
        let (outcome, audit_path) = match aileron_config::load(&opts, self.cfg.cache_dir.as_deref())
        {
            Err(diags) => {
                let first = diags.0.first().map(|d| d.headline()).unwrap_or_default();
                let more = if diags.0.len() > 1 {
                    format!(" (and {} more)", diags.0.len() - 1)
                } else {
                    String::new()
                };
                let verdict = Verdict {
                    decision: Decision::Deny,
                    source: aileron_engine::VerdictSource::Default,
                    rule: None,
                    reason: format!("the policy does not load: {first}{more}"),
                    approver: None,
                };
                let action = line_action(&req.line, &session, &now);
                let message = Some(format!("aileron: denied: {}", verdict.reason));
                (
                    Outcome {
                        allow: false,
                        message,
                        verdict,
                        action,
                        answer: None,
                    },
                    self.cfg.load.data_dir.join("audit.jsonl"),
                )
            }
            Ok(loaded) => {
                let audit = aileron_config::audit_log_path(
                    &loaded.policy,
                    loaded.project_file.as_deref(),
                    &opts,
                );
                let id = action_id();
                let cx = LineContext {
                    cwd: &req.cwd,
                    session: &session,
                    timestamp: &now,
                    id: &id,
                };
                let outcome = self.decide_loaded(
                    &loaded.policy,
                    loaded.project_file.as_deref(),
                    req,
                    &cx,
                    epoch,
                );
                let previous = self
                    .last_policy
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .replace(loaded);
                drop(previous); // outside the lock
                (outcome, audit)
            }
        };
        let record = AuditRecord {
            time: now.clone(),
            session: self.cfg.session_id.clone(),
            agent: self.cfg.agent.clone(),
            adapter: self.cfg.adapter.clone(),
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
        if let Err(e) = AuditLog::new(audit_path.clone()).append(&record.masked(&self.masker)) {
            // An action that cannot be recorded does not run.
            return Response {
                allow: false,
                message: Some(format!(
                    "aileron: denied: cannot write the audit log {}: {e}",
                    audit_path.display()
                )),
                real_shell: self.cfg.real_shell.clone(),
            };
        }
        Response {
            allow: outcome.allow,
            message: outcome.message,
            real_shell: self.cfg.real_shell.clone(),
        }
    }

    fn decide_loaded(
        &self,
        policy: &Policy,
        project_file: Option<&Path>,
        req: &Request,
        cx: &LineContext<'_>,
        epoch: u64,
    ) -> Outcome {
        let doom = self.doom_loop(policy, &req.line, cx);
        let mut prompts = 0;
        let mut recorded = false;
        loop {
            let lv = self.evaluate(policy, &req.line, cx);
            if prompts == 0 && !recorded {
                self.record_history(&lv);
                recorded = true;
            }
            let (verdict, action, command) = most_restrictive(&lv, doom.as_ref(), &req.line, cx);
            match verdict.decision {
                Decision::Allow => {
                    let answer = (prompts > 0).then_some("approved");
                    return Outcome {
                        allow: true,
                        message: None,
                        verdict,
                        action,
                        answer,
                    };
                }
                Decision::Deny => {
                    let message = Some(denied_message("denied", &verdict));
                    return Outcome {
                        allow: false,
                        message,
                        verdict,
                        action,
                        answer: None,
                    };
                }
                Decision::Ask | Decision::Judge => {}
            }
            if prompts == MAX_PROMPTS_PER_LINE {
                let message = Some(denied_message("denied", &verdict));
                return Outcome {
                    allow: false,
                    message,
                    verdict,
                    action,
                    answer: Some("too-many-prompts"),
                };
            }
            // One prompt at a time; a reject or an "always" given while we
            // waited applies to us too.
            let _turn = self.prompt_lock.lock().unwrap_or_else(|p| p.into_inner());
            if self.lock_state().reject_epoch != epoch {
                let message = Some(
                    "aileron: rejected: the user rejected an earlier request of this session"
                        .to_owned(),
                );
                return Outcome {
                    allow: false,
                    message,
                    verdict,
                    action,
                    answer: Some("rejected"),
                };
            }
            let again = self.evaluate(policy, &req.line, cx);
            if most_restrictive(&again, doom.as_ref(), &req.line, cx)
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
                .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
            let on_timeout = rule
                .and_then(|r| r.approver.as_ref()?.on_timeout)
                .or(policy.settings.on_timeout)
                .unwrap_or(Decision::Deny);
            let question = Question {
                line: req.line.clone(),
                command: command.clone(),
                rule: verdict.rule.clone(),
                reason: verdict.reason.clone(),
                suggestion: suggest_prefix(&command),
                timeout,
                allow_on_timeout: on_timeout == Decision::Allow,
            };
            match self.prompter.ask(&question) {
                Answer::Once => {
                    return Outcome {
                        allow: true,
                        message: None,
                        verdict,
                        action,
                        answer: Some("approved-once"),
                    };
                }
                Answer::Always(scope, pattern) => {
                    let priority = rule.map_or(Decision::Ask.default_priority(), |r| r.priority);
                    self.remember(&pattern, priority);
                    if scope != AlwaysScope::Session
                        && let Err(e) = self.amend(scope, &pattern, project_file, cx.cwd)
                    {
                        eprintln!("aileron: could not save the rule: {e}");
                    }
                    if lv.commands.len() <= 1 {
                        let answer = match scope {
                            AlwaysScope::Session => "approved-always-session",
                            AlwaysScope::Project => "approved-always-project",
                            AlwaysScope::User => "approved-always-user",
                        };
                        return Outcome {
                            allow: true,
                            message: None,
                            verdict,
                            action,
                            answer: Some(answer),
                        };
                    }
                    // Other parts of the line may still need an answer.
                }
                Answer::Reject => {
                    self.lock_state().reject_epoch += 1;
                    let message = Some(format!("aileron: rejected: the user rejected `{command}`"));
                    return Outcome {
                        allow: false,
                        message,
                        verdict,
                        action,
                        answer: Some("rejected"),
                    };
                }
                Answer::Feedback(text) => {
                    self.lock_state().reject_epoch += 1;
                    let message = Some(format!("aileron: rejected: {text}"));
                    return Outcome {
                        allow: false,
                        message,
                        verdict,
                        action,
                        answer: Some("corrected"),
                    };
                }
                Answer::Timeout => {
                    let allow = on_timeout == Decision::Allow;
                    let message = (!allow).then(|| {
                        format!(
                            "aileron: denied: no answer within {}s ({})",
                            timeout.as_secs(),
                            rule_label(&verdict)
                        )
                    });
                    return Outcome {
                        allow,
                        message,
                        verdict,
                        action,
                        answer: Some("timeout"),
                    };
                }
                Answer::Unavailable(why) => {
                    let message = Some(format!(
                        "aileron: denied: approval needed but {why} ({})",
                        rule_label(&verdict)
                    ));
                    return Outcome {
                        allow: false,
                        message,
                        verdict,
                        action,
                        answer: Some("no-terminal"),
                    };
                }
            }
        }
    }

    /// Records `line`; when it is the third identical line in a row,
    /// the policy's verdict on an `agent.doom_loop` action.
    fn doom_loop(
        &self,
        policy: &Policy,
        line: &str,
        cx: &LineContext<'_>,
    ) -> Option<(Verdict, Action)> {
        let mut st = self.lock_state();
        st.recent.push_back(line.to_owned());
        if st.recent.len() > DOOM_LOOP_THRESHOLD {
            st.recent.pop_front();
        }
        let looping = st.recent.len() == DOOM_LOOP_THRESHOLD && st.recent.iter().all(|l| l == line);
        drop(st);
        if !looping {
            return None;
        }
        let mut action = Action {
            id: format!("{}.doom", cx.id),
            timestamp: cx.timestamp.to_owned(),
            kind: "agent.doom_loop".into(),
            summary: format!("the same command {DOOM_LOOP_THRESHOLD} times in a row: {line}"),
            session: cx.session.clone(),
            ..Action::default()
        };
        action.facets.insert(
            "agent".into(),
            serde_json::json!({"tool": "shell", "input": line, "count": DOOM_LOOP_THRESHOLD}),
        );
        action.normalize();
        let verdict = policy.evaluate(&action, &State::default());
        Some((verdict, action))
    }

    fn remember(&self, pattern: &str, priority: i64) {
        let mut st = self.lock_state();
        let seq = st.approvals.len() as u32;
        let matcher = Matcher::All(vec![
            Matcher::Field(
                aileron_engine::action::FieldPath::Type,
                Cond::Equals("shell.exec".into()),
            ),
            Matcher::Field(
                aileron_engine::action::FieldPath::Facet(vec!["shell".into(), "command".into()]),
                Cond::Glob(Glob::command(pattern)),
            ),
        ]);
        let id = format!("session:always[{seq}]");
        st.approvals.push(Rule::session_approval(
            &id,
            &format!("command: {pattern}"),
            matcher,
            priority,
            seq,
        ));
    }

    fn amend(
        &self,
        scope: AlwaysScope,
        pattern: &str,
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
        let comment = format!("added by aileron on {}", &now_rfc3339()[..10]);
        amend::append_allow(
            &path,
            pattern,
            &comment,
            &self.cfg.load.home.to_string_lossy(),
        )
    }

    /// The line's verdict under the session's approvals and history; the
    /// line's actions join the history.
    fn evaluate(&self, policy: &Policy, line: &str, cx: &LineContext<'_>) -> LineVerdict {
        let mut st = self.lock_state();
        let SessionState {
            approvals, history, ..
        } = &mut *st;
        let state = State {
            approvals,
            history: history.make_contiguous(),
        };
        policy.evaluate_line(line, cx, &state)
    }

    /// Adds the line's actions to the history `rate` counts (once per request).
    fn record_history(&self, lv: &LineVerdict) {
        let mut st = self.lock_state();
        for c in &lv.commands {
            if st.history.len() == HISTORY_LEN {
                st.history.pop_front();
            }
            st.history.push_back(c.action.clone());
        }
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The line's verdict, the action it is about and the command to show.
fn most_restrictive(
    lv: &LineVerdict,
    doom: Option<&(Verdict, Action)>,
    line: &str,
    cx: &LineContext<'_>,
) -> (Verdict, Action, String) {
    let (mut verdict, mut action, mut command) = match lv.decisive {
        Some(i) => (
            lv.verdict.clone(),
            lv.commands[i].action.clone(),
            lv.commands[i].command.clone(),
        ),
        None => (
            lv.verdict.clone(),
            line_action(line, cx.session, cx.timestamp),
            line.to_owned(),
        ),
    };
    if let Some((dv, da)) = doom
        && dv.decision.restrictiveness() > verdict.decision.restrictiveness()
    {
        verdict = dv.clone();
        action = da.clone();
        command = line.to_owned();
    }
    (verdict, action, command)
}

fn line_action(line: &str, session: &Session, now: &str) -> Action {
    let mut a = Action {
        kind: "shell.exec".into(),
        timestamp: now.to_owned(),
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

fn rule_label(v: &Verdict) -> String {
    match &v.rule {
        Some(r) => format!("rule {r}"),
        None => "default".to_owned(),
    }
}

/// `aileron: denied: REASON (rule ID)`.
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
