//! From an MCP request to the Action the policy decides. Pure.
//!
//! - `tools/call` → `mcp.call` with `mcp.server`, `mcp.tool`,
//!   `mcp.arguments` and the tool's `mcp.annotations` from the server's
//!   `tools/list`; its sensitivity from those annotations: `readOnlyHint`
//!   → read, `destructiveHint` → destructive, else mutate (a tool never
//!   listed has none: mutate). The annotations are the server's word.
//! - `resources/read` → `mcp.call` with `mcp.resource` (the URI), read.
//! - `prompts/get` → `mcp.call` with `mcp.prompt` (the name) and its
//!   `mcp.arguments`, read.

use aileron_engine::{Action, Sensitivity};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The methods the gateway decides.
pub const DECIDED: &[&str] = &["tools/call", "resources/read", "prompts/get"];

/// The fields of an `mcp.call` that every call of one tool shares: what
/// [`aileron_engine::Policy::denies_all_like`] may rely on to call a tool
/// disabled. The call's own `shell` and `fs` facets are known too: it has none.
pub const TOOL_FIXED: &[&str] = &[
    "type",
    "primary",
    "verb",
    "sensitivity",
    "mcp.server",
    "mcp.tool",
    "mcp.annotations",
    "shell",
    "fs",
];

/// The longest summary (arguments are cut; the facets hold them whole).
const SUMMARY_CHARS: usize = 200;

/// The tools a server listed, with their annotations.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    annotations: HashMap<String, Value>,
}

impl Catalog {
    /// Records the tools of one `tools/list` result (one page of it).
    pub fn learn(&mut self, result: &Value) {
        for tool in tools(result) {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                let a = tool.get("annotations").cloned().unwrap_or(Value::Null);
                self.annotations.insert(name.to_owned(), a);
            }
        }
    }

    /// The annotations `tool` was listed with (`Null`: none, or never listed).
    pub fn annotations(&self, tool: &str) -> &Value {
        self.annotations.get(tool).unwrap_or(&Value::Null)
    }
}

fn tools(result: &Value) -> impl Iterator<Item = &Value> {
    result
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// Why a request cannot be lowered (it is refused, never forwarded).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{method} without params")]
    NoParams { method: String },
    #[error("{method} without a {field} string")]
    NoField { method: String, field: &'static str },
}

/// The Action of a decided request (`method` one of [`DECIDED`]).
pub fn lower(
    server: &str,
    method: &str,
    params: Option<&Value>,
    catalog: &Catalog,
) -> Result<Action, Refusal> {
    let params = params
        .and_then(Value::as_object)
        .ok_or_else(|| Refusal::NoParams {
            method: method.to_owned(),
        })?;
    let field = |field: &'static str| {
        params
            .get(field)
            .and_then(Value::as_str)
            .ok_or(Refusal::NoField {
                method: method.to_owned(),
                field,
            })
    };
    let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
    Ok(match method {
        "tools/call" => {
            let tool = field("name")?;
            let mut a = tool_call(server, tool, catalog.annotations(tool));
            a.summary = summary(&format!("{server}/{tool}"), &arguments);
            facet(&mut a).insert("arguments".into(), arguments);
            a
        }
        "resources/read" => {
            let uri = field("uri")?;
            let mut a = mcp(server, "resources/read", Sensitivity::Read);
            a.summary = format!("{server} resources/read {uri}");
            facet(&mut a).insert("resource".into(), uri.into());
            a
        }
        _ => {
            let name = field("name")?;
            let mut a = mcp(server, "prompts/get", Sensitivity::Read);
            a.summary = summary(&format!("{server} prompts/get {name}"), &arguments);
            let f = facet(&mut a);
            f.insert("prompt".into(), name.into());
            f.insert("arguments".into(), arguments);
            a
        }
    })
}

/// A `tools/call` of `tool` as far as every call of it is the same (no
/// arguments): what is asked to know whether a blanket deny disables it.
pub fn tool_call(server: &str, tool: &str, annotations: &Value) -> Action {
    let mut a = mcp(server, tool, sensitivity(annotations));
    a.summary = format!("{server}/{tool}");
    let f = facet(&mut a);
    f.insert("tool".into(), tool.into());
    if !annotations.is_null() {
        f.insert("annotations".into(), annotations.clone());
    }
    a.normalize();
    a
}

/// Sensitivity by the tool's annotations (MCP's own default for an absent
/// `destructiveHint` is true; a tool that says nothing is `mutate` here,
/// as for any tool call the hooks lower).
pub fn sensitivity(annotations: &Value) -> Sensitivity {
    let hint = |name: &str| annotations.get(name).and_then(Value::as_bool) == Some(true);
    if hint("readOnlyHint") {
        Sensitivity::Read
    } else if hint("destructiveHint") {
        Sensitivity::Destructive
    } else {
        Sensitivity::Mutate
    }
}

fn mcp(server: &str, verb: &str, sensitivity: Sensitivity) -> Action {
    let mut a = Action {
        kind: "mcp.call".into(),
        verb: verb.to_owned(),
        sensitivity: Some(sensitivity),
        ..Action::default()
    };
    a.facets.insert("mcp".into(), json!({"server": server}));
    a
}

fn facet(a: &mut Action) -> &mut Map<String, Value> {
    match a.facets.get_mut("mcp") {
        Some(Value::Object(m)) => m,
        _ => unreachable!("mcp() made the facet"),
    }
}

/// `head` and the arguments as compact JSON, cut to a line.
fn summary(head: &str, arguments: &Value) -> String {
    let empty = arguments.as_object().is_some_and(Map::is_empty);
    if empty {
        return head.to_owned();
    }
    // Serialising a huge argument only to cut it: write at most what is kept.
    let mut text = String::with_capacity(SUMMARY_CHARS + 8);
    text.push_str(head);
    text.push(' ');
    let mut w = Cut {
        out: &mut text,
        left: SUMMARY_CHARS,
    };
    let _ = serde_json::to_writer(&mut w, arguments);
    if w.left == 0 {
        text.push('…');
    }
    text
}

/// A writer that keeps the first characters and drops the rest.
struct Cut<'a> {
    out: &'a mut String,
    left: usize,
}

impl std::io::Write for Cut<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // Stop the serialiser early.
            return Err(std::io::Error::other("cut"));
        }
        let text = String::from_utf8_lossy(buf);
        for c in text.chars() {
            if self.left == 0 {
                break;
            }
            self.out.push(if c.is_control() { ' ' } else { c });
            self.left -= 1;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `result` of a `tools/list` without the tools `disabled` says a blanket
/// deny makes useless; `None` when nothing is taken out (the answer is
/// passed on as the server wrote it).
pub fn without_disabled(
    server: &str,
    result: &Value,
    disabled: &dyn Fn(&Action) -> bool,
) -> Option<(Value, Vec<String>)> {
    let list = result.get("tools")?.as_array()?;
    let mut removed = Vec::new();
    let kept: Vec<Value> = list
        .iter()
        .filter(|tool| {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                return true;
            };
            let annotations = tool.get("annotations").unwrap_or(&Value::Null);
            let off = disabled(&tool_call(server, name, annotations));
            if off {
                removed.push(name.to_owned());
            }
            !off
        })
        .cloned()
        .collect();
    if removed.is_empty() {
        return None;
    }
    let mut result = result.clone();
    result["tools"] = Value::Array(kept);
    Some((result, removed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed() -> Catalog {
        let mut c = Catalog::default();
        c.learn(&json!({"tools": [
            {"name": "read_note", "annotations": {"readOnlyHint": true}},
            {"name": "wipe", "annotations": {"destructiveHint": true}},
            {"name": "write_note"},
        ]}));
        c
    }

    #[test]
    fn a_tool_call_is_an_mcp_call_with_its_annotations() {
        let a = lower(
            "notes",
            "tools/call",
            Some(&json!({"name": "read_note", "arguments": {"id": 3}})),
            &listed(),
        )
        .unwrap();
        assert_eq!(a.kind, "mcp.call");
        assert_eq!(a.verb, "read_note");
        assert_eq!(a.sensitivity, Some(Sensitivity::Read));
        assert_eq!(a.summary, r#"notes/read_note {"id":3}"#);
        assert_eq!(
            a.facets["mcp"],
            json!({"server": "notes", "tool": "read_note", "arguments": {"id": 3},
                   "annotations": {"readOnlyHint": true}})
        );
        let sens = |tool: &str| {
            lower(
                "notes",
                "tools/call",
                Some(&json!({ "name": tool })),
                &listed(),
            )
            .unwrap()
            .sensitivity
        };
        assert_eq!(sens("wipe"), Some(Sensitivity::Destructive));
        assert_eq!(sens("write_note"), Some(Sensitivity::Mutate));
        // Never listed: no annotations, mutate, still an action.
        assert_eq!(sens("unlisted"), Some(Sensitivity::Mutate));
        let a = lower("n", "tools/call", Some(&json!({"name": "x"})), &listed()).unwrap();
        assert_eq!(a.summary, "n/x");
        assert_eq!(a.facets["mcp"]["arguments"], json!({}));
    }

    #[test]
    fn resources_and_prompts_are_reads() {
        let a = lower(
            "fs",
            "resources/read",
            Some(&json!({"uri": "file:///etc/passwd"})),
            &listed(),
        )
        .unwrap();
        assert_eq!(a.verb, "resources/read");
        assert_eq!(a.sensitivity, Some(Sensitivity::Read));
        assert_eq!(
            a.facets["mcp"],
            json!({"server": "fs", "resource": "file:///etc/passwd"})
        );
        let a = lower(
            "fs",
            "prompts/get",
            Some(&json!({"name": "review", "arguments": {"lang": "rust"}})),
            &listed(),
        )
        .unwrap();
        assert_eq!(
            a.facets["mcp"],
            json!({"server": "fs", "prompt": "review", "arguments": {"lang": "rust"}})
        );
    }

    #[test]
    fn a_request_without_what_it_names_is_refused() {
        let c = listed();
        assert!(lower("s", "tools/call", None, &c).is_err());
        assert!(lower("s", "tools/call", Some(&json!([1])), &c).is_err());
        assert_eq!(
            lower("s", "tools/call", Some(&json!({"name": 3})), &c),
            Err(Refusal::NoField {
                method: "tools/call".into(),
                field: "name"
            })
        );
        assert!(lower("s", "resources/read", Some(&json!({})), &c).is_err());
    }

    #[test]
    fn a_huge_argument_is_kept_whole_in_the_facet_and_cut_in_the_summary() {
        let big = "x".repeat(4 << 20);
        let a = lower(
            "s",
            "tools/call",
            Some(&json!({"name": "put", "arguments": {"data": big}})),
            &listed(),
        )
        .unwrap();
        assert!(a.summary.chars().count() <= "s/put ".len() + SUMMARY_CHARS + 1);
        assert!(a.summary.ends_with('…'));
        assert_eq!(
            a.facets["mcp"]["arguments"]["data"].as_str().unwrap().len(),
            4 << 20
        );
    }

    #[test]
    fn disabled_tools_are_taken_out_of_the_list() {
        let result = json!({"tools": [
            {"name": "read_note", "annotations": {"readOnlyHint": true}},
            {"name": "wipe", "annotations": {"destructiveHint": true}},
        ], "nextCursor": "c"});
        let destructive = |a: &Action| a.sensitivity == Some(Sensitivity::Destructive);
        let (kept, removed) = without_disabled("s", &result, &destructive).unwrap();
        assert_eq!(removed, ["wipe"]);
        assert_eq!(
            kept,
            json!({"tools": [{"name": "read_note", "annotations": {"readOnlyHint": true}}], "nextCursor": "c"})
        );
        assert!(without_disabled("s", &result, &|_| false).is_none());
    }
}
