//! Where a message's line ends, for every reader of it. Pure.
//!
//! The gateway reads a line up to `\n` (a `\r` just before it dropped: the
//! `\r\n` line end, which every SDK reads as `\n`), decides on what it
//! parsed and forwards those bytes. The server must read the same single
//! message, but readers end lines at more than `\n`: the Python SDK's stdio
//! server reads through a `TextIOWrapper` with universal newlines, so a raw
//! `\r` (JSON white space, invisible to the gateway's parser) ends a line
//! there, and `{"method":"ping","x":\r{…"wipe"…}\r}` is one `ping` to the
//! gateway and a `wipe` to the server. The TypeScript SDK (`ReadBuffer`)
//! and rmcp split at `\n` only and drop one `\r` before it; the Java SDK
//! (`BufferedReader.readLine`) and the C# SDK (`ReadLineAsync`) split at
//! `\r` too; Python's `str.splitlines` and `codecs` readers (no SDK's, a
//! server's own) also at `\v`, `\f`, `\x1c`-`\x1e`, U+0085, U+2028, U+2029.
//!
//! So a line holding any of [`BREAKS`] where JSON allows it raw only as
//! white space, or a control character anywhere (strict JSON never holds
//! one raw), is refused. U+0085, U+2028 and U+2029 are text inside a JSON
//! string: there they are written as their `\u` escape ([`escaped`]), the
//! same string to every JSON parser, and no reader can split there.

use serde_json::Value;
use std::borrow::Cow;

/// A character some MCP reader ends a line at.
#[derive(Debug, PartialEq, Eq)]
pub struct Break {
    /// Its UTF-8 bytes.
    pub bytes: &'static [u8],
    /// How a refusal names it.
    pub name: &'static str,
    /// Its short label in the audit log.
    pub label: &'static str,
    /// The readers that end a line at it.
    pub readers: &'static str,
    /// Its escape inside a JSON string, when JSON allows it there raw.
    pub escape: Option<&'static str>,
}

const SPLITLINES: &str = "Python's str.splitlines and codecs readers";

/// Every line break of the readers above but `\n` before the line's end.
pub const BREAKS: &[Break] = &[
    Break {
        bytes: b"\n",
        name: "a line feed (\\n)",
        label: "\\n",
        readers: "every MCP SDK",
        escape: None,
    },
    Break {
        bytes: b"\r",
        name: "a carriage return (\\r)",
        label: "\\r",
        readers: "the Python, Java and C# SDKs' stdio servers (universal newlines, \
                  BufferedReader.readLine, ReadLineAsync)",
        escape: None,
    },
    Break {
        bytes: b"\x0b",
        name: "a vertical tab (\\v)",
        label: "\\v",
        readers: SPLITLINES,
        escape: None,
    },
    Break {
        bytes: b"\x0c",
        name: "a form feed (\\f)",
        label: "\\f",
        readers: SPLITLINES,
        escape: None,
    },
    Break {
        bytes: b"\x1c",
        name: "a file separator (U+001C)",
        label: "U+001C",
        readers: SPLITLINES,
        escape: None,
    },
    Break {
        bytes: b"\x1d",
        name: "a group separator (U+001D)",
        label: "U+001D",
        readers: SPLITLINES,
        escape: None,
    },
    Break {
        bytes: b"\x1e",
        name: "a record separator (U+001E)",
        label: "U+001E",
        readers: SPLITLINES,
        escape: None,
    },
    Break {
        bytes: "\u{85}".as_bytes(),
        name: "a next line (U+0085) outside a string",
        label: "U+0085",
        readers: SPLITLINES,
        escape: Some("\\u0085"),
    },
    Break {
        bytes: "\u{2028}".as_bytes(),
        name: "a line separator (U+2028) outside a string",
        label: "U+2028",
        readers: SPLITLINES,
        escape: Some("\\u2028"),
    },
    Break {
        bytes: "\u{2029}".as_bytes(),
        name: "a paragraph separator (U+2029) outside a string",
        label: "U+2029",
        readers: SPLITLINES,
        escape: Some("\\u2029"),
    },
];

/// Whether `b` may start a break: a control byte but `\t`, or the first
/// byte of U+0085 (0xC2) or of U+2028/U+2029 (0xE2).
fn may_break(b: u8) -> bool {
    (b < 0x20 && b != b'\t') || b == 0xc2 || b == 0xe2
}

/// The break at the start of `rest`, if one starts there.
fn break_at(rest: &[u8]) -> Option<&'static Break> {
    BREAKS.iter().find(|b| rest.starts_with(b.bytes))
}

/// Each break in `line`, with its offset and whether it is inside a JSON
/// string (as far as the line is JSON), to `each`; it stops at `false`.
fn each_break(line: &[u8], mut each: impl FnMut(usize, &'static Break, bool) -> bool) {
    // 64 bytes at a time (which the compiler vectorises): most lines hold
    // no byte a break starts with, and most of a long one no quote either.
    let candidate = |c: &[u8]| c.iter().fold(false, |any, &b| any | may_break(b));
    let quoting = |c: &[u8]| {
        c.iter()
            .fold(false, |any, &b| any | (b == b'"') | (b == b'\\'))
    };
    if !line.chunks(64).any(candidate) {
        return;
    }
    let (mut in_string, mut escaped) = (false, false);
    for (n, chunk) in line.chunks(64).enumerate() {
        let breaks = candidate(chunk);
        if !breaks && !escaped && !quoting(chunk) {
            continue;
        }
        for (i, &b) in chunk.iter().enumerate() {
            let at = n * 64 + i;
            if breaks
                && may_break(b)
                && let Some(brk) = break_at(&line[at..])
                && !each(at, brk, in_string)
            {
                return;
            }
            if escaped {
                escaped = false;
            } else if in_string && b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = !in_string;
            }
        }
    }
}

/// `line` as every reader reads it: `Err` with the first break that
/// makes a reader read it as more than one line (a control character
/// anywhere, or any break outside a JSON string); else the line, each
/// break inside a string written as its escape.
pub fn frame(line: &[u8]) -> Result<Cow<'_, [u8]>, &'static Break> {
    let mut refused = None;
    let mut inside = Vec::new();
    each_break(line, |at, brk, in_string| {
        if brk.escape.is_none() || !in_string {
            refused = Some(brk);
            return false;
        }
        inside.push((at, brk));
        true
    });
    if let Some(brk) = refused {
        return Err(brk);
    }
    if inside.is_empty() {
        return Ok(Cow::Borrowed(line));
    }
    let mut out = Vec::with_capacity(line.len() + 4 * inside.len());
    let mut from = 0;
    for (at, brk) in inside {
        out.extend_from_slice(&line[from..at]);
        out.extend_from_slice(brk.escape.unwrap_or_default().as_bytes());
        from = at + brk.bytes.len();
    }
    out.extend_from_slice(&line[from..]);
    Ok(Cow::Owned(out))
}

/// A JSON text over several lines (an HTTP body, an event's data) as one
/// line: each `\n` or `\r` outside a string becomes a space (white space
/// either way); one inside a string, which strict JSON never holds, is
/// left for [`frame`] to refuse.
pub fn join_lines(text: &mut [u8]) {
    let (mut in_string, mut escaped) = (false, false);
    for b in text {
        match (in_string, escaped, *b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (_, false, b'"') => in_string = !in_string,
            (false, _, b'\n' | b'\r') => *b = b' ',
            _ => {}
        }
    }
}

/// The most pieces [`pieces`] names.
const MAX_PIECES: usize = 16;

/// The messages a reader that ends lines at every break would read in
/// `line` (those pieces that are JSON objects, the first [`MAX_PIECES`]),
/// for the audit log: each one's `method`, `id` and tool `name`.
pub fn pieces(line: &[u8]) -> Vec<Value> {
    let mut cuts = Vec::new();
    each_break(line, |at, brk, _| {
        cuts.push((at, brk.bytes.len()));
        true
    });
    cuts.push((line.len(), 0));
    let mut from = 0;
    let mut out = Vec::new();
    for (at, len) in cuts {
        if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(&line[from..at]) {
            let mut piece = serde_json::Map::new();
            for (key, value) in [
                ("method", m.get("method")),
                ("id", m.get("id")),
                ("tool", m.get("params").and_then(|p| p.get("name"))),
            ] {
                if let Some(v) = value {
                    piece.insert(key.into(), v.clone());
                }
            }
            out.push(Value::Object(piece));
            if out.len() == MAX_PIECES {
                break;
            }
        }
        from = at + len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The label of the break `frame` refuses `line` for.
    fn refused(line: &[u8]) -> Option<&'static str> {
        frame(line).err().map(|b| b.label)
    }

    #[test]
    fn a_break_outside_a_string_or_a_control_anywhere_is_refused() {
        let smuggled = b"{\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\r{\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"wipe\"}}\r}}";
        assert_eq!(refused(smuggled), Some("\\r"));
        assert_eq!(
            pieces(smuggled),
            [json!({"id": 2, "method": "tools/call", "tool": "wipe"})]
        );
        for (line, label) in [
            (&b"{\"a\":\"x\ry\"}"[..], "\\r"),
            (b"{\"a\":\"x\x0by\"}", "\\v"),
            (b"{\"a\":1}\x1c{}", "U+001C"),
            ("{\"a\":1}\u{2028}{}".as_bytes(), "U+2028"),
            ("{\"a\":\"\\\\\"\u{85}}".as_bytes(), "U+0085"),
            ("\u{2029}".as_bytes(), "U+2029"),
            (b"{}\n{}", "\\n"),
        ] {
            assert_eq!(
                refused(line),
                Some(label),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn a_text_over_several_lines_is_joined_outside_its_strings() {
        let mut text = b"{\r\n  \"a\": \"x\\\"\ry\",\n  \"b\": 1\r}".to_vec();
        join_lines(&mut text);
        assert_eq!(text, b"{    \"a\": \"x\\\"\ry\",   \"b\": 1 }");
        assert_eq!(refused(&text), Some("\\r"));
    }

    #[test]
    fn a_long_line_is_read_alike_at_every_offset() {
        // The breaks at every offset around the 64-byte steps, strings
        // and escapes before them.
        for pad in 0..140 {
            let text = format!("{}\\\"", "a".repeat(pad));
            let inside = format!("{{\"t\":\"{text}\u{2028}\",\"u\":1}}");
            let framed = frame(inside.as_bytes()).unwrap();
            assert_eq!(
                std::str::from_utf8(&framed).unwrap(),
                format!("{{\"t\":\"{text}\\u2028\",\"u\":1}}")
            );
            let outside = format!("{{\"t\":\"{text}\",\"u\":\u{2028}1}}");
            assert_eq!(refused(outside.as_bytes()), Some("U+2028"), "{pad}");
            let cr = format!("{{\"t\":\"{text}\",\"u\":\r1}}");
            assert_eq!(refused(cr.as_bytes()), Some("\\r"), "{pad}");
        }
    }

    #[test]
    fn text_inside_a_string_is_escaped_and_means_the_same() {
        let line = "{\"a\":\"x\u{2028}y\\\"\u{85}\",\"b\":\"\u{2029}é—\"}";
        let out = frame(line.as_bytes()).unwrap();
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"a":"x\u2028y\"\u0085","b":"\u2029é—"}"#
        );
        let before: Value = serde_json::from_slice(line.as_bytes()).unwrap();
        let after: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(before, after);
        // Nothing to escape: the line itself.
        assert!(matches!(
            frame("{\"a\":\"é—\"}\t ".as_bytes()),
            Ok(Cow::Borrowed(_))
        ));
        assert_eq!(refused(b"{\"a\":\"\\r\"}"), None);
    }
}
