//! The Action record of SPEC 3: the one shape every adapter lowers an agent's
//! action into, and the field paths the pattern dialect reads from it.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use aileron_shell::Sensitivity;

/// One thing an agent wants to do: what every adapter lowers an agent's
/// action into, so that one policy decides them all alike.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// The request's id: audit lines and the approval queue name it.
    #[serde(default)]
    pub id: String,
    /// When the agent acted; the `time` operator and `rate` windows read it.
    /// Parsed once, when the action is read or built; `None` until an
    /// adapter fills it in (written as `""`, as before it was typed).
    #[serde(default, with = "timestamp_serde")]
    pub timestamp: Option<jiff::Timestamp>,
    /// What kind of thing is done: the index finds rules by it first.
    #[serde(rename = "type")]
    pub kind: ActionType,
    /// One line for humans (prompts, the audit log).
    #[serde(default)]
    pub summary: String,
    /// A longer account, when the adapter has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The operation within the type (a program, an HTTP method, a tool).
    #[serde(default)]
    pub verb: String,
    /// Filled in by [`Action::normalize`] when an adapter leaves it out.
    #[serde(default, with = "sensitivity_serde")]
    pub sensitivity: Option<Sensitivity>,
    /// The type's namespace (`shell`, `fs`): rules may match on it alone.
    #[serde(default)]
    pub primary: String,
    /// Labels the analysis attaches (`opaque`, `unparsable`, `network`).
    #[serde(default)]
    pub tags: Vec<String>,
    /// The type's details, by facet (`shell.command`, `http.url`).
    #[serde(default)]
    pub facets: Map<String, Value>,
    /// Who is acting, and where: rule scopes read it.
    #[serde(default)]
    pub session: Session,
}

/// The `type` of an [`Action`]: the ones Aileron's adapters emit, named,
/// and any other (a plugin's) as written. Written as its dotted name
/// (`shell.exec`), exactly as when it was a string.
///
/// It compares with strings (`action.kind == "shell.exec"`) and converts
/// from them, so adapters can keep writing names. It does not deref to
/// `str`: `Deref` is for smart pointers, and a type that silently borrows
/// every `str` method hides which are meant (`kind.len()`); call
/// [`ActionType::as_str`] for text. A known name always converts to its
/// variant, and comparison goes by name, so `Other("shell.exec")` built by
/// hand still equals `ShellExec`.
#[derive(Clone, Debug)]
pub enum ActionType {
    /// `shell.exec`: one simple command of a shell line.
    ShellExec,
    /// `fs.read`: a file tool's read (or search, `fs.op: search`).
    FsRead,
    /// `fs.write`: a file tool's write or edit.
    FsWrite,
    /// `fs.list`: a directory listing.
    FsList,
    /// `http.request`: a fetch, or a request through the egress proxy.
    HttpRequest,
    /// `mcp.call`: a tool of an MCP server.
    McpCall,
    /// `tool.call`: an agent's tool Aileron does not lower further.
    ToolCall,
    /// `sql.query`: a database query.
    SqlQuery,
    /// `agent.doom_loop`: the same action repeated until it is stopped.
    AgentDoomLoop,
    /// `session.start`: the audit note `aileron launch` writes about itself.
    SessionStart,
    /// Any other type, as written (a plugin's; empty for an action not
    /// given one). Never the name of a variant above.
    Other(String),
}

impl ActionType {
    /// Every named type, for catalogs and the linter.
    pub const KNOWN: &[ActionType] = &[
        ActionType::ShellExec,
        ActionType::FsRead,
        ActionType::FsWrite,
        ActionType::FsList,
        ActionType::HttpRequest,
        ActionType::McpCall,
        ActionType::ToolCall,
        ActionType::SqlQuery,
        ActionType::AgentDoomLoop,
        ActionType::SessionStart,
    ];

    /// The dotted name, as rules and the audit log write it.
    pub fn as_str(&self) -> &str {
        match self {
            ActionType::ShellExec => "shell.exec",
            ActionType::FsRead => "fs.read",
            ActionType::FsWrite => "fs.write",
            ActionType::FsList => "fs.list",
            ActionType::HttpRequest => "http.request",
            ActionType::McpCall => "mcp.call",
            ActionType::ToolCall => "tool.call",
            ActionType::SqlQuery => "sql.query",
            ActionType::AgentDoomLoop => "agent.doom_loop",
            ActionType::SessionStart => "session.start",
            ActionType::Other(s) => s,
        }
    }

    /// An `fs.*` type: a file tool's, or a plugin's (`fs.delete`).
    pub fn is_fs(&self) -> bool {
        match self {
            ActionType::FsRead | ActionType::FsWrite | ActionType::FsList => true,
            ActionType::Other(s) => s.starts_with("fs."),
            _ => false,
        }
    }

    /// The named type called `name`, if there is one.
    fn known(name: &str) -> Option<ActionType> {
        ActionType::KNOWN
            .iter()
            .find(|t| t.as_str() == name)
            .cloned()
    }

    /// The facets actions of this type can carry: its own, and `tool`
    /// (the agent hooks keep the agent's tool on every action they lower).
    /// `None`: any (adapters add facets of their own to `http.request`: the
    /// egress proxy lowers git, Kubernetes and LLM requests to it), as for
    /// a plugin's type.
    pub fn facets(&self) -> Option<&'static [&'static str]> {
        match self {
            ActionType::ShellExec => Some(&["shell", "tool"]),
            ActionType::FsRead | ActionType::FsWrite | ActionType::FsList => Some(&["fs", "tool"]),
            ActionType::McpCall => Some(&["mcp", "tool"]),
            ActionType::ToolCall => Some(&["tool"]),
            ActionType::SqlQuery => Some(&["sql", "tool"]),
            ActionType::AgentDoomLoop => Some(&["agent", "tool"]),
            ActionType::SessionStart => Some(&[]),
            ActionType::HttpRequest | ActionType::Other(_) => None,
        }
    }
}

/// No type: what an action read without one held before it was typed.
impl Default for ActionType {
    fn default() -> Self {
        ActionType::Other(String::new())
    }
}

impl From<&str> for ActionType {
    fn from(name: &str) -> Self {
        ActionType::known(name).unwrap_or_else(|| ActionType::Other(name.to_owned()))
    }
}

impl From<String> for ActionType {
    fn from(name: String) -> Self {
        ActionType::known(&name).unwrap_or(ActionType::Other(name))
    }
}

impl From<ActionType> for String {
    fn from(t: ActionType) -> Self {
        match t {
            ActionType::Other(s) => s,
            t => t.as_str().to_owned(),
        }
    }
}

impl AsRef<str> for ActionType {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for ActionType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for ActionType {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ActionType::Other(_), _) | (_, ActionType::Other(_)) => {
                self.as_str() == other.as_str()
            }
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

impl Eq for ActionType {}

/// By name, consistent with `Eq`.
impl std::hash::Hash for ActionType {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq<str> for ActionType {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ActionType {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for ActionType {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<ActionType> for str {
    fn eq(&self, other: &ActionType) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ActionType> for &str {
    fn eq(&self, other: &ActionType) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<ActionType> for String {
    fn eq(&self, other: &ActionType) -> bool {
        self == other.as_str()
    }
}

impl Serialize for ActionType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A known name allocates nothing.
impl<'de> Deserialize<'de> for ActionType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = ActionType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an action type such as `shell.exec`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ActionType, E> {
                Ok(ActionType::from(v))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<ActionType, E> {
                Ok(ActionType::from(v))
            }
        }
        d.deserialize_str(Name)
    }
}

/// Who is acting, and where: rule scopes and `session.*` conditions read
/// it, and the session's approvals and history are kept under its id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// Groups an agent's actions: approvals, `rate` history, the doom loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The agent (`claude-code`, `codex`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The plugin that raised the action (`scope.plugin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// The profile in force (`scope.profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The integration that sent it (`scope.integration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integration: Option<String>,
    /// The agent's working directory: relative paths are relative to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// Where a field path points. Resolved once, when a rule is compiled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FieldPath {
    /// `id`.
    Id,
    /// `timestamp`.
    Timestamp,
    /// `type`.
    Type,
    /// `summary`.
    Summary,
    /// `description`.
    Description,
    /// `verb`.
    Verb,
    /// `sensitivity`.
    Sensitivity,
    /// `primary`.
    Primary,
    /// `tags`.
    Tags,
    /// `session.*`.
    Session(SessionField),
    /// `http.method` → `["http", "method"]` under `facets`.
    Facet(Vec<String>),
}

/// A field of [`Session`] a path names (`session.agent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SessionField {
    /// `session.id`.
    Id,
    /// `session.agent`.
    Agent,
    /// `session.plugin`.
    Plugin,
    /// `session.profile`.
    Profile,
    /// `session.integration`.
    Integration,
    /// `session.cwd`.
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
            "method",
            "url",
            "scheme",
            "host",
            "port",
            "path",
            "query",
            "headers",
            "body_size",
            "tunnel",
        ],
    ),
    // `resource` (a `resources/read` URI) and `prompt` (a `prompts/get`
    // name) come from the MCP gateway, with a tool's `annotations` from
    // its server's `tools/list`.
    (
        "mcp",
        &[
            "server",
            "tool",
            "arguments",
            "annotations",
            "resource",
            "prompt",
        ],
    ),
    ("tool", &["name", "input"]),
    // `database` and `user` come from the database gateway's connection.
    ("sql", &["verb", "tables", "text", "database", "user"]),
    (
        "llm",
        &[
            "model",
            "provider",
            "cost",
            "tokens",
            "max_tokens",
            "stream",
            "input_tokens",
            "output_tokens",
        ],
    ),
    ("agent", &["tool", "input", "count"]),
    // Added by the egress proxy to `http.request` actions.
    ("git", &["remote", "operation", "service"]),
    (
        "k8s",
        &[
            "verb",
            "namespace",
            "resource",
            "name",
            "subresource",
            "group",
            "version",
        ],
    ),
    ("ws", &["url"]),
];

/// Facet fields that hold objects, so deeper paths (`mcp.arguments.repo`) are fine.
const OBJECT_FIELDS: &[&str] = &["arguments", "input", "headers", "annotations"];

impl FieldPath {
    /// Resolves a path as written in a rule. The error says what was expected.
    pub fn parse(path: &str) -> Result<FieldPath, Error> {
        let (path, facet_only) = match path.strip_prefix("facets.") {
            Some(rest) => (rest, true),
            None => (path, false),
        };
        if path.is_empty() || path.split('.').any(str::is_empty) {
            return Err(Error::NotAFieldPath(path.to_owned()));
        }
        if facet_only && !path.contains('.') {
            return Err(Error::WholeFacet(path.to_owned()));
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
                        _ => return Err(Error::UnknownSessionField(path.to_owned())),
                    };
                    return Ok(FieldPath::Session(field));
                }
                if segments.len() == 1 {
                    return Err(Error::UnknownField(path.to_owned()));
                }
                if let Some((facet, fields)) = KNOWN_FACETS.iter().find(|(f, _)| *f == segments[0])
                {
                    let field = segments[1].as_str();
                    if !fields.contains(&field) {
                        return Err(Error::UnknownFacetField {
                            facet,
                            field: field.to_owned(),
                            expected: fields,
                        });
                    }
                    if segments.len() > 2 && !OBJECT_FIELDS.contains(&field) {
                        return Err(Error::NoFieldsBelow {
                            facet,
                            field: field.to_owned(),
                        });
                    }
                }
                FieldPath::Facet(segments)
            }
        })
    }
}

/// A value read from an action, borrowed: matching a rule copies nothing.
#[derive(Clone, Copy, Debug)]
pub enum Lookup<'a> {
    /// A top-level or session string.
    Str(&'a str),
    /// `tags`.
    Strs(&'a [String]),
    /// A facet's value.
    Json(&'a Value),
    /// `timestamp`, already parsed: the `time` operator reads it as is,
    /// others as its RFC 3339 text.
    Time(jiff::Timestamp),
}

impl Action {
    /// Reads the field at `path`; `None` when it is absent or null.
    pub fn lookup<'a>(&'a self, path: &FieldPath) -> Option<Lookup<'a>> {
        // Empty strings are how absent optional fields are stored.
        let s = |v: &'a str| (!v.is_empty()).then_some(Lookup::Str(v));
        match path {
            FieldPath::Id => s(&self.id),
            FieldPath::Timestamp => self.timestamp.map(Lookup::Time),
            FieldPath::Type => s(self.kind.as_str()),
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
            let kind = self.kind.as_str();
            self.primary = kind.split('.').next().unwrap_or_default().to_owned();
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

/// The sensitivity a rule or an adapter names, by its word (`read`).
pub fn parse_sensitivity(s: &str) -> Option<Sensitivity> {
    Some(match s {
        "read" => Sensitivity::Read,
        "write" => Sensitivity::Write,
        "mutate" => Sensitivity::Mutate,
        "destructive" => Sensitivity::Destructive,
        _ => return None,
    })
}

/// Formats seconds since the Unix epoch as an RFC 3339 timestamp (UTC),
/// as an [`Action`]'s `timestamp` is written: `2026-01-05T12:00:00Z`.
pub fn timestamp_from_unix(secs: i64) -> Option<String> {
    jiff::Timestamp::from_second(secs)
        .ok()
        .map(|t| t.to_string())
}

/// `timestamp`: RFC 3339 text on the wire, `""` for none, as when it was a
/// string; text that is not a time is refused when the action is read,
/// rather than never matching a `time` or `rate` rule.
mod timestamp_serde {
    use serde::{Deserializer, Serializer, de};
    use std::fmt;

    pub fn serialize<S: Serializer>(v: &Option<jiff::Timestamp>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(t) => s.collect_str(t),
            None => s.serialize_str(""),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<jiff::Timestamp>, D::Error> {
        struct Text;
        impl de::Visitor<'_> for Text {
            type Value = Option<jiff::Timestamp>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 timestamp such as 2026-01-05T12:00:00Z")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                if v.is_empty() {
                    return Ok(None);
                }
                v.parse().map(Some).map_err(|e| {
                    E::custom(format!(
                        "invalid timestamp `{v}`: expected RFC 3339, such as 2026-01-05T12:00:00Z ({e})"
                    ))
                })
            }
        }
        d.deserialize_str(Text)
    }
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
                .to_string()
                .contains("method")
        );
        assert!(FieldPath::parse("slack.channel").is_ok());
        assert!(FieldPath::parse("mcp.arguments.repo").is_ok());
        assert!(FieldPath::parse("bogus").is_err());
    }

    #[test]
    fn action_types_are_written_as_their_names_and_compare_with_strings() {
        for t in ActionType::KNOWN {
            let json = serde_json::to_string(t).unwrap();
            assert_eq!(json, format!("\"{t}\""));
            let back: ActionType = serde_json::from_str(&json).unwrap();
            assert!(!matches!(back, ActionType::Other(_)), "{t} is named");
            assert_eq!(ActionType::from(t.as_str()), *t);
        }
        let plugin = ActionType::from("slack.post");
        assert_eq!(plugin, ActionType::Other("slack.post".into()));
        assert_eq!(plugin, "slack.post");
        assert_eq!("slack.post", plugin);
        assert_eq!(String::from(plugin), "slack.post");
        // Built by hand, a known name still equals its variant, and hashes alike.
        let by_hand = ActionType::Other("shell.exec".into());
        assert_eq!(by_hand, ActionType::ShellExec);
        let set: std::collections::HashSet<ActionType> = [by_hand].into_iter().collect();
        assert!(set.contains(&ActionType::ShellExec));
        assert_eq!(ActionType::default(), "");
    }

    #[test]
    fn timestamps_are_parsed_once_and_written_as_before() {
        let text = r#"{"id":"a1","timestamp":"2026-01-05T12:00:00Z","type":"shell.exec","summary":"","verb":"","sensitivity":null,"primary":"","tags":[],"facets":{},"session":{}}"#;
        let a: Action = serde_json::from_str(text).unwrap();
        assert_eq!(
            a.timestamp,
            Some(jiff::Timestamp::from_second(1_767_614_400).unwrap())
        );
        assert_eq!(serde_json::to_string(&a).unwrap(), text, "byte for byte");
        assert_eq!(
            timestamp_from_unix(1_767_614_400).as_deref(),
            Some("2026-01-05T12:00:00Z"),
            "the adapters' form is the written form"
        );
        // Not given, or empty: none, written as the empty string it was.
        let none: Action = serde_json::from_str(r#"{"type":"x","timestamp":""}"#).unwrap();
        assert_eq!(none.timestamp, None);
        assert!(
            serde_json::to_string(&none)
                .unwrap()
                .contains(r#""timestamp":"""#)
        );
        // An offset is the same instant.
        let paris: Action =
            serde_json::from_str(r#"{"type":"x","timestamp":"2026-01-05T13:00:00+01:00"}"#)
                .unwrap();
        assert_eq!(paris.timestamp, a.timestamp);
        // Text that is not a time is refused, saying what was expected.
        let bad = serde_json::from_str::<Action>(r#"{"type":"x","timestamp":"yesterday"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            bad.starts_with(
                "invalid timestamp `yesterday`: expected RFC 3339, such as 2026-01-05T12:00:00Z"
            ),
            "{bad}"
        );
    }

    #[test]
    fn field_path_errors_say_what_was_expected() {
        let msg = |p: &str| FieldPath::parse(p).unwrap_err().to_string();
        assert_eq!(msg("http..method"), "`http..method` is not a field path");
        assert_eq!(
            msg("facets.http"),
            "`facets.http` names a whole facet; name one of its fields, e.g. `facets.http.name`"
        );
        assert_eq!(
            msg("session.user"),
            "unknown session field `session.user`; expected one of: session.id, session.agent, session.plugin, session.profile, session.integration, session.cwd"
        );
        assert_eq!(
            msg("bogus"),
            "unknown field `bogus`; expected a top-level field (id, timestamp, type, summary, description, verb, sensitivity, primary, tags) or a facet path such as `http.method`"
        );
        assert_eq!(
            msg("fs.paht"),
            "unknown field `paht` of facet `fs`; expected one of: path, op"
        );
        assert_eq!(msg("http.method.x"), "`http.method` has no fields below it");
        assert!(matches!(
            FieldPath::parse("fs.paht"),
            Err(Error::UnknownFacetField { facet: "fs", .. })
        ));
    }

    #[test]
    fn unknown_action_fields_are_rejected() {
        let r: Result<Action, _> =
            serde_json::from_value(serde_json::json!({"type": "x", "typo": 1}));
        assert!(r.is_err());
    }
}
