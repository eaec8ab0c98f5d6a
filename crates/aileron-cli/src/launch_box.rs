//! `aileron launch`: what the box gives the agent's tree under `--enforce
//! files` (`aileron_supervisor::files`).
//!
//! - Where it writes ([`writable_places`]): the project, the temporary
//!   directories, the devices of [`DEVICES`], the launched agent's own
//!   state ([`AGENT_STATE`]), the package caches ([`CACHES`]) and what
//!   `settings.enforce.writable` adds; not the project's files that are
//!   hard links to a file outside those ([`HardLinks`]).
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

/// What the session's standard streams are open to (`/dev/pts/3`, a
/// pipe): its own terminal, which the box leaves to the tree.
pub fn own_streams() -> Vec<PathBuf> {
    (0..3)
        .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
        .collect()
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

/// A file with more than one name, as [`HardLinks`] found it.
struct Linked {
    /// How many names it has (`st_nlink`).
    nlink: u64,
    /// Its names below the walked roots.
    names: Vec<PathBuf>,
    /// How many of its names the other writable places hold.
    elsewhere: u64,
}

impl Linked {
    /// Whether some name of it lies outside the places walked.
    fn leads_out(&self) -> bool {
        (self.names.len() as u64) + self.elsewhere < self.nlink
    }
}

/// The files below the project that have more than one name, by (device,
/// inode). A hard link made before the session is another name of what
/// it names, and Landlock judges a write by the name used: through a link
/// in the project, a file outside the writable places would be written.
/// So the box locks (or masks) each file one of whose names lies outside
/// the places it lets the tree write; a file whose names all lie inside
/// (cargo's `target/` links its outputs) stays writable.
pub struct HardLinks {
    files: std::collections::HashMap<(u64, u64), Linked>,
    /// Whether the walk of the roots stopped at [`WALK_LIMIT`] entries:
    /// links beyond were not looked for.
    pub cut_short: bool,
}

/// A directory's (device, inode): the same directory under another name
/// (a bind mount, a link to an ancestor) is the same.
type DirId = (u64, u64);

/// The [`DirId`] of `dir`, if it is one.
fn dir_id(dir: &Path) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .ok()
        .filter(|m| m.is_dir())
        .map(|m| (m.dev(), m.ino()))
}

/// Visits the regular files with more than one link below `dirs`, each
/// directory once and none of `done`, until `visit` says stop or
/// [`WALK_LIMIT`] entries were looked at; false when the limit stopped it.
fn each_linked_file(
    dirs: &[PathBuf],
    mut done: std::collections::HashSet<DirId>,
    mut visit: impl FnMut(&Path, &std::fs::Metadata) -> bool,
) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mut seen = 0;
    let mut todo: Vec<PathBuf> = dirs.to_vec();
    while let Some(dir) = todo.pop() {
        // A directory mounted at two places is looked at once.
        if !dir_id(&dir).is_some_and(|id| done.insert(id)) {
            continue;
        }
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            seen += 1;
            if seen > WALK_LIMIT {
                return false;
            }
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                todo.push(e.path());
            } else if kind.is_file()
                && let Ok(m) = e.metadata()
                && m.nlink() > 1
                && !visit(&e.path(), &m)
            {
                return true;
            }
        }
    }
    true
}

/// Of `places`, those not below another one.
fn outermost(places: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = places
        .iter()
        .filter(|p| !places.iter().any(|q| q != *p && p.starts_with(q)))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out
}

impl HardLinks {
    /// Walks `roots` (the project, the working directory), at most
    /// [`WALK_LIMIT`] entries.
    pub fn walk(roots: &[PathBuf]) -> HardLinks {
        use std::os::unix::fs::MetadataExt;
        let mut files = std::collections::HashMap::new();
        let complete = each_linked_file(&outermost(roots), Default::default(), |path, m| {
            files
                .entry((m.dev(), m.ino()))
                .or_insert_with(|| Linked {
                    nlink: m.nlink(),
                    names: Vec::new(),
                    elsewhere: 0,
                })
                .names
                .push(path.to_path_buf());
            true
        });
        HardLinks {
            files,
            cut_short: !complete,
        }
    }

    /// Counts the names that `places` (the other writable places) hold of
    /// the files some of whose names the walk did not find: such a name
    /// leads to nothing the tree could not write anyway (pnpm links its
    /// store into `node_modules`). Walks only while some are left, and only
    /// the places on their devices, `roots` not again. A place cut short
    /// leaves the rest out: locked.
    pub fn find_elsewhere(&mut self, places: &[PathBuf], roots: &[PathBuf]) {
        use std::os::unix::fs::MetadataExt;
        let mut left = self.files.values().filter(|f| f.leads_out()).count();
        let devices: std::collections::HashSet<u64> = self
            .files
            .iter()
            .filter(|(_, f)| f.leads_out())
            .map(|((dev, _), _)| *dev)
            .collect();
        let places: Vec<PathBuf> = outermost(places)
            .into_iter()
            .filter(|p| !roots.iter().any(|r| p.starts_with(r)))
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| devices.contains(&m.dev())))
            .collect();
        if left == 0 || places.is_empty() {
            return;
        }
        // The roots, under whatever name a place reaches them, are not
        // counted twice.
        let walked = roots.iter().filter_map(|r| dir_id(r)).collect();
        each_linked_file(&places, walked, |_, m| {
            if let Some(f) = self.files.get_mut(&(m.dev(), m.ino()))
                && f.leads_out()
            {
                f.elsewhere += 1;
                if !f.leads_out() {
                    left -= 1;
                }
            }
            left > 0
        });
    }

    /// The names, below the roots, of the files one of whose names lies
    /// outside the places walked: written through, each would change a
    /// file the box does not let the tree write.
    pub fn leading_out(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .files
            .values()
            .filter(|f| f.leads_out())
            .flat_map(|f| f.names.iter().cloned())
            .collect();
        out.sort();
        out
    }

    /// The other names, below the roots, of the files `targets` name (and
    /// of the files in the directories they name): through them a masked
    /// secret would be read or a locked file written.
    pub fn aliases(&self, targets: &[PathBuf]) -> Vec<PathBuf> {
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
        let mut found: Vec<PathBuf> = linked
            .iter()
            .filter_map(|key| self.files.get(key))
            .flat_map(|f| f.names.iter())
            .filter(|p| !targets.contains(p))
            .cloned()
            .collect();
        found.sort();
        found
    }
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

/// The package caches of [`CACHES`] that are directories here, each with
/// the directory where the box's changes to it land (below `data_dir`, one
/// per project): the tree writes a cache copy-on-write, and the host's
/// keeps its bytes (`aileron_supervisor::overlay`). A cache that holds the
/// project or `data_dir`, or lies inside either, is left out.
pub fn cache_overlays(home: &Path, base: &Path, data_dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let changes = data_dir.join("box-caches").join(dir_name(base));
    CACHES
        .iter()
        .filter(|(p, _)| p.ends_with('/'))
        .map(|(p, _)| policy_path(p.trim_end_matches('/'), home, base))
        .filter(|c| c.is_dir())
        .filter(|c| {
            ![base, data_dir]
                .iter()
                .any(|o| o.starts_with(c) || c.starts_with(o))
        })
        .map(|c| {
            let upper = changes.join(dir_name(c.strip_prefix(home).unwrap_or(&c)));
            (c, upper)
        })
        .collect()
}

/// A directory name for `path`: its last components, readable, and a
/// hash of the whole (paths that end alike stay apart).
fn dir_name(path: &Path) -> String {
    // FNV-1a: stable across builds, unlike std's hasher.
    let hash = path
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    let tail: String = path
        .to_string_lossy()
        .trim_start_matches('/')
        .replace('/', "%")
        .chars()
        .rev()
        .take(60)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{tail}-{hash:016x}")
}

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
    /// The session's own terminal devices (its standard streams'), which
    /// [`DEVICES`] may not name (`/dev/ttyS0`, a console).
    pub terminals: &'a [PathBuf],
}

/// The device files the box lets the tree open for writing, a positive
/// list: what programs open by name to discard or make bytes (`null`,
/// `zero`, `full`, `random`, `urandom`), their terminal (`tty`, the
/// controlling one) and new pseudo-terminals (`ptmx` and the `pts`
/// directory they appear in: `script`, `expect`, a terminal emulator's
/// tests), and POSIX shared memory (`shm`, where `shm_open` and Python's
/// multiprocessing make files). `/dev/fd`, `/dev/stdin`, `/dev/stdout` and
/// `/dev/stderr` are links to `/proc/self/fd`: what they open is judged
/// as itself (a pipe is always open to its holder, a terminal by `pts`, a
/// file by its place). Every other node (disks, `kmsg`, `fuse`, `kvm`, a
/// GPU) and a new file in `/dev` is refused; `settings.enforce.writable`
/// opens one by name.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Whether `path` is a character device (a terminal, not a file or a pipe).
fn is_char_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
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
/// directory, the temporary directories, the [`DEVICES`] and the session's
/// terminal, the launched agent's state (its missing directories
/// created), the caches that exist and what the policy adds. A place that does not exist is left out (Landlock names
/// what exists).
pub fn writable_places(w: &Writable) -> Vec<PathBuf> {
    let mut places = vec![
        w.base.to_path_buf(),
        w.cwd.to_path_buf(),
        "/tmp".into(),
        "/var/tmp".into(),
    ];
    places.extend(DEVICES.iter().map(PathBuf::from));
    places.extend(
        w.terminals
            .iter()
            .filter(|t| t.starts_with("/dev/") && is_char_device(t))
            .cloned(),
    );
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

/// `text` (settings, JSON with comments) with each of `keys` of its
/// `object` member false; every other byte as it was.
pub fn settings_off(
    text: &str,
    object: &'static str,
    keys: &[&str],
) -> Result<String, crate::Error> {
    use aileron_hooks::jsonedit::{self, Node};
    let mut text = if text.trim().is_empty() {
        "{}".to_owned()
    } else {
        text.to_owned()
    };
    for key in keys {
        let root = jsonedit::parse(&text)?;
        let edit = match root.get(object) {
            None => jsonedit::add_member(&text, &root, object, &serde_json::json!({*key: false})),
            Some(obj @ Node::Object { .. }) => match obj.get(key) {
                None => jsonedit::add_member(&text, obj, key, &serde_json::json!(false)),
                Some(v) => jsonedit::replace(&text, v, &serde_json::json!(false)),
            },
            Some(_) => return Err(crate::Error::KeyNotAnObject(object)),
        };
        text = jsonedit::apply(&text, &edit);
    }
    Ok(text)
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
            terminals: &[],
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
        // The devices of the positive list, not the whole of /dev.
        assert!(got.contains(&PathBuf::from("/dev/null")));
        assert!(!got.contains(&PathBuf::from("/dev")));
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
        let links = HardLinks::walk(std::slice::from_ref(&proj));
        let targets = [home.join(".netrc"), home.join(".aws"), home.join("alone")];
        assert_eq!(
            links.aliases(&targets),
            vec![proj.join(".git/x/c"), proj.join("n")]
        );
        assert_eq!(links.aliases(&[home.join("alone")]), Vec::<PathBuf>::new());
        assert!(!links.cut_short);
    }

    #[test]
    fn a_file_with_a_name_outside_the_writable_places_is_locked() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let [proj, cache, outside] = ["proj", "cache", "outside"].map(|d| root.join(d));
        for d in [&proj.join("target/debug/deps"), &cache, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        for f in [
            "outside/notes",
            "cache/blob",
            "proj/target/debug/deps/app-1f2e",
            "proj/plain",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        // A link to a file of the user's, one into a writable cache (as
        // pnpm's store), and cargo's link of its output, all inside.
        std::fs::hard_link(outside.join("notes"), proj.join("notes")).unwrap();
        std::fs::hard_link(cache.join("blob"), proj.join("blob")).unwrap();
        std::fs::hard_link(
            proj.join("target/debug/deps/app-1f2e"),
            proj.join("target/debug/app"),
        )
        .unwrap();
        let roots = [proj.clone()];
        let mut links = HardLinks::walk(&roots);
        assert_eq!(
            links.leading_out(),
            vec![proj.join("blob"), proj.join("notes")]
        );
        links.find_elsewhere(&[proj.clone(), cache.clone()], &roots);
        assert_eq!(links.leading_out(), vec![proj.join("notes")]);
        // A third name, outside: the file leads out again.
        std::fs::hard_link(cache.join("blob"), outside.join("blob")).unwrap();
        let mut links = HardLinks::walk(&roots);
        links.find_elsewhere(&[cache], &roots);
        assert_eq!(
            links.leading_out(),
            vec![proj.join("blob"), proj.join("notes")]
        );
        // A writable place that holds the project under another name does
        // not count its names twice.
        std::os::unix::fs::symlink(&root, root.join("alias")).unwrap();
        let mut links = HardLinks::walk(&roots);
        links.find_elsewhere(&[root.join("alias/proj")], &roots);
        assert!(links.leading_out().contains(&proj.join("notes")));
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

    #[test]
    fn settings_off_sets_each_key_false_and_keeps_the_rest() {
        let keys = ["enableAutoUpdate", "enableAutoUpdateNotification"];
        let user = "{\n  // the user's own\n  \"general\": {\"enableAutoUpdate\": true, \"vimMode\": true},\n  \"ui\": {}\n}\n";
        let got = settings_off(user, "general", &keys).unwrap();
        assert!(got.contains("// the user's own"), "{got}");
        let parsed = aileron_hooks::jsonedit::parse(&got).unwrap().to_value();
        assert_eq!(
            parsed["general"],
            serde_json::json!({"enableAutoUpdate": false, "vimMode": true, "enableAutoUpdateNotification": false})
        );
        let got = settings_off("", "general", &keys).unwrap();
        let parsed = aileron_hooks::jsonedit::parse(&got).unwrap().to_value();
        assert_eq!(
            parsed,
            serde_json::json!({"general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}})
        );
        assert!(settings_off("{\"general\": 1}", "general", &keys).is_err());
    }
}
