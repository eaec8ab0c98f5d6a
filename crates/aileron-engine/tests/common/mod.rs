//! Shared helpers for the engine's integration tests.
//!
//! Every test builds its policy from YAML text the way the loader
//! (`aileron-config`) does: built-in profiles named in `profiles:` become
//! their own [`Source`] (layer `Profile`, name `<builtin>/NAME`) placed
//! before the file that names them.
//!
//! Actions for single shell commands are built by hand ([`shell`]), as the
//! shell analysis would lower a simple command, so that most tests do not
//! depend on the `aileron-shell` crate. Tests that go through
//! [`Policy::evaluate_line`] do.

#![allow(dead_code)]

use aileron_engine::profiles::{self, BUILTIN_PREFIX};
use aileron_engine::{
    Action, Diagnostic, Diagnostics, Environment, Layer, LineContext, LineVerdict, Policy,
    Sensitivity, Session, Source, State, Verdict, parse_document,
};
use serde_json::{Value, json};

pub const HOME: &str = "/home/u";
pub const DIR: &str = "/p";
pub const FILE: &str = "/p/aileron.yaml";
pub const USER_FILE: &str = "/home/u/.aileron/settings.yaml";
/// A Monday, 12:00 UTC.
pub const TS: &str = "2026-01-05T12:00:00Z";

pub fn environment() -> Environment {
    Environment::new(HOME)
}

pub fn source(name: &str, text: &str, layer: Layer, base_dir: &str) -> Source {
    Source {
        name: name.to_owned(),
        text: text.to_owned(),
        layer,
        base_dir: base_dir.to_owned(),
    }
}

/// The project's `aileron.yaml` at `/p/aileron.yaml`.
pub fn project(text: &str) -> Source {
    source(FILE, text, Layer::Project, DIR)
}

/// The user's `~/.aileron/settings.yaml`.
pub fn user(text: &str) -> Source {
    source(USER_FILE, text, Layer::User, "/home/u/.aileron")
}

/// A profile file (`./team-policy.yaml` style) of layer `Profile`.
pub fn profile_file(name: &str, text: &str) -> Source {
    let base = aileron_engine::paths::parent(name).to_owned();
    source(name, text, Layer::Profile, &base)
}

/// A built-in profile as the loader passes it.
pub fn builtin_profile(name: &str) -> Source {
    let text = profiles::builtin(name).unwrap_or_else(|| panic!("no built-in profile {name}"));
    source(
        &format!("{BUILTIN_PREFIX}{name}"),
        text,
        Layer::Profile,
        "/",
    )
}

/// `src` preceded by the profiles it names: built-in names, or files
/// among `files` (absolute path → text). Each profile is added once.
pub fn with_profiles(src: Source, files: &[Source]) -> Vec<Source> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    add_with_profiles(src, files, &mut out, &mut seen);
    out
}

fn add_with_profiles(src: Source, files: &[Source], out: &mut Vec<Source>, seen: &mut Vec<String>) {
    if let Ok(doc) = parse_document(&src, HOME) {
        for (name, _) in &doc.profiles {
            if profiles::builtin(name).is_some() {
                if seen.contains(name) {
                    continue;
                }
                seen.push(name.clone());
                let mut p = builtin_profile(name);
                p.layer = src.layer.min(Layer::Profile);
                add_with_profiles(p, files, out, seen);
            } else {
                let path = aileron_engine::paths::absolute(name, &src.base_dir, Some(HOME));
                if seen.contains(&path) {
                    continue;
                }
                seen.push(path.clone());
                let file = files
                    .iter()
                    .find(|f| f.name == path)
                    .unwrap_or_else(|| panic!("test gives no profile file {path}"));
                let mut p = file.clone();
                p.layer = src.layer.min(Layer::Profile);
                add_with_profiles(p, files, out, seen);
            }
        }
    }
    out.push(src);
}

pub fn show(diags: &[Diagnostic]) -> String {
    Diagnostics(diags.to_vec()).to_string()
}

/// Compiles sources given lowest layer first; panics with the diagnostics.
pub fn compile(sources: &[Source]) -> Policy {
    Policy::from_sources(sources, &environment())
        .unwrap_or_else(|d| panic!("policy does not load:\n{}", show(&d)))
}

/// The project policy `text` with the built-in profiles it names.
pub fn load(text: &str) -> Policy {
    compile(&with_profiles(project(text), &[]))
}

/// The diagnostics of sources that must not load.
pub fn errors_of(sources: &[Source]) -> Vec<Diagnostic> {
    match Policy::from_sources(sources, &environment()) {
        Ok(_) => panic!(
            "policy loaded, but an error was expected; sources:\n{}",
            sources
                .iter()
                .map(|s| format!("--- {}\n{}", s.name, s.text))
                .collect::<String>()
        ),
        Err(d) => d,
    }
}

/// The diagnostics of a project policy that must not load.
pub fn load_err(text: &str) -> Vec<Diagnostic> {
    errors_of(&with_profiles(project(text), &[]))
}

/// The single diagnostic of a project policy that must not load.
pub fn load_err1(text: &str) -> Diagnostic {
    let d = load_err(text);
    assert_eq!(
        d.len(),
        1,
        "expected exactly one diagnostic, got:\n{}",
        show(&d)
    );
    d.into_iter().next().unwrap()
}

/// 1-based (line, column) of the `nth` (0-based) occurrence of `needle` in `text`.
pub fn pos(text: &str, needle: &str, nth: usize) -> (u32, u32) {
    let (offset, _) = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` occurs fewer than {} times", nth + 1));
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32 + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = text[line_start..offset].chars().count() as u32 + 1;
    (line, col)
}

/// Asserts a diagnostic's place and that its message holds every fragment.
#[track_caller]
pub fn assert_diag(d: &Diagnostic, file: &str, at: (u32, u32), fragments: &[&str]) {
    assert_eq!(d.file, file, "file of: {d}");
    assert_eq!((d.line, d.col), at, "line:col of: {d}");
    for f in fragments {
        assert!(
            d.message.contains(f),
            "message lacks `{f}`:\n{d}\n(full message: {})",
            d.message
        );
    }
}

/// A `shell.exec` action for one simple command, as the analysis lowers it
/// (split on spaces; no redirects, no tags), run in `/p`.
pub fn shell(cmd: &str) -> Action {
    shell_with(cmd, DIR, Sensitivity::Mutate, &[])
}

/// Like [`shell`], classified `read`.
pub fn shell_read(cmd: &str) -> Action {
    shell_with(cmd, DIR, Sensitivity::Read, &[])
}

/// Like [`shell`], run in `cwd`.
pub fn shell_in(cmd: &str, cwd: &str) -> Action {
    shell_with(cmd, cwd, Sensitivity::Mutate, &[])
}

pub fn shell_with(cmd: &str, cwd: &str, sensitivity: Sensitivity, tags: &[&str]) -> Action {
    let argv: Vec<&str> = cmd.split(' ').filter(|w| !w.is_empty()).collect();
    let binary = argv.first().copied().unwrap_or_default();
    let args = argv.get(1..).unwrap_or_default().join(" ");
    let facets = json!({
        "shell": {
            "command": cmd,
            "binary": binary,
            "args": args,
            "argv": argv,
            "working_dir": cwd,
            "line": cmd,
            "env_changes": [],
            "writes": [],
            "reads": [],
        }
    });
    Action {
        id: "a1".into(),
        timestamp: TS.parse().ok(),
        kind: "shell.exec".into(),
        summary: cmd.into(),
        verb: binary.into(),
        sensitivity: Some(sensitivity),
        primary: "shell".into(),
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        facets: facets.as_object().cloned().unwrap(),
        session: Session {
            cwd: Some(cwd.into()),
            ..Session::default()
        },
        ..Action::default()
    }
}

/// An action from its JSON form, with a timestamp (unless given) and normalized.
pub fn action(v: Value) -> Action {
    let mut a: Action = serde_json::from_value(v).expect("a valid action");
    if a.timestamp.is_none() {
        a.timestamp = TS.parse().ok();
    }
    if a.session.cwd.is_none() {
        a.session.cwd = Some(DIR.into());
    }
    a.normalize();
    a
}

/// `action` placed in a session.
pub fn in_session(
    mut a: Action,
    plugin: Option<&str>,
    profile: Option<&str>,
    integration: Option<&str>,
) -> Action {
    a.session.plugin = plugin.map(str::to_owned);
    a.session.profile = profile.map(str::to_owned);
    a.session.integration = integration.map(str::to_owned);
    a
}

pub fn decide(policy: &Policy, a: &Action) -> Verdict {
    policy.evaluate(a, &State::default())
}

/// Decides a command line (needs the shell analysis), run in `/p`.
pub fn decide_line(policy: &Policy, line: &str) -> LineVerdict {
    in_project(|cx| policy.evaluate_line(line, cx, &State::default()))
}

/// Like [`decide_line`], with an explanation per command.
pub fn explain_line(policy: &Policy, line: &str) -> LineVerdict {
    in_project(|cx| policy.explain_line(line, cx, &State::default()))
}

fn in_project(f: impl FnOnce(&LineContext<'_>) -> LineVerdict) -> LineVerdict {
    let session = Session {
        cwd: Some(DIR.into()),
        ..Session::default()
    };
    f(&LineContext {
        cwd: DIR,
        session: &session,
        timestamp: TS.parse().ok(),
        id: "l1",
        exe: None,
    })
}

/// `(decision, rule id)` of a verdict, for compact table assertions.
pub fn outcome(v: &Verdict) -> (&'static str, Option<&str>) {
    (v.decision.as_str(), v.rule.as_deref())
}

/// The auto-generated id of the `index`th rule of `bucket` in the project file.
pub fn auto_id(bucket: &str, index: usize) -> String {
    format!("{FILE}:{bucket}[{index}]")
}
