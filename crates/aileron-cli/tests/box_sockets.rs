//! The box's Unix sockets (issue 30): under `aileron launch` at its default
//! enforcement, a Python program as the launched agent itself uses Unix
//! sockets of its own (stream and datagram, bound in the project), while
//! a socket the host starts listening on after the launch is out of reach
//! by its path, by a relative path, through a symlink planted in the
//! project, and by a datagram; one `settings.enforce.sockets` opens is
//! reached, though it too was made after the launch. The same program
//! without the box reaches the host's sockets, so that no test passes
//! because connecting failed for another reason.

#![cfg(target_os = "linux")]

mod support;

use serde_json::Value;
use std::io::Read;
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use support::{Project, spawn_lines, text};

/// Uses sockets of its own, says `ready`, waits for the file `argv[1]`,
/// then tries the host's sockets `argv[2..]`; prints one JSON object:
/// attempt → `ok …` or `FAIL <errno name>`.
const PROGRAM: &str = r#"
import errno, json, os, socket, sys, time
go, late, opened, dgram = sys.argv[1:5]
out = {}
def attempt(name, f):
    try:
        out[name] = f()
    except OSError as e:
        out[name] = "FAIL " + errno.errorcode.get(e.errno, str(e.errno))
def own_stream():
    srv = socket.socket(socket.AF_UNIX)
    srv.bind("own.sock")
    srv.listen(1)
    c = socket.socket(socket.AF_UNIX)
    c.connect("own.sock")
    s, _ = srv.accept()
    c.sendall(b"hi")
    return "ok " + s.recv(2).decode()
def own_dgram():
    r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    r.bind("own-dgram.sock")
    w = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    w.sendto(b"dg", "own-dgram.sock")
    return "ok " + r.recv(2).decode()
def conn(path, word):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(word.encode())
    s.close()
    return "ok"
def relative():
    here = os.getcwd()
    os.chdir(os.path.dirname(late))
    try:
        return conn(os.path.basename(late), "late-relative")
    finally:
        os.chdir(here)
def via_link():
    os.symlink(late, "late-link")
    return conn("late-link", "late-link")
attempt("own", own_stream)
attempt("own-dgram", own_dgram)
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
attempt("late", lambda: conn(late, "late"))
attempt("late-relative", relative)
attempt("late-link", via_link)
attempt("opened", lambda: conn(opened, "opened"))
attempt("dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"dgram", dgram) and "ok")
print(json.dumps(out), flush=True)
"#;

/// The host's side: sockets made after the launch, and what reached them.
struct Host {
    late: PathBuf,
    opened: PathBuf,
    dgram: PathBuf,
    heard: Arc<Mutex<Vec<String>>>,
}

impl Host {
    fn paths(dir: &Path) -> Host {
        Host {
            late: dir.join("late.sock"),
            opened: dir.join("opened.sock"),
            dgram: dir.join("dgram.sock"),
            heard: Arc::default(),
        }
    }

    /// Starts listening on all three.
    fn listen(&self) {
        for path in [&self.late, &self.opened] {
            let _ = std::fs::remove_file(path);
            let l = UnixListener::bind(path).expect("bind a host socket");
            let heard = Arc::clone(&self.heard);
            std::thread::spawn(move || {
                for mut conn in l.incoming().flatten() {
                    let mut word = String::new();
                    let _ = conn.read_to_string(&mut word);
                    heard.lock().unwrap().push(word);
                }
            });
        }
        let _ = std::fs::remove_file(&self.dgram);
        let d = UnixDatagram::bind(&self.dgram).expect("bind a host datagram socket");
        let heard = Arc::clone(&self.heard);
        std::thread::spawn(move || {
            let mut buf = [0u8; 64];
            while let Ok(n) = d.recv(&mut buf) {
                heard
                    .lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&buf[..n]).into());
            }
        });
    }

    fn heard(&self) -> Vec<String> {
        let mut h = self.heard.lock().unwrap().clone();
        h.sort();
        h
    }
}

/// Runs the program under `aileron launch` with `enforce`; the host's
/// sockets start listening once it is running.
fn run(p: &Project, host: &Host, enforce: &[&str]) -> Value {
    let go = p.path("go");
    let _ = std::fs::remove_file(&go);
    for f in ["own.sock", "own-dgram.sock", "late-link"] {
        let _ = std::fs::remove_file(p.path(f));
    }
    let mut args = vec!["launch"];
    args.extend_from_slice(enforce);
    let paths = [&go, &host.late, &host.opened, &host.dgram].map(|p| p.display().to_string());
    args.extend_from_slice(&["--", "/usr/bin/python3", "-c", PROGRAM]);
    args.extend(paths.iter().map(String::as_str));
    let mut cmd = p.aileron(&args);
    let (child, mut lines) = spawn_lines(&mut cmd);
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.expect("read the program's output");
        let ready = line == "ready";
        seen.push(line);
        if ready {
            break;
        }
    }
    // After the launch: the box's mounts cannot have covered these.
    host.listen();
    std::fs::write(&go, "").expect("signal the program");
    seen.extend(lines.map_while(Result::ok));
    let out = child.wait_with_output().expect("aileron launch ends");
    assert!(
        out.status.success() && seen.iter().any(|l| l == "ready"),
        "{:?}\n{seen:?}\n{}",
        out.status,
        text(&out.stderr)
    );
    serde_json::from_str(seen.last().map_or("", String::as_str))
        .unwrap_or_else(|e| panic!("{e}: {seen:?}"))
}

#[test]
fn host_sockets_made_after_the_launch_are_out_of_reach_but_the_box_s_own_work() {
    let p = Project::without_policy();
    // A directory of the host's for each run: none of its sockets exists
    // when the launch starts.
    let host_in = |name: &str| {
        let dir = p.home.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let host = Host::paths(&dir);
        p.write(
            "aileron.yaml",
            &format!(
                "version: 1\ndefault: allow\nsettings:\n  enforce:\n    sockets: [\"{}\"]\n",
                host.opened.display()
            ),
        );
        host
    };
    let host = host_in(".open");

    // Without the box, every host socket hears the program.
    let open = run(&p, &host, &["--enforce", "none"]);
    for name in ["late", "late-relative", "late-link", "opened"] {
        assert_eq!(open[name], "ok", "{name}: {open:#}");
    }
    assert_eq!(
        host.heard(),
        ["dgram", "late", "late-link", "late-relative", "opened"],
        "{open:#}"
    );

    let host = host_in(".late");
    let got = run(&p, &host, &[]);
    assert_eq!(got["own"], "ok hi", "{got:#}");
    assert_eq!(got["own-dgram"], "ok dg", "{got:#}");
    for name in ["late", "late-relative", "late-link", "dgram"] {
        assert_eq!(got[name], "FAIL EACCES", "{name}: {got:#}");
    }
    assert_eq!(got["opened"], "ok", "{got:#}");
    assert_eq!(host.heard(), ["opened"], "{got:#}");

    // Each refusal is in the audit log, with the path.
    let refused: Vec<Value> = p
        .audit()
        .into_iter()
        .filter(|l| l.to_string().contains("net.socket"))
        .collect();
    assert!(
        refused.iter().any(|l| {
            let s = l.to_string();
            s.contains("deny") && s.contains("late.sock") && s.contains("settings.enforce.sockets")
        }),
        "{refused:#?}"
    );
}
