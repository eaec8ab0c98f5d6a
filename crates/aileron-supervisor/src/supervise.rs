//! The exec supervisor: takes each `execve`/`execveat` the filter stops,
//! reads it from the stopped process, has the session decide it, and lets
//! it proceed or fails it with `EACCES`.
//!
//! Time of check: the arguments live in the caller's memory, which another
//! thread (or a vfork parent's other threads) could change after they were
//! read. So an allowed exec is not simply continued: the supervisor
//! attaches to the caller (`PTRACE_SEIZE` with `PTRACE_O_TRACEEXEC`),
//! continues the call, and at the exec event (the new program loaded, not
//! one instruction of it run) compares the file loaded and the arguments
//! the kernel copied with what was decided. A difference kills the process
//! before it runs. See `docs/enforcement.md` for what remains.

use crate::proc::{self, MAX_ARG_BYTES, ReadError};
use crate::sockets::{Answer, Sockets};
use crate::{Error, Reach};
use aileron_session::pool::{Pool, Waited, Waiter};
use aileron_session::{Decider, ExecCall, ExecRuling};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Variables that make any program (the dynamic loader, a shell, an
/// interpreter) load or run code named by their value. An exec that sets
/// one to a value the session did not start with is decided with it.
const CODE_VARIABLES: &[&str] = &[
    "LD_PRELOAD",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "NODE_OPTIONS",
    "PERL5OPT",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
];

fn is_code_variable(name: &str) -> bool {
    CODE_VARIABLES.contains(&name) || name.starts_with("BASH_FUNC_")
}

/// The `NAME=value` entries of an environment whose name is a code variable.
fn code_entries(env: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    env.into_iter()
        .filter(|kv| {
            let name = kv.split(|&b| b == b'=').next().unwrap_or_default();
            std::str::from_utf8(name).is_ok_and(is_code_variable)
        })
        .collect()
}

/// What the box's first process hands to the supervisor: the filter's
/// listener and, in a box with a network of its own, a `sock_diag` socket
/// made there ([`crate::sockets`]).
pub struct Listener {
    pub(crate) notify: OwnedFd,
    pub(crate) box_network: Option<OwnedFd>,
}

/// The supervisor of one launch.
pub struct Supervisor {
    listener: OwnedFd,
    /// The tree's connections, where the filter stops them.
    sockets: Option<Sockets>,
    decider: Arc<Decider>,
    /// The arguments `aileron launch` starts the agent with: its first exec.
    launch: Vec<String>,
    launched: AtomicBool,
    /// Code variables of the session's own environment, as started.
    base_env: Vec<(String, String)>,
    /// The process `aileron launch` started (0 until known).
    root: std::sync::atomic::AtomicU32,
    /// The agent's process (pid, start time), from its first exec: a
    /// process whose parent it is has it as its ancestor without a read
    /// of its `/proc` (its children would have another parent once it died).
    agent: std::sync::OnceLock<(u32, u64)>,
}

/// Threads waiting for a notification, at most; more end after theirs.
const MAX_WAITING: usize = 4;

impl Supervisor {
    pub fn new(
        listener: Listener,
        decider: Arc<Decider>,
        launch: Vec<String>,
        env: &[(String, String)],
        reach: Reach,
    ) -> Arc<Supervisor> {
        let base_env = env
            .iter()
            .filter(|(k, _)| is_code_variable(k))
            .cloned()
            .collect();
        let sockets = listener
            .box_network
            .map(|diag| Sockets::new(diag, reach.session_dirs, reach.opened));
        Arc::new(Supervisor {
            listener: listener.notify,
            sockets,
            decider,
            launch,
            launched: AtomicBool::new(false),
            base_env,
            root: std::sync::atomic::AtomicU32::new(0),
            agent: std::sync::OnceLock::new(),
        })
    }

    /// Names the process `aileron launch` started: an exec's ancestors are
    /// looked up to it, not beyond.
    pub fn set_root(&self, pid: u32) {
        self.root.store(pid, Ordering::Relaxed);
    }

    /// Starts taking notifications on threads that wait in the kernel
    /// ([`aileron_session::pool`]): an exec waiting for a human never holds
    /// up the others.
    pub fn start(self: &Arc<Self>) {
        Pool::start(
            Notifications(Arc::clone(self)),
            "aileron-supervisor",
            MAX_WAITING,
        );
    }

    fn receive(&self) -> std::io::Result<libc::seccomp_notif> {
        loop {
            // SAFETY: an all-zero seccomp_notif is valid (and required by RECV).
            let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            // SAFETY: n is a seccomp_notif, as the ioctl expects.
            let r = unsafe {
                libc::ioctl(
                    self.listener.as_raw_fd(),
                    libc::SECCOMP_IOCTL_NOTIF_RECV,
                    &mut n as *mut libc::seccomp_notif,
                )
            };
            if r == 0 {
                return Ok(n);
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }

    /// Answers a call the supervisor made itself with its return value.
    fn respond_value(&self, id: u64, val: i64) -> bool {
        self.send(libc::seccomp_notif_resp {
            id,
            val,
            error: 0,
            flags: 0,
        })
    }

    fn send(&self, mut resp: libc::seccomp_notif_resp) -> bool {
        // SAFETY: resp is a seccomp_notif_resp, as the ioctl expects.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND,
                &mut resp as *mut libc::seccomp_notif_resp,
            ) == 0
        }
    }

    /// A `connect` or `sendto` the filter stopped: made here, on the
    /// caller's socket ([`crate::sockets`]).
    fn handle_socket(&self, n: &libc::seccomp_notif, sockets: &Sockets) {
        let valid = || self.still_valid(n.id);
        let answer = if n.data.nr as libc::c_long == libc::SYS_connect {
            sockets.connect(n.pid, n.data.args, valid)
        } else {
            sockets.sendto(n.pid, n.data.args, valid)
        };
        match answer {
            Answer::Value(v) => {
                self.respond_value(n.id, v);
            }
            Answer::Errno(e) => {
                self.respond(n.id, e, false);
            }
            Answer::Refused { path, why } => {
                self.decider.record_refused_socket(n.pid, &path, &why);
                self.respond(n.id, libc::EACCES, false);
            }
        }
    }

    fn respond(&self, id: u64, error: i32, continue_call: bool) -> bool {
        self.send(libc::seccomp_notif_resp {
            id,
            val: 0,
            error: if continue_call { 0 } else { -error },
            flags: if continue_call {
                libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32
            } else {
                0
            },
        })
    }

    /// Whether the notification still stands for the same stopped call (the
    /// process did not die and its number was not reused meanwhile).
    fn still_valid(&self, id: u64) -> bool {
        let mut id = id;
        // SAFETY: id is a u64, as the ioctl expects.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
                &mut id as *mut u64,
            ) == 0
        }
    }

    fn handle(&self, n: &libc::seccomp_notif) {
        let nr = n.data.nr as libc::c_long;
        if nr == libc::SYS_connect || nr == libc::SYS_sendto {
            match &self.sockets {
                Some(sockets) => self.handle_socket(n, sockets),
                // Never stopped without a box network: refused, not continued.
                None => {
                    self.respond(n.id, libc::EACCES, false);
                }
            }
            return;
        }
        let exec = match self.read_exec(n) {
            Ok(e) => e,
            Err(Refusal::Errno(errno)) => {
                self.respond(n.id, errno, false);
                return;
            }
            Err(Refusal::Why(why)) => {
                self.decider.record_refused_exec(n.pid, &why);
                self.respond(n.id, libc::EACCES, false);
                return;
            }
        };
        if !self.launched.load(Ordering::SeqCst) && exec.call.argv == self.launch {
            // The program `aileron launch` was asked to run.
            self.launched.store(true, Ordering::SeqCst);
            if let Some(&first) = exec.call.lineage.first() {
                let _ = self.agent.set(first);
            }
            // Its `#!` interpreter (`/usr/bin/env node`) and a launcher's
            // native program are the launch too; what they run is decided.
            let interpreter = exec.script.is_some().then(|| exec.kernel_argv());
            self.decider.launched(&exec.call, interpreter);
            self.respond(n.id, 0, true);
            return;
        }
        match self.decider.decide_exec(&exec.call) {
            ExecRuling::Deny(_) => {
                self.respond(n.id, libc::EACCES, false);
            }
            ExecRuling::Allow => self.continue_checked(n, &exec),
        }
    }

    /// Lets an allowed exec proceed, then checks at its exec event that the
    /// kernel loaded what was decided.
    fn continue_checked(&self, n: &libc::seccomp_notif, exec: &Exec) {
        let tid = n.pid as libc::pid_t;
        if !self.still_valid(n.id) {
            return;
        }
        // SAFETY: ptrace on a task of the tree; failures are handled.
        let seized = unsafe {
            libc::ptrace(
                libc::PTRACE_SEIZE,
                tid,
                0,
                libc::PTRACE_O_TRACEEXEC as libc::c_ulong,
            )
        } == 0;
        if !seized {
            let why = format!(
                "cannot watch process {tid} through its exec: {}",
                std::io::Error::last_os_error()
            );
            self.decider.record_refused_exec(n.pid, &why);
            self.respond(n.id, libc::EACCES, false);
            return;
        }
        // SAFETY: as above. The interrupt makes the task stop when the
        // call returns, if it fails (no exec event then).
        unsafe { libc::ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) };
        if !self.respond(n.id, 0, true) {
            detach(tid);
            return;
        }
        loop {
            let mut status = 0;
            // SAFETY: waits for our tracee only.
            let r = unsafe { libc::waitpid(tid, &mut status, libc::__WALL) };
            if r < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                // Not ours to wait for any more: never leave it attached.
                detach(tid);
                return;
            }
            if !libc::WIFSTOPPED(status) {
                // Gone (killed while it exec'd).
                return;
            }
            let event = (status >> 16) & 0xffff;
            let sig = libc::WSTOPSIG(status);
            if event == libc::PTRACE_EVENT_EXEC {
                match exec.matches_loaded(tid as u32) {
                    Ok(()) => detach(tid),
                    Err(why) => {
                        self.decider.record_refused_exec(n.pid, &why.to_string());
                        kill_tracee(tid);
                    }
                }
                return;
            }
            if event == libc::PTRACE_EVENT_STOP {
                // The call returned without an exec (it failed).
                detach(tid);
                return;
            }
            // A signal arrived meanwhile: deliver it and wait on.
            // SAFETY: resumes our tracee with its own signal.
            unsafe { libc::ptrace(libc::PTRACE_CONT, tid, 0, sig as libc::c_long) };
        }
    }

    fn read_exec(&self, n: &libc::seccomp_notif) -> Result<Exec, Refusal> {
        let pid = n.pid;
        let a = n.data.args;
        let (dirfd, path_ptr, argv_ptr, envp_ptr, flags) =
            if n.data.nr as libc::c_long == libc::SYS_execveat {
                (a[0] as i32, a[1], a[2], a[3], a[4] as i32)
            } else {
                (libc::AT_FDCWD, a[0], a[1], a[2], 0)
            };
        let task = proc::task(pid).map_err(Refusal::read)?;
        if task.pid != task.tgid {
            return Err(Refusal::Why(
                "an exec from a thread other than its process's first is not supervised".into(),
            ));
        }
        let mut budget = MAX_ARG_BYTES;
        let mut memory = proc::Memory::new(pid);
        let path = memory
            .c_string(path_ptr, &mut budget)
            .map_err(Refusal::read)?;
        let argv = memory
            .string_array(argv_ptr, &mut budget)
            .map_err(Refusal::read)?;
        let envp = memory
            .string_array(envp_ptr, &mut budget)
            .map_err(Refusal::read)?;
        let cwd = proc::link(pid, "cwd").map_err(Refusal::read)?;
        if !self.still_valid(n.id) {
            return Err(Refusal::Errno(libc::ESRCH));
        }
        let named = resolve_target(pid, dirfd, &path, flags, &cwd)?;
        let (file, meta, head) = match opened(&named) {
            Ok(found) => found,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let target = std::fs::read_link(&named).unwrap_or_else(|_| named.clone());
                let target = target.to_string_lossy();
                if target.starts_with("/memfd:") || target.ends_with(" (deleted)") {
                    return Err(Refusal::Why(
                        "the program is a memory file with no path: it cannot be decided".into(),
                    ));
                }
                // What the kernel would answer; a PATH search tries many.
                return Err(Refusal::Errno(libc::ENOENT));
            }
            Err(e) => {
                return Err(Refusal::Why(format!(
                    "cannot resolve the program {}: {e}",
                    named.display()
                )));
            }
        };
        let resolved = file.to_string_lossy();
        if !resolved.starts_with('/')
            || resolved.starts_with("/memfd:")
            || resolved.ends_with(" (deleted)")
        {
            // A descriptor of a memory file (or of a file unlinked since).
            return Err(Refusal::Why(
                "the program is a memory file with no path: it cannot be decided".into(),
            ));
        }
        let script = Script::parse(&head)?;
        // The name the kernel hands a script's interpreter.
        let passed = if path.is_empty() {
            format!("/dev/fd/{dirfd}").into_bytes()
        } else if path.first() == Some(&b'/') || dirfd == libc::AT_FDCWD {
            path.clone()
        } else {
            let mut p = format!("/dev/fd/{dirfd}/").into_bytes();
            p.extend_from_slice(&path);
            p
        };
        let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let code_env_raw = code_entries(envp);
        let code_env: Vec<(String, String)> = code_env_raw
            .iter()
            .filter_map(|kv| {
                let kv = lossy(kv);
                let (k, v) = kv.split_once('=')?;
                Some((k.to_owned(), v.to_owned()))
            })
            .filter(|kv| !self.base_env.contains(kv))
            .collect();
        // Up to the process `aileron launch` started: contexts live below it.
        let mut lineage = vec![(task.tgid, task.start)];
        let mut parent = task.ppid;
        let root = self.root.load(Ordering::Relaxed);
        while parent > 1 && parent != root && lineage.len() < 64 {
            if let Some(&agent) = self.agent.get()
                && agent.0 == parent
            {
                lineage.push(agent);
                break;
            }
            match proc::parent_and_start(parent) {
                Some((ppid, start)) => {
                    lineage.push((parent, start));
                    parent = ppid;
                }
                None => break,
            }
        }
        Ok(Exec {
            call: ExecCall {
                pid: task.tgid,
                lineage,
                cwd: cwd.to_string_lossy().into_owned(),
                exe: file.to_string_lossy().into_owned(),
                argv: argv.iter().map(|a| lossy(a)).collect(),
                code_env,
                interpreter: script
                    .as_ref()
                    .map(|s| {
                        let mut i = vec![s.file.to_string_lossy().into_owned()];
                        i.extend(s.arg.iter().map(|a| lossy(a)));
                        i.push(lossy(&passed));
                        i
                    })
                    .unwrap_or_default(),
            },
            raw_argv: argv,
            passed,
            script,
            file_id: (meta.dev(), meta.ino()),
            code_env_raw,
        })
    }
}

/// The program an exec names: its file with links resolved, its metadata,
/// and its first bytes (a `#!` line). One open instead of resolving the
/// path component by component and opening it again; a program the
/// supervisor cannot open (execute-only) is resolved by its path.
fn opened(
    named: &std::path::Path,
) -> std::io::Result<(std::path::PathBuf, std::fs::Metadata, Vec<u8>)> {
    use std::io::Read;
    match std::fs::File::open(named) {
        Ok(mut f) => {
            let meta = f.metadata()?;
            let mut head = vec![0u8; 256];
            let n = if meta.is_file() {
                f.read(&mut head).unwrap_or(0)
            } else {
                0
            };
            head.truncate(n);
            let file = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd()))?;
            Ok((file, meta, head))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(e),
        Err(_) => {
            let file = std::fs::canonicalize(named)?;
            let meta = std::fs::metadata(&file)?;
            Ok((file, meta, Vec::new()))
        }
    }
}

/// Kills a stopped tracee before it runs an instruction of its new
/// program, and waits until the kernel has taken it off our list: until
/// then its parent could not reap it.
fn kill_tracee(tid: libc::pid_t) {
    // SAFETY: signals and waits for our own tracee only.
    unsafe {
        libc::kill(tid, libc::SIGKILL);
        loop {
            let mut status = 0;
            let r = libc::waitpid(tid, &mut status, libc::__WALL);
            if r < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                return;
            }
            if !libc::WIFSTOPPED(status) {
                return;
            }
            // A stop on the way to death: let it go on dying.
            libc::ptrace(libc::PTRACE_CONT, tid, 0, 0);
        }
    }
}

fn detach(tid: libc::pid_t) {
    // SAFETY: detaches our tracee; harmless if it is gone.
    unsafe { libc::ptrace(libc::PTRACE_DETACH, tid, 0, 0) };
}

/// Where `execveat(dirfd, path, flags)` points, before links are followed.
fn resolve_target(
    pid: u32,
    dirfd: i32,
    path: &[u8],
    flags: i32,
    cwd: &std::path::Path,
) -> Result<std::path::PathBuf, Refusal> {
    use std::os::unix::ffi::OsStrExt;
    let p = std::path::Path::new(std::ffi::OsStr::from_bytes(path));
    let fd_path = |fd: i32| -> Result<std::path::PathBuf, Refusal> {
        proc::link(pid, &format!("fd/{fd}")).map_err(|_| Refusal::Errno(libc::EBADF))
    };
    let named = if path.is_empty() {
        if flags & libc::AT_EMPTY_PATH == 0 {
            return Err(Refusal::Errno(libc::ENOENT));
        }
        fd_path(dirfd)?
    } else if p.is_absolute() {
        p.to_path_buf()
    } else if dirfd == libc::AT_FDCWD {
        cwd.join(p)
    } else {
        fd_path(dirfd)?.join(p)
    };
    // The caller's /proc/self is not ours.
    let text = named.to_string_lossy();
    for own in ["/proc/self/", "/proc/thread-self/"] {
        if let Some(rest) = text.strip_prefix(own) {
            return Ok(format!("/proc/{pid}/{rest}").into());
        }
    }
    Ok(named)
}

/// An exec as read, with what its exec event is checked against.
struct Exec {
    call: ExecCall,
    raw_argv: Vec<Vec<u8>>,
    /// The name a script's interpreter gets for it (the path as passed,
    /// `/dev/fd/N` for a descriptor).
    passed: Vec<u8>,
    /// The `#!` line of the file, when it is a script.
    script: Option<Script>,
    file_id: (u64, u64),
    code_env_raw: Vec<Vec<u8>>,
}

impl Exec {
    /// What the kernel runs: for a script, its interpreter, the `#!`
    /// line's argument, the script as passed, then the arguments after argv[0].
    fn kernel_argv(&self) -> Vec<String> {
        let Some(script) = &self.script else {
            return self.call.argv.clone();
        };
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut argv = vec![text(&script.written)];
        argv.extend(script.arg.as_deref().map(text));
        argv.push(text(&self.passed));
        argv.extend(self.call.argv.iter().skip(1).cloned());
        argv
    }
}

/// A script's `#!` line, as the kernel reads it (the first 256 bytes: an
/// interpreter and at most one argument).
struct Script {
    /// The interpreter as written.
    written: Vec<u8>,
    arg: Option<Vec<u8>>,
    /// The interpreter's file, resolved, and its identity.
    file: std::path::PathBuf,
    id: (u64, u64),
}

impl Script {
    /// The `#!` line at the start of a file, resolved.
    fn parse(head: &[u8]) -> Result<Option<Script>, Refusal> {
        let Some(line) = head.strip_prefix(b"#!") else {
            return Ok(None);
        };
        let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
        let blank = |b: &u8| *b == b' ' || *b == b'\t';
        let line: Vec<u8> = line
            .iter()
            .copied()
            .skip_while(blank)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .skip_while(|b| blank(b) || *b == b'\r')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let end = line.iter().position(blank).unwrap_or(line.len());
        let written = line[..end].to_vec();
        let rest: Vec<u8> = line[end..].iter().copied().skip_while(blank).collect();
        let arg = (!rest.is_empty()).then_some(rest);
        use std::os::unix::ffi::OsStrExt;
        let named = std::path::Path::new(std::ffi::OsStr::from_bytes(&written));
        let resolved = std::fs::canonicalize(named).map_err(|e| {
            Refusal::Why(format!(
                "cannot resolve the script's interpreter {}: {e}",
                named.display()
            ))
        })?;
        let meta = std::fs::metadata(&resolved).map_err(|e| {
            Refusal::Why(format!(
                "cannot read the interpreter {}: {e}",
                resolved.display()
            ))
        })?;
        Ok(Some(Script {
            written,
            arg,
            file: resolved,
            id: (meta.dev(), meta.ino()),
        }))
    }
}

impl Exec {
    /// Whether the stopped, just-exec'd process `pid` runs what was decided.
    fn matches_loaded(&self, pid: u32) -> Result<(), Error> {
        let changed = Error::ExecChanged;
        let loaded = std::fs::metadata(format!("/proc/{pid}/exe")).map_err(Error::LoadedProgram)?;
        let proc::StartedWith { argv: args, envp } = proc::started_with(pid)?;
        if (loaded.dev(), loaded.ino()) == self.file_id {
            if args != self.raw_argv {
                return Err(changed("arguments"));
            }
        } else {
            // A script: the kernel ran the interpreter its `#!` line named,
            // with that line's argument, the script's name, then the
            // arguments after argv[0].
            let Some(script) = &self.script else {
                return Err(changed("program"));
            };
            let mut expected = vec![script.written.clone()];
            expected.extend(script.arg.clone());
            expected.push(self.passed.clone());
            expected.extend(self.raw_argv.iter().skip(1).cloned());
            if (loaded.dev(), loaded.ino()) != script.id || args != expected {
                return Err(changed("program"));
            }
        }
        if code_entries(envp) != self.code_env_raw {
            return Err(changed("environment"));
        }
        Ok(())
    }
}

/// The supervisor's notifications, as its waiting threads take them.
struct Notifications(Arc<Supervisor>);

impl Waiter for Notifications {
    type Work = libc::seccomp_notif;

    fn wait(&self) -> Waited<libc::seccomp_notif> {
        match self.0.receive() {
            Ok(n) => Waited::Work(n),
            // The call was withdrawn (its process died) before we took it.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Waited::Again,
            // The tree is gone (the listener has no more filters).
            Err(_) => Waited::Gone,
        }
    }

    fn handle(&self, n: libc::seccomp_notif) {
        self.0.handle(&n);
    }
}

enum Refusal {
    /// Answer with this error, as the kernel would; nothing was decided.
    Errno(i32),
    /// Refuse (`EACCES`) and record why.
    Why(String),
}

impl Refusal {
    fn read(e: ReadError) -> Refusal {
        match e {
            ReadError::Memory { ref source, .. } if source.raw_os_error() == Some(libc::EFAULT) => {
                Refusal::Errno(libc::EFAULT)
            }
            ReadError::Proc { .. } | ReadError::Memory { .. } => {
                Refusal::Why(format!("cannot read the exec: {e}"))
            }
            ReadError::TooLong => Refusal::Errno(libc::E2BIG),
            ReadError::Malformed { .. } => Refusal::Why(e.to_string()),
        }
    }
}
