//! JSON-RPC 2.0 messages as MCP's stdio transport carries them: one JSON
//! text per line. Pure: bytes in, messages and answers out.
//!
//! A message is read strictly: a key given twice in one object is refused,
//! since the gateway decides on what it parsed and forwards the bytes, and
//! a server that keeps the first of two `name`s would run another tool than
//! the one decided. serde_json refuses lone surrogates, invalid UTF-8 and
//! nesting deeper than 128.

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value, json};

/// The longest message read from the client (the agent); a longer one is
/// refused without being held (its id is found by [`IdScan`]).
pub const MAX_CLIENT_MESSAGE: usize = 16 << 20;
/// The longest message read from the server.
pub const MAX_SERVER_MESSAGE: usize = 64 << 20;

/// JSON-RPC error codes the gateway answers with.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A `resources/read` or `prompts/get` the policy denied (implementation
    /// defined range of JSON-RPC).
    pub const DENIED: i64 = -32001;
    /// The server ended, or sent an answer the gateway cannot pass on.
    pub const SERVER_GONE: i64 = -32000;
}

/// One line, read.
#[derive(Clone, Debug, PartialEq)]
pub enum Parsed {
    /// A single message.
    One(Message),
    /// A JSON-RPC batch (an array), its elements as parsed JSON.
    Batch(Vec<Value>),
    /// Not JSON (or a key twice, or too deep).
    NotJson(String),
    /// JSON, but not a JSON-RPC message; the id when one could be read.
    Invalid { id: Option<Value>, why: String },
}

/// A JSON-RPC message. `id`s are kept as given (a string or an integer);
/// [`key`] gives the text they are tracked by.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Response {
        id: Value,
        /// The `result`, or `None` for an `error`.
        result: Option<Value>,
    },
}

/// Reads one line (without its newline).
pub fn parse(line: &[u8]) -> Parsed {
    match parse_strict(line) {
        Err(e) => Parsed::NotJson(e.to_string()),
        Ok(Value::Array(items)) if items.is_empty() => Parsed::Invalid {
            id: None,
            why: "an empty batch".into(),
        },
        Ok(Value::Array(items)) => Parsed::Batch(items),
        Ok(v) => classify(v),
    }
}

/// A parsed JSON value as a message.
pub fn classify(v: Value) -> Parsed {
    let Value::Object(mut m) = v else {
        return Parsed::Invalid {
            id: None,
            why: "not a JSON object".into(),
        };
    };
    let id = m.remove("id");
    let valid_id = |id: &Value| id.is_string() || id.is_i64() || id.is_u64();
    let invalid = |id: Option<Value>, why: &str| Parsed::Invalid {
        id: id.filter(valid_id),
        why: why.to_owned(),
    };
    match m.remove("method") {
        Some(Value::String(method)) => {
            let params = m.remove("params");
            if params
                .as_ref()
                .is_some_and(|p| !p.is_object() && !p.is_array())
            {
                return invalid(id, "its params are neither an object nor an array");
            }
            match id {
                None => Parsed::One(Message::Notification { method, params }),
                Some(id) if valid_id(&id) => Parsed::One(Message::Request { id, method, params }),
                Some(id) => invalid(Some(id), "its id is neither a string nor an integer"),
            }
        }
        Some(_) => invalid(id, "its method is not a string"),
        None => {
            let result = m.remove("result");
            let error = m.remove("error");
            match (id, result, error) {
                (Some(id), Some(result), None) if valid_id(&id) => Parsed::One(Message::Response {
                    id,
                    result: Some(result),
                }),
                (Some(id), None, Some(_)) if valid_id(&id) || id.is_null() => {
                    Parsed::One(Message::Response { id, result: None })
                }
                (id, _, _) => invalid(id, "neither a request, a notification nor a response"),
            }
        }
    }
}

/// The text an id is tracked by (`7` and `"7"` are different ids).
pub fn key(id: &Value) -> String {
    id.to_string()
}

/// A JSON-RPC error response.
pub fn error(id: Option<&Value>, code: i64, message: &str) -> Vec<u8> {
    let v = json!({
        "jsonrpc": "2.0",
        "id": id.cloned().unwrap_or(Value::Null),
        "error": {"code": code, "message": message},
    });
    v.to_string().into_bytes()
}

/// A `tools/call` result that is a tool error: MCP's way to tell the model
/// why a call failed, so that it can read it and go on.
pub fn tool_error(id: &Value, text: &str) -> Vec<u8> {
    let v = json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {"content": [{"type": "text", "text": text}], "isError": true},
    });
    v.to_string().into_bytes()
}

/// A response with `result`.
pub fn response(id: &Value, result: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
        .to_string()
        .into_bytes()
}

/// Parses JSON, refusing an object that names a key twice.
pub fn parse_strict(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = Strict.deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

struct Strict;

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(Strict)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number that is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(Strict)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let v = map.next_value_seed(Strict)?;
            if out.contains_key(&k) {
                return Err(A::Error::custom(format!("the key {k:?} is given twice")));
            }
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// Finds the top-level `id` of a message too long to hold, a byte at a
/// time and in bounded memory, so that its sender can be answered.
#[derive(Clone, Debug, Default)]
pub struct IdScan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The top-level key being read (at most [`IdScan::KEEP`] bytes).
    key: Vec<u8>,
    reading_key: bool,
    /// After the top-level key `id` and its colon: the value's text.
    value: Option<Vec<u8>>,
    /// The top-level key just ended: a value follows its colon.
    after_key: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
    /// The first byte was `{`.
    object: bool,
    started: bool,
}

impl IdScan {
    const KEEP: usize = 256;

    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if !self.started {
            if b.is_ascii_whitespace() {
                return;
            }
            self.started = true;
            self.object = b == b'{';
        }
        if !self.object || self.found.is_some() && self.value.is_none() {
            return;
        }
        if let Some(v) = &mut self.value {
            // The id's value: a string or a number at depth 1.
            let ends = !self.in_string && (b == b',' || b == b'}') && self.depth == 1;
            if ends {
                let text = std::mem::take(v);
                self.value = None;
                self.found = Some(text);
            } else if v.len() < Self::KEEP {
                v.push(b);
            }
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    self.after_key = Some(std::mem::take(&mut self.key));
                }
            } else if self.reading_key && self.key.len() < Self::KEEP {
                self.key.push(b);
            }
            if self.reading_key && self.escaped {
                // An escaped key is never plain `id`.
                self.key.push(0);
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                // A key: at depth 1, where no key has been read yet.
                if self.depth == 1 && self.after_key.is_none() && self.value.is_none() {
                    self.reading_key = true;
                    self.key.clear();
                }
            }
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 => {
                if let Some(k) = self.after_key.take()
                    && k == b"id"
                {
                    self.value = Some(Vec::new());
                }
            }
            b',' if self.depth == 1 => self.after_key = None,
            _ => {}
        }
    }

    /// The top-level id, if one was read whole and is a string or an integer.
    pub fn id(&self) -> Option<Value> {
        let text = self.found.as_ref()?;
        let v: Value = serde_json::from_slice(text.trim_ascii()).ok()?;
        (v.is_string() || v.is_i64() || v.is_u64()).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_requests_notifications_responses_and_batches() {
        let p = parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#);
        assert_eq!(
            p,
            Parsed::One(Message::Request {
                id: json!(1),
                method: "tools/list".into(),
                params: Some(json!({}))
            })
        );
        let p = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(matches!(p, Parsed::One(Message::Notification { .. })));
        let p = parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#);
        assert!(
            matches!(p, Parsed::One(Message::Response { id, result: Some(_) }) if id == json!("a"))
        );
        let p = parse(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#);
        assert!(matches!(
            p,
            Parsed::One(Message::Response { result: None, .. })
        ));
        assert!(matches!(parse(br#"[{"id":1,"method":"a"}]"#), Parsed::Batch(v) if v.len() == 1));
    }

    #[test]
    fn refuses_what_is_not_json_rpc() {
        assert!(matches!(parse(b"hello"), Parsed::NotJson(_)));
        assert!(matches!(parse(b"{\"id\":1} x"), Parsed::NotJson(_)));
        assert!(matches!(parse(b"\xff"), Parsed::NotJson(_)));
        assert!(matches!(parse(br#""\ud800""#), Parsed::NotJson(_)));
        let deep = "[".repeat(1000) + &"]".repeat(1000);
        assert!(matches!(parse(deep.as_bytes()), Parsed::NotJson(_)));
        // The same key twice: which one would the server read?
        let twice = br#"{"id":1,"method":"tools/call","params":{"name":"read","name":"delete"}}"#;
        assert!(matches!(parse(twice), Parsed::NotJson(e) if e.contains("twice")));
        assert!(matches!(parse(b"[]"), Parsed::Invalid { .. }));
        assert!(matches!(parse(b"3"), Parsed::Invalid { id: None, .. }));
        assert_eq!(
            parse(br#"{"id":4,"method":7}"#),
            Parsed::Invalid {
                id: Some(json!(4)),
                why: "its method is not a string".into()
            }
        );
        assert!(matches!(
            parse(br#"{"id":{"a":1},"method":"x"}"#),
            Parsed::Invalid { id: None, .. }
        ));
        assert!(matches!(
            parse(br#"{"id":1,"method":"x","params":"s"}"#),
            Parsed::Invalid { id: Some(_), .. }
        ));
        assert!(matches!(
            parse(br#"{"id":1,"result":1,"error":{}}"#),
            Parsed::Invalid { .. }
        ));
    }

    #[test]
    fn finds_the_id_of_a_message_too_long_to_hold() {
        let scan = |text: &str| {
            let mut s = IdScan::default();
            // In pieces, as a reader hands them over.
            for chunk in text.as_bytes().chunks(3) {
                s.feed(chunk);
            }
            s.id()
        };
        assert_eq!(
            scan(r#"{"jsonrpc":"2.0","id":42,"method":"tools/call"}"#),
            Some(json!(42))
        );
        assert_eq!(
            scan(r#"{"method":"tools/call","params":{"id":1,"x":"\"id\":2"},"id":"z"}"#),
            Some(json!("z"))
        );
        assert_eq!(scan(r#"{"params":{"id":1}}"#), None);
        assert_eq!(scan(r#"{"i\u0064":7}"#), None);
        assert_eq!(scan(r#"[{"id":1}]"#), None);
        assert_eq!(scan(r#"{"x":"id","y":"a:b","id" : 5 }"#), Some(json!(5)));
    }
}
