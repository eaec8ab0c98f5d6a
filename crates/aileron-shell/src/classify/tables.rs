//! Complete option tables of the programs the analysis vouches for as
//! read-only. Each is taken from the program's manual (GNU coreutils 9,
//! grep 3, sed 4, gawk 5 and mawk, util-linux, ripgrep 14, tree 2) and
//! written getopt-style (see [`Table`]). A command whose options are not
//! all in its table is opaque: its classifier cannot know what it does.
//!
//! To add a program: add a `const` table here and a line to [`table`];
//! its classifier then parses with `Spec::of(table)` and calls
//! `Facts::accept`.

use super::opts::{Operands, Table};

const fn t(short: &'static str, long: &'static [&'static str], operands: Operands) -> Table {
    Table {
        short,
        long,
        operands,
        permute: true,
    }
}

/// A bash builtin: options end at the first operand.
const fn builtin(short: &'static str, operands: Operands) -> Table {
    Table {
        short,
        long: &[],
        operands,
        permute: false,
    }
}

use Operands::{Data, Files, Free};

const CAT: Table = t(
    "AbeEnstTuv",
    &[
        "show-all",
        "number-nonblank",
        "show-ends",
        "number",
        "squeeze-blank",
        "show-tabs",
        "show-nonprinting",
        "help",
        "version",
    ],
    Files,
);
const TAC: Table = t(
    "brs:",
    &["before", "regex", "separator=", "help", "version"],
    Files,
);
const HEAD: Table = t(
    "c:n:qvz0123456789",
    &[
        "bytes=",
        "lines=",
        "quiet",
        "silent",
        "verbose",
        "zero-terminated",
        "help",
        "version",
    ],
    Files,
);
const TAIL: Table = t(
    "c:fFn:qs:vz0123456789",
    &[
        "bytes=",
        "follow=?",
        "lines=",
        "max-unchanged-stats=",
        "pid=",
        "quiet",
        "retry",
        "silent",
        "sleep-interval=",
        "verbose",
        "zero-terminated",
        "help",
        "version",
    ],
    Files,
);
const WC: Table = t(
    "clLmw",
    &[
        "bytes",
        "chars",
        "lines",
        "files0-from=",
        "max-line-length",
        "words",
        "total=",
        "help",
        "version",
    ],
    Files,
);
const LS: Table = t(
    "aAbBcCdDfFgGhHiI:klLmnNopqQrRsStT:uUvw:xXZ1",
    &[
        "all",
        "almost-all",
        "author",
        "escape",
        "block-size=",
        "ignore-backups",
        "color=?",
        "colour=?",
        "directory",
        "dired",
        "classify=?",
        "file-type",
        "format=",
        "full-time",
        "group-directories-first",
        "no-group",
        "human-readable",
        "si",
        "dereference-command-line",
        "dereference-command-line-symlink-to-dir",
        "hide=",
        "hyperlink=?",
        "indicator-style=",
        "inode",
        "ignore=",
        "kibibytes",
        "dereference",
        "literal",
        "numeric-uid-gid",
        "hide-control-chars",
        "show-control-chars",
        "quote-name",
        "quoting-style=",
        "reverse",
        "recursive",
        "size",
        "sort=",
        "time=",
        "time-style=",
        "tabsize=",
        "width=",
        "context",
        "zero",
        "help",
        "version",
    ],
    Files,
);
const GREP: Table = t(
    "A:B:C:D:EFGHIJLNOPRTUVZabcd:e:f:hilm:noqrsuvwxyz0123456789",
    &[
        "extended-regexp",
        "fixed-strings",
        "basic-regexp",
        "perl-regexp",
        "regexp=",
        "file=",
        "ignore-case",
        "no-ignore-case",
        "word-regexp",
        "line-regexp",
        "null-data",
        "no-messages",
        "invert-match",
        "version",
        "help",
        "max-count=",
        "byte-offset",
        "line-number",
        "no-line-number",
        "line-buffered",
        "with-filename",
        "no-filename",
        "label=",
        "only-matching",
        "quiet",
        "silent",
        "binary-files=",
        "text",
        "devices=",
        "directories=",
        "exclude=",
        "exclude-from=",
        "exclude-dir=",
        "include=",
        "recursive",
        "dereference-recursive",
        "files-without-match",
        "files-with-matches",
        "count",
        "initial-tab",
        "null",
        "after-context=",
        "before-context=",
        "context=",
        "color=?",
        "colour=?",
        "group-separator=",
        "no-group-separator",
        "binary",
    ],
    Files,
);
const RG: Table = t(
    "A:B:C:E:FHILM:NPST:Uabcd:e:f:g:hij:lm:nopqr:st:uvwxz0.",
    &[
        "regexp=",
        "file=",
        "after-context=",
        "before-context=",
        "context=",
        "binary",
        "no-binary",
        "block-buffered",
        "no-block-buffered",
        "byte-offset",
        "no-byte-offset",
        "case-sensitive",
        "color=",
        "colors=",
        "column",
        "no-column",
        "context-separator=",
        "no-context-separator",
        "count",
        "count-matches",
        "crlf",
        "no-crlf",
        "debug",
        "dfa-size-limit=",
        "encoding=",
        "no-encoding",
        "engine=",
        "field-context-separator=",
        "field-match-separator=",
        "files",
        "files-with-matches",
        "files-without-match",
        "fixed-strings",
        "no-fixed-strings",
        "follow",
        "no-follow",
        "generate=",
        "glob=",
        "glob-case-insensitive",
        "no-glob-case-insensitive",
        "heading",
        "no-heading",
        "help",
        "hidden",
        "no-hidden",
        "hyperlink-format=",
        "iglob=",
        "ignore-case",
        "ignore-file=",
        "ignore-file-case-insensitive",
        "no-ignore-file-case-insensitive",
        "include-zero",
        "no-include-zero",
        "invert-match",
        "no-invert-match",
        "json",
        "no-json",
        "line-buffered",
        "no-line-buffered",
        "line-number",
        "no-line-number",
        "line-regexp",
        "max-columns=",
        "max-columns-preview",
        "no-max-columns-preview",
        "max-count=",
        "max-depth=",
        "maxdepth=",
        "max-filesize=",
        "mmap",
        "no-mmap",
        "multiline",
        "no-multiline",
        "multiline-dotall",
        "no-multiline-dotall",
        "no-config",
        "no-ignore",
        "ignore",
        "no-ignore-dot",
        "ignore-dot",
        "no-ignore-exclude",
        "ignore-exclude",
        "no-ignore-files",
        "ignore-files",
        "no-ignore-global",
        "ignore-global",
        "no-ignore-messages",
        "ignore-messages",
        "no-ignore-parent",
        "ignore-parent",
        "no-ignore-vcs",
        "ignore-vcs",
        "no-messages",
        "messages",
        "no-require-git",
        "require-git",
        "no-unicode",
        "unicode",
        "null",
        "null-data",
        "one-file-system",
        "no-one-file-system",
        "only-matching",
        "path-separator=",
        "passthru",
        "passthrough",
        "pcre2",
        "no-pcre2",
        "pcre2-version",
        "pre=",
        "no-pre",
        "pre-glob=",
        "pretty",
        "quiet",
        "regex-size-limit=",
        "replace=",
        "search-zip",
        "no-search-zip",
        "smart-case",
        "sort=",
        "sortr=",
        "sort-files",
        "no-sort-files",
        "stats",
        "no-stats",
        "stop-on-nonmatch",
        "text",
        "no-text",
        "threads=",
        "trim",
        "no-trim",
        "type=",
        "type-not=",
        "type-add=",
        "type-clear=",
        "type-list",
        "unrestricted",
        "version",
        "vimgrep",
        "with-filename",
        "no-filename",
        "word-regexp",
        "auto-hybrid-regex",
        "no-auto-hybrid-regex",
    ],
    Files,
);
const TREE: Table = t(
    "aAdDfFgiJlnpqQrsStuvxXCNRUcH:L:P:I:o:T:h",
    &[
        "help",
        "version",
        "inodes",
        "device",
        "noreport",
        "nolinks",
        "dirsfirst",
        "filesfirst",
        "charset=",
        "filelimit=",
        "si",
        "du",
        "prune",
        "timefmt=",
        "sort=",
        "ignore-case",
        "matchdirs",
        "metafirst",
        "gitignore",
        "gitfile=",
        "info",
        "infofile=",
        "noindent",
    ],
    Files,
);
const FILE: Table = t(
    "0bcdEhiklLNnprsSvzZe:F:f:m:P:",
    &[
        "brief",
        "checking-printout",
        "debug",
        "exclude=",
        "exclude-quiet=",
        "extension",
        "files-from=",
        "separator=",
        "no-dereference",
        "dereference",
        "mime",
        "mime-type",
        "mime-encoding",
        "keep-going",
        "list",
        "magic-file=",
        "no-pad",
        "print0",
        "preserve-date",
        "raw",
        "special-files",
        "no-sandbox",
        "uncompress",
        "uncompress-noreport",
        "parameter=",
        "help",
        "version",
    ],
    Files,
);
const STAT: Table = t(
    "c:fLt",
    &[
        "dereference",
        "file-system",
        "cached=",
        "format=",
        "printf=",
        "terse",
        "help",
        "version",
    ],
    Files,
);
const DU: Table = t(
    "0abB:cd:DhHklLmsSt:xX:",
    &[
        "null",
        "all",
        "apparent-size",
        "block-size=",
        "bytes",
        "total",
        "max-depth=",
        "human-readable",
        "inodes",
        "si",
        "count-links",
        "dereference",
        "dereference-args",
        "no-dereference",
        "separate-dirs",
        "summarize",
        "threshold=",
        "time=?",
        "time-style=",
        "exclude-from=",
        "exclude=",
        "one-file-system",
        "files0-from=",
        "help",
        "version",
    ],
    Files,
);
const DF: Table = t(
    "aB:hHiklmPTt:vx:",
    &[
        "all",
        "block-size=",
        "human-readable",
        "si",
        "inodes",
        "local",
        "no-sync",
        "output=?",
        "portability",
        "print-type",
        "sync",
        "total",
        "type=",
        "exclude-type=",
        "help",
        "version",
    ],
    Files,
);
const WHICH: Table = t("as", &[], Free);
const DIFF: Table = t(
    "0123456789abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwW:x:X:yZ",
    &[
        "normal",
        "brief",
        "report-identical-files",
        "context=?",
        "unified=?",
        "ed",
        "rcs",
        "side-by-side",
        "width=",
        "left-column",
        "suppress-common-lines",
        "paginate",
        "expand-tabs",
        "initial-tab",
        "tabsize=",
        "suppress-blank-empty",
        "show-c-function",
        "show-function-line=",
        "label=",
        "new-file",
        "unidirectional-new-file",
        "ignore-case",
        "ignore-file-name-case",
        "no-ignore-file-name-case",
        "ignore-tab-expansion",
        "ignore-trailing-space",
        "ignore-space-change",
        "ignore-all-space",
        "ignore-blank-lines",
        "ignore-matching-lines=",
        "text",
        "strip-trailing-cr",
        "recursive",
        "no-dereference",
        "exclude=",
        "exclude-from=",
        "starting-file=",
        "from-file=",
        "to-file=",
        "old-line-format=",
        "new-line-format=",
        "unchanged-line-format=",
        "line-format=",
        "old-group-format=",
        "new-group-format=",
        "changed-group-format=",
        "unchanged-group-format=",
        "horizon-lines=",
        "minimal",
        "speed-large-files",
        "color=?",
        "palette=",
        "help",
        "version",
    ],
    Files,
);
const SORT: Table = t(
    "bcCdfghik:mMno:rRsS:t:T:uVz",
    &[
        "ignore-leading-blanks",
        "check=?",
        "dictionary-order",
        "ignore-case",
        "general-numeric-sort",
        "ignore-nonprinting",
        "month-sort",
        "human-numeric-sort",
        "numeric-sort",
        "random-sort",
        "random-source=",
        "reverse",
        "sort=",
        "version-sort",
        "batch-size=",
        "compress-program=",
        "debug",
        "files0-from=",
        "key=",
        "merge",
        "output=",
        "stable",
        "buffer-size=",
        "field-separator=",
        "temporary-directory=",
        "parallel=",
        "unique",
        "zero-terminated",
        "help",
        "version",
    ],
    Files,
);
const UNIQ: Table = t(
    "cdDf:is:uw:z",
    &[
        "count",
        "repeated",
        "all-repeated=?",
        "skip-fields=",
        "group=?",
        "ignore-case",
        "skip-chars=",
        "unique",
        "zero-terminated",
        "check-chars=",
        "help",
        "version",
    ],
    Files,
);
const CUT: Table = t(
    "b:c:d:f:nsz",
    &[
        "bytes=",
        "characters=",
        "delimiter=",
        "fields=",
        "complement",
        "only-delimited",
        "output-delimiter=",
        "zero-terminated",
        "help",
        "version",
    ],
    Files,
);
const BASENAME: Table = t(
    "as:z",
    &["multiple", "suffix=", "zero", "help", "version"],
    Free,
);
const DIRNAME: Table = t("z", &["zero", "help", "version"], Free);
const REALPATH: Table = t(
    "eLmPqsz",
    &[
        "canonicalize-existing",
        "canonicalize-missing",
        "logical",
        "physical",
        "quiet",
        "relative-to=",
        "relative-base=",
        "strip",
        "no-symlinks",
        "zero",
        "help",
        "version",
    ],
    Free,
);
const READLINK: Table = t(
    "efmnqsvz",
    &[
        "canonicalize",
        "canonicalize-existing",
        "canonicalize-missing",
        "no-newline",
        "quiet",
        "silent",
        "verbose",
        "zero",
        "help",
        "version",
    ],
    Free,
);
const DATE: Table = t(
    "d:f:I::r:Rs:u",
    &[
        "date=",
        "debug",
        "file=",
        "iso-8601=?",
        "resolution",
        "rfc-email",
        "rfc-3339=",
        "reference=",
        "set=",
        "universal",
        "utc",
        "help",
        "version",
    ],
    Data,
);
const UNAME: Table = t(
    "asnrvmpio",
    &[
        "all",
        "kernel-name",
        "nodename",
        "kernel-release",
        "kernel-version",
        "machine",
        "processor",
        "hardware-platform",
        "operating-system",
        "help",
        "version",
    ],
    Free,
);
const TR: Table = t(
    "cCdst",
    &[
        "complement",
        "delete",
        "squeeze-repeats",
        "truncate-set1",
        "help",
        "version",
    ],
    Free,
);
const PASTE: Table = t(
    "d:sz",
    &[
        "delimiters=",
        "serial",
        "zero-terminated",
        "help",
        "version",
    ],
    Files,
);
const COLUMN: Table = t(
    "c:deE:H:i:Jl:Ln:N:o:O:p:r:R:s:tT:W:xhV",
    &[
        "columns=",
        "table",
        "table-name=",
        "table-order=",
        "table-columns=",
        "table-column=",
        "table-columns-limit=",
        "table-noextreme=",
        "table-noheadings",
        "table-maxout",
        "table-header-as-columns",
        "table-header-repeat",
        "table-hide=",
        "table-right=",
        "table-truncate=",
        "table-wrap=",
        "table-empty-lines",
        "keep-empty-lines",
        "json",
        "output-separator=",
        "separator=",
        "fillrows",
        "tree=",
        "tree-id=",
        "tree-parent=",
        "output-width=",
        "use-spaces=",
        "help",
        "version",
    ],
    Files,
);
const NL: Table = t(
    "b:d:f:h:i:l:n:ps:v:w:",
    &[
        "body-numbering=",
        "section-delimiter=",
        "footer-numbering=",
        "header-numbering=",
        "line-increment=",
        "join-blank-lines=",
        "number-format=",
        "no-renumber",
        "number-separator=",
        "starting-line-number=",
        "number-width=",
        "help",
        "version",
    ],
    Files,
);
const REV: Table = t("0hV", &["zero", "help", "version"], Files);
const SEQ: Table = t(
    "f:s:w0123456789.",
    &["format=", "separator=", "equal-width", "help", "version"],
    Free,
);
const HELP_VERSION_DATA: Table = t("", &["help", "version"], Free);
const PRINTENV: Table = t("0", &["null", "help", "version"], Free);
const ID: Table = t(
    "agGnruzZ",
    &[
        "context", "group", "groups", "name", "real", "user", "zero", "help", "version",
    ],
    Free,
);
const SUMS: Table = t(
    "bctwz",
    &[
        "binary",
        "check",
        "tag",
        "text",
        "ignore-missing",
        "quiet",
        "status",
        "strict",
        "warn",
        "zero",
        "help",
        "version",
    ],
    Files,
);
const OD: Table = t(
    "A:bcdDfhHiIj:lLN:oOsS:t:vw::x",
    &[
        "address-radix=",
        "skip-bytes=",
        "read-bytes=",
        "format=",
        "output-duplicates",
        "strings=?",
        "width=?",
        "traditional",
        "endian=",
        "help",
        "version",
    ],
    Files,
);
const PWD: Table = t("LP", &["logical", "physical", "help", "version"], Free);
/// less 590+: the options that only change how it shows the file; `-o`,
/// `-O`, `--log-file` (write a copy), `-k` (key bindings) are left out.
const LESS: Table = t(
    "aABcCdeEfFgGiIJKLmMnNqQrRsSuUVwWXy:z:b:h:j:x:P:p:t:T:#:",
    &[
        "search-skip-screen",
        "auto-buffers",
        "clear-screen",
        "CLEAR-SCREEN",
        "dumb",
        "quit-at-eof",
        "QUIT-AT-EOF",
        "force",
        "quit-if-one-screen",
        "hilite-search",
        "HILITE-SEARCH",
        "ignore-case",
        "IGNORE-CASE",
        "status-column",
        "quit-on-intr",
        "no-lessopen",
        "long-prompt",
        "LONG-PROMPT",
        "line-numbers",
        "LINE-NUMBERS",
        "quiet",
        "silent",
        "QUIET",
        "SILENT",
        "raw-control-chars",
        "RAW-CONTROL-CHARS",
        "squeeze-blank-lines",
        "chop-long-lines",
        "underline-special",
        "UNDERLINE-SPECIAL",
        "version",
        "hilite-unread",
        "HILITE-UNREAD",
        "no-init",
        "no-keypad",
        "tabs=",
        "window=",
        "max-back-scroll=",
        "buffers=",
        "max-forw-scroll=",
        "jump-target=",
        "prompt=",
        "pattern=",
        "shift=",
        "follow-name",
        "incsearch",
        "line-num-width=",
        "mouse",
        "no-histdups",
        "no-number-headers",
        "rscroll=",
        "save-marks",
        "status-col-width=",
        "use-backslash",
        "use-color",
        "wheel-lines=",
        "wordwrap",
        "header=",
        "exit-follow-on-close",
        "help",
    ],
    Files,
);

/// `echo` and others whose options and operands can only change what they print.
const FREE: Table = t("", &[], Free);
/// bash's `printf`: only `-v NAME`, which the classifier reports.
const PRINTF: Table = builtin("v:", Data);
/// GNU sed 4.
pub(crate) const SED: Table = t(
    "bnrsuzEe:f:i::l:",
    &[
        "quiet",
        "silent",
        "debug",
        "expression=",
        "file=",
        "follow-symlinks",
        "in-place=?",
        "line-length=",
        "null-data",
        "zero-terminated",
        "posix",
        "regexp-extended",
        "separate",
        "sandbox",
        "unbuffered",
        "binary",
        "help",
        "version",
    ],
    Files,
);
/// gawk 5 and mawk together (Debian's `awk` may be either): `-W` takes
/// mawk's and gawk's `-W long-option` forms.
pub(crate) const AWK: Table = t(
    "F:f:v:W:bcCd::D::e:E:ghi:l:L::MnNo::Op::PrsStVY",
    &[
        "assign=",
        "bignum",
        "characters-as-bytes",
        "copyright",
        "csv",
        "debug=?",
        "dump-variables=?",
        "exec=",
        "field-separator=",
        "file=",
        "gen-pot",
        "help",
        "include=",
        "lint=?",
        "load=",
        "no-optimize",
        "non-decimal-data",
        "optimize",
        "posix",
        "pretty-print=?",
        "profile=?",
        "re-interval",
        "sandbox",
        "source=",
        "trace",
        "traditional",
        "use-lc-numeric",
        "version",
    ],
    Files,
);

// Programs that write, with their whole tables: an option missing here
// makes the command opaque, and one read with the wrong arity would move
// the file it writes.

/// GNU cp: every option of its `--help`.
pub(crate) const CP: Table = t(
    "abdfiHlLnPpRrsS:t:TuvxZ",
    &[
        "archive",
        "attributes-only",
        "backup=?",
        "copy-contents",
        "force",
        "interactive",
        "link",
        "dereference",
        "no-clobber",
        "no-dereference",
        "preserve=?",
        "no-preserve=",
        "parents",
        "recursive",
        "reflink=?",
        "remove-destination",
        "sparse=",
        "strip-trailing-slashes",
        "symbolic-link",
        "suffix=",
        "target-directory=",
        "no-target-directory",
        "update",
        "verbose",
        "one-file-system",
        "context=?",
        "help",
        "version",
    ],
    Files,
);
/// GNU mv: every option of its `--help`.
pub(crate) const MV: Table = t(
    "bfinS:t:TuvZ",
    &[
        "backup=?",
        "force",
        "interactive",
        "no-clobber",
        "strip-trailing-slashes",
        "suffix=",
        "target-directory=",
        "no-target-directory",
        "update",
        "verbose",
        "context",
        "help",
        "version",
    ],
    Files,
);
/// GNU ln: every option of its `--help`.
pub(crate) const LN: Table = t(
    "bdFfiLnPrsS:t:Tv",
    &[
        "backup=?",
        "directory",
        "force",
        "interactive",
        "logical",
        "no-dereference",
        "physical",
        "relative",
        "symbolic",
        "suffix=",
        "target-directory=",
        "no-target-directory",
        "verbose",
        "help",
        "version",
    ],
    Files,
);
/// GNU install: every option of its `--help`.
pub(crate) const INSTALL: Table = t(
    "bcCdDg:m:o:psS:t:TvZ",
    &[
        "backup=?",
        "compare",
        "directory",
        "group=",
        "mode=",
        "owner=",
        "preserve-timestamps",
        "strip",
        "strip-program=",
        "suffix=",
        "target-directory=",
        "no-target-directory",
        "verbose",
        "preserve-context",
        "context=?",
        "help",
        "version",
    ],
    Files,
);
/// GNU touch: every option of its `--help`.
pub(crate) const TOUCH: Table = t(
    "acd:fhmr:t:",
    &[
        "no-create",
        "date=",
        "no-dereference",
        "reference=",
        "time=",
        "help",
        "version",
    ],
    Files,
);
/// GNU mkdir: every option of its `--help`.
pub(crate) const MKDIR: Table = t(
    "m:pvZ",
    &[
        "mode=",
        "parents",
        "verbose",
        "context=?",
        "help",
        "version",
    ],
    Files,
);
/// GNU rm: every option of its `--help`.
pub(crate) const RM: Table = t(
    "fiIrRdv",
    &[
        "force",
        "interactive=?",
        "one-file-system",
        "no-preserve-root",
        "preserve-root=?",
        "recursive",
        "dir",
        "verbose",
        "help",
        "version",
    ],
    Files,
);
/// GNU rmdir: every option of its `--help`.
pub(crate) const RMDIR: Table = t(
    "pv",
    &[
        "ignore-fail-on-non-empty",
        "parents",
        "verbose",
        "help",
        "version",
    ],
    Files,
);
/// GNU tee: every option of its `--help`.
pub(crate) const TEE: Table = t(
    "aip",
    &[
        "append",
        "ignore-interrupts",
        "output-error=?",
        "help",
        "version",
    ],
    Files,
);
/// GNU truncate: every option of its `--help`.
pub(crate) const TRUNCATE: Table = t(
    "cor:s:",
    &[
        "no-create",
        "io-blocks",
        "reference=",
        "size=",
        "help",
        "version",
    ],
    Files,
);
/// GNU shred: every option of its `--help`.
pub(crate) const SHRED: Table = t(
    "fn:s:uvxz",
    &[
        "force",
        "iterations=",
        "random-source=",
        "size=",
        "remove=?",
        "verbose",
        "exact",
        "zero",
        "help",
        "version",
    ],
    Files,
);
/// GNU split: every option of its `--help`.
pub(crate) const SPLIT: Table = t(
    "a:b:C:dxel:n:t:u",
    &[
        "suffix-length=",
        "additional-suffix=",
        "bytes=",
        "line-bytes=",
        "numeric-suffixes=?",
        "hex-suffixes=?",
        "elide-empty-files",
        "filter=",
        "lines=",
        "number=",
        "separator=",
        "unbuffered",
        "verbose",
        "help",
        "version",
    ],
    Files,
);
/// GNU tar 1.34: every option of its `--help` (its classifier says what
/// each does).
pub(crate) const TAR: Table = t(
    "Acdrtuxg:GnSC:T:X:kUWOmpsf:F:L:Mb:BiH:V:aI:jJzZhK:N:PlRvwo",
    &[
        "catenate",
        "concatenate",
        "create",
        "delete",
        "diff",
        "compare",
        "append",
        "test-label",
        "list",
        "update",
        "extract",
        "get",
        "check-device",
        "listed-incremental=",
        "incremental",
        "hole-detection=",
        "ignore-failed-read",
        "level=",
        "no-check-device",
        "no-seek",
        "seek",
        "occurrence=?",
        "sparse-version=",
        "sparse",
        "add-file=",
        "directory=",
        "exclude=",
        "exclude-backups",
        "exclude-caches",
        "exclude-caches-all",
        "exclude-ignore=",
        "exclude-ignore-recursive=",
        "exclude-tag=",
        "exclude-tag-under=",
        "exclude-vcs",
        "exclude-vcs-ignores",
        "no-null",
        "no-recursion",
        "no-unquote",
        "no-verbatim-files-from",
        "null",
        "recursion",
        "files-from=",
        "unquote",
        "verbatim-files-from",
        "exclude-from=",
        "anchored",
        "ignore-case",
        "no-anchored",
        "no-ignore-case",
        "no-wildcards",
        "no-wildcards-match-slash",
        "wildcards",
        "wildcards-match-slash",
        "keep-directory-symlink",
        "keep-newer-files",
        "keep-old-files",
        "no-overwrite-dir",
        "one-top-level=?",
        "overwrite",
        "overwrite-dir",
        "recursive-unlink",
        "remove-files",
        "skip-old-files",
        "unlink-first",
        "verify",
        "no-ignore-command-error",
        "to-stdout",
        "to-command=",
        "atime-preserve=?",
        "clamp-mtime",
        "delay-directory-restore",
        "group=",
        "group-map=",
        "mode=",
        "mtime=",
        "touch",
        "no-delay-directory-restore",
        "no-same-owner",
        "no-same-permissions",
        "numeric-owner",
        "owner=",
        "owner-map=",
        "preserve-permissions",
        "same-permissions",
        "same-owner",
        "sort=",
        "preserve-order",
        "same-order",
        "acls",
        "no-acls",
        "no-selinux",
        "no-xattrs",
        "selinux",
        "xattrs",
        "xattrs-exclude=",
        "xattrs-include=",
        "force-local",
        "file=",
        "info-script=",
        "new-volume-script=",
        "tape-length=",
        "multi-volume",
        "rmt-command=",
        "rsh-command=",
        "volno-file=",
        "blocking-factor=",
        "read-full-records",
        "ignore-zeros",
        "record-size=",
        "format=",
        "old-archive",
        "portability",
        "pax-option=",
        "posix",
        "label=",
        "auto-compress",
        "use-compress-program=",
        "bzip2",
        "xz",
        "lzip",
        "lzma",
        "lzop",
        "no-auto-compress",
        "zstd",
        "gzip",
        "gunzip",
        "ungzip",
        "compress",
        "uncompress",
        "backup=?",
        "hard-dereference",
        "dereference",
        "starting-file=",
        "newer-mtime=",
        "newer=",
        "after-date=",
        "one-file-system",
        "absolute-names",
        "suffix=",
        "strip-components=",
        "transform=",
        "xform=",
        "checkpoint=?",
        "checkpoint-action=",
        "full-time",
        "index-file=",
        "check-links",
        "no-quote-chars=",
        "quote-chars=",
        "quoting-style=",
        "block-number",
        "show-defaults",
        "show-omitted-dirs",
        "show-snapshot-field-ranges",
        "show-transformed-names",
        "show-stored-names",
        "totals=?",
        "utc",
        "verbose",
        "warning=",
        "interactive",
        "confirmation",
        "help",
        "restrict",
        "usage",
        "version",
    ],
    Files,
);

/// `unlink`: no options but these.
pub(crate) const UNLINK: Table = t("", &["help", "version"], Files);

/// The complete option table of `name`, if the analysis has one.
pub(crate) fn table(name: &str) -> Option<&'static Table> {
    Some(match name {
        "cat" => &CAT,
        "tac" => &TAC,
        "head" => &HEAD,
        "tail" => &TAIL,
        "wc" => &WC,
        "ls" => &LS,
        "grep" | "egrep" | "fgrep" => &GREP,
        "rg" => &RG,
        "tree" => &TREE,
        "file" => &FILE,
        "stat" => &STAT,
        "du" => &DU,
        "df" => &DF,
        "which" => &WHICH,
        "diff" => &DIFF,
        "sort" => &SORT,
        "uniq" => &UNIQ,
        "cut" => &CUT,
        "basename" => &BASENAME,
        "dirname" => &DIRNAME,
        "realpath" => &REALPATH,
        "readlink" => &READLINK,
        "date" => &DATE,
        "uname" => &UNAME,
        "tr" => &TR,
        "paste" => &PASTE,
        "column" => &COLUMN,
        "nl" => &NL,
        "rev" => &REV,
        "seq" => &SEQ,
        "sleep" | "whoami" | "nproc" | "arch" | "tty" | "groups" | "users" => &HELP_VERSION_DATA,
        "printenv" => &PRINTENV,
        "id" => &ID,
        "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" | "b2sum" => {
            &SUMS
        }
        "od" => &OD,
        "pwd" => &PWD,
        "echo" | "true" | "false" | ":" | "ps" | "yes" | "uptime" | "free" | "clear" | "lscpu"
        | "lsusb" | "lspci" | "lsblk" | "getconf" | "locale" | "cal" | "factor" | "ping"
        | "ping6" | "dig" | "nslookup" | "host" | "who" | "w" | "vmstat" | "iostat" | "mpstat"
        | "netstat" | "whois" | "traceroute" | "type" | "set" | "ulimit" | "jobs" | "wait"
        | "dirs" | "shift" | "break" | "continue" | "return" | "exit" | "help" | "compgen"
        | "getent" => &FREE,
        "less" | "more" => &LESS,
        "printf" => &PRINTF,
        "sed" => &SED,
        "awk" | "gawk" | "mawk" | "nawk" => &AWK,
        "cp" | "gcp" => &CP,
        "mv" | "gmv" => &MV,
        "ln" => &LN,
        "install" => &INSTALL,
        "touch" => &TOUCH,
        "mkdir" => &MKDIR,
        "rm" => &RM,
        "rmdir" => &RMDIR,
        "unlink" => &UNLINK,
        "tee" => &TEE,
        "truncate" => &TRUNCATE,
        "shred" => &SHRED,
        "split" => &SPLIT,
        "tar" | "gtar" => &TAR,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &[
        "cat", "tac", "head", "tail", "wc", "ls", "grep", "rg", "tree", "file", "stat", "du", "df",
        "which", "diff", "sort", "uniq", "cut", "basename", "dirname", "realpath", "readlink",
        "date", "uname", "tr", "paste", "column", "nl", "rev", "seq", "sleep", "printenv", "id",
        "md5sum", "od", "pwd", "echo", "printf", "sed", "awk", "cp", "mv", "ln", "install",
        "touch", "mkdir", "rm", "rmdir", "unlink", "tee", "truncate", "shred", "split", "tar",
    ];

    /// A letter or name listed twice would make the first one win,
    /// whatever the second says it takes.
    #[test]
    fn each_option_is_listed_once() {
        for name in NAMES {
            let t = table(name).expect(name);
            let letters: Vec<char> = t.short.chars().filter(|&c| c != ':').collect();
            let mut sorted = letters.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(
                sorted.len(),
                letters.len(),
                "`{name}` lists a short option twice"
            );
            let mut longs: Vec<&str> = t
                .long
                .iter()
                .map(|l| l.trim_end_matches("=?").trim_end_matches('='))
                .collect();
            let n = longs.len();
            longs.sort_unstable();
            longs.dedup();
            assert_eq!(longs.len(), n, "`{name}` lists a long option twice");
        }
    }
}

/// The tables checked against the programs themselves: each long option's
/// arity (none, a value, an optional attached value) must be what the
/// program's `--help` says, and so must the short option printed beside it.
#[cfg(test)]
mod against_help {
    use super::table;
    use crate::classify::opts::Takes;

    /// Table name, program to ask. `file`'s `--help` does not show the
    /// value `-P` takes; `tree`, `less` and `awk` (gawk, mawk) print their
    /// options in other forms: those tables are checked by hand.
    const CHECKED: &[(&str, &str)] = &[
        ("cat", "cat"),
        ("tac", "tac"),
        ("head", "head"),
        ("tail", "tail"),
        ("wc", "wc"),
        ("ls", "ls"),
        ("grep", "grep"),
        ("stat", "stat"),
        ("du", "du"),
        ("df", "df"),
        ("diff", "diff"),
        ("sort", "sort"),
        ("uniq", "uniq"),
        ("cut", "cut"),
        ("basename", "basename"),
        ("dirname", "dirname"),
        ("realpath", "realpath"),
        ("readlink", "readlink"),
        ("date", "date"),
        ("uname", "uname"),
        ("tr", "tr"),
        ("paste", "paste"),
        ("nl", "nl"),
        ("seq", "seq"),
        ("printenv", "printenv"),
        ("id", "id"),
        ("md5sum", "md5sum"),
        ("od", "od"),
        ("sed", "sed"),
        ("cp", "cp"),
        ("mv", "mv"),
        ("ln", "ln"),
        ("install", "install"),
        ("touch", "touch"),
        ("mkdir", "mkdir"),
        ("rm", "rm"),
        ("rmdir", "rmdir"),
        ("unlink", "unlink"),
        ("tee", "tee"),
        ("truncate", "truncate"),
        ("shred", "shred"),
        ("split", "split"),
        ("tar", "tar"),
        ("rg", "rg"),
        ("column", "column"),
        ("rev", "rev"),
    ];

    /// What one option line of a GNU `--help` says.
    #[derive(Default)]
    struct Line {
        /// Short options, with the value each is shown taking (`-C NUM`).
        shorts: Vec<(char, Option<Takes>)>,
        longs: Vec<String>,
        /// What the long options take (`--x=V`, `--x[=V]`, `--x`).
        takes: Option<Takes>,
    }

    /// Parses an option line: indented at most 8 columns (deeper ones
    /// continue a description), names separated by `, `, the text after
    /// two spaces. `--x=word` in lower case is an alias (`-p,
    /// --indicator-style=slash`), not an arity.
    fn option_line(line: &str) -> Option<Line> {
        let spec = line.trim_start();
        if !spec.starts_with('-') || line.len() - spec.len() > 8 || line.len() == spec.len() {
            return None;
        }
        let spec = spec.split("  ").next().unwrap_or("");
        let mut out = Line::default();
        for part in spec.split(", ") {
            let part = part.trim();
            if let Some(long) = part.strip_prefix("--") {
                let end = long
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .unwrap_or(long.len());
                let rest = &long[end..];
                if rest.starts_with('=') && rest[1..].starts_with(|c: char| c.is_ascii_lowercase())
                {
                    return None;
                }
                out.longs.push(long[..end].to_owned());
                out.takes = Some(if rest.starts_with("[=") {
                    Takes::Attached
                } else if rest.starts_with('=') || rest.starts_with(' ') {
                    Takes::Value
                } else {
                    Takes::Nothing
                });
            } else if let Some(short) = part.strip_prefix('-') {
                let mut chars = short.chars();
                let Some(c) = chars.next() else { continue };
                let rest = chars.as_str();
                let own = if rest.starts_with(" [") {
                    Some(Takes::Attached)
                } else if rest.starts_with(' ') {
                    Some(Takes::Value)
                } else if rest.is_empty() {
                    None
                } else {
                    // `-NUM`: a number, not a letter.
                    continue;
                };
                out.shorts.push((c, own));
            }
        }
        Some(out)
    }

    /// Where the program is missing the check is skipped with a message,
    /// except in CI, where it fails.
    fn help_of(program: &str) -> Option<String> {
        let out = std::process::Command::new(program)
            .arg("--help")
            .env("LC_ALL", "C")
            .output();
        match out {
            Ok(o) if !o.stdout.is_empty() => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
            _ => {
                assert!(
                    std::env::var_os("CI").is_none_or(|v| v.is_empty()),
                    "{program} is missing (tests are never skipped in CI)"
                );
                eprintln!("SKIPPED: {program} is missing");
                None
            }
        }
    }

    /// Differences between `name`'s table and `help`. A long option shown
    /// both with and without a value (`--time`, `--time=WORD`) takes an
    /// optional one; a short option takes a value when it is shown with
    /// one or when its long form's value is mandatory.
    fn mismatches(name: &str, help: &str) -> Vec<String> {
        let t = table(name).expect(name);
        let mut longs: Vec<(String, Takes)> = Vec::new();
        let mut wrong = Vec::new();
        for line in help.lines().filter_map(option_line) {
            let takes = line.takes.unwrap_or(Takes::Nothing);
            for long in &line.longs {
                match longs.iter_mut().find(|(l, _)| l == long) {
                    Some((_, seen)) if *seen != takes => *seen = Takes::Attached,
                    Some(_) => {}
                    None => longs.push((long.clone(), takes)),
                }
            }
            for &(c, own) in &line.shorts {
                let expected = match (own, line.takes) {
                    (Some(o), _) => o,
                    (None, Some(Takes::Value)) => Takes::Value,
                    (None, Some(Takes::Nothing)) => Takes::Nothing,
                    // A lone `-D`, or beside an optional long value.
                    _ => continue,
                };
                if let Some(have) = t.short_takes(c)
                    && have != expected
                {
                    wrong.push(format!("{name} -{c}: table {have:?}, --help {expected:?}"));
                }
            }
        }
        for (long, takes) in longs {
            if let Ok((n, have)) = t.long_takes(&long)
                && n == long
                && have != takes
            {
                wrong.push(format!("{name} --{long}: table {have:?}, --help {takes:?}"));
            }
        }
        wrong
    }

    #[test]
    fn arity_is_the_programs_own() {
        let mut wrong = Vec::new();
        for &(name, program) in CHECKED {
            if let Some(help) = help_of(program) {
                wrong.extend(mismatches(name, &help));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn a_wrong_arity_is_found() {
        let help = "  -f, --skip-fields=N   avoid comparing the first N fields\n      --group[=METHOD]  show all";
        assert!(mismatches("uniq", help).is_empty());
        let wrong = "  -c, --count=N   x\n";
        assert_eq!(mismatches("uniq", wrong).len(), 2);
    }
}
