//! Errors that point at a place in a policy source.
//!
//! Every problem found while loading a policy becomes a [`Diagnostic`]. Its
//! `Display` is the form adapters and `aileron check` print as they are:
//!
//! ```text
//! aileron.yaml:7:30: error: unknown operator `equal`; expected one of: equals, in, ...
//!     when: {http.method: {equal: "DELETE"}}
//!                          ^
//! ```

use std::fmt;

/// A 1-based line and column in a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// One problem in one policy source.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// The source's display name (a path, or `<builtin>/lang/go`).
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
    /// The offending source line, when the source text is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_line: Option<String>,
}

impl Diagnostic {
    /// A diagnostic at `pos` in `source`, quoting the offending line.
    pub fn at(file: &str, text: &str, pos: Pos, message: impl Into<String>) -> Self {
        let source_line = (pos.line > 0)
            .then(|| text.lines().nth(pos.line as usize - 1).map(str::to_owned))
            .flatten();
        Diagnostic {
            file: file.to_owned(),
            line: pos.line,
            col: pos.col,
            message: message.into(),
            source_line,
        }
    }

    /// A diagnostic about a whole file (it cannot be read, a profile is missing, ...).
    pub fn file(file: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.to_owned(),
            line: 0,
            col: 0,
            message: message.into(),
            source_line: None,
        }
    }

    /// The first line only: `FILE:LINE:COL: error: MESSAGE`.
    pub fn headline(&self) -> String {
        if self.line == 0 {
            format!("{}: error: {}", self.file, self.message)
        } else {
            format!(
                "{}:{}:{}: error: {}",
                self.file, self.line, self.col, self.message
            )
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
