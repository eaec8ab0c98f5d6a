//! `git`: its subcommands, and the configuration options that make it run
//! other programs.

use super::opts::{self, Spec};
use super::{Facts, PathRef};
use crate::Sensitivity::{Destructive, Mutate, Read, Write};
use crate::paths;
use crate::tags;
use crate::words::Word;

fn text(args: &[Word], i: usize) -> &str {
    args.get(i).map_or("", |w| w.text.as_str())
}

pub(super) fn classify(name: &str, args: &[Word]) -> Option<Facts> {
    (name == "git").then(|| git(args))
}

/// What a configuration key set on the command line does.
enum ConfigEffect {
    None,
    /// The value (from this byte offset of it) is a command line.
    Run(usize),
    /// Runs something that cannot be seen (hooks from a directory, an
    /// included file).
    Opaque(&'static str),
}

/// Does setting `key` (lower-case) to `value` make git run a program?
fn config_effect(key: &str, value: &str) -> ConfigEffect {
    let is_bool = matches!(
        value.to_ascii_lowercase().as_str(),
        "" | "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0"
    );
    let parts: Vec<&str> = key.split('.').collect();
    let (section, last) = match (parts.first(), parts.last()) {
        (Some(s), Some(l)) if parts.len() >= 2 => (*s, *l),
        _ => return ConfigEffect::None,
    };
    match (section, last) {
        ("alias", _) => match value.strip_prefix('!') {
            Some(_) => ConfigEffect::Run(1),
            None => ConfigEffect::None,
        },
        ("credential", "helper") => {
            if value.starts_with('!') {
                ConfigEffect::Run(1)
            } else if value.starts_with('/') || value.starts_with('.') || value.starts_with('~') {
                ConfigEffect::Run(0)
            } else {
                ConfigEffect::None
            }
        }
        ("pager", _) if parts.len() == 2 => {
            if is_bool {
                ConfigEffect::None
            } else {
                ConfigEffect::Run(0)
            }
        }
        ("core", "fsmonitor") => {
            if is_bool {
                ConfigEffect::None
            } else {
                ConfigEffect::Run(0)
            }
        }
        ("core", "hookspath") => {
            ConfigEffect::Opaque("`core.hooksPath` runs hooks from another directory")
        }
        ("include", "path") | ("includeif", "path") => {
            ConfigEffect::Opaque("an included configuration file can make git run programs")
        }
        (
            "core",
            "pager" | "editor" | "sshcommand" | "askpass" | "gitproxy" | "alternaterefscommand",
        )
        | ("sequence", "editor")
        | ("diff", "external")
        | ("gpg", "program")
        | ("uploadpack", "packobjectshook")
        | ("remote", "receivepack" | "uploadpack")
        | ("sendemail", "smtpserver" | "tocmd" | "cccmd")
        | ("merge", "driver")
        | ("diff", "command" | "textconv")
        | ("filter", "clean" | "smudge" | "process")
        | ("interactive", "difffilter") => {
            if value.is_empty() {
                ConfigEffect::None
            } else {
                ConfigEffect::Run(0)
            }
        }
        (_, "textconv") => {
            if value.is_empty() {
                ConfigEffect::None
            } else {
                ConfigEffect::Run(0)
            }
        }
        ("difftool" | "mergetool", "cmd") => ConfigEffect::Run(0),
        _ => ConfigEffect::None,
    }
}

/// Handles `-c key=value` where the pair is `args[idx].text[off..]`.
fn config_arg(f: &mut Facts, args: &[Word], idx: usize, off: usize) {
    let Some(kv) = args.get(idx).and_then(|w| w.text.get(off..)) else {
        return;
    };
    let (key, value, value_off) = match kv.find('=') {
        Some(eq) => (&kv[..eq], &kv[eq + 1..], off + eq + 1),
        None => (kv, "", off + kv.len()),
    };
    let key_lc = key.to_ascii_lowercase();
    match config_effect(&key_lc, value) {
        ConfigEffect::None => {}
        ConfigEffect::Run(skip) => {
            f.run_line_arg(
                args,
                idx,
                value_off + skip,
                format!("command set by `git -c {key}`"),
            );
        }
        ConfigEffect::Opaque(why) => {
            f.tag(tags::OPAQUE, why);
        }
    }
}

fn git(args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let n = args.len();
    let mut i = 1;
    while i < n {
        let a = text(args, i);
        if a == "-c" {
            config_arg(&mut f, args, i + 1, 0);
            f.skip.push(i + 1);
            i += 2;
        } else if a.starts_with("-c") && !a.starts_with("--") {
            config_arg(&mut f, args, i, 2);
            i += 1;
        } else if a == "-C" {
            if i + 1 < n {
                f.base = Some(PathRef::arg(i + 1));
            }
            i += 2;
        } else if a == "--config-env" || a.starts_with("--config-env=") {
            let (kv, next) = if a == "--config-env" {
                (text(args, i + 1), i + 2)
            } else {
                (&a["--config-env=".len()..], i + 1)
            };
            let key = kv.split('=').next().unwrap_or("").to_ascii_lowercase();
            if !matches!(config_effect(&key, "x"), ConfigEffect::None) {
                f.tag(
                    tags::OPAQUE,
                    format!("`git --config-env` sets `{key}` from an environment variable"),
                );
            }
            i = next;
        } else if a == "--git-dir" || a.starts_with("--git-dir=") {
            f.opaque("`git --git-dir` reads the configuration of another repository");
            i += if a == "--git-dir" { 2 } else { 1 };
        } else if matches!(
            a,
            "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--super-prefix"
                | "--list-cmds"
                | "--attr-source"
        ) {
            i += 2;
        } else if matches!(
            a,
            "--version"
                | "--help"
                | "-v"
                | "-h"
                | "--exec-path"
                | "--html-path"
                | "--man-path"
                | "--info-path"
        ) {
            f.sensitivity = Read;
            return f;
        } else if a.starts_with("--exec-path=") {
            f.tag(
                tags::OPAQUE,
                "`git --exec-path=DIR` runs git's programs from DIR".to_owned(),
            );
            i += 1;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    if i >= n {
        f.sensitivity = Read;
        return f;
    }
    let sub = text(args, i);
    let s = i + 1;
    subcommand(&mut f, args, sub, s);
    f
}

/// Options of the subcommand `args[s..]`, permuted, with `short_val`
/// taking values.
fn sub_opts<'a>(
    args: &'a [Word],
    s: usize,
    short_val: &'static str,
    long_val: &'static [&'static str],
) -> opts::Parsed<'a> {
    opts::parse(
        args,
        s,
        &Spec {
            short_val,
            long_val,
            permute: true,
            ..Spec::default()
        },
    )
}

fn subcommand(f: &mut Facts, args: &[Word], sub: &str, s: usize) {
    const READ: &[&str] = &[
        "status",
        "diff",
        "log",
        "show",
        "blame",
        "annotate",
        "ls-files",
        "ls-tree",
        "ls-remote",
        "grep",
        "rev-parse",
        "rev-list",
        "describe",
        "shortlog",
        "cat-file",
        "show-ref",
        "for-each-ref",
        "whatchanged",
        "merge-base",
        "name-rev",
        "cherry",
        "count-objects",
        "help",
        "version",
        "var",
        "check-ignore",
        "check-attr",
        "check-ref-format",
        "check-mailmap",
        "diff-tree",
        "diff-files",
        "diff-index",
        "show-branch",
        "verify-commit",
        "verify-tag",
        "range-diff",
        "fsck",
        "get-tar-commit-id",
        "request-pull",
        "verify-pack",
        "show-index",
        "column",
        "fmt-merge-msg",
        "interpret-trailers",
        "patch-id",
        "unpack-file",
        "cherry-mark",
    ];
    let n = args.len();
    match sub {
        _ if READ.contains(&sub) => {
            f.sensitivity = Read;
            if sub == "ls-remote" {
                upload_pack(f, args, s);
            }
            // `git diff --output=FILE` and friends write a file.
            let p = sub_opts(args, s, "", &["output"]);
            f.data.extend(&p.values);
            if let Some((i, off)) = p.get('\0', "output").and_then(|o| o.value) {
                f.write_at(i, off);
                f.sensitivity = Write;
            }
            // `git blame --contents=FILE`, `git diff -O FILE`, ...: option
            // values that name files are read.
            for o in &p.opts {
                if let Some((i, off)) = o.value
                    && crate::paths::looks_like_path(args[i].text.get(off..).unwrap_or(""))
                    && !o.is('\0', "output")
                {
                    f.reads.push(PathRef::Arg { idx: i, off });
                }
            }
            if sub == "grep" && p.has('O', "open-files-in-pager") {
                f.opaque("`git grep -O` runs a pager program on the files it finds");
            }
        }
        "branch" => {
            let p = sub_opts(
                args,
                s,
                "",
                &[
                    "set-upstream-to",
                    "sort",
                    "format",
                    "contains",
                    "no-contains",
                    "merged",
                    "no-merged",
                    "points-at",
                    "column",
                ],
            );
            f.sensitivity =
                if p.has('d', "delete") || p.has('D', "") || p.has('m', "move") || p.has('M', "") {
                    Mutate
                } else if p.has('c', "copy")
                    || p.has('C', "")
                    || p.has('u', "set-upstream-to")
                    || p.has_long("unset-upstream")
                    || p.has_long("edit-description")
                    || p.has('f', "force")
                    || (!p.operands.is_empty() && !p.has('l', "list"))
                {
                    Write
                } else {
                    Read
                };
        }
        "tag" => {
            let p = sub_opts(
                args,
                s,
                "mFu",
                &[
                    "message",
                    "file",
                    "local-user",
                    "sort",
                    "format",
                    "contains",
                    "points-at",
                    "merged",
                    "no-merged",
                    "column",
                ],
            );
            f.sensitivity = if p.has('d', "delete") {
                Mutate
            } else if p.has('l', "list") || p.has('v', "verify") || p.operands.is_empty() {
                Read
            } else {
                Write
            };
        }
        "remote" => {
            f.sensitivity = match text(args, s) {
                "" | "-v" | "--verbose" | "show" | "get-url" => Read,
                "remove" | "rm" | "prune" => Mutate,
                _ => Write,
            };
        }
        "stash" => {
            f.sensitivity = match text(args, s) {
                "list" | "show" => Read,
                "drop" | "clear" | "pop" => Mutate,
                _ => Write,
            };
        }
        "config" => config_cmd(f, args, s),
        "worktree" => match text(args, s) {
            "list" => f.sensitivity = Read,
            "add" => {
                f.sensitivity = Write;
                let p = sub_opts(args, s + 1, "bB", &["reason"]);
                if let Some(&d) = p.operands.first() {
                    f.write(d);
                }
            }
            _ => f.sensitivity = Mutate,
        },
        "submodule" => {
            let mut k = s;
            while k < n && text(args, k).starts_with('-') {
                k += 1;
            }
            match text(args, k) {
                "status" | "summary" | "" => f.sensitivity = Read,
                "foreach" => {
                    let mut c = k + 1;
                    while c < n && text(args, c).starts_with("--") {
                        c += 1;
                    }
                    let line = join(&args[c.min(n)..]);
                    let dynamic = args[c.min(n)..].iter().any(|w| w.dynamic);
                    f.run_line(
                        &line,
                        dynamic,
                        "command run by `git submodule foreach`".to_owned(),
                    );
                    f.skip_from = c;
                    f.sensitivity = Read;
                }
                "deinit" => f.sensitivity = Mutate,
                _ => f.sensitivity = Write,
            }
        }
        "bisect" => {
            if text(args, s) == "run" {
                f.run_argv(args, s + 1, "run by `git bisect run`".to_owned(), false);
            }
            f.sensitivity = Write;
        }
        "rebase" => {
            let p = sub_opts(
                args,
                s,
                "xsX",
                &["exec", "strategy", "strategy-option", "onto", "gpg-sign"],
            );
            for o in p.all('x', "exec") {
                if let Some((i, off)) = o.value {
                    f.run_line_arg(
                        args,
                        i,
                        off,
                        "command run by `git rebase --exec`".to_owned(),
                    );
                }
            }
            f.sensitivity = Mutate;
        }
        "difftool" => {
            let p = sub_opts(args, s, "xt", &["extcmd", "tool"]);
            if let Some((i, off)) = p.get('x', "extcmd").and_then(|o| o.value) {
                f.run_line_arg(args, i, off, "command run by `git difftool -x`".to_owned());
            }
            f.sensitivity = Mutate;
        }
        "filter-branch" => {
            let mut k = s;
            while k < n {
                let t = text(args, k);
                if t.ends_with("-filter") && t.starts_with("--") {
                    f.run_line_arg(
                        args,
                        k + 1,
                        0,
                        format!("command run by `git filter-branch {t}`"),
                    );
                    k += 2;
                } else {
                    k += 1;
                }
            }
            f.sensitivity = Mutate;
        }
        "push" => push(f, args, s),
        "fetch" | "pull" => {
            upload_pack(f, args, s);
            f.sensitivity = Write;
        }
        "clone" => {
            upload_pack(f, args, s);
            f.sensitivity = Write;
            let p = sub_opts(
                args,
                s,
                "obuc",
                &[
                    "origin",
                    "branch",
                    "upload-pack",
                    "config",
                    "template",
                    "reference",
                    "separate-git-dir",
                    "depth",
                    "shallow-since",
                    "shallow-exclude",
                    "jobs",
                    "filter",
                    "server-option",
                    "bundle-uri",
                    "ref-format",
                ],
            );
            for o in p.all('c', "config") {
                if let Some((i, off)) = o.value {
                    config_arg(f, args, i, off);
                }
            }
            match p.operands.get(1) {
                Some(&d) => f.write(d),
                None => {
                    if let Some(&u) = p.operands.first()
                        && !args[u].dynamic
                    {
                        let name = paths::basename(&args[u].text);
                        let name = name.strip_suffix(".git").unwrap_or(name);
                        let name = name.rsplit(':').next().unwrap_or(name);
                        if !name.is_empty() {
                            f.writes.push(PathRef::Lit(name.to_owned()));
                        }
                        f.skip.push(u);
                    }
                }
            }
        }
        "archive" => {
            upload_pack(f, args, s);
            let p = sub_opts(
                args,
                s,
                "o",
                &["output", "remote", "exec", "format", "prefix"],
            );
            f.sensitivity = Read;
            if let Some((i, off)) = p.get('o', "output").and_then(|o| o.value) {
                f.write_at(i, off);
                f.sensitivity = Write;
            }
        }
        "checkout" => {
            let p = sub_opts(args, s, "bB", &["orphan", "conflict", "pathspec-from-file"]);
            let dashes = (s..n).find(|&k| text(args, k) == "--");
            if let Some(d) = dashes {
                for k in d + 1..n {
                    f.write(k);
                }
                f.sensitivity = Mutate;
            } else if p.has('b', "") || p.has('B', "") || p.has_long("orphan") {
                f.sensitivity = Write;
            } else {
                for &k in &p.operands {
                    let t = text(args, k);
                    if t == "." || paths::looks_like_path(t) {
                        f.write(k);
                    }
                }
                f.sensitivity = Mutate;
            }
        }
        "switch" => f.sensitivity = Write,
        "restore" => {
            let p = sub_opts(args, s, "s", &["source", "pathspec-from-file", "conflict"]);
            for &k in &p.operands {
                f.write(k);
            }
            f.sensitivity = if (p.has('S', "staged")) && !p.has('W', "worktree") {
                Write
            } else {
                Mutate
            };
        }
        "rm" => {
            let p = sub_opts(args, s, "", &["pathspec-from-file"]);
            for &k in &p.operands {
                f.write(k);
            }
            f.sensitivity = if p.has_long("cached") { Write } else { Mutate };
        }
        "mv" => {
            let p = sub_opts(args, s, "", &[]);
            for &k in &p.operands {
                f.write(k);
            }
            f.sensitivity = Mutate;
        }
        "clean" => {
            let p = sub_opts(args, s, "e", &["exclude"]);
            if p.has('n', "dry-run") {
                f.sensitivity = Read;
                return;
            }
            if p.operands.is_empty() {
                f.writes.push(PathRef::Lit(".".to_owned()));
            }
            for &k in &p.operands {
                f.write(k);
            }
            let force = p.has('f', "force");
            let wide = p.has('d', "") || p.has('x', "") || p.has('X', "");
            f.sensitivity = Mutate;
            if force && wide {
                f.sensitivity = Destructive;
                f.notes.push(
                    "`git clean -fdx` deletes untracked (and ignored) files for good".to_owned(),
                );
            }
        }
        "reset" => {
            let p = sub_opts(args, s, "", &["pathspec-from-file"]);
            f.sensitivity = Mutate;
            if p.has_long("hard") {
                f.sensitivity = Destructive;
                f.notes
                    .push("`git reset --hard` discards uncommitted changes".to_owned());
            }
        }
        "apply" => {
            let p = sub_opts(
                args,
                s,
                "p",
                &["directory", "exclude", "include", "whitespace"],
            );
            let check = p.has_long("check")
                || p.has_long("stat")
                || p.has_long("numstat")
                || p.has_long("summary");
            f.sensitivity = if check { Read } else { Write };
            if !check {
                // The files it writes are named inside the patch.
                f.opaque("`git apply` writes the files its patch names, not known before it runs");
            }
        }
        "reflog" => {
            f.sensitivity = match text(args, s) {
                "expire" | "delete" | "drop" => Mutate,
                _ => Read,
            };
        }
        "notes" => {
            f.sensitivity = match text(args, s) {
                "" | "list" | "show" => Read,
                "remove" | "prune" => Mutate,
                _ => Write,
            };
        }
        "lfs" => {
            f.sensitivity = match text(args, s) {
                "ls-files" | "status" | "env" | "version" | "logs" => Read,
                _ => Write,
            };
        }
        "sparse-checkout" => {
            f.sensitivity = if text(args, s) == "list" { Read } else { Write };
        }
        "bundle" => {
            f.sensitivity = match text(args, s) {
                "verify" | "list-heads" => Read,
                _ => Write,
            };
        }
        "update-ref" => {
            f.sensitivity = if args[s.min(n)..].iter().any(|w| w.text == "-d") {
                Mutate
            } else {
                Write
            };
        }
        "hash-object" => {
            f.sensitivity = if args[s.min(n)..].iter().any(|w| w.text == "-w") {
                Write
            } else {
                Read
            };
        }
        "add" | "commit" | "merge" | "cherry-pick" | "revert" | "am" | "init" | "update-index"
        | "symbolic-ref" | "write-tree" | "commit-tree" | "mktag" | "mktree" | "read-tree"
        | "checkout-index" | "format-patch" | "repack" | "maintenance" | "replace" | "stage"
        | "citool" | "gui" | "pack-refs" | "fast-import" | "merge-file" | "rerere"
        | "mergetool" => {
            f.sensitivity = Write;
            if sub == "commit" {
                f.skip.extend(s..n);
            }
        }
        "gc" | "prune" | "prune-packed" => f.sensitivity = Mutate,
        _ => {
            f.sensitivity = Mutate;
            f.notes.push(format!(
                "`git {sub}` is not a known git command (an alias or an external program)"
            ));
        }
    }
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

/// `--upload-pack=CMD`, `--receive-pack=CMD`, `--exec=CMD`, `-u CMD` (clone).
fn upload_pack(f: &mut Facts, args: &[Word], s: usize) {
    let n = args.len();
    let mut k = s;
    while k < n {
        let t = text(args, k);
        let mut hit = None;
        for opt in ["--upload-pack", "--receive-pack", "--exec"] {
            if t == opt {
                hit = Some((k + 1, 0));
            } else if let Some(rest) = t.strip_prefix(opt)
                && rest.starts_with('=')
            {
                hit = Some((k, opt.len() + 1));
            }
        }
        if let Some((i, off)) = hit {
            f.run_line_arg(
                args,
                i,
                off,
                "program run by git on the remote side of a local transport".to_owned(),
            );
        }
        k += 1;
    }
}

fn push(f: &mut Facts, args: &[Word], s: usize) {
    upload_pack(f, args, s);
    let p = sub_opts(
        args,
        s,
        "o",
        &["repo", "push-option", "receive-pack", "exec", "signed"],
    );
    f.sensitivity = Mutate;
    let forced = p.has('f', "force")
        || p.opts.iter().any(|o| matches!(o.name, opts::Name::Long(l) if l.starts_with("force-with-lease") || l == "force-if-includes" || l == "mirror"));
    let plus_refspec = p
        .operands
        .iter()
        .skip(1)
        .any(|&k| text(args, k).starts_with('+'));
    if forced || plus_refspec {
        f.tag(
            tags::FORCE_PUSH,
            "a force push rewrites history on the remote",
        );
    }
}

fn config_cmd(f: &mut Facts, args: &[Word], s: usize) {
    let p = sub_opts(
        args,
        s,
        "f",
        &["file", "blob", "type", "default", "comment"],
    );
    let reading = [
        "get",
        "get-all",
        "get-regexp",
        "get-urlmatch",
        "list",
        "get-color",
        "get-colorbool",
        "show-origin",
        "show-scope",
        "name-only",
    ];
    let writing = [
        "unset",
        "unset-all",
        "remove-section",
        "rename-section",
        "add",
        "replace-all",
        "edit",
    ];
    let mut ops = p.operands.clone();
    // `git config get|list|set|unset ...` (git 2.46+).
    let verb = ops.first().map(|&k| text(args, k));
    match verb {
        Some("get" | "list") => {
            f.sensitivity = Read;
            return;
        }
        Some("set" | "unset" | "rename-section" | "remove-section" | "edit") => {
            ops.remove(0);
        }
        _ => {}
    }
    if p.opts
        .iter()
        .any(|o| matches!(o.name, opts::Name::Long(l) if writing.contains(&l)) || o.is('e', "edit"))
    {
        f.sensitivity = Write;
        return;
    }
    if p.opts
        .iter()
        .any(|o| matches!(o.name, opts::Name::Long(l) if reading.contains(&l)) || o.is('l', "list"))
        || ops.len() <= 1 && verb != Some("set")
    {
        f.sensitivity = Read;
        return;
    }
    f.sensitivity = Write;
    if let (Some(&k), Some(&v)) = (ops.first(), ops.get(1)) {
        let key = text(args, k).to_ascii_lowercase();
        match config_effect(&key, text(args, v)) {
            ConfigEffect::None => {}
            ConfigEffect::Run(skip) => {
                f.sensitivity = Mutate;
                f.run_line_arg(
                    args,
                    v,
                    skip,
                    format!(
                        "command git will run, set by `git config {}`",
                        text(args, k)
                    ),
                );
            }
            ConfigEffect::Opaque(why) => {
                f.sensitivity = Mutate;
                f.notes.push(why.to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_keys() {
        assert!(matches!(
            config_effect("core.pager", "less"),
            ConfigEffect::Run(0)
        ));
        assert!(matches!(
            config_effect("alias.x", "!rm -rf x"),
            ConfigEffect::Run(1)
        ));
        assert!(matches!(
            config_effect("alias.st", "status"),
            ConfigEffect::None
        ));
        assert!(matches!(
            config_effect("pager.log", "true"),
            ConfigEffect::None
        ));
        assert!(matches!(
            config_effect("pager.log", "rm -rf x"),
            ConfigEffect::Run(0)
        ));
        assert!(matches!(
            config_effect("diff.foo.textconv", "x"),
            ConfigEffect::Run(0)
        ));
        assert!(matches!(
            config_effect("filter.lfs.smudge", "x"),
            ConfigEffect::Run(0)
        ));
        assert!(matches!(
            config_effect("core.hookspath", "/tmp/h"),
            ConfigEffect::Opaque(_)
        ));
        assert!(matches!(
            config_effect("user.name", "x"),
            ConfigEffect::None
        ));
        assert!(matches!(
            config_effect("credential.helper", "store"),
            ConfigEffect::None
        ));
        assert!(matches!(
            config_effect("credential.helper", "!evil"),
            ConfigEffect::Run(1)
        ));
    }
}
