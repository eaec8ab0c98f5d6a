//! The agent's tree cannot answer its own asks by leaving the tree: under
//! `aileron launch`, while a command's ask waits for `aileron approve`, a
//! process of the tree that double forks, triple forks or daemonizes
//! (`setsid`) is re-parented to the session's middle process (a child
//! subreaper), not to init, and the session refuses it, whether it runs
//! `aileron approve` or speaks to the session's socket itself: the ask is
//! still waiting and nothing ran, and the same `aileron approve` from
//! outside the tree then answers it. The orphans are reaped, and under
//! `--enforce files` the tree cannot read the approver key at all.

#![cfg(target_os = "linux")]

mod support;

use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};
use support::{Project, PtyChild, WAIT, approve, listed, text};

/// Everything but the agent itself asks, with time to try every escape.
const POLICY: &str =
    "version: 1\ndefault: ask\nsettings: {timeout: 60}\nallow:\n  - \"python3 *\"\n";

/// The agent: takes the terminal in raw mode (so its command's ask waits
/// for `aileron approve`), runs `mkdir -p asked` through `$SHELL` in the
/// background, and starts three escapees that leave its tree: a double
/// fork, a triple fork and a `setsid` daemon. Each waits for the file
/// `go` (the ask's id, written by the test), then tries to list and to
/// answer `once`, through `aileron approve` (argv[2], when given) and
/// straight through the session's socket with the key read from
/// `$HOME/.aileron/sessions/SESSION.key`, and writes what it got to `NAME.json`.
const AGENT: &str = r#"
import json, os, socket, subprocess, sys, time, tty
out, aileron = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else None)
fd = os.open("/dev/tty", os.O_RDWR)
tty.setraw(fd)
asking = subprocess.Popen([os.environ["SHELL"], "-c", "mkdir -p asked"], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def control(key, msg):
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.environ["AILERON_SOCKET"])
    s.sendall((json.dumps(dict(msg, key=key)) + "\n").encode())
    return json.loads(s.makefile().readline())

def attempt(name):
    go = os.path.join(out, "go")
    while not os.path.exists(go):
        time.sleep(0.05)
    ask = open(go).read().strip()
    got = {"ppid": os.getppid(), "sid": os.getsid(0), "pid": os.getpid()}
    try:
        key = open(os.path.expanduser("~/.aileron/sessions/%s.key" % os.environ["AILERON_SESSION"])).read().strip()
        got["key"] = key
    except OSError as e:
        key, got["key"] = "", None
    got["socket_list"] = control(key, {"op": "list-asks"})
    # The socket's own id: `aileron approve` shows it after the session's prefix.
    raw = ask.rsplit(".", 1)[-1]
    got["socket_answer"] = control(key, {"op": "answer-ask", "id": raw, "answer": {"answer": "once"}})
    if aileron:
        for what, args in (("cli_list", ["--once", "--json"]), ("cli_answer", ["--answer", ask, "once"])):
            r = subprocess.run([aileron, "approve"] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True)
            got[what] = {"code": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
    with open(os.path.join(out, name + ".tmp"), "w") as f:
        json.dump(got, f)
    os.rename(os.path.join(out, name + ".tmp"), os.path.join(out, name + ".json"))

def escape(name, forks, daemon):
    if os.fork() == 0:
        for level in range(forks):
            if daemon and level == 0:
                os.setsid()
            if os.fork() != 0:
                os._exit(0)
        if daemon:
            os.chdir("/")
            null = os.open(os.devnull, os.O_RDWR)
            for n in (0, 1, 2):
                os.dup2(null, n)
        try:
            attempt(name)
        finally:
            os._exit(0)

escape("double", 1, False)
escape("triple", 2, False)
escape("daemon", 1, True)
os.write(fd, b"ASKING middle=%d\r\n" % os.getppid())
status = asking.wait()
os.write(fd, b"status=%d\r\n" % status)
"#;

/// What escapee `name` wrote, once it has.
fn attempt(dir: &Path, name: &str, pty: &PtyChild) -> Value {
    let path = dir.join(format!("{name}.json"));
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(bytes) = std::fs::read(&path) {
            return serde_json::from_slice(&bytes).expect("escapee's JSON");
        }
        assert!(
            Instant::now() < deadline,
            "escapee {name} wrote nothing; the terminal shows:\n{}",
            pty.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The children of `pid` that are zombies (ended, never reaped).
fn zombie_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") && fields.get(1) == Some(&pid.to_string().as_str()) {
            found.push(child);
        }
    }
    found
}

/// A real Python interpreter (not a wrapper script, which exec
/// enforcement would decide as a command of its own).
fn python() -> &'static str {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("python3")
}

/// Launches the agent under `enforce`, lets the escapees try, and checks
/// each was refused, the ask still waits, and an approver outside the
/// tree answers it; what each escapee got, and the session's real key.
fn escapees_are_refused(enforce: &str, with_cli: bool) -> (Vec<Value>, String) {
    let p = Project::new(POLICY);
    p.write("agent.py", AGENT);
    let out = p.root.join("escape");
    std::fs::create_dir_all(&out).unwrap();
    let mut cmd = p.aileron(&["launch", "--enforce", enforce, "--", python(), "agent.py"]);
    cmd.arg(&out);
    if with_cli {
        cmd.arg(support::AILERON);
    }
    let mut t = PtyChild::spawn(&mut cmd);
    let screen = t.expect("ASKING middle=");
    let middle: u32 = screen
        .split("ASKING middle=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .expect("the middle process's pid");
    let asks = listed(&p);
    assert_eq!(asks.len(), 1, "{asks:?}");
    assert_eq!(asks[0]["command"], "mkdir -p asked");
    let id = asks[0]["id"].as_str().unwrap().to_owned();
    let key = session_key(&p);
    std::fs::write(out.join("go"), &id).unwrap();
    let mut got = Vec::new();
    for name in ["double", "triple", "daemon"] {
        let g = attempt(&out, name, &t);
        // Re-parented to the session's middle process, not to init.
        assert_eq!(g["ppid"], middle, "{name}: {g}");
        for what in ["socket_list", "socket_answer"] {
            assert_eq!(g[what]["ok"], false, "{name} {what}: {g}");
            assert!(
                g[what]["asks"].as_array().is_none_or(|a| a.is_empty()),
                "{name}: {g}"
            );
        }
        if with_cli {
            for what in ["cli_list", "cli_answer"] {
                assert_ne!(g[what]["code"], 0, "{name} {what}: {g}");
                assert!(!g[what]["stdout"].as_str().unwrap().contains(&id), "{g}");
            }
        }
        got.push(g);
    }
    // Nothing ran, the same ask still waits, and the user answers it.
    assert!(!p.path("asked").exists());
    let again = listed(&p);
    assert_eq!(again[0]["id"], id.as_str(), "{again:?}");
    let answered = approve(&p, &["--answer", &id, "once"]);
    assert!(answered.status.success(), "{}", text(&answered.stderr));
    t.expect("status=0");
    assert!(p.path("asked").is_dir());
    // The escapees ended: the middle process reaped them.
    let deadline = Instant::now() + WAIT;
    while !zombie_children(middle).is_empty() {
        assert!(
            Instant::now() < deadline,
            "zombies left under the middle process {middle}: {:?}",
            zombie_children(middle)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let end = t.finish();
    assert!(end.status.success(), "{}\n{}", end.screen, end.stderr);
    let audit = p.audit();
    let rec = audit
        .iter()
        .find(|r| r["action"]["summary"] == "mkdir -p asked")
        .expect("audited");
    assert_eq!(rec["outcome"], "approved-once", "{rec}");
    (got, key)
}

/// The approver key of the one running session, as the user reads it.
fn session_key(p: &Project) -> String {
    let dir = p.home.join(".aileron").join("sessions");
    let keys: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|f| f.extension().is_some_and(|x| x == "key"))
        .collect();
    assert_eq!(keys.len(), 1, "{keys:?}");
    std::fs::read_to_string(&keys[0]).unwrap().trim().to_owned()
}

/// The refusal an escapee that holds the key gets from the session.
fn refused_as_own(g: &Value) {
    for what in ["socket_list", "socket_answer"] {
        let error = g[what]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("the session's own programs cannot answer its asks"),
            "{what}: {g}"
        );
    }
}

#[test]
fn without_enforcement_an_orphan_of_the_tree_holding_the_key_is_still_refused() {
    let (got, key) = escapees_are_refused("none", true);
    for g in got {
        // Nothing keeps the key from the tree here: only membership holds.
        assert_eq!(g["key"], key.as_str(), "{g}");
        refused_as_own(&g);
        for what in ["cli_list", "cli_answer"] {
            let stderr = g[what]["stderr"].as_str().unwrap();
            assert!(stderr.contains("own programs cannot answer"), "{what}: {g}");
        }
    }
}

#[test]
fn under_exec_enforcement_an_orphan_of_the_tree_cannot_list_the_asks() {
    let (got, key) = escapees_are_refused("exec", false);
    for g in got {
        assert_eq!(g["key"], key.as_str(), "{g}");
        refused_as_own(&g);
    }
}

#[test]
fn under_files_enforcement_the_tree_cannot_read_the_approver_key() {
    let (got, key) = escapees_are_refused("files", false);
    assert!(!key.is_empty());
    for g in got {
        // The file reads as empty, or not at all: never as the key.
        assert_ne!(g["key"], key.as_str(), "{g}");
        assert!(g["key"].as_str().is_none_or(str::is_empty), "{g}");
        assert_eq!(
            g["socket_list"]["error"], "wrong approver key for this session",
            "{g}"
        );
    }
}
