//! Agents wrap the model's command in their own harness before handing it
//! to the shell. The policy is about the model's command, so the shim
//! recognizes the known wrappers exactly and decides what they wrap. A line
//! that is not exactly a known wrapper is decided as it is.
//!
//! What a wrapper runs besides the model's command is trusted without
//! being decided, so it must be the agent's own: Claude Code's wrapper
//! sources a snapshot of the user's shell, trusted only where Claude Code
//! keeps them, `~/.claude/shell-snapshots/snapshot-*.sh` under the home
//! directory the caller knows (never one the line could choose).

/// The line to decide for a shell's `-c` text: the model's command when
/// it is in a known agent wrapper, the text itself otherwise. The shim and
/// the launch session both decide this, so they decide the same line.
/// `home` is the user's home directory, as the caller knows it.
pub fn model_command(text: String, home: &str) -> String {
    unwrap(&text, home).unwrap_or(text)
}

/// The model's command inside a known agent wrapper, if `line` is one.
pub fn unwrap(line: &str, home: &str) -> Option<String> {
    claude_code(line, home).or_else(|| gemini_cli(line))
}

/// Claude Code: `source SNAP && [shopt -u extglob … && ]eval 'CMD' < /dev/null && pwd -P >| /tmp/claude-XXXX-cwd`.
fn claude_code(line: &str, home: &str) -> Option<String> {
    let rest = line.strip_prefix("source ")?;
    let (snapshot, rest) = rest.split_once(" && ")?;
    if !claude_snapshot(snapshot, home) {
        return None;
    }
    let rest = match rest.strip_prefix("shopt -u ") {
        Some(r) => {
            let (opts, r) = r.split_once(" && ")?;
            if !opts
                .split(' ')
                .all(|o| o.chars().all(|c| c.is_ascii_alphabetic()))
            {
                return None;
            }
            r
        }
        None => rest,
    };
    let rest = rest.strip_prefix("eval ")?;
    let (cmd, tail) = single_quoted(rest)?;
    let cwd_file = tail.strip_prefix(" < /dev/null && pwd -P >| ")?;
    let ok = cwd_file.starts_with("/tmp/claude-")
        && cwd_file.ends_with("-cwd")
        && !cwd_file.contains(char::is_whitespace);
    ok.then_some(cmd)
}

/// Whether `word`, as bash reads it, is one of Claude Code's shell
/// snapshots under `home`: `HOME/.claude/shell-snapshots/snapshot-NAME.sh`,
/// every character one bash takes literally (no quote, expansion or glob).
fn claude_snapshot(word: &str, home: &str) -> bool {
    let literal = |c: char| c.is_alphanumeric() || "/._-+,@%:".contains(c);
    let home = home.trim_end_matches('/');
    let Some(name) = word
        .strip_prefix(home)
        .and_then(|rest| rest.strip_prefix("/.claude/shell-snapshots/snapshot-"))
        .and_then(|rest| rest.strip_suffix(".sh"))
    else {
        return false;
    };
    home.starts_with('/')
        && word.chars().all(literal)
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
}

/// Gemini CLI: `shopt -u promptvars nullglob extglob nocaseglob dotglob; { CMD; }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_HEX.tmp 2>&1; exit $__code;`.
fn gemini_cli(line: &str) -> Option<String> {
    let rest = line.strip_prefix("shopt -u promptvars nullglob extglob nocaseglob dotglob; { ")?;
    let (cmd, tail) = rest.rsplit_once("; }; __code=$?; pgrep -g 0 >")?;
    let (file, end) = tail.split_once(" 2>&1; exit $__code;")?;
    let ok = end.is_empty()
        && file.starts_with("/tmp/shell_pgrep_")
        && file.ends_with(".tmp")
        && file["/tmp/shell_pgrep_".len()..file.len() - 4]
            .chars()
            .all(|c| c.is_ascii_hexdigit());
    ok.then(|| cmd.to_owned())
}

/// A word made of single-quoted parts and `\'` escapes (`'a'\''b'`), and what follows it.
fn single_quoted(s: &str) -> Option<(String, &str)> {
    let mut out = String::new();
    let mut rest = s;
    let mut any = false;
    loop {
        if let Some(r) = rest.strip_prefix('\'') {
            let end = r.find('\'')?;
            out.push_str(&r[..end]);
            rest = &r[end + 1..];
            any = true;
        } else if let Some(r) = rest.strip_prefix("\\'") {
            out.push('\'');
            rest = r;
        } else {
            break;
        }
    }
    any.then_some((out, rest))
}

#[cfg(test)]
mod tests {
    use super::unwrap;

    const HOME: &str = "/home/u";

    #[test]
    fn claude_code_wrapper() {
        let line = "source /home/u/.claude/shell-snapshots/snapshot-bash-1.sh && shopt -u extglob 2>/dev/null || true && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-ab12-cwd";
        // Not exactly the wrapper (extra `2>/dev/null || true`): decided as written.
        assert_eq!(unwrap(line, HOME), None);
        let line = "source /home/u/.claude/shell-snapshots/snapshot-bash-1.sh && shopt -u extglob && eval 'git log --format='\\''%h'\\''' < /dev/null && pwd -P >| /tmp/claude-ab12-cwd";
        assert_eq!(unwrap(line, HOME).as_deref(), Some("git log --format='%h'"));
        assert_eq!(
            unwrap(line, "/home/u/").as_deref(),
            Some("git log --format='%h'")
        );
        let line = "source /home/u/.claude/shell-snapshots/snapshot-bash-1.sh && eval 'rm -rf x' < /dev/null && pwd -P >| /tmp/claude-1-cwd; rm -rf y";
        assert_eq!(
            unwrap(line, HOME),
            None,
            "anything after the wrapper is not harness"
        );
    }

    /// The snapshot is sourced without being decided: only one where
    /// Claude Code keeps them, under the caller's home, is harness.
    #[test]
    fn a_snapshot_elsewhere_is_not_harness() {
        let wrap = |snapshot: &str| {
            format!("source {snapshot} && eval 'ls' < /dev/null && pwd -P >| /tmp/claude-1-cwd")
        };
        let trusted = "/home/u/.claude/shell-snapshots/snapshot-zsh-17-ab.sh";
        assert_eq!(unwrap(&wrap(trusted), HOME).as_deref(), Some("ls"));
        for snapshot in [
            "/tmp/snapshot.sh",
            "/tmp/x/.claude/shell-snapshots/snapshot-bash-1.sh",
            "/home/u/proj/.claude/shell-snapshots/snapshot-bash-1.sh",
            "/home/u/.claude/shell-snapshots/../../../tmp/snapshot-1.sh",
            "/home/u/.claude/shell-snapshots/snapshot-x/../../../../tmp/a.sh",
            "/home/u/.claude/shell-snapshots/snapshot-.sh",
            "/home/u/.claude/shell-snapshots/snapshot-$X.sh",
            "/home/u/.claude/shell-snapshots/snapshot-*.sh",
            "/home/u/.claude/shell-snapshots/other-1.sh",
            "~/.claude/shell-snapshots/snapshot-bash-1.sh",
            "$HOME/.claude/shell-snapshots/snapshot-bash-1.sh",
            "/home/uu/.claude/shell-snapshots/snapshot-bash-1.sh",
        ] {
            assert_eq!(unwrap(&wrap(snapshot), HOME), None, "{snapshot}");
        }
        // A home bash would not read literally, a relative one, or none.
        let odd = "/home/a*b/.claude/shell-snapshots/snapshot-bash-1.sh";
        assert_eq!(unwrap(&wrap(odd), "/home/a*b"), None);
        let relative = "u/.claude/shell-snapshots/snapshot-bash-1.sh";
        assert_eq!(unwrap(&wrap(relative), "u"), None);
        let root = "/.claude/shell-snapshots/snapshot-bash-1.sh";
        assert_eq!(unwrap(&wrap(root), ""), None);
    }

    #[test]
    fn gemini_cli_wrapper() {
        let line = "shopt -u promptvars nullglob extglob nocaseglob dotglob; { npm test; }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_1f2e.tmp 2>&1; exit $__code;";
        assert_eq!(unwrap(line, HOME).as_deref(), Some("npm test"));
        let evil = "shopt -u promptvars nullglob extglob nocaseglob dotglob; { npm test; }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_1f2e.tmp 2>&1; exit $__code; rm -rf x";
        assert_eq!(unwrap(evil, HOME), None);
    }
}
