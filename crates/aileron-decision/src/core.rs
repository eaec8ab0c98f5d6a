//! The decision of one request, as a step machine every adapter drives.
//!
//! [`Core::decide`] evaluates the request under the session's approvals
//! and history and either decides it ([`Step::Done`]) or says who must be
//! asked what ([`Step::Ask`]). The adapter asks in its own way (a terminal
//! prompt, the dashboard's queue, the agent's host) and hands the answer
//! to [`Core::answer`], which applies it (an "always" becomes a session
//! approval and, for a project or the user, an [`Amendment`]; a "reject"
//! rejects what else of the session is waiting) and steps again. A waiting
//! adapter calls [`Core::resume`] when the session changed meanwhile (an
//! answer to another ask): that is the cascade. No I/O happens here: the
//! adapter loads the policy, reads the clock and writes the records.

use crate::answer::{AlwaysScope, Answer, Channel, Outcome, Question, escape_glob, suggest_prefix};
use crate::session::{SavedApproval, SavedSession, SessionState, approval_fields};
use aileron_audit::JudgeUse;
use aileron_engine::{
    Action, ActionType, AskMode, CommandVerdict, Decision, Layer, LineContext, LineVerdict, Policy,
    Session, State, Verdict, VerdictSource,
};
use aileron_engine::{JudgeDef, Rule, Sensitivity};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Identical requests in a row that make a doom loop (SPEC 10).
pub const DOOM_LOOP_THRESHOLD: usize = 3;
/// Asks for one line before giving up on approving its parts one by one.
const MAX_PROMPTS_PER_LINE: usize = 8;
/// Sessions kept in memory; beyond that the state of all is dropped.
const MAX_SESSIONS: usize = 10_000;

/// What the agent said it's "rejected" by, when an earlier reject cascades.
pub const REJECTED_EARLIER: &str =
    "aileron: rejected: the user rejected an earlier request of this session";

/// What is being decided.
#[derive(Clone, Copy)]
pub enum Subject<'a> {
    /// A shell line, analysed into its simple commands.
    Line(&'a str),
    /// A tool call's one-line description and the actions it was lowered to.
    Actions(&'a str, &'a [Action]),
}

/// How an exec inside an already allowed command adjusts its verdict (the
/// exec supervisor's inheritance).
pub type Adjust<'a> = &'a (dyn Fn(Verdict, &LineVerdict) -> Verdict + Sync);

/// One request to decide.
pub struct Request<'a> {
    /// The session whose approvals and history apply; `None`: none do,
    /// and nothing of the request is kept.
    pub session: Option<&'a str>,
    pub subject: Subject<'a>,
    /// Where and when; the ids the request's actions get.
    pub cx: LineContext<'a>,
    /// The time of the request (the adapter's clock).
    pub now: jiff::Timestamp,
    /// The agent can ask its human itself: an ask is handed back as `ask`.
    pub agent_asks: bool,
    /// The same call again (a permission request after its pre-tool
    /// event): not counted for the doom loop or `rate`.
    pub repeat: bool,
    /// A program's traffic seen by a gateway (the egress proxy), not a
    /// call of the agent's own: programs repeat requests (polling,
    /// retries), so it never makes a doom loop, nor breaks one; `rate`
    /// still counts it.
    pub traffic: bool,
    /// When the adapter started waiting: a "reject" given since rejects
    /// this request too (the cascade across processes).
    pub waiting_since: Option<jiff::Timestamp>,
    /// The longest the caller waits for an answer.
    pub prompt_budget: Option<Duration>,
    /// How long an ask waits when neither its rule nor the settings say.
    pub default_timeout: Duration,
    pub adjust: Option<Adjust<'a>>,
}

/// The next step of a request.
#[allow(clippy::large_enum_variant)]
pub enum Step {
    Done(Decided),
    /// Someone must be asked; answer with [`Core::answer`].
    Ask(Pending),
}

/// An ask in progress.
#[derive(Clone)]
pub struct Pending {
    pub question: Question,
    /// Where the policy wants it asked.
    pub ask_mode: AskMode,
    /// The verdict that asks (`ask` or `judge`).
    pub verdict: Verdict,
    /// The action it is about.
    pub action: Action,
    on_timeout: Decision,
    /// The asking rule's priority, which an "always" keeps.
    priority: i64,
    epoch: u64,
    prompts: usize,
    /// The line had more than one command: an "always" may leave others to ask.
    several: bool,
    doom: Option<(Verdict, Action)>,
    amendments: Vec<Amendment>,
    /// For a `judge` rule with a judge: what to ask it, before any human.
    pub judge: Option<JudgeAsk>,
    /// A judge's call that sent this ask on to a human.
    judged: Option<JudgeUse>,
    /// The agent asks its human itself (once the judge said ask).
    agent_asks: bool,
}

/// What a `judge` rule asks its judge.
#[derive(Clone, Debug)]
pub struct JudgeAsk {
    pub def: JudgeDef,
    /// The rule that asked.
    pub rule: Option<String>,
    /// The rule's `model`, in place of the judge's.
    pub model: Option<String>,
    pub prompt: Option<String>,
    pub cache_ttl: Option<Duration>,
    pub fail_closed: bool,
    /// The action as the judge sees it: no id, time or session.
    pub action: serde_json::Value,
}

impl JudgeAsk {
    /// What `def` is asked about `action` (as [`judged_action`] shows it)
    /// for `rule`, a `judge` rule: its prompt, model, cache TTL and
    /// `fail_closed`. Without a rule (`aileron judge try` on an action no
    /// `judge` rule matches): no prompt, no cache, fail closed.
    pub fn new(def: JudgeDef, rule: Option<&Rule>, action: serde_json::Value) -> JudgeAsk {
        let spec = rule.and_then(|r| r.judge.clone()).unwrap_or_default();
        JudgeAsk {
            def,
            rule: rule.map(|r| r.id.clone()),
            model: spec.model,
            prompt: spec.prompt,
            cache_ttl: spec.cache_ttl.map(Duration::from_secs),
            fail_closed: spec.fail_closed,
            action,
        }
    }

    /// The judge's configuration for the call.
    pub fn config(&self) -> aileron_judge::JudgeConfig {
        let d = &self.def;
        aileron_judge::JudgeConfig {
            name: d.name.clone(),
            provider: aileron_judge::Provider::parse(&d.provider)
                .unwrap_or(aileron_judge::Provider::OpenAi),
            base_url: d.base_url.clone(),
            model: self.model.clone().unwrap_or_else(|| d.model.clone()),
            api_key_env: d.api_key_env.clone(),
            timeout: Duration::from_secs(d.timeout.unwrap_or(10)),
            max_tokens: d.max_tokens.unwrap_or(300).min(u32::MAX as u64) as u32,
            temperature: d.temperature.unwrap_or(0.0) as f32,
        }
    }
}

/// How a request was decided, and what the adapter must do about it.
#[derive(Clone, Debug)]
pub struct Decided {
    pub allow: bool,
    /// Handed to the agent to ask its human.
    pub agent_asks: bool,
    /// The one line for the agent (stderr, the hook's reason) when not allowed.
    pub message: Option<String>,
    /// The final verdict: a person's answer has source `human` and the
    /// channel it came through as its approver.
    pub verdict: Verdict,
    /// The action the verdict is about (the line's decisive command).
    pub action: Action,
    pub outcome: Option<Outcome>,
    /// A rejection's words for the agent.
    pub feedback: Option<String>,
    /// "Always" answers for a project or the user: rules to append.
    pub amendments: Vec<Amendment>,
    /// The LLM judge's call, when one was made (or its verdict reused).
    pub judge: Option<JudgeUse>,
}

/// A rule an "always for this project / for me" answer adds to a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Amendment {
    pub scope: AlwaysScope,
    pub approval: SavedApproval,
    /// The rule that asked; the added allow must outrank it.
    pub asking_rule: Option<String>,
}

impl Amendment {
    /// The file it goes to: the project's policy (or a new one in `cwd`),
    /// or the user's settings.
    pub fn path(&self, project_file: Option<&Path>, cwd: &Path, home: &Path) -> PathBuf {
        match self.scope {
            AlwaysScope::Project => {
                project_file.map_or_else(|| cwd.join("aileron.yaml"), |p| p.to_path_buf())
            }
            _ => home.join(".aileron").join("settings.yaml"),
        }
    }

    /// The priority to write at `path` so that the added allow outranks
    /// the rule that asked (`None`: an allow's default does).
    pub fn priority(&self, policy: &Policy, path: &Path) -> Option<i64> {
        let rule = self.asking_rule.as_deref().and_then(|id| policy.rule(id))?;
        let layer = match self.scope {
            AlwaysScope::User => Layer::User,
            _ => Layer::Project,
        };
        // Rules rank by priority, then scope, then layer, then the later in
        // their file: the same priority wins only from a higher layer or
        // after the rule in its own file, against a rule with no scope.
        let ties_win = rule.scope.specificity() == 0
            && (layer > rule.layer
                || (layer == rule.layer && Path::new(&rule.origin.file) == path));
        let needed = if ties_win {
            rule.priority
        } else {
            rule.priority.saturating_add(1)
        };
        (needed > Decision::Allow.default_priority()).then_some(needed)
    }
}

/// Every session's state, and the decision of each request.
#[derive(Default)]
pub struct Core {
    /// Each session behind a lock of its own, the map's lock held only to
    /// find it; an evaluation holds neither (it takes the session's
    /// approvals, shared, and lets go) unless the policy counts a `rate`
    /// window in the session's history. A std lock held through an
    /// evaluation blocked the runtime's worker threads behind it.
    sessions: Mutex<HashMap<String, Arc<Mutex<SessionState>>>>,
}

impl Core {
    pub fn new() -> Core {
        Core::default()
    }

    /// Decides `req` as far as the policy and the session can.
    pub fn decide(&self, policy: &Policy, req: &Request<'_>) -> Step {
        let (epoch, last_reject) = self.read(req.session, |st| (st.reject_epoch, st.last_reject));
        let rejected_meanwhile = req.waiting_since.is_some_and(|t| last_reject > nanos(t));
        if rejected_meanwhile {
            let lv = self.evaluate(policy, req);
            let (verdict, action, _) = most_restrictive(&lv, None, req);
            return Step::Done(rejected_earlier(verdict, action));
        }
        let lv = self.evaluate(policy, req);
        let doom = if req.traffic {
            None
        } else {
            self.doom_loop(policy, req, &lv, !req.repeat)
        };
        if !req.repeat {
            self.record_history(policy, req.session, &lv);
        }
        self.settle(policy, req, lv, doom, epoch, 0, Vec::new())
    }

    /// Steps an ask again before it is put (or while it waits): a "reject"
    /// given meanwhile rejects it, an "always" that now covers it allows it.
    pub fn resume(&self, policy: &Policy, req: &Request<'_>, pending: Pending) -> Step {
        if self.read(req.session, |st| st.reject_epoch) != pending.epoch {
            return Step::Done(rejected_earlier(pending.verdict, pending.action));
        }
        let lv = self.evaluate(policy, req);
        let (verdict, ..) = most_restrictive(&lv, pending.doom.as_ref(), req);
        if verdict.decision == pending.verdict.decision {
            return Step::Ask(pending);
        }
        let Pending {
            doom,
            epoch,
            prompts,
            amendments,
            ..
        } = pending;
        match self.settle(policy, req, lv, doom, epoch, prompts, amendments) {
            // Asked, and approved by an answer to another request (an
            // "always" that covers it): approved this once.
            Step::Done(mut d) if d.allow && d.outcome.is_none() => {
                d.outcome = Some(Outcome::ApprovedOnce);
                Step::Done(d)
            }
            step => step,
        }
    }

    /// Applies an answer that came through `channel`.
    pub fn answer(
        &self,
        policy: &Policy,
        req: &Request<'_>,
        pending: Pending,
        answer: Answer,
        channel: Channel,
    ) -> Step {
        let Pending {
            question,
            mut verdict,
            action,
            on_timeout,
            priority,
            epoch,
            prompts,
            several,
            doom,
            mut amendments,
            judged,
            ..
        } = pending;
        let prompts = prompts + 1;
        if answer.by_a_person() {
            verdict.source = VerdictSource::Human;
            verdict.approver = Some(channel.as_str().to_owned());
        }
        let done = |allow: bool, message, outcome, verdict, action, amendments| {
            Step::Done(Decided {
                allow,
                agent_asks: false,
                message,
                verdict,
                action,
                outcome: Some(outcome),
                feedback: None,
                amendments,
                judge: judged.clone(),
            })
        };
        match answer {
            Answer::Once => done(
                true,
                None,
                Outcome::ApprovedOnce,
                verdict,
                action,
                amendments,
            ),
            Answer::Always(scope, pattern) => {
                // A shell command is pinned as a command glob however it
                // came (a line, or an action carrying one).
                let approval = match req.subject {
                    _ if action.kind == "shell.exec" => SavedApproval::Command {
                        pattern: if pattern.is_empty() {
                            escape_glob(&question.command)
                        } else {
                            pattern
                        },
                        priority,
                    },
                    _ => SavedApproval::Action {
                        kind: action.kind.to_string(),
                        fields: approval_fields(&action),
                        priority,
                    },
                };
                self.with(req.session, |st| st.remember(approval.clone()));
                if scope != AlwaysScope::Session {
                    amendments.push(Amendment {
                        scope,
                        approval,
                        asking_rule: verdict.rule.clone(),
                    });
                }
                if !several {
                    return done(
                        true,
                        None,
                        Outcome::always(scope),
                        verdict,
                        action,
                        amendments,
                    );
                }
                // Other parts of the line may still need an answer.
                let lv = self.evaluate(policy, req);
                self.settle(policy, req, lv, doom, epoch, prompts, amendments)
            }
            Answer::Reject => {
                self.note_reject(req);
                let message = format!(
                    "aileron: rejected: the user rejected `{}`",
                    question.command
                );
                done(
                    false,
                    Some(message),
                    Outcome::Rejected,
                    verdict,
                    action,
                    amendments,
                )
            }
            Answer::Feedback(text) => {
                self.note_reject(req);
                let message = format!("aileron: rejected: {text}");
                let mut step = done(
                    false,
                    Some(message),
                    Outcome::Corrected,
                    verdict,
                    action,
                    amendments,
                );
                if let Step::Done(d) = &mut step {
                    d.feedback = Some(text);
                }
                step
            }
            Answer::Timeout => {
                let allow = on_timeout == Decision::Allow;
                let rule = rule_label(&verdict);
                // Nobody decided: the clock and the rule's `on_timeout` did.
                verdict.source = VerdictSource::Default;
                verdict.reason = format!("no answer within {}s", question.timeout.as_secs());
                let message =
                    (!allow).then(|| format!("aileron: denied: {} ({rule})", verdict.reason));
                done(
                    allow,
                    message,
                    Outcome::Timeout { allowed: allow },
                    verdict,
                    action,
                    amendments,
                )
            }
            Answer::Unavailable(why) => {
                let message = format!(
                    "aileron: denied: approval needed but {why} ({})",
                    rule_label(&verdict)
                );
                done(
                    false,
                    Some(message),
                    Outcome::NoApprover,
                    verdict,
                    action,
                    amendments,
                )
            }
        }
    }

    /// The state kept for a session between processes.
    pub fn export_session(&self, session: &str) -> SavedSession {
        self.read(Some(session), |st| st.export())
    }

    /// Restores what [`Core::export_session`] saved.
    pub fn import_session(&self, session: &str, saved: SavedSession) {
        self.with(Some(session), |st| st.import(saved));
    }

    /// Whether the session has state here (a server restores a session's
    /// history from its log the first time it sees it).
    pub fn knows(&self, session: &str) -> bool {
        self.lock().contains_key(session)
    }

    /// Seeds a session's `rate` history (oldest first).
    pub fn seed_history(&self, session: &str, actions: impl IntoIterator<Item = Action>) {
        self.with(Some(session), |st| {
            for a in actions {
                st.push_history(a);
            }
        });
    }

    /// The session's "always" answers.
    pub fn approvals(&self, session: &str) -> Vec<SavedApproval> {
        self.read(Some(session), |st| st.saved_approvals.clone())
    }

    /// Adds "always" answers given elsewhere (another server sharing the
    /// database) to the session; those it has already are left as they are.
    pub fn remember_approvals(
        &self,
        session: &str,
        approvals: impl IntoIterator<Item = SavedApproval>,
    ) {
        self.with(Some(session), |st| {
            for a in approvals {
                st.remember(a);
            }
        });
    }

    /// The verdict with the session's approvals and history, as the
    /// request stands now (no history recorded).
    pub fn evaluate(&self, policy: &Policy, req: &Request<'_>) -> LineVerdict {
        let verdict = |state: &State| match req.subject {
            Subject::Line(line) => policy.evaluate_line(line, &req.cx, state),
            Subject::Actions(_, actions) => actions_verdict(policy, actions, state),
        };
        if policy.rate_window().is_none() {
            // Nothing reads the history (none is kept: `record_history`):
            // the approvals are taken and the session's lock let go, so
            // that a worker thread never waits on another's evaluation.
            let approvals = self.read(req.session, |st| Arc::clone(&st.approvals));
            return verdict(&State {
                approvals: &approvals,
                history: &[],
            });
        }
        self.read(req.session, |st| {
            verdict(&State {
                approvals: &st.approvals,
                history: st.history(),
            })
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn settle(
        &self,
        policy: &Policy,
        req: &Request<'_>,
        lv: LineVerdict,
        doom: Option<(Verdict, Action)>,
        epoch: u64,
        prompts: usize,
        amendments: Vec<Amendment>,
    ) -> Step {
        let (verdict, action, command) = most_restrictive(&lv, doom.as_ref(), req);
        let verdict = match req.adjust {
            Some(adjust) => adjust(verdict, &lv),
            None => verdict,
        };
        let outcome = |d: Decided| {
            Step::Done(Decided {
                amendments: amendments.clone(),
                ..d
            })
        };
        match verdict.decision {
            Decision::Allow => {
                let answer = (prompts > 0).then_some(Outcome::Approved);
                return outcome(Decided::allowed(verdict, action, answer));
            }
            Decision::Deny => {
                let message = Some(denied_message("denied", &verdict));
                return outcome(Decided::refused(message, verdict, action, None));
            }
            Decision::Ask | Decision::Judge => {}
        }
        let ask_mode = policy.settings.ask_mode.unwrap_or_default();
        let agent_asks = req.agent_asks && ask_mode != AskMode::Ui;
        // A judge decides before any human, the agent's included.
        let rule = verdict.rule.as_deref().and_then(|id| policy.rule(id));
        let judge = rule
            .filter(|r| verdict.decision == Decision::Judge && r.judge.is_some())
            .and_then(|r| {
                let def = policy.judge_for(r)?.clone();
                Some(JudgeAsk::new(def, Some(r), judged_action(&action, &lv)))
            });
        if agent_asks && judge.is_none() {
            // The agent's own prompt asks its human (SPEC 10).
            let message = Some(denied_message("approval needed", &verdict));
            let mut d = Decided::refused(message, verdict, action, Some(Outcome::AskedAgent));
            d.agent_asks = true;
            return outcome(d);
        }
        if prompts == MAX_PROMPTS_PER_LINE {
            let message = Some(denied_message("denied", &verdict));
            return outcome(Decided::refused(
                message,
                verdict,
                action,
                Some(Outcome::TooManyPrompts),
            ));
        }
        let timeout = rule
            .and_then(|r| r.approver.as_ref()?.timeout)
            .or(policy.settings.timeout)
            .map_or(req.default_timeout, Duration::from_secs)
            .min(req.prompt_budget.unwrap_or(Duration::MAX));
        let on_timeout = rule
            .and_then(|r| r.approver.as_ref()?.on_timeout)
            .or(policy.settings.on_timeout)
            .unwrap_or(Decision::Deny);
        let (line, suggestion) = match req.subject {
            Subject::Line(line) => (line.to_owned(), suggest_prefix(&command)),
            Subject::Actions(line, _) => (line.to_owned(), String::new()),
        };
        let priority = rule.map_or(Decision::Ask.default_priority(), |r| r.priority);
        Step::Ask(Pending {
            question: Question {
                line,
                command,
                rule: verdict.rule.clone(),
                reason: verdict.reason.clone(),
                suggestion,
                timeout,
                allow_on_timeout: on_timeout == Decision::Allow,
            },
            ask_mode,
            verdict,
            action,
            on_timeout,
            priority,
            epoch,
            prompts,
            several: lv.commands.len() > 1,
            doom,
            amendments,
            judge,
            judged: None,
            agent_asks,
        })
    }

    /// Asks the judge of a `judge` rule's pending ask (through `bench`,
    /// the adapter's judges and caches: the one blocking call the core
    /// makes): its allow or deny decides; its ask, or no judge, leaves the
    /// ask to a human; a failure ends in the rule's `fail_closed`.
    pub fn judge(&self, bench: &aileron_judge::Bench, pending: Pending) -> Step {
        let Some(ask) = pending.judge.clone() else {
            return Step::Ask(pending);
        };
        let cfg = ask.config();
        let call = aileron_judge::Call {
            judge: &cfg,
            input: aileron_judge::Input {
                rule: ask.rule.as_deref(),
                rule_prompt: ask.prompt.as_deref(),
                action: &ask.action,
            },
            cache_ttl: ask.cache_ttl,
        };
        let started = std::time::Instant::now();
        let result = bench.decide(&call);
        judged(pending, &cfg, &ask, result, started.elapsed())
    }

    fn note_reject(&self, req: &Request<'_>) {
        if let Some(session) = req.session {
            self.reject_session(session, req.now);
        }
    }

    /// A "reject" given at `now` outside this core (an adapter's own ask):
    /// the session's waiting asks are rejected when they resume.
    pub fn reject_session(&self, session: &str, now: jiff::Timestamp) {
        let now = nanos(now);
        self.with(Some(session), |st| {
            st.reject_epoch += 1;
            st.last_reject = st.last_reject.max(now);
        });
    }

    /// Counts the request; when it is the third identical one in a row,
    /// the policy's verdict on an `agent.doom_loop` action, as sensitive
    /// as the request's most sensitive part (`lv`: its verdict).
    fn doom_loop(
        &self,
        policy: &Policy,
        req: &Request<'_>,
        lv: &LineVerdict,
        record: bool,
    ) -> Option<(Verdict, Action)> {
        let (tool, input, repeated) = match req.subject {
            Subject::Line(line) => ("shell".to_owned(), line.to_owned(), line.to_owned()),
            Subject::Actions(line, actions) => {
                let tool = actions
                    .first()
                    .and_then(|a| a.facets.get("tool")?.get("name")?.as_str())
                    .map_or_else(|| actions[0].kind.to_string(), str::to_owned);
                let repeated = serde_json::to_string(
                    &actions
                        .iter()
                        .map(|a| (&a.kind, &a.facets))
                        .collect::<Vec<_>>(),
                )
                .unwrap_or_default();
                (tool, line.to_owned(), repeated)
            }
        };
        // Kept as a digest: a session's saved state must not grow with the
        // size of its calls (a 20 MB write).
        let repeated = digest(&repeated);
        let looping = self.with(req.session, |st| {
            // A repeat is checked against the count, not added to it.
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
            id: format!("{}.doom", req.cx.id),
            timestamp: req.cx.timestamp,
            kind: ActionType::AgentDoomLoop,
            summary: format!("the same {tool} call {DOOM_LOOP_THRESHOLD} times in a row: {input}"),
            session: req.cx.session.clone(),
            sensitivity: lv
                .commands
                .iter()
                .map(|c| c.action.sensitivity.unwrap_or(Sensitivity::Mutate))
                .max()
                .or(Some(Sensitivity::Mutate)),
            ..Action::default()
        };
        action.facets.insert(
            "agent".into(),
            serde_json::json!({"tool": tool, "input": input, "count": DOOM_LOOP_THRESHOLD}),
        );
        action.normalize();
        let verdict = policy.evaluate(&action, &State::default());
        // Only a rule makes a loop a question (the built-in asks unless the
        // call only reads): the policy's `default` already decided the
        // call itself, and under `default: deny` the third `ls` in a row
        // must not be denied for being the third.
        (verdict.source != VerdictSource::Default).then_some((verdict, action))
    }

    /// Adds the request's actions to the history `rate` counts. Under a
    /// policy without `rate` rules nothing reads it, so none is kept (a
    /// hook would load and save it on every call).
    fn record_history(&self, policy: &Policy, session: Option<&str>, lv: &LineVerdict) {
        let counted = policy.rate_window().is_some();
        self.with(session, |st| {
            if !counted {
                st.clear_history();
                return;
            }
            for c in &lv.commands {
                st.push_history(c.action.clone());
            }
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Mutex<SessionState>>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session's state, made when it is new.
    fn state(&self, session: &str) -> Arc<Mutex<SessionState>> {
        let mut sessions = self.lock();
        if let Some(st) = sessions.get(session) {
            return Arc::clone(st);
        }
        if sessions.len() >= MAX_SESSIONS {
            sessions.clear();
        }
        Arc::clone(sessions.entry(session.to_owned()).or_default())
    }

    /// Changes the session's state (a fresh one for no session).
    fn with<T>(&self, session: Option<&str>, f: impl FnOnce(&mut SessionState) -> T) -> T {
        let Some(session) = session else {
            return f(&mut SessionState::default());
        };
        let st = self.state(session);
        let mut st = st.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut st)
    }

    /// Reads the session's state (a fresh one for no session).
    fn read<T>(&self, session: Option<&str>, f: impl FnOnce(&SessionState) -> T) -> T {
        let Some(session) = session else {
            return f(&SessionState::default());
        };
        let st = self.state(session);
        let st = st.lock().unwrap_or_else(|p| p.into_inner());
        f(&st)
    }
}

impl Decided {
    fn allowed(verdict: Verdict, action: Action, outcome: Option<Outcome>) -> Decided {
        Decided {
            allow: true,
            ..Decided::refused(None, verdict, action, outcome)
        }
    }

    /// A refusal: `message` for the agent.
    pub fn refused(
        message: Option<String>,
        verdict: Verdict,
        action: Action,
        outcome: Option<Outcome>,
    ) -> Decided {
        Decided {
            allow: false,
            agent_asks: false,
            message,
            verdict,
            action,
            outcome,
            feedback: None,
            amendments: Vec::new(),
            judge: None,
        }
    }

    /// `allow`, `deny`, or `ask` when the agent is to ask its human.
    pub fn decision(&self) -> Decision {
        if self.allow {
            Decision::Allow
        } else if self.agent_asks {
            Decision::Ask
        } else {
            Decision::Deny
        }
    }
}

/// Applies a judge's answer (or failure) to its pending ask.
fn judged(
    mut pending: Pending,
    cfg: &aileron_judge::JudgeConfig,
    ask: &JudgeAsk,
    result: Result<aileron_judge::Ruling, aileron_judge::Error>,
    took: Duration,
) -> Step {
    use aileron_judge::JudgeDecision;
    let name = &cfg.name;
    let mut usage = JudgeUse {
        name: name.clone(),
        model: cfg.model.clone(),
        verdict: "error".into(),
        cached: false,
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: took.as_millis() as u64,
    };
    let mut verdict = pending.verdict.clone();
    verdict.approver = Some(format!("judge:{name}"));
    let (allow, outcome) = match result {
        Ok(r) => {
            usage.verdict = r.verdict.decision.as_str().into();
            usage.cached = r.cached;
            usage.prompt_tokens = r.usage.prompt_tokens;
            usage.completion_tokens = r.usage.completion_tokens;
            verdict.reason = format!("judge {name}: {}", r.verdict.reason);
            match r.verdict.decision {
                JudgeDecision::Allow => (true, Outcome::JudgeAllowed),
                JudgeDecision::Deny => (false, Outcome::JudgeDenied),
                JudgeDecision::Ask if pending.agent_asks => {
                    // The agent's own prompt asks its human (SPEC 10).
                    usage.verdict = "ask".into();
                    let message = Some(denied_message("approval needed", &verdict));
                    let mut d = Decided::refused(
                        message,
                        verdict,
                        pending.action,
                        Some(Outcome::AskedAgent),
                    );
                    d.agent_asks = true;
                    d.judge = Some(usage);
                    return Step::Done(d);
                }
                JudgeDecision::Ask => {
                    // A human decides, told what the judge said (the
                    // policy's decision stays `judge`: resuming compares it).
                    pending.verdict.reason = verdict.reason.clone();
                    pending.question.reason = verdict.reason;
                    pending.judge = None;
                    pending.judged = Some(usage);
                    return Step::Ask(pending);
                }
            }
        }
        Err(e) => {
            let allow = !ask.fail_closed;
            verdict.reason = format!(
                "judge {name} gave no verdict ({e}); `fail_closed: {}`",
                ask.fail_closed
            );
            (allow, Outcome::JudgeFailed { allowed: allow })
        }
    };
    verdict.source = VerdictSource::Llm;
    let message = (!allow).then(|| denied_message("denied", &verdict));
    Step::Done(Decided {
        allow,
        agent_asks: false,
        message,
        verdict,
        action: pending.action,
        outcome: Some(outcome),
        feedback: None,
        amendments: pending.amendments,
        judge: Some(usage),
    })
}

/// The action as a judge sees it: its type, summary and facets, and the
/// simple commands of its line; never its id, time or session.
pub fn judged_action(action: &Action, lv: &LineVerdict) -> serde_json::Value {
    let commands: Vec<&str> = lv.commands.iter().map(|c| c.command.as_str()).collect();
    serde_json::json!({
        "type": action.kind.as_str(),
        "summary": action.summary,
        "facets": action.facets,
        "commands": commands,
    })
}

/// A request rejected by a "reject" given to another request of its
/// session (nobody answered this one).
fn rejected_earlier(mut verdict: Verdict, action: Action) -> Decided {
    verdict.reason = "the user rejected an earlier request of this session".to_owned();
    verdict.approver = None;
    Decided::refused(
        Some(REJECTED_EARLIER.to_owned()),
        verdict,
        action,
        Some(Outcome::Rejected),
    )
}

/// Every action of a tool call against the policy: the most restrictive
/// decides (the first among equals). A shell line not yet analysed
/// (`shell.exec` without `shell.binary`) stands for its simple commands.
fn actions_verdict(policy: &Policy, actions: &[Action], state: &State<'_>) -> LineVerdict {
    let mut commands: Vec<CommandVerdict> = Vec::with_capacity(actions.len());
    for a in actions {
        if let Some(line) = unanalysed_line(a) {
            let cwd = a.session.cwd.as_deref().unwrap_or("/");
            let cx = LineContext {
                cwd,
                session: &a.session,
                timestamp: a.timestamp,
                id: &a.id,
                exe: None,
            };
            let lv = policy.evaluate_line(line, &cx, state);
            if actions.len() == 1 {
                return lv;
            }
            commands.extend(lv.commands);
            continue;
        }
        commands.push(CommandVerdict {
            command: a.summary.clone(),
            action: a.clone(),
            parent: None,
            notes: Vec::new(),
            verdict: policy.evaluate(a, state),
            explanation: None,
            files: Vec::new(),
        });
    }
    let decisive = (0..commands.len()).max_by_key(|&i| {
        (
            commands[i].verdict.decision.restrictiveness(),
            usize::MAX - i,
        )
    });
    LineVerdict {
        verdict: decisive.map_or_else(
            || policy.evaluate(&Action::default(), state),
            |i| commands[i].verdict.clone(),
        ),
        decisive,
        commands,
        opaque: None,
    }
}

/// The line of a `shell.exec` action that was not analysed yet.
fn unanalysed_line(a: &Action) -> Option<&str> {
    if a.kind != "shell.exec" || a.facet_str("shell", "binary").is_some() {
        return None;
    }
    a.facet_str("shell", "line")
        .or_else(|| a.facet_str("shell", "command"))
}

/// The request's verdict, the action it is about and the command to show.
fn most_restrictive(
    lv: &LineVerdict,
    doom: Option<&(Verdict, Action)>,
    req: &Request<'_>,
) -> (Verdict, Action, String) {
    let (mut verdict, mut action, mut command) = match lv.decisive {
        Some(i) => (
            lv.verdict.clone(),
            lv.commands[i].action.clone(),
            lv.commands[i].command.clone(),
        ),
        None => {
            let action = subject_action(req.subject, req.cx.session, req.cx.timestamp);
            let command = action.summary.clone();
            (lv.verdict.clone(), action, command)
        }
    };
    if let Some((dv, da)) = doom
        && dv.decision.restrictiveness() > verdict.decision.restrictiveness()
    {
        verdict = dv.clone();
        action = da.clone();
        if let Subject::Line(line) = req.subject {
            command = line.to_owned();
        }
    }
    (verdict, action, command)
}

/// The action to record when no single part of the request decided.
pub fn subject_action(
    subject: Subject<'_>,
    session: &Session,
    now: Option<jiff::Timestamp>,
) -> Action {
    match subject {
        Subject::Actions(_, actions) if !actions.is_empty() => actions[0].clone(),
        Subject::Actions(line, _) | Subject::Line(line) => {
            let mut a = Action {
                kind: ActionType::ShellExec,
                timestamp: now,
                summary: line.to_owned(),
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

/// `aileron: WORD: REASON (rule ID)`.
pub fn denied_message(word: &str, v: &Verdict) -> String {
    format!("aileron: {word}: {} ({})", v.reason, rule_label(v))
}

/// A short fixed-size stand-in for a request, for the doom-loop count.
fn digest(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("{:016x}:{}", h.finish(), text.len())
}

fn nanos(t: jiff::Timestamp) -> u128 {
    t.as_nanosecond().max(0) as u128
}
