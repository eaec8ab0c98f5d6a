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
    claude_code(line, home)
        .or_else(|| gemini_cli(line))
        .or_else(|| codex(line, home))
}

/// Claude Code (2.1.330 as recorded in `tests/fixtures/harness/`, and
/// the 2.0 form): `[source SNAP 2>/dev/null || true && ]`
/// `[\builtin shopt -u extglob 2>/dev/null || true && ]`, any number of
/// `{ \builtin unalias -- 'NAME'; \builtin unset -f -- 'NAME'; } >/dev/null 2>&1 || true && `,
/// then `eval 'CMD'[ < /dev/null] && pwd -P >| /tmp/claude-XXXX-cwd`.
/// Without a snapshot (the first command, or none was made) the `source`
/// part is missing.
fn claude_code(line: &str, home: &str) -> Option<String> {
    let mut rest = line;
    if let Some(r) = rest.strip_prefix("source ") {
        let (snapshot, r) = r.split_once(' ')?;
        if !claude_snapshot(snapshot, home) {
            return None;
        }
        rest = r
            .strip_prefix("2>/dev/null || true && ")
            .or_else(|| r.strip_prefix("&& "))?;
    }
    if let Some(r) = rest.strip_prefix("\\builtin shopt -u extglob 2>/dev/null || true && ") {
        rest = r;
    } else if let Some(r) = rest.strip_prefix("shopt -u ") {
        let (opts, r) = r.split_once(" && ")?;
        if !opts
            .split(' ')
            .all(|o| !o.is_empty() && o.chars().all(|c| c.is_ascii_alphabetic()))
        {
            return None;
        }
        rest = r;
    }
    while let Some(r) = rest.strip_prefix("{ \\builtin unalias -- '") {
        let (name, r) = r.split_once("'; \\builtin unset -f -- '")?;
        let r = r.strip_prefix(name)?;
        rest = r.strip_prefix("'; } >/dev/null 2>&1 || true && ")?;
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return None;
        }
    }
    let rest = rest.strip_prefix("eval ")?;
    let (cmd, tail) = single_quoted(rest)?;
    let tail = tail.strip_prefix(" < /dev/null").unwrap_or(tail);
    let cwd_file = tail.strip_prefix(" && pwd -P >| ")?;
    let ok = cwd_file.starts_with("/tmp/claude-")
        && cwd_file.ends_with("-cwd")
        && cwd_file.len() > "/tmp/claude--cwd".len()
        && cwd_file["/tmp/claude-".len()..cwd_file.len() - "-cwd".len()]
            .chars()
            .all(|c| c.is_ascii_alphanumeric());
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

/// Gemini CLI 0.61 (as recorded in `tests/fixtures/harness/`):
/// `shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=TMP/gemini-shell-XXXXXX/bgpids.tmp`
/// `\n(\n  trap 'jobs -p > "$_bgpids_file"' EXIT\nCMD\n)\n__code=$?\nexit $__code`;
/// and the older `…; { CMD; }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_HEX.tmp 2>&1; exit $__code;`.
/// A command that would close the subshell early (`)`) does not parse
/// alone, so the analysis of what is unwrapped refuses it.
fn gemini_cli(line: &str) -> Option<String> {
    let rest = line.strip_prefix("shopt -u promptvars nullglob extglob nocaseglob dotglob; ")?;
    if let Some(rest) = rest.strip_prefix("_bgpids_file=") {
        let (file, rest) = rest.split_once('\n')?;
        let dir = file.strip_suffix("/bgpids.tmp")?;
        let (parent, name) = dir.rsplit_once('/')?;
        let random = name.strip_prefix("gemini-shell-")?;
        let ok = parent.starts_with('/')
            && parent
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
            && !random.is_empty()
            && random.chars().all(|c| c.is_ascii_alphanumeric());
        let cmd = rest
            .strip_prefix("(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n")?
            .strip_suffix("\n)\n__code=$?\nexit $__code")?;
        return ok.then(|| cmd.to_owned());
    }
    let rest = rest.strip_prefix("{ ")?;
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

/// Codex CLI 0.169 (as recorded in `tests/fixtures/harness/`) runs a
/// command after the first through its snapshot wrapper: lines that save
/// Codex's variables, source its snapshot of the user's shell
/// (`HOME/.codex/shell_snapshots/NAME.sh`), restore the variables, put
/// Codex's `codex-path` directory first on PATH, and a last line
/// `exec 'SHELL' -c 'CMD'`. Every line before that must be one of the
/// wrapper's own; the `exec` is what is decided (it runs the command).
fn codex(line: &str, home: &str) -> Option<String> {
    const TEMPLATES: &[&str] = &[
        "",
        "__CODEX_SNAPSHOT_OVERRIDE_SET_%N=\"${%V+x}\"",
        "__CODEX_SNAPSHOT_OVERRIDE_%N=\"${%V-}\"",
        "__CODEX_SNAPSHOT_PROXY_OVERRIDE_SET_%N=\"${%V+x}\"",
        "__CODEX_SNAPSHOT_PROXY_OVERRIDE_%N=\"${%V-}\"",
        "__CODEX_SNAPSHOT_PROXY_ENV_SET=\"${%V+x}\"",
        "if [ -n \"${__CODEX_SNAPSHOT_OVERRIDE_SET_%N}\" ]; then",
        "if [ -n \"${__CODEX_SNAPSHOT_PROXY_OVERRIDE_SET_%N}\" ]; then",
        "  if [ -z \"${%V+x}\" ] || [ \"${%V-}\" != \"${__CODEX_SNAPSHOT_OVERRIDE_%N}\" ]; then export %V=\"${__CODEX_SNAPSHOT_OVERRIDE_%N}\"; else export %V; fi",
        "  if [ -z \"${%V+x}\" ] || [ \"${%V-}\" != \"${__CODEX_SNAPSHOT_PROXY_OVERRIDE_%N}\" ]; then export %V=\"${__CODEX_SNAPSHOT_PROXY_OVERRIDE_%N}\"; else export %V; fi",
        "else builtin unset %V 2>/dev/null || command unset %V; fi",
        "builtin unset %V %V 2>/dev/null || command unset %V %V",
        "if [ -n \"$__CODEX_SNAPSHOT_PROXY_ENV_SET\" ] || [ -n \"${%V+x}\" ]; then",
        "fi",
    ];
    // The wrapper's lines come first; the first line that is an `exec`
    // begins the last part, which runs the (maybe multi-line) command.
    let at = line.find("\nexec '")?;
    let (body, last) = (&line[..at], &line[at + 1..]);
    let rest = last.strip_prefix("exec '")?;
    let (shell, rest) = rest.split_once("' -c '")?;
    if !shell.starts_with('/')
        || !crate::invocation::is_shell_name(shell.rsplit('/').next()?)
        || !rest.ends_with('\'')
    {
        return None;
    }
    let snapshot_dir = format!("{}/.codex/shell_snapshots/", home.trim_end_matches('/'));
    let mut sourced = false;
    for l in body.split('\n') {
        if let Some(snapshot) = l
            .strip_prefix("if . '")
            .and_then(|r| r.strip_suffix("' >/dev/null 2>&1; then :; fi"))
        {
            let name = snapshot.strip_prefix(&snapshot_dir)?.strip_suffix(".sh")?;
            let ok = home.starts_with('/')
                && !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
                && !name.contains("..");
            if !ok || sourced {
                return None;
            }
            sourced = true;
        } else if let Some(dirs) = l
            .strip_prefix("if [ -n \"${PATH:-}\" ]; then export PATH='")
            .and_then(|r| r.strip_suffix("'; fi"))
        {
            let (first, second) = dirs.split_once("':\"$PATH\"; else export PATH='")?;
            let literal = |c: char| c.is_ascii_alphanumeric() || "/._-@+".contains(c);
            if first != second
                || !first.starts_with('/')
                || !first.ends_with("/codex-path")
                || !first.chars().all(literal)
            {
                return None;
            }
        } else if !TEMPLATES.iter().any(|t| fits(l, t)) {
            return None;
        }
    }
    sourced.then(|| last.to_owned())
}

/// Whether `line` is `template` with each `%V` a variable name and each
/// `%N` a number.
fn fits(line: &str, template: &str) -> bool {
    let Some((lit, rest)) = template.split_once('%') else {
        return line == template;
    };
    let Some(line) = line.strip_prefix(lit) else {
        return false;
    };
    let (class, rest): (fn(char) -> bool, &str) = match rest.as_bytes().first() {
        Some(b'V') => (|c| c.is_ascii_alphanumeric() || c == '_', &rest[1..]),
        Some(b'N') => (|c| c.is_ascii_digit(), &rest[1..]),
        _ => return false,
    };
    let end = line.find(|c: char| !class(c)).unwrap_or(line.len());
    let name_start = template.as_bytes()[lit.len() + 1] != b'V'
        || !line.starts_with(|c: char| c.is_ascii_digit());
    end > 0 && name_start && fits(&line[end..], rest)
}

/// A word made of single-quoted parts and quotes given as `\'` or `"'"`
/// (`'a'\''b'`, `'a'"'"'b'`), and what follows it.
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
        } else if let Some(r) = rest
            .strip_prefix("\\'")
            .or_else(|| rest.strip_prefix("\"'\""))
        {
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
