//! The credential stores the box masks under `aileron launch` (Linux,
//! `--enforce files`): the agent's tree reads each as absent or empty,
//! whatever program or system call it uses, unless the policy gives it
//! back by name (`settings.enforce.readable`). Knowledge as data: add a
//! store here, and the box masks it.

use crate::Environment;

/// How a store is masked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// A directory: read as an empty directory.
    Dir,
    /// A file: read as empty.
    File,
    /// A directory of keys: each file in it but the public ones
    /// ([`ssh_public`]) reads as empty; the directory itself stays.
    Keys,
}

/// Where a store's path starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    Home,
    /// Each configuration directory (`~/.config`, `$XDG_CONFIG_HOME`).
    Config,
    /// `~/.local/share` (XDG's data directory).
    Data,
}

/// The stores: where, and how masked.
const STORES: &[(Base, &str, Store)] = &[
    // ssh: private keys (known_hosts, config and public keys stay).
    (Base::Home, ".ssh", Store::Keys),
    // Cloud and cluster credentials.
    (Base::Home, ".aws", Store::Dir),
    (Base::Home, ".azure", Store::Dir),
    (Base::Config, "gcloud", Store::Dir),
    (Base::Home, ".kube", Store::Dir),
    (Base::Home, ".oci", Store::Dir),
    (Base::Home, ".docker/config.json", Store::File),
    (Base::Home, ".vault-token", Store::File),
    (
        Base::Home,
        ".terraform.d/credentials.tfrc.json",
        Store::File,
    ),
    (Base::Home, ".boto", Store::File),
    (Base::Home, ".s3cfg", Store::File),
    // Git, package registries, databases.
    (Base::Home, ".netrc", Store::File),
    (Base::Home, ".git-credentials", Store::File),
    (Base::Config, "git/credentials", Store::File),
    (Base::Config, "gh/hosts.yml", Store::File),
    (Base::Config, "hub", Store::File),
    (Base::Home, ".npmrc", Store::File),
    (Base::Home, ".yarnrc.yml", Store::File),
    (Base::Home, ".pypirc", Store::File),
    (Base::Config, "pip/pip.conf", Store::File),
    (Base::Home, ".gem/credentials", Store::File),
    (Base::Home, ".cargo/credentials", Store::File),
    (Base::Home, ".cargo/credentials.toml", Store::File),
    (Base::Home, ".m2/settings-security.xml", Store::File),
    (Base::Home, ".pgpass", Store::File),
    (Base::Home, ".my.cnf", Store::File),
    // Keys, keyrings and password stores.
    (Base::Home, ".gnupg", Store::Dir),
    (Base::Home, ".password-store", Store::Dir),
    (Base::Data, "keyrings", Store::Dir),
    (Base::Home, ".pki", Store::Dir),
    (Base::Config, "op", Store::Dir),
    (Base::Home, ".op", Store::Dir),
    // Other services' tokens.
    (Base::Config, "github-copilot", Store::Dir),
    (Base::Home, ".cache/huggingface/token", Store::File),
    (Base::Home, ".huggingface/token", Store::File),
    (Base::Home, ".terraformrc", Store::File),
    (Base::Config, "rclone/rclone.conf", Store::File),
    (Base::Home, ".databrickscfg", Store::File),
    // Browsers' profiles: cookies and saved passwords.
    (Base::Home, ".mozilla/firefox", Store::Dir),
    (Base::Config, "google-chrome", Store::Dir),
    (Base::Config, "chromium", Store::Dir),
    (Base::Config, "BraveSoftware", Store::Dir),
    (Base::Config, "microsoft-edge", Store::Dir),
];

/// The agents' own logins: masked from any other agent, left to the one
/// whose login it is (its program's name).
const AGENT_LOGINS: &[(&str, Base, &str, Store)] = &[
    (
        "claude",
        Base::Home,
        ".claude/.credentials.json",
        Store::File,
    ),
    ("codex", Base::Home, ".codex/auth.json", Store::File),
    (
        "gemini",
        Base::Home,
        ".gemini/oauth_creds.json",
        Store::File,
    ),
    (
        "gemini",
        Base::Home,
        ".gemini/google_accounts.json",
        Store::File,
    ),
    ("opencode", Base::Data, "opencode/auth.json", Store::File),
    ("qwen", Base::Home, ".qwen/oauth_creds.json", Store::File),
];

/// Files of a key directory that hold no secret.
const SSH_PUBLIC: &[&str] = &[
    "config",
    "known_hosts",
    "known_hosts.old",
    "authorized_keys",
    "authorized_keys2",
];

/// Whether `name`, a file of a [`Store::Keys`] directory, holds no secret:
/// a public key or one of the files ssh reads that hold none. Anything
/// else (a key of any name, an agent socket) is masked.
pub fn ssh_public(name: &str) -> bool {
    name.ends_with(".pub") || SSH_PUBLIC.contains(&name)
}

/// Every store for `env`, as absolute paths, whether or not it exists;
/// the logins of every agent but `agent` (the one launched) among them.
pub fn credential_stores(env: &Environment, agent: Option<&str>) -> Vec<(String, Store)> {
    let home = env.home.trim_end_matches('/');
    let others = AGENT_LOGINS
        .iter()
        .filter(|(owner, ..)| Some(*owner) != agent)
        .map(|(_, base, rel, store)| (base, rel, store));
    let mut out = Vec::new();
    for (base, rel, store) in STORES.iter().map(|(b, r, s)| (b, r, s)).chain(others) {
        match base {
            Base::Home => out.push((format!("{home}/{rel}"), *store)),
            Base::Data => out.push((format!("{home}/.local/share/{rel}"), *store)),
            Base::Config => {
                for dir in env.config_dirs() {
                    out.push((format!("{dir}/{rel}"), *store));
                }
            }
        }
    }
    out
}

/// Whether the policy gives `path` back (`settings.enforce.readable`,
/// absolute): it or a directory holding it is named.
pub fn given_back(path: &str, readable: &[String]) -> bool {
    readable.iter().any(|r| {
        let r = r.trim_end_matches('/');
        path == r
            || path
                .strip_prefix(r)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_under_home_and_every_config_directory() {
        let env = Environment {
            home: "/home/u".into(),
            config_home: "/xdg".into(),
            ..Environment::default()
        };
        let stores = credential_stores(&env, Some("claude"));
        let has = |p: &str, s: Store| stores.contains(&(p.to_owned(), s));
        // The launched agent keeps its login; the others' are masked.
        assert!(!has("/home/u/.claude/.credentials.json", Store::File));
        assert!(has("/home/u/.codex/auth.json", Store::File));
        assert!(has("/home/u/.local/share/opencode/auth.json", Store::File));
        assert!(has("/home/u/.ssh", Store::Keys));
        assert!(has("/home/u/.aws", Store::Dir));
        assert!(has("/home/u/.config/gcloud", Store::Dir));
        assert!(has("/xdg/gcloud", Store::Dir));
        assert!(has("/home/u/.netrc", Store::File));
        assert!(has("/home/u/.local/share/keyrings", Store::Dir));
    }

    #[test]
    fn public_ssh_files_and_given_back_paths() {
        for name in ["id_ed25519.pub", "known_hosts", "config"] {
            assert!(ssh_public(name), "{name}");
        }
        for name in [
            "id_ed25519",
            "id_rsa",
            "deploy_key",
            "agent.sock",
            "config.bak",
        ] {
            assert!(!ssh_public(name), "{name}");
        }
        let readable = vec!["/home/u/.npmrc".to_owned(), "/home/u/.aws/".to_owned()];
        assert!(given_back("/home/u/.npmrc", &readable));
        assert!(given_back("/home/u/.aws/credentials", &readable));
        assert!(!given_back("/home/u/.npmrc2", &readable));
        assert!(!given_back("/home/u/.awsx", &readable));
    }
}
