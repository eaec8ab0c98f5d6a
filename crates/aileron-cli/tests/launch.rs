//! `aileron launch -- PROGRAM`: the program's shell is the shim, its
//! commands are decided in one session, its environment is scrubbed, and
//! its exit status is aileron's.

mod support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{Project, run, run_no_tty, text};

/// `aileron launch -- bash -c SCRIPT`, without a terminal.
fn launch(p: &Project, script: &str) -> Output {
    run_no_tty(&mut p.aileron(&["launch", "--", "bash", "-c", script]))
}

/// The audit lines of the shim's decisions (the exec supervisor also
/// records the programs the launched script starts itself).
fn shim_lines(p: &Project) -> Vec<Value> {
    p.audit()
        .into_iter()
        .filter(|r| r["adapter"] == "shim")
        .collect()
}

fn lines(out: &Output) -> Vec<String> {
    text(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn the_program_s_shell_is_a_private_shim_named_bash() {
    let p = Project::new("version: 1\ndefault: allow\n");
    let script = r#"
        echo "$SHELL"
        readlink "$SHELL"
        stat -c %a "$(dirname "$(dirname "$(dirname "$SHELL")")")"
        $SHELL -c 'echo hi'
        $SHELL -c 'rm -rf /'
        echo "rm=$?"
        exit 7
    "#;
    let out = launch(&p, script);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "stderr: {err}");
    let l = lines(&out);
    assert_eq!(l.len(), 5, "{l:?}\nstderr: {err}");
    let shell = PathBuf::from(&l[0]);
    assert_eq!(
        shell.file_name().and_then(|n| n.to_str()),
        Some("bash"),
        "{l:?}"
    );
    assert!(
        shell.starts_with(p.run.join("aileron")),
        "{} is not in the private runtime dir",
        shell.display()
    );
    assert_eq!(
        std::fs::canonicalize(&l[1]).unwrap(),
        std::fs::canonicalize(support::SHIM).unwrap(),
        "$SHELL is not a link to aileron-sh"
    );
    assert_eq!(l[2], "700", "the runtime directory is not private");
    assert_eq!(l[3], "hi");
    assert_eq!(l[4], "rm=126");
    assert_eq!(
        err,
        "aileron: denied: recursive delete of / or the home directory (rule builtin:rm-root)\n"
    );
    // The session's directory (socket, shim link) is gone afterwards.
    assert!(!shell.exists());
    assert!(!shell.parent().unwrap().parent().unwrap().exists());
}

#[test]
fn the_program_s_exit_status_becomes_aileron_s() {
    let p = Project::new("version: 1\ndefault: allow\n");
    assert_eq!(launch(&p, "exit 0").status.code(), Some(0));
    assert_eq!(launch(&p, "exit 42").status.code(), Some(42));
    // A denied command does not end the program; its own status counts.
    assert_eq!(
        launch(&p, "$SHELL -c 'rm -rf /'; true").status.code(),
        Some(0)
    );
    assert_eq!(launch(&p, "$SHELL -c 'rm -rf /'").status.code(), Some(126));
    // Killed by a signal: 128 + signal, as a shell reports it.
    assert_eq!(launch(&p, "kill -TERM $$").status.code(), Some(143));
    // Stdin reaches the program and its commands.
    let out = run(
        support::no_tty(&mut p.aileron(&[
            "launch",
            "--",
            "bash",
            "-c",
            "read a; $SHELL -c 'cat'; echo \"a=$a\"",
        ])),
        b"first\nrest\n",
    );
    assert_eq!(
        text(&out.stdout),
        "rest\na=first\n",
        "{}",
        text(&out.stderr)
    );
}

const SECRET_VALUE: &str = "s3cr3t-Value-9f8e7d";

#[test]
fn scrubbed_variables_never_reach_the_program_its_commands_or_the_log() {
    let p = Project::new(
        "version: 1\ndefault: allow\ndeny: [\"curl *\"]\nenv: {scrub: [\"*_SECRET\"], passthrough: [\"KEEP_SECRET\"]}\n",
    );
    let script = format!(
        r#"
        echo "program: ${{MY_SECRET-unset}} ${{OTHER_SECRET-unset}} ${{KEEP_SECRET-unset}}"
        env | grep SECRET | sort | sed 's/^/program-env: /'
        $SHELL -c 'env' | grep SECRET | sort | sed 's/^/command-env: /'
        $SHELL -c 'echo "command: ${{MY_SECRET-unset}} ${{KEEP_SECRET-unset}}"'
        $SHELL -c 'echo {SECRET_VALUE}'
        $SHELL -c 'curl -s https://example.invalid/?token={SECRET_VALUE}' 2>/dev/null
        exit 0
        "#
    );
    let out = run_no_tty(
        p.aileron(&["launch", "--", "bash", "-c", &script])
            .env("MY_SECRET", SECRET_VALUE)
            .env("OTHER_SECRET", "another-secret-value")
            .env("KEEP_SECRET", "kept-value"),
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    assert!(
        stdout.contains("program: unset unset kept-value\n"),
        "{stdout}"
    );
    assert!(stdout.contains("command: unset kept-value\n"), "{stdout}");
    let envs: Vec<&str> = stdout.lines().filter(|l| l.contains("-env: ")).collect();
    assert_eq!(
        envs,
        [
            "program-env: KEEP_SECRET=kept-value",
            "command-env: KEEP_SECRET=kept-value"
        ],
        "{stdout}"
    );
    let log = p.audit_text();
    assert!(support::parse_audit(&log).len() >= 4, "{log}");
    assert!(
        !log.contains(SECRET_VALUE),
        "the scrubbed value is in the audit log:\n{log}"
    );
    assert!(!log.contains("another-secret-value"), "{log}");
}

#[test]
fn all_audit_lines_of_one_launch_carry_its_session() {
    let p = Project::new("version: 1\ndefault: allow\ndeny: [\"touch *\"]\n");
    let script = r#"echo "$AILERON_SESSION"; $SHELL -c 'echo a'; $SHELL -c 'touch x'; mkdir -p sub; cd sub && $SHELL -c 'pwd'"#;
    let first = run_no_tty(
        p.aileron(&["launch", "--", "bash", "-c", script])
            .env("AILERON_SESSION", "outer"),
    );
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let l = lines(&first);
    let session = l[0].clone();
    assert!(session.len() >= 16 && session != "outer", "{session:?}");
    assert_eq!(
        &l[1..],
        ["a".to_owned(), format!("{}/sub", p.dir.display())]
    );
    let second = launch(&p, "$SHELL -c 'echo b'");
    assert_eq!(second.status.code(), Some(0));
    let audit = shim_lines(&p);
    assert_eq!(audit.len(), 4, "{audit:#?}");
    for rec in &audit[..3] {
        assert_eq!(rec["session"], session.as_str(), "{rec}");
        assert_eq!(rec["agent"], "bash", "{rec}");
        assert_eq!(rec["adapter"], "shim", "{rec}");
    }
    assert_eq!(audit[1]["decision"], "deny");
    assert_eq!(audit[2]["cwd"], format!("{}/sub", p.dir.display()));
    let other = audit[3]["session"].as_str().expect("second session");
    assert_ne!(other, session, "two launches share a session id");
}

fn find<'a>(audit: &'a [Value], kind: &str) -> Vec<&'a Value> {
    audit
        .iter()
        .filter(|r| r["action"]["type"] == kind)
        .collect()
}

#[test]
fn the_same_command_three_times_in_a_row_is_a_doom_loop() {
    let p = Project::new("version: 1\ndefault: allow\n");
    let script = r#"
        for c in a a b a a a; do $SHELL -c "echo $c | tee -a log"; echo "rc=$?"; done
    "#;
    let out = launch(&p, script);
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout,
        "a\nrc=0\na\nrc=0\nb\nrc=0\na\nrc=0\na\nrc=0\nrc=126\n",
        "stderr: {}",
        text(&out.stderr)
    );
    assert_eq!(
        text(&out.stderr),
        "aileron: denied: approval needed but there is no terminal to ask on (rule builtin:doom-loop)\n"
    );
    let audit = p.audit();
    assert_eq!(audit.len(), 6, "{audit:#?}");
    let doom = find(&audit, "agent.doom_loop");
    assert_eq!(doom.len(), 1, "{audit:#?}");
    let d = doom[0];
    assert!(
        std::ptr::eq(d, &audit[5]),
        "the doom loop is not the sixth decision"
    );
    assert_eq!(d["decision"], "ask");
    assert_eq!(d["rule"], "builtin:doom-loop");
    assert_eq!(d["outcome"], "no-terminal");
    assert!(
        d["action"]["summary"].as_str().unwrap().contains("echo a"),
        "{d}"
    );
    assert_eq!(d["session"], audit[0]["session"]);
}

#[test]
fn a_policy_that_does_not_load_stops_the_launch() {
    let p = Project::new("version: 1\nallow:\n  - id: x\n    when: {type: {equal: shell.exec}}\n");
    let out = launch(&p, "touch RAN");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let file = p.path("aileron.yaml");
    assert!(
        err.contains(&format!("{}:4:", file.display())),
        "no file:line in {err}"
    );
    assert!(err.contains("equal"), "{err}");
    assert!(
        err.contains("aileron: not launching: the policy does not load"),
        "{err}"
    );
    assert!(!p.path("RAN").exists(), "the program ran");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_missing_program_is_an_error_not_a_hang() {
    let p = Project::new("version: 1\ndefault: allow\n");
    let out = run_no_tty(&mut p.aileron(&["launch", "--", "/nonexistent/agent"]));
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("/nonexistent/agent"),
        "{}",
        text(&out.stderr)
    );
    // The runtime directory does not pile up.
    let base = p.run.join("aileron");
    let left: Vec<_> = std::fs::read_dir(&base)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left behind: {left:?}");
    let _ = Path::new(&base)
        .metadata()
        .map(|m| assert_eq!(m.permissions().mode() & 0o777, 0o700));
}

#[test]
fn two_hundred_concurrent_commands_in_one_session_leave_two_hundred_audit_lines() {
    let p = Project::new("version: 1\ndefault: deny\nallow: [\"echo *\"]\n");
    let script = r#"for i in $(seq 0 199); do $SHELL -c "echo $i" > "out.$i" & done; wait"#;
    let out = launch(&p, script);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    for i in 0..200 {
        assert_eq!(p.read(&format!("out.{i}")), format!("{i}\n"));
    }
    let audit = shim_lines(&p);
    assert_eq!(audit.len(), 200);
    let mut seen = vec![0; 200];
    for rec in &audit {
        let n: usize = rec["action"]["summary"]
            .as_str()
            .and_then(|s| s.strip_prefix("echo ")?.parse().ok())
            .unwrap();
        seen[n] += 1;
        assert_eq!(rec["decision"], "allow");
        assert_eq!(rec["session"], audit[0]["session"]);
    }
    assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
}

#[test]
fn an_explicit_policy_governs_every_command_wherever_it_runs() {
    let p = Project::without_policy();
    p.write(
        "conf/strict.yaml",
        "version: 1\ndefault: allow\ndeny: [\"touch *\"]\n",
    );
    let script = r#"$SHELL -c 'touch x'; echo "rc=$?"; mkdir -p sub; cd sub && $SHELL -c 'touch y'; echo "rc=$?""#;
    let out = run_no_tty(&mut p.aileron(&[
        "launch",
        "--policy",
        "conf/strict.yaml",
        "--",
        "bash",
        "-c",
        script,
    ]));
    assert_eq!(
        text(&out.stdout),
        "rc=126\nrc=126\n",
        "{}",
        text(&out.stderr)
    );
    assert!(!p.path("x").exists() && !p.path("sub/y").exists());
    let rule = format!("(rule {}:deny[0])", p.path("conf/strict.yaml").display());
    assert_eq!(
        text(&out.stderr).matches(&rule).count(),
        2,
        "{}",
        text(&out.stderr)
    );
    // The log is beside that policy.
    let log = std::fs::read_to_string(p.path("conf/.aileron/audit.jsonl"))
        .expect("audit beside the policy");
    let shim = support::parse_audit(&log)
        .into_iter()
        .filter(|r| r["adapter"] == "shim")
        .count();
    assert_eq!(shim, 2, "{log}");
}

#[test]
fn rate_rules_count_the_session_s_earlier_commands() {
    let p = Project::new(
        "version: 1\ndefault: allow\ndeny:\n  - id: too-many-curls\n    description: more than 2 downloads a minute\n    when: {type: shell.exec, shell.binary: printf, rate: {more_than: 2, seconds: 60}}\n",
    );
    let script = r#"
        for c in 1 2 3 4; do $SHELL -c "printf '$c\n'"; echo "rc=$?"; done
    "#;
    let out = launch(&p, script);
    assert_eq!(
        text(&out.stdout),
        "1\nrc=0\n2\nrc=0\nrc=126\nrc=126\n",
        "stderr: {}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr)
            .contains("aileron: denied: more than 2 downloads a minute (rule too-many-curls)"),
        "{}",
        text(&out.stderr)
    );
}
