//! The shim inside a launch session asks before its C library starts
//! (`aileron_shim::prestart`). A scripted session stands in for
//! `aileron launch` here, so that the tests see what the shim sends and
//! that it does exactly what the session answers; the real session's side
//! is checked through `aileron launch` at the end and in `launch.rs`.

mod support;

use aileron_session::{Response, ShimCall, ShimReply};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::mpsc;
use support::{LaunchSession, Project, run, run_no_tty, text};

const ALLOW_ALL: &str = "version: 1\ndefault: allow\n";

/// What a scripted session answers a request with.
enum Answer {
    Raw(ShimReply),
    /// Exec `/bin/bash` with the shim's own arguments, and `bash` as `argv[0]`.
    ExecAsAsked,
    Json(Response),
    /// Closes the connection without a word.
    HangUp,
}

/// One request as the scripted session received it.
#[derive(Debug)]
enum Received {
    Raw(ShimCall),
    Json(serde_json::Value),
}

/// A session at `run/fake.sock` that answers its requests with `answers`,
/// in order, and reports each request it received.
struct FakeSession {
    socket: PathBuf,
    received: mpsc::Receiver<Received>,
}

impl FakeSession {
    fn start(p: &Project, answers: Vec<Answer>) -> FakeSession {
        let socket = p.run.join("fake.sock");
        let listener = UnixListener::bind(&socket).expect("bind");
        let (tx, received) = mpsc::channel();
        std::thread::spawn(move || {
            for answer in answers {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                let request = read_request(&stream);
                let bytes = match (answer, &request) {
                    (Answer::ExecAsAsked, Received::Raw(call)) => {
                        let mut argv = vec!["bash".to_owned()];
                        argv.extend(call.args.iter().cloned());
                        ShimReply::Exec {
                            shell: "/bin/bash".into(),
                            argv,
                        }
                        .encode()
                    }
                    (Answer::ExecAsAsked, Received::Json(_)) => b"?".to_vec(),
                    (Answer::Raw(reply), _) => reply.encode(),
                    (Answer::Json(response), _) => {
                        let mut line = serde_json::to_vec(&response).unwrap();
                        line.push(b'\n');
                        line
                    }
                    (Answer::HangUp, _) => Vec::new(),
                };
                let _ = tx.send(request);
                let _ = (&stream).write_all(&bytes);
            }
        });
        FakeSession { socket, received }
    }

    /// `aileron-sh ARGS` in `p`, asking this session.
    fn shim(&self, p: &Project, args: &[&str]) -> std::process::Command {
        let mut cmd = p.shim(args);
        cmd.env("AILERON_SOCKET", &self.socket);
        cmd
    }

    /// Every request received so far.
    fn requests(&self) -> Vec<Received> {
        self.received.try_iter().collect()
    }
}

fn read_request(stream: &UnixStream) -> Received {
    let mut reader = BufReader::new(stream);
    let first = reader.fill_buf().expect("read")[0];
    if first == b'{' {
        let mut line = String::new();
        reader.read_line(&mut line).expect("read line");
        Received::Json(serde_json::from_str(&line).expect("JSON request"))
    } else {
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).expect("read to end");
        Received::Raw(ShimCall::decode(&bytes).expect("raw request"))
    }
}

fn allow_json() -> Response {
    Response {
        allow: true,
        decision: "allow".into(),
        message: None,
        rule: None,
        real_shell: "/bin/bash".into(),
    }
}

#[test]
fn the_shim_sends_its_arguments_and_directory_and_runs_the_shell_it_is_told() {
    let p = Project::new(ALLOW_ALL);
    let session = FakeSession::start(&p, vec![Answer::ExecAsAsked]);
    let script = r#"printf '%s|' "$0" "$1" "$PWD"; exit 3"#;
    let out = run(&mut session.shim(&p, &["-c", script, "zero", "one"]), b"");
    let bash = run(&mut p.bash(&["-c", script, "zero", "one"]), b"");
    assert_eq!(text(&out.stdout), text(&bash.stdout));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let requests = session.requests();
    let [Received::Raw(call)] = &requests[..] else {
        panic!("expected one raw request, got {requests:?}");
    };
    assert_eq!(call.cwd, p.dir.to_str().unwrap());
    assert_eq!(call.arg0, support::SHIM);
    assert_eq!(call.args, ["-c", script, "zero", "one"]);
}

/// The session answers with the whole `argv` of the real shell (it takes
/// out what would run undecided code), and the shim runs exactly that.
#[test]
fn the_shim_runs_the_arguments_the_session_answers_with() {
    let p = Project::new(ALLOW_ALL);
    let reply = ShimReply::Exec {
        shell: "/bin/bash".into(),
        argv: [
            "named",
            "--norc",
            "-c",
            r#"echo "$0:$1:$#""#,
            "zero",
            "",
            "two",
        ]
        .map(String::from)
        .to_vec(),
    };
    let session = FakeSession::start(&p, vec![Answer::Raw(reply)]);
    let out = run(&mut session.shim(&p, &["-lc", "echo asked"]), b"");
    assert_eq!(text(&out.stdout), "zero::2\n", "{}", text(&out.stderr));
}

#[test]
fn a_refusal_is_printed_as_one_line_and_nothing_runs() {
    let p = Project::new(ALLOW_ALL);
    let message = "aileron: denied: no writes here (rule no-writes)";
    let session = FakeSession::start(&p, vec![Answer::Raw(ShimReply::Refuse(message.into()))]);
    let out = run_no_tty(&mut session.shim(&p, &["-c", "touch made"]));
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(text(&out.stderr), format!("{message}\n"));
    assert!(out.stdout.is_empty());
    assert!(!p.path("made").exists(), "a refused command ran");
}

#[test]
fn a_shell_that_cannot_be_started_is_a_refusal() {
    let p = Project::new(ALLOW_ALL);
    let reply = ShimReply::Exec {
        shell: "/nonexistent/bash".into(),
        argv: vec!["/nonexistent/bash".into(), "-c".into(), "true".into()],
    };
    let session = FakeSession::start(&p, vec![Answer::Raw(reply)]);
    let out = run_no_tty(&mut session.shim(&p, &["-c", "true"]));
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(
        text(&out.stderr),
        "aileron: denied: cannot run the shell /nonexistent/bash: error 2\n"
    );
}

#[test]
fn what_the_session_leaves_to_the_full_shim_is_asked_again_in_json() {
    let p = Project::new(ALLOW_ALL);
    let session = FakeSession::start(
        &p,
        vec![Answer::Raw(ShimReply::FullShim), Answer::Json(allow_json())],
    );
    let out = run_no_tty(&mut session.shim(&p, &["-c", "echo asked twice"]));
    assert_eq!(text(&out.stdout), "asked twice\n", "{}", text(&out.stderr));
    let requests = session.requests();
    let [Received::Raw(_), Received::Json(json)] = &requests[..] else {
        panic!("expected a raw request, then JSON: {requests:?}");
    };
    assert_eq!(json["line"], "echo asked twice");
    assert_eq!(json["cwd"], p.dir.to_str().unwrap());
}

/// Once the session has the whole request it may have decided, recorded
/// and prompted: asking again would do all that twice. So a missing or
/// unreadable answer is a refusal.
#[test]
fn a_session_that_hangs_up_after_the_request_is_a_refusal() {
    let p = Project::new(ALLOW_ALL);
    let session = FakeSession::start(&p, vec![Answer::HangUp, Answer::Json(allow_json())]);
    let out = run_no_tty(&mut session.shim(&p, &["-c", "touch made"]));
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(
        text(&out.stderr),
        "aileron: denied: the launch session did not answer\n"
    );
    assert!(!p.path("made").exists());
    assert_eq!(session.requests().len(), 1, "asked twice");
}

#[test]
fn a_refusal_longer_than_the_early_path_s_buffer_is_printed_as_far_as_it_goes() {
    let p = Project::new(ALLOW_ALL);
    let message = format!("aileron: rejected: {}", "x".repeat(300 * 1024));
    let session = FakeSession::start(
        &p,
        vec![
            Answer::Raw(ShimReply::Refuse(message.clone())),
            Answer::Json(allow_json()),
        ],
    );
    let out = run_no_tty(&mut session.shim(&p, &["-c", "touch made"]));
    assert_eq!(out.status.code(), Some(126));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("aileron: rejected: xxx") && err.ends_with("x\n"),
        "{err:.80}"
    );
    assert!(err.len() < message.len());
    assert!(!p.path("made").exists());
    assert_eq!(session.requests().len(), 1, "asked twice");
}

/// A session of an older version reads only JSON: it refuses the raw
/// request as malformed without deciding it, and the shim asks again.
#[test]
fn a_session_that_answers_in_json_is_asked_in_json() {
    let p = Project::new(ALLOW_ALL);
    let mut malformed = allow_json();
    malformed.allow = false;
    malformed.message = Some("aileron: denied: malformed request to the session".into());
    let session = FakeSession::start(
        &p,
        vec![Answer::Json(malformed), Answer::Json(allow_json())],
    );
    let out = run_no_tty(&mut session.shim(&p, &["-c", "echo again"]));
    assert_eq!(text(&out.stdout), "again\n", "{}", text(&out.stderr));
    assert_eq!(session.requests().len(), 2);
}

#[test]
fn arguments_too_long_for_the_early_path_go_to_the_full_shim() {
    let p = Project::new(ALLOW_ALL);
    let session = FakeSession::start(&p, vec![Answer::Json(allow_json())]);
    // Linux takes at most 128 KiB per argument; three of 100 KiB are more
    // than the early path's room.
    let word = "x".repeat(100 * 1024);
    let out =
        run_no_tty(&mut session.shim(&p, &["-c", r#"printf %s "$@""#, "_", &word, &word, &word]));
    assert_eq!(out.stdout.len(), 300 * 1024, "{}", text(&out.stderr));
    let requests = session.requests();
    assert!(
        matches!(&requests[..], [Received::Json(_)]),
        "expected one JSON request: {:?}",
        requests.len()
    );
}

/// Arguments that are not UTF-8 are read lossily; the early path would
/// run the original bytes, so the session leaves them to the full shim,
/// which runs the text it decided.
#[test]
fn in_a_real_session_arguments_that_are_not_utf8_run_as_decided() {
    use std::os::unix::ffi::OsStrExt;
    let p = Project::new(ALLOW_ALL);
    let session = LaunchSession::start(&p);
    let mut cmd = session.shim(&p, &["-c"]);
    cmd.arg(std::ffi::OsStr::from_bytes(b"printf '%s' '\xff'"));
    let out = run_no_tty(&mut cmd);
    assert_eq!(out.stdout, "\u{FFFD}".as_bytes(), "{}", text(&out.stderr));
    assert_eq!(shim_lines(&p).len(), 1, "decided once");
}

#[test]
fn in_a_real_session_every_form_is_decided() {
    let p = Project::new(
        "version: 1\ndefault: allow\ndeny:\n  - id: no-rm\n    when: {type: shell.exec, shell.binary: rm}\n",
    );
    p.write("victim", "");
    p.write("script.sh", "rm victim\n");
    let session = LaunchSession::start(&p);
    let denied = |out: &std::process::Output| {
        assert_eq!(out.status.code(), Some(126), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).starts_with("aileron: denied: "),
            "{}",
            text(&out.stderr)
        );
        assert!(p.path("victim").exists(), "the victim was removed");
    };
    // `-c` on the early path; a script and stdin through the full shim.
    denied(&run_no_tty(&mut session.shim(&p, &["-c", "rm victim"])));
    denied(&run_no_tty(&mut session.shim(&p, &["-lc", "rm victim"])));
    denied(&run_no_tty(&mut session.shim(&p, &["script.sh"])));
    denied(&run(&mut session.shim(&p, &[]), b"rm victim\n"));
    let out = run_no_tty(&mut session.shim(&p, &["-c", "echo fine"]));
    assert_eq!(text(&out.stdout), "fine\n", "{}", text(&out.stderr));
    let audit = shim_lines(&p);
    assert_eq!(audit.len(), 5, "one audit line per decision: {audit:?}");
    let session_ids: Vec<_> = audit.iter().map(|l| l["session"].clone()).collect();
    assert!(
        session_ids
            .iter()
            .all(|s| s == &session_ids[0] && s.is_string()),
        "{session_ids:?}"
    );
}

/// Sends `args` to the session at `socket` as the early path does, and
/// returns the raw reply.
fn ask_raw(socket: &std::path::Path, p: &Project, args: &[&str]) -> Vec<u8> {
    let call = ShimCall {
        cwd: p.dir.to_string_lossy().into_owned(),
        arg0: "bash".into(),
        args: args.iter().map(|a| a.to_string()).collect(),
    };
    let stream = UnixStream::connect(socket).expect("connect");
    (&stream).write_all(&call.encode()).expect("send");
    stream
        .shutdown(std::net::Shutdown::Write)
        .expect("shutdown");
    let mut reply = Vec::new();
    (&stream).read_to_end(&mut reply).expect("read");
    reply
}

/// The session answers with the arguments bash is to run with: its own
/// path as `argv[0]` (never a login shell's dash), start-up files off, no
/// login or interactive mode; an option that names a file to run is
/// refused before anything is decided.
#[test]
fn in_a_real_session_the_answer_names_only_what_was_decided() {
    let p = Project::new(ALLOW_ALL);
    let session = LaunchSession::start(&p);
    let exec = |args: &[&str]| ShimReply::Exec {
        shell: "/bin/bash".into(),
        argv: args.iter().map(|a| a.to_string()).collect(),
    };
    // One line each: three alike in a row would be a doom loop.
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["-c", "echo 1", "zero"],
            &["/bin/bash", "--noprofile", "--norc", "-c", "echo 1", "zero"],
        ),
        (
            &["-lc", "echo 2"],
            &["/bin/bash", "--noprofile", "--norc", "-c", "echo 2"],
        ),
        (
            &["-c", "-l", "echo 3"],
            &["/bin/bash", "--noprofile", "--norc", "-c", "echo 3"],
        ),
        (
            &["-l", "-i", "-c", "echo 4"],
            &["/bin/bash", "--noprofile", "--norc", "-c", "echo 4"],
        ),
        (
            &["--login", "-o", "pipefail", "-c", "echo 5"],
            &[
                "/bin/bash",
                "--noprofile",
                "--norc",
                "-o",
                "pipefail",
                "-c",
                "echo 5",
            ],
        ),
    ];
    for (args, argv) in cases {
        assert_eq!(
            text(&ask_raw(&session.socket, &p, args)),
            text(&exec(argv).encode()),
            "{args:?}"
        );
    }
    let rc = p.path("rc.sh").to_string_lossy().into_owned();
    let reply = ask_raw(&session.socket, &p, &["--rcfile", &rc, "-ic", "echo hi"]);
    assert!(
        text(&reply).starts_with("daileron: denied: the shell option --rcfile"),
        "{}",
        text(&reply)
    );
    assert_eq!(
        shim_lines(&p).len(),
        cases.len(),
        "the refusal decided nothing"
    );
}

/// The early path takes the variables bash runs as code out of the
/// environment it execs bash with, and keeps the others.
#[test]
fn the_early_path_hands_bash_no_code_from_its_environment() {
    let p = Project::new(ALLOW_ALL);
    let trace = |name: &str| p.path(&format!("PWNED-{name}"));
    p.write("env.sh", &format!("touch '{}'\n", trace("env").display()));
    let session = FakeSession::start(&p, vec![Answer::ExecAsAsked]);
    let mut shim = session.shim(&p, &["-c", r#"ls >/dev/null; echo "ran $KEEP""#]);
    shim.env("BASH_ENV", p.path("env.sh"))
        .env(
            "BASH_FUNC_ls%%",
            format!("() {{ touch '{}'; }}", trace("function").display()),
        )
        .env("SHELLOPTS", "xtrace")
        .env("KEEP", "kept");
    let out = run_no_tty(&mut shim);
    assert_eq!(text(&out.stdout), "ran kept\n", "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "no xtrace");
    for name in ["env", "function"] {
        assert!(!trace(name).exists(), "{name} ran");
    }
    let requests = session.requests();
    assert!(
        matches!(&requests[..], [Received::Raw(_)]),
        "not the early path: {requests:?}"
    );
}

/// The shim's audit lines (the exec supervisor also records what the
/// launched script runs itself).
fn shim_lines(p: &support::Project) -> Vec<serde_json::Value> {
    p.audit()
        .into_iter()
        .filter(|r| r["adapter"] == "shim")
        .collect()
}
