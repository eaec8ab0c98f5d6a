//! How the session decides the execs an exec supervisor reports: the same
//! policy as the shim's lines, contexts so that a human answers for a
//! line and not for each program it starts, and nothing more lenient than
//! the policy where no line was decided.

use aileron_config::LoadOptions;
use aileron_session::prompt::{Answer, Prompter, Question};
use aileron_session::{Config, Decider, ExecCall, ExecRuling};
use std::sync::{Arc, Mutex};

/// Records the questions; answers as told.
struct Human {
    answer: fn() -> Answer,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Prompter for Human {
    fn ask(&self, q: &Question) -> Answer {
        self.asked.lock().unwrap().push(q.command.clone());
        (self.answer)()
    }
}

struct Session {
    _tmp: tempfile::TempDir,
    dir: std::path::PathBuf,
    decider: Decider,
    asked: Arc<Mutex<Vec<String>>>,
}

fn session(policy: &str, answer: fn() -> Answer) -> Session {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("proj");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(dir.join("aileron.yaml"), policy).unwrap();
    let mut load = LoadOptions::from_env(dir.clone());
    load.home = home.clone();
    load.data_dir = home.join(".aileron");
    load.user_settings = false;
    load.auto_profiles = false;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let decider = Decider::new(
        Config {
            load,
            cache_dir: None,
            session_id: Some("s1".into()),
            agent: Some("agent".into()),
            real_shell: "/bin/bash".into(),
            secrets: Vec::new(),
            adapter: "shim".into(),
        },
        Box::new(Human {
            answer,
            asked: Arc::clone(&asked),
        }),
    );
    Session {
        _tmp: tmp,
        dir,
        decider,
        asked,
    }
}

impl Session {
    fn call(&self, lineage: &[(u32, u64)], exe: &str, argv: &[&str]) -> ExecCall {
        ExecCall {
            pid: lineage[0].0,
            lineage: lineage.to_vec(),
            cwd: self.dir.to_string_lossy().into_owned(),
            exe: exe.into(),
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
            code_env: Vec::new(),
            interpreter: Vec::new(),
        }
    }

    fn decide(&self, lineage: &[(u32, u64)], exe: &str, argv: &[&str]) -> ExecRuling {
        self.decider.decide_exec(&self.call(lineage, exe, argv))
    }

    fn audit(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.dir.join(".aileron/audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

fn denied(r: &ExecRuling) -> bool {
    matches!(r, ExecRuling::Deny(_))
}

#[test]
fn an_exec_outside_any_decided_line_is_decided_by_the_policy_alone() {
    let s = session(
        "version: 1\ndefault: ask\nallow: [\"ls *\"]\ndeny: [\"touch *\"]\n",
        || Answer::Unavailable("no terminal".into()),
    );
    assert_eq!(
        s.decide(&[(100, 1)], "/usr/bin/ls", &["ls", "-la"]),
        ExecRuling::Allow
    );
    assert!(denied(&s.decide(
        &[(101, 1)],
        "/usr/bin/touch",
        &["touch", "x"]
    )));
    // No rule: the default asks, and nobody can answer here.
    assert!(denied(&s.decide(&[(102, 1)], "/usr/bin/make", &["make"])));
    assert_eq!(s.asked(), ["make"]);
    let audit = s.audit();
    assert_eq!(audit.len(), 3, "{audit:#?}");
    assert!(audit.iter().all(|r| r["adapter"] == "supervisor"));
    assert_eq!(audit[0]["action"]["facets"]["shell"]["exe"], "/usr/bin/ls");
    assert_eq!(audit[1]["decision"], "deny");
}

#[test]
fn inside_an_approved_command_an_ask_default_gives_way_but_rules_still_apply() {
    let s = session(
        "version: 1\ndefault: ask\ndeny: [\"curl *\"]\nask: [\"git push *\"]\n",
        || Answer::Once,
    );
    // The human approves `make all` once; what it starts is inside it.
    let make = [(200, 7)];
    assert_eq!(
        s.decide(&make, "/usr/bin/make", &["make", "all"]),
        ExecRuling::Allow
    );
    assert_eq!(s.asked(), ["make all"]);
    assert_eq!(
        s.decide(&[(201, 8), (200, 7)], "/usr/bin/cc", &["cc", "-c", "a.c"]),
        ExecRuling::Allow
    );
    assert_eq!(s.asked().len(), 1, "asked again inside the approved line");
    // A deny rule still denies; an ask rule still asks.
    assert!(denied(&s.decide(
        &[(202, 9), (200, 7)],
        "/usr/bin/curl",
        &["curl", "http://x"]
    )));
    s.decide(
        &[(203, 9), (200, 7)],
        "/usr/bin/git",
        &["git", "push", "origin"],
    );
    assert_eq!(s.asked(), ["make all", "git push origin"]);
    // The same number in another process (another start time) is not inside `make`.
    s.decide(&[(204, 9), (200, 99)], "/usr/bin/cc", &["cc"]);
    assert_eq!(s.asked().len(), 3);
}

#[test]
fn a_deny_default_stays_a_deny_inside_an_allowed_command() {
    let s = session("version: 1\ndefault: deny\nallow: [\"make *\"]\n", || {
        Answer::Once
    });
    assert_eq!(
        s.decide(&[(300, 1)], "/usr/bin/make", &["make", "all"]),
        ExecRuling::Allow
    );
    assert!(denied(&s.decide(
        &[(301, 2), (300, 1)],
        "/usr/bin/curl",
        &["curl", "x"]
    )));
    assert!(s.asked().is_empty());
}

#[test]
fn a_program_is_decided_by_its_name_and_by_the_file_it_loads() {
    let s = session("version: 1\ndefault: allow\ndeny: [\"rm *\"]\n", || {
        Answer::Once
    });
    // `ls` by name, `rm` by the file: the stricter holds.
    assert!(denied(&s.decide(
        &[(400, 1)],
        "/usr/bin/rm",
        &["ls", "-rf", "x"]
    )));
    // A loader variable goes in front of the line, where the built-in rule sees it.
    let mut c = s.call(&[(401, 1)], "/usr/bin/ls", &["ls"]);
    c.code_env = vec![("LD_PRELOAD".into(), "/tmp/evil.so".into())];
    let ruling = s.decider.decide_exec(&c);
    assert_eq!(s.asked(), ["ls"], "the human is asked about the preload");
    let audit = s.audit();
    let last = audit.last().unwrap();
    assert_eq!(
        last["action"]["facets"]["shell"]["env_changes"],
        serde_json::json!(["LD_PRELOAD"]),
        "{last:#}"
    );
    assert_eq!(last["rule"], "builtin:env-exec", "{last:#}");
    assert_eq!(ruling, ExecRuling::Allow, "the human said yes once");
}

#[test]
fn a_program_running_elsewhere_is_decided_by_the_launch_s_policy() {
    let s = session("version: 1\ndefault: allow\ndeny: [\"touch *\"]\n", || {
        Answer::Unavailable("no terminal".into())
    });
    // A build tool compiles a dependency in its own directory, where no
    // aileron.yaml is: the launch's policy still decides, not the
    // built-in default (ask, which nobody could answer here).
    let elsewhere = |argv: &[&str], exe: &str| {
        let mut c = s.call(&[(500, 1)], exe, argv);
        c.cwd = "/".into();
        s.decider.decide_exec(&c)
    };
    assert_eq!(
        elsewhere(&["rustc", "lib.rs"], "/usr/bin/rustc"),
        ExecRuling::Allow
    );
    assert!(denied(&elsewhere(&["touch", "x"], "/usr/bin/touch")));
    assert!(s.asked().is_empty());
    let audit = s.audit();
    assert_eq!(audit.len(), 2, "both lines in the launch project's log");
    assert_eq!(audit[1]["action"]["facets"]["shell"]["working_dir"], "/");
}

/// The reason of the last audit line, for the leaving checks.
fn last_reason(s: &Session) -> String {
    let audit = s.audit();
    let last = audit.last().expect("an audit line");
    last["reason"].as_str().unwrap_or_default().to_owned()
}

/// `sudo`, `unshare`, `nsenter`, `ssh` inside an allowed `make` get the
/// policy's own verdict (here the `ask` default, which nobody can answer),
/// however they are started: by name, by the loader, through a shell.
/// What stays in the box still gives way to `make`.
#[test]
fn a_program_that_leaves_the_box_is_decided_on_its_own_inside_an_allowed_command() {
    let s = session("version: 1\ndefault: ask\nallow: [\"make *\"]\n", || {
        Answer::Unavailable("no terminal".into())
    });
    let make = [(600, 1)];
    assert_eq!(
        s.decide(&make, "/usr/bin/make", &["make", "all"]),
        ExecRuling::Allow
    );
    let inside = |pid: u32| [(pid, 2), (600, 1)];
    assert_eq!(
        s.decide(&inside(601), "/usr/bin/cc", &["cc", "-c", "a.c"]),
        ExecRuling::Allow,
        "a compiler gives way to make"
    );
    let leaving: &[(&str, &[&str], &str)] = &[
        (
            "/usr/bin/sudo",
            &["sudo", "make", "install"],
            "`sudo` leaves the box",
        ),
        (
            "/usr/bin/unshare",
            &["unshare", "-n", "true"],
            "`unshare` leaves the box",
        ),
        (
            "/usr/bin/nsenter",
            &["nsenter", "-t", "1", "-n"],
            "`nsenter` leaves the box",
        ),
        (
            "/lib64/ld-linux-x86-64.so.2",
            &["ld-linux-x86-64.so.2", "/usr/bin/unshare", "-n", "true"],
            "`unshare` leaves the box",
        ),
        (
            "/bin/bash",
            &["bash", "-c", "make && ssh host uptime"],
            "`ssh` leaves the box",
        ),
        (
            "/usr/bin/crontab",
            &["crontab", "-l"],
            "`crontab` leaves the box",
        ),
        // A caller's own argv[0]: the file loaded is named as Debian's
        // alternatives resolve `telnet`.
        (
            "/usr/bin/telnet.netkit",
            &["cat"],
            "`telnet.netkit` leaves the box",
        ),
        (
            "/usr/bin/busybox",
            &["busybox", "nc", "-l", "-p", "8080"],
            "`nc` leaves the box",
        ),
        (
            "/usr/bin/tmux",
            &["tmux", "send-keys", "-t", "main", "make deploy", "Enter"],
            "`tmux` leaves the box",
        ),
    ];
    for (i, (exe, argv, why)) in leaving.iter().enumerate() {
        let ruling = s.decide(&inside(610 + i as u32), exe, argv);
        assert!(denied(&ruling), "{argv:?} ran inside make: {ruling:?}");
        let reason = last_reason(&s);
        assert!(
            reason.contains(why) && reason.contains("decided on its own"),
            "{argv:?}: {reason}"
        );
    }
    assert_eq!(s.asked().len(), leaving.len(), "{:?}", s.asked());
}

/// A rule's verdict for a leaving program holds inside a context: an
/// allow runs it without asking, a deny refuses it.
#[test]
fn a_leaving_program_s_own_rules_decide_it_inside_an_allowed_command() {
    let s = session(
        "version: 1\ndefault: ask\nallow: [\"make *\", \"ssh -V\"]\ndeny: [\"sudo *\"]\n",
        || Answer::Unavailable("no terminal".into()),
    );
    s.decide(&[(700, 1)], "/usr/bin/make", &["make"]);
    let inside = |pid: u32| [(pid, 2), (700, 1)];
    assert_eq!(
        s.decide(&inside(701), "/usr/bin/ssh", &["ssh", "-V"]),
        ExecRuling::Allow
    );
    assert!(denied(&s.decide(
        &inside(702),
        "/usr/bin/sudo",
        &["sudo", "id"]
    )));
    // Allowed, `ssh` is the context of what it starts, as any allowed exec.
    assert_eq!(
        s.decide(&[(703, 3), (701, 2), (700, 1)], "/usr/bin/cat", &["cat"]),
        ExecRuling::Allow
    );
    assert!(s.asked().is_empty(), "{:?}", s.asked());
}

/// A command the human approved as part of a line is not asked again
/// when the line runs it, unless its program leaves the box: then the
/// enclosing approval does not answer for it.
#[test]
fn an_enclosing_approval_does_not_answer_for_a_leaving_program() {
    let s = session(
        "version: 1\ndefault: ask\nallow: [\"env *\"]\nask: [\"ssh *\", \"git push *\"]\n",
        || Answer::Once,
    );
    let line = "git push origin && ssh host uptime";
    assert_eq!(
        s.decide(&[(800, 1)], "/bin/bash", &["bash", "-c", line]),
        ExecRuling::Allow
    );
    assert_eq!(s.asked().len(), 1);
    let inside = |pid: u32| [(pid, 2), (800, 1)];
    // Run under `env` (allowed): each is then a command of the approved line.
    s.decide(
        &inside(801),
        "/usr/bin/env",
        &["env", "git", "push", "origin"],
    );
    assert_eq!(
        s.asked().len(),
        1,
        "the approved `git push` was asked again"
    );
    s.decide(
        &inside(802),
        "/usr/bin/env",
        &["env", "ssh", "host", "uptime"],
    );
    assert_eq!(s.asked().len(), 2, "{:?}", s.asked());
    assert!(
        last_reason(&s).contains("`ssh` leaves the box"),
        "{}",
        last_reason(&s)
    );
}

/// A copy of `true` with the set-user-ID bit (the user's own: still
/// setuid) is decided on its own inside `make`, whatever its name; the
/// same copy without the bit gives way to `make`.
#[test]
fn a_setuid_file_is_decided_on_its_own_inside_an_allowed_command() {
    use std::os::unix::fs::PermissionsExt;
    let s = session("version: 1\ndefault: ask\nallow: [\"make *\"]\n", || {
        Answer::Unavailable("no terminal".into())
    });
    let plain = s.dir.join("plain");
    let suid = s.dir.join("helper");
    for (file, mode) in [(&plain, 0o755), (&suid, 0o4755)] {
        std::fs::copy("/usr/bin/true", file).unwrap();
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let (plain, suid) = (plain.to_string_lossy(), suid.to_string_lossy());
    s.decide(&[(900, 1)], "/usr/bin/make", &["make"]);
    let inside = |pid: u32| [(pid, 2), (900, 1)];
    assert_eq!(
        s.decide(&inside(901), &plain, &["plain"]),
        ExecRuling::Allow
    );
    assert!(denied(&s.decide(&inside(902), &suid, &["helper"])));
    let reason = last_reason(&s);
    assert!(reason.contains("is set-user-ID"), "{reason}");
    // Through a shell the give-way let run: its line was not decided on
    // its own, so the file's exec is not part of it.
    let shell = [(903, 2), (900, 1)];
    assert_eq!(
        s.decide(&shell, "/bin/bash", &["bash", "-c", "./helper"]),
        ExecRuling::Allow
    );
    assert!(denied(&s.decide(
        &[(904, 3), (903, 2), (900, 1)],
        &suid,
        &["./helper"]
    )));
    assert_eq!(s.asked(), ["helper", "helper"]);
}

/// The same file run by a line the policy decided alone (the agent's own
/// shell, which the human approved) is part of that line: not asked twice.
#[test]
fn a_setuid_file_of_a_line_decided_on_its_own_is_not_asked_twice() {
    use std::os::unix::fs::PermissionsExt;
    let s = session("version: 1\ndefault: ask\n", || Answer::Once);
    let suid = s.dir.join("helper");
    std::fs::copy("/usr/bin/true", &suid).unwrap();
    std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let shell = [(950, 1)];
    assert_eq!(
        s.decide(&shell, "/bin/bash", &["bash", "-c", "./helper"]),
        ExecRuling::Allow
    );
    assert_eq!(
        s.decide(
            &[(951, 2), (950, 1)],
            &suid.to_string_lossy(),
            &["./helper"]
        ),
        ExecRuling::Allow
    );
    assert_eq!(s.asked().len(), 1, "{:?}", s.asked());
}

/// A file with capabilities (`setcap`, which needs `CAP_SETFCAP`: root
/// here) is decided on its own inside `make` like a setuid one.
#[test]
fn a_file_with_capabilities_is_decided_on_its_own_inside_an_allowed_command() {
    let s = session("version: 1\ndefault: ask\nallow: [\"make *\"]\n", || {
        Answer::Unavailable("no terminal".into())
    });
    let file = s.dir.join("pinger");
    std::fs::copy("/usr/bin/true", &file).unwrap();
    let set = std::process::Command::new("setcap")
        .arg("cap_net_raw+ep")
        .arg(&file)
        .output();
    if !set.as_ref().is_ok_and(|o| o.status.success()) {
        // In CI a missing `setcap` or privilege is a failure, not a pass.
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "setcap cannot run here: {set:?}"
        );
        eprintln!("skipped: setcap cannot run here: {set:?}");
        return;
    }
    s.decide(&[(990, 1)], "/usr/bin/make", &["make"]);
    let ruling = s.decide(&[(991, 2), (990, 1)], &file.to_string_lossy(), &["pinger"]);
    assert!(denied(&ruling), "{ruling:?}");
    let reason = last_reason(&s);
    assert!(reason.contains("has file capabilities"), "{reason}");
}

/// A leaving program that a line decided by the policy alone names (the
/// agent's own `bash -c`, approved) was decided on its own with the line:
/// the shell running it is not asked again. Started by another program
/// of the line, it is.
#[test]
fn a_leaving_program_named_by_a_line_decided_alone_is_not_asked_twice() {
    let s = session("version: 1\ndefault: ask\n", || Answer::Once);
    let line = "ssh host uptime; python3 tool.py";
    assert_eq!(
        s.decide(&[(1000, 1)], "/bin/bash", &["bash", "-c", line]),
        ExecRuling::Allow
    );
    assert_eq!(s.asked().len(), 1);
    let shell = |pid: u32| [(pid, 2), (1000, 1)];
    assert_eq!(
        s.decide(&shell(1001), "/usr/bin/ssh", &["ssh", "host", "uptime"]),
        ExecRuling::Allow
    );
    assert_eq!(
        s.decide(&shell(1002), "/usr/bin/python3", &["python3", "tool.py"]),
        ExecRuling::Allow
    );
    assert_eq!(s.asked().len(), 1, "{:?}", s.asked());
    s.decide(
        &[(1003, 3), (1002, 2), (1000, 1)],
        "/usr/bin/ssh",
        &["ssh", "host", "uptime"],
    );
    assert_eq!(s.asked().len(), 2, "{:?}", s.asked());
}
