//! The agent's MCP servers, put behind the MCP gateway by `aileron install`
//! and given back by `aileron uninstall` (docs/mcp.md, "Wrapping the
//! agents' MCP servers").
//!
//! Each server the agent starts (`command` and `args`) is started through
//! `aileron mcp --name NAME -- COMMAND ARGS`; each remote one it reaches
//! over Streamable HTTP becomes `aileron mcp --name NAME --url URL
//! --header ...`, served to the agent on stdio. What the agent keeps where,
//! and how each writes an entry, is the data of [`PLACES`] and the
//! [`Dialect`]s.
//!
//! Uninstall gives a file back byte for byte: its bytes before the first
//! wrap are kept under `$AILERON_DATA/mcp/`, and restored while the file is
//! still what Aileron wrote. A file changed since gets back only the
//! entries Aileron wrapped, one by one, and a note says so.

use super::{PORTABLE, Record, Report, Target, io_error, on_path, read_settings, sha256};
use super::{repository_root, write_atomic};
use crate::jsonedit::{self, Node};
use crate::{Agent, Error};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// How a configuration file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Syntax {
    /// JSON, comments and trailing commas allowed (edited as text, [`jsonedit`]).
    Json,
    /// TOML (edited with `toml_edit`, which keeps the rest of the file).
    Toml,
}

/// What a remote server's URL speaks, when its `type` does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    /// Streamable HTTP, which the gateway serves.
    Http,
    /// The older HTTP+SSE transport, which it does not.
    Sse,
    /// The agent tries Streamable HTTP, then SSE: an endpoint named
    /// `.../sse` is taken for SSE, any other for Streamable HTTP.
    Either,
}

/// How an agent writes one MCP server.
struct Dialect {
    syntax: Syntax,
    /// The member beside `command` that holds its arguments; `None`:
    /// `command` is a list, the program and its arguments (opencode).
    args: Option<&'static str>,
    /// The `type` of a server the agent starts, written in a wrapped remote
    /// entry that had a `type`.
    stdio_type: Option<&'static str>,
    /// The members that hold a remote server's URL, and what each speaks.
    urls: &'static [(&'static str, Transport)],
    /// The member that holds a remote server's headers.
    headers: &'static str,
    /// Members only a remote entry has: a wrapped one goes without them.
    remote_only: &'static [&'static str],
    /// Members that give a remote server credentials the gateway cannot
    /// send (OAuth, headers from the environment or a command): such a
    /// server is left as it is.
    foreign_auth: &'static [&'static str],
    /// The member naming the variables of its own environment the agent
    /// passes a server, where it passes only those (Codex): the gateway's
    /// are added, so that under `aileron launch` it asks the session.
    passed_env: Option<&'static str>,
}

/// What the gateway reads of its environment: the launch session's socket,
/// the data directory, the server.
const GATEWAY_ENV: &[&str] = &[
    "AILERON_SOCKET",
    "AILERON_SESSION",
    "AILERON_DATA",
    "AILERON_SERVER",
    "AILERON_SERVER_CA",
    "AILERON_TOKEN",
];

/// Claude Code (`.mcp.json`, `~/.claude.json`) and Cursor: `{command,
/// args, env}`, or `{type: "http" | "sse", url, headers}`.
const CLAUDE: Dialect = Dialect {
    syntax: Syntax::Json,
    args: Some("args"),
    stdio_type: Some("stdio"),
    urls: &[("url", Transport::Either)],
    headers: "headers",
    remote_only: &["type", "url", "headers", "headersHelper", "oauth"],
    foreign_auth: &["headersHelper", "oauth"],
    passed_env: None,
};

const CURSOR: Dialect = Dialect {
    remote_only: &["type", "url", "headers", "auth"],
    foreign_auth: &["auth"],
    ..CLAUDE
};

/// Gemini CLI: `{command, args, env, cwd}`, `httpUrl` (Streamable HTTP) or
/// `url` (SSE, unless `type: "http"`), with `headers`.
const GEMINI: Dialect = Dialect {
    syntax: Syntax::Json,
    args: Some("args"),
    stdio_type: None,
    urls: &[("httpUrl", Transport::Http), ("url", Transport::Sse)],
    headers: "headers",
    remote_only: &[
        "type",
        "url",
        "httpUrl",
        "headers",
        "oauth",
        "authProviderType",
    ],
    foreign_auth: &["oauth", "authProviderType"],
    passed_env: None,
};

/// Codex CLI: `[mcp_servers.NAME]` with `command`, `args`, `env`, or `url`
/// (Streamable HTTP) with `http_headers`.
const CODEX: Dialect = Dialect {
    syntax: Syntax::Toml,
    args: Some("args"),
    stdio_type: None,
    urls: &[("url", Transport::Http)],
    headers: "http_headers",
    remote_only: &[
        "url",
        "http_headers",
        "env_http_headers",
        "bearer_token",
        "bearer_token_env_var",
        "scopes",
        "oauth_resource",
    ],
    foreign_auth: &[
        "bearer_token",
        "bearer_token_env_var",
        "env_http_headers",
        "scopes",
        "oauth_resource",
    ],
    passed_env: Some("env_vars"),
};

/// opencode: `{type: "local", command: [PROGRAM, ARGS...], environment}`
/// or `{type: "remote", url, headers}`.
const OPENCODE: Dialect = Dialect {
    syntax: Syntax::Json,
    args: None,
    stdio_type: Some("local"),
    urls: &[("url", Transport::Either)],
    headers: "headers",
    remote_only: &["type", "url", "headers", "oauth"],
    foreign_auth: &["oauth"],
    passed_env: None,
};

/// Where a file of [`PLACES`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    /// The project directory.
    Cwd,
    /// The project directory and each one above it up to the root of its
    /// git work tree (where the agent looks for the file).
    ProjectDirs,
    Home,
    /// `$CODEX_HOME`.
    CodexHome,
    /// Claude Code's `.claude.json` itself.
    ClaudeJson,
    /// `$XDG_CONFIG_HOME`.
    ConfigHome,
}

/// In a server path of [`Place::servers`]: each directory of
/// [`Base::ProjectDirs`].
const DIR: &str = "\u{0}dir";
/// In a server path: any key.
const ANY: &str = "\u{0}any";

/// A file where an agent keeps MCP servers, for a project's install
/// (`user: false`) or the user's.
struct Place {
    agent: Agent,
    user: bool,
    base: Base,
    /// The files, below the base (`""`: the base is the file).
    paths: &'static [&'static str],
    /// Where the servers are in it: each a path of keys to an object whose
    /// members are the servers, by name.
    servers: &'static [&'static [&'static str]],
    dialect: &'static Dialect,
}

const MCP_SERVERS: &[&[&str]] = &[&["mcpServers"]];
const OPENCODE_MCP: &[&[&str]] = &[&["mcp"]];

const PLACES: &[Place] = &[
    // Claude Code: the project's servers, shared with the team; the user's
    // own for this project ("local") and for all ("user").
    Place {
        agent: Agent::ClaudeCode,
        user: false,
        base: Base::ProjectDirs,
        paths: &[".mcp.json"],
        servers: MCP_SERVERS,
        dialect: &CLAUDE,
    },
    Place {
        agent: Agent::ClaudeCode,
        user: false,
        base: Base::ClaudeJson,
        paths: &[""],
        servers: &[&["projects", DIR, "mcpServers"]],
        dialect: &CLAUDE,
    },
    Place {
        agent: Agent::ClaudeCode,
        user: true,
        base: Base::ClaudeJson,
        paths: &[""],
        servers: &[&["mcpServers"], &["projects", ANY, "mcpServers"]],
        dialect: &CLAUDE,
    },
    Place {
        agent: Agent::Codex,
        user: false,
        base: Base::Cwd,
        paths: &[".codex/config.toml"],
        servers: &[&["mcp_servers"]],
        dialect: &CODEX,
    },
    Place {
        agent: Agent::Codex,
        user: true,
        base: Base::CodexHome,
        paths: &["config.toml"],
        servers: &[&["mcp_servers"]],
        dialect: &CODEX,
    },
    Place {
        agent: Agent::Gemini,
        user: false,
        base: Base::Cwd,
        paths: &[".gemini/settings.json"],
        servers: MCP_SERVERS,
        dialect: &GEMINI,
    },
    Place {
        agent: Agent::Gemini,
        user: true,
        base: Base::Home,
        paths: &[".gemini/settings.json"],
        servers: MCP_SERVERS,
        dialect: &GEMINI,
    },
    Place {
        agent: Agent::Cursor,
        user: false,
        base: Base::Cwd,
        paths: &[".cursor/mcp.json"],
        servers: MCP_SERVERS,
        dialect: &CURSOR,
    },
    Place {
        agent: Agent::Cursor,
        user: true,
        base: Base::Home,
        paths: &[".cursor/mcp.json"],
        servers: MCP_SERVERS,
        dialect: &CURSOR,
    },
    Place {
        agent: Agent::Opencode,
        user: false,
        base: Base::ProjectDirs,
        paths: &["opencode.json", "opencode.jsonc"],
        servers: OPENCODE_MCP,
        dialect: &OPENCODE,
    },
    Place {
        agent: Agent::Opencode,
        user: false,
        base: Base::Cwd,
        paths: &[".opencode/opencode.json", ".opencode/opencode.jsonc"],
        servers: OPENCODE_MCP,
        dialect: &OPENCODE,
    },
    Place {
        agent: Agent::Opencode,
        user: true,
        base: Base::ConfigHome,
        paths: &[
            "opencode/opencode.json",
            "opencode/opencode.jsonc",
            "opencode/config.json",
        ],
        servers: OPENCODE_MCP,
        dialect: &OPENCODE,
    },
];

/// One file of `t` that may name MCP servers.
struct McpFile {
    file: PathBuf,
    /// Paths of keys to the objects holding servers; [`ANY`] matches any key.
    servers: Vec<Vec<String>>,
    dialect: &'static Dialect,
    /// A project's file a team commits: the gateway is `aileron` through PATH.
    shared: bool,
}

/// The directories of a project where an agent looks for its files: the
/// project directory and those above it up to the work tree's root.
fn project_dirs(cwd: &Path) -> Vec<&Path> {
    let root = repository_root(cwd);
    let mut dirs = Vec::new();
    for d in cwd.ancestors() {
        dirs.push(d);
        if d == root {
            break;
        }
    }
    dirs
}

fn files(t: &Target) -> Vec<McpFile> {
    let mut out: Vec<McpFile> = Vec::new();
    let dirs = project_dirs(&t.cwd);
    for place in PLACES
        .iter()
        .filter(|p| p.agent == t.agent && p.user == t.user)
    {
        let bases: Vec<PathBuf> = match place.base {
            Base::Cwd => vec![t.cwd.clone()],
            Base::ProjectDirs => dirs.iter().map(|d| d.to_path_buf()).collect(),
            Base::Home => vec![t.home.clone()],
            Base::CodexHome => vec![t.homes.codex.clone()],
            Base::ClaudeJson => vec![t.homes.claude_json.clone()],
            Base::ConfigHome => vec![t.homes.config.clone()],
        };
        let mut servers = Vec::new();
        for path in place.servers {
            if path.contains(&DIR) {
                for d in &dirs {
                    let dir = d.to_string_lossy();
                    servers.push(
                        path.iter()
                            .map(|k| {
                                if *k == DIR {
                                    dir.to_string()
                                } else {
                                    (*k).to_owned()
                                }
                            })
                            .collect(),
                    );
                }
            } else {
                servers.push(path.iter().map(|k| (*k).to_owned()).collect());
            }
        }
        for (base, path) in bases
            .iter()
            .flat_map(|b| place.paths.iter().map(move |p| (b, p)))
        {
            let file = if path.is_empty() {
                base.clone()
            } else {
                base.join(path)
            };
            out.push(McpFile {
                file,
                servers: servers.clone(),
                dialect: place.dialect,
                shared: matches!(place.base, Base::Cwd | Base::ProjectDirs),
            });
        }
    }
    out
}

/// A configuration file, parsed, that can be edited entry by entry.
enum Doc {
    Json(String),
    Toml(toml_edit::DocumentMut),
}

/// A server entry in a [`Doc`].
struct Entry {
    /// The keys that lead to it, its name last.
    at: Vec<String>,
    value: Value,
    /// Its text, in a JSON file.
    text: Option<String>,
}

impl Doc {
    /// `text` of `file`, or an error naming `file:line:column`.
    fn parse(file: &Path, syntax: Syntax, text: &str) -> Result<Doc, Error> {
        let error = |line, column, what: String| Error::McpConfigSyntax {
            file: file.to_path_buf(),
            line,
            column,
            what,
        };
        match syntax {
            Syntax::Json => match jsonedit::parse(text) {
                Ok(Node::Object { .. }) => Ok(Doc::Json(text.to_owned())),
                Ok(_) => Err(error(1, 1, "the file is not a JSON object".to_owned())),
                Err(e) => Err(error(e.line, e.column, e.what.to_owned())),
            },
            Syntax::Toml => text
                .parse::<toml_edit::DocumentMut>()
                .map(Doc::Toml)
                .map_err(|e| {
                    let (line, column) = line_column(text, e.span().map_or(0, |s| s.start));
                    error(line, column, e.message().trim().replace('\n', "; "))
                }),
        }
    }

    /// An error where a server, or a member of one, under `pattern` is
    /// given twice: the agent reads the last, and Aileron does not guess.
    /// (TOML refuses it when parsing.)
    fn check_unique(&self, file: &Path, pattern: &[String]) -> Result<(), Error> {
        let Doc::Json(text) = self else {
            return Ok(());
        };
        let Ok(root) = jsonedit::parse(text) else {
            return Ok(());
        };
        let mut holders = vec![&root];
        for key in pattern {
            holders = holders
                .into_iter()
                .filter_map(|n| match n {
                    Node::Object { members, .. } => Some(members),
                    _ => None,
                })
                .flatten()
                .filter(|(k, _, _)| key == ANY || k == key)
                .map(|(_, _, v)| v)
                .collect();
        }
        let entries = holders.iter().filter_map(|n| match n {
            Node::Object { members, .. } => Some(members),
            _ => None,
        });
        for members in entries {
            let inner = members.iter().filter_map(|(_, _, v)| match v {
                Node::Object { members, .. } => Some(members),
                _ => None,
            });
            for members in std::iter::once(members).chain(inner) {
                for (i, (key, span, _)) in members.iter().enumerate() {
                    if members[..i].iter().any(|(k, _, _)| k == key) {
                        let (line, column) = line_column(text, span.start);
                        return Err(Error::McpConfigSyntax {
                            file: file.to_path_buf(),
                            line,
                            column,
                            what: format!(
                                "`{key}` is given twice (the agent reads the last one; say it once)"
                            ),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    fn text(&self) -> String {
        match self {
            Doc::Json(text) => text.clone(),
            Doc::Toml(doc) => doc.to_string(),
        }
    }

    /// The whole file as a value.
    fn value(&self) -> Value {
        match self {
            Doc::Json(text) => jsonedit::parse(text).map_or(Value::Null, |n| n.to_value()),
            Doc::Toml(doc) => toml_item(doc.as_item()),
        }
    }

    /// The value at `at`, if there is one.
    fn get(&self, at: &[String]) -> Option<Value> {
        at.iter()
            .try_fold(self.value(), |v, k| v.get(k.as_str()).cloned())
    }

    /// Every server under the objects `pattern` names.
    fn servers(&self, pattern: &[String]) -> Vec<Entry> {
        let root = self.value();
        let mut holders: Vec<(Vec<String>, &Value)> = vec![(Vec::new(), &root)];
        for key in pattern {
            let mut next = Vec::new();
            for (at, v) in holders {
                let Some(obj) = v.as_object() else { continue };
                for (k, child) in obj {
                    if key == ANY || k == key {
                        let mut at = at.clone();
                        at.push(k.clone());
                        next.push((at, child));
                    }
                }
            }
            holders = next;
        }
        let json = match self {
            Doc::Json(text) => jsonedit::parse(text).ok(),
            Doc::Toml(_) => None,
        };
        let mut out = Vec::new();
        for (at, holder) in holders {
            for (name, value) in holder.as_object().into_iter().flatten() {
                let mut at = at.clone();
                at.push(name.clone());
                let text = match (&json, self) {
                    (Some(root), Doc::Json(t)) => {
                        node_at(root, &at).map(|n| t[n.span()].to_owned())
                    }
                    _ => None,
                };
                out.push(Entry {
                    at,
                    value: value.clone(),
                    text,
                });
            }
        }
        out
    }

    /// Makes the entry at `at`, now `from`, read `to`: in JSON `to_text`
    /// where given, else `to` laid out at its place; in TOML member by
    /// member, the others untouched. Checked: the file must then read `to`
    /// there.
    fn set(
        &mut self,
        file: &Path,
        at: &[String],
        from: &Value,
        to: &Value,
        to_text: Option<&str>,
    ) -> Result<(), Error> {
        let broken = || Error::EditWouldBreak {
            file: file.to_path_buf(),
        };
        match self {
            Doc::Json(text) => {
                let root = jsonedit::parse(text).map_err(|_| broken())?;
                let node = node_at(&root, at).ok_or_else(broken)?;
                let edit = match to_text {
                    Some(t) => (node.span(), t.to_owned()),
                    None => jsonedit::replace(text, node, to),
                };
                *text = jsonedit::apply(text, &edit);
            }
            Doc::Toml(doc) => {
                let mut item = doc.as_item_mut();
                for k in at {
                    item = item
                        .as_table_like_mut()
                        .and_then(|t| t.get_mut(k))
                        .ok_or_else(broken)?;
                }
                let table = item.as_table_like_mut().ok_or_else(broken)?;
                let (Some(from), Some(to)) = (from.as_object(), to.as_object()) else {
                    return Err(broken());
                };
                for k in from.keys().filter(|k| !to.contains_key(*k)) {
                    table.remove(k);
                }
                for (k, v) in to {
                    if from.get(k) != Some(v) {
                        let mut value = toml_value_of(v);
                        // The spaces and comment around the old value stay.
                        if let Some(old) = table.get(k).and_then(toml_edit::Item::as_value) {
                            *value.decor_mut() = old.decor().clone();
                        }
                        table.insert(k, toml_edit::Item::Value(value));
                    }
                }
            }
        }
        // What the agent will read there, read back (in JSON the last of
        // a key given twice, as the agents read it).
        let reread = match self {
            Doc::Json(_) => self.get(at),
            Doc::Toml(doc) => doc
                .to_string()
                .parse::<toml_edit::DocumentMut>()
                .ok()
                .and_then(|d| Doc::Toml(d).get(at)),
        };
        if reread.as_ref() != Some(to) {
            return Err(broken());
        }
        Ok(())
    }
}

/// The line and column (from 1) of byte `at` of `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..at.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, column)
}

fn node_at<'a>(root: &'a Node, at: &[String]) -> Option<&'a Node> {
    at.iter().try_fold(root, |n, k| n.get(k))
}

fn toml_item(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::None => Value::Null,
        toml_edit::Item::Value(v) => toml_to_json(v),
        toml_edit::Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), toml_item(v)))
                .collect(),
        ),
        toml_edit::Item::ArrayOfTables(a) => a
            .iter()
            .map(|t| {
                Value::Object(
                    t.iter()
                        .map(|(k, v)| (k.to_owned(), toml_item(v)))
                        .collect(),
                )
            })
            .collect(),
    }
}

fn toml_to_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match v {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => a.iter().map(toml_to_json).collect(),
        T::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), toml_to_json(v)))
                .collect(),
        ),
    }
}

fn toml_value_of(v: &Value) -> toml_edit::Value {
    match v {
        Value::Null => toml_edit::Value::from(""),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(a) => toml_edit::Value::Array(a.iter().map(toml_value_of).collect()),
        Value::Object(o) => toml_edit::Value::InlineTable(
            o.iter()
                .map(|(k, v)| (k.as_str(), toml_value_of(v)))
                .collect(),
        ),
    }
}

/// What a server entry is, to the gateway.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// Already started through `aileron mcp`.
    Wrapped,
    /// A program the agent starts: the command line.
    Stdio(Vec<String>),
    /// A Streamable HTTP endpoint and its headers.
    Remote {
        url: String,
        headers: Vec<(String, String)>,
    },
    /// A server the gateway cannot stand in front of, and why.
    Left(String),
    /// Not a server entry Aileron reads.
    Other,
}

fn kind(d: &Dialect, entry: &Map<String, Value>) -> Kind {
    let ty = entry.get("type").and_then(Value::as_str);
    let strings = |v: &Value| -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect()
    };
    if let Some(command) = entry.get("command") {
        let line = match d.args {
            Some(args) => command.as_str().and_then(|c| {
                let mut line = vec![c.to_owned()];
                line.extend(strings(
                    entry.get(args).unwrap_or(&Value::Array(Vec::new())),
                )?);
                Some(line)
            }),
            None => strings(command).filter(|l| !l.is_empty()),
        };
        return match line {
            None => Kind::Left("its command is not a program and a list of arguments".to_owned()),
            Some(line) if is_gateway(&line) => Kind::Wrapped,
            Some(line) => Kind::Stdio(line),
        };
    }
    let Some((key, url, default)) = d.urls.iter().find_map(|(key, transport)| {
        entry
            .get(*key)
            .and_then(Value::as_str)
            .map(|u| (*key, u, *transport))
    }) else {
        return Kind::Other;
    };
    let transport = match ty {
        Some("http" | "streamable-http" | "streamable_http" | "streamableHttp") => Transport::Http,
        Some("sse") => Transport::Sse,
        None | Some("remote") => default,
        Some(other) => {
            return Kind::Left(format!("its type `{other}` is not one the gateway serves"));
        }
    };
    let sse = match transport {
        Transport::Http => false,
        Transport::Sse => true,
        Transport::Either => {
            let path = url.split(['?', '#']).next().unwrap_or_default();
            path.trim_end_matches('/').ends_with("/sse")
        }
    };
    if sse {
        return Kind::Left(format!(
            "`{key}` is an SSE endpoint, and the gateway serves Streamable HTTP only"
        ));
    }
    if let Some(auth) = d.foreign_auth.iter().find(|k| {
        entry
            .get(**k)
            .is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)))
    }) {
        return Kind::Left(format!(
            "its credentials come from `{auth}`, which the gateway cannot send"
        ));
    }
    let mut headers = Vec::new();
    for (name, value) in entry
        .get(d.headers)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        match value.as_str() {
            Some(v) => headers.push((name.clone(), v.to_owned())),
            None => return Kind::Left(format!("its header `{name}` is not a string")),
        }
    }
    Kind::Remote {
        url: url.to_owned(),
        headers,
    }
}

/// Whether a command line runs Aileron's MCP gateway (any `aileron`
/// binary: through PATH, this one, another).
fn is_gateway(line: &[String]) -> bool {
    line.first()
        .is_some_and(|p| Path::new(p).file_name().is_some_and(|n| n == "aileron"))
        && line.get(1).is_some_and(|a| a == "mcp")
}

/// `aileron mcp --name NAME ...` in front of `kind`.
fn gateway_line(program: &str, name: &str, kind: &Kind) -> Vec<String> {
    let mut line: Vec<String> = if name.starts_with('-') {
        // `--name -x` would read `-x` as an option.
        vec![
            program.to_owned(),
            "mcp".to_owned(),
            format!("--name={name}"),
        ]
    } else {
        [program, "mcp", "--name", name].map(str::to_owned).to_vec()
    };
    match kind {
        Kind::Stdio(command) => {
            line.push("--".to_owned());
            line.extend(command.iter().cloned());
        }
        Kind::Remote { url, headers } => {
            line.extend(["--url".to_owned(), url.clone()]);
            for (k, v) in headers {
                line.extend(["--header".to_owned(), format!("{k}: {v}")]);
            }
        }
        _ => {}
    }
    line
}

/// `entry` started through `line`: its command (and arguments) replaced, a
/// remote one's URL, headers and `type` with them; every other member kept,
/// in its place.
fn wrapped(d: &Dialect, entry: &Map<String, Value>, remote: bool, line: Vec<String>) -> Value {
    let mut command: Vec<(String, Value)> = Vec::new();
    if remote && let (Some(ty), true) = (d.stdio_type, entry.contains_key("type")) {
        command.push(("type".to_owned(), Value::from(ty)));
    }
    match d.args {
        Some(args) => {
            let mut line = line.into_iter();
            command.push((
                "command".to_owned(),
                Value::from(line.next().unwrap_or_default()),
            ));
            command.push((args.to_owned(), Value::from(line.collect::<Vec<_>>())));
        }
        None => command.push(("command".to_owned(), Value::from(line))),
    }
    let replaced = |k: &str| {
        k == "command"
            || d.args == Some(k)
            || (remote && (d.remote_only.contains(&k) || d.urls.iter().any(|(u, _)| *u == k)))
    };
    let mut out = Map::new();
    let mut command = Some(command);
    for (k, v) in entry {
        if replaced(k) {
            if let Some(c) = command.take() {
                out.extend(c);
            }
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    if let Some(c) = command {
        out.extend(c);
    }
    if let Some(key) = d.passed_env {
        let mut names: Vec<Value> = out
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for name in GATEWAY_ENV {
            if !names.iter().any(|n| n == name) {
                names.push(Value::from(*name));
            }
        }
        out.insert(key.to_owned(), Value::Array(names));
    }
    Value::Object(out)
}

/// Which install wrapped a server: a project's or the user's.
fn scope(t: &Target) -> &'static str {
    if t.user { "user" } else { "project" }
}

/// A file's key in the record: its canonical path (its directory's, when
/// it is gone).
fn canonical(file: &Path) -> String {
    std::fs::canonicalize(file)
        .or_else(|_| {
            let dir = file.parent().ok_or(std::io::ErrorKind::NotFound)?;
            std::fs::canonicalize(dir).map(|d| d.join(file.file_name().unwrap_or_default()))
        })
        .unwrap_or_else(|_| file.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest(text: &str) -> String {
    hex(&sha256(text.as_bytes()))
}

/// What Aileron changed in one file: recorded in `installed.json`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct WrappedFile {
    /// The file's bytes before Aileron first wrapped a server in it, under
    /// `$AILERON_DATA/mcp/`, while they give the file back exactly.
    #[serde(default)]
    backup: Option<String>,
    /// SHA-256 of the text Aileron last wrote.
    written: String,
    servers: Vec<WrappedServer>,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct WrappedServer {
    /// [`scope`]: which install wrapped it.
    by: String,
    /// The keys that lead to the entry, its name last.
    at: Vec<String>,
    /// The entry before, and (JSON) its text.
    before: Value,
    #[serde(default)]
    before_text: Option<String>,
    /// The entry Aileron wrote.
    after: Value,
}

impl WrappedServer {
    fn name(&self) -> &str {
        self.at.last().map_or("", String::as_str)
    }

    /// Whether `f`'s server paths name this entry's place.
    fn under(&self, f: &McpFile) -> bool {
        let holder = &self.at[..self.at.len().saturating_sub(1)];
        f.servers.iter().any(|p| {
            p.len() == holder.len() && p.iter().zip(holder).all(|(p, k)| p == ANY || p == k)
        })
    }
}

/// One file's change, planned before any file is written.
struct Change {
    file: PathBuf,
    key: String,
    /// The file's new text; `None`: left as it is.
    text: Option<String>,
    /// The record's new entry; `None`: taken out.
    record: Option<WrappedFile>,
    /// A backup to write (its name, the text), or to remove.
    backup_write: Option<(String, String)>,
    backup_remove: Option<String>,
}

fn backup_path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join("mcp").join(name)
}

/// Plans the wrapping of every server of `t` that is not yet behind the
/// gateway. Reads every file first: one that does not parse stops it all.
fn plan_wrap(t: &Target, notes: &mut Vec<String>) -> Result<Vec<Change>, Error> {
    let record = Record::load(&t.data_dir);
    let mut changes = Vec::new();
    for f in files(t) {
        let Some(text) = read_settings(&f.file)? else {
            continue;
        };
        let mut doc = Doc::parse(&f.file, f.dialect.syntax, &text)?;
        let program = if f.shared { PORTABLE } else { &t.aileron };
        let mut wrapped_now = Vec::new();
        for pattern in &f.servers {
            doc.check_unique(&f.file, pattern)?;
            for e in doc.servers(pattern) {
                let Value::Object(entry) = &e.value else {
                    continue;
                };
                let name = e.at.last().cloned().unwrap_or_default();
                let k = kind(f.dialect, entry);
                match &k {
                    Kind::Wrapped | Kind::Other => continue,
                    Kind::Left(why) => {
                        notes.push(format!(
                            "{}: the MCP server `{name}` is left as it is, not behind the gateway: {why}",
                            f.file.display()
                        ));
                        continue;
                    }
                    Kind::Remote { headers, .. } => notes.push(format!(
                        "{}: the remote MCP server `{name}` now goes through `aileron mcp --url`{}; one that signs in through the agent (OAuth) cannot: `aileron uninstall` puts it back",
                        f.file.display(),
                        if headers.is_empty() {
                            ""
                        } else {
                            ", its headers on the gateway's command line"
                        }
                    )),
                    Kind::Stdio(_) => {}
                }
                let after = wrapped(
                    f.dialect,
                    entry,
                    matches!(k, Kind::Remote { .. }),
                    gateway_line(program, &name, &k),
                );
                doc.set(&f.file, &e.at, &e.value, &after, None)?;
                wrapped_now.push(WrappedServer {
                    by: scope(t).to_owned(),
                    at: e.at,
                    before: e.value,
                    before_text: e.text,
                    after,
                });
            }
        }
        if wrapped_now.is_empty() {
            continue;
        }
        let new_text = doc.text();
        let key = canonical(&f.file);
        let mut rec = record.mcp.get(&key).cloned().unwrap_or_default();
        let mut change = Change {
            file: f.file.clone(),
            key: key.clone(),
            text: Some(new_text.clone()),
            record: None,
            backup_write: None,
            backup_remove: None,
        };
        if rec.servers.is_empty() {
            let name = format!("{}.orig", &digest(&key)[..32]);
            change.backup_write = Some((name.clone(), text.clone()));
            rec.backup = Some(name);
        } else if rec.written != digest(&text) {
            // Changed since Aileron wrote it: the bytes kept no longer give
            // this file back.
            change.backup_remove = rec.backup.take();
        }
        rec.servers
            .retain(|s| !wrapped_now.iter().any(|w| w.at == s.at));
        rec.servers.extend(wrapped_now);
        rec.written = digest(&new_text);
        change.record = Some(rec);
        if f.shared && !t.shared() {
            notes.extend(path_notes(t, &f.file));
        }
        if f.file == t.homes.claude_json {
            notes.push(format!(
                "Claude Code rewrites {} while it runs: quit it before `aileron install` and `aileron uninstall`",
                f.file.display()
            ));
        }
        changes.push(change);
    }
    Ok(changes)
}

/// Plans giving back every server of `t` that its install wrapped.
fn plan_unwrap(t: &Target, notes: &mut Vec<String>) -> Result<Vec<Change>, Error> {
    let record = Record::load(&t.data_dir);
    let mut changes = Vec::new();
    for f in files(t) {
        let key = canonical(&f.file);
        let Some(rec) = record.mcp.get(&key) else {
            continue;
        };
        let (mine, others): (Vec<WrappedServer>, Vec<WrappedServer>) = rec
            .servers
            .iter()
            .cloned()
            .partition(|s| s.by == scope(t) && s.under(&f));
        if mine.is_empty() {
            continue;
        }
        let mut change = Change {
            file: f.file.clone(),
            key,
            text: None,
            record: None,
            backup_write: None,
            backup_remove: None,
        };
        let done = |mut change: Change,
                    rec: &WrappedFile,
                    others: Vec<WrappedServer>,
                    text: Option<&str>| {
            if others.is_empty() {
                change.backup_remove = rec.backup.clone();
            } else {
                let mut rec = rec.clone();
                rec.servers = others;
                if let Some(text) = text {
                    rec.written = digest(text);
                }
                change.record = Some(rec);
            }
            change
        };
        let Some(text) = read_settings(&f.file)? else {
            notes.push(format!(
                "{} is gone: the MCP servers aileron wrapped there are not put back",
                f.file.display()
            ));
            changes.push(done(change, rec, others, None));
            continue;
        };
        let unchanged = digest(&text) == rec.written;
        if unchanged
            && others.is_empty()
            && let Some(backup) = &rec.backup
            && let Ok(original) = std::fs::read_to_string(backup_path(&t.data_dir, backup))
        {
            change.text = Some(original);
            changes.push(done(change, rec, others, None));
            continue;
        }
        let mut doc = Doc::parse(&f.file, f.dialect.syntax, &text)?;
        let (mut restored, mut left) = (Vec::new(), Vec::new());
        for s in &mine {
            if doc.get(&s.at).as_ref() == Some(&s.after) {
                let exact = if unchanged {
                    s.before_text.as_deref()
                } else {
                    None
                };
                doc.set(&f.file, &s.at, &s.after, &s.before, exact)?;
                restored.push(s.name());
            } else {
                left.push(s.name());
            }
        }
        if !unchanged && !restored.is_empty() {
            notes.push(format!(
                "{} changed after aileron wrapped its MCP servers: only the servers aileron wrapped were put back ({}), the rest of the file is as it is now",
                f.file.display(),
                restored.join(", ")
            ));
        }
        if !left.is_empty() {
            notes.push(format!(
                "{}: the MCP server(s) {} no longer read as aileron wrote them and are left as they are (put back by hand any that still run `aileron mcp`)",
                f.file.display(),
                left.join(", ")
            ));
        }
        let new_text = doc.text();
        let exact = unchanged && f.dialect.syntax == Syntax::Json;
        let mut change = done(change, rec, others, Some(&new_text));
        if !exact && let Some(rec) = change.record.as_mut() {
            change.backup_remove = rec.backup.take();
        }
        if new_text != text {
            change.text = Some(new_text);
        }
        changes.push(change);
    }
    Ok(changes)
}

/// Writes what was planned: each backup, then the record, then the file,
/// so that a file is never changed without its record.
fn apply(t: &Target, changes: Vec<Change>, report: &mut Report) -> Result<(), Error> {
    for c in changes {
        if let Some((name, text)) = &c.backup_write {
            write_private(&backup_path(&t.data_dir, name), text)?;
        }
        let mut record = Record::load(&t.data_dir);
        match c.record {
            Some(rec) => {
                record.mcp.insert(c.key.clone(), rec);
            }
            None => {
                record.mcp.remove(&c.key);
            }
        }
        record.save(&t.data_dir)?;
        if let Some(text) = &c.text {
            write_atomic(&c.file, text)?;
            report.servers.push(c.file.clone());
        }
        if let Some(name) = &c.backup_remove {
            let _ = std::fs::remove_file(backup_path(&t.data_dir, name));
        }
    }
    Ok(())
}

/// A file only its owner reads (it may hold the servers' credentials).
fn write_private(file: &Path, text: &str) -> Result<(), Error> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = file.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_error("create", dir))?;
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(file)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(io_error("write", file))
}

/// Notes for a shared project file whose servers now run `aileron`
/// through PATH.
fn path_notes(t: &Target, file: &Path) -> Vec<String> {
    let mut notes = vec![format!(
        "the MCP servers in {} run `{PORTABLE}` through PATH, so that the file can be committed: each teammate needs aileron on PATH",
        file.display()
    )];
    if !on_path(PORTABLE) {
        notes.push(format!(
            "`{PORTABLE}` is not on PATH here: the wrapped MCP servers cannot start until it is (the binary is {})",
            t.aileron
        ));
    }
    notes
}

/// Reads every MCP configuration file of `t`: an error for one that does
/// not parse, before anything is written.
pub(super) fn check(t: &Target) -> Result<(), Error> {
    plan_wrap(t, &mut Vec::new()).map(drop)
}

/// Puts the gateway in front of `t`'s MCP servers. Idempotent.
pub(super) fn wrap(t: &Target, report: &mut Report) -> Result<(), Error> {
    let changes = plan_wrap(t, &mut report.notes)?;
    if !changes.is_empty() {
        report.notes.push(format!(
            "{} starts its MCP servers when it starts: restart it (or reload its MCP servers) to use the gateway",
            t.agent.name()
        ));
    }
    apply(t, changes, report)
}

/// Gives back the servers [`wrap`] wrapped for `t`.
pub(super) fn unwrap(t: &Target, report: &mut Report) -> Result<(), Error> {
    let changes = plan_unwrap(t, &mut report.notes)?;
    apply(t, changes, report)
}

/// The files of `t` where a server runs `aileron mcp` (`aileron status`).
pub(super) fn wrapped_files(t: &Target) -> Vec<PathBuf> {
    files(t)
        .into_iter()
        .filter(|f| {
            let Ok(Some(text)) = read_settings(&f.file) else {
                return false;
            };
            let Ok(doc) = Doc::parse(&f.file, f.dialect.syntax, &text) else {
                return false;
            };
            f.servers.iter().any(|p| {
                doc.servers(p).iter().any(|e| {
                    e.value
                        .as_object()
                        .is_some_and(|o| kind(f.dialect, o) == Kind::Wrapped)
                })
            })
        })
        .map(|f| f.file)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_name_like_an_option_is_given_with_an_equals_sign() {
        let line = gateway_line("aileron", "-rf", &Kind::Stdio(vec!["srv".into()]));
        assert_eq!(line, ["aileron", "mcp", "--name=-rf", "--", "srv"]);
        let line = gateway_line("aileron", "gh", &Kind::Stdio(vec!["srv".into()]));
        assert_eq!(line, ["aileron", "mcp", "--name", "gh", "--", "srv"]);
    }

    #[test]
    fn kinds_of_entries() {
        let stdio = entry(json!({"command": "npx", "args": ["-y", "srv"], "env": {"K": "v"}}));
        assert_eq!(
            kind(&CLAUDE, &stdio),
            Kind::Stdio(vec!["npx".into(), "-y".into(), "srv".into()])
        );
        let wrapped = entry(json!({"command": "/opt/bin/aileron", "args": ["mcp", "--", "x"]}));
        assert_eq!(kind(&CLAUDE, &wrapped), Kind::Wrapped);
        let http = entry(json!({"type": "http", "url": "https://h/mcp", "headers": {"A": "b"}}));
        assert_eq!(
            kind(&CLAUDE, &http),
            Kind::Remote {
                url: "https://h/mcp".into(),
                headers: vec![("A".into(), "b".into())]
            }
        );
        let sse = entry(json!({"type": "sse", "url": "https://h/mcp"}));
        assert!(matches!(kind(&CLAUDE, &sse), Kind::Left(_)));
        // Gemini: `url` is SSE, `httpUrl` Streamable HTTP.
        assert!(matches!(
            kind(&GEMINI, &entry(json!({"url": "https://h/x"}))),
            Kind::Left(_)
        ));
        assert!(matches!(
            kind(&GEMINI, &entry(json!({"httpUrl": "https://h/x"}))),
            Kind::Remote { .. }
        ));
        // Cursor and opencode try both: `/sse` is taken for SSE.
        assert!(matches!(
            kind(&CURSOR, &entry(json!({"url": "https://h/sse/"}))),
            Kind::Left(_)
        ));
        assert!(matches!(
            kind(
                &OPENCODE,
                &entry(json!({"type": "remote", "url": "https://h/mcp"}))
            ),
            Kind::Remote { .. }
        ));
        // Credentials the gateway cannot send.
        let env_token = entry(json!({"url": "https://h/mcp", "bearer_token_env_var": "T"}));
        assert!(matches!(kind(&CODEX, &env_token), Kind::Left(_)));
        let no_oauth = entry(json!({"type": "remote", "url": "https://h/mcp", "oauth": false}));
        assert!(matches!(kind(&OPENCODE, &no_oauth), Kind::Remote { .. }));
        assert_eq!(
            kind(&CLAUDE, &entry(json!({"disabled": true}))),
            Kind::Other
        );
        assert!(matches!(
            kind(&CLAUDE, &entry(json!({"type": "ws", "url": "ws://h"}))),
            Kind::Left(_)
        ));
    }

    #[test]
    fn wrapped_entries_keep_their_other_members_in_place() {
        let e = entry(json!({"args": ["a"], "command": "srv", "env": {"K": "v"}}));
        let line = gateway_line("aileron", "x", &kind(&CLAUDE, &e));
        assert_eq!(
            wrapped(&CLAUDE, &e, false, line),
            json!({"command": "aileron", "args": ["mcp", "--name", "x", "--", "srv", "a"], "env": {"K": "v"}})
        );
        let e = entry(
            json!({"type": "remote", "url": "https://h/mcp", "headers": {"A": "b"}, "enabled": true}),
        );
        let line = gateway_line("aileron", "r", &kind(&OPENCODE, &e));
        assert_eq!(
            wrapped(&OPENCODE, &e, true, line),
            json!({"type": "local", "command": ["aileron", "mcp", "--name", "r", "--url", "https://h/mcp", "--header", "A: b"], "enabled": true})
        );
        let e = entry(json!({"httpUrl": "https://h/mcp", "timeout": 5000}));
        let line = gateway_line("/bin/aileron", "g", &kind(&GEMINI, &e));
        assert_eq!(
            wrapped(&GEMINI, &e, true, line),
            json!({"command": "/bin/aileron", "args": ["mcp", "--name", "g", "--url", "https://h/mcp"], "timeout": 5000})
        );
    }

    #[test]
    fn toml_entries_change_member_by_member_and_change_back() {
        let original = "# mine\nmodel = \"o3\"\n\n[mcp_servers.notes]\ncommand = \"node\" # the server\nargs = [\"srv.js\"]\nenv = { K = \"v\" }\n\n[mcp_servers.remote]\nurl = \"https://h/mcp\"\nhttp_headers = { A = \"b\" }\nstartup_timeout_sec = 20\n";
        let file = Path::new("config.toml");
        let mut doc = Doc::parse(file, Syntax::Toml, original).unwrap();
        assert_eq!(doc.text(), original);
        let entries = doc.servers(&["mcp_servers".to_owned()]);
        assert_eq!(entries.len(), 2);
        let mut afters = Vec::new();
        for e in &entries {
            let o = e.value.as_object().unwrap();
            let k = kind(&CODEX, o);
            let after = wrapped(
                &CODEX,
                o,
                matches!(k, Kind::Remote { .. }),
                gateway_line("aileron", e.at.last().unwrap(), &k),
            );
            doc.set(file, &e.at, &e.value, &after, None).unwrap();
            afters.push(after);
        }
        let text = doc.text();
        assert!(
            text.starts_with("# mine\nmodel = \"o3\"\n\n[mcp_servers.notes]\ncommand = \"aileron\" # the server\n"),
            "{text}"
        );
        let v: Value = toml_item(text.parse::<toml_edit::DocumentMut>().unwrap().as_item());
        assert_eq!(v["mcp_servers"]["notes"]["command"], "aileron");
        assert_eq!(
            v["mcp_servers"]["remote"],
            json!({"startup_timeout_sec": 20, "command": "aileron", "args": ["mcp", "--name", "remote", "--url", "https://h/mcp", "--header", "A: b"], "env_vars": GATEWAY_ENV})
        );
        for (e, after) in entries.iter().zip(&afters) {
            doc.set(file, &e.at, after, &e.value, None).unwrap();
        }
        let back: Value = toml_item(
            doc.text()
                .parse::<toml_edit::DocumentMut>()
                .unwrap()
                .as_item(),
        );
        let orig: Value = toml_item(
            original
                .parse::<toml_edit::DocumentMut>()
                .unwrap()
                .as_item(),
        );
        assert_eq!(back, orig);
    }

    #[test]
    fn a_server_given_twice_is_refused_where_it_is() {
        let cases = [
            (
                "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n  \"a\": {\"command\": \"y\"}\n}}",
                "m.json:3:3: `a` is given twice",
            ),
            (
                "{\"mcpServers\": {\"a\": {\"command\": \"y\", \"command\": \"z\"}}}",
                "m.json:1:39: `command` is given twice",
            ),
        ];
        let file = Path::new("m.json");
        for (text, error) in cases {
            let doc = Doc::parse(file, Syntax::Json, text).unwrap();
            let e = doc
                .check_unique(file, &["mcpServers".to_owned()])
                .unwrap_err();
            assert!(e.to_string().starts_with(error), "{e}");
        }
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let e = Doc::parse(Path::new("c.toml"), Syntax::Toml, "a = 1\n[mcp_servers.x\n")
            .err()
            .unwrap();
        assert!(e.to_string().starts_with("c.toml:2:"), "{e}");
        let e = Doc::parse(
            Path::new("m.json"),
            Syntax::Json,
            "{\n  \"a\": 1,\n  \"b\" 2\n}",
        )
        .err()
        .unwrap();
        assert!(e.to_string().starts_with("m.json:3:7: expected `:`"), "{e}");
    }
}
