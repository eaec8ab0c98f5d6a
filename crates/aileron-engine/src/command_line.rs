//! A shell command line lowered into Actions: one `shell.exec` per simple
//! command the analysis (crate `aileron-shell`) finds.

use crate::action::{Action, ActionType, Session};
use crate::builtin::UNPARSABLE;
use aileron_shell::{Context, Limits, Sensitivity};
use serde_json::{Map, Value, json};

/// Where and for whom a command line runs: what the line's text does not
/// say but its actions carry.
#[derive(Clone, Debug)]
pub struct LineContext<'a> {
    /// Absolute working directory: relative paths resolve against it.
    pub cwd: &'a str,
    /// Who runs the line; every command's action carries it.
    pub session: &'a Session,
    /// When the line was requested (adapters read the clock; the engine
    /// does not); `None` leaves `time` and `rate` rules unmatched.
    pub timestamp: Option<jiff::Timestamp>,
    /// Id of the request; commands get `ID` (the first) and `ID.N`.
    pub id: &'a str,
    /// The file the kernel loads, when an exec supervisor saw it
    /// (`shell.exe` on every command of the line).
    pub exe: Option<&'a str>,
}

/// The actions of one line, and why the whole line is opaque, if it is.
#[derive(Clone, Debug)]
pub struct LineActions {
    /// One `shell.exec` per simple command, in the order they were found.
    pub actions: Vec<Action>,
    /// Index of the action each one was found inside.
    pub parents: Vec<Option<usize>>,
    /// Per action: what the analysis noticed (for explanations).
    pub notes: Vec<Vec<String>>,
    /// Per action: the files it reads and writes, as `fs.read` / `fs.write`
    /// actions (see [`file_accesses`]).
    pub files: Vec<Vec<Action>>,
    /// Why the line could not be analysed; it is then one `unparsable` action.
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
        timestamp: cx.timestamp,
        kind: ActionType::ShellExec,
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
            files: vec![Vec::new()],
            opaque: Some(reason.clone()),
        };
    }
    let mut out = LineActions {
        actions: Vec::new(),
        parents: Vec::new(),
        notes: Vec::new(),
        files: Vec::new(),
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
        out.files
            .push(file_accesses(&a, &c.binary, &c.argv, &c.reads, &c.writes));
        out.actions.push(a);
        out.parents.push(c.parent);
        out.notes.push(c.notes);
    }
    out
}

/// The files a command reads and writes as the `fs.read` / `fs.write`
/// actions an agent's file tools would raise, so that a rule about a file
/// holds however the file is reached (`cat secret.txt` as much as a Read
/// tool). A command that reads directories whole (`grep -r`, `rg`, `tar`,
/// `cp -r`) reads `DIR/**`: a path pattern, decided by every rule that
/// could match a file it names (see `Policy::file_verdict`).
pub fn file_accesses(
    command: &Action,
    binary: &str,
    argv: &[String],
    reads: &[String],
    writes: &[String],
) -> Vec<Action> {
    let whole = reads_directories_whole(binary, argv.iter().map(String::as_str));
    let access = |n: usize, kind: &str, op: &str, path: String| {
        let mut a = Action {
            id: format!("{}.f{n}", command.id),
            timestamp: command.timestamp,
            kind: kind.into(),
            summary: format!("{op} {path}"),
            verb: op.to_owned(),
            primary: "fs".into(),
            sensitivity: Some(if op == "read" {
                Sensitivity::Read
            } else {
                Sensitivity::Write
            }),
            session: command.session.clone(),
            ..Action::default()
        };
        a.facets
            .insert("fs".into(), json!({"path": path, "op": op}));
        a
    };
    let mut out = Vec::with_capacity(reads.len() + writes.len());
    for r in reads {
        out.push(access(out.len(), "fs.read", "read", r.clone()));
        if whole && !r.ends_with("/**") {
            let below = format!("{}/**", r.trim_end_matches('/'));
            out.push(access(out.len(), "fs.read", "read", below));
        }
    }
    for w in writes {
        out.push(access(out.len(), "fs.write", "write", w.clone()));
    }
    out
}

/// Archivers, recursive copies and recursive searches read every file
/// below the directories they are given.
pub(crate) fn reads_directories_whole<'a>(
    binary: &str,
    mut args: impl Iterator<Item = &'a str>,
) -> bool {
    const ARCHIVERS: &[&str] = &["tar", "zip", "7z", "rsync", "scp", "cpio", "pax"];
    const RECURSIVE: &[&str] = &["rg", "ag", "ack"];
    const RECURSIVE_WHEN_ASKED: &[&str] = &["cp", "grep", "egrep", "fgrep", "chmod", "chown"];
    if ARCHIVERS.contains(&binary) {
        return true;
    }
    if RECURSIVE.contains(&binary) {
        // `rg --files` lists the names it would search, reading none.
        return !args.any(|a| a == "--files");
    }
    RECURSIVE_WHEN_ASKED.contains(&binary)
        && args.any(|a| {
            a == "--recursive"
                || a == "--dereference-recursive"
                || a == "--archive"
                || a.strip_prefix('-')
                    .is_some_and(|f| !f.starts_with('-') && f.contains(['r', 'R', 'a']))
        })
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
