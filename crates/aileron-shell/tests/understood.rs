//! "What the analysis does not fully understand is never allowed": the
//! bypass families of issue 12, each a regression case, and the everyday
//! lines that must stay quiet.
//!
//! A line is *vouched for* when the analysis reports no opaque part, no
//! tag that asks (running code, piping to a shell, ...) and every command
//! `read`: only then can a profile's read-only rule allow it. Every attack
//! below must either not be vouched for, or report the protected path it
//! reaches, so that the built-in rules deny it.

mod support;

use aileron_shell::tags;
use support::{reads, run, vouched, writes};

/// Lines the analysis must not vouch for.
const NOT_VOUCHED: &[&str] = &[
    // 1. writes through descriptors whose file is not known
    "echo x >/dev/fd/5",
    "cat x > /proc/self/fd/7",
    "echo x >/proc/1/fd/1",
    "tee /dev/fd/9 < x",
    "echo x > /proc/1/cwd/aileron.yaml",
    // 2. options the tables do not know, abbreviated or attached
    "cat --frobnicate x",
    "ls --hyper-x x",
    "sort --compress-prog=sh x",
    "sort --files0-f=list",
    "wc --files0-from=list",
    "du --files0-from=~/.aileron/admin.token",
    "sed -f script.sed x",
    "sed --fil=script.sed x",
    "awk -f prog.awk x",
    "awk -W exec prog.awk x",
    "awk --lo=ext 'BEGIN{}'",
    "bash -rcfile x -i -c id",
    "head --frob x",
    "grep --no-such x y",
    "file -C -m x",
    "env --ch=/tmp cat x",
    "env -C .aileron cat admin.token",
    "env --split-s='rm x' y",
    // 3. programs hidden in arguments that look like data
    "sed -e'1e id' x",
    "sed --expr='1e id' x",
    "sed --expression=1e\\ id x",
    "awk '/system(/ {print}' x",
    "awk '/x/ { print | \"sh\" }' x",
    "awk '@load \"x\"; BEGIN{}'",
    "awk '{print \"default: allow\" > FILENAME}' aileron.yaml",
    "awk '{ getline l < $1; print l }' x",
    "history -w aileron.yaml",
    "git apply x.patch",
    "touch -r ?.txt",
    "sed -n -i -iE '$p' a.txt",
    "mv -S .old a.txt b.txt",
    "sh -c 'mkdir $\"-v\"'",
    "mapfile -C 'touch x' -c 1 < a.txt",
    "readarray -t -C \"touch x\" -c 1 l < list.txt",
    "compgen -C 'touch x' x",
    "a[$(id)]=1",
    "declare -n r='a[$(id)]'; echo \"$r\"",
    "declare -i n; X='a[$(id)]'; n=X",
    "shopt -s nocaseglob; echo x > AILERON.Y*",
    "env 'BASH_FUNC_cat%%=() { id; }' bash -c 'cat a.txt'",
    "dash -c \"echo x > \\$'new.txt'\"",
    "sed -i.bak 1d a.txt",
    "mv -b b.txt a.txt",
    "cp --backup=numbered b.txt a.txt",
    "uniq ?.txt",
    "cp ?.txt",
    "git grep -O'sh -c id' x",
    "git grep --open-files-in=vim foo",
    "zip -TT 'sh -c id' a.zip x",
    "test -v 'a[$(id)]'",
    "[ -v 'a[$(id)]' ]",
    "[[ -v 'a[$(id)]' ]]",
    "[[ 'a[$(id)]' -eq 1 ]]",
    "x='a[$(id)]'; echo $((x))",
    "x='a[$(id)]'; [[ $x -eq 1 ]]",
    "x='a[$(id)]'; (( x ))",
    "x='a[$(id)]'; for ((i=x; i<1; i++)); do :; done",
    "x='a[$(id)]'; echo ${a[x]}",
    "x='a[$(id)]'; echo ${!x}",
    "read n < f; echo $((n + 1))",
    "(( 'a[$(id)]' ))",
    "echo $(( 'a[$(id)]' ))",
    "printf -v 'a[$(id)]' x",
    "printf -v'a[$(id)]' x",
    "declare 'a[$(id)]=1'",
    "read 'a[$(id)]' < f",
    "let 'a[$(id)]'",
    "test $(cat f) = x",
    "[ \"$(cat f)\" \"$(cat g)\" ]",
    "test $A",
    "x='a[$(id)]'; cat <<EOF\n$((x))\nEOF",
    "x='a[$(id)]'; cat <<< $((x))",
    "x='a[$(id)]'; { cat; } <<< $((x))",
    // 4. words not known when the line is read
    "f=aileron.yaml; cat $f",
    "cat \"$F\"",
    "ls $OPTS",
    "grep $PAT x",
    "for f in *; do cat $f; done",
    "cat $(echo x)",
    "ls | xargs cat",
    "xargs -I{} cat {} < list",
    "find . -name $N",
    "sort -o \"$OUT\" x",
    "head -n 1 -- $F",
    "printf $FMT x",
    "date $D",
    // 5. paths the analysis cannot resolve
    "cd - && cat aileron.yaml",
    "cat ~-/x",
    "cd \"$D\" && cat x",
    "CDPATH=/tmp; cd x && cat y",
    "cat /proc/1/root/etc/x",
    "cd nosuchdir; rm -f .bashrc",
    "false && cd sub; cat x",
    "cd a || cd b; cat x",
    "echo x > .ailero?/audit.jsonl",
    "cp x .claud[e]/settings.json",
    // 6. variables that make a tool write or read configuration elsewhere
    "printf -v PATH /tmp",
    "read PAGER < f",
    "HOME=/tmp/h git status",
    "XDG_CONFIG_HOME=/tmp/c git status",
    "GIT_DIR=/tmp/evil git status",
    "git --git-dir=/tmp/evil status",
    "export GIT_CONFIG_GLOBAL=/tmp/x",
    "jq . $F",
    "jq \"$FILTER\" f.json",
    "jq --frob . f.json",
    "less -o aileron.yaml x",
    "less --log-file=x y",
    "strings -T bfd x",
    "hash -p /usr/bin/touch cat; cat x",
    "shopt -s expand_aliases\nalias cat=rm\ncat x",
    "x=$(cat <<EOF; tee aileron.yaml <(:) </dev/null\nx\nEOF\n)",
];

#[test]
fn what_is_not_understood_is_not_vouched_for() {
    let mut wrong = Vec::new();
    for line in NOT_VOUCHED {
        let a = run(line);
        if vouched(&a) {
            wrong.push(format!("{line:?}\n{a:#?}"));
        }
    }
    assert!(wrong.is_empty(), "vouched for:\n{}", wrong.join("\n\n"));
}

/// Lines whose effect the analysis must see: (line, written path).
const WRITES: &[(&str, &str)] = &[
    ("cat x 3<aileron.yaml >/dev/fd/3", "/work/p/aileron.yaml"),
    (
        "exec 3<aileron.yaml; echo 'default: allow' >/dev/fd/3",
        "/work/p/aileron.yaml",
    ),
    (
        "echo hi 3<aileron.yaml >/proc/self/fd/3",
        "/work/p/aileron.yaml",
    ),
    (
        "echo hi 4<aileron.yaml 3<&4 >/dev/fd/3",
        "/work/p/aileron.yaml",
    ),
    (
        "{ echo x >/dev/fd/3; } 3<aileron.yaml",
        "/work/p/aileron.yaml",
    ),
    ("sort x --out=aileron.yaml", "/work/p/aileron.yaml"),
    ("sort x --ou aileron.yaml", "/work/p/aileron.yaml"),
    ("sed --in-pl 's/a/b/' aileron.yaml", "/work/p/aileron.yaml"),
    ("sed -n 's/a/b/w aileron.yaml' x", "/work/p/aileron.yaml"),
    (
        "sed --quiet --expr='w aileron.yaml' x",
        "/work/p/aileron.yaml",
    ),
    ("tree -o aileron.yaml .", "/work/p/aileron.yaml"),
    (
        "echo x > /proc/self/cwd/aileron.yaml",
        "/work/p/aileron.yaml",
    ),
    ("echo x > /proc/self/root/home/u/.bashrc", "/home/u/.bashrc"),
    (
        "GIT_TRACE=/work/p/aileron.yaml git status",
        "/work/p/aileron.yaml",
    ),
    ("GIT_TRACE2_EVENT=x.log git status", "/work/p/x.log"),
    ("SSLKEYLOGFILE=~/.aileron/k curl x", "/home/u/.aileron/k"),
    ("sort -T .aileron x", "/work/p/.aileron"),
    (
        "{ (( i = 1 + 2 )); } > aileron.yaml",
        "/work/p/aileron.yaml",
    ),
    ("if true; then :; fi > aileron.yaml", "/work/p/aileron.yaml"),
    ("echo `\\\\rm -f aileron.yaml`", "/work/p/aileron.yaml"),
];

#[test]
fn writes_through_aliases_are_seen() {
    for (line, path) in WRITES {
        let a = run(line);
        assert!(writes(&a, path), "{line:?} must write {path}\n{a:#?}");
    }
}

#[test]
fn reads_through_aliases_are_seen() {
    for (line, path) in [
        (
            "cat /proc/self/root/home/u/.aileron/admin.token",
            "/home/u/.aileron/admin.token",
        ),
        ("diff --to-file=/etc/shadow x", "/etc/shadow"),
        ("find ~/.aileron -exec cat {} +", "/home/u/.aileron/**"),
        (
            "grep -f ~/.aileron/admin.token x",
            "/home/u/.aileron/admin.token",
        ),
    ] {
        let a = run(line);
        assert!(reads(&a, path), "{line:?} must read {path}\n{a:#?}");
    }
}

/// Everyday lines whose every part is understood and harmless.
const QUIET: &[&str] = &[
    "X=1; echo $X",
    "export FOO=bar && echo $FOO",
    "while read -r l; do echo \"$l\"; done < f.txt",
    "git --no-pager log",
    "git -C . status",
    "date +%F",
    "git log --author=\"$(git config user.name)\"",
    "ls -la",
    "ls -lah --color=auto",
    "grep -rn \"fn main\" src",
    "grep -rn --include='*.rs' TODO .",
    "find . -name '*.rs' -type f",
    "tail -n 50 log.txt",
    "head -5 x",
    "wc -l src/*.rs",
    "ls -1 | sort | uniq -c",
    "sed -n '1,20p' file.rs",
    "awk -F: '{print $1}' /etc/passwd",
    "du -sh .",
    "df -h",
    "ps aux",
    "echo \"hello $USER\"",
    "printf '%s\\n' \"$HOME\"",
    "test -f Cargo.toml && echo yes",
    "[[ -n \"$X\" ]] && echo $X",
    "echo $((1+2))",
    "for ((i=0; i<3; i++)); do echo $i; done",
    "n=3; echo $((n * 2))",
    "diff -u a b",
    "stat -c %s x",
    "git diff --stat",
    "git log --since=\"2 weeks ago\" --pretty=format:\"%h %s\"",
    "cd src && ls",
    "basename \"$PWD\"",
    "dirname \"$(pwd)\"",
    "cat -n x",
    "seq -5 5",
    "sort -t: -k2,2n x",
    "cut -d: -f1 /etc/passwd",
    "rg -n 'fn main' src",
    "echo x >/dev/stdout",
    "echo x 2>&1 >/dev/null",
    "echo err >&2",
    "jq -r '.name' package.json",
    "less -R x",
    "ping -c 1 example.com",
    "set -euo pipefail; ls",
    "type -t ls",
    "rg --files -g '*.pem'",
    "shopt -s nullglob; ls *.x",
    "echo $? $$ $#",
    "diff <(ls a) <(ls b)",
    "head -n $((N+1)) x",
    "[ \"$(uname)\" = Linux ]",
    "[ -n \"$(git status --porcelain)\" ] && echo dirty",
    "[ $# -eq 0 ]",
    "wc --lines x",
    "awk '$1 > 5 { print $2 }' x",
    "jq --arg v \"$X\" '.a == $v' f.json",
    "cat package.json | jq -c '.deps | keys'",
];

#[test]
fn everyday_lines_stay_quiet() {
    let mut noisy = Vec::new();
    for line in QUIET {
        let a = run(line);
        if !vouched(&a) {
            noisy.push(format!("{line:?}\n{a:#?}"));
        }
    }
    assert!(noisy.is_empty(), "not vouched for:\n{}", noisy.join("\n\n"));
}

/// Writers whose every part is understood are not opaque either: their
/// writes are decided by the rules about the paths they name.
#[test]
fn understood_writers_are_not_opaque() {
    for line in [
        "cp src/*.rs backup/",
        "sed -i 's/a/b/' src/*.rs",
        "touch \"new file.txt\"",
        "mkdir -p build && cp -r assets build/",
        "sort -o sorted.txt x",
        "kill -TERM $$",
    ] {
        let a = run(line);
        assert!(
            a.opaque.is_none() && a.commands.iter().all(|c| !c.tags.contains(&tags::OPAQUE)),
            "{line:?}\n{a:#?}"
        );
    }
}
