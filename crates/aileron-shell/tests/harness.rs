//! The agents' shell invocations as recorded from the real agents
//! (`tests/fixtures/harness/AGENT-VERSION.json`, one file per version
//! tested): each wrapper is unwrapped to exactly the model's command, and
//! a command an agent passes bare is decided as it is. When an agent
//! changes its wrapper in a new version, recording it makes this fail.

use aileron_shell::harness::{model_command, unwrap};
use serde_json::Value;

fn fixtures() -> Vec<(String, Value)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harness");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .expect("fixture dir")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).expect("fixture");
            let name = e.file_name().to_string_lossy().into_owned();
            (name, serde_json::from_str(&text).expect("fixture JSON"))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The home directory the recording ran with, as the caller would know it:
/// the part of a snapshot path before `/.claude/` or `/.codex/`.
fn home_of(text: &str) -> String {
    for marker in ["/.claude/shell-snapshots/", "/.codex/shell_snapshots/"] {
        if let Some(i) = text.find(marker) {
            let start = text[..i].rfind([' ', '\'']).map_or(0, |s| s + 1);
            return text[start..i].to_owned();
        }
    }
    "/nonexistent".to_owned()
}

#[test]
fn every_recorded_invocation_is_decided_as_the_model_s_command() {
    let fixtures = fixtures();
    let agents: Vec<&str> = fixtures
        .iter()
        .map(|(_, f)| f["agent"].as_str().expect("agent"))
        .collect();
    for agent in ["claude-code", "codex", "gemini", "opencode"] {
        assert!(agents.contains(&agent), "no recording for {agent}");
    }
    let mut wrong = Vec::new();
    for (file, f) in &fixtures {
        for case in f["cases"].as_array().expect("cases") {
            let argv: Vec<&str> = case["argv"]
                .as_array()
                .expect("argv")
                .iter()
                .map(|a| a.as_str().expect("argv word"))
                .collect();
            let command = case["command"].as_str().expect("command");
            let text = *argv.last().expect("the -c text");
            let home = home_of(text);
            let decided = model_command(text.to_owned(), &home);
            // Codex's snapshot wrapper is decided by its last line, the
            // `exec SHELL -c CMD` that runs the command.
            let expected = if text != command && text.contains("__CODEX_SNAPSHOT_") {
                let at = text.find("\nexec '").expect("the exec line");
                let last = text[at + 1..].to_owned();
                assert!(last.starts_with("exec '"), "{file}: {last}");
                last
            } else {
                command.to_owned()
            };
            if decided != expected {
                wrong.push(format!(
                    "{file}: {argv:?}\n  decided {decided:?}\n  expected {expected:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A wrapper changed anywhere but where the model's command goes is not
/// harness: the whole text is decided as written.
#[test]
fn a_recorded_wrapper_changed_elsewhere_is_not_unwrapped() {
    let mut tried = 0;
    for (file, f) in fixtures() {
        for case in f["cases"].as_array().expect("cases") {
            let argv = case["argv"].as_array().expect("argv");
            let text = argv.last().and_then(Value::as_str).expect("text");
            let command = case["command"].as_str().expect("command");
            if text == command {
                continue;
            }
            let home = home_of(text);
            let at = text.find(command).unwrap_or(text.len());
            for (name, changed) in [
                ("a command before", format!("rm -rf ~; {text}")),
                ("a command after", format!("{text}\nrm -rf ~")),
                ("one byte of harness", {
                    let mut t = text.to_owned();
                    let i = if at > 0 { at / 2 } else { t.len() - 1 };
                    let c = if t.as_bytes()[i] == b'x' { "y" } else { "x" };
                    if t.is_char_boundary(i) && t.is_char_boundary(i + 1) {
                        t.replace_range(i..i + 1, c);
                    }
                    t
                }),
            ] {
                let got = unwrap(&changed, &home);
                assert!(
                    got.as_deref() != Some(command) || changed == text,
                    "{file}: {name}: still unwrapped to the command\n{changed}"
                );
                tried += 1;
            }
        }
    }
    assert!(tried > 10);
}
