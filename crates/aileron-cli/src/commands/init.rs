//! `aileron init`: a starter policy for the languages found here.

use super::current_dir;
use aileron_cli::Error;
use aileron_engine::profiles::LANGUAGE_MARKERS;
use std::path::Path;

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
    write_schema(&cwd)?;
    let ignored = ignore_data_dir(&cwd)?;
    let found = if langs.is_empty() {
        "no language detected".to_owned()
    } else {
        format!("profiles: {}", langs.join(", "))
    };
    println!("wrote {} ({found})", path.display());
    if ignored {
        println!("added .aileron/ to .gitignore (the audit log and the schema stay local)");
    }
    println!(
        "next: `aileron check` to validate it, `aileron explain -- 'git push'` to see a decision"
    );
    Ok(0)
}

/// Where the editor's YAML language server finds the schema, relative to
/// aileron.yaml. A file the installed `aileron` writes, rather than a URL:
/// it always matches the version that reads the policy, and works offline.
/// It sits in `.aileron/` (not committed): each checkout makes its own
/// with `aileron init` or `aileron schema > .aileron/schema.json`.
pub const SCHEMA_PATH: &str = ".aileron/schema.json";

fn write_schema(dir: &Path) -> Result<(), Error> {
    let path = dir.join(SCHEMA_PATH);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(Error::io("create", parent))?;
    }
    let schema = serde_json::to_string_pretty(&aileron_engine::schema::json_schema())
        .expect("schema is JSON");
    std::fs::write(&path, schema + "\n").map_err(Error::io("write", &path))
}

/// Adds `.aileron/` (the audit log, session state, the schema) to the
/// project's `.gitignore`, creating it, unless a line already ignores it.
/// Whether it changed the file.
fn ignore_data_dir(dir: &Path) -> Result<bool, Error> {
    let path = dir.join(".gitignore");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io("read", &path)(e)),
    };
    let already = text.lines().map(str::trim).any(|l| {
        matches!(
            l,
            ".aileron" | ".aileron/" | "/.aileron" | "/.aileron/" | ".aileron/*" | "/.aileron/*"
        )
    });
    if already {
        return Ok(false);
    }
    let sep = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let new =
        format!("{text}{sep}# Aileron's local data: audit log, sessions, schema\n.aileron/\n");
    std::fs::write(&path, new).map_err(Error::io("write", &path))?;
    Ok(true)
}

/// The starter file: profiles for `langs`, a cautious default, and examples.
pub fn starter_policy(langs: &[&str]) -> String {
    let profiles = langs
        .iter()
        .map(|l| format!("\"{l}\""))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        r#"# yaml-language-server: $schema={SCHEMA_PATH}
# Aileron policy: decides what an AI agent may do in this project.
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
