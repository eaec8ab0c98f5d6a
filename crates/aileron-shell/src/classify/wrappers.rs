//! Programs that run another program: `env`, `sudo`, `nice`, `xargs`,
//! `find -exec`, ... The wrapper is reported, and so is the program it runs.

use super::opts::{self, Operands, Spec, Table};
use super::{Facts, Inner, PathRef};
use crate::Sensitivity::{self, Mutate, Read, Write};
use crate::words::Word;

fn inner_note(name: &str) -> String {
    format!("inner command of `{name}`")
}

fn text(args: &[Word], i: usize) -> &str {
    args.get(i).map_or("", |w| w.text.as_str())
}

/// A name that can be assigned to (`NAME=value`).
pub(crate) fn assignment_name(s: &str) -> Option<&str> {
    let eq = s.find('=')?;
    let name = &s[..eq];
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut bytes = name.bytes();
    let first = bytes.next()?;
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return None;
    }
    bytes
        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        .then_some(name)
}

/// glibc's and musl's dynamic loaders: `ld-linux-x86-64.so.2 PROGRAM ARGS`
/// runs PROGRAM like an exec would.
fn is_dynamic_loader(name: &str) -> bool {
    name == "ld.so"
        || ((name.starts_with("ld-linux")
            || name.starts_with("ld64.so")
            || name.starts_with("ld-musl"))
            && name.contains(".so"))
}

/// The loader's options before the program: those that name code to load
/// (`--preload`, `--audit`, `--library-path`) or that the analysis does not
/// know make the command opaque.
fn dynamic_loader(name: &str, args: &[Word]) -> Facts {
    let mut i = 1;
    while i < args.len() {
        match text(args, i) {
            "--list" | "--verify" | "--help" | "--version" | "--list-tunables"
            | "--list-diagnostics" => return Facts::new(Read),
            "--inhibit-cache" => i += 1,
            "--argv0" | "--inhibit-rpath" | "--glibc-hwcaps-prefix" => i += 2,
            "--" => {
                i += 1;
                break;
            }
            a if a.starts_with('-') => {
                let mut f = Facts::new(Mutate);
                f.opaque(format!("`{name} {a}` loads code the analysis does not see"));
                return f;
            }
            _ => break,
        }
    }
    wrap(name, args, i, Read)
}

/// Facts for a wrapper that runs `args[start..]` (or does nothing when there
/// is no command).
fn wrap(name: &str, args: &[Word], start: usize, base: Sensitivity) -> Facts {
    let mut f = Facts::new(base);
    f.run_argv(args, start, inner_note(name), true);
    f
}

/// Skips `--` at `i`.
fn after_dashes(args: &[Word], i: usize) -> usize {
    if text(args, i) == "--" { i + 1 } else { i }
}

pub(super) fn classify(name: &str, args: &[Word]) -> Option<Facts> {
    let f = match name {
        n if is_dynamic_loader(n) => dynamic_loader(name, args),
        "env" => env(args),
        "sudo" => sudo(args),
        "sudoedit" => {
            let mut f = Facts::new(Mutate);
            for i in opts::parse(
                args,
                1,
                &Spec {
                    short_val: "CDghpPrtTuU",
                    permute: true,
                    ..Spec::default()
                },
            )
            .operands
            {
                f.write(i);
            }
            f
        }
        "doas" => {
            let i = opts::first_operand(
                args,
                1,
                &Spec {
                    short_val: "uC",
                    ..Spec::default()
                },
            );
            if args.iter().skip(1).any(|w| w.text == "-C") {
                Facts::new(Read)
            } else {
                wrap(name, args, i, Mutate)
            }
        }
        "pkexec" => {
            let i = opts::first_operand(
                args,
                1,
                &Spec {
                    long_val: &["user"],
                    ..Spec::default()
                },
            );
            wrap(name, args, i, Mutate)
        }
        "gosu" | "su-exec" => wrap(name, args, 2, Mutate),
        "command" => {
            let p = opts::first_operand(args, 1, &Spec::default());
            let lookup = args[1..p.min(args.len())]
                .iter()
                .any(|w| w.text.starts_with('-') && (w.text.contains('v') || w.text.contains('V')));
            if lookup {
                Facts::new(Read)
            } else {
                wrap(name, args, p, Read)
            }
        }
        "builtin" => wrap(name, args, after_dashes(args, 1), Read),
        "exec" => {
            let i = opts::first_operand(
                args,
                1,
                &Spec {
                    short_val: "a",
                    ..Spec::default()
                },
            );
            wrap(name, args, i, Read)
        }
        "nohup" => wrap(name, args, after_dashes(args, 1), Read),
        "setsid" | "unbuffer" | "caffeinate" => {
            let i = opts::first_operand(
                args,
                1,
                &Spec {
                    short_val: "tw",
                    ..Spec::default()
                },
            );
            wrap(name, args, i, Read)
        }
        "nice" => {
            let mut i = 1;
            while i < args.len() {
                let a = text(args, i);
                if a == "--" {
                    i += 1;
                    break;
                }
                if a == "-n" || a == "--adjustment" {
                    i += 2;
                } else if a.starts_with('-') && a.len() > 1 {
                    i += 1;
                } else {
                    break;
                }
            }
            wrap(name, args, i, Read)
        }
        "ionice" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "cnpPu",
                    long_val: &["class", "classdata", "pid", "pgid", "uid"],
                    ..Spec::default()
                },
            );
            if p.has('p', "pid") || p.has('P', "pgid") || p.has('u', "uid") {
                Facts::new(Mutate)
            } else {
                wrap(
                    name,
                    args,
                    p.operands.first().copied().unwrap_or(args.len()),
                    Read,
                )
            }
        }
        "time" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "of",
                    long_val: &["output", "format"],
                    ..Spec::default()
                },
            );
            let mut f = wrap(
                name,
                args,
                p.operands.first().copied().unwrap_or(args.len()),
                Read,
            );
            if let Some((i, off)) = p.get('o', "output").and_then(|o| o.value) {
                f.write_at(i, off);
                f.at_least(Write);
            }
            f
        }
        "timeout" | "gtimeout" => {
            let i = opts::first_operand(
                args,
                1,
                &Spec {
                    short_val: "sk",
                    long_val: &["signal", "kill-after"],
                    ..Spec::default()
                },
            );
            // args[i] is the duration.
            wrap(name, args, i + 1, Read)
        }
        "stdbuf" => {
            let i = opts::first_operand(
                args,
                1,
                &Spec {
                    short_val: "ioe",
                    long_val: &["input", "output", "error"],
                    ..Spec::default()
                },
            );
            wrap(name, args, i, Read)
        }
        "chroot" => {
            let i = opts::first_operand(
                args,
                1,
                &Spec {
                    long_val: &["userspec", "groups"],
                    ..Spec::default()
                },
            );
            let mut f = wrap(name, args, i + 1, Mutate);
            if i < args.len() {
                f.read(i);
            }
            f
        }
        "strace" | "ltrace" => {
            let spec = if name == "strace" {
                Spec {
                    short_val: "oepsuEaPSXbIO",
                    long_val: &[
                        "output",
                        "trace",
                        "signal",
                        "status",
                        "attach",
                        "user",
                        "env",
                        "string-limit",
                    ],
                    ..Spec::default()
                }
            } else {
                Spec {
                    short_val: "oepsulnAaDFx",
                    long_val: &["output"],
                    ..Spec::default()
                }
            };
            let p = opts::parse(args, 1, &spec);
            let mut f = wrap(
                name,
                args,
                p.operands.first().copied().unwrap_or(args.len()),
                Read,
            );
            if let Some((i, off)) = p.get('o', "output").and_then(|o| o.value) {
                f.write_at(i, off);
                f.at_least(Write);
            }
            if p.has('p', "attach") {
                f.at_least(Mutate);
            }
            f
        }
        "taskset" | "chrt" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "TPD",
                    ..Spec::default()
                },
            );
            if p.has('p', "pid") || p.has('a', "all-tasks") && name == "taskset" {
                Facts::new(Mutate)
            } else {
                // The first operand is the mask or priority.
                wrap(
                    name,
                    args,
                    p.operands.get(1).copied().unwrap_or(args.len()),
                    Read,
                )
            }
        }
        "xvfb-run" => {
            let i = opts::first_operand(
                args,
                1,
                &Spec {
                    short_val: "nsfepw",
                    ..Spec::default()
                },
            );
            wrap(name, args, i, Read)
        }
        "valgrind" => wrap(
            name,
            args,
            opts::first_operand(args, 1, &Spec::default()),
            Read,
        ),
        "unshare" => {
            let i = opts::first_operand(
                args,
                1,
                &Spec {
                    short_val: "SGRw",
                    ..Spec::default()
                },
            );
            wrap(name, args, i, Mutate)
        }
        "busybox" => {
            if args.len() > 1 && !text(args, 1).starts_with('-') {
                wrap(name, args, 1, Read)
            } else {
                Facts::new(Read)
            }
        }
        "flock" => flock(args),
        "watch" => watch(args),
        "xargs" => xargs(args),
        "parallel" => parallel(args),
        "find" | "gfind" => find(args),
        "script" => script(args),
        "su" | "runuser" => su(name, args),
        "entr" => {
            let p = opts::first_operand(args, 1, &Spec::default());
            let shell = args[1..p.min(args.len())]
                .iter()
                .any(|w| w.text.starts_with('-') && w.text.contains('s'));
            if shell {
                let mut f = Facts::new(Read);
                f.run_line_arg(args, p, 0, "command run by `entr -s`".to_owned());
                f
            } else {
                wrap(name, args, p, Read)
            }
        }
        "hyperfine" => hyperfine(args),
        "npx" | "bunx" | "uvx" | "pnpx" => npx(name, args, 1),
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "pixi" | "bundle" | "direnv"
        | "nix" | "nix-shell" | "pnpm" | "yarn" | "npm" => {
            return runner(name, args);
        }
        _ => return None,
    };
    Some(f)
}

/// GNU env 9: options end at the first operand.
const ENV: Table = Table {
    short: "0iu:C:S:va:",
    long: &[
        "ignore-environment",
        "null",
        "unset=",
        "chdir=",
        "split-string=",
        "block-signal=?",
        "default-signal=?",
        "ignore-signal=?",
        "list-signal-handling",
        "debug",
        "argv0=",
        "help",
        "version",
    ],
    operands: Operands::Files,
    permute: false,
};

fn env(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let p = opts::parse(args, 1, &Spec::of(&ENV));
    for why in &p.problems {
        f.opaque(format!("`env`: {why}"));
    }
    f.data.extend(&p.values);
    for o in &p.opts {
        if o.is('i', "ignore-environment") {
            f.env_changes
                .extend(["*".to_owned(), "SHELL".to_owned(), "AILERON_*".to_owned()]);
            f.notes
                .push("`env -i` clears the whole environment".to_owned());
        } else if o.is('u', "unset") {
            if let Some(v) = o.value_text(args) {
                f.env_changes.push(v.to_owned());
            }
        } else if o.is('C', "chdir") {
            // The inner command's paths are relative to a directory the
            // analysis does not follow into it.
            f.opaque("`env --chdir` runs its command in another directory");
        } else if o.is('a', "argv0") {
            f.opaque("`env --argv0` runs a program under another name");
        } else if o.is('S', "split-string") {
            // The string is split into words and run with the rest.
            let Some((vi, off)) = o.value else { continue };
            let mut line = text(args, vi).get(off..).unwrap_or("").to_owned();
            let mut dynamic = args[vi].dynamic;
            for w in args.iter().skip(vi + 1) {
                line.push(' ');
                line.push_str(&w.text);
                dynamic |= w.dynamic;
            }
            f.run_line(&line, dynamic, "inner command of `env -S`".to_owned());
            f.skip_from = vi;
            return f;
        }
    }
    let mut i = p.operands.first().copied().unwrap_or(args.len());
    if text(args, i) == "-" {
        f.env_changes
            .extend(["*".to_owned(), "SHELL".to_owned(), "AILERON_*".to_owned()]);
        i += 1;
    }
    // env takes any `NAME=VALUE` (`BASH_FUNC_f%%=() {...}` exports a function).
    while let Some(name) = args
        .get(i)
        .and_then(|w| w.text.split_once('=').map(|(n, _)| n))
        .filter(|n| !n.is_empty())
    {
        f.env_changes.push(name.to_owned());
        f.env_assigns.push(i);
        f.skip.push(i);
        f.data.push(i);
        i += 1;
    }
    if let Some(program) = args.get(i).filter(|w| !w.dynamic) {
        let program = crate::paths::basename(&program.text);
        for a in f.env_assigns.clone() {
            let name = args[a].text.split_once('=').map_or("", |(n, _)| n);
            if let Some(why) = super::env::risk(program, name) {
                f.opaque(why);
            }
        }
    }
    f.run_argv(args, i, inner_note("env"), true);
    f
}

fn sudo(args: &[Word]) -> Facts {
    let n = args.len();
    let mut i = 1;
    let mut edit = false;
    let mut list = false;
    let mut shell = false;
    const LONG_VAL: &[&str] = &[
        "user",
        "group",
        "chdir",
        "chroot",
        "close-from",
        "host",
        "prompt",
        "role",
        "type",
        "command-timeout",
        "other-user",
        "login-class",
    ];
    while i < n {
        let a = text(args, i);
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long {
                "edit" => edit = true,
                "list" => list = true,
                "shell" | "login" => shell = true,
                _ => {}
            }
            i += if !long.contains('=') && LONG_VAL.contains(&long) {
                2
            } else {
                1
            };
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let mut consumed_next = false;
            for (pos, ch) in a[1..].char_indices() {
                match ch {
                    'e' => edit = true,
                    'l' => list = true,
                    's' | 'i' => shell = true,
                    'C' | 'D' | 'g' | 'h' | 'p' | 'r' | 't' | 'T' | 'u' | 'U' | 'R' => {
                        consumed_next = 1 + pos + ch.len_utf8() == a.len();
                        break;
                    }
                    _ => {}
                }
            }
            i += if consumed_next { 2 } else { 1 };
            continue;
        }
        break;
    }
    let mut f = Facts::new(Mutate);
    if edit {
        for j in i..n {
            f.write(j);
        }
        return f;
    }
    if list {
        f.sensitivity = Read;
        return f;
    }
    while i < n {
        match assignment_name(text(args, i)) {
            Some(name) => {
                f.env_changes.push(name.to_owned());
                f.env_assigns.push(i);
                f.skip.push(i);
                i += 1;
            }
            None => break,
        }
    }
    if i >= n && shell {
        f.notes
            .push("`sudo` starts an interactive shell".to_owned());
    }
    f.run_argv(args, i, inner_note("sudo"), true);
    f
}

fn flock(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let spec = Spec {
        short_val: "wEc",
        long_val: &["timeout", "wait", "conflict-exit-code", "command"],
        ..Spec::default()
    };
    let p = opts::parse(args, 1, &spec);
    if let Some(o) = p.get('c', "command")
        && let Some((i, off)) = o.value
    {
        f.run_line_arg(args, i, off, "command run by `flock -c`".to_owned());
    }
    let Some(&file) = p.operands.first() else {
        return f;
    };
    if !text(args, file).bytes().all(|b| b.is_ascii_digit()) {
        f.write(file);
        f.at_least(Write);
    }
    // `flock FILE -c CMD` or `flock FILE CMD ARGS`.
    let next = file + 1;
    if matches!(text(args, next), "-c" | "--command") {
        f.run_line_arg(args, next + 1, 0, "command run by `flock -c`".to_owned());
    } else {
        f.run_argv(args, next, inner_note("flock"), true);
    }
    f
}

fn watch(args: &[Word]) -> Facts {
    let n = args.len();
    let mut i = 1;
    let mut exec = false;
    while i < n {
        let a = text(args, i);
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if long == "exec" {
                exec = true;
            }
            i += if matches!(long, "interval" | "equexit") {
                2
            } else {
                1
            };
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let mut next = false;
            for (pos, ch) in a[1..].char_indices() {
                if ch == 'x' {
                    exec = true;
                }
                if ch == 'n' || ch == 'q' {
                    next = 1 + pos + 1 == a.len();
                    break;
                }
            }
            i += if next { 2 } else { 1 };
            continue;
        }
        break;
    }
    let mut f = Facts::new(Read);
    if exec {
        f.run_argv(args, i, inner_note("watch"), false);
    } else if i < n {
        let line = join(&args[i..]);
        let dynamic = args[i..].iter().any(|w| w.dynamic);
        f.run_line(&line, dynamic, inner_note("watch"));
        f.skip_from = i;
    }
    f
}

fn join(words: &[Word]) -> String {
    let mut s = String::new();
    for (k, w) in words.iter().enumerate() {
        if k > 0 {
            s.push(' ');
        }
        s.push_str(&w.text);
    }
    s
}

fn xargs(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let n = args.len();
    let mut i = 1;
    const LONG_VAL: &[&str] = &[
        "max-args",
        "max-procs",
        "delimiter",
        "arg-file",
        "max-chars",
        "process-slot-var",
    ];
    while i < n {
        let a = text(args, i);
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if let Some(file) = long.strip_prefix("arg-file=") {
                let _ = file;
                f.reads.push(PathRef::Arg {
                    idx: i,
                    off: "--arg-file=".len(),
                });
            }
            if long == "arg-file" {
                f.read(i + 1);
            }
            i += if LONG_VAL.contains(&long) { 2 } else { 1 };
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let mut next = false;
            for (pos, ch) in a[1..].char_indices() {
                let rest_at = 1 + pos + ch.len_utf8();
                match ch {
                    'I' | 'n' | 'P' | 'd' | 'a' | 'L' | 's' | 'E' => {
                        if rest_at == a.len() {
                            next = true;
                            if ch == 'a' {
                                f.read(i + 1);
                            }
                        } else if ch == 'a' {
                            f.reads.push(PathRef::Arg {
                                idx: i,
                                off: rest_at,
                            });
                        }
                        break;
                    }
                    'i' | 'l' | 'e' => break,
                    _ => {}
                }
            }
            i += if next { 2 } else { 1 };
            continue;
        }
        break;
    }
    if i < n {
        f.run_argv(args, i, inner_note("xargs"), false);
        if let Some(Inner::Argv { more_args, .. }) = f.inners.last_mut() {
            *more_args = true;
        }
    } else {
        f.inners.push(Inner::Synthetic {
            argv: vec!["echo".to_owned()],
            writes: Vec::new(),
            note: "`xargs` with no command runs `echo`".to_owned(),
            sensitivity: Read,
        });
    }
    f
}

fn parallel(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let n = args.len();
    let sep = (1..n)
        .find(|&k| matches!(text(args, k), ":::" | "::::" | ":::+" | "::::+"))
        .unwrap_or(n);
    const LONG_VAL: &[&str] = &[
        "jobs",
        "sshlogin",
        "arg-file",
        "delimiter",
        "max-args",
        "joblog",
        "results",
        "res",
        "tmpdir",
        "timeout",
        "retries",
        "colsep",
        "halt",
        "delay",
        "memfree",
        "load",
        "max-procs",
        "workdir",
        "wd",
        "basefile",
        "bf",
        "return",
        "transfer-file",
        "tf",
        "env",
        "sshdelay",
        "tag-string",
        "tagstring",
        "max-replace-args",
        "max-line-length-allowed",
        "block",
        "block-size",
    ];
    let mut i = 1;
    while i < sep {
        let a = text(args, i);
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            i += if !long.contains('=') && LONG_VAL.contains(&long) {
                2
            } else {
                1
            };
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let first = a[1..].chars().next().unwrap_or(' ');
            let takes = "jSadInNLlECP".contains(first);
            i += if takes && a.len() == 2 { 2 } else { 1 };
            continue;
        }
        break;
    }
    if i < sep {
        let line = join(&args[i..sep]);
        let dynamic = args[i..sep].iter().any(|w| w.dynamic);
        f.run_line(&line, dynamic, "command run by `parallel`".to_owned());
        for k in i..sep {
            f.skip.push(k);
        }
    } else {
        // `parallel ::: 'cmd1' 'cmd2'`: the arguments are the commands.
        let mut k = sep + 1;
        while k < n {
            if !text(args, k).starts_with(":::") {
                f.run_line_arg(args, k, 0, "command run by `parallel`".to_owned());
            }
            k += 1;
        }
    }
    // `::::` takes files of arguments.
    let mut k = sep;
    let mut files = false;
    while k < n {
        let t = text(args, k);
        if t.starts_with(":::") {
            files = t.starts_with("::::");
        } else if files {
            f.read(k);
        }
        k += 1;
    }
    f
}

/// How many arguments each of `find`'s expressions takes: the positive list
/// of what the analysis models (GNU findutils 4.9). Anything else is opaque.
const FIND_EXPRS: &[(&str, usize)] = &[
    ("-name", 1),
    ("-iname", 1),
    ("-path", 1),
    ("-ipath", 1),
    ("-wholename", 1),
    ("-iwholename", 1),
    ("-regex", 1),
    ("-iregex", 1),
    ("-type", 1),
    ("-xtype", 1),
    ("-size", 1),
    ("-perm", 1),
    ("-user", 1),
    ("-group", 1),
    ("-uid", 1),
    ("-gid", 1),
    ("-mtime", 1),
    ("-atime", 1),
    ("-ctime", 1),
    ("-mmin", 1),
    ("-amin", 1),
    ("-cmin", 1),
    ("-newer", 1),
    ("-anewer", 1),
    ("-cnewer", 1),
    ("-maxdepth", 1),
    ("-mindepth", 1),
    ("-links", 1),
    ("-inum", 1),
    ("-samefile", 1),
    ("-lname", 1),
    ("-ilname", 1),
    ("-used", 1),
    ("-fstype", 1),
    ("-printf", 1),
    ("-context", 1),
    ("-regextype", 1),
    ("-print", 0),
    ("-print0", 0),
    ("-ls", 0),
    ("-prune", 0),
    ("-quit", 0),
    ("-true", 0),
    ("-false", 0),
    ("-empty", 0),
    ("-readable", 0),
    ("-writable", 0),
    ("-executable", 0),
    ("-nouser", 0),
    ("-nogroup", 0),
    ("-depth", 0),
    ("-d", 0),
    ("-mount", 0),
    ("-xdev", 0),
    ("-noleaf", 0),
    ("-ignore_readdir_race", 0),
    ("-noignore_readdir_race", 0),
    ("-daystart", 0),
    ("-follow", 0),
    ("-warn", 0),
    ("-nowarn", 0),
    ("-a", 0),
    ("-and", 0),
    ("-o", 0),
    ("-or", 0),
    ("-not", 0),
    ("!", 0),
    ("(", 0),
    (")", 0),
    (",", 0),
    ("-help", 0),
    ("--help", 0),
    ("-version", 0),
    ("--version", 0),
];

fn find(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let n = args.len();
    let mut i = 1;
    // Leading options: -H -L -P -D debugopts -Olevel.
    while i < n {
        match text(args, i) {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut roots: Vec<PathRef> = Vec::new();
    while i < n {
        let t = text(args, i);
        if t.starts_with('-') || t == "(" || t == "!" || t == ")" || t == "," {
            break;
        }
        roots.push(PathRef::arg(i));
        f.read(i);
        i += 1;
    }
    if roots.is_empty() {
        roots.push(PathRef::Lit(".".to_owned()));
    }
    while i < n {
        let t = text(args, i);
        match t {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = i + 1;
                let mut end = start;
                while end < n {
                    let e = text(args, end);
                    if e == ";" || (e == "+" && end > start && text(args, end - 1) == "{}") {
                        break;
                    }
                    end += 1;
                }
                if end > start {
                    find_exec(&mut f, args, t, start..end);
                    f.inners.push(Inner::Argv {
                        start,
                        end,
                        note: format!("run by `find {t}`"),
                        stdin: t.starts_with("-ok"),
                        placeholder: roots.clone(),
                        more_args: false,
                    });
                    for k in start..end {
                        f.skip.push(k);
                    }
                }
                i = end + 1;
            }
            "-delete" => {
                f.inners.push(Inner::Synthetic {
                    argv: vec!["rm".to_owned(), "{}".to_owned()],
                    writes: roots.clone(),
                    note: "`find -delete` deletes what it finds".to_owned(),
                    sensitivity: Mutate,
                });
                f.writes.extend(roots.iter().cloned());
                f.recursive_delete = true;
                f.at_least(Mutate);
                i += 1;
            }
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                f.write(i + 1);
                f.at_least(Write);
                i += if t == "-fprintf" { 3 } else { 2 };
            }
            "-files0-from" => {
                f.opaque(
                    "`find -files0-from` walks the places a file names, not known before it runs",
                );
                i += 2;
            }
            t if t.starts_with("-newer") && t.len() == 8 => {
                f.skip.push(i + 1);
                f.data.push(i + 1);
                i += 2;
            }
            t => match FIND_EXPRS.iter().find(|(e, _)| *e == t) {
                Some(&(_, takes)) => {
                    for k in i + 1..(i + 1 + takes).min(n) {
                        f.skip.push(k);
                        f.data.push(k);
                    }
                    i += 1 + takes;
                }
                None => {
                    f.opaque(format!(
                        "`find {t}` is not an expression the analysis knows"
                    ));
                    i += 1;
                }
            },
        }
    }
    f
}

/// What the command `args[range]` run by `find ACTION` does to the files
/// it finds: `{}` in a file it writes is every file below the roots (and
/// `{}/..` is above them); with `-execdir` its relative paths are relative
/// to each found file's directory, which is not known here.
fn find_exec(f: &mut Facts, args: &[Word], action: &str, range: std::ops::Range<usize>) {
    let inner = &args[range];
    if inner[0].text.contains("{}") || inner[0].dynamic {
        f.opaque(format!("`find {action}` runs the files it finds"));
        return;
    }
    let facts = super::classify(inner);
    let word_of = |pr: &PathRef| match pr {
        PathRef::Arg { idx, off } => inner.get(*idx).map(|w| w.text.get(*off..).unwrap_or("")),
        PathRef::Into {
            dir: Some((d, off)),
            ..
        } => inner.get(*d).map(|w| w.text.get(*off..).unwrap_or("")),
        _ => None,
    };
    let mut found_written = false;
    for w in facts.writes.iter().filter_map(word_of) {
        if w.contains("{}") {
            found_written = true;
            if w.split("{}")
                .skip(1)
                .any(|rest| rest.split('/').any(|c| c == ".."))
            {
                f.opaque(format!(
                    "`find {action}` writes `{w}`, above the files it finds"
                ));
            }
        } else if action.ends_with("dir") && !w.starts_with('/') && !w.starts_with('~') {
            f.opaque(format!(
                "`find {action}` writes `{w}` in the directory of each file it finds, not known before it runs"
            ));
        }
    }
    if action.ends_with("dir") {
        let relative_read = facts
            .reads
            .iter()
            .filter_map(word_of)
            .any(|w| !w.contains("{}") && !w.starts_with('/') && !w.starts_with('~'));
        if relative_read {
            f.opaque(format!(
                "`find {action}` reads paths relative to the directory of each file it finds, not known before it runs"
            ));
        }
    }
    if found_written {
        // Which of them it writes depends on the tests before the action,
        // which the analysis does not evaluate: any file below the roots.
        f.opaque(format!(
            "`find {action}` writes the files it finds, any file below where it looks"
        ));
        f.at_least(Write);
    }
}

fn script(args: &[Word]) -> Facts {
    let mut f = Facts::new(Write);
    let spec = Spec {
        short_val: "cEoTIOBm",
        long_val: &[
            "command",
            "echo",
            "output-limit",
            "log-timing",
            "log-in",
            "log-out",
            "log-io",
            "logging-format",
        ],
        permute: true,
        ..Spec::default()
    };
    let p = opts::parse(args, 1, &spec);
    if let Some(o) = p.get('c', "command")
        && let Some((i, off)) = o.value
    {
        f.run_line_arg(args, i, off, "command run by `script -c`".to_owned());
    }
    match p.operands.first() {
        Some(&i) => f.write(i),
        None => f.writes.push(PathRef::Lit("typescript".to_owned())),
    }
    f
}

fn su(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let spec = Spec {
        short_val: "csgGwu",
        long_val: &[
            "command",
            "session-command",
            "shell",
            "group",
            "supp-group",
            "whitelist-environment",
            "user",
        ],
        permute: false,
        ..Spec::default()
    };
    // `runuser -u USER -- CMD ARGS` runs an argv.
    if name == "runuser" {
        let p = opts::parse(
            args,
            1,
            &Spec {
                permute: false,
                ..spec
            },
        );
        if p.has('u', "user") {
            let start = p.operands.first().copied().unwrap_or(args.len());
            f.run_argv(args, start, inner_note(name), true);
            return f;
        }
    }
    let p = opts::parse(
        args,
        1,
        &Spec {
            permute: true,
            ..spec
        },
    );
    let mut ran = false;
    for o in p
        .opts
        .iter()
        .filter(|o| o.is('c', "command") || o.is_long("session-command"))
    {
        if let Some((i, off)) = o.value {
            f.run_line_arg(args, i, off, format!("command run by `{name} -c`"));
            ran = true;
        }
    }
    if !ran {
        f.notes
            .push(format!("`{name}` starts a shell as another user"));
    }
    f
}

fn hyperfine(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let spec = Spec {
        short_val: "wmMrspcPDLSnuN",
        long_val: &[
            "warmup",
            "min-runs",
            "max-runs",
            "runs",
            "setup",
            "prepare",
            "conclude",
            "cleanup",
            "parameter-scan",
            "parameter-step-size",
            "parameter-list",
            "shell",
            "command-name",
            "time-unit",
            "export-asciidoc",
            "export-csv",
            "export-json",
            "export-markdown",
            "export-orgmode",
            "style",
            "sort",
            "output",
            "input",
            "reference",
        ],
        permute: true,
        ..Spec::default()
    };
    let p = opts::parse(args, 1, &spec);
    for o in &p.opts {
        if o.is('s', "setup")
            || o.is('p', "prepare")
            || o.is('c', "cleanup")
            || o.is_long("conclude")
            || o.is_long("reference")
        {
            if let Some((i, off)) = o.value {
                f.run_line_arg(args, i, off, "command run by `hyperfine`".to_owned());
            }
        } else if matches!(o.name, super::opts::Name::Long(l) if l.starts_with("export-"))
            && let Some((i, off)) = o.value
        {
            f.write_at(i, off);
            f.at_least(Write);
        }
    }
    for &i in &p.operands {
        f.run_line_arg(args, i, 0, "command run by `hyperfine`".to_owned());
    }
    f
}

/// `npx PKG ARGS`, `npx -c 'CMD'`: runs a package's program.
fn npx(name: &str, args: &[Word], start: usize) -> Facts {
    let mut f = Facts::new(Mutate);
    let spec = Spec {
        short_val: "pc",
        long_val: &["package", "call", "from"],
        ..Spec::default()
    };
    let p = opts::parse(args, start, &spec);
    if let Some(o) = p.get('c', "call")
        && let Some((i, off)) = o.value
    {
        f.run_line_arg(args, i, off, format!("command run by `{name} -c`"));
    }
    if let Some(&i) = p.operands.first() {
        f.run_argv(args, i, inner_note(name), true);
    }
    f.notes
        .push(format!("`{name}` may download and run a package"));
    f
}

/// `uv run`, `poetry run`, `bundle exec`, `npm exec`, `nix develop -c`, ...
fn runner(name: &str, args: &[Word]) -> Option<Facts> {
    let sub = text(args, 1);
    let label = format!("{name} {sub}");
    match (name, sub) {
        ("uv", "run") => {
            let spec = Spec {
                short_val: "pw",
                long_val: &[
                    "with",
                    "python",
                    "project",
                    "directory",
                    "env-file",
                    "extra",
                    "group",
                    "package",
                    "index",
                    "index-url",
                    "extra-index-url",
                    "with-requirements",
                    "with-editable",
                    "only-group",
                    "no-group",
                ],
                ..Spec::default()
            };
            let i = opts::first_operand(args, 2, &spec);
            let mut f = Facts::new(Write);
            f.run_argv(args, i, inner_note(&label), true);
            Some(f)
        }
        ("uv", "tool") if text(args, 2) == "run" => Some(npx("uv tool run", args, 3)),
        ("poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "pixi", "run") | ("bundle", "exec") => {
            let i = opts::first_operand(args, 2, &Spec::default());
            let mut f = Facts::new(Write);
            f.run_argv(args, i, inner_note(&label), true);
            Some(f)
        }
        ("npm", "exec" | "x") | ("pnpm", "exec" | "dlx") | ("yarn", "dlx" | "exec") => {
            Some(npx(&label, args, 2))
        }
        ("direnv", "exec") => {
            let mut f = Facts::new(Read);
            f.run_argv(args, 3, inner_note(&label), true);
            Some(f)
        }
        ("nix-shell", _) => {
            let mut f = Facts::new(Write);
            let p = opts::parse(
                args,
                1,
                &Spec {
                    long_val: &["run", "command", "packages", "arg", "argstr", "attr"],
                    permute: true,
                    ..Spec::default()
                },
            );
            for o in p
                .opts
                .iter()
                .filter(|o| o.is_long("run") || o.is_long("command"))
            {
                if let Some((i, off)) = o.value {
                    f.run_line_arg(args, i, off, "command run by `nix-shell`".to_owned());
                }
            }
            Some(f)
        }
        ("nix", "develop" | "shell") => {
            let mut f = Facts::new(Write);
            if let Some(k) = (2..args.len()).find(|&k| matches!(text(args, k), "-c" | "--command"))
            {
                f.run_argv(args, k + 1, inner_note(&label), true);
            }
            Some(f)
        }
        _ => None,
    }
}
