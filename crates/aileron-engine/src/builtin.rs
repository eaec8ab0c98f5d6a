//! Layer 1: the built-in rules of SPEC 8.
//!
//! Structural rules deny tampering with Aileron itself and a few
//! catastrophic commands; nothing can cancel or outrank them. Dynamic rules
//! ask about commands a static policy cannot judge (`| sh`, `eval`, inline
//! interpreters, ...); a policy may cancel them by id with `override:`.

use crate::action::{Action, FieldPath, Lookup};
use crate::pattern::{Cond, Matcher, PathSet};
use crate::rule::{Decision, Layer, Origin, Rule};
use aileron_shell::tags;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Priority of structural rules: above anything a policy can reasonably write.
pub const STRUCTURAL_PRIORITY: i64 = 1_000_000;
/// Priority of the dynamic ask rules (SPEC 7).
pub const DYNAMIC_PRIORITY: i64 = 150;

/// The facts about this machine the built-ins need.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Environment {
    /// The user's home directory.
    pub home: String,
    /// `$AILERON_DATA`, default `~/.aileron`.
    pub data_dir: String,
    /// More files to protect from the agent, e.g. hook configurations Aileron installed.
    pub protected_files: Vec<String>,
}

impl Environment {
    pub fn new(home: &str) -> Environment {
        Environment {
            home: home.to_owned(),
            data_dir: format!("{home}/.aileron"),
            protected_files: Vec::new(),
        }
    }
}

/// Checks the YAML dialect cannot express.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Check {
    /// Writes to policy files, Aileron's data, hook configs.
    ProtectedWrite(Protected),
    /// Setting, exporting or unsetting `SHELL` or `AILERON_*`.
    ProtectedEnv,
    /// Reading tokens and databases under the data directory.
    SecretRead { data_dir: String },
}

/// What "protected" means for writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Protected {
    globs: PathSet,
    /// Concrete protected paths: a glob target (`rm *.yaml`) is tested
    /// against them, and deleting a directory that holds one is tampering.
    files: Vec<String>,
}

/// Programs for which a directory argument means "everything below it".
const RECURSIVE_WRITERS: &[&str] = &[
    "rm", "rmdir", "shred", "find", "git", "rsync", "chmod", "chown", "mv",
];
/// Programs that may name the data directory without reading secrets.
const HARMLESS_DIR_READERS: &[&str] = &[
    "ls", "stat", "test", "[", "du", "file", "cd", "pwd", "mkdir",
];

impl Check {
    pub fn is_match(&self, action: &Action) -> bool {
        match self {
            Check::ProtectedWrite(p) => {
                let binary = basename(action.facet_str("shell", "binary").unwrap_or_default());
                let recursive = RECURSIVE_WRITERS.contains(&binary);
                written_paths(action).any(|path| p.covers(path, recursive))
            }
            Check::ProtectedEnv => match action.lookup(&FieldPath::Facet(vec![
                "shell".into(),
                "env_changes".into(),
            ])) {
                Some(Lookup::Json(Value::Array(names))) => names
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|n| n == "SHELL" || n.starts_with("AILERON_")),
                _ => false,
            },
            Check::SecretRead { data_dir } => {
                let binary = basename(action.facet_str("shell", "binary").unwrap_or_default());
                let bulk = reads_directories_whole(action, binary);
                touched_paths(action).any(|path| is_secret(path, data_dir, binary, bulk))
            }
        }
    }
}

impl Protected {
    fn covers(&self, path: &str, recursive: bool) -> bool {
        if has_glob_chars(path) {
            let Ok(glob) = globset::GlobBuilder::new(path)
                .literal_separator(true)
                .build()
            else {
                return true; // an unreadable target could be anything
            };
            let m = glob.compile_matcher();
            let dir = crate::paths::parent(path);
            let siblings = [format!("{dir}/aileron.yaml"), format!("{dir}/.aileron")];
            return self.files.iter().chain(&siblings).any(|f| m.is_match(f))
                || (recursive
                    && self
                        .files
                        .iter()
                        .any(|f| m.is_match(crate::paths::parent(f))));
        }
        self.globs.is_match(path) || (recursive && self.files.iter().any(|f| is_ancestor(path, f)))
    }
}

fn is_secret(path: &str, data_dir: &str, binary: &str, bulk: bool) -> bool {
    const SECRET_NAMES: &[&str] = &["admin.token", "aileron.db"];
    if has_glob_chars(path) {
        let Ok(glob) = globset::GlobBuilder::new(path)
            .literal_separator(true)
            .build()
        else {
            return true;
        };
        let m = glob.compile_matcher();
        return SECRET_NAMES
            .iter()
            .any(|n| m.is_match(format!("{data_dir}/{n}")))
            || m.is_match(format!("{data_dir}/tokens/x.token"));
    }
    if path == data_dir {
        return !HARMLESS_DIR_READERS.contains(&binary);
    }
    if is_ancestor(path, data_dir) {
        // Naming `~` is fine; copying or searching all of it reads the secrets too.
        return bulk;
    }
    let Some(inside) = path
        .strip_prefix(data_dir)
        .and_then(|r| r.strip_prefix('/'))
    else {
        return false;
    };
    let name = basename(inside);
    name.ends_with(".token")
        || name.ends_with(".key")
        || name.ends_with(".pem")
        || name.contains(".db")
        || inside.starts_with("tokens/")
        || inside.starts_with("secrets/")
}

/// Archivers and recursive copies or searches read everything below a directory.
fn reads_directories_whole(action: &Action, binary: &str) -> bool {
    const ARCHIVERS: &[&str] = &["tar", "zip", "7z", "rsync", "scp", "cpio", "pax"];
    const RECURSIVE_WHEN_ASKED: &[&str] = &["cp", "grep", "egrep", "fgrep", "chmod", "chown"];
    if ARCHIVERS.contains(&binary) {
        return true;
    }
    // An agent's search tool (Grep, grep_search, ...) reads everything below its path.
    if action.kind == "fs.read" && action.facet_str("fs", "op") == Some("search") {
        return true;
    }
    RECURSIVE_WHEN_ASKED.contains(&binary)
        && shell_list(action, "argv").skip(1).any(|a| {
            a == "--recursive"
                || a == "--archive"
                || a.strip_prefix('-')
                    .is_some_and(|f| !f.starts_with('-') && f.contains(['r', 'R', 'a']))
        })
}

fn is_ancestor(dir: &str, file: &str) -> bool {
    dir == "/"
        || file
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn has_glob_chars(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn shell_list<'a>(action: &'a Action, field: &str) -> impl Iterator<Item = &'a str> {
    action
        .facets
        .get("shell")
        .and_then(|s| s.get(field))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn written_paths(action: &Action) -> impl Iterator<Item = &str> {
    let fs_write = match action.kind.as_str() {
        "fs.read" | "fs.list" => None,
        k if k.starts_with("fs.") => action.facet_str("fs", "path"),
        _ => None,
    };
    shell_list(action, "writes").chain(fs_write)
}

fn touched_paths(action: &Action) -> impl Iterator<Item = &str> {
    let fs_path = action
        .kind
        .starts_with("fs.")
        .then(|| action.facet_str("fs", "path"))
        .flatten();
    shell_list(action, "writes")
        .chain(shell_list(action, "reads"))
        .chain(fs_path)
}

fn has_tag(tag: &str) -> Matcher {
    Matcher::Field(
        FieldPath::Tags,
        Cond::Contains {
            lower: tag.to_owned(),
            value: tag.into(),
        },
    )
}

fn builtin_rule(
    id: &str,
    decision: Decision,
    description: &str,
    matcher: Matcher,
    structural: bool,
) -> Rule {
    let origin = Origin {
        file: "<builtin>".into(),
        line: 0,
        col: 0,
    };
    let mut r = Rule::new(format!("builtin:{id}"), decision, Layer::Builtin, origin);
    r.explicit_id = true;
    r.description = Some(description.to_owned());
    r.priority = if structural {
        STRUCTURAL_PRIORITY
    } else {
        DYNAMIC_PRIORITY
    };
    r.structural = structural;
    r.pattern = format!("built-in {id}");
    r.matcher = matcher;
    r
}

/// Agents' hook configurations, in any project.
const HOOK_CONFIGS: &[&str] = &[
    "/**/.claude/settings.json",
    "/**/.claude/settings.local.json",
    "/**/.codex/hooks.json",
    "/**/.codex/config.toml",
    "/**/.gemini/settings.json",
    "/**/.cursor/hooks.json",
    "/**/.clinerules/hooks",
    "/**/.clinerules/hooks/**",
    "/**/.opencode/plugin/**",
    "/**/.opencode/plugins/**",
    "/**/opencode.json",
];
/// Agents' hook configurations under the home directory.
const HOME_HOOK_CONFIGS: &[&str] = &[
    "Documents/Cline/Hooks/**",
    "Documents/Cline/Rules/Hooks/**",
    ".config/opencode/plugin/**",
    ".config/opencode/plugins/**",
];

/// The built-in rules, protecting `policy_files` (the files in force) too.
pub fn rules(env: &Environment, policy_files: &[String]) -> Vec<Rule> {
    let home = &env.home;
    let mut globs: Vec<String> = vec![
        "/**/aileron.yaml".into(),
        "/**/aileron.yml".into(),
        "/**/.aileron".into(),
        "/**/.aileron/**".into(),
        format!("{home}/.aileron"),
        format!("{home}/.aileron/**"),
        format!("{}", env.data_dir),
        format!("{}/**", env.data_dir),
    ];
    // Where agents keep the hooks that route their tool calls to Aileron:
    // an agent that edits them can switch Aileron off.
    globs.extend(HOOK_CONFIGS.iter().map(|g| (*g).to_owned()));
    globs.extend(HOME_HOOK_CONFIGS.iter().map(|g| format!("{home}/{g}")));
    let mut files: Vec<String> = vec![format!("{home}/.aileron"), env.data_dir.clone()];
    for f in policy_files.iter().chain(&env.protected_files) {
        globs.push(globset::escape(f));
        files.push(f.clone());
    }
    let protected = Protected {
        globs: PathSet::new(globs).expect("built-in path globs are valid"),
        files,
    };
    let tagged = |tag| {
        Matcher::All(vec![
            Matcher::Field(FieldPath::Type, Cond::Equals("shell.exec".into())),
            has_tag(tag),
        ])
    };
    vec![
        builtin_rule(
            "protect-policy",
            Decision::Deny,
            "agents may not change Aileron's policy, settings, audit log or hook configuration",
            Matcher::Builtin(Check::ProtectedWrite(protected)),
            true,
        ),
        builtin_rule(
            "protect-env",
            Decision::Deny,
            "agents may not set, export or unset SHELL or AILERON_* variables",
            Matcher::All(vec![
                Matcher::Field(FieldPath::Type, Cond::Equals("shell.exec".into())),
                Matcher::Builtin(Check::ProtectedEnv),
            ]),
            true,
        ),
        builtin_rule(
            "protect-secrets",
            Decision::Deny,
            "agents may not read Aileron's tokens or database",
            Matcher::Builtin(Check::SecretRead {
                data_dir: env.data_dir.clone(),
            }),
            true,
        ),
        builtin_rule(
            "rm-root",
            Decision::Deny,
            "recursive delete of / or the home directory",
            tagged(tags::RM_ROOT),
            true,
        ),
        builtin_rule(
            "mkfs",
            Decision::Deny,
            "formatting a file system",
            tagged(tags::MKFS),
            true,
        ),
        builtin_rule(
            "dd-device",
            Decision::Deny,
            "dd onto a block device",
            tagged(tags::DD_DEVICE),
            true,
        ),
        builtin_rule(
            "fork-bomb",
            Decision::Deny,
            "fork bomb",
            tagged(tags::FORK_BOMB),
            true,
        ),
        builtin_rule(
            "unparsable",
            Decision::Ask,
            "the command line cannot be analysed (parse error or over the size or depth limit)",
            tagged(UNPARSABLE),
            true,
        ),
        builtin_rule(
            "pipe-to-shell",
            Decision::Ask,
            "pipes data into a shell or interpreter",
            tagged(tags::PIPE_TO_SHELL),
            false,
        ),
        builtin_rule(
            "eval",
            Decision::Ask,
            "eval runs a string as a command",
            tagged(tags::EVAL),
            false,
        ),
        builtin_rule(
            "base64-exec",
            Decision::Ask,
            "decodes data and runs it",
            tagged(tags::BASE64_EXEC),
            false,
        ),
        builtin_rule(
            "remote-substitution",
            Decision::Ask,
            "substitutes downloaded content into a command",
            tagged(tags::REMOTE_SUBSTITUTION),
            false,
        ),
        builtin_rule(
            "inline-interpreter",
            Decision::Ask,
            "runs a program given inline to an interpreter",
            tagged(tags::INLINE_INTERPRETER),
            false,
        ),
        builtin_rule(
            "env-exec",
            Decision::Ask,
            "sets a variable that makes a program run other code",
            tagged(tags::ENV_EXEC),
            false,
        ),
        builtin_rule(
            "opaque",
            Decision::Ask,
            "part of the command cannot be known before it runs",
            tagged(tags::OPAQUE),
            false,
        ),
        builtin_rule(
            "git-hooks",
            Decision::Ask,
            "writes git hooks or git config, which run commands later",
            Matcher::Builtin(Check::ProtectedWrite(Protected {
                globs: PathSet::new(
                    [
                        "/**/.git/hooks",
                        "/**/.git/hooks/**",
                        "/**/.git/config",
                        "/**/.gitconfig",
                    ]
                    .map(str::to_owned)
                    .to_vec(),
                )
                .expect("built-in path globs are valid"),
                files: Vec::new(),
            })),
            false,
        ),
        builtin_rule(
            "startup-files",
            Decision::Ask,
            "writes a shell startup file or SSH configuration, which run commands later",
            Matcher::Builtin(Check::ProtectedWrite(Protected {
                globs: PathSet::new(
                    [
                        ".bashrc",
                        ".bash_profile",
                        ".bash_login",
                        ".bash_logout",
                        ".profile",
                        ".zshrc",
                        ".zprofile",
                        ".zshenv",
                        ".zlogin",
                        ".config/fish/**",
                        ".ssh",
                        ".ssh/**",
                        ".config/autostart/**",
                    ]
                    .iter()
                    .map(|f| format!("{home}/{f}"))
                    .collect(),
                )
                .expect("built-in path globs are valid"),
                files: Vec::new(),
            })),
            false,
        ),
        builtin_rule(
            "doom-loop",
            Decision::Ask,
            "the agent repeated the same action three times in a row",
            Matcher::Field(FieldPath::Type, Cond::Equals("agent.doom_loop".into())),
            false,
        ),
    ]
}

/// Tag of the single action that stands for a line the analysis could not read.
pub const UNPARSABLE: &str = "unparsable";
