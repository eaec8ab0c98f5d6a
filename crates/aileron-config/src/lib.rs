//! Finds, reads and layers Aileron's policy files (SPEC 4), and caches the
//! compiled policy on disk keyed by the content of its sources, so that the
//! shim and the hooks start fast.
//!
//! This is the I/O half of policy loading; parsing, merging and evaluation
//! live in the pure `aileron-engine`.

mod cache;
mod confine;
mod discover;
pub mod server_rules;

pub use cache::CacheOutcome;
pub use confine::Confine;
pub use discover::{find_project_file, gather_sources};

use aileron_engine::{Diagnostic, Diagnostics, Environment, Policy};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The policy file name looked for in the working directory and its parents.
pub const POLICY_FILE: &str = "aileron.yaml";

/// Where and how to load.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Directory the agent works in; the project file is found from here.
    pub cwd: PathBuf,
    /// An explicit policy file (`--policy`), instead of walking up from `cwd`.
    pub policy_path: Option<PathBuf>,
    /// The user's home directory (`~`).
    pub home: PathBuf,
    /// `$AILERON_DATA`, default `~/.aileron`.
    pub data_dir: PathBuf,
    /// Read `~/.aileron/settings.yaml` (layer 6).
    pub user_settings: bool,
    /// Add the OS and language profiles (layers 2 and 3).
    pub auto_profiles: bool,
    /// Run the policy's `tests:` and refuse a policy whose examples fail.
    pub run_tests: bool,
    /// Add the rules `aileron serve` exports to `$AILERON_DATA/server-rules.yaml`
    /// (layer 7), so that local adapters decide with the dashboard's rules too.
    pub server_rules: bool,
}

impl LoadOptions {
    /// Options from the process environment: `$HOME`, `$AILERON_DATA`.
    pub fn from_env(cwd: PathBuf) -> LoadOptions {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"));
        let data_dir = std::env::var_os("AILERON_DATA")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".aileron"));
        LoadOptions {
            cwd,
            policy_path: None,
            home,
            data_dir,
            user_settings: true,
            auto_profiles: true,
            run_tests: false,
            server_rules: true,
        }
    }

    /// The facts the built-in rules need: these options' directories, and
    /// `PATH`, `XDG_CONFIG_HOME` and `XDG_RUNTIME_DIR` from the process
    /// environment (part of the cache key, so a change compiles anew).
    pub fn environment(&self) -> Environment {
        let var = |name| std::env::var_os(name);
        self.environment_with(var("PATH"), var("XDG_CONFIG_HOME"), var("XDG_RUNTIME_DIR"))
    }

    fn environment_with(
        &self,
        path: Option<OsString>,
        config_home: Option<OsString>,
        runtime_dir: Option<OsString>,
    ) -> Environment {
        // Relative or empty values are ignored, as the XDG specification says.
        let dir = |v: Option<OsString>| {
            v.map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|p| aileron_engine::paths::normalize(&path_str(&p)))
                .unwrap_or_default()
        };
        let mut path_dirs: Vec<String> = Vec::new();
        for d in path.iter().flat_map(std::env::split_paths) {
            let d = dir(Some(d.into_os_string()));
            if !d.is_empty() && !path_dirs.contains(&d) {
                path_dirs.push(d);
            }
        }
        Environment {
            home: path_str(&self.home),
            data_dir: path_str(&self.data_dir),
            protected_files: Vec::new(),
            config_home: dir(config_home),
            runtime_dir: dir(runtime_dir),
            path_dirs,
        }
    }
}

/// A compiled policy and where it came from.
#[derive(Debug)]
pub struct Loaded {
    pub policy: Policy,
    /// The project's `aileron.yaml`, when one was found.
    pub project_file: Option<PathBuf>,
    pub cache: CacheOutcome,
    /// The cache key and the content hash of every file source, when the
    /// cache was used: what [`Memo`] checks before reusing this policy.
    sources: Option<(String, Vec<(String, u64)>)>,
}

/// Loads and compiles the policy in force for `opts.cwd`. With `cache_dir`,
/// reuses a compiled policy whose sources have not changed.
pub fn load(opts: &LoadOptions, cache_dir: Option<&Path>) -> Result<Loaded, Diagnostics> {
    let project_file = project_file(opts);
    let probe = cache_dir.map(|_| cache::key(opts, project_file.as_deref()));
    load_probed(opts, cache_dir.zip(probe.as_ref()), project_file, None)
}

/// The judges of a policy, by name.
pub type Judges = std::collections::BTreeMap<String, aileron_engine::JudgeDef>;

/// Loads the policy of a project for someone else (`aileron serve`
/// deciding an agent's request): the project file is `opts.policy_path`,
/// and it and the profiles it names are read only from inside `confine`
/// (see [`Confine`]); the judges are the reader's own `judges`, and no
/// file says where an audit log goes
/// ([`Policy::from_sources_judged_by`]). No disk cache: the caller keeps
/// what it loaded.
pub fn load_confined(
    opts: &LoadOptions,
    confine: &Confine,
    judges: Judges,
) -> Result<Loaded, Diagnostics> {
    let project_file = opts.policy_path.as_ref().map(|p| absolute(p, &opts.cwd));
    load_probed(opts, None, project_file, Some((confine, judges)))
}

fn project_file(opts: &LoadOptions) -> Option<PathBuf> {
    match &opts.policy_path {
        Some(p) => Some(absolute(p, &opts.cwd)),
        None => find_project_file(&opts.cwd),
    }
}

/// The last policy a long-running adapter (the launch session) loaded,
/// kept decoded between its requests: reused while the cache key and every
/// source file's content are unchanged, the same test a cache entry
/// passes, so a request sees exactly what a fresh load would give. Its
/// rules stay decoded and its patterns compiled.
///
/// Between full checks, the files and directories a check read are
/// compared by their inode, size and times ([`Stamp`]), which costs a
/// `statx` each instead of a read: while none changed, the policy is the
/// one checked. A stamp newer than a second before the check is not
/// trusted (a change within the file system's time granularity could keep
/// it), so a file written just before or after a check is read again.
#[derive(Debug, Default)]
pub struct Memo(std::sync::Mutex<Option<Kept>>);

#[derive(Debug)]
struct Kept {
    loaded: Arc<Loaded>,
    cwd: PathBuf,
    policy_path: Option<PathBuf>,
    /// What was looked at, and how it looked when the check began.
    stamps: Vec<(PathBuf, Option<Stamp>)>,
    /// When the check began, in seconds since the epoch.
    checked: i64,
}

/// Enough of a file's metadata to see that it changed without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// Changed no later than a second before `checked` (seconds since the epoch).
    fn settled(&self, checked: i64) -> bool {
        self.mtime.0 < checked - 1 && self.ctime.0 < checked - 1
    }
}

impl Memo {
    /// The kept policy, when `opts` asks for what it was checked for and
    /// nothing it was read from has changed since.
    fn unchanged(&self, opts: &LoadOptions) -> Option<Arc<Loaded>> {
        let kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let kept = kept.as_ref()?;
        let same_request = kept.cwd == opts.cwd && kept.policy_path == opts.policy_path;
        let unchanged = || {
            kept.stamps.iter().all(|(path, then)| {
                then.is_none_or(|s| s.settled(kept.checked)) && Stamp::of(path) == *then
            })
        };
        (same_request && unchanged()).then(|| kept.loaded.clone())
    }
}

/// [`load`], reusing what `memo` holds when its sources are unchanged.
/// Without a cache directory nothing is reused, but the policy is still
/// kept (freed only when the next one replaces it).
pub fn load_with_memo(
    opts: &LoadOptions,
    cache_dir: Option<&Path>,
    memo: &Memo,
) -> Result<Arc<Loaded>, Diagnostics> {
    if cache_dir.is_some()
        && let Some(kept) = memo.unchanged(opts)
    {
        return Ok(kept);
    }
    let checked = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let project_file = project_file(opts);
    let probe = cache_dir.map(|_| cache::key(opts, project_file.as_deref()));
    let stamps = probe
        .as_ref()
        .map(|probe| looked_at(opts, project_file.as_deref(), probe));
    let kept = memo
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|k| k.loaded.clone());
    let loaded = match (kept, &probe) {
        (Some(kept), Some(probe))
            if kept.sources.as_ref().is_some_and(|(key, files)| {
                *key == probe.key && cache::files_unchanged(probe, files)
            }) =>
        {
            kept
        }
        _ => Arc::new(load_probed(
            opts,
            cache_dir.zip(probe.as_ref()),
            project_file,
            None,
        )?),
    };
    let stamps = stamps.map(|stamps| {
        // The other files the policy was built from (named profiles).
        let sources = loaded.sources.iter().flat_map(|(_, files)| files);
        let more: Vec<PathBuf> = sources
            .map(|(path, _)| PathBuf::from(path))
            .filter(|p| !stamps.iter().any(|(q, _)| q == p))
            .collect();
        let mut stamps = stamps;
        stamps.extend(stamped(more));
        stamps
    });
    let previous = memo.0.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(stamps) = stamps {
        *memo.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(Kept {
            loaded: loaded.clone(),
            cwd: opts.cwd.clone(),
            policy_path: opts.policy_path.clone(),
            stamps,
            checked,
        });
    }
    drop(previous); // outside the lock
    Ok(loaded)
}

/// What a check of the policy for `opts` looks at, with its stamp taken
/// before it is read: where `aileron.yaml` is searched for, the project
/// directory (whose entries choose the language profiles) and the files
/// the cache key read.
fn looked_at(
    opts: &LoadOptions,
    project_file: Option<&Path>,
    probe: &cache::Probe,
) -> Vec<(PathBuf, Option<Stamp>)> {
    let mut paths: Vec<PathBuf> = Vec::new();
    match &opts.policy_path {
        Some(p) => paths.push(absolute(p, &opts.cwd)),
        None => {
            for dir in opts.cwd.ancestors() {
                let candidate = dir.join(POLICY_FILE);
                let found = Some(candidate.as_path()) == project_file;
                paths.push(candidate);
                if found {
                    break;
                }
            }
        }
    }
    paths.push(
        project_file
            .and_then(Path::parent)
            .unwrap_or(&opts.cwd)
            .to_path_buf(),
    );
    paths.extend(probe.read_paths().map(Path::to_path_buf));
    stamped(paths)
}

/// Each path once (a check compares every stamp at every request), with
/// its stamp.
fn stamped(paths: impl IntoIterator<Item = PathBuf>) -> Vec<(PathBuf, Option<Stamp>)> {
    let mut seen = std::collections::HashSet::new();
    paths
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .map(|p| {
            let stamp = Stamp::of(&p);
            (p, stamp)
        })
        .collect()
}

fn load_probed(
    opts: &LoadOptions,
    cache: Option<(&Path, &cache::Probe)>,
    project_file: Option<PathBuf>,
    confined: Option<(&Confine, Judges)>,
) -> Result<Loaded, Diagnostics> {
    let (key, outcome) = match cache {
        Some((dir, probe)) => match cache::read(dir, probe) {
            Some((policy, files)) => {
                return Ok(Loaded {
                    policy,
                    project_file,
                    cache: CacheOutcome::Hit,
                    sources: Some((probe.key.clone(), files)),
                });
            }
            None => (Some((dir, probe.key.clone())), CacheOutcome::Miss),
        },
        None => (None, CacheOutcome::Disabled),
    };
    let (confine, judges) = confined.unzip();
    let sources = discover::gather(opts, project_file.as_deref(), confine)?;
    let env = opts.environment();
    let mut policy = match judges {
        Some(judges) => Policy::from_sources_judged_by(&sources, &env, judges),
        None => Policy::from_sources(&sources, &env),
    }
    .map_err(Diagnostics)?;
    if opts.server_rules {
        let file = opts.data_dir.join(server_rules::SERVER_RULES_FILE);
        let rules = server_rules::load_rules(&file, &path_str(&opts.home))?;
        if !rules.is_empty() {
            policy = policy.with_rules(rules).map_err(Diagnostics)?;
        }
    }
    if opts.run_tests {
        let failures: Vec<Diagnostic> = policy
            .run_tests()
            .into_iter()
            .filter_map(|t| {
                let f = t.failure?;
                let mut parts = t.location.rsplitn(3, ':');
                let col = parts.next()?.parse().ok()?;
                let line = parts.next()?.parse().ok()?;
                let file = parts.next()?.to_owned();
                Some(Diagnostic::new(
                    aileron_engine::diagnostic::Code::TestFailed,
                    &file,
                    aileron_engine::diagnostic::Pos { line, col },
                    format!("policy test `{}` failed: {f}", t.name),
                ))
            })
            .collect();
        if !failures.is_empty() {
            return Err(Diagnostics(failures));
        }
    }
    let remembered = key.map(|(dir, key)| {
        cache::write(dir, &key, &sources, &policy);
        (key, cache::file_hashes(&sources))
    });
    Ok(Loaded {
        policy,
        project_file,
        cache: outcome,
        sources: remembered,
    })
}

/// `settings.audit_log`, relative to the policy file's directory; default
/// `.aileron/audit.jsonl` beside the policy, or in the data directory.
pub fn audit_log_path(policy: &Policy, project_file: Option<&Path>, opts: &LoadOptions) -> PathBuf {
    let base = project_file.and_then(Path::parent);
    match (&policy.settings.audit_log, base) {
        (Some(p), _) if p.starts_with("~/") => opts.home.join(&p[2..]),
        (Some(p), _) if Path::new(p).is_absolute() => PathBuf::from(p),
        (Some(p), Some(dir)) => dir.join(p),
        (Some(p), None) => opts.data_dir.join(p),
        (None, Some(dir)) => dir.join(".aileron/audit.jsonl"),
        (None, None) => opts.data_dir.join("audit.jsonl"),
    }
}

fn absolute(p: &Path, cwd: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    PathBuf::from(aileron_engine::paths::normalize(&path_str(&joined)))
}

pub(crate) fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::LoadOptions;
    use std::ffi::OsString;
    use std::path::PathBuf;

    #[test]
    fn path_dirs_are_absolute_normalized_and_unique() {
        let opts = LoadOptions::from_env(PathBuf::from("/p"));
        let path = OsString::from(
            "/usr/local/bin:bin::/home/u/.local/bin/:/usr//bin/../bin:/usr/local/bin",
        );
        let env = opts.environment_with(
            Some(path),
            Some("relative/config".into()),
            Some("/run/user/1000/".into()),
        );
        assert_eq!(
            env.path_dirs,
            ["/usr/local/bin", "/home/u/.local/bin", "/usr/bin"]
        );
        assert_eq!(env.config_home, "", "a relative XDG_CONFIG_HOME is ignored");
        assert_eq!(env.runtime_dir, "/run/user/1000");
        let none = opts.environment_with(None, Some("/h/cfg".into()), None);
        assert!(none.path_dirs.is_empty());
        assert_eq!(none.config_home, "/h/cfg");
    }
}
