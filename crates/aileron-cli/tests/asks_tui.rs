//! Asks that never fight the agent for the terminal: a full-screen program
//! in raw mode keeps its keys while its command's ask waits for `aileron
//! approve` (listed, answered, then run); the `approve` screen answers with
//! single keys, the prefix being a step of its own; a session in a
//! background process group is never stopped by the terminal; an
//! interactive bash under `launch` has each typed line decided.

mod support;

use std::fs::File;
use std::io::Write;
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Project, WAIT, approve, listed, run_no_tty, text};

/// Everything unlisted asks; `echo` and `python3` are fine.
const POLICY: &str = "version: 1\ndefault: ask\nsettings: {timeout: 30}\nallow:\n  - \"echo *\"\n";

/// A process whose stdin, stdout, stderr and controlling terminal are one
/// pseudo-terminal (100x30) we hold the master side of.
struct Pty {
    child: Child,
    master: File,
    screen: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    fn spawn(cmd: &mut Command) -> Pty {
        let (mut master_fd, mut slave_fd) = (-1, -1);
        let size = libc::winsize {
            ws_row: 30,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two fds; the winsize is read.
        let rc = unsafe {
            libc::openpty(
                &mut master_fd,
                &mut slave_fd,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(rc, 0, "openpty");
        // SAFETY: fds we own.
        unsafe {
            libc::fcntl(master_fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        let master = unsafe { File::from_raw_fd(master_fd) };
        let slave = unsafe { File::from_raw_fd(slave_fd) };
        // SAFETY: setsid and ioctl are async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        let child = cmd.spawn().expect("spawn on the pty");
        // The parent's copies of the slave are closed with `cmd`'s Stdio.
        let screen = support::collect(master.try_clone().unwrap());
        Pty {
            child,
            master,
            screen,
        }
    }

    /// What was written, with a full-screen program's screen rendered
    /// after it (cursor moves placed, so that words skipped over as blank
    /// cells read as they show).
    fn screen(&self) -> String {
        let bytes = self.screen.lock().unwrap().clone();
        format!("{}\n{}", text(&bytes), render(&text(&bytes)))
    }

    /// How often `needle` shows: in what was written, or on the rendered screen.
    fn count(&self, needle: &str) -> usize {
        let raw = text(&self.screen.lock().unwrap());
        raw.matches(needle)
            .count()
            .max(render(&raw).matches(needle).count())
    }

    /// Waits until the screen shows `needle` `n` times.
    fn expect_n(&mut self, needle: &str, n: usize) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            if self.count(needle) >= n {
                return self.screen();
            }
            if Instant::now() > deadline || self.child.try_wait().ok().flatten().is_some() {
                std::thread::sleep(Duration::from_millis(100));
                let screen = self.screen();
                if self.count(needle) >= n {
                    return screen;
                }
                let _ = self.child.kill();
                panic!("waited for {needle:?} (x{n}); the terminal shows:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn expect(&mut self, needle: &str) -> String {
        self.expect_n(needle, 1)
    }

    fn type_keys(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    fn finish(mut self) -> (std::process::ExitStatus, String) {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(100));
                return (s, self.screen());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("did not exit; the terminal shows:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The screen `out` leaves on a terminal: cursor positioning (`CSI r;c H`),
/// erasing (`CSI 2J`, `CSI K`), text; other sequences are ignored.
fn render(out: &str) -> String {
    let (rows, cols) = (30usize, 100usize);
    let mut grid = vec![vec![' '; cols]; rows];
    let (mut r, mut c) = (0usize, 0usize);
    let mut chars = out.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\x1b' => {
                if chars.peek() != Some(&'[') {
                    chars.next();
                    continue;
                }
                chars.next();
                let mut params = String::new();
                let mut last = ' ';
                for p in chars.by_ref() {
                    if p.is_ascii_alphabetic() || p == '@' || p == '~' {
                        last = p;
                        break;
                    }
                    params.push(p);
                }
                let nums: Vec<usize> = params
                    .trim_start_matches('?')
                    .split(';')
                    .map(|n| n.parse().unwrap_or(1))
                    .collect();
                match last {
                    'H' => {
                        r = nums
                            .first()
                            .copied()
                            .unwrap_or(1)
                            .saturating_sub(1)
                            .min(rows - 1);
                        c = nums
                            .get(1)
                            .copied()
                            .unwrap_or(1)
                            .saturating_sub(1)
                            .min(cols - 1);
                    }
                    'J' if params == "2" => grid = vec![vec![' '; cols]; rows],
                    'K' => grid[r][c..].iter_mut().for_each(|x| *x = ' '),
                    _ => {}
                }
            }
            '\r' => c = 0,
            '\n' => r = (r + 1).min(rows - 1),
            ch if ch >= ' ' => {
                if c < cols {
                    grid[r][c] = ch;
                }
                c += 1;
            }
            _ => {}
        }
    }
    grid.iter()
        .map(|row| row.iter().collect::<String>().trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A full-screen program: the alternate screen, the terminal in raw mode,
/// then `$SHELL -c` for each argument (as an agent runs its commands),
/// then three keys read from the terminal.
const TUI: &str = r#"
import os, subprocess, sys, termios, tty
fd = os.open("/dev/tty", os.O_RDWR)
saved = termios.tcgetattr(fd)
tty.setraw(fd)
os.write(fd, b"\x1b[?1049hREADY\r\n")
for cmd in sys.argv[1:]:
    r = subprocess.run([os.environ["SHELL"], "-c", cmd], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.write(fd, b"status=%d\r\n" % r.returncode)
keys = b""
while len(keys) < 3:
    keys += os.read(fd, 3 - len(keys))
termios.tcsetattr(fd, termios.TCSADRAIN, saved)
os.write(fd, b"\x1b[?1049lkeys=" + keys + b"\r\n")
"#;

/// `aileron launch` of the full-screen program, on a terminal; a fake
/// `notify-send` on its PATH records the notifications.
fn launch_tui(p: &Project, commands: &[&str]) -> Pty {
    p.write("tui.py", TUI);
    let bin = p.root.join("notifier");
    std::fs::create_dir_all(&bin).unwrap();
    let log = p.root.join("notified.txt");
    let fake = bin.join("notify-send");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = p.aileron(&["launch", "--enforce", "none", "--", "python3", "tui.py"]);
    cmd.args(commands).env("PATH", path);
    Pty::spawn(&mut cmd)
}

#[test]
fn a_full_screen_program_keeps_its_keys_while_its_ask_waits_for_approve() {
    let p = Project::new(POLICY);
    let mut t = launch_tui(&p, &["mkdir -p asked"]);
    t.expect("READY");
    // Typed while the ask waits: the program's, not the session's.
    t.type_keys("abc");
    let asks = listed(&p);
    assert_eq!(asks.len(), 1, "{asks:?}");
    let ask = &asks[0];
    assert_eq!(ask["command"], "mkdir -p asked");
    assert_eq!(ask["commands"], serde_json::json!(["mkdir -p asked"]));
    assert!(ask["reason"].as_str().unwrap().contains("no rule"), "{ask}");
    assert_eq!(ask["suggestion"], "mkdir *");
    assert_eq!(ask["agent"], "python3");
    // Nothing on the program's screen from the session.
    assert!(!t.screen().contains("approval needed"), "{}", t.screen());
    let id = ask["id"].as_str().unwrap();
    let out = approve(&p, &["--answer", id, "once"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    t.expect("status=0");
    let screen = t.expect("keys=abc");
    assert!(!screen.contains("Stopped"), "{screen}");
    let (status, _) = t.finish();
    assert!(status.success());
    assert!(p.path("asked").is_dir());
    // Answered: nothing waits, and an unknown id is an error.
    let out = approve(&p, &["--answer", id, "once"]);
    assert_eq!(out.status.code(), Some(1));
    let audit = p.audit();
    let rec = audit
        .iter()
        .find(|r| r["action"]["summary"] == "mkdir -p asked")
        .expect("audited");
    assert_eq!(rec["outcome"], "approved-once", "{rec}");
    assert!(rec.to_string().contains("approve"), "{rec}");
    // The desktop was told.
    let notified = std::fs::read_to_string(p.root.join("notified.txt")).unwrap_or_default();
    assert!(notified.contains("mkdir -p asked"), "{notified:?}");
}

#[test]
fn approve_answers_with_single_keys_and_the_prefix_is_a_step_of_its_own() {
    let p = Project::new(POLICY);
    let mut t = launch_tui(&p, &["mkdir -p one", "mkdir -p two"]);
    t.expect("READY");
    listed(&p);
    let mut screen = Pty::spawn(&mut p.aileron(&["approve"]));
    screen.expect("mkdir -p one");
    screen.expect("[o] once");
    screen.type_keys("s");
    screen.expect("[x] prefix `mkdir *`");
    // Any other key is not an answer.
    screen.type_keys("z");
    screen.expect("press e (exactly), x (prefix) or Esc (back)");
    screen.type_keys("x");
    screen.expect("answered mkdir -p one");
    // The prefix covers the second command: no second ask.
    t.expect_n("status=0", 2);
    screen.type_keys("q");
    let (status, _) = screen.finish();
    assert!(status.success());
    t.type_keys("xyz");
    t.expect("keys=xyz");
    assert!(p.path("one").is_dir() && p.path("two").is_dir());
    let audit = p.audit();
    assert!(
        audit
            .iter()
            .any(|r| r["outcome"] == "approved-always-session"),
        "{audit:#?}"
    );
}

#[test]
fn a_session_in_a_background_process_group_is_never_stopped_by_the_terminal() {
    let p = Project::new(POLICY);
    // An interactive shell's job control: the launch is a background job.
    let script = format!(
        "set -m\n'{}' launch --enforce none -- bash -c '$SHELL -c \"mkdir -p bg\"; echo inner=$?' &\nwait $!\necho outer=$?\n",
        support::AILERON
    );
    let mut t = Pty::spawn(&mut p.bash(&["-c", &script]));
    let asks = listed(&p);
    assert_eq!(asks[0]["command"], "mkdir -p bg");
    // It answers on its socket: not stopped.
    let id = asks[0]["id"].as_str().unwrap();
    let out = approve(&p, &["--answer", id, "once"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    t.expect("inner=0");
    let (_, screen) = t.finish();
    assert!(screen.contains("outer=0"), "{screen}");
    assert!(!screen.contains("Stopped"), "{screen}");
    assert!(p.path("bg").is_dir());
}

#[test]
fn each_line_typed_into_an_interactive_bash_is_decided() {
    let p = Project::new(POLICY);
    // The user's ~/.bashrc is read first.
    std::fs::write(p.home.join(".bashrc"), "PS1='PROMPT> '\n").unwrap();
    let mut cmd = p.aileron(&["launch", "--enforce", "none", "--", "bash"]);
    cmd.env("TERM", "dumb");
    let mut t = Pty::spawn(&mut cmd);
    let banner = t.expect("PROMPT> ");
    assert!(banner.contains("aileron: session active"), "{banner}");
    assert!(banner.contains("asks: this terminal"), "{banner}");
    assert!(banner.contains("every line typed"), "{banner}");
    t.type_keys("echo hel\"\"lo\n");
    t.expect("hello");
    t.type_keys("mkdir typed; echo after\n");
    t.expect("approval needed");
    t.type_keys("r\n");
    t.expect_n("PROMPT> ", 3);
    assert!(!p.path("typed").exists());
    // Nothing of the refused line ran.
    assert!(
        !t.screen().lines().any(|l| l.trim() == "after"),
        "{}",
        t.screen()
    );
    t.type_keys("mkdir typed2\n");
    t.expect_n("approval needed", 2);
    t.type_keys("o\n");
    t.expect_n("PROMPT> ", 4);
    assert!(p.path("typed2").is_dir());
    t.type_keys("exit\n");
    let (status, screen) = t.finish();
    assert!(status.success(), "{screen}");
    assert!(!screen.contains("Stopped"), "{screen}");
}

#[test]
fn other_interactive_shells_are_refused_with_a_reason() {
    let p = Project::new(POLICY);
    let out = run_no_tty(&mut p.aileron(&["launch", "--", "sh", "-i"]));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("not launching: `sh` would start an interactive shell"),
        "{err}"
    );
    assert!(err.contains("would not be decided"), "{err}");
    let out = run_no_tty(&mut p.aileron(&["launch", "--", "bash", "-i", "--norc"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
}

#[test]
fn approve_without_a_session_says_so() {
    let p = Project::new(POLICY);
    let out = approve(&p, &["--once", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no running `aileron launch` session"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn under_exec_enforcement_a_typed_line_is_decided_once() {
    let p = Project::new(
        "version: 1\ndefault: ask\nsettings: {timeout: 30}\nallow:\n  - \"echo *\"\n  - \"ls *\"\n",
    );
    std::fs::write(p.home.join(".bashrc"), "PS1='PROMPT> '\n").unwrap();
    let mut cmd = p.aileron(&["launch", "--enforce", "exec", "--", "bash"]);
    cmd.env("TERM", "dumb");
    let mut t = Pty::spawn(&mut cmd);
    t.expect("PROMPT> ");
    // The trap's `aileron gate` is the session's own, not a program to
    // decide; the line's `ls` runs as part of the line that was allowed.
    t.type_keys("ls -d / >/dev/null && echo \"ran-$((1+1))\"\n");
    t.expect("ran-2");
    t.expect_n("PROMPT> ", 2);
    assert_eq!(t.count("approval needed"), 0, "{}", t.screen());
    // A line that asks is asked once: its `mkdir` exec is part of it.
    t.type_keys("mkdir typed\n");
    t.expect("approval needed");
    t.type_keys("o\n");
    t.expect_n("PROMPT> ", 3);
    assert!(p.path("typed").is_dir(), "{}", t.screen());
    assert_eq!(t.count("approval needed"), 1, "{}", t.screen());
    t.type_keys("exit\n");
    let (status, screen) = t.finish();
    assert!(status.success(), "{screen}");
}
