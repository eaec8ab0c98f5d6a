//! The shell shim under real bash: allowed lines behave byte for byte like
//! plain bash, denied ones leave no trace, the adversarial corpus never runs
//! its hidden part, and every decision leaves one audit line.

mod support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Output;
use support::{Project, SHIM, parse_audit, run, run_no_tty, text};

const ALLOW_ALL: &str = "version: 1\ndefault: allow\n";
/// Also what the analysis cannot see through (`$$`): for tests of the
/// shim's plumbing, not of the analysis.
const ALLOW_OPAQUE: &str =
    "version: 1\ndefault: allow\nallow:\n  - {override: \"builtin:opaque\"}\n";

/// Runs `args` through the shim and through plain bash with the same
/// stdin, in the same directory, and asserts identical stdout, stderr and
/// exit status. Returns the shim's output.
fn same_as_bash(p: &Project, args: &[&str], stdin: &[u8]) -> Output {
    let shim = run(&mut p.shim(args), stdin);
    let bash = run(&mut p.bash(args), stdin);
    assert!(
        shim.stdout == bash.stdout,
        "stdout differs for {args:?}:\n shim: {:?}\n bash: {:?}",
        truncated(&shim.stdout),
        truncated(&bash.stdout)
    );
    assert!(
        shim.stderr == bash.stderr,
        "stderr differs for {args:?}:\n shim: {:?}\n bash: {:?}",
        text(&shim.stderr),
        text(&bash.stderr)
    );
    assert_eq!(shim.status, bash.status, "exit status differs for {args:?}");
    shim
}

fn truncated(b: &[u8]) -> String {
    let t = text(b);
    if t.len() > 300 {
        format!("{}… ({} bytes)", &t[..300], b.len())
    } else {
        t
    }
}

#[test]
fn pipes_and_exit_statuses_are_bash_s() {
    let p = Project::new(ALLOW_ALL);
    let out = same_as_bash(&p, &["-c", "printf 'b\\na\\n' | sort"], b"");
    assert_eq!(text(&out.stdout), "a\nb\n");
    let out = same_as_bash(&p, &["-c", "exit 3"], b"");
    assert_eq!(out.status.code(), Some(3));
    let out = same_as_bash(&p, &["-c", "echo out; echo err >&2; exit 255"], b"");
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(text(&out.stderr), "err\n");
    same_as_bash(&p, &["-c", "false | true; echo ${PIPESTATUS[@]}"], b"");
    same_as_bash(&p, &["-c", "set -o pipefail; false | true"], b"");
    same_as_bash(&p, &["-c", "ls /nonexistent-aileron-test-dir"], b"");
    same_as_bash(
        &p,
        &["-c", "echo $((6 * 7)) \"$USER\" 'single $x' \"a  b\""],
        b"",
    );
    same_as_bash(&p, &["--version"], b"");
}

#[test]
fn naming_the_home_directory_is_not_reading_secrets() {
    let p = Project::new(ALLOW_ALL);
    let out = same_as_bash(&p, &["-c", "echo \"$HOME\" ~ /"], b"");
    assert_eq!(
        text(&out.stdout),
        format!("{} {} /\n", p.home.display(), p.home.display())
    );
    same_as_bash(&p, &["-c", "printf '%s\\n' /tmp"], b"");
}

#[test]
fn redirects_to_a_file_and_back() {
    let p = Project::new(ALLOW_ALL);
    let line = "echo hello > out.txt; echo more >> out.txt; cat < out.txt; cat out.txt >&2; wc -l < out.txt; rm out.txt";
    let out = same_as_bash(&p, &["-c", line], b"");
    assert_eq!(text(&out.stdout), "hello\nmore\n2\n");
    assert_eq!(text(&out.stderr), "hello\nmore\n");
    assert!(!p.path("out.txt").exists());
}

#[test]
fn stdin_passes_through_untouched() {
    let p = Project::new(ALLOW_ALL);
    let bytes: Vec<u8> = (0..=255u8).cycle().take(256 * 400).collect();
    let out = same_as_bash(&p, &["-c", "cat"], &bytes);
    assert_eq!(out.stdout, bytes);
    let out = same_as_bash(&p, &["-c", "wc -c"], &bytes);
    assert_eq!(text(&out.stdout).trim(), "102400");
    let out = same_as_bash(
        &p,
        &["-c", "read a; read b; echo \"$b/$a\""],
        b"first\nsecond\n",
    );
    assert_eq!(text(&out.stdout), "second/first\n");
}

#[test]
fn dollar_zero_and_positional_arguments() {
    let p = Project::new(ALLOW_ALL);
    let out = same_as_bash(&p, &["-c", "echo $0 $1", "x", "y"], b"");
    assert_eq!(text(&out.stdout), "x y\n");
    let out = same_as_bash(&p, &["-c", "echo \"$#:$@\"", "zero", "a b", "c"], b"");
    assert_eq!(text(&out.stdout), "2:a b c\n");
    same_as_bash(&p, &["-c", "echo $0"], b"");
}

#[test]
fn the_working_directory_is_kept() {
    let p = Project::new(ALLOW_ALL);
    let out = same_as_bash(&p, &["-c", "pwd"], b"");
    assert_eq!(text(&out.stdout), format!("{}\n", p.dir.display()));
    let sub = p.path("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    let shim = run(
        p.shim(&["-c", "pwd; echo x > here.txt"]).current_dir(&sub),
        b"",
    );
    assert_eq!(text(&shim.stdout), format!("{}\n", sub.display()));
    assert!(sub.join("here.txt").is_file());
}

#[test]
fn a_signal_ends_it_like_bash() {
    let p = Project::new(ALLOW_OPAQUE);
    let out = same_as_bash(&p, &["-c", "echo before; kill -TERM $$; echo after"], b"");
    assert_eq!(out.status.signal(), Some(libc::SIGTERM));
    assert_eq!(support::shell_status(&out.status), 143);
    assert_eq!(text(&out.stdout), "before\n");
    let out = same_as_bash(&p, &["-c", "kill -KILL $$"], b"");
    assert_eq!(out.status.signal(), Some(libc::SIGKILL));
}

#[test]
fn large_output_is_identical() {
    let p = Project::new(ALLOW_ALL);
    let out = same_as_bash(
        &p,
        &[
            "-c",
            "head -c 1048576 /dev/zero | tr '\\0' a; seq 1 100000 >&2",
        ],
        b"",
    );
    assert_eq!(out.stdout.len(), 1 << 20);
    assert!(out.stderr.len() > 500_000);
}

/// Asserts `out` is a refusal: nothing on stdout, exit 126, one line on stderr.
fn assert_refused(out: &Output, what: &str) -> String {
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(126),
        "{what}: expected 126; stdout {:?}, stderr {err:?}",
        text(&out.stdout)
    );
    assert!(
        out.stdout.is_empty(),
        "{what}: stdout {:?}",
        text(&out.stdout)
    );
    assert!(
        err.starts_with("aileron: ") && err.ends_with('\n') && err.lines().count() == 1,
        "{what}: stderr is not one aileron line: {err:?}"
    );
    err
}

#[test]
fn a_denied_command_leaves_no_trace() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"touch *\"]\n");
    let out = run_no_tty(&mut p.shim(&["-c", "touch created.txt"]));
    let err = assert_refused(&out, "touch");
    assert_eq!(
        err,
        format!(
            "aileron: denied: matched `touch *` (rule {}:deny[0])\n",
            p.path("aileron.yaml").display()
        )
    );
    assert!(!p.path("created.txt").exists());
    // No part of a line runs when another part is denied.
    let out = run_no_tty(&mut p.shim(&["-c", "echo ran > ran.txt; touch created.txt"]));
    assert_refused(&out, "two parts");
    assert!(!p.path("ran.txt").exists() && !p.path("created.txt").exists());
    // The built-in rules hold under `default: allow`.
    let out = run_no_tty(&mut p.shim(&["-c", "rm -rf /"]));
    let err = assert_refused(&out, "rm -rf /");
    assert!(err.ends_with("(rule builtin:rm-root)\n"), "{err}");
}

#[test]
fn a_denied_command_names_the_rule_id_and_its_description() {
    let p = Project::new(
        "version: 1\ndefault: allow\ndeny:\n  - id: no-touch\n    command: \"touch *\"\n    description: do not create files\n",
    );
    let out = run_no_tty(&mut p.shim(&["-lc", "touch created.txt"]));
    assert_eq!(
        assert_refused(&out, "touch"),
        "aileron: denied: do not create files (rule no-touch)\n"
    );
    let out = run_no_tty(&mut p.shim(&["-c", "-l", "touch created.txt"]));
    assert_refused(&out, "-c -l");
    assert!(!p.path("created.txt").exists());
}

#[test]
fn a_policy_that_does_not_load_denies_everything() {
    let p = Project::new("version: 1\ndefault: allow\nallow: [\n");
    let out = run_no_tty(&mut p.shim(&["-c", "echo hi > ran.txt"]));
    let err = assert_refused(&out, "broken policy");
    assert!(
        err.starts_with(&format!(
            "aileron: denied: the policy does not load: {}:3:",
            p.path("aileron.yaml").display()
        )),
        "{err}"
    );
    assert!(!p.path("ran.txt").exists());
}

#[test]
fn without_a_policy_the_built_ins_decide_and_unmatched_commands_need_a_terminal() {
    let p = Project::without_policy();
    for d in p.dir.ancestors() {
        assert!(
            !d.join("aileron.yaml").exists(),
            "a stray {}/aileron.yaml spoils this test",
            d.display()
        );
    }
    let out = run_no_tty(&mut p.shim(&["-c", "touch created.txt"]));
    let err = assert_refused(&out, "unmatched");
    assert_eq!(
        err,
        "aileron: denied: approval needed but there is no terminal to ask on (default)\n"
    );
    assert!(!p.path("created.txt").exists());
    // Read-only commands of the OS profile need nobody.
    std::fs::write(p.path("seen.txt"), "").unwrap();
    let out = run_no_tty(&mut p.shim(&["-c", "ls"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "seen.txt\n");
    let out = run_no_tty(&mut p.shim(&["-c", "rm -rf ~"]));
    assert!(assert_refused(&out, "rm -rf ~").contains("(rule builtin:"));
    // Without a policy file the log lives in the data directory.
    let audit = parse_audit(&std::fs::read_to_string(p.home.join(".aileron/audit.jsonl")).unwrap());
    assert_eq!(audit.len(), 3);
    assert_eq!(audit[0]["decision"], "ask");
    assert_eq!(audit[0]["source"], "default");
    assert_eq!(audit[1]["decision"], "allow");
    assert_eq!(audit[2]["decision"], "deny");
}

/// How an adversarial line is checked against plain bash first.
enum Control {
    /// Under plain bash the line leaves the trace; proves the adaptation.
    Bash,
    /// Same, when these programs are installed.
    Needs(&'static [&'static str]),
    /// Cannot be shown to leave a trace here (network, a terminal, a
    /// parse error, ...); only the shim side is checked.
    No,
}

/// The NOT_ALLOW corpus of `aileron-engine/tests/adversarial.rs`, each
/// hidden part turned into something that leaves a trace: a file `HIDDEN`
/// is created, or the file `victim` is deleted. `@DIR@` is the project.
const CORPUS: &[(&str, Control)] = &[
    // chaining and lists
    ("git status; touch HIDDEN", Control::Bash),
    ("ls && echo 'touch HIDDEN' | bash", Control::Bash),
    ("echo ok & touch HIDDEN", Control::Bash),
    ("ls /nonexistent || touch HIDDEN", Control::Bash),
    ("ls\ntouch HIDDEN", Control::Bash),
    ("git status & disown; touch HIDDEN", Control::Bash),
    // grouping and control flow
    ("echo ok; (touch HIDDEN)", Control::Bash),
    ("{ touch HIDDEN; }", Control::Bash),
    ("if true; then touch HIDDEN; fi", Control::Bash),
    ("for f in HIDDEN; do touch \"$f\"; done", Control::Bash),
    ("while false; do :; done; touch HIDDEN", Control::Bash),
    ("case x in x) touch HIDDEN;; esac", Control::Bash),
    // env prefixes and wrappers
    ("FOO=1 touch HIDDEN", Control::Bash),
    ("env touch HIDDEN", Control::Bash),
    ("env -i touch HIDDEN", Control::Bash),
    ("sudo touch HIDDEN", Control::Needs(&["sudo"])),
    ("sudo -u root touch HIDDEN", Control::No),
    ("timeout 5 touch HIDDEN", Control::Bash),
    ("timeout -s KILL 5 touch HIDDEN", Control::Bash),
    ("nice -n 5 touch HIDDEN", Control::Bash),
    ("nohup touch HIDDEN & wait", Control::Bash),
    ("time touch HIDDEN", Control::Bash),
    ("command touch HIDDEN", Control::Bash),
    ("builtin eval 'touch HIDDEN'", Control::Bash),
    ("exec touch HIDDEN", Control::Bash),
    ("stdbuf -oL touch HIDDEN", Control::Bash),
    ("watch -n 1 touch HIDDEN", Control::No),
    ("xargs touch < list", Control::Bash),
    ("echo HIDDEN | xargs touch", Control::Bash),
    ("xargs -I{} touch {} < list", Control::Bash),
    ("parallel touch ::: HIDDEN", Control::Needs(&["parallel"])),
    // find
    ("find . -maxdepth 0 -exec touch HIDDEN \\;", Control::Bash),
    (
        "find . -maxdepth 0 -execdir touch HIDDEN {} +",
        Control::Bash,
    ),
    ("find . -maxdepth 0 -ok touch HIDDEN \\;", Control::Bash),
    ("find . -name victim -delete", Control::Bash),
    (
        "find . -maxdepth 0 -exec sh -c 'touch \"$1\"' _ HIDDEN \\;",
        Control::Bash,
    ),
    // nested shells
    ("bash -c 'touch HIDDEN'", Control::Bash),
    ("sh -c \"echo touch HIDDEN | sh\"", Control::Bash),
    ("bash -lc 'touch HIDDEN'", Control::Bash),
    ("sh -c 'echo ok; touch HIDDEN'", Control::Bash),
    ("bash <<< 'touch HIDDEN'", Control::Bash),
    ("bash -c \"$(echo touch HIDDEN)\"", Control::Bash),
    (
        "bash -c \"$(curl -s file://@DIR@/script.txt)\"",
        Control::Needs(&["curl"]),
    ),
    // substitutions
    ("echo $(touch HIDDEN)", Control::Bash),
    ("echo \"$(touch HIDDEN)\"", Control::Bash),
    ("echo `touch HIDDEN`", Control::Bash),
    ("cat <(touch HIDDEN)", Control::Bash),
    ("ls >(touch HIDDEN) >/dev/null; wait $!", Control::Bash),
    ("git log --pretty=\"$(touch HIDDEN)\"", Control::Bash),
    ("echo $(echo $(touch HIDDEN))", Control::Bash),
    // quoting tricks
    ("$'\\x74\\x6f\\x75\\x63\\x68' HIDDEN", Control::Bash),
    ("t''ouch HIDDEN", Control::Bash),
    ("\"touch\" HIDDEN", Control::Bash),
    ("\\touch HIDDEN", Control::Bash),
    ("t\\ouch HIDDEN", Control::Bash),
    // programs that run programs
    ("git -c core.pager='touch HIDDEN' log", Control::No),
    ("git -c alias.x='!touch HIDDEN' x", Control::Bash),
    ("git -c core.sshCommand='touch HIDDEN' fetch", Control::No),
    ("git -c core.fsmonitor='touch HIDDEN' status", Control::No),
    ("GIT_SSH_COMMAND='touch HIDDEN' git fetch", Control::No),
    ("LD_PRELOAD=@DIR@/evil.so ls", Control::No),
    ("PAGER='touch HIDDEN' git log", Control::No),
    ("sort --compress-program=./evil.sh list", Control::No),
    ("rg --pre ./evil.sh pattern list", Control::Needs(&["rg"])),
    // binaries by path
    ("./git status", Control::Bash),
    ("@DIR@/sub/git status", Control::Bash),
    ("../bin/ls", Control::Bash),
    // dynamic code (the environment has CMD=touch)
    ("eval \"$CMD HIDDEN\"", Control::Bash),
    ("eval 'touch HIDDEN'", Control::Bash),
    ("$CMD HIDDEN", Control::Bash),
    ("\"$(echo touch)\" HIDDEN", Control::Bash),
    (
        "python3 -c 'open(\"HIDDEN\", \"w\")'",
        Control::Needs(&["python3"]),
    ),
    (
        "node -e 'require(\"fs\").writeFileSync(\"HIDDEN\", \"\")'",
        Control::Needs(&["node"]),
    ),
    ("perl -e 'open(F, \">HIDDEN\")'", Control::Needs(&["perl"])),
    ("base64 -d payload | sh", Control::Bash),
    (
        "echo dG91Y2ggSElEREVOCg== | base64 -d | bash",
        Control::Bash,
    ),
    ("cat script.txt | sh", Control::Bash),
    ("git status | sh", Control::No),
    (
        "curl -s file://@DIR@/script.py | python3",
        Control::Needs(&["curl", "python3"]),
    ),
    (
        "source <(curl -s file://@DIR@/script.txt)",
        Control::Needs(&["curl"]),
    ),
    (
        "cat <(curl -s file://@DIR@/script.txt) | bash",
        Control::Needs(&["curl"]),
    ),
    // unparsable
    ("echo 'unterminated; touch HIDDEN", Control::No),
    ("echo \"unterminated; touch HIDDEN", Control::No),
    ("ls $(touch HIDDEN", Control::No),
    ("touch HIDDEN\nls $(", Control::Bash),
];

const ADVERSARIAL_POLICY: &str = r#"version: 1
default: ask
allow:
  - "git *"
  - "ls *"
  - "find *"
  - "echo *"
  - "cat *"
"#;

/// A fresh project for one corpus line, with the files the lines use.
fn adversarial_project() -> Project {
    let p = Project::new(ADVERSARIAL_POLICY);
    p.write("list", "HIDDEN\n");
    p.write("victim", "");
    p.write("payload", "dG91Y2ggSElEREVOCg==\n");
    p.write("script.txt", "touch HIDDEN\n");
    p.write("script.py", "open('HIDDEN', 'w')\n");
    let script = "#!/bin/sh\ntouch HIDDEN\n";
    for path in [
        p.path("git"),
        p.path("sub/git"),
        p.path("evil.sh"),
        p.root.join("bin/ls"),
    ] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

fn trace(p: &Project) -> bool {
    p.path("HIDDEN").exists() || !p.path("victim").exists()
}

fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// Runs one corpus line under plain bash (when it can show a trace) and
/// through the shim, called directly or asking a launch session at
/// `socket`; returns whether the control ran, and what went wrong.
fn check_corpus_line(line: &str, control: &Control, socket: Option<&Path>) -> (bool, Vec<String>) {
    let mut failures = Vec::new();
    // Control: under plain bash the adapted line does leave its trace.
    let controlled = socket.is_none()
        && match control {
            Control::Bash => true,
            Control::Needs(programs) => programs.iter().all(|p| installed(p)),
            Control::No => false,
        };
    if controlled {
        let p = adversarial_project();
        let line = line.replace("@DIR@", &p.dir.to_string_lossy());
        let control_run = || {
            run(
                support::no_tty(p.bash(&["-c", &line]).env("CMD", "touch")),
                b"y\n",
            )
        };
        let mut out = control_run();
        // A script the project just wrote can still be open for writing in a
        // child another test thread is forking (ETXTBSY): run it again.
        for _ in 0..5 {
            if trace(&p) || !text(&out.stderr).contains("Text file busy") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            out = control_run();
        }
        if !trace(&p) {
            failures.push(format!(
                "{line:?}: plain bash left no trace (the corpus line is wrong): {}",
                text(&out.stderr)
            ));
        }
    }
    let p = adversarial_project();
    let line = line.replace("@DIR@", &p.dir.to_string_lossy());
    let mut shim = p.shim(&["-c", &line]);
    if let Some(socket) = socket {
        shim.env("AILERON_SOCKET", socket);
    }
    let out = run_no_tty(shim.env("CMD", "touch"));
    let err = text(&out.stderr);
    let audit = p.audit();
    if socket.is_some() && !(audit.len() == 1 && audit[0]["session"].is_string()) {
        failures.push(format!(
            "{line:?}: not decided once by the launch session: {audit:?}"
        ));
    }
    if trace(&p) {
        failures.push(format!(
            "{line:?}: the hidden part ran (status {:?}, stderr {err:?})",
            out.status
        ));
    }
    if out.status.code() != Some(126)
        || !out.stdout.is_empty()
        || !err.starts_with("aileron: denied: ")
    {
        failures.push(format!(
            "{line:?}: not refused: status {:?}, stdout {:?}, stderr {err:?}",
            out.status,
            text(&out.stdout)
        ));
    }
    (controlled, failures)
}

#[test]
fn the_adversarial_corpus_never_runs_its_hidden_part() {
    let (controlled, failures) = check_corpus(None);
    assert!(
        controlled >= 60,
        "only {controlled} lines were checked under plain bash"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// bash's option forms that an argument parser can get wrong: a lone `-`
/// or `+` ends the options, `+c` is `-c`, each `o` in a group takes an
/// argument. Under a deny list (`default: allow`), deciding the wrong word
/// would let the real command run. Checked called directly and in a session.
#[test]
fn bash_s_option_forms_are_read_as_bash_reads_them() {
    const DENY_TOUCH: &str = "version: 1\ndefault: allow\ndeny:\n  - id: no-touch\n    when: {type: shell.exec, shell.binary: touch}\n";
    let forms: &[&[&str]] = &[
        &["-c", "-", "touch HIDDEN"],
        &["-c", "+", "touch HIDDEN"],
        &["+c", "-", "touch HIDDEN"],
        &["+c", "touch HIDDEN"],
        &["-cs", "-", "touch HIDDEN"],
        &["-coo", "pipefail", "errexit", "touch HIDDEN"],
        &["-oc", "pipefail", "touch HIDDEN"],
        &["-c", "bash -c + 'touch HIDDEN'"],
        &["-c", "bash -c - 'touch HIDDEN'"],
        &["-c", "bash +c 'touch HIDDEN'"],
        &["-c", "sh -c + 'touch HIDDEN'"],
        &["-c", "bash -coo pipefail errexit 'touch HIDDEN'"],
    ];
    let p = Project::new(DENY_TOUCH);
    let session = support::LaunchSession::start(&p);
    for args in forms {
        // Control: plain bash runs the hidden command.
        run_no_tty(&mut p.bash(args));
        assert!(p.path("HIDDEN").exists(), "{args:?}: bash did not run it");
        std::fs::remove_file(p.path("HIDDEN")).unwrap();
        for in_session in [false, true] {
            let mut shim = if in_session {
                session.shim(&p, args)
            } else {
                p.shim(args)
            };
            let out = run_no_tty(&mut shim);
            assert!(
                !p.path("HIDDEN").exists(),
                "{args:?} (in a session: {in_session}): the hidden command ran"
            );
            assert_eq!(
                out.status.code(),
                Some(126),
                "{args:?}: {}",
                text(&out.stderr)
            );
        }
    }
}

/// Under GBK, Big5 or Shift_JIS bash reads `中\;` as a character and a
/// command separator where the analysis reads an escaped `;`. The shim
/// refuses to run under such a locale (or with `LOCPATH`, which can give
/// any locale name such a character set), called directly and in a session.
#[test]
fn a_locale_whose_characters_can_hide_shell_syntax_is_refused() {
    let p = Project::new(ALLOW_ALL);
    let session = support::LaunchSession::start(&p);
    let cases: &[(&str, &str)] = &[
        ("LANG", "zh_CN.GBK"),
        ("LC_ALL", "zh_TW.BIG5"),
        ("LC_CTYPE", "ja_JP.SJIS"),
        ("LOCPATH", "/tmp/locales"),
    ];
    for (variable, value) in cases {
        for in_session in [false, true] {
            let mut shim = if in_session {
                session.shim(&p, &["-c", "touch made"])
            } else {
                p.shim(&["-c", "touch made"])
            };
            // The test environment's `LC_ALL=C` would win over the others.
            let out = run_no_tty(shim.env_remove("LC_ALL").env(variable, value));
            let err = text(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(126),
                "{variable}={value} ({in_session}): {:?} {err}",
                out.status
            );
            assert!(
                err.starts_with("aileron: denied: ") && err.contains(variable),
                "{variable}={value}: {err}"
            );
            assert!(!p.path("made").exists(), "{variable}={value}: it ran");
        }
    }
    // A UTF-8 or single-byte locale runs as usual.
    for (variable, value) in [("LANG", "C.UTF-8"), ("LC_ALL", "en_US.ISO-8859-1")] {
        let out = run_no_tty(session.shim(&p, &["-c", "echo ok"]).env(variable, value));
        assert_eq!(
            text(&out.stdout),
            "ok\n",
            "{variable}={value}: {}",
            text(&out.stderr)
        );
    }
}

/// The same corpus asked of a launch session, as an agent's shell asks it
/// (the shim's early path, before its C library starts).
#[test]
fn the_adversarial_corpus_never_runs_its_hidden_part_in_a_launch_session() {
    let p = adversarial_project();
    // Each line gets a project of its own, made after the session started:
    // under `--enforce files` the session would refuse their policies.
    let session = support::LaunchSession::start_with(&p, &["--enforce", "none"]);
    let (_, failures) = check_corpus(Some(&session.socket));
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Checks every corpus line (see [`check_corpus_line`]) in six threads;
/// returns how many ran under plain bash, and every failure.
fn check_corpus(socket: Option<&Path>) -> (usize, Vec<String>) {
    let results: Vec<(bool, Vec<String>)> = std::thread::scope(|s| {
        let handles: Vec<_> = CORPUS
            .chunks(CORPUS.len().div_ceil(6))
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(line, control)| check_corpus_line(line, control, socket))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("corpus thread"))
            .collect()
    });
    let controlled = results.iter().filter(|(c, _)| *c).count();
    let failures: Vec<String> = results.into_iter().flat_map(|(_, f)| f).collect();
    (controlled, failures)
}

#[test]
fn attacks_on_aileron_itself_are_denied_by_built_in_rules() {
    let lines = [
        "echo 'allow: [\"*\"]' > aileron.yaml",
        "git status; echo x >> aileron.yaml",
        "bash -c 'echo x > aileron.yaml'",
        "sed -i 's/ask/allow/' aileron.yaml",
        "echo 'allow: [\"*\"]' > sub/aileron.yaml",
        "rm -rf .aileron",
        "echo x > ~/.aileron/settings.yaml",
        "SHELL=/bin/sh touch HIDDEN",
        "export AILERON_SESSION=x; touch HIDDEN",
        "unset AILERON_SOCKET; touch HIDDEN",
    ];
    let mut failures = Vec::new();
    for line in lines {
        let p = adversarial_project();
        std::fs::create_dir_all(p.path("sub")).unwrap();
        std::fs::create_dir_all(p.path(".aileron")).unwrap();
        std::fs::write(p.path(".aileron/keep"), "").unwrap();
        let out = run_no_tty(&mut p.shim(&["-c", line]));
        let err = text(&out.stderr);
        if out.status.code() != Some(126)
            || !err.starts_with("aileron: denied: ")
            || !err.contains("(rule builtin:")
        {
            failures.push(format!("{line:?}: status {:?}, stderr {err:?}", out.status));
        }
        let intact = p.read("aileron.yaml") == ADVERSARIAL_POLICY
            && !p.path("sub/aileron.yaml").exists()
            && p.path(".aileron/keep").exists()
            && !p.home.join(".aileron/settings.yaml").exists()
            && !trace(&p);
        if !intact {
            failures.push(format!("{line:?}: left a trace"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_decision_appends_one_audit_line_beside_the_policy() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"touch *\"]\n");
    assert_eq!(
        run_no_tty(&mut p.shim(&["-c", "echo hi"])).status.code(),
        Some(0)
    );
    assert_eq!(
        run_no_tty(&mut p.shim(&["-c", "touch created.txt"]))
            .status
            .code(),
        Some(126)
    );
    let audit = p.audit();
    assert_eq!(audit.len(), 2, "{audit:#?}");
    let (allowed, denied) = (&audit[0], &audit[1]);
    assert_eq!(allowed["decision"], "allow");
    assert_eq!(allowed["action"]["summary"], "echo hi");
    assert_eq!(allowed["action"]["type"], "shell.exec");
    assert_eq!(allowed["adapter"], "shim");
    assert_eq!(allowed["cwd"], p.dir.to_string_lossy().as_ref());
    assert!(
        allowed["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{allowed}"
    );
    assert_eq!(denied["decision"], "deny");
    assert_eq!(denied["action"]["summary"], "touch created.txt");
    assert_eq!(
        denied["rule"],
        format!("{}:deny[0]", p.path("aileron.yaml").display())
    );
    assert_eq!(denied["reason"], "matched `touch *`");
    assert_eq!(denied["source"], "static");
    for rec in &audit {
        assert!(
            rec["time"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z') && t.contains('T')),
            "{rec}"
        );
        assert!(
            rec["action"]["id"].as_str().is_some_and(|i| !i.is_empty()),
            "{rec}"
        );
    }
    assert_ne!(audit[0]["action"]["id"], audit[1]["action"]["id"]);
}

#[test]
fn credentials_in_commands_are_masked_in_the_log() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"curl *\", \"git clone *\"]\n");
    let lines = [
        "curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz' https://x",
        "git clone https://user:pass@host/r.git",
        "curl https://deploy:Xy7hunter2pw@example.com/api",
    ];
    for line in lines {
        let out = run_no_tty(&mut p.shim(&["-c", line]));
        assert_eq!(out.status.code(), Some(126), "{line}");
    }
    let log = p.audit_text();
    assert_eq!(parse_audit(&log).len(), 3);
    for secret in ["abcdefghijklmnopqrstuvwxyz", "user:pass@", "Xy7hunter2pw"] {
        assert!(
            !log.contains(secret),
            "{secret:?} is in the audit log:\n{log}"
        );
    }
    let audit = parse_audit(&log);
    let summaries: Vec<&str> = audit
        .iter()
        .map(|r| r["action"]["summary"].as_str().unwrap())
        .collect();
    assert!(
        summaries[0].contains("Bearer ***") && summaries[0].contains("https://x"),
        "{summaries:?}"
    );
    assert!(
        summaries[1].contains("https://user:***@host/r.git"),
        "{summaries:?}"
    );
}

#[test]
fn two_hundred_concurrent_commands_leave_two_hundred_audit_lines() {
    const N: usize = 200;
    let p = std::sync::Arc::new(Project::new(
        "version: 1\ndefault: deny\nallow: [\"echo *\"]\n",
    ));
    let handles: Vec<_> = (0..N)
        .map(|i| {
            let p = std::sync::Arc::clone(&p);
            std::thread::spawn(move || {
                let out = run_no_tty(&mut p.shim(&["-c", &format!("echo {i}")]));
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "echo {i}: {}",
                    text(&out.stderr)
                );
                assert_eq!(text(&out.stdout), format!("{i}\n"));
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a shim call failed");
    }
    let log = p.audit_text();
    assert!(log.ends_with('\n'));
    let mut seen = vec![0; N];
    let mut count = 0;
    for line in log.lines() {
        let rec: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
        let summary = rec["action"]["summary"].as_str().expect("summary");
        let n: usize = summary
            .strip_prefix("echo ")
            .and_then(|n| n.parse().ok())
            .expect(summary);
        assert_eq!(rec["decision"], "allow");
        seen[n] += 1;
        count += 1;
    }
    assert_eq!(count, N);
    assert!(seen.iter().all(|&c| c == 1), "counts: {seen:?}");
}

#[test]
fn a_script_runs_like_bash_and_is_decided_by_its_content() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"touch *\"]\n");
    p.write("ok.sh", "echo \"$0 $1 $2\"\ncat\nexit 5\n");
    let out = same_as_bash(&p, &["ok.sh", "a", "b"], b"from stdin\n");
    assert_eq!(text(&out.stdout), "ok.sh a b\nfrom stdin\n");
    assert_eq!(out.status.code(), Some(5));
    p.write("bad.sh", "echo start > started.txt\ntouch created.txt\n");
    let out = run_no_tty(&mut p.shim(&["bad.sh"]));
    let err = assert_refused(&out, "bad.sh");
    assert!(err.contains("matched `touch *`"), "{err}");
    assert!(!p.path("started.txt").exists() && !p.path("created.txt").exists());
}

#[test]
fn commands_on_stdin_are_decided_too() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"touch *\"]\n");
    for args in [&[][..], &["-s"][..], &["-s", "x"][..]] {
        let out = run(support::no_tty(&mut p.shim(args)), b"touch created.txt\n");
        assert_eq!(
            out.status.code(),
            Some(126),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            !p.path("created.txt").exists(),
            "{args:?}: the denied command on stdin ran"
        );
    }
}

/// A unique `/tmp/claude-XXXX-cwd` path, removed on drop.
struct ClaudeCwdFile(String);

impl ClaudeCwdFile {
    fn new() -> ClaudeCwdFile {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        ClaudeCwdFile(format!(
            "/tmp/claude-{:x}{:x}-cwd",
            std::process::id(),
            nanos
        ))
    }
}

impl Drop for ClaudeCwdFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn the_claude_code_wrapper_is_decided_by_the_command_it_wraps() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"touch *\"]\n");
    // Where Claude Code keeps them: the only snapshot it may source undecided.
    let snap = p.home.join(".claude/shell-snapshots/snapshot-bash-1.sh");
    std::fs::create_dir_all(snap.parent().unwrap()).unwrap();
    std::fs::write(&snap, "SNAP_LOADED=yes\n").unwrap();
    let wrap = |cmd: &str, cwd_file: &str| {
        format!(
            "source {} && shopt -u extglob && eval '{}' < /dev/null && pwd -P >| {cwd_file}",
            snap.display(),
            cmd.replace('\'', "'\\''")
        )
    };
    // Allowed: exactly what bash does, the harness included.
    let cwd_file = ClaudeCwdFile::new();
    let line = wrap("echo \"loaded=$SNAP_LOADED\" 'q'", &cwd_file.0);
    let out = same_as_bash(&p, &["-c", &line], b"");
    assert_eq!(text(&out.stdout), "loaded=yes q\n");
    assert_eq!(
        std::fs::read_to_string(&cwd_file.0).unwrap(),
        format!("{}\n", p.dir.display())
    );
    // Denied: by the rule about the wrapped command, and nothing of the harness runs.
    std::fs::remove_file(&cwd_file.0).unwrap();
    let out = run_no_tty(&mut p.shim(&["-c", &wrap("touch created.txt", &cwd_file.0)]));
    let err = assert_refused(&out, "wrapped touch");
    assert!(err.contains("matched `touch *`"), "{err}");
    assert!(!p.path("created.txt").exists());
    assert!(!std::path::Path::new(&cwd_file.0).exists());
    // Something after the wrapper is not harness: the whole line is decided.
    let line = format!("{}; touch created.txt", wrap("echo ok", &cwd_file.0));
    assert_refused(&run_no_tty(&mut p.shim(&["-c", &line])), "wrapper + tail");
    assert!(!p.path("created.txt").exists());
}

/// Files bash runs before its command when asked to (start-up files, a
/// `--rcfile`, a `BASH_ENV` or `ENV` file), each leaving the trace
/// `PWNED<name>` in the project when it runs.
fn plant_start_up_files(p: &Project) {
    for name in [
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".bashrc",
        ".bash_logout",
    ] {
        let trace = p.path(&format!("PWNED{name}"));
        std::fs::write(p.home.join(name), format!("touch '{}'\n", trace.display())).unwrap();
    }
    for name in ["rc.sh", "env.sh"] {
        p.write(
            name,
            &format!("touch '{}'\n", p.path(&format!("PWNED-{name}")).display()),
        );
    }
}

/// The traces left in the project, sorted; removes them.
fn take_traces(p: &Project) -> Vec<String> {
    let mut traces: Vec<String> = std::fs::read_dir(&p.dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("PWNED"))
        .collect();
    traces.sort();
    for t in &traces {
        std::fs::remove_file(p.path(t)).unwrap();
    }
    traces
}

/// One way of calling the shell that makes plain bash run something
/// besides its command.
struct Form {
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    stdin: &'static [u8],
    arg0: Option<&'static str>,
    /// bash ignores this under root (`PS4` from the environment): no control.
    not_as_root: bool,
}

const fn form(args: &'static [&'static str]) -> Form {
    Form {
        args,
        env: &[],
        stdin: b"",
        arg0: None,
        not_as_root: false,
    }
}

impl Form {
    fn command(&self, p: &Project, program: &str) -> std::process::Command {
        use std::os::unix::process::CommandExt;
        let mut cmd = p.command(program);
        cmd.args(self.args);
        if let Some(arg0) = self.arg0 {
            cmd.arg0(arg0);
        }
        for (k, v) in self.env {
            cmd.env(k, v.replace("@DIR@", &p.dir.to_string_lossy()));
        }
        cmd
    }
}

/// For each form: plain bash leaves a trace (the control), the shim
/// (`socket`: in that launch session) runs the command, prints `ran` and
/// leaves none. Returns what went wrong.
fn forms_run_only_their_command(p: &Project, forms: &[Form], socket: Option<&Path>) -> Vec<String> {
    let mut failures = Vec::new();
    for f in forms {
        take_traces(p);
        run(support::no_tty(&mut f.command(p, support::BASH)), f.stdin);
        // SAFETY: plain geteuid(2).
        let controlled = !(f.not_as_root && unsafe { libc::geteuid() } == 0);
        if take_traces(p).is_empty() && controlled {
            failures.push(format!(
                "{:?} {:?}: plain bash left no trace (the test is wrong)",
                f.args, f.env
            ));
        }
        let mut shim = f.command(p, SHIM);
        if let Some(socket) = socket {
            shim.env("AILERON_SOCKET", socket);
        }
        let out = run(support::no_tty(&mut shim), f.stdin);
        let traces = take_traces(p);
        if !traces.is_empty() {
            failures.push(format!("{:?} {:?}: ran {traces:?}", f.args, f.env));
        }
        if out.status.code() != Some(0) || !text(&out.stdout).starts_with("ran") {
            failures.push(format!(
                "{:?} {:?}: status {:?}, stdout {:?}, stderr {:?}",
                f.args,
                f.env,
                out.status,
                text(&out.stdout),
                text(&out.stderr)
            ));
        }
    }
    failures
}

/// The forms agents send (`-lc`, `-c -l`, `-l -i -c`) and the others that
/// make bash a login or interactive shell: the shim's bash is neither, so
/// no start-up file runs (a login shell would run `~/.bash_logout` at its
/// exit even with `--noprofile`), and the command still runs.
const LOGIN_AND_INTERACTIVE: &[Form] = &[
    form(&[
        "-lc",
        "echo ran; shopt -q login_shell && echo login; exit 0",
    ]),
    form(&["-c", "-l", "echo ran"]),
    form(&["-l", "-c", "echo ran"]),
    form(&["--login", "-c", "echo ran; exit 0"]),
    form(&["-ic", "echo ran"]),
    form(&["-l", "-i", "-c", "echo ran"]),
    form(&["-lic", "echo ran; exit"]),
    form(&["+l", "-c", "echo ran"]),
    Form {
        arg0: Some("-bash"),
        ..form(&["-c", "echo ran"])
    },
    Form {
        stdin: b"echo ran\nexit\n",
        ..form(&["-l"])
    },
    Form {
        stdin: b"echo ran\n",
        ..form(&["-i", "-s"])
    },
    form(&["-l", "script.sh"]),
];

/// Variables bash runs as code: each is taken out of its environment.
const CODE_IN_THE_ENVIRONMENT: &[Form] = &[
    Form {
        env: &[("BASH_ENV", "@DIR@/env.sh")],
        ..form(&["-c", "echo ran"])
    },
    Form {
        env: &[("ENV", "@DIR@/env.sh")],
        ..form(&["--posix", "-ic", "echo ran"])
    },
    Form {
        env: &[("BASH_FUNC_ls%%", "() { touch @DIR@/PWNED-function; }")],
        ..form(&["-c", "ls >/dev/null; echo ran"])
    },
    Form {
        env: &[("SHELLOPTS", "xtrace"), ("PS4", "$(touch @DIR@/PWNED-ps4)")],
        not_as_root: true,
        ..form(&["-c", "echo ran"])
    },
    Form {
        env: &[("PS4", "$(touch @DIR@/PWNED-ps4)")],
        not_as_root: true,
        ..form(&["-xc", "echo ran"])
    },
    Form {
        env: &[("SHELLOPTS", "xtrace")],
        ..form(&[
            "-c",
            "echo ran; [[ -o xtrace ]] && : > PWNED-shellopts; true",
        ])
    },
    Form {
        env: &[("BASHOPTS", "nullglob")],
        ..form(&[
            "-c",
            "echo ran; shopt -q nullglob && : > PWNED-bashopts; true",
        ])
    },
    // `--norc`: the system's bashrc would set a prompt of its own.
    Form {
        env: &[("PROMPT_COMMAND", "touch @DIR@/PWNED-prompt")],
        stdin: b"echo ran\n",
        ..form(&["--norc", "-i"])
    },
    Form {
        env: &[("PS1", "$(touch @DIR@/PWNED-ps1)")],
        stdin: b"echo ran\n",
        ..form(&["--norc", "-i"])
    },
];

#[test]
fn login_and_interactive_forms_run_no_start_up_file() {
    let p = Project::new(ALLOW_ALL);
    plant_start_up_files(&p);
    p.write("script.sh", "echo ran\n");
    let failures = forms_run_only_their_command(&p, LOGIN_AND_INTERACTIVE, None);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn variables_bash_runs_as_code_do_not_reach_it() {
    let p = Project::new(ALLOW_ALL);
    plant_start_up_files(&p);
    let failures = forms_run_only_their_command(&p, CODE_IN_THE_ENVIRONMENT, None);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_forms_agents_send_run_as_in_bash() {
    let p = Project::new(ALLOW_ALL);
    let out = same_as_bash(&p, &["-c", "echo hi"], b"");
    assert_eq!(text(&out.stdout), "hi\n");
    same_as_bash(&p, &["-l", "-c", "echo $0 $1", "n", "one"], b"");
    same_as_bash(&p, &["-c", "-l", "echo \"$0|$1|$#\"", "n", "one"], b"");
    same_as_bash(&p, &["-o", "pipefail", "-c", "false | true"], b"");
    for args in [
        &["-lc", "echo $PATH"][..],
        &["-l", "-i", "-c", "echo $PATH"],
    ] {
        let out = run_no_tty(&mut p.shim(args));
        assert_eq!(
            text(&out.stdout),
            format!("{}\n", std::env::var("PATH").unwrap()),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // Not a login shell, whatever the agent asked for.
    let out = run_no_tty(&mut p.shim(&["-lc", "shopt login_shell"]));
    assert_eq!(text(&out.stdout), "login_shell    \toff\n");
}

#[test]
fn options_that_make_bash_run_a_file_are_refused() {
    let p = Project::new(ALLOW_ALL);
    plant_start_up_files(&p);
    let rc = p.path("rc.sh").to_string_lossy().into_owned();
    for option in ["--rcfile", "--init-file"] {
        let args = [option, rc.as_str(), "-ic", "echo ran"];
        run_no_tty(&mut p.bash(&args));
        assert_eq!(take_traces(&p), ["PWNED-rc.sh"], "{option}: the control");
        let out = run_no_tty(&mut p.shim(&args));
        let err = assert_refused(&out, option);
        assert!(err.contains(option), "{err}");
        assert!(take_traces(&p).is_empty(), "{option}: it ran");
    }
    for args in [
        &["--debugger", "-c", "echo ran"][..],
        &["-O", "extdebug", "-c", "echo ran"],
    ] {
        assert_refused(&run_no_tty(&mut p.shim(args)), args[0]);
    }
    assert!(p.audit().is_empty(), "refused before anything is decided");
}

/// A script is read once, decided, and that text runs: a FIFO that would
/// give bash other bytes on a second read gets none.
#[test]
fn a_script_runs_as_the_text_that_was_decided() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"touch *\"]\n");
    let fifo = p.path("script.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (fifo, done) = (fifo.clone(), std::sync::Arc::clone(&done));
        std::thread::spawn(move || {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            use std::sync::atomic::Ordering;
            let mut written = 0;
            for body in ["echo \"decided $0 $1\"\n", "touch created.txt\n"] {
                // Opened without blocking: only while a reader has it open.
                while !done.load(Ordering::SeqCst) {
                    if let Ok(mut f) = std::fs::OpenOptions::new()
                        .write(true)
                        .custom_flags(libc::O_NONBLOCK)
                        .open(&fifo)
                    {
                        let _ = f.write_all(body.as_bytes());
                        written += 1;
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                // The first reader has read to the end and closed before
                // the second body is offered.
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            written
        })
    };
    let out = run_no_tty(&mut p.shim(&["script.fifo", "arg"]));
    assert_eq!(
        text(&out.stdout),
        "decided script.fifo arg\n",
        "{}",
        text(&out.stderr)
    );
    assert!(!p.path("created.txt").exists(), "the FIFO was read again");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(writer.join().unwrap(), 1, "the FIFO was opened twice");
    // A script too long to pass as one argument is refused.
    p.write("long.sh", &"echo x\n".repeat(20_000));
    let err = assert_refused(&run_no_tty(&mut p.shim(&["long.sh"])), "long script");
    assert!(
        err.contains("long.sh") && err.contains("longer than"),
        "{err}"
    );
}

/// Claude Code's snapshot is sourced without being decided; a line whose
/// snapshot is not where Claude Code keeps them, under the home directory,
/// is not the harness and is decided as written.
#[test]
fn a_claude_code_snapshot_elsewhere_is_decided_with_the_line() {
    let p = Project::new("version: 1\ndefault: ask\nallow: [\"echo *\"]\n");
    let payload = format!("touch '{}'\n", p.path("PWNED").display());
    let snapshots = p.home.join(".claude/shell-snapshots");
    std::fs::create_dir_all(&snapshots).unwrap();
    std::fs::write(snapshots.join("snapshot-bash-1.sh"), ": harmless\n").unwrap();
    p.write(".claude/shell-snapshots/snapshot-bash-1.sh", &payload);
    p.write("snapshot-bash-1.sh", &payload);
    let cwd_file = ClaudeCwdFile::new();
    let wrap = |snapshot: &Path| {
        format!(
            "source {} && shopt -u extglob && eval 'echo ok' < /dev/null && pwd -P >| {}",
            snapshot.display(),
            cwd_file.0
        )
    };
    let out = run_no_tty(&mut p.shim(&["-c", &wrap(&snapshots.join("snapshot-bash-1.sh"))]));
    assert_eq!(text(&out.stdout), "ok\n", "{}", text(&out.stderr));
    for snapshot in [
        p.path(".claude/shell-snapshots/snapshot-bash-1.sh"),
        p.path("snapshot-bash-1.sh"),
    ] {
        let out = run_no_tty(&mut p.shim(&["-c", &wrap(&snapshot)]));
        assert_refused(&out, &snapshot.display().to_string());
        assert!(!p.path("PWNED").exists(), "{}: ran", snapshot.display());
    }
}

/// The same forms asked of a launch session: the early path (`-c`) and the
/// full shim (stdin, scripts) both hand bash only what was decided.
#[test]
fn in_a_launch_session_bash_runs_no_start_up_file_and_no_code_from_its_environment() {
    let p = Project::new(ALLOW_ALL);
    plant_start_up_files(&p);
    p.write("script.sh", "echo ran\n");
    let session = support::LaunchSession::start(&p);
    let mut failures =
        forms_run_only_their_command(&p, LOGIN_AND_INTERACTIVE, Some(&session.socket));
    failures.extend(forms_run_only_their_command(
        &p,
        CODE_IN_THE_ENVIRONMENT,
        Some(&session.socket),
    ));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let rc = p.path("rc.sh").to_string_lossy().into_owned();
    let out = run_no_tty(&mut session.shim(&p, &["--rcfile", &rc, "-ic", "echo ran"]));
    assert_refused(&out, "--rcfile in a session");
    assert!(take_traces(&p).is_empty());
}

#[test]
fn a_decision_that_cannot_be_recorded_does_not_run() {
    let p = Project::new(ALLOW_ALL);
    // `.aileron` is a file, so `.aileron/audit.jsonl` cannot be written.
    p.write(".aileron", "not a directory\n");
    let out = run_no_tty(&mut p.shim(&["-c", "echo hi > ran.txt"]));
    let err = assert_refused(&out, "unrecordable");
    assert!(
        err.starts_with("aileron: denied: cannot write the audit log "),
        "{err}"
    );
    assert!(!p.path("ran.txt").exists());
}

#[test]
fn closed_standard_descriptors_are_opened_on_dev_null() {
    // So that no file the shim opens can take their numbers; the real
    // shell inherits /dev/null there (as from any program started by std).
    let p = Project::new(ALLOW_OPAQUE);
    let mut cmd = p.command(support::BASH);
    cmd.args([
        "-c",
        "exec \"$0\" -c 'echo dropped; readlink /proc/$$/fd/1 >&2' >&-",
        support::SHIM,
    ]);
    let out = run(&mut cmd, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "/dev/null\n");
    assert_eq!(p.audit().len(), 1, "{}", p.audit_text());
}

/// `build.rs` links the shim without the dynamic loader wherever glibc's
/// static archives are installed (they are where this test suite runs):
/// an executable with a program interpreter (`PT_INTERP`) means the
/// static link silently fell back.
#[cfg(all(
    target_os = "linux",
    target_env = "gnu",
    target_pointer_width = "64",
    target_endian = "little"
))]
#[test]
fn the_shim_is_linked_without_the_dynamic_loader_where_libc_a_exists() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let found = |archive: &str| {
        std::process::Command::new(&cc)
            .arg(format!("-print-file-name={archive}"))
            .output()
            .is_ok_and(|o| Path::new(String::from_utf8_lossy(&o.stdout).trim()).is_absolute())
    };
    if !found("libc.a") || !found("libgcc_eh.a") {
        eprintln!("skipped: no static C library, so the shim is linked dynamically by design");
        return;
    }
    let elf = std::fs::read(SHIM).unwrap();
    assert_eq!(&elf[..6], b"\x7fELF\x02\x01", "64-bit little-endian ELF");
    let u16_at = |i: usize| usize::from(u16::from_le_bytes([elf[i], elf[i + 1]]));
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    let types: Vec<u32> = (0..phnum)
        .map(|i| {
            let at = phoff + i * phentsize;
            u32::from_le_bytes(elf[at..at + 4].try_into().unwrap())
        })
        .collect();
    const PT_LOAD: u32 = 1;
    const PT_INTERP: u32 = 3;
    assert!(types.contains(&PT_LOAD), "{types:?}");
    assert!(
        !types.contains(&PT_INTERP),
        "{SHIM} asks for a dynamic loader: build.rs fell back to a dynamic link"
    );
}

/// The shim's early path (`aileron_shim::prestart`) runs before the C
/// library has started, so it must never call into it: not even a
/// `memcpy` the compiler emits, which static glibc resolves only during
/// its start-up, nor touch thread-local storage, which is not set up yet.
/// This walks the machine code from the entry point, through direct calls
/// and calls through the GOT, and fails on any C function reached. Panic
/// paths (only reached when an invariant is already broken) are not
/// followed.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn the_early_path_never_calls_into_the_c_library() {
    use std::collections::{BTreeSet, HashMap};
    let objdump = |args: &[&str]| {
        let out = std::process::Command::new("objdump")
            .args(args)
            .arg(SHIM)
            .output()
            .expect("objdump (binutils) runs");
        assert!(
            out.status.success(),
            "objdump {args:?}: {}",
            text(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // The GOT's slots, as read from the file (no relocation in a fixed-address binary).
    let mut got: HashMap<u64, u64> = HashMap::new();
    for line in objdump(&["-s", "-j", ".got", "-j", ".got.plt"]).lines() {
        let mut words = line.split_whitespace();
        let Some(addr) = words.next().and_then(|a| u64::from_str_radix(a, 16).ok()) else {
            continue;
        };
        let hex: String = words.take(4).filter(|w| w.len() == 8).collect();
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
            .collect();
        for (i, slot) in bytes.chunks_exact(8).enumerate() {
            got.insert(
                addr + 8 * i as u64,
                u64::from_le_bytes(slot.try_into().unwrap()),
            );
        }
    }
    // Functions by address (generic instances share a demangled name):
    // name and instructions.
    let dis = objdump(&["-d", "--no-show-raw-insn", "-C"]);
    let mut functions: HashMap<u64, (String, Vec<String>)> = HashMap::new();
    let mut current = None;
    for line in dis.lines() {
        if let Some((addr, rest)) = line.split_once(" <")
            && let Some(name) = rest.strip_suffix(">:")
            && let Ok(addr) = u64::from_str_radix(addr, 16)
        {
            functions.insert(addr, (name.to_owned(), Vec::new()));
            current = Some(addr);
        } else if line.starts_with("  ")
            && let Some(f) = current.and_then(|a| functions.get_mut(&a))
        {
            f.1.push(line.to_owned());
        }
    }
    let name = |addr: u64| functions.get(&addr).map_or("?", |f| f.0.as_str());
    let is_panic = |name: &str| {
        name.contains("panic")
            || name.ends_with("_fail")
            || name.contains("unwrap_failed")
            || name == "_Unwind_Resume"
    };
    let slot_of = |insn: &str| {
        let (_, comment) = insn.split_once("# ")?;
        u64::from_str_radix(comment.split_whitespace().next()?, 16).ok()
    };
    let entry = *functions
        .iter()
        .find(|(_, f)| f.0 == "aileron_sh_entry")
        .expect("the shim has its own entry point")
        .0;
    let mut caller: HashMap<u64, u64> = HashMap::new();
    let mut seen = BTreeSet::from([entry]);
    let mut todo = vec![entry];
    let mut failures = Vec::new();
    let call_path = |caller: &HashMap<u64, u64>, mut f: u64| {
        let mut path = vec![name(f)];
        while let Some(&c) = caller.get(&f) {
            path.push(name(c));
            f = c;
        }
        path.join(" <- ")
    };
    while let Some(function) = todo.pop() {
        // Registers loaded from a GOT slot, for `call *%reg`.
        let mut loaded: HashMap<String, u64> = HashMap::new();
        for insn in &functions[&function].1 {
            let Some((_, code)) = insn.split_once(":\t") else {
                continue;
            };
            let (op, operands) = code.split_once(char::is_whitespace).unwrap_or((code, ""));
            let operands = operands.trim();
            if operands.contains("%fs:") {
                failures.push(format!(
                    "thread-local storage: {code} in {}",
                    call_path(&caller, function)
                ));
            }
            if op == "mov"
                && operands.contains("(%rip)")
                && let Some(slot) = slot_of(operands)
                && let Some(reg) = operands.split(',').nth(1)
            {
                let reg = reg.split_whitespace().next().unwrap_or("").to_owned();
                loaded.insert(reg, slot);
            }
            if op != "call" && op != "jmp" {
                continue;
            }
            let target =
                if let Some(reg) = operands.strip_prefix('*').filter(|r| r.starts_with('%')) {
                    if op == "jmp" {
                        continue; // a jump table inside the function
                    }
                    loaded
                        .get(reg.trim())
                        .and_then(|slot| got.get(slot))
                        .copied()
                } else if operands.starts_with("*0x") && operands.contains("(%rip)") {
                    slot_of(operands).and_then(|slot| got.get(&slot)).copied()
                } else if let Some((addr, target)) = operands.split_once(" <") {
                    if let Some((base, _)) = target.split_once("+0x") {
                        if op == "jmp" && base == name(function) {
                            continue; // a jump inside this function
                        }
                        // Into the middle of something: a PLT stub, such
                        // as the IFUNC slots `memcpy` goes through.
                        failures.push(format!(
                            "a call to no function's start: {code} in {}",
                            call_path(&caller, function)
                        ));
                        continue;
                    }
                    u64::from_str_radix(addr.trim(), 16).ok()
                } else {
                    None
                };
            let Some(target) = target.filter(|t| functions.contains_key(t)) else {
                failures.push(format!(
                    "a call that cannot be followed: {code} in {}",
                    call_path(&caller, function)
                ));
                continue;
            };
            let target_name = name(target);
            if function == entry && target_name == "_start" {
                continue; // the hand-over to the C library
            }
            if is_panic(target_name) || !seen.insert(target) {
                continue;
            }
            caller.insert(target, function);
            // Rust functions are demangled to paths; C functions are not.
            if !target_name.contains("::") {
                failures.push(format!(
                    "calls the C function: {}",
                    call_path(&caller, target)
                ));
                continue;
            }
            todo.push(target);
        }
    }
    assert!(
        seen.iter()
            .any(|&f| name(f) == "aileron_shim::prestart::run"),
        "the entry point does not reach prestart::run"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
