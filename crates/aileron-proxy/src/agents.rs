//! Which endpoints a launched agent talks to for its own model: its
//! defaults, the base URLs its environment names, and those in its
//! configuration files. The proxy tags requests to them
//! (`builtin:agent-model-api` allows them unless the policy says otherwise).

use std::path::{Path, PathBuf};

/// The agent's own model endpoints (`scheme://host:port`): its defaults,
/// the base URLs its environment names, and those in its configuration.
pub fn model_endpoints(agent: Option<&str>, env: &[(String, String)], home: &Path) -> Vec<String> {
    let get = |k: &str| {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let mut urls: Vec<String> = Vec::new();
    let (defaults, vars): (&[&str], &[&str]) = match agent.unwrap_or_default() {
        "claude" => (
            &["https://api.anthropic.com", "https://statsig.anthropic.com"],
            &["ANTHROPIC_BASE_URL"],
        ),
        "codex" => (
            &["https://api.openai.com", "https://chatgpt.com"],
            &["OPENAI_BASE_URL"],
        ),
        "gemini" => (
            &[
                "https://generativelanguage.googleapis.com",
                "https://cloudcode-pa.googleapis.com",
            ],
            &["GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL"],
        ),
        "opencode" => (
            &["https://api.anthropic.com", "https://api.openai.com"],
            &["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"],
        ),
        _ => (&[], &[]),
    };
    urls.extend(defaults.iter().map(|u| (*u).to_owned()));
    urls.extend(vars.iter().filter_map(|v| get(v)));
    let config_files: Vec<PathBuf> = match agent.unwrap_or_default() {
        "codex" => vec![
            get("CODEX_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml"),
        ],
        "opencode" => {
            let config = get("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".config"))
                .join("opencode");
            vec![
                config.join("opencode.json"),
                config.join("opencode.jsonc"),
                PathBuf::from("opencode.json"),
            ]
        }
        _ => Vec::new(),
    };
    for file in config_files {
        if let Ok(text) = std::fs::read_to_string(&file) {
            urls.extend(quoted_after(&text, &["base_url", "baseURL"]));
        }
    }
    let mut endpoints: Vec<String> = urls.iter().filter_map(|u| endpoint(u)).collect();
    endpoints.sort();
    endpoints.dedup();
    endpoints
}

/// The quoted values given to any of `keys` (`key = "v"`, `"key": "v"`).
fn quoted_after(text: &str, keys: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for key in keys {
        let mut rest = text;
        while let Some(i) = rest.find(key) {
            rest = &rest[i + key.len()..];
            let after = rest.trim_start_matches(['"', ' ', '\t']);
            let Some(after) = after.strip_prefix(['=', ':']) else {
                continue;
            };
            let after = after.trim_start();
            if let Some(v) = after.strip_prefix('"')
                && let Some(end) = v.find('"')
            {
                out.push(v[..end].to_owned());
            }
        }
    }
    out
}

/// `scheme://host:port` of a URL, the port made explicit.
fn endpoint(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !p.contains(']') => (h, p.parse::<u16>().ok()?),
        _ => (authority, default),
    };
    if host.is_empty() {
        return None;
    }
    Some(format!("{scheme}://{}:{port}", host.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_from_defaults_environment_and_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let codex = dir.path().join("codex");
        std::fs::create_dir_all(&codex).unwrap();
        std::fs::write(
            codex.join("config.toml"),
            "model_provider = \"fake\"\n[model_providers.fake]\nbase_url = \"http://127.0.0.1:4321/v1\"\n",
        )
        .unwrap();
        let env = vec![
            (
                "CODEX_HOME".to_owned(),
                codex.to_string_lossy().into_owned(),
            ),
            (
                "OPENAI_BASE_URL".to_owned(),
                "https://User@Proxy.Example:8443/v1".to_owned(),
            ),
        ];
        let apis = model_endpoints(Some("codex"), &env, dir.path());
        assert_eq!(
            apis,
            vec![
                "http://127.0.0.1:4321",
                "https://api.openai.com:443",
                "https://chatgpt.com:443",
                "https://proxy.example:8443",
            ]
        );
        assert!(model_endpoints(Some("vim"), &env, dir.path()).is_empty());
    }
}
