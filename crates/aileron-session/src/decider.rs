//! Deciding one request for a session: a shell line (the shim, a hook's
//! shell tool, an exec the supervisor stopped) or any other action (a
//! hook's file, web, MCP or other tool call). The decision itself is
//! `aileron_decision::Core`'s; this adapter loads the policy, asks on the
//! terminal or the dashboard, writes the amendments and the audit line.

use crate::board::{Board, PendingAsk, WireAnswer};
use crate::prompt::{Answer, Owners, Prompter, Terminal};
use crate::protocol::{Request, Response};
use crate::remote::Remote;
use aileron_audit::{AuditAction, AuditLog, AuditRecord, Masker};
use aileron_config::LoadOptions;
use aileron_decision::{AskMode, Channel, Core, Decided, Pending, Step, Subject};
pub use aileron_decision::{DOOM_LOOP_THRESHOLD, SavedApproval, SavedSession, denied_message};
use aileron_engine::{Action, Decision, LineContext, LineVerdict, Policy, Session, Verdict};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long to wait for a human when neither the rule nor the settings say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

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

/// The session's shared state; one per launch (or per shim call without one).
pub struct Decider {
    cfg: Config,
    /// Approvals, history, doom loop and rejects of every agent session
    /// (hooks under one launch may report several), and the decision.
    core: Core,
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
    /// The LLM judges of `judge` rules, with their verdict cache (in
    /// memory, and on disk for the next shim or hook process).
    bench: aileron_judge::Bench,
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
    /// A launch session's asks that wait for `aileron approve` when the
    /// terminal is the agent's, with the key approvers must give.
    board: std::sync::OnceLock<(Board, String)>,
    /// The launched program (whose group may hold the terminal when the
    /// session takes it to ask).
    agent_pid: std::sync::OnceLock<u32>,
    /// The launched program is an interactive bash whose DEBUG trap runs
    /// `aileron gate` ([`Decider::gate_the_launched_shell`]).
    pub(crate) gated_shell: std::sync::atomic::AtomicBool,
    /// Requests waiting for their turn to ask.
    queued: std::sync::atomic::AtomicUsize,
}

impl Decider {
    pub fn new(cfg: Config, prompter: Box<dyn Prompter>) -> Decider {
        let masker = Masker::new(cfg.secrets.clone());
        let bench = aileron_judge::Bench::with_disk(&cfg.load.data_dir.join("judge-cache"));
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
            board: std::sync::OnceLock::new(),
            agent_pid: std::sync::OnceLock::new(),
            gated_shell: std::sync::atomic::AtomicBool::new(false),
            queued: std::sync::atomic::AtomicUsize::new(0),
            real_shell_path,
            remote,
            cfg,
            core: Core::new(),
            prompt_lock: Mutex::new(()),
            prompter,
            masker,
            last_policy: aileron_config::Memo::default(),
            bench,
        }
    }

    /// Lets asks wait for `aileron approve` (given `key`) whenever the
    /// terminal cannot be asked on without fighting the agent for it.
    pub fn enable_board(&self, key: String) {
        let _ = self.board.set((Board::default(), key));
    }

    /// The launched program's process id.
    pub fn set_agent_pid(&self, pid: u32) {
        let _ = self.agent_pid.set(pid);
    }

    /// The launched program is an interactive bash that asks this session
    /// about each typed line through `aileron gate`: that gate, run by it
    /// alone, is the session's own, and the line it allowed is the shell's.
    pub fn gate_the_launched_shell(&self) {
        self.gated_shell
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The dashboard's address, when a server is configured.
    pub fn dashboard(&self) -> Option<&str> {
        self.remote.as_ref().map(Remote::url)
    }

    /// Whether asks can wait for `aileron approve`.
    pub fn has_board(&self) -> bool {
        self.board.get().is_some()
    }

    /// Whether `key` is the approver key.
    pub fn approver_key_is(&self, key: &str) -> bool {
        self.board.get().is_some_and(|(_, k)| {
            k.len() == key.len()
                && k.bytes()
                    .zip(key.bytes())
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                    == 0
        })
    }

    /// The asks waiting for `aileron approve`, and how many requests wait
    /// for their turn behind them.
    pub fn waiting_asks(&self) -> (Vec<PendingAsk>, usize) {
        let asks = self.board.get().map(|(b, _)| b.list()).unwrap_or_default();
        let queued = self.queued.load(std::sync::atomic::Ordering::SeqCst);
        (asks, queued)
    }

    /// Answers a waiting ask; the decision is `Core::answer`'s, as for a
    /// terminal prompt.
    pub fn answer_waiting(&self, id: &str, answer: &WireAnswer) -> Result<(), String> {
        match self.board.get() {
            Some((board, _)) => board.answer(id, answer),
            None => Err("this session takes no answers from `aileron approve`".to_owned()),
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
        let mut opts = self.cfg.load.clone();
        opts.cwd = PathBuf::from(&req.cwd);
        let now = jiff::Timestamp::now();
        let time = aileron_engine::action::timestamp_from_unix(now.as_second())
            .unwrap_or_else(|| "1970-01-01T00:00:00Z".into());
        // Whole seconds, as the audit line's time.
        let timestamp = jiff::Timestamp::from_second(now.as_second()).ok();
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
                if a.timestamp.is_none() {
                    a.timestamp = timestamp;
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
        let (decided, audit_path) = match loaded {
            Err(reason) => {
                let verdict = Verdict {
                    decision: Decision::Deny,
                    source: aileron_engine::VerdictSource::Default,
                    rule: None,
                    reason,
                    approver: None,
                };
                let message = Some(format!("aileron: denied: {}", verdict.reason));
                let action = aileron_decision::subject_action(subject, &session, timestamp);
                let decided = Decided::refused(message, verdict, action, None);
                (decided, self.cfg.load.data_dir.join("audit.jsonl"))
            }
            Ok(loaded) => {
                let audit = aileron_config::audit_log_path(
                    &loaded.policy,
                    loaded.project_file.as_deref(),
                    &opts,
                );
                let cwd = req.shell_cwd.as_deref().unwrap_or(&req.cwd);
                let home = self.home();
                let adjust = |verdict: Verdict, lv: &LineVerdict| match &req.within {
                    Some(enclosing) => {
                        crate::exec::decided_alone(&verdict, lv, req.alone.as_deref(), enclosing)
                            .unwrap_or_else(|| inherited(verdict, lv, enclosing, cwd, &home))
                    }
                    None => verdict,
                };
                let creq = aileron_decision::Request {
                    session: Some(&key),
                    subject,
                    cx: LineContext {
                        cwd,
                        session: &session,
                        timestamp,
                        id: &id,
                        exe: req.exe.as_deref(),
                    },
                    now,
                    agent_asks: req.agent_asks,
                    repeat: req.repeat,
                    traffic: req.traffic,
                    waiting_since: req.waiting_since.and_then(|n| {
                        jiff::Timestamp::from_nanosecond(n.min(i128::MAX as u128) as i128).ok()
                    }),
                    prompt_budget: req.prompt_budget.map(Duration::from_secs),
                    default_timeout: DEFAULT_TIMEOUT,
                    adjust: req.within.is_some().then_some(&adjust as _),
                };
                let asker = Asker {
                    owners: Owners {
                        agent: self.agent_pid.get().copied(),
                        peer: req.peer,
                    },
                    agent: session.agent.clone(),
                    cwd: req.cwd.clone(),
                    home: self.home().into_owned(),
                };
                let decided = self.drive(&loaded.policy, &creq, &asker);
                self.amend(
                    &loaded.policy,
                    loaded.project_file.as_deref(),
                    &opts,
                    &decided,
                );
                (decided, audit)
            }
        };
        let adapter = req.adapter.as_deref().unwrap_or(&self.cfg.adapter);
        let record = decided
            .record(&aileron_decision::Origin {
                time: &time,
                adapter,
                session: session.id.as_deref(),
                agent: session.agent.as_deref(),
                cwd: Some(&req.cwd),
                latency_us: started.elapsed().as_micros() as u64,
            })
            .masked(&self.masker);
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
        Response {
            allow: decided.allow,
            decision: decided.decision().as_str().to_owned(),
            message: decided.message,
            rule: decided.verdict.rule.clone(),
            real_shell: self.cfg.real_shell.clone(),
        }
    }

    /// Steps the request through the core, asking one question at a time.
    fn drive(
        &self,
        policy: &Policy,
        req: &aileron_decision::Request<'_>,
        asker: &Asker,
    ) -> Decided {
        let mut step = self.core.decide(policy, req);
        loop {
            let pending = match step {
                Step::Done(decided) => return decided,
                // A `judge` rule's judge first (no prompt lock: judging
                // needs no terminal).
                Step::Ask(pending) if pending.judge.is_some() => {
                    step = self.core.judge(&self.bench, pending);
                    continue;
                }
                Step::Ask(pending) => pending,
            };
            // One prompt at a time; a reject or an "always" given while we
            // waited applies to us too.
            use std::sync::atomic::Ordering;
            self.queued.fetch_add(1, Ordering::SeqCst);
            let _turn = self.prompt_lock.lock().unwrap_or_else(|p| p.into_inner());
            self.queued.fetch_sub(1, Ordering::SeqCst);
            step = match self.core.resume(policy, req, pending) {
                Step::Ask(pending) => {
                    let (answer, channel) = self.ask(&pending, asker);
                    self.core.answer(policy, req, pending, answer, channel)
                }
                done => done,
            };
        }
    }

    /// Asks where the policy says: the dashboard (here when the server
    /// is down), or here. Returns the channel that answered.
    fn ask(&self, pending: &Pending, asker: &Asker) -> (Answer, Channel) {
        match (&self.remote, pending.ask_mode) {
            (Some(remote), AskMode::Ui) => match remote.ask(&pending.action, &pending.question) {
                // The server is down: here, or deny.
                Answer::Unavailable(why) => match self.ask_here(pending, asker) {
                    (Answer::Unavailable(also), channel) => {
                        (Answer::Unavailable(format!("{why}, and {also}")), channel)
                    }
                    a => a,
                },
                a => (a, Channel::Dashboard),
            },
            _ => self.ask_here(pending, asker),
        }
    }

    /// Asks on the terminal when that fights nobody for it; else, in a
    /// launch session, waits for `aileron approve` (with a desktop
    /// notification); else nobody can be asked.
    fn ask_here(&self, pending: &Pending, asker: &Asker) -> (Answer, Channel) {
        let question = &pending.question;
        let busy = match self.prompter.terminal(&asker.owners) {
            Terminal::Usable => match self.prompter.ask_as(question, &asker.owners) {
                // Taken meanwhile: the board, as below.
                Answer::Unavailable(why) if self.board.get().is_some() => {
                    match self.prompter.terminal(&asker.owners) {
                        Terminal::Busy(why) => why,
                        _ => return (Answer::Unavailable(why), Channel::Terminal),
                    }
                }
                answer => return (answer, Channel::Terminal),
            },
            Terminal::Busy(why) => why,
            Terminal::Absent(why) => return (Answer::Unavailable(why), Channel::Terminal),
        };
        let Some((board, _)) = self.board.get() else {
            return (
                Answer::Unavailable(format!(
                    "{busy} (under `aileron launch`, `aileron approve` answers from another terminal)"
                )),
                Channel::Terminal,
            );
        };
        let mut view = PendingAsk::of(question);
        view.kind = pending.action.kind.as_str().to_owned();
        view.agent = asker.agent.clone();
        view.cwd = Some(asker.cwd.clone());
        if view.kind == "shell.exec" {
            let cx = aileron_shell::Context {
                cwd: &asker.cwd,
                home: &asker.home,
                limits: Default::default(),
            };
            view.commands = aileron_shell::analyse(&question.line, &cx)
                .commands
                .into_iter()
                .map(|c| c.command)
                .collect();
        }
        let answer = board.wait(view, question.timeout, crate::notify::desktop);
        (answer, Channel::Approve)
    }

    /// Writes the rules "always for this project / for me" answers added,
    /// and says so when one will not take effect.
    fn amend(
        &self,
        policy: &Policy,
        project_file: Option<&Path>,
        opts: &LoadOptions,
        decided: &Decided,
    ) {
        let home = self.home();
        for amendment in &decided.amendments {
            let path = amendment.path(project_file, &opts.cwd, &self.cfg.load.home);
            let priority = amendment.priority(policy, &path);
            if let Ok(mut amended) = self.amended.lock() {
                amended.push(path.clone());
            }
            let comment = format!("added by aileron on {}", &now_rfc3339()[..10]);
            if let Err(e) = amendment.write(&path, priority, &comment, &home) {
                eprintln!("aileron: could not save the rule: {e}");
                continue;
            }
            if let Some(why) = not_effective(opts, &decided.action) {
                eprintln!(
                    "aileron: warning: the rule added to {} does not take effect: {why}",
                    path.display()
                );
            }
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
        let cwd =
            crate::process::cwd(pid).map_or_else(|_| self.cfg.load.cwd.clone(), PathBuf::from);
        self.record_event(
            "shell.exec",
            &format!("an exec of process {pid}"),
            "deny",
            why,
            cwd,
        );
    }

    /// Writes the audit line of a connection the box refused: a Unix
    /// socket of the host, reached by path (`aileron_supervisor::sockets`).
    pub fn record_refused_socket(&self, pid: u32, path: &Path, why: &str) {
        let cwd =
            crate::process::cwd(pid).map_or_else(|_| self.cfg.load.cwd.clone(), PathBuf::from);
        self.record_event(
            "net.socket",
            &format!("a connection of process {pid} to {}", path.display()),
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
        let time = now_rfc3339();
        let mut action = Action {
            id: action_id(),
            timestamp: time.parse().ok(),
            kind: kind.into(),
            summary: summary.into(),
            ..Action::default()
        };
        action.session.id = self.cfg.session_id.clone();
        action.session.agent = self.cfg.agent.clone();
        let record = AuditRecord {
            time,
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
            judge: None,
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
        self.core.export_session(session)
    }

    /// Restores what [`Decider::export_session`] saved.
    pub fn import_session(&self, session: &str, saved: SavedSession) {
        self.core.import_session(session, saved);
    }

    fn session_key(&self, req: &Request) -> String {
        req.session
            .clone()
            .or_else(|| self.cfg.session_id.clone())
            .unwrap_or_default()
    }
}

/// Who is asking, for where the ask goes.
struct Asker {
    owners: Owners,
    agent: Option<String>,
    cwd: String,
    home: String,
}

/// Why an allow rule just added does not allow `action`, if it does not:
/// the policy reloaded from its files decides it otherwise.
fn not_effective(opts: &LoadOptions, action: &Action) -> Option<String> {
    let loaded = match aileron_config::load(opts, None) {
        Ok(l) => l,
        Err(d) => return Some(format!("the policy does not load: {d}")),
    };
    let v = loaded
        .policy
        .evaluate(action, &aileron_engine::State::default());
    (v.decision != Decision::Allow).then(|| {
        format!(
            "`{}` is still decided {} by {}",
            action.summary,
            v.decision.as_str(),
            v.rule.as_deref().unwrap_or("the default")
        )
    })
}

/// An exec inside an allowed command: an `ask` default gives way to that
/// command (its approval answers for what it starts), and a command it
/// already had approved is not asked again.
fn inherited(
    verdict: Verdict,
    lv: &LineVerdict,
    enclosing: &str,
    cwd: &str,
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
                    && crate::exec::line_runs(enclosing, cwd, home, binary, &args)
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
