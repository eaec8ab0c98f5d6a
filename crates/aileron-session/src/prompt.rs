//! Asking the human, on the terminal (`/dev/tty`, never the command's
//! stdin, which belongs to the command).

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::time::Instant;

pub use aileron_decision::{AlwaysScope, Answer, Question, escape_glob, suggest_prefix};

/// Something that can ask a human.
pub trait Prompter: Send + Sync {
    fn ask(&self, q: &Question) -> Answer;

    /// Asks with `owners` allowed to hold the terminal meanwhile (see
    /// [`Owners`]); by default as [`Prompter::ask`].
    fn ask_as(&self, q: &Question, owners: &Owners) -> Answer {
        let _ = owners;
        self.ask(q)
    }

    /// Whether asking now would reach a human without fighting another
    /// program for the terminal; by default it would.
    fn terminal(&self, owners: &Owners) -> Terminal {
        let _ = owners;
        Terminal::Usable
    }
}

/// The processes whose process group may be in the terminal's foreground
/// when the session prompts: it then takes the terminal from them for the
/// prompt and gives it back. Another group in the foreground (a job the
/// agent's shell started, a program the user runs) is never interrupted.
#[derive(Clone, Copy, Debug, Default)]
pub struct Owners {
    /// The launched program.
    pub agent: Option<u32>,
    /// The process that sent the request (it waits for the answer).
    pub peer: Option<u32>,
}

/// Whether the terminal can be asked on now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Terminal {
    Usable,
    /// There is a terminal, but asking on it would fight another program
    /// for it (a full-screen program in raw mode, another foreground job).
    Busy(String),
    /// There is no terminal (no controlling terminal, it cannot be opened).
    Absent(String),
}

/// Asks on the controlling terminal.
pub struct TtyPrompter {
    pub device: String,
}

impl Default for TtyPrompter {
    fn default() -> Self {
        TtyPrompter {
            device: "/dev/tty".to_owned(),
        }
    }
}

impl Prompter for TtyPrompter {
    fn ask(&self, q: &Question) -> Answer {
        self.ask_as(q, &Owners::default())
    }

    fn terminal(&self, owners: &Owners) -> Terminal {
        match self.open() {
            Err(why) => Terminal::Absent(why),
            Ok(tty) => {
                let _quiet = QuietJobSignals::block();
                match check(&tty, owners) {
                    Ok(_) => Terminal::Usable,
                    Err(why) => Terminal::Busy(why),
                }
            }
        }
    }

    fn ask_as(&self, q: &Question, owners: &Owners) -> Answer {
        let mut tty = match self.open() {
            Ok(t) => t,
            Err(why) => return Answer::Unavailable(why),
        };
        // Reading or setting the terminal from a background group stops
        // the process (SIGTTIN, SIGTTOU) unless the signals are blocked:
        // then a read fails instead, and nothing is ever stopped.
        let _quiet = QuietJobSignals::block();
        let _taken = match check(&tty, owners).and_then(|fg| Taken::take(&tty, fg)) {
            Ok(t) => t,
            Err(why) => return Answer::Unavailable(why),
        };
        ask_on(&mut tty, q)
    }
}

impl TtyPrompter {
    fn open(&self) -> Result<std::fs::File, String> {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.device)
            .map_err(|_| "there is no terminal to ask on".to_owned())
    }
}

/// SIGTTIN and SIGTTOU blocked in this thread while it lives.
struct QuietJobSignals(libc::sigset_t);

impl QuietJobSignals {
    fn block() -> QuietJobSignals {
        // SAFETY: sigset_t is plain data, filled by sigemptyset/sigaddset;
        // pthread_sigmask changes only this thread's mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTTIN);
            libc::sigaddset(&mut set, libc::SIGTTOU);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            QuietJobSignals(old)
        }
    }
}

impl Drop for QuietJobSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `block`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut());
        }
    }
}

/// The terminal's foreground group, if this process may prompt on the
/// terminal now: nobody holds it in raw mode (a full-screen program reads
/// keys one by one), and the foreground group is this process's, the
/// agent's or the requester's.
fn check(tty: &std::fs::File, owners: &Owners) -> Result<libc::pid_t, String> {
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data; tcgetattr fills it from a valid fd.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
        return Err("the terminal cannot be read".to_owned());
    }
    if t.c_lflag & libc::ICANON == 0 {
        return Err("a full-screen program has the terminal".to_owned());
    }
    // SAFETY: plain calls on a valid fd / pids.
    let fg = unsafe { libc::tcgetpgrp(fd) };
    let mine = unsafe { libc::getpgrp() };
    let group = |pid: Option<u32>| {
        pid.map(|p| unsafe { libc::getpgid(p as libc::pid_t) })
            .filter(|&g| g > 0)
    };
    if fg < 0 {
        // Not this process's controlling terminal (a device named for the
        // prompt): no job control on it, so no foreground to take.
        return Ok(mine);
    }
    if fg > 0 && (fg == mine || group(owners.agent) == Some(fg) || group(owners.peer) == Some(fg)) {
        Ok(fg)
    } else {
        Err("another program is in the terminal's foreground".to_owned())
    }
}

/// The terminal taken for one prompt: this process's group in the
/// foreground and the terminal's settings as they were, both given back.
struct Taken {
    fd: std::os::fd::RawFd,
    given_back_to: Option<libc::pid_t>,
    termios: libc::termios,
}

impl Taken {
    fn take(tty: &std::fs::File, fg: libc::pid_t) -> Result<Taken, String> {
        let fd = tty.as_raw_fd();
        // SAFETY: plain calls on a valid fd; termios is plain data.
        unsafe {
            let mut termios: libc::termios = std::mem::zeroed();
            libc::tcgetattr(fd, &mut termios);
            let mine = libc::getpgrp();
            let given_back_to = if fg == mine {
                None
            } else if libc::tcsetpgrp(fd, mine) == 0 {
                Some(fg)
            } else {
                return Err("the terminal cannot be taken for the prompt".to_owned());
            };
            Ok(Taken {
                fd,
                given_back_to,
                termios,
            })
        }
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        // SAFETY: the fd outlives this guard (declared after the file).
        unsafe {
            libc::tcsetattr(self.fd, libc::TCSADRAIN, &self.termios);
            if let Some(group) = self.given_back_to {
                libc::tcsetpgrp(self.fd, group);
            }
        }
    }
}

/// The question and its answer, on a terminal this process holds.
fn ask_on(tty: &mut std::fs::File, q: &Question) -> Answer {
    let deadline = Instant::now() + q.timeout;
    let rule = q
        .rule
        .as_deref()
        .map(|r| format!(" [{r}]"))
        .unwrap_or_default();
    let mut text = format!(
        "\r\n\x1b[1maileron: approval needed\x1b[0m{rule}: {}\r\n",
        q.reason
    );
    text.push_str(&format!("  command: {}\r\n", q.command));
    if q.line != q.command {
        text.push_str(&format!("  in line: {}\r\n", q.line));
    }
    let choices = format!(
        "  [o] allow once  [s] always this session  [p] always for this project  [u] always for me\r\n  [r] reject  [f] reject with feedback   (no answer in {}s: {}) > ",
        q.timeout.as_secs(),
        if q.allow_on_timeout { "allow" } else { "deny" }
    );
    text.push_str(&choices);
    if tty.write_all(text.as_bytes()).is_err() {
        return Answer::Unavailable("the terminal cannot be written".to_owned());
    }
    loop {
        let Some(line) = read_line(tty, deadline) else {
            let _ = tty.write_all(b"\r\naileron: no answer, timed out\r\n");
            return Answer::Timeout;
        };
        let scope = match line.trim() {
            "o" | "y" | "once" => return Answer::Once,
            "s" => AlwaysScope::Session,
            "p" => AlwaysScope::Project,
            "u" => AlwaysScope::User,
            "r" | "n" => return Answer::Reject,
            "f" => {
                let _ = tty.write_all(b"  feedback for the agent > ");
                return match read_line(tty, deadline) {
                    Some(f) if !f.trim().is_empty() => Answer::Feedback(f.trim().to_owned()),
                    Some(_) => Answer::Reject,
                    None => Answer::Timeout,
                };
            }
            _ => {
                let _ = tty.write_all(b"  please answer o, s, p, u, r or f > ");
                continue;
            }
        };
        let exact = escape_glob(&q.command);
        // Not a shell command: "always" means exactly this action.
        if q.suggestion.is_empty() {
            return Answer::Always(scope, exact);
        }
        // What "always" covers is a step of its own: only e or x answer it.
        let _ = tty.write_all(
            format!(
                "  always {}: [e] exactly `{}`  [x] prefix `{}`  [b] back > ",
                scope_words(scope),
                q.command,
                q.suggestion
            )
            .as_bytes(),
        );
        loop {
            match read_line(tty, deadline).as_deref().map(str::trim) {
                Some("e") => return Answer::Always(scope, exact),
                Some("x") => return Answer::Always(scope, q.suggestion.clone()),
                Some("b" | "\x1b") => {
                    let _ = tty.write_all(choices.as_bytes());
                    break;
                }
                Some(_) => {
                    let _ =
                        tty.write_all(b"  please answer e (exactly), x (prefix) or b (back) > ");
                }
                None => return Answer::Timeout,
            }
        }
    }
}

/// How an "always" scope is said.
pub fn scope_words(scope: AlwaysScope) -> &'static str {
    match scope {
        AlwaysScope::Session => "this session",
        AlwaysScope::Project => "for this project",
        AlwaysScope::User => "for me",
    }
}

/// Reads one line (up to `\n` or `\r`, for terminals in raw mode) before `deadline`.
fn read_line(tty: &mut std::fs::File, deadline: Instant) -> Option<String> {
    let mut buf = Vec::new();
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        let mut pfd = libc::pollfd {
            fd: tty.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if n == 0 {
                return None;
            }
            return None;
        }
        let mut byte = [0u8; 1];
        match tty.read(&mut byte) {
            Ok(0) | Err(_) => return None,
            Ok(_) if byte[0] == b'\n' || byte[0] == b'\r' => {
                let _ = tty.write_all(b"\r\n");
                return Some(String::from_utf8_lossy(&buf).into_owned());
            }
            Ok(_) => buf.push(byte[0]),
        }
    }
}
