//! Asking the human, on the terminal (`/dev/tty`, never the command's
//! stdin, which belongs to the command).

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::time::Instant;

pub use aileron_decision::{AlwaysScope, Answer, Question, escape_glob, suggest_prefix};

/// Something that can ask a human.
pub trait Prompter: Send + Sync {
    fn ask(&self, q: &Question) -> Answer;
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
        let mut tty = match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.device)
        {
            Ok(t) => t,
            Err(_) => return Answer::Unavailable("there is no terminal to ask on".to_owned()),
        };
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
        text.push_str(&format!(
            "  [o] allow once  [s] always this session  [p] always for this project  [u] always for me\r\n  [r] reject  [f] reject with feedback   (no answer in {}s: {}) > ",
            q.timeout.as_secs(),
            if q.allow_on_timeout { "allow" } else { "deny" }
        ));
        if tty.write_all(text.as_bytes()).is_err() {
            return Answer::Unavailable("the terminal cannot be written".to_owned());
        }
        loop {
            let Some(line) = read_line(&mut tty, deadline) else {
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
                    return match read_line(&mut tty, deadline) {
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
            let _ = tty.write_all(
                format!(
                    "  [e] exactly `{}`  [x] prefix `{}` > ",
                    q.command, q.suggestion
                )
                .as_bytes(),
            );
            return match read_line(&mut tty, deadline).as_deref().map(str::trim) {
                Some("x") => Answer::Always(scope, q.suggestion.clone()),
                Some(_) => Answer::Always(scope, exact),
                None => Answer::Timeout,
            };
        }
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
