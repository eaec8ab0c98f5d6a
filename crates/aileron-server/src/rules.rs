//! Rules of layer 7 over the API: the seed's field names mapped onto
//! Aileron's API form, validation with the loader's messages, the compiled
//! set the evaluator uses.

use crate::Error;
use crate::db::{RuleRow, RuleWrite};
use aileron_config::server_rules::RuleEntry;
use aileron_engine::{Diagnostic, Diagnostics, Policy, Rule};
use serde_json::{Map, Value, json};

/// Keys the server writes and ignores on input.
const READ_ONLY: &[&str] = &[
    "created_at",
    "updated_at",
    "created_by",
    "createdAt",
    "updatedAt",
];

/// A rule with what the database knows about it.
#[derive(Clone, Debug)]
pub struct StoredRule {
    pub entry: RuleEntry,
    pub rule: Rule,
    pub created_by: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl StoredRule {
    /// The rule as the API returns it: the API form, `label`, timestamps.
    pub fn to_json(&self) -> Value {
        let mut m = self.entry.to_mapping();
        m.insert("created_at".into(), json!(self.created_at));
        m.insert("updated_at".into(), json!(self.updated_at));
        m.insert("created_by".into(), json!(self.created_by));
        Value::Object(m)
    }

    pub fn from_row(row: &RuleRow, home: &str) -> Result<StoredRule, Error> {
        let spec: Map<String, Value> =
            serde_json::from_str(&row.source).map_err(|source| Error::StoredRuleNotJson {
                id: row.id.clone(),
                source,
            })?;
        let entry = RuleEntry {
            id: row.id.clone(),
            label: row.label.clone(),
            spec,
        };
        let rule = entry
            .compile(&format!("rules/{}", row.id), home)
            .map_err(|d| Error::StoredRuleInvalid(Diagnostics(d)))?;
        Ok(StoredRule {
            entry,
            rule,
            created_by: row.created_by.clone(),
            created_at: row.created_at.clone(),
            updated_at: row.updated_at.clone(),
        })
    }

    pub fn write(&self, now: &str) -> RuleWrite {
        let scope = &self.rule.scope;
        RuleWrite {
            id: self.entry.id.clone(),
            label: self.entry.label.clone(),
            scope_plugin: scope.plugin.clone(),
            scope_profile: scope.profile.clone(),
            scope_integration: scope.integration.clone(),
            priority: self.rule.priority,
            enabled: self.rule.enabled,
            decision: self.rule.decision.as_str().to_owned(),
            reason: self.rule.description.clone(),
            source: serde_json::to_string(&self.entry.spec).unwrap_or_default(),
            created_by: self.created_by.clone(),
            now: now.to_owned(),
        }
    }
}

/// What a save stored, and the linter's warnings about it (a warning never
/// keeps a rule from being saved).
#[derive(Debug)]
pub struct Saved {
    pub rules: Vec<StoredRule>,
    pub warnings: Vec<Diagnostic>,
}

/// The linter's warnings about `policy` that concern the rules `ids`: a
/// warning about one of them, or about a rule one of them hides.
pub fn warnings_about(policy: &Policy, ids: &[&str]) -> Vec<Diagnostic> {
    aileron_engine::lint::findings(policy)
        .into_iter()
        .filter(|f| {
            ids.contains(&f.rule.as_str()) || f.by.as_deref().is_some_and(|b| ids.contains(&b))
        })
        .map(|f| f.diagnostic)
        .collect()
}

/// The stored rules with `draft` saved: in the place of the rule of its
/// id, or after them all.
pub fn with_draft(stored: &[StoredRule], draft: Rule) -> Vec<Rule> {
    let mut rules: Vec<Rule> = stored.iter().map(|r| r.rule.clone()).collect();
    match rules.iter_mut().find(|r| r.id == draft.id) {
        Some(r) => *r = draft,
        None => rules.push(draft),
    }
    rules
}

/// A 400 answer: a message and, for rules, the loader's diagnostics.
#[derive(Debug)]
pub struct Invalid {
    pub message: String,
    pub diagnostics: Vec<Diagnostic>,
}

impl Invalid {
    pub fn msg(m: impl Into<String>) -> Invalid {
        Invalid {
            message: m.into(),
            diagnostics: Vec::new(),
        }
    }

    pub fn diags(d: Vec<Diagnostic>) -> Invalid {
        Invalid {
            message: Diagnostics(d.clone()).to_string(),
            diagnostics: d,
        }
    }
}

/// Turns a request body into an entry: the API form, with the seed's names
/// accepted (`label`, `reason`, `scope_*_id` / `scope*Id`, `source` as the
/// JSON text of `when`, `require_human` / `require_llm`, `timeoutMs`,
/// `onTimeout`, `approverPluginId`) and read-only fields dropped.
pub fn entry_from_body(body: Value, new_id: impl FnOnce() -> String) -> Result<RuleEntry, Invalid> {
    let Value::Object(mut m) = body else {
        return Err(Invalid::msg("a rule must be a JSON object"));
    };
    for k in READ_ONLY {
        m.remove(*k);
    }
    if let Some(r) = m.remove("reason").filter(|r| !r.is_null()) {
        m.entry("description").or_insert(r);
    }
    let mut scope = match m.remove("scope") {
        Some(Value::Object(s)) => Some(s),
        Some(Value::Null) | None => None,
        Some(other) => {
            // Let the loader report the wrong type.
            m.insert("scope".into(), other);
            None
        }
    };
    for (field, names) in [
        ("plugin", ["scope_plugin_id", "scopePluginId"]),
        ("profile", ["scope_profile_id", "scopeProfileId"]),
        (
            "integration",
            ["scope_integration_id", "scopeIntegrationId"],
        ),
    ] {
        for n in names {
            match m.remove(n) {
                Some(Value::Null) | None => {}
                Some(v) => {
                    scope.get_or_insert_with(Map::new).insert(field.into(), v);
                }
            }
        }
    }
    if let Some(s) = scope.filter(|s| !s.is_empty()) {
        m.insert("scope".into(), Value::Object(s));
    }
    if let Some(src) = m.remove("source") {
        match src {
            Value::String(text) => {
                let when: Value = serde_json::from_str(&text)
                    .map_err(|e| Invalid::msg(format!("`source` is not JSON: {e}")))?;
                m.entry("when").or_insert(when);
            }
            Value::Null => {}
            other => {
                m.entry("when").or_insert(other);
            }
        }
    }
    if m.get("dialect").and_then(Value::as_str) == Some("pattern") {
        m.remove("dialect");
    }
    if let Some(Value::String(d)) = m.get("decision") {
        let d = match d.as_str() {
            "require_human" => Some("ask"),
            "require_llm" => Some("judge"),
            _ => None,
        };
        if let Some(d) = d {
            m.insert("decision".into(), json!(d));
        }
    }
    for n in ["timeoutMs", "timeout_ms"] {
        if let Some(v) = m.remove(n) {
            let ms = v
                .as_u64()
                .ok_or_else(|| Invalid::msg(format!("`{n}` must be a number of milliseconds")))?;
            m.entry("timeout")
                .or_insert(json!(ms.div_ceil(1000).max(1)));
        }
    }
    if let Some(v) = m.remove("onTimeout") {
        m.entry("on_timeout").or_insert(v);
    }
    for n in ["approverPluginId", "approver_plugin_id"] {
        if let Some(v) = m.remove(n).filter(|v| !v.is_null()) {
            m.entry("approver").or_insert(v);
        }
    }
    for n in ["approverProfileId", "approver_profile_id"] {
        m.remove(n);
    }
    if let Some(Value::Number(n)) = m.get("enabled") {
        let on = n.as_i64() != Some(0);
        m.insert("enabled".into(), json!(on));
    }
    let has_id = matches!(m.get("id"), Some(Value::String(s)) if !s.is_empty());
    if !has_id {
        m.insert("id".into(), json!(new_id()));
    }
    if let Some(Value::Null) = m.get("label") {
        m.remove("label");
    }
    Ok(RuleEntry::from_mapping(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_names_map_onto_the_api_form() {
        let body = json!({
            "label": "no destructive DDL on prod",
            "scopeIntegrationId": "int-prod-pg",
            "priority": 100,
            "enabled": 1,
            "source": "{\"sql.verb\":{\"in\":[\"DROP\",\"TRUNCATE\",\"DELETE\"]}}",
            "decision": "require_human",
            "timeoutMs": 300000,
            "onTimeout": "deny",
            "reason": "destructive SQL on prod is human-only",
            "created_at": "x"
        });
        let e = entry_from_body(body, || "gen".into()).unwrap();
        assert_eq!(e.id, "gen");
        assert_eq!(e.label.as_deref(), Some("no destructive DDL on prod"));
        assert_eq!(
            Value::Object(e.spec.clone()),
            json!({"id": "gen", "decision": "ask", "description": "destructive SQL on prod is human-only",
                   "priority": 100, "enabled": true, "scope": {"integration": "int-prod-pg"},
                   "when": {"sql.verb": {"in": ["DROP", "TRUNCATE", "DELETE"]}},
                   "timeout": 300, "on_timeout": "deny"})
        );
        let rule = e.compile("rules/gen", "/h").unwrap();
        assert_eq!(rule.approver.unwrap().timeout, Some(300));
    }
}
