//! Defence in depth for the files Aileron protects: a program that can
//! write and names one of them in an argument its entry does not report
//! as written asks, whatever its option table says. An arity mistake or
//! an option whose effect is not modelled then cannot hand it the policy
//! unseen.

use super::{Facts, PathRef};
use crate::Sensitivity;
use crate::words::Word;

/// The names Aileron protects in any directory (the engine's own files and
/// agents' hook configurations), as trailing path components.
const PROTECTED: &[&[&str]] = &[
    &["aileron.yaml"],
    &["aileron.yml"],
    &[".aileron"],
    &[".claude", "settings.json"],
    &[".claude", "settings.local.json"],
    &[".codex", "hooks.json"],
    &[".codex", "config.toml"],
    &[".gemini", "settings.json"],
    &[".cursor", "hooks.json"],
    &[".cursor", "mcp.json"],
    &[".mcp.json"],
    &["opencode.json"],
    &[".clinerules", "hooks"],
    &[".git", "config"],
    &[".git", "hooks"],
    &[".gitconfig"],
];

/// Does the shell pattern `pat` match `s` (`*`, `?`, `[...]`), ignoring
/// case as a case-insensitive file system would?
fn glob(pat: &[u8], s: &[u8]) -> bool {
    match pat.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|k| glob(&pat[1..], &s[k..])),
        Some(b'?') => !s.is_empty() && glob(&pat[1..], &s[1..]),
        Some(b'[') => match (pat.iter().position(|&c| c == b']'), s.first()) {
            (Some(end), Some(&c)) if end > 1 => {
                let set = &pat[1..end];
                let (neg, set) = match set.first() {
                    Some(b'!' | b'^') => (true, &set[1..]),
                    _ => (false, set),
                };
                let c = c.to_ascii_lowercase();
                let mut hit = false;
                let mut k = 0;
                while k < set.len() {
                    if k + 2 < set.len() && set[k + 1] == b'-' {
                        let (lo, hi) =
                            (set[k].to_ascii_lowercase(), set[k + 2].to_ascii_lowercase());
                        hit |= lo <= c && c <= hi;
                        k += 3;
                    } else {
                        hit |= set[k].to_ascii_lowercase() == c;
                        k += 1;
                    }
                }
                hit != neg && glob(&pat[end + 1..], &s[1..])
            }
            _ => false,
        },
        Some(b'\\') if pat.len() > 1 => {
            s.first().is_some_and(|c| c.eq_ignore_ascii_case(&pat[1])) && glob(&pat[2..], &s[1..])
        }
        Some(&p) => {
            s.first().is_some_and(|c| c.eq_ignore_ascii_case(&p)) && glob(&pat[1..], &s[1..])
        }
    }
}

/// Does `text` (a path, perhaps a pattern) name or match a protected file?
/// Its last two components are compared, without allocating: this runs
/// for every argument of every command that can write.
fn names_protected(text: &str) -> bool {
    let mut comps = text.rsplit('/').filter(|c| !c.is_empty() && *c != ".");
    let (Some(last), before) = (comps.next(), comps.next()) else {
        return false;
    };
    let pattern = |c: &str| c.bytes().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'));
    let (last_pattern, before_pattern) = (pattern(last), before.is_some_and(pattern));
    let same = |c: &str, is_pattern: bool, name: &str| {
        if is_pattern {
            glob(c.as_bytes(), name.as_bytes())
        } else {
            c.eq_ignore_ascii_case(name)
        }
    };
    PROTECTED.iter().any(|p| match p {
        [name] => same(last, last_pattern, name),
        [dir, name] => {
            same(last, last_pattern, name) && before.is_some_and(|b| same(b, before_pattern, dir))
        }
        _ => false,
    })
}

/// Tags `f` opaque when it can write and an argument it does not report
/// as written names a protected file.
pub(crate) fn check(f: &mut Facts, args: &[Word]) {
    if f.sensitivity < Sensitivity::Write {
        return;
    }
    let written = |i: usize| {
        f.writes
            .iter()
            .any(|w| matches!(w, PathRef::Arg { idx, .. } if *idx == i))
    };
    let end = f.skip_from.min(args.len());
    let hit = (1..end).find(|&i| {
        let t = args[i].text.as_str();
        let value = t
            .strip_prefix('-')
            .and_then(|o| o.split_once('='))
            .map_or(t, |(_, v)| v);
        !written(i) && (names_protected(t) || (value.len() < t.len() && names_protected(value)))
    });
    if let Some(i) = hit {
        f.opaque(format!(
            "`{}` can write and names `{}`, a file Aileron protects, without the analysis seeing it written",
            args[0].text, args[i].text
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::names_protected;

    #[test]
    fn names_and_patterns() {
        for t in [
            "aileron.yaml",
            "./AILERON.YAML",
            "/work/p/aileron.yml",
            "ail*",
            "aileron.y?ml",
            "[a]ileron.yaml",
            ".claude/settings.json",
            "x/.claude/settings.*",
            ".git/config",
            "*",
        ] {
            assert!(names_protected(t), "{t}");
        }
        for t in [
            "aileron.yaml.bak",
            "src/main.rs",
            "*.pyc",
            "settings.json",
            "config",
        ] {
            assert!(!names_protected(t), "{t}");
        }
    }
}
