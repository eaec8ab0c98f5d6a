//! Paths as a case-insensitive file system compares them, and whether two
//! path globs can name a common path.
//!
//! The built-in rules protect names (`aileron.yaml`, `.claude/settings.json`,
//! `tokens/`): on macOS (and in Linux casefold directories) `AILERON.YAML`
//! is the same file, so both sides are [`fold`]ed before they are compared.
//! A write or read target that is itself a glob (`rm -rf .c*`,
//! `cat ~/.aileron/tok*/x`) is protected when it [`overlaps`] a protected
//! glob: some path matches both.

use std::borrow::Cow;

/// `path` lowercased, without the code points HFS+ ignores in names (as
/// git's `is_hfs_dotgit` does), `ſ` read as `s`. Borrowed when nothing changes.
pub fn fold(path: &str) -> Cow<'_, str> {
    if is_folded(path.as_bytes()) {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' => {}
            '\u{feff}' => {}
            '\u{017f}' => out.push('s'),
            c => out.extend(c.to_lowercase()),
        }
    }
    Cow::Owned(out)
}

/// ASCII without capitals, eight bytes at a time (every path the built-ins
/// see is tested several times).
fn is_folded(bytes: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        // With every byte below 0x80, adding 0x3f (0x25) to each sets its
        // high bit when it is at least `A` (above `Z`), with no carry.
        if w & HIGH != 0
            || w.wrapping_add(0x3f3f_3f3f_3f3f_3f3f) & !w.wrapping_add(0x2525_2525_2525_2525) & HIGH
                != 0
        {
            return false;
        }
    }
    words
        .remainder()
        .iter()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
}

/// Characters that make a path a glob (an extglob group `@(...)`, `!(...)`,
/// `+(...)` too: this module cannot read those, so they overlap everything).
pub fn has_glob_chars(path: &str) -> bool {
    let b = path.as_bytes();
    b.iter().any(|c| matches!(c, b'*' | b'?' | b'[' | b'('))
        && b.iter().enumerate().any(|(i, c)| match c {
            b'*' | b'?' | b'[' => true,
            b'(' => i > 0 && matches!(b[i - 1], b'@' | b'!' | b'+'),
            _ => false,
        })
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Lit(char),
    /// `?`: one character.
    One,
    /// `*`: any run of characters within a component.
    Star,
    /// `[...]`: ranges, negated or not.
    Class(bool, Vec<(char, char)>),
}

#[derive(Clone, Debug)]
enum Part {
    /// `**`: zero or more components.
    Deep,
    Name(Vec<Tok>),
}

/// A parsed absolute path glob, as the built-ins compare it. `None` for
/// text this module cannot read (an unclosed `[`, an extglob group):
/// callers treat it as overlapping everything.
pub struct Parsed(Vec<Part>);

pub fn parse(glob: &str) -> Option<Parsed> {
    if glob.contains("@(") || glob.contains("!(") || glob.contains("+(") {
        return None;
    }
    glob.split('/')
        .filter(|c| !c.is_empty())
        .map(|c| {
            if c == "**" {
                Some(Part::Deep)
            } else {
                parse_name(c).map(Part::Name)
            }
        })
        .collect::<Option<Vec<_>>>()
        .map(Parsed)
}

fn parse_name(c: &str) -> Option<Vec<Tok>> {
    let chars: Vec<char> = c.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => {
                if out.last() != Some(&Tok::Star) {
                    out.push(Tok::Star);
                }
                i += 1;
            }
            '?' => {
                out.push(Tok::One);
                i += 1;
            }
            '\\' if i + 1 < chars.len() => {
                out.push(Tok::Lit(chars[i + 1]));
                i += 2;
            }
            '[' => {
                let mut j = i + 1;
                let negated = matches!(chars.get(j), Some('!' | '^'));
                if negated {
                    j += 1;
                }
                let mut ranges = Vec::new();
                let mut first = true;
                loop {
                    let c = *chars.get(j)?;
                    if c == ']' && !first {
                        break;
                    }
                    first = false;
                    if chars.get(j + 1) == Some(&'-') && chars.get(j + 2).is_some_and(|e| *e != ']')
                    {
                        ranges.push((c, chars[j + 2]));
                        j += 3;
                    } else {
                        ranges.push((c, c));
                        j += 1;
                    }
                }
                out.push(Tok::Class(negated, ranges));
                i = j + 1;
            }
            c => {
                out.push(Tok::Lit(c));
                i += 1;
            }
        }
    }
    Some(out)
}

/// Whether one character can match both tokens (neither `Star`).
/// Approximate towards `true` for two classes of which one is negated.
fn chars_meet(a: &Tok, b: &Tok) -> bool {
    let in_class = |c: char, neg: bool, r: &[(char, char)]| {
        r.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != neg
    };
    match (a, b) {
        (Tok::Lit(x), Tok::Lit(y)) => x == y,
        (Tok::Lit(x), Tok::Class(n, r)) | (Tok::Class(n, r), Tok::Lit(x)) => in_class(*x, *n, r),
        (Tok::Class(false, r1), Tok::Class(false, r2)) => r1
            .iter()
            .any(|(a0, a1)| r2.iter().any(|(b0, b1)| a0 <= b1 && b0 <= a1)),
        (Tok::Class(false, r), Tok::One) | (Tok::One, Tok::Class(false, r)) => !r.is_empty(),
        _ => true,
    }
}

/// Whether one component name can match both token lists.
fn names_meet(a: &[Tok], b: &[Tok]) -> bool {
    let w = b.len() + 1;
    let mut seen = vec![false; (a.len() + 1) * w];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, j)) = stack.pop() {
        if std::mem::replace(&mut seen[i * w + j], true) {
            continue;
        }
        if i == a.len() && j == b.len() {
            return true;
        }
        if a.get(i) == Some(&Tok::Star) {
            stack.push((i + 1, j));
        }
        if b.get(j) == Some(&Tok::Star) {
            stack.push((i, j + 1));
        }
        if let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
            let (cx, ni) = if *x == Tok::Star {
                (&Tok::One, i)
            } else {
                (x, i + 1)
            };
            let (cy, nj) = if *y == Tok::Star {
                (&Tok::One, j)
            } else {
                (y, j + 1)
            };
            if chars_meet(cx, cy) {
                stack.push((ni, nj));
            }
        }
    }
    false
}

/// Whether some path matches both globs (`**` = zero or more components,
/// `*` and `?` never cross `/`; a leading dot is not special, since the
/// shell's `dotglob` may be on).
pub fn overlaps(a: &Parsed, b: &Parsed) -> bool {
    let (a, b) = (&a.0, &b.0);
    let w = b.len() + 1;
    let mut seen = vec![false; (a.len() + 1) * w];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, j)) = stack.pop() {
        if std::mem::replace(&mut seen[i * w + j], true) {
            continue;
        }
        if i == a.len() && j == b.len() {
            return true;
        }
        match (a.get(i), b.get(j)) {
            (Some(Part::Deep), next) => {
                stack.push((i + 1, j));
                if next.is_some() {
                    stack.push((i, j + 1));
                }
            }
            (next, Some(Part::Deep)) => {
                stack.push((i, j + 1));
                if next.is_some() {
                    stack.push((i + 1, j));
                }
            }
            (Some(Part::Name(x)), Some(Part::Name(y))) if names_meet(x, y) => {
                stack.push((i + 1, j + 1));
            }
            _ => {}
        }
    }
    false
}

/// Whether the glob `target` (parsed) can name a path one of `patterns` matches.
pub fn overlaps_any(target: &Parsed, patterns: &[String]) -> bool {
    patterns
        .iter()
        .any(|p| parse(p).is_none_or(|p| overlaps(target, &p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meet(a: &str, b: &str) -> bool {
        overlaps(&parse(a).unwrap(), &parse(b).unwrap())
    }

    #[test]
    fn globs_that_share_a_path() {
        assert!(meet("/p/.c*", "/**/.claude"));
        assert!(meet("/p/*", "/**/aileron.yaml"));
        assert!(!meet("/p/*.o", "/**/aileron.yaml"));
        assert!(meet("/p/*/settings.json", "/**/.claude/settings.json"));
        assert!(!meet("/p/*/x.json", "/**/.claude/settings.json"));
        assert!(meet("/h/.aileron/tok*/x", "/h/.aileron/tokens/**"));
        assert!(!meet("/h/.aileron/*.yaml", "/h/.aileron/**/*.token"));
        assert!(
            meet("/h/.aileron/*.yaml", "/h/.aileron/**/*.db*"),
            "x.db.yaml"
        );
        assert!(meet("/h/.aileron/[a-c]*", "/h/.aileron/**/*.token"));
        assert!(!meet(
            "/h/.aileron/[x-z]dmin.token",
            "/h/.aileron/admin.token"
        ));
        assert!(meet("/h/.aileron/?dmin.token", "/h/.aileron/admin.token"));
        assert!(!meet("/p/*", "/p/a/b"), "`*` stays in one component");
        assert!(meet("/p/**", "/p/a/b"));
        assert!(meet("/p/a*b*c", "/p/*c"));
        assert!(!meet("/p/a*", "/p/b*"));
        assert!(meet("/tmp/aileron-*/bin/bash", "/tmp/aileron-*/**"));
        assert!(meet("/p/[*]", "/p/\\*"), "escaped and bracketed stars");
        assert!(!meet("/p/[*]", "/p/a"));
    }

    #[test]
    fn unreadable_globs_overlap_everything() {
        assert!(parse("/p/[abc").is_none());
        assert!(parse("/p/@(x|y)").is_none());
        assert!(overlaps_any(&parse("/p/*").unwrap(), &["/q/[".to_owned()]));
    }

    #[test]
    fn folding() {
        assert_eq!(fold("/p/aileron.yaml"), "/p/aileron.yaml");
        assert!(matches!(fold("/p/x"), Cow::Borrowed(_)));
        assert_eq!(fold("/P/AILERON.YAML"), "/p/aileron.yaml");
        assert_eq!(
            fold("/p/.Clau\u{200c}de/ſettings.json"),
            "/p/.claude/settings.json"
        );
        assert_eq!(fold("/p/\u{212a}"), "/p/k", "the Kelvin sign");
        for s in [
            "/p/abcdefgh",
            "/p/abcdefgH",
            "/@[`{/xyz",
            "/p/abcdefghAB",
            "/Zp",
        ] {
            let slow = s.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase());
            assert_eq!(is_folded(s.as_bytes()), slow, "{s}");
        }
        for c in 0u8..0x80 {
            let s = format!("/p/abcdef{}", c as char);
            assert_eq!(is_folded(s.as_bytes()), !c.is_ascii_uppercase(), "{c}");
        }
    }
}
