//! File tools: what they read, write, move and delete.

use super::opts::{self, Parsed, Spec};
use super::tables;
use super::{Facts, PathRef};
use crate::Sensitivity::{self, Mutate, Read, Write};
use crate::tags;
use crate::words::Word;

fn text(args: &[Word], i: usize) -> &str {
    args.get(i).map_or("", |w| w.text.as_str())
}

/// Programs that only read the files they are given.
const READERS: &[&str] = &[
    "cat",
    "tac",
    "head",
    "tail",
    "less",
    "more",
    "most",
    "bat",
    "batcat",
    "nl",
    "wc",
    "od",
    "hexdump",
    "strings",
    "file",
    "stat",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "shasum",
    "md5sum",
    "md5",
    "b2sum",
    "cksum",
    "sum",
    "diff",
    "cmp",
    "comm",
    "cut",
    "paste",
    "join",
    "fold",
    "fmt",
    "column",
    "expand",
    "unexpand",
    "rev",
    "view",
    "zless",
    "zmore",
    "zgrep",
    "bzgrep",
    "xzgrep",
    "readlink",
    "realpath",
    "ls",
    "exa",
    "eza",
    "lsd",
    "tree",
    "du",
    "wc",
    "iconv",
    "jq",
    "yq",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "fd",
    "fdfind",
    "test",
    "[",
    "[[",
    "basename",
    "dirname",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "which",
    "whereis",
    "whatis",
    "apropos",
    "type",
    "df",
    "printenv",
    "whoami",
    "id",
    "groups",
    "uname",
    "ps",
    "pgrep",
    "pidof",
    "top",
    "htop",
    "btop",
    "uptime",
    "free",
    "w",
    "who",
    "users",
    "last",
    "lsof",
    "lscpu",
    "lsblk",
    "lsusb",
    "lspci",
    "nproc",
    "arch",
    "tty",
    "locale",
    "getconf",
    "seq",
    "yes",
    "sleep",
    "tr",
    "help",
    "info",
    "history",
    "jobs",
    "dirs",
    "hash",
    "wait",
    "exit",
    "return",
    "shift",
    "break",
    "continue",
    "set",
    "shopt",
    "ulimit",
    "compgen",
    "getent",
    "dig",
    "nslookup",
    "host",
    "ping",
    "ping6",
    "traceroute",
    "whois",
    "netstat",
    "ss",
    "vmstat",
    "iostat",
    "mpstat",
    "sar",
    "dmesg",
    "journalctl",
    "cal",
    "bc",
    "dc",
    "expr",
    "factor",
    "numfmt",
    "shuf",
    "tput",
    "clear",
    "reset",
    "stty",
    "diff3",
    "sdiff",
    "colordiff",
    "delta",
    "difft",
    "tokei",
    "cloc",
    "scc",
    "xmllint",
    "jless",
    "fx",
    "gron",
    "htmlq",
    "pup",
    "mlr",
    "csvlook",
    "ldd",
    "nm",
    "objdump",
    "readelf",
    "size",
    "otool",
    "lipo",
    "sw_vers",
    "system_profiler",
    "sysctl",
    "timedatectl",
    "hostnamectl",
    "loginctl",
    "look",
    "units",
    "cowsay",
    "figlet",
    "lolcat",
    "banner",
    "tldr",
    "man",
    "let",
    "local",
    "declare",
    "typeset",
    "readonly",
    "export",
    "unset",
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "cd",
    "pushd",
    "popd",
    "umask",
    "date",
    "hostname",
    "sort",
    "uniq",
    "xxd",
    "base64",
    "base32",
    "basenc",
    "zcat",
    "bzcat",
    "xzcat",
    "zstdcat",
    "lz4cat",
];

/// Programs whose first operand is a pattern or program, not a file.
fn pattern_first(name: &str) -> bool {
    matches!(
        name,
        "grep"
            | "egrep"
            | "fgrep"
            | "rg"
            | "ag"
            | "ack"
            | "jq"
            | "yq"
            | "zgrep"
            | "bzgrep"
            | "xzgrep"
    )
}

pub(super) fn classify(name: &str, args: &[Word]) -> Option<Facts> {
    let f = match name {
        "rm" => rm(args),
        "rmdir" | "unlink" | "shred" => all_operands(name, args, Mutate),
        "truncate" | "touch" | "mkdir" => all_operands(name, args, Write),
        "mkfifo" | "mknod" | "fallocate" | "sponge" => lenient_operands(
            args,
            &Spec {
                short_val: "mlo",
                permute: true,
                ..Spec::default()
            },
            Write,
        ),
        "tee" => {
            let mut f = all_operands(name, args, Write);
            if f.writes.is_empty() {
                f.sensitivity = Read;
            }
            f
        }
        "cp" | "install" | "ln" | "mv" | "gcp" | "gmv" => copy(name, args),
        "chmod" | "chown" | "chgrp" | "lchown" => chmod(name, args),
        "chattr" => chattr(args),
        "setfacl" => lenient_operands(
            args,
            &Spec {
                short_val: "mMxX",
                long_val: &[
                    "modify",
                    "modify-file",
                    "remove",
                    "remove-file",
                    "set",
                    "set-file",
                ],
                permute: true,
                ..Spec::default()
            },
            Mutate,
        ),
        "dd" => dd(args),
        "patch" => patch(args),
        "curl" => curl(args),
        "wget" => wget(args),
        "tar" | "gtar" | "bsdtar" => tar(args),
        "unzip" => unzip(args),
        "rsync" | "scp" => transfer(name, args),
        "sort" => sort(args),
        "uniq" | "xxd" => {
            let mut f = Facts::new(Read);
            let p = if name == "xxd" {
                opts::parse(
                    args,
                    1,
                    &Spec {
                        short_val: "cglsno",
                        permute: true,
                        ..Spec::default()
                    },
                )
            } else {
                // `uniq [INPUT [OUTPUT]]`: option values must not be taken
                // for operands, or OUTPUT is missed.
                by_table(&mut f, name, args)
            };
            if p.operands.len() == 1 && args[p.operands[0]].glob {
                f.opaque(format!(
                    "a pattern among `{name}`'s operands may name two files, and the second is written"
                ));
            }
            if name == "xxd" && args.iter().any(|w| w.text == "--") {
                // xxd takes `--` for a file name, not the end of options.
                f.opaque("`xxd` reads `--` as a file name");
            }
            if name == "xxd" && p.has('r', "revert") {
                f.decoder = true;
            }
            if let Some(&i) = p.operands.first() {
                f.read(i);
            }
            if let Some(&o) = p.operands.get(1) {
                f.write(o);
                f.at_least(Write);
            }
            f
        }
        "base64" | "base32" | "basenc" | "gbase64" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "wio",
                    permute: true,
                    ..Spec::default()
                },
            );
            let mut f = Facts::new(Read);
            f.decoder = p.has('d', "decode") || p.has('D', "");
            for &i in &p.operands {
                f.read(i);
            }
            if let Some(o) = p.get('o', "output")
                && let Some((i, off)) = o.value
            {
                f.write_at(i, off);
                f.at_least(Write);
            }
            f
        }
        "uudecode" => {
            let mut f = Facts::new(Write);
            f.decoder = true;
            f
        }
        "openssl" => openssl(args),
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "lzma" | "unlzma" | "zstd"
        | "unzstd" | "lz4" | "unlz4" | "compress" | "uncompress" | "pigz" | "unpigz" => {
            compressor(name, args)
        }
        "zcat" | "bzcat" | "xzcat" | "zstdcat" | "lz4cat" | "gzcat" => {
            let mut f = reader(name, args);
            f.decoder = true;
            f
        }
        "zip" => zip(args),
        "mktemp" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "p",
                    long_val: &["tmpdir", "suffix"],
                    permute: true,
                    ..Spec::default()
                },
            );
            Facts::new(if p.has('u', "dry-run") { Read } else { Write })
        }
        "split" => split(args),
        "csplit" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "bfn",
                    long_val: &["prefix", "suffix-format", "digits"],
                    permute: true,
                    ..Spec::default()
                },
            );
            let mut f = Facts::new(Write);
            if let Some(&i) = p.operands.first() {
                f.read(i);
            }
            let prefix = p.get('f', "prefix").and_then(|o| o.value_text(args));
            f.writes
                .push(PathRef::Lit(format!("{}*", prefix.unwrap_or("xx"))));
            f
        }
        "vim" | "vi" | "nvim" | "ex" | "nano" | "emacs" | "ed" | "code" | "subl" | "micro"
        | "hx" | "kak" | "joe" | "mcedit" | "gedit" | "kate" | "cursor" => editor(name, args),
        "hostname" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "F",
                    permute: true,
                    ..Spec::default()
                },
            );
            Facts::new(
                if p.operands.is_empty() && !p.has('F', "file") && !p.has('b', "boot") {
                    Read
                } else {
                    Mutate
                },
            )
        }
        "umask" => Facts::new(if args.len() > 1 && !text(args, 1).starts_with('-') {
            Write
        } else {
            Read
        }),
        "yq" => {
            let p = opts::parse(args, 1, &Spec::default());
            let mut f = reader(name, args);
            if p.has('i', "inplace") {
                f.writes = std::mem::take(&mut f.reads);
                f.at_least(Write);
            }
            f
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => declare(name, args),
        "unset" => {
            let mut f = Facts::new(Write);
            let functions = args.iter().skip(1).any(|w| w.text == "-f");
            for (i, w) in args.iter().enumerate().skip(1) {
                if !w.text.starts_with('-') && !functions {
                    f.env_changes.push(w.text.clone());
                    f.skip.push(i);
                    f.names.push((i, 0));
                }
            }
            f
        }
        "read" | "mapfile" | "readarray" | "getopts" | "let" | "printf" => vars(name, args),
        "test" | "[" => test(args),
        "cd" | "pushd" | "popd" | "chdir" => cd(name, args),
        "jq" => jq(args),
        "hash" | "enable" | "shopt" | "compgen" | "complete" => shell_state(name, args),
        "mkfs" | "mke2fs" | "mkswap" | "wipefs" | "mkdosfs" | "mkntfs" | "mkexfatfs" => {
            mkfs(name, args)
        }
        n if n.starts_with("mkfs.") || n.starts_with("newfs") => mkfs(name, args),
        "diskutil" => {
            let mut f = Facts::new(Read);
            let sub = text(args, 1).to_ascii_lowercase();
            if sub.starts_with("erase")
                || sub == "partitiondisk"
                || sub == "zerodisk"
                || sub == "securerase"
                || sub == "secureerase"
                || sub == "reformat"
            {
                f.tag(
                    tags::MKFS,
                    format!("`diskutil {}` erases a disk", text(args, 1)),
                );
            } else if !matches!(
                sub.as_str(),
                "list" | "info" | "activity" | "listfilesystems"
            ) {
                f.at_least(Mutate);
            }
            f
        }
        "fdisk" | "sfdisk" | "cfdisk" | "parted" | "gdisk" | "sgdisk" | "cgdisk" => {
            let listing = args
                .iter()
                .skip(1)
                .any(|w| matches!(w.text.as_str(), "-l" | "--list" | "print" | "-p"));
            Facts::new(if listing { Read } else { Mutate })
        }
        _ if READERS.contains(&name) => reader(name, args),
        _ => return None,
    };
    Some(f)
}

/// A program that reads the files it is given.
fn reader(name: &str, args: &[Word]) -> Facts {
    if let Some(table) = tables::table(name) {
        return read_by_table(name, args, table);
    }
    let spec = match name {
        "head" | "tail" => Spec {
            short_val: "ncs",
            long_val: &[
                "lines",
                "bytes",
                "sleep-interval",
                "pid",
                "max-unchanged-stats",
            ],
            permute: true,
            ..Spec::default()
        },
        "grep" | "egrep" | "fgrep" | "zgrep" => Spec {
            short_val: "efmABCdD",
            long_val: &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "include",
                "exclude",
                "exclude-dir",
                "exclude-from",
                "label",
                "devices",
                "directories",
                "binary-files",
                "group-separator",
            ],
            permute: true,
            ..Spec::default()
        },
        "rg" => Spec {
            short_val: "efmABCgtTjMrE",
            long_val: &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "glob",
                "iglob",
                "type",
                "type-not",
                "threads",
                "max-columns",
                "replace",
                "pre",
                "pre-glob",
                "sort",
                "sortr",
                "max-depth",
                "encoding",
                "engine",
                "color",
                "colors",
                "path-separator",
                "field-match-separator",
                "field-context-separator",
                "ignore-file",
                "type-add",
                "type-clear",
                "max-filesize",
                "dfa-size-limit",
                "regex-size-limit",
                "context-separator",
                "generate",
            ],
            permute: true,
            ..Spec::default()
        },
        "ag" | "ack" => Spec {
            short_val: "ABCGgm",
            long_val: &[
                "ignore",
                "ignore-dir",
                "file-search-regex",
                "max-count",
                "depth",
            ],
            permute: true,
            ..Spec::default()
        },
        "jq" => Spec {
            short_val: "fL",
            long_val: &[
                "arg",
                "argjson",
                "slurpfile",
                "rawfile",
                "args",
                "jsonargs",
                "from-file",
                "indent",
                "tab",
            ],
            permute: true,
            ..Spec::default()
        },
        "cut" => Spec {
            short_val: "bcdf",
            long_val: &[
                "bytes",
                "characters",
                "delimiter",
                "fields",
                "output-delimiter",
            ],
            permute: true,
            ..Spec::default()
        },
        "sort" | "uniq" => Spec {
            short_val: "kStTfsw",
            permute: true,
            ..Spec::default()
        },
        "diff" => Spec {
            short_val: "CUFIxSXL",
            long_val: &[
                "label",
                "exclude",
                "exclude-from",
                "ignore-matching-lines",
                "starting-file",
                "to-file",
                "from-file",
                "line-format",
                "unchanged-line-format",
                "old-line-format",
                "new-line-format",
            ],
            permute: true,
            ..Spec::default()
        },
        "fd" | "fdfind" => Spec {
            short_val: "etdEcjxXS",
            long_val: &[
                "extension",
                "type",
                "max-depth",
                "exclude",
                "color",
                "threads",
                "exec",
                "exec-batch",
                "size",
                "changed-within",
                "changed-before",
                "owner",
                "base-directory",
                "search-path",
                "format",
                "max-results",
                "min-depth",
                "exact-depth",
                "ignore-file",
                "path-separator",
                "batch-size",
            ],
            permute: true,
            ..Spec::default()
        },
        "tr" | "seq" | "echo" | "printf" | "sleep" | "yes" | "expr" | "test" | "[" | "[[" => Spec {
            permute: true,
            ..Spec::default()
        },
        "column" | "paste" | "join" | "fold" | "od" | "hexdump" | "nl" | "wc" => Spec {
            short_val: "tsoc12jwbdvNn",
            permute: true,
            ..Spec::default()
        },
        "man" => Spec {
            short_val: "PMSsLmpCeIR",
            long_val: &[
                "pager",
                "manpath",
                "sections",
                "locale",
                "systems",
                "preprocessor",
                "config-file",
                "extension",
                "encoding",
            ],
            permute: true,
            ..Spec::default()
        },
        "ls" | "tree" | "du" | "exa" | "eza" | "lsd" => Spec {
            short_val: "ILPTw",
            long_val: &[
                "ignore",
                "hide",
                "width",
                "tabsize",
                "block-size",
                "time-style",
                "format",
                "sort",
                "color",
                "exclude",
                "max-depth",
                "threshold",
            ],
            permute: true,
            ..Spec::default()
        },
        _ => Spec {
            permute: true,
            ..Spec::default()
        },
    };
    let p = opts::parse(args, 1, &spec);
    let mut f = Facts::new(Read);
    if let Some(o) = args[1..]
        .iter()
        .find(|w| w.text.len() > 1 && w.text.starts_with('-'))
    {
        // Without its complete table the analysis cannot know what an
        // option does (write a copy, run a filter, read another file).
        f.opaque(format!(
            "`{name}` has no option table in the analysis, so `{}` is not known to only read",
            o.text
        ));
    }
    read_operands(name, args, &p, f)
}

/// A reader whose every option is in `table`.
fn read_by_table(name: &str, args: &[Word], table: &'static opts::Table) -> Facts {
    let mut f = Facts::new(Read);
    if table.operands == opts::Operands::Free {
        f.data.extend(1..args.len());
        return f;
    }
    let p = opts::parse(args, 1, &Spec::of(table));
    f.accept(name, &p, table);
    if let Some(o) = p
        .opts
        .iter()
        .find(|o| o.is_long("files0-from") || (name == "file" && o.is('f', "files-from")))
    {
        let from = o.value_text(args).unwrap_or("");
        f.opaque(format!(
            "`{name}` reads the files named in `{from}`, not known before it runs"
        ));
    }
    if name == "tree"
        && let Some((i, off)) = p.get('o', "").and_then(|o| o.value)
    {
        f.write_at(i, off);
        f.at_least(Write);
    }
    if name == "date"
        && (p.has('s', "set") || p.operands.iter().any(|&i| !text(args, i).starts_with('+')))
    {
        f.at_least(Mutate);
        f.notes.push("`date` sets the system clock".to_owned());
    }
    read_operands(name, args, &p, f)
}

/// What a reader does with its operands and file-valued options.
fn read_operands(name: &str, args: &[Word], p: &Parsed, mut f: Facts) -> Facts {
    let mut ops = p.operands.iter().copied().peekable();
    let pattern_given =
        p.has('e', "regexp") || p.has('f', "file") || (name == "jq" && p.has('f', "from-file"));
    if pattern_first(name)
        && !pattern_given
        && let Some(pat) = ops.next()
    {
        f.skip.push(pat);
        f.data.push(pat);
    }
    if name == "jq" {
        for o in p
            .opts
            .iter()
            .filter(|o| o.is_long("slurpfile") || o.is_long("rawfile"))
        {
            if let Some((i, _)) = o.value {
                f.read(i + 1);
            }
        }
    }
    for o in p.opts.iter().filter(|o| {
        (o.is('f', "file") && !matches!(name, "cut" | "file" | "date"))
            || o.is_long("from-file")
            || o.is_long("to-file")
            || o.is_long("exclude-from")
            || o.is_long("ignore-file")
            || o.is_long("magic-file")
            || o.is_long("random-source")
            || (name == "date" && (o.is('f', "file") || o.is('r', "reference")))
            || (name == "file" && o.is('m', "magic-file"))
    }) {
        if let Some((i, off)) = o.value {
            f.reads.push(PathRef::Arg { idx: i, off });
        }
    }
    if name == "rg"
        && let Some(o) = p.get(' ', "pre")
        && let Some((i, off)) = o.value
    {
        f.run_line_arg(args, i, off, "preprocessor run by `rg --pre`".to_owned());
    }
    if name == "man"
        && let Some(o) = p.get('P', "pager")
        && let Some((i, off)) = o.value
    {
        f.run_line_arg(args, i, off, "pager run by `man -P`".to_owned());
    }
    if matches!(name, "fd" | "fdfind") {
        if let Some(pat) = ops.next() {
            f.skip.push(pat);
        }
        for o in p
            .opts
            .iter()
            .filter(|o| o.is('x', "exec") || o.is('X', "exec-batch"))
        {
            if let Some((i, _)) = o.value {
                f.run_argv(args, i, "run by `fd --exec`".to_owned(), false);
            }
        }
    }
    if matches!(name, "less" | "more" | "most") {
        // `less +!cmd` / `less '+!cmd'` runs a shell command at start.
        for (i, w) in args.iter().enumerate().skip(1) {
            if let Some(cmd) = w.text.strip_prefix("+!") {
                let _ = cmd;
                f.run_line_arg(args, i, 2, format!("shell command run by `{name}`"));
            }
        }
    }
    if matches!(
        name,
        "tr" | "seq"
            | "echo"
            | "printf"
            | "sleep"
            | "yes"
            | "expr"
            | "test"
            | "["
            | "[["
            | "basename"
            | "dirname"
            | "which"
            | "type"
            | "whereis"
            | "whatis"
            | "apropos"
            | "help"
            | "man"
            | "info"
            | "getent"
            | "dig"
            | "nslookup"
            | "host"
            | "ping"
            | "ping6"
            | "traceroute"
            | "whois"
            | "id"
            | "groups"
            | "pgrep"
            | "pidof"
            | "let"
            | "local"
            | "declare"
            | "typeset"
            | "readonly"
            | "export"
            | "unset"
            | "read"
            | "mapfile"
            | "readarray"
            | "getopts"
            | "printenv"
            | "tput"
            | "stty"
            | "cal"
            | "factor"
            | "numfmt"
            | "units"
            | "cowsay"
            | "figlet"
            | "banner"
            | "tldr"
            | "look"
            | "compgen"
            | "hash"
            | "set"
            | "shopt"
            | "ulimit"
            | "sysctl"
            | "journalctl"
            | "expand"
            | "date"
    ) {
        // Operands are not files (or rarely so): leave them to the path heuristic.
        return f;
    }
    let mut named = false;
    for i in ops {
        f.read(i);
        named = true;
    }
    // A recursive search given no path searches the working directory.
    let recursive = matches!(name, "rg" | "ag" | "ack")
        || (matches!(name, "grep" | "egrep" | "fgrep")
            && (p.has('r', "recursive") || p.has('R', "dereference-recursive")));
    if recursive && !named {
        f.reads.push(PathRef::Lit(".".to_owned()));
    }
    f
}

/// Parses `args` by `name`'s complete table: what the table does not
/// know makes the command opaque.
fn by_table<'a>(f: &mut Facts, name: &str, args: &'a [Word]) -> Parsed<'a> {
    let table = tables::table(name).expect("a program classified by its table has one");
    let p = opts::parse(args, 1, &Spec::of(table));
    f.accept(name, &p, table);
    p
}

/// Every operand is written; options by the program's complete table.
fn all_operands(name: &str, args: &[Word], s: Sensitivity) -> Facts {
    let mut f = Facts::new(s);
    let p = by_table(&mut f, name, args);
    written_operands(args, &p, f)
}

/// Every operand is written; options parsed leniently (no table).
fn lenient_operands(args: &[Word], spec: &Spec, s: Sensitivity) -> Facts {
    let p = opts::parse(args, 1, spec);
    written_operands(args, &p, Facts::new(s))
}

fn written_operands(args: &[Word], p: &Parsed, mut f: Facts) -> Facts {
    for &i in &p.operands {
        f.write(i);
    }
    if p.opts
        .iter()
        .any(|o| o.value.is_some_and(|(i, _)| args[i].glob))
    {
        // `touch -r ?.txt`: the pattern's first file is the option's
        // value, the others are operands it writes.
        f.opaque("a pattern given as an option's value may also name files it writes");
    }
    for o in p.opts.iter().filter(|o| o.is('r', "reference")) {
        if let Some((i, off)) = o.value {
            f.reads.push(PathRef::Arg { idx: i, off });
        }
    }
    f
}

/// `split [INPUT [PREFIX]]` writes PREFIX followed by suffixes (`xaa`, ...),
/// or gives each piece to `--filter`'s command.
fn split(args: &[Word]) -> Facts {
    let mut f = Facts::new(Write);
    let p = by_table(&mut f, "split", args);
    if let Some(&i) = p.operands.first() {
        f.read(i);
    }
    if let Some((i, off)) = p.get(' ', "filter").and_then(|o| o.value) {
        f.run_line_arg(args, i, off, "command run by `split --filter`".to_owned());
        return f;
    }
    match p.operands.get(1) {
        Some(&i) if args[i].dynamic => {
            f.opaque("the prefix of `split`'s output files is not known before it runs")
        }
        Some(&i) => f.writes.push(PathRef::Lit(format!("{}*", args[i].text))),
        None => f.writes.push(PathRef::Lit("x*".to_owned())),
    }
    f
}

fn rm(args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let p = by_table(&mut f, "rm", args);
    for &i in &p.operands {
        f.write(i);
    }
    f.recursive_delete = p.has('r', "recursive") || p.has('R', "");
    if p.has_long("no-preserve-root") {
        f.tag(tags::RM_ROOT, "`rm --no-preserve-root` can delete `/`");
    }
    f
}

fn copy(name: &str, args: &[Word]) -> Facts {
    let mut parse_facts = Facts::new(Write);
    let p = by_table(&mut parse_facts, name, args);
    let has_target = p.get('t', "target-directory").is_some();
    if !has_target && p.operands.last().is_some_and(|&i| args[i].glob) {
        // `cp ?.txt` may be `cp a.txt b.txt`: which one is written is not known.
        let mut f = Facts::new(Mutate);
        f.opaque(format!(
            "a pattern among `{name}`'s operands may name several files, and the last is written"
        ));
        return f;
    }
    let backup = p.has('b', "") || p.has_long("backup") || p.has('S', "suffix");
    let (s, moves) = match name {
        "mv" | "gmv" => (Mutate, true),
        _ => (Write, false),
    };
    let mut f = Facts::new(s);
    f.tags = parse_facts.tags;
    f.notes = parse_facts.notes;
    f.at_least(parse_facts.sensitivity);
    // A link is another name for its target: what is later written through
    // it writes the target.
    let links = name == "ln" || p.has('s', "symbolic-link") || p.has('l', "link");
    if name == "install" && p.has('d', "directory") {
        for &i in &p.operands {
            f.write(i);
        }
        return f;
    }
    let target = p.get('t', "target-directory").and_then(|o| o.value);
    let (dest, sources): (Option<(usize, usize)>, &[usize]) = match target {
        Some(t) => (Some(t), &p.operands[..]),
        None => match p.operands.split_last() {
            Some((&last, rest)) if !rest.is_empty() => (Some((last, 0)), rest),
            Some((&only, _)) if name == "ln" => {
                // `ln -s TARGET`: a link named like the target, here.
                f.writes.push(PathRef::Into {
                    dir: None,
                    src: only,
                });
                f.write(only);
                return f;
            }
            _ => (None, &p.operands[..]),
        },
    };
    if backup && dest.is_some() {
        // The backup's name (`DEST~`, `DEST.SUFFIX`, numbered) is not
        // followed: the analysis cannot say which file it writes.
        f.opaque(format!(
            "`{name} --backup` writes a backup file beside the target"
        ));
    }
    if let Some((d, off)) = dest {
        f.writes.push(PathRef::Arg { idx: d, off });
        for &src in sources {
            f.writes.push(PathRef::Into {
                dir: Some((d, off)),
                src,
            });
        }
    }
    for &src in sources {
        if moves || links {
            f.write(src);
        } else {
            f.read(src);
        }
    }
    f
}

fn chmod(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let n = args.len();
    let mut owner_seen = false;
    let reference = args.iter().any(|w| w.text.starts_with("--reference"));
    let mut operands_only = false;
    for i in 1..n {
        let t = text(args, i);
        if !operands_only && t == "--" {
            operands_only = true;
            continue;
        }
        if !operands_only && t.starts_with("--") {
            continue;
        }
        let is_flag = !operands_only
            && t.len() > 1
            && t.starts_with('-')
            && (name != "chmod"
                || t[1..]
                    .bytes()
                    .all(|b| matches!(b, b'R' | b'v' | b'c' | b'f' | b'h' | b'H' | b'L' | b'P')));
        if is_flag {
            continue;
        }
        if !owner_seen && !reference {
            owner_seen = true;
            f.skip.push(i);
            continue;
        }
        f.write(i);
    }
    f
}

fn chattr(args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let mut i = 1;
    while i < args.len() {
        let t = text(args, i);
        if t == "-v" || t == "-p" {
            i += 2;
            continue;
        }
        let mode = t.len() > 1
            && (t.starts_with('+') || t.starts_with('=') || t.starts_with('-'))
            && t[1..].bytes().all(|b| b.is_ascii_alphabetic());
        if !mode {
            f.write(i);
        }
        i += 1;
    }
    f
}

fn dd(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    for (i, w) in args.iter().enumerate().skip(1) {
        if w.text.starts_with("of=") {
            f.write_at(i, 3);
            f.at_least(Write);
        } else if w.text.starts_with("if=") {
            f.reads.push(PathRef::Arg { idx: i, off: 3 });
        }
    }
    f
}

fn patch(args: &[Word]) -> Facts {
    let p = opts::parse(
        args,
        1,
        &Spec {
            short_val: "iodpFBDrzVYgm",
            long_val: &[
                "input",
                "output",
                "directory",
                "strip",
                "fuzz",
                "prefix",
                "ifdef",
                "reject-file",
                "suffix",
                "version-control",
                "basename-prefix",
                "get",
                "quoting-style",
            ],
            permute: true,
            ..Spec::default()
        },
    );
    let mut f = Facts::new(Write);
    if let Some((i, off)) = p.get('d', "directory").and_then(|o| o.value) {
        f.base = Some(PathRef::Arg { idx: i, off });
    }
    if let Some((i, off)) = p.get('i', "input").and_then(|o| o.value) {
        f.reads.push(PathRef::Arg { idx: i, off });
    }
    let out = p.get('o', "output").and_then(|o| o.value);
    if let Some((i, off)) = out {
        f.write_at(i, off);
    }
    match p.operands.first() {
        Some(&i) => {
            if out.is_none() {
                f.write(i);
            } else {
                f.read(i);
            }
        }
        None if out.is_none() => {
            f.writes.push(PathRef::Lit(".".to_owned()));
            f.notes
                .push("`patch` changes the files named in the patch".to_owned());
        }
        None => {}
    }
    if let Some(&i) = p.operands.get(1) {
        f.read(i);
    }
    f
}

/// The file name a download of `url` is saved under.
fn url_file_name(url: &str) -> String {
    let no_query = url.split(['?', '#']).next().unwrap_or(url);
    let path = match no_query.find("://") {
        Some(k) => {
            let rest = &no_query[k + 3..];
            rest.find('/').map_or("", |s| &rest[s..])
        }
        None => no_query,
    };
    let name = path.rsplit('/').next().unwrap_or("");
    if name.is_empty() {
        "index.html".to_owned()
    } else {
        name.to_owned()
    }
}

/// What a value-taking option does with its value (tables of `tar`,
/// `curl`, `wget`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum OptValue {
    /// A command line the program runs.
    Runs,
    /// A file it writes (`-` is standard output).
    Writes,
    /// A file it reads.
    Reads,
    /// Data sent, a file when it starts with `@` (or `<` in a form field).
    Sends,
    /// A file unless it holds `=` (`-b name=value` is a cookie).
    CookieOrFile,
    /// Not modelled.
    Opaque(&'static str),
}

/// curl's options whose value is a file, data sent, or not modelled:
/// (short, long, effect). Every other option of [`tables::CURL`] takes
/// data or nothing.
const CURL_VALUES: &[(char, &str, OptValue)] = &[
    ('o', "output", OptValue::Writes),
    ('D', "dump-header", OptValue::Writes),
    ('c', "cookie-jar", OptValue::Writes),
    (' ', "trace", OptValue::Writes),
    (' ', "trace-ascii", OptValue::Writes),
    (' ', "libcurl", OptValue::Writes),
    (' ', "stderr", OptValue::Writes),
    (' ', "etag-save", OptValue::Writes),
    (' ', "hsts", OptValue::Writes),
    (' ', "alt-svc", OptValue::Writes),
    ('T', "upload-file", OptValue::Reads),
    (' ', "cacert", OptValue::Reads),
    (' ', "capath", OptValue::Reads),
    ('E', "cert", OptValue::Reads),
    (' ', "key", OptValue::Reads),
    (' ', "netrc-file", OptValue::Reads),
    (' ', "crlfile", OptValue::Reads),
    (' ', "etag-compare", OptValue::Reads),
    (' ', "proxy-cacert", OptValue::Reads),
    (' ', "proxy-capath", OptValue::Reads),
    (' ', "proxy-cert", OptValue::Reads),
    (' ', "proxy-key", OptValue::Reads),
    (' ', "proxy-crlfile", OptValue::Reads),
    ('d', "data", OptValue::Sends),
    (' ', "data-ascii", OptValue::Sends),
    (' ', "data-binary", OptValue::Sends),
    (' ', "data-urlencode", OptValue::Sends),
    (' ', "json", OptValue::Sends),
    ('F', "form", OptValue::Sends),
    ('H', "header", OptValue::Sends),
    (' ', "proxy-header", OptValue::Sends),
    ('w', "write-out", OptValue::Sends),
    ('b', "cookie", OptValue::CookieOrFile),
    (
        'K',
        "config",
        OptValue::Opaque("`curl -K` reads options from a file the analysis does not read"),
    ),
];

/// Where in `value` a file named by a `@file` (or `<file`) form starts.
fn sent_file(value: &str) -> Option<usize> {
    let v = value.find('=').map_or(value, |e| &value[e + 1..]);
    let at = value.len() - v.len();
    match v.chars().next() {
        Some('@' | '<') => Some(at + 1),
        _ => value
            .find('@')
            .filter(|&k| k > 0 && !value[..k].contains('='))
            .map(|k| k + 1),
    }
}

fn curl(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let table = &tables::CURL;
    let p = opts::parse(args, 1, &Spec::of(table));
    f.accept("curl", &p, table);
    let out_dir = p
        .get(' ', "output-dir")
        .and_then(|o| o.value_text(args))
        .map(str::to_owned);
    let remote_name = p.has('O', "remote-name") || p.has_long("remote-name-all");
    if remote_name && p.has('J', "remote-header-name") {
        f.opaque("`curl -O -J` saves under a name the server chooses");
    }
    if remote_name {
        for &u in &p.operands {
            if args[u].dynamic {
                continue;
            }
            let name = url_file_name(&args[u].text);
            f.writes.push(PathRef::Lit(match &out_dir {
                Some(d) => format!("{d}/{name}"),
                None => name,
            }));
        }
        f.at_least(Write);
    }
    for o in &p.opts {
        let Some((i, off)) = o.value else { continue };
        f.skip.push(i);
        let value = args[i].text.get(off..).unwrap_or("");
        let effect = CURL_VALUES
            .iter()
            .find(|(s, l, _)| o.is(*s, l))
            .map(|e| e.2);
        match effect {
            Some(OptValue::Writes) if value != "-" => {
                f.write_at(i, off);
                f.at_least(Write);
            }
            Some(OptValue::Writes) => {}
            Some(OptValue::Runs) => {
                f.run_line_arg(args, i, off, "program run by `curl`".to_owned());
            }
            Some(OptValue::Reads) => f.reads.push(PathRef::Arg { idx: i, off }),
            Some(OptValue::Sends) => {
                if !o.is('H', "header") && !o.is('w', "write-out") && !o.is_long("proxy-header") {
                    f.at_least(Mutate);
                }
                if let Some(k) = sent_file(value) {
                    f.reads.push(PathRef::Arg {
                        idx: i,
                        off: off + k,
                    });
                }
            }
            Some(OptValue::CookieOrFile) if !value.contains('=') => {
                f.reads.push(PathRef::Arg { idx: i, off });
            }
            Some(OptValue::CookieOrFile) => {}
            Some(OptValue::Opaque(why)) => f.opaque(why),
            None => {
                if o.is('X', "request")
                    && !value.eq_ignore_ascii_case("GET")
                    && !value.eq_ignore_ascii_case("HEAD")
                {
                    f.at_least(Mutate);
                }
            }
        }
    }
    f.skip.extend(&p.operands);
    f
}

/// wget's options whose value is a file, a program, or not modelled:
/// (short, long, effect). Every other option of [`tables::WGET`] takes data
/// or nothing.
const WGET_VALUES: &[(char, &str, OptValue)] = &[
    ('o', "output-file", OptValue::Writes),
    ('a', "append-output", OptValue::Writes),
    (' ', "save-cookies", OptValue::Writes),
    (' ', "rejected-log", OptValue::Writes),
    (' ', "hsts-file", OptValue::Writes),
    ('i', "input-file", OptValue::Reads),
    (' ', "post-file", OptValue::Reads),
    (' ', "body-file", OptValue::Reads),
    (' ', "load-cookies", OptValue::Reads),
    (' ', "ca-certificate", OptValue::Reads),
    (' ', "ca-directory", OptValue::Reads),
    (' ', "certificate", OptValue::Reads),
    (' ', "private-key", OptValue::Reads),
    (' ', "crl-file", OptValue::Reads),
    (
        'e',
        "execute",
        OptValue::Opaque("`wget -e` runs a `.wgetrc` command, which can set any option"),
    ),
    (
        ' ',
        "config",
        OptValue::Opaque("`wget --config` reads options from a file the analysis does not read"),
    ),
    (
        ' ',
        "use-askpass",
        OptValue::Opaque("`wget --use-askpass` runs a program for the password"),
    ),
    (
        ' ',
        "warc-file",
        OptValue::Opaque("`wget --warc-file` writes files named from its value"),
    ),
];

fn wget(args: &[Word]) -> Facts {
    let mut f = Facts::new(Write);
    let table = &tables::WGET;
    let p = opts::parse(args, 1, &Spec::of(table));
    f.accept("wget", &p, table);
    let prefix = p
        .get('P', "directory-prefix")
        .and_then(|o| o.value_text(args))
        .map(str::to_owned);
    let mut explicit = false;
    for o in &p.opts {
        let Some((i, off)) = o.value else { continue };
        f.skip.push(i);
        let value = args[i].text.get(off..).unwrap_or("");
        if o.is('O', "output-document") {
            explicit = true;
            if value != "-" {
                f.write_at(i, off);
            }
            continue;
        }
        match WGET_VALUES
            .iter()
            .find(|(s, l, _)| o.is(*s, l))
            .map(|e| e.2)
        {
            Some(OptValue::Writes) => f.write_at(i, off),
            Some(OptValue::Reads) => f.reads.push(PathRef::Arg { idx: i, off }),
            Some(OptValue::Opaque(why)) => f.opaque(why),
            _ => {}
        }
        if o.is_long("post-data")
            || o.is_long("post-file")
            || o.is_long("body-data")
            || o.is_long("body-file")
            || (o.is_long("method") && !value.eq_ignore_ascii_case("GET"))
        {
            f.at_least(Mutate);
        }
    }
    if !f.writes.is_empty() {
        f.at_least(Write);
    }
    let many = p.has('r', "recursive") || p.has('m', "mirror") || p.has('p', "page-requisites");
    if many {
        // A tree of files named by the server, below the prefix.
        f.at_least(Write);
        f.writes.push(PathRef::Lit(
            prefix.clone().unwrap_or_else(|| ".".to_owned()),
        ));
    } else if !explicit {
        for &u in &p.operands {
            if !args[u].dynamic {
                let name = url_file_name(&args[u].text);
                f.writes.push(PathRef::Lit(match &prefix {
                    Some(d) => format!("{d}/{name}"),
                    None => name,
                }));
            }
        }
    }
    if explicit && f.writes.is_empty() && f.sensitivity == Write {
        // `wget -O -`: the page goes to standard output.
        f.sensitivity = Read;
    }
    f.skip.extend(&p.operands);
    f
}

/// tar's options whose value is a program or a file: (short, long,
/// effect). Every other option of [`tables::TAR`] takes data or nothing.
const TAR_VALUES: &[(char, &str, OptValue)] = &[
    ('I', "use-compress-program", OptValue::Runs),
    (' ', "to-command", OptValue::Runs),
    ('F', "info-script", OptValue::Runs),
    (' ', "new-volume-script", OptValue::Runs),
    (' ', "rsh-command", OptValue::Runs),
    (' ', "rmt-command", OptValue::Runs),
    ('T', "files-from", OptValue::Reads),
    ('X', "exclude-from", OptValue::Reads),
    ('g', "listed-incremental", OptValue::Writes),
    (' ', "index-file", OptValue::Writes),
    (' ', "volno-file", OptValue::Writes),
];

/// An option of a `tar` command line, from the old-style first word
/// (`tar xzf a.tgz`) or a parse by its table.
struct TarOpt {
    short: char,
    long: &'static str,
    value: Option<(usize, usize)>,
}

/// The options of `tar`'s command line, old style first.
fn tar_opts(f: &mut Facts, args: &[Word]) -> (Vec<TarOpt>, Vec<usize>) {
    let mut out = Vec::new();
    let mut start = 1;
    if let Some(first) = args.get(1)
        && !first.text.starts_with('-')
        && !first.text.is_empty()
    {
        let mut next = 2;
        for ch in first.text.chars() {
            match tables::TAR.short_takes(ch) {
                None => f.opaque(format!(
                    "`tar {}`: `{ch}` is not an option it is known to take",
                    first.text
                )),
                Some(opts::Takes::Nothing) => out.push(TarOpt {
                    short: ch,
                    long: "",
                    value: None,
                }),
                Some(_) => {
                    out.push(TarOpt {
                        short: ch,
                        long: "",
                        value: (next < args.len()).then_some((next, 0)),
                    });
                    next += 1;
                }
            }
        }
        start = next;
    }
    let p = opts::parse(args, start.min(args.len()), &Spec::of(&tables::TAR));
    f.accept("tar", &p, &tables::TAR);
    for o in &p.opts {
        let (short, long) = match o.name {
            opts::Name::Short(c) => (c, ""),
            opts::Name::Long(l) => (
                ' ',
                tables::TAR
                    .long
                    .iter()
                    .map(|e| e.trim_end_matches("=?").trim_end_matches('='))
                    .find(|n| *n == l)
                    .unwrap_or(""),
            ),
        };
        out.push(TarOpt {
            short,
            long,
            value: o.value,
        });
    }
    (out, p.operands)
}

impl TarOpt {
    fn is(&self, short: char, long: &str) -> bool {
        (short != ' ' && self.short == short) || (!long.is_empty() && self.long == long)
    }
}

/// What an option of `zip` takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ZipArg {
    Nothing,
    /// Data (a size, a date, a password, a method).
    Data,
    /// A file it writes (a log, the output archive, a temporary directory).
    Writes,
    /// A command it runs to test the archive.
    Runs,
    /// Patterns, up to the next option (`-i`, `-x`).
    Patterns,
    /// Not modelled: opaque.
    Opaque(&'static str),
}

/// zip 3.0's options as `(short, long, takes)`, the short one written
/// without its dash (zip has two-letter ones: `-lf`, `-TT`).
const ZIP_OPTS: &[(&str, &str, ZipArg)] = &[
    ("r", "recurse-paths", ZipArg::Nothing),
    ("R", "recurse-patterns", ZipArg::Nothing),
    ("q", "quiet", ZipArg::Nothing),
    ("v", "verbose", ZipArg::Nothing),
    ("j", "junk-paths", ZipArg::Nothing),
    ("m", "move", ZipArg::Nothing),
    ("u", "update", ZipArg::Nothing),
    ("f", "freshen", ZipArg::Nothing),
    ("d", "delete", ZipArg::Nothing),
    ("D", "no-dir-entries", ZipArg::Nothing),
    ("o", "latest-time", ZipArg::Nothing),
    ("y", "symlinks", ZipArg::Nothing),
    ("X", "no-extra", ZipArg::Nothing),
    ("T", "test", ZipArg::Nothing),
    ("e", "encrypt", ZipArg::Nothing),
    ("k", "DOS-names", ZipArg::Nothing),
    ("g", "grow", ZipArg::Nothing),
    ("A", "adjust-sfx", ZipArg::Nothing),
    ("J", "junk-sfx", ZipArg::Nothing),
    ("c", "entry-comments", ZipArg::Nothing),
    ("z", "archive-comment", ZipArg::Nothing),
    ("@", "names-stdin", ZipArg::Nothing),
    ("l", "to-crlf", ZipArg::Nothing),
    ("ll", "from-crlf", ZipArg::Nothing),
    ("la", "log-append", ZipArg::Nothing),
    ("li", "log-info", ZipArg::Nothing),
    ("nw", "no-wild", ZipArg::Nothing),
    ("ws", "wild-stop-dirs", ZipArg::Nothing),
    ("ic", "ignore-case", ZipArg::Nothing),
    ("MM", "must-match", ZipArg::Nothing),
    ("FS", "filesync", ZipArg::Nothing),
    ("sf", "show-files", ZipArg::Nothing),
    ("so", "show-options", ZipArg::Nothing),
    ("dc", "display-counts", ZipArg::Nothing),
    ("db", "display-bytes", ZipArg::Nothing),
    ("dd", "display-dots", ZipArg::Nothing),
    ("dg", "display-globaldots", ZipArg::Nothing),
    ("du", "display-usize", ZipArg::Nothing),
    ("dv", "display-volume", ZipArg::Nothing),
    ("h", "help", ZipArg::Nothing),
    ("h2", "more-help", ZipArg::Nothing),
    ("0", "store-only", ZipArg::Nothing),
    ("1", "", ZipArg::Nothing),
    ("2", "", ZipArg::Nothing),
    ("3", "", ZipArg::Nothing),
    ("4", "", ZipArg::Nothing),
    ("5", "", ZipArg::Nothing),
    ("6", "", ZipArg::Nothing),
    ("7", "", ZipArg::Nothing),
    ("8", "", ZipArg::Nothing),
    ("9", "", ZipArg::Nothing),
    ("ds", "dot-size", ZipArg::Data),
    ("n", "suffixes", ZipArg::Data),
    ("P", "password", ZipArg::Data),
    ("Z", "compression-method", ZipArg::Data),
    ("t", "from-date", ZipArg::Data),
    ("tt", "before-date", ZipArg::Data),
    ("lf", "logfile-path", ZipArg::Writes),
    ("O", "output-file", ZipArg::Writes),
    ("", "out", ZipArg::Writes),
    ("b", "temp-path", ZipArg::Writes),
    ("TT", "unzip-command", ZipArg::Runs),
    ("i", "include", ZipArg::Patterns),
    ("x", "exclude", ZipArg::Patterns),
    (
        "s",
        "split-size",
        ZipArg::Opaque("`zip -s` writes split archives beside the one named"),
    ),
    (
        "U",
        "copy-entries",
        ZipArg::Opaque("`zip -U` copies entries into the archive `--out` names"),
    ),
    (
        "F",
        "fix",
        ZipArg::Opaque("`zip -F` writes a repaired archive"),
    ),
    (
        "FF",
        "fixfix",
        ZipArg::Opaque("`zip -FF` writes a repaired archive"),
    ),
];

/// The zip option `word` spells: `-X`, `--long`, `--long=VALUE`.
fn zip_opt(word: &str) -> Option<(&'static str, ZipArg, Option<usize>)> {
    if let Some(long) = word.strip_prefix("--") {
        let (name, eq) = match long.find('=') {
            Some(e) => (&long[..e], Some(2 + e + 1)),
            None => (long, None),
        };
        return ZIP_OPTS
            .iter()
            .find(|(_, l, _)| !l.is_empty() && *l == name)
            .map(|&(_, l, a)| (l, a, eq));
    }
    let short = word.strip_prefix('-')?;
    ZIP_OPTS
        .iter()
        .find(|(s, _, _)| *s == short)
        .map(|&(s, _, a)| (s, a, None))
}

/// A cluster of options that take nothing (`-rq`), read as zip does: a
/// two-letter option first at each place (`-rdc` is `-r -dc`).
fn zip_cluster(word: &str) -> Option<Vec<&'static str>> {
    let mut rest = word.strip_prefix('-').filter(|r| !r.starts_with('-'))?;
    let mut names = Vec::new();
    while !rest.is_empty() {
        let two = rest
            .get(..2)
            .and_then(|p| ZIP_OPTS.iter().find(|(s, _, _)| *s == p));
        let one = rest
            .get(..1)
            .and_then(|p| ZIP_OPTS.iter().find(|(s, _, _)| *s == p));
        let &(name, _, takes) = two.or(one)?;
        if takes != ZipArg::Nothing {
            return None;
        }
        names.push(name);
        rest = &rest[name.len()..];
    }
    Some(names)
}

/// `zip [OPTIONS] ARCHIVE [FILES]`: the archive is written, the files read
/// (or deleted with `-m`); every option is on [`ZIP_OPTS`] or the command
/// is opaque.
fn zip(args: &[Word]) -> Facts {
    let mut f = Facts::new(Write);
    let mut operands: Vec<usize> = Vec::new();
    let mut seen: Vec<&'static str> = Vec::new();
    let mut out_file = false;
    let mut i = 1;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        if t == "--" {
            operands.extend(i + 1..args.len());
            break;
        }
        if !t.starts_with('-') || t == "-" {
            operands.push(i);
            i += 1;
            continue;
        }
        let Some((name, takes, attached)) = zip_opt(t) else {
            match zip_cluster(t) {
                Some(names) => seen.extend(names),
                None => f.opaque(format!("`zip {t}` is not an option the analysis knows")),
            }
            i += 1;
            continue;
        };
        seen.push(name);
        let value = match (takes, attached) {
            (ZipArg::Nothing | ZipArg::Patterns, _) => None,
            (_, Some(off)) => Some((i, off)),
            (_, None) => {
                i += 1;
                (i < args.len()).then_some((i, 0))
            }
        };
        match takes {
            ZipArg::Writes => {
                out_file |= matches!(name, "O" | "out" | "output-file");
                if let Some((v, off)) = value {
                    f.write_at(v, off);
                    f.data.push(v);
                }
            }
            ZipArg::Runs => {
                f.opaque("`zip` runs a command given to test the archive");
                if let Some((v, off)) = value {
                    f.run_line_arg(args, v, off, "test command run by `zip`".to_owned());
                }
            }
            ZipArg::Data => f.data.extend(value.map(|v| v.0)),
            ZipArg::Patterns => {
                while i + 1 < args.len()
                    && !args[i + 1].text.starts_with('-')
                    && args[i + 1].text != "@"
                {
                    i += 1;
                    f.skip.push(i);
                    f.data.push(i);
                }
            }
            ZipArg::Opaque(why) => f.opaque(why),
            ZipArg::Nothing => {}
        }
        i += 1;
    }
    let moves = seen.iter().any(|n| matches!(*n, "m" | "move"));
    let mut ops = operands.into_iter();
    if let Some(a) = ops.next() {
        if out_file {
            f.read(a);
        } else {
            f.write(a);
        }
    }
    for k in ops {
        if moves {
            f.write(k);
        } else {
            f.read(k);
        }
    }
    if moves
        || seen
            .iter()
            .any(|n| matches!(*n, "d" | "delete" | "FS" | "filesync"))
    {
        f.at_least(Mutate);
    }
    f
}

fn tar(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let (opts, operands) = tar_opts(&mut f, args);
    let any = |s: char, l: &str| opts.iter().any(|o| o.is(s, l));
    let create = any('c', "create")
        || any('r', "append")
        || any('u', "update")
        || any('A', "catenate")
        || any(' ', "concatenate")
        || any(' ', "delete");
    let extract = any('x', "extract") || any(' ', "get");
    let to_stdout = any('O', "to-stdout") || any(' ', "to-command");
    let archive = opts
        .iter()
        .rev()
        .find(|o| o.is('f', "file"))
        .and_then(|o| o.value);
    let dirs: Vec<(usize, usize)> = opts
        .iter()
        .filter(|o| o.is('C', "directory"))
        .filter_map(|o| o.value)
        .collect();
    for o in &opts {
        let Some((i, off)) = o.value else { continue };
        f.skip.push(i);
        let effect = TAR_VALUES.iter().find(|(s, l, _)| o.is(*s, l)).map(|e| e.2);
        match effect {
            Some(OptValue::Runs) => f.run_line_arg(args, i, off, "program run by `tar`".to_owned()),
            Some(OptValue::Reads | OptValue::Sends | OptValue::CookieOrFile) => {
                f.reads.push(PathRef::Arg { idx: i, off });
            }
            Some(OptValue::Opaque(why)) => f.opaque(why),
            Some(OptValue::Writes) => {
                f.write_at(i, off);
                f.at_least(Write);
            }
            None if o.is(' ', "checkpoint-action") => {
                let v = args[i].text.get(off..).unwrap_or("");
                if v.starts_with("exec=") {
                    f.run_line_arg(
                        args,
                        i,
                        off + 5,
                        "program run by `tar --checkpoint-action`".to_owned(),
                    );
                }
            }
            None => {}
        }
    }
    let text_at = |(i, off): (usize, usize)| args[i].text.get(off..).unwrap_or("");
    if let Some(a) = archive
        && text_at(a).contains(':')
        && !any(' ', "force-local")
    {
        f.opaque(format!(
            "`tar -f {}` names an archive on another host, reached by running a remote shell",
            text_at(a)
        ));
    }
    if dirs.len() > 1 {
        f.opaque("`tar` changes directory more than once (`-C`): where each file goes depends on the order of its members");
    }
    let dir = dirs.first().copied();
    let archive_is_stdio = archive.is_some_and(|a| text_at(a) == "-");
    if extract {
        extracted(&mut f, &opts, dir, to_stdout);
        if let Some((i, off)) = archive.filter(|_| !archive_is_stdio) {
            f.reads.push(PathRef::Arg { idx: i, off });
        }
        f.skip.extend(&operands);
    } else if create {
        f.at_least(Write);
        if let Some((i, off)) = archive.filter(|_| !archive_is_stdio) {
            f.write_at(i, off);
        }
        if let Some((i, off)) = dir {
            f.base = Some(PathRef::Arg { idx: i, off });
        }
        let removes = any(' ', "remove-files");
        if removes {
            f.at_least(Mutate);
        }
        for &i in &operands {
            if removes {
                f.write(i);
            } else {
                f.read(i);
            }
        }
    } else if let Some((i, off)) = archive {
        f.reads.push(PathRef::Arg { idx: i, off });
    }
    f
}

/// What `tar -x` writes: the directory it extracts into (and the one
/// `--one-top-level=DIR` names), unless members go to standard output
/// or a command. With `-P` members keep `/` and `..`: they may land
/// anywhere.
fn extracted(f: &mut Facts, opts: &[TarOpt], dir: Option<(usize, usize)>, to_stdout: bool) {
    if to_stdout {
        return;
    }
    f.at_least(Write);
    match dir {
        Some((i, off)) => f.write_at(i, off),
        None => f.writes.push(PathRef::Lit(".".to_owned())),
    }
    if opts.iter().any(|o| o.is('P', "absolute-names")) {
        f.opaque("`tar -x -P` keeps `/` and `..` in member names: it may write anywhere");
    }
    if let Some((i, off)) = opts
        .iter()
        .find(|o| o.is(' ', "one-top-level"))
        .and_then(|o| o.value)
    {
        if dir.is_some() {
            f.opaque("`tar --one-top-level=DIR -C` writes DIR below the other directory");
        } else {
            f.write_at(i, off);
        }
    }
}

/// UnZip 6's options that take nothing, as letters (`-qq`, `-aa` repeat
/// one); `d`, `x`, `P`, `O`, `I` take a value and are read apart.
const UNZIP_FLAGS: &str = "lvtzTpcfuonjCLVXKMqabBDUWs^";
/// Of those, the ones that only list, test or print.
const UNZIP_READS: &str = "lvtzpc";

fn unzip(args: &[Word]) -> Facts {
    let mut f = Facts::new(Write);
    let mut operands = Vec::new();
    let mut dir: Option<usize> = None;
    let mut listing = false;
    let mut i = 1;
    while i < args.len() {
        let t = text(args, i);
        if let Some(flags) = t.strip_prefix('-').filter(|r| !r.is_empty()) {
            for (k, c) in flags.char_indices() {
                match c {
                    'd' | 'x' | 'P' | 'O' | 'I' => {
                        if k + 1 < flags.len() {
                            f.opaque(format!(
                                "`unzip {t}`: a value attached to `-{c}` is not modelled"
                            ));
                        } else if c == 'd' {
                            i += 1;
                            dir = Some(i);
                        } else if c == 'x' {
                            // Patterns up to the next option.
                            while i + 1 < args.len() && !text(args, i + 1).starts_with('-') {
                                i += 1;
                                f.skip.push(i);
                                f.data.push(i);
                            }
                        } else {
                            i += 1;
                            f.data.push(i);
                        }
                        break;
                    }
                    'Z' => {
                        listing = true;
                        break;
                    }
                    ':' => {
                        f.opaque("`unzip -:` keeps `../` in member names: it may write anywhere")
                    }
                    c if UNZIP_FLAGS.contains(c) => listing |= UNZIP_READS.contains(c),
                    _ => f.opaque(format!("`unzip -{c}` is not an option the analysis knows")),
                }
            }
        } else {
            operands.push(i);
        }
        i += 1;
    }
    if let Some(&a) = operands.first() {
        f.read(a);
    }
    f.skip.extend(operands.iter().skip(1));
    f.data.extend(operands.iter().skip(1));
    if listing {
        f.sensitivity = Read;
    } else {
        match dir {
            Some(d) if d < args.len() => f.write(d),
            Some(_) => f.opaque("`unzip -d` without a directory"),
            None => f.writes.push(PathRef::Lit(".".to_owned())),
        }
    }
    f
}

/// Is this `rsync`/`scp` operand on another host?
fn remote(t: &str) -> bool {
    if t.starts_with("rsync://") {
        return true;
    }
    match t.find(':') {
        Some(c) => !t[..c].contains('/'),
        None => false,
    }
}

fn transfer(name: &str, args: &[Word]) -> Facts {
    let spec = if name == "scp" {
        Spec {
            short_val: "cFiJloPSDX",
            permute: true,
            ..Spec::default()
        }
    } else {
        Spec {
            short_val: "eBfTM",
            long_val: &[
                "rsh",
                "rsync-path",
                "filter",
                "temp-dir",
                "remote-option",
                "exclude",
                "include",
                "exclude-from",
                "include-from",
                "files-from",
                "log-file",
                "partial-dir",
                "backup-dir",
                "suffix",
                "compare-dest",
                "copy-dest",
                "link-dest",
                "chmod",
                "chown",
                "usermap",
                "groupmap",
                "timeout",
                "contimeout",
                "port",
                "password-file",
                "bwlimit",
                "max-size",
                "min-size",
                "max-delete",
                "modify-window",
                "out-format",
                "info",
                "debug",
                "iconv",
                "checksum-choice",
                "compress-choice",
                "compress-level",
                "sockopts",
                "outbuf",
                "stop-after",
                "stop-at",
                "write-batch",
                "read-batch",
                "only-write-batch",
            ],
            permute: true,
            ..Spec::default()
        }
    };
    let p = opts::parse(args, 1, &spec);
    let mut f = Facts::new(Write);
    for o in &p.opts {
        let Some((i, off)) = o.value else {
            if let opts::Name::Long(l) = o.name
                && (l.starts_with("delete") || l == "remove-source-files")
            {
                f.at_least(Mutate);
            }
            continue;
        };
        f.skip.push(i);
        let v = args[i].text.get(off..).unwrap_or("");
        if (name == "rsync" && o.is('e', "rsh")) || (name == "scp" && o.is('S', "")) {
            f.run_line_arg(args, i, off, format!("remote shell run by `{name}`"));
        } else if o.is('o', "")
            && let Some(cmd) = ssh_option_command(v)
        {
            let start = off + (v.len() - cmd.len());
            f.run_line_arg(args, i, start, format!("command run by `{name} -o`"));
        } else if o.is_long("files-from")
            || o.is_long("exclude-from")
            || o.is_long("include-from")
            || o.is_long("password-file")
            || o.is('F', "")
            || o.is('i', "")
        {
            f.reads.push(PathRef::Arg { idx: i, off });
        } else if o.is_long("log-file") || o.is_long("write-batch") || o.is_long("only-write-batch")
        {
            f.write_at(i, off);
        }
    }
    let remove_sources = p.has_long("remove-source-files");
    if let Some((&dest, sources)) = p.operands.split_last() {
        if !remote(&args[dest].text) {
            f.write(dest);
            for &s in sources {
                f.writes.push(PathRef::Into {
                    dir: Some((dest, 0)),
                    src: s,
                });
            }
        }
        for &s in sources {
            if remote(&args[s].text) {
                f.skip.push(s);
            } else if remove_sources {
                f.write(s);
            } else {
                f.read(s);
            }
        }
    }
    f
}

/// `ProxyCommand=cmd` / `ProxyCommand cmd` (also `LocalCommand`,
/// `KnownHostsCommand`): the command part of an ssh `-o` option.
pub(crate) fn ssh_option_command(v: &str) -> Option<&str> {
    let key_end = v.find(['=', ' ', '\t'])?;
    let key = v[..key_end].to_ascii_lowercase();
    if !matches!(
        key.as_str(),
        "proxycommand" | "localcommand" | "knownhostscommand"
    ) {
        return None;
    }
    let rest = v[key_end..].trim_start_matches(['=', ' ', '\t']);
    (!rest.is_empty() && !rest.eq_ignore_ascii_case("none")).then_some(rest)
}

fn sort(args: &[Word]) -> Facts {
    let table = tables::table("sort").expect("sort has a table");
    let p = opts::parse(args, 1, &Spec::of(table));
    let mut f = Facts::new(Read);
    f.accept("sort", &p, table);
    if let Some((i, off)) = p.get('o', "output").and_then(|o| o.value) {
        f.write_at(i, off);
        f.at_least(Write);
    }
    // Its temporary files go in this directory.
    if let Some((i, off)) = p.get('T', "temporary-directory").and_then(|o| o.value) {
        f.write_at(i, off);
    }
    if let Some((i, off)) = p.get(' ', "random-source").and_then(|o| o.value) {
        f.reads.push(PathRef::Arg { idx: i, off });
    }
    if p.has_long("files0-from") {
        f.opaque("`sort --files0-from` reads the files named in a file");
    }
    if let Some((i, off)) = p.get(' ', "compress-program").and_then(|o| o.value) {
        // The program gets sort's data on its input: a shell would run it.
        f.opaque("`sort --compress-program` runs a program on the data it sorts");
        f.run_line_arg(args, i, off, "compressor run by `sort`".to_owned());
    }
    for &i in &p.operands {
        f.read(i);
    }
    f
}

fn openssl(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let sub = text(args, 1);
    let decode = args
        .iter()
        .skip(2)
        .any(|w| w.text == "-d" || w.text == "-decode" || w.text == "--decode");
    if matches!(sub, "base64" | "enc") && decode {
        f.decoder = true;
    }
    let mut i = 2;
    while i < args.len() {
        match text(args, i) {
            "-out" | "-keyout" => {
                f.write(i + 1);
                f.at_least(Write);
                i += 2;
            }
            "-in" | "-inkey" | "-CAfile" | "-cert" | "-key" => {
                f.read(i + 1);
                i += 2;
            }
            _ => i += 1,
        }
    }
    if matches!(sub, "genrsa" | "genpkey" | "req" | "ca" | "pkcs12") && f.writes.is_empty() {
        f.at_least(Write);
    }
    f
}

fn compressor(name: &str, args: &[Word]) -> Facts {
    let p = opts::parse(
        args,
        1,
        &Spec {
            short_val: "SbT",
            long_val: &["suffix", "threads"],
            permute: true,
            ..Spec::default()
        },
    );
    let decompress = name.starts_with("gun")
        || name.starts_with("un")
        || name.starts_with("bun")
        || p.has('d', "decompress")
        || p.has(' ', "uncompress");
    let to_stdout = p.has('c', "stdout") || p.has(' ', "to-stdout") || p.operands.is_empty();
    let listing = p.has('l', "list") || p.has('t', "test");
    let mut f = Facts::new(Read);
    f.decoder = decompress;
    if to_stdout || listing {
        for &i in &p.operands {
            f.read(i);
        }
        return f;
    }
    // Replaces each file with its (de)compressed form.
    f.at_least(if p.has('k', "keep") { Write } else { Mutate });
    for &i in &p.operands {
        f.write(i);
    }
    f
}

fn editor(name: &str, args: &[Word]) -> Facts {
    let p = opts::parse(
        args,
        1,
        &Spec {
            short_val: "cSwWTurUiqt",
            long_val: &["cmd"],
            permute: true,
            ..Spec::default()
        },
    );
    let mut f = Facts::new(Write);
    let commands = p.has('c', "")
        || p.has_long("cmd")
        || p.has('S', "")
        || args
            .iter()
            .skip(1)
            .any(|w| w.text.starts_with('+') && w.text.len() > 1);
    if commands && matches!(name, "vim" | "vi" | "nvim" | "ex") {
        f.tag(
            tags::INLINE_INTERPRETER,
            format!("`{name}` runs editor commands given inline"),
        );
        f.at_least(Mutate);
    }
    for &i in &p.operands {
        if !text(args, i).starts_with('+') {
            f.write(i);
        }
    }
    f
}

fn declare(name: &str, args: &[Word]) -> Facts {
    // Only the shell's variables change; the ones that make programs run
    // others are tagged by the analyser.
    let mut f = Facts::new(Read);
    let mut functions = false;
    let mut nameref = false;
    let mut integer = false;
    let mut exported = false;
    let mut listed = true;
    for (i, w) in args.iter().enumerate().skip(1) {
        let t = w.text.as_str();
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            if t.contains('f') || t.contains('F') {
                functions = true;
            }
            nameref |= t.starts_with('-') && t.contains('n');
            integer |= t.starts_with('-') && t.contains('i');
            exported |= t.starts_with('-') && t.contains('x');
            if t == "-p" {
                listed = true;
            }
            continue;
        }
        if functions {
            continue;
        }
        listed = false;
        f.skip.push(i);
        f.names.push((i, 0));
        if nameref && let Some(eq) = t.find('=') {
            // `declare -n r=VALUE`: VALUE is a name, subscript and all.
            f.names.push((i, eq + 1));
        }
        if integer && let Some(n) = super::wrappers::assignment_name(t).or(Some(t)) {
            f.int_vars.push(n.split('[').next().unwrap_or(n).to_owned());
        }
        let set = super::wrappers::assignment_name(t);
        // An assignment to a variable the agent inherited is exported too.
        if let Some(why) = set
            .or((name == "export" || exported).then_some(t))
            .and_then(super::env::risk_any)
        {
            f.opaque(why);
        }
        match set {
            Some(n) => {
                f.env_changes.push(n.to_owned());
                f.env_assigns.push(i);
            }
            None => f.env_changes.push(t.to_owned()),
        }
    }
    if listed || functions || (name == "export" && args.len() == 1) {
        f.sensitivity = Read;
    }
    f
}

/// Builtins that set variables named in their arguments.
fn vars(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let mut names: Vec<usize> = Vec::new();
    match name {
        "read" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "adinNpttu",
                    ..Spec::default()
                },
            );
            if let Some((i, off)) = p.get('a', "").and_then(|o| o.value) {
                f.env_changes
                    .push(args[i].text.get(off..).unwrap_or("").to_owned());
            }
            names.extend(p.operands.iter().copied());
            if names.is_empty() && p.get('a', "").is_none() {
                f.env_changes.push("REPLY".to_owned());
            }
        }
        "mapfile" | "readarray" => {
            let p = opts::parse(
                args,
                1,
                &Spec {
                    short_val: "dnOsuC c",
                    ..Spec::default()
                },
            );
            match p.operands.last() {
                Some(&i) => names.push(i),
                None => f.env_changes.push("MAPFILE".to_owned()),
            }
            if let Some((i, off)) = p.get('C', "").and_then(|o| o.value) {
                f.run_line_arg(args, i, off, format!("callback run by `{name} -C`"));
                f.opaque(format!(
                    "`{name} -C` runs its callback with the lines it reads"
                ));
            }
        }
        "getopts" => {
            if args.len() > 2 {
                names.push(2);
            }
        }
        "let" => {
            for (i, w) in args.iter().enumerate().skip(1) {
                f.names.push((i, 0));
                if let Some(eq) = w.text.find('=') {
                    let lhs = w.text[..eq]
                        .trim_end_matches(['+', '-', '*', '/', '%', '<', '>', '&', '|', '^']);
                    if !lhs.is_empty()
                        && lhs.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    {
                        f.env_changes.push(lhs.to_owned());
                    }
                    f.skip.push(i);
                }
            }
        }
        _ => {
            // printf [-v NAME] FORMAT ARGS...
            let table = tables::table("printf").expect("printf has a table");
            let p = opts::parse(args, 1, &Spec::of(table));
            f.accept(name, &p, table);
            if let Some((i, off)) = p.get('v', "").and_then(|o| o.value) {
                f.names.push((i, off));
                f.skip.push(i);
                let n = text(args, i).get(off..).unwrap_or("");
                f.env_changes
                    .push(n.split('[').next().unwrap_or("").to_owned());
            }
        }
    }
    for i in names {
        f.names.push((i, 0));
        f.data.push(i);
        if let Some(w) = args.get(i) {
            let n = w.text.split('[').next().unwrap_or("");
            if !n.is_empty() {
                f.env_changes.push(n.to_owned());
            }
            f.skip.push(i);
        }
    }
    if !f.env_changes.is_empty()
        && name != "read"
        && name != "mapfile"
        && name != "readarray"
        && name != "getopts"
    {
        f.at_least(Write);
    }
    f
}

/// jq 1.6/1.7: it can neither write nor run programs, so what matters is
/// which files it reads (and prints). Its long options are matched exactly;
/// `--arg NAME VALUE` and friends take two arguments.
fn jq(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let n = args.len();
    let mut filter_given = false;
    let mut positional = false;
    let mut i = 1;
    let mut operands = Vec::new();
    while i < n {
        let w = &args[i];
        let t = w.text.as_str();
        if positional || (w.literal_len() == 0 && w.dynamic) {
            if !positional {
                f.opaque("an argument of `jq` is not known before it runs and may be an option");
            }
            operands.push(i);
            i += 1;
            continue;
        }
        let takes: usize = match t {
            "--" => {
                positional = true;
                i += 1;
                continue;
            }
            "--args" | "--jsonargs" => {
                // The rest are values for `$ARGS`, after the filter and files.
                0
            }
            "--arg" | "--argjson" => 2,
            "--slurpfile" | "--rawfile" => {
                if i + 2 < n {
                    f.read(i + 2);
                    f.data.push(i + 1);
                }
                2
            }
            "--indent" | "-L" => 1,
            "-f" | "--from-file" => {
                filter_given = true;
                if i + 1 < n {
                    f.read(i + 1);
                }
                1
            }
            _ if t.starts_with("--") => {
                const FLAGS: &[&str] = &[
                    "--seq",
                    "--stream",
                    "--stream-errors",
                    "--slurp",
                    "--raw-input",
                    "--null-input",
                    "--compact-output",
                    "--tab",
                    "--color-output",
                    "--monochrome-output",
                    "--ascii-output",
                    "--unbuffered",
                    "--sort-keys",
                    "--raw-output",
                    "--raw-output0",
                    "--join-output",
                    "--exit-status",
                    "--help",
                    "--version",
                    "--build-configuration",
                    "--debug-dump-disasm",
                    "--debug-trace",
                ];
                if !FLAGS.contains(&t) {
                    f.opaque(format!("`jq`: `{t}` is not an option it is known to take"));
                }
                0
            }
            _ if t.len() > 1 && t.starts_with('-') => {
                if let Some(dir) = t.strip_prefix("-L") {
                    let _ = dir;
                } else if !t[1..].bytes().all(|b| b"nrjacCMSesRhV0".contains(&b)) {
                    f.opaque(format!("`jq`: `{t}` is not an option it is known to take"));
                }
                0
            }
            _ => {
                operands.push(i);
                i += 1;
                continue;
            }
        };
        for k in i + 1..(i + 1 + takes).min(n) {
            f.data.push(k);
        }
        i += 1 + takes;
    }
    let mut ops = operands.into_iter();
    if !filter_given && let Some(filter) = ops.next() {
        f.skip.push(filter);
        f.data.push(filter);
    }
    for k in ops {
        f.read(k);
    }
    f
}

/// Builtins that change what later command names run or how later lines
/// are read: `hash -p PATH NAME`, `enable -f LIB`, `shopt -s expand_aliases`.
fn shell_state(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    f.data.extend(1..args.len());
    let has = |flag: &str| {
        args.iter()
            .skip(1)
            .any(|w| w.text.starts_with('-') && w.text.contains(flag))
    };
    // shopt options that cannot change what a line runs or writes.
    const SAFE_SHOPT: &[&str] = &[
        "nullglob",
        "failglob",
        "globstar",
        "dotglob",
        "lastpipe",
        "inherit_errexit",
        "checkwinsize",
        "histappend",
        "cmdhist",
        "progcomp",
        "promptvars",
    ];
    let changes = match name {
        "hash" => has("p"),
        "enable" => has("f") || has("n"),
        // `-C CMD` and `-F FUNC` run commands to make completions.
        "compgen" | "complete" => has("C") || has("F"),
        _ => {
            (has("s") || has("u"))
                && args
                    .iter()
                    .skip(1)
                    .any(|w| !w.text.starts_with('-') && !SAFE_SHOPT.contains(&w.text.as_str()))
        }
    };
    if changes || args.iter().any(|w| w.dynamic) {
        f.opaque(format!(
            "`{name}` changes what later commands run or how the line is read"
        ));
    }
    f
}

/// `test` and `[`: operators and strings, and the names `-v` checks.
fn test(args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let bracket = args[0].text == "[";
    let last = if bracket && args.last().is_some_and(|w| w.text == "]" && !w.dynamic) {
        args.len() - 1
    } else {
        args.len()
    };
    let ops = &args[1..last];
    // Where a value from a command or an unquoted expansion cannot become
    // an operator (`-v NAME` evaluates a subscript): one operand, a literal
    // unary operator and its operand, or a literal binary operator between two.
    let literal = |w: &Word| !w.dynamic;
    let is_binary = |w: &Word| {
        literal(w)
            && matches!(
                w.text.as_str(),
                "=" | "=="
                    | "!="
                    | "<"
                    | ">"
                    | "-eq"
                    | "-ne"
                    | "-lt"
                    | "-le"
                    | "-gt"
                    | "-ge"
                    | "-nt"
                    | "-ot"
                    | "-ef"
            )
    };
    let is_unary =
        |w: &Word| literal(w) && w.text.len() == 2 && w.text.starts_with('-') && w.text != "-v";
    let fixed = match ops {
        [a] => !a.split,
        [op, a] => is_unary(op) && !a.split,
        [a, op, b] => is_binary(op) && !a.split && !b.split,
        _ => false,
    };
    for (i, w) in args.iter().enumerate().skip(1) {
        f.data.push(i);
        if w.text == "-v" && !w.dynamic && i + 1 < args.len() {
            f.names.push((i + 1, 0));
        }
        if w.dynamic && !fixed && (w.split || w.text.contains("$(") || w.text.contains('`')) {
            f.opaque("a value from a command or an unquoted expansion in `test` can become an operator such as `-v`");
        }
    }
    f
}

fn cd(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Read);
    let p = opts::parse(args, 1, &Spec::default());
    f.cd = Some(match (name, p.operands.first()) {
        ("popd", _) => super::Cd::Unknown,
        (_, None) => {
            if name == "pushd" {
                super::Cd::Unknown
            } else {
                super::Cd::Home
            }
        }
        (_, Some(&i)) => {
            // A directory not known makes later relative paths unknown,
            // which the analyser reports; the `cd` itself is harmless.
            f.data.push(i);
            let t = text(args, i);
            if args[i].dynamic
                || t == "-"
                || t.starts_with('+')
                || (name == "pushd" && t.starts_with('-'))
            {
                super::Cd::Unknown
            } else {
                super::Cd::To(PathRef::arg(i))
            }
        }
    });
    f
}

fn mkfs(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    f.tag(
        tags::MKFS,
        format!("`{name}` makes a file system (erases the device)"),
    );
    let p = opts::parse(
        args,
        1,
        &Spec {
            short_val: "tLbcCEgGIjJNmMoOrTUvFnS",
            permute: true,
            ..Spec::default()
        },
    );
    for &i in &p.operands {
        if text(args, i).starts_with('/') {
            f.write(i);
        }
    }
    f
}
