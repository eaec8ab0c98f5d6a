//! The command glob of SPEC 6 and the seed's `glob` operator.
//!
//! `*` matches any run of characters (spaces and `/` included), `?` one
//! character, `\*` and `\?` the literal characters; the whole value must
//! match. A command glob that ends in ` *` also matches the bare command, so
//! `git diff *` matches `git diff`. Matching needs no compilation step and
//! runs in O(pattern × text) at worst, linear in practice.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Lit(String),
    Star,
    One,
}

/// A glob, kept as its source and tokenized on first use, so that a
/// policy read from the cache does not rebuild globs no action reaches.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Glob {
    source: String,
    /// A command glob (see [`Glob::command`]).
    command: bool,
    #[serde(skip)]
    tokens: OnceLock<Tokens>,
}

#[derive(Clone, Debug)]
struct Tokens {
    all: Vec<Token>,
    /// For command globs ending in ` *`: the tokens without it.
    bare: Option<Vec<Token>>,
}

impl PartialEq for Glob {
    fn eq(&self, other: &Glob) -> bool {
        (&self.source, self.command) == (&other.source, other.command)
    }
}

impl Eq for Glob {}

impl Glob {
    /// A glob for command lines (`command:`, `binary:`, short-form rules).
    pub fn command(pattern: &str) -> Glob {
        Glob {
            source: pattern.to_owned(),
            command: true,
            tokens: OnceLock::new(),
        }
    }

    /// A glob without the bare-command rule (the pattern dialect's `glob`).
    pub fn plain(pattern: &str) -> Glob {
        Glob {
            source: pattern.to_owned(),
            command: false,
            tokens: OnceLock::new(),
        }
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    fn tokens(&self) -> &Tokens {
        self.tokens.get_or_init(|| {
            let p = &self.source;
            let bare = (self.command && p.ends_with(" *") && !p.ends_with("\\ *"))
                .then(|| tokenize(&p[..p.len() - 2]));
            Tokens {
                all: tokenize(p),
                bare,
            }
        })
    }

    /// Whether `text` matches the whole glob.
    pub fn is_match(&self, text: &str) -> bool {
        let t = self.tokens();
        matches(&t.all, text) || t.bare.as_ref().is_some_and(|b| matches(b, text))
    }

    /// `example.com` for `*.example.com`: every match ends in `.example.com`.
    pub fn domain_suffix(&self) -> Option<&str> {
        let t = self.tokens();
        match (t.all.as_slice(), &t.bare) {
            ([Token::Star, Token::Lit(l)], None) => l.strip_prefix('.').filter(|s| !s.is_empty()),
            _ => None,
        }
    }

    /// The literal text every match starts with, up to the first space
    /// (`git diff *` → `git`): the binary a command glob is about, used to
    /// index rules. `None` when a wildcard comes first.
    pub fn leading_word(&self) -> Option<&str> {
        let tokens = &self.tokens().all;
        match tokens.first() {
            Some(Token::Lit(lit)) => {
                let word = lit.split(' ').next().unwrap_or(lit);
                let whole = word.len() < lit.len() || tokens.len() == 1;
                (whole && !word.is_empty()).then_some(word)
            }
            _ => None,
        }
    }
}

impl Glob {
    /// Whether every text `other` matches, this glob matches too (so
    /// `git *` covers `git push *`). Sound, not complete: `true` is
    /// always right, a few exotic inclusions (`a*` and `*a` together
    /// covering `a*a`) are missed.
    pub fn covers(&self, other: &Glob) -> bool {
        let mine = self.tokens();
        let theirs = other.tokens();
        let alternatives = |t: &Tokens| -> Vec<Vec<Sym>> {
            std::iter::once(&t.all)
                .chain(&t.bare)
                .map(|ts| symbols(ts))
                .collect()
        };
        let mine = alternatives(mine);
        alternatives(theirs)
            .iter()
            .all(|a| mine.iter().any(|m| symbols_cover(m, a)))
    }

    /// The one text this glob matches, when it has no wildcard.
    pub fn literal(&self) -> Option<&str> {
        let t = self.tokens();
        match (t.all.as_slice(), &t.bare) {
            ([], None) => Some(""),
            ([Token::Lit(l)], None) => Some(l),
            _ => None,
        }
    }
}

/// A glob as a sequence of single-character symbols.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sym {
    Char(char),
    One,
    Star,
}

fn symbols(tokens: &[Token]) -> Vec<Sym> {
    let mut out = Vec::new();
    for t in tokens {
        match t {
            Token::Lit(l) => out.extend(l.chars().map(Sym::Char)),
            Token::One => out.push(Sym::One),
            Token::Star => out.push(Sym::Star),
        }
    }
    out
}

/// Whether `outer` matches `inner` read as a text in which `?` and `*`
/// stand for any character and any run: a `*` of `outer` takes any
/// symbols, a `?` one character or `?`, a character only itself. Then every
/// text `inner` matches, `outer` matches.
fn symbols_cover(outer: &[Sym], inner: &[Sym]) -> bool {
    let w = inner.len() + 1;
    let mut seen = vec![false; (outer.len() + 1) * w];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, j)) = stack.pop() {
        if std::mem::replace(&mut seen[i * w + j], true) {
            continue;
        }
        match (outer.get(i), inner.get(j)) {
            (None, None) => return true,
            (Some(Sym::Star), next) => {
                stack.push((i + 1, j));
                if next.is_some() {
                    stack.push((i, j + 1));
                }
            }
            (Some(Sym::One), Some(Sym::Char(_) | Sym::One)) => stack.push((i + 1, j + 1)),
            (Some(Sym::Char(a)), Some(Sym::Char(b))) if a == b => stack.push((i + 1, j + 1)),
            _ => {}
        }
    }
    false
}

fn tokenize(pattern: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut lit = String::new();
    let mut chars = pattern.chars();
    let flush = |lit: &mut String, tokens: &mut Vec<Token>| {
        if !lit.is_empty() {
            tokens.push(Token::Lit(std::mem::take(lit)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n @ ('*' | '?' | '\\')) => lit.push(n),
                Some(n) => {
                    lit.push('\\');
                    lit.push(n);
                }
                None => lit.push('\\'),
            },
            '*' => {
                flush(&mut lit, &mut tokens);
                if tokens.last() != Some(&Token::Star) {
                    tokens.push(Token::Star);
                }
            }
            '?' => {
                flush(&mut lit, &mut tokens);
                tokens.push(Token::One);
            }
            c => lit.push(c),
        }
    }
    flush(&mut lit, &mut tokens);
    tokens
}

/// Wildcard matching with a single backtrack point (the last `*` seen),
/// which is exact for patterns made of literals, `*` and `?`.
fn matches(tokens: &[Token], text: &str) -> bool {
    let (mut ti, mut pos) = (0usize, 0usize);
    let mut backtrack: Option<(usize, usize)> = None;
    loop {
        if let Some(tok) = tokens.get(ti) {
            match tok {
                Token::Star => {
                    if ti + 1 == tokens.len() {
                        return true;
                    }
                    backtrack = Some((ti + 1, pos));
                    ti += 1;
                    continue;
                }
                Token::Lit(l) if text[pos..].starts_with(l.as_str()) => {
                    pos += l.len();
                    ti += 1;
                    continue;
                }
                Token::One => {
                    if let Some(c) = text[pos..].chars().next() {
                        pos += c.len_utf8();
                        ti += 1;
                        continue;
                    }
                }
                Token::Lit(_) => {}
            }
        } else if pos == text.len() {
            return true;
        }
        match backtrack {
            Some((after_star, start)) if start < text.len() => {
                let next = start + text[start..].chars().next().map_or(1, char::len_utf8);
                backtrack = Some((after_star, next));
                ti = after_star;
                pos = next;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(p: &str, t: &str) -> bool {
        Glob::command(p).is_match(t)
    }

    #[test]
    fn adr_0014_examples() {
        assert!(cm("go test *", "go test ./..."));
        assert!(cm("git * --force", "git push --force"));
        assert!(cm("git * --force", "git push origin main --force"));
        assert!(cm("*.sh", "script.sh"));
        assert!(cm("*.sh", "path/to/script.sh"));
    }

    #[test]
    fn anchored_and_bare_command() {
        assert!(cm("git diff *", "git diff"));
        assert!(cm("git diff *", "git diff HEAD~1"));
        assert!(!cm("git diff *", "git diffx"));
        assert!(!cm("git *", "xgit status"));
        assert!(!cm("git status", "git status --short"));
        assert!(!cm("git *", "./git status"));
        assert!(!cm("git *", "/tmp/x/git status"));
        assert!(cm("git status", "git status"));
    }

    #[test]
    fn question_mark_and_escapes() {
        assert!(cm("l?", "ls"));
        assert!(!cm("l?", "l"));
        assert!(cm("echo \\*", "echo *"));
        assert!(!cm("echo \\*", "echo x"));
        assert!(cm("a*b*c", "a--b--b--c"));
        assert!(!cm("a*b*c", "a--b--b--"));
        assert!(cm("é?", "éé"));
        assert!(cm("*", ""));
        assert!(cm("rm -rf /*", "rm -rf /home"));
    }

    #[test]
    fn leading_word_indexes_by_binary() {
        assert_eq!(Glob::command("git diff *").leading_word(), Some("git"));
        assert_eq!(Glob::command("git").leading_word(), Some("git"));
        assert_eq!(Glob::command("git*").leading_word(), None);
        assert_eq!(Glob::command("*.sh").leading_word(), None);
    }

    #[test]
    fn coverage_between_globs() {
        let covers = |a: &str, b: &str| Glob::command(a).covers(&Glob::command(b));
        assert!(covers("git *", "git push *"));
        assert!(covers("git *", "git push origin feature"));
        assert!(covers("git push *", "git push"), "the bare command too");
        assert!(covers("git push *", "git push *"));
        assert!(covers("*", "anything ? at * all"));
        assert!(covers("git ? x", "git a x"));
        assert!(covers("a*b", "a?b"));
        assert!(!covers("git push *", "git *"));
        assert!(
            !covers("git push", "git push *"),
            "`git push *` matches `git push x`"
        );
        assert!(!covers("git push *", "git pushx"));
        assert!(!covers("git ? x", "git * x"));
        assert!(!covers("a?b", "a*b"));
        assert!(!covers("echo \\*", "echo x"), "an escaped star is a star");
        assert!(covers("echo *", "echo \\*"));
        // `git diff *` matches `git diff`; `git diff*` does too.
        assert!(covers("git diff*", "git diff *"));
        assert!(!covers("git diff x*", "git diff *"));
        assert!(
            !Glob::plain("a *").covers(&Glob::command("a *")),
            "no bare rule"
        );
        assert_eq!(Glob::command("git status").literal(), Some("git status"));
        assert_eq!(Glob::command("git *").literal(), None);
        assert_eq!(Glob::plain("a\\*").literal(), Some("a*"));
    }

    #[test]
    fn pathological_patterns_stay_fast() {
        let text = "a".repeat(5000);
        let pat = "*a".repeat(40) + "b";
        assert!(!cm(&pat, &text));
    }
}
