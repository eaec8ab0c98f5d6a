//! Property tests of the analyser, on random bytes and on lines of the
//! oracle's grammar (`oracle/grammar.rs`), with its deterministic PRNG.
//!
//! Each property would fail on a real bug: a panic or a hang, an analysis
//! that changes between two calls, a command that disappears when the line
//! around it is wrapped in a subshell, a substitution or `bash -c`, a
//! redirect whose target is not reported, a nesting that overflows the
//! stack instead of being refused.
//!
//! `AILERON_PROPS_SEED` and `AILERON_PROPS_CASES` change the seed and the
//! number of cases of each property (the seed is printed).

// Shared with `oracle.rs`, which uses other parts of it.
#[allow(dead_code)]
#[path = "oracle/grammar.rs"]
mod grammar;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use aileron_shell::{Analysis, Context, Limits, analyse, tags};
use grammar::{Gen, Line, Rng};

const CWD: &str = "/work/p";
const HOME: &str = "/home/u";
const DEFAULT_SEED: u64 = 0x5eed_0fa1;

fn ctx() -> Context<'static> {
    Context {
        cwd: CWD,
        home: HOME,
        limits: Limits::default(),
    }
}

fn settings(name: &str, default_cases: usize) -> (u64, usize) {
    let num = |var: &str| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let seed = num("AILERON_PROPS_SEED").unwrap_or(DEFAULT_SEED);
    let cases = num("AILERON_PROPS_CASES").map_or(default_cases, |n| n as usize);
    println!("{name}: AILERON_PROPS_SEED={seed} AILERON_PROPS_CASES={cases}");
    (seed, cases)
}

/// `analyse`, turning a panic into a message that names the input.
fn analyse_caught(line: &str) -> Result<Analysis, String> {
    catch_unwind(AssertUnwindSafe(|| analyse(line, &ctx())))
        .map_err(|_| format!("analyse panicked on {line:?}"))
}

/// Whether the analysis says it does not see through the line.
fn opaque(a: &Analysis) -> bool {
    a.opaque.is_some() || a.commands.iter().any(|c| c.tags.contains(&tags::OPAQUE))
}

/// Whether the analysis vouches for the line (as in `oracle.rs`).
fn trusted(a: &Analysis) -> bool {
    const UNTRUSTED: &[&str] = &[
        tags::OPAQUE,
        tags::PIPE_TO_SHELL,
        tags::EVAL,
        tags::INLINE_INTERPRETER,
        tags::BASE64_EXEC,
        tags::REMOTE_SUBSTITUTION,
        tags::ENV_EXEC,
    ];
    a.opaque.is_none()
        && a.commands
            .iter()
            .all(|c| !c.tags.iter().any(|t| UNTRUSTED.contains(t)))
}

/// The same analysis, field by field (`Analysis` has no `PartialEq`).
fn same(a: &Analysis, b: &Analysis) -> bool {
    a.opaque == b.opaque && a.commands == b.commands
}

/// Structural invariants of any analysis.
fn invariants(line: &str, a: &Analysis) -> Result<(), String> {
    for c in &a.commands {
        for p in c.writes.iter().chain(&c.reads) {
            let normal = p.starts_with('/')
                && !p.contains("/./")
                && !p.contains("/../")
                && !p.ends_with("/.")
                && !p.ends_with("/..")
                && !p.contains("//")
                && (p == "/" || !p.ends_with('/'));
            if !normal {
                return Err(format!(
                    "path {p:?} is not absolute and normalized in {line:?}"
                ));
            }
        }
        if c.parent.is_some_and(|i| i >= a.commands.len()) {
            return Err(format!("parent out of range in {line:?}"));
        }
        if !c.tags.is_sorted() || c.tags.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!(
                "tags not sorted and unique in {line:?}: {:?}",
                c.tags
            ));
        }
    }
    Ok(())
}

/// Collects failures and panics with all of them at the end.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn check(&mut self, r: Result<(), String>) {
        if let Err(e) = r
            && self.0.len() < 40
        {
            self.0.push(e);
        }
    }

    fn finish(self, seed: u64) {
        assert!(
            self.0.is_empty(),
            "{} failure(s) (seed {seed}):\n{}",
            self.0.len(),
            self.0.join("\n\n")
        );
    }
}

/// Random text built from shell metacharacters, keywords and raw bytes.
fn garbage(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "$(",
        ")",
        "`",
        "'",
        "\"",
        "$'",
        "\\",
        "${",
        "}",
        "{",
        "(",
        "((",
        "))",
        "<<",
        "<<-",
        "<<<",
        "EOF",
        "\n",
        ";",
        ";;",
        ";&",
        "&",
        "|",
        "|&",
        "||",
        "&&",
        ">",
        ">>",
        "<",
        "<>",
        "<(",
        ">(",
        "&>",
        "2>&1",
        ">&",
        "{fd}>",
        "case",
        "in",
        "esac",
        "if",
        "then",
        "fi",
        "for",
        "do",
        "done",
        "while",
        "select",
        "function",
        "coproc",
        "time",
        " ",
        "\t",
        "rm",
        "-rf",
        "/",
        "~",
        "$HOME",
        "$X",
        "${X:-a}",
        "${X@P}",
        "bash",
        "-c",
        "sh",
        "env",
        "-S",
        "xargs",
        "find",
        "-exec",
        "\\;",
        "git",
        "core.pager=",
        "eval",
        "=",
        "a=",
        "[[",
        "]]",
        "!",
        "#",
        "*",
        "?",
        "[",
        "]",
        "$((",
        "$[",
        "@(",
        "+(",
        "x",
        "é",
        "\u{0}",
        "\u{feff}",
        "\r",
        "-delete",
        "\\x72",
        "{a,b}",
        "{1..3}",
        "a[$(x)]",
        "trap",
        "hash",
        "-p",
    ];
    let mut line = String::new();
    for _ in 0..rng.below(48) {
        if rng.chance(15) {
            let bytes: Vec<u8> = (0..rng.below(8)).map(|_| rng.next_u64() as u8).collect();
            line.push_str(&String::from_utf8_lossy(&bytes));
        } else {
            line.push_str(rng.pick(PIECES));
        }
    }
    line
}

/// Random input never panics, passes the invariants and is analysed the
/// same way twice.
#[test]
fn random_input_is_analysed_deterministically_without_panic() {
    let (seed, cases) = settings("random input", 5_000);
    let mut rng = Rng::new(seed);
    let mut failures = Failures::default();
    let mut slowest = (Duration::ZERO, String::new());
    for _ in 0..cases {
        let line = garbage(&mut rng);
        let t = Instant::now();
        let first = analyse_caught(&line);
        let took = t.elapsed();
        if took > slowest.0 {
            slowest = (took, line.clone());
        }
        let second = analyse_caught(&line);
        failures.check(match (first, second) {
            (Ok(a), Ok(b)) if same(&a, &b) => invariants(&line, &a),
            (Ok(_), Ok(_)) => Err(format!("two analyses of {line:?} differ")),
            (Err(e), _) | (_, Err(e)) => Err(e),
        });
    }
    println!("slowest: {:?} for {:?}", slowest.0, slowest.1);
    failures.finish(seed);
}

/// Grammar lines: deterministic, invariants hold.
#[test]
fn grammar_lines_are_analysed_deterministically() {
    let (seed, cases) = settings("grammar lines", 2_000);
    let mut failures = Failures::default();
    for i in 0..cases {
        let mut rng = Rng::for_case(seed, i as u64);
        let line = Gen::new(&mut rng, true).line().render();
        let r = match (analyse_caught(&line), analyse_caught(&line)) {
            (Ok(a), Ok(b)) if same(&a, &b) => invariants(&line, &a),
            (Ok(_), Ok(_)) => Err(format!("two analyses of {line:?} differ")),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        failures.check(r);
    }
    failures.finish(seed);
}

/// A command on its own line after any grammar line is a command: the
/// analysis lists it, or says it cannot read the line.
#[test]
fn a_command_after_any_line_is_seen() {
    let (seed, cases) = settings("appended command", 2_000);
    let mut failures = Failures::default();
    for i in 0..cases {
        let mut rng = Rng::for_case(seed, i as u64);
        let line = Gen::new(&mut rng, true).line().render();
        for probe in [
            format!("{line}\nrm zz-marker"),
            format!("rm zz-marker; {line}"),
            format!("rm zz-marker\n{line}"),
        ] {
            failures.check(analyse_caught(&probe).and_then(|a| {
                let seen = a
                    .commands
                    .iter()
                    .any(|c| c.binary == "rm" && c.argv.iter().any(|x| x == "zz-marker"));
                if seen || a.opaque.is_some() {
                    Ok(())
                } else {
                    Err(format!(
                        "`rm zz-marker` is missing from the analysis of {probe:?}"
                    ))
                }
            }));
        }
    }
    failures.finish(seed);
}

/// Wrapping a line in a subshell, a group, a substitution, `if` or
/// `bash -c` keeps every program of it visible, or the analysis says it
/// does not see through the wrapped line (opaque, or a command tagged so).
#[test]
fn wrapping_a_line_keeps_its_commands() {
    let (seed, cases) = settings("wrapped lines", 1_000);
    let mut failures = Failures::default();
    for i in 0..cases {
        let mut rng = Rng::for_case(seed, i as u64);
        let line = Gen::new(&mut rng, true).line();
        if lost_by_wrapping(&line.render()).is_none() {
            continue;
        }
        let small = shrink(line, |l| lost_by_wrapping(l).is_some());
        failures.check(lost_by_wrapping(&small).map_or(Ok(()), Err));
    }
    failures.finish(seed);
}

/// The first wrapped form of `line` that loses one of its programs.
fn lost_by_wrapping(line: &str) -> Option<String> {
    let plain = match analyse_caught(line) {
        Ok(a) if a.opaque.is_none() => a,
        Ok(_) => return None,
        Err(e) => return Some(e),
    };
    let quoted = format!("'{}'", line.replace('\'', r"'\''"));
    let wrappers = [
        format!("(\n{line}\n)"),
        format!("{{\n{line}\n}}"),
        format!("x=$(\n{line}\n)"),
        format!("if true; then\n{line}\nfi"),
        format!("bash -c {quoted}"),
        format!("sh -c {quoted} sh"),
    ];
    wrappers.into_iter().find_map(|wrapped| {
        let a = match analyse_caught(&wrapped) {
            Ok(a) if opaque(&a) => return None,
            Ok(a) => a,
            Err(e) => return Some(e),
        };
        let lost = plain
            .commands
            .iter()
            .find(|c| !a.commands.iter().any(|w| w.binary == c.binary))?;
        Some(format!(
            "`{}` of {line:?} is missing from the analysis of {wrapped:?}: {:?}",
            lost.binary,
            a.commands.iter().map(|c| &c.binary).collect::<Vec<_>>()
        ))
    })
}

/// Removes statements of `line` while `fails` still holds.
fn shrink(mut line: Line, fails: impl Fn(&str) -> bool) -> String {
    let mut i = 0;
    while i < line.stmts.len() && line.stmts.len() > 1 {
        let smaller = line.without(i);
        if fails(&smaller.render()) {
            line = smaller;
        } else {
            i += 1;
        }
    }
    line.render()
}

/// Quoting does not change what a word is: the same line with its
/// literal words quoted differently (`'x'`, `"x"`, `$'\x78'`, `\x`,
/// `x\<newline>`, `$"x"`, halves quoted apart, inside backquotes too) is
/// analysed into the same commands.
#[test]
fn quoting_does_not_change_the_analysis() {
    let (seed, cases) = settings("quoting styles", 2_000);
    let mut failures = Failures::default();
    for i in 0..cases {
        let styled = |style: u64| {
            let mut rng = Rng::for_case(seed, i as u64);
            let style = Rng::for_case(seed ^ 0x5717_1e00, style);
            Gen::styled(&mut rng, style, true).line()
        };
        let (a, b) = (styled(2 * i as u64), styled(2 * i as u64 + 1));
        if quoting_changes(&a.render(), &b.render()).is_none() {
            continue;
        }
        // Shrink both the same way: their statements correspond.
        let (mut a, mut b) = (a, b);
        let mut k = 0;
        while k < a.stmts.len() && a.stmts.len() > 1 {
            let (sa, sb) = (a.without(k), b.without(k));
            if quoting_changes(&sa.render(), &sb.render()).is_some() {
                (a, b) = (sa, sb);
            } else {
                k += 1;
            }
        }
        failures.check(quoting_changes(&a.render(), &b.render()).map_or(Ok(()), Err));
    }
    failures.finish(seed);
}

/// How the analyses of two spellings of one line differ, if they do.
///
/// Only lines both analyses trust are compared (bash's quoting is not
/// dash's, so a spelling may rightly make an `sh -c` payload opaque),
/// and the argv of a command only when it is plain words: the text of a
/// payload (`bash -c`, `trap`, `$(...)`) is kept as written.
fn quoting_changes(a: &str, b: &str) -> Option<String> {
    let (x, y) = match (analyse_caught(a), analyse_caught(b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return Some(e),
    };
    if !trusted(&x) || !trusted(&y) {
        return None;
    }
    // Commands whose argv holds payload text: a parent of others, or
    // an argument with an expansion or substitution, in either spelling.
    let carriers = |an: &Analysis| -> Vec<bool> {
        (0..an.commands.len())
            .map(|i| {
                an.commands.iter().any(|d| d.parent == Some(i))
                    || an.commands[i]
                        .argv
                        .iter()
                        .any(|w| w.contains(['$', '`']) || w.contains("<(") || w.contains(">("))
            })
            .collect()
    };
    let (cx, cy) = (carriers(&x), carriers(&y));
    let carrier = |i: usize| cx.get(i).is_none_or(|&c| c) || cy.get(i).is_none_or(|&c| c);
    let key = |an: &Analysis| -> Vec<_> {
        an.commands
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (
                    c.binary.clone(),
                    (!carrier(i)).then(|| c.argv.clone()),
                    c.writes.clone(),
                    c.sensitivity,
                    c.tags.clone(),
                )
            })
            .collect()
    };
    let (kx, ky) = (key(&x), key(&y));
    if kx == ky {
        return None;
    }
    let first = kx.iter().zip(&ky).find(|(p, q)| p != q).map_or_else(
        || format!("\n  {} / {} commands", kx.len(), ky.len()),
        |(p, q)| format!("\n  {p:?}\n  {q:?}"),
    );
    Some(format!(
        "{a:?}\nand {b:?}\nare analysed differently:{first}"
    ))
}

/// A redirect added to a simple command is reported as a write, whatever
/// the command (or the command is opaque).
#[test]
fn redirect_targets_are_reported() {
    let (seed, cases) = settings("redirect targets", 3_000);
    let mut failures = Failures::default();
    for i in 0..cases {
        let mut rng = Rng::for_case(seed, i as u64);
        let simple = Gen::new(&mut rng, true).simple();
        let op = rng.pick(&[">", ">>", "2>", "&>", ">|", "1>", "<>", "&>>", "3>"]);
        let line = format!("{simple} {op} zz-out");
        let target = format!("{CWD}/zz-out");
        failures.check(analyse_caught(&line).and_then(|a| {
            let reported = a.commands.iter().any(|c| c.writes.contains(&target));
            if reported || opaque(&a) {
                Ok(())
            } else {
                Err(format!("{target} is not among the writes of {line:?}"))
            }
        }));
    }
    failures.finish(seed);
}

/// Nesting far past the depth limit is refused (opaque), not parsed
/// until the stack overflows; runs on a thread with the default test
/// stack, so an overflow aborts this test binary.
#[test]
fn deep_nesting_is_refused() {
    let (seed, cases) = settings("deep nesting", 200);
    let mut rng = Rng::new(seed);
    let mut failures = Failures::default();
    const OPEN: &[(&str, &str)] = &[
        ("$(", ")"),
        ("(", ")"),
        ("{ ", "; }"),
        ("<(", ")"),
        ("\"$(", ")\""),
        ("$((", "))"),
        ("${x:-", "}"),
        ("if true; then ", "; fi"),
        ("for i in 1; do ", "; done"),
        ("[[ $(", ") ]]"),
        ("x=$(", ")"),
    ];
    for _ in 0..cases {
        let depth = 20 + rng.below(600);
        let mut open = String::new();
        let mut close = Vec::new();
        for _ in 0..depth {
            let (o, c) = rng.pick(OPEN);
            open.push_str(o);
            close.push(c);
        }
        let mut line = format!("{open}rm -rf x");
        for c in close.iter().rev() {
            line.push_str(c);
        }
        failures.check(analyse_caught(&line).and_then(|a| {
            if opaque(&a) {
                Ok(())
            } else {
                Err(format!("nesting {depth} deep is not opaque: {line:?}"))
            }
        }));
    }
    failures.finish(seed);
}

/// Inputs that explode when expanded (braces, ranges, many commands)
/// are analysed in bounded time and memory; they are just run, and the
/// slowest is printed.
#[test]
fn expansions_stay_bounded() {
    let mut lines = vec![
        format!("rm {}", "{a,b}".repeat(40)),
        format!("touch f{{1..{}}}", u64::MAX),
        "touch f{1..99999999}".to_owned(),
        format!("echo {}", "{1..9}".repeat(30)),
        format!("rm {}x", "{a,b,{c,d,{e,f}}}".repeat(20)),
        "cat a.txt; ".repeat(20_000),
        format!("{}x", "$(".repeat(5_000)),
        format!("echo {}", "'".repeat(60_000)),
        format!("x{}", "\\\n".repeat(30_000)),
        format!("cat <<A{}", "\nA".repeat(20_000)),
    ];
    lines.push(format!("{}: {}", "f() { ".repeat(3000), "}".repeat(3000)));
    let mut slowest = (Duration::ZERO, 0);
    for (i, line) in lines.iter().enumerate() {
        let t = Instant::now();
        let a = analyse_caught(line);
        let took = t.elapsed();
        if took > slowest.0 {
            slowest = (took, i);
        }
        let a = a.unwrap_or_else(|e| panic!("{e}"));
        let paths: usize = a.commands.iter().map(|c| c.writes.len()).sum();
        println!(
            "case {i}: {took:?}, {} commands, {paths} writes",
            a.commands.len()
        );
    }
    println!("slowest: case {} ({:?})", slowest.1, slowest.0);
}
