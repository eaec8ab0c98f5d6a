//! `aileron init`: a starter policy for the languages found here.

use super::current_dir;
use aileron_cli::Error;
use aileron_engine::profiles::LANGUAGE_MARKERS;

pub fn run(force: bool) -> Result<u8, Error> {
    let cwd = current_dir()?;
    let path = cwd.join(aileron_config::POLICY_FILE);
    if path.exists() && !force {
        return Err(Error::Exists { path });
    }
    let mut langs: Vec<&str> = Vec::new();
    for (marker, profile) in LANGUAGE_MARKERS {
        if cwd.join(marker).is_file() && !langs.contains(profile) {
            langs.push(profile);
        }
    }
    let text = starter_policy(&langs);
    std::fs::write(&path, &text).map_err(Error::io("write", &path))?;
    let found = if langs.is_empty() {
        "no language detected".to_owned()
    } else {
        format!("profiles: {}", langs.join(", "))
    };
    println!("wrote {} ({found})", path.display());
    println!(
        "next: `aileron check` to validate it, `aileron explain -- 'git push'` to see a decision"
    );
    Ok(0)
}

/// The starter file: profiles for `langs`, a cautious default, and examples.
pub fn starter_policy(langs: &[&str]) -> String {
    let profiles = langs
        .iter()
        .map(|l| format!("\"{l}\""))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        r#"# Aileron policy: decides what an AI agent may do in this project.
# Reference: `aileron schema`; check it with `aileron check`; try it with
# `aileron explain -- 'some command'`.
version: 1

# Built-in profiles for this project's languages (detected by `aileron init`).
profiles: [{profiles}]

# When no rule matches: allow | deny | ask | deny_writes
default: ask

settings:
  ask_mode: terminal        # terminal | ui (the dashboard of `aileron serve`)
  audit_log: .aileron/audit.jsonl
  timeout: 60               # seconds before an unanswered ask is denied

env:
  scrub: ["AWS_*", "*_SECRET", "*_TOKEN", "GITHUB_TOKEN", "OPENAI_*", "ANTHROPIC_API_KEY"]
  passthrough: ["HOME", "PATH", "TERM", "LANG"]

allow:
  - "git status"
  - "git diff *"
  - "git log *"
  - "git show *"

ask:
  - "git add *"
  - "git commit *"
  - "git push *"
  - id: web-requests
    description: requests that can change something on the web
    when:
      type: http.request
      http.method: {{in: [POST, PUT, PATCH, DELETE]}}

deny:
  - id: no-force-push
    description: force pushes rewrite shared history
    command: "git push *"
    when: {{tags: {{contains: force-push}}}}
  - id: no-env-files
    description: .env files hold secrets
    when:
      type: {{in: [fs.read, fs.write]}}
      fs.path: {{path: "**/.env*"}}

# Examples checked by `aileron test` and `aileron check`.
tests:
  - {{command: "git status", expect: allow}}
  - {{command: "git push --force origin main", expect: deny, rule: no-force-push}}
  - {{command: "git status; rm -rf build", expect: ask}}
  - action: {{type: fs.read, facets: {{fs: {{path: ./.env.local}}}}}}
    expect: deny
"#
    )
}
