//! Decoding of shell words: quote removal, escapes, ANSI-C strings, and the
//! command substitutions a word contains.
//!
//! Expansions are not performed. A parameter expansion stays as written
//! (`$HOME`, `${X:-y}`), and so does a command substitution; the word is then
//! marked [`Word::dynamic`] (except for a leading `$HOME` / `${HOME}` / `~`,
//! which path resolution understands), and the text of every command
//! substitution is handed back so that its commands can be analysed too.

use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ParserOptions;
use brush_parser::word::{self as bw, ParameterExpr, WordPiece, WordPieceWithSource};

/// One decoded word.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Word {
    /// The word after quote removal, expansions kept as written.
    pub text: String,
    /// Contains a parameter expansion (other than a leading `$HOME`), a
    /// command substitution or an arithmetic expansion: its value at run
    /// time is not known.
    pub dynamic: bool,
    /// Is a process substitution (`<(...)`, `>(...)`).
    pub procsub: bool,
    /// Could not be decoded; `text` is the raw word.
    pub broken: bool,
}

impl Word {
    pub(crate) fn literal(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            ..Word::default()
        }
    }
}

/// Parser options shared by every parse in this crate.
pub(crate) fn parser_options() -> ParserOptions {
    ParserOptions::default()
}

/// Bytes that never need the word parser: a word made only of them is its
/// own decoded text.
fn is_plain(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'_'
                | b'.'
                | b'/'
                | b'='
                | b':'
                | b','
                | b'+'
                | b'@'
                | b'%'
                | b'^'
                | b'*'
                | b'?'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'!'
                | b'#'
                | b'~'
        )
}

/// Decodes a raw word. The text of each command substitution found in it
/// (also inside double quotes, parameter-expansion operands and arithmetic)
/// is appended to `subs`. `budget` bounds the recursion into nested operands.
pub(crate) fn decode(raw: &str, subs: &mut Vec<String>, budget: usize) -> Word {
    if raw.bytes().all(is_plain) {
        return Word::literal(raw);
    }
    let opts = parser_options();
    let parsed = catch_unwind(AssertUnwindSafe(|| bw::parse(raw, &opts)));
    match parsed {
        Ok(Ok(pieces)) => {
            let mut d = Decoding {
                raw,
                out: String::with_capacity(raw.len()),
                dynamic: false,
                subs,
                budget,
            };
            d.pieces(&pieces, false);
            Word {
                text: d.out,
                dynamic: d.dynamic,
                procsub: false,
                broken: false,
            }
        }
        _ => broken(raw),
    }
}

/// Decodes the body of a here-document whose delimiter was not quoted (so
/// the shell expands it). Quotes are literal there.
pub(crate) fn decode_heredoc(body: &str, subs: &mut Vec<String>, budget: usize) -> Word {
    if !body.contains(['$', '`', '\\']) {
        return Word::literal(body);
    }
    let opts = parser_options();
    let parsed = catch_unwind(AssertUnwindSafe(|| bw::parse_heredoc(body, &opts)));
    match parsed {
        Ok(Ok(pieces)) => {
            let mut d = Decoding {
                raw: body,
                out: String::with_capacity(body.len()),
                dynamic: false,
                subs,
                budget,
            };
            d.pieces(&pieces, true);
            Word {
                text: d.out,
                dynamic: d.dynamic,
                procsub: false,
                broken: false,
            }
        }
        _ => broken(body),
    }
}

fn broken(raw: &str) -> Word {
    Word {
        text: raw.to_owned(),
        dynamic: true,
        procsub: false,
        broken: true,
    }
}

struct Decoding<'r, 's> {
    raw: &'r str,
    out: String,
    dynamic: bool,
    subs: &'s mut Vec<String>,
    budget: usize,
}

impl Decoding<'_, '_> {
    fn source(&self, p: &WordPieceWithSource) -> &str {
        self.raw.get(p.start_index..p.end_index).unwrap_or("")
    }

    fn pieces(&mut self, pieces: &[WordPieceWithSource], quoted: bool) {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(s) => self.out.push_str(s),
                WordPiece::SingleQuotedText(s) => self.out.push_str(s),
                WordPiece::AnsiCQuotedText(s) => ansi_c(s, &mut self.out),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => self.pieces(inner, true),
                WordPiece::TildeExpansion(_) => {
                    let s = self.source(p).to_owned();
                    self.out.push_str(&s);
                }
                WordPiece::ParameterExpansion(expr) => {
                    let leading_home = self.out.is_empty() && is_home(expr);
                    if !leading_home {
                        self.dynamic = true;
                    }
                    let s = self.source(p).to_owned();
                    self.out.push_str(&s);
                    self.operands(expr);
                }
                WordPiece::CommandSubstitution(cmd)
                | WordPiece::BackquotedCommandSubstitution(cmd) => {
                    self.dynamic = true;
                    let s = self.source(p).to_owned();
                    self.out.push_str(&s);
                    self.subs.push(cmd.clone());
                }
                WordPiece::EscapeSequence(s) => {
                    let mut chars = s.chars();
                    let _backslash = chars.next();
                    match chars.next() {
                        Some('\n') => {}
                        Some(c) if !quoted || matches!(c, '$' | '`' | '"' | '\\') => {
                            self.out.push(c);
                        }
                        Some(c) => {
                            self.out.push('\\');
                            self.out.push(c);
                        }
                        None => self.out.push('\\'),
                    }
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.dynamic = true;
                    let s = self.source(p).to_owned();
                    self.out.push_str(&s);
                    self.nested(&expr.value);
                }
            }
        }
    }

    /// Looks for command substitutions in the operands of a parameter
    /// expansion (`${x:-$(cmd)}`).
    fn operands(&mut self, expr: &ParameterExpr) {
        let mut strings: [Option<&str>; 2] = [None, None];
        match expr {
            ParameterExpr::Parameter { parameter, .. }
            | ParameterExpr::ParameterLength { parameter, .. } => {
                if let bw::Parameter::NamedWithIndex { index, .. } = parameter {
                    strings[0] = Some(index);
                }
            }
            ParameterExpr::UseDefaultValues {
                default_value: v, ..
            }
            | ParameterExpr::AssignDefaultValues {
                default_value: v, ..
            } => {
                strings[0] = v.as_deref();
            }
            ParameterExpr::IndicateErrorIfNullOrUnset {
                error_message: v, ..
            } => {
                strings[0] = v.as_deref();
            }
            ParameterExpr::UseAlternativeValue {
                alternative_value: v,
                ..
            } => strings[0] = v.as_deref(),
            ParameterExpr::RemoveSmallestSuffixPattern { pattern: v, .. }
            | ParameterExpr::RemoveLargestSuffixPattern { pattern: v, .. }
            | ParameterExpr::RemoveSmallestPrefixPattern { pattern: v, .. }
            | ParameterExpr::RemoveLargestPrefixPattern { pattern: v, .. }
            | ParameterExpr::UppercaseFirstChar { pattern: v, .. }
            | ParameterExpr::UppercasePattern { pattern: v, .. }
            | ParameterExpr::LowercaseFirstChar { pattern: v, .. }
            | ParameterExpr::LowercasePattern { pattern: v, .. } => strings[0] = v.as_deref(),
            ParameterExpr::Substring { offset, length, .. } => {
                strings[0] = Some(&offset.value);
                strings[1] = length.as_ref().map(|l| l.value.as_str());
            }
            ParameterExpr::ReplaceSubstring {
                pattern,
                replacement,
                ..
            } => {
                strings[0] = Some(pattern);
                strings[1] = replacement.as_deref();
            }
            ParameterExpr::Transform { .. }
            | ParameterExpr::VariableNames { .. }
            | ParameterExpr::MemberKeys { .. } => {}
        }
        for s in strings.into_iter().flatten() {
            self.nested(s);
        }
    }

    fn nested(&mut self, s: &str) {
        if !s.contains(['$', '`']) {
            return;
        }
        if self.budget == 0 {
            // Too deep to look into: be safe and report it as a
            // substitution that cannot be parsed.
            self.subs.push(s.to_owned());
            return;
        }
        let _ = decode(s, self.subs, self.budget - 1);
    }
}

fn is_home(expr: &ParameterExpr) -> bool {
    matches!(
        expr,
        ParameterExpr::Parameter {
            parameter: bw::Parameter::Named(name),
            indirect: false,
        } if name == "HOME"
    )
}

/// Decodes the inside of `$'...'`.
pub(crate) fn ansi_c(s: &str, out: &mut String) {
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                push_code(out, v & 0xff);
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                let mut n = 0;
                while n < max {
                    match chars.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v.saturating_mul(16).saturating_add(d);
                            chars.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    push_code(out, v);
                }
            }
            'c' => match chars.next() {
                Some(k) => push_code(out, (k as u32) & 0x1f),
                None => out.push_str("\\c"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
}

fn push_code(out: &mut String, v: u32) {
    out.push(char::from_u32(v).unwrap_or(char::REPLACEMENT_CHARACTER));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(raw: &str) -> (Word, Vec<String>) {
        let mut subs = Vec::new();
        let w = decode(raw, &mut subs, 16);
        (w, subs)
    }

    #[test]
    fn quoting_is_removed() {
        for (raw, want) in [
            ("rm", "rm"),
            ("\"rm\"", "rm"),
            ("'rm'", "rm"),
            ("r''m", "rm"),
            ("\\rm", "rm"),
            ("$'\\x72\\x6d'", "rm"),
            ("$'\\162\\155'", "rm"),
            ("$'\\u0072m'", "rm"),
            ("\"a\\$b\\\"c\"", "a$b\"c"),
            ("\"a\\nb\"", "a\\nb"),
            ("'a b'", "a b"),
            ("a\\ b", "a b"),
        ] {
            let (w, subs) = d(raw);
            assert_eq!(w.text, want, "{raw}");
            assert!(!w.dynamic, "{raw}");
            assert!(subs.is_empty());
        }
    }

    #[test]
    fn expansions_are_kept_and_flagged() {
        let (w, _) = d("$HOME/x");
        assert_eq!(w.text, "$HOME/x");
        assert!(!w.dynamic);
        let (w, _) = d("\"${HOME}\"/x");
        assert_eq!(w.text, "${HOME}/x");
        assert!(!w.dynamic);
        let (w, _) = d("~/x");
        assert_eq!(w.text, "~/x");
        assert!(!w.dynamic);
        let (w, _) = d("$F");
        assert!(w.dynamic);
        let (w, _) = d("x$HOME");
        assert!(w.dynamic);
    }

    #[test]
    fn substitutions_are_found() {
        let (w, subs) = d("\"$(rm -rf x)\"");
        assert!(w.dynamic);
        assert_eq!(subs, vec!["rm -rf x"]);
        let (_, subs) = d("`ls`");
        assert_eq!(subs, vec!["ls"]);
        let (_, subs) = d("${x:-$(rm y)}");
        assert_eq!(subs, vec!["rm y"]);
        let (_, subs) = d("$(( $(rm z) + 1 ))");
        assert_eq!(subs, vec!["rm z"]);
    }

    #[test]
    fn heredoc_bodies() {
        let mut subs = Vec::new();
        let w = decode_heredoc("echo '$(rm x)'\n", &mut subs, 16);
        assert!(w.dynamic);
        assert_eq!(subs, vec!["rm x"]);
    }
}
