//! `aileron check` and `aileron test`.

use super::{EXIT_POLICY, current_dir, load};
use aileron_cli::Error;
use aileron_engine::{Diagnostic, Diagnostics, Layer, Policy, Source};
use serde_json::json;
use std::path::PathBuf;

/// `full`: `check` (validate, lint, then run tests); otherwise `test`
/// (tests only, but a policy that does not load still fails). Warnings
/// fail only with `deny_warnings`.
pub fn run(
    path: Option<PathBuf>,
    as_json: bool,
    full: bool,
    deny_warnings: bool,
) -> Result<u8, Error> {
    let cwd = current_dir()?;
    // A file that cannot be read exits 2 (README's table), not 1: there
    // is no policy to judge.
    if let Some(p) = &path
        && let Some(why) = super::policy_file_problem(p)
    {
        if !as_json {
            return Err(Error::PolicyFile {
                path: p.clone(),
                why,
            });
        }
        let report = json!({"valid": false, "errors": [{"file": p, "message": why}]});
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
        return Ok(2);
    }
    let loaded = match load(path, cwd) {
        Ok(l) => l,
        Err(diags) => {
            let text = diags.to_string();
            let report =
                json!({"valid": false, "errors": diags.0, "tests": {"passed": 0, "failed": 0}});
            return finish(as_json, report, &text);
        }
    };
    let policy = &loaded.policy;
    let warnings = if full { warnings(policy) } else { Vec::new() };
    let outcomes = policy.run_tests();
    let failed = outcomes.iter().filter(|t| !t.passed).count();
    let passed = outcomes.len() - failed;
    if as_json {
        let mut report = json!({
            "valid": true,
            "file": loaded.project_file,
            "sources": policy.sources.iter().map(|(n, l)| json!({"name": n, "layer": l})).collect::<Vec<_>>(),
            "rules": policy.rules().len(),
            "errors": [],
            "tests": {"passed": passed, "failed": failed, "results": outcomes},
        });
        if full {
            report["warnings"] = json!(warnings);
        }
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
    } else {
        if !warnings.is_empty() {
            println!("{}", Diagnostics(warnings.clone()));
        }
        for t in outcomes.iter().filter(|t| !t.passed) {
            println!(
                "{}: test failed: {}: {}",
                t.location,
                t.name,
                t.failure.as_deref().unwrap_or_default()
            );
        }
        if full {
            let file = loaded.project_file.as_ref().map_or(
                "(no aileron.yaml; built-in rules and profiles only)".to_owned(),
                |p| p.display().to_string(),
            );
            println!(
                "{file}: valid ({} rules from {} sources)",
                policy.rules().len(),
                policy.sources.len() + 1
            );
            match (warnings.len(), deny_warnings) {
                (0, _) => {}
                (1, false) => println!("1 warning"),
                (n, false) => println!("{n} warnings"),
                (1, true) => println!("1 warning, denied by --deny-warnings"),
                (n, true) => println!("{n} warnings, denied by --deny-warnings"),
            }
        }
        println!("{passed} passed, {failed} failed");
    }
    let denied = deny_warnings && !warnings.is_empty();
    Ok(if failed > 0 || denied { EXIT_POLICY } else { 0 })
}

/// The linter's warnings about the user's rules, each quoting its line
/// when its file can be read.
fn warnings(policy: &Policy) -> Vec<Diagnostic> {
    let mut warnings = aileron_engine::lint::lint(policy);
    let mut sources: Vec<Source> = Vec::new();
    for w in &warnings {
        if w.file.starts_with('/')
            && !sources.iter().any(|s| s.name == w.file)
            && let Ok(text) = std::fs::read_to_string(&w.file)
        {
            sources.push(Source {
                name: w.file.clone(),
                text,
                layer: Layer::Project,
                base_dir: String::new(),
            });
        }
    }
    aileron_engine::diagnostic::quote(&mut warnings, &sources);
    warnings
}

fn finish(as_json: bool, report: serde_json::Value, text: &str) -> Result<u8, Error> {
    if as_json {
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
    } else {
        println!("{text}");
    }
    Ok(EXIT_POLICY)
}
