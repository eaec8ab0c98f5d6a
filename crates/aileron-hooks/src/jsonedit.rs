//! Editing an agent's JSON settings in place: a value is added or removed
//! as text, so every other byte of the file — the user's formatting,
//! ordering and comments (JSONC) — stays as it was.

use serde_json::Value;
use std::ops::Range;

/// A parsed JSON value and where it sits in the text.
#[derive(Clone, Debug)]
pub enum Node {
    Object {
        span: Range<usize>,
        members: Vec<(String, Range<usize>, Node)>,
    },
    Array {
        span: Range<usize>,
        items: Vec<Node>,
    },
    Scalar {
        span: Range<usize>,
        value: Value,
    },
}

impl Node {
    pub fn span(&self) -> Range<usize> {
        match self {
            Node::Object { span, .. } | Node::Array { span, .. } | Node::Scalar { span, .. } => {
                span.clone()
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object { members, .. } => members.iter().find(|m| m.0 == key).map(|m| &m.2),
            _ => None,
        }
    }

    /// The value, as `serde_json` reads it (a key given twice: the last).
    pub fn to_value(&self) -> Value {
        match self {
            Node::Object { members, .. } => Value::Object(
                members
                    .iter()
                    .map(|(k, _, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
            Node::Array { items, .. } => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Scalar { value, .. } => value.clone(),
        }
    }

    /// Every string anywhere inside.
    pub fn strings(&self, out: &mut Vec<String>) {
        match self {
            Node::Object { members, .. } => members.iter().for_each(|m| m.2.strings(out)),
            Node::Array { items, .. } => items.iter().for_each(|i| i.strings(out)),
            Node::Scalar {
                value: Value::String(s),
                ..
            } => out.push(s.clone()),
            Node::Scalar { .. } => {}
        }
    }
}

/// Where and why a text is not JSON (with comments): `line 3, column 7:
/// expected `:``.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {what}")]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub what: &'static str,
}

/// Parses `text` (JSON, with `//` and `/* */` comments allowed). The error
/// names the line and column.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws()?;
    let node = p.value(0)?;
    p.ws()?;
    if p.i != p.s.len() {
        return Err(p.error("unexpected text after the JSON value"));
    }
    Ok(node)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn error(&self, what: &'static str) -> SyntaxError {
        let before = &self.s[..self.i.min(self.s.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        SyntaxError { line, column, what }
    }

    fn ws(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.s.get(self.i) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'/') => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'*') => {
                    let start = self.i;
                    self.i += 2;
                    loop {
                        if self.i + 1 >= self.s.len() {
                            self.i = start;
                            return Err(self.error("unterminated comment"));
                        }
                        if &self.s[self.i..self.i + 2] == b"*/" {
                            self.i += 2;
                            break;
                        }
                        self.i += 1;
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > 128 {
            return Err(self.error("nested too deeply"));
        }
        let start = self.i;
        match self.s.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws()?;
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Node::Object {
                        span: start..self.i,
                        members,
                    });
                }
                loop {
                    self.ws()?;
                    let key_start = self.i;
                    let Value::String(key) = self.string()? else {
                        unreachable!()
                    };
                    let key_span = key_start..self.i;
                    self.ws()?;
                    if self.s.get(self.i) != Some(&b':') {
                        return Err(self.error("expected `:`"));
                    }
                    self.i += 1;
                    self.ws()?;
                    let v = self.value(depth + 1)?;
                    members.push((key, key_span, v));
                    self.ws()?;
                    match self.s.get(self.i) {
                        Some(b',') => {
                            self.i += 1;
                            self.ws()?;
                            // Trailing commas (JSONC).
                            if self.s.get(self.i) == Some(&b'}') {
                                self.i += 1;
                                break;
                            }
                        }
                        Some(b'}') => {
                            self.i += 1;
                            break;
                        }
                        _ => return Err(self.error("expected `,` or `}`")),
                    }
                }
                Ok(Node::Object {
                    span: start..self.i,
                    members,
                })
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws()?;
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Node::Array {
                        span: start..self.i,
                        items,
                    });
                }
                loop {
                    self.ws()?;
                    items.push(self.value(depth + 1)?);
                    self.ws()?;
                    match self.s.get(self.i) {
                        Some(b',') => {
                            self.i += 1;
                            self.ws()?;
                            if self.s.get(self.i) == Some(&b']') {
                                self.i += 1;
                                break;
                            }
                        }
                        Some(b']') => {
                            self.i += 1;
                            break;
                        }
                        _ => return Err(self.error("expected `,` or `]`")),
                    }
                }
                Ok(Node::Array {
                    span: start..self.i,
                    items,
                })
            }
            Some(b'"') => {
                let value = self.string()?;
                Ok(Node::Scalar {
                    span: start..self.i,
                    value,
                })
            }
            Some(_) => {
                while self.i < self.s.len()
                    && !matches!(
                        self.s[self.i],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' | b'/'
                    )
                {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                let value: Value = serde_json::from_str(text).map_err(|_| {
                    self.i = start;
                    self.error("expected a JSON value")
                })?;
                Ok(Node::Scalar {
                    span: start..self.i,
                    value,
                })
            }
            None => Err(self.error("unexpected end of file")),
        }
    }

    fn string(&mut self) -> Result<Value, SyntaxError> {
        if self.s.get(self.i) != Some(&b'"') {
            return Err(self.error("expected a string"));
        }
        let start = self.i;
        self.i += 1;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                    return serde_json::from_str(text).map_err(|_| {
                        self.i = start;
                        self.error("invalid string")
                    });
                }
                _ => self.i += 1,
            }
        }
        self.i = start;
        Err(self.error("unterminated string"))
    }
}

/// The indentation of the line `at` is on.
fn indent_at(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The indentation step the file uses (two spaces when it does not say).
fn step(text: &str) -> String {
    text.lines()
        .map(|l| {
            l.chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        })
        .filter(|i| !i.is_empty())
        .min_by_key(String::len)
        .unwrap_or_else(|| "  ".to_owned())
}

/// `value` pretty-printed, its lines after the first indented by `indent`.
fn render(value: &Value, indent: &str, step: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut out = String::new();
    for (n, line) in pretty.lines().enumerate() {
        if n > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        let lead = line.len() - line.trim_start().len();
        out.push_str(&step.repeat(lead / 2));
        out.push_str(line.trim_start());
    }
    out
}

/// An edit: replace `range` of the text with `with`.
pub type Edit = (Range<usize>, String);

pub fn apply(text: &str, (range, with): &Edit) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..range.start]);
    out.push_str(with);
    out.push_str(&text[range.end..]);
    out
}

/// Adds `key: value` at the end of `object`.
pub fn add_member(text: &str, object: &Node, key: &str, value: &Value) -> Edit {
    let Node::Object { span, members } = object else {
        unreachable!("add_member on an object")
    };
    let step = step(text);
    let key_text = serde_json::to_string(key).unwrap_or_default();
    match members.last() {
        Some((_, key_span, last)) => {
            let indent = indent_at(text, key_span.start);
            let end = last.span().end;
            let with = format!(",\n{indent}{key_text}: {}", render(value, &indent, &step));
            (end..end, with)
        }
        None => {
            let outer = indent_at(text, span.start);
            let indent = format!("{outer}{step}");
            let at = span.start + 1;
            let with = format!(
                "\n{indent}{key_text}: {}\n{outer}",
                render(value, &indent, &step)
            );
            // `{}` or `{ }`: what was between the braces goes.
            (at..span.end - 1, with)
        }
    }
}

/// Replaces `node` with `value`: on one line where the node was on one,
/// else laid out at the node's indentation.
pub fn replace(text: &str, node: &Node, value: &Value) -> Edit {
    let span = node.span();
    if !text[span.clone()].contains('\n') {
        return (span, one_line(value));
    }
    let indent = indent_at(text, span.start);
    (span, render(value, &indent, &step(text)))
}

/// `value` on one line, spaced as people write it: `{"a": [1, 2]}`.
fn one_line(value: &Value) -> String {
    let key = |k: &str| serde_json::to_string(k).unwrap_or_default();
    match value {
        Value::Object(m) => {
            let members: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", key(k), one_line(v)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(one_line).collect();
            format!("[{}]", items.join(", "))
        }
        scalar => scalar.to_string(),
    }
}

/// Appends `value` to `array`.
pub fn push_item(text: &str, array: &Node, value: &Value) -> Edit {
    let Node::Array { span, items } = array else {
        unreachable!("push_item on an array")
    };
    let step = step(text);
    match items.last() {
        Some(last) => {
            let indent = indent_at(text, last.span().start);
            let end = last.span().end;
            (
                end..end,
                format!(",\n{indent}{}", render(value, &indent, &step)),
            )
        }
        None => {
            let outer = indent_at(text, span.start);
            let indent = format!("{outer}{step}");
            let at = span.start + 1;
            (
                at..span.end - 1,
                format!("\n{indent}{}\n{outer}", render(value, &indent, &step)),
            )
        }
    }
}

/// Removes item `index` of `array` with the separator that came with it.
pub fn remove_item(array: &Node, index: usize) -> Edit {
    let Node::Array { span, items } = array else {
        unreachable!("remove_item on an array")
    };
    remove_at(
        span,
        &items.iter().map(Node::span).collect::<Vec<_>>(),
        index,
    )
}

/// Removes member `key` of `object` with the separator that came with it.
pub fn remove_member(object: &Node, key: &str) -> Option<Edit> {
    let Node::Object { span, members } = object else {
        return None;
    };
    let index = members.iter().position(|m| m.0 == key)?;
    let spans: Vec<Range<usize>> = members
        .iter()
        .map(|(_, k, v)| k.start..v.span().end)
        .collect();
    Some(remove_at(span, &spans, index))
}

fn remove_at(outer: &Range<usize>, spans: &[Range<usize>], index: usize) -> Edit {
    let this = &spans[index];
    if spans.len() == 1 {
        // The only entry: the container goes back to being empty.
        return (outer.start + 1..outer.end - 1, String::new());
    }
    if index > 0 {
        // From the end of the previous entry: its comma, our line.
        (spans[index - 1].end..this.end, String::new())
    } else {
        (this.start..spans[1].start, String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn adds_and_removes_leaving_everything_else_byte_for_byte() {
        let original = "{\n    // my settings\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": []}\n        ]\n    }\n}\n";
        let root = parse(original).unwrap();
        let arr = root.get("hooks").unwrap().get("PreToolUse").unwrap();
        let edit = push_item(original, arr, &json!({"a": 1}));
        let added = apply(original, &edit);
        assert_eq!(
            added,
            "{\n    // my settings\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": []},\n            {\n                \"a\": 1\n            }\n        ]\n    }\n}\n"
        );
        let root = parse(&added).unwrap();
        let arr = root.get("hooks").unwrap().get("PreToolUse").unwrap();
        assert_eq!(apply(&added, &remove_item(arr, 1)), original);
    }

    #[test]
    fn a_new_member_comes_out_again() {
        let original = "{\"a\": [1, 2], \"b\": true}";
        let root = parse(original).unwrap();
        let added = apply(original, &add_member(original, &root, "hooks", &json!({})));
        assert!(
            added.starts_with("{\"a\": [1, 2], \"b\": true,\n"),
            "{added}"
        );
        let root = parse(&added).unwrap();
        assert_eq!(
            apply(&added, &remove_member(&root, "hooks").unwrap()),
            original
        );
        let empty = "{}";
        let root = parse(empty).unwrap();
        let added = apply(empty, &add_member(empty, &root, "x", &json!([1])));
        assert_eq!(added, "{\n  \"x\": [\n    1\n  ]\n}");
        let root = parse(&added).unwrap();
        assert_eq!(apply(&added, &remove_member(&root, "x").unwrap()), "{}");
    }

    #[test]
    fn errors_name_the_place() {
        assert_eq!(
            parse("{\n  \"a\": 1,\n  \"b\" 2\n}")
                .unwrap_err()
                .to_string(),
            "line 3, column 7: expected `:`"
        );
        assert!(parse("{\"a\": [1, 2,]}").is_ok(), "JSONC trailing comma");
    }
}
