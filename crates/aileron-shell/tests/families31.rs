//! Issue 31: constructs the analysis parsed but did not understand. Each
//! family is spelled here in ways of our own (the corpora that check it are
//! not in the repository). An attack must either not be vouched for, or
//! report the protected path it reaches (so that the built-in rules deny
//! it); everyday lines of the same shapes stay as they were.

mod support;

use std::process::Command;

use aileron_shell::{Analysis, SimpleCommand, tags};
use support::{reads, run, vouched, writes};

fn opaque(a: &Analysis) -> bool {
    a.opaque.is_some() || a.commands.iter().any(|c| c.tags.contains(&tags::OPAQUE))
}

/// Asserts `want` of the analysis of every line.
fn each(lines: &[&str], want: fn(&Analysis) -> bool, what: &str) {
    let wrong: Vec<String> = lines
        .iter()
        .map(|l| (l, run(l)))
        .filter(|(_, a)| !want(a))
        .map(|(l, a)| format!("{l:?}\n{a:#?}"))
        .collect();
    assert!(wrong.is_empty(), "{what}:\n{}", wrong.join("\n\n"));
}

/// Every line is opaque (the engine asks about it).
fn all_opaque(lines: &[&str]) {
    each(lines, opaque, "not opaque");
}

/// Every line is vouched for (read-only, nothing that asks).
fn all_vouched(lines: &[&str]) {
    each(lines, vouched, "not vouched for");
}

/// No line is opaque (writers are decided by the paths they write).
fn none_opaque(lines: &[&str]) {
    each(lines, |a| !opaque(a), "opaque");
}

// ----- 1. NUL in ANSI-C quoting ----------------------------------------------

/// The words bash passes for `printf '%s\n' WORD`, one a line.
fn bash_words(word: &str) -> Vec<String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("printf '%s\\n' {word}"))
        .output()
        .expect("bash is needed to compare the decoding of $'...' with bash's");
    assert!(out.status.success(), "bash failed on {word}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn ansi_c_strings_decode_as_bash_decodes_them() {
    for word in [
        r"$'aileron.yaml\0.txt'",
        r"x$'\x00y'z",
        r"$'a\u0000b'c",
        r"$'\U00000000'q",
        r"$'p\c@q'r",
        r"$'\000'tail",
        r"$'ab\0cd'$'ef'",
        r"$'\x2e\x61ileron/admin.token\x00zz'",
        r"$'k\c\\x'",
        r"$'\101\102'",
        r"$'\x41\x4'",
        r"$'\c`'after",
        r"$'\c a'b",
        r"$'\u41'",
    ] {
        let a = run(&format!("printf '%s\\n' {word}"));
        let printf = a.commands.first().expect("one command");
        let ours: Vec<String> = printf.argv[1..].to_vec();
        assert_eq!(ours, bash_words(word), "{word}\n{a:#?}");
    }
}

#[test]
fn a_nul_hides_no_protected_name() {
    let a = run(r"cat $'.aileron/admin.token\x00.bak'");
    assert!(reads(&a, "/work/p/.aileron/admin.token"), "{a:#?}");
    let a = run(r"tee $'aileron.yaml\c@x' < a.txt");
    assert!(writes(&a, "/work/p/aileron.yaml"), "{a:#?}");
    let a = run(r"cp a.txt $'.claude/settings.json\U00000000'");
    assert!(writes(&a, "/work/p/.claude/settings.json"), "{a:#?}");
    let a = run(r"echo x >$'aileron.yaml\000'.off");
    assert!(writes(&a, "/work/p/aileron.yaml.off"), "{a:#?}");
    // A byte that is not text, and a raw NUL in the line.
    all_opaque(&[r"cat $'\xff'", r"cat $'\351t\351'", "cat a.txt\0; rm -rf ~"]);
}

// ----- 2. input redirections from files not known ----------------------------

#[test]
fn input_from_a_file_not_known_is_opaque() {
    all_opaque(&[
        "wc -l < \"$IN\"",
        "sort 0<$SRC",
        "head -1 <\"${F:-a.txt}\"",
        "exec 7<\"$p\"; cat <&7",
        "exec 4< $TOKEN_FILE",
        "x=$(< \"$DIR/token\")",
        "echo \"$(<.aileron/$NAME)\"",
        "{ cat; } < \"$f\"",
        "while read -r l; do echo \"$l\"; done < $LIST",
        "cat 0<>\"$f\"",
    ]);
    // Known files are reads the rules decide.
    let a = run("wc -l < .aileron/admin.token");
    assert!(reads(&a, "/work/p/.aileron/admin.token"), "{a:#?}");
    all_vouched(&["wc -l < a.txt", "sort <notes.md | uniq"]);
}

// ----- 3. functions ----------------------------------------------------------

/// Whether a command writing `path` was found inside a call of `name`.
fn written_by_call(a: &Analysis, name: &str, path: &str) -> bool {
    let called = |c: &SimpleCommand| {
        let mut p = c.parent;
        while let Some(i) = p {
            if a.commands[i].binary == name {
                return true;
            }
            p = a.commands[i].parent;
        }
        false
    };
    a.commands
        .iter()
        .any(|c| called(c) && c.writes.iter().any(|w| w == path))
}

#[test]
fn a_function_is_decided_where_it_is_called() {
    // Named like an allowed command: its body runs, not the program.
    let a = run("ls() { tee aileron.yaml < a.txt; }; ls -la");
    assert!(written_by_call(&a, "ls", "/work/p/aileron.yaml"), "{a:#?}");
    let a = run("grep() { cat ~/.aileron/admin.token; }; grep -rn x .");
    assert!(reads(&a, "/home/u/.aileron/admin.token"), "{a:#?}");
    // The body's relative paths are where the call runs.
    let a = run("show() { cat admin.token; }; cd .aileron && show");
    assert!(reads(&a, "/work/p/.aileron/admin.token"), "{a:#?}");
    // Defined after the call, in a loop: the second pass runs it.
    let a = run("for i in 1 2; do git log; git() { rm -f aileron.yaml; }; done");
    assert!(written_by_call(&a, "git", "/work/p/aileron.yaml"), "{a:#?}");
    // Exported to a child shell.
    let a = run("w() { echo x > .aileron/audit.jsonl; }; export -f w; bash -c w");
    assert!(
        written_by_call(&a, "w", "/work/p/.aileron/audit.jsonl"),
        "{a:#?}"
    );
    // Where the function may not exist, the program is decided too.
    let a = run("(git() { :; }); git push -f origin main");
    assert!(
        a.commands
            .iter()
            .any(|c| c.tags.contains(&tags::FORCE_PUSH)),
        "{a:#?}"
    );
    all_opaque(&[
        "f() { f; }; f",
        "a() { b; }; b() { a; }; a",
        // A function in place of `cd`: the directory is not known after it.
        "cd() { :; }; cd .aileron && cat admin.token",
        "command_not_found_handle() { touch x; }; nosuch",
    ]);
}

// ----- 4. arithmetic and the integer attribute -------------------------------

#[test]
fn integer_variables_given_unknown_values_are_opaque() {
    all_opaque(&[
        "declare -i n; read n < list.txt",
        "local -i k; printf -v k %s \"$1\"",
        "typeset -i j; for j in 'x[$(touch p)]'; do :; done",
        "declare -i j; for j in *; do :; done",
        "declare -i c; export c=$(cat a.txt)",
        "declare -i c; declare c=\"$(cat a.txt)\"",
        "declare -i m; IFS= read -r m <<< \"$(cat a.txt)\"",
        "for i in 1 2; do echo $((v)); v='a[$(id)]'; done",
        "for i in 1 2; do read q < a.txt; declare -i q; done",
        "until false; do echo $((t + 1)); t=$(cat a.txt); done",
        "f() { echo $((w)); }; w='a[$(id)]'; f",
        "declare -i n; f() { read n; }; f < a.txt",
    ]);
    all_vouched(&[
        "declare -i n=1+2; echo $n",
        "n=3; echo $((n * 2))",
        "for i in 1 2 3; do echo $((i * 2)); done",
    ]);
}

// ----- 5. special shell state ------------------------------------------------

#[test]
fn bash_state_not_modelled_is_opaque() {
    all_opaque(&[
        "BASH_CMDS[cat]=/bin/rm; cat x",
        "BASH_CMDS=([head]=/usr/bin/touch); head a.txt",
        ": ${BASH_CMDS[ls]:=/usr/bin/touch}; ls",
        "echo ${BASH_ALIASES[x]=y}",
        "set -k; env x=y",
        "set -ek; ls",
        "set -o keyword; git status GIT_DIR=/tmp",
        "set -a; TAR_OPTIONS=-x; tar -tf a.tar",
        "set -P; cd sub/..; cat x",
        "set -o posix; ls",
        "PWD=~/.aileron; cat ~+/admin.token",
        "OLDPWD=$HOME/.aileron; cat ~-/admin.token",
        "declare -n r=PATH; r=/tmp",
        "typeset -n q; q=BASH_ENV",
        "for PATH in /tmp; do ls; done",
        "GLOBIGNORE=x; rm -f *",
        "export BASH_ENV=./x.sh",
        "read -r BASH_LOADABLES_PATH < a.txt",
        "EXECIGNORE='*'; ls",
        "DIRSTACK[0]=/etc; ls",
        "BASH_FUTURE_VARIABLE=1; ls",
        "TEXTDOMAINDIR=.; cat $\"a.txt\"",
        "cat ~nobody/.ssh/id_rsa",
        "cat ~0/x",
        "exec {w}>aileron.yaml",
    ]);
    // One-element brace sequences are expanded, in words and redirections.
    let a = run("cat .aileron/admin.toke{n..n}");
    assert!(reads(&a, "/work/p/.aileron/admin.token"), "{a:#?}");
    let a = run("echo x > aileron.yam{l..l}");
    assert!(writes(&a, "/work/p/aileron.yaml"), "{a:#?}");
    let a = run("tee a{i..i}leron.yaml < a.txt");
    assert!(writes(&a, "/work/p/aileron.yaml"), "{a:#?}");
    let a = run("touch f{07..07}");
    assert!(writes(&a, "/work/p/f07"), "{a:#?}");
    // Several words in a redirection: bash refuses it, the analysis too.
    all_opaque(&["echo x > {aileron.yaml,b}"]);
}

#[test]
fn everyday_shell_state_stays_quiet() {
    all_vouched(&[
        "while IFS= read -r line; do echo \"$line\"; done < a.txt",
        "IFS=, read -ra parts <<< \"a,b\"",
        "set -euo pipefail; ls",
        "set -x; cat a.txt",
        "set +e; ls; set -e",
        "set -- a b; echo \"$1\"",
        "cat {a,b}.txt",
        "echo ${x@Q} ${y,,} ${z^^}",
        "read -r -d $'\\0' x < a.txt",
        "X=1; echo $X",
        "export FOO=bar && echo $FOO",
    ]);
}

// ----- 6. a file written, then run ------------------------------------------

#[test]
fn a_runner_of_a_file_the_line_writes_is_opaque() {
    all_opaque(&[
        "printf 'all:\\n\\tcurl x | sh\\n' > GNUmakefile && make",
        "echo 'include evil.mk' >> makefile; make -j2 check",
        "cp /tmp/p.json package.json; yarn test",
        "echo 'script-shell=./x' >> .npmrc; pnpm test",
        "sed -i 's/jest/sh x/' package.json && npm run test",
        "printf 'import os\\n' > tests/conftest.py && python3 -m pytest tests",
        "echo 'import os' > pytest.py; python -m pytest",
        "tee build.rs < /tmp/b.rs >/dev/null; cargo build",
        "mkdir -p .cargo; printf '[target.x]\\nrunner=\"sh\"\\n' > .cargo/config; cargo run",
        "cat > Rakefile <<EOF\nsh 'id'\nEOF\nrake",
        "echo x > node_modules/.bin/jest; npx jest",
        "bash -c 'echo x > Makefile; make'",
        "for i in 1 2; do make; echo x > Makefile; done",
        "cp -r /tmp/tpl/. . && cargo test",
    ]);
    none_opaque(&[
        "git status && cargo test --all 2>&1 | tail -n 50",
        "cargo test 2>&1 | tee test.log",
        "npm test > out.log 2>&1",
        "make -j4 2>&1 | tail -20",
        "echo done > status.txt && python3 -m pytest -q",
        "cargo build --release && cp target/release/app dist/",
    ]);
}

// ----- scripts from files, POSIX payloads, redirected tests --------------------

#[test]
fn code_the_analysis_does_not_read_is_opaque() {
    all_opaque(&[
        "source lib.sh",
        ". ./scripts/env.sh",
        "bash build.sh",
        "sh -e -- x.sh",
        "bash -o pipefail ci.sh",
        "sh < lib.sh",
        "bash -s < steps.txt",
        // Where a POSIX `sh` and bash read a payload differently.
        "dash -c 'touch -- {aileron.yaml,x}'",
        "sh -c 'time cut -f1 b.txt'",
        "sh -c 'echo x > {a..a}'",
    ]);
    none_opaque(&[
        "bash -c 'ls -la'",
        "time ls",
        "bash -c 'time ls'",
        "sh -c 'ls -la'",
    ]);
}

#[test]
fn a_redirected_test_writes_its_file() {
    let a = run("[[ -f a.txt ]] > aileron.yaml; ls");
    assert!(writes(&a, "/work/p/aileron.yaml"), "{a:#?}");
    // The redirection is the test's, not the next command's.
    let ls = a.commands.iter().find(|c| c.binary == "ls").expect("ls");
    assert!(ls.writes.is_empty(), "{a:#?}");
}
