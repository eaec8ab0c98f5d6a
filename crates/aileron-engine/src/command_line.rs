//! A shell command line lowered into Actions: one `shell.exec` per simple
//! command the analysis (crate `aileron-shell`) finds.

use crate::action::{Action, Session};
use crate::builtin::UNPARSABLE;
use aileron_shell::{Context, Limits, Sensitivity};
use serde_json::{Map, Value, json};

/// Where and for whom a command line runs.
#[derive(Clone, Debug)]
pub struct LineContext<'a> {
    /// Absolute working directory.
    pub cwd: &'a str,
    pub session: &'a Session,
    /// RFC 3339 time of the request (adapters read the clock; the engine does not).
    pub timestamp: &'a str,
    /// Id of the request; commands get `ID` (the first) and `ID.N`.
    pub id: &'a str,
    /// The file the kernel loads, when an exec supervisor saw it
    /// (`shell.exe` on every command of the line).
    pub exe: Option<&'a str>,
}

/// The actions of one line, and why the whole line is opaque, if it is.
#[derive(Clone, Debug)]
pub struct LineActions {
    pub actions: Vec<Action>,
    /// Index of the action each one was found inside.
    pub parents: Vec<Option<usize>>,
    pub notes: Vec<Vec<String>>,
    pub opaque: Option<String>,
}

/// Analyses `line` and builds its actions.
pub fn shell_actions(line: &str, cx: &LineContext<'_>, home: &str) -> LineActions {
    let mut analysis = aileron_shell::analyse(
        line,
        &Context {
            cwd: cx.cwd,
            home,
            limits: Limits::default(),
        },
    );
    if analysis.commands.is_empty() && analysis.opaque.is_none() && !is_blank(line) {
        // Fail closed: text that runs nothing by the analysis' account is
        // not evidence that it runs nothing.
        analysis.opaque = Some("the analysis found no command in a non-empty line".to_owned());
    }
    let base = |n: usize| Action {
        id: if n == 0 {
            cx.id.to_owned()
        } else {
            format!("{}.{n}", cx.id)
        },
        timestamp: cx.timestamp.to_owned(),
        kind: "shell.exec".into(),
        primary: "shell".into(),
        session: cx.session.clone(),
        ..Action::default()
    };
    let with_exe = |mut facet: Value| {
        if let (Some(exe), Value::Object(m)) = (cx.exe, &mut facet) {
            m.insert("exe".into(), exe.into());
        }
        facet
    };
    if let Some(reason) = &analysis.opaque {
        let mut a = base(0);
        a.summary = line.to_owned();
        a.sensitivity = Some(Sensitivity::Mutate);
        a.tags = vec![UNPARSABLE.to_owned()];
        a.facets.insert(
            "shell".into(),
            with_exe(shell_facet(line, "", &[], cx.cwd, line, &[], &[], &[])),
        );
        return LineActions {
            actions: vec![a],
            parents: vec![None],
            notes: vec![vec![reason.clone()]],
            opaque: Some(reason.clone()),
        };
    }
    let mut out = LineActions {
        actions: Vec::new(),
        parents: Vec::new(),
        notes: Vec::new(),
        opaque: None,
    };
    for (n, c) in analysis.commands.into_iter().enumerate() {
        let mut a = base(n);
        a.summary = c.command.clone();
        a.verb = c.binary.clone();
        a.sensitivity = Some(c.sensitivity);
        a.tags = c.tags.iter().map(|t| (*t).to_owned()).collect();
        a.facets.insert(
            "shell".into(),
            with_exe(shell_facet(
                &c.command,
                &c.binary,
                &c.argv,
                cx.cwd,
                line,
                &c.env_changes,
                &c.writes,
                &c.reads,
            )),
        );
        out.actions.push(a);
        out.parents.push(c.parent);
        out.notes.push(c.notes);
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn shell_facet(
    command: &str,
    binary: &str,
    // arguments after argv[0]
    argv: &[String],
    cwd: &str,
    line: &str,
    env_changes: &[String],
    writes: &[String],
    reads: &[String],
) -> Value {
    let mut m = Map::new();
    m.insert("command".into(), command.into());
    m.insert("binary".into(), binary.into());
    m.insert("args".into(), argv.join(" ").into());
    let full: Vec<&str> = std::iter::once(binary)
        .chain(argv.iter().map(String::as_str))
        .collect();
    m.insert("argv".into(), json!(full));
    m.insert("working_dir".into(), cwd.into());
    m.insert("line".into(), line.into());
    m.insert("env_changes".into(), json!(env_changes));
    m.insert("writes".into(), json!(writes));
    m.insert("reads".into(), json!(reads));
    Value::Object(m)
}

/// Only whitespace and comments.
fn is_blank(line: &str) -> bool {
    line.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#')
    })
}
