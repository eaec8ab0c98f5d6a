//! Rules of layer 7 (the server's database) as data: the API form of one
//! rule, the rules file that `aileron rules export` writes and `aileron
//! serve` keeps at `$AILERON_DATA/server-rules.yaml`, and reading either
//! back into compiled [`Rule`]s with the same validation as `aileron check`.
//!
//! A rule in the API form is a mapping: `decision:` (allow, ask, judge,
//! deny) plus the keys of a long-form rule of `aileron.yaml` (`id`,
//! `description`, `priority`, `enabled`, `scope`, `when`, `command`, ...),
//! and, kept beside it by the server, an optional `label` for people.
//!
//! ```yaml
//! # Aileron server rules (layer 7)
//! rules:
//!   - id: no-prod-deletes
//!     label: deny prod deletes
//!     decision: deny
//!     description: no deletes on prod
//!     when:
//!       http.method: DELETE
//! ```

use aileron_engine::yaml::{self, Node, Value as Y};
use aileron_engine::{Diagnostic, Diagnostics, Layer, Rule, Source, parse_rule};
use serde_json::{Map, Value};
use std::path::Path;

/// The rules file `aileron serve` keeps up to date in the data directory.
pub const SERVER_RULES_FILE: &str = "server-rules.yaml";

/// Keys of the API form, in the order they are written.
pub const RULE_KEYS: &[&str] = &[
    "id",
    "decision",
    "description",
    "priority",
    "enabled",
    "scope",
    "override",
    "command",
    "binary",
    "args_contain",
    "working_dir",
    "when",
    "approver",
    "timeout",
    "on_timeout",
    "judge",
    "model",
    "prompt",
    "cache_ttl",
    "fail_closed",
];

/// One rule as stored: its id, the label people see, and the API form
/// (which holds the id too).
#[derive(Clone, Debug, PartialEq)]
pub struct RuleEntry {
    pub id: String,
    pub label: Option<String>,
    /// The API form (written out in [`RULE_KEYS`] order).
    pub spec: Map<String, Value>,
}

impl RuleEntry {
    /// An entry from a rule mapping: `label` is set aside, the rest is the
    /// API form (keys reordered; nothing is dropped, so unknown keys are
    /// still reported by [`RuleEntry::compile`]).
    pub fn from_mapping(mut map: Map<String, Value>) -> RuleEntry {
        let label = match map.remove("label") {
            Some(Value::String(s)) => Some(s),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        let spec = map;
        let id = spec
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        RuleEntry { id, label, spec }
    }

    /// The API form as block YAML in [`RULE_KEYS`] order: the text a rule
    /// is validated from, so diagnostics quote a readable line.
    pub fn source_text(&self) -> String {
        let mut out = String::new();
        render_value(&Value::Object(self.spec.clone()), 0, &mut out);
        out
    }

    /// Validates and compiles the rule (layer 7) with the loader's messages.
    /// `name` is what diagnostics call the source.
    pub fn compile(&self, name: &str, home: &str) -> Result<Rule, Vec<Diagnostic>> {
        let source = Source {
            name: name.to_owned(),
            text: self.source_text(),
            layer: Layer::Database,
            base_dir: "/".to_owned(),
        };
        parse_rule(&source, home)
    }

    /// The entry as one mapping: `id`, `label`, then the rest of the API form.
    pub fn to_mapping(&self) -> Map<String, Value> {
        let mut out = Map::new();
        if let Some(id) = self.spec.get("id") {
            out.insert("id".into(), id.clone());
        }
        if let Some(l) = &self.label {
            out.insert("label".into(), Value::String(l.clone()));
        }
        for (k, v) in &self.spec {
            if k != "id" {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }
}

/// The keys of a rule mapping in the order they are written.
fn ordered_keys(map: &Map<String, Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = map.keys().collect();
    let rank = |k: &str| {
        if k == "label" {
            return 1;
        }
        match RULE_KEYS.iter().position(|r| *r == k) {
            Some(0) => 0,
            Some(i) => i + 1,
            None => RULE_KEYS.len() + 2,
        }
    };
    keys.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    keys
}

/// The rules file: a comment and `rules:`, one entry per rule in order.
pub fn render(entries: &[RuleEntry]) -> String {
    let mut out = String::from(
        "# Aileron server rules (layer 7: the database of `aileron serve`).\n\
         # Written by `aileron rules export` and by the server on every change;\n\
         # `aileron rules import FILE` loads them. Each rule: `decision` plus the\n\
         # keys of a long-form rule of aileron.yaml, and an optional `label`.\n",
    );
    if entries.is_empty() {
        out.push_str("rules: []\n");
        return out;
    }
    out.push_str("rules:\n");
    for e in entries {
        let map = Value::Object(e.to_mapping());
        let mut body = String::new();
        render_value(&map, 4, &mut body);
        // `  - ` before the first key, aligned keys after it.
        let body = body.trim_start();
        out.push_str("  - ");
        out.push_str(body);
    }
    out
}

/// Block YAML for a JSON value, indented by `indent` spaces; mappings of
/// rules keep [`RULE_KEYS`] order. Strings are plain when that is
/// unambiguous, JSON-quoted otherwise (a JSON string is a YAML string).
pub fn render_value(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for k in ordered_keys(m) {
                let val = &m[k];
                out.push_str(&pad);
                out.push_str(&scalar_key(k));
                out.push(':');
                if is_block(val) {
                    out.push('\n');
                    render_value(val, indent + 2, out);
                } else {
                    out.push(' ');
                    out.push_str(&inline(val));
                    out.push('\n');
                }
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&pad);
                out.push('-');
                if is_block(item) {
                    let mut inner = String::new();
                    render_value(item, indent + 2, &mut inner);
                    out.push(' ');
                    out.push_str(inner.trim_start());
                } else {
                    out.push(' ');
                    out.push_str(&inline(item));
                    out.push('\n');
                }
            }
        }
        other => {
            out.push_str(&pad);
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

fn inline(v: &Value) -> String {
    match v {
        Value::String(s) => scalar_string(s),
        Value::Object(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
        other => other.to_string(),
    }
}

fn scalar_key(k: &str) -> String {
    scalar_string(k)
}

/// A string as a YAML scalar that reads back as the same string.
fn scalar_string(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ' ' | '(' | ')' | '+')
        })
        && s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '/')
        && !s.ends_with(' ')
        && !s.contains(" #")
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n" | "~"
        );
    if plain {
        s.to_owned()
    } else {
        Value::String(s.to_owned()).to_string()
    }
}

/// Reads a rules file: `rules:` (a list of API-form rules), or an
/// `aileron.yaml`-style document whose `allow` / `ask` / `judge` / `deny`
/// buckets become rules (a short-form string is `command:`). Every rule is
/// validated; all problems are reported. Rules without an `id` get
/// `new_id()`.
pub fn parse_file(
    name: &str,
    text: &str,
    home: &str,
    mut new_id: impl FnMut() -> String,
) -> Result<Vec<(RuleEntry, Rule)>, Vec<Diagnostic>> {
    let root = yaml::parse(name, text).map_err(|d| vec![d])?;
    let at = |n: &Node, msg: String| Diagnostic::at(name, text, n.pos, msg);
    let Y::Map(top) = &root.value else {
        return Err(vec![at(
            &root,
            format!("expected a mapping with `rules:`, found {}", root.kind()),
        )]);
    };
    let mut items: Vec<(&Node, Option<&str>)> = Vec::new();
    let mut errors = Vec::new();
    for (k, v) in top {
        match k.name.as_str() {
            "rules" | "allow" | "ask" | "judge" | "deny" => {
                let decision = (k.name != "rules").then_some(k.name.as_str());
                match &v.value {
                    Y::Seq(list) => items.extend(list.iter().map(|n| (n, decision))),
                    Y::Null => {}
                    _ => errors.push(at(
                        v,
                        format!("`{}` must be a list of rules, found {}", k.name, v.kind()),
                    )),
                }
            }
            "version" => {}
            other => errors.push(Diagnostic::at(
                name,
                text,
                k.pos,
                format!(
                    "`{other}` cannot be imported: only rules live in the database (`rules`, or the buckets allow, ask, judge, deny)"
                ),
            )),
        }
    }
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, (node, decision)) in items.into_iter().enumerate() {
        let mut map = match (node.to_json(), decision) {
            (Value::Object(m), _) => m,
            (Value::String(cmd), Some(_)) => {
                let mut m = Map::new();
                m.insert("command".into(), Value::String(cmd));
                m
            }
            (_, _) => {
                errors.push(at(
                    node,
                    format!("a rule must be a mapping, found {}", node.kind()),
                ));
                continue;
            }
        };
        if let Some(d) = decision {
            map.insert("decision".into(), Value::String(d.to_owned()));
        }
        if !map.contains_key("id") {
            map.insert("id".into(), Value::String(new_id()));
        }
        let entry = RuleEntry::from_mapping(map);
        if !seen.insert(entry.id.clone()) {
            errors.push(at(node, format!("duplicate rule id `{}`", entry.id)));
            continue;
        }
        let src_name = format!(
            "{name} (rule {} at {}:{})",
            i + 1,
            node.pos.line,
            node.pos.col
        );
        match entry.compile(&src_name, home) {
            Ok(rule) => out.push((entry, rule)),
            Err(e) => errors.extend(e),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Loads a rules file as layer-7 rules (for adapters that read the
/// server's export). A missing file is no rules.
pub fn load_rules(path: &Path, home: &str) -> Result<Vec<Rule>, Diagnostics> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Diagnostics(vec![Diagnostic::file(
                &path.to_string_lossy(),
                format!("cannot read: {e}"),
            )]));
        }
    };
    let mut n = 0;
    parse_file(&path.to_string_lossy(), &text, home, || {
        n += 1;
        format!("rule-{n}")
    })
    .map(|v| v.into_iter().map(|(_, r)| r).collect())
    .map_err(Diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> RuleEntry {
        RuleEntry::from_mapping(v.as_object().unwrap().clone())
    }

    #[test]
    fn render_and_parse_round_trip() {
        let entries = vec![
            entry(
                json!({"id": "r1", "label": "deny: prod # deletes", "decision": "deny",
                "description": "no \"prod\" deletes\nsecond line", "priority": 300,
                "scope": {"integration": "int-prod"},
                "when": {"http.method": {"in": ["DELETE", "PATCH"]}, "not": {"http.url": {"contains": "/sandbox/"}},
                         "any": [{"tags": {"in": ["prod"]}}, {"http.port": {"gte": 8000}}]}}),
            ),
            entry(
                json!({"id": "true", "decision": "ask", "command": "git push *", "timeout": 5, "on_timeout": "allow", "enabled": false}),
            ),
            entry(
                json!({"id": "r3", "decision": "allow", "when": {"type": "shell.exec", "shell.argv": ["ls", "-l"], "summary": ""}}),
            ),
        ];
        let text = render(&entries);
        let parsed = parse_file("x.yaml", &text, "/home/u", || unreachable!()).unwrap();
        let back: Vec<RuleEntry> = parsed.into_iter().map(|(e, _)| e).collect();
        assert_eq!(back, entries, "{text}");
        assert_eq!(render(&back), text);
    }

    #[test]
    fn buckets_are_imported_with_their_decision() {
        let text =
            "version: 1\ndeny:\n  - \"rm -rf *\"\nallow:\n  - {id: a, when: {type: fs.read}}\n";
        let mut n = 0;
        let got = parse_file("p.yaml", text, "/h", || {
            n += 1;
            format!("gen-{n}")
        })
        .unwrap();
        assert_eq!(got[0].0.id, "gen-1");
        assert_eq!(got[0].0.spec["decision"], "deny");
        assert_eq!(got[1].0.spec["decision"], "allow");
    }

    #[test]
    fn invalid_rules_report_the_loader_message() {
        let text = "rules:\n  - {id: x, decision: deny, when: {http.method: {equal: DELETE}}}\n";
        let errs = parse_file("r.yaml", text, "/h", String::new).unwrap_err();
        assert!(
            errs[0].message.contains("unknown operator `equal`"),
            "{errs:?}"
        );
        let text = "default: allow\nrules: []\n";
        let errs = parse_file("r.yaml", text, "/h", String::new).unwrap_err();
        assert!(errs[0].headline().starts_with("r.yaml:1:1:"), "{errs:?}");
    }
}
