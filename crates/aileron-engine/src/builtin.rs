//! Layer 1: the built-in rules of SPEC 8.
//!
//! Structural rules deny tampering with Aileron itself and a few
//! catastrophic commands; nothing can cancel or outrank them. Dynamic rules
//! ask about commands a static policy cannot judge (`| sh`, `eval`, inline
//! interpreters, ...); a policy may cancel them by id with `override:`.

use crate::action::{Action, ActionType, FieldPath, Lookup};
use crate::overlap::{self, fold, has_glob_chars, overlaps_any};
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
    /// `$XDG_CONFIG_HOME` when it is set; empty: `~/.config` only.
    #[serde(default)]
    pub config_home: String,
    /// `$XDG_RUNTIME_DIR` when it is set: `aileron launch` keeps a session's
    /// shim link, socket and agent settings in `aileron/` there (else in
    /// `/tmp/aileron-UID/`).
    #[serde(default)]
    pub runtime_dir: String,
    /// The absolute directories on `PATH`, normalized: a program dropped
    /// into one runs later in place of the one the user meant.
    #[serde(default)]
    pub path_dirs: Vec<String>,
}

impl Environment {
    /// The environment of a machine whose only known fact is its home directory (tests, examples); loaders fill in the rest.
    pub fn new(home: &str) -> Environment {
        Environment {
            home: home.to_owned(),
            data_dir: format!("{home}/.aileron"),
            ..Environment::default()
        }
    }

    /// `~/.config`, and `$XDG_CONFIG_HOME` when it is elsewhere.
    pub(crate) fn config_dirs(&self) -> Vec<String> {
        let mut dirs = vec![format!("{}/.config", self.home)];
        if !self.config_home.is_empty() && self.config_home != dirs[0] {
            dirs.push(self.config_home.clone());
        }
        dirs
    }
}

/// Checks the YAML dialect cannot express.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Check {
    /// Writes to the paths of a [`Protected`] set.
    ProtectedWrite(Protected),
    /// Setting, exporting or unsetting `SHELL` or `AILERON_*`.
    ProtectedEnv,
    /// Reading tokens and databases under the data directory.
    SecretRead(Secrets),
}

/// What "protected" means for writes. Every path is compared
/// `fold`ed, as a case-insensitive file system compares it.
///
/// A write is protected when its path is a protected path or lies below a
/// protected directory, or when it is a directory that holds one (a
/// *holder*: `.claude` for `.claude/settings.json`, the project directory
/// for its `aileron.yaml`) and the command may rename, delete or replace
/// that directory or copy a tree over it (see `holder_effect`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Protected {
    /// The protected globs, then the holders derived from them.
    set: PathSet,
    /// How many of `set`'s patterns are protected globs.
    paths: usize,
    /// Holders known to exist (folded, sorted): the home directory, the
    /// directories of the policy files in force and of the launch
    /// sessions, and the directories above them. A copy or move *into*
    /// one lands in a child, which is checked by its own path.
    existing: Vec<String>,
    mode: Mode,
}

/// Which writes a [`Protected`] set matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Mode {
    /// Protected paths, and holders written by a command known to replace,
    /// move, delete or merge into them.
    Known,
    /// Holders written by a program whose effect on them is not known
    /// (`tar -x`, `unzip`, `patch`, anything not in [`holder_effect`]).
    Unknown,
    /// Both.
    Any,
}

/// What a command does to a holder it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effect {
    /// Leaves what it holds alone.
    Keeps,
    /// Renames, deletes, replaces or merges into it.
    Replaces,
    Unknown,
}

/// Programs that, given a directory, change or remove what is below it, or
/// the directory itself (`chmod 000 .claude` hides the settings too).
const REPLACERS: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "srm",
    "wipe",
    "trash",
    "trash-put",
    "gio",
    "chmod",
    "chown",
    "chgrp",
    "chattr",
    "chcon",
    "setfacl",
    "truncate",
    "find",
    "git",
    "mount",
];

/// Programs that may name the data directory without reading secrets.
const HARMLESS_DIR_READERS: &[&str] = &[
    "ls", "stat", "test", "[", "du", "file", "cd", "pwd", "mkdir",
];

impl Check {
    /// The fields every check reads (`Policy::denies_all_like` evaluates
    /// one only when they are all known).
    pub const READS: &[&str] = &["type", "shell", "fs"];

    /// Whether the built-in check holds for `action`.
    pub fn is_match(&self, action: &Action) -> bool {
        match self {
            Check::ProtectedWrite(p) => p.is_written(action),
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
            Check::SecretRead(s) => {
                let mut paths = touched_paths(action).filter(|p| s.is_near(p)).peekable();
                if paths.peek().is_none() {
                    return false;
                }
                let binary = basename(action.facet_str("shell", "binary").unwrap_or_default());
                let runs = binary == "find" && find_runs_commands(action);
                let harmless =
                    HARMLESS_DIR_READERS.contains(&binary) || (binary == "find" && !runs);
                let bulk = runs || reads_directories_whole(action, binary);
                paths.any(|path| s.is_read(path, harmless, bulk))
            }
        }
    }
}

impl Protected {
    /// Protects `globs` (absolute, unfolded); `existing` lists directories
    /// known to exist (folded, sorted).
    fn new(globs: Vec<String>, existing: &[String], mode: Mode) -> Protected {
        let mut paths: Vec<String> = globs.iter().map(|g| fold(g).into_owned()).collect();
        paths.sort();
        paths.dedup();
        let mut holders = vec!["/".to_owned()];
        for g in &paths {
            // every strict prefix that ends before a `/`, but `/**` (everything)
            holders.extend(
                g.match_indices('/')
                    .skip(1)
                    .map(|(i, _)| &g[..i])
                    .filter(|h| *h != "/**")
                    .map(str::to_owned),
            );
        }
        holders.sort();
        holders.dedup();
        holders.retain(|h| paths.binary_search(h).is_err());
        if mode == Mode::Unknown {
            // the protected paths themselves are `Known`'s
            paths.clear();
        }
        let n = paths.len();
        paths.extend(holders);
        Protected {
            set: PathSet::new(paths).expect("built-in path globs are valid"),
            paths: n,
            existing: existing.to_vec(),
            mode,
        }
    }

    fn is_written(&self, action: &Action) -> bool {
        let mut writes = written_paths(action).peekable();
        writes.peek().is_some() && writes.any(|path| self.covers(path, action))
    }

    fn covers(&self, path: &str, action: &Action) -> bool {
        let path = fold(path);
        let (is_path, holder) = if has_glob_chars(&path) {
            let Some(target) = overlap::parse(&path) else {
                // an unreadable target could be anything
                return self.mode != Mode::Unknown;
            };
            let (paths, holders) = self.set.patterns().split_at(self.paths);
            if overlaps_any(&target, paths) {
                (true, None)
            } else {
                (false, overlaps_any(&target, holders).then_some(None))
            }
        } else {
            match self.set.first_match(&path) {
                None => (false, None),
                Some(i) if i < self.paths => (true, None),
                Some(_) => (false, Some(Some(path.as_ref()))),
            }
        };
        if is_path {
            return true;
        }
        let Some(dir) = holder else {
            return false;
        };
        match (holder_effect(action, dir, &self.existing), self.mode) {
            (Effect::Keeps, _) => false,
            (_, Mode::Any) => true,
            (effect, Mode::Known) => effect == Effect::Replaces,
            (effect, Mode::Unknown) => effect == Effect::Unknown,
        }
    }
}

/// What the command that writes the holder `dir` (folded; `None`: a glob
/// that may name one) does to what it holds. It keeps it when it makes
/// directories or files (`mkdir`, `touch`, `install`, `cp` without
/// recursion: a file cannot replace a directory), or copies, moves or links
/// into a directory known to exist, where the child it makes is written
/// (and checked) under its own name; otherwise `cp -r`, `mv`, `ln`,
/// `rsync` and the [`REPLACERS`] replace it; any other program may.
fn holder_effect(action: &Action, dir: Option<&str>, existing: &[String]) -> Effect {
    let binary = basename(action.facet_str("shell", "binary").unwrap_or_default());
    let args: Vec<&str> = shell_list(action, "argv").skip(1).collect();
    let into_existing = || {
        dir.is_some_and(|dir| {
            existing.binary_search_by(|e| e.as_str().cmp(dir)).is_ok()
                && written_paths(action).any(|w| is_ancestor(dir, &fold(w)))
                && !replaces_target(binary, &args)
                && !copies_contents(binary, &args)
        })
    };
    match binary {
        "mkdir" | "touch" | "install" => Effect::Keeps,
        "cp" if !copies_trees(&args) => Effect::Keeps,
        "cp" | "mv" | "ln" | "rsync" if into_existing() => Effect::Keeps,
        "cp" | "mv" | "ln" | "rsync" => Effect::Replaces,
        b if REPLACERS.contains(&b) => Effect::Replaces,
        "" if matches!(
            action.facet_str("fs", "op"),
            Some("delete" | "move" | "rename")
        ) =>
        {
            Effect::Replaces
        }
        _ => Effect::Unknown,
    }
}

/// The option words of `args` (before `--`).
fn options<'a>(args: &'a [&'a str]) -> impl Iterator<Item = &'a str> {
    args.iter()
        .copied()
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-') && a.len() > 1)
}

fn has_short(args: &[&str], flags: &[char]) -> bool {
    options(args).any(|o| !o.starts_with("--") && o[1..].contains(flags))
}

/// A long option given as `full` or as a prefix of it (`getopt_long`
/// takes unambiguous prefixes; an ambiguous one is counted too).
fn has_long(args: &[&str], full: &[&str]) -> bool {
    options(args).any(|o| {
        let name = o.split('=').next().unwrap_or(o);
        name.len() > 2 && full.iter().any(|f| f.starts_with(name))
    })
}

/// `cp -r`, `-R`, `-a`, `--recursive`, `--archive`.
fn copies_trees(args: &[&str]) -> bool {
    has_short(args, &['r', 'R', 'a']) || has_long(args, &["--recursive", "--archive"])
}

/// `-T` (the target is replaced, never entered), `mv --exchange`, `ln -n`.
fn replaces_target(binary: &str, args: &[&str]) -> bool {
    has_short(args, &['T'])
        || has_long(args, &["--no-target-directory", "--exchange"])
        || (binary == "ln" && (has_short(args, &['n']) || has_long(args, &["--no-dereference"])))
}

/// A source that names a directory's contents (`d/.`; for rsync `d/`):
/// they are merged into the target itself.
fn copies_contents(binary: &str, args: &[&str]) -> bool {
    // The operands: with `-t DIR` all are sources, else all but the last.
    let mut operands = Vec::new();
    let mut targeted = false;
    let mut words = args.iter().copied();
    let mut options_end = false;
    while let Some(a) = words.next() {
        if options_end || !a.starts_with('-') || a == "-" {
            operands.push(a);
        } else if a == "--" {
            options_end = true;
        } else if binary != "rsync"
            && ((!a.starts_with("--") && a[1..].contains('t'))
                || has_long(&[a], &["--target-directory"]))
        {
            targeted = true;
            let value_follows = if a.starts_with("--") {
                !a.contains('=')
            } else {
                a.ends_with('t')
            };
            if value_follows {
                words.next();
            }
        }
    }
    let sources = if targeted {
        &operands[..]
    } else {
        &operands[..operands.len().saturating_sub(1)]
    };
    let dot = |s: &str| s == "." || s == ".." || s.ends_with("/.") || s.ends_with("/..");
    sources
        .iter()
        .any(|s| dot(s) || (binary == "rsync" && s.ends_with('/')))
}

/// Secrets under the data directory (folded).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Secrets {
    data_dir: String,
    /// Tokens, keys and databases below it.
    files: PathSet,
    /// The data directory and everything below it, and the directories
    /// above it: reading one whole reads the secrets.
    holders: Vec<String>,
}

/// Secrets, relative to the data directory.
const SECRET_FILES: &[&str] = &[
    "**/*.token",
    "**/*.key",
    "**/*.pem",
    "**/*.db*",
    "tokens/**",
    "secrets/**",
];

impl Secrets {
    fn new(data_dir: &str) -> Secrets {
        let data_dir = fold(data_dir).into_owned();
        let escaped = globset::escape(&data_dir);
        let mut holders = vec![escaped.clone(), format!("{escaped}/**")];
        let mut dir = data_dir.as_str();
        while dir != "/" && dir.contains('/') {
            dir = crate::paths::parent(dir);
            holders.push(globset::escape(dir));
        }
        Secrets {
            files: PathSet::new(
                SECRET_FILES
                    .iter()
                    .map(|f| format!("{escaped}/{f}"))
                    .collect(),
            )
            .expect("built-in path globs are valid"),
            data_dir,
            holders,
        }
    }

    /// Whether `path` is the data directory, lies below or above it, or is
    /// a glob: the only paths [`Secrets::is_read`] may find secret.
    fn is_near(&self, path: &str) -> bool {
        let path = fold(path);
        let data = self.data_dir.as_str();
        has_glob_chars(&path)
            || path == data
            || is_ancestor(&path, data)
            || is_ancestor(data, &path)
    }

    fn is_read(&self, path: &str, harmless: bool, bulk: bool) -> bool {
        let path = fold(path);
        let data = self.data_dir.as_str();
        if has_glob_chars(&path) {
            let Some(target) = overlap::parse(&path) else {
                return true;
            };
            return overlaps_any(&target, self.files.patterns())
                || (bulk && overlaps_any(&target, &self.holders))
                || (!harmless && overlaps_any(&target, &self.holders[..1]));
        }
        if self.files.is_match(&path) {
            return true;
        }
        if path == data {
            return !harmless;
        }
        // Naming `~` or a directory below the data directory is fine;
        // copying or searching all of it reads the secrets too.
        (is_ancestor(&path, data) || is_ancestor(data, &path)) && bulk
    }
}

/// `find` with `-exec`, `-execdir`, `-ok` or `-okdir`: it runs a command on
/// every file it walks.
fn find_runs_commands(action: &Action) -> bool {
    shell_list(action, "argv").any(|a| matches!(a, "-exec" | "-execdir" | "-ok" | "-okdir"))
}

/// Archivers and recursive copies or searches read everything below a directory.
fn reads_directories_whole(action: &Action, binary: &str) -> bool {
    // An agent's search tool (Grep, grep_search, ...) reads everything below its path.
    if action.kind == ActionType::FsRead && action.facet_str("fs", "op") == Some("search") {
        return true;
    }
    crate::command_line::reads_directories_whole(binary, shell_list(action, "argv").skip(1))
}

/// Whether `dir` is a strict ancestor of `path`.
fn is_ancestor(dir: &str, path: &str) -> bool {
    if dir == "/" {
        return path.len() > 1 && path.starts_with('/');
    }
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.starts_with('/'))
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
    let fs_write = match &action.kind {
        ActionType::FsRead | ActionType::FsList => None,
        ActionType::FsWrite => action.facet_str("fs", "path"),
        ActionType::Other(k) if k.starts_with("fs.") => action.facet_str("fs", "path"),
        _ => None,
    };
    shell_list(action, "writes").chain(fs_write)
}

fn touched_paths(action: &Action) -> impl Iterator<Item = &str> {
    let fs_path = action
        .kind
        .is_fs()
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

// What the built-ins protect, as globs: `/**/NAME` in any directory (the
// home directory too), others relative to the directory named.

/// Aileron's own files in any directory: a new `aileron.yaml` in a
/// subdirectory would become the nearest policy.
const OWN_FILES: &[&str] = &[
    "/**/aileron.yaml",
    "/**/aileron.yml",
    "/**/.aileron",
    "/**/.aileron/**",
];
/// Agents' hook configurations (and what an agent runs before every
/// command, and the MCP servers it starts), in any directory: an agent
/// that edits them can switch Aileron off.
const HOOK_CONFIGS: &[&str] = &[
    "/**/.claude/settings.json",
    "/**/.claude/settings.local.json",
    // Claude Code sources a snapshot of the user's shell before each command.
    "/**/.claude/shell-snapshots/**",
    "/**/.codex/hooks.json",
    "/**/.codex/config.toml",
    // Codex CLI sources its own snapshot before each command.
    "/**/.codex/shell_snapshots/**",
    "/**/.gemini/settings.json",
    // What an agent loads as code or as rules that let commands run
    // unasked: Claude Code's plugins (hooks, MCP servers), Gemini CLI's
    // extensions, Codex's exec-policy rules.
    "/**/.claude/plugins/**",
    "/**/.gemini/extensions/**",
    "/**/.codex/rules/**",
    "/**/.cursor/hooks.json",
    "/**/.clinerules/hooks",
    "/**/.clinerules/hooks/**",
    "/**/.opencode/plugin/**",
    "/**/.opencode/plugins/**",
    "/**/opencode.json",
    // MCP configurations whose servers `aileron install` puts behind the
    // gateway (Codex's, Gemini CLI's and opencode's are above).
    "/**/.mcp.json",
    "/**/.cursor/mcp.json",
    "/**/opencode.jsonc",
];
/// Agents' hook configurations under the home directory.
const HOME_HOOK_CONFIGS: &[&str] = &["Documents/Cline/Hooks/**", "Documents/Cline/Rules/Hooks/**"];
/// Agents' hook configurations under the configuration directories.
const CONFIG_HOOK_CONFIGS: &[&str] = &["opencode/plugin/**", "opencode/plugins/**"];
/// Managed (system-wide) agent settings, which hold hooks too.
const SYSTEM_HOOK_CONFIGS: &[&str] = &[
    "/etc/claude-code/**",
    "/Library/Application Support/ClaudeCode/**",
    "/etc/gemini-cli/**",
    "/Library/Application Support/GeminiCli/**",
    "/etc/cursor/hooks.json",
    "/Library/Application Support/Cursor/hooks.json",
];
/// Where `aileron launch` keeps a session's shim link (the agent's
/// `$SHELL`), socket and agent settings without `$XDG_RUNTIME_DIR`.
const LAUNCH_DIRS: &[&str] = &["/tmp/aileron-*", "/tmp/aileron-*/**"];

/// Git files that make git run a command later (hooks, `core.fsmonitor`,
/// `core.pager`, filters, aliases), or send git to another such file: a
/// `.git` file (`gitdir: ...`), `commondir`.
const GIT_FILES: &[&str] = &[
    "/**/.git",
    "/**/.git/config",
    "/**/.git/config.worktree",
    "/**/.git/commondir",
    "/**/.git/hooks/**",
    "/**/.git/modules/**/config",
    "/**/.git/modules/**/config.worktree",
    "/**/.git/modules/**/commondir",
    "/**/.git/modules/**/hooks/**",
    "/**/.git/worktrees/**/config.worktree",
    "/**/.git/worktrees/**/commondir",
    "/**/.gitconfig",
    "/etc/gitconfig",
];
/// Git's configuration under the configuration directories (`ignore` runs nothing).
const CONFIG_GIT_FILES: &[&str] = &["git/config", "git/attributes"];

/// Files a login or interactive shell, a desktop session or ssh reads and
/// runs, under the home directory.
const HOME_STARTUP: &[&str] = &[
    ".profile",
    ".bashrc",
    ".bashrc.d/**",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".kshrc",
    ".pam_environment",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".xsessionrc",
    ".ssh",
    ".ssh/**",
];
/// ... under the configuration directories.
const CONFIG_STARTUP: &[&str] = &[
    "fish/**",
    "autostart/**",
    "environment.d/**",
    "systemd/user/**",
];
/// ... for every user.
const SYSTEM_STARTUP: &[&str] = &[
    "/etc/profile",
    "/etc/profile.d/**",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/environment",
    "/etc/zshenv",
    "/etc/zprofile",
    "/etc/zshrc",
    "/etc/zlogin",
    "/etc/zsh/**",
    "/etc/fish/**",
    "/etc/ssh/**",
];
/// Programs under the home directory, on `PATH` or put there by
/// `~/.profile` once the directory exists; those of every directory on
/// `PATH` are added.
const HOME_PROGRAMS: &[&str] = &[".local/bin/*"];

/// How the kernel can lock a path of the self-protection tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lock {
    /// The table names everything below it (`X/**`): the whole directory.
    Tree,
    /// The table names the path itself: lock it when it is a file (a
    /// directory's contents are another entry's, or nobody's).
    Entry,
}

/// The paths the kernel keeps read-only under `aileron launch --enforce
/// files`, from the same tables as the built-in rules: the entries that
/// name a path or a whole directory (those with a wildcard inside stay the
/// analysis' alone) below each of `dirs` (the working directory and those
/// above it), the home directory and the configuration directories.
/// Claude Code's and Codex's shell snapshots are left out: they write them themselves.
pub fn kernel_locked(env: &Environment, dirs: &[String]) -> Vec<(String, Lock)> {
    let concrete = |p: &str| -> Option<(String, Lock)> {
        let (path, lock) = match p.strip_suffix("/**") {
            Some(dir) => (dir, Lock::Tree),
            None => (p, Lock::Entry),
        };
        (!path.contains(['*', '?', '['])
            && !path.contains("shell-snapshots")
            && !path.contains("shell_snapshots"))
        .then(|| (path.to_owned(), lock))
    };
    let mut out = Vec::new();
    for pattern in OWN_FILES.iter().chain(HOOK_CONFIGS).chain(GIT_FILES) {
        if let Some(rel) = pattern.strip_prefix("/**/") {
            for dir in dirs {
                let dir = dir.trim_end_matches('/');
                out.extend(concrete(&format!("{dir}/{rel}")));
            }
        }
    }
    let home = env.home.trim_end_matches('/');
    for pattern in HOME_HOOK_CONFIGS.iter().chain(HOME_STARTUP) {
        out.extend(concrete(&format!("{home}/{pattern}")));
    }
    for pattern in OWN_FILES.iter().chain(HOOK_CONFIGS).chain(GIT_FILES) {
        if let Some(rel) = pattern.strip_prefix("/**/") {
            out.extend(concrete(&format!("{home}/{rel}")));
        }
    }
    for config in env.config_dirs() {
        for pattern in CONFIG_HOOK_CONFIGS
            .iter()
            .chain(CONFIG_GIT_FILES)
            .chain(CONFIG_STARTUP)
        {
            out.extend(concrete(&format!("{config}/{pattern}")));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `list`, each entry below `dir`.
fn under(dir: &str, list: &[&str]) -> Vec<String> {
    let dir = globset::escape(dir.trim_end_matches('/'));
    list.iter().map(|g| format!("{dir}/{g}")).collect()
}

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|g| (*g).to_owned()).collect()
}

/// Directories known to exist (folded, sorted): the home directory, the
/// directories of the policy files in force, those `aileron launch` keeps
/// its sessions in, and all above them.
fn existing_dirs(env: &Environment, policy_files: &[String]) -> Vec<String> {
    let mut out = vec!["/".to_owned()];
    let dirs = policy_files.iter().map(|f| crate::paths::parent(f));
    let fixed = [env.home.as_str(), "/tmp", env.runtime_dir.as_str()];
    for d in fixed.into_iter().filter(|d| !d.is_empty()).chain(dirs) {
        let d = fold(&crate::paths::normalize(d)).into_owned();
        let mut dir = d.as_str();
        while dir.len() > 1 {
            out.push(dir.to_owned());
            dir = crate::paths::parent(dir);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The built-in rules, protecting `policy_files` (the files in force) too.
pub fn rules(env: &Environment, policy_files: &[String]) -> Vec<Rule> {
    let home = &env.home;
    let config_dirs = env.config_dirs();
    let existing = existing_dirs(env, policy_files);
    let mut own = owned(OWN_FILES);
    own.extend(owned(HOOK_CONFIGS));
    own.extend(owned(SYSTEM_HOOK_CONFIGS));
    own.extend(owned(LAUNCH_DIRS));
    own.extend(under(home, HOME_HOOK_CONFIGS));
    for d in &config_dirs {
        own.extend(under(d, CONFIG_HOOK_CONFIGS));
    }
    for dir in [format!("{home}/.aileron"), env.data_dir.clone()] {
        own.push(globset::escape(&dir));
        own.extend(under(&dir, &["**"]));
    }
    if !env.runtime_dir.is_empty() {
        own.extend(under(&env.runtime_dir, &["aileron", "aileron/**"]));
    }
    own.extend(
        policy_files
            .iter()
            .chain(&env.protected_files)
            .map(|f| globset::escape(f)),
    );
    let mut git = owned(GIT_FILES);
    let mut startup = under(home, HOME_STARTUP);
    startup.extend(owned(SYSTEM_STARTUP));
    for d in &config_dirs {
        git.extend(under(d, CONFIG_GIT_FILES));
        startup.extend(under(d, CONFIG_STARTUP));
    }
    let mut programs = under(home, HOME_PROGRAMS);
    for d in &env.path_dirs {
        programs.extend(under(d, &["*"]));
    }
    let writes = |globs, mode| {
        Matcher::Builtin(Check::ProtectedWrite(Protected::new(
            globs, &existing, mode,
        )))
    };
    let tagged = |tag| {
        Matcher::All(vec![
            Matcher::Field(FieldPath::Type, Cond::Equals("shell.exec".into())),
            has_tag(tag),
        ])
    };
    let sql_tagged = |tag| {
        Matcher::All(vec![
            Matcher::Field(FieldPath::Type, Cond::Equals("sql.query".into())),
            has_tag(tag),
        ])
    };
    vec![
        builtin_rule(
            "protect-policy",
            Decision::Deny,
            "agents may not change Aileron's policy, settings, audit log or hook configuration",
            writes(own.clone(), Mode::Known),
            true,
        ),
        builtin_rule(
            "protect-policy-dirs",
            Decision::Ask,
            "writes a directory that holds Aileron's policy, data or hook configuration \
             with a program that may change what it holds",
            writes(own, Mode::Unknown),
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
            Matcher::Builtin(Check::SecretRead(Secrets::new(&env.data_dir))),
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
            "sql-unparsable",
            Decision::Ask,
            "the SQL text cannot be analysed (a statement the parser does not read, or \
             text the server may read otherwise)",
            sql_tagged(UNPARSABLE),
            true,
        ),
        builtin_rule(
            "sql-dynamic",
            Decision::Ask,
            "the SQL runs code the analysis cannot see through (a DO block, a call of a \
             function or procedure, EXECUTE of a statement not prepared here, COPY with a program)",
            sql_tagged(DYNAMIC),
            false,
        ),
        builtin_rule(
            "sql-field-call",
            Decision::Ask,
            "a qualified column (t.name, (t).name) may call a function name(t): \
             PostgreSQL reads it as a call when t has no column of that name",
            sql_tagged(FIELD_CALL),
            false,
        ),
        builtin_rule(
            "sql-write-in-read",
            Decision::Ask,
            "a statement whose form reads writes (nextval or setval, SELECT INTO)",
            sql_tagged(WRITE_IN_READ),
            false,
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
            writes(git, Mode::Any),
            false,
        ),
        builtin_rule(
            "startup-files",
            Decision::Ask,
            "writes a shell startup file or SSH configuration, which run commands later",
            writes(startup, Mode::Any),
            false,
        ),
        builtin_rule(
            "path-dirs",
            Decision::Ask,
            "writes a directory of programs on PATH, which run later in place of the ones meant",
            writes(programs, Mode::Any),
            false,
        ),
        {
            // Without it, every request of the agent to its own model
            // would be asked about under a default of `ask`.
            let mut r = builtin_rule(
                "agent-model-api",
                Decision::Allow,
                "the launched agent's own model API (the endpoint it was started with)",
                Matcher::All(vec![
                    Matcher::Field(FieldPath::Type, Cond::Equals("http.request".into())),
                    has_tag(AGENT_MODEL_API),
                ]),
                false,
            );
            r.priority = AGENT_MODEL_API_PRIORITY;
            r
        },
        builtin_rule(
            "doom-loop",
            Decision::Ask,
            "the agent repeated the same action three times in a row",
            // The loop's sensitivity is that of the call repeated: reading
            // the same file or listing the same directory again is
            // harmless (a policy may still ask for it by its own rule).
            Matcher::All(vec![
                Matcher::Field(FieldPath::Type, Cond::Equals("agent.doom_loop".into())),
                Matcher::Not(Box::new(Matcher::Field(
                    FieldPath::Sensitivity,
                    Cond::Equals("read".into()),
                ))),
            ]),
            false,
        ),
    ]
}

/// Tag of the single action that stands for a line the analysis could not read.
pub const UNPARSABLE: &str = "unparsable";

/// Tag the database gateway gives a statement that runs code it cannot see
/// through (`DO`, a function call, `EXECUTE` of dynamic SQL).
pub const DYNAMIC: &str = "dynamic";

/// Tag the database gateway gives a statement holding a qualified column
/// reference or a field selection (`t.name`, `(t).name`), which the server
/// reads as a call of a function `name(t)` when `t` has no such column.
pub const FIELD_CALL: &str = "field-call";

/// Tag the database gateway gives a statement whose verb reads
/// (`SELECT`, `VALUES`, `SET`, ...) but which writes: a rule written by
/// verb would take it for a read.
pub const WRITE_IN_READ: &str = "write-in-read";

/// Tag the egress proxy gives a request to the launched agent's own model
/// API (the endpoint `aileron launch` knows the agent talks to).
pub const AGENT_MODEL_API: &str = "agent-model-api";

/// Priority of `builtin:agent-model-api`: above `allow` rules, below any
/// `ask` or `deny` a policy writes about web requests.
pub const AGENT_MODEL_API_PRIORITY: i64 = 60;

#[cfg(test)]
mod kernel_locked_tests {
    use super::*;

    #[test]
    fn the_kernel_locks_what_the_rules_protect_by_name() {
        let env = Environment::new("/home/u");
        let locked = kernel_locked(&env, &["/work/p".into(), "/work".into()]);
        let has = |p: &str, l: Lock| locked.contains(&(p.to_owned(), l));
        assert!(has("/work/p/aileron.yaml", Lock::Entry));
        assert!(has("/work/aileron.yaml", Lock::Entry));
        assert!(has("/work/p/.aileron", Lock::Tree));
        assert!(has("/work/p/.git/hooks", Lock::Tree));
        assert!(has("/work/p/.git/config", Lock::Entry));
        assert!(has("/work/p/.claude/settings.json", Lock::Entry));
        assert!(has("/home/u/.bashrc", Lock::Entry));
        assert!(has("/home/u/.ssh", Lock::Tree));
        assert!(has("/home/u/.gitconfig", Lock::Entry));
        assert!(has("/home/u/.config/git/config", Lock::Entry));
        assert!(has("/home/u/.config/fish", Lock::Tree));
        // A wildcard inside, and what Claude Code writes itself: not locked.
        assert!(!locked.iter().any(|(p, _)| p.contains("modules")));
        assert!(!locked.iter().any(|(p, _)| p.contains("shell-snapshots")));
    }
}
