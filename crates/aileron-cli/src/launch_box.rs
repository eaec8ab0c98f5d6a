//! `aileron launch`: what the box gives the agent's tree under `--enforce
//! files` (`aileron_supervisor::files`).
//!
//! - Where it writes ([`writable_places`]): the project, the temporary
//!   directories, the launched agent's own state ([`AGENT_STATE`]), the
//!   package caches ([`CACHES`]) and what `settings.enforce.writable` adds.
//! - What it cannot read ([`masked`], [`denied_reads`]): the credential
//!   stores of [`aileron_engine::credentials`] that exist here, the ssh
//!   agent's socket, and the project's files whose reading a rule of the
//!   policy denies (`.env`), less what `settings.enforce.readable` gives
//!   back. Each reads as absent or empty to every program of the tree.
//! - Which host sockets it cannot connect to ([`host_sockets`]): every
//!   Unix socket listening on the host, less the session's own and what
//!   `settings.enforce.sockets` opens.

use aileron_engine::credentials::{Store, credential_stores, given_back, ssh_public};
use aileron_engine::{Action, Decision, Environment, Policy, State, VerdictSource};
use std::path::{Path, PathBuf};

/// How many entries of the project are looked at for denied reads; a
/// larger project is looked at this far, and the audit line says so.
pub const WALK_LIMIT: usize = 100_000;

/// A path a policy names: `~/` is the home directory, a relative path is
/// relative to the policy file's directory `base`.
pub fn policy_path(p: &str, home: &Path, base: &Path) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None if p == "~" => home.to_path_buf(),
        None => base.join(p),
    }
}

/// The paths to mask, existing now; `readable` as the policy names them.
pub fn masked(
    env: &Environment,
    agent: Option<&str>,
    readable: &[String],
    base: &Path,
    ssh_auth_sock: Option<&Path>,
) -> Vec<PathBuf> {
    let home = Path::new(&env.home);
    let readable: Vec<String> = readable
        .iter()
        .map(|r| policy_path(r, home, base).to_string_lossy().into_owned())
        .collect();
    let mut out = Vec::new();
    for (path, store) in credential_stores(env, agent) {
        let p = PathBuf::from(&path);
        match store {
            Store::Dir | Store::File => {
                if std::fs::symlink_metadata(&p).is_ok() {
                    out.push(p);
                }
            }
            Store::Keys => {
                let Ok(entries) = std::fs::read_dir(&p) else {
                    continue;
                };
                out.extend(
                    entries
                        .flatten()
                        .filter(|e| !ssh_public(&e.file_name().to_string_lossy()))
                        .map(|e| e.path()),
                );
            }
        }
    }
    if let Some(sock) = ssh_auth_sock.filter(|s| s.is_absolute() && s.exists()) {
        out.push(sock.to_path_buf());
    }
    out.retain(|p| !given_back(&p.to_string_lossy(), &readable));
    out.sort();
    out.dedup();
    out
}

/// The project's files (below `root`, `.git` not entered) whose reading a
/// rule of `policy` denies (not the default: a `default: deny` policy
/// masks nothing by it), and whether the walk stopped at [`WALK_LIMIT`].
pub fn denied_reads(policy: &Policy, root: &Path) -> (Vec<PathBuf>, bool) {
    if !policy.may_deny("fs.read") {
        return (Vec::new(), false);
    }
    let state = State {
        approvals: &[],
        history: &[],
    };
    let denied = |path: &Path| {
        let mut action = Action {
            kind: "fs.read".into(),
            ..Action::default()
        };
        action.facets.insert(
            "fs".into(),
            serde_json::json!({"path": path.to_string_lossy(), "op": "read"}),
        );
        action.normalize();
        let v = policy.evaluate(&action, &state);
        v.decision == Decision::Deny && v.source != VerdictSource::Default
    };
    let (mut found, mut seen, mut dirs) = (Vec::new(), 0, vec![root.to_path_buf()]);
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > WALK_LIMIT {
                return (found, true);
            }
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if e.file_name() != ".git" {
                    dirs.push(e.path());
                }
            } else if kind.is_file() && denied(&e.path()) {
                found.push(e.path());
            }
        }
    }
    found.sort();
    (found, false)
}

/// Of the masked `secrets`, those Landlock keeps unreadable too: files and
/// directories outside the `writable` places and the devices. (Inside a
/// writable place the tree makes files it must read back, which such a
/// rule would refuse; there the mount alone masks.)
pub fn kept_unreadable(secrets: &[PathBuf], writable: &[PathBuf]) -> Vec<PathBuf> {
    secrets
        .iter()
        .filter(|p| !p.starts_with("/dev") && !p.starts_with("/proc"))
        .filter(|p| !writable.iter().any(|w| p.starts_with(w)))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() || m.is_dir()))
        .cloned()
        .collect()
}

/// Directories a walk for nested repositories does not enter: dependencies
/// and build output, whose repositories (if any) git never runs hooks of.
const NOT_NESTED: &[&str] = &[".git", "node_modules", "target", ".venv", "vendor/bundle"];

/// What makes git run a command later, beyond the top repository's
/// `.git/config` and `.git/hooks` (which the built-in rules name): the
/// directory `core.hooksPath` names (`.husky`), made empty when missing so
/// that the tree cannot make it, and each nested repository's
/// `.git/config` and `.git/hooks` below `root` (a `core.fsmonitor` there
/// runs at the next `git status` in it).
pub fn git_code(root: &Path, home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let configs = [
        root.join(".git/config"),
        home.join(".gitconfig"),
        home.join(".config/git/config"),
    ];
    for hooks in configs.iter().filter_map(|c| hooks_path(c)) {
        let dir = match hooks.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => root.join(&hooks),
        };
        let _ = std::fs::create_dir_all(&dir);
        out.push(dir);
    }
    let (mut seen, mut dirs) = (0, vec![root.to_path_buf()]);
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            seen += 1;
            if seen > WALK_LIMIT {
                return out;
            }
            let path = e.path();
            let rel = path.strip_prefix(root).unwrap_or(&path);
            if !e.file_type().is_ok_and(|t| t.is_dir())
                || NOT_NESTED.iter().any(|n| rel.ends_with(n))
            {
                if e.file_name() == ".git" && dir != root {
                    let git = path;
                    out.extend([git.join("config"), git.join("hooks")]);
                }
                continue;
            }
            dirs.push(path);
        }
    }
    out
}

/// The value of `core.hooksPath` in the git configuration file `config`.
fn hooks_path(config: &Path) -> Option<String> {
    let text = std::fs::read_to_string(config).ok()?;
    let mut core = false;
    let mut found = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            core = line
                .trim_matches(['[', ']'])
                .trim()
                .eq_ignore_ascii_case("core");
        } else if core
            && let Some((k, v)) = line.split_once('=')
            && k.trim().eq_ignore_ascii_case("hookspath")
        {
            found = Some(v.trim().trim_matches('"').to_owned());
        }
    }
    found.filter(|v| !v.is_empty())
}

/// The terminals open on the host now (`/dev/pts/N`) but `own` (the
/// session's): the box covers them, so that the tree cannot read what is
/// typed in another terminal of the user's (a password) or type into it.
/// A terminal opened after launch is not among them.
pub fn other_terminals(pts: &Path, own: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(pts)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .map(|e| e.path())
        .filter(|p| !own.contains(p))
        .collect();
    out.sort();
    out
}

/// Other names, below `root`, of the files `targets` name (and of the files
/// in the directories they name): hard links made before the session,
/// through which a masked secret would be read or a locked file written.
/// The project is walked only when some target has more than one link, so
/// a launch pays one `stat` per target in the common case.
pub fn hard_link_aliases(root: &Path, targets: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut linked = std::collections::HashSet::new();
    let mut todo: Vec<PathBuf> = targets.to_vec();
    let mut looked = 0;
    while let Some(p) = todo.pop() {
        looked += 1;
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.is_dir() && looked < WALK_LIMIT {
            todo.extend(
                std::fs::read_dir(&p)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            );
        } else if m.is_file() && m.nlink() > 1 {
            linked.insert((m.dev(), m.ino()));
        }
    }
    if linked.is_empty() {
        return Vec::new();
    }
    let (mut found, mut seen, mut dirs) = (Vec::new(), 0, vec![root.to_path_buf()]);
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            seen += 1;
            if seen > WALK_LIMIT {
                return found;
            }
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                dirs.push(e.path());
            } else if kind.is_file()
                && let Ok(m) = e.metadata()
                && m.nlink() > 1
                && linked.contains(&(m.dev(), m.ino()))
                && !targets.contains(&e.path())
            {
                found.push(e.path());
            }
        }
    }
    found.sort();
    found
}

/// Each agent's own state, writable in the box when it is the agent
/// launched (`~/` is the home directory; a directory is created when
/// missing, so that the agent can keep its state on its first run).
pub const AGENT_STATE: &[(&str, &[&str])] = &[
    (
        "claude",
        // `~/.claude.json` is kept in `~/.claude` in the box (`CopiedBack`).
        &["~/.claude/"],
    ),
    ("codex", &["~/.codex/"]),
    ("gemini", &["~/.gemini/"]),
    ("qwen", &["~/.qwen/"]),
    (
        "opencode",
        &[
            "~/.local/share/opencode/",
            "~/.local/state/opencode/",
            "~/.config/opencode/",
            "~/.cache/opencode/",
        ],
    ),
    (
        "goose",
        &[
            "~/.config/goose/",
            "~/.local/share/goose/",
            "~/.local/state/goose/",
        ],
    ),
];

/// Where each agent keeps what it loads as code or as rules that let
/// commands run unasked (`aileron_engine::builtin`'s hook configurations):
/// inside its writable state, but locked in the box. Made when missing, so
/// that the agent cannot make one there in the box for its next run
/// outside it.
pub const AGENT_CODE: &[(&str, &[&str])] = &[
    ("claude", &["~/.claude/plugins/"]),
    ("codex", &["~/.codex/rules/"]),
    ("gemini", &["~/.gemini/extensions/"]),
];

/// Package managers' caches, writable in the box for any agent: downloads
/// land there (a cache entry is checked or rebuilt by its tool). Each with
/// the program whose presence on `PATH` makes launch create it when it is
/// missing (a user who never ran `npm` has no `~/.npm`, and the box would
/// refuse to make one); a file is a lock its tool takes, made empty.
pub const CACHES: &[(&str, Option<&str>)] = &[
    ("~/.cache/", None),
    ("~/.npm/", Some("npm")),
    ("~/.cargo/registry/", Some("cargo")),
    ("~/.cargo/git/", Some("cargo")),
    ("~/.cargo/.package-cache", Some("cargo")),
    ("~/.cargo/.package-cache-mutate", Some("cargo")),
    ("~/go/pkg/mod/", Some("go")),
    ("~/.m2/repository/", Some("mvn")),
    ("~/.gradle/caches/", Some("gradle")),
    ("~/.bun/install/cache/", Some("bun")),
    ("~/.local/share/pnpm/store/", Some("pnpm")),
    ("~/.yarn/berry/cache/", Some("yarn")),
];

/// What [`writable_places`] starts from.
pub struct Writable<'a> {
    /// The launched agent's program name (`claude`), if any.
    pub agent: Option<&'a str>,
    pub home: &'a Path,
    /// The directory of the project's policy file (else the working directory).
    pub base: &'a Path,
    pub cwd: &'a Path,
    /// `$TMPDIR`, when set.
    pub tmpdir: Option<&'a Path>,
    /// `settings.enforce.writable`, as the policy names them.
    pub extra: &'a [String],
    /// The agent's `PATH`: a cache whose program is there is made.
    pub path: &'a str,
}

/// Whether `program` is an executable file in one of `path`'s directories.
fn on_path(program: &str, path: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.split(':').filter(|d| !d.is_empty()).any(|d| {
        std::fs::metadata(Path::new(d).join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Where the agent's tree may write in the box: the project, the working
/// directory, the temporary directories, the launched agent's state (its
/// missing directories created), the caches that exist and what the
/// policy adds. A place that does not exist is left out (Landlock names
/// what exists).
pub fn writable_places(w: &Writable) -> Vec<PathBuf> {
    let mut places = vec![
        w.base.to_path_buf(),
        w.cwd.to_path_buf(),
        "/tmp".into(),
        "/var/tmp".into(),
        "/dev/shm".into(),
    ];
    places.extend(w.tmpdir.map(Path::to_path_buf));
    let state = AGENT_STATE
        .iter()
        .filter(|(name, _)| Some(*name) == w.agent)
        .flat_map(|(_, paths)| paths.iter());
    for p in state {
        let path = policy_path(p.trim_end_matches('/'), w.home, w.base);
        if p.ends_with('/') {
            let _ = std::fs::create_dir_all(&path);
        }
        places.push(path);
    }
    let code = AGENT_CODE
        .iter()
        .filter(|(name, _)| Some(*name) == w.agent)
        .flat_map(|(_, paths)| paths.iter());
    for p in code {
        let _ = std::fs::create_dir_all(policy_path(p.trim_end_matches('/'), w.home, w.base));
    }
    for (p, program) in CACHES {
        let path = policy_path(p.trim_end_matches('/'), w.home, w.base);
        if program.is_some_and(|prog| on_path(prog, w.path)) && !path.exists() {
            let _ = if p.ends_with('/') {
                std::fs::create_dir_all(&path)
            } else {
                path.parent()
                    .filter(|d| d.is_dir())
                    .map_or(Ok(()), |_| std::fs::write(&path, b""))
            };
        }
        places.push(path);
    }
    for p in w.extra {
        places.push(policy_path(p, w.home, w.base));
    }
    places.retain(|p| std::fs::symlink_metadata(p).is_ok());
    places.sort();
    places.dedup();
    places
}

/// The Unix sockets listening on the host now (`/proc/net/unix`) that
/// the box closes: every one but those below `keep` (the session's own
/// directory) and those `open` names (`settings.enforce.sockets`, resolved).
/// A socket a host process makes later, in a place the tree can reach,
/// is not among them (`docs/enforcement.md`).
pub fn host_sockets(table: &str, keep: &[PathBuf], open: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = table
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().nth(7))
        .filter(|path| path.starts_with('/'))
        .map(PathBuf::from)
        .filter(|p| !keep.iter().any(|k| p.starts_with(k)))
        .filter(|p| !open.contains(p))
        .filter(|p| {
            use std::os::unix::fs::FileTypeExt;
            std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A file of the user's the box cannot let the agent replace in place
/// (Claude Code writes `~/.claude.json` by renaming a new file over it,
/// which would need the whole home directory writable): the agent works on
/// a copy in its state directory, and the session puts the copy back.
pub struct CopiedBack {
    /// The user's file.
    pub original: PathBuf,
    /// The agent's copy, in a place the box lets it write.
    pub copy: PathBuf,
    /// The original's contents when the session started (None: absent).
    pub at_start: Option<Vec<u8>>,
    /// The keys of the file (JSON) the session may change: what else the
    /// copy changed stays as it was (None: the whole copy goes back).
    pub inert: Option<&'static InertKeys>,
}

/// The keys of an agent's JSON state that change nothing outside the box
/// (counters, caches, history): a positive list, so that a key the agent
/// starts using later, or one that starts a program (`mcpServers`), grants
/// a permission (`allowedTools`) or trusts a folder, is not taken from the
/// box.
pub struct InertKeys {
    /// Top-level keys.
    pub top: &'static [&'static str],
    /// The object whose members are per-project entries (`projects`), and
    /// the keys of each entry.
    pub per_project: (&'static str, &'static [&'static str]),
}

/// Claude Code's `~/.claude.json`.
pub const CLAUDE_STATE: InertKeys = InertKeys {
    top: &[
        "numStartups",
        "firstStartTime",
        "firstStartVersion",
        "installMethod",
        "machineID",
        "userID",
        "migrationVersion",
        "opusProMigrationComplete",
        "seenNotifications",
        "hasResetAutoModeOptInForDefaultOffer",
        "pluginUsage",
        "tipsHistory",
        "promptQueueUseCount",
        "memoryUsageCount",
        "cachedStatsigGates",
        "cachedDynamicConfigs",
        "cachedGrowthBookFeatures",
        "changelogLastFetched",
        "lastReleaseNotesSeen",
        "hasCompletedOnboarding",
        "lastOnboardingVersion",
        "subscriptionNoticeCount",
        "hasAvailableSubscription",
        "feedbackSurveyState",
        "hasIdeOnboardingBeenShown",
        "fallbackAvailableWarningThreshold",
    ],
    per_project: (
        "projects",
        &[
            "history",
            "lastCost",
            "lastAPIDuration",
            "lastToolDuration",
            "lastDuration",
            "lastLinesAdded",
            "lastLinesRemoved",
            "lastTotalInputTokens",
            "lastTotalOutputTokens",
            "lastTotalCacheCreationInputTokens",
            "lastTotalCacheReadInputTokens",
            "lastTotalWebSearchRequests",
            "lastSessionId",
            "lastModelUsage",
            "lastFpsAverage",
            "lastFpsLow1Pct",
            "exampleFiles",
            "exampleFilesGeneratedAt",
            "projectOnboardingSeenCount",
            "hasCompletedProjectOnboarding",
            "hasClaudeMdExternalIncludesWarningShown",
        ],
    ),
};

/// `original` with the inert keys as `copy` has them; the other keys the
/// copy changed, named (`projects./path.mcpServers`).
pub fn merge_inert(
    original: &serde_json::Value,
    copy: &serde_json::Value,
    keys: &InertKeys,
) -> (serde_json::Value, Vec<String>) {
    use serde_json::{Map, Value};
    let empty = Map::new();
    let obj = |v: &Value| v.as_object().cloned().unwrap_or_default();
    let mut out = obj(original);
    let mut kept = Vec::new();
    let take = |out: &mut Map<String, Value>,
                from: &Map<String, Value>,
                inert: &[&str],
                prefix: &str,
                kept: &mut Vec<String>| {
        let names: std::collections::BTreeSet<String> =
            out.keys().chain(from.keys()).cloned().collect();
        for k in names {
            if out.get(&k) == from.get(&k) {
                continue;
            }
            if inert.contains(&k.as_str()) {
                match from.get(&k) {
                    Some(v) => out.insert(k, v.clone()),
                    None => out.remove(&k),
                };
            } else {
                kept.push(format!("{prefix}{k}"));
            }
        }
    };
    let (list, per) = keys.per_project;
    let copy_obj = obj(copy);
    let mut top: Map<String, Value> = copy_obj.clone();
    top.remove(list);
    let mut without = out.clone();
    without.remove(list);
    take(&mut without, &top, keys.top, "", &mut kept);
    let mut projects = out.get(list).map(obj).unwrap_or_default();
    let theirs = copy_obj
        .get(list)
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (path, entry) in theirs {
        let mut mine = projects.get(path).map(obj).unwrap_or_default();
        take(
            &mut mine,
            &obj(entry),
            per,
            &format!("{list}.{path}."),
            &mut kept,
        );
        if !mine.is_empty() || projects.contains_key(path) {
            projects.insert(path.clone(), Value::Object(mine));
        }
    }
    if !projects.is_empty() || out.contains_key(list) {
        without.insert(list.to_owned(), Value::Object(projects));
    }
    out = without;
    (Value::Object(out), kept)
}

impl CopiedBack {
    /// Puts the copy back when the agent changed it and nobody changed the
    /// original meanwhile, and removes it; otherwise says why not (the
    /// copy stays).
    pub fn put_back(&self) -> Option<String> {
        let copy = std::fs::read(&self.copy).ok()?;
        if Some(&copy) == self.at_start.as_ref() {
            let _ = std::fs::remove_file(&self.copy);
            return None;
        }
        if std::fs::read(&self.original).ok() != self.at_start {
            return Some(format!(
                "{} changed outside the session: the session's version is left in {}",
                self.original.display(),
                self.copy.display()
            ));
        }
        let (copy, kept) = match self.inert {
            Some(keys) => {
                let parse = |b: &[u8]| serde_json::from_slice(b).unwrap_or_default();
                let original = self.at_start.as_deref().map(parse).unwrap_or_default();
                let (merged, kept) = merge_inert(&original, &parse(&copy), keys);
                let mut text = serde_json::to_vec_pretty(&merged).unwrap_or_default();
                text.push(b'\n');
                (text, kept)
            }
            None => (copy, Vec::new()),
        };
        let tmp = self.original.with_extension("aileron-tmp");
        let put = std::fs::write(&tmp, &copy)
            .and_then(|()| std::fs::rename(&tmp, &self.original))
            .and_then(|()| std::fs::remove_file(&self.copy));
        match put {
            Err(e) => Some(format!(
                "cannot put the session's {} back: {e} (it is in {})",
                self.original.display(),
                self.copy.display()
            )),
            Ok(()) if !kept.is_empty() => Some(format!(
                "{}: what the session changed of {} was not put back (only counters, caches and history are)",
                self.original.display(),
                kept.join(", ")
            )),
            Ok(()) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_stores_and_private_keys_less_what_is_given_back() {
        let tmp = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(tmp.path()).unwrap();
        for d in [".ssh", ".aws", ".config/gcloud"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        for f in [
            ".ssh/id_ed25519",
            ".ssh/id_ed25519.pub",
            ".ssh/known_hosts",
            ".ssh/work_key",
            ".netrc",
            ".npmrc",
        ] {
            std::fs::write(home.join(f), "x").unwrap();
        }
        let env = Environment {
            home: home.to_string_lossy().into_owned(),
            ..Environment::default()
        };
        let got = masked(
            &env,
            None,
            &["~/.npmrc".to_owned()],
            Path::new("/proj"),
            None,
        );
        let want: Vec<PathBuf> = [
            ".aws",
            ".config/gcloud",
            ".netrc",
            ".ssh/id_ed25519",
            ".ssh/work_key",
        ]
        .iter()
        .map(|r| home.join(r))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn only_files_a_rule_denies_reading_not_the_default() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        for f in [".env", "sub/.env.prod", "src/main.rs", ".git/config"] {
            std::fs::create_dir_all(root.join(f).parent().unwrap()).unwrap();
            std::fs::write(root.join(f), "x").unwrap();
        }
        let policy = |text: &str| {
            let src = aileron_engine::Source {
                name: root.join("aileron.yaml").to_string_lossy().into_owned(),
                text: text.into(),
                layer: aileron_engine::Layer::Project,
                base_dir: root.to_string_lossy().into_owned(),
            };
            Policy::from_sources(&[src], &Environment::default()).unwrap()
        };
        let rule = "version: 1\ndeny:\n  - {id: no-env, when: {type: fs.read, fs.path: {path: \"**/.env*\"}}}\n";
        let (found, truncated) = denied_reads(&policy(rule), &root);
        assert_eq!(found, vec![root.join(".env"), root.join("sub/.env.prod")]);
        assert!(!truncated);
        let (found, _) = denied_reads(&policy("version: 1\ndefault: deny\n"), &root);
        assert_eq!(found, Vec::<PathBuf>::new());
    }

    #[test]
    fn the_launched_agents_state_and_existing_caches_are_writable() {
        let tmp = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(home.join(".npm")).unwrap();
        std::fs::create_dir_all(home.join("proj")).unwrap();

        let w = Writable {
            agent: Some("claude"),
            home: &home,
            base: &home.join("proj"),
            cwd: &home.join("proj"),
            tmpdir: None,
            extra: &["~/notes".to_owned(), "~/absent".to_owned()],
            path: "",
        };
        std::fs::create_dir_all(home.join("notes")).unwrap();
        let got = writable_places(&w);
        for want in [".claude", ".npm", "proj", "notes"] {
            assert!(got.contains(&home.join(want)), "{want} in {got:?}");
        }
        // Created for the agent; an absent cache or extra place is left out.
        assert!(home.join(".claude").is_dir());
        assert!(!got.contains(&home.join("absent")));
        assert!(!got.contains(&home.join(".cargo/registry")));
        assert!(!got.contains(&home.join(".codex")));
        assert!(got.contains(&PathBuf::from("/tmp")));
    }

    #[test]
    fn listening_host_sockets_less_the_sessions_and_the_opened() {
        use std::os::unix::net::UnixListener;
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(dir.join("session")).unwrap();
        let paths = ["docker.sock", "agent.sock", "session/session.sock"].map(|p| dir.join(p));
        let _listeners: Vec<UnixListener> = paths
            .iter()
            .map(|p| UnixListener::bind(p).unwrap())
            .collect();
        std::fs::write(dir.join("plain"), "").unwrap();
        let line = |i: usize, p: &Path| {
            format!(
                "0000: 00000002 00000000 00010000 0001 01 {i} {}",
                p.display()
            )
        };
        let table = [
            "Num       RefCount Protocol Flags    Type St Inode Path".to_owned(),
            line(1, &paths[0]),
            line(2, &paths[1]),
            line(3, &paths[2]),
            line(4, &dir.join("plain")),
            line(5, &dir.join("gone.sock")),
            "0000: 00000002 00000000 00010000 0001 01 6 @abstract".to_owned(),
            "0000: 00000002 00000000 00000000 0001 03 7".to_owned(),
        ]
        .join("\n");
        let got = host_sockets(&table, &[dir.join("session")], &[paths[1].clone()]);
        assert_eq!(got, vec![paths[0].clone()]);
    }

    #[test]
    fn a_copy_goes_back_only_when_changed_here_and_not_there() {
        let tmp = tempfile::tempdir().unwrap();
        let (original, copy) = (tmp.path().join("a.json"), tmp.path().join("copy.json"));
        let file = |at_start: &str| CopiedBack {
            original: original.clone(),
            copy: copy.clone(),
            at_start: Some(at_start.as_bytes().to_vec()),
            inert: None,
        };
        // Changed in the session: put back, the copy removed.
        std::fs::write(&original, "1").unwrap();
        std::fs::write(&copy, "2").unwrap();
        assert_eq!(file("1").put_back(), None);
        assert_eq!(std::fs::read_to_string(&original).unwrap(), "2");
        assert!(!copy.exists());
        // Changed outside meanwhile too: the original kept, the copy left and named.
        std::fs::write(&copy, "3").unwrap();
        std::fs::write(&original, "outside").unwrap();
        let why = file("2").put_back().unwrap();
        assert!(why.contains("changed outside the session"), "{why}");
        assert_eq!(std::fs::read_to_string(&original).unwrap(), "outside");
        assert!(copy.exists());
        // Unchanged: nothing to do, the copy removed.
        std::fs::write(&copy, "outside").unwrap();
        assert_eq!(file("outside").put_back(), None);
        assert!(!copy.exists());
    }

    #[test]
    fn hard_links_to_a_target_are_found_only_when_it_has_more_than_one() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (home, proj) = (root.join("home"), root.join("proj"));
        std::fs::create_dir_all(home.join(".aws")).unwrap();
        std::fs::create_dir_all(proj.join(".git/x")).unwrap();
        for f in [
            "home/.netrc",
            "home/.aws/credentials",
            "home/alone",
            "proj/plain",
        ] {
            std::fs::write(root.join(f), "secret").unwrap();
        }
        std::fs::hard_link(home.join(".netrc"), proj.join("n")).unwrap();
        std::fs::hard_link(home.join(".aws/credentials"), proj.join(".git/x/c")).unwrap();
        let targets = [home.join(".netrc"), home.join(".aws"), home.join("alone")];
        assert_eq!(
            hard_link_aliases(&proj, &targets),
            vec![proj.join(".git/x/c"), proj.join("n")]
        );
        assert_eq!(
            hard_link_aliases(&proj, &[home.join("alone")]),
            Vec::<PathBuf>::new()
        );
    }

    #[test]
    fn only_inert_keys_of_the_agents_state_come_back_from_the_box() {
        use serde_json::json;
        let original = json!({
            "numStartups": 3,
            "mcpServers": {},
            "projects": {"/p": {"allowedTools": [], "lastCost": 1}}
        });
        let copy = json!({
            "numStartups": 4,
            "mcpServers": {"evil": {"command": "sh"}},
            "bypassPermissionsModeAccepted": true,
            "projects": {
                "/p": {"allowedTools": ["Bash(*)"], "lastCost": 2},
                "/q": {"hasTrustDialogAccepted": true, "history": ["x"]}
            }
        });
        let (merged, kept) = merge_inert(&original, &copy, &CLAUDE_STATE);
        assert_eq!(
            merged,
            json!({
                "numStartups": 4,
                "mcpServers": {},
                "projects": {"/p": {"allowedTools": [], "lastCost": 2}, "/q": {"history": ["x"]}}
            })
        );
        assert_eq!(
            kept,
            [
                "bypassPermissionsModeAccepted",
                "mcpServers",
                "projects./p.allowedTools",
                "projects./q.hasTrustDialogAccepted"
            ]
        );
    }

    #[test]
    fn every_terminal_but_the_sessions_own() {
        let tmp = tempfile::tempdir().unwrap();
        let pts = tmp.path();
        for n in ["0", "3", "12", "ptmx"] {
            std::fs::write(pts.join(n), "").unwrap();
        }
        assert_eq!(
            other_terminals(pts, &[pts.join("3")]),
            vec![pts.join("0"), pts.join("12")]
        );
    }

    #[test]
    fn a_hooks_path_and_nested_repositories_git_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let home = root.join("home");
        let proj = root.join("proj");
        for d in [
            ".git/hooks",
            "vendor/lib/.git/hooks",
            "node_modules/x/.git",
            "src",
        ] {
            std::fs::create_dir_all(proj.join(d)).unwrap();
        }
        std::fs::write(proj.join(".git/config"), "[core]\n\thooksPath = .husky\n").unwrap();
        let got = git_code(&proj, &home);
        assert_eq!(
            got,
            vec![
                proj.join(".husky"),
                proj.join("vendor/lib/.git/config"),
                proj.join("vendor/lib/.git/hooks"),
            ]
        );
        assert!(
            proj.join(".husky").is_dir(),
            "made, so that the box can lock it"
        );
    }
}
