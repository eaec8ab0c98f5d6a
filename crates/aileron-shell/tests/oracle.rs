//! A differential oracle for the shell analysis: bash is the reference.
//!
//! Command lines are generated from a grammar of bash constructs and of the
//! options of the programs a read-only profile allows (`oracle/grammar.rs`),
//! run by real bash under `strace` in a throw-away sandbox, and compared
//! with [`aileron_shell::analyse`]. The project's rule is that what the
//! analysis does not fully understand is never allowed, so a line the
//! analysis *trusts* (not opaque, no command tagged `opaque`, `eval`,
//! `pipe-to-shell`, `inline-interpreter`, `base64-exec`,
//! `remote-substitution` or `env-exec`) must not make bash
//! - execute a program that is not among the analysed commands,
//! - write, create, delete or rename a path that no command lists in
//!   `writes`,
//! - write anything at all when every command is `read`.
//!
//! Not counted against the analysis: writes to `/dev/null`, terminals and
//! pipes; temporary files under `$TMPDIR` that are gone when the line
//! ends; a new file renamed onto a reported path (`sed -i`'s temporary);
//! git refreshing `.git/index`, and the `.git/` bookkeeping of a git
//! command the analysis does not call `read`; the parents `mkdir -p`
//! creates for a reported path; `sh -c` run by a program (git's editor,
//! sed's `e`) for a command the analysis lists. A write reported as a
//! directory or a glob covers what is below or matches it.
//!
//! Every bypass found is kept in `oracle/regressions.txt` and run on every
//! test run; the cases under its `# known-open` heading are reported, not
//! failed on, and so is a generated line that is one of them (so that the
//! default run fails only on a new bypass).
//!
//! The lines run as `nobody` when the test runs as root (`strace -u`), in
//! a sandbox under the temporary directory, with a clean environment, no
//! standard input and a time limit. The test needs `bash` and `strace`
//! (Debian: `apt-get install strace`) and fails without them unless
//! `AILERON_ORACLE_SKIP=1`.
//!
//! Short run (the default, part of `cargo test`):
//!
//! ```text
//! cargo test -p aileron-shell --test oracle
//! ```
//!
//! Long run with a fresh seed (the seed and count are printed, so a run can
//! be repeated):
//!
//! ```text
//! AILERON_ORACLE_CASES=20000 AILERON_ORACLE_SEED=$RANDOM \
//!     cargo test -p aileron-shell --test oracle --release -- --nocapture
//! ```
//!
//! One line, with what bash did and what the analysis said:
//!
//! ```text
//! AILERON_ORACLE_LINE='sort -o x a.txt' \
//!     cargo test -p aileron-shell --test oracle -- --nocapture
//! ```
//!
//! Other knobs: `AILERON_ORACLE_JOBS` (parallel sandboxes, default the
//! number of CPUs), `AILERON_ORACLE_SECONDS` (start no case after that
//! long: a long run that fits a time budget; the count run is printed).

// Shared with `parser_props.rs`, which uses other parts of it.
#[allow(dead_code)]
#[path = "oracle/grammar.rs"]
mod grammar;
#[path = "oracle/trace.rs"]
mod trace;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aileron_shell::{Analysis, Context, Limits, Sensitivity, analyse, tags};
use grammar::{Gen, Line, Rng};
use trace::{Kind, Observed};

const DEFAULT_SEED: u64 = 0x0a11_e404;
/// About 20 s in a debug build on two cores.
const DEFAULT_CASES: usize = 400;
/// A line still running after this is killed (with everything it started).
const TIMEOUT: Duration = Duration::from_secs(3);
/// Runs of bash spent on shrinking one failing line.
const SHRINK_RUNS: usize = 12;

/// Tags that mean the analysis does not vouch for the line.
const UNTRUSTED_TAGS: &[&str] = &[
    tags::OPAQUE,
    tags::PIPE_TO_SHELL,
    tags::EVAL,
    tags::INLINE_INTERPRETER,
    tags::BASE64_EXEC,
    tags::REMOTE_SUBSTITUTION,
    tags::ENV_EXEC,
];

/// The system calls whose effects are compared; `chdir` and the process
/// creating calls are there to follow working directories.
const TRACED: &str = "trace=execve,execveat,openat,openat2,open,creat,rename,renameat,\
renameat2,unlink,unlinkat,rmdir,truncate,mkdir,mkdirat,mknod,mknodat,symlink,symlinkat,\
link,linkat,chmod,fchmodat,chown,lchown,fchownat,utimensat,utime,utimes,chdir,fchdir,\
clone,clone3,fork,vfork";

const SKIP_HINT: &str = "the oracle needs bash and strace: install strace (Debian: \
`apt-get install strace`), or set AILERON_ORACLE_SKIP=1 to skip it";

unsafe extern "C" {
    fn geteuid() -> u32;
    fn kill(pid: i32, sig: i32) -> i32;
}

const SIGKILL: i32 = 9;
const NOBODY: (u32, u32) = (65534, 65534);

#[test]
fn bash_does_only_what_the_analysis_says() {
    let Some(ws) = Workspace::new() else {
        return;
    };
    if let Ok(line) = std::env::var("AILERON_ORACLE_LINE") {
        explain(&ws, &line);
        return;
    }
    let seed = env_num("AILERON_ORACLE_SEED").unwrap_or(DEFAULT_SEED);
    let cases = env_num("AILERON_ORACLE_CASES").map_or(DEFAULT_CASES, |n| n as usize);
    let jobs = env_num("AILERON_ORACLE_JOBS").map_or_else(
        || std::thread::available_parallelism().map_or(2, |n| n.get()),
        |n| n.max(1) as usize,
    );
    println!("oracle: AILERON_ORACLE_SEED={seed} AILERON_ORACLE_CASES={cases} ({jobs} jobs)");
    let started = Instant::now();
    let regressions = Regressions::load();
    let mut report = Report::default();
    report.regressions(&ws, jobs, &regressions);
    let budget = env_num("AILERON_ORACLE_SECONDS").map(Duration::from_secs);
    let stats = Stats::default();
    let generated = run_all(jobs, cases, |i| {
        if budget.is_some_and(|b| started.elapsed() > b) {
            return None;
        }
        stats.generated.fetch_add(1, Ordering::Relaxed);
        let mut rng = Rng::for_case(seed, i as u64);
        let line = Gen::new(&mut rng, ws.jq).line();
        let outcome = ws.check(&line.render());
        stats.count(&outcome);
        match outcome {
            Outcome::Bypass(f) => Some(shrink(&ws, line, f)),
            _ => None,
        }
    });
    report.generated(&regressions, generated.into_iter().flatten());
    let timeouts = ws.timeouts.lock().unwrap_or_else(|e| e.into_inner());
    println!(
        "oracle: {} regression cases, {} of {cases} generated in {:.1?}: {}; \
         bash ran {} lines, {} timed out",
        regressions.cases.len(),
        stats.generated.load(Ordering::Relaxed),
        started.elapsed(),
        stats.summary(),
        ws.runs.load(Ordering::Relaxed),
        timeouts.len(),
    );
    for line in timeouts.iter().take(5) {
        println!("timed out: {line:?}");
    }
    report.finish(seed);
}

/// What the runs found, sorted by what the test does with it.
#[derive(Default)]
struct Report {
    /// Bypasses that fail the test.
    failures: Vec<(String, Failure)>,
    /// Bypasses listed under `# known-open`: printed.
    still_open: Vec<(String, Failure)>,
    /// Cases under `# known-open` that pass now.
    now_fixed: Vec<String>,
}

impl Report {
    fn regressions(&mut self, ws: &Workspace, jobs: usize, regressions: &Regressions) {
        let outcomes = run_all(jobs, regressions.cases.len(), |i| {
            ws.check(&regressions.cases[i].0)
        });
        for ((line, known_open), outcome) in regressions.cases.iter().zip(outcomes) {
            let line = line.clone();
            match (outcome, known_open) {
                (Outcome::Bypass(f), false) => self.failures.push((line, f)),
                (Outcome::Bypass(f), true) => self.still_open.push((line, f)),
                (_, true) => self.now_fixed.push(line),
                _ => {}
            }
        }
    }

    /// Generated bypasses (shrunk); one that is a known-open case is
    /// reported with them.
    fn generated(
        &mut self,
        regressions: &Regressions,
        found: impl Iterator<Item = (String, Failure)>,
    ) {
        let mut distinct = BTreeSet::new();
        for (line, f) in found {
            if !distinct.insert(line.clone()) {
                continue;
            }
            if !regressions
                .cases
                .iter()
                .any(|(l, open)| *open && *l == line)
            {
                self.failures.push((line, f));
            } else if !self.still_open.iter().any(|(l, _)| *l == line) {
                self.still_open.push((line, f));
            }
        }
    }

    fn finish(self, seed: u64) {
        for (line, f) in &self.still_open {
            println!(
                "known-open (still open): {}\n{}",
                grammar::escape(line),
                f.report()
            );
        }
        for line in &self.now_fixed {
            println!(
                "known-open case now passes, move it above `# known-open`: {}",
                grammar::escape(line)
            );
        }
        if self.failures.is_empty() {
            return;
        }
        let mut out = format!(
            "{} line(s) that the analysis trusts made bash do more than it says \
             (seed {seed}):\n",
            self.failures.len()
        );
        for (line, f) in &self.failures {
            let _ = write!(out, "\n--- {line:?}\n{}", f.report());
        }
        out.push_str("\nfor oracle/regressions.txt:\n");
        for (line, _) in &self.failures {
            let _ = writeln!(out, "{}", grammar::escape(line));
        }
        panic!("{out}");
    }
}

/// The trace parser on a real trace of strace 6.1, so that a change of the
/// parser is checked without strace installed.
#[test]
fn trace_parser_reads_strace_output() {
    let text = r#"100 execve("/bin/bash", ["/bin/bash", "-c", "cat a > o"], 0x7ffd /* 2 vars */) = 0
100 openat(AT_FDCWD</s>, "/dev/tty", O_RDWR|O_NONBLOCK) = -1 ENXIO (No such device or address)
100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 101
101 openat(AT_FDCWD</s>, "o", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</s/o>
101 execve("/usr/bin/cat", ["cat", "a"], 0x5610 /* 5 vars */) = 0
101 openat(AT_FDCWD</s>, "a", O_RDONLY) = 3</s/a>
100 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=101} ---
100 clone(child_stack=NULL, flags=SIGCHLD, child_tidptr=0x7f) = 102
102 chdir("sub")                     = 0
102 rename("./sedI5mktZ", "a\"b.txt") = 0
102 unlinkat(3</s/sub/deep>, "x", 0 <unfinished ...>
100 openat(AT_FDCWD</s>, "/dev/fd/63", O_RDONLY) = 4<pipe:[15238]>
102 <... unlinkat resumed>) = 0
102 execve("/usr/bin/nope", ["nope"], 0x5610 /* 5 vars */) = -1 ENOENT (No such file or directory)
"#;
    let obs = trace::parse(text, "/s");
    let execs: Vec<_> = obs
        .execs
        .iter()
        .map(|e| (e.path.as_str(), e.argv.clone()))
        .collect();
    assert_eq!(
        execs,
        [("/usr/bin/cat", vec!["cat".to_owned(), "a".to_owned()])]
    );
    let writes: Vec<_> = obs
        .writes
        .iter()
        .map(|w| (w.kind, w.path.as_str()))
        .collect();
    assert_eq!(
        writes,
        [
            (Kind::Open { create: true }, "/s/o"),
            (Kind::RenameFrom, "/s/sub/sedI5mktZ"),
            (Kind::RenameTo, "/s/sub/a\"b.txt"),
            (Kind::Delete, "/s/sub/deep/x"),
        ]
    );
    assert_eq!(obs.writes[0].fd_path.as_deref(), Some("/s/o"));
}

/// Every case of the regressions file parses, and escaping round-trips.
#[test]
fn regressions_file_is_well_formed() {
    let r = Regressions::load();
    assert!(!r.cases.is_empty());
    for (line, _) in &r.cases {
        assert_eq!(grammar::unescape(&grammar::escape(line)), *line);
    }
    assert_eq!(
        grammar::unescape(r"printf '\x41\\n'\nls"),
        "printf '\\x41\\n'\nls"
    );
}

/// Glob matching of reported writes.
#[test]
fn coverage_of_reported_writes() {
    let w = |s: &[&str]| s.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert!(covered("/s/a.txt", &w(&["/s/a.txt"])));
    assert!(covered("/s/sub/x", &w(&["/s/sub"])));
    assert!(covered("/s/b.txt", &w(&["/s/*.txt"])));
    assert!(covered("/s/sub/deep/x", &w(&["/s/s?b"])));
    assert!(covered("/s/a.txt", &w(&["/s/[ab].txt"])));
    assert!(!covered("/s/sub/x", &w(&["/s/*.txt"])));
    assert!(!covered("/s/ab", &w(&["/s/a"])));
    assert!(covered("/s/sub/deep/d.txt", &w(&["/s/**/d.txt"])));
}

fn env_num(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={v:?} is not a number")))
}

/// Runs `f(0..n)` on `jobs` threads; results in index order.
fn run_all<T: Send>(jobs: usize, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(n.max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = f(i);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every case ran"))
        .collect()
}

/// Removes statements of a failing line while it still fails.
fn shrink(ws: &Workspace, mut line: Line, mut failure: Failure) -> (String, Failure) {
    let mut runs = 0;
    let mut i = 0;
    while i < line.stmts.len() && line.stmts.len() > 1 && runs < SHRINK_RUNS {
        let smaller = line.without(i);
        runs += 1;
        match ws.check(&smaller.render()) {
            Outcome::Bypass(f) => {
                line = smaller;
                failure = f;
            }
            _ => i += 1,
        }
    }
    (line.render(), failure)
}

/// The cases of `oracle/regressions.txt`: the line and whether it is under
/// the `# known-open` heading.
struct Regressions {
    cases: Vec<(String, bool)>,
}

impl Regressions {
    fn load() -> Regressions {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/regressions.txt");
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let mut open = false;
        let mut cases = Vec::new();
        for l in text.lines() {
            let t = l.trim_end();
            if t.trim_start().starts_with('#') {
                if t.trim_start().trim_start_matches('#').trim() == "known-open" {
                    open = true;
                }
                continue;
            }
            if t.trim().is_empty() {
                continue;
            }
            cases.push((grammar::unescape(t), open));
        }
        Regressions { cases }
    }
}

/// What one comparison found.
enum Outcome {
    /// The analysis does not vouch for the line: nothing to compare.
    Untrusted,
    /// Trusted, and bash did nothing more than the analysis says.
    Agrees,
    /// Trusted, and bash did more.
    Bypass(Failure),
}

#[derive(Clone, Debug)]
struct Failure {
    problems: Vec<String>,
    analysis: String,
}

impl Failure {
    fn report(&self) -> String {
        let mut out = String::from("bash:\n");
        for p in &self.problems {
            let _ = writeln!(out, "  {p}");
        }
        out.push_str("analysis:\n");
        out.push_str(&self.analysis);
        out
    }
}

#[derive(Default)]
struct Stats {
    generated: AtomicUsize,
    untrusted: AtomicUsize,
    agrees: AtomicUsize,
    bypass: AtomicUsize,
}

impl Stats {
    fn count(&self, o: &Outcome) {
        let c = match o {
            Outcome::Untrusted => &self.untrusted,
            Outcome::Agrees => &self.agrees,
            Outcome::Bypass(_) => &self.bypass,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    fn summary(&self) -> String {
        format!(
            "{} trusted and matching, {} not trusted (not compared), {} bypasses",
            self.agrees.load(Ordering::Relaxed),
            self.untrusted.load(Ordering::Relaxed),
            self.bypass.load(Ordering::Relaxed)
        )
    }
}

/// Where the sandboxes live, and the tools that run them.
struct Workspace {
    /// `TMP/aileron-oracle-PID`: every sandbox is below it.
    root: PathBuf,
    template: PathBuf,
    strace: PathBuf,
    bash: PathBuf,
    jq: bool,
    /// Owner of the sandboxes and user of the lines (`nobody`) when root.
    owner: Option<(u32, u32)>,
    next: AtomicUsize,
    /// Lines killed at [`TIMEOUT`] (each costs the whole of it).
    timeouts: Mutex<Vec<String>>,
    /// Lines run by bash (regressions, generated and shrinking).
    runs: AtomicUsize,
}

impl Workspace {
    /// `None` when the oracle is skipped on request.
    fn new() -> Option<Workspace> {
        let skip = std::env::var("AILERON_ORACLE_SKIP").is_ok_and(|v| v == "1");
        let strace = find_tool("strace");
        let bash = ["/bin/bash", "/usr/bin/bash"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file());
        let (Some(strace), Some(bash)) = (strace, bash) else {
            assert!(skip, "{SKIP_HINT}");
            println!("oracle skipped (AILERON_ORACLE_SKIP=1)");
            return None;
        };
        if skip {
            println!("oracle skipped (AILERON_ORACLE_SKIP=1)");
            return None;
        }
        // ptrace may be forbidden (containers): say so rather than report
        // an empty trace as agreement.
        let works = Command::new(&strace)
            .args(["-f", "-qq", "-o", "/dev/null", "--"])
            .arg(&bash)
            .args(["-c", ":"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            works,
            "strace cannot trace here (is ptrace allowed?); {SKIP_HINT}"
        );
        let tmp = fs::canonicalize(std::env::temp_dir()).expect("temporary directory");
        let root = tmp.join(format!("aileron-oracle-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).expect("create the oracle's directory");
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).expect("chmod");
        // SAFETY: geteuid has no preconditions.
        let owner = (unsafe { geteuid() } == 0).then_some(NOBODY);
        let ws = Workspace {
            template: root.join("template"),
            root,
            strace,
            bash,
            jq: Path::new("/usr/bin/jq").is_file(),
            owner,
            next: AtomicUsize::new(0),
            timeouts: Mutex::new(Vec::new()),
            runs: AtomicUsize::new(0),
        };
        ws.build_template();
        Some(ws)
    }

    /// The fixture tree every sandbox starts as.
    fn build_template(&self) {
        let t = &self.template;
        let files: &[(&str, &str)] = &[
            ("a.txt", "hello\nworld\na b\n"),
            ("b.txt", "world\nhello\n"),
            ("sp ace.txt", "space\n"),
            ("notes.md", "# notes\nfoo|bar\n"),
            ("data.json", "{\"a\": 1, \"b\": [1, 2]}\n"),
            ("list.txt", "a.txt\nb.txt\n"),
            ("names0", "a.txt\0b.txt\0"),
            ("sums.txt", "00000000000000000000000000000000  a.txt\n"),
            ("dates.txt", "2000-01-01\n"),
            ("prog.sed", "w sed-out.txt\n"),
            ("prog.awk", "{ print > \"awk-out.txt\" }\n"),
            ("lib.sh", "touch sourced.txt\n"),
            ("sub/c.txt", "c\n"),
            ("sub/deep/d.txt", "d\n"),
            ("aileron.yaml", "version: 1\n"),
            (".aileron/admin.token", "secret\n"),
            (".claude/settings.json", "{}\n"),
            ("home/notes.txt", "home\n"),
            ("home/.aileron/settings.yaml", "rules: []\n"),
        ];
        for (name, content) in files {
            let p = t.join(name);
            fs::create_dir_all(p.parent().expect("parent")).expect("fixture dir");
            fs::write(&p, content).expect("fixture file");
        }
        fs::create_dir_all(t.join("tmp")).expect("fixture tmp");
        let git = |args: &[&str]| {
            let ok = Command::new("/usr/bin/git")
                .args([
                    "-c",
                    "user.name=oracle",
                    "-c",
                    "user.email=oracle@example.invalid",
                    "-c",
                    "init.defaultBranch=main",
                ])
                .args(args)
                .current_dir(t)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("HOME", t.join("home"))
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "git {args:?} in the fixture failed");
        };
        git(&["init", "-q", "--template="]);
        git(&["add", "a.txt", "b.txt", "list.txt", "sub", "aileron.yaml"]);
        git(&["commit", "-q", "-m", "fixture"]);
        // Fewer files to copy for every case: the file system's metadata
        // operations are most of an oracle run.
        git(&["repack", "-a", "-d", "-q"]);
        git(&["prune-packed"]);
        git(&["pack-refs", "--all"]);
        for gone in ["logs", "COMMIT_EDITMSG", "info"] {
            let p = t.join(".git").join(gone);
            let _ = fs::remove_dir_all(&p).or_else(|_| fs::remove_file(&p));
        }
        fs::write(t.join("b.txt"), "world\nhello\nchanged\n").expect("fixture change");
    }

    /// Runs `line` in a fresh sandbox and compares.
    fn check(&self, line: &str) -> Outcome {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let dir = self.root.join(format!("case-{id}"));
        let outcome = self.check_in(&dir, line);
        if dir.exists() {
            let _ = fs::remove_dir_all(&dir);
        }
        outcome
    }

    fn check_in(&self, dir: &Path, line: &str) -> Outcome {
        // `root` is canonical, so the sandbox's path is known before it
        // exists: a line the analysis does not trust costs no copy.
        let sandbox = dir.join("box");
        let home = sandbox.join("home");
        let cwd = sandbox.to_str().expect("UTF-8 sandbox path").to_owned();
        let home_s = home.to_str().expect("UTF-8 home path").to_owned();
        let analysis = analyse(
            line,
            &Context {
                cwd: &cwd,
                home: &home_s,
                limits: Limits::default(),
            },
        );
        if !trusted(&analysis) {
            return Outcome::Untrusted;
        }
        fs::create_dir_all(dir).expect("case dir");
        copy_tree(&self.template, &sandbox, self.owner);
        let run = self.run(dir, &sandbox, line);
        let problems = compare(&analysis, &run.observed, &sandbox);
        if problems.is_empty() {
            Outcome::Agrees
        } else {
            Outcome::Bypass(Failure {
                problems,
                analysis: describe(&analysis, &cwd),
            })
        }
    }

    /// Runs `line` with bash under strace in `sandbox`.
    fn run(&self, dir: &Path, sandbox: &Path, line: &str) -> Run {
        // Never run anything outside a sandbox of this oracle.
        let tmp = fs::canonicalize(std::env::temp_dir()).expect("temporary directory");
        assert!(
            sandbox.starts_with(&tmp) && sandbox.starts_with(&self.root),
            "refusing to run outside the temporary directory: {}",
            sandbox.display()
        );
        let trace_file = dir.join("trace");
        let mut cmd = Command::new(&self.strace);
        cmd.args(["-f", "-qq", "-y", "-s", "65535", "-e", TRACED, "-o"])
            .arg(&trace_file);
        if self.owner.is_some() {
            cmd.args(["-u", "nobody"]);
        }
        cmd.arg("--")
            .arg(&self.bash)
            .arg("-c")
            .arg(line)
            .current_dir(sandbox)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", sandbox.join("home"))
            .env("LC_ALL", "C")
            .env("TMPDIR", sandbox.join("tmp"))
            // Without it `git status` refreshes the index, a write no
            // analysis can be expected to list.
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CEILING_DIRECTORIES", &self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        self.runs.fetch_add(1, Ordering::Relaxed);
        let mut child = cmd.spawn().expect("start strace");
        let deadline = Instant::now() + TIMEOUT;
        let mut timed_out = false;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                _ => {
                    timed_out = true;
                    self.timeouts
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(line.to_owned());
                    let pgid = i32::try_from(child.id()).expect("pid");
                    // SAFETY: kills the process group this test started.
                    unsafe { kill(-pgid, SIGKILL) };
                    let _ = child.wait();
                    break;
                }
            }
        }
        // Stray members of the group (background jobs of the line).
        let pgid = i32::try_from(child.id()).expect("pid");
        // SAFETY: as above; the group may be gone already.
        unsafe { kill(-pgid, SIGKILL) };
        let text = fs::read_to_string(&trace_file).unwrap_or_default();
        let mut observed = trace::parse(&text, sandbox.to_str().expect("UTF-8 path"));
        observed.writes.retain(|w| !ignored(w, sandbox));
        Run {
            observed,
            timed_out,
            trace: text,
        }
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

struct Run {
    observed: Observed,
    timed_out: bool,
    trace: String,
}

fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .chain(["/usr/bin", "/bin"])
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// Copies the fixture; owned by `owner` so that the line, run as that
/// user, can change it.
fn copy_tree(from: &Path, to: &Path, owner: Option<(u32, u32)>) {
    fs::create_dir(to).expect("sandbox dir");
    for entry in fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("fixture entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &dest, owner);
        } else {
            fs::copy(entry.path(), &dest).expect("copy fixture file");
            if let Some((u, g)) = owner {
                std::os::unix::fs::chown(&dest, Some(u), Some(g)).expect("chown");
            }
        }
    }
    if let Some((u, g)) = owner {
        std::os::unix::fs::chown(to, Some(u), Some(g)).expect("chown");
    }
}

/// Whether the analysis vouches for the line.
fn trusted(a: &Analysis) -> bool {
    a.opaque.is_none()
        && a.commands
            .iter()
            .all(|c| !c.tags.iter().any(|t| UNTRUSTED_TAGS.contains(t)))
}

/// Writes that are not effects of the line: terminals, `/dev/null`,
/// pipes, and temporary files of bash's here-documents.
fn ignored(w: &trace::Write, sandbox: &Path) -> bool {
    let p = w.path.as_str();
    let through_fd = p.starts_with("/dev/fd/")
        || p.starts_with("/proc/")
        || matches!(p, "/dev/stdout" | "/dev/stderr" | "/dev/stdin");
    // A descriptor that is no file (`pipe:[..]`, `socket:[..]`).
    if !p.starts_with('/') {
        return true;
    }
    let real = if through_fd {
        match &w.fd_path {
            Some(fd) if fd.starts_with('/') && !fd.starts_with("/dev/") => fd.as_str(),
            _ => return true,
        }
    } else {
        p
    };
    if real.starts_with("/dev/") && (real == "/dev/null" || real.starts_with("/dev/pts/")) {
        return true;
    }
    if matches!(real, "/dev/tty" | "/dev/zero" | "/dev/full") {
        return true;
    }
    // A temporary file that is gone again.
    let tmp = sandbox.join("tmp");
    Path::new(real).starts_with(&tmp) && fs::symlink_metadata(real).is_err()
}

/// What bash did that the analysis does not account for.
fn compare(a: &Analysis, obs: &Observed, sandbox: &Path) -> Vec<String> {
    let root = sandbox.to_str().unwrap_or("");
    let short = |p: &str| match p.strip_prefix(root) {
        Some(rest) => format!(".{rest}"),
        None => p.to_owned(),
    };
    let mut problems = Vec::new();
    let binaries: BTreeSet<&str> = a.commands.iter().map(|c| basename(&c.binary)).collect();
    let mut seen = BTreeSet::new();
    for e in &obs.execs {
        let name = basename(&e.path);
        // A program that runs a command line through `sh -c` (git's
        // editor and pager, sed's `e`) runs what the line names.
        let through_shell = matches!(name, "sh" | "bash" | "dash")
            && e.argv.get(1).is_some_and(|a| a == "-c")
            && e.argv.get(2).is_some_and(|payload| {
                payload
                    .split_whitespace()
                    .next()
                    .is_some_and(|first| binaries.contains(basename(first)))
            });
        if !binaries.contains(name) && !through_shell && seen.insert(name.to_owned()) {
            problems.push(format!(
                "ran `{name}` ({} {:?}), which is not among the analysed commands",
                e.path, e.argv
            ));
        }
    }
    let reported: Vec<String> = a.commands.iter().flat_map(|c| c.writes.clone()).collect();
    // A git command the analysis says changes something accounts for its
    // own bookkeeping under `.git/`.
    let git_writes = a
        .commands
        .iter()
        .any(|c| basename(&c.binary) == "git" && c.sensitivity > Sensitivity::Read);
    let all_read = a
        .commands
        .iter()
        .all(|c| c.sensitivity == Sensitivity::Read);
    let created: BTreeSet<&str> = obs
        .writes
        .iter()
        .filter(|w| matches!(w.kind, Kind::Open { create: true } | Kind::Create))
        .map(|w| w.path.as_str())
        .collect();
    let ran_git = obs.execs.iter().any(|e| basename(&e.path) == "git");
    let mut seen = BTreeSet::new();
    for w in &obs.writes {
        // git refreshes the stat cache of its index when it reads the work
        // tree (the sandbox's files are new copies): not a change the line
        // asked for.
        if ran_git && (w.path.ends_with("/.git/index") || w.path.ends_with("/.git/index.lock")) {
            continue;
        }
        let is_covered = |p: &str| {
            covered(p, &reported)
                || (git_writes && p.contains("/.git/"))
                || w.fd_path
                    .as_deref()
                    .is_some_and(|fd| covered(fd, &reported))
        };
        let mut ok = is_covered(&w.path);
        // `mkdir -p a/b` creates `a` too: which parents exist is not known
        // before the line runs, and the reported path names them.
        if !ok && w.kind == Kind::Create && w.call.starts_with("mkdir") {
            let prefix = format!("{}/", w.path);
            ok = reported.iter().any(|r| r.starts_with(&prefix));
        }
        // A temporary file renamed onto a reported path (`sed -i`).
        if !ok && let Some(to) = &w.renamed_to {
            ok = created.contains(w.path.as_str()) && is_covered(to);
        }
        if !ok && w.kind != Kind::RenameFrom {
            ok = obs.writes.iter().any(|r| {
                r.kind == Kind::RenameFrom
                    && r.path == w.path
                    && r.renamed_to.as_deref().is_some_and(is_covered)
            });
        }
        if !seen.insert(w.path.clone()) {
            continue;
        }
        if !ok {
            problems.push(format!(
                "{} {}: not among the analysed writes",
                w.call,
                short(&w.path)
            ));
        } else if all_read {
            problems.push(format!(
                "{} {}, though every command is `read`",
                w.call,
                short(&w.path)
            ));
        }
    }
    problems
}

/// Whether a reported write (a path, a directory or a glob) covers `path`.
fn covered(path: &str, reported: &[String]) -> bool {
    reported.iter().any(|r| {
        let mut p = path;
        loop {
            if p == r || glob(r.as_bytes(), p.as_bytes()) {
                return true;
            }
            match p.rfind('/') {
                Some(0) | None => return false,
                Some(i) => p = &p[..i],
            }
        }
    })
}

/// Shell glob: `*` and `?` do not match `/`, `**` does (bash's
/// `globstar`, and how policies read it); `[...]` is a set.
fn glob(pat: &[u8], s: &[u8]) -> bool {
    match pat.first() {
        None => s.is_empty(),
        Some(b'*') if pat.get(1) == Some(&b'*') => (0..=s.len()).any(|i| glob(&pat[2..], &s[i..])),
        Some(b'*') => (0..=s.len())
            .take_while(|&i| i == 0 || s[i - 1] != b'/')
            .any(|i| glob(&pat[1..], &s[i..])),
        Some(b'?') => s.first().is_some_and(|&c| c != b'/') && glob(&pat[1..], &s[1..]),
        Some(b'[') => {
            let Some(end) = pat.iter().skip(2).position(|&c| c == b']').map(|i| i + 2) else {
                return s.first() == Some(&b'[') && glob(&pat[1..], &s[1..]);
            };
            let Some(&c) = s.first() else {
                return false;
            };
            let set = &pat[1..end];
            let (neg, set) = match set.first() {
                Some(b'!' | b'^') => (true, &set[1..]),
                _ => (false, set),
            };
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == b'-' {
                    hit |= set[i] <= c && c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == c;
                    i += 1;
                }
            }
            hit != neg && c != b'/' && glob(&pat[end + 1..], &s[1..])
        }
        Some(b'\\') if pat.len() > 1 => s.first() == Some(&pat[1]) && glob(&pat[2..], &s[1..]),
        Some(&c) => s.first() == Some(&c) && glob(&pat[1..], &s[1..]),
    }
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The analysis, one command a line, paths relative to the sandbox.
fn describe(a: &Analysis, root: &str) -> String {
    let short = |p: &str| match p.strip_prefix(root) {
        Some(rest) => format!(".{rest}"),
        None => p.to_owned(),
    };
    let mut out = String::new();
    if let Some(why) = &a.opaque {
        let _ = writeln!(out, "  opaque: {why}");
    }
    for c in &a.commands {
        let writes: Vec<String> = c.writes.iter().map(|w| short(w)).collect();
        let _ = writeln!(
            out,
            "  {:?} {:?} [{}] tags={:?} writes={writes:?}",
            c.binary,
            c.argv,
            c.sensitivity.as_str(),
            c.tags
        );
    }
    if a.commands.is_empty() {
        out.push_str("  (no commands)\n");
    }
    out
}

/// `AILERON_ORACLE_LINE`: one line, everything printed.
fn explain(ws: &Workspace, line: &str) {
    let dir = ws.root.join("explain");
    let sandbox = dir.join("box");
    fs::create_dir_all(&dir).expect("case dir");
    copy_tree(&ws.template, &sandbox, ws.owner);
    let sandbox = fs::canonicalize(&sandbox).expect("sandbox path");
    let cwd = sandbox.to_str().expect("UTF-8").to_owned();
    let home = format!("{cwd}/home");
    let a = analyse(
        line,
        &Context {
            cwd: &cwd,
            home: &home,
            limits: Limits::default(),
        },
    );
    println!(
        "line: {line:?}\ntrusted: {}\nanalysis:\n{}",
        trusted(&a),
        describe(&a, &cwd)
    );
    let run = ws.run(&dir, &sandbox, line);
    println!("timed out: {}", run.timed_out);
    println!("trace:\n{}", run.trace);
    for e in &run.observed.execs {
        println!("exec {} {:?}", e.path, e.argv);
    }
    for w in &run.observed.writes {
        println!("write {} {} ({:?})", w.call, w.path, w.fd_path);
    }
    println!("problems: {:#?}", compare(&a, &run.observed, &sandbox));
    let _ = fs::remove_dir_all(&dir);
}
