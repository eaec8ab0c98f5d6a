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
    /// Not known to be inert: it may make git run a program, write a file
    /// or reach a transport (hooks, includes, `protocol.*.allow`, ...).
    Opaque(String),
}

/// Keys (lower-case) known to change only how git prints or records
/// things: every other key set on the command line makes the command
/// opaque. A trailing `.` takes the whole section.
const INERT_KEYS: &[&str] = &[
    "advice.",
    "color.",
    "column.",
    "pretty.",
    "user.name",
    "user.email",
    "author.name",
    "author.email",
    "committer.name",
    "committer.email",
    "init.defaultbranch",
    "core.quotepath",
    "core.autocrlf",
    "core.safecrlf",
    "core.eol",
    "core.filemode",
    "core.ignorecase",
    "core.abbrev",
    "core.whitespace",
    "core.preloadindex",
    "log.date",
    "log.decorate",
    "log.abbrevcommit",
    "log.follow",
    "log.showroot",
    "format.pretty",
    "diff.noprefix",
    "diff.mnemonicprefix",
    "diff.renames",
    "diff.renamelimit",
    "diff.algorithm",
    "diff.indentheuristic",
    "diff.colormoved",
    "diff.context",
    "diff.interhunkcontext",
    "diff.statgraphwidth",
    "merge.conflictstyle",
    "merge.ff",
    "merge.log",
    "merge.renames",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "push.followtags",
    "fetch.prune",
    "fetch.prunetags",
    "fetch.parallel",
    "rebase.autosquash",
    "rebase.autostash",
    "rebase.updaterefs",
    "rerere.enabled",
    "rerere.autoupdate",
    "status.short",
    "status.branch",
    "status.showuntrackedfiles",
    "status.relativepaths",
    "status.renames",
    "branch.sort",
    "tag.sort",
    "versionsort.suffix",
    "grep.linenumber",
    "grep.patterntype",
    "grep.extendedregexp",
    "grep.fullname",
    "grep.column",
    "blame.date",
    "blame.coloring",
    "i18n.commitencoding",
    "i18n.logoutputencoding",
    "gc.auto",
    "gc.autodetach",
    "maintenance.auto",
    "commit.verbose",
    "commit.cleanup",
    "commit.status",
    "protocol.version",
    "checkout.defaultremote",
    "index.version",
    "pack.threads",
];

/// Keys (lower-case, `*` for one subsection) whose value is a command
/// line git runs.
const RUN_KEYS: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "core.fsmonitor",
    "sequence.editor",
    "diff.external",
    "gpg.program",
    "gpg.*.program",
    "uploadpack.packobjectshook",
    "remote.*.receivepack",
    "remote.*.uploadpack",
    "sendemail.smtpserver",
    "sendemail.tocmd",
    "sendemail.cccmd",
    "merge.*.driver",
    "diff.*.command",
    "diff.*.textconv",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "interactive.difffilter",
    "difftool.*.cmd",
    "mergetool.*.cmd",
    "man.*.cmd",
    "browser.*.cmd",
];

fn is_bool(value: &str) -> bool {
    matches!(
        value.to_ascii_lowercase().as_str(),
        "" | "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0"
    )
}

/// Does `key` match `pattern` (`*` stands for one subsection, which may
/// hold dots)?
fn key_matches(key: &str, pattern: &str) -> bool {
    match pattern.split_once(".*.") {
        None => key == pattern,
        Some((section, last)) => key
            .strip_prefix(section)
            .and_then(|r| r.strip_prefix('.'))
            .and_then(|r| r.strip_suffix(last))
            .is_some_and(|mid| mid.len() > 1 && mid.ends_with('.')),
    }
}

fn is_inert_key(key: &str) -> bool {
    INERT_KEYS.iter().any(|k| match k.strip_suffix('.') {
        Some(section) => key.split('.').next() == Some(section),
        None => key == *k,
    })
}

/// What setting `key` (lower-case) to `value` does.
fn config_effect(key: &str, value: &str) -> ConfigEffect {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty()) {
        return ConfigEffect::Opaque(format!("`{key}` is not a configuration key git reads"));
    }
    let runs = RUN_KEYS.iter().any(|p| key_matches(key, p))
        || (parts[0] == "pager" && parts.len() == 2)
        || parts.last() == Some(&"textconv");
    if runs {
        let off_switch = if matches!(key, "core.fsmonitor") || parts[0] == "pager" {
            is_bool(value)
        } else {
            value.is_empty()
        };
        return if off_switch {
            ConfigEffect::None
        } else {
            ConfigEffect::Run(0)
        };
    }
    if parts[0] == "alias" && value.starts_with('!') {
        return ConfigEffect::Run(1);
    }
    if key == "credential.helper" {
        return if let Some(cmd) = value.strip_prefix('!') {
            let _ = cmd;
            ConfigEffect::Run(1)
        } else if value.starts_with('/') || value.starts_with('.') || value.starts_with('~') {
            ConfigEffect::Run(0)
        } else {
            ConfigEffect::None
        };
    }
    if is_inert_key(key) {
        return ConfigEffect::None;
    }
    ConfigEffect::Opaque(format!(
        "`{key}` is not a configuration key the analysis knows to be inert (it may run a program, write a file or allow a transport)"
    ))
}

/// Handles `-c key=value` where the pair is `args[idx].text[off..]`.
fn config_arg(f: &mut Facts, args: &[Word], idx: usize, off: usize) {
    let Some(w) = args.get(idx) else {
        f.opaque("`git -c` without a key");
        return;
    };
    let kv = w.text.get(off..).unwrap_or("");
    if w.dynamic {
        f.opaque(format!(
            "the git configuration `{kv}` is not known before it runs"
        ));
        return;
    }
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
        ConfigEffect::Opaque(why) => f.opaque(why),
    }
}

/// git's options before the subcommand, as the positive list of what the
/// analysis models: anything else makes the command opaque.
#[derive(Clone, Copy)]
enum Global {
    /// Takes no value and changes nothing the analysis reports.
    Inert,
    /// Takes the next argument (or `=VALUE`) and changes nothing reported.
    InertValue,
    /// Prints something and exits.
    Prints,
    /// Points git at configuration, hooks or files elsewhere.
    Elsewhere(&'static str),
}

const GLOBALS: &[(&str, Global)] = &[
    ("--no-pager", Global::Inert),
    ("-P", Global::Inert),
    ("-p", Global::Inert),
    ("--paginate", Global::Inert),
    ("--no-replace-objects", Global::Inert),
    ("--no-lazy-fetch", Global::Inert),
    ("--no-optional-locks", Global::Inert),
    ("--no-advice", Global::Inert),
    ("--literal-pathspecs", Global::Inert),
    ("--glob-pathspecs", Global::Inert),
    ("--noglob-pathspecs", Global::Inert),
    ("--icase-pathspecs", Global::Inert),
    ("--namespace", Global::InertValue),
    ("--version", Global::Prints),
    ("-v", Global::Prints),
    ("--help", Global::Prints),
    ("-h", Global::Prints),
    ("--html-path", Global::Prints),
    ("--man-path", Global::Prints),
    ("--info-path", Global::Prints),
    ("--exec-path", Global::Prints),
    ("--list-cmds", Global::Prints),
    (
        "--git-dir",
        Global::Elsewhere(
            "`git --git-dir` reads the configuration and hooks of another repository",
        ),
    ),
    (
        "--work-tree",
        Global::Elsewhere("`git --work-tree` reads and writes files of another tree"),
    ),
    (
        "--bare",
        Global::Elsewhere(
            "`git --bare` takes the working directory for a repository, with its configuration",
        ),
    ),
    (
        "--attr-source",
        Global::Elsewhere(
            "`git --attr-source` reads attributes (diff and filter drivers) from another tree",
        ),
    ),
    (
        "--super-prefix",
        Global::Elsewhere("`git --super-prefix` is internal to git"),
    ),
];

fn git(args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let n = args.len();
    let mut i = 1;
    while i < n {
        let a = text(args, i);
        let (opt, attached) = match a.split_once('=') {
            Some((o, _)) if o.starts_with("--") => (o, true),
            _ => (a, false),
        };
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
        } else if opt == "--config-env" {
            let (kv, next) = if attached {
                (&a["--config-env=".len()..], i + 1)
            } else {
                (text(args, i + 1), i + 2)
            };
            let key = kv.split('=').next().unwrap_or("").to_ascii_lowercase();
            if !is_inert_key(&key) {
                f.opaque(format!(
                    "`git --config-env` sets `{key}` from an environment variable, not known before it runs"
                ));
            }
            i = next;
        } else if opt == "--exec-path" && attached {
            f.opaque("`git --exec-path=DIR` runs git's programs from DIR");
            i += 1;
        } else if let Some(&(_, g)) = GLOBALS.iter().find(|(o, _)| *o == opt) {
            match g {
                Global::Inert => i += 1,
                Global::InertValue => i += if attached { 1 } else { 2 },
                Global::Prints => {
                    f.sensitivity = Read;
                    return f;
                }
                Global::Elsewhere(why) => {
                    f.opaque(why);
                    let takes = !matches!(opt, "--bare");
                    i += if attached || !takes { 1 } else { 2 };
                }
            }
        } else if a.starts_with('-') {
            f.opaque(format!("`git {a}` is not an option the analysis knows"));
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
    if URL_TAKERS.contains(&sub) {
        transports(&mut f, args, s);
    }
    f
}

/// Subcommands that take a repository URL.
const URL_TAKERS: &[&str] = &[
    "ls-remote",
    "fetch",
    "pull",
    "push",
    "clone",
    "archive",
    "submodule",
    "remote",
    "bundle",
];

/// `TRANSPORT::ADDRESS` makes git run the remote helper
/// `git-remote-TRANSPORT` (`ext::` runs a command line): no such URL is
/// modelled.
fn transports(f: &mut Facts, args: &[Word], s: usize) {
    for w in args.iter().skip(s) {
        let t = w.text.as_str();
        let v = if t.starts_with('-') {
            t.split_once('=').map_or("", |(_, v)| v)
        } else {
            t
        };
        if let Some((helper, _)) = v.split_once("::")
            && !helper.is_empty()
            && helper
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        {
            f.opaque(format!(
                "the URL `{v}` makes git run the remote helper `git-remote-{helper}`"
            ));
        }
    }
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
        "help" => help(f, args, s),
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
        "init" => {
            f.sensitivity = Write;
            let p = sub_opts(
                args,
                s,
                "b",
                &[
                    "template",
                    "separate-git-dir",
                    "object-format",
                    "ref-format",
                    "initial-branch",
                    "shared",
                ],
            );
            if p.has_long("bare") || p.has_long("separate-git-dir") || p.has_long("template") {
                // Its directory is then a repository whose configuration
                // (written by a later command) git runs from.
                f.opaque("`git init --bare`, `--separate-git-dir` or `--template` makes a repository git reads configuration and hooks from, away from `.git`");
            }
        }
        "add" | "commit" | "merge" | "cherry-pick" | "revert" | "am" | "update-index"
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
        config_file(f, &p);
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
                f.opaque(format!(
                    "`git config {}` sets a program later git commands run",
                    text(args, k)
                ));
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
            ConfigEffect::Opaque(why) => f.opaque(why),
        }
    }
    config_file(f, &p);
}

/// Where `git config` writes: `--file FILE`, `--global`, `--system`.
fn config_file(f: &mut Facts, p: &opts::Parsed) {
    if f.sensitivity == Read {
        return;
    }
    if let Some((i, off)) = p.get('f', "file").and_then(|o| o.value) {
        f.write_at(i, off);
    } else if p.has_long("global") {
        f.writes.push(PathRef::Lit("~/.gitconfig".to_owned()));
    } else if p.has_long("system") {
        f.opaque("`git config --system` writes the configuration of every user");
    }
}

/// `git help`: the lists it prints are read; a topic is shown by the
/// viewer its configuration names (`help.format`, `man.<tool>.cmd`,
/// `browser.<tool>.cmd`), a program the analysis cannot see.
fn help(f: &mut Facts, args: &[Word], s: usize) {
    let p = sub_opts(args, s, "", &[]);
    let lists = p.has('a', "all")
        || p.has('g', "guides")
        || p.has('c', "config")
        || p.has_long("user-interfaces")
        || p.has_long("developer-interfaces");
    f.sensitivity = Read;
    if !lists && !p.operands.is_empty() {
        f.opaque("`git help TOPIC` runs the viewer its configuration names (`man.<tool>.cmd`, `help.browser`)");
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
            ConfigEffect::Opaque(_)
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
