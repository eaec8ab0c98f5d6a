//! `aileron import AGENT [--from FILE]... [-o FILE] [--force]`: an agent's
//! own permission rules as an aileron.yaml.
//!
//! Supported agents: `claude` (Claude Code's `permissions.allow/ask/deny`,
//! see `aileron_hooks::import`). Without `--from`, reads those of
//! `~/.claude/settings.json`, `.claude/settings.json` and
//! `.claude/settings.local.json` (of the current directory) that exist.
//! Prints the policy, or writes it to `-o FILE` (refusing to replace an
//! existing file without `--force`). Every rule that could not be
//! translated is listed on stderr with the reason, then a summary
//! `N rules translated, M not`.
//!
//! Exit status: 0 when every rule was translated, 1 when some were not (the
//! policy is still written, without them), 2 on an error (no settings file,
//! a settings file that is not valid JSON, an unknown agent, a file that
//! cannot be read or written).

use super::current_dir;
use aileron_cli::Error;
use std::io::Write;
use std::path::PathBuf;

pub struct Args {
    pub agent: String,
    pub from: Vec<PathBuf>,
    pub output: Option<PathBuf>,
    pub force: bool,
}

/// Agents `aileron import` reads, by the names it accepts.
const AGENTS: &[&str] = &["claude"];

/// How a `--from` file is named in the policy: relative to the working
/// directory inside it, `~/…` in the home directory, else as given.
fn shown(path: &std::path::Path, cwd: &std::path::Path, home: &str) -> String {
    let text = path.display().to_string();
    if let Ok(rest) = path.strip_prefix(cwd) {
        return rest.display().to_string();
    }
    match path.strip_prefix(home) {
        Ok(rest) if path.is_absolute() => format!("~/{}", rest.display()),
        _ => text,
    }
}

pub fn run(args: Args) -> Result<u8, Error> {
    if !matches!(args.agent.as_str(), "claude" | "claude-code") {
        return Err(Error::CannotImportFrom {
            agent: args.agent,
            supported: AGENTS,
        });
    }
    let cwd = current_dir()?;
    let home = std::env::var("HOME")
        .ok()
        .filter(|h| h.starts_with('/'))
        .ok_or(Error::NoHome)?;
    // (shown name, path to read), lowest precedence first.
    let sources: Vec<(String, PathBuf)> = if args.from.is_empty() {
        let candidates = [
            (
                "~/.claude/settings.json".to_owned(),
                PathBuf::from(&home).join(".claude/settings.json"),
            ),
            (
                ".claude/settings.json".to_owned(),
                cwd.join(".claude/settings.json"),
            ),
            (
                ".claude/settings.local.json".to_owned(),
                cwd.join(".claude/settings.local.json"),
            ),
        ];
        let mut found: Vec<(String, PathBuf)> = Vec::new();
        for (shown, path) in candidates.iter().filter(|(_, p)| p.is_file()) {
            // In the home directory the project settings are the user's.
            if !found.iter().any(|(_, p)| p == path) {
                found.push((shown.clone(), path.clone()));
            }
        }
        if found.is_empty() {
            return Err(Error::NoClaudeSettings {
                looked: candidates.into_iter().map(|(_, p)| p).collect(),
            });
        }
        found
    } else {
        args.from
            .iter()
            .map(|p| (shown(p, &cwd, &home), p.clone()))
            .collect()
    };
    let mut files = Vec::new();
    for (shown, path) in sources {
        let text = std::fs::read_to_string(&path).map_err(Error::io("read", &path))?;
        files.push((shown, text));
    }
    let cwd_text = cwd
        .to_str()
        .ok_or_else(|| Error::CurrentDirNotUtf8 { path: cwd.clone() })?;
    // The policy's own directory: paths inside it are written relative to it.
    let policy_dir = match args.output.as_ref().filter(|o| o.as_os_str() != "-") {
        Some(out) => aileron_engine::paths::parent(&aileron_engine::paths::absolute(
            &out.to_string_lossy(),
            cwd_text,
            Some(&home),
        ))
        .to_owned(),
        None => cwd_text.to_owned(),
    };
    let imported = aileron_hooks::import::claude_in(&files, cwd_text, &home, &policy_dir)?;

    match args.output.as_ref().filter(|o| o.as_os_str() != "-") {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(imported.yaml.as_bytes())
                .and_then(|()| out.flush())
                .map_err(Error::WritePolicy)?;
        }
        Some(path) => {
            if path.exists() && !args.force {
                return Err(Error::Exists { path: path.clone() });
            }
            std::fs::write(path, &imported.yaml).map_err(Error::io("write", path))?;
            eprintln!("wrote {}", path.display());
        }
    }
    for (rule, why) in &imported.untranslated {
        eprintln!("not translated: {rule}: {why}");
    }
    let missed = imported.untranslated.len();
    eprintln!(
        "{} rule{} translated, {missed} not",
        imported.translated,
        if imported.translated == 1 { "" } else { "s" }
    );
    Ok(if missed == 0 { 0 } else { 1 })
}
