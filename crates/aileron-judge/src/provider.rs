//! The two wire formats: OpenAI-compatible `/chat/completions` (OpenAI,
//! Ollama, vLLM, llama.cpp server, LM Studio) with a JSON-schema response
//! format, and Anthropic's Messages API with one forced tool call.

use crate::{Error, JudgeConfig, Provider, Usage, Verdict};
use serde_json::{Value, json};

/// The JSON schema of a verdict: exactly a decision and a reason.
fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["allow", "deny", "ask"]},
            "reason": {"type": "string"}
        },
        "required": ["decision", "reason"],
        "additionalProperties": false
    })
}

/// Where the request goes.
pub fn url(cfg: &JudgeConfig) -> String {
    let base = cfg.base_url.trim_end_matches('/');
    match cfg.provider {
        Provider::OpenAi => format!("{base}/chat/completions"),
        Provider::Anthropic if base.ends_with("/v1") => format!("{base}/messages"),
        Provider::Anthropic => format!("{base}/v1/messages"),
    }
}

/// The request body.
pub fn body(cfg: &JudgeConfig, system: &str, user: &str) -> Value {
    match cfg.provider {
        Provider::OpenAi => json!({
            "model": cfg.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "max_tokens": cfg.max_tokens,
            "temperature": cfg.temperature,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "aileron_verdict", "strict": true, "schema": verdict_schema()},
            },
        }),
        Provider::Anthropic => json!({
            "model": cfg.model,
            "max_tokens": cfg.max_tokens,
            "temperature": cfg.temperature,
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "tools": [{
                "name": "verdict",
                "description": "Give Aileron's verdict on the action.",
                "input_schema": verdict_schema(),
            }],
            "tool_choice": {"type": "tool", "name": "verdict"},
        }),
    }
}

/// The headers besides the key's (`judge try` prints these).
pub fn headers(cfg: &JudgeConfig) -> Vec<(&'static str, &'static str)> {
    match cfg.provider {
        Provider::OpenAi => vec![("content-type", "application/json")],
        Provider::Anthropic => vec![
            ("content-type", "application/json"),
            ("anthropic-version", "2023-06-01"),
        ],
    }
}

/// The header that carries the key, and its value.
pub fn key_header(cfg: &JudgeConfig, key: &str) -> (&'static str, String) {
    match cfg.provider {
        Provider::OpenAi => ("authorization", format!("Bearer {key}")),
        Provider::Anthropic => ("x-api-key", key.to_owned()),
    }
}

/// The verdict in a provider's response, and the tokens it reports.
pub fn verdict(cfg: &JudgeConfig, response: &Value) -> Result<(Verdict, Usage), Error> {
    match cfg.provider {
        Provider::OpenAi => {
            let usage = Usage {
                prompt_tokens: response["usage"]["prompt_tokens"].as_u64(),
                completion_tokens: response["usage"]["completion_tokens"].as_u64(),
            };
            let choices = response["choices"]
                .as_array()
                .ok_or_else(|| malformed("no `choices`"))?;
            let [choice] = choices.as_slice() else {
                return Err(malformed(&format!("{} choices, not one", choices.len())));
            };
            let message = &choice["message"];
            if let Some(refusal) = message["refusal"].as_str().filter(|r| !r.is_empty()) {
                return Err(Error::Refused(clip(&one_line(refusal), 200)));
            }
            if choice["finish_reason"].as_str() == Some("length") {
                return Err(malformed("the reply was cut at max_tokens"));
            }
            let text = message["content"]
                .as_str()
                .ok_or_else(|| malformed("no text in the reply"))?;
            Ok((parse_text(text)?, usage))
        }
        Provider::Anthropic => {
            let usage = Usage {
                prompt_tokens: response["usage"]["input_tokens"].as_u64(),
                completion_tokens: response["usage"]["output_tokens"].as_u64(),
            };
            if response["stop_reason"].as_str() == Some("refusal") {
                return Err(Error::Refused("the model refused to answer".into()));
            }
            if response["stop_reason"].as_str() == Some("max_tokens") {
                return Err(malformed("the reply was cut at max_tokens"));
            }
            let blocks = response["content"]
                .as_array()
                .ok_or_else(|| malformed("no `content`"))?;
            let calls: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "tool_use").collect();
            if calls.is_empty() {
                // The forced tool call not made: the model wrote instead.
                let text: Vec<&str> = blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                let text = one_line(&text.join(" "));
                if !text.is_empty() {
                    return Err(Error::Refused(format!(
                        "it wrote text, not a `verdict` call: {}",
                        clip(&text, 200)
                    )));
                }
            }
            let [call] = calls.as_slice() else {
                return Err(malformed(&format!(
                    "{} tool calls, not one `verdict` call",
                    calls.len()
                )));
            };
            if call["name"] != "verdict" {
                return Err(malformed("a call of another tool than `verdict`"));
            }
            Ok((parse_value(&call["input"])?, usage))
        }
    }
}

/// A verdict written as JSON text: exactly one object, nothing around it.
pub fn parse_text(text: &str) -> Result<Verdict, Error> {
    let v: Value = serde_json::from_str(text.trim())
        .map_err(|_| malformed("the reply is not exactly one JSON verdict"))?;
    parse_value(&v)
}

/// A verdict object: `decision` and `reason`, nothing else.
pub fn parse_value(v: &Value) -> Result<Verdict, Error> {
    let obj = v
        .as_object()
        .ok_or_else(|| malformed("the verdict is not an object"))?;
    if let Some(extra) = obj.keys().find(|k| *k != "decision" && *k != "reason") {
        return Err(malformed(&format!(
            "an unexpected field `{}`",
            clip(&one_line(extra), 40)
        )));
    }
    let decision = match obj.get("decision").and_then(Value::as_str) {
        Some("allow") => crate::JudgeDecision::Allow,
        Some("deny") => crate::JudgeDecision::Deny,
        Some("ask") => crate::JudgeDecision::Ask,
        Some(other) => {
            return Err(malformed(&format!(
                "an unknown decision `{}`",
                clip(&one_line(other), 40)
            )));
        }
        None => return Err(malformed("no decision")),
    };
    let reason = obj
        .get("reason")
        .and_then(Value::as_str)
        .map(one_line)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| malformed("no reason"))?;
    let reason: String = reason.chars().take(crate::MAX_REASON_CHARS).collect();
    Ok(Verdict { decision, reason })
}

fn malformed(why: &str) -> Error {
    Error::Malformed(why.to_owned())
}

pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` cut to `max` characters, `…` marking the cut.
pub(crate) fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exactly_one_verdict_parses() {
        let ok = parse_text(r#"{"decision": "deny", "reason": "deletes the repo"}"#).unwrap();
        assert_eq!(ok.decision, crate::JudgeDecision::Deny);
        for bad in [
            r#"{"decision": "allow"}"#,
            r#"{"decision": "allow", "reason": ""}"#,
            r#"{"decision": "yes", "reason": "x"}"#,
            r#"{"decision": "allow", "reason": "x", "override": true}"#,
            r#"{"decision": "allow", "reason": "x"} {"decision": "deny", "reason": "y"}"#,
            r#"Sure! {"decision": "allow", "reason": "x"}"#,
            r#"[{"decision": "allow", "reason": "x"}]"#,
            "",
        ] {
            assert!(parse_text(bad).is_err(), "{bad}");
        }
    }
}
