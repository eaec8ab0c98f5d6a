//! The command line's finish, through the real `aileron` binary: shell
//! completions, the man page, colour, `status`, `why`, the agent names in
//! `--help`, `init`'s extras, and the messages of issue 17.

mod support;

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};
use support::{AILERON, Project, text};

fn run(p: &Project, args: &[&str]) -> Output {
    p.aileron(args).output().expect("aileron runs")
}

fn out(o: &Output) -> String {
    text(&o.stdout)
}

fn err(o: &Output) -> String {
    text(&o.stderr)
}

const ESC: &str = "\x1b[";

#[test]
fn bash_completion_names_the_subcommands_and_loads() {
    let p = Project::new("version: 1\n");
    let o = run(&p, &["completions", "bash"]);
    assert!(o.status.success(), "{}", err(&o));
    let script = out(&o);
    for sub in [
        "explain",
        "status",
        "why",
        "audit",
        "install",
        "completions",
        "man",
    ] {
        assert!(script.contains(sub), "{sub} missing");
    }
    // The agent names are offered for install.
    assert!(script.contains("claude-code"), "agents missing");
    let loaded = p
        .command("bash")
        .args([
            "-c",
            &format!("source <({AILERON} completions bash) && complete -p aileron"),
        ])
        .output()
        .unwrap();
    assert!(loaded.status.success(), "{}", err(&loaded));
    assert!(out(&loaded).contains("aileron"), "{}", out(&loaded));
    for shell in ["zsh", "fish"] {
        let o = run(&p, &["completions", shell]);
        assert!(o.status.success(), "{shell}");
        assert!(out(&o).contains("status"), "{shell}");
    }
    let o = run(&p, &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("bash"), "{}", err(&o));
}

#[test]
fn the_man_page_renders() {
    let p = Project::new("version: 1\n");
    let o = run(&p, &["man"]);
    assert!(o.status.success(), "{}", err(&o));
    let page = out(&o);
    assert!(page.starts_with(".ie \\n(.g .ds Aq") || page.contains(".TH aileron"));
    assert!(page.contains(".TH aileron 1"), "{page}");
    assert!(page.contains("Aileron decides"), "{page}");
    let man_exists = Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !man_exists {
        return;
    }
    let mut man = Command::new("man")
        .args(["-l", "-"])
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "80")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    man.stdin.take().unwrap().write_all(&o.stdout).unwrap();
    let rendered = man.wait_with_output().unwrap();
    assert!(rendered.status.success(), "{}", err(&rendered));
    let shown = out(&rendered);
    assert!(shown.contains("aileron"), "{shown}");
    assert!(shown.contains("status"), "{shown}");
}

#[test]
fn colour_only_on_a_terminal_or_when_asked_and_never_with_no_color() {
    let p = Project::new("version: 1\ndeny: [\"rm *\"]\n");
    let explain = ["explain", "--", "rm", "-rf", "x"];
    // Piped: plain.
    let plain = run(&p, &explain);
    assert!(plain.status.success());
    assert!(!out(&plain).contains(ESC), "{}", out(&plain));
    let mut args = vec!["--color", "always"];
    args.extend(explain);
    let always = run(&p, &args);
    assert!(
        out(&always).contains(&format!("{ESC}1m{ESC}31mdeny")),
        "{}",
        out(&always)
    );
    // Without the escapes, the same text.
    assert_eq!(strip(&out(&always)), out(&plain));
    let never = p
        .aileron(&["--color", "never", "explain", "--", "rm", "x"])
        .output()
        .unwrap();
    assert!(!out(&never).contains(ESC));

    // On a terminal (`script` gives it one): colour, unless NO_COLOR.
    let on_tty = |no_color: Option<&str>| {
        let mut cmd = p.command("script");
        cmd.args(["-qec", &format!("{AILERON} explain -- rm x"), "/dev/null"])
            .env("TERM", "xterm");
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        }
        let o = cmd.stdin(Stdio::null()).output().unwrap();
        out(&o)
    };
    if Command::new("script").arg("--version").output().is_ok() {
        assert!(on_tty(None).contains(ESC), "{}", on_tty(None));
        assert!(!on_tty(Some("1")).contains(ESC));
        // An empty NO_COLOR is not set (no-color.org).
        assert!(on_tty(Some("")).contains(ESC));
    }

    // audit: the decision coloured, the action id at the end.
    p.shim(&["-c", "rm x"]).output().unwrap();
    let audit = run(&p, &["audit", "--color", "always"]);
    let line = out(&audit);
    assert!(line.contains(&format!("{ESC}31mdeny")), "{line}");
    let id = p.audit()[0]["action"]["id"].as_str().unwrap().to_owned();
    assert!(
        strip(&line).trim_end().ends_with(&format!("[{id}]")),
        "{line}"
    );
    assert!(!out(&run(&p, &["audit"])).contains(ESC));
}

/// `s` without ANSI escapes.
fn strip(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn status_shows_the_policy_hooks_server_and_data_directory() {
    let p = Project::new("version: 1\ndefault: allow\n");
    // A server that listens: reachable.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let o = p
        .aileron(&["install", "claude-code"])
        .output()
        .expect("install");
    assert!(o.status.success(), "{}", err(&o));
    let o = p
        .aileron(&["status", "--json"])
        .env("AILERON_SERVER", &url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["policy"]["valid"], true);
    assert_eq!(
        v["policy"]["file"],
        p.path("aileron.yaml").to_str().unwrap()
    );
    assert_eq!(v["policy"]["default"], "allow");
    assert!(v["policy"]["sources"].as_array().unwrap().len() >= 2);
    assert_eq!(v["server"]["url"], url.as_str());
    assert_eq!(v["server"]["from"], "AILERON_SERVER");
    assert_eq!(v["server"]["reachable"], true);
    assert_eq!(v["data_dir"], p.home.join(".aileron").to_str().unwrap());
    // What `aileron launch` has the kernel enforce without --enforce.
    let enforce = v["launch"]["enforce"].as_str().unwrap();
    let on: Vec<&str> = ["exec", "files", "net"]
        .into_iter()
        .filter(|part| v["launch"][part]["available"] == true)
        .collect();
    let said = match on.as_slice() {
        [] => "none".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    assert_eq!(enforce, said, "{v}");
    for part in ["exec", "files", "net"] {
        let available = v["launch"][part]["available"].as_bool().unwrap();
        assert_eq!(available, v["launch"][part]["why"].is_null(), "{v}");
    }
    // Landlock's figures: writes are confined from ABI 1.
    let abi = v["launch"]["landlock"]["abi"].as_u64().unwrap();
    assert_eq!(v["launch"]["landlock"]["writes_confined"], abi >= 1, "{v}");
    if !cfg!(target_os = "linux") {
        assert_eq!(enforce, "none");
    }
    let hooks = v["hooks"].as_array().unwrap();
    let names: Vec<&str> = hooks.iter().map(|h| h["agent"].as_str().unwrap()).collect();
    for agent in ["claude-code", "codex", "gemini", "opencode"] {
        assert!(names.contains(&agent), "{agent}");
    }
    let claude = &hooks[0];
    assert_eq!(claude["agent"], "claude-code");
    assert_eq!(claude["project"].as_array().unwrap().len(), 1, "{claude}");
    assert_eq!(claude["user"].as_array().unwrap().len(), 0);
    assert_eq!(hooks[1]["project"].as_array().unwrap().len(), 0);

    // Nothing listens, the policy is broken: still a report, exit 0, fast.
    drop(listener);
    p.write("aileron.yaml", "version: 1\ndefault: maybe\n");
    let started = std::time::Instant::now();
    let o = p
        .aileron(&["status"])
        .env("AILERON_SERVER", &url)
        .output()
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(o.status.success(), "{}", err(&o));
    let s = out(&o);
    assert!(s.contains("does not load"), "{s}");
    assert!(s.contains("default"), "{s}");
    assert!(s.contains("not reachable"), "{s}");
    assert!(s.contains("kernel enforcement: "), "{s}");
    assert!(s.contains("claude-code  installed"), "{s}");
    assert!(s.contains("codex        not installed"), "{s}");
}

#[test]
fn why_shows_the_record_the_rule_and_the_decision_now() {
    let p =
        Project::new("version: 1\ndefault: allow\ndeny:\n  - id: no-rm\n    command: \"rm *\"\n");
    p.shim(&["-c", "rm -f nothing"]).output().unwrap();
    let id = p.audit()[0]["action"]["id"].as_str().unwrap().to_owned();
    let o = run(&p, &["why", &id]);
    assert!(o.status.success(), "{}", err(&o));
    let s = out(&o);
    assert!(s.contains("rm -f nothing"), "{s}");
    let at = format!("{}:4:5", p.path("aileron.yaml").display());
    assert!(s.contains(&format!("no-rm — written at {at}")), "{s}");
    assert!(s.contains("matching rules"), "{s}");
    assert!(s.contains("same as recorded: deny (rule no-rm)"), "{s}");

    // The policy changed since: it says so.
    p.write("aileron.yaml", "version: 1\ndefault: allow\n");
    let s = out(&run(&p, &["why", &id[..id.len() - 2]]));
    assert!(s.contains("not in the current policy"), "{s}");
    assert!(
        s.contains("differs: recorded deny (rule no-rm), now allow"),
        "{s}"
    );
    let v: Value = serde_json::from_str(&out(&run(&p, &["why", "--json", &id]))).unwrap();
    assert_eq!(v["record"]["action"]["id"], id.as_str());
    assert_eq!(v["now"]["decision"], "allow");
    assert_eq!(v["now"]["same"], false);

    let o = run(&p, &["why", "no-such-id"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("no decision with id `no-such-id`"),
        "{}",
        err(&o)
    );
}

#[test]
fn agent_names_are_a_fixed_list_in_help() {
    let p = Project::new("version: 1\n");
    for cmd in ["install", "uninstall", "hook"] {
        let help = out(&run(&p, &[cmd, "--help"]));
        assert!(
            help.contains("possible values: claude-code, codex, gemini, cursor, cline, opencode"),
            "{cmd}: {help}"
        );
    }
    let o = run(&p, &["install", "vim"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("claude-code"), "{}", err(&o));
}

#[test]
fn the_messages_of_issue_17() {
    let p = Project::new("version: 1\ndefault: allow\n");
    // The headline is a sentence about what Aileron is.
    let help = out(&run(&p, &["--help"]));
    let headline = help.lines().next().unwrap();
    assert!(
        headline.starts_with("Aileron decides") && headline.ends_with('.'),
        "{headline}"
    );
    // A command without `--`.
    let o = run(&p, &["explain", "git", "status"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("line: git status"), "{}", out(&o));
    let o = run(&p, &["explain", "--json", "git", "push", "--force"]);
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["line"], "git push --force");
    // A decision word that does not exist.
    let o = run(&p, &["audit", "--decision", "maybe"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("unknown decision `maybe`; expected one of: allow, deny, ask, judge"),
        "{}",
        err(&o)
    );
    // A policy of only a comment is an empty policy, like an empty file.
    for (name, body) in [("comment.yaml", "# later\n"), ("empty.yaml", "")] {
        p.write(name, body);
        let o = run(&p, &["check", name]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", out(&o));
    }
    // A duplicate key names the key and where, not the YAML library.
    p.write("dup.yaml", "version: 1\ndefault: allow\ndefault: deny\n");
    let o = run(&p, &["check", "dup.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    let s = out(&o);
    assert!(
        s.contains("dup.yaml:3:1: error: duplicate key `default` (first at line 2)"),
        "{s}"
    );
    assert!(!s.contains("DuplicateKeyPolicy"), "{s}");
    // A directory, a missing file: exit 2 (README: a file that cannot be read).
    std::fs::create_dir(p.path("adir")).unwrap();
    let o = run(&p, &["check", "adir"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        "aileron: adir: is a directory, not a policy file\n"
    );
    let o = run(&p, &["check", "gone.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(err(&o), "aileron: gone.yaml: no such policy file\n");
    let o = run(&p, &["explain", "--policy", "gone.yaml", "--", "ls"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&p, &["check", "--json", "gone.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(v["valid"], false);
}

#[test]
fn ls_three_times_is_not_a_doom_loop_but_a_write_is() {
    let p = Project::new("version: 1\ndefault: allow\n");
    let script = "for i in 1 2 3 4; do $SHELL -c 'ls -d .'; done; for i in 1 2 3; do $SHELL -c 'touch f'; echo rc=$?; done";
    let o = support::no_tty(&mut p.aileron(&[
        "launch",
        "--enforce",
        "none",
        "--",
        "bash",
        "-c",
        script,
    ]))
    .stdin(Stdio::null())
    .output()
    .unwrap();
    assert_eq!(out(&o), ".\n.\n.\n.\nrc=0\nrc=0\nrc=126\n", "{}", err(&o));
    let audit = p.audit();
    assert_eq!(
        audit
            .iter()
            .filter(|r| r["action"]["type"] == "agent.doom_loop")
            .count(),
        1,
        "{audit:#?}"
    );
}

#[test]
fn init_ignores_the_data_directory_and_names_the_schema() {
    let p = Project::without_policy();
    p.write(".gitignore", "target/");
    let o = run(&p, &["init"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        p.read(".gitignore"),
        "target/\n# Aileron's local data: audit log, sessions, schema\n.aileron/\n"
    );
    let policy = p.read("aileron.yaml");
    assert!(
        policy.starts_with("# yaml-language-server: $schema=.aileron/schema.json\n"),
        "{policy}"
    );
    let schema: Value = serde_json::from_str(&p.read(".aileron/schema.json")).unwrap();
    assert!(schema["properties"]["allow"].is_object());
    // Once only.
    let o = run(&p, &["init", "--force"]);
    assert!(o.status.success());
    assert_eq!(p.read(".gitignore").matches(".aileron/").count(), 1);
    // No .gitignore: one is made.
    let q = Project::without_policy();
    assert!(run(&q, &["init"]).status.success());
    assert!(q.read(".gitignore").contains(".aileron/\n"));
    assert!(run(&q, &["check"]).status.success());
}

#[test]
fn a_report_whose_reader_stops_early_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let p = Project::new("version: 1\ndefault: allow\n");
    for args in [&["schema"][..], &["explain", "--", "git", "status"]] {
        let mut child = p
            .aileron(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("aileron runs");
        // `aileron … | head -0`: the reader is gone before the first line.
        drop(child.stdout.take());
        let o = child.wait_with_output().expect("aileron ends");
        assert!(!err(&o).contains("panicked"), "{args:?}: {}", err(&o));
        assert!(
            o.status.success() || o.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?}",
            o.status
        );
    }
}
