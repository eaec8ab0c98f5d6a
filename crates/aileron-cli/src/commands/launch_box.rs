//! What the box hides from the agent's tree under `--enforce files`: the
//! credential stores of [`aileron_engine::credentials`] that exist here,
//! and the ssh agent's socket, less what `settings.enforce.readable`
//! gives back. Each reads as absent or empty to every program of the tree
//! (`aileron_supervisor::files`).

use aileron_engine::Environment;
use aileron_engine::credentials::{Store, credential_stores, given_back, ssh_public};
use std::path::{Path, PathBuf};

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
}
