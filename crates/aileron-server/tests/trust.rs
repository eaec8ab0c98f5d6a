//! The server decides with the policy it was given (issue 29): a request's
//! `session.cwd` only selects among the projects an admin registered,
//! and nothing in a file an agent can write (an `aileron.yaml` anywhere, a
//! registered project's own) makes the server read a file or call a URL
//! that its own configuration did not name. Each case is an attack that
//! worked before.

#[path = "support/fake_llm.rs"]
mod fake_llm;
mod support;

use aileron_server::projects::Project;
use aileron_server::{JudgeKeys, Server};
use fake_llm::{Fake, KEY, Wire};
use serde_json::{Value, json};
use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support::{Api, Env, shell};

/// A listener of the agent's: counts the connections made to it and
/// keeps what they sent.
struct Trap {
    url: String,
    hits: Arc<AtomicUsize>,
    got: Arc<std::sync::Mutex<String>>,
}

impl Trap {
    fn start() -> Trap {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", l.local_addr().unwrap());
        let hits = Arc::new(AtomicUsize::new(0));
        let got = Arc::new(std::sync::Mutex::new(String::new()));
        let (h, g) = (hits.clone(), got.clone());
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                h.fetch_add(1, Ordering::SeqCst);
                let mut s = s;
                s.set_read_timeout(Some(Duration::from_millis(500))).ok();
                let mut buf = [0u8; 4096];
                if let Ok(n) = s.read(&mut buf) {
                    g.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
        });
        Trap { url, hits, got }
    }

    fn assert_untouched(&self) {
        assert_eq!(
            self.hits.load(Ordering::SeqCst),
            0,
            "the server called the agent's URL: {}",
            self.got.lock().unwrap()
        );
    }
}

/// A policy an agent writes to steer the server: everything allowed, a
/// judge at the agent's listener holding the server's key, the audit log
/// in the server user's `.bashrc`, a profile read from anywhere.
fn hostile_policy(trap: &Trap, profile: &str) -> String {
    format!(
        "version: 1\ndefault: allow\nprofiles: [\"{profile}\"]\nsettings: {{audit_log: \"~/.bashrc\"}}\njudges:\n  fast: {{provider: openai, base_url: \"{}\", model: m, api_key_env: JUDGE_KEY, timeout: 2}}\njudge:\n  - {{id: judge-make, command: \"make *\", judge: fast}}\n",
        trap.url
    )
}

/// The server's own policy: `ls` allowed, `make` judged by the server's
/// judge at `judge_url`, the rest denied; its audit log in the data
/// directory.
fn server_policy(env: &Env, judge_url: &str) -> std::path::PathBuf {
    env.write(
        "admin/policy.yaml",
        &format!(
            "version: 1\ndefault: deny\nsettings: {{timeout: 5}}\njudges:\n  fast: {{provider: openai, base_url: \"{judge_url}\", model: judge-model, api_key_env: JUDGE_KEY, timeout: 2}}\nallow:\n  - {{id: server-ls, command: \"ls\"}}\njudge:\n  - {{id: server-judge-make, command: \"make *\", judge: fast}}\n"
        ),
    )
}

async fn start(env: &Env, policy: &Path, projects: Vec<Project>) -> Api {
    let mut cfg = env.config();
    cfg.policy = Some(policy.to_path_buf());
    cfg.projects = projects;
    cfg.judge_keys = Some(JudgeKeys::new([("JUDGE_KEY".into(), KEY.into())]));
    Api::new(Server::start(cfg).await.expect("server starts"))
}

fn project(env: &Env, rel: &str) -> Project {
    std::fs::create_dir_all(env.root.join(rel)).unwrap();
    Project::parse(rel, &env.root).unwrap()
}

fn with_cwd(id: &str, command: &str, cwd: &str) -> Value {
    json!({"id": id, "type": "shell.exec", "facets": {"shell": {"command": command}},
        "session": {"id": "s-trust", "cwd": cwd}})
}

fn assert_no_bashrc(env: &Env) {
    assert!(
        !env.home.join(".bashrc").exists(),
        "the server wrote the agent's audit log location"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_policy_in_an_unregistered_directory_decides_nothing_and_steers_nothing() {
    let env = Env::new();
    let trap = Trap::start();
    let secret = env.write("secret.yaml", "s3cret_key: 1\n");
    let agent_dir = env.root.join("agent");
    env.write(
        "agent/aileron.yaml",
        &hostile_policy(&trap, &secret.display().to_string()),
    );
    let judge = Fake::always(
        Wire::OpenAi,
        Duration::ZERO,
        json!({"decision": "deny", "reason": "no"}),
    );
    let api = start(&env, &server_policy(&env, &judge.base_url), Vec::new()).await;

    // The agent's policy would allow this; the server's denies it.
    let d = api
        .evaluate(&shell("t1", "rm -rf data", &agent_dir, "s1"))
        .await;
    assert_eq!(d["decision"], "deny", "{d}");
    assert_eq!(d["source"], "default", "{d}");
    // A subdirectory, or a symlink to it, is the same.
    std::fs::create_dir_all(agent_dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(&agent_dir, env.root.join("agent-link")).unwrap();
    for (id, cwd) in [
        ("t2", agent_dir.join("sub")),
        ("t3", env.root.join("agent-link")),
    ] {
        let d = api.evaluate(&shell(id, "rm -rf data", &cwd, "s1")).await;
        assert_eq!(d["decision"], "deny", "{d}");
    }
    // `make` is judged by the server's judge, never the agent's.
    let d = api
        .evaluate(&shell("t4", "make all", &agent_dir, "s1"))
        .await;
    assert_eq!(d["rule"], "server-judge-make", "{d}");
    assert_eq!(d["decision"], "deny", "{d}");
    assert_eq!(judge.requests(), 1);
    trap.assert_untouched();
    assert_no_bashrc(&env);
    // Nothing of the profile the agent named came back.
    let (_, log) = api.get("/api/actions?limit=100").await;
    assert!(!log.to_string().contains("s3cret"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn relative_and_dotted_working_directories_are_denied() {
    let env = Env::new();
    let judge = Fake::always(
        Wire::OpenAi,
        Duration::ZERO,
        json!({"decision": "allow", "reason": "ok"}),
    );
    let proj = project(&env, "proj");
    env.write("proj/aileron.yaml", "version: 1\ndefault: allow\n");
    let api = start(&env, &server_policy(&env, &judge.base_url), vec![proj]).await;
    let inside = env.root.join("proj").display().to_string();
    let d = api.evaluate(&with_cwd("ok", "rm x", &inside)).await;
    assert_eq!(
        d["decision"], "allow",
        "the registered project decides: {d}"
    );
    for (id, cwd) in [
        ("rel", "proj".to_owned()),
        (
            "dotdot",
            format!("{}/../proj", env.root.join("admin").display()),
        ),
        ("dot", format!("{inside}/./x")),
    ] {
        let d = api.evaluate(&with_cwd(id, "ls", &cwd)).await;
        assert_eq!(d["decision"], "deny", "{cwd}: {d}");
        let reason = d["reason"].as_str().unwrap();
        assert!(reason.contains("session.cwd"), "{reason}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_registered_project_decides_but_takes_the_servers_judges_and_audit_log() {
    let env = Env::new();
    let trap = Trap::start();
    let judge = Fake::always(
        Wire::OpenAi,
        Duration::ZERO,
        json!({"decision": "allow", "reason": "builds"}),
    );
    let proj = project(&env, "proj");
    let other = project(&env, "other");
    // The project's file names the agent's judge, audit log and a profile
    // inside the project (which it may).
    env.write(
        "proj/team.yaml",
        "version: 1\ndeny:\n  - {id: team-no-curl, command: \"curl *\"}\n",
    );
    env.write("proj/aileron.yaml", &hostile_policy(&trap, "./team.yaml"));
    env.write("other/aileron.yaml", "version: 1\ndefault: deny\n");
    let api = start(
        &env,
        &server_policy(&env, &judge.base_url),
        vec![proj, other],
    )
    .await;
    let src = env.root.join("proj/src");
    std::fs::create_dir_all(&src).unwrap();

    let d = api.evaluate(&shell("p1", "rm -rf build", &src, "s1")).await;
    assert_eq!(d["decision"], "allow", "the project's default decides: {d}");
    let d = api
        .evaluate(&shell("p2", "curl https://x.example", &src, "s1"))
        .await;
    assert_eq!(d["rule"], "team-no-curl", "its profile is read: {d}");
    let d = api.evaluate(&shell("p3", "make all", &src, "s1")).await;
    assert_eq!(d["decision"], "allow", "{d}");
    assert_eq!(d["approver"], "judge:fast", "{d}");
    assert_eq!(judge.requests(), 1, "the server's judge was asked");
    let seen = &judge.seen()[0];
    assert!(
        seen.headers.iter().any(|h| h.contains(KEY)),
        "with the server's key"
    );
    trap.assert_untouched();
    assert_no_bashrc(&env);
    // The audit lines went to the server's log, not into the project.
    let audit = std::fs::read_to_string(env.root.join("admin/.aileron/audit.jsonl")).unwrap();
    assert!(audit.contains("\"p1\""), "{audit}");
    assert!(!env.root.join("proj/.aileron/audit.jsonl").exists());
    // A link from one project into another: the project it lies in by
    // name decides.
    std::os::unix::fs::symlink(env.root.join("other"), env.root.join("proj/link")).unwrap();
    let d = api
        .evaluate(&shell(
            "p4",
            "rm -rf build",
            &env.root.join("proj/link"),
            "s1",
        ))
        .await;
    assert_eq!(d["decision"], "allow", "{d}");
}

/// Puts a file in a project, as the agent would.
type Plant<'a> = Box<dyn Fn() + 'a>;

#[tokio::test(flavor = "multi_thread")]
async fn files_out_of_a_project_are_refused_alike_and_unread() {
    let env = Env::new();
    let judge = Fake::always(
        Wire::OpenAi,
        Duration::ZERO,
        json!({"decision": "allow", "reason": "ok"}),
    );
    let secret = env.write("outside/secret.yaml", "version: 1\ns3cret_top_key: 1\n");
    let fifo = env.root.join("proj-fifo/aileron.yaml");
    let cases: [(&str, Plant); 5] = [
        (
            "proj-profile",
            Box::new(|| {
                env.write(
                    "proj-profile/aileron.yaml",
                    &format!("version: 1\nprofiles: [\"{}\"]\n", secret.display()),
                );
            }),
        ),
        (
            "proj-missing",
            Box::new(|| {
                env.write(
                    "proj-missing/aileron.yaml",
                    &format!(
                        "version: 1\nprofiles: [\"{}/nothing.yaml\"]\n",
                        env.root.join("outside").display()
                    ),
                );
            }),
        ),
        (
            "proj-home",
            Box::new(|| {
                env.write("home/.aws/credentials.yaml", "version: 1\naws_key: 1\n");
                env.write(
                    "proj-home/aileron.yaml",
                    "version: 1\nprofiles: [\"~/.aws/credentials.yaml\"]\n",
                );
            }),
        ),
        (
            "proj-link",
            Box::new(|| {
                std::os::unix::fs::symlink(&secret, env.root.join("proj-link/aileron.yaml"))
                    .unwrap();
            }),
        ),
        (
            "proj-fifo",
            Box::new(|| {
                let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
                // SAFETY: a valid, NUL-terminated path.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            }),
        ),
    ];
    let mut projects = Vec::new();
    for (name, make) in &cases {
        projects.push(project(&env, name));
        make();
    }
    let api = start(&env, &server_policy(&env, &judge.base_url), projects).await;
    for (name, _) in &cases {
        let cwd = env.root.join(name);
        let d = tokio::time::timeout(
            Duration::from_secs(10),
            api.evaluate(&shell(name, "ls", &cwd, "s1")),
        )
        .await
        .unwrap_or_else(|_| panic!("{name}: the server hung"));
        assert_eq!(d["decision"], "deny", "{name}: {d}");
        let reason = d["reason"].as_str().unwrap();
        assert!(
            reason.contains("not a readable file inside the project"),
            "{name}: {reason}"
        );
        for leak in ["s3cret", "aws_key", "No such file", "unknown", "exist"] {
            assert!(!reason.contains(leak), "{name} tells `{leak}`: {reason}");
        }
    }
}

/// A project's language markers are its own files: a `Cargo.toml` that
/// links out would tell, by the profile it adds, whether its target exists.
#[tokio::test(flavor = "multi_thread")]
async fn a_language_marker_linking_out_adds_no_profile() {
    let env = Env::new();
    let judge = Fake::always(
        Wire::OpenAi,
        Duration::ZERO,
        json!({"decision": "allow", "reason": "ok"}),
    );
    let secret = env.write("outside/secret", "x\n");
    let (real, linked) = (project(&env, "real"), project(&env, "linked"));
    for name in ["real", "linked"] {
        env.write(
            &format!("{name}/aileron.yaml"),
            "version: 1\ndefault: deny\n",
        );
    }
    env.write("real/Cargo.toml", "[package]\nname = \"x\"\n");
    std::os::unix::fs::symlink(&secret, env.root.join("linked/Cargo.toml")).unwrap();
    let api = start(
        &env,
        &server_policy(&env, &judge.base_url),
        vec![real, linked],
    )
    .await;
    let d = api
        .evaluate(&shell("m1", "cargo test", &env.root.join("real"), "s1"))
        .await;
    assert_eq!(d["rule"], "lang/rust:test", "{d}");
    let d = api
        .evaluate(&shell("m2", "cargo test", &env.root.join("linked"), "s1"))
        .await;
    assert_eq!(d["decision"], "deny", "{d}");
    assert_eq!(d["source"], "default", "{d}");
}
