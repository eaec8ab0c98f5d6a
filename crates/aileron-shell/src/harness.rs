//! Agents wrap the model's command in their own harness before handing it
//! to the shell. The policy is about the model's command, so the shim
//! recognizes the known wrappers exactly and decides what they wrap. A line
//! that is not exactly a known wrapper is decided as it is.

/// The line to decide for a shell's `-c` text: the model's command when
/// it is in a known agent wrapper, the text itself otherwise. The shim and
/// the launch session both decide this, so they decide the same line.
pub fn model_command(text: String) -> String {
    unwrap(&text).unwrap_or(text)
}

/// The model's command inside a known agent wrapper, if `line` is one.
pub fn unwrap(line: &str) -> Option<String> {
    claude_code(line).or_else(|| gemini_cli(line))
}

/// Claude Code: `source SNAP && [shopt -u extglob … && ]eval 'CMD' < /dev/null && pwd -P >| /tmp/claude-XXXX-cwd`.
fn claude_code(line: &str) -> Option<String> {
    let rest = line.strip_prefix("source ")?;
    let (snapshot, rest) = rest.split_once(" && ")?;
    if snapshot.contains(char::is_whitespace) || !snapshot.contains("snapshot") {
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

    #[test]
    fn claude_code_wrapper() {
        let line = "source /home/u/.claude/shell-snapshots/snapshot-bash-1.sh && shopt -u extglob 2>/dev/null || true && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-ab12-cwd";
        // Not exactly the wrapper (extra `2>/dev/null || true`): decided as written.
        assert_eq!(unwrap(line), None);
        let line = "source /home/u/.claude/shell-snapshots/snapshot-bash-1.sh && shopt -u extglob && eval 'git log --format='\\''%h'\\''' < /dev/null && pwd -P >| /tmp/claude-ab12-cwd";
        assert_eq!(unwrap(line).as_deref(), Some("git log --format='%h'"));
        let line = "source /x/snapshot.sh && eval 'rm -rf x' < /dev/null && pwd -P >| /tmp/claude-1-cwd; rm -rf y";
        assert_eq!(
            unwrap(line),
            None,
            "anything after the wrapper is not harness"
        );
    }

    #[test]
    fn gemini_cli_wrapper() {
        let line = "shopt -u promptvars nullglob extglob nocaseglob dotglob; { npm test; }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_1f2e.tmp 2>&1; exit $__code;";
        assert_eq!(unwrap(line).as_deref(), Some("npm test"));
        let evil = "shopt -u promptvars nullglob extglob nocaseglob dotglob; { npm test; }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_1f2e.tmp 2>&1; exit $__code; rm -rf x";
        assert_eq!(unwrap(evil), None);
    }
}
