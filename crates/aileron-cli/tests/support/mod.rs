//! Shared helpers for the shim, launch and prompt tests: an isolated
//! project (its own policy, home and runtime directory), processes run with
//! or without a controlling terminal, and a pseudo-terminal to answer
//! prompts through.

#![allow(dead_code)]

pub mod anthropic;
pub mod gemini_api;
pub mod mcp;
pub mod model;
pub mod npm;
pub mod openai_chat;
pub mod openai_responses;
pub mod proxy;
pub mod upstream;

use serde_json::Value;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Every agent `aileron hook` and `aileron install` speak for.
pub const AGENTS: [&str; 6] = [
    "claude-code",
    "codex",
    "gemini",
    "cursor",
    "cline",
    "opencode",
];

pub const AILERON: &str = env!("CARGO_BIN_EXE_aileron");
pub const SHIM: &str = env!("CARGO_BIN_EXE_aileron-sh");
pub const BASH: &str = "/bin/bash";

/// The longest any test waits for anything; the normal case takes milliseconds.
pub const WAIT: Duration = Duration::from_secs(20);

/// Serializes the creation of file descriptors that children must not
/// inherit (a pty opened while another thread forks) with every spawn.
static SPAWN_LOCK: Mutex<()> = Mutex::new(());

fn spawn_lock() -> std::sync::MutexGuard<'static, ()> {
    SPAWN_LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A project in a temporary directory: `root/proj` holds the policy,
/// `root/home` is `$HOME`, `root/run` is `$XDG_RUNTIME_DIR`.
pub struct Project {
    _tmp: tempfile::TempDir,
    _home_tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub dir: PathBuf,
    pub home: PathBuf,
    pub run: PathBuf,
}

impl Project {
    /// A project with `policy` as its `aileron.yaml`.
    pub fn new(policy: &str) -> Project {
        let p = Project::without_policy();
        p.write("aileron.yaml", policy);
        p
    }

    /// A project with no `aileron.yaml` anywhere above it.
    pub fn without_policy() -> Project {
        let tmp = tempfile::tempdir().expect("temp dir");
        // Canonical, so that paths the shim reports compare equal.
        let root = std::fs::canonicalize(tmp.path()).expect("canonical temp dir");
        let dir = root.join("proj");
        let run = root.join("run");
        // The home under the build's scratch directory, not /tmp: the box
        // lets the agent's tree write in /tmp, and a home there would hide
        // what it refuses in a real one. (The project stays in /tmp, out
        // of any git repository the build's directory is in.)
        let home_tmp = tempfile::tempdir_in(scratch()).expect("home dir");
        let home = std::fs::canonicalize(home_tmp.path()).expect("canonical home");
        for d in [&dir, &home, &run] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        Project {
            _tmp: tmp,
            _home_tmp: home_tmp,
            root,
            dir,
            home,
            run,
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(&p, text).expect("write file");
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    /// `program` run in the project, with the isolated environment.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        isolate(&mut cmd, &self.home, &self.run);
        cmd.current_dir(&self.dir);
        cmd
    }

    /// `aileron-sh ARGS`.
    pub fn shim(&self, args: &[&str]) -> Command {
        let mut cmd = self.command(SHIM);
        cmd.args(args);
        cmd
    }

    /// `/bin/bash ARGS`, for comparison.
    pub fn bash(&self, args: &[&str]) -> Command {
        let mut cmd = self.command(BASH);
        cmd.args(args);
        cmd
    }

    /// `aileron ARGS`.
    pub fn aileron(&self, args: &[&str]) -> Command {
        let mut cmd = self.command(AILERON);
        cmd.args(args);
        cmd
    }

    pub fn audit_path(&self) -> PathBuf {
        self.dir.join(".aileron").join("audit.jsonl")
    }

    /// The audit log as text ("" when there is none).
    pub fn audit_text(&self) -> String {
        std::fs::read_to_string(self.audit_path()).unwrap_or_default()
    }

    /// Every line of the audit log, parsed; panics on a line that is not JSON.
    /// The audit log's decisions: its lines but the session's notes
    /// (`session.start`: what the box masks, closes, turns off), which
    /// depend on the machine (another session's socket is a host socket).
    /// `audit_text` has every line.
    pub fn audit(&self) -> Vec<Value> {
        parse_audit(&self.audit_text())
            .into_iter()
            .filter(|l| l["action"]["type"] != "session.start")
            .collect()
    }
}

/// Where the tests keep homes and places outside the project: a directory
/// the box does not let the agent's tree write, so that a write the box
/// should refuse cannot succeed there by accident. The build's scratch
/// directory, unless it lies below a temporary directory (a checkout in
/// /tmp): then `~/.cache/aileron-test-scratch` of the user running them.
pub fn scratch() -> PathBuf {
    let temporary = ["/tmp", "/var/tmp", "/dev/shm"]
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::var_os("TMPDIR").map(PathBuf::from))
        .filter_map(|t| std::fs::canonicalize(t).ok())
        .collect::<Vec<_>>();
    let build = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&build).expect("the build's scratch directory");
    let build = std::fs::canonicalize(build).expect("canonical scratch directory");
    let dir = if temporary.iter().any(|t| build.starts_with(t)) {
        let home = std::env::var_os("HOME").expect("HOME");
        PathBuf::from(home).join(".cache/aileron-test-scratch")
    } else {
        build
    };
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let dir = std::fs::canonicalize(&dir).expect("canonical scratch dir");
    assert!(
        !temporary.iter().any(|t| dir.starts_with(t)),
        "no scratch directory outside the temporary ones ({}): the box lets the tree write there",
        dir.display()
    );
    dir
}

/// Whether the test may go on with `what`: when it is missing, the test is
/// skipped with a message, except in CI (`CI` set), where it fails.
pub fn available(what: &str, ok: bool) -> bool {
    if !ok {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "{what} is missing (tests are never skipped in CI)"
        );
        eprintln!("SKIPPED: {what} is missing");
    }
    ok
}

pub fn parse_audit(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("audit line is not JSON ({e}): {l:?}"))
        })
        .collect()
}

/// The environment every test process gets: nothing from the outer
/// Aileron session or the developer's home.
pub fn isolate(cmd: &mut Command, home: &Path, run: &Path) {
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("AILERON_") {
            cmd.env_remove(&k);
        }
    }
    cmd.env("HOME", home)
        .env("XDG_RUNTIME_DIR", run)
        .env("SHELL", BASH)
        .env("LC_ALL", "C")
        .env_remove("AILERON_DATA")
        .env_remove("AILERON_SOCKET")
        .env_remove("AILERON_SESSION")
        .env_remove("BASH_ENV")
        .env_remove("ENV")
        // Where agents keep their configuration: under the test's home.
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_CONFIG_HOME");
}

/// Runs the child in a new session: no controlling terminal, so
/// `/dev/tty` cannot be opened and nobody can be asked.
pub fn no_tty(cmd: &mut Command) -> &mut Command {
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// Starts `cmd` with no terminal and no input, its output piped, and its
/// standard output read line by line as it comes (a launched program that
/// says `ready` and waits for the test).
pub fn spawn_lines(
    cmd: &mut Command,
) -> (
    Child,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
) {
    use std::io::BufRead;
    let mut child = no_tty(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("aileron launch runs");
    let stdout = child.stdout.take().expect("piped stdout");
    (child, std::io::BufReader::new(stdout).lines())
}

/// The longest a real agent's scripted session may take in a test.
pub const AGENT_TIMEOUT: Duration = Duration::from_secs(90);

/// What a real agent's run left.
pub struct AgentExit {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
    /// Whether it had to be killed after [`AGENT_TIMEOUT`].
    pub timed_out: bool,
}

/// Runs an agent: in a session of its own (no terminal to ask on), with no
/// input; its whole process group is killed after [`AGENT_TIMEOUT`], and
/// when it ends (whatever it left running in the background).
pub fn run_agent(cmd: &mut Command) -> AgentExit {
    // The agent finds `aileron` on PATH, as it would where a user installed
    // it: the hooks `aileron install --project` writes for a team name it so.
    if !cmd.get_envs().any(|(k, _)| k == "PATH") {
        cmd.env("PATH", path_with_aileron());
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let child = no_tty(cmd)
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let group = child.id() as i32;
    let (done, finished) = mpsc::channel::<()>();
    let killer = std::thread::spawn(move || {
        let fired = matches!(
            finished.recv_timeout(AGENT_TIMEOUT),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        if fired {
            // SAFETY: kill(2) of the process group this run created.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        fired
    });
    let out = child.wait_with_output().expect("wait for the agent");
    let wall = start.elapsed();
    let _ = done.send(());
    let timed_out = killer.join().unwrap_or(false);
    // SAFETY: as above; ESRCH when nothing is left.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
    AgentExit {
        status: out.status,
        stdout: text(&out.stdout),
        stderr: text(&out.stderr),
        wall,
        timed_out,
    }
}

/// `PATH` with the directory of the `aileron` under test first.
pub fn path_with_aileron() -> std::ffi::OsString {
    let dir = Path::new(AILERON)
        .parent()
        .expect("aileron has a directory");
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&path)))
        .expect("PATH joins")
}

/// Runs `cmd` to completion with `stdin` as its input, killing it after [`WAIT`].
pub fn run(cmd: &mut Command, stdin: &[u8]) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = {
        let _g = spawn_lock();
        cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"))
    };
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The child may exit without reading; that is its business.
        let _ = input.write_all(&data);
    });
    let guard = Watchdog::new(child.id());
    let out = child.wait_with_output().expect("wait");
    let timed_out = guard.done();
    let _ = writer.join();
    assert!(!timed_out, "{cmd:?} did not finish within {WAIT:?}");
    out
}

/// Runs `cmd` with empty stdin and no controlling terminal.
pub fn run_no_tty(cmd: &mut Command) -> Output {
    run(no_tty(cmd), b"")
}

/// Kills a process that runs longer than [`WAIT`].
struct Watchdog {
    tx: mpsc::Sender<()>,
    fired: Arc<Mutex<bool>>,
}

impl Watchdog {
    fn new(pid: u32) -> Watchdog {
        let (tx, rx) = mpsc::channel::<()>();
        let fired = Arc::new(Mutex::new(false));
        let f = Arc::clone(&fired);
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(WAIT) {
                *f.lock().unwrap() = true;
                // SAFETY: plain kill(2); the child is not reaped yet, since the waiter has not reported back.
                unsafe {
                    libc::kill(pid as i32, libc::SIGKILL);
                }
            }
        });
        Watchdog { tx, fired }
    }

    /// Stops the watchdog; true when it had to kill.
    fn done(self) -> bool {
        let _ = self.tx.send(());
        *self.fired.lock().unwrap()
    }
}

/// What `reader` gives, gathered by a thread as it arrives, until its end
/// or an error: a child's output read while it runs.
pub fn collect(mut reader: impl Read + Send + 'static) -> Arc<Mutex<Vec<u8>>> {
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = Arc::clone(&got);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            g.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    got
}

/// The files below `dir` whose names end with `suffix` (an agent's saved
/// sessions: the box must let it keep them).
pub fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                found.push(path);
            }
        }
    }
    found
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exit code, or 128 + signal, the way a shell reports it.
pub fn shell_status(status: &ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => -1,
    }
}

/// A child whose controlling terminal is a pseudo-terminal we hold the
/// master side of: what it writes to `/dev/tty` is the screen, what we
/// write is what the human types. Its stdin is empty; stdout and stderr
/// are captured apart.
pub struct PtyChild {
    child: Child,
    master: File,
    /// Kept open while the child runs: until the child opens `/dev/tty`
    /// no one else may hold it, and reads on the master would fail.
    slave: Option<File>,
    screen: Arc<Mutex<Vec<u8>>>,
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
    stderr: Option<std::thread::JoinHandle<Vec<u8>>>,
}

/// What a [`PtyChild`] left behind.
pub struct PtyOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub screen: String,
}

impl PtyOutput {
    /// How many times the approval prompt was shown.
    pub fn prompts(&self) -> usize {
        self.screen.matches("[o] allow once").count()
    }
}

impl PtyChild {
    /// Spawns `cmd` with empty stdin.
    pub fn spawn(cmd: &mut Command) -> PtyChild {
        PtyChild::spawn_with_input(cmd, None)
    }

    /// Spawns `cmd`; with `input`, that is its stdin (the terminal is not).
    pub fn spawn_with_input(cmd: &mut Command, input: Option<&[u8]>) -> PtyChild {
        let guard = spawn_lock();
        let (mut master_fd, mut slave_fd) = (-1, -1);
        // SAFETY: openpty writes two fds; null name, termios and winsize are allowed.
        let rc = unsafe {
            libc::openpty(
                &mut master_fd,
                &mut slave_fd,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        for fd in [master_fd, slave_fd] {
            // SAFETY: fcntl on fds we own.
            unsafe {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        // SAFETY: both fds are open and now owned by these Files.
        let master = unsafe { File::from_raw_fd(master_fd) };
        let slave = unsafe { File::from_raw_fd(slave_fd) };
        // SAFETY: setsid and ioctl are async-signal-safe; the slave fd stays
        // open in the child until exec (it is close-on-exec).
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(slave_fd, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        drop(guard);
        if let (Some(mut pipe), Some(data)) = (child.stdin.take(), input) {
            let data = data.to_vec();
            std::thread::spawn(move || {
                let _ = pipe.write_all(&data);
            });
        }
        // Ends with EIO once every slave fd is closed (see `finish`).
        let screen = collect(master.try_clone().expect("dup master"));
        let mut out = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let stdout = std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = out.read_to_end(&mut v);
            v
        });
        let stderr = std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = err.read_to_end(&mut v);
            v
        });
        PtyChild {
            child,
            master,
            slave: Some(slave),
            screen,
            stdout: Some(stdout),
            stderr: Some(stderr),
        }
    }

    /// What the terminal has shown so far.
    pub fn screen(&self) -> String {
        text(&self.screen.lock().unwrap())
    }

    /// Waits until `needle` has been shown at least `n` times; returns the screen.
    pub fn expect_n(&mut self, needle: &str, n: usize) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let screen = self.screen();
            if screen.matches(needle).count() >= n {
                return screen;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("waited {WAIT:?} for {needle:?} (x{n}); the terminal shows:\n{screen}");
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                // Give the reader a moment to drain what was written before the exit.
                std::thread::sleep(Duration::from_millis(100));
                let screen = self.screen();
                if screen.matches(needle).count() >= n {
                    return screen;
                }
                panic!(
                    "exited ({status}) before showing {needle:?} (x{n}); the terminal shows:\n{screen}"
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn expect(&mut self, needle: &str) -> String {
        self.expect_n(needle, 1)
    }

    /// Types `keys` on the terminal.
    pub fn type_keys(&mut self, keys: &str) {
        self.master
            .write_all(keys.as_bytes())
            .expect("write to the terminal");
        self.master.flush().expect("flush the terminal");
    }

    /// Waits for the exit (killing the child after [`WAIT`]).
    pub fn finish(mut self) -> PtyOutput {
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "did not exit within {WAIT:?}; the terminal shows:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // Now the reader sees the end once every process of the session is gone.
        drop(self.slave.take());
        let stdout = text(&self.stdout.take().unwrap().join().unwrap());
        let stderr = text(&self.stderr.take().unwrap().join().unwrap());
        // The screen reader may lag behind the exit by a little.
        std::thread::sleep(Duration::from_millis(50));
        PtyOutput {
            status,
            stdout,
            stderr,
            screen: self.screen(),
        }
    }
}

/// An `aileron launch` session kept open in the background, so that a test
/// can run the shim in it (`AILERON_SOCKET`) as the launched agent would.
/// Dropping it ends the launched program and the session.
pub struct LaunchSession {
    child: Child,
    pub socket: PathBuf,
}

impl LaunchSession {
    /// A session started in `p`, without a terminal.
    pub fn start(p: &Project) -> LaunchSession {
        Self::start_with(p, &[])
    }

    /// A session started with `options` (`--enforce none`: projects made
    /// after the session started may decide, as they may not under the
    /// kernel's lockdown).
    pub fn start_with(p: &Project, options: &[&str]) -> LaunchSession {
        let mut args = vec!["launch"];
        args.extend_from_slice(options);
        args.extend(["--", "/bin/sh", "-c"]);
        let mut cmd = p.aileron(&args);
        cmd.arg(r#"printf '%s\n' "$AILERON_SOCKET"; exec cat >/dev/null"#)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = {
            let _g = spawn_lock();
            no_tty(&mut cmd).spawn().expect("spawn aileron launch")
        };
        let mut socket = String::new();
        let mut stdout = child.stdout.take().expect("stdout");
        let mut byte = [0u8];
        while stdout.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            socket.push(char::from(byte[0]));
        }
        assert!(
            !socket.is_empty(),
            "aileron launch gave its program no socket"
        );
        LaunchSession {
            child,
            socket: PathBuf::from(socket),
        }
    }

    /// `aileron-sh ARGS` in `p`, asking this session.
    pub fn shim(&self, p: &Project, args: &[&str]) -> Command {
        let mut cmd = p.shim(args);
        cmd.env("AILERON_SOCKET", &self.socket);
        cmd
    }
}

impl Drop for LaunchSession {
    fn drop(&mut self) {
        // The launched `cat` ends at the end of its input, and the session with it.
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// `aileron approve ARGS` for the project's user, outside any session's
/// tree and without a terminal.
pub fn approve(p: &Project, args: &[&str]) -> Output {
    let mut cmd = p.aileron(&["approve"]);
    cmd.args(args);
    run_no_tty(&mut cmd)
}

/// Waits until `aileron approve` lists an ask; the list.
pub fn listed(p: &Project) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let out = approve(p, &["--once", "--json"]);
        if out.status.success() {
            let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
            let asks = v["asks"].as_array().cloned().unwrap_or_default();
            if !asks.is_empty() {
                return asks;
            }
        }
        assert!(
            Instant::now() < deadline,
            "nothing was listed: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
