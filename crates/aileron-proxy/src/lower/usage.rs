//! The tokens an LLM API's response says it used, read as it streams by.
//!
//! Every provider reports them in an object under a key `usage` (OpenAI's
//! chat and responses APIs, Anthropic's messages, any OpenAI-compatible
//! server) or `usageMetadata` (Gemini):
//!
//! - OpenAI: `usage.prompt_tokens` / `completion_tokens` (chat, embeddings),
//!   `usage.input_tokens` / `output_tokens` (responses); streamed, in the
//!   last chunk (`stream_options.include_usage`) or the
//!   `response.completed` event.
//! - Anthropic: `usage.input_tokens` / `output_tokens`; streamed, the input
//!   in `message_start` and the output counted up in `message_delta`.
//! - Gemini: `usageMetadata.promptTokenCount` / `candidatesTokenCount`,
//!   counted up chunk by chunk.
//!
//! So the scanner does not need to know the provider, nor the framing (a
//! JSON body, pretty-printed or not, server-sent events, Gemini's streamed
//! JSON array): it follows the JSON's strings byte by byte, keeps each
//! such object it meets (at most 16 KiB, the only thing it buffers), and
//! the last value of each count wins, as every format counts up.

use serde_json::Value;

/// The tokens a call used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// The names of the objects that hold the counts.
const USAGE_KEYS: &[&[u8]] = &[b"usage", b"usageMetadata"];

/// The names of the counts, each family in the order it is looked for.
const INPUT_KEYS: &[&str] = &["input_tokens", "prompt_tokens", "promptTokenCount"];
const OUTPUT_KEYS: &[&str] = &["output_tokens", "completion_tokens", "candidatesTokenCount"];

/// A usage object larger than this is not one.
const MAX_OBJECT: usize = 16 * 1024;

/// The longest key kept while looking for one of [`USAGE_KEYS`].
const MAX_KEY: usize = 16;

/// Reads the usage of a response fed to it in pieces, in bounded memory.
#[derive(Clone, Debug, Default)]
pub struct UsageScanner {
    /// Inside a string outside a kept object.
    in_string: bool,
    escaped: bool,
    /// The string being read, while it is short enough to be a key.
    string: Vec<u8>,
    string_long: bool,
    /// The last string closed, if it was one of [`USAGE_KEYS`]: a key
    /// when `:` comes next.
    after_usage_string: bool,
    /// After `"usage":`: an object next is kept.
    expect_object: bool,
    /// The object being kept, and how deep it is.
    object: Vec<u8>,
    depth: usize,
    object_string: bool,
    object_escaped: bool,
    input: Option<u64>,
    output: Option<u64>,
}

impl UsageScanner {
    pub fn new() -> UsageScanner {
        UsageScanner::default()
    }

    /// Reads the next bytes of the response.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.depth > 0 {
                self.keep(b);
            } else {
                self.scan(b);
            }
        }
    }

    /// The usage read so far: `None` until a usage object with a count
    /// was read; a count not given is 0.
    pub fn usage(&self) -> Option<Usage> {
        (self.input.is_some() || self.output.is_some()).then(|| Usage {
            input_tokens: self.input.unwrap_or(0),
            output_tokens: self.output.unwrap_or(0),
        })
    }

    /// Outside a kept object: follows strings to find the keys.
    fn scan(&mut self, b: u8) {
        if self.in_string {
            match b {
                _ if self.escaped => self.escaped = false,
                b'\\' => self.escaped = true,
                b'"' => {
                    self.in_string = false;
                    self.after_usage_string =
                        !self.string_long && USAGE_KEYS.contains(&self.string.as_slice());
                    return;
                }
                // A string never spans lines: this one was not JSON.
                b'\n' => {
                    self.in_string = false;
                    return;
                }
                _ => {}
            }
            if self.string.len() < MAX_KEY {
                self.string.push(b);
            } else {
                self.string_long = true;
            }
            return;
        }
        if b.is_ascii_whitespace() {
            return;
        }
        let key = std::mem::take(&mut self.after_usage_string);
        let expect_object = std::mem::take(&mut self.expect_object);
        match b {
            b':' if key => self.expect_object = true,
            b'{' if expect_object => {
                self.object.clear();
                self.keep(b);
            }
            b'"' => {
                self.in_string = true;
                self.string.clear();
                self.string_long = false;
            }
            _ => {}
        }
    }

    /// Inside a kept object: keeps its bytes until it closes, or gives it
    /// up when it grows too large or a string in it runs past a line.
    fn keep(&mut self, b: u8) {
        if self.object.len() >= MAX_OBJECT || (self.object_string && b == b'\n') {
            self.depth = 0;
            self.object_string = false;
            self.object_escaped = false;
            return;
        }
        self.object.push(b);
        if self.object_string {
            match b {
                _ if self.object_escaped => self.object_escaped = false,
                b'\\' => self.object_escaped = true,
                b'"' => self.object_string = false,
                _ => {}
            }
            return;
        }
        match b {
            b'"' => self.object_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => {
                self.depth -= 1;
                if self.depth == 0 {
                    self.read_object();
                }
            }
            _ => {}
        }
    }

    fn read_object(&mut self) {
        let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(&self.object) else {
            return;
        };
        let count = |keys: &[&str]| keys.iter().find_map(|k| o.get(*k)?.as_u64());
        if let Some(n) = count(INPUT_KEYS) {
            self.input = Some(n);
        }
        if let Some(n) = count(OUTPUT_KEYS) {
            self.output = Some(n);
        }
    }
}

/// The usage of a whole response body (JSON or server-sent events).
pub fn usage(response_body: &[u8]) -> Option<Usage> {
    let mut s = UsageScanner::new();
    s.feed(response_body);
    s.usage()
}
