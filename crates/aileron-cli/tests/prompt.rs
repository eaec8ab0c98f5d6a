//! The terminal prompt, driven through a pseudo-terminal: every answer,
//! the timeout, and the cascade over a session's waiting requests.

mod support;

use serde_json::Value;
use std::time::{Duration, Instant};
use support::{Project, PtyChild, PtyOutput, run_no_tty, text};

/// Everything unlisted is asked about; a forgotten answer ends the test in 20 s, not 60.
const ASK: &str = "version: 1\ndefault: ask\nsettings: {timeout: 20}\n";

const PROMPT: &str = "[o] allow once";

/// `aileron-sh -c LINE` with the pty as its controlling terminal.
fn shim(p: &Project, line: &str) -> PtyChild {
    PtyChild::spawn(&mut p.shim(&["-c", line]))
}

/// `aileron launch -- bash -c SCRIPT` with the pty as its controlling terminal.
fn launch(p: &Project, script: &str) -> PtyChild {
    PtyChild::spawn(&mut p.aileron(&["launch", "--", "bash", "-c", script]))
}

/// Answers the "exactly / prefix" follow-up question.
fn answer_always(t: &mut PtyChild, scope: &str, form: &str) {
    t.expect(PROMPT);
    t.type_keys(&format!("{scope}\n"));
    t.expect("[x] prefix `");
    t.type_keys(&format!("{form}\n"));
}

fn outcome(rec: &Value) -> &str {
    rec["outcome"].as_str().unwrap_or("")
}

/// Nobody at a terminal: an unlisted command is refused.
fn refused_without_terminal(p: &Project, line: &str) -> bool {
    let out = run_no_tty(&mut p.shim(&["-c", line]));
    out.status.code() == Some(126) && text(&out.stderr).contains("no terminal")
}

fn assert_ok(out: &PtyOutput) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout {:?}\nstderr {:?}\nscreen:\n{}",
        out.stdout,
        out.stderr,
        out.screen
    );
}

#[test]
fn once_runs_the_command_once() {
    let p = Project::new(ASK);
    let mut t = PtyChild::spawn_with_input(
        &mut p.shim(&["-c", "mkdir -p made && cat"]),
        Some(b"stdin is the command's\n"),
    );
    let screen = t.expect(PROMPT);
    assert!(screen.contains("aileron: approval needed"), "{screen}");
    assert!(screen.contains("command: mkdir -p made"), "{screen}");
    assert!(screen.contains("in line: mkdir -p made && cat"), "{screen}");
    assert!(
        screen.contains("no rule matched"),
        "the reason is not shown:\n{screen}"
    );
    // A wrong key is asked again.
    t.type_keys("z\n");
    t.expect("please answer o, s, p, u, r or f");
    t.type_keys("o\n");
    let out = t.finish();
    assert_ok(&out);
    // The prompt is on the terminal; stdout and stdin belong to the command.
    assert_eq!(out.stdout, "stdin is the command's\n");
    assert_eq!(out.stderr, "");
    assert_eq!(out.prompts(), 1);
    assert!(p.path("made").is_dir());
    // Once is once.
    assert!(refused_without_terminal(&p, "mkdir -p made"));
    let audit = p.audit();
    assert_eq!(audit.len(), 2, "{audit:#?}");
    assert_eq!(audit[0]["decision"], "ask");
    assert_eq!(outcome(&audit[0]), "approved-once");
    assert_eq!(audit[0]["action"]["summary"], "mkdir -p made");
}

#[test]
fn always_for_the_session_covers_the_same_command_in_the_same_launch() {
    let p = Project::new(ASK);
    let script = r#"
        $SHELL -c 'mkdir -p one'; echo "first=$?"
        $SHELL -c 'mkdir -p one'; echo "second=$?"
        $SHELL -c 'mkdir -p two'; echo "third=$?"
    "#;
    let mut t = launch(&p, script);
    answer_always(&mut t, "s", "e");
    // `exactly` does not cover another command: asked again.
    let screen = t.expect_n(PROMPT, 2);
    assert!(screen.contains("command: mkdir -p two"), "{screen}");
    t.type_keys("r\n");
    let out = t.finish();
    assert_ok(&out);
    assert_eq!(
        out.stdout, "first=0\nsecond=0\nthird=126\n",
        "stderr {:?}",
        out.stderr
    );
    assert_eq!(
        out.stderr,
        "aileron: rejected: the user rejected `mkdir -p two`\n"
    );
    assert_eq!(out.prompts(), 2, "{}", out.screen);
    assert!(p.path("one").is_dir() && !p.path("two").exists());
    let audit = p.audit();
    assert_eq!(audit.len(), 3, "{audit:#?}");
    assert_eq!(outcome(&audit[0]), "approved-always-session");
    assert_eq!(audit[1]["decision"], "allow");
    assert_eq!(audit[1]["source"], "session");
    assert_eq!(audit[1]["rule"], "session:always[0]");
    assert_eq!(outcome(&audit[2]), "rejected");
    // The session's approvals die with it, and were never written to a file.
    assert_eq!(p.read("aileron.yaml"), ASK);
    assert!(!p.home.join(".aileron/settings.yaml").exists());
    assert!(refused_without_terminal(&p, "mkdir -p one"));
}

const COMMENTED: &str = "\
# Team policy: reviewed in pull requests.
version: 1
default: ask          # everything unlisted needs a human

settings:
  timeout: 20   # seconds

allow:
  # read-only git
  - \"git status\"
  - 'git diff *'   # diffs are fine

deny:
    - \"rm -rf *\"    # never
";

#[test]
fn always_for_the_project_appends_a_prefix_rule_keeping_the_file_byte_for_byte() {
    let p = Project::new(COMMENTED);
    let mut t = shim(&p, "mkdir -p one/deep");
    t.expect(PROMPT);
    t.type_keys("p\n");
    let screen = t.expect("[x] prefix `mkdir *`");
    assert!(
        screen.contains("[e] exactly `mkdir -p one/deep`"),
        "{screen}"
    );
    t.type_keys("x\n");
    let out = t.finish();
    assert_ok(&out);
    assert_eq!(out.stderr, "");
    assert!(p.path("one/deep").is_dir());

    let amended = p.read("aileron.yaml");
    let added: Vec<&str> = amended
        .split_inclusive('\n')
        .filter(|l| !COMMENTED.split_inclusive('\n').any(|o| o == *l))
        .collect();
    assert_eq!(added.len(), 1, "not exactly one new line:\n{amended}");
    let line = added[0];
    assert!(line.starts_with("  - \"mkdir *\"  # "), "{line:?}");
    assert!(
        line.contains("aileron"),
        "the new rule has no comment saying where it came from: {line:?}"
    );
    assert_eq!(
        amended.replacen(line, "", 1),
        COMMENTED,
        "the rest of the file changed:\n{amended}"
    );
    assert!(
        amended.contains("  - 'git diff *'   # diffs are fine\n  - \"mkdir *\""),
        "not appended to the allow list:\n{amended}"
    );

    let check = support::run(&mut p.aileron(&["check"]), b"");
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        text(&check.stdout),
        text(&check.stderr)
    );
    // The rule is in force for the next command, with nobody to ask.
    let out = run_no_tty(&mut p.shim(&["-c", "mkdir -p two"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(p.path("two").is_dir());
    let audit = p.audit();
    assert_eq!(outcome(&audit[0]), "approved-always-project");
    assert_eq!(audit[1]["decision"], "allow");
    assert!(!p.home.join(".aileron/settings.yaml").exists());
}

#[test]
fn always_for_me_writes_the_user_settings() {
    let p = Project::new(ASK);
    let mut t = shim(&p, "mkdir -p one");
    answer_always(&mut t, "u", "x");
    let out = t.finish();
    assert_ok(&out);
    assert!(p.path("one").is_dir());
    let settings = std::fs::read_to_string(p.home.join(".aileron/settings.yaml"))
        .expect("settings.yaml written");
    assert!(settings.contains("\"mkdir *\""), "{settings}");
    assert_eq!(p.read("aileron.yaml"), ASK, "the project policy changed");
    let out = run_no_tty(&mut p.shim(&["-c", "mkdir -p two"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // It is the user's: it holds in another project of the same user.
    let other = p.root.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("aileron.yaml"), ASK).unwrap();
    let out = run_no_tty(p.shim(&["-c", "mkdir -p three"]).current_dir(&other));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(outcome(&p.audit()[0]), "approved-always-user");
}

/// An explicit `ask:` rule outranks an allow at the default priority.
const ASK_RULE: &str = "version: 1\ndefault: deny\nsettings: {timeout: 20}\nask:\n  - {command: \"mkdir *\", priority: 100}\n";

/// "Always for this project" answered to an ask raised by an explicit
/// `ask:` rule: the rule added outranks it, so the next session (a new
/// shim, nobody at a terminal) runs the command without asking.
#[test]
fn always_for_the_project_outranks_the_ask_rule_that_asked() {
    let p = Project::new(ASK_RULE);
    let mut t = shim(&p, "mkdir -p one");
    answer_always(&mut t, "p", "e");
    let out = t.finish();
    assert_ok(&out);
    assert_eq!(out.stderr, "", "no warning that the rule is ineffective");
    let amended = p.read("aileron.yaml");
    assert!(
        amended.contains("{command: \"mkdir -p one\", priority: 100}"),
        "{amended}"
    );
    let out = run_no_tty(&mut p.shim(&["-c", "mkdir -p one"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let audit = p.audit();
    assert_eq!(outcome(&audit[0]), "approved-always-project");
    assert_eq!(audit[0]["approver"], "terminal");
    assert_eq!(audit[1]["decision"], "allow", "{:#?}", audit[1]);
    // Only what was approved: another mkdir is still the ask rule's.
    assert!(refused_without_terminal(&p, "mkdir -p two"));
}

/// The same for "always for me": the user's settings rank above the
/// project, so the asking rule's own priority is enough there.
#[test]
fn always_for_me_outranks_the_project_s_ask_rule() {
    let p = Project::new(ASK_RULE);
    let mut t = shim(&p, "mkdir -p one");
    answer_always(&mut t, "u", "x");
    let out = t.finish();
    assert_ok(&out);
    assert_eq!(out.stderr, "");
    let settings = std::fs::read_to_string(p.home.join(".aileron/settings.yaml")).unwrap();
    assert!(
        settings.contains("{command: \"mkdir *\", priority: 100}"),
        "{settings}"
    );
    let out = run_no_tty(&mut p.shim(&["-c", "mkdir -p two"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(p.path("two").is_dir());
}

#[test]
fn reject_refuses_and_runs_nothing() {
    let p = Project::new(ASK);
    let mut t = shim(&p, "mkdir -p one");
    t.expect(PROMPT);
    t.type_keys("r\n");
    let out = t.finish();
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(
        out.stderr,
        "aileron: rejected: the user rejected `mkdir -p one`\n"
    );
    assert_eq!(out.stdout, "");
    assert!(!p.path("one").exists());
    assert_eq!(outcome(&p.audit()[0]), "rejected");
}

#[test]
fn reject_with_feedback_tells_the_agent_why() {
    let p = Project::new(ASK);
    let mut t = shim(&p, "mkdir -p target/x");
    t.expect(PROMPT);
    t.type_keys("f\n");
    t.expect("feedback for the agent");
    t.type_keys("please use cargo\n");
    let out = t.finish();
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(out.stderr, "aileron: rejected: please use cargo\n");
    assert!(!p.path("target").exists());
    assert_eq!(outcome(&p.audit()[0]), "corrected");
}

#[test]
fn no_answer_in_time_is_a_denial() {
    let p = Project::new("version: 1\ndefault: ask\nsettings: {timeout: 1}\n");
    let started = Instant::now();
    let mut t = shim(&p, "mkdir -p one");
    let screen = t.expect(PROMPT);
    assert!(screen.contains("(no answer in 1s: deny)"), "{screen}");
    let out = t.finish();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(
        out.stderr,
        "aileron: denied: no answer within 1s (default)\n"
    );
    assert!(out.screen.contains("timed out"), "{}", out.screen);
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert!(!p.path("one").exists());
    assert_eq!(outcome(&p.audit()[0]), "timeout-deny");
}

/// Two commands that need approval, in parallel in one launch session.
const PARALLEL: &str = r#"
    $SHELL -c 'mkdir -p one' 2>one.err & a=$!
    $SHELL -c 'mkdir -p two' 2>two.err & b=$!
    wait $a; echo "a=$?"; wait $b; echo "b=$?"
"#;

/// Waits until both requests have reached the session (one prompting,
/// one waiting its turn): both shims are alive and hold a socket.
fn both_pending(t: &mut PtyChild) {
    t.expect(PROMPT);
    let deadline = Instant::now() + support::WAIT;
    while connected_shims(&["mkdir -p one", "mkdir -p two"]) < 2 {
        assert!(
            Instant::now() < deadline,
            "the two requests never reached the session"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let the second one settle into waiting for its turn.
    std::thread::sleep(Duration::from_millis(300));
}

/// How many processes run `… -c LINE` for one of `lines` with a socket open.
fn connected_shims(lines: &[&str]) -> usize {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    procs
        .flatten()
        .filter(|e| {
            let dir = e.path();
            let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else {
                return false;
            };
            let argv: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            let ours = argv.len() >= 3
                && argv[1] == b"-c"
                && lines.iter().any(|l| argv[2] == l.as_bytes());
            ours && std::fs::read_dir(dir.join("fd")).is_ok_and(|fds| {
                fds.flatten().any(|fd| {
                    std::fs::read_link(fd.path())
                        .is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
                })
            })
        })
        .count()
}

#[test]
fn always_resolves_the_other_waiting_request_that_it_covers() {
    let p = Project::new(ASK);
    let mut t = launch(&p, PARALLEL);
    both_pending(&mut t);
    t.type_keys("s\n");
    t.expect("[x] prefix `mkdir *`");
    t.type_keys("x\n");
    let out = t.finish();
    assert_ok(&out);
    assert_eq!(out.stdout, "a=0\nb=0\n", "screen:\n{}", out.screen);
    assert_eq!(out.prompts(), 1, "asked twice:\n{}", out.screen);
    assert!(p.path("one").is_dir() && p.path("two").is_dir());
    let audit = p.audit();
    assert_eq!(audit.len(), 2, "{audit:#?}");
    let asked: Vec<&Value> = audit
        .iter()
        .filter(|r| outcome(r) == "approved-always-session")
        .collect();
    let cascaded: Vec<&Value> = audit
        .iter()
        .filter(|r| r["rule"] == "session:always[0]")
        .collect();
    assert_eq!((asked.len(), cascaded.len()), (1, 1), "{audit:#?}");
    // It was waiting while the human answered, not sent afterwards.
    let waited = cascaded[0]["latency_us"].as_u64().unwrap_or(0);
    assert!(
        waited >= 200_000,
        "the second request did not wait for the answer ({waited} us)"
    );
}

#[test]
fn reject_rejects_the_other_waiting_request_too() {
    let p = Project::new(ASK);
    let script = format!("{PARALLEL}\n$SHELL -c 'mkdir -p three'; echo \"c=$?\"\n");
    let mut t = launch(&p, &script);
    both_pending(&mut t);
    t.type_keys("r\n");
    // A later request of the same session is asked as usual.
    let screen = t.expect_n(PROMPT, 2);
    let second = &screen[screen.find(PROMPT).unwrap() + PROMPT.len()..];
    assert!(
        second.contains("command: mkdir -p three"),
        "the rejected request was asked again:\n{screen}"
    );
    t.type_keys("o\n");
    let out = t.finish();
    assert_ok(&out);
    assert_eq!(out.stdout, "a=126\nb=126\nc=0\n", "screen:\n{}", out.screen);
    assert_eq!(out.prompts(), 2, "{}", out.screen);
    assert!(!p.path("one").exists() && !p.path("two").exists() && p.path("three").is_dir());
    let errs = [p.read("one.err"), p.read("two.err")];
    let direct = errs
        .iter()
        .filter(|e| e.starts_with("aileron: rejected: the user rejected `mkdir -p "))
        .count();
    let cascaded = errs
        .iter()
        .filter(|e| {
            *e == "aileron: rejected: the user rejected an earlier request of this session\n"
        })
        .count();
    assert_eq!((direct, cascaded), (1, 1), "{errs:?}");
    let audit = p.audit();
    assert_eq!(audit.len(), 3, "{audit:#?}");
    assert!(
        audit[..2].iter().all(|r| outcome(r) == "rejected"),
        "{audit:#?}"
    );
    assert_eq!(outcome(&audit[2]), "approved-once");
}

const ASK_MKDIR_ALLOW_ON_TIMEOUT: &str = "version: 1\ndefault: allow\nask:\n  - command: \"mkdir *\"\n    approver: terminal\n    timeout: 1\n    on_timeout: allow\n";

#[test]
fn a_rule_s_on_timeout_can_allow() {
    let p = Project::new(ASK_MKDIR_ALLOW_ON_TIMEOUT);
    let mut t = shim(&p, "mkdir -p one");
    let screen = t.expect(PROMPT);
    assert!(screen.contains("(no answer in 1s"), "{screen}");
    let out = t.finish();
    assert_ok(&out);
    assert!(p.path("one").is_dir());
    let audit = p.audit();
    assert_eq!(outcome(&audit[0]), "timeout-allow");
    assert_eq!(
        audit[0]["rule"],
        format!("{}:ask[0]", p.path("aileron.yaml").display())
    );
}

#[test]
fn the_prompt_says_what_no_answer_will_do() {
    let p = Project::new(ASK_MKDIR_ALLOW_ON_TIMEOUT);
    let mut t = shim(&p, "mkdir -p one");
    let screen = t.expect(PROMPT);
    let out = t.finish();
    assert_ok(&out);
    assert!(screen.contains("(no answer in 1s: allow)"), "{screen}");
}

#[test]
fn an_exact_approval_matches_a_command_full_of_glob_characters() {
    let p = Project::new(ASK);
    let cmd = r#"mkdir -p 'x*y' 'q?' 'b[1]' 'c\d' '{a,b}'"#;
    let near = r#"mkdir -p 'xZy' 'q?' 'b[1]' 'c\d' '{a,b}'"#;
    let script = format!(
        "$SHELL -c {q}; $SHELL -c {q}; $SHELL -c {n}; echo \"near=$?\"",
        q = shell_quote(cmd),
        n = shell_quote(near)
    );
    let mut t = launch(&p, &script);
    answer_always(&mut t, "s", "e");
    // The exact approval is exact: a glob character in it is not a wildcard.
    let screen = t.expect_n(PROMPT, 2);
    assert!(screen.contains("xZy"), "{screen}");
    t.type_keys("r\n");
    let out = t.finish();
    assert_ok(&out);
    assert_eq!(out.stdout, "near=126\n", "stderr {:?}", out.stderr);
    for d in ["x*y", "q?", "b[1]", "c\\d", "{a,b}"] {
        assert!(p.path(d).is_dir(), "{d}");
    }
    assert!(!p.path("xZy").exists());
    let audit = p.audit();
    assert_eq!(audit.len(), 3, "{audit:#?}");
    assert_eq!(audit[1]["rule"], "session:always[0]", "{audit:#?}");
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
