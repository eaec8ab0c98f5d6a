//! `aileron launch`: what the box hides from the agent's tree under `--enforce files`: the
//! credential stores of [`aileron_engine::credentials`] that exist here,
//! the ssh agent's socket, and the project's files whose reading a rule
//! of the policy denies (`.env`), less what `settings.enforce.readable`
//! gives back. Each reads as absent or empty to every program of the tree
//! (`aileron_supervisor::files`).

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
    for (path, store) in credential_stores(env) {
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
        let got = masked(&env, &["~/.npmrc".to_owned()], Path::new("/proj"), None);
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
}
