//! Shells, interpreters and programs with their own little languages
//! (`awk`, `sed`), and the builtins that run strings (`eval`, `source`,
//! `trap`, `alias`).

use super::opts::{self, Spec};
use super::{Facts, PathRef};
use crate::Sensitivity::{Mutate, Read, Write};
use crate::tags;
use crate::words::Word;

fn text(args: &[Word], i: usize) -> &str {
    args.get(i).map_or("", |w| w.text.as_str())
}

pub(crate) fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "bash"
            | "sh"
            | "zsh"
            | "dash"
            | "ksh"
            | "mksh"
            | "pdksh"
            | "ash"
            | "yash"
            | "fish"
            | "rbash"
            | "tcsh"
            | "csh"
    )
}

/// Strips a version suffix: `python3.12` → `python`, `perl5.36` → `perl`.
fn family(name: &str) -> &str {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match base {
        "python" | "pypy" => "python",
        "ruby" | "perl" | "php" | "lua" | "node" | "julia" => base,
        _ => name,
    }
}

pub(super) fn classify(name: &str, args: &[Word]) -> Option<Facts> {
    if is_shell(name) {
        return Some(shell(name, args));
    }
    let f = match family(name) {
        "python" => python(name, args),
        "node" | "nodejs" => interpreter(
            name,
            args,
            &Spec {
                short_val: "eprC",
                long_val: &[
                    "eval",
                    "print",
                    "require",
                    "import",
                    "loader",
                    "experimental-loader",
                    "input-type",
                    "conditions",
                    "env-file",
                ],
                ..Spec::default()
            },
            &['e', 'p'],
            &["eval", "print"],
        ),
        "ruby" => interpreter(
            name,
            args,
            &Spec {
                short_val: "eIrECF",
                ..Spec::default()
            },
            &['e'],
            &[],
        ),
        "perl" => perl(name, args),
        "php" => interpreter(
            name,
            args,
            &Spec {
                short_val: "rBREFfdcz",
                ..Spec::default()
            },
            &['r', 'B', 'R', 'E'],
            &[],
        ),
        "lua" | "luajit" => interpreter(
            name,
            args,
            &Spec {
                short_val: "el",
                ..Spec::default()
            },
            &['e'],
            &[],
        ),
        "julia" => interpreter(
            name,
            args,
            &Spec {
                short_val: "eEJCtp",
                long_val: &["eval", "print", "project"],
                ..Spec::default()
            },
            &['e', 'E'],
            &["eval", "print"],
        ),
        "Rscript" | "R" => interpreter(
            name,
            args,
            &Spec {
                short_val: "e",
                ..Spec::default()
            },
            &['e'],
            &[],
        ),
        "osascript" => interpreter(
            name,
            args,
            &Spec {
                short_val: "els",
                ..Spec::default()
            },
            &['e'],
            &[],
        ),
        "deno" => deno(args),
        "bun" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "ep",
                    long_val: &["eval", "print"],
                    ..Spec::default()
                },
            );
            if p.has('e', "eval") || p.has('p', "print") {
                inline(name, Facts::new(Mutate))
            } else {
                return None;
            }
        }
        "pwsh" | "powershell" | "powershell.exe" => {
            let mut f = Facts::new(Mutate);
            let inline_flag = args.iter().skip(1).any(|w| {
                let t = w.text.to_ascii_lowercase();
                t == "-c" || t.starts_with("-command") || t.starts_with("-e") || t == "-cwa"
            });
            if inline_flag {
                f = inline(name, f);
            } else if args.len() == 1 {
                f.stdin_program = Some(false);
            }
            f
        }
        "awk" | "gawk" | "mawk" | "nawk" => awk(name, args),
        "sed" | "gsed" => sed(args),
        "eval" => eval(args),
        "source" | "." => source(name, args),
        "trap" => {
            let mut f = Facts::new(Read);
            let first = text(args, 1);
            if args.len() > 2 && !first.starts_with('-') {
                f.run_line_arg(args, 1, 0, "command run by `trap`".to_owned());
            }
            f
        }
        "alias" => {
            let mut f = Facts::new(Read);
            for i in 1..args.len() {
                if let Some(eq) = text(args, i).find('=') {
                    f.run_line_arg(args, i, eq + 1, "alias definition".to_owned());
                }
            }
            f
        }
        "at" | "batch" => {
            let mut f = Facts::new(Mutate);
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "qfmMtlrd",
                    permute: true,
                    ..Spec::default()
                },
            );
            match p.get('f', "") {
                Some(o) => {
                    if let Some((i, off)) = o.value {
                        f.reads.push(PathRef::Arg { idx: i, off });
                    }
                }
                None => f.stdin_program = Some(true),
            }
            f
        }
        _ => return None,
    };
    Some(f)
}

fn inline(name: &str, mut f: Facts) -> Facts {
    f.tag(
        tags::INLINE_INTERPRETER,
        format!("`{name}` runs a program given inline"),
    );
    f
}

/// bash's long options, which it also takes after a single dash.
const BASH_LONG: &[&str] = &[
    "debugger",
    "dump-po-strings",
    "dump-strings",
    "help",
    "init-file",
    "login",
    "noediting",
    "noprofile",
    "norc",
    "posix",
    "pretty-print",
    "protected",
    "rcfile",
    "rpm-requires",
    "restricted",
    "verbose",
    "version",
    "wordexp",
];

fn shell(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let n = args.len();
    let mut i = 1;
    let mut command = false;
    let mut stdin = false;
    while i < n {
        let a = text(args, i);
        // A lone `+` ends the options too (`bash -c + CMD` runs CMD).
        if a == "--" || a == "-" || a == "+" {
            i += 1;
            stdin |= a == "-";
            break;
        }
        // bash also takes its long options with one dash (`-rcfile`).
        let long = a.strip_prefix("--").or_else(|| {
            a.strip_prefix('-')
                .filter(|l| name.ends_with("bash") && BASH_LONG.contains(l))
        });
        if let Some(long) = long {
            match long {
                "rcfile" | "init-file" => {
                    f.read(i + 1);
                    f.skip.push(i + 1);
                    f.opaque(format!(
                        "`{name} {a}` runs a start-up file the analysis does not read"
                    ));
                    i += 2;
                }
                "command" => {
                    command = true;
                    i += 1;
                }
                "init-command" => {
                    f.run_line_arg(args, i + 1, 0, format!("init command of `{name}`"));
                    i += 2;
                }
                _ => i += 1,
            }
            continue;
        }
        if a.len() > 1 && (a.starts_with('-') || a.starts_with('+')) {
            let mut next = 0;
            for ch in a[1..].chars() {
                match ch {
                    // bash and dash read `+c` as `-c`, and `+s` as `-s`.
                    'c' => command = true,
                    's' => stdin = true,
                    'o' | 'O' => next += 1,
                    'C' if name == "fish" => {
                        f.run_line_arg(args, i + 1 + next, 0, format!("init command of `{name}`"));
                        next += 1;
                    }
                    _ => {}
                }
            }
            i += 1 + next;
            continue;
        }
        break;
    }
    if command {
        if i < n {
            if !name.ends_with("bash")
                && (text(args, i).contains("$'") || text(args, i).contains("$\""))
            {
                // dash and other POSIX shells have no `$'...'`: they read
                // it as `$` and a quoted string, unlike the analysis.
                f.opaque(format!("`{name}` reads `$'...'` differently from bash"));
            }
            f.run_line_arg(args, i, 0, format!("payload of `{name} -c`"));
            f.skip_from = i;
        }
    } else if stdin || i >= n {
        f.stdin_program = Some(true);
    } else if args[i].procsub {
        f.tag(
            tags::PIPE_TO_SHELL,
            format!("`{name}` runs the output of a command"),
        );
    } else if matches!(
        text(args, i),
        "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0"
    ) {
        f.stdin_program = Some(true);
    } else {
        f.read(i);
    }
    f
}

/// A generic interpreter: options in `spec`; `inline_short`/`inline_long`
/// give the program inline; otherwise the first operand is the script, and
/// with no script the program comes from standard input.
fn interpreter(
    name: &str,
    args: &[Word],
    spec: &Spec,
    inline_short: &[char],
    inline_long: &[&str],
) -> Facts {
    let p = opts::parse(args, 1, spec);
    let mut f = Facts::new(Mutate);
    let mut is_inline = false;
    for o in &p.opts {
        let hit = match o.name {
            opts::Name::Short(c) => inline_short.contains(&c),
            opts::Name::Long(l) => inline_long.contains(&l),
        };
        if hit {
            is_inline = true;
            if let Some((i, _)) = o.value {
                f.skip.push(i);
            }
        }
    }
    if is_inline {
        return inline(name, f);
    }
    script_or_stdin(name, args, p.operands.first().copied(), f)
}

fn script_or_stdin(name: &str, args: &[Word], script: Option<usize>, mut f: Facts) -> Facts {
    match script {
        None => f.stdin_program = Some(false),
        Some(i) if args[i].procsub => {
            f.tag(
                tags::PIPE_TO_SHELL,
                format!("`{name}` runs the output of a command"),
            );
        }
        Some(i) if matches!(text(args, i), "-" | "/dev/stdin") => f.stdin_program = Some(false),
        Some(i) => f.read(i),
    }
    f
}

fn python(name: &str, args: &[Word]) -> Facts {
    let p = opts::parse(
        args,
        1,
        &Spec {
            short_val: "cmWXQ",
            ..Spec::default()
        },
    );
    let mut f = Facts::new(Mutate);
    if let Some(o) = p.get('c', "") {
        if let Some((i, _)) = o.value {
            f.skip.push(i);
        }
        return inline(name, f);
    }
    if let Some(o) = p.get('m', "") {
        let module = o.value_text(args).unwrap_or("");
        if module == "base64"
            && p.operands
                .iter()
                .any(|&i| matches!(text(args, i), "-d" | "--decode"))
        {
            f.decoder = true;
        }
        if let Some((i, _)) = o.value {
            f.skip_from = i + 1;
        }
        return f;
    }
    script_or_stdin(name, args, p.operands.first().copied(), f)
}

fn perl(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let n = args.len();
    let mut i = 1;
    let mut is_inline = false;
    let mut in_place = false;
    while i < n {
        let a = text(args, i);
        if a == "--" {
            i += 1;
            break;
        }
        if !(a.len() > 1 && a.starts_with('-')) {
            break;
        }
        let mut next = false;
        for (pos, ch) in a[1..].char_indices() {
            let rest = 1 + pos + ch.len_utf8();
            match ch {
                'e' | 'E' => {
                    is_inline = true;
                    if rest == a.len() {
                        next = true;
                        f.skip.push(i + 1);
                    }
                    break;
                }
                'M' | 'm' | 'I' => {
                    next = rest == a.len();
                    break;
                }
                'i' => {
                    in_place = true;
                    break;
                }
                'l' | '0' | 'C' | 'x' | 'd' | 'D' | 'V' => break,
                _ => {}
            }
        }
        i += if next { 2 } else { 1 };
    }
    let files_from = if is_inline {
        f = inline(name, f);
        i
    } else if i >= n {
        f.stdin_program = Some(false);
        n
    } else if args[i].procsub {
        f.tag(
            tags::PIPE_TO_SHELL,
            format!("`{name}` runs the output of a command"),
        );
        i + 1
    } else {
        f.read(i);
        i + 1
    };
    if in_place {
        for k in files_from..n {
            f.write(k);
        }
        f.at_least(Write);
    }
    f
}

fn deno(args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    match text(args, 1) {
        "eval" => inline("deno eval", f),
        "run" => {
            let p = opts::parse(args, 2, &Spec::default());
            let script = p.operands.first().copied();
            if let Some(i) = script
                && text(args, i) != "-"
            {
                f.read(i);
                return f;
            }
            script_or_stdin("deno run", args, script, f)
        }
        "" => {
            f.stdin_program = Some(false);
            f
        }
        _ => f,
    }
}

fn eval(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    f.tag(tags::EVAL, "`eval` runs a string as a command");
    if args.len() < 2 {
        return f;
    }
    let mut line = String::new();
    let mut dynamic = false;
    for (k, w) in args[1..].iter().enumerate() {
        if k > 0 {
            line.push(' ');
        }
        line.push_str(&w.text);
        dynamic |= w.dynamic;
    }
    f.run_line(&line, dynamic, "string evaluated by `eval`".to_owned());
    f.skip_from = 1;
    f
}

fn source(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let Some(script) = args.get(1) else {
        return f;
    };
    if script.procsub {
        f.tag(
            tags::PIPE_TO_SHELL,
            format!("`{name}` runs the output of a command"),
        );
    } else if matches!(
        script.text.as_str(),
        "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0" | "-"
    ) {
        f.stdin_program = Some(true);
    } else if script.dynamic {
        f.tag(
            tags::OPAQUE,
            format!("`{name}` of a path not known before it runs"),
        );
    } else {
        f.read(1);
    }
    f.skip_from = 2;
    f
}

fn awk(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let table = &super::tables::AWK;
    let p = opts::parse(args, 1, &Spec::of(table));
    f.accept(name, &p, table);
    let mut programs: Vec<(usize, usize)> = Vec::new();
    let mut from_file = false;
    for o in &p.opts {
        if o.is('f', "file") || o.is('E', "exec") || o.is('i', "include") {
            from_file = true;
            if let Some((i, off)) = o.value {
                f.reads.push(PathRef::Arg { idx: i, off });
            }
        } else if o.is('e', "source") {
            programs.extend(o.value);
        } else if o.is('W', "") {
            // mawk's and gawk's `-W option`: only the harmless ones.
            let v = o.value_text(args).unwrap_or("");
            if !matches!(
                v,
                "version"
                    | "v"
                    | "posix"
                    | "traditional"
                    | "sandbox"
                    | "interactive"
                    | "i"
                    | "usage"
                    | "help"
            ) {
                f.opaque(format!("`{name} -W {v}` is not known to the analysis"));
            }
        } else if o.is('l', "load")
            || o.is('d', "dump-variables")
            || o.is('D', "debug")
            || o.is('o', "pretty-print")
            || o.is('p', "profile")
        {
            f.opaque(format!(
                "`{name}` loads an extension or writes a file with this option"
            ));
        }
    }
    let mut operands = p.operands.iter().copied();
    if programs.is_empty()
        && !from_file
        && let Some(i) = operands.next()
    {
        programs.push((i, 0));
        f.data.push(i);
    }
    for &(i, off) in &programs {
        f.skip.push(i);
        if args[i].dynamic {
            f.opaque(format!("the `{name}` program is not known before it runs"));
        }
        let scan = awk_scan(args[i].text.get(off..).unwrap_or(""));
        if scan.exec {
            f.tag(
                tags::INLINE_INTERPRETER,
                format!("`{name}` program runs commands"),
            );
            f.at_least(Mutate);
        }
        if !scan.writes.is_empty() {
            f.at_least(Write);
        }
        if scan.unknown_file {
            f.opaque(format!(
                "the `{name}` program reads or writes a file it names at run time"
            ));
        }
        if let Some(why) = scan.unknown {
            f.opaque(format!("the `{name}` program {why}"));
        }
        f.writes.extend(scan.writes.into_iter().map(PathRef::Lit));
        f.reads.extend(scan.reads.into_iter().map(PathRef::Lit));
    }
    if from_file {
        f.opaque(format!(
            "`{name}` runs a program from a file the analysis does not read"
        ));
    }
    for i in operands {
        if !text(args, i).contains('=') {
            f.read(i);
        }
    }
    f
}

#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct AwkScan {
    pub exec: bool,
    pub writes: Vec<String>,
    pub reads: Vec<String>,
    /// Writes or reads a file whose name is computed (`print > $2`).
    pub unknown_file: bool,
    /// A construct the analysis does not model, for people.
    pub unknown: Option<String>,
}

impl AwkScan {
    /// Adds what another reading of the same program found.
    fn merge(&mut self, other: AwkScan) {
        self.exec |= other.exec;
        self.unknown_file |= other.unknown_file;
        for w in other.writes {
            if !self.writes.contains(&w) {
                self.writes.push(w);
            }
        }
        for r in other.reads {
            if !self.reads.contains(&r) {
                self.reads.push(r);
            }
        }
    }
}

/// Looks through an awk program for ways to run commands (`system(`,
/// pipes, `|&`) and for output redirected to literal files.
pub(crate) fn awk_scan(prog: &str) -> AwkScan {
    // Whether a `/` starts a regex or divides depends on the grammar; a
    // program that reads differently either way must not hide a command
    // in the part taken for a regex, so both readings count.
    let mut out = awk_scan_as(prog, true);
    // gawk's `@load` loads a shared library, `@include` a program file.
    out.exec |= prog.contains("@load") || prog.contains("@include");
    // The exact reading, by awk's own lexical rules (`\`-newline, strings,
    // regexes where an operand is expected): what it does not model makes
    // the program opaque; what it finds adds to the scans by guess below.
    let exact = super::awk::scan(prog);
    out.unknown = exact.unknown.clone();
    out.merge(exact);
    out.merge(awk_scan_as(prog, false));
    out
}

/// The text of the string literal that starts at `at`, and where it ends
/// (its closing quote, or the end of the program).
fn awk_string_at(prog: &str, at: usize) -> Option<(&str, usize)> {
    let b = prog.as_bytes();
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let end = b[at + 1..]
        .iter()
        .position(|&c| c == b'"')
        .map_or(b.len(), |k| at + 1 + k);
    Some((prog.get(at + 1..end).unwrap_or(""), end))
}

fn awk_scan_as(prog: &str, regex_literals: bool) -> AwkScan {
    let b = prog.as_bytes();
    let n = b.len();
    let mut out = AwkScan::default();
    let mut i = 0;
    let mut prev: u8 = b'\n';
    let mut printing = false;
    while i < n {
        let c = b[i];
        match c {
            b'"' => {
                i += 1;
                while i < n && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                prev = b'"';
            }
            b'#' => {
                while i < n && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if regex_literals
                && matches!(
                    prev,
                    b'(' | b','
                        | b'~'
                        | b'!'
                        | b'{'
                        | b'}'
                        | b';'
                        | b'&'
                        | b'|'
                        | b'?'
                        | b':'
                        | b'='
                        | b'\n'
                ) =>
            {
                i += 1;
                while i < n && b[i] != b'/' && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                prev = b'/';
            }
            b'|' => {
                if i + 1 < n && b[i + 1] == b'|' {
                    i += 1;
                    prev = b'|';
                } else {
                    out.exec = true;
                    prev = b'|';
                }
            }
            b'>' if printing => {
                let mut j = i + 1;
                if j < n && b[j] == b'>' {
                    j += 1;
                }
                while j < n && matches!(b[j], b' ' | b'\t') {
                    j += 1;
                }
                if let Some((path, end)) = awk_string_at(prog, j) {
                    out.writes.push(path.to_owned());
                    i = end;
                } else {
                    // `print > FILENAME`, `print > $2`: a file named at run time.
                    out.unknown_file = true;
                    i = j - 1;
                }
                prev = b'"';
            }
            b';' | b'{' | b'}' | b'\n' => {
                printing = false;
                prev = c;
            }
            b' ' | b'\t' | b'\r' => {}
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < n && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &prog[start..i];
                match word {
                    "system" => {
                        let mut j = i;
                        while j < n && matches!(b[j], b' ' | b'\t') {
                            j += 1;
                        }
                        if j < n && b[j] == b'(' {
                            out.exec = true;
                        }
                    }
                    "print" | "printf" => printing = true,
                    "getline" => {
                        // `getline < FILE` reads a file, which it may print.
                        let mut j = i;
                        while j < n && matches!(b[j], b' ' | b'\t') {
                            j += 1;
                        }
                        if j < n && b[j].is_ascii_alphabetic() {
                            // `getline var < FILE`
                            while j < n && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                                j += 1;
                            }
                            while j < n && matches!(b[j], b' ' | b'\t') {
                                j += 1;
                            }
                        }
                        if j < n && b[j] == b'<' {
                            j += 1;
                            while j < n && matches!(b[j], b' ' | b'\t') {
                                j += 1;
                            }
                            if let Some((path, _)) = awk_string_at(prog, j) {
                                out.reads.push(path.to_owned());
                            } else {
                                out.unknown_file = true;
                            }
                        }
                    }
                    _ => {}
                }
                prev = b'a';
                continue;
            }
            _ => prev = c,
        }
        i += 1;
    }
    out
}

fn sed(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let table = &super::tables::SED;
    let p = opts::parse(args, 1, &Spec::of(table));
    f.accept("sed", &p, table);
    // Scripts as (argument, offset of the script text in it).
    let mut scripts: Vec<(usize, usize)> = Vec::new();
    let mut from_file = false;
    let in_place = p.has('i', "in-place");
    for o in &p.opts {
        if o.is('e', "expression") {
            scripts.extend(o.value);
        } else if o.is('f', "file") {
            from_file = true;
            if let Some((i, off)) = o.value {
                f.reads.push(PathRef::Arg { idx: i, off });
            }
        }
    }
    let operands = p.operands.clone();
    let mut ops = operands.into_iter();
    if scripts.is_empty()
        && !from_file
        && let Some(s) = ops.next()
    {
        scripts.push((s, 0));
        f.data.push(s);
    }
    if p.all('i', "in-place")
        .any(|o| o.value.is_some_and(|(i, off)| args[i].text.len() > off))
    {
        // `-i.bak` also writes FILE.bak (or the name the suffix makes).
        f.opaque("`sed -i` with a suffix writes a backup file beside each file");
    }
    for &(s, off) in &scripts {
        f.skip.push(s);
        let t = text(args, s).get(off..).unwrap_or("");
        if args[s].dynamic {
            f.opaque("the `sed` script is not known before it runs");
        }
        let scan = sed_scan(t);
        if scan.exec {
            f.tag(tags::INLINE_INTERPRETER, "`sed` script runs commands");
            f.at_least(Mutate);
        }
        for cmd in scan.commands {
            f.run_line(&cmd, args[s].dynamic, "command run by `sed`".to_owned());
        }
        if !scan.writes.is_empty() {
            f.at_least(Write);
        }
        f.writes.extend(scan.writes.into_iter().map(PathRef::Lit));
        f.reads.extend(scan.reads.into_iter().map(PathRef::Lit));
    }
    if from_file {
        f.opaque("`sed` runs a script from a file the analysis does not read");
    }
    for k in ops {
        if in_place {
            f.write(k);
        } else {
            f.read(k);
        }
    }
    if in_place {
        f.at_least(Write);
    }
    f
}

#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct SedScan {
    pub exec: bool,
    pub commands: Vec<String>,
    pub writes: Vec<String>,
    pub reads: Vec<String>,
}

/// Walks a sed script for the `e` command, the `s///e` flag, and the files
/// it writes (`w`, `W`, `s///w`) or reads (`r`, `R`).
pub(crate) fn sed_scan(script: &str) -> SedScan {
    let b = script.as_bytes();
    let n = b.len();
    let mut out = SedScan::default();
    let mut i = 0;
    let rest_of_line = |i: &mut usize| -> String {
        while *i < n && matches!(b[*i], b' ' | b'\t') {
            *i += 1;
        }
        let start = *i;
        while *i < n && b[*i] != b'\n' {
            *i += 1;
        }
        script.get(start..*i).unwrap_or("").to_owned()
    };
    let skip_regex = |i: &mut usize, delim: u8| {
        while *i < n && b[*i] != delim {
            if b[*i] == b'\\' {
                *i += 1;
            }
            *i += 1;
        }
        *i += 1;
    };
    let skip_address = |i: &mut usize| {
        for _ in 0..2 {
            if *i < n && b[*i].is_ascii_digit() {
                while *i < n && (b[*i].is_ascii_digit() || b[*i] == b'~') {
                    *i += 1;
                }
            } else if *i < n && b[*i] == b'$' {
                *i += 1;
            } else if *i < n && b[*i] == b'/' {
                *i += 1;
                skip_regex(i, b'/');
            } else if *i + 1 < n && b[*i] == b'\\' {
                let d = b[*i + 1];
                *i += 2;
                skip_regex(i, d);
            }
            while *i < n && matches!(b[*i], b'I' | b'M') {
                *i += 1;
            }
            if *i < n && b[*i] == b',' {
                *i += 1;
                if *i < n && matches!(b[*i], b'+' | b'~') {
                    *i += 1;
                }
                continue;
            }
            break;
        }
        while *i < n && matches!(b[*i], b' ' | b'\t' | b'!') {
            *i += 1;
        }
    };
    while i < n {
        while i < n && matches!(b[i], b' ' | b'\t' | b'\n' | b';') {
            i += 1;
        }
        if i >= n {
            break;
        }
        skip_address(&mut i);
        if i >= n {
            break;
        }
        let cmd = b[i];
        i += 1;
        match cmd {
            b'#' | b'a' | b'i' | b'c' => {
                while i < n && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b':' | b'b' | b't' | b'T' | b'v' => {
                while i < n && !matches!(b[i], b'\n' | b';' | b'}') {
                    i += 1;
                }
            }
            b'r' | b'R' => {
                let file = rest_of_line(&mut i);
                if !file.is_empty() {
                    out.reads.push(file);
                }
            }
            b'w' | b'W' => {
                let file = rest_of_line(&mut i);
                if !file.is_empty() {
                    out.writes.push(file);
                }
            }
            b'e' => {
                out.exec = true;
                let cmd = rest_of_line(&mut i);
                if !cmd.is_empty() {
                    out.commands.push(cmd);
                }
            }
            b's' | b'y' => {
                if i >= n {
                    break;
                }
                let delim = b[i];
                i += 1;
                skip_regex(&mut i, delim);
                skip_regex(&mut i, delim);
                if cmd == b's' {
                    while i < n && !matches!(b[i], b'\n' | b';' | b'}') {
                        match b[i] {
                            b'e' => {
                                out.exec = true;
                                i += 1;
                            }
                            b'w' => {
                                i += 1;
                                let file = rest_of_line(&mut i);
                                if !file.is_empty() {
                                    out.writes.push(file);
                                }
                            }
                            _ => i += 1,
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn awk_programs() {
        assert!(!awk_scan("{print $1}").exec);
        // A `|` in what may be a regex counts: the analysis does not guess
        // which reading awk takes.
        assert!(awk_scan("/foo|bar/ {print}").exec);
        assert!(awk_scan("/system(/ {print}").exec);
        assert!(!awk_scan("$1 > 5 || $2 < 3").exec);
        assert!(awk_scan("{system(\"rm -rf x\")}").exec);
        assert!(awk_scan("{print | \"sh\"}").exec);
        assert!(awk_scan("BEGIN{\"date\" | getline d}").exec);
        assert!(awk_scan("{print |& \"sh\"}").exec);
        assert_eq!(
            awk_scan("{print > \"aileron.yaml\"}").writes,
            vec!["aileron.yaml"]
        );
        assert!(awk_scan("$1 > 3 {print}").writes.is_empty());
    }

    #[test]
    fn sed_scripts() {
        assert_eq!(sed_scan("s/a/b/g"), SedScan::default());
        assert!(sed_scan("s/a/b/e").exec);
        assert!(sed_scan("1e rm -rf x").exec);
        assert_eq!(sed_scan("1e rm -rf x").commands, vec!["rm -rf x"]);
        assert_eq!(sed_scan("s/a/b/w out.txt").writes, vec!["out.txt"]);
        assert_eq!(sed_scan("/x/w aileron.yaml").writes, vec!["aileron.yaml"]);
        assert_eq!(sed_scan("1r /etc/passwd").reads, vec!["/etc/passwd"]);
        assert!(!sed_scan("s/e/w/").exec);
        assert!(!sed_scan("/regex with e/d").exec);
        assert!(!sed_scan("y/abc/efg/").exec);
    }
}
