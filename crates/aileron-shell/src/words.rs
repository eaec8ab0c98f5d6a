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
    /// Could not be decoded (`text` is then the raw word), or has an
    /// expansion that can run commands hidden in a variable (`${x@P}`).
    pub broken: bool,
    /// Has an unquoted brace expression (`{a,b}`, `{1..3}`): bash makes
    /// several words of it.
    pub brace: bool,
    /// Length of the part of `text` before the first expansion, when
    /// `dynamic`: an option name inside it is known (`--author=$(...)`).
    pub lit: usize,
    /// Texts bash evaluates as arithmetic: `$((...))`, array subscripts,
    /// substring offsets. Their variables' values are evaluated again
    /// (`a[$(cmd)]` inside a value runs `cmd`), so the analyser checks them.
    pub arith: Vec<String>,
    /// Has an unquoted expansion: bash splits its value into words (and
    /// expands globs in them), so it may become several arguments.
    pub split: bool,
    /// Has an unquoted `*`, `?` or `[`: bash may make several words of it.
    pub glob: bool,
    /// Variables the word assigns when it is expanded (`${NAME:=v}`,
    /// `${NAME=v}`), subscript and all.
    pub assigns: Vec<String>,
}

impl Word {
    pub(crate) fn literal(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            ..Word::default()
        }
    }

    /// How much of `text`, from its start, is known before the line runs.
    pub(crate) fn literal_len(&self) -> usize {
        if self.dynamic {
            self.lit.min(self.text.len())
        } else {
            self.text.len()
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
        let mut w = Word::literal(raw);
        w.brace = has_brace_expression(raw);
        w.glob = raw.contains(['*', '?', '[']);
        return w;
    }
    let opts = parser_options();
    let parsed = catch_unwind(AssertUnwindSafe(|| bw::parse(raw, &opts)));
    match parsed {
        Ok(Ok(pieces)) => {
            let mut d = Decoding {
                raw,
                out: String::with_capacity(raw.len()),
                dynamic: false,
                lit: None,
                arith: Vec::new(),
                split: false,
                glob: false,
                brace: false,
                opaque: false,
                subs,
                budget,
                assigns: Vec::new(),
            };
            d.pieces(&pieces, false);
            let brace = d.brace && has_brace_expression(&d.out);
            Word {
                lit: d.lit.unwrap_or(d.out.len()),
                text: d.out,
                dynamic: d.dynamic,
                procsub: false,
                broken: d.opaque,
                brace,
                arith: d.arith,
                split: d.split,
                glob: d.glob,
                assigns: d.assigns,
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
                lit: None,
                arith: Vec::new(),
                split: false,
                glob: false,
                brace: false,
                opaque: false,
                subs,
                budget,
                assigns: Vec::new(),
            };
            d.pieces(&pieces, true);
            Word {
                lit: d.lit.unwrap_or(d.out.len()),
                text: d.out,
                dynamic: d.dynamic,
                broken: d.opaque,
                arith: d.arith,
                assigns: d.assigns,
                ..Word::default()
            }
        }
        _ => broken(body),
    }
}

/// The command bash runs for `` `text` ``: inside backquotes a backslash
/// before `$`, `` ` `` or `\` is removed first (`` `\\rm x` `` runs `rm`).
fn unescape_backquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '\\')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// `$$`, `$?`, `$#`, `$!`: always a number (or empty), so their value
/// cannot turn into an option, a path or several words.
fn is_number(expr: &ParameterExpr) -> bool {
    use bw::SpecialParameter as S;
    matches!(
        expr,
        ParameterExpr::Parameter {
            parameter: bw::Parameter::Special(
                S::ProcessId
                    | S::LastExitStatus
                    | S::PositionalParameterCount
                    | S::LastBackgroundProcessId
            ),
            indirect: false,
        }
    )
}

/// The variable whose value `${!name...}` uses as a name.
fn indirect_name(expr: &ParameterExpr) -> Option<&str> {
    use ParameterExpr as P;
    match expr {
        P::Parameter {
            parameter,
            indirect: true,
        }
        | P::UseDefaultValues {
            parameter,
            indirect: true,
            ..
        }
        | P::AssignDefaultValues {
            parameter,
            indirect: true,
            ..
        }
        | P::IndicateErrorIfNullOrUnset {
            parameter,
            indirect: true,
            ..
        }
        | P::UseAlternativeValue {
            parameter,
            indirect: true,
            ..
        }
        | P::ParameterLength {
            parameter,
            indirect: true,
        }
        | P::RemoveSmallestSuffixPattern {
            parameter,
            indirect: true,
            ..
        }
        | P::RemoveLargestSuffixPattern {
            parameter,
            indirect: true,
            ..
        }
        | P::RemoveSmallestPrefixPattern {
            parameter,
            indirect: true,
            ..
        }
        | P::RemoveLargestPrefixPattern {
            parameter,
            indirect: true,
            ..
        }
        | P::Substring {
            parameter,
            indirect: true,
            ..
        }
        | P::Transform {
            parameter,
            indirect: true,
            ..
        }
        | P::UppercaseFirstChar {
            parameter,
            indirect: true,
            ..
        }
        | P::UppercasePattern {
            parameter,
            indirect: true,
            ..
        }
        | P::LowercaseFirstChar {
            parameter,
            indirect: true,
            ..
        }
        | P::LowercasePattern {
            parameter,
            indirect: true,
            ..
        }
        | P::ReplaceSubstring {
            parameter,
            indirect: true,
            ..
        } => match parameter {
            bw::Parameter::Named(n)
            | bw::Parameter::NamedWithIndex { name: n, .. }
            | bw::Parameter::NamedWithAllIndices { name: n, .. } => Some(n),
            // `${!1}`, `${!#}`: a name from an argument or a count.
            _ => Some("1"),
        },
        _ => None,
    }
}

fn broken(raw: &str) -> Word {
    Word {
        text: raw.to_owned(),
        dynamic: true,
        broken: true,
        ..Word::default()
    }
}

struct Decoding<'r, 's> {
    raw: &'r str,
    out: String,
    dynamic: bool,
    /// Length of `out` when the first expansion was met.
    lit: Option<usize>,
    arith: Vec<String>,
    split: bool,
    glob: bool,
    /// An unquoted part of the word has a `{`.
    brace: bool,
    /// Has a part the analysis does not model: a `${x@P}` expansion, a
    /// `$'...'` byte that is not text.
    opaque: bool,
    subs: &'s mut Vec<String>,
    budget: usize,
    assigns: Vec<String>,
}

impl Decoding<'_, '_> {
    fn source(&self, p: &WordPieceWithSource) -> &str {
        self.raw.get(p.start_index..p.end_index).unwrap_or("")
    }

    fn set_dynamic(&mut self, quoted: bool) {
        self.dynamic = true;
        self.split |= !quoted;
        self.lit.get_or_insert(self.out.len());
    }

    fn pieces(&mut self, pieces: &[WordPieceWithSource], quoted: bool) {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(s) => {
                    self.brace |= !quoted && s.contains('{');
                    self.glob |= !quoted && s.contains(['*', '?', '[']);
                    self.out.push_str(s);
                }
                WordPiece::SingleQuotedText(s) => self.out.push_str(s),
                WordPiece::AnsiCQuotedText(s) => {
                    if !ansi_c(s, &mut self.out) {
                        self.opaque = true;
                    }
                }
                WordPiece::DoubleQuotedSequence(inner) => self.pieces(inner, true),
                WordPiece::GettextDoubleQuotedSequence(inner) => {
                    // `$"..."` is looked up in message catalogs: in another
                    // locale it can stand for any text.
                    self.opaque = true;
                    self.pieces(inner, true);
                }
                WordPiece::TildeExpansion(_) => {
                    let s = self.source(p).to_owned();
                    self.out.push_str(&s);
                }
                WordPiece::ParameterExpansion(expr) => {
                    let leading_home = self.out.is_empty() && is_home(expr);
                    if !leading_home && !is_number(expr) {
                        self.set_dynamic(quoted);
                    }
                    let s = self.source(p).to_owned();
                    self.out.push_str(&s);
                    self.operands(expr);
                }
                WordPiece::CommandSubstitution(cmd) => {
                    self.set_dynamic(quoted);
                    let s = self.source(p).to_owned();
                    self.out.push_str(&s);
                    self.subs.push(cmd.clone());
                }
                WordPiece::BackquotedCommandSubstitution(cmd) => {
                    self.set_dynamic(quoted);
                    let s = self.source(p).to_owned();
                    self.out.push_str(&s);
                    self.subs.push(unescape_backquoted(cmd));
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
                    // A number: nothing for bash to split.
                    self.set_dynamic(true);
                    self.arith.push(expr.value.clone());
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
        if let Some(name) = indirect_name(expr) {
            // `${!x}` takes the value of `x` as a name, subscript and all.
            self.arith.push(name.to_owned());
        }
        let mut strings: [Option<&str>; 2] = [None, None];
        match expr {
            ParameterExpr::Parameter { parameter, .. }
            | ParameterExpr::ParameterLength { parameter, .. } => {
                if let bw::Parameter::NamedWithIndex { index, .. } = parameter {
                    strings[0] = Some(index);
                    self.arith.push(index.clone());
                }
            }
            ParameterExpr::UseDefaultValues {
                default_value: v, ..
            } => {
                strings[0] = v.as_deref();
            }
            ParameterExpr::AssignDefaultValues {
                parameter,
                indirect,
                default_value: v,
                ..
            } => {
                self.assigns.push(match parameter {
                    _ if *indirect => "${!...}".to_owned(),
                    bw::Parameter::Named(n) => n.clone(),
                    bw::Parameter::NamedWithIndex { name, index } => format!("{name}[{index}]"),
                    bw::Parameter::NamedWithAllIndices { name, .. } => name.clone(),
                    _ => "$N".to_owned(),
                });
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
                self.arith.push(offset.value.clone());
                self.arith.extend(length.as_ref().map(|l| l.value.clone()));
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
            ParameterExpr::Transform { op, .. } => {
                // Transformations of a value into another value are
                // modelled (the value is not known either way); any other
                // (`${x@P}` expands the value like a prompt, running the
                // command substitutions in it) is not.
                use bw::ParameterTransformOp as T;
                let modelled = matches!(
                    op,
                    T::CapitalizeInitial
                        | T::ExpandEscapeSequences
                        | T::PossiblyQuoteWithArraysExpanded { .. }
                        | T::Quoted
                        | T::ToAssignmentLogic
                        | T::ToAttributeFlags
                        | T::ToLowerCase
                        | T::ToUpperCase
                );
                self.opaque |= !modelled;
            }
            ParameterExpr::VariableNames { .. } | ParameterExpr::MemberKeys { .. } => {}
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
        let w = decode(s, self.subs, self.budget - 1);
        self.assigns.extend(w.assigns);
        self.arith.extend(w.arith);
        self.opaque |= w.broken;
    }
}

/// Does `s` contain a brace expression bash would expand? Also one that
/// makes a single word other than `s` (`{a..a}` is `a`).
pub(crate) fn has_brace_expression(s: &str) -> bool {
    s.contains('{') && brace_expand(s, 64).is_none_or(|v| v.len() != 1 || v[0] != s)
}

/// Expands brace expressions (`a{b,c}d`, `{1..3}`, nested), as bash does
/// before anything else. `None` when there would be more than `limit`
/// words.
pub(crate) fn brace_expand(s: &str, limit: usize) -> Option<Vec<String>> {
    let mut out = Vec::new();
    expand_into(s, limit, &mut out, 0)?;
    Some(out)
}

fn expand_into(s: &str, limit: usize, out: &mut Vec<String>, depth: usize) -> Option<()> {
    if depth > 16 {
        return None;
    }
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(rel) = s[from..].find('{') {
        let open = from + rel;
        // Find the matching `}` and the top-level commas.
        let mut level = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (k, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => level += 1,
                b'}' => {
                    level -= 1;
                    if level == 0 {
                        close = Some(k);
                        break;
                    }
                }
                b',' if level == 1 => commas.push(k),
                _ => {}
            }
        }
        let Some(close) = close else {
            break;
        };
        let inner = &s[open + 1..close];
        let alternatives: Vec<String> = if !commas.is_empty() {
            let mut alts = Vec::with_capacity(commas.len() + 1);
            let mut start = open + 1;
            for &c in &commas {
                alts.push(s[start..c].to_owned());
                start = c + 1;
            }
            alts.push(s[start..close].to_owned());
            alts
        } else if let Some(seq) = sequence(inner, limit) {
            seq?
        } else {
            from = open + 1;
            continue;
        };
        let (pre, post) = (&s[..open], &s[close + 1..]);
        for alt in alternatives {
            let word = format!("{pre}{alt}{post}");
            expand_into(&word, limit, out, depth + 1)?;
            if out.len() > limit {
                return None;
            }
        }
        return Some(());
    }
    out.push(s.to_owned());
    (out.len() <= limit).then_some(())
}

/// `a..e`, `1..10`, `1..10..2`: `Some(None)` when too long, `None` when not
/// a sequence.
fn sequence(inner: &str, limit: usize) -> Option<Option<Vec<String>>> {
    let parts: Vec<&str> = inner.split("..").collect();
    if !(parts.len() == 2 || parts.len() == 3) {
        return None;
    }
    let step: i64 = match parts.get(2) {
        Some(p) => p.parse::<i64>().ok()?.unsigned_abs().max(1) as i64,
        None => 1,
    };
    let (a, z) = (parts[0], parts[1]);
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), z.parse::<i64>()) {
        let count = x.abs_diff(y) / step.unsigned_abs() + 1;
        if count as usize > limit {
            return Some(None);
        }
        let dir = if y >= x { step } else { -step };
        // `{01..03}`: a leading zero pads every number to the longest end.
        let padded = |e: &str| {
            e.trim_start_matches('-').len() > 1 && e.trim_start_matches('-').starts_with('0')
        };
        let width = if padded(a) || padded(z) {
            a.len().max(z.len())
        } else {
            0
        };
        return Some(Some(
            (0..count as i64)
                .map(|k| {
                    let n = x + k * dir;
                    if n < 0 {
                        format!("-{:0w$}", -n, w = width.saturating_sub(1))
                    } else {
                        format!("{n:0width$}")
                    }
                })
                .collect(),
        ));
    }
    let (mut ca, mut cz) = (a.chars(), z.chars());
    match (ca.next(), ca.next(), cz.next(), cz.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let (x, y) = (x as i64, y as i64);
            let count = x.abs_diff(y) / step.unsigned_abs() + 1;
            if count as usize > limit {
                return Some(None);
            }
            let dir = if y >= x { step } else { -step };
            Some(Some(
                (0..count as i64)
                    .filter_map(|k| char::from_u32((x + k * dir) as u32).map(String::from))
                    .collect(),
            ))
        }
        _ => None,
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

/// Decodes the inside of `$'...'` as bash does. Returns false when the
/// result is not text bash would pass on as it is: a byte over 0x7f from
/// `\xHH` or `\NNN` (bash passes the raw byte, not a character).
///
/// bash builds the string in C: a NUL (`\0`, `\x00`, `\u0000`, `\c@`,
/// ...) ends it, and the rest of the quoted text is dropped (the word goes
/// on after the closing quote).
pub(crate) fn ansi_c(s: &str, out: &mut String) -> bool {
    let mut text = true;
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
        let code = match e {
            'a' => 0x07,
            'b' => 0x08,
            'e' | 'E' => 0x1b,
            'f' => 0x0c,
            'n' => 0x0a,
            'r' => 0x0d,
            't' => 0x09,
            'v' => 0x0b,
            '\\' | '\'' | '"' | '?' => e as u32,
            '0'..='7' => {
                let v = digits(&mut chars, 8, 2, e.to_digit(8).unwrap_or(0)) & 0xff;
                text &= v < 0x80;
                v
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                if !chars.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                    out.push('\\');
                    out.push(e);
                    continue;
                }
                let v = digits(&mut chars, 16, max, 0);
                text &= (e != 'x' || v < 0x80) && char::from_u32(v).is_some();
                v
            }
            'c' => match chars.next() {
                // `\c\\` is control-backslash.
                Some('\\') if chars.peek() == Some(&'\\') => {
                    chars.next();
                    0x1c
                }
                Some('?') => 0x7f,
                Some(k) => (k.to_ascii_uppercase() as u32) & 0x1f,
                None => {
                    out.push_str("\\c");
                    continue;
                }
            },
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        if code == 0 {
            break;
        }
        out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
    }
    text
}

/// Reads up to `max` more digits of `radix` onto `v`.
fn digits(chars: &mut std::iter::Peekable<std::str::Chars>, radix: u32, max: usize, v: u32) -> u32 {
    let mut v = v;
    for _ in 0..max {
        match chars.peek().and_then(|c| c.to_digit(radix)) {
            Some(d) => {
                v = v.saturating_mul(radix).saturating_add(d);
                chars.next();
            }
            None => break,
        }
    }
    v
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
    fn braces() {
        assert_eq!(
            brace_expand("{rm,-rf,x}", 64).unwrap(),
            vec!["rm", "-rf", "x"]
        );
        assert_eq!(
            brace_expand("a{b,c{d,e}}f", 64).unwrap(),
            vec!["abf", "acdf", "acef"]
        );
        assert_eq!(brace_expand("x{1..3}", 64).unwrap(), vec!["x1", "x2", "x3"]);
        assert_eq!(brace_expand("{c..a}", 64).unwrap(), vec!["c", "b", "a"]);
        assert_eq!(brace_expand("{a}", 64).unwrap(), vec!["{a}"]);
        assert_eq!(brace_expand("{}", 64).unwrap(), vec!["{}"]);
        assert!(brace_expand("{1..1000}", 64).is_none());
        assert!(d("aileron.{yaml,bak}").0.brace);
        assert!(!d("'{a,b}'").0.brace);
        assert!(!d("{}").0.brace);
    }

    #[test]
    fn heredoc_bodies() {
        let mut subs = Vec::new();
        let w = decode_heredoc("echo '$(rm x)'\n", &mut subs, 16);
        assert!(w.dynamic);
        assert_eq!(subs, vec!["rm x"]);
    }
}
