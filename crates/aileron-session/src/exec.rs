//! Execs seen by the exec supervisor (`aileron launch --enforce exec`),
//! decided through the same [`Decider`] as the shim's lines.
//!
//! A human should see the line an agent runs, not each program it starts.
//! So the session remembers which processes run a decided command (a
//! *context*): the shim handing its line to the real shell, or an exec the
//! supervisor allowed. An exec inside a context is still decided against
//! the policy, and a rule that denies or asks still applies; only an `ask`
//! default (no rule at all) gives way to the command that was allowed (a
//! `deny` default stays), and a command the line already had approved is
//! not asked again.
//! Outside any context (an agent that execs directly) the policy decides
//! alone, default included.
//!
//! A program whose effects leave the box by nature (`sudo`, `ssh`,
//! `unshare`, a container engine's client: [`aileron_shell::leaves`]), or
//! whose file is setuid, setgid or has file capabilities, is decided on its
//! own even inside a context: the policy's verdict for it alone holds.

use crate::decider::Decider;
use crate::process::{ProcStat, start_time};
use crate::protocol::Request;
use aileron_engine::{Decision, LineVerdict, Verdict};
use std::collections::HashMap;
use std::sync::Mutex;

/// One exec, as the supervisor read it from the stopped process.
#[derive(Clone, Debug, Default)]
pub struct ExecCall {
    /// The process (thread group) that execs.
    pub pid: u32,
    /// The process and its ancestors as `(pid, start time)`, nearest first.
    pub lineage: Vec<(u32, u64)>,
    /// The process's working directory.
    pub cwd: String,
    /// The file the kernel loads, resolved (symbolic links, descriptors).
    pub exe: String,
    pub argv: Vec<String>,
    /// Variables of the new program's environment that make it load or
    /// run other code (`LD_PRELOAD`, `BASH_ENV`, ...), where they differ
    /// from the session's own.
    pub code_env: Vec<(String, String)>,
    /// For a script: the program the kernel runs and its arguments before
    /// the script's arguments (interpreter, its `#!` argument, the
    /// script's name); empty otherwise.
    pub interpreter: Vec<String>,
}

/// What the supervisor does with an exec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecRuling {
    Allow,
    /// Fail the exec with `EACCES`; the audit line says why.
    Deny(String),
}

/// Processes that run a decided command.
#[derive(Default)]
pub(crate) struct Contexts {
    inner: Mutex<ContextMap>,
}

#[derive(Default)]
struct ContextMap {
    /// Shims whose line was allowed and that are about to exec the real shell.
    handing_over: HashMap<u32, HandOver>,
    /// A process (by pid and start time) and what it runs.
    running: HashMap<u32, (u64, Context)>,
    /// The launched script's `#!` interpreter chain (pid, start time, what
    /// the kernel runs): `/usr/bin/env node SCRIPT ARGS` execs `node SCRIPT ARGS`.
    launch_interpreter: Option<(u32, u64, Vec<String>)>,
    /// The launched process (pid, start time) and its argv: a launcher
    /// starting its native program with the same arguments is the launch.
    launch_self: Option<(u32, u64, Vec<String>)>,
    /// The launched process (pid, start time), for the session's lifetime.
    launched: Option<(u32, u64)>,
    /// The agent's own program file, once known: the launched program, or
    /// the native program its launcher started.
    agent_exe: Option<String>,
}

/// A decided command that processes run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Context {
    pub line: String,
    /// Where the policy that decided it was found. What the command starts
    /// is decided by that policy wherever it runs: a build tool entering a
    /// dependency's directory (or a directory with a laxer `aileron.yaml`)
    /// does not change the rules.
    pub policy_cwd: String,
    /// Whether `line` was decided by the policy alone (no enclosing
    /// command gave way to it): a program of the line that leaves the box
    /// was then decided on its own with it.
    pub own: bool,
}

struct HandOver {
    start: u64,
    /// What the early path was answered to exec (the full shim builds its
    /// own arguments from what was decided).
    argv: Option<Vec<String>>,
    context: Context,
}

/// Contexts kept at most; the oldest are forgotten first (a forgotten
/// context only makes later execs decided by the policy alone).
const MAX_CONTEXTS: usize = 4096;

impl Contexts {
    pub(crate) fn hand_over(
        &self,
        pid: u32,
        start: u64,
        argv: Option<Vec<String>>,
        context: Context,
    ) {
        let mut m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if m.handing_over.len() >= MAX_CONTEXTS {
            m.handing_over.clear();
        }
        m.handing_over.insert(
            pid,
            HandOver {
                start,
                argv,
                context,
            },
        );
    }

    /// What a shim that now execs exactly what it was answered runs.
    fn take_hand_over(&self, call: &ExecCall) -> Option<Context> {
        let start = call.lineage.first()?.1;
        let mut m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let h = m.handing_over.remove(&call.pid)?;
        let same_argv = h.argv.as_ref().is_none_or(|argv| *argv == call.argv);
        (h.start == start && same_argv).then_some(h.context)
    }

    fn run(&self, pid: u32, start: u64, context: Context) {
        let mut m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if m.running.len() >= MAX_CONTEXTS {
            m.running.clear();
        }
        m.running.insert(pid, (start, context));
    }

    /// Whether `call` is the launched process running the rest of its `#!`
    /// interpreter's command (`env node SCRIPT ARGS` execing `node SCRIPT
    /// ARGS`): only as that process's next exec.
    fn take_launch_interpreter(&self, call: &ExecCall) -> bool {
        let Some(&(pid, start)) = call.lineage.first() else {
            return false;
        };
        let mut m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let Some((p, s, argv)) = &m.launch_interpreter else {
            return false;
        };
        let runs_the_rest = (1..argv.len())
            .any(|k| argv[k..] == call.argv[..] && base_name(&argv[k]) == base_name(&call.exe));
        if (*p, *s) != (pid, start) {
            return false;
        }
        let pass = call.code_env.is_empty() && runs_the_rest;
        // Only the launched process's next exec can be its interpreter's.
        m.launch_interpreter = None;
        pass
    }

    /// Whether `call` is a child of the launched process starting the
    /// program it was launched as again, with the same arguments (Codex
    /// CLI's `node` launcher starting its native `codex`): only as the
    /// first exec of a child of the launched process.
    fn take_launch_self(&self, call: &ExecCall) -> bool {
        let Some(&parent) = call.lineage.get(1) else {
            return false;
        };
        let mut m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let Some((pid, start, argv)) = &m.launch_self else {
            return false;
        };
        if (*pid, *start) != parent {
            return false;
        }
        let same = call.code_env.is_empty()
            && !argv.is_empty()
            && call.argv.len() == argv.len()
            && call.argv[1..] == argv[1..]
            && base_name(&call.argv[0]) == base_name(&argv[0])
            && base_name(&call.exe) == base_name(&argv[0]);
        m.launch_self = None;
        if same {
            m.agent_exe = Some(call.exe.clone());
        }
        same
    }

    fn is_agent_exe(&self, exe: &str) -> bool {
        let m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        m.agent_exe.as_deref() == Some(exe)
    }

    /// What the nearest ancestor (or the process itself) runs.
    fn enclosing(&self, lineage: &[(u32, u64)]) -> Option<Context> {
        let m = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        lineage.iter().find_map(|(pid, start)| {
            m.running
                .get(pid)
                .filter(|(s, _)| s == start)
                .map(|(_, c)| c.clone())
        })
    }
}

impl Decider {
    /// Decides an exec of the agent's tree, writes its audit line, and
    /// remembers an allowed one as the context of what it starts.
    pub fn decide_exec(&self, call: &ExecCall) -> ExecRuling {
        let Some(&(pid, start)) = call.lineage.first() else {
            return ExecRuling::Deny("aileron: denied: the process that execs is unknown".into());
        };
        if call.exe == self.real_shell_path()
            && let Some(context) = self.contexts.take_hand_over(call)
        {
            // The shim runs the line this session just decided.
            self.contexts.run(pid, start, context);
            return ExecRuling::Allow;
        }
        if self.contexts.take_launch_interpreter(call) || self.contexts.take_launch_self(call) {
            // The launched script's interpreter: the launch itself.
            return ExecRuling::Allow;
        }
        if call.code_env.is_empty() && (self.is_hook_call(call) || self.is_gate_call(call)) {
            // The agent running Aileron's own hook, or an interactive
            // shell's DEBUG trap its gate: each asks this session.
            return ExecRuling::Allow;
        }
        if call.code_env.is_empty() && self.shim_exe.get() == Some(&call.exe) {
            // The shim decides what it was given itself, and says why on
            // the agent's terminal; its exec of the real shell is handed over.
            return ExecRuling::Allow;
        }
        let line = self.decided_line(call);
        let within = self.contexts.enclosing(&call.lineage);
        // The launch's own policy outside any decided command.
        let policy_cwd = within
            .as_ref()
            .map_or_else(|| self.launch_cwd(), |c| c.policy_cwd.clone());
        // Only inside a context does the file's privilege change anything.
        let privileged = within.as_ref().and_then(|_| privileged_file(call));
        if let Some(enclosing) = &within
            && call.code_env.is_empty()
            && (privileged.is_none() || enclosing.own)
            && (line == enclosing.line || part_of(&enclosing.line, call, &self.home()))
        {
            // A command of the line that was decided (and recorded): the
            // shell running it, not a new decision.
            let context = Context {
                line,
                policy_cwd,
                own: enclosing.own,
            };
            self.contexts.run(pid, start, context);
            return ExecRuling::Allow;
        }
        let own = within.is_none();
        let mut argv = vec![call.exe.clone()];
        argv.extend(call.argv.iter().cloned());
        let req = Request {
            line: line.clone(),
            cwd: policy_cwd.clone(),
            shell_cwd: Some(call.cwd.clone()),
            argv,
            adapter: Some("supervisor".into()),
            // Programs repeat inside builds; the doom loop counts the agent's calls.
            repeat: true,
            within: within.map(|c| c.line),
            exe: Some(call.exe.clone()),
            alone: privileged,
            ..Request::default()
        };
        let response = self.decide(&req);
        if response.allow {
            let inner = shell_line(call, &self.home()).unwrap_or(line);
            let context = Context {
                line: inner,
                policy_cwd,
                own,
            };
            self.contexts.run(pid, start, context);
            ExecRuling::Allow
        } else {
            ExecRuling::Deny(
                response
                    .message
                    .unwrap_or_else(|| "aileron: denied".to_owned()),
            )
        }
    }

    /// Records the program `aileron launch` started (its first exec, which
    /// passes undecided). For a script, `kernel_argv` is what the kernel
    /// runs for it, `#!` interpreter first, so that `#!/usr/bin/env node` then execing `node
    /// SCRIPT` is the launch itself, not one of the agent's commands. What
    /// the agent runs after that is decided as ever.
    pub fn launched(&self, call: &ExecCall, kernel_argv: Option<Vec<String>>) {
        let Some(&(pid, start)) = call.lineage.first() else {
            return;
        };
        let mut m = self
            .contexts
            .inner
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        m.launch_interpreter = kernel_argv.map(|argv| (pid, start, argv));
        m.launch_self = Some((pid, start, call.argv.clone()));
        m.launched = Some((pid, start));
        m.agent_exe = Some(call.exe.clone());
    }

    /// Records that the client `pid` was answered `line` allowed, for what
    /// runs it next. Only a process running a trusted program counts
    /// (another client of the socket gets its decision, not a pass):
    /// - the shim [`Decider::trust_shim`] named: it will exec the real
    ///   shell (with `argv`, when the session gave them) to run `line`;
    /// - `aileron gate` of the trusted `aileron`, asked by the DEBUG trap
    ///   of the interactive bash the launch started: its parent, the
    ///   shell, runs `line` next, so the shell's execs that are part of it
    ///   were decided with it.
    pub fn expect_hand_over(&self, pid: u32, argv: Option<Vec<String>>, line: String, cwd: &str) {
        let Ok(exe) = crate::process::exe(pid) else {
            return;
        };
        // The shim's and the gate's lines are decided by the policy alone.
        let context = Context {
            line,
            policy_cwd: cwd.to_owned(),
            own: true,
        };
        if self
            .shim_exe
            .get()
            .is_some_and(|s| exe.as_os_str() == s.as_str())
        {
            if let Some(start) = start_time(pid) {
                self.contexts.hand_over(pid, start, argv, context);
            }
        } else if self
            .aileron_exe
            .get()
            .is_some_and(|a| exe.as_os_str() == a.as_str())
            && let Some((shell, start)) = self.gated_shell_parent(pid)
        {
            self.contexts.run(shell, start, context);
        }
    }

    /// `aileron hook AGENT` of the trusted `aileron`, directly or as the
    /// one command of a shell's `-c` line (agents run hook commands
    /// through `sh -c`).
    fn is_hook_call(&self, call: &ExecCall) -> bool {
        let Some(aileron) = self.aileron_exe.get() else {
            return false;
        };
        let hook_argv = |args: &[String]| args.len() == 2 && args[0] == "hook";
        if call.exe == *aileron {
            return hook_argv(call.argv.get(1..).unwrap_or_default());
        }
        let Some(line) = shell_line(call, &self.home()) else {
            return false;
        };
        let analysis = aileron_shell::analyse(
            &line,
            &aileron_shell::Context {
                cwd: &call.cwd,
                home: &self.home(),
                limits: aileron_shell::Limits::default(),
            },
        );
        analysis.opaque.is_none()
            && analysis.commands.len() == 1
            && std::fs::canonicalize(&analysis.commands[0].binary)
                .is_ok_and(|b| b.as_os_str() == aileron.as_str())
            && hook_argv(&analysis.commands[0].argv)
            && analysis.commands[0].env_changes.is_empty()
    }

    /// The parent of `pid` when it is the interactive bash `aileron launch`
    /// started with its gate: no other process's `aileron gate` is trusted
    /// (an agent running it would gain an allowed line as its context).
    fn gated_shell_parent(&self, pid: u32) -> Option<(u32, u64)> {
        if !self.gated_shell.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let shell = ProcStat::read(pid).ok()??.ppid;
        let start = start_time(shell)?;
        let m = self
            .contexts
            .inner
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        (m.launched == Some((shell, start))).then_some((shell, start))
    }

    /// `aileron gate -- LINE` of the trusted `aileron`, as the DEBUG trap
    /// of an interactive shell under `aileron launch` runs it.
    fn is_gate_call(&self, call: &ExecCall) -> bool {
        self.aileron_exe.get() == Some(&call.exe)
            && call.argv.len() == 4
            && call.argv[1] == "gate"
            && call.argv[2] == "--"
            && self.gated_shell_parent(call.pid).is_some()
    }

    /// Names the `aileron` whose `hook` subcommand an agent may run
    /// without a decision (it asks this session itself).
    pub fn trust_aileron(&self, aileron: &std::path::Path) {
        if let Ok(real) = std::fs::canonicalize(aileron) {
            let _ = self.aileron_exe.set(real.to_string_lossy().into_owned());
        }
    }

    /// Names the shim whose hand-over to the real shell needs no second
    /// decision (the exec supervisor's session).
    pub fn trust_shim(&self, shim: &std::path::Path) {
        if let Ok(real) = std::fs::canonicalize(shim) {
            let _ = self.shim_exe.set(real.to_string_lossy().into_owned());
        }
    }
}

/// Why an exec inside an allowed command is still decided on its own, if
/// it is: the first command of the line that needs an answer and whose
/// program leaves the box, else `why`, said of the file the kernel loads
/// (for a script, its interpreter). `None`: the context may
/// answer for it. Only an ask or a judge changes: an allow or a deny is
/// the exec's own already.
pub(crate) fn decided_alone(
    verdict: &Verdict,
    lv: &LineVerdict,
    why: Option<&str>,
    enclosing: &str,
) -> Option<Verdict> {
    if matches!(verdict.decision, Decision::Allow | Decision::Deny) {
        return None;
    }
    let subject = lv
        .commands
        .iter()
        .filter(|c| c.verdict.decision != Decision::Allow)
        .find_map(|c| {
            let binary = c.action.facet_str("shell", "binary")?;
            let how = aileron_shell::leaves::leaves_box(binary)?;
            Some(format!("`{}` leaves the box ({how})", base_name(binary)))
        })
        .or_else(|| why.map(str::to_owned))?;
    Some(Verdict {
        reason: format!(
            "{subject}: decided on its own, not by `{}` that started it; {}",
            one_line(enclosing),
            verdict.reason
        ),
        ..verdict.clone()
    })
}

/// Longest enclosing command a reason quotes, in characters.
const QUOTED_MAX: usize = 60;

/// The first line of `text`, cut to [`QUOTED_MAX`]: a reason stays one line.
fn one_line(text: &str) -> String {
    let first = text.trim().lines().next().unwrap_or_default();
    let cut: String = first.chars().take(QUOTED_MAX).collect();
    if cut.len() < text.trim().len() {
        format!("{cut}...")
    } else {
        cut
    }
}

/// Set-user-ID and set-group-ID (with group execute: without it the bit
/// means mandatory locking).
const SETUID: u32 = 0o4000;
const SETGID_EXEC: u32 = 0o2010;

/// Why the file the kernel runs for `call` (the interpreter of a script)
/// leaves the box whatever its name: setuid, setgid, or file capabilities.
/// One `stat` and one `getxattr`. A file that cannot be read counts: what
/// cannot be checked is decided on its own.
fn privileged_file(call: &ExecCall) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let path = call.interpreter.first().unwrap_or(&call.exe);
    let mode = match std::fs::metadata(path) {
        Ok(m) => m.mode(),
        Err(e) => return Some(format!("`{path}` cannot be checked ({e})")),
    };
    if mode & SETUID != 0 {
        return Some(format!("`{path}` is set-user-ID"));
    }
    if mode & SETGID_EXEC == SETGID_EXEC {
        return Some(format!("`{path}` is set-group-ID"));
    }
    match file_capabilities(path) {
        Ok(false) => None,
        Ok(true) => Some(format!("`{path}` has file capabilities")),
        Err(e) => Some(format!(
            "`{path}` cannot be checked for file capabilities ({e})"
        )),
    }
}

/// Whether `path` carries a `security.capability` attribute (Linux's file
/// capabilities; other systems have none, and no kernel enforcement).
#[cfg(not(target_os = "linux"))]
fn file_capabilities(_path: &str) -> std::io::Result<bool> {
    Ok(false)
}

/// Whether `path` carries a `security.capability` attribute.
#[cfg(target_os = "linux")]
fn file_capabilities(path: &str) -> std::io::Result<bool> {
    let c_path = std::ffi::CString::new(path)
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: both strings are NUL-terminated; a null buffer of size 0
    // only asks for the attribute's size.
    let n = unsafe {
        libc::getxattr(
            c_path.as_ptr(),
            c"security.capability".as_ptr(),
            std::ptr::null_mut(),
            0,
        )
    };
    if n >= 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        // No such attribute, or a file system without extended attributes.
        Some(libc::ENODATA | libc::ENOTSUP) => Ok(false),
        _ => Err(e),
    }
}

/// The line an exec is decided as: its code-carrying variables, then its
/// arguments, each quoted. The program is named by `argv[0]`, which a
/// multi-call program (busybox) dispatches on, and again by the file the
/// kernel loads when its name differs (`/tmp/ls` linked to `rm`): the
/// stricter verdict of the two holds.
pub fn exec_line(call: &ExecCall) -> String {
    let assignments: String = call
        .code_env
        .iter()
        .map(|(k, v)| format!("{k}={} ", quote(v)))
        .collect();
    let args: String = call
        .argv
        .iter()
        .skip(1)
        .map(|a| format!(" {}", quote(a)))
        .collect();
    let name = call.argv.first().map_or("", |a| a.as_str());
    let named = base_name(name);
    let loaded = base_name(&call.exe);
    let mut line = format!("{assignments}{}{args}", quote(named));
    if named != loaded {
        line.push_str(&format!(" ; {assignments}{}{args}", quote(loaded)));
    }
    if let Some((interpreter, mut before)) = call.interpreter.split_first() {
        // What the kernel runs for a script: its interpreter. A shell's
        // script is named above already; `bash FILE` would read as code
        // in a file the analysis does not see, when each of its commands
        // is an exec decided in turn.
        let runs = match base_name(interpreter) {
            "env" => before.first().map_or("", |a| base_name(a)),
            other => other,
        };
        let mut args = args.as_str();
        if aileron_shell::invocation::is_shell_name(runs)
            && let Some((_script, rest)) = before.split_last()
        {
            // The shell alone: its next word would read as another file.
            before = rest;
            args = "";
        }
        let before: String = before.iter().map(|a| format!(" {}", quote(a))).collect();
        line.push_str(&format!(
            " ; {assignments}{}{before}{args}",
            quote(base_name(interpreter))
        ));
    }
    line
}

/// Agents' own programs re-executed to set a process up before they exec
/// a command: the option that says so, and the index of the program it
/// execs (its argv follows). Codex CLI 0.169:
/// `/proc/self/exe --codex-run-as-process-setup FD PID MODE X CWD PROGRAM ARGV...`.
const AGENT_EXEC_HELPERS: &[(&str, usize)] = &[("--codex-run-as-process-setup", 7)];

/// A shell's `-c` text, when `argv` (run from `exe`) is a shell given one
/// with no option that runs a file of its own choosing.
fn shell_text(exe: &str, argv: &[String]) -> Option<String> {
    use aileron_shell::invocation::{self, Invocation};
    let (name, args) = argv.split_first()?;
    if base_name(name) != base_name(exe)
        || !invocation::is_shell_name(base_name(exe))
        || invocation::checked_args(args).is_err()
    {
        return None;
    }
    match invocation::parse(args) {
        Invocation::Command(text) => Some(text),
        _ => None,
    }
}

/// A shell exec'd with a script file and its arguments (`bash FILE ARGS`,
/// as `/usr/bin/env bash` runs a `#!/usr/bin/env bash` script), decided as
/// the kernel's run of a script is ([`exec_line`]): the script by its name
/// with the arguments, and the shell. The file's own commands are
/// execs of the tree, each decided in turn, so the analysis' "code in a
/// file it does not read" is not this exec's to ask about; a line typed
/// as `bash FILE` is decided by the shim, where it is. Any option before
/// the file: None (decided by its argv).
fn script_run(exe: &str, argv: &[String]) -> Option<String> {
    let (name, rest) = argv.split_first()?;
    let (script, args) = rest.split_first()?;
    let shell = base_name(exe);
    if base_name(name) != shell
        || !aileron_shell::invocation::is_shell_name(shell)
        || script.starts_with(['-', '+'])
        || script.is_empty()
    {
        return None;
    }
    let args: String = args.iter().map(|a| format!(" {}", quote(a))).collect();
    // The shell alone after it: its next word would read as another file.
    Some(format!(
        "{}{args} ; {}",
        quote(base_name(script)),
        quote(shell)
    ))
}

impl Decider {
    /// The line a human decides for an exec. A shell run with `-c` is
    /// decided by its text, as the shim decides it (the model's command
    /// inside an agent's known wrapper); its login files, which a login
    /// shell also runs, are the user's and read-only under `--enforce
    /// files`. The agent's own program re-executed as a process-setup
    /// helper is decided by the command it execs. Anything else, or with
    /// code-carrying variables, by its argv.
    fn decided_line(&self, call: &ExecCall) -> String {
        if !call.code_env.is_empty() || !call.interpreter.is_empty() {
            return exec_line(call);
        }
        let (exe, argv) = AGENT_EXEC_HELPERS
            .iter()
            .find(|(flag, at)| {
                call.argv.get(1).map(String::as_str) == Some(*flag)
                    && call.argv.len() > at + 1
                    && self.contexts.is_agent_exe(&call.exe)
            })
            .map_or((call.exe.as_str(), &call.argv[..]), |&(_, at)| {
                (call.argv[at].as_str(), &call.argv[at + 1..])
            });
        if let Some(text) = shell_text(exe, argv) {
            return aileron_shell::harness::model_command(text, &self.home());
        }
        if let Some(line) = script_run(exe, argv) {
            return line;
        }
        if argv.len() == call.argv.len() {
            return exec_line(call);
        }
        argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
    }
}

/// For a shell started with `-c`, the line it runs: what its children
/// are matched against.
fn shell_line(call: &ExecCall, home: &str) -> Option<String> {
    use aileron_shell::invocation::{self, Invocation};
    if !aileron_shell::invocation::is_shell_name(base_name(&call.exe)) {
        return None;
    }
    match invocation::parse(call.argv.get(1..)?) {
        Invocation::Command(cmd) => Some(aileron_shell::harness::model_command(cmd, home)),
        _ => None,
    }
}

/// Whether the exec runs one of the simple commands of `line`, as its
/// analysis found them, with the same arguments, under the same name as
/// the file it loads.
fn part_of(line: &str, call: &ExecCall, home: &str) -> bool {
    let Some((name, args)) = call.argv.split_first() else {
        return false;
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    base_name(name) == base_name(&call.exe) && line_runs(line, &call.cwd, home, name, &args)
}

/// Whether the analysis of `line` (run in `cwd`) finds the simple command
/// `name args`, the program compared by its file name.
pub(crate) fn line_runs(line: &str, cwd: &str, home: &str, name: &str, args: &[&str]) -> bool {
    let analysis = aileron_shell::analyse(
        line,
        &aileron_shell::Context {
            cwd,
            home,
            limits: aileron_shell::Limits::default(),
        },
    );
    analysis.opaque.is_none()
        && analysis.commands.iter().any(|c| {
            base_name(&c.binary) == base_name(name)
                && c.argv.len() == args.len()
                && c.argv.iter().zip(args).all(|(a, b)| a == b)
        })
}

pub(crate) fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Single quotes, unless the word needs none.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(exe: &str, argv: &[&str]) -> ExecCall {
        ExecCall {
            exe: exe.into(),
            argv: argv.iter().map(|s| (*s).to_owned()).collect(),
            ..ExecCall::default()
        }
    }

    #[test]
    fn a_line_names_the_program_by_argv0_and_by_the_file_loaded() {
        assert_eq!(exec_line(&call("/usr/bin/ls", &["ls", "-la"])), "ls -la");
        assert_eq!(
            exec_line(&call("/usr/bin/rm", &["ls", "-rf", "a b"])),
            "ls -rf 'a b' ; rm -rf 'a b'"
        );
        assert_eq!(
            exec_line(&call("/bin/echo", &["echo", "it's"])),
            r"echo 'it'\''s'"
        );
        let mut c = call("/usr/bin/ls", &["ls"]);
        c.code_env = vec![("LD_PRELOAD".into(), "/tmp/x.so".into())];
        assert_eq!(exec_line(&c), "LD_PRELOAD=/tmp/x.so ls");
    }

    #[test]
    fn a_shell_script_is_named_by_the_script_and_its_shell_alone() {
        // `#!/usr/bin/env bash` at /p/shims/python3, run as `python3 -V`.
        let mut c = call("/p/shims/python3", &["python3", "-V"]);
        c.interpreter = vec![
            "/usr/bin/env".into(),
            "bash".into(),
            "/p/shims/python3".into(),
        ];
        assert_eq!(exec_line(&c), "python3 -V ; env bash");
        // `#!/usr/bin/python3 -u`: not a shell, the script stays named.
        c.interpreter = vec!["/usr/bin/python3".into(), "-u".into(), "/p/x".into()];
        assert_eq!(exec_line(&c), "python3 -V ; python3 -u /p/x -V");
        // env then runs bash with the file.
        let argv: Vec<String> = ["bash", "/p/shims/python3", "-V"].map(String::from).into();
        assert_eq!(
            script_run("/usr/bin/bash", &argv).as_deref(),
            Some("python3 -V ; bash")
        );
        // An option before the file, or `-c`: decided otherwise.
        let argv: Vec<String> = ["bash", "-x", "/p/s.sh"].map(String::from).into();
        assert_eq!(script_run("/usr/bin/bash", &argv), None);
        let argv: Vec<String> = ["python3", "/p/s.py"].map(String::from).into();
        assert_eq!(script_run("/usr/bin/python3", &argv), None);
    }

    #[test]
    fn a_reason_quotes_one_short_line_of_the_enclosing_command() {
        assert_eq!(one_line("make all"), "make all");
        assert_eq!(one_line("\nimport os\nos.system('x')\n"), "import os...");
        let long = "x".repeat(100);
        assert_eq!(one_line(&long), format!("{}...", "x".repeat(QUOTED_MAX)));
    }

    #[test]
    fn a_context_belongs_to_the_process_that_started_then_not_to_its_number() {
        let c = Contexts::default();
        let make = Context {
            line: "make".into(),
            policy_cwd: "/p".into(),
            own: true,
        };
        c.run(10, 5, make.clone());
        assert_eq!(c.enclosing(&[(11, 9), (10, 5)]), Some(make));
        // Same number, another process.
        assert_eq!(c.enclosing(&[(11, 9), (10, 6)]), None);
    }
}
