//! The policy linter over the policies this repository ships: the built-in
//! profiles and the examples of the README say what they mean (no
//! warnings), and a warning points at the rule with its source line.

mod common;

use aileron_engine::diagnostic::{Code, Severity, quote};
use aileron_engine::lint::{AllowEffect, allow_effect, lint};
use aileron_engine::profiles::{BUILTIN_PREFIX, PROFILES};
use aileron_engine::{Layer, Source};
use common::*;

/// The ```yaml blocks of a Markdown text that are whole policies.
fn policies_in(markdown: &str) -> Vec<String> {
    markdown
        .split("```yaml\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("```").map(|(block, _)| block.to_owned()))
        .filter(|block| block.starts_with("version: 1"))
        .collect()
}

/// A true finding in a built-in profile, left as it is: `npx tsc *` is
/// written as an allow, but `npx *` (ask, priority 100) decides it first,
/// so `npx tsc` is asked about. Letting the allow win would let `npx tsc`
/// download and run the npm package `tsc` where TypeScript is not
/// installed; whether it should is the profile's call.
const KNOWN: &[(&str, u32)] = &[("/profiles/lang/node.yaml", 9)];

fn no_warnings(sources: &[Source]) {
    let policy = compile(sources);
    let mut warnings = lint(&policy);
    warnings.retain(|w| !KNOWN.contains(&(w.file.as_str(), w.line)));
    quote(&mut warnings, sources);
    assert!(
        warnings.is_empty(),
        "unexpected warnings:\n{}",
        show(&warnings)
    );
}

#[test]
fn the_known_finding_is_still_there() {
    let text = aileron_engine::profiles::builtin("lang/node").unwrap();
    let policy = compile(&[source(
        "/profiles/lang/node.yaml",
        text,
        Layer::Profile,
        "/profiles",
    )]);
    let found: Vec<(String, u32)> = lint(&policy)
        .into_iter()
        .map(|w| (w.file, w.line))
        .collect();
    assert_eq!(found, [(KNOWN[0].0.to_owned(), KNOWN[0].1)]);
}

#[test]
fn each_builtin_profile_read_as_a_users_file_has_no_warnings() {
    for (name, text) in PROFILES {
        no_warnings(&[source(
            &format!("/profiles/{name}.yaml"),
            text,
            Layer::Profile,
            "/profiles",
        )]);
    }
}

#[test]
fn the_readme_examples_over_every_builtin_profile_have_no_warnings() {
    let readme = policies_in(include_str!("../../../README.md"));
    assert!(!readme.is_empty(), "the README has a policy example");
    let reference = policies_in(include_str!("../../../docs/policy.md"));
    assert!(!reference.is_empty(), "docs/policy.md has a policy example");
    for text in readme.into_iter().chain(reference) {
        let mut sources: Vec<Source> = PROFILES
            .iter()
            .map(|(name, _)| {
                let mut p = builtin_profile(name);
                p.layer = if name.starts_with("os/") {
                    Layer::Os
                } else {
                    Layer::Lang
                };
                p
            })
            .collect();
        // The profiles it names come again as layer 4, as the loader adds them.
        for s in with_profiles(project(&text), &[]) {
            if !sources.iter().any(|p| p.name == s.name) {
                sources.push(s);
            }
        }
        no_warnings(&sources);
    }
}

#[test]
fn the_builtin_layers_are_not_linted() {
    // Layered as the loader layers them, a built-in profile's rules hide
    // each other where they overlap (os/linux and os/darwin share names);
    // that is theirs to sort out, not the user's.
    let sources: Vec<Source> = PROFILES
        .iter()
        .map(|(name, _)| {
            let mut p = builtin_profile(name);
            p.layer = Layer::Os;
            p
        })
        .collect();
    let policy = compile(&sources);
    assert!(
        policy
            .rules()
            .any(|r| r.origin.file.starts_with(BUILTIN_PREFIX))
    );
    assert_eq!(lint(&policy), vec![]);
}

#[test]
fn a_warning_points_at_the_rule_and_quotes_it() {
    let text = "version: 1\nask:\n  - {id: push, command: \"git push *\"}\nallow:\n  - \"git push origin feature\"  # always for this project\n";
    let sources = [project(text)];
    let policy = compile(&sources);
    let mut warnings = lint(&policy);
    quote(&mut warnings, &sources);
    assert_eq!(warnings.len(), 1, "{}", show(&warnings));
    let w = &warnings[0];
    assert_eq!(
        (w.severity, w.code),
        (Severity::Warning, Code::AllowOverridden)
    );
    assert_diag(
        w,
        FILE,
        pos(text, "\"git push origin", 0),
        &[
            "`push` (ask rule at /p/aileron.yaml:3:5, priority 100)",
            "`priority: 101`",
        ],
    );
    assert_eq!(
        w.to_string().lines().collect::<Vec<_>>()[1..],
        [
            "      - \"git push origin feature\"  # always for this project",
            "        ^"
        ]
    );
    assert!(
        w.headline().ends_with("[allow-overridden]"),
        "{}",
        w.headline()
    );
}

#[test]
fn an_always_answer_under_the_rule_that_asked() {
    // What the decision core asks before it appends "always for this
    // project": would the new allow rule take effect?
    let policy = load("version: 1\nask:\n  - {id: push, command: \"git push *\"}\n");
    let rule = aileron_engine::parse_rule(
        &source(
            "<amendment>",
            "{decision: allow, command: \"git push origin feature\"}",
            Layer::Project,
            DIR,
        ),
        HOME,
    )
    .unwrap();
    match allow_effect(&policy, &rule.matcher, rule.priority, Layer::Project) {
        AllowEffect::Overridden(o) => {
            assert_eq!((o.rule.as_str(), o.winning_priority), ("push", Some(101)))
        }
        AllowEffect::TakesEffect => panic!("the ask rule decides first"),
    }
    assert_eq!(
        allow_effect(&policy, &rule.matcher, 100, Layer::Project),
        AllowEffect::TakesEffect,
        "appended after the ask rule, at its priority, it wins the tie"
    );
}
