//! Problems that point at a place in a policy source.
//!
//! Every problem found while loading a policy becomes a [`Diagnostic`], an
//! error; the linter ([`crate::lint`]) adds warnings about a policy that
//! loads but does not do what it says. Its `Display` is the form adapters
//! and `aileron check` print as they are:
//!
//! ```text
//! aileron.yaml:7:30: error: unknown operator `equal`; expected one of: equals, in, ...
//!     when: {http.method: {equal: "DELETE"}}
//!                          ^
//! aileron.yaml:12:5: warning: this allow rule never takes effect: ... [allow-overridden]
//!       - "git push origin feature"
//!         ^
//! ```
//!
//! # Severities and codes
//!
//! An **error** keeps a policy from loading; a **warning** never does.
//! Every diagnostic carries a stable [`Code`], in kebab-case, that tools may
//! match on (`aileron check --json`, the server's `diagnostics` and
//! `warnings`). Errors have one code per stage of loading, the message
//! saying what exactly is wrong:
//!
//! | code | severity | what |
//! |---|---|---|
//! | `syntax` | error | the text is not YAML (or JSON) the loader can read |
//! | `invalid` | error | the document breaks the schema: an unknown key or operator, a wrong type, an invalid regex, a profile that does not exist, ... |
//! | `source` | error | a whole source: it cannot be read, it is not where it was named |
//! | `conflict` | error | sources disagree: a duplicate rule id, an `override:` that cannot be |
//! | `test-failed` | error | an example of `tests:` fails where the loader runs them |
//! | `shadowed-rule` | warning | a rule that can never decide: another rule matches all it matches and always comes first |
//! | `allow-overridden` | warning | an allow rule that an ask, judge or deny rule always overrides |
//! | `unknown-field` | warning | a `when:` condition on a field no action has |
//! | `ineffective-amendment` | warning | an "always allow" answer whose new rule would not take effect |
//! | `sql-verb-only` | warning | an allow rule for SQL by its verb alone, which also meets statements of that verb that write or call a function |
//!
//! Codes are only ever added, never renamed. Only warnings print their
//! code, at the end of the headline (`... [shadowed-rule]`); an error's
//! text is the same as it has always been.

use serde::Serialize;
use std::fmt;

/// A 1-based line and column in a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pos {
    /// From 1.
    pub line: u32,
    /// From 1, in characters.
    pub col: u32,
}

/// Whether a problem keeps the policy from loading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The policy does not load.
    Error,
    /// The policy loads; `aileron check --deny-warnings` refuses it.
    Warning,
}

impl Severity {
    /// The word diagnostics print (`error`, `warning`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// What kind of problem a diagnostic is (see the table in the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// The text is not YAML (or JSON).
    Syntax,
    /// The document breaks the schema (an unknown key or operator, a wrong type, an invalid regex).
    Invalid,
    /// A whole source cannot be read, or is not where it was named.
    Source,
    /// Sources disagree: a duplicate rule id, an `override:` that cannot be.
    Conflict,
    /// An example of `tests:` that decides otherwise than it expects.
    TestFailed,
    /// A rule another one always decides before (a warning).
    ShadowedRule,
    /// An allow rule a stricter rule always decides before (a warning).
    AllowOverridden,
    /// A `when:` condition on a facet no action has (a warning).
    UnknownField,
    /// An "always" answer whose rule would not take effect (a warning).
    IneffectiveAmendment,
    /// An allow rule for SQL by its verb alone (a warning).
    SqlVerbOnly,
}

impl Code {
    /// The stable name printed in brackets and given to tools.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Syntax => "syntax",
            Code::Invalid => "invalid",
            Code::Source => "source",
            Code::Conflict => "conflict",
            Code::TestFailed => "test-failed",
            Code::ShadowedRule => "shadowed-rule",
            Code::AllowOverridden => "allow-overridden",
            Code::UnknownField => "unknown-field",
            Code::IneffectiveAmendment => "ineffective-amendment",
            Code::SqlVerbOnly => "sql-verb-only",
        }
    }

    /// The severity every diagnostic of this code has.
    pub fn severity(self) -> Severity {
        match self {
            Code::Syntax | Code::Invalid | Code::Source | Code::Conflict | Code::TestFailed => {
                Severity::Error
            }
            Code::ShadowedRule
            | Code::AllowOverridden
            | Code::UnknownField
            | Code::IneffectiveAmendment
            | Code::SqlVerbOnly => Severity::Warning,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem in one policy source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The source's display name (a path, or `<builtin>/lang/go`).
    pub file: String,
    /// From 1; 0 when the problem has no place in the text.
    pub line: u32,
    /// From 1, in characters.
    pub col: u32,
    /// Whether the policy still loads.
    pub severity: Severity,
    /// A stable name, for tools and `--deny-warnings`.
    pub code: Code,
    /// What is wrong and, where it can say, what was expected.
    pub message: String,
    /// The offending source line, when the source text is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_line: Option<String>,
}

impl Diagnostic {
    /// An error (code `invalid`) at `pos` in `source`, quoting the offending line.
    pub fn at(file: &str, text: &str, pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic::new(Code::Invalid, file, pos, message).quoting(text)
    }

    /// An error (code `source`) about a whole file (it cannot be read, a
    /// profile is missing, ...).
    pub fn file(file: &str, message: impl Into<String>) -> Self {
        Diagnostic::new(Code::Source, file, Pos::default(), message)
    }

    /// A diagnostic of `code` (and its severity) at `pos` of `file`, with
    /// no source line (see [`Diagnostic::quoting`]).
    pub fn new(code: Code, file: &str, pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.to_owned(),
            line: pos.line,
            col: pos.col,
            severity: code.severity(),
            code,
            message: message.into(),
            source_line: None,
        }
    }

    /// The same diagnostic with another code (and that code's severity).
    pub fn with_code(mut self, code: Code) -> Self {
        self.code = code;
        self.severity = code.severity();
        self
    }

    /// The same diagnostic quoting its line of `text`, the source's text.
    pub fn quoting(mut self, text: &str) -> Self {
        self.source_line = (self.line > 0)
            .then(|| text.lines().nth(self.line as usize - 1).map(str::to_owned))
            .flatten();
        self
    }

    /// Whether the policy loads despite it.
    pub fn is_warning(&self) -> bool {
        self.severity == Severity::Warning
    }

    /// The first line only: `FILE:LINE:COL: error: MESSAGE`, or
    /// `FILE:LINE:COL: warning: MESSAGE [CODE]`.
    pub fn headline(&self) -> String {
        let place = if self.line == 0 {
            self.file.clone()
        } else {
            format!("{}:{}:{}", self.file, self.line, self.col)
        };
        match self.severity {
            Severity::Error => format!("{place}: error: {}", self.message),
            Severity::Warning => format!("{place}: warning: {} [{}]", self.message, self.code),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.headline())?;
        if let Some(line) = &self.source_line {
            let caret_pad: String = line
                .chars()
                .take(self.col.saturating_sub(1) as usize)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            write!(f, "\n    {line}\n    {caret_pad}^")?;
        }
        Ok(())
    }
}

/// Quotes its source line into every diagnostic of `diags` that has none,
/// from the source of `sources` it names.
pub fn quote(diags: &mut [Diagnostic], sources: &[crate::document::Source]) {
    for d in diags
        .iter_mut()
        .filter(|d| d.source_line.is_none() && d.line > 0)
    {
        if let Some(s) = sources.iter().find(|s| s.name == d.file) {
            d.source_line = s.text.lines().nth(d.line as usize - 1).map(str::to_owned);
        }
    }
}

/// Several diagnostics, printed one after another.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_print_as_before_and_warnings_say_so_with_their_code() {
        let text = "version: 1\nallow: [x]\n";
        let pos = Pos { line: 2, col: 9 };
        let e = Diagnostic::at("/p/aileron.yaml", text, pos, "bad");
        assert_eq!(
            e.to_string(),
            "/p/aileron.yaml:2:9: error: bad\n    allow: [x]\n            ^"
        );
        assert_eq!(
            Diagnostic::file("/p/x.yaml", "cannot read").headline(),
            "/p/x.yaml: error: cannot read"
        );
        let w =
            Diagnostic::new(Code::ShadowedRule, "/p/aileron.yaml", pos, "never wins").quoting(text);
        assert!(w.is_warning());
        assert_eq!(
            w.to_string(),
            "/p/aileron.yaml:2:9: warning: never wins [shadowed-rule]\n    allow: [x]\n            ^"
        );
        let json = serde_json::to_value(&w).unwrap();
        assert_eq!(json["severity"], "warning");
        assert_eq!(json["code"], "shadowed-rule");
        assert_eq!(serde_json::to_value(&e).unwrap()["code"], "invalid");
        assert_eq!(serde_json::to_value(&e).unwrap()["severity"], "error");
        assert_eq!(
            e.clone().with_code(Code::Conflict).severity,
            Severity::Error
        );
    }
}
