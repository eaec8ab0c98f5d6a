//! Claude Code's `permissions.allow/ask/deny` rules as an aileron.yaml
//! (`aileron import claude`), following docs/agents-hooks.md §1.5.
//!
//! Every Claude rule becomes one Aileron rule in the bucket of the same
//! name, with a `description:` naming the rule and its file, or is reported
//! as not translated with the reason. Claude checks deny, then ask, then
//! allow; Aileron's default priorities (deny 200 > ask 100 > allow 50) give
//! the same precedence, so the rules keep them. Where Claude's meaning is
//! not certain, the translation errs to the cautious side: an allow rule
//! may match less than Claude's (Aileron then asks), a deny or ask rule
//! may match more, never the other way round.
//!
//! How each form is translated:
//! - `Bash`, `Bash(*)`: every shell command. `Bash(cmd)`, `Bash(prefix *)`,
//!   `Bash(prefix:*)`: the command glob `cmd`, `prefix *` (which, like
//!   Claude's, also matches the bare `prefix`). Aileron decides a compound
//!   line by its most restrictive command, as Claude requires every
//!   subcommand to be allowed. An allow rule also requires that the command
//!   sets no variables (`FOO=1 cmd`; Claude only strips known-safe ones) and
//!   redirects nothing into a file (Claude checks redirect targets as Edit
//!   writes).
//! - `Read(path)`: reads of the path (`fs.read`), and Grep/Glob searches and
//!   listings of it (`fs.read`/`fs.list`, best-effort as in Claude); a Read
//!   deny also denies writes there. `Edit(path)`: writes of the path by any
//!   editing tool (`fs.write`); for deny and ask also shell commands that
//!   write there. Paths are gitignore patterns resolved as Claude does:
//!   `//abs`, `~/home`, `/` relative to the settings file's root, `./x` and
//!   `x/y` relative to the working directory, bare names at any depth.
//! - `WebFetch(domain:host)`, `*.host` (subdomains, not the apex),
//!   `host.*` (one label): WebFetch requests to that host.
//! - `mcp__server`, `mcp__server__*`, `mcp__server__tool`: MCP calls by
//!   Claude's tool name. `Agent(type)`: subagents of that type. Any other
//!   bare tool name (`WebSearch`, `WebFetch`, `Grep`, ...): every call of it.

use crate::Error;
use aileron_engine::paths::normalize;
use aileron_engine::pattern::PathGlob;
use aileron_engine::{Diagnostics, Environment, Layer, Policy, Source};
use serde_json::{Map, Value, json};

/// The policy made from an agent's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The aileron.yaml text; it loads with Aileron's loader.
    pub yaml: String,
    /// How many of the agent's rules became Aileron rules.
    pub translated: usize,
    /// The rules that did not, each with why (and where it was written).
    pub untranslated: Vec<(String, String)>,
}

/// A file's Claude rule buckets, in Claude's order of evaluation.
const BUCKETS: [&str; 3] = ["deny", "ask", "allow"];

/// Keeps allow rules from matching a command that writes into a file by
/// redirection (`>`, `>>`, `>|`, `&>`; not `2>&1`): Claude checks those
/// targets as Edit writes.
const FILE_REDIRECT: &str = r">[>|]?\s*[^&>\s]";

/// Where one settings file sits, which decides what `/path` means.
struct SettingsFile {
    /// Directory a `/path` rule is relative to, as Aileron writes it
    /// (absolute, or `~/...`), glob characters escaped.
    root: String,
}

/// One translated rule.
struct Out {
    description: String,
    /// `command` or `when`, in order.
    fields: Vec<(&'static str, Value)>,
}

/// Reads Claude Code settings files (`(path, text)`, lowest precedence
/// first) and writes their permission rules as an aileron.yaml. `cwd` is
/// the directory Claude runs in (relative rules are resolved against it),
/// `home` the user's home. An error is a file that is not valid settings
/// JSON (with file, line and column); rules that cannot be translated are
/// reported in [`Imported::untranslated`], not errors. The policy is meant
/// to be written in `cwd`; see [`claude_in`].
pub fn claude(files: &[(String, String)], cwd: &str, home: &str) -> Result<Imported, Error> {
    claude_in(files, cwd, home, cwd)
}

/// [`claude`] for a policy file written in the directory `policy_dir`:
/// paths inside it are written relative to it (`./src/**`), as the engine
/// reads them, so that the file holds no path of this machine and works
/// wherever the project is checked out. Paths outside it stay absolute (or
/// `~/…`).
pub fn claude_in(
    files: &[(String, String)],
    cwd: &str,
    home: &str,
    policy_dir: &str,
) -> Result<Imported, Error> {
    let cwd = normalize(cwd);
    let policy_dir = normalize(policy_dir);
    // The engine joins a relative path to the policy's directory as it is,
    // so a directory with glob characters keeps absolute (escaped) paths.
    let relative_to = (escape_glob(&policy_dir) == policy_dir && policy_dir != "/")
        .then_some(policy_dir.as_str());
    let mut buckets: [Vec<Out>; 3] = Default::default();
    let mut untranslated = Vec::new();
    let mut notes = Vec::new();
    let mut translated = 0;
    for (path, text) in files {
        let settings: Value = serde_json::from_str(text).map_err(|source| Error::SettingsJson {
            path: path.clone(),
            source,
        })?;
        let file = settings_file(path, &cwd, home);
        let Some(perms) = settings.get("permissions") else {
            notes.push(format!("{path}: no `permissions`"));
            continue;
        };
        let Some(perms) = perms.as_object() else {
            return Err(Error::PermissionsNotObject { path: path.clone() });
        };
        for (i, bucket) in BUCKETS.iter().enumerate() {
            let rules = match perms.get(*bucket) {
                None | Some(Value::Null) => continue,
                Some(Value::Array(rules)) => rules,
                Some(_) => {
                    return Err(Error::BucketNotList {
                        path: path.clone(),
                        bucket,
                    });
                }
            };
            for rule in rules {
                let Some(rule) = rule.as_str() else {
                    untranslated.push((
                        rule.to_string(),
                        format!("{bucket} rule in {path}: not a string"),
                    ));
                    continue;
                };
                match translate(rule, bucket, &file, &cwd) {
                    Ok((mut fields, how)) => {
                        translated += 1;
                        let mut how = how.map(|h| format!("; {h}")).unwrap_or_default();
                        if let Some(dir) = relative_to {
                            for (_, v) in &mut fields {
                                relativize(v, dir);
                            }
                            how = how.replace(&format!(" {dir}/"), " ./");
                        }
                        buckets[i].push(Out {
                            description: format!("Claude Code {bucket} `{rule}` ({path}){how}"),
                            fields,
                        });
                    }
                    Err(why) => untranslated
                        .push((rule.to_owned(), format!("{bucket} rule in {path}: {why}"))),
                }
            }
        }
        if let Some(dirs) = perms.get("additionalDirectories").and_then(Value::as_array) {
            notes.push(format!(
                "{path}: additionalDirectories {} (not translated: Aileron does not limit where the agent works)",
                Value::Array(dirs.clone())
            ));
        }
        if let Some(mode) = perms.get("defaultMode") {
            notes.push(format!(
                "{path}: defaultMode {mode} (not translated: `default: ask` below is Claude's `default` mode)"
            ));
        }
    }
    let yaml = render(files, &cwd, relative_to, &buckets, &notes, &untranslated);
    validate(&yaml, &policy_dir, home)?;
    Ok(Imported {
        yaml,
        translated,
        untranslated,
    })
}

/// Writes the `path` values in `v` that lie inside `dir` relative to it.
fn relativize(v: &mut Value, dir: &str) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    Value::String(p) if k == "path" => {
                        if p == dir {
                            *p = "./.".to_owned();
                        } else if let Some(rest) =
                            p.strip_prefix(dir).and_then(|r| r.strip_prefix('/'))
                        {
                            *p = format!("./{rest}");
                        }
                    }
                    _ => relativize(x, dir),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|x| relativize(x, dir)),
        _ => {}
    }
}

/// Loads `yaml` as the project's aileron.yaml would be.
fn validate(yaml: &str, cwd: &str, home: &str) -> Result<(), Error> {
    let source = Source {
        name: format!("{}/aileron.yaml", cwd.trim_end_matches('/')),
        text: yaml.to_owned(),
        layer: Layer::Project,
        base_dir: cwd.to_owned(),
    };
    Policy::from_sources(&[source], &Environment::new(home))
        .map(drop)
        .map_err(|errors| Error::GeneratedPolicy(Diagnostics(errors)))
}

fn settings_file(path: &str, cwd: &str, home: &str) -> SettingsFile {
    let abs = aileron_engine::paths::absolute(path, cwd, Some(home));
    let dir = aileron_engine::paths::parent(&abs);
    let user_dir = normalize(&format!("{home}/.claude"));
    let root = if dir == user_dir {
        // User settings: `/path` is relative to `~/.claude/`.
        "~/.claude".to_owned()
    } else if abs.ends_with("/.claude/settings.local.json") {
        // Local settings: the original working directory.
        escape_glob(cwd)
    } else if let Some(project) = dir.strip_suffix("/.claude") {
        // Project settings: the project root, the parent of `.claude/`.
        escape_glob(if project.is_empty() { "/" } else { project })
    } else {
        // A file given like `--settings FILE`: its directory.
        escape_glob(dir)
    };
    SettingsFile { root }
}

/// One rule's Aileron fields, and a note on how it was read; or why not.
type Translation = (Vec<(&'static str, Value)>, Option<String>);

fn translate(
    rule: &str,
    bucket: &str,
    file: &SettingsFile,
    cwd: &str,
) -> Result<Translation, String> {
    let rule = rule.trim();
    let (tool, content) = match rule.find('(') {
        Some(open) => {
            let Some(inner) = rule[open + 1..].strip_suffix(')') else {
                return Err("not a rule: `(` without a closing `)` at the end".into());
            };
            (rule[..open].trim(), Some(inner.trim()))
        }
        None if rule.contains(')') => return Err("not a rule: `)` without `(`".into()),
        None => (rule, None),
    };
    if tool.is_empty() {
        return Err("not a rule: no tool name".into());
    }
    if !tool
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*'))
    {
        return Err(format!("`{tool}` is not a tool name"));
    }
    // `Bash(*)` is `Bash`; `Tool()` is not a pattern at all.
    let content = match content {
        Some("") => return Err("empty parentheses: Claude reads no pattern here".into()),
        Some("*") if tool == "Bash" => None,
        c => c,
    };
    if let Some(rest) = tool.strip_prefix("mcp__") {
        if content.is_some() {
            return Err(
                "Claude skips `mcp__…(…)` rules in settings files (they only work with --disallowedTools)"
                    .into(),
            );
        }
        return mcp(rest, tool, bucket);
    }
    if tool.contains('*') {
        if content.is_some() {
            return Err("a tool-name wildcard with a pattern in parentheses".into());
        }
        return tool_glob(tool, bucket);
    }
    let content = match content {
        None => return Ok((bare(tool, bucket), None)),
        Some(c) => c,
    };
    match tool {
        "Bash" => bash(content, bucket),
        "Read" | "Edit" => path_rule(tool, content, bucket, file, cwd),
        "WebFetch" => web_fetch(content),
        "Agent" | "Task" => {
            if let Some((param, _)) = param_form(content) {
                return Err(param_reason(tool, param));
            }
            Ok((
                vec![(
                    "when",
                    json!({"tool.name": tool, "tool.input.subagent_type": content}),
                )],
                None,
            ))
        }
        "Write" | "MultiEdit" | "NotebookEdit" => Err(format!(
            "Claude never consults {tool}(…) path rules (Edit(…) rules cover every editing tool); write it as Edit({content})"
        )),
        "PowerShell" => Err(
            "PowerShell rules match case-insensitively with aliases canonicalised; Aileron analyses commands as bash, so it cannot match them the same way"
                .into(),
        ),
        "Cd" => Err("Cd(…) rules only govern the /cd command, which is not a tool call Aileron sees".into()),
        _ => match param_form(content) {
            Some((param, _)) => Err(param_reason(tool, param)),
            None => Err(format!(
                "Aileron does not know what Claude matches `{content}` against for the {tool} tool"
            )),
        },
    }
}

/// `name:value` with `name` an identifier: Claude's `Tool(param:value)`.
fn param_form(content: &str) -> Option<(&str, &str)> {
    let (name, value) = content.split_once(':')?;
    let ident = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    ident.then_some((name, value))
}

fn param_reason(tool: &str, param: &str) -> String {
    if matches!(
        param,
        "command" | "file_path" | "path" | "notebook_path" | "url"
    ) {
        format!(
            "Claude ignores a {tool}({param}:…) rule on the tool's primary field (with a warning)"
        )
    } else {
        format!(
            "{tool}({param}:…) matches a parameter of the tool call; Aileron's import does not translate parameter rules"
        )
    }
}

/// A bare tool name: every call of that tool.
fn bare(tool: &str, bucket: &str) -> Vec<(&'static str, Value)> {
    match tool {
        "Bash" => {
            let mut when = Map::new();
            when.insert("type".into(), json!("shell.exec"));
            if bucket == "allow" {
                when.insert("any".into(), no_file_redirect());
            }
            vec![("when", Value::Object(when))]
        }
        "Read" => vec![("when", json!({"type": {"in": ["fs.read", "fs.list"]}}))],
        "Edit" => {
            let when = if bucket == "allow" {
                json!({"type": "fs.write"})
            } else {
                json!({"any": [
                    {"type": "fs.write"},
                    {"type": "shell.exec", "not": {"shell.writes": {"equals": []}}},
                ]})
            };
            vec![("when", when)]
        }
        _ => vec![("when", json!({"tool.name": tool}))],
    }
}

/// "Writes nothing, or redirects into no file" (for `any:`).
fn no_file_redirect() -> Value {
    json!([
        {"shell.writes": {"equals": []}},
        {"not": {"shell.line": {"pattern": FILE_REDIRECT}}},
    ])
}

/// `*`, `mcp__*`, `Web*` (deny and ask only).
fn tool_glob(tool: &str, bucket: &str) -> Result<Translation, String> {
    if bucket == "allow" {
        return Err(
            "Claude does not accept wildcards in allow tool names, except after `mcp__<server>__`"
                .into(),
        );
    }
    if tool == "*" {
        return Ok((
            vec![("when", json!({"type": {"exists": true}}))],
            Some("every tool".into()),
        ));
    }
    let glob = tool.replace('?', "\\?");
    let by_name = json!({"tool.name": {"glob": glob}});
    let when = if aileron_engine::glob::Glob::plain(&glob).is_match("Bash") {
        // Shell lines carry no tool name.
        json!({"any": [by_name, {"type": "shell.exec"}]})
    } else {
        by_name
    };
    Ok((vec![("when", when)], None))
}

/// `mcp__server`, `mcp__server__*`, `mcp__server__tool`, `mcp__server__get_*`,
/// matched on Claude's own tool name (the server name in it is Claude's
/// normalised one).
fn mcp(rest: &str, tool: &str, bucket: &str) -> Result<Translation, String> {
    let (server, name) = rest.split_once("__").unwrap_or((rest, ""));
    if server.contains('*') {
        // `mcp__*`: deny and ask only.
        return tool_glob(tool, bucket);
    }
    if server.is_empty() {
        return Err("no server name after `mcp__`".into());
    }
    let when = if name.is_empty() || name == "*" {
        json!({"type": "mcp.call", "tool.name": {"glob": format!("mcp__{server}__*")}})
    } else if name.contains('*') {
        json!({"type": "mcp.call", "tool.name": {"glob": tool}})
    } else {
        json!({"type": "mcp.call", "tool.name": tool})
    };
    Ok((vec![("when", when)], None))
}

fn bash(content: &str, bucket: &str) -> Result<Translation, String> {
    const PARAMS: &[&str] = &[
        "command",
        "description",
        "timeout",
        "run_in_background",
        "dangerouslyDisableSandbox",
    ];
    if let Some((param, _)) = param_form(content).filter(|(p, _)| PARAMS.contains(p)) {
        return Err(param_reason("Bash", param));
    }
    if let Some(c) = content
        .chars()
        .find(|c| matches!(c, '"' | '\'' | '\\' | '$' | '`'))
    {
        return Err(format!(
            "the pattern contains `{c}`: Claude matches the command as typed, Aileron the command with quotes, escapes and variables decoded, so the two cannot be made to agree"
        ));
    }
    let compound = content.contains(['\n', ';', '|'])
        || content.contains("&&")
        || content
            .match_indices('&')
            .any(|(i, _)| !content[..i].ends_with('>') && !content[i + 1..].starts_with('>'));
    if compound {
        return Err(
            "the pattern spans several commands; Claude matches each part of a compound command on its own, so this rule never matches"
                .into(),
        );
    }
    // The legacy suffix `:*` is ` *`, only at the end.
    let pattern = match content.strip_suffix(":*") {
        Some(prefix) => format!("{prefix} *"),
        None => content.to_owned(),
    };
    // Aileron matches the command's words joined by single spaces.
    let glob = pattern.split_whitespace().collect::<Vec<_>>().join(" ");
    if glob == "*" {
        return Ok((bare("Bash", bucket), None));
    }
    // Claude's only wildcard is `*`.
    let glob = glob.replace('?', "\\?");
    let mut fields = vec![("command", json!(glob))];
    if bucket == "allow" {
        let mut when = Map::new();
        // Claude's allow rules only look past known-safe assignments
        // (commands that set variables themselves are another matter).
        const SETTERS: &[&str] = &[
            "export",
            "unset",
            "declare",
            "typeset",
            "readonly",
            "local",
            "read",
            "mapfile",
            "readarray",
            "let",
            "printf",
            "env",
        ];
        let first = glob.split(' ').next().unwrap_or_default();
        let how = if !first.contains('*') && !SETTERS.contains(&first) {
            when.insert("shell.env_changes".into(), json!({"equals": []}));
            "not when the command is run with variable assignments (`FOO=1 cmd`) or redirects output into a file, which Claude checks apart"
        } else {
            "not when the command redirects output into a file, which Claude checks as an Edit"
        };
        when.insert("any".into(), no_file_redirect());
        fields.push(("when", Value::Object(when)));
        return Ok((fields, Some(how.into())));
    }
    Ok((fields, None))
}

fn path_rule(
    tool: &str,
    content: &str,
    bucket: &str,
    file: &SettingsFile,
    cwd: &str,
) -> Result<Translation, String> {
    const PARAMS: &[&str] = &[
        "file_path",
        "offset",
        "limit",
        "pages",
        "old_string",
        "new_string",
        "replace_all",
    ];
    if let Some((param, _)) = param_form(content).filter(|(p, _)| PARAMS.contains(p)) {
        return Err(param_reason(tool, param));
    }
    let glob = claude_path(content, bucket, file, cwd)?;
    let cautious = bucket != "allow";
    // gitignore: a pattern that names a directory covers what is inside.
    let mut targets = vec![glob.clone()];
    if cautious && !glob.ends_with("/**") {
        targets.push(format!("{glob}/**"));
    }
    let path_any = |field: &str, paths: &[String]| -> Value {
        let conds: Vec<Value> = paths
            .iter()
            .map(|p| json!({ field: {"path": p} }))
            .collect();
        if conds.len() == 1 {
            conds.into_iter().next().unwrap_or_default()
        } else {
            json!({ "any": conds })
        }
    };
    let with_type = |ty: Value, cond: Value| -> Value {
        let mut m = Map::new();
        m.insert("type".into(), ty);
        if let Value::Object(c) = cond {
            m.extend(c);
        }
        Value::Object(m)
    };
    let mut branches = Vec::new();
    let mut how = None;
    if tool == "Read" {
        // Grep and Glob search or list a directory: all of it is readable
        // when everything below it is.
        let mut reads = targets.clone();
        if let Some(dir) = glob.strip_suffix("/**").filter(|d| !d.is_empty()) {
            reads.push(dir.to_owned());
        }
        branches.push(with_type(
            json!({"in": ["fs.read", "fs.list"]}),
            path_any("fs.path", &reads),
        ));
        if bucket == "deny" {
            // A Read deny also blocks Edit/Write on the path.
            branches.push(with_type(json!("fs.write"), path_any("fs.path", &targets)));
            branches.push(with_type(
                json!("shell.exec"),
                path_any("shell.writes", &targets),
            ));
            how = Some("also denies writing there, as Claude does".to_owned());
        }
    } else {
        branches.push(with_type(json!("fs.write"), path_any("fs.path", &targets)));
        if cautious {
            // Claude checks a command's redirect targets as Edit writes.
            branches.push(with_type(
                json!("shell.exec"),
                path_any("shell.writes", &targets),
            ));
        }
    }
    for b in &branches {
        for p in paths_in(b) {
            // Any absolute directory stands for `~` here.
            let expanded = match p.strip_prefix('~') {
                Some(rest) => format!("/h{rest}"),
                None => p.clone(),
            };
            PathGlob::new(&expanded)
                .map_err(|e| format!("invalid path pattern `{content}`: {e}"))?;
        }
    }
    let when = if branches.len() == 1 {
        branches.pop().unwrap_or_default()
    } else {
        json!({ "any": branches })
    };
    let shown = if glob == content {
        how
    } else {
        Some(match how {
            Some(h) => format!("path {glob}; {h}"),
            None => format!("path {glob}"),
        })
    };
    Ok((vec![("when", when)], shown))
}

/// The `path` arguments in a matcher (to check they compile).
fn paths_in(v: &Value) -> Vec<String> {
    match v {
        Value::Object(m) => m
            .iter()
            .flat_map(|(k, v)| match (k.as_str(), v) {
                ("path", Value::String(p)) => vec![p.clone()],
                _ => paths_in(v),
            })
            .collect(),
        Value::Array(items) => items.iter().flat_map(paths_in).collect(),
        _ => Vec::new(),
    }
}

/// A Claude Read/Edit path pattern as an Aileron path glob: absolute, or
/// below `~/`.
fn claude_path(
    pattern: &str,
    bucket: &str,
    file: &SettingsFile,
    cwd: &str,
) -> Result<String, String> {
    if pattern.starts_with('!') {
        return Err("negated patterns (`!…`) have no meaning in a permission rule".into());
    }
    let cwd = escape_glob(cwd);
    let (mut glob, anchored) = if let Some(rest) = pattern.strip_prefix("//") {
        (format!("/{rest}"), true)
    } else if pattern == "~" || pattern.starts_with("~/") {
        (format!("~/{}", pattern[1..].trim_start_matches('/')), true)
    } else if pattern.starts_with('~') {
        return Err("`~user` paths are not supported; write `//home/user/…`".into());
    } else if let Some(rest) = pattern.strip_prefix('/') {
        (format!("{}/{rest}", file.root), true)
    } else if pattern == "." || pattern == "./" {
        (format!("{cwd}/"), true)
    } else if let Some(rest) = pattern.strip_prefix("./") {
        (format!("{cwd}/{rest}"), true)
    } else {
        (pattern.to_owned(), false)
    };
    if !anchored {
        let inner = pattern.trim_end_matches('/');
        let single_dir = pattern
            .strip_suffix("/**")
            .filter(|d| !d.contains('/') && !d.is_empty());
        glob = if !inner.contains('/') {
            // A bare name matches at any depth (`.env` is `**/.env`).
            format!("{cwd}/**/{pattern}")
        } else if let (Some(dir), true) = (single_dir, bucket != "allow") {
            // deny/ask `secrets/**`: any `secrets` directory at any depth.
            format!("{cwd}/**/{dir}/**")
        } else {
            format!("{cwd}/{pattern}")
        };
    }
    if glob.ends_with('/') {
        glob.push_str("**");
    }
    Ok(match glob.strip_prefix("~/") {
        Some(rest) => format!("~{}", normalize(&format!("/{rest}"))),
        None => normalize(&glob),
    })
}

fn escape_glob(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `domain:example.com`, `domain:*.example.com`, `domain:example.*`, `domain:*`.
fn web_fetch(content: &str) -> Result<Translation, String> {
    let Some(domain) = content.strip_prefix("domain:") else {
        return match param_form(content) {
            Some((param, _)) => Err(param_reason("WebFetch", param)),
            None => Err("WebFetch rules take `domain:HOST`".into()),
        };
    };
    let domain = domain.trim().to_ascii_lowercase();
    if domain.is_empty()
        || !domain
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '*'))
    {
        return Err(format!("`{domain}` is not a domain pattern"));
    }
    let host = if domain == "*" {
        None
    } else if !domain.contains('*') {
        Some(json!(domain))
    } else {
        // `*.` in front: one or more labels (any subdomain, not the apex);
        // any other `*` stays within one label.
        let (sub, rest) = match domain.strip_prefix("*.") {
            Some(rest) => (r"([^.]+\.)+", rest),
            None => ("", domain.as_str()),
        };
        let body: Vec<String> = rest
            .split('*')
            .map(|part| part.replace('.', r"\."))
            .collect();
        Some(json!({"pattern": format!("^{sub}{}$", body.join("[^.]*"))}))
    };
    let mut when = Map::new();
    when.insert("type".into(), json!("http.request"));
    when.insert("tool.name".into(), json!("WebFetch"));
    if let Some(h) = host {
        when.insert("http.host".into(), h);
    }
    Ok((vec![("when", Value::Object(when))], None))
}

fn render(
    files: &[(String, String)],
    cwd: &str,
    relative_to: Option<&str>,
    buckets: &[Vec<Out>; 3],
    notes: &[String],
    untranslated: &[(String, String)],
) -> String {
    let mut y = String::new();
    y.push_str("# Generated by `aileron import claude` from Claude Code's permission rules in:\n");
    for (path, _) in files {
        y.push_str(&format!("#   {path}\n"));
    }
    let resolved = match relative_to {
        Some(dir) if dir == cwd => {
            "# Claude's relative paths were resolved against the directory of this file,\n\
             # and paths inside it are written relative to it (`./…`).\n"
                .to_owned()
        }
        Some(_) => {
            "# Claude's relative paths were resolved against the directory `aileron import`\n\
             # ran in; paths inside this file's directory are written relative to it (`./…`).\n"
                .to_owned()
        }
        None => format!("# Relative paths were resolved against {cwd}.\n"),
    };
    y.push_str(&resolved);
    y.push_str(
        "# Claude checks deny, then ask, then allow; Aileron's default priorities\n\
         # (deny 200 > ask 100 > allow 50) decide in the same order. Aileron's\n\
         # built-in rules and OS/language profiles apply as well.\n",
    );
    for n in notes {
        y.push_str(&format!("# {n}\n"));
    }
    y.push_str(
        "version: 1\n\n# Claude Code's default: ask for anything no rule allows.\ndefault: ask\n",
    );
    for (bucket, rules) in BUCKETS.iter().zip(buckets) {
        if rules.is_empty() {
            continue;
        }
        y.push_str(&format!("\n{bucket}:\n"));
        for r in rules {
            y.push_str(&format!("  - description: {}\n", json!(r.description)));
            for (k, v) in &r.fields {
                y.push_str(&format!("    {k}: {}\n", flow(v)));
            }
        }
    }
    y.push_str(
        "\n# Claude Code also lets Read, Grep and Glob read the working directory\n\
         # without asking. To do the same, add to `allow:`\n\
         #   - {description: \"reads in the project\", when: {type: {in: [fs.read, fs.list]}, fs.path: {path: \"./**\"}}}\n",
    );
    if !untranslated.is_empty() {
        y.push_str("\n# Not translated:\n");
        for (rule, why) in untranslated {
            y.push_str(&format!("#   {rule}: {why}\n"));
        }
    }
    y
}

/// A JSON value as a YAML flow node: strings quoted, simple keys bare.
fn flow(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| {
                    let bare = k
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'));
                    let key = if bare && !k.is_empty() {
                        k.clone()
                    } else {
                        json!(k).to_string()
                    };
                    format!("{key}: {}", flow(v))
                })
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}
