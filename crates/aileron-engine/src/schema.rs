//! The JSON Schema of `aileron.yaml` (`aileron schema`), for editors.
//!
//! Built from the same key lists the parser validates with, so the two
//! cannot drift apart.

use crate::action::{KNOWN_FACETS, TOP_LEVEL_FIELDS};
use crate::document::{ASK_KEYS, ASK_MODES, DEFAULTS, JUDGE_KEYS, MATCH_KEYS, META_KEYS};
use crate::pattern::OPERATORS;
use serde_json::{Value, json};

/// The schema as a JSON value.
pub fn json_schema() -> Value {
    let str_ = json!({"type": "string"});
    let str_list = json!({"type": "array", "items": {"type": "string"}});
    let scalar = json!({"type": ["string", "number", "boolean"]});
    let mut fields: Vec<String> = TOP_LEVEL_FIELDS.iter().map(|s| s.to_string()).collect();
    for (facet, fs) in KNOWN_FACETS {
        fields.extend(fs.iter().map(|f| format!("{facet}.{f}")));
    }
    let operators = json!({
        "type": "object",
        "minProperties": 1,
        "additionalProperties": false,
        "properties": {
            "equals": {"type": ["string", "number", "boolean", "array"]},
            "in": {"type": "array", "items": scalar},
            "pattern": {"type": "string", "description": "regular expression (linear time; inline flags such as (?i))"},
            "contains": scalar,
            "notContains": scalar,
            "glob": {"type": "string", "description": "* any run of characters, ? one character; anchored"},
            "exists": {"type": "boolean"},
            "gt": {"type": "number"}, "gte": {"type": "number"}, "lt": {"type": "number"}, "lte": {"type": "number"},
            "path": {"type": "string", "description": "gitignore-style path glob: ** crosses directories, * does not; ~ and ./ expand"},
            "time": {
                "type": "object", "additionalProperties": false,
                "properties": {
                    "days": {"type": "array", "items": {"enum": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]}},
                    "from": {"type": "string", "pattern": "^\\d{1,2}:\\d{2}$"},
                    "to": {"type": "string", "pattern": "^\\d{1,2}:\\d{2}$"},
                    "tz": {"type": "string"}
                }
            }
        }
    });
    debug_assert_eq!(
        operators["properties"].as_object().map(|o| o.len()),
        Some(OPERATORS.len())
    );
    let condition = json!({"anyOf": [scalar, {"type": "array", "items": scalar}, {"$ref": "#/$defs/operators"}]});
    let matcher = json!({
        "type": "object",
        "minProperties": 1,
        "description": format!("field: condition pairs (implicit AND) and all/any/not/rate. Fields: {}; or any plugin facet path", fields.join(", ")),
        "properties": {
            "all": {"type": "array", "items": {"$ref": "#/$defs/matcher"}, "minItems": 1},
            "any": {"type": "array", "items": {"$ref": "#/$defs/matcher"}, "minItems": 1},
            "not": {"$ref": "#/$defs/matcher"},
            "rate": {"type": "object", "additionalProperties": false, "required": ["more_than", "seconds"],
                     "properties": {"more_than": {"type": "integer", "minimum": 0}, "seconds": {"type": "integer", "minimum": 1}}}
        },
        "additionalProperties": {"$ref": "#/$defs/condition"}
    });
    let mut base_props = serde_json::Map::new();
    for k in MATCH_KEYS.iter().chain(META_KEYS) {
        let v = match *k {
            "priority" => json!({"type": "integer"}),
            "enabled" => json!({"type": "boolean"}),
            "when" => json!({"$ref": "#/$defs/matcher"}),
            "scope" => json!({"type": "object", "additionalProperties": false,
                              "properties": {"plugin": str_, "profile": str_, "integration": str_}}),
            _ => str_.clone(),
        };
        base_props.insert(k.to_string(), v);
    }
    let rule_with = |extra: &[(&str, Value)]| {
        let mut props = base_props.clone();
        for (k, v) in extra {
            props.insert(k.to_string(), v.clone());
        }
        json!({"anyOf": [
            {"type": "string", "description": "command glob: * any run of characters, ? one; a trailing ' *' also matches the bare command"},
            {"type": "object", "additionalProperties": false, "properties": props,
             "anyOf": MATCH_KEYS.iter().map(|k| json!({"required": [k]})).chain([json!({"required": ["override"]})]).collect::<Vec<_>>()}
        ]})
    };
    let on_timeout = json!({"enum": ["allow", "deny"]});
    debug_assert_eq!(ASK_KEYS.len(), 3);
    debug_assert_eq!(JUDGE_KEYS.len(), 5);
    let ask_rule = rule_with(&[
        (
            "approver",
            json!({"type": "string", "description": "terminal, dashboard, or a webhook approver id"}),
        ),
        ("timeout", json!({"type": "integer", "minimum": 1})),
        ("on_timeout", on_timeout.clone()),
    ]);
    let judge_rule = rule_with(&[
        (
            "judge",
            json!({"type": "string", "description": "the judge to ask (a name in `judges:`); default: `default`, or the only one"}),
        ),
        ("model", str_.clone()),
        ("prompt", str_.clone()),
        ("cache_ttl", json!({"type": "integer", "minimum": 0})),
        ("fail_closed", json!({"type": "boolean"})),
    ]);
    let plain_rule = rule_with(&[]);
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://aileron.dev/schema/aileron.yaml.json",
        "title": "aileron.yaml",
        "description": "Aileron policy: which agent actions are allowed, denied, or sent to a human or an LLM judge.",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "version": {"const": 1},
            "profiles": {"type": "array", "items": {"type": "string"},
                          "description": "built-in profile names (os/linux, lang/go, ...) or paths relative to this file"},
            "default": {"enum": DEFAULTS},
            "settings": {"type": "object", "additionalProperties": false, "properties": {
                "ask_mode": {"enum": ASK_MODES},
                "audit_log": str_,
                "timeout": {"type": "integer", "minimum": 1},
                "on_timeout": on_timeout,
                "enforce": {"type": "object", "additionalProperties": false, "properties": {
                    "writable": {"type": "array", "items": {"type": "string"},
                                 "description": "under `aileron launch` (Linux, Landlock): places the agent's tree may write besides the project, the temporary directories, the agent's own state and the package caches; everything else is read-only to it (~/ is the home directory)"},
                    "readable": {"type": "array", "items": {"type": "string"},
                                 "description": "under `aileron launch` (Linux): credential stores the box masks that the agent's tree may read after all (~/.npmrc; a directory gives back what it holds)"},
                    "sockets": {"type": "array", "items": {"type": "string"},
                                 "description": "under `aileron launch` (Linux): Unix sockets of the host (listening when the session starts) that the agent's tree may connect to after all (/var/run/docker.sock); every other is closed to it"}
                }},
                "proxy": {"type": "object", "additionalProperties": false, "properties": {
                    "inspect": {"anyOf": [{"const": "all"}, {"type": "array", "items": {"type": "string"}}],
                                "description": "hosts (globs such as *.example.com, or `all`) whose HTTPS the egress proxy opens with its local CA, to decide each request by method, URL and headers; other tunnels are decided by host and port"}
                }},
                "gateways": {"type": "array",
                    "description": "gateways `aileron launch` starts with the session; the agent's tree is pointed at them (PGHOST, PGPORT, DATABASE_URL)",
                    "items": {"type": "object", "additionalProperties": false,
                        "minProperties": 1, "maxProperties": 1,
                        "properties": {
                            "postgres": {"type": "object", "additionalProperties": false,
                                "required": ["upstream"],
                                "properties": {
                                    "upstream": {"type": "string", "pattern": "^postgres(ql)?://[^/?]",
                                                 "description": "the real server, postgres://HOST:PORT"},
                                    "listen": {"type": "string",
                                               "description": "IP:PORT the gateway listens on (default 127.0.0.1:0, a free port)"}
                                }}
                        }}}
            }},
            "env": {"type": "object", "additionalProperties": false,
                     "properties": {"scrub": str_list, "passthrough": str_list}},
            "judges": {"type": "object", "description": "LLM judges by name, for `judge` rules",
                "additionalProperties": {"type": "object", "additionalProperties": false,
                    "required": ["provider", "model"],
                    "properties": {
                        "provider": {"enum": crate::document::JUDGE_PROVIDERS},
                        "base_url": {"type": "string", "pattern": "^https?://"},
                        "model": str_,
                        "api_key_env": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
                                        "description": "the environment variable that holds the API key (never the key)"},
                        "timeout": {"type": "integer", "minimum": 1, "maximum": crate::document::JUDGE_MAX_TIMEOUT},
                        "max_tokens": {"type": "integer", "minimum": 1},
                        "temperature": {"type": "number", "minimum": 0, "maximum": 2}
                    }}},
            "allow": {"type": "array", "items": plain_rule},
            "deny": {"type": "array", "items": plain_rule},
            "ask": {"type": "array", "items": ask_rule},
            "judge": {"type": "array", "items": judge_rule},
            "tests": {"type": "array", "items": {
                "type": "object", "additionalProperties": false, "required": ["expect"],
                "properties": {
                    "name": str_, "command": str_, "action": {"type": "object", "required": ["type"]},
                    "cwd": str_, "expect": {"enum": ["allow", "deny", "ask", "judge"]}, "rule": str_
                },
                "oneOf": [{"required": ["command"]}, {"required": ["action"]}]
            }}
        },
        "$defs": {"matcher": matcher, "condition": condition, "operators": operators}
    })
}
