//! A YAML (and JSON) document as a tree of nodes that remember where they
//! were written, so that every validation error can name its line and column.

use crate::diagnostic::{Diagnostic, Pos};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// A value of the document.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null` or `~`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// Any other number.
    Float(f64),
    /// A string.
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A mapping, in the order written.
    Map(Vec<(Key, Node)>),
}

/// A mapping key with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    /// The key's text.
    pub name: String,
    /// Where it was written.
    pub pos: Pos,
}

/// A value with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where it was written.
    pub pos: Pos,
}

impl Node {
    /// What kind of value this is, in the words error messages use.
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Converts to JSON (used for actions given inline in `tests:`).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.name.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// Parses `text` (YAML 1.2; JSON is accepted as the YAML subset it is).
/// An empty document, or one of only comments, is an empty mapping.
pub fn parse(file: &str, text: &str) -> Result<Node, Diagnostic> {
    if only_comments(text) {
        return Ok(Node {
            value: Value::Map(Vec::new()),
            pos: Pos { line: 1, col: 1 },
        });
    }
    let options = serde_saphyr::options! { strict_booleans: true };
    match serde_saphyr::from_str_with_options::<Spanned<Raw>>(text, options) {
        Ok(root) => Ok(convert(root)),
        Err(err) => {
            let pos = err
                .location()
                .map(|l| Pos {
                    line: l.line() as u32,
                    col: l.column() as u32,
                })
                .unwrap_or_default();
            let message = saphyr_message(&err.to_string());
            let message = match message.strip_prefix("duplicate mapping key: ") {
                Some(rest) => duplicate_key(text, pos, rest),
                None => format!("invalid YAML: {message}"),
            };
            Err(Diagnostic::at(file, text, pos, message).with_code(crate::diagnostic::Code::Syntax))
        }
    }
}

/// serde-saphyr renders `error: line L column C: MESSAGE` plus a snippet; keep MESSAGE.
fn saphyr_message(rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or(rendered);
    let first = first.strip_prefix("error: ").unwrap_or(first);
    match first.find(": ") {
        Some(i) if first.starts_with("line ") => first[i + 2..].to_owned(),
        _ => first.to_owned(),
    }
}

/// Blank lines, comments and document markers only.
fn only_comments(text: &str) -> bool {
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
    })
}

/// "duplicate key `K` (first at line N)", from serde-saphyr's "K, set
/// DuplicateKeyPolicy in Options if acceptable" (an option of the library,
/// not of the policy file). The first occurrence is the earlier line that
/// starts with the same key at the same column (a block mapping's).
fn duplicate_key(text: &str, pos: Pos, rest: &str) -> String {
    let key = rest
        .split(", set DuplicateKeyPolicy")
        .next()
        .unwrap_or(rest);
    let indent = (pos.col as usize).saturating_sub(1);
    let first = text
        .lines()
        .take((pos.line as usize).saturating_sub(1))
        .position(|l| match (l.get(..indent), l.get(indent..)) {
            (Some(before), Some(at)) => {
                before.trim().is_empty()
                    && [
                        format!("{key}:"),
                        format!("\"{key}\":"),
                        format!("'{key}':"),
                    ]
                    .iter()
                    .any(|k| at.starts_with(k.as_str()))
            }
            _ => false,
        });
    match first {
        Some(i) => format!("duplicate key `{key}` (first at line {})", i + 1),
        None => format!("duplicate key `{key}`"),
    }
}

fn pos_of<T>(s: &Spanned<T>) -> Pos {
    Pos {
        line: s.referenced.line() as u32,
        col: s.referenced.column() as u32,
    }
}

fn convert(raw: Spanned<Raw>) -> Node {
    let pos = pos_of(&raw);
    let value = match raw.value {
        Raw::Null => Value::Null,
        Raw::Bool(b) => Value::Bool(b),
        Raw::Int(i) => Value::Int(i),
        Raw::Float(f) => Value::Float(f),
        Raw::Str(s) => Value::Str(s),
        Raw::Seq(items) => Value::Seq(items.into_iter().map(convert).collect()),
        Raw::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let pos = pos_of(&k);
                    (Key { name: k.value, pos }, convert(v))
                })
                .collect(),
        ),
    };
    Node { value, pos }
}

/// The shape serde-saphyr fills in; converted to [`Node`] right away.
enum Raw {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Raw>>),
    Map(Vec<(Spanned<String>, Spanned<Raw>)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RawVisitor;
        impl<'de> Visitor<'de> for RawVisitor {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_unit<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_none<E>(self) -> Result<Raw, E> {
                Ok(Raw::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
                Ok(Raw::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
                Ok(Raw::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
                Ok(i64::try_from(v).map_or(Raw::Float(v as f64), Raw::Int))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
                Ok(Raw::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
                Ok(Raw::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Raw, E> {
                Ok(Raw::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = a.next_element()? {
                    items.push(item);
                }
                Ok(Raw::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Raw, A::Error> {
                let mut entries = Vec::new();
                while let Some(k) = a.next_key()? {
                    entries.push((k, a.next_value()?));
                }
                Ok(Raw::Map(entries))
            }
        }
        d.deserialize_any(RawVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_and_point_at_values() {
        let node = parse("f", "a: 1\nb:\n  - x\n").unwrap();
        let Value::Map(entries) = &node.value else {
            panic!()
        };
        assert_eq!(entries[1].0.pos, Pos { line: 2, col: 1 });
        let Value::Seq(items) = &entries[1].1.value else {
            panic!()
        };
        assert_eq!(items[0].pos, Pos { line: 3, col: 5 });
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let err = parse("p.yaml", "a: [1\nb: 2").unwrap_err();
        assert_eq!(err.file, "p.yaml");
        assert_eq!(err.line, 2);
        assert!(err.message.starts_with("invalid YAML: "), "{}", err.message);
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let err = parse("p.yaml", "a: 1\na: 2\n").unwrap_err();
        assert_eq!(err.message, "duplicate key `a` (first at line 1)");
        assert_eq!((err.line, err.col), (2, 1));
        let err = parse("p.yaml", "s:\n  x: 1\n  y: 2\n  x: 3\n").unwrap_err();
        assert_eq!(err.message, "duplicate key `x` (first at line 2)");
        let err = parse("p.yaml", "{a: 1, a: 2}").unwrap_err();
        assert_eq!(err.message, "duplicate key `a`");
    }

    #[test]
    fn a_file_of_only_comments_is_an_empty_mapping() {
        for text in ["", "\n", "# nothing yet\n", "---\n# a comment\n\n"] {
            let node = parse("p.yaml", text).unwrap();
            assert!(
                matches!(&node.value, Value::Map(m) if m.is_empty()),
                "{text:?}"
            );
        }
        assert!(parse("p.yaml", "null\n").is_ok_and(|n| !matches!(n.value, Value::Map(_))));
    }
}
