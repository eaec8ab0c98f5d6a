//! `aileron check` and `aileron test`.

use super::{EXIT_POLICY, current_dir, load};
use serde_json::json;
use std::path::PathBuf;

/// `full`: `check` (validate, then run tests); otherwise `test` (tests only,
/// but a policy that does not load still fails).
pub fn run(path: Option<PathBuf>, as_json: bool, full: bool) -> Result<u8, String> {
    let cwd = current_dir()?;
    if let Some(p) = &path
        && !p.is_file()
    {
        let msg = format!("{}: error: no such policy file", p.display());
        return finish(
            as_json,
            json!({"valid": false, "errors": [{"file": p, "message": "no such policy file"}]}),
            &msg,
        );
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
    let outcomes = policy.run_tests();
    let failed = outcomes.iter().filter(|t| !t.passed).count();
    let passed = outcomes.len() - failed;
    if as_json {
        let report = json!({
            "valid": true,
            "file": loaded.project_file,
            "sources": policy.sources.iter().map(|(n, l)| json!({"name": n, "layer": l})).collect::<Vec<_>>(),
            "rules": policy.rules().len(),
            "errors": [],
            "tests": {"passed": passed, "failed": failed, "results": outcomes},
        });
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
    } else {
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
        }
        println!("{passed} passed, {failed} failed");
    }
    Ok(if failed > 0 { EXIT_POLICY } else { 0 })
}

fn finish(as_json: bool, report: serde_json::Value, text: &str) -> Result<u8, String> {
    if as_json {
        println!("{}", serde_json::to_string_pretty(&report).expect("JSON"));
    } else {
        println!("{text}");
    }
    Ok(EXIT_POLICY)
}
