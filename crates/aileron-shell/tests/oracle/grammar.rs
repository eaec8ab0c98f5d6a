//! A small grammar of bash command lines, shared by the differential oracle
//! (`tests/oracle.rs`) and the property tests (`tests/parser_props.rs`).
//!
//! Lines are built from the constructs an agent can use to hide a command
//! or a write from a filter (lists, substitutions, redirections through
//! descriptors, variables, arithmetic, builtins that run strings, quoting)
//! and from the options of the programs a read-only profile allows,
//! including the options that make them write or run something. Every
//! name a line uses is relative to the working directory or `~` and names
//! a file of the oracle's sandbox (see [`FILES`]), so that a line run by the
//! oracle stays inside it.

/// SplitMix64: tiny, fast, deterministic, and good enough to pick grammar
/// productions; avoids a dependency on `rand`/`proptest`.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The generator of case `index` of a run: cases are independent of
    /// each other and of the order threads run them in.
    pub fn for_case(seed: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ index.wrapping_mul(0xd1b5_4a32_d192_ed03));
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// Files of the sandbox that lines read (they exist before the line runs).
pub const FILES: &[&str] = &[
    "a.txt",
    "b.txt",
    "sp ace.txt",
    "notes.md",
    "data.json",
    "list.txt",
    "sub/c.txt",
    "sub/deep/d.txt",
    "aileron.yaml",
    ".aileron/admin.token",
    ".claude/settings.json",
    ".git/config",
    "aileron",
];

/// Names lines write to: new files, existing ones and protected ones.
pub const TARGETS: &[&str] = &[
    "new.txt",
    "out.txt",
    "a.txt",
    "sub/new.txt",
    "sub/deep/new.txt",
    "aileron.yaml",
    "sub/aileron.yaml",
    ".aileron/admin.token",
    ".aileron/audit.jsonl",
    ".git/config",
    ".git/hooks/pre-commit",
    ".claude/settings.json",
];

/// Directories of the sandbox.
pub const DIRS: &[&str] = &[".", "sub", "sub/deep", ".git", ".aileron", ".claude"];

/// Globs that match files of the sandbox (written as they are: unquoted).
const GLOBS: &[&str] = &[
    "*.txt",
    "*.md",
    "*.yaml",
    "?.txt",
    "[ab].txt",
    "sub/*",
    "sub/*.txt",
    ".aileron/*",
    ".[a-z]*",
    ".claude/*.json",
    "*",
    "sub/**",
];

/// Brace expansions over names of the sandbox.
const BRACES: &[&str] = &[
    "{a,b}.txt",
    "sub/{c,new}.txt",
    "{new,out}.txt",
    "{aileron.yaml,x}",
    ".{aileron,claude}",
    "f{1..3}.txt",
];

/// A shell word: either a literal value that may be quoted any way that
/// keeps its value, or text that must reach bash as written.
#[derive(Clone, Debug)]
enum Word {
    Lit(String),
    Raw(String),
    /// Concatenation.
    Cat(Vec<Word>),
}

fn lit(s: &str) -> Word {
    Word::Lit(s.to_owned())
}

fn raw(s: &str) -> Word {
    Word::Raw(s.to_owned())
}

/// One program and the options of it the grammar uses.
///
/// Templates are words separated by spaces; in them `{F}` is a file read,
/// `{W}` a file written, `{D}` a directory, `{P}` a pattern, `{N}` a
/// number, `{C}` a whole inner command (several words), `{CS}` an inner
/// command as one string, `{PROG}` a program with arguments as one string,
/// `{S}` a sed script, `{A}` an awk program, `{J}` a jq filter, `{DATE}` a
/// date, `{BR}` a branch name, `{T}` some text, `{;}` a quoted `;`, `{}`
/// itself. Any other text is a literal, quoted at random.
struct Prog {
    name: &'static str,
    opts: &'static [&'static str],
    /// Operand templates, each used 0 or more times.
    operands: &'static [&'static str],
    max_operands: usize,
}

const READERS: &[Prog] = &[
    Prog {
        name: "cat",
        opts: &["-n", "-A", "-s", "-v", "-E", "-T", "--number", "-b", "-"],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "head",
        opts: &[
            "-n {N}",
            "-c {N}",
            "--lines={N}",
            "--bytes={N}",
            "-q",
            "-v",
            "-3",
        ],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "tail",
        opts: &[
            "-n {N}",
            "-c {N}",
            "--pid=1",
            "-q",
            "-v",
            "--lines=+2",
            "-z",
            "-n +1",
        ],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "wc",
        opts: &["-l", "-w", "-c", "-m", "-L", "--files0-from=names0"],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "ls",
        opts: &[
            "-l",
            "-a",
            "-la",
            "-R",
            "-1",
            "-d",
            "-h",
            "-t",
            "--color=never",
            "-I x",
        ],
        operands: &["{D}", "{F}"],
        max_operands: 2,
    },
    Prog {
        name: "echo",
        opts: &["-n", "-e", "-E"],
        operands: &["{T}", "{F}"],
        max_operands: 3,
    },
    Prog {
        name: "printf",
        opts: &["%s\\n", "-v {V} %s", "%b", "--", "%q"],
        operands: &["{T}", "{F}"],
        max_operands: 2,
    },
    Prog {
        name: "grep",
        opts: &[
            "-n",
            "-r",
            "-i",
            "-v",
            "-c",
            "-l",
            "-e {P}",
            "-f {F}",
            "-E",
            "-F",
            "-o",
            "--include=*.txt",
            "-R",
            "-q",
            "-s",
            "-H",
            "-m 1",
            "--color=never",
            "-z",
            "-a",
            "--label=x",
            "--null",
        ],
        operands: &["{P}", "{F}", "{D}"],
        max_operands: 3,
    },
    Prog {
        name: "find",
        opts: &[],
        operands: &[],
        max_operands: 0,
    },
    Prog {
        name: "stat",
        opts: &["-c %s", "--format=%n", "-L", "-t", "--printf=%n\\n"],
        operands: &["{F}", "{D}"],
        max_operands: 2,
    },
    Prog {
        name: "du",
        opts: &[
            "-s",
            "-h",
            "-a",
            "-c",
            "--max-depth=1",
            "-0",
            "--files0-from=names0",
            "--exclude=x",
            "--apparent-size",
        ],
        operands: &["{D}", "{F}"],
        max_operands: 2,
    },
    Prog {
        name: "diff",
        opts: &[
            "-u",
            "-q",
            "-r",
            "-N",
            "--brief",
            "--to-file={F}",
            "--from-file={F}",
            "-y",
            "--color=never",
            "-c",
            "-e",
            "--label x",
            "-s",
        ],
        operands: &["{F}", "{D}"],
        max_operands: 2,
    },
    Prog {
        name: "sort",
        opts: &[
            "-r",
            "-n",
            "-u",
            "-k2",
            "-t :",
            "-f",
            "-b",
            "-h",
            "-V",
            "-c",
            "-m",
            "-z",
            "-o {W}",
            "-o{W}",
            "-ro {W}",
            "-rno{W}",
            "-uo {W}",
            "--output={W}",
            "--out={W}",
            "--o={W}",
            "--outp {W}",
            "--compress-program={PROG}",
            "--compress-prog={PROG}",
            "--compress={PROG}",
            "-S 1K --compress-program={PROG}",
            "-T {D}",
            "-S 1K",
            "--batch-size=2",
            "--parallel=1",
            "--files0-from=names0",
            "--random-source={F}",
            "-R",
        ],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "uniq",
        opts: &[
            "-c",
            "-d",
            "-u",
            "-i",
            "-f1",
            "-s1",
            "-w3",
            "--all-repeated",
            "-z",
        ],
        operands: &["{F}", "{F} {W}"],
        max_operands: 1,
    },
    Prog {
        name: "cut",
        opts: &[
            "-d: -f1",
            "-c1-3",
            "-b1",
            "--complement -c1",
            "-s -f1",
            "-f1 --output-delimiter=x",
        ],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "tr",
        opts: &["a-z A-Z", "-d x", "-s ' '", "-c a x", "-d {P}"],
        operands: &[],
        max_operands: 0,
    },
    Prog {
        name: "sed",
        opts: &[
            "-n",
            "-e {S}",
            "-E",
            "-r",
            "-s",
            "-z",
            "-u",
            "--debug",
            "-i",
            "-i.bak",
            "-iE",
            "--in-place",
            "--in-place=.bak",
            "--in-pl",
            "--in",
            "-ni",
            "-Ei",
            "-si",
            "-i.yaml",
            "-ri.bak",
            "-nE -i",
            "-f prog.sed",
            "--expression={S}",
            "--file=prog.sed",
            "--posix",
            "--sandbox",
            "-l 5",
        ],
        operands: &["{S}", "{F}"],
        max_operands: 2,
    },
    Prog {
        name: "awk",
        opts: &["-F:", "-v x=1", "-f prog.awk", "--", "-F ,"],
        operands: &["{A}", "{F}"],
        max_operands: 2,
    },
    Prog {
        name: "jq",
        opts: &[
            "-r",
            "-c",
            "-n",
            "-S",
            "--tab",
            "-e",
            "-j",
            "-a",
            "--arg k v",
            "--argjson k 1",
            "--slurpfile k {F}",
            "--rawfile k {F}",
            "-s",
            "--seq",
            "-L {D}",
        ],
        operands: &["{J}", "{F}"],
        max_operands: 2,
    },
    Prog {
        name: "paste",
        opts: &["-d,", "-s", "-z", "-d :"],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "nl",
        opts: &["-ba", "-w3", "-s:", "-nln"],
        operands: &["{F}"],
        max_operands: 1,
    },
    Prog {
        name: "tac",
        opts: &["-s x", "-r", "-b"],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "rev",
        opts: &[],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "seq",
        opts: &["-w", "-s ,", "-f %g"],
        operands: &["{N}"],
        max_operands: 2,
    },
    Prog {
        name: "readlink",
        opts: &["-f", "-e", "-m", "-n", "-v"],
        operands: &["{F}", "{D}"],
        max_operands: 2,
    },
    Prog {
        name: "realpath",
        opts: &["-e", "-m", "-s", "--relative-to={D}", "-q"],
        operands: &["{F}", "{D}"],
        max_operands: 2,
    },
    Prog {
        name: "basename",
        opts: &["-a", "-s .txt", "-z"],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "dirname",
        opts: &["-z"],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "xxd",
        opts: &["-p", "-l 16", "-c 8", "-g 1", "-u", "-i", "-s 2", "-b"],
        operands: &["{F}", "{F} {W}", "{F} --"],
        max_operands: 1,
    },
    Prog {
        name: "od",
        opts: &["-c", "-x", "-An", "-tx1", "-N 8", "-j 2", "-w8"],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "md5sum",
        opts: &[
            "-c sums.txt",
            "-b",
            "-t",
            "--tag",
            "-z",
            "--quiet",
            "--status",
        ],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "sha256sum",
        opts: &["-c sums.txt", "-b", "--tag", "-z"],
        operands: &["{F}"],
        max_operands: 2,
    },
    Prog {
        name: "date",
        opts: &[
            "+%s",
            "-u",
            "-d {DATE}",
            "--date=@0",
            "-I",
            "-R",
            "-r {F}",
            "--reference={F}",
            "-f dates.txt",
            "--file=dates.txt",
            "-s {DATE}",
            "--set={DATE}",
            "--iso-8601=seconds",
            "--debug",
        ],
        operands: &[],
        max_operands: 0,
    },
    Prog {
        name: "env",
        opts: &[],
        operands: &[],
        max_operands: 0,
    },
    Prog {
        name: "git",
        opts: &[],
        operands: &[],
        max_operands: 0,
    },
    Prog {
        name: "test",
        opts: &[],
        operands: &[],
        max_operands: 0,
    },
    Prog {
        name: "[",
        opts: &[],
        operands: &[],
        max_operands: 0,
    },
];

/// Programs that write, at a lower weight: the oracle checks that what they
/// write is what the analysis reports.
const WRITERS: &[Prog] = &[
    Prog {
        name: "tee",
        opts: &["-a", "-p", "-i", "--append", "--output-error=warn", "-ai"],
        operands: &["{W}"],
        max_operands: 2,
    },
    Prog {
        name: "touch",
        opts: &[
            "-c",
            "-a",
            "-m",
            "-r {F}",
            "-d {DATE}",
            "--no-create",
            "-t 200001010000",
        ],
        operands: &["{W}"],
        max_operands: 2,
    },
    Prog {
        name: "mkdir",
        opts: &["-p", "-v", "-m 700"],
        operands: &["{W}", "newdir", "sub/newdir/x"],
        max_operands: 2,
    },
    Prog {
        name: "rm",
        opts: &["-f", "-r", "-rf", "-v", "-d", "--"],
        operands: &["{W}", "{D}"],
        max_operands: 2,
    },
    Prog {
        name: "cp",
        opts: &[
            "-r",
            "-f",
            "-n",
            "-v",
            "-t {D}",
            "-T",
            "--backup",
            "-b",
            "-S .bak",
            "-bS .yaml",
            "--suffix=.yaml -b",
            "-u",
            "-a",
            "--target-directory={D}",
        ],
        operands: &["{F}", "{W}", "{D}"],
        max_operands: 3,
    },
    Prog {
        name: "mv",
        opts: &[
            "-f",
            "-n",
            "-v",
            "-t {D}",
            "-b",
            "-S .old",
            "-u",
            "-T",
            "-bS .yaml",
        ],
        operands: &["{F}", "{W}", "{D}"],
        max_operands: 3,
    },
    Prog {
        name: "ln",
        opts: &["-s", "-f", "-sf", "-r", "-t {D}", "-T", "-b", "-bS .yaml"],
        operands: &["{F}", "{W}", "{D}"],
        max_operands: 3,
    },
    Prog {
        name: "truncate",
        opts: &["-s 0", "-s +1", "-c", "-r {F}"],
        operands: &["{W}"],
        max_operands: 2,
    },
];

const SED_SCRIPTS: &[&str] = &[
    "p",
    "s/a/b/",
    "s/o/0/g",
    "1d",
    "$p",
    "/x/!d",
    "y/ab/ba/",
    "1{p;q}",
    "Q",
    "F",
    "=",
    "s/a/b/w {w}",
    "w {w}",
    "1w {w}",
    "1r {f}",
    "R {f}",
    "W {w}",
    "1e date",
    "s/.*/date/e",
    "e touch {w}",
    "1!G;h;$!d",
    "s/x/y/;w {w}",
];

const AWK_PROGRAMS: &[&str] = &[
    "{print}",
    "{print $1}",
    "NR==1",
    "BEGIN{print 1}",
    "END{print NR}",
    "{print > \"{w}\"}",
    "{print >> \"{w}\"}",
    "{print | \"cat\"}",
    "{print | \"sort -o {w}\"}",
    "BEGIN{system(\"touch {w}\")}",
    "BEGIN{while((\"date\" | getline l)>0) print l}",
    "BEGIN{\"date\" | getline d; print d}",
    "BEGIN{getline l < \"{f}\"; print l}",
    "BEGIN{print 1 > \"/dev/stderr\"}",
    "BEGIN{printf \"%s\\n\", ENVIRON[\"HOME\"]}",
    "{ printf \"%s\", $0 | \"cat 1>&2\" }",
];

const JQ_FILTERS: &[&str] = &[
    ".",
    ".a",
    "keys",
    "input_filename",
    "$__loc__",
    "env.HOME",
    "[.[]?]",
    "@sh \"echo \\(.)\"",
    "debug",
    "stderr",
    "$ENV.PATH",
    "getpath([\"a\"])",
    "limit(1; .[]?)",
    "include \"x\"; .",
];

const PATTERNS: &[&str] = &["a", "hello", "^x", "[0-9]", ".*", "foo|bar", "-e", "world"];

const TEXTS: &[&str] = &[
    "hello", "a b", "x\\ny", "-n", "%s", "$HOME", "*", "--", "rm -rf x", "",
];

const NUMBERS: &[&str] = &["1", "2", "3", "0", "+1", "10"];

const DATES: &[&str] = &["2000-01-01", "1 day ago", "@0", "now", "tomorrow"];

const BRANCHES: &[&str] = &["feature", "topic/x", "main", "HEAD", "-x"];

/// Programs (with arguments) given as one string to an option that runs it.
const PROGS: &[&str] = &[
    "cat",
    "touch {w}",
    "sh -c 'touch {w}'",
    "gzip",
    "tee {w}",
    "true",
    "date",
];

const VARS: &[&str] = &["X", "v", "OUT", "a"];

/// A value that makes bash run a command when it evaluates it as an
/// arithmetic expression or an array subscript.
const INJECTIONS: &[&str] = &["a[$(touch {w})]", "a[`touch {w}`]", "x[$(cat a.txt >{w})]"];

/// The generator of one line.
pub struct Gen<'r> {
    rng: &'r mut Rng,
    /// Where quoting and spacing choices come from, when apart from the
    /// structure: the same structure in two styles means the same to bash.
    style: Option<Rng>,
    /// Whether `jq` is installed (it is not part of Debian's base system).
    jq: bool,
    depth: usize,
}

/// A generated line: top-level statements and the separators between
/// them, kept apart so that a failing line can be shrunk statement by
/// statement.
#[derive(Clone, Debug)]
pub struct Line {
    pub stmts: Vec<String>,
    /// `seps[i]` follows `stmts[i]`; the last one is not rendered.
    pub seps: Vec<&'static str>,
}

impl Line {
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, s) in self.stmts.iter().enumerate() {
            out.push_str(s);
            if i + 1 < self.stmts.len() {
                // A here-document's terminator must end its line.
                if s.ends_with('\n') {
                    continue;
                }
                out.push_str(self.seps[i]);
            }
        }
        out.trim_end_matches('\n').to_owned()
    }

    /// The line without statement `i`.
    pub fn without(&self, i: usize) -> Line {
        let mut l = self.clone();
        l.stmts.remove(i);
        l.seps.remove(i);
        l
    }
}

const SEPARATORS: &[&str] = &["; ", " && ", " || ", "\n", " | ", ";", " & ", "\n\n"];

impl<'r> Gen<'r> {
    pub fn new(rng: &'r mut Rng, jq: bool) -> Gen<'r> {
        Gen {
            rng,
            style: None,
            jq,
            depth: 0,
        }
    }

    /// A generator whose quoting and spacing come from `style`: lines of
    /// the same `rng` and different styles are the same commands.
    pub fn styled(rng: &'r mut Rng, style: Rng, jq: bool) -> Gen<'r> {
        Gen {
            style: Some(style),
            ..Gen::new(rng, jq)
        }
    }

    fn style(&mut self) -> &mut Rng {
        match &mut self.style {
            Some(r) => r,
            None => self.rng,
        }
    }

    /// A whole line of one to four statements.
    pub fn line(&mut self) -> Line {
        let n = 1 + self.rng.below(4);
        let mut stmts = Vec::with_capacity(n);
        let mut seps = Vec::with_capacity(n);
        for _ in 0..n {
            stmts.push(self.stmt());
            seps.push(self.rng.pick(SEPARATORS));
        }
        Line { stmts, seps }
    }

    /// A short list, for bodies of compound commands and substitutions.
    fn list(&mut self) -> String {
        let n = 1 + self.rng.below(2);
        let mut out = String::new();
        for i in 0..n {
            if i > 0 {
                out.push_str(self.rng.pick(&["; ", " && ", " || ", " | "]));
            }
            if self.depth < 2 && self.rng.chance(15) {
                out.push_str(&self.stmt());
            } else {
                out.push_str(&self.pipeline());
            }
        }
        out
    }

    fn pipeline(&mut self) -> String {
        let mut out = self.simple_with_redirects();
        if self.rng.chance(20) {
            out.push_str(" | ");
            out.push_str(&self.simple_with_redirects());
        }
        out
    }

    /// One top-level statement.
    pub fn stmt(&mut self) -> String {
        let deep = self.depth >= 2;
        let choice = if deep {
            self.rng.below(40)
        } else {
            self.rng.below(120)
        };
        self.depth += 1;
        let s = match choice {
            0..=39 => self.pipeline(),
            40..=43 => format!("( {} ){}", self.list(), self.maybe_redirect()),
            44..=46 => format!("{{ {}; }}{}", self.list(), self.maybe_redirect()),
            47..=53 => self.variable(),
            54..=57 => self.loop_(),
            58..=61 => self.conditional(),
            62..=66 => self.arithmetic(),
            67..=70 => self.exec_fd(),
            71..=73 if self.depth == 1 => self.heredoc(),
            71..=73 => self.pipeline(),
            74..=77 => self.function(),
            78..=85 => self.builtin_trick(),
            86..=91 => self.shell_c(),
            92..=95 => self.xargs(),
            96..=99 => self.cd(),
            100..=105 => self.odd_syntax(),
            112..=119 => self.family31(),
            _ => self.subscript(),
        };
        self.depth -= 1;
        // A comment runs to the end of its line: only at the top, and
        // followed by a newline.
        if self.depth == 0 && !s.ends_with('\n') && self.rng.chance(3) {
            format!("{s} # touch {}\n", self.plain_target())
        } else {
            s
        }
    }

    fn simple_with_redirects(&mut self) -> String {
        let mut s = self.simple();
        if self.rng.chance(30) {
            s.push_str(&self.redirect());
        }
        if self.rng.chance(8) {
            s.push_str(&self.redirect());
        }
        s
    }

    fn maybe_redirect(&mut self) -> String {
        if self.rng.chance(40) {
            self.redirect()
        } else {
            String::new()
        }
    }

    /// A simple command: mostly a reader, sometimes a writer, sometimes
    /// behind a wrapper.
    pub fn simple(&mut self) -> String {
        if self.rng.chance(10) {
            return self.wrapped();
        }
        let prog = if self.rng.chance(15) {
            &WRITERS[self.rng.below(WRITERS.len())]
        } else {
            loop {
                let p = &READERS[self.rng.below(READERS.len())];
                if p.name != "jq" || self.jq {
                    break p;
                }
            }
        };
        let words = self.program_words(prog);
        self.render_words(&words)
    }

    fn wrapped(&mut self) -> String {
        let inner = self.inner_command();
        let w = self.rng.pick(&[
            "timeout 2",
            "timeout -s KILL 2",
            "timeout -k 1 2",
            "nice",
            "nice -n 5",
            "stdbuf -o0",
            "stdbuf -oL",
            "command",
            "command -p",
            "command --",
            "time",
            "time -p",
            "nohup",
            "exec",
            "builtin",
            "env",
            "\\command",
        ]);
        format!("{w} {inner}")
    }

    /// The words of one invocation of `prog`.
    fn program_words(&mut self, prog: &Prog) -> Vec<Word> {
        match prog.name {
            "find" => return self.find_words(),
            "env" => return self.env_words(),
            "git" => return self.git_words(),
            "test" | "[" => return self.test_words(prog.name),
            _ => {}
        }
        let mut opts = Vec::new();
        let nopts = self.rng.below(3);
        for _ in 0..nopts {
            if prog.opts.is_empty() {
                break;
            }
            let t = self.rng.pick(prog.opts);
            opts.extend(self.template(t));
        }
        // GNU programs take options after operands too (unless `--`).
        let late = self.rng.chance(15);
        let mut words = vec![lit(prog.name)];
        if !late {
            words.append(&mut opts);
        }
        let mut nops = if prog.max_operands == 0 {
            0
        } else {
            self.rng.below(prog.max_operands + 1)
        };
        // Programs that need a script get one first.
        let needs_script = matches!(prog.name, "sed" | "awk" | "jq")
            && !words.iter().chain(&opts).any(|w| {
                matches!(w, Word::Lit(s) if s.starts_with("-e")
                    || s.starts_with("-f")
                    || s.starts_with("--file")
                    || s.starts_with("--expression"))
            });
        if needs_script {
            let t = match prog.name {
                "sed" => "{S}",
                "awk" => "{A}",
                _ => "{J}",
            };
            words.extend(self.template(t));
            nops = nops.max(1);
        }
        for _ in 0..nops {
            let t = self.rng.pick(prog.operands);
            if needs_script && t.starts_with('{') && matches!(t, "{S}" | "{A}" | "{J}") {
                words.extend(self.template("{F}"));
            } else {
                words.extend(self.template(t));
            }
        }
        if prog.name == "tr" {
            words.extend(self.template("a-z A-Z"));
        }
        if late {
            if self.rng.chance(20) {
                words.push(lit("--"));
            }
            words.append(&mut opts);
        }
        words
    }

    fn find_words(&mut self) -> Vec<Word> {
        let mut words = vec![lit("find")];
        if self.rng.chance(15) {
            words.push(lit(self.rng.pick(&["-L", "-H", "-P"])));
        }
        words.extend(self.template("{D}"));
        let n = self.rng.below(4);
        for _ in 0..n {
            let t = self.rng.pick(&[
                "-name {P}",
                "-name *.txt",
                "-type f",
                "-type d",
                "-maxdepth 1",
                "-mindepth 1",
                "-newer {F}",
                "-size -1k",
                "-print",
                "-print0",
                "-printf %p\\n",
                "-ls",
                "-empty",
                "-path ./sub/*",
                "-iname A.TXT",
                "-prune",
                "-o",
                "-not -name x",
                "-exec {C} {} {;}",
                "-exec {C} {} +",
                "-execdir {C} {} {;}",
                "-ok {C} {} {;}",
                "-delete",
                "-fprint {W}",
                "-fprint0 {W}",
                "-fprintf {W} %p",
                "-fls {W}",
                "-quit",
            ]);
            words.extend(self.template(t));
        }
        words
    }

    fn env_words(&mut self) -> Vec<Word> {
        let t = self.rng.pick(&[
            "env",
            "env -i {C}",
            "env -u HOME {C}",
            "env X=1 {C}",
            "env -C {D} {C}",
            "env --chdir={D} {C}",
            "env --chdir {D} {C}",
            "env --ch={D} {C}",
            "env -S {CS}",
            "env --split-string={CS}",
            "env -iS {CS}",
            "env --ignore-environment {C}",
            "env -- {C}",
            "env -0",
            "env -v {C}",
            "env --default-signal {C}",
            "env --block-signal {C}",
            "env PATH=/bin {C}",
            "env -u X -C {D} {C}",
        ]);
        self.template(t)
    }

    fn git_words(&mut self) -> Vec<Word> {
        let mut words = vec![lit("git")];
        if self.rng.chance(30) {
            let t = self.rng.pick(&[
                "-C {D}",
                "-c core.pager={PROG}",
                "-c color.ui=never",
                "--no-pager",
                "-p",
                "--paginate",
                "--git-dir=.git",
                "--work-tree=.",
                "-P",
                "--no-optional-locks",
                "-c core.fsmonitor={PROG}",
                "-c diff.external={PROG}",
                "-c core.hooksPath={D}",
                "-c alias.st=status",
                "--config-env=core.pager=HOME",
                "-c core.editor={PROG}",
                "-c grep.fallbackToNoIndex=true",
            ]);
            words.extend(self.template(t));
        }
        let (sub, opts): (&str, &[&str]) = self.rng.pick(&[
            (
                "status",
                &[
                    "-s",
                    "--porcelain",
                    "-b",
                    "--short",
                    "-uno",
                    "--ignored",
                    "-- {F}",
                ] as &[&str],
            ),
            (
                "diff",
                &[
                    "--stat",
                    "--cached",
                    "HEAD",
                    "--name-only",
                    "-U1",
                    "--no-index {F} {F}",
                    "--output={W}",
                    "--output {W}",
                    "--ext-diff",
                    "--textconv",
                    "--no-color",
                    "-- {F}",
                    "--exit-code",
                    "-R",
                ],
            ),
            (
                "log",
                &[
                    "-1",
                    "--oneline",
                    "-p",
                    "--stat",
                    "--format=%H",
                    "--graph",
                    "--all",
                    "--output={W}",
                    "-n2",
                    "--follow -- {F}",
                    "--name-status",
                    "-Sx",
                    "--decorate",
                ],
            ),
            (
                "show",
                &[
                    "HEAD",
                    "HEAD:a.txt",
                    "--stat",
                    "--name-only",
                    "--format=%s",
                    "--output={W}",
                    "-s",
                    "--textconv",
                ],
            ),
            (
                "branch",
                &[
                    "-a",
                    "-v",
                    "--show-current",
                    "--list",
                    "{BR}",
                    "-D {BR}",
                    "-m {BR} {BR}",
                    "-c {BR}",
                    "--contains HEAD",
                    "--sort=-committerdate",
                    "-r",
                    "--no-color",
                    "-f {BR}",
                    "--edit-description",
                ],
            ),
            (
                "grep",
                &[
                    "-n {P}",
                    "-i {P}",
                    "-l {P}",
                    "-c {P}",
                    "-e {P}",
                    "-O{PROG} {P}",
                    "--open-files-in-pager={PROG} {P}",
                    "-O {P}",
                    "--no-index {P}",
                    "--untracked {P}",
                    "-E {P}",
                    "--threads=1 {P}",
                    "--max-depth=1 {P}",
                    "-p {P}",
                ],
            ),
        ]);
        words.push(lit(sub));
        let n = self.rng.below(3);
        for _ in 0..n {
            let t = self.rng.pick(opts);
            words.extend(self.template(t));
        }
        if sub == "grep" && words.len() == 2 {
            words.extend(self.template("{P}"));
        }
        words
    }

    fn test_words(&mut self, name: &str) -> Vec<Word> {
        let t = self.rng.pick(&[
            "-f {F}",
            "-e {F}",
            "-d {D}",
            "-s {F}",
            "-w {F}",
            "-n {T}",
            "-z {T}",
            "{F} -nt {F}",
            "x = y",
            "-v X",
            "1 -eq 1",
            "-r {F} -a -x {F}",
            "! -e {W}",
        ]);
        let mut words = vec![lit(name)];
        words.extend(self.template(t));
        if name == "[" {
            words.push(lit("]"));
        }
        words
    }

    /// An inner command given as separate words (`xargs C`, `env C`).
    fn inner_command(&mut self) -> String {
        let prog = if self.rng.chance(30) {
            &WRITERS[self.rng.below(WRITERS.len())]
        } else {
            loop {
                let p = &READERS[self.rng.below(READERS.len())];
                if !matches!(p.name, "env" | "git" | "find" | "test" | "[")
                    && (p.name != "jq" || self.jq)
                {
                    break p;
                }
            }
        };
        let words = self.program_words(prog);
        self.render_words(&words)
    }

    /// Expands a template into words.
    fn template(&mut self, t: &str) -> Vec<Word> {
        let mut out = Vec::new();
        for part in t.split(' ') {
            match part {
                "{C}" => out.push(Word::Raw(self.inner_command())),
                "{CS}" => {
                    let c = self.inner_command();
                    out.push(Word::Lit(c));
                }
                "{;}" => out.push(lit(";")),
                "{}" => out.push(raw("{}")),
                _ => out.push(self.expand_part(part)),
            }
        }
        out
    }

    /// One template word, with placeholders inside it (`--output={W}`).
    fn expand_part(&mut self, part: &str) -> Word {
        let mut pieces = Vec::new();
        let mut rest = part;
        while let Some(start) = rest.find('{') {
            let Some(len) = rest[start..].find('}') else {
                break;
            };
            let name = &rest[start + 1..start + len];
            let value = match name {
                "F" => Some(self.read_path()),
                "W" => Some(self.write_path()),
                "D" => Some(self.dir_path()),
                "P" => Some(Word::Lit(self.rng.pick(PATTERNS).to_owned())),
                "N" => Some(lit(self.rng.pick(NUMBERS))),
                "T" => Some(self.text()),
                "V" => Some(lit(self.rng.pick(VARS))),
                "S" => {
                    let t = self.rng.pick(SED_SCRIPTS);
                    Some(Word::Lit(self.fill(t)))
                }
                "A" => {
                    let t = self.rng.pick(AWK_PROGRAMS);
                    Some(Word::Lit(self.fill(t)))
                }
                "J" => Some(lit(self.rng.pick(JQ_FILTERS))),
                "DATE" => Some(lit(self.rng.pick(DATES))),
                "BR" => Some(lit(self.rng.pick(BRANCHES))),
                "PROG" => {
                    let t = self.rng.pick(PROGS);
                    Some(Word::Lit(self.fill(t)))
                }
                _ => None,
            };
            match value {
                Some(v) => {
                    if start > 0 {
                        pieces.push(Word::Lit(rest[..start].to_owned()));
                    }
                    pieces.push(v);
                }
                None => pieces.push(Word::Lit(rest[..start + len + 1].to_owned())),
            }
            rest = &rest[start + len + 1..];
        }
        if !rest.is_empty() {
            pieces.push(Word::Lit(rest.to_owned()));
        }
        match pieces.len() {
            1 => pieces.pop().unwrap_or_else(|| lit("")),
            _ => Word::Cat(pieces),
        }
    }

    /// Replaces `{w}` and `{f}` in a script with plain names.
    fn fill(&mut self, t: &str) -> String {
        let w = self.plain_target();
        let f = self
            .rng
            .pick(&["a.txt", "b.txt", "notes.md", "aileron.yaml"]);
        t.replace("{w}", &w).replace("{f}", f)
    }

    /// A name written, as plain text (for scripts and strings).
    fn plain_target(&mut self) -> String {
        self.rng
            .pick(&[
                "new.txt",
                "out.txt",
                "pwned.txt",
                "sub/new.txt",
                "aileron.yaml",
                ".aileron/x",
            ])
            .to_owned()
    }

    fn text(&mut self) -> Word {
        if self.rng.chance(10) && self.depth < 3 {
            return self.substitution();
        }
        Word::Lit(self.rng.pick(TEXTS).to_owned())
    }

    /// `$(..)`, backticks or a process substitution, as a word.
    fn substitution(&mut self) -> Word {
        self.depth += 1;
        let inner = if self.depth > 3 {
            "cat a.txt".to_owned()
        } else {
            self.list()
        };
        self.depth -= 1;
        let w = match self.rng.below(6) {
            0 | 1 => format!("$({inner})"),
            2 => format!("\"$({inner})\""),
            3 => format!("`{}`", inner.replace('\\', "\\\\").replace('`', "\\`")),
            4 => format!("<({inner})"),
            _ => format!(">({inner})"),
        };
        Word::Raw(w)
    }

    fn read_path(&mut self) -> Word {
        match self.rng.below(20) {
            0 => raw(self.rng.pick(GLOBS)),
            1 => raw(self.rng.pick(BRACES)),
            2 if self.depth < 3 => self.substitution(),
            3 => Word::Cat(vec![raw("~/../"), lit(self.rng.pick(FILES))]),
            4 => Word::Cat(vec![lit("./"), lit(self.rng.pick(FILES))]),
            5 => Word::Cat(vec![lit("sub/../"), lit(self.rng.pick(FILES))]),
            6 => raw("~/notes.txt"),
            7 => raw("-"),
            _ => lit(self.rng.pick(FILES)),
        }
    }

    fn write_path(&mut self) -> Word {
        match self.rng.below(20) {
            0 => raw(self.rng.pick(GLOBS)),
            1 => raw(self.rng.pick(BRACES)),
            2 => Word::Cat(vec![raw("~/"), lit("new.txt")]),
            3 => Word::Cat(vec![raw("~/../"), lit(self.rng.pick(TARGETS))]),
            4 => Word::Cat(vec![raw("\"$HOME\"/"), lit(".aileron/settings.yaml")]),
            5 => Word::Cat(vec![lit("./"), lit(self.rng.pick(TARGETS))]),
            6 => Word::Cat(vec![lit("sub/../"), lit(self.rng.pick(TARGETS))]),
            7 => raw("/dev/null"),
            8 => raw("/dev/stderr"),
            _ => lit(self.rng.pick(TARGETS)),
        }
    }

    fn dir_path(&mut self) -> Word {
        match self.rng.below(10) {
            0 => raw("~"),
            1 => raw("~/.."),
            2 => raw("sub/*/"),
            _ => lit(self.rng.pick(DIRS)),
        }
    }

    /// Renders words, each quoted in a random way that keeps its value.
    fn render_words(&mut self, words: &[Word]) -> String {
        let mut out = String::new();
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                out.push_str(match self.style().below(40) {
                    0 => "  ",
                    1 => "\t",
                    2 => " \\\n",
                    _ => " ",
                });
            }
            out.push_str(&self.render(w));
        }
        out
    }

    fn render(&mut self, w: &Word) -> String {
        match w {
            Word::Raw(s) => s.clone(),
            Word::Lit(s) => self.quote(s),
            Word::Cat(ws) => ws.iter().map(|w| self.render(w)).collect(),
        }
    }

    /// Quotes `s` in one of bash's ways, keeping its value.
    pub fn quote(&mut self, s: &str) -> String {
        if s.is_empty() {
            return (self.style().pick(&["''", "\"\"", "$''"])).to_owned();
        }
        let plain = s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/+,:=%@^".contains(c));
        let choice = self.style().below(14);
        match choice {
            0..=5 if plain => s.to_owned(),
            0..=3 | 6 if !s.contains('\'') => format!("'{s}'"),
            7 => dquote(s),
            8 => {
                // ANSI-C quoting, with some characters as hex escapes.
                let mut out = String::from("$'");
                for c in s.chars() {
                    match c {
                        '\'' => out.push_str("\\'"),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        c if c.is_ascii() && self.style().chance(30) => {
                            out.push_str(&format!("\\x{:02x}", c as u32));
                        }
                        c => out.push(c),
                    }
                }
                out.push('\'');
                out
            }
            9 => {
                // Backslashes before every special character and some others.
                let mut out = String::new();
                for c in s.chars() {
                    if c == '\n' {
                        out.push_str("$'\\n'");
                    } else if !c.is_ascii_alphanumeric() || self.style().chance(20) {
                        out.push('\\');
                        out.push(c);
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            11 if plain && s.len() > 1 => {
                // A backslash-newline inside a word disappears.
                let cut = 1 + self.style().below(s.len() - 1);
                format!("{}\\\n{}", &s[..cut], &s[cut..])
            }
            12 if !s.contains(['"', '\\', '$', '`']) => format!("$\"{s}\""),
            10 if s.len() > 1 && s.is_char_boundary(1) => {
                // Two halves quoted differently.
                let cut = 1 + self.style().below(s.len() - 1);
                let cut = (cut..=s.len())
                    .find(|&i| s.is_char_boundary(i))
                    .unwrap_or(s.len());
                let (a, b) = s.split_at(cut);
                format!("{}{}", dquote(a), self.quote(b))
            }
            _ => dquote(s),
        }
    }

    fn redirect(&mut self) -> String {
        let w = self.write_path();
        let w = self.render(&w);
        let f = self.read_path();
        let f = self.render(&f);
        match self.rng.below(26) {
            0 => format!(" > {w}"),
            1 => format!(" >> {w}"),
            2 => format!(" < {f}"),
            3 => format!(" 2> {w}"),
            4 => format!(" 2>> {w}"),
            5 => format!(" &> {w}"),
            6 => format!(" &>> {w}"),
            7 => format!(" >| {w}"),
            8 => format!(" 3< {f}"),
            9 => format!(" 3> {w}"),
            10 => format!(" 3<> {w}"),
            11 => format!(" <> {w}"),
            12 => " >&2".to_owned(),
            13 => " 2>&1".to_owned(),
            14 => format!(" 3>{w} 1>&3"),
            15 => format!(" >& {w}"),
            16 => " 2>/dev/null".to_owned(),
            17 => format!(" <<< {}", self.quote("a.txt")),
            18 => format!(" {{fd}}> {w}"),
            19 => format!(" > >(tee {w})"),
            20 => format!(" 2> >(cat > {w})"),
            21 => format!(" >{w}"),
            22 => format!(" 1>{w}"),
            23 => format!(" 4>&1 >{w}"),
            24 => " >/dev/stdout".to_owned(),
            _ => format!(" 0<{f}"),
        }
    }

    /// Assignments and their use.
    fn variable(&mut self) -> String {
        let v = self.rng.pick(VARS);
        let target = self.plain_target();
        let prog = self.rng.pick(&["cat", "touch", "ls", "rm", "sort"]);
        let inj = self.rng.pick(INJECTIONS);
        let inj = self.fill(inj);
        let cmd = self.simple();
        let qt = self.quote(&target);
        let qinj = self.quote(&inj);
        match self.rng.below(22) {
            0 => format!("{v}={qt}; echo hi > ${v}"),
            1 => format!("{v}={qt}; cat a.txt > \"${v}\""),
            2 => format!("{v}={prog}; ${v} {qt}"),
            3 => format!("{v}=-o; sort ${v} {qt} a.txt"),
            4 => format!("{v}={qt} {cmd}"),
            5 => format!("export {v}={qt}; {cmd}"),
            6 => format!("read {v} <<< {qt}; echo x > \"${v}\""),
            7 => format!("printf -v {v} %s {qt}; tee \"${v}\" < a.txt"),
            8 => format!("declare {v}={qt}; cp a.txt ${v}"),
            9 => format!("echo x > ${{{v}:-{target}}}"),
            10 => format!(": ${{{v}:={target}}}; touch ${v}"),
            11 => format!("A=({qt} b.txt); cat a.txt > \"${{A[0]}}\""),
            12 => format!("set -- {qt}; echo x >> \"$1\""),
            13 => format!("{v}='$(touch {target})'; echo ${{{v}@P}}"),
            14 => format!("{v}={qinj}; echo $(( {v} ))"),
            15 => format!("{v}={qinj}; (( {v} ))"),
            16 => format!("{v}={qinj}; [[ ${v} -eq 0 ]]"),
            17 => format!("{v}={qinj}; [[ -v ${v} ]]"),
            18 => format!("{v}={qinj}; printf -v \"${v}\" x"),
            19 => format!("{v}={qinj}; read \"${v}\" <<< 1"),
            20 => format!("declare -i n; {v}={qinj}; n={v}"),
            _ => format!("{v}={qinj}; test -v \"${v}\""),
        }
    }

    fn loop_(&mut self) -> String {
        let body = self.list();
        let w = self.plain_target();
        match self.rng.below(7) {
            0 => format!("for f in a.txt b.txt; do {body}; done"),
            1 => format!("for f in *.txt; do cat \"$f\" > {w}; done"),
            2 => format!("for f in {w} x; do echo > $f; done"),
            3 => format!("for ((i=0; i<2; i++)); do {body}; done"),
            4 => format!("while read -r l; do {body}; done < list.txt"),
            5 => format!("until true; do {body}; done; {body}"),
            _ => "for f in $(cat list.txt); do touch \"$f.bak\"; done".to_owned(),
        }
    }

    fn conditional(&mut self) -> String {
        let body = self.list();
        let f = self.read_path();
        let f = self.render(&f);
        match self.rng.below(8) {
            0 => format!("[[ -f {f} ]] && {body}"),
            1 => format!("[[ a == a ]] || {body}"),
            2 => format!("if test -e {f}; then {body}; fi"),
            3 => format!("if [ -s {f} ]; then {body}; else {}; fi", self.list()),
            4 => format!("case {f} in *.txt) {body};; *) ;; esac"),
            5 => format!("[[ $(cat {f}) == x ]] || {body}"),
            6 => format!("! {body}"),
            _ => format!("test -d sub && {body}"),
        }
    }

    fn arithmetic(&mut self) -> String {
        let w = self.plain_target();
        match self.rng.below(10) {
            0 => "(( i = 1 + 2 ))".to_owned(),
            1 => "echo $(( 1 + 2 ))".to_owned(),
            2 => "echo $(( $(wc -l < a.txt) + 1 ))".to_owned(),
            3 => format!("(( a[$(touch {w})] ))"),
            4 => format!("echo $(( `touch {w}` 1 ))"),
            5 => format!("S=abc; echo ${{S:$(touch {w}; echo 1)}}"),
            6 => format!("A=(1 2); echo ${{A[$(touch {w})]}}"),
            7 => format!("let \"x = $(touch {w}; echo 1)\""),
            8 => format!("for ((i=$(touch {w}; echo 0); i<1; i++)); do :; done"),
            _ => format!("[[ 1 -eq $(touch {w}; echo 1) ]]"),
        }
    }

    fn exec_fd(&mut self) -> String {
        let w = self.write_path();
        let w = self.render(&w);
        let f = self.read_path();
        let f = self.render(&f);
        match self.rng.below(8) {
            0 => format!("exec 3> {w}; echo hi >&3"),
            1 => format!("exec 3<{f}; cat <&3"),
            2 => format!("exec 4<> {w}; echo x >&4"),
            3 => format!("exec {{fd}}>{w}; echo x >&$fd"),
            4 => format!("exec 5>>{w}; cat a.txt 1>&5"),
            5 => format!("exec 3>{w}; exec 1>&3; cat a.txt"),
            6 => format!("exec > {w}; ls"),
            _ => format!("exec 3>{w} 4>&3; echo x >&4"),
        }
    }

    fn heredoc(&mut self) -> String {
        let w = self.plain_target();
        let cmd = self.list();
        match self.rng.below(5) {
            0 => format!("cat <<EOF > {w}\nhello\nEOF\n"),
            1 => format!("cat <<'EOF'\n$(touch {w})\nEOF\n"),
            2 => format!("cat <<EOF\n$({cmd})\nEOF\n"),
            3 => format!("cat <<-EOF\n\t`touch {w}`\n\tEOF\n"),
            _ => format!("cat <<EOF | {cmd}\nx\nEOF\n"),
        }
    }

    fn function(&mut self) -> String {
        let body = self.list();
        let name = self.rng.pick(&["f", "cat", "ls", "echo", "git"]);
        match self.rng.below(4) {
            0 => format!("{name}() {{ {body}; }}; {name}"),
            1 => format!("function {name} {{ {body}; }}; {name} a.txt"),
            2 => format!("command_not_found_handle() {{ {body}; }}; no-such-cmd"),
            _ => format!("{name}() {{ {body}; }}"),
        }
    }

    /// Builtins that run strings or change what a name runs.
    fn builtin_trick(&mut self) -> String {
        let w = self.plain_target();
        let cmd = self.inner_command();
        let qcmd = self.quote(&cmd);
        match self.rng.below(18) {
            0 => format!("hash -p /usr/bin/touch cat; cat {w}"),
            1 => format!("hash -p /usr/bin/tee ls; echo x | ls {w}"),
            2 => format!("trap {qcmd} EXIT; cat a.txt"),
            3 => format!("trap {qcmd} ERR; false"),
            4 => format!("mapfile -C {qcmd} -c 1 < a.txt"),
            5 => format!("readarray -t -C {qcmd} -c 1 l < list.txt"),
            6 => "enable -n echo; echo x".to_owned(),
            7 => format!("shopt -s expand_aliases\nalias ls={qcmd}\nls"),
            8 => ". ./lib.sh".to_owned(),
            9 => "source lib.sh".to_owned(),
            10 => "bash lib.sh".to_owned(),
            11 => "sh < lib.sh".to_owned(),
            12 => format!("eval {qcmd}"),
            13 => format!("PS4='$(touch {w})'; set -x; true"),
            14 => format!("coproc {cmd}"),
            15 => format!("exec -a ls {cmd}"),
            16 => format!("BASH_ENV=lib.sh bash -c {}", self.quote("true")),
            _ => format!("{cmd} & wait"),
        }
    }

    /// Redirections without a command or before it, expansions that run
    /// commands, shell options that change what a word names.
    fn odd_syntax(&mut self) -> String {
        let w = self.write_path();
        let w = self.render(&w);
        let t = self.plain_target();
        let cmd = self.inner_command();
        let qcmd = self.quote(&cmd);
        match self.rng.below(26) {
            // Redirections of commands that are no simple command.
            22 => format!("{{ (( i = 1 )); }} > {w}"),
            23 => format!("[[ -f a.txt ]] > {w}"),
            24 => format!("(( 1 )) > {w}"),
            25 => format!("for i in; do :; done > {w}"),
            0 => format!("> {w}"),
            1 => format!(": > {w}"),
            2 => format!("X=1 > {w}"),
            3 => format!("> {w} cat a.txt"),
            4 => format!("< a.txt > {w} sort"),
            5 => format!("cat > {w} a.txt"),
            6 => format!("echo ${{X:-$({cmd})}}"),
            7 => format!("echo \"${{X:=`touch {t}`}}\""),
            8 => format!("echo ${{X/a/$({cmd})}}"),
            9 => format!("echo $[ $(touch {t}) 1 ]"),
            10 => format!("cat <<< \"$({cmd})\""),
            11 => "shopt -s extglob; cat a.txt > @(aileron.yaml)".to_owned(),
            12 => "shopt -s nocaseglob; echo x > AILERON.Y*".to_owned(),
            13 => "shopt -s dotglob; ls -d *".to_owned(),
            14 => "shopt -s globstar; cat a.txt > **/d.txt".to_owned(),
            15 => format!("HOME=sub; echo x > ~/{t}"),
            16 => format!("HOME=sub; cd; {cmd}"),
            17 => format!("source /dev/stdin <<< {qcmd}"),
            18 => format!(". <(echo {qcmd})"),
            19 => format!("bash <<< {qcmd}"),
            20 => format!("compgen -C {qcmd} x"),
            _ => format!("trap {qcmd} DEBUG; :"),
        }
    }

    /// The families of issue 31: NUL in `$'...'`, input redirections from
    /// words with expansions, functions called where they are not defined
    /// as the program named, integer variables, bash's own state, and a
    /// file a runner loads written by the same line.
    fn family31(&mut self) -> String {
        let t = self.plain_target();
        let qt = self.quote(&t);
        let inj = self.rng.pick(INJECTIONS);
        let filled = self.fill(inj);
        let qinj = self.quote(&filled);
        let body = self.list();
        let name = self.rng.pick(&["cat", "ls", "git", "grep", "f"]);
        let nul = self
            .rng
            .pick(&["\\0", "\\x00", "\\u0000", "\\U00000000", "\\c@", "\\000"]);
        // `{c..c}` in place of the last character of the target.
        let (stem, last) = t.split_at(t.len() - 1);
        match self.rng.below(30) {
            0 => format!("echo x > $'{t}{nul}.off'"),
            1 => format!("tee $'{t}{nul}z' < a.txt"),
            2 => format!("cp a.txt {stem}$'{last}{nul}x'"),
            3 => format!("cat $'a.txt{nul}'; echo x > $'{nul}'{qt}"),
            4 => format!("F={qt}; cat 0< \"$F\"; exec 3<\"$F\"; cat <&3 > $'{t}'"),
            5 => format!("X=$(< \"${{F:-a.txt}}\"); echo \"$X\" > {qt}"),
            6 => format!("{name}() {{ {body}; }}; cd sub && {name} a.txt"),
            7 => format!("for i in 1 2; do {name} a.txt; {name}() {{ echo x > {qt}; }}; done"),
            8 => format!("({name}() {{ :; }}); {name} a.txt"),
            9 => format!(
                "{name}() {{ touch {qt}; }}; export -f {name}; bash -c {}",
                self.quote(name)
            ),
            10 => format!("declare -i n; read n <<< {qinj}"),
            11 => format!("declare -i n; for n in {qinj}; do :; done"),
            12 => format!("declare -i n; printf -v n %s {qinj}"),
            13 => format!("for i in 1 2; do echo $((v)); v={qinj}; done"),
            14 => format!("f() {{ echo $((w)); }}; w={qinj}; f"),
            15 => format!("declare -i n; export n={qinj}"),
            16 => format!("BASH_CMDS[cat]=/usr/bin/touch; cat {qt}"),
            17 => format!(": ${{BASH_CMDS[ls]:=/usr/bin/touch}}; ls {qt}"),
            18 => format!("set -k; bash -c 'echo x > \"$W\"' W={qt}"),
            19 => format!("set -o keyword; env W={qt} bash -c 'echo x > \"$W\"'"),
            20 => format!("PWD=$PWD/sub; echo x > ~+/{qt}"),
            21 => format!("OLDPWD=$PWD/sub; echo x > ~-/{qt}"),
            22 => format!("echo x > {stem}{{{last}..{last}}}"),
            23 => format!("tee {stem}{{{last}..{last}}} < a.txt"),
            24 => format!("declare -n r=BASH_CMDS; r[cat]=/usr/bin/touch; cat {qt}"),
            25 => format!("printf 'all:\\n\\ttouch {t}\\n' > Makefile; make -s"),
            26 => format!(
                "echo '{{\"scripts\":{{\"test\":\"touch {t}\"}}}}' > package.json; npm test -s"
            ),
            27 => format!("echo 'open(\"{t}\", \"w\")' > pytest.py; python3 -m pytest"),
            28 => format!("cd sub; for i in 1 2; do cd ..; done; echo x > {qt}"),
            _ => format!("GLOBIGNORE=x; cat a.txt > {stem}*"),
        }
    }

    /// Builtins that evaluate an array subscript, which runs the command
    /// substitutions in it, given the subscript as a literal.
    fn subscript(&mut self) -> String {
        let t = self.plain_target();
        let sub = self.quote(&format!("a[$(touch {t})]"));
        let cmd = self.inner_command();
        let func = self.quote(&format!("BASH_FUNC_cat%%=() {{ {cmd}; }}"));
        match self.rng.below(12) {
            0 => format!("unset {sub}"),
            1 => format!("[[ -v {sub} ]]"),
            2 => format!("printf -v {sub} x"),
            3 => format!("read {sub} <<< 1"),
            4 => format!("test -v {sub}"),
            5 => format!("declare {}", self.quote(&format!("a[$(touch {t})]=1"))),
            6 => format!("X={sub}; echo ${{!X}}"),
            7 => format!("declare -n r={sub}; echo \"$r\""),
            8 => format!("a[$(touch {t})]=1"),
            9 => format!("env {func} bash -c 'cat a.txt'"),
            10 => format!("f() {{ {cmd}; }}; export -f f; bash -c f"),
            _ => format!("mapfile -t {sub} < a.txt"),
        }
    }

    /// `bash -c` / `sh -c` with a payload line.
    fn shell_c(&mut self) -> String {
        self.depth += 1;
        let payload = self.list();
        self.depth -= 1;
        let q = self.quote(&payload);
        let sh = self
            .rng
            .pick(&["bash", "sh", "/bin/sh", "bash -e", "bash --norc", "dash"]);
        match self.rng.below(4) {
            0 => format!("{sh} -c {q} _ a.txt"),
            1 => format!("echo {q} | {sh}"),
            _ => format!("{sh} -c {q}"),
        }
    }

    fn xargs(&mut self) -> String {
        let src = self.rng.pick(&[
            "echo a.txt",
            "cat list.txt",
            "printf '%s\\0' a.txt b.txt",
            "find . -name '*.txt' -print0",
            "ls",
        ]);
        let opts = self.rng.pick(&[
            "", "-0 ", "-n1 ", "-r ", "-t ", "-P2 ", "-L1 ", "-x ", "--null ", "-d , ", "-s 100 ",
        ]);
        let cmd = self.inner_command();
        match self.rng.below(6) {
            0 => format!("{src} | xargs {opts}"),
            1 => format!("{src} | xargs {opts}-I {{}} {cmd} {{}}"),
            2 => format!("xargs -a list.txt {opts}{cmd}"),
            3 => format!("xargs --arg-file=list.txt {cmd}"),
            _ => format!("{src} | xargs {opts}{cmd}"),
        }
    }

    fn cd(&mut self) -> String {
        let cmd = self.simple_with_redirects();
        match self.rng.below(12) {
            // A cd that may not happen.
            8 => format!("false && cd sub; {cmd}"),
            9 => format!("cd nosuchdir; {cmd}"),
            10 => format!("[ -d sub ] || cd sub; {cmd}"),
            11 => format!("cd sub 2>/dev/null | :; {cmd}"),
            0 => format!("cd sub && {cmd}"),
            1 => format!("cd ~ && {cmd}"),
            2 => format!("pushd sub >/dev/null; {cmd}; popd >/dev/null"),
            3 => format!("CDPATH=sub cd deep && {cmd}"),
            4 => format!("cd \"$(echo sub)\" && {cmd}"),
            5 => format!("OLDPWD=sub cd - >/dev/null && {cmd}"),
            6 => format!("cd sub/deep; cd ../..; {cmd}"),
            _ => format!("(cd sub; {cmd}); {cmd}"),
        }
    }
}

/// Double quotes, escaping what is special inside them.
fn dquote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Escapes a line for `regressions.txt`: one case a line.
pub fn escape(line: &str) -> String {
    line.replace('\\', "\\\\").replace('\n', "\\n")
}

/// The inverse of [`escape`]; a backslash before anything but `\` and
/// `n` is kept, so hand-written cases need not double every backslash.
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\\') => {
                    out.push('\\');
                    chars.next();
                }
                Some('n') => {
                    out.push('\n');
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}
