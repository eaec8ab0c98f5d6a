//! From a tool call to what the engine decides: a shell line (analysed
//! like the shim's), or Actions of SPEC 3 (`fs.*`, `http.request`,
//! `mcp.call`, `tool.call`).

use crate::Error;
use crate::agent::Agent;
use crate::event::ToolEvent;
use aileron_engine::Action;
use aileron_engine::paths::absolute;
use serde_json::{Value, json};

/// What one tool call asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    /// The shell line, or a one-line description of the call.
    pub line: String,
    /// Empty for a shell call; otherwise one Action per file, URL or call.
    pub actions: Vec<Action>,
    /// The agent's working directory: where the policy is found.
    pub cwd: String,
    /// The directory a shell tool says its command runs in, when it says.
    /// It places the command's paths, never which policy applies.
    pub shell_cwd: Option<String>,
}

/// What a tool does, judged by its name (each agent names them its own way).
enum Kind {
    Shell,
    Write,
    Read,
    /// Searches file contents under a path.
    Search,
    /// Lists or globs a directory.
    List,
    Fetch,
    WebSearch,
    /// Codex's `apply_patch`: the files are inside the patch text.
    Patch,
    Mcp,
    Other,
}

fn kind(agent: Agent, tool: &str) -> Kind {
    if tool.starts_with("mcp__") {
        return Kind::Mcp;
    }
    match (agent, tool) {
        (_, "Bash" | "PowerShell" | "Shell" | "run_shell_command" | "execute_command" | "bash") => {
            Kind::Shell
        }
        (
            _,
            "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "write_file" | "replace"
            | "write_to_file" | "replace_in_file" | "new_rule" | "edit" | "write" | "Delete"
            | "StrReplace",
        ) => Kind::Write,
        (_, "Read" | "read_file" | "read_many_files" | "read" | "NotebookRead" | "view_image") => {
            Kind::Read
        }
        (
            _,
            "Grep"
            | "search_file_content"
            | "grep_search"
            | "search_files"
            | "grep"
            | "list_code_definition_names",
        ) => Kind::Search,
        (_, "Glob" | "LS" | "glob" | "list_directory" | "list_files" | "list" | "ls") => Kind::List,
        (_, "WebFetch" | "web_fetch" | "webfetch" | "browser_action" | "fetch") => Kind::Fetch,
        (_, "WebSearch" | "google_web_search" | "websearch" | "web_search") => Kind::WebSearch,
        (_, "apply_patch" | "patch") => Kind::Patch,
        (_, "use_mcp_tool" | "access_mcp_resource") => Kind::Mcp,
        _ => Kind::Other,
    }
}

/// Lowers `ev`; `home` expands `~`. The error says why nothing can be decided.
pub fn lower(ev: &ToolEvent, home: &str) -> Result<Lowered, Error> {
    let input = &ev.input;
    let abs = |p: &str| absolute(p, &ev.cwd, Some(home));
    let mut out = Lowered {
        line: String::new(),
        actions: Vec::new(),
        cwd: ev.cwd.clone(),
        shell_cwd: None,
    };
    // An MCP server named beside a plain tool name (Cursor, Gemini CLI).
    let announced = ev.mcp_server.is_some() && !ev.tool.starts_with("mcp__");
    let kind = if announced && ev.agent != Agent::Cline {
        Kind::Mcp
    } else {
        kind(ev.agent, &ev.tool)
    };
    match kind {
        Kind::Shell => {
            out.line = str_field(input, &["command"])
                .ok_or_else(|| Error::NoCommand {
                    tool: ev.tool.clone(),
                })?
                .to_owned();
            if let Some(dir) = str_field(
                input,
                &[
                    "dir_path",
                    "directory",
                    "workdir",
                    "working_directory",
                    "cwd",
                ],
            ) {
                out.shell_cwd = Some(abs(dir));
            }
            return Ok(out);
        }
        Kind::Write => {
            let path = path_field(input).ok_or_else(|| no_path(ev))?;
            let op = if ev.tool == "Delete" {
                "delete"
            } else {
                "write"
            };
            out.actions.push(fs("fs.write", &abs(path), op));
        }
        Kind::Read => {
            let paths = list_field(input, &["paths", "include", "file_paths"]);
            if let Some(path) = path_field(input) {
                out.actions.push(fs("fs.read", &abs(path), "read"));
            }
            for p in paths {
                out.actions.push(fs("fs.read", &abs(&p), "read"));
            }
            if out.actions.is_empty() {
                return Err(no_path(ev));
            }
        }
        Kind::Search => {
            let dir = path_field(input).map_or_else(|| ev.cwd.clone(), abs);
            out.actions.push(fs("fs.read", &dir, "search"));
        }
        Kind::List => {
            let dir = path_field(input).map_or_else(|| ev.cwd.clone(), abs);
            out.actions.push(fs("fs.list", &dir, "list"));
        }
        Kind::Fetch => {
            let mut urls: Vec<String> = str_field(input, &["url", "uri"])
                .map(|u| vec![u.to_owned()])
                .unwrap_or_default();
            if urls.is_empty()
                && let Some(prompt) = str_field(input, &["prompt"])
            {
                urls = urls_in(prompt);
            }
            if urls.is_empty() {
                // Nothing to fetch (a browser click, say): a plain tool call.
                out.actions.push(tool(&ev.tool, input.clone()));
            }
            for url in urls {
                out.actions.push(http("GET", &url));
            }
        }
        Kind::WebSearch => {
            let query = str_field(input, &["query"]).unwrap_or_default();
            let mut a = Action {
                kind: "http.request".into(),
                summary: format!("web search: {query}"),
                ..Action::default()
            };
            // No URL: a search names no host, so host rules do not apply to it.
            a.facets
                .insert("http".into(), json!({"method": "GET", "query": query}));
            a.facets
                .insert("tool".into(), json!({"name": ev.tool, "input": input}));
            out.actions.push(a);
        }
        Kind::Patch => {
            let text =
                str_field(input, &["command", "patch", "patchText", "input"]).ok_or_else(|| {
                    Error::NoPatchText {
                        tool: ev.tool.clone(),
                    }
                })?;
            for (path, op) in patch_files(text) {
                out.actions.push(fs("fs.write", &abs(&path), op));
            }
            if out.actions.is_empty() {
                return Err(Error::NoFileInPatch {
                    tool: ev.tool.clone(),
                });
            }
        }
        Kind::Mcp => {
            let (server, name, args) = if let Some(rest) = ev.tool.strip_prefix("mcp__") {
                let (server, name) = rest.split_once("__").unwrap_or((rest, ""));
                let server = ev.mcp_server.as_deref().unwrap_or(server);
                (server.to_owned(), name.to_owned(), input.clone())
            } else if ev.agent != Agent::Cline {
                let server = ev.mcp_server.clone().unwrap_or_default();
                (server, ev.tool.clone(), input.clone())
            } else {
                // Cline: `use_mcp_tool {server_name, tool_name, arguments}`,
                // `access_mcp_resource {server_name, uri}`.
                let server = str_field(input, &["server_name"]).unwrap_or_default();
                let name = str_field(input, &["tool_name", "uri"]).unwrap_or(&ev.tool);
                let args = input.get("arguments").cloned().unwrap_or(json!({}));
                (server.to_owned(), name.to_owned(), args)
            };
            out.actions.push(mcp(&server, &name, args));
        }
        Kind::Other => out.actions.push(tool(&ev.tool, input.clone())),
    }
    // Keep the agent's own name for the tool, so rules can name it.
    for a in &mut out.actions {
        a.facets
            .entry("tool")
            .or_insert_with(|| json!({"name": ev.tool, "input": input}));
    }
    Ok(described(out))
}

fn described(mut out: Lowered) -> Lowered {
    for a in &mut out.actions {
        a.session.cwd = Some(out.cwd.clone());
        a.normalize();
    }
    out.line = out
        .actions
        .iter()
        .map(|a| a.summary.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    out
}

fn no_path(ev: &ToolEvent) -> Error {
    Error::NoFile {
        tool: ev.tool.clone(),
    }
}

fn fs(kind: &str, path: &str, op: &str) -> Action {
    let mut a = Action {
        kind: kind.into(),
        ..Action::default()
    };
    a.facets
        .insert("fs".into(), json!({"path": path, "op": op}));
    a
}

fn http(method: &str, url: &str) -> Action {
    let mut a = Action {
        kind: "http.request".into(),
        ..Action::default()
    };
    a.facets
        .insert("http".into(), json!({"method": method, "url": url}));
    a
}

fn mcp(server: &str, name: &str, arguments: Value) -> Action {
    let mut a = Action {
        kind: "mcp.call".into(),
        ..Action::default()
    };
    a.facets.insert(
        "mcp".into(),
        json!({"server": server, "tool": name, "arguments": arguments}),
    );
    a
}

fn tool(name: &str, input: Value) -> Action {
    let mut a = Action {
        kind: "tool.call".into(),
        ..Action::default()
    };
    a.facets
        .insert("tool".into(), json!({"name": name, "input": input}));
    a
}

fn str_field<'v>(input: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter()
        .find_map(|k| input.get(*k)?.as_str())
        .filter(|s| !s.is_empty())
}

/// The file a tool acts on, under the names the agents use for it.
fn path_field(input: &Value) -> Option<&str> {
    str_field(
        input,
        &[
            "file_path",
            "absolute_path",
            "notebook_path",
            "filePath",
            "path",
            "dir_path",
            "target_file",
        ],
    )
}

fn list_field(input: &Value, keys: &[&str]) -> Vec<String> {
    keys.iter()
        .filter_map(|k| input.get(*k)?.as_array())
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// The `http(s)://` URLs in free text (Gemini CLI's `web_fetch` takes a prompt).
fn urls_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("http") {
        let tail = &rest[i..];
        if tail.starts_with("http://") || tail.starts_with("https://") {
            let end = tail
                .find(|c: char| {
                    c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | ')' | ']')
                })
                .unwrap_or(tail.len());
            let url = tail[..end].trim_end_matches(['.', ',', ';', ':', '!', '?']);
            out.push(url.to_owned());
            rest = &tail[end..];
        } else {
            rest = &tail[4..];
        }
    }
    out
}

/// The files a Codex `apply_patch` body adds, updates, deletes or moves to.
fn patch_files(text: &str) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for line in text.lines() {
        // Codex trims each hunk header before reading it.
        let line = line.trim();
        for (marker, op) in [
            ("*** Add File: ", "create"),
            ("*** Update File: ", "write"),
            ("*** Delete File: ", "delete"),
            ("*** Move to: ", "move"),
        ] {
            if let Some(p) = line.strip_prefix(marker) {
                out.push((p.trim().to_owned(), op));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_urls_in_prompts_and_files_in_patches() {
        assert_eq!(
            urls_in("Summarize https://example.com/docs/api. And (http://a.b/c)"),
            vec!["https://example.com/docs/api", "http://a.b/c"]
        );
        let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n*** Add File: a.txt\n+x\n*** Delete File: b\n*** Update File: c\n*** Move to: d\n*** End Patch\n";
        assert_eq!(
            patch_files(patch),
            vec![
                ("src/lib.rs".to_owned(), "write"),
                ("a.txt".to_owned(), "create"),
                ("b".to_owned(), "delete"),
                ("c".to_owned(), "write"),
                ("d".to_owned(), "move"),
            ]
        );
    }
}
