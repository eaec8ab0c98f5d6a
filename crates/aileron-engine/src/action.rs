//! The Action record of SPEC 3: the one shape every adapter lowers an agent's
//! action into, and the field paths the pattern dialect reads from it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use aileron_shell::Sensitivity;

/// One thing an agent wants to do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    #[serde(default)]
    pub id: String,
    /// RFC 3339; the `time` operator and `rate` windows read it.
    #[serde(default)]
    pub timestamp: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub verb: String,
    /// Filled in by [`Action::normalize`] when an adapter leaves it out.
    #[serde(default, with = "sensitivity_serde")]
    pub sensitivity: Option<Sensitivity>,
    #[serde(default)]
    pub primary: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub facets: Map<String, Value>,
    #[serde(default)]
    pub session: Session,
}

/// Who is acting, and where.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integration: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// Where a field path points. Resolved once, when a rule is compiled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FieldPath {
    Id,
    Timestamp,
    Type,
    Summary,
    Description,
    Verb,
    Sensitivity,
    Primary,
    Tags,
    Session(SessionField),
    /// `http.method` → `["http", "method"]` under `facets`.
    Facet(Vec<String>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SessionField {
    Id,
    Agent,
    Plugin,
    Profile,
    Integration,
    Cwd,
}

/// The top-level field names a path may start with.
pub const TOP_LEVEL_FIELDS: &[&str] = &[
    "id",
    "timestamp",
    "type",
    "summary",
    "description",
    "verb",
    "sensitivity",
    "primary",
    "tags",
];

/// Facets whose fields are known, so that a misspelt field is a load error.
/// Facets not listed here (plugin facets) accept any field.
pub const KNOWN_FACETS: &[(&str, &[&str])] = &[
    (
        "shell",
        &[
            "command",
            "binary",
            "args",
            "argv",
            "working_dir",
            "line",
            "env_changes",
            "writes",
            "reads",
            "exe",
        ],
    ),
    ("fs", &["path", "op"]),
    (
        "http",
        &[
            "method", "url", "scheme", "host", "port", "path", "query", "headers",
        ],
    ),
    ("mcp", &["server", "tool", "arguments"]),
    ("tool", &["name", "input"]),
    ("sql", &["verb", "tables", "text"]),
    ("llm", &["model", "provider", "cost", "tokens"]),
    ("agent", &["tool", "input", "count"]),
];

/// The action types Aileron's own adapters emit, each with the facets its
/// actions can carry: its own, and `tool` (the agent hooks keep the
/// agent's tool on every action they lower). `None`: adapters may add
/// facets of their own (the egress proxy lowers git, Kubernetes and LLM
/// requests to `http.request` with their own facets). Other types
/// (a plugin's) may carry anything.
pub const ACTION_TYPES: &[(&str, Option<&[&str]>)] = &[
    ("shell.exec", Some(&["shell", "tool"])),
    ("fs.read", Some(&["fs", "tool"])),
    ("fs.write", Some(&["fs", "tool"])),
    ("fs.list", Some(&["fs", "tool"])),
    ("http.request", None),
    ("mcp.call", Some(&["mcp", "tool"])),
    ("tool.call", Some(&["tool"])),
    ("sql.query", Some(&["sql", "tool"])),
    ("agent.doom_loop", Some(&["agent", "tool"])),
];

/// Facet fields that hold objects, so deeper paths (`mcp.arguments.repo`) are fine.
const OBJECT_FIELDS: &[&str] = &["arguments", "input", "headers"];

impl FieldPath {
    /// Resolves a path as written in a rule. The error says what was expected.
    pub fn parse(path: &str) -> Result<FieldPath, String> {
        let (path, facet_only) = match path.strip_prefix("facets.") {
            Some(rest) => (rest, true),
            None => (path, false),
        };
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(format!("`{path}` is not a field path"));
        }
        if facet_only && !path.contains('.') {
            return Err(format!(
                "`facets.{path}` names a whole facet; name one of its fields, e.g. `facets.{path}.name`"
            ));
        }
        Ok(match if facet_only { "" } else { path } {
            "id" => FieldPath::Id,
            "timestamp" => FieldPath::Timestamp,
            "type" => FieldPath::Type,
            "summary" => FieldPath::Summary,
            "description" => FieldPath::Description,
            "verb" => FieldPath::Verb,
            "sensitivity" => FieldPath::Sensitivity,
            "primary" => FieldPath::Primary,
            "tags" => FieldPath::Tags,
            _ => {
                let segments: Vec<String> = path.split('.').map(str::to_owned).collect();
                if segments[0] == "session" && !facet_only {
                    let field = match segments.get(1).map(String::as_str) {
                        Some("id") if segments.len() == 2 => SessionField::Id,
                        Some("agent") if segments.len() == 2 => SessionField::Agent,
                        Some("plugin") if segments.len() == 2 => SessionField::Plugin,
                        Some("profile") if segments.len() == 2 => SessionField::Profile,
                        Some("integration") if segments.len() == 2 => SessionField::Integration,
                        Some("cwd") if segments.len() == 2 => SessionField::Cwd,
                        _ => {
                            return Err(format!(
                                "unknown session field `{path}`; expected one of: session.id, session.agent, session.plugin, session.profile, session.integration, session.cwd"
                            ));
                        }
                    };
                    return Ok(FieldPath::Session(field));
                }
                if segments.len() == 1 {
                    return Err(format!(
                        "unknown field `{path}`; expected a top-level field ({}) or a facet path such as `http.method`",
                        TOP_LEVEL_FIELDS.join(", ")
                    ));
                }
                if let Some((facet, fields)) = KNOWN_FACETS.iter().find(|(f, _)| *f == segments[0])
                {
                    let field = segments[1].as_str();
                    if !fields.contains(&field) {
                        return Err(format!(
                            "unknown field `{field}` of facet `{facet}`; expected one of: {}",
                            fields.join(", ")
                        ));
                    }
                    if segments.len() > 2 && !OBJECT_FIELDS.contains(&field) {
                        return Err(format!("`{facet}.{field}` has no fields below it"));
                    }
                }
                FieldPath::Facet(segments)
            }
        })
    }
}

/// A value read from an action.
#[derive(Clone, Copy, Debug)]
pub enum Lookup<'a> {
    Str(&'a str),
    Strs(&'a [String]),
    Json(&'a Value),
}

impl Action {
    /// Reads the field at `path`; `None` when it is absent or null.
    pub fn lookup<'a>(&'a self, path: &FieldPath) -> Option<Lookup<'a>> {
        // Empty strings are how absent optional fields are stored.
        let s = |v: &'a str| (!v.is_empty()).then_some(Lookup::Str(v));
        match path {
            FieldPath::Id => s(&self.id),
            FieldPath::Timestamp => s(&self.timestamp),
            FieldPath::Type => s(&self.kind),
            FieldPath::Summary => s(&self.summary),
            FieldPath::Description => self.description.as_deref().map(Lookup::Str),
            FieldPath::Verb => s(&self.verb),
            FieldPath::Sensitivity => self.sensitivity.map(|v| Lookup::Str(v.as_str())),
            FieldPath::Primary => s(&self.primary),
            FieldPath::Tags => Some(Lookup::Strs(&self.tags)),
            FieldPath::Session(field) => {
                let v = match field {
                    SessionField::Id => &self.session.id,
                    SessionField::Agent => &self.session.agent,
                    SessionField::Plugin => &self.session.plugin,
                    SessionField::Profile => &self.session.profile,
                    SessionField::Integration => &self.session.integration,
                    SessionField::Cwd => &self.session.cwd,
                };
                v.as_deref().map(Lookup::Str)
            }
            FieldPath::Facet(segments) => {
                let mut value = self.facets.get(&segments[0])?;
                for seg in &segments[1..] {
                    value = value.as_object()?.get(seg)?;
                }
                (!value.is_null()).then_some(Lookup::Json(value))
            }
        }
    }

    /// A facet field as a string, if it is one.
    pub fn facet_str(&self, facet: &str, field: &str) -> Option<&str> {
        self.facets.get(facet)?.get(field)?.as_str()
    }

    /// Fills what adapters may leave out: `primary` from the type, the parts
    /// of an HTTP URL, an absolute normalized `fs.path`, `summary`, `verb`
    /// and a sensitivity guessed from the type.
    pub fn normalize(&mut self) {
        if self.primary.is_empty() {
            self.primary = self.kind.split('.').next().unwrap_or_default().to_owned();
        }
        if let Some(Value::Object(http)) = self.facets.get_mut("http") {
            if let Some(url) = http.get("url").and_then(Value::as_str).map(str::to_owned) {
                let parts = UrlParts::parse(&url);
                let mut fill = |k: &str, v: Value| {
                    http.entry(k.to_owned()).or_insert(v);
                };
                fill("scheme", Value::from(parts.scheme));
                fill("host", Value::from(parts.host));
                if let Some(port) = parts.port {
                    fill("port", Value::from(port));
                }
                fill("path", Value::from(parts.path));
            }
            if let Some(Value::String(m)) = http.get_mut("method") {
                *m = m.to_ascii_uppercase();
            }
        }
        if let Some(Value::Object(fs)) = self.facets.get_mut("fs")
            && let Some(Value::String(p)) = fs.get_mut("path")
        {
            let cwd = self.session.cwd.as_deref().unwrap_or("/");
            *p = crate::paths::absolute(p, cwd, None);
        }
        if self.verb.is_empty() {
            self.verb = match self.kind.as_str() {
                "http.request" => self
                    .facet_str("http", "method")
                    .unwrap_or_default()
                    .to_owned(),
                "sql.query" => self.facet_str("sql", "verb").unwrap_or_default().to_owned(),
                "mcp.call" => self.facet_str("mcp", "tool").unwrap_or_default().to_owned(),
                "tool.call" => self
                    .facet_str("tool", "name")
                    .unwrap_or_default()
                    .to_owned(),
                k if k.starts_with("fs.") => k[3..].to_owned(),
                _ => String::new(),
            };
        }
        if self.summary.is_empty() {
            self.summary = self.default_summary();
        }
        if self.sensitivity.is_none() {
            self.sensitivity = Some(self.guess_sensitivity());
        }
    }

    fn default_summary(&self) -> String {
        let f = |facet, field| self.facet_str(facet, field).unwrap_or_default();
        match self.kind.as_str() {
            "shell.exec" => f("shell", "command").to_owned(),
            "http.request" => format!("{} {}", f("http", "method"), f("http", "url")),
            k if k.starts_with("fs.") => format!("{} {}", &k[3..], f("fs", "path")),
            "mcp.call" => format!("{}/{}", f("mcp", "server"), f("mcp", "tool")),
            "tool.call" => f("tool", "name").to_owned(),
            "sql.query" => f("sql", "text").to_owned(),
            k => k.to_owned(),
        }
    }

    /// Without a classifier's word, only reads that cannot change anything are `read`.
    fn guess_sensitivity(&self) -> Sensitivity {
        match self.kind.as_str() {
            "fs.read" | "fs.list" => Sensitivity::Read,
            "fs.write" => Sensitivity::Write,
            "http.request" => match self.verb.as_str() {
                "GET" | "HEAD" | "OPTIONS" => Sensitivity::Read,
                _ => Sensitivity::Mutate,
            },
            "sql.query" => match self.verb.to_ascii_uppercase().as_str() {
                "SELECT" | "SHOW" | "EXPLAIN" | "DESCRIBE" => Sensitivity::Read,
                "DROP" | "TRUNCATE" => Sensitivity::Destructive,
                _ => Sensitivity::Mutate,
            },
            _ => Sensitivity::Mutate,
        }
    }
}

/// The parts of a URL the `http` facet exposes. Lenient: a string that is
/// not a URL yields empty parts rather than an error, and rules that look
/// for a host then simply do not match.
struct UrlParts {
    scheme: String,
    host: String,
    port: Option<u16>,
    path: String,
}

impl UrlParts {
    fn parse(url: &str) -> UrlParts {
        let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => {
                match p.parse::<u16>() {
                    Ok(port) => (h, Some(port)),
                    Err(_) => (authority, None),
                }
            }
            _ => (authority, None),
        };
        let port = port.or(match scheme.to_ascii_lowercase().as_str() {
            "http" | "ws" => Some(80),
            "https" | "wss" => Some(443),
            _ => None,
        });
        let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
        let path = if tail[..path_end].is_empty() {
            "/"
        } else {
            &tail[..path_end]
        };
        UrlParts {
            scheme: scheme.to_ascii_lowercase(),
            host: host.trim_matches(['[', ']']).to_ascii_lowercase(),
            port,
            path: path.to_owned(),
        }
    }
}

mod sensitivity_serde {
    use super::Sensitivity;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Sensitivity>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_str(v.as_str()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Sensitivity>, D::Error> {
        let Some(s) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        super::parse_sensitivity(&s).map(Some).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown sensitivity `{s}`; expected one of: read, write, mutate, destructive"
            ))
        })
    }
}

pub fn parse_sensitivity(s: &str) -> Option<Sensitivity> {
    Some(match s {
        "read" => Sensitivity::Read,
        "write" => Sensitivity::Write,
        "mutate" => Sensitivity::Mutate,
        "destructive" => Sensitivity::Destructive,
        _ => return None,
    })
}

/// Formats seconds since the Unix epoch as an RFC 3339 timestamp (UTC).
pub fn timestamp_from_unix(secs: i64) -> Option<String> {
    jiff::Timestamp::from_second(secs)
        .ok()
        .map(|t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_fills_http_parts_from_the_url() {
        let mut a: Action = serde_json::from_value(serde_json::json!({
            "type": "http.request",
            "facets": {"http": {"method": "get", "url": "https://User@API.github.com:8443/repos/x?y=1"}}
        }))
        .unwrap();
        a.normalize();
        let http = &a.facets["http"];
        assert_eq!(http["host"], "api.github.com");
        assert_eq!(http["port"], 8443);
        assert_eq!(http["path"], "/repos/x");
        assert_eq!(http["method"], "GET");
        assert_eq!(a.primary, "http");
        assert_eq!(a.verb, "GET");
        assert_eq!(a.sensitivity, Some(Sensitivity::Read));
    }

    #[test]
    fn field_paths_accept_the_facets_prefix_and_reject_typos() {
        assert_eq!(
            FieldPath::parse("facets.http.method").unwrap(),
            FieldPath::parse("http.method").unwrap()
        );
        assert!(
            FieldPath::parse("http.methd")
                .unwrap_err()
                .contains("method")
        );
        assert!(FieldPath::parse("slack.channel").is_ok());
        assert!(FieldPath::parse("mcp.arguments.repo").is_ok());
        assert!(FieldPath::parse("bogus").is_err());
    }

    #[test]
    fn unknown_action_fields_are_rejected() {
        let r: Result<Action, _> =
            serde_json::from_value(serde_json::json!({"type": "x", "typo": 1}));
        assert!(r.is_err());
    }
}
