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
