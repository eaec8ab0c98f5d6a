//! The pattern dialect: `when:` matchers (SPEC 6, the approval-rules seed).
//!
//! A matcher is a tree. Leaves are `path: condition` pairs; interior nodes
//! are `all`, `any`, `not` and the implicit AND of a mapping's keys. A bare
//! scalar condition means `equals`; a bare list means element-for-element
//! equality against a list value and "one of" against a scalar. Unlike the
//! seed, every mistake (unknown operator, wrong-typed argument, invalid
//! regex, unknown field of a known facet) is a load error with a position,
//! never a rule that silently never matches.

use crate::action::{Action, FieldPath, Lookup};
use crate::diagnostic::{Diagnostic, Pos};
use crate::error::Error;
use crate::glob::Glob;
use crate::overlap;
use crate::yaml::{Node, Value as Y};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::OnceLock;

/// Every operator, in the order error messages list them.
pub const OPERATORS: &[&str] = &[
    "equals",
    "in",
    "pattern",
    "contains",
    "notContains",
    "glob",
    "exists",
    "gt",
    "gte",
    "lt",
    "lte",
    "path",
    "time",
];

/// The keys that combine matchers rather than name a field.
pub const COMBINATORS: &[&str] = &["all", "any", "not", "rate"];

/// A compiled matcher.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Matcher {
    /// Every matcher holds.
    All(Vec<Matcher>),
    /// At least one matcher holds.
    Any(Vec<Matcher>),
    /// The matcher does not hold.
    Not(Box<Matcher>),
    /// A condition on one field of the action.
    Field(FieldPath, Cond),
    /// More than `more_than` actions matching `of` (this one included) in
    /// the `seconds` before this action, in this session.
    Rate {
        /// How many actions the window may hold.
        more_than: u64,
        /// The window's length.
        seconds: u64,
        /// Which actions count.
        of: Box<Matcher>,
    },
    /// A built-in check the YAML dialect cannot express (see `builtin`).
    Builtin(crate::builtin::Check),
}

/// A condition an index can look up (see `Matcher::index_key`).
pub enum IndexKey<'a> {
    /// The field must hold one of these strings.
    Values(&'a FieldPath, Vec<&'a str>),
    /// The field must end in `.` + this (a glob `*.example.com`).
    DomainSuffix(&'a FieldPath, &'a str),
    /// The field must be a path below this directory (a path glob `/srv/x/**`).
    Directory(&'a FieldPath, String),
}

/// The literal text every match of `src` starts with: `^https://x\\.y/v[0-9]`
/// → `https://x.y/v`. `None` unless anchored with `^` and free of
/// top-level alternation.
pub(crate) fn regex_literal_prefix(src: &str) -> Option<String> {
    let body = src.strip_prefix('^')?;
    let (mut depth, mut in_class, mut escaped) = (0i32, false, false);
    for c in body.chars() {
        match (escaped, in_class, c) {
            (true, ..) => escaped = false,
            (_, _, '\\') => escaped = true,
            (_, true, ']') => in_class = false,
            (_, true, _) => {}
            (_, _, '[') => in_class = true,
            (_, _, '(') => depth += 1,
            (_, _, ')') => depth -= 1,
            (_, _, '|') if depth == 0 => return None,
            _ => {}
        }
    }
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        let lit = match c {
            '\\' => match chars.next() {
                Some(n) if n.is_ascii_punctuation() || n == ' ' => n,
                _ => break,
            },
            '.' | '[' | '(' | ')' | '|' | '$' | '^' | '+' => break,
            '?' | '*' | '{' => {
                out.pop(); // the quantifier makes the previous character optional
                break;
            }
            c => c,
        };
        if matches!(chars.peek(), Some('?' | '*' | '{')) {
            break; // `lit` itself is optional
        }
        out.push(lit);
    }
    Some(out)
}

/// A compiled condition on one field.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Cond {
    /// A scalar condition: the field equals it (numbers by value).
    Equals(#[serde(with = "crate::json_text::value")] Value),
    /// A bare list: element-for-element against a list, "one of" against a scalar.
    List(#[serde(with = "crate::json_text::values")] Vec<Value>),
    /// `in`: the field is one of these (any element, for a list).
    In(#[serde(with = "crate::json_text::values")] Vec<Value>),
    /// `pattern`: a regular expression found in the field.
    Pattern(Re),
    /// Lower-cased needle for strings; the original for list membership.
    Contains {
        /// The needle, lower-cased for case-insensitive search.
        lower: String,
        #[serde(with = "crate::json_text::value")]
        /// The needle as written, for list membership.
        value: Value,
    },
    /// `notContains`: the negation of `contains` (holds on a missing field).
    NotContains {
        /// The needle, lower-cased for case-insensitive search.
        lower: String,
        #[serde(with = "crate::json_text::value")]
        /// The needle as written, for list membership.
        value: Value,
    },
    /// `glob`: the field matches a glob (`*`, `?`).
    Glob(Glob),
    /// `exists`: whether the field is present and not null.
    Exists(bool),
    /// `gt`, `gte`, `lt`, `lte` on a number.
    Compare(Comparison, f64),
    /// `path`: a path glob, already absolute.
    Path(PathGlob),
    /// `time`: the timestamp falls in a weekly window.
    Time(TimeWindow),
    /// Several operators in one mapping: all must hold.
    All(Vec<Cond>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
/// How `gt`, `gte`, `lt` and `lte` compare.
pub enum Comparison {
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Gte,
    /// Less than.
    Lt,
    /// Less than or equal.
    Lte,
}

/// What matchers may read besides the action: the session's recent actions.
#[derive(Clone, Copy, Debug, Default)]
pub struct History<'a> {
    /// Earlier actions of the same session, any order.
    pub actions: &'a [Action],
}

impl Matcher {
    /// The longest window of a `rate` condition in this matcher, if it has one.
    pub fn rate_window(&self) -> Option<u64> {
        match self {
            Matcher::All(ms) | Matcher::Any(ms) => ms.iter().filter_map(Matcher::rate_window).max(),
            Matcher::Not(m) => m.rate_window(),
            Matcher::Rate { seconds, of, .. } => {
                Some((*seconds).max(of.rate_window().unwrap_or(0)))
            }
            Matcher::Field(..) | Matcher::Builtin(_) => None,
        }
    }

    /// Whether the matcher holds for `action`, `history` being the session's earlier actions.
    pub fn is_match(&self, action: &Action, history: History<'_>) -> bool {
        match self {
            Matcher::All(ms) => ms.iter().all(|m| m.is_match(action, history)),
            Matcher::Any(ms) => ms.iter().any(|m| m.is_match(action, history)),
            Matcher::Not(m) => !m.is_match(action, history),
            Matcher::Field(path, cond) => cond.holds(action.lookup(path)),
            Matcher::Rate {
                more_than,
                seconds,
                of,
            } => {
                let Some(now) = action.timestamp else {
                    return false;
                };
                let since = now.as_second() - *seconds as i64;
                // Counted only as far as the answer needs: a busy
                // session's window holds up to a thousand actions.
                let needed = usize::try_from(*more_than).unwrap_or(usize::MAX);
                let earlier = history
                    .actions
                    .iter()
                    .filter(|a| {
                        a.timestamp
                            .is_some_and(|t| t.as_second() >= since && t <= now)
                            && of.is_match(a, History::default())
                    })
                    .take(needed)
                    .count();
                earlier + 1 > needed
            }
            Matcher::Builtin(check) => check.is_match(action),
        }
    }

    /// Whether this matcher may hold for some file the path pattern
    /// `pattern` names, `pattern` being the value of one of `action`'s
    /// fields (`fs.path: /p/**` for `grep -r x .`). A `path` condition on
    /// that field holds when the two globs can name a common path; any other
    /// condition on it, or a `not` over one, is taken to hold, since which
    /// files exist is not known here.
    pub fn may_match(&self, action: &Action, pattern: &str, history: History<'_>) -> bool {
        match self {
            Matcher::All(ms) => ms.iter().all(|m| m.may_match(action, pattern, history)),
            Matcher::Any(ms) => ms.iter().any(|m| m.may_match(action, pattern, history)),
            Matcher::Not(m) => m.reads_value(action, pattern) || !m.is_match(action, history),
            Matcher::Field(path, cond) => match action.lookup(path) {
                Some(v) if as_str(v) == Some(pattern) => match cond {
                    Cond::Path(g) => match (overlap::parse(pattern), overlap::parse(&g.pattern)) {
                        (Some(a), Some(b)) => overlap::overlaps(&a, &b),
                        _ => true,
                    },
                    _ => true,
                },
                v => cond.holds(v),
            },
            Matcher::Rate { .. } | Matcher::Builtin(_) => self.is_match(action, history),
        }
    }

    /// Whether a condition of this matcher reads a field of `action` whose value is `value`.
    fn reads_value(&self, action: &Action, value: &str) -> bool {
        match self {
            Matcher::All(ms) | Matcher::Any(ms) => ms.iter().any(|m| m.reads_value(action, value)),
            Matcher::Not(m) => m.reads_value(action, value),
            Matcher::Field(path, _) => action.lookup(path).and_then(as_str) == Some(value),
            Matcher::Rate { .. } | Matcher::Builtin(_) => false,
        }
    }

    /// Action types this matcher can match, when it says so at its top
    /// level (`type: http.request`), for the evaluator's index.
    pub fn required_types(&self) -> Option<Vec<String>> {
        match self {
            Matcher::Field(FieldPath::Type, Cond::Equals(Value::String(t))) => {
                Some(vec![t.clone()])
            }
            Matcher::Field(FieldPath::Type, Cond::In(ts) | Cond::List(ts)) => {
                ts.iter().map(|t| t.as_str().map(str::to_owned)).collect()
            }
            Matcher::All(ms) => ms.iter().find_map(Matcher::required_types),
            Matcher::Any(ms) => {
                let mut all = Vec::new();
                for m in ms {
                    all.extend(m.required_types()?);
                }
                Some(all)
            }
            _ => None,
        }
    }

    /// The most selective condition of this matcher that an index can
    /// look up, for the evaluator. Never the type (indexed already).
    pub fn index_key(&self) -> Option<IndexKey<'_>> {
        let parts = match self {
            Matcher::All(ms) => ms.as_slice(),
            m => std::slice::from_ref(m),
        };
        let fields = || {
            parts.iter().filter_map(|m| match m {
                Matcher::Field(p, c) if *p != FieldPath::Type => Some((p, c)),
                _ => None,
            })
        };
        let equals = fields().find_map(|(p, c)| match c {
            Cond::Equals(Value::String(v)) => Some(IndexKey::Values(p, vec![v.as_str()])),
            _ => None,
        });
        let suffix = || {
            fields().find_map(|(p, c)| match c {
                Cond::Glob(g) => g.domain_suffix().map(|s| IndexKey::DomainSuffix(p, s)),
                _ => None,
            })
        };
        let prefix = || {
            fields().find_map(|(p, c)| match c {
                Cond::Path(g) => g.directory().map(|d| IndexKey::Directory(p, d.to_owned())),
                // An anchored regex's literal prefix, up to its last `/`.
                Cond::Pattern(re) => regex_literal_prefix(re.as_str())
                    .and_then(|pre| {
                        pre.rfind('/')
                            .filter(|&i| i > 0)
                            .map(|i| pre[..i].to_owned())
                    })
                    .map(|d| IndexKey::Directory(p, d)),
                _ => None,
            })
        };
        let one_of = || {
            fields().find_map(|(p, c)| match c {
                Cond::In(vs) if !vs.is_empty() => vs
                    .iter()
                    .map(Value::as_str)
                    .collect::<Option<Vec<_>>>()
                    .map(|v| IndexKey::Values(p, v)),
                _ => None,
            })
        };
        equals.or_else(suffix).or_else(prefix).or_else(one_of)
    }

    /// The first word every matching `shell.command` must start with
    /// (`git` for `command: "git diff *"`), for the evaluator's index.
    pub fn required_first_word(&self) -> Option<String> {
        match self {
            Matcher::Field(FieldPath::Facet(p), Cond::Glob(g))
                if p.len() == 2 && p[0] == "shell" && p[1] == "command" =>
            {
                g.leading_word().map(str::to_owned)
            }
            Matcher::Field(FieldPath::Facet(p), Cond::Pattern(re))
                if p.len() == 2 && p[0] == "shell" && p[1] == "command" =>
            {
                let prefix = regex_literal_prefix(re.as_str())?;
                let (word, _) = prefix.split_once(' ')?;
                (!word.is_empty()).then(|| word.to_owned())
            }
            Matcher::All(ms) => ms.iter().find_map(Matcher::required_first_word),
            _ => None,
        }
    }
}

impl Cond {
    /// Whether the condition holds for a field's value (`None`: absent or null).
    pub fn holds(&self, value: Option<Lookup<'_>>) -> bool {
        match self {
            Cond::Exists(want) => value.is_some() == *want,
            Cond::NotContains {
                lower,
                value: needle,
            } => match value {
                None => true,
                Some(Lookup::Time(t)) => self.holds_on_time(t),
                Some(v) => match (as_str(v), is_list(v)) {
                    (Some(s), _) => !contains_ci(s, lower),
                    (None, true) => !list_contains(v, needle),
                    _ => true,
                },
            },
            Cond::All(cs) => cs.iter().all(|c| c.holds(value)),
            _ => value.is_some_and(|v| self.holds_on(v)),
        }
    }

    fn holds_on(&self, v: Lookup<'_>) -> bool {
        if let Lookup::Time(t) = v {
            return self.holds_on_time(t);
        }
        match self {
            Cond::Equals(want) => equals(v, want),
            Cond::List(items) => {
                if is_list(v) {
                    let got = list_items(v);
                    got.len() == items.len() && got.iter().zip(items).all(|(g, w)| json_eq(g, w))
                } else {
                    items.iter().any(|w| equals(v, w))
                }
            }
            Cond::In(items) => {
                if is_list(v) {
                    list_items(v)
                        .iter()
                        .any(|g| items.iter().any(|w| json_eq(g, w)))
                } else {
                    items.iter().any(|w| equals(v, w))
                }
            }
            Cond::Pattern(re) => as_str(v).is_some_and(|s| re.is_match(s)),
            Cond::Contains { lower, value } => match as_str(v) {
                Some(s) => contains_ci(s, lower),
                None => is_list(v) && list_contains(v, value),
            },
            Cond::Glob(g) => as_str(v).is_some_and(|s| g.is_match(s)),
            Cond::Compare(op, n) => as_number(v).is_some_and(|x| match op {
                Comparison::Gt => x > *n,
                Comparison::Gte => x >= *n,
                Comparison::Lt => x < *n,
                Comparison::Lte => x <= *n,
            }),
            Cond::Path(p) => match as_str(v) {
                Some(s) => p.is_match(s),
                None => list_items(v)
                    .iter()
                    .any(|i| i.as_str().is_some_and(|s| p.is_match(s))),
            },
            Cond::Time(w) => as_str(v)
                .and_then(|s| s.parse().ok())
                .is_some_and(|t| w.contains(t)),
            Cond::Exists(_) | Cond::NotContains { .. } | Cond::All(_) => self.holds(Some(v)),
        }
    }

    /// [`Cond::holds_on`] a timestamp: `time` reads it as it is, other
    /// operators as it is written (RFC 3339, UTC). Out of line, so that
    /// formatting stays out of the path every other field takes.
    #[inline(never)]
    fn holds_on_time(&self, t: jiff::Timestamp) -> bool {
        match self {
            Cond::Time(w) => w.contains(t),
            _ => self.holds(Some(Lookup::Str(&t.to_string()))),
        }
    }
}

fn as_str(v: Lookup<'_>) -> Option<&str> {
    match v {
        Lookup::Str(s) => Some(s),
        Lookup::Json(Value::String(s)) => Some(s),
        _ => None,
    }
}

fn as_number(v: Lookup<'_>) -> Option<f64> {
    match v {
        Lookup::Json(Value::Number(n)) => n.as_f64(),
        _ => None,
    }
}

fn is_list(v: Lookup<'_>) -> bool {
    matches!(v, Lookup::Strs(_) | Lookup::Json(Value::Array(_)))
}

fn list_items(v: Lookup<'_>) -> Vec<Value> {
    match v {
        Lookup::Strs(items) => items.iter().map(|s| Value::String(s.clone())).collect(),
        Lookup::Json(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    }
}

fn list_contains(v: Lookup<'_>, needle: &Value) -> bool {
    match v {
        Lookup::Strs(items) => needle
            .as_str()
            .is_some_and(|n| items.iter().any(|i| i == n)),
        Lookup::Json(Value::Array(items)) => items.iter().any(|i| json_eq(i, needle)),
        _ => false,
    }
}

fn equals(v: Lookup<'_>, want: &Value) -> bool {
    match v {
        Lookup::Str(s) => want.as_str() == Some(s),
        Lookup::Strs(items) => want.as_array().is_some_and(|w| {
            w.len() == items.len() && w.iter().zip(items).all(|(a, b)| a.as_str() == Some(b))
        }),
        Lookup::Json(j) => json_eq(j, want),
        // `Cond::holds_on` reads a timestamp as its text first.
        Lookup::Time(_) => false,
    }
}

/// Strict equality, except that numbers compare by value (1 == 1.0).
pub(crate) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Case-insensitive substring test; `needle` is already lower-case.
fn contains_ci(haystack: &str, needle: &str) -> bool {
    if haystack.is_ascii() && needle.is_ascii() {
        let (h, n) = (haystack.as_bytes(), needle.as_bytes());
        n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
    } else {
        haystack.to_lowercase().contains(needle)
    }
}

/// Largest compiled regex a policy may hold.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A regex kept as its source and compiled on first use, so that a policy
/// read from the cache pays only for the regexes an action reaches.
#[derive(Clone, Debug)]
pub struct Re {
    src: String,
    compiled: OnceLock<regex::Regex>,
}

impl Re {
    /// Compiles `src` now: a policy never holds a regex that does not compile.
    pub fn new(src: &str) -> Result<Re, regex::Error> {
        let re = build_regex(src)?;
        Ok(Re {
            src: src.to_owned(),
            compiled: OnceLock::from(re),
        })
    }

    /// The regular expression as written.
    pub fn as_str(&self) -> &str {
        &self.src
    }

    /// Whether the regex matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        self.compiled
            .get_or_init(|| build_regex(&self.src).unwrap_or_else(|e| invalid_cached(&self.src, e)))
            .is_match(text)
    }
}

fn build_regex(src: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(src)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
}

/// A pattern that was valid when its policy was compiled no longer is: the
/// cached policy was altered. Deciding without the rule could let through
/// what it denies, so nothing is decided (the shim runs nothing).
#[cold]
fn invalid_cached(src: &str, e: impl std::fmt::Display) -> ! {
    panic!("a compiled policy holds an invalid pattern `{src}` ({e}); delete the policy cache")
}

impl Serialize for Re {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.src)
    }
}

/// Not compiled here: it was when the policy was compiled.
impl<'de> Deserialize<'de> for Re {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Re {
            src: String::deserialize(d)?,
            compiled: OnceLock::new(),
        })
    }
}

/// A gitignore-style path glob, already made absolute; compiled on first use.
#[derive(Clone, Debug)]
pub struct PathGlob {
    pattern: String,
    matcher: OnceLock<globset::GlobMatcher>,
}

fn build_glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

impl PathGlob {
    /// Compiles an absolute pattern: `**` crosses directories, `*` does not.
    pub fn new(absolute_pattern: &str) -> Result<PathGlob, Error> {
        let glob = build_glob(absolute_pattern).map_err(|e| Error::PathGlob {
            pattern: absolute_pattern.to_owned(),
            reason: e.kind().to_string(),
        })?;
        Ok(PathGlob {
            pattern: absolute_pattern.to_owned(),
            matcher: OnceLock::from(glob.compile_matcher()),
        })
    }

    /// Makes a pattern as written absolute: `~/` against `home`; `/x`
    /// stays; `./x` and `x/y` are relative to `base`; a bare name (`*.pem`)
    /// matches at any depth below `base`; a trailing `/` means everything below.
    pub fn expand(pattern: &str, base: &str, home: &str) -> String {
        let mut p = if let Some(rest) = pattern.strip_prefix("~/") {
            format!("{home}/{rest}")
        } else if pattern == "~" {
            home.to_owned()
        } else if pattern.starts_with('/') {
            pattern.to_owned()
        } else if let Some(rest) = pattern.strip_prefix("./") {
            format!("{base}/{rest}")
        } else if pattern.trim_end_matches('/').contains('/') || pattern.starts_with("**") {
            format!("{base}/{pattern}")
        } else {
            format!("{base}/**/{pattern}")
        };
        if p.ends_with('/') {
            p.push_str("**");
        }
        crate::paths::normalize(&p)
    }

    /// Whether `path` (absolute, normalized) matches.
    pub fn is_match(&self, path: &str) -> bool {
        self.matcher
            .get_or_init(|| match build_glob(&self.pattern) {
                Ok(g) => g.compile_matcher(),
                Err(e) => invalid_cached(&self.pattern, e),
            })
            .is_match(path)
    }

    /// The absolute pattern.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// `D` when the pattern is `D/**` with no wildcard in `D`.
    pub fn directory(&self) -> Option<&str> {
        let dir = self.pattern.strip_suffix("/**")?;
        (!dir.is_empty() && !dir.contains(['*', '?', '[', '{', '\\'])).then_some(dir)
    }
}

impl Serialize for PathGlob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.pattern)
    }
}

/// Not compiled here: it was when the policy was compiled.
impl<'de> Deserialize<'de> for PathGlob {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(PathGlob {
            pattern: String::deserialize(d)?,
            matcher: OnceLock::new(),
        })
    }
}

/// Many absolute path globs matched at once. Most patterns are one of a
/// few literal shapes (`/a/b`, `/a/**`, `/a/*`, `/**/a/b`, `/**/a/b/**`),
/// matched by comparing strings (an index); the others share one
/// automaton, built on first use and only run on a path that may match one
/// of them (one below the literal directory such a pattern starts with, or
/// holding the name that follows its leading `/**/`).
#[derive(Clone, Debug)]
pub struct PathSet {
    patterns: Vec<String>,
    index: OnceLock<Box<Index>>,
    set: OnceLock<globset::GlobSet>,
}

impl PathSet {
    /// Checks every pattern now; the rest is built when first needed.
    pub fn new(patterns: Vec<String>) -> Result<PathSet, Error> {
        for p in &patterns {
            build_glob(p).map_err(|e| Error::PathSet {
                pattern: p.clone(),
                reason: e.kind().to_string(),
            })?;
        }
        Ok(PathSet::unchecked(patterns))
    }

    fn unchecked(patterns: Vec<String>) -> PathSet {
        PathSet {
            patterns,
            index: OnceLock::new(),
            set: OnceLock::new(),
        }
    }

    /// Whether some pattern matches `path`.
    pub fn is_match(&self, path: &str) -> bool {
        self.first_match(path).is_some()
    }

    /// The position of the first pattern that matches `path`, which is
    /// normalized (no `//`, `.` or `..`), as the engine's paths are.
    pub fn first_match(&self, path: &str) -> Option<usize> {
        let index = self
            .index
            .get_or_init(|| Box::new(Index::new(&self.patterns)));
        let (simple, others) = if path.starts_with('/') {
            index.scan(path)
        } else {
            // only a relative pattern can match it, and those are all others
            (None, !index.others.is_empty())
        };
        if !others {
            return simple;
        }
        let set = self.set.get_or_init(|| {
            let mut b = globset::GlobSetBuilder::new();
            for &i in &index.others {
                let p = &self.patterns[i];
                match build_glob(p) {
                    Ok(g) => b.add(g),
                    Err(e) => invalid_cached(p, e),
                };
            }
            b.build()
                .unwrap_or_else(|e| invalid_cached(&self.patterns.join(", "), e))
        });
        let other = set.matches(path).into_iter().map(|k| index.others[k]).min();
        simple.into_iter().chain(other).min()
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

/// A [`PathSet`]'s patterns by shape, each entry a literal and the
/// pattern's position (or, for the [`Shape::OthersBelow`] and
/// [`Shape::OthersNamed`] hints, none).
#[derive(Clone, Debug, Default)]
struct Index {
    /// Sorted by key.
    entries: Vec<Entry>,
    /// Which `(shape, key)` pairs `entries` may hold: most lookups end here.
    signatures: Signatures,
    /// The positions of the patterns no shape describes.
    others: Vec<usize>,
    /// Some other pattern could match anything.
    others_everywhere: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    key: String,
    shape: Shape,
    /// What must follow the key's `/` in the path (`Suffix`, `Infix`).
    rest: String,
    position: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Shape {
    /// `/a/b`: the path is the key.
    Exact,
    /// `/a/**`: the key is a directory above the path.
    Below,
    /// `/a/*`: the key is the path's directory.
    Child,
    /// `/**/a/b`: the key is the path's last name, `rest` (`/a/b`) ends the path.
    Suffix,
    /// `/**/a/b/**`: the key is a name of a directory above the path,
    /// followed by `rest` (`/a/b/`) from its `/`.
    Infix,
    /// An other pattern starts with the key as a literal directory.
    OthersBelow,
    /// An other pattern starts with `/**/` and the key as a name.
    OthersNamed,
}

fn is_literal(c: &str) -> bool {
    !c.is_empty() && !c.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

impl Index {
    fn new(patterns: &[String]) -> Index {
        let mut x = Index::default();
        let mut add = |shape, key: String, rest: String, position| {
            x.entries.push(Entry {
                key,
                shape,
                rest,
                position,
            })
        };
        let mut others = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            let Some(rest) = p.strip_prefix('/') else {
                others.push(i);
                x.others_everywhere = true;
                continue;
            };
            let parts: Vec<&str> = rest.split('/').collect();
            let n = parts.len();
            let literal = |r: std::ops::Range<usize>| parts[r].iter().all(|c| is_literal(c));
            let join = |r: std::ops::Range<usize>| format!("/{}", parts[r].join("/"));
            let none = String::new;
            if p == "/" || literal(0..n) {
                add(Shape::Exact, p.clone(), none(), i);
            } else if n >= 2 && parts[n - 1] == "**" && literal(0..n - 1) {
                add(Shape::Below, join(0..n - 1), none(), i);
            } else if n >= 2 && parts[n - 1] == "*" && literal(0..n - 1) {
                add(Shape::Child, join(0..n - 1), none(), i);
            } else if n >= 2 && parts[0] == "**" && literal(1..n) {
                add(Shape::Suffix, parts[n - 1].to_owned(), join(1..n), i);
            } else if n >= 3 && parts[0] == "**" && parts[n - 1] == "**" && literal(1..n - 1) {
                let rest = format!("{}/", join(1..n - 1));
                add(Shape::Infix, parts[1].to_owned(), rest, i);
            } else {
                others.push(i);
                let fixed = parts.iter().take_while(|c| is_literal(c)).count();
                match (fixed, parts.get(fixed), parts.get(1)) {
                    (0, Some(&"**"), Some(name)) if is_literal(name) => {
                        add(Shape::OthersNamed, (*name).to_owned(), none(), i)
                    }
                    (0, _, _) | (_, None, _) => x.others_everywhere = true,
                    _ => add(Shape::OthersBelow, join(0..fixed), none(), i),
                }
            }
        }
        x.others = others;
        x.entries.sort();
        x.entries.dedup_by(|a, b| {
            a.key == b.key
                && matches!(a.shape, Shape::OthersBelow | Shape::OthersNamed)
                && a.shape == b.shape
        });
        x.signatures = Signatures::of(x.entries.iter().map(|e| (e.shape, e.key.as_str())));
        x
    }

    /// The entries of `shape` keyed `key`, whose [`Index::hash`] is `hash`.
    #[inline]
    fn get(&self, shape: Shape, key: &str, hash: u64) -> &[Entry] {
        if !self.signatures.may_hold(shape, hash) {
            return &[];
        }
        self.lookup(shape, key)
    }

    #[inline(never)]
    fn lookup(&self, shape: Shape, key: &str) -> &[Entry] {
        let from = self
            .entries
            .partition_point(|e| (e.key.as_str(), e.shape) < (key, shape));
        let to = from + self.entries[from..].partition_point(|e| e.key == key && e.shape == shape);
        &self.entries[from..to]
    }

    /// The hash an entry is known by: of its name for the shapes keyed by a
    /// name, else of its path, built a name at a time (as [`Index::scan`]
    /// builds it).
    fn hash(shape: Shape, key: &str) -> u64 {
        match shape {
            Shape::Suffix | Shape::Infix | Shape::OthersNamed => name_hash(key),
            _ => key
                .split('/')
                .filter(|n| !n.is_empty())
                .fold(ROOT_HASH, |h, n| within(h, name_hash(n))),
        }
    }

    /// The first literal-shaped pattern `path` (absolute, normalized)
    /// matches, and whether it may match one of the others.
    fn scan(&self, path: &str) -> (Option<usize>, bool) {
        let mut best: Option<usize> = None;
        let mut others = self.others_everywhere;
        let mut found = |i: usize| best = Some(best.map_or(i, |b| b.min(i)));
        let bytes = path.as_bytes();
        // `path[..start - 1]`, the directory of the name at `start`, and its hash
        let (mut dir, mut dir_hash) = ("/", ROOT_HASH);
        let mut start = 1;
        if path == "/" {
            for e in self.get(Shape::Exact, path, ROOT_HASH) {
                found(e.position);
            }
            return (best, others);
        }
        loop {
            let end = bytes[start..]
                .iter()
                .position(|b| *b == b'/')
                .map_or(bytes.len(), |i| start + i);
            let name = &path[start..end];
            let hash = name_hash(name);
            let path_hash = within(dir_hash, hash);
            let last = end == bytes.len();
            if last {
                for e in self.get(Shape::Suffix, name, hash) {
                    if path.ends_with(e.rest.as_str()) {
                        found(e.position);
                    }
                }
                for e in self.get(Shape::Child, dir, dir_hash) {
                    found(e.position);
                }
                for e in self.get(Shape::Exact, path, path_hash) {
                    found(e.position);
                }
            } else {
                for e in self.get(Shape::Infix, name, hash) {
                    if path[start - 1..].starts_with(e.rest.as_str()) {
                        found(e.position);
                    }
                }
            }
            others = others || !self.get(Shape::OthersNamed, name, hash).is_empty();
            if last {
                return (best, others);
            }
            dir = &path[..end];
            dir_hash = path_hash;
            for e in self.get(Shape::Below, dir, dir_hash) {
                found(e.position);
            }
            others = others || !self.get(Shape::OthersBelow, dir, dir_hash).is_empty();
            start = end + 1;
        }
    }
}

const ROOT_HASH: u64 = 0x2545_f491_4f6c_dd1d;

/// The hash of the path `name` is in a directory of hash `dir`.
fn within(dir: u64, name: u64) -> u64 {
    (dir.rotate_left(23) ^ name).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// A cheap hash of a name: its length and its first and last eight bytes
/// (or fewer).
fn name_hash(s: &str) -> u64 {
    let b = s.as_bytes();
    let n = b.len();
    let word = |from: usize, len: usize| {
        let mut w = [0u8; 8];
        w[..len].copy_from_slice(&b[from..from + len]);
        u64::from_le_bytes(w)
    };
    let (head, tail) = if n >= 8 {
        (word(0, 8), word(n - 8, 8))
    } else {
        (word(0, n), 0)
    };
    (head ^ tail.rotate_left(29) ^ (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_mul(0xff51_afd7_ed55_8ccd)
}

/// Which `(shape, key)` pairs a table may hold: for each shape, one bit
/// of 1024 per key, taken from the top of its hash.
#[derive(Clone, Copy, Debug)]
struct Signatures([[u64; 16]; SHAPES]);

const SHAPES: usize = Shape::OthersNamed as usize + 1;

impl Default for Signatures {
    fn default() -> Signatures {
        Signatures([[0; 16]; SHAPES])
    }
}

impl Signatures {
    fn of<'a>(keys: impl Iterator<Item = (Shape, &'a str)>) -> Signatures {
        let mut s = Signatures::default();
        for (shape, k) in keys {
            let k = (Index::hash(shape, k) >> 54) as usize;
            s.0[shape as usize][k >> 6] |= 1 << (k & 63);
        }
        s
    }

    #[inline]
    fn may_hold(&self, shape: Shape, hash: u64) -> bool {
        let k = (hash >> 54) as usize;
        self.0[shape as usize][k >> 6] & (1 << (k & 63)) != 0
    }
}

impl Serialize for PathSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.patterns.serialize(s)
    }
}

/// Not compiled here: it was checked when the policy was compiled.
impl<'de> Deserialize<'de> for PathSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(PathSet::unchecked(Vec::<String>::deserialize(d)?))
    }
}

/// Weekdays and a time-of-day window in a named time zone.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimeWindow {
    /// Monday = 1 … Sunday = 7; empty means every day.
    days: Vec<i8>,
    /// Minutes after midnight; `from > to` wraps past midnight.
    from: u16,
    to: u16,
    tz: String,
    /// `tz` looked up on first use (checked when the policy was compiled).
    #[serde(skip)]
    zone: OnceLock<Option<jiff::tz::TimeZone>>,
}

/// The window as written; the looked-up zone follows from it.
impl PartialEq for TimeWindow {
    fn eq(&self, other: &Self) -> bool {
        (&self.days, self.from, self.to, &self.tz) == (&other.days, other.from, other.to, &other.tz)
    }
}

const WEEKDAYS: &[&str] = &["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

impl TimeWindow {
    fn contains(&self, ts: jiff::Timestamp) -> bool {
        let zone = self
            .zone
            .get_or_init(|| jiff::tz::TimeZone::get(&self.tz).ok());
        let Some(tz) = zone else {
            return false;
        };
        let local = tz.to_datetime(ts);
        let minute = local.hour() as u16 * 60 + local.minute() as u16;
        let day_ok =
            self.days.is_empty() || self.days.contains(&local.weekday().to_monday_one_offset());
        let time_ok = if self.from <= self.to {
            minute >= self.from && minute < self.to
        } else {
            minute >= self.from || minute < self.to
        };
        day_ok && time_ok
    }
}

/// Where parsing reports errors, and what relative paths are relative to.
pub(crate) struct Cx<'a> {
    pub file: &'a str,
    pub text: &'a str,
    /// Directory of the policy file, for relative `path` patterns.
    pub base_dir: &'a str,
    pub home: &'a str,
    pub errors: &'a mut Vec<Diagnostic>,
}

impl Cx<'_> {
    pub(crate) fn error(&mut self, pos: Pos, message: impl Into<String>) {
        self.errors
            .push(Diagnostic::at(self.file, self.text, pos, message));
    }
}

/// Compiles a `when:` tree. Errors go to `cx`; `None` when there were any.
pub(crate) fn parse_matcher(node: &Node, cx: &mut Cx<'_>) -> Option<Matcher> {
    let Y::Map(entries) = &node.value else {
        cx.error(
            node.pos,
            format!(
                "expected a matcher mapping (`field: condition`, all, any, not), found {}",
                node.kind()
            ),
        );
        return None;
    };
    if entries.is_empty() {
        cx.error(
            node.pos,
            "empty matcher: it would match every action; write at least one condition",
        );
        return None;
    }
    let before = cx.errors.len();
    let mut parts = Vec::new();
    let mut rate = None;
    for (key, value) in entries {
        match key.name.as_str() {
            "all" | "any" => {
                let Y::Seq(items) = &value.value else {
                    cx.error(
                        value.pos,
                        format!(
                            "`{}` takes a list of matchers, found {}",
                            key.name,
                            value.kind()
                        ),
                    );
                    continue;
                };
                if items.is_empty() {
                    cx.error(
                        value.pos,
                        format!("`{}` needs at least one matcher", key.name),
                    );
                    continue;
                }
                let ms: Vec<Matcher> = items.iter().filter_map(|i| parse_matcher(i, cx)).collect();
                parts.push(if key.name == "all" {
                    Matcher::All(ms)
                } else {
                    Matcher::Any(ms)
                });
            }
            "not" => {
                if let Some(m) = parse_matcher(value, cx) {
                    parts.push(Matcher::Not(Box::new(m)));
                }
            }
            "rate" => rate = parse_rate(value, cx),
            path => match FieldPath::parse(path) {
                Ok(fp) => {
                    if let Some(c) = parse_cond(value, cx) {
                        parts.push(Matcher::Field(fp, c));
                    }
                }
                Err(e) => cx.error(key.pos, e.to_string()),
            },
        }
    }
    if cx.errors.len() > before {
        return None;
    }
    if let Some((more_than, seconds)) = rate {
        let of = Box::new(Matcher::All(parts.clone()));
        parts.push(Matcher::Rate {
            more_than,
            seconds,
            of,
        });
    }
    Some(if parts.len() == 1 {
        parts.pop()?
    } else {
        Matcher::All(parts)
    })
}

fn parse_rate(node: &Node, cx: &mut Cx<'_>) -> Option<(u64, u64)> {
    let Y::Map(entries) = &node.value else {
        cx.error(
            node.pos,
            format!(
                "`rate` takes a mapping {{more_than: N, seconds: T}}, found {}",
                node.kind()
            ),
        );
        return None;
    };
    let (mut more_than, mut seconds) = (None, None);
    for (k, v) in entries {
        let slot = match k.name.as_str() {
            "more_than" => &mut more_than,
            "seconds" => &mut seconds,
            other => {
                cx.error(
                    k.pos,
                    format!("unknown key `{other}` in `rate`; expected one of: more_than, seconds"),
                );
                continue;
            }
        };
        match v.value {
            Y::Int(n) if n >= 0 => *slot = Some(n as u64),
            _ => cx.error(
                v.pos,
                format!(
                    "`{}` takes a non-negative integer, found {}",
                    k.name,
                    v.kind()
                ),
            ),
        }
    }
    if entries.iter().any(|(k, v)| {
        matches!(k.name.as_str(), "more_than" | "seconds")
            && !matches!(v.value, Y::Int(n) if n >= 0)
    }) {
        return None; // already reported
    }
    match (more_than, seconds) {
        (Some(m), Some(s)) if s > 0 => Some((m, s)),
        (Some(_), Some(_)) => {
            cx.error(node.pos, "`rate.seconds` must be at least 1");
            None
        }
        _ => {
            cx.error(node.pos, "`rate` needs both `more_than` and `seconds`");
            None
        }
    }
}

fn scalar_json(node: &Node) -> Option<Value> {
    match &node.value {
        Y::Bool(_) | Y::Int(_) | Y::Float(_) | Y::Str(_) => Some(node.to_json()),
        _ => None,
    }
}

/// Compiles the condition on one field.
pub(crate) fn parse_cond(node: &Node, cx: &mut Cx<'_>) -> Option<Cond> {
    match &node.value {
        Y::Null => {
            cx.error(
                node.pos,
                "a condition cannot be null; to test for a missing field write `{exists: false}`",
            );
            None
        }
        Y::Seq(items) => {
            let mut values = Vec::new();
            for i in items {
                match scalar_json(i) {
                    Some(v) => values.push(v),
                    None => cx.error(
                        i.pos,
                        format!("list conditions hold scalars, found {}", i.kind()),
                    ),
                }
            }
            Some(Cond::List(values))
        }
        Y::Map(entries) => {
            if entries.is_empty() {
                cx.error(
                    node.pos,
                    format!(
                        "empty operator mapping; expected one of: {}",
                        OPERATORS.join(", ")
                    ),
                );
                return None;
            }
            let mut conds = Vec::new();
            for (k, v) in entries {
                if let Some(c) = parse_operator(&k.name, k.pos, v, cx) {
                    conds.push(c);
                }
            }
            match conds.len() {
                n if n < entries.len() => None,
                1 => conds.pop(),
                _ => Some(Cond::All(conds)),
            }
        }
        _ => scalar_json(node).map(Cond::Equals),
    }
}

fn parse_operator(op: &str, pos: Pos, arg: &Node, cx: &mut Cx<'_>) -> Option<Cond> {
    let want = |cx: &mut Cx<'_>, what: &str| {
        cx.error(
            arg.pos,
            format!("`{op}` takes {what}, found {}", arg.kind()),
        );
        None
    };
    match op {
        "equals" => match &arg.value {
            Y::Map(_) | Y::Null => want(cx, "a string, number, boolean or list"),
            _ => Some(Cond::Equals(arg.to_json())),
        },
        "in" => match &arg.value {
            Y::Seq(items) => {
                let mut values = Vec::new();
                for i in items {
                    match scalar_json(i) {
                        Some(v) => values.push(v),
                        None => cx.error(
                            i.pos,
                            format!("`in` lists hold scalars, found {}", i.kind()),
                        ),
                    }
                }
                (values.len() == items.len()).then_some(Cond::In(values))
            }
            _ => want(cx, "a list"),
        },
        "pattern" => match arg.as_str() {
            Some(src) => match Re::new(src) {
                Ok(re) => Some(Cond::Pattern(re)),
                Err(e) => {
                    let detail = e.to_string();
                    let last = detail
                        .lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or(&detail);
                    cx.error(
                        arg.pos,
                        format!(
                            "invalid regex `{src}`: {}",
                            last.trim().trim_start_matches("error: ")
                        ),
                    );
                    None
                }
            },
            None => want(cx, "a string (a regular expression)"),
        },
        "contains" | "notContains" => match scalar_json(arg) {
            Some(value) => {
                // A number or boolean needle is searched for as its text, as the seed's JS does.
                let lower = match &value {
                    Value::String(s) => s.to_lowercase(),
                    other => other.to_string(),
                };
                Some(if op == "contains" {
                    Cond::Contains { lower, value }
                } else {
                    Cond::NotContains { lower, value }
                })
            }
            None => want(cx, "a string, number or boolean"),
        },
        "glob" => match arg.as_str() {
            Some(g) => Some(Cond::Glob(Glob::plain(g))),
            None => want(cx, "a string (a glob)"),
        },
        "exists" => match arg.value {
            Y::Bool(b) => Some(Cond::Exists(b)),
            _ => want(cx, "true or false"),
        },
        "gt" | "gte" | "lt" | "lte" => {
            let n = match arg.value {
                Y::Int(i) => i as f64,
                Y::Float(f) => f,
                _ => return want(cx, "a number"),
            };
            let c = match op {
                "gt" => Comparison::Gt,
                "gte" => Comparison::Gte,
                "lt" => Comparison::Lt,
                _ => Comparison::Lte,
            };
            Some(Cond::Compare(c, n))
        }
        "path" => match arg.as_str() {
            Some(p) => {
                let abs = PathGlob::expand(p, cx.base_dir, cx.home);
                match PathGlob::new(&abs) {
                    Ok(g) => Some(Cond::Path(g)),
                    Err(e) => {
                        cx.error(arg.pos, format!("invalid path glob `{p}`: {e}"));
                        None
                    }
                }
            }
            None => want(cx, "a string (a path glob)"),
        },
        "time" => parse_time_window(arg, cx).map(Cond::Time),
        other => {
            let hint = crate::suggest::did_you_mean(other, OPERATORS);
            cx.error(
                pos,
                format!(
                    "unknown operator `{other}`{hint}; expected one of: {}",
                    OPERATORS.join(", ")
                ),
            );
            None
        }
    }
}

fn parse_hhmm(node: &Node, cx: &mut Cx<'_>) -> Option<u16> {
    let parsed = node.as_str().and_then(|s| {
        let (h, m) = s.split_once(':')?;
        let (h, m): (u16, u16) = (h.parse().ok()?, m.parse().ok()?);
        (h <= 24 && m < 60 && h * 60 + m <= 24 * 60).then_some(h * 60 + m)
    });
    if parsed.is_none() {
        cx.error(
            node.pos,
            "expected a time of day as \"HH:MM\" (00:00 to 24:00)",
        );
    }
    parsed
}

fn parse_time_window(node: &Node, cx: &mut Cx<'_>) -> Option<TimeWindow> {
    let Y::Map(entries) = &node.value else {
        cx.error(
            node.pos,
            format!(
                "`time` takes a mapping {{days, from, to, tz}}, found {}",
                node.kind()
            ),
        );
        return None;
    };
    let before = cx.errors.len();
    let mut w = TimeWindow {
        days: Vec::new(),
        from: 0,
        to: 24 * 60,
        tz: "UTC".into(),
        zone: OnceLock::new(),
    };
    for (k, v) in entries {
        match k.name.as_str() {
            "days" => match &v.value {
                Y::Seq(items) => {
                    for i in items {
                        match i.as_str().and_then(|d| WEEKDAYS.iter().position(|w| w.eq_ignore_ascii_case(d))) {
                            Some(idx) => w.days.push(idx as i8 + 1),
                            None => cx.error(i.pos, format!("expected a weekday, one of: {}", WEEKDAYS.join(", "))),
                        }
                    }
                }
                _ => cx.error(v.pos, format!("`days` takes a list of weekdays, found {}", v.kind())),
            },
            "from" => w.from = parse_hhmm(v, cx).unwrap_or(0),
            "to" => w.to = parse_hhmm(v, cx).unwrap_or(0),
            "tz" => match v.as_str() {
                Some(tz) if jiff::tz::TimeZone::get(tz).is_ok() => w.tz = tz.to_owned(),
                Some(tz) => cx.error(v.pos, format!("unknown time zone `{tz}` (expected an IANA name such as Europe/Paris or UTC)")),
                None => cx.error(v.pos, format!("`tz` takes a string, found {}", v.kind())),
            },
            other => cx.error(k.pos, format!("unknown key `{other}` in `time`; expected one of: days, from, to, tz")),
        }
    }
    (cx.errors.len() == before).then_some(w)
}

#[cfg(test)]
mod tests {
    use super::regex_literal_prefix as prefix;
    use super::{PathGlob, PathSet, Re};

    #[test]
    fn patterns_read_back_uncompiled_match_as_compiled() {
        let re: Re = serde_json::from_str(r#""^git (push|pull)""#).unwrap();
        assert!(re.compiled.get().is_none(), "compiled on first use only");
        assert!(re.is_match("git push x") && !re.is_match("git status"));
        let g: PathGlob = serde_json::from_str(r#""/srv/**/*.pem""#).unwrap();
        assert!(g.is_match("/srv/a/b/k.pem") && !g.is_match("/srv/a/k.txt"));
        let set: PathSet = serde_json::from_str(r#"["/a/*", "/b/**"]"#).unwrap();
        assert!(set.set.get().is_none());
        assert!(set.is_match("/a/x") && set.is_match("/b/x/y") && !set.is_match("/a/x/y"));
        let again: PathSet = serde_json::from_str(&serde_json::to_string(&set).unwrap()).unwrap();
        assert!(again.is_match("/b/z"));
        assert!(
            PathSet::new(vec!["/a/[".into()]).is_err(),
            "checked when built"
        );
        assert!(Re::new("(").is_err());
    }

    #[test]
    fn path_sets_match_as_their_globs_do() {
        let patterns = [
            "/",
            "/home/u",
            "/home/u/.aileron/**",
            "/home/u/.aileron",
            "/**/.claude/settings.json",
            "/**/aileron.yaml",
            "/**/.aileron/**",
            "/**/.clinerules/hooks/**",
            "/**/.git/modules/**/config",
            "/tmp/aileron-*",
            "/tmp/aileron-*/**",
            "/etc/profile.d/**",
            "/usr/bin/*",
            "/*",
            "/p/[*]",
            "/home/u/.claude",
        ];
        let globs: Vec<_> = patterns
            .iter()
            .map(|p| super::build_glob(p).unwrap().compile_matcher())
            .collect();
        let paths = [
            "/",
            "/home",
            "/home/u",
            "/home/u/.aileron",
            "/home/u/.aileron/x/y",
            "/home/u/.claude",
            "/home/u/.claude/settings.json",
            "/.claude/settings.json",
            "/p/.claude/settings.json",
            "/p/x.claude/settings.json",
            "/p/.claude/settings.jsonx",
            "/p/aileron.yaml",
            "/aileron.yaml",
            "/p/.aileron",
            "/p/.aileron/x",
            "/.aileron/x",
            "/p/.clinerules/hooks",
            "/p/.clinerules/hooks/a/b",
            "/p/.git/modules/a/b/config",
            "/tmp/aileron-1",
            "/tmp/aileron-1/bin/bash",
            "/tmp/x",
            "/etc/profile.d",
            "/etc/profile.d/x.sh",
            "/usr/bin/git",
            "/usr/bin/x/git",
            "/usr/bin",
            "/p/*",
            "/p/x",
            "/w/src/main.rs",
        ];
        let set = PathSet::new(patterns.map(str::to_owned).to_vec()).unwrap();
        for path in paths {
            let want = globs.iter().position(|g| g.is_match(path));
            assert_eq!(set.first_match(path), want, "{path}");
        }
        let quiet = PathSet::new(
            [
                "/**/.claude/settings.json",
                "/home/u/.aileron/**",
                "/tmp/aileron-*",
            ]
            .map(str::to_owned)
            .to_vec(),
        )
        .unwrap();
        assert!(!quiet.is_match("/w/src/main.rs"));
        assert!(
            quiet.set.get().is_none(),
            "no automaton for paths far from the others"
        );
        assert!(quiet.is_match("/tmp/aileron-7"));
        assert!(quiet.set.get().is_some());
    }

    #[test]
    fn literal_prefixes_of_anchored_regexes() {
        assert_eq!(
            prefix(r"^https://api1\.example\.net/v[0-9]+/admin").as_deref(),
            Some("https://api1.example.net/v")
        );
        assert_eq!(prefix("^tool1 (delete|purge) ").as_deref(), Some("tool1 "));
        assert_eq!(prefix("^git push|rm -rf"), None, "top-level alternation");
        assert_eq!(prefix("git push"), None, "not anchored");
        assert_eq!(prefix("(?i)^git"), None);
        assert_eq!(
            prefix("^https://q/?x").as_deref(),
            Some("https://q"),
            "an optional character is not part of it"
        );
        assert_eq!(
            prefix("^ab+c").as_deref(),
            Some("ab"),
            "`b+` needs at least one b"
        );
        assert_eq!(prefix(r"^a\db").as_deref(), Some("a"));
        assert_eq!(prefix("^[ab]c").as_deref(), Some(""));
        assert_eq!(prefix(r"^a\|b").as_deref(), Some("a|b"));
    }
}
