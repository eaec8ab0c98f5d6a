//! The box (issue 30), attacked by the launched agent itself: a compiled
//! program and a Python script (`tests/fixtures/box/probe.c`, `probe.py`),
//! each run as users run an agent (`aileron launch -- PROGRAM`, default
//! enforcement), try to write outside the project (and the code that
//! package caches build later), read the credential stores (also by file
//! handle), go through links and `/proc` aliases, read or signal the
//! user's other processes, reach the host's network and sockets, leave the
//! network namespace, use root's capabilities over the host, gain
//! privileges through a setuid file, type into the user's terminal, and
//! outlive the proxy or the session. Each attempt prints
//! one line (`LABEL OK ...` or `LABEL FAIL ERRNO`); the tests assert on
//! those and on what a user would check afterwards: the files on disk, what
//! the host's listeners heard, which processes are left. Where it is cheap
//! the same attempts run with `--enforce none` first, to show that they
//! work without the box (so that no test passes because an attempt failed
//! for another reason).
//!
//! The project and its home live under the build's scratch directory, not
//! under `/tmp`, which the box lets the tree write.

#![cfg(target_os = "linux")]

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};
use support::upstream::Upstream;
use support::{isolate, no_tty, text};

/// A real interpreter, not a version manager's wrapper script.
const PYTHON: &str = "/usr/bin/python3";
const PERMISSIVE: &str = "version: 1\ndefault: allow\n";
/// The policy of the tests that read: the project's `.env` files denied.
const NO_ENV: &str = "version: 1\ndefault: allow\ndeny:\n  - id: no-env\n    when: {type: fs.read, fs.path: {path: \"**/.env*\"}}\n";
/// The longest a test waits for the tree to do something (it takes
/// milliseconds); the probe's own waits end sooner.
const WAIT: Duration = Duration::from_secs(20);

/// The credential stores the issue names, each planted with a secret that
/// no read in the box may return (`box_secrets.rs` checks the masking
/// itself; here each store is read by both forms of the agent).
const STORES: &[(&str, &str)] = &[
    (".ssh/id_ed25519", "ssh-key-secret"),
    (".ssh/id_rsa", "rsa-key-secret"),
    (".aws/credentials", "aws-secret"),
    (".aws/config", "aws-config-secret"),
    (".azure/accessTokens.json", "azure-secret"),
    (".config/gcloud/credentials.db", "gcloud-secret"),
    (
        ".config/gcloud/application_default_credentials.json",
        "gcloud-adc-secret",
    ),
    (".kube/config", "kube-secret"),
    (".docker/config.json", "docker-secret"),
    (".netrc", "netrc-secret"),
    (".git-credentials", "git-credentials-secret"),
    (".npmrc", "npm-token-secret"),
    (".pypirc", "pypi-secret"),
    (".gnupg/private-keys-v1.d/k.key", "gpg-secret"),
    (".local/share/keyrings/login.keyring", "keyring-secret"),
    (".password-store/bank.gpg", "pass-secret"),
];

// ---------------------------------------------------------------------------
// The agent: a compiled program or a Python script

/// Whether the test may go on with `what` (`support::available`).
fn available(what: &str, ok: bool) -> bool {
    support::available(what, ok)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/box")
        .join(name)
}

/// Where the tests keep what outlives one test: a directory the box does
/// not let the tree write (`support::scratch`).
fn scratch() -> PathBuf {
    support::scratch()
}

/// `probe.c` compiled once with `cc`: the program's bytes, which each
/// setup writes to a file of its own (None, said, when there is no `cc`).
fn c_probe() -> Option<&'static [u8]> {
    static BUILT: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let dir = tempfile::tempdir_in(scratch()).expect("probe dir");
        let bin = dir.path().join("probe");
        let out = Command::new("cc")
            .args(["-O1", "-Wall", "-o"])
            .arg(&bin)
            .arg(fixture("probe.c"))
            .output();
        match out {
            Ok(o) if o.status.success() => Some(std::fs::read(&bin).expect("read the probe")),
            Ok(o) => panic!("cc probe.c failed:\n{}", text(&o.stderr)),
            Err(e) => {
                available(&format!("cc ({e})"), false);
                None
            }
        }
    });
    built.as_deref()
}

/// The agent in one of its two forms.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Form {
    Compiled,
    Python,
}

impl Form {
    /// The forms this machine can run.
    fn all() -> Vec<Form> {
        let mut forms = Vec::new();
        if c_probe().is_some() {
            forms.push(Form::Compiled);
        }
        if available(PYTHON, Path::new(PYTHON).exists()) {
            forms.push(Form::Python);
        }
        forms
    }
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// One attempt, `OP|LABEL|ARGS...`.
fn at(fields: &[&str]) -> String {
    fields.join("|")
}

// ---------------------------------------------------------------------------
// A project, its home and a directory outside

/// A project (`proj`, with its `aileron.yaml`), its user's home (`home`,
/// `$HOME`), a runtime directory and a directory `outside` both.
struct Setup {
    _tmp: tempfile::TempDir,
    /// The compiled probe, a copy of this setup's own (beside the others).
    probe: PathBuf,
    proj: PathBuf,
    home: PathBuf,
    run: PathBuf,
    outside: PathBuf,
}

impl Setup {
    fn new(policy: &str) -> Setup {
        let tmp = tempfile::tempdir_in(scratch()).expect("temp dir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical temp dir");
        let [proj, home, run, outside] = ["proj", "home", "run", "outside"].map(|d| root.join(d));
        for d in [&proj, &home, &run, &outside] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        std::fs::write(proj.join("aileron.yaml"), policy).expect("policy");
        let probe = root.join("probe");
        if let Some(bytes) = c_probe() {
            std::fs::write(&probe, bytes).expect("write the probe");
            std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o755))
                .expect("chmod the probe");
        }
        Setup {
            _tmp: tmp,
            probe,
            proj,
            home,
            run,
            outside,
        }
    }

    /// Writes `text` at `path`, creating its directory.
    fn plant(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("create parent");
        std::fs::write(path, text).expect("plant file");
    }

    fn plant_stores(&self) {
        for (rel, secret) in STORES {
            self.plant(&self.home.join(rel), &format!("{secret}\n"));
        }
    }

    /// The argv that runs the probe in `form`.
    fn argv(&self, form: Form) -> Vec<String> {
        match form {
            Form::Compiled => vec![s(&self.probe)],
            Form::Python => vec![PYTHON.into(), s(&fixture("probe.py"))],
        }
    }

    /// `PROBE ATTEMPT` for a nested run (`run|...`): `^`-separated fields.
    fn nested(&self, form: Form, fields: &[&str]) -> String {
        let mut argv = self.argv(form);
        argv.push(fields.join("^"));
        argv.join("|")
    }

    /// `program` run in the project with the isolated environment.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        isolate(&mut cmd, &self.home, &self.run);
        cmd.current_dir(&self.proj);
        cmd
    }

    /// `aileron launch OPTIONS -- PROBE ATTEMPTS...`.
    fn launch(&self, options: &[&str], form: Form, attempts: &[String]) -> Command {
        self.launch_argv(options, &self.argv(form), attempts)
    }

    /// `aileron launch OPTIONS -- ARGV... ATTEMPTS...`.
    fn launch_argv(&self, options: &[&str], argv: &[String], attempts: &[String]) -> Command {
        let mut cmd = self.command(support::AILERON);
        cmd.arg("launch").args(options).arg("--");
        cmd.args(argv).args(attempts);
        cmd
    }

    /// The probe in `form` as a program named `name` (`claude`: launch
    /// then sets the box up for that agent).
    fn as_agent(&self, form: Form, name: &str) -> String {
        let path = self.probe.with_file_name(name);
        match form {
            Form::Compiled => std::fs::copy(&self.probe, &path).map(|_| ()),
            Form::Python => std::fs::read_to_string(fixture("probe.py"))
                .and_then(|src| std::fs::write(&path, format!("#!{PYTHON}\n{src}"))),
        }
        .expect("the probe under the agent's name");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        s(&path)
    }

    /// Runs the probe under `aileron launch OPTIONS` to its end.
    fn probe(&self, options: &[&str], form: Form, attempts: &[String]) -> Lines {
        let out = support::run_no_tty(&mut self.launch(options, form, attempts));
        Lines::of(form, out)
    }

    /// Runs the probe in the box (the default enforcement).
    fn boxed(&self, form: Form, attempts: &[String]) -> Lines {
        let lines = self.probe(&[], form, attempts);
        assert!(lines.success, "the launch failed: {}", lines.show());
        lines
    }
}

/// What a probe printed: label → `OK ...` / `FAIL ...`.
struct Lines {
    form: Form,
    results: BTreeMap<String, String>,
    success: bool,
    stdout: String,
    stderr: String,
}

impl Lines {
    fn of(form: Form, out: Output) -> Lines {
        let stdout = text(&out.stdout);
        Lines {
            form,
            results: parse_lines(&stdout),
            success: out.status.success(),
            stdout,
            stderr: text(&out.stderr),
        }
    }

    fn show(&self) -> String {
        format!(
            "{:?} agent\n--- stdout\n{}--- stderr\n{}",
            self.form, self.stdout, self.stderr
        )
    }

    /// The result of `label`.
    fn get(&self, label: &str) -> &str {
        self.results
            .get(label)
            .unwrap_or_else(|| panic!("no result for {label}:\n{}", self.show()))
    }

    fn assert_ok(&self, label: &str) -> &str {
        let r = self.get(label);
        assert!(
            r.starts_with("OK"),
            "{label} should have worked: {r}\n{}",
            self.show()
        );
        r
    }

    fn assert_failed(&self, label: &str) {
        let r = self.get(label);
        assert!(
            r.starts_with("FAIL"),
            "{label} got through the box: {r}\n{}",
            self.show()
        );
    }

    /// Asserts nothing the probe printed holds a planted secret.
    fn assert_no_secret(&self) {
        for (_, secret) in STORES {
            assert!(
                !self.stdout.contains(secret),
                "`{secret}` was read in the box:\n{}",
                self.show()
            );
        }
    }
}

fn parse_lines(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, r)| r.starts_with("OK") || r.starts_with("FAIL"))
        .map(|(label, r)| (label.to_owned(), r.to_owned()))
        .collect()
}

/// Every file, directory and link below `dir`: relative path → what it is
/// (a file's bytes, a link's target); not Aileron's own data (`.aileron`),
/// which the session writes from outside the box.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("read dir").flatten() {
            let path = e.path();
            let rel = path.strip_prefix(dir).expect("below").to_path_buf();
            if rel.starts_with(".aileron") {
                continue;
            }
            let kind = e.file_type().expect("file type");
            let what = if kind.is_symlink() {
                format!("-> {}", s(&std::fs::read_link(&path).expect("read link")))
            } else if kind.is_dir() {
                dirs.push(path);
                "dir".into()
            } else {
                text(&std::fs::read(&path).unwrap_or_default())
            };
            out.insert(rel, what);
        }
    }
    out
}

/// The home directory and the directory outside as they were before a
/// launch.
struct Before {
    home: BTreeMap<PathBuf, String>,
    outside: BTreeMap<PathBuf, String>,
}

impl Setup {
    fn before(&self) -> Before {
        Before {
            home: snapshot(&self.home),
            outside: snapshot(&self.outside),
        }
    }
}

/// Asserts that the probe read no secret, that each of `failed` failed,
/// and that the home directory and the directory outside are as `before`.
fn assert_held(b: &Setup, got: &Lines, failed: &[&str], before: &Before) {
    got.assert_no_secret();
    for label in failed {
        got.assert_failed(label);
    }
    assert_unchanged(&b.home, &before.home, got);
    assert_unchanged(&b.outside, &before.outside, got);
}

/// Asserts `dir` is as `before` (naming what changed).
fn assert_unchanged(dir: &Path, before: &BTreeMap<PathBuf, String>, got: &Lines) {
    let after = snapshot(dir);
    // What the session itself makes for the tree before it starts (the
    // caches' empty directories and lock files) is no change of the
    // agent's: whatever the agent makes holds something or names a target
    // (a made directory is looked for by the test that makes one).
    let made_by_the_agent = |v: &String| v != "dir" && !v.is_empty();
    let changed: Vec<_> = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(*v))
        .map(|(k, v)| format!("{}: {v:?} -> {:?}", k.display(), after.get(k)))
        .chain(
            after
                .iter()
                .filter(|(k, v)| !before.contains_key(*k) && made_by_the_agent(v))
                .map(|(k, v)| format!("{}: new, {v:?}", k.display())),
        )
        .collect();
    assert!(
        changed.is_empty(),
        "changed in {}: {changed:#?}\n{}",
        dir.display(),
        got.show()
    );
}

// ---------------------------------------------------------------------------
// A launch kept running, read line by line

/// `aileron launch` running in the background, its probe's lines read as
/// they come.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(mut cmd: Command) -> Running {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = no_tty(&mut cmd).spawn().expect("spawn aileron launch");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for the result of `label`.
    fn result(&mut self, label: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(r) = parse_lines(&self.seen.join("\n")).remove(label) {
                return r;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!(
                    "no result for {label}; the probe printed:\n{:#?}",
                    self.seen
                ),
            }
        }
    }

    /// The pid of `aileron launch`.
    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every process below `pid`, children first.
fn descendants(pid: u32) -> Vec<u32> {
    let mut out = children(pid);
    let mut i = 0;
    while i < out.len() {
        out.extend(children(out[i]));
        i += 1;
    }
    out
}

/// The pids whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(text)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `pid` is a live process (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
        !state.is_some_and(|st| st.starts_with('Z') || st.starts_with('X'))
    })
}

/// Waits up to `limit` for every one of `pids` to end; those left.
fn wait_gone(pids: &[u32], limit: Duration) -> Vec<u32> {
    let deadline = Instant::now() + limit;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(pid: u32) {
    // SAFETY: kill(2) of a process this test started or found in its launch's tree.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
}

// ---------------------------------------------------------------------------
// The host's listeners

/// Listeners on the host the box must not reach: TCP and UDP on 127.0.0.1
/// and ::1, a Unix socket in a directory outside the project and an
/// abstract socket. Each records what reaches it.
struct Host {
    tcp4: u16,
    tcp6: u16,
    udp4: u16,
    udp6: u16,
    unix: PathBuf,
    abstract_name: String,
    heard: Arc<Mutex<Vec<String>>>,
}

impl Host {
    /// Listeners made before the launch (the box closes the Unix sockets
    /// listening when it starts). None when this host has no IPv6 loopback.
    fn listen(outside: &Path) -> Option<Host> {
        use std::net::{TcpListener, UdpSocket};
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixListener};
        let heard = Arc::new(Mutex::new(Vec::new()));
        let tcp4 = TcpListener::bind("127.0.0.1:0").expect("tcp4");
        let udp4 = UdpSocket::bind("127.0.0.1:0").expect("udp4");
        let (Ok(tcp6), Ok(udp6)) = (TcpListener::bind("[::1]:0"), UdpSocket::bind("[::1]:0"))
        else {
            available("IPv6 loopback (::1)", false);
            return None;
        };
        let unix = outside.join("agent.sock");
        let unix_listener = UnixListener::bind(&unix).expect("unix socket");
        let abstract_name = format!("aileron-box-attacks-{}-{}", std::process::id(), s(outside));
        let abstract_name: String = abstract_name.chars().take(100).collect();
        let addr = SocketAddr::from_abstract_name(abstract_name.as_bytes()).expect("name");
        let abstract_listener = UnixListener::bind_addr(&addr).expect("abstract socket");
        let host = Host {
            tcp4: tcp4.local_addr().unwrap().port(),
            tcp6: tcp6.local_addr().unwrap().port(),
            udp4: udp4.local_addr().unwrap().port(),
            udp6: udp6.local_addr().unwrap().port(),
            unix,
            abstract_name,
            heard: Arc::clone(&heard),
        };
        for (name, l) in [("tcp4", tcp4), ("tcp6", tcp6)] {
            let heard = Arc::clone(&heard);
            std::thread::spawn(move || {
                for conn in l.incoming().flatten() {
                    heard_from(name, conn, &heard);
                }
            });
        }
        for (name, l) in [("unix", unix_listener), ("abstract", abstract_listener)] {
            let heard = Arc::clone(&heard);
            std::thread::spawn(move || {
                for conn in l.incoming().flatten() {
                    heard_from(name, conn, &heard);
                }
            });
        }
        for (name, sock) in [("udp4", udp4), ("udp6", udp6)] {
            let heard = Arc::clone(&heard);
            std::thread::spawn(move || {
                let mut buf = [0u8; 512];
                while let Ok((n, _)) = sock.recv_from(&mut buf) {
                    let line = format!("{name}: {}", text(&buf[..n]).trim_end());
                    heard.lock().unwrap().push(line);
                }
            });
        }
        Some(host)
    }

    /// The attempts on each listener, labelled by what they try.
    fn attempts(&self, prefix: &str) -> Vec<String> {
        let (t4, t6, u4, u6) = (
            self.tcp4.to_string(),
            self.tcp6.to_string(),
            self.udp4.to_string(),
            self.udp6.to_string(),
        );
        [
            ["tcp", "tcp4", "127.0.0.1", t4.as_str()],
            ["tcp", "tcp6", "::1", t6.as_str()],
            ["udp", "udp4", "127.0.0.1", u4.as_str()],
            ["udp", "udp6", "::1", u6.as_str()],
        ]
        .iter()
        .map(|[op, label, host, port]| at(&[op, &format!("{prefix}{label}"), host, port]))
        .chain([
            at(&["unix", &format!("{prefix}unix"), &s(&self.unix)]),
            at(&[
                "abstract",
                &format!("{prefix}abstract"),
                &self.abstract_name,
            ]),
        ])
        .collect()
    }

    /// What reached the listeners so far (after a moment for what is in flight).
    fn heard(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(200));
        self.heard.lock().unwrap().clone()
    }

    fn forget(&self) {
        self.heard.lock().unwrap().clear();
    }
}

/// Whether an `http` attempt got the upstream's 200.
fn answered(result: &str) -> bool {
    result.starts_with("OK HTTP/1.1 200 ")
}

/// Records a connection to `name` and the line it sent.
fn heard_from(name: &str, mut conn: impl Read + Send, heard: &Mutex<Vec<String>>) {
    let mut buf = [0u8; 512];
    let n = conn.read(&mut buf).unwrap_or(0);
    let line = format!("{name}: {}", text(&buf[..n]).trim_end());
    heard.lock().unwrap().push(line);
}

// ---------------------------------------------------------------------------
// Writes

/// Each way of making or changing a file outside the project: `OP`,
/// label, arguments, where `~` is the home directory, `@` the directory
/// outside and `.` the project.
const WRITES: &[(&str, &str, &[&str])] = &[
    ("write", "append-bashrc", &["~/.bashrc"]),
    ("trunc", "truncate-bashrc", &["~/.bashrc"]),
    ("write", "append-npmrc", &["~/.npmrc"]),
    ("write", "append-git-config", &["~/.config/git/config"]),
    ("create", "create-in-home", &["~/.profile"]),
    ("mkdir", "mkdir-in-home", &["~/.ssh"]),
    ("create", "create-outside", &["@/new.txt"]),
    ("write", "append-outside", &["@/notes.txt"]),
    ("reopen", "reopen-outside", &["@/notes.txt"]),
    ("reopen", "reopen-bashrc", &["~/.bashrc"]),
    ("unlink", "unlink-bashrc", &["~/.bashrc"]),
    (
        "rename",
        "rename-out-of-outside",
        &["@/notes.txt", "./notes.txt"],
    ),
    (
        "rename",
        "rename-into-outside",
        &["./mine.txt", "@/mine.txt"],
    ),
    ("rename", "rename-over-bashrc", &["./mine.txt", "~/.bashrc"]),
    ("link", "link-into-outside", &["./mine.txt", "@/linked.txt"]),
    ("link", "link-bashrc-in", &["~/.bashrc", "./bashrc-hard"]),
    ("write", "write-bashrc-hard", &["./bashrc-hard"]),
    ("symlink", "symlink-outside", &["./mine.txt", "@/sym"]),
    ("write", "write-notes-sym", &["./notes-sym"]),
    ("write", "write-bashrc-sym", &["./bashrc-sym"]),
    ("tmpfile", "tmpfile-outside", &["@", "@/tmpfile.txt"]),
    (
        "tmpfile",
        "tmpfile-linked-outside",
        &[".", "@/tmpfile-linked.txt"],
    ),
    ("tmpfile", "tmpfile-linked-home", &[".", "~/.bash_profile"]),
];

/// The same calls in the project: they work in the box (run first: the
/// links they make are written through by [`WRITES`]).
const WRITES_IN_PROJECT: &[(&str, &str, &[&str])] = &[
    ("create", "create-project", &["./notes-here.txt"]),
    ("write", "append-project", &["./notes-here.txt"]),
    ("tmpfile", "tmpfile-project", &[".", "./tmpfile.txt"]),
    (
        "rename",
        "rename-project",
        &["./notes-here.txt", "./renamed.txt"],
    ),
    (
        "symlink",
        "symlink-to-bashrc",
        &["~/.bashrc", "./bashrc-sym"],
    ),
    (
        "symlink",
        "symlink-to-notes",
        &["@/notes.txt", "./notes-sym"],
    ),
];

/// The attempts of `table` with `b`'s directories.
fn attempts_in(b: &Setup, table: &[(&str, &str, &[&str])]) -> Vec<String> {
    let place = |a: &str| match a.split_at(1) {
        ("~", rest) => format!("{}{rest}", s(&b.home)),
        ("@", rest) => format!("{}{rest}", s(&b.outside)),
        (".", rest) => format!("{}{rest}", s(&b.proj)),
        _ => a.to_owned(),
    };
    table
        .iter()
        .map(|(op, label, args)| {
            let mut fields = vec![op.to_string(), label.to_string()];
            fields.extend(args.iter().map(|a| place(a)));
            fields.join("|")
        })
        .collect()
}

/// A setup with the files [`WRITES`] goes for.
fn with_files_to_write() -> Setup {
    let b = Setup::new(PERMISSIVE);
    b.plant(&b.home.join(".bashrc"), "# the user's bashrc\n");
    b.plant(
        &b.home.join(".npmrc"),
        "registry=https://registry.example/\n",
    );
    b.plant(&b.home.join(".config/git/config"), "[user]\n");
    b.plant(&b.outside.join("notes.txt"), "the user's notes\n");
    b.plant(&b.proj.join("mine.txt"), "project file\n");
    b
}

/// Writes to the home directory and to a directory outside the project,
/// by every call that makes or changes a file (create, append, truncate,
/// rename, `link`, a symlink written through, `O_TMPFILE` + `linkat`),
/// fail, and the files there are as they were; the same calls inside the
/// project work.
#[test]
fn writes_outside_the_project_fail_and_change_nothing() {
    for form in Form::all() {
        let open = with_files_to_write();
        // (Without the box the attempts change what later ones find:
        // these do not depend on the others.)
        let independent = [
            "append-bashrc",
            "create-in-home",
            "create-outside",
            "append-outside",
            "reopen-outside",
            "symlink-outside",
            "tmpfile-outside",
            "tmpfile-linked-outside",
            "tmpfile-linked-home",
        ];
        assert_works_without_the_box(&open, form, &attempts_in(&open, WRITES), &independent);

        let b = with_files_to_write();
        let before = b.before();
        let mut attempts = attempts_in(&b, WRITES_IN_PROJECT);
        attempts.extend(attempts_in(&b, WRITES));
        let got = b.boxed(form, &attempts);
        let failed: Vec<&str> = WRITES.iter().map(|(_, label, _)| *label).collect();
        assert_held(&b, &got, &failed, &before);
        for (_, label, _) in WRITES_IN_PROJECT {
            got.assert_ok(label);
        }
        assert!(!b.home.join(".ssh").exists(), "{}", got.show());
        assert_eq!(
            std::fs::read_to_string(b.proj.join("mine.txt")).unwrap(),
            "project file\n"
        );
        assert_eq!(
            std::fs::read_to_string(b.proj.join("tmpfile.txt")).unwrap(),
            "pwned by the box probe\n"
        );
    }
}

/// Each attempt, run first with `--enforce none` in a setup of its own:
/// those labelled in `work` succeed there, so that the box is what stops
/// them.
fn assert_works_without_the_box(b: &Setup, form: Form, attempts: &[String], work: &[&str]) {
    let open = b.probe(&["--enforce", "none"], form, attempts);
    for label in work {
        open.assert_ok(label);
    }
}

/// Code that tools keep in their caches and run or build again later,
/// outside the box, as it is: cargo checks an unpacked crate by its
/// `.cargo-ok` marker only, Go a module directory not at all after its
/// download (its files are read-only by mode, which their owner can
/// change), pre-commit runs the hooks it cloned at the user's next commit.
const CACHED_SOURCES: &[&str] = &[
    ".cargo/registry/src/index.crates.io-1949cf8c6b5b557f/demo-1.0.0/src/lib.rs",
    "go/pkg/mod/example.com/demo@v1.0.0/demo.go",
    ".cache/pre-commit/repo1a2b3c/hooks/check.py",
];

/// A dependency's source unpacked in a package cache is code the user's
/// next build compiles outside the box: the box lets the agent write the
/// caches (a build in it fetches), but copy-on-write: what it writes, it
/// reads back in this session and the next of the same project, and the
/// host's cache keeps its bytes.
// BYPASS (closed): each write reached the host's cache: launch_box::CACHES
// made `~/.cargo/registry`, `~/go/pkg/mod` and `~/.cache` writable whole,
// `src/`, the module directories and the hooks included.
#[test]
fn dependency_sources_in_the_caches_keep_their_bytes() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        for rel in CACHED_SOURCES {
            b.plant(&b.home.join(rel), "pub fn demo() {}\n");
        }
        let crate_dir = b.home.join(CACHED_SOURCES[0]);
        b.plant(
            &crate_dir
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .join(".cargo-ok"),
            "{\"v\":1}",
        );
        let before = snapshot(&b.home);
        let path = |rel: &str| s(&b.home.join(rel));
        let written: Vec<String> = CACHED_SOURCES
            .iter()
            .flat_map(|rel| {
                [
                    at(&["write", rel, &path(rel)]),
                    at(&["read", &format!("read:{rel}"), &path(rel)]),
                ]
            })
            .collect();
        let got = b.boxed(form, &written);
        for rel in CACHED_SOURCES {
            got.assert_ok(rel);
            assert!(
                got.get(&format!("read:{rel}")).contains("pwned"),
                "{}",
                got.show()
            );
        }
        assert_unchanged(&b.home, &before, &got);
        // The next session of the project has its copy; the host has not.
        let read: Vec<String> = CACHED_SOURCES
            .iter()
            .map(|rel| at(&["read", &format!("again:{rel}"), &path(rel)]))
            .collect();
        let again = b.boxed(form, &read);
        for rel in CACHED_SOURCES {
            assert!(
                again.get(&format!("again:{rel}")).contains("pwned"),
                "{}",
                again.show()
            );
        }
        let open = b.probe(&["--enforce", "none"], form, &read);
        for rel in CACHED_SOURCES {
            assert!(
                !open.get(&format!("again:{rel}")).contains("pwned"),
                "{}",
                open.show()
            );
        }
    }
}

/// Where each agent's own state (which the box lets it keep) names code
/// that the agent starts at every run, also one outside the box: the agent
/// launched, the file written in the box (its directories made first),
/// what is written, and the user's file that would then hold it.
const STATE_THAT_RUNS: &[(&str, &str, &str, &str)] = &[
    // Claude Code's state file: its user-scope MCP servers.
    ("claude", ".claude.json", CLAUDE_SERVER, ".claude.json"),
    // The session's copy of it in ~/.claude, put back at the end.
    (
        "claude",
        ".claude/.claude.json",
        CLAUDE_SERVER,
        ".claude.json",
    ),
    // A Gemini CLI extension: its MCP servers start with every session.
    (
        "gemini",
        ".gemini/extensions/helper/gemini-extension.json",
        GEMINI_EXTENSION,
        ".gemini/extensions/helper/gemini-extension.json",
    ),
    // Codex's configuration: its MCP servers and `notify` program.
    (
        "codex",
        ".codex/config.toml",
        CODEX_SERVER,
        ".codex/config.toml",
    ),
];

const CLAUDE_SERVER: &str = r#"{"numStartups": 3, "mcpServers": {"helper": {"type": "stdio", "command": "sh", "args": ["-c", "echo injected-by-the-box"]}}}"#;
const GEMINI_EXTENSION: &str = r#"{"name": "helper", "version": "1.0.0", "mcpServers": {"helper": {"command": "sh", "args": ["-c", "echo injected-by-the-box"]}}}"#;
const CODEX_SERVER: &str =
    "[mcp_servers.helper]\ncommand = \"sh\"\nargs = [\"-c\", \"echo injected-by-the-box\"]\n";

/// Each agent's state, which the box lets it keep, gains no code that the
/// agent starts at its next run outside the box (an MCP server, an
/// extension), whether written in place or in the session's copy.
#[test]
fn the_agents_state_gains_no_code_run_outside_the_box() {
    for form in Form::all() {
        for (agent, target, text, checked) in STATE_THAT_RUNS {
            let b = Setup::new(PERMISSIVE);
            b.plant(&b.home.join(".claude.json"), "{\"numStartups\": 3}\n");
            b.plant(&b.home.join(".codex/config.toml"), "model = \"o3\"\n");
            let program = b.as_agent(form, agent);
            let path = b.home.join(target);
            let dirs = path
                .ancestors()
                .skip(1)
                .take_while(|d| d.starts_with(&b.home) && !d.exists())
                .map(|d| at(&["mkdir", "mkdir", &s(d)]))
                .collect::<Vec<_>>();
            let mut attempts: Vec<String> = dirs.into_iter().rev().collect();
            attempts.push(at(&["put", "state", &s(&path), text]));
            let out = support::run_no_tty(&mut b.launch_argv(&[], &[program], &attempts));
            let got = Lines::of(form, out);
            assert!(got.success, "{}", got.show());
            let after = std::fs::read_to_string(b.home.join(checked)).unwrap_or_default();
            assert!(
                !after.contains("injected-by-the-box"),
                "{agent}: {target} written in the box ({}) left ~/{checked} with: {after}\n{}",
                got.get("state"),
                got.show()
            );
        }
    }
}

/// The settings keys that keep the pinned Gemini CLI from updating itself,
/// as its bundle reads them (`general.enableAutoUpdate`: no `npm install
/// -g`; `general.enableAutoUpdateNotification`: no registry request).
const GEMINI_UPDATER_KEYS: &[&str] = &["enableAutoUpdate", "enableAutoUpdateNotification"];

/// Gemini CLI in the box reads session settings that turn its self-updater
/// off (it would run `npm install -g` over its own program, outside the
/// box), whatever the user's settings say, the user's other settings kept
/// and the user's file unchanged; the audit log says so. The keys are
/// those the pinned Gemini CLI's code reads.
#[test]
fn gemini_clis_self_updater_is_off_in_the_box() {
    let Some(gemini) = support::gemini_api::gemini() else {
        return;
    };
    let package = std::fs::canonicalize(&gemini).expect("gemini's program");
    let bundle = package.parent().expect("gemini's bundle directory");
    let code: String = std::fs::read_dir(bundle)
        .expect("read the bundle")
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    for key in GEMINI_UPDATER_KEYS {
        let read = format!("settings.merged.general.{key}");
        assert!(
            code.contains(&read),
            "the pinned Gemini CLI reads no {read}"
        );
    }
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let user = "{\n  // the user's own\n  \"general\": {\"enableAutoUpdate\": true, \"vimMode\": true}\n}\n";
        b.plant(&b.home.join(".gemini/settings.json"), user);
        let program = b.as_agent(form, "gemini");
        // The session's Gemini home is in its runtime directory, below
        // `$XDG_RUNTIME_DIR`: its one settings file, printed whole.
        let show = at(&[
            "run",
            "settings",
            "grep",
            "-rh",
            "--include=settings.json",
            "-e",
            "^",
            &s(&b.run),
        ]);
        let got = Lines::of(
            form,
            support::run_no_tty(&mut b.launch_argv(&[], &[program], &[show])),
        );
        assert!(got.success, "{}", got.show());
        assert_eq!(got.get("settings"), "OK exit=0", "{}", got.show());
        let seen = got
            .stdout
            .rsplit_once("settings OK")
            .map(|(settings, _)| settings)
            .unwrap_or_default();
        let settings = aileron_hooks::jsonedit::parse(seen)
            .unwrap_or_else(|e| panic!("{e}: {seen}"))
            .to_value();
        for key in GEMINI_UPDATER_KEYS {
            assert_eq!(settings["general"][key], false, "{key}: {seen}");
        }
        assert_eq!(settings["general"]["vimMode"], true, "{seen}");
        assert_eq!(
            std::fs::read_to_string(b.home.join(".gemini/settings.json")).unwrap(),
            user
        );
        let audit = std::fs::read_to_string(b.proj.join(".aileron/audit.jsonl")).unwrap();
        assert!(
            audit.contains("Gemini CLI's self-updater is off in the box"),
            "{audit}"
        );
    }
}

/// Git files in the project that make git run a command later, at the
/// user's next commit or the next `git status` an editor runs, outside the
/// box: the top repository's hooks and configuration, the hooks directory
/// its configuration names (`core.hooksPath`, as husky sets it), and those
/// of a repository nested in the project (a clone in a subdirectory). Each
/// is appended to, or created where it is a new hook.
const GIT_FILES_THAT_RUN: &[(&str, &str)] = &[
    ("write", ".git/hooks/pre-commit"),
    ("write", ".git/config"),
    ("write", ".husky/pre-commit"),
    ("create", ".husky/post-checkout"),
    ("write", "vendor/lib/.git/hooks/pre-commit"),
    ("create", "vendor/lib/.git/hooks/post-checkout"),
    ("write", "vendor/lib/.git/config"),
];

/// Each of [`GIT_FILES_THAT_RUN`] keeps its bytes (or stays absent) in the
/// box.
// Was a bypass: only the top repository's `.git/hooks` and `.git/config`
// were locked; now `core.hooksPath`'s directory and nested repositories'
// are too (`launch_box::git_code`).
#[test]
fn git_files_that_run_commands_keep_their_bytes() {
    if !available("git", Command::new("git").arg("--version").output().is_ok()) {
        return;
    }
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let git = |dir: &Path, args: &[&str]| {
            let out = b
                .command("git")
                .current_dir(dir)
                .args(args)
                .output()
                .expect("git");
            assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        };
        let nested = b.proj.join("vendor/lib");
        std::fs::create_dir_all(&nested).expect("nested repository");
        git(&b.proj, &["init", "-q"]);
        git(&b.proj, &["config", "core.hooksPath", ".husky"]);
        git(&nested, &["init", "-q"]);
        // The hooks to append to exist (git made the configurations).
        for (op, rel) in GIT_FILES_THAT_RUN {
            if *op == "write" && !rel.ends_with("config") {
                let path = b.proj.join(rel);
                b.plant(&path, "#!/bin/sh\nnpm run lint\n");
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
        }
        let before = snapshot(&b.proj);
        let attempts: Vec<String> = GIT_FILES_THAT_RUN
            .iter()
            .map(|(op, rel)| at(&[op, rel, &s(&b.proj.join(rel))]))
            .collect();
        let got = b.boxed(form, &attempts);
        for (_, rel) in GIT_FILES_THAT_RUN {
            got.assert_failed(rel);
        }
        assert_unchanged(&b.proj, &before, &got);
    }
}

// ---------------------------------------------------------------------------
// Reads

/// Every credential store and the project's `.env` (denied by a rule)
/// read as absent or empty to both forms of the agent; the project's
/// other files read as they are.
#[test]
fn credential_stores_and_denied_files_read_as_empty() {
    for form in Form::all() {
        let b = Setup::new(NO_ENV);
        b.plant_stores();
        b.plant(&b.proj.join(".env"), "DB_PASSWORD=dotenv-secret\n");
        b.plant(
            &b.proj.join("config/.env.local"),
            "TOKEN=dotenv-local-secret\n",
        );
        b.plant(&b.proj.join("src/app.py"), "print('hello')\n");
        let mut attempts: Vec<String> = STORES
            .iter()
            .map(|(rel, _)| at(&["read", rel, &s(&b.home.join(rel))]))
            .collect();
        attempts.extend([
            at(&["read", ".env", ".env"]),
            at(&[
                "read",
                "config/.env.local",
                &s(&b.proj.join("config/.env.local")),
            ]),
            at(&["read", "app", "src/app.py"]),
        ]);
        let open = Setup::new(NO_ENV);
        open.plant_stores();
        assert_works_without_the_box(&open, form, &attempts[..1], &[STORES[0].0]);
        let got = b.boxed(form, &attempts);
        got.assert_no_secret();
        assert!(!got.stdout.contains("dotenv"), "{}", got.show());
        for label in STORES
            .iter()
            .map(|(r, _)| *r)
            .chain([".env", "config/.env.local"])
        {
            let r = got.get(label);
            assert!(
                r.starts_with("FAIL") || r == "OK len=0 text=",
                "{label} read in the box: {r}\n{}",
                got.show()
            );
        }
        assert_eq!(got.get("app"), "OK len=15 text=print('hello')\\n");
    }
}

/// The masked stores opened by file handle (`open_by_handle_at`, an inode
/// number read from the directory listing): no secret. Root has the
/// capability it takes (`CAP_DAC_READ_SEARCH`); a user's attempt fails.
#[test]
fn file_handles_open_nothing_the_box_masks() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        b.plant_stores();
        let mut attempts = Vec::new();
        for (rel, _) in STORES {
            let path = b.home.join(rel);
            let (dir, name) = (path.parent().unwrap(), path.file_name().unwrap());
            attempts.push(at(&["handle", rel, &s(dir), &s(Path::new(name))]));
            if let Some((top, rest)) = rel.split_once('/') {
                let label = format!("{rel}-from-above");
                attempts.push(at(&["handle", &label, &s(&b.home), top, rest]));
            }
        }
        let got = b.boxed(form, &attempts);
        got.assert_no_secret();
    }
}

/// What root may do to the whole machine needs capabilities over the
/// host: the tree keeps none. It cannot rename the host (set here to the
/// name it has, harmless) nor make a device node of the disk in `/tmp`
/// (through which it would read every file raw). A user's tree never had
/// them.
#[test]
fn the_tree_keeps_no_capability_over_the_host() {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata("/").expect("stat /").dev();
    let (major, minor) = (libc::major(dev).to_string(), libc::minor(dev).to_string());
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let node = PathBuf::from(format!(
            "/tmp/aileron-box-attacks-{}-{form:?}.blk",
            std::process::id()
        ));
        let attempts = [
            at(&["hostname", "hostname"]),
            at(&["mknod", "mknod", &s(&node), &major, &minor]),
        ];
        let got = b.boxed(form, &attempts);
        let made = std::fs::symlink_metadata(&node).is_ok();
        let _ = std::fs::remove_file(&node);
        assert!(
            !made,
            "a device node of the disk was made in /tmp: {}",
            got.show()
        );
        for label in ["hostname", "mknod"] {
            got.assert_failed(label);
        }
    }
}

/// Credentials beyond the stores the issue names, each as common: other
/// agents' logins (the launched program is none of them), model and code
/// hosts' tokens, cloud sync and infrastructure tools' configurations, and
/// the browsers' cookie stores (a logged-in session is a credential).
const MORE_STORES: &[(&str, &str)] = &[
    (".claude/.credentials.json", "claude-oauth-secret"),
    (".codex/auth.json", "codex-api-key-secret"),
    (".gemini/oauth_creds.json", "gemini-oauth-secret"),
    (".local/share/opencode/auth.json", "opencode-auth-secret"),
    (".config/github-copilot/hosts.json", "copilot-token-secret"),
    (".cache/huggingface/token", "hf-token-secret"),
    (".huggingface/token", "hf-old-token-secret"),
    (".terraformrc", "terraformrc-token-secret"),
    (".config/rclone/rclone.conf", "rclone-secret"),
    (".databrickscfg", "databricks-secret"),
    (
        ".mozilla/firefox/p.default/cookies.sqlite",
        "firefox-cookie-secret",
    ),
    (
        ".config/google-chrome/Default/Cookies",
        "chrome-cookie-secret",
    ),
];

/// Each of [`MORE_STORES`] reads as absent or empty in the box.
// BYPASS: every one of them reads in full: aileron_engine::credentials
// names none of them (the agents' own logins would be given back to the
// agent launched, by its name, as its state is).
#[test]
fn more_credential_stores_read_as_empty() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        for (rel, secret) in MORE_STORES {
            b.plant(&b.home.join(rel), &format!("{secret}\n"));
        }
        let attempts: Vec<String> = MORE_STORES
            .iter()
            .map(|(rel, _)| at(&["read", rel, &s(&b.home.join(rel))]))
            .collect();
        let got = b.boxed(form, &attempts);
        let read: Vec<&str> = MORE_STORES
            .iter()
            .filter(|(_, secret)| got.stdout.contains(secret))
            .map(|(rel, _)| *rel)
            .collect();
        assert_eq!(read, Vec::<&str>::new(), "read in the box: {}", got.show());
    }
}

/// A credential store the user's tools write again while the session
/// runs (`docker login`, `gh auth login`, git's credential store: a new
/// file renamed over the old one) reads as empty in the box as before.
// BYPASS: the new secrets read in full: the box masks each store file by
// mounting /dev/null over its path, a mount the rename over it detaches.
#[test]
fn stores_written_again_during_the_session_stay_masked() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        b.plant_stores();
        let stores = [".git-credentials", ".docker/config.json", ".netrc"];
        let go = b.proj.join("logged-in");
        let mut attempts: Vec<String> = stores
            .iter()
            .map(|rel| at(&["read", &format!("before:{rel}"), &s(&b.home.join(rel))]))
            .collect();
        attempts.push(at(&["wait", "go", &s(&go)]));
        attempts.extend(
            stores
                .iter()
                .map(|rel| at(&["read", &format!("after:{rel}"), &s(&b.home.join(rel))])),
        );
        let mut run = Running::start(b.launch(&[], form, &attempts));
        for rel in stores {
            let before = run.result(&format!("before:{rel}"));
            assert!(
                before.starts_with("FAIL") || before == "OK len=0 text=",
                "{before}"
            );
        }
        // The user logs in again in another terminal: each tool writes a
        // new file and renames it over the old one.
        for rel in stores {
            let path = b.home.join(rel);
            let new = path.with_extension("new");
            std::fs::write(&new, "fresh-login-secret\n").expect("write the new file");
            std::fs::rename(&new, &path).expect("rename it over the store");
        }
        std::fs::write(&go, "").expect("signal the probe");
        for rel in stores {
            let after = run.result(&format!("after:{rel}"));
            assert!(
                !after.contains("fresh-login-secret"),
                "{rel}: {after}; {:?}",
                run.seen
            );
        }
    }
}

/// Files the box locks in the project, which the user changes during the
/// session from outside the way their tools do (`git config`, which
/// writes `.git/config.lock` and renames it over the file; an editor's
/// safe save of `aileron.yaml`, a new file renamed over the old one), stay
/// locked to the agent.
// BYPASS (closed): after the user's rename both were written from the box:
// the read-only mount over each path is detached by the rename over it, and
// the project is writable to Landlock; the guard covered them again at its
// next round, 20 ms later. Now the rename itself wakes it (inotify).
#[test]
fn locked_files_the_user_saves_again_stay_locked() {
    if !available("git", Command::new("git").arg("--version").output().is_ok()) {
        return;
    }
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let git = |args: &[&str]| {
            let out = b.command("git").args(args).output().expect("git");
            assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
        };
        git(&["init", "-q"]);
        let (config, policy) = (b.proj.join(".git/config"), b.proj.join("aileron.yaml"));
        let go = b.proj.join("saved");
        let attempts = [
            at(&["write", "config-before", &s(&config)]),
            at(&["write", "policy-before", &s(&policy)]),
            at(&["wait", "go", &s(&go)]),
            at(&["write", "config-after", &s(&config)]),
            at(&["write", "policy-after", &s(&policy)]),
        ];
        let mut run = Running::start(b.launch(&[], form, &attempts));
        for label in ["config-before", "policy-before"] {
            assert!(
                run.result(label).starts_with("FAIL"),
                "{label}: {:?}",
                run.seen
            );
        }
        git(&["config", "user.name", "The User"]);
        let saved = b.proj.join(".aileron.yaml.swp");
        std::fs::write(&saved, PERMISSIVE).expect("the editor's new file");
        std::fs::rename(&saved, &policy).expect("saved over the policy");
        std::fs::write(&go, "").expect("signal the probe");
        for label in ["config-after", "policy-after"] {
            run.result(label);
        }
        let config_text = std::fs::read_to_string(&config).unwrap_or_default();
        let policy_text = std::fs::read_to_string(&policy).unwrap_or_default();
        assert!(
            !config_text.contains("pwned"),
            "{config_text}; {:?}",
            run.seen
        );
        assert_eq!(policy_text, PERMISSIVE, "{:?}", run.seen);
    }
}

// ---------------------------------------------------------------------------
// Links

/// A project with the stores planted and a file of the user's outside it;
/// (setup, the file outside).
fn with_notes_outside() -> (Setup, PathBuf) {
    let b = Setup::new(PERMISSIVE);
    b.plant_stores();
    let notes = b.outside.join("notes.txt");
    b.plant(&notes, "the user's notes\n");
    (b, notes)
}

/// Links the agent makes in the project to a secret or to a file outside
/// (symbolic, hard, relative): reading through them gives no secret,
/// writing through them changes nothing outside.
#[test]
fn links_the_agent_makes_reach_no_secret_and_no_file_outside() {
    for form in Form::all() {
        let (b, notes) = with_notes_outside();
        let (h, p) = (s(&b.home), s(&b.proj));
        let link = |name: &str| s(&b.proj.join(name));
        let before = b.before();
        let attempts = [
            at(&[
                "symlink",
                "sym-secret",
                &format!("{h}/.ssh/id_ed25519"),
                &link("sym-secret"),
            ]),
            at(&["read", "read-sym-secret", &link("sym-secret")]),
            at(&[
                "link",
                "hard-secret",
                &format!("{h}/.netrc"),
                &link("hard-secret"),
            ]),
            at(&["read", "read-hard-secret", &link("hard-secret")]),
            at(&["symlink", "sym-outside", &s(&notes), &link("sym-outside")]),
            at(&["write", "write-sym-outside", &link("sym-outside")]),
            at(&["trunc", "trunc-sym-outside", &link("sym-outside")]),
            at(&["link", "hard-outside", &s(&notes), &link("hard-outside")]),
            at(&["write", "write-hard-outside", &link("hard-outside")]),
            at(&[
                "symlink",
                "rel-sym",
                "../home/.kube/config",
                &format!("{p}/rel-sym"),
            ]),
            at(&["read", "read-rel-sym", &format!("{p}/rel-sym")]),
            at(&[
                "symlink",
                "rel-sym-outside",
                "../outside/notes.txt",
                &format!("{p}/rel-out"),
            ]),
            at(&["write", "write-rel-sym-outside", &format!("{p}/rel-out")]),
        ];
        let got = b.boxed(form, &attempts);
        let failed = [
            "hard-secret",
            "hard-outside",
            "write-sym-outside",
            "trunc-sym-outside",
            "write-rel-sym-outside",
        ];
        assert_held(&b, &got, &failed, &before);
        got.assert_ok("sym-outside");
    }
}

/// Links planted in the project before the launch (by whatever ran there
/// before the session) to a secret or to a file outside (the user's notes,
/// a file of another repository): reading through them gives no secret,
/// writing through them changes nothing outside, and the audit log names
/// what the box locked. Links whose every name lies in the project (cargo
/// links `target/debug/app` to `deps/app-HASH`) stay writable: cargo
/// removes and links them again at each build.
#[test]
fn links_planted_before_the_launch_reach_no_secret_and_no_file_outside() {
    for form in Form::all() {
        let (b, notes) = with_notes_outside();
        let other_repo = b.outside.join("other-repo/src/lib.rs");
        b.plant(&other_repo, "pub fn theirs() {}\n");
        let link = |name: &str| s(&b.proj.join(name));
        std::os::unix::fs::symlink(b.home.join(".aws/credentials"), link("sym-secret")).unwrap();
        std::fs::hard_link(b.home.join(".git-credentials"), link("hard-secret")).unwrap();
        std::os::unix::fs::symlink(&notes, link("sym-outside")).unwrap();
        std::fs::hard_link(&notes, link("hard-outside")).unwrap();
        std::fs::hard_link(&other_repo, link("vendored.rs")).unwrap();
        let (output, built) = (link("target/debug/deps/app-1f2e"), link("target/debug/app"));
        b.plant(Path::new(&output), "the build's output\n");
        std::fs::hard_link(&output, &built).unwrap();
        let before = b.before();
        let attempts = [
            at(&["read", "read-sym-secret", &link("sym-secret")]),
            at(&["read", "read-hard-secret", &link("hard-secret")]),
            at(&["write", "write-sym-outside", &link("sym-outside")]),
            at(&["write", "write-hard-outside", &link("hard-outside")]),
            at(&["trunc", "trunc-hard-outside", &link("hard-outside")]),
            at(&["write", "write-other-repo", &link("vendored.rs")]),
            at(&["write", "write-output", &output]),
            at(&["write", "write-built", &built]),
            at(&["unlink", "unlink-built", &built]),
            at(&["link", "link-built", &output, &built]),
        ];
        let got = b.boxed(form, &attempts);
        let failed = [
            "write-sym-outside",
            "write-hard-outside",
            "trunc-hard-outside",
            "write-other-repo",
        ];
        assert_held(&b, &got, &failed, &before);
        for label in ["write-output", "write-built", "unlink-built", "link-built"] {
            got.assert_ok(label);
        }
        let audit = std::fs::read_to_string(b.proj.join(".aileron/audit.jsonl")).unwrap();
        let note = audit
            .lines()
            .find(|l| l.contains("a file with a name outside the places"))
            .unwrap_or_else(|| panic!("no note of the locked links:\n{audit}"));
        for name in ["hard-outside", "vendored.rs"] {
            assert!(note.contains(&link(name)), "{name} not named: {note}");
        }
        assert!(!note.contains("target/debug"), "{note}");
    }
}

/// A `cargo build` in the box of a project built before outside it: its
/// `target/` holds hard links (every name inside the project), which the
/// rebuild removes and makes again.
#[test]
fn cargo_builds_again_in_the_box() {
    let b = Setup::new(PERMISSIVE);
    b.plant(
        &b.proj.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    b.plant(
        &b.proj.join("src/main.rs"),
        "fn main() { println!(\"one\"); }\n",
    );
    let cargo = |boxed: bool| {
        let mut cmd = if boxed {
            b.launch_argv(&[], &["cargo".into(), "build".into(), "-q".into()], &[])
        } else {
            let mut cmd = b.command("cargo");
            cmd.args(["build", "-q"]);
            cmd
        };
        support::run_no_tty(as_rust_user(&mut cmd))
    };
    let present = as_rust_user(b.command("cargo").arg("--version"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !available("cargo", present) {
        return;
    }
    let first = cargo(false);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let linked = b.proj.join("target/debug/app");
    assert!(
        std::os::unix::fs::MetadataExt::nlink(&std::fs::metadata(&linked).unwrap()) > 1,
        "cargo links its output"
    );
    b.plant(
        &b.proj.join("src/main.rs"),
        "fn main() { println!(\"two\"); }\n",
    );
    let again = cargo(true);
    assert!(
        again.status.success(),
        "{}\n{}",
        text(&again.stdout),
        text(&again.stderr)
    );
    let run = Command::new(&linked).output().expect("run the build");
    assert_eq!(text(&run.stdout), "two\n");
}

/// `cmd` as a user of rustup runs it: rustup's toolchains where that user
/// keeps them (the test's home holds none), none of the variables `cargo
/// test` gives the test itself.
fn as_rust_user(cmd: &mut Command) -> &mut Command {
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy()
            .to_ascii_lowercase()
            .starts_with("cargo")
        {
            cmd.env_remove(&k);
        }
    }
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| Some(PathBuf::from(std::env::var_os("HOME")?).join(".rustup")))
        .filter(|d| d.is_dir());
    if let Some(dir) = rustup {
        cmd.env("RUSTUP_HOME", dir);
    }
    cmd
}

// ---------------------------------------------------------------------------
// /proc aliases

/// `/proc/self/root`, `/proc/PID/root` and `/proc/PID/cwd` of processes
/// outside the box (the launch process, a process of the user's with its
/// working directory outside, init) lead to no secret and to no file the
/// box would not let the agent write.
#[test]
fn proc_aliases_lead_to_no_secret_and_no_file_outside() {
    for form in Form::all() {
        let (b, notes) = with_notes_outside();
        // A process of the user's outside the box, working outside.
        let mut host = Command::new("sleep");
        host.arg("30").current_dir(&b.outside);
        let host = KillOnDrop(host.spawn().expect("spawn sleep"));
        let pid = host.0.id().to_string();
        let secret = s(&b.home.join(".ssh/id_ed25519"));
        let (h, n) = (s(&b.home), s(&notes));
        let mut attempts = Vec::new();
        for (name, root) in [
            ("self", "/proc/self/root".to_owned()),
            ("launch", "/proc/@PPID/root".to_owned()),
            ("host", format!("/proc/{pid}/root")),
            ("init", "/proc/1/root".to_owned()),
        ] {
            attempts.push(at(&[
                "read",
                &format!("read-{name}-root"),
                &format!("{root}{secret}"),
            ]));
            attempts.push(at(&[
                "read",
                &format!("read-{name}-root-netrc"),
                &format!("{root}{h}/.netrc"),
            ]));
            attempts.push(at(&[
                "write",
                &format!("write-{name}-root"),
                &format!("{root}{n}"),
            ]));
        }
        attempts.extend([
            at(&[
                "write",
                "write-host-cwd",
                &format!("/proc/{pid}/cwd/notes.txt"),
            ]),
            at(&[
                "create",
                "create-host-cwd",
                &format!("/proc/{pid}/cwd/new.txt"),
            ]),
            at(&["read", "read-launch-cwd", "/proc/@PPID/cwd/aileron.yaml"]),
            at(&[
                "write",
                "write-launch-cwd-outside",
                "/proc/@PPID/cwd/../outside/notes.txt",
            ]),
        ]);
        let before = b.before();
        let open = Setup::new(PERMISSIVE);
        open.plant_stores();
        let open_secret = s(&open.home.join(".ssh/id_ed25519"));
        let read_open = at(&[
            "read",
            "read-self-root",
            &format!("/proc/self/root{open_secret}"),
        ]);
        assert_works_without_the_box(&open, form, &[read_open], &["read-self-root"]);
        let got = b.boxed(form, &attempts);
        let failed: Vec<&str> = attempts
            .iter()
            .filter_map(|a| a.split('|').nth(1))
            .filter(|label| label.starts_with("write") || label.starts_with("create"))
            .collect();
        assert_held(&b, &got, &failed, &before);
        drop(host);
    }
}

/// The Landlock ABI version of this kernel (0: none).
fn landlock_abi() -> i64 {
    // SAFETY: the version query (flag 1) reads no attribute.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    v.max(0)
}

/// A process of the user's outside the box (a `sleep` with a secret in its
/// environment), killed when the test ends.
fn host_process() -> KillOnDrop {
    let mut host = Command::new("sleep");
    host.arg("30")
        .env_clear()
        .env("HOST_TOKEN", "host-env-secret");
    KillOnDrop(host.spawn().expect("spawn sleep"))
}

/// A process of the user's outside the box cannot be signalled (a
/// `SIGKILL`, a `SIGSTOP`) where Landlock scopes signals (ABI 6; the banner
/// says when it does not) or the tree has a PID namespace of its own,
/// while the agent's own tree can.
#[test]
fn processes_outside_the_box_cannot_be_signalled() {
    if landlock_abi() < 6 {
        eprintln!(
            "SKIPPED: Landlock ABI 6 scopes signals; this kernel has {}",
            landlock_abi()
        );
        return;
    }
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let mut host = host_process();
        let pid = host.0.id().to_string();
        let attempts = [
            at(&["signal", "stop", &pid, &libc::SIGSTOP.to_string()]),
            at(&["signal", "kill", &pid, &libc::SIGKILL.to_string()]),
            at(&["signal", "own-tree", "@PPID", "0"]),
        ];
        let got = b.boxed(form, &attempts);
        for label in ["stop", "kill"] {
            got.assert_failed(label);
        }
        got.assert_ok("own-tree");
        assert!(
            matches!(host.0.try_wait(), Ok(None)),
            "the host's process was killed: {}",
            got.show()
        );
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            !state.contains(") T"),
            "the host's process was stopped: {state}"
        );
    }
}

/// What `/proc` shows of a process of the user's outside the box (its
/// environment, its memory map and memory) cannot be read from the box.
#[test]
fn processes_outside_the_box_cannot_be_read() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let host = host_process();
        let pid = host.0.id();
        let attempts: Vec<String> = ["environ", "maps", "mem", "auxv"]
            .iter()
            .map(|f| at(&["read", f, &format!("/proc/{pid}/{f}")]))
            .collect();
        let got = b.boxed(form, &attempts);
        assert!(!got.stdout.contains("host-env-secret"), "{}", got.show());
        for label in ["environ", "maps", "mem", "auxv"] {
            got.assert_failed(label);
        }
    }
}

/// A System V shared memory segment of the user's, holding `text`;
/// removed when dropped.
struct SharedMemory(i32);

impl SharedMemory {
    fn holding(text: &str) -> SharedMemory {
        // SAFETY: a new private segment, attached, written within its size
        // (text is far shorter than a page) and detached.
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o600);
            assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
            let at = libc::shmat(id, std::ptr::null(), 0);
            assert!(
                at as isize != -1,
                "shmat: {}",
                std::io::Error::last_os_error()
            );
            std::ptr::copy_nonoverlapping(text.as_ptr(), at.cast::<u8>(), text.len());
            libc::shmdt(at);
            SharedMemory(id)
        }
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: removes the segment this test made.
        unsafe {
            libc::shmctl(self.0, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}

/// The host's System V shared memory (what a database server or an X
/// client keeps there) cannot be attached from the box.
// BYPASS: `shmat` of a segment of the user's, by its id, reads it
// (`shm-secret`): the tree shares the host's IPC namespace.
#[test]
fn the_hosts_shared_memory_is_out_of_reach() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let segment = SharedMemory::holding("shm-secret");
        let attempts = [at(&["shm", "shm", &segment.0.to_string()])];
        let open = b.probe(&["--enforce", "none"], form, &attempts);
        assert_eq!(open.get("shm"), "OK text=shm-secret", "{}", open.show());
        let got = b.boxed(form, &attempts);
        assert!(!got.stdout.contains("shm-secret"), "{}", got.show());
        got.assert_failed("shm");
    }
}

/// A child killed (and reaped) when the test ends, however it ends.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ---------------------------------------------------------------------------
// The network

/// Raw TCP and UDP to 127.0.0.1 and ::1, a Unix socket in a directory
/// outside the project and an abstract socket, all of the host, reach
/// nothing from the box (the listeners hear nothing; without the box they
/// hear every one); a DNS lookup is answered by the proxy, by policy
/// (`box_dns.rs`), and HTTP through `$HTTP_PROXY` to an allowed server on
/// the host's loopback works: the network is there, only through the proxy.
#[test]
fn the_host_is_reached_only_through_the_proxy() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let Some(host) = Host::listen(&b.outside) else {
            return;
        };
        let up = Upstream::http();
        let mut attempts = host.attempts("");
        attempts.extend([
            at(&["dns", "dns", "registry.npmjs.org"]),
            at(&["dns", "dns-host", "localhost"]),
            at(&["http", "http", &up.url("/through-the-proxy")]),
        ]);
        // Without the box every listener hears the agent.
        let open = b.probe(&["--enforce", "none"], form, &attempts[..6]);
        let heard = host.heard();
        for name in ["tcp4", "tcp6", "udp4", "udp6", "unix", "abstract"] {
            let line = format!("{name}: leak {name}");
            assert!(
                heard.contains(&line),
                "{line} not heard without the box: {heard:?}\n{}",
                open.show()
            );
        }
        host.forget();

        let got = b.boxed(form, &attempts);
        assert_eq!(host.heard(), Vec::<String>::new(), "{}", got.show());
        for label in ["tcp4", "tcp6", "unix", "abstract"] {
            got.assert_failed(label);
        }
        // Allowed (`default: allow`): resolved by the proxy, the only way.
        got.assert_ok("dns");
        // The lookup itself works: names the host's files know resolve.
        got.assert_ok("dns-host");
        assert!(answered(got.get("http")), "{}", got.show());
        assert!(
            up.targets()
                .iter()
                .any(|t| t.contains("/through-the-proxy")),
            "{:?}",
            up.targets()
        );
    }
}

/// A Unix socket listening at `path` on the host; what reaches it is
/// recorded in `heard` under `name`.
fn listen_unix(path: &Path, name: &'static str, heard: &Arc<Mutex<Vec<String>>>) {
    let l = std::os::unix::net::UnixListener::bind(path).expect("unix socket");
    let heard = Arc::clone(heard);
    std::thread::spawn(move || {
        for conn in l.incoming().flatten() {
            heard_from(name, conn, &heard);
        }
    });
}

/// The host's Unix sockets stay out of reach while the session runs: one
/// its server makes again at the same path (a daemon restarted), and one a
/// host program makes after the launch outside the places the box lets the
/// tree write.
// BYPASS (closed): both were reached (`leak after-restart`, `leak late`):
// the box closed the sockets listening at launch by mounting /dev/null over
// their paths, a mount the server's unlink detaches, and a socket made later
// was not looked at. Now the supervisor makes every `connect` itself.
#[test]
fn host_sockets_made_during_the_session_are_out_of_reach() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let heard = Arc::new(Mutex::new(Vec::new()));
        let (daemon, late) = (b.outside.join("daemon.sock"), b.outside.join("late.sock"));
        listen_unix(&daemon, "daemon", &heard);
        let go = b.proj.join("restarted");
        let attempts = [
            at(&["unix", "before", &s(&daemon)]),
            at(&["wait", "go", &s(&go)]),
            at(&["unix", "after-restart", &s(&daemon)]),
            at(&["unix", "late", &s(&late)]),
        ];
        let mut run = Running::start(b.launch(&[], form, &attempts));
        assert!(run.result("before").starts_with("FAIL"), "{:?}", run.seen);
        // The daemon restarts; another program starts listening.
        std::fs::remove_file(&daemon).expect("unlink the socket");
        listen_unix(&daemon, "daemon-restarted", &heard);
        listen_unix(&late, "late", &heard);
        std::fs::write(&go, "").expect("signal the probe");
        for label in ["after-restart", "late"] {
            run.result(label);
        }
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            *heard.lock().unwrap(),
            Vec::<String>::new(),
            "{:?}",
            run.seen
        );
    }
}

/// `unshare -n`, `nsenter -t 1 -n` and `ip netns` run from inside the box
/// fail or give a network of no use: a probe started through them, and the
/// agent after them, still reach none of the host's listeners.
#[test]
fn leaving_the_network_namespace_gains_no_route() {
    let tools = ["unshare", "nsenter", "ip"];
    let found = |t: &str| {
        ["/usr/bin", "/usr/sbin", "/bin", "/sbin"]
            .iter()
            .any(|d| Path::new(d).join(t).exists())
    };
    if !tools.iter().all(|t| available(t, found(t))) {
        return;
    }
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let Some(host) = Host::listen(&b.outside) else {
            return;
        };
        let port = host.tcp4.to_string();
        let netns = format!("aileron-box-attacks-{}", std::process::id());
        let probe_tcp = |label: &str| b.nested(form, &["tcp", label, "127.0.0.1", &port]);
        let attempts = [
            format!("run|unshare|unshare|-n|{}", probe_tcp("in-unshare")),
            format!(
                "run|unshare-user|unshare|-rn|{}",
                probe_tcp("in-unshare-user")
            ),
            format!("run|nsenter|nsenter|-t|1|-n|{}", probe_tcp("in-nsenter")),
            format!(
                "run|nsenter-parent|nsenter|-t|@PPID|-n|{}",
                probe_tcp("in-nsenter-parent")
            ),
            format!("run|netns-add|ip|netns|add|{netns}"),
            format!(
                "run|netns-exec|ip|netns|exec|{netns}|{}",
                probe_tcp("in-netns")
            ),
            at(&["tcp", "after", "127.0.0.1", &port]),
        ];
        let got = b.boxed(form, &attempts);
        assert_eq!(host.heard(), Vec::<String>::new(), "{}", got.show());
        got.assert_failed("after");
        for nested in [
            "in-unshare",
            "in-unshare-user",
            "in-nsenter",
            "in-nsenter-parent",
            "in-netns",
        ] {
            if let Some(r) = got.results.get(nested) {
                assert!(r.starts_with("FAIL"), "{nested}: {r}\n{}", got.show());
            }
        }
        let made = Path::new("/run/netns").join(&netns).exists();
        if made {
            let _ = Command::new("ip").args(["netns", "del", &netns]).status();
        }
        assert!(
            !made,
            "the box made a network namespace on the host: {}",
            got.show()
        );
    }
}

/// A veth pair made in the box with its far end in the host's network
/// namespace (pid 1's) would be a way out of the box's network: the far
/// end does not appear on the host while the session runs.
#[test]
fn no_interface_of_the_box_appears_on_the_host() {
    if !available(
        "ip",
        Path::new("/usr/sbin/ip").exists() || Path::new("/sbin/ip").exists(),
    ) {
        return;
    }
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let far = format!("abx{}{}", std::process::id() % 100_000, form as u8);
        let go = b.proj.join("looked");
        let attempts = [
            format!("run|veth|ip|link|add|{far}n|type|veth|peer|name|{far}|netns|1"),
            at(&["wait", "go", &s(&go)]),
        ];
        let mut run = Running::start(b.launch(&[], form, &attempts));
        let made = run.result("veth");
        let on_host = Path::new("/sys/class/net").join(&far).exists();
        std::fs::write(&go, "").expect("signal the probe");
        assert_eq!(run.result("go"), "OK");
        assert!(
            !on_host,
            "{far} appeared on the host ({made}); the probe printed {:?}",
            run.seen
        );
    }
}

// ---------------------------------------------------------------------------
// The terminal

/// A new pseudo-terminal, close-on-exec from the start (other tests spawn
/// meanwhile): its master, its slave and the slave's name.
fn pseudo_terminal() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd, String) {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: posix_openpt, grantpt, unlockpt and ptsname_r on the new
    // master; the slave opened by the NUL-ended name ptsname_r wrote.
    unsafe {
        let master = libc::posix_openpt(flags);
        assert!(
            master >= 0,
            "posix_openpt: {}",
            std::io::Error::last_os_error()
        );
        let master = OwnedFd::from_raw_fd(master);
        let mut name = [0 as libc::c_char; 128];
        let ok = libc::grantpt(master.as_raw_fd()) == 0
            && libc::unlockpt(master.as_raw_fd()) == 0
            && libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) == 0;
        assert!(ok, "pseudo-terminal: {}", std::io::Error::last_os_error());
        let slave = libc::open(name.as_ptr(), flags);
        assert!(
            slave >= 0,
            "open the slave: {}",
            std::io::Error::last_os_error()
        );
        let name = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        (master, OwnedFd::from_raw_fd(slave), name)
    }
}

/// What a terminal's slave side gives its next reader now ("" if nothing).
fn pending_input(slave: &std::os::fd::OwnedFd) -> String {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl and read on a descriptor we own, into a local buffer.
    unsafe {
        libc::fcntl(slave.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK);
        let mut buf = [0u8; 256];
        let n = libc::read(slave.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len());
        text(&buf[..n.max(0) as usize])
    }
}

/// Runs the probe under `aileron launch OPTIONS` with a terminal of the
/// test's as its controlling terminal, as a user runs an agent; what the
/// probe printed, and what is left typed ahead on that terminal for the
/// user's shell once the session has ended.
fn typed_ahead(b: &Setup, options: &[&str], form: Form, attempts: &[String]) -> (Lines, String) {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let (master, slave, _) = pseudo_terminal();
    let slave_fd = slave.as_raw_fd();
    let mut cmd = b.launch(options, form, attempts);
    // SAFETY: setsid and ioctl are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 || libc::ioctl(slave_fd, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = support::run(&mut cmd, b"");
    // What the terminal would give its next reader, the user's shell.
    let pending = pending_input(&slave);
    drop((master, slave));
    (Lines::of(form, out), pending)
}

/// Text the agent types on the user's terminal (`TIOCSTI`) would be read
/// and run by the user's shell after the session, outside the box: nothing
/// typed reaches the terminal's input.
#[test]
fn nothing_typed_on_the_terminal_reaches_the_users_shell() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let attempts = [at(&["type", "type", "echo injected-by-the-box\n"])];
        let (open, pending) = typed_ahead(&b, &["--enforce", "none"], form, &attempts);
        if open.get("type") == "OK" {
            // Where the kernel allows it, typing works without the box.
            assert!(
                pending.contains("injected-by-the-box"),
                "{pending:?}\n{}",
                open.show()
            );
        }
        let (got, pending) = typed_ahead(&b, &[], form, &attempts);
        assert!(got.success, "{}", got.show());
        assert_eq!(
            pending,
            "",
            "typed ahead for the user's shell: {}",
            got.show()
        );
    }
}

/// What the user types in another terminal of theirs (a password at a
/// `sudo` prompt) cannot be read from the box, nor taken from the shell
/// it was typed for.
// Was a bypass: the agent opened the other terminal's `/dev/pts/N` and
// read the line typed there. The box now covers every terminal open at
// launch but its own (`launch_box::other_terminals`).
#[test]
fn another_terminal_of_the_users_is_out_of_reach() {
    use std::os::fd::AsRawFd;
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let (master, slave, name) = pseudo_terminal();
        let typed = b"typed-secret\n";
        // SAFETY: a write of a local buffer to the master we own.
        let n = unsafe { libc::write(master.as_raw_fd(), typed.as_ptr().cast(), typed.len()) };
        assert_eq!(n, typed.len() as isize, "type on the terminal");
        let got = b.boxed(form, &[at(&["readtty", "tty", &name])]);
        // Covered by /dev/null in the box: it reads as empty.
        assert!(!got.stdout.contains("typed-secret"), "{}", got.show());
        assert_eq!(pending_input(&slave), "typed-secret\n", "{}", got.show());
    }
}

// ---------------------------------------------------------------------------
// Devices

/// Device nodes outside the box's positive list that the user running the
/// tests can open for writing here (the first found is tried): opening
/// one changes nothing by itself.
const OTHER_DEVICES: &[&str] = &["/dev/fuse", "/dev/kmsg", "/dev/loop-control"];

/// In the box a program writes the devices programs need (`/dev/null` by
/// a shell's redirection, a new pseudo-terminal, a file in `/dev/shm`),
/// but opens no other device node for writing and makes no file in `/dev`.
#[test]
fn only_the_devices_programs_need_are_writable() {
    let script = Command::new("script").arg("--version").output();
    if !available(
        "script (util-linux)",
        script.is_ok_and(|o| o.status.success()),
    ) {
        return;
    }
    let other = OTHER_DEVICES
        .iter()
        .find(|d| std::fs::OpenOptions::new().write(true).open(d).is_ok());
    let Some(other) = other else {
        panic!("none of {OTHER_DEVICES:?} opens for writing outside the box here");
    };
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let shm = format!("/dev/shm/aileron-box-{}-{form:?}", std::process::id());
        let made = format!("/dev/aileron-box-{}-{form:?}", std::process::id());
        let refused = [
            at(&["trunc", "other-device", other]),
            at(&["create", "file-in-dev", &made]),
        ];
        // Without the box both work (a file in /dev only for root).
        let open = Setup::new(PERMISSIVE);
        let works: &[&str] = if root {
            &["other-device", "file-in-dev"]
        } else {
            &["other-device"]
        };
        assert_works_without_the_box(&open, form, &refused, works);
        let _ = std::fs::remove_file(&made);
        let mut attempts = vec![
            at(&["write", "null", "/dev/null"]),
            at(&["run", "null-by-shell", "sh", "-c", "echo x > /dev/null"]),
            at(&["write", "zero", "/dev/zero"]),
            at(&["write", "urandom", "/dev/urandom"]),
            at(&["trunc", "full", "/dev/full"]),
            at(&["run", "pty", "script", "-qec", "tty", "/dev/null"]),
            at(&["create", "shm", &shm]),
        ];
        attempts.extend(refused.iter().cloned());
        let got = b.boxed(form, &attempts);
        let _ = std::fs::remove_file(&shm);
        for label in ["null", "zero", "urandom", "full", "shm"] {
            got.assert_ok(label);
        }
        for label in ["null-by-shell", "pty"] {
            assert_eq!(got.get(label), "OK exit=0", "{label}\n{}", got.show());
        }
        assert!(got.stdout.contains("/dev/pts/"), "{}", got.show());
        got.assert_failed("other-device");
        got.assert_failed("file-in-dev");
        assert!(!Path::new(&made).exists(), "{made} made in the box");
    }
}

// ---------------------------------------------------------------------------
// A setuid file

/// A setuid copy of a program, run from the project, gains nothing: the
/// box's `PR_SET_NO_NEW_PRIVS` keeps the ids the agent had. (Root can make
/// the copy another user's, whose id it would take without the box; a user
/// can only make it their own.)
#[test]
fn a_setuid_copy_gains_no_privilege() {
    if c_probe().is_none() {
        return;
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let owner: u32 = if uid == 0 { 65534 } else { uid };
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let copy = b.proj.join("ids-setuid");
        std::fs::copy(&b.probe, &copy).expect("copy the probe");
        std::os::unix::fs::chown(&copy, Some(owner), Some(owner)).expect("chown");
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o4755)).expect("chmod");
        let attempts = [
            format!("run|setuid|{}|ids^ids", s(&copy)),
            "run|setuid-relative|./ids-setuid|ids^ids-relative".to_owned(),
        ];
        let got = b.boxed(form, &attempts);
        for label in ["ids", "ids-relative"] {
            assert_eq!(
                got.get(label),
                format!("OK uid={uid} euid={uid}"),
                "{}",
                got.show()
            );
        }
        if uid == 0 {
            // Without the box the bit takes effect.
            let open = b.probe(&["--enforce", "none"], form, &attempts[..1]);
            assert_eq!(
                open.get("ids"),
                format!("OK uid=0 euid={owner}"),
                "{}",
                open.show()
            );
        }
    }
}

// ---------------------------------------------------------------------------
// The proxy and the session killed

/// The `aileron-server proxy` process of the launch `launch`.
fn proxy_of(launch: u32) -> Option<u32> {
    children(launch).into_iter().find(|pid| {
        let argv = cmdline(*pid);
        argv.first().is_some_and(|a| a.ends_with("aileron-server"))
            && argv.iter().any(|a| a == "proxy")
    })
}

/// The proxy killed mid-session: the agent's next request through it is
/// refused at once (no hang, no other way out), and a direct connection
/// to the host still fails.
#[test]
fn a_killed_proxy_leaves_the_tree_without_a_network() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let Some(host) = Host::listen(&b.outside) else {
            return;
        };
        let up = Upstream::http();
        let go = b.proj.join("proxy-killed");
        let attempts = [
            at(&["http", "before", &up.url("/before")]),
            at(&["wait", "go", &s(&go)]),
            at(&["http", "after", &up.url("/after")]),
            at(&["tcp", "direct", "127.0.0.1", &host.tcp4.to_string()]),
            at(&[
                "tcp",
                "direct-upstream",
                "127.0.0.1",
                &up.port().to_string(),
            ]),
        ];
        let mut run = Running::start(b.launch(&[], form, &attempts));
        assert!(answered(&run.result("before")), "{:?}", run.seen);
        let proxy = proxy_of(run.pid()).unwrap_or_else(|| {
            panic!(
                "no aileron-server proxy under the launch: {:?}",
                children(run.pid())
            )
        });
        kill(proxy);
        assert_eq!(
            wait_gone(&[proxy], WAIT),
            Vec::<u32>::new(),
            "the proxy did not die"
        );
        std::fs::write(&go, "").expect("signal the probe");
        assert_eq!(run.result("go"), "OK");
        // Refused, or reset when the dying proxy's listener still held it.
        assert!(
            matches!(
                run.result("after").as_str(),
                "FAIL ECONNREFUSED" | "FAIL ECONNRESET"
            ),
            "{:?}",
            run.seen
        );
        for direct in ["direct", "direct-upstream"] {
            assert!(run.result(direct).starts_with("FAIL"), "{:?}", run.seen);
        }
        assert_eq!(host.heard(), Vec::<String>::new(), "{:?}", run.seen);
        assert!(
            !up.targets().iter().any(|t| t.contains("/after")),
            "{:?}",
            up.targets()
        );
    }
}

/// How soon the tree ends once its session is gone: the kernel's signals
/// take milliseconds.
const TREE_ENDS: Duration = Duration::from_secs(3);

/// `aileron launch` killed (SIGKILL, no chance to clean up): the agent and
/// what it started in a session of its own (a `sleep 300`) end within
/// moments.
#[test]
fn a_killed_session_takes_its_tree_with_it() {
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        let attempts = [
            at(&["spawn", "sleeper", "sleep", "300"]),
            at(&["wait", "hold", &s(&b.proj.join("never"))]),
        ];
        let mut run = Running::start(b.launch(&[], form, &attempts));
        assert!(
            run.result("sleeper").starts_with("OK pid="),
            "{:?}",
            run.seen
        );
        // The pid the probe says may be its namespace's: the host's is
        // found among the launch's descendants.
        let launch = run.pid();
        let tree = descendants(launch);
        let sleeper = tree
            .iter()
            .copied()
            .find(|pid| cmdline(*pid) == ["sleep", "300"])
            .unwrap_or_else(|| panic!("no sleep 300 under the launch: {tree:?}"));
        kill(launch);
        let _ = run.child.wait();
        let left = wait_gone(&tree, TREE_ENDS);
        let names: Vec<String> = left
            .iter()
            .map(|p| format!("{p} {:?}", cmdline(*p)))
            .collect();
        for pid in &left {
            kill(*pid);
        }
        assert_eq!(
            names,
            Vec::<String>::new(),
            "left running after the session was killed ({form:?} agent; the sleep is {sleeper})"
        );
    }
}

// ---------------------------------------------------------------------------
// Everyday work

/// What an agent does every day works in the box: `git init` and `git
/// commit` in the project, a build with `cc` and its test run, a file
/// written in `/tmp`.
#[test]
fn everyday_work_goes_on_in_the_box() {
    if !available("git", Command::new("git").arg("--version").output().is_ok()) {
        return;
    }
    for form in Form::all() {
        let b = Setup::new(PERMISSIVE);
        b.plant(
            &b.home.join(".gitconfig"),
            "[user]\n\tname = Agent\n\temail = agent@example.com\n",
        );
        b.plant(
            &b.proj.join("hello.c"),
            "#include <stdio.h>\nint main(void) { puts(\"hello from the box\"); return 0; }\n",
        );
        let tmp = tempfile::NamedTempFile::new_in("/tmp").expect("temp file");
        let tmp_path = tmp.path().with_extension("box");
        drop(tmp);
        let attempts = [
            at(&["run", "git-init", "git", "init", "-q"]),
            at(&["run", "git-add", "git", "add", "hello.c"]),
            at(&[
                "run",
                "git-commit",
                "git",
                "commit",
                "-q",
                "-m",
                "built in the box",
            ]),
            at(&["run", "cc", "cc", "-o", "hello", "hello.c"]),
            at(&["run", "test", "./hello"]),
            at(&["create", "tmp", &s(&tmp_path)]),
        ];
        let got = b.boxed(form, &attempts);
        for label in ["git-init", "git-add", "git-commit", "cc", "test"] {
            assert_eq!(got.get(label), "OK exit=0", "{label}\n{}", got.show());
        }
        assert!(got.stdout.contains("hello from the box"), "{}", got.show());
        got.assert_ok("tmp");
        let written = std::fs::read_to_string(&tmp_path);
        let _ = std::fs::remove_file(&tmp_path);
        assert_eq!(
            written.expect("the file in /tmp"),
            "pwned by the box probe\n"
        );
        let log = b
            .command("git")
            .args(["log", "--format=%s"])
            .output()
            .expect("git log");
        assert_eq!(text(&log.stdout), "built in the box\n", "{}", got.show());
    }
}
