//! A desktop notification when an ask starts waiting for another channel
//! than the terminal: `notify-send` (Linux) or `osascript` (macOS), if
//! found on `PATH`. Best effort: started on a thread of its own, never
//! waited for by the ask, and any failure is ignored.

use crate::board::PendingAsk;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Notifies about `ask`, if a notifier exists; returns at once.
pub fn desktop(ask: &PendingAsk) {
    let Some((program, args)) = notifier(ask) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("aileron-notify".into())
        .spawn(move || {
            let child = Command::new(program)
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            // Reaped here, so that no zombie is left behind.
            if let Ok(mut child) = child {
                let _ = child.wait();
            }
        });
}

fn notifier(ask: &PendingAsk) -> Option<(PathBuf, Vec<String>)> {
    let title = "aileron: approval needed".to_owned();
    let mut body = ask.command.clone();
    if body.chars().count() > 200 {
        body = body.chars().take(200).collect::<String>() + "…";
    }
    body.push_str("\nanswer with `aileron approve`");
    if let Some(p) = on_path("notify-send") {
        return Some((p, vec!["--app-name=aileron".into(), title, body]));
    }
    if cfg!(target_os = "macos")
        && let Some(p) = on_path("osascript")
    {
        let quoted = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let script = format!(
            "display notification \"{}\" with title \"{}\"",
            quoted(&body),
            quoted(&title)
        );
        return Some((p, vec!["-e".into(), script]));
    }
    None
}

fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
