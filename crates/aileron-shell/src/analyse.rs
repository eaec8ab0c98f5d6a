//! The analyser: checks the limits, parses with brush-parser, walks the
//! syntax tree and builds one [`SimpleCommand`] per command the line runs.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use brush_parser::ast;

use crate::classify::{self, Cd, Facts, Inner, PathRef, wrappers};
use crate::loads;
use crate::paths;
use crate::prescan;
use crate::tags;
use crate::vars;
use crate::words::{self, Word};
use crate::{Analysis, Context, Sensitivity, SimpleCommand};

/// Lines whose every possible nesting fits in this many levels are parsed on
/// the caller's stack; others get a thread with a stack sized for them.
const SAFE_INLINE: usize = 24;
const STACK_PER_LEVEL: usize = 64 * 1024;
const STACK_BASE: usize = 8 << 20;
const STACK_MAX: usize = 256 << 20;

/// Environment variables that make programs run another program.
const EXEC_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_COUNT",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PERL5OPT",
    "PYTHONSTARTUP",
    "NODE_OPTIONS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "LESSOPEN",
    "LESSCLOSE",
    "PATH",
    "BROWSER",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    // Where programs read their configuration (git's `core.pager`,
    // `core.fsmonitor`, hooks, ...): pointed at a file the agent wrote,
    // they run what it says.
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_TEMPLATE_DIR",
    "GIT_ATTR_SOURCE",
    "CDPATH",
];

/// Whether setting `name` to `value` makes a program write the file `value`
/// names (`GIT_TRACE=/path`, `SSLKEYLOGFILE`, history files, ...).
fn writes_to_value(name: &str, value: &str) -> bool {
    const PATH_VARS: &[&str] = &[
        "SSLKEYLOGFILE",
        "HISTFILE",
        "LESSHISTFILE",
        "NODE_REPL_HISTORY",
        "PYTHON_HISTORY",
        "MYSQL_HISTFILE",
        "PSQL_HISTORY",
        "SQLITE_HISTORY",
        "REDISCLI_HISTFILE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "CARGO_TARGET_DIR",
        "TMPDIR",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
    ];
    if name.starts_with("GIT_TRACE") {
        // A number is a descriptor, `true`/`1`/`2` standard error.
        let v = value.to_ascii_lowercase();
        return !(v.is_empty()
            || v.bytes().all(|b| b.is_ascii_digit())
            || matches!(v.as_str(), "true" | "false" | "yes" | "no" | "on" | "off"));
    }
    PATH_VARS.contains(&name)
}

/// Of those, the ones whose value is a command line.
const LINE_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "PROMPT_COMMAND",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
];

/// Analyses one command line. Never panics; bounded in time and stack by
/// `ctx.limits`.
pub fn analyse(line: &str, ctx: &Context) -> Analysis {
    let limits = ctx.limits;
    if line.len() > limits.max_len {
        return opaque(format!(
            "command line is {} bytes long, over the limit of {}",
            line.len(),
            limits.max_len
        ));
    }
    if line.contains('\0') {
        // bash reads a command line as a C string: it would stop there.
        return opaque("the command line holds a NUL byte, where bash stops reading it".to_owned());
    }
    let scan = prescan::scan(line);
    if scan.depth > limits.max_depth {
        return opaque(too_deep(limits.max_depth));
    }
    if scan.separators > limits.max_commands.saturating_mul(4) {
        return opaque(too_many(limits.max_commands));
    }
    if let Some(why) = scan.bad_heredoc {
        return opaque(format!("parse error: {why}"));
    }
    if scan.raw <= SAFE_INLINE {
        return run(line, ctx);
    }
    let stack = STACK_BASE
        .saturating_add(scan.raw.saturating_mul(STACK_PER_LEVEL))
        .min(STACK_MAX);
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("aileron-shell".to_owned())
            .stack_size(stack)
            .spawn_scoped(s, || run(line, ctx));
        match spawned {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                opaque("internal error while analysing the command line".to_owned())
            }),
            Err(_) => opaque("not enough memory to analyse this command line".to_owned()),
        }
    })
}

fn opaque(reason: String) -> Analysis {
    Analysis {
        commands: Vec::new(),
        opaque: Some(reason),
    }
}

fn too_deep(max: usize) -> String {
    format!("command line nests deeper than {max} levels")
}

fn too_many(max: usize) -> String {
    format!("command line has more than {max} commands")
}

fn run(line: &str, ctx: &Context) -> Analysis {
    catch_unwind(AssertUnwindSafe(|| {
        let program = match parse(line) {
            Ok(p) => p,
            Err(reason) => return opaque(reason),
        };
        let mut w = Walker::new(ctx);
        w.program(&program, line, Env::top());
        w.finish()
    }))
    .unwrap_or_else(|_| opaque("internal error while analysing the command line".to_owned()))
}

/// Parses a whole command line (or a payload) with brush-parser.
fn parse(text: &str) -> Result<ast::Program, String> {
    let opts = words::parser_options();
    let parsed = catch_unwind(AssertUnwindSafe(|| {
        brush_parser::Parser::new(text.as_bytes(), &opts).parse_program()
    }));
    match parsed {
        Ok(Ok(p)) => Ok(p),
        Ok(Err(e)) => Err(describe(&e)),
        Err(_) => Err("parse error: the shell parser failed on this input".to_owned()),
    }
}

fn at(p: &brush_parser::SourcePosition) -> String {
    if p.line <= 1 {
        format!("at column {}", p.column)
    } else {
        format!("at line {} column {}", p.line, p.column)
    }
}

fn describe(e: &brush_parser::ParseError) -> String {
    use brush_parser::{ParseError as P, TokenizerError as T};
    match e {
        P::ParsingNear(pos) => format!("parse error: syntax error {}", at(pos)),
        P::ParsingAtEndOfInput => "parse error: unexpected end of input".to_owned(),
        P::Tokenizing { inner, .. } => match inner {
            T::UnterminatedSingleQuote(p) => {
                format!("parse error: unterminated single quote {}", at(p))
            }
            T::UnterminatedDoubleQuote(p) => {
                format!("parse error: unterminated double quote {}", at(p))
            }
            T::UnterminatedAnsiCQuote(p) => {
                format!("parse error: unterminated $'...' quote {}", at(p))
            }
            T::UnterminatedBackquote(p) => format!("parse error: unterminated backquote {}", at(p)),
            T::UnterminatedExtendedGlob(p) => {
                format!("parse error: unterminated extended glob {}", at(p))
            }
            T::UnterminatedCommandSubstitution => {
                "parse error: unterminated command substitution".to_owned()
            }
            T::UnterminatedExpansion => "parse error: unterminated `$(`, `$((` or `${`".to_owned(),
            T::UnterminatedVariable => "parse error: unterminated `${`".to_owned(),
            T::UnterminatedEscapeSequence => {
                "parse error: backslash at the end of input".to_owned()
            }
            T::UnterminatedHereDocuments(tags, _) => {
                format!("parse error: unterminated here-document (no line `{tags}`)")
            }
            other => format!("parse error: {other}"),
        },
    }
}

/// Where standard input of a command comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stdin {
    Default,
    Pipe,
    File,
    ProcSub,
}

/// What a command inherits from where it appears.
#[derive(Clone, Copy, Debug)]
struct Env {
    depth: usize,
    parent: Option<usize>,
    /// Inside `$(...)`, backquotes or `<(...)`.
    in_subst: bool,
    stdin: Stdin,
    /// An earlier stage of the pipeline decodes base64/hex/compressed data.
    upstream_decoder: bool,
    /// Runs in the background or as part of a pipeline.
    background: bool,
    /// What follows runs only if this succeeds (`cmd && ...`): a `cd` here
    /// is certain for the rest of its list.
    guarded: bool,
}

impl Env {
    fn top() -> Env {
        Env {
            depth: 0,
            parent: None,
            in_subst: false,
            stdin: Stdin::Default,
            upstream_decoder: false,
            background: false,
            guarded: false,
        }
    }
}

/// What a descriptor is open on, from a redirection (`3<file`, `2>&1`).
#[derive(Clone, Debug)]
enum FdTarget {
    File(Word),
    Dup(i32),
    /// Closed, a pipe, a here-document: nothing to write through.
    Nothing,
}

/// Descriptors set by the redirections of one command, in order.
type Fds = Vec<(i32, FdTarget)>;

/// How deep `/dev/fd/N` pointing at `/dev/fd/M` is followed.
const FD_DEPTH: usize = 8;

/// A function the line defines.
struct Function {
    name: String,
    /// The body as text, to tell definitions apart.
    text: String,
    body: ast::FunctionBody,
    /// The text the body was parsed from (its spans index into it).
    src: Rc<str>,
}

/// A prefix assignment (`FOO=1 cmd`).
struct Assign {
    name: String,
    raw: String,
    value: Word,
}

/// A command about to be reported.
struct Pending {
    words: Vec<Word>,
    assigns: Vec<Assign>,
    redir_texts: Vec<String>,
    redir_writes: Vec<Word>,
    redir_reads: Vec<Word>,
    fds: Fds,
    redir_arith: Vec<String>,
    broken: Vec<String>,
    note: Option<String>,
    parent: Option<usize>,
    stdin: Stdin,
    script: Option<(String, bool)>,
    /// What `{}` in the argv stands for (resolved).
    placeholder: Vec<String>,
    /// Gets more arguments that are not known here (`xargs CMD`).
    more_args: bool,
    /// Reported as is, with this sensitivity and these (resolved) writes.
    synthetic: Option<Sensitivity>,
    extra_writes: Vec<String>,
    /// Written directly in the command line (not found inside a wrapper):
    /// redirects of enclosing compound commands and `cd` apply.
    from_ast: bool,
}

impl Pending {
    fn new(words: Vec<Word>, parent: Option<usize>) -> Pending {
        Pending {
            words,
            assigns: Vec::new(),
            redir_texts: Vec::new(),
            redir_writes: Vec::new(),
            redir_reads: Vec::new(),
            fds: Vec::new(),
            redir_arith: Vec::new(),
            broken: Vec::new(),
            note: None,
            parent,
            stdin: Stdin::Default,
            script: None,
            placeholder: Vec::new(),
            more_args: false,
            synthetic: None,
            extra_writes: Vec::new(),
            from_ast: false,
        }
    }
}

/// The parts of a simple command, in order.
#[derive(Default)]
struct Items<'a> {
    words: Vec<Word>,
    assigns: Vec<Assign>,
    redirects: Vec<&'a ast::IoRedirect>,
    procsubs: Vec<&'a ast::SubshellCommand>,
    broken: Vec<String>,
}

/// Effects of a list of redirections.
#[derive(Default)]
struct Redirs<'a> {
    texts: Vec<String>,
    fds: Fds,
    /// Arithmetic in the redirections' words and here-documents.
    arith: Vec<String>,
    writes: Vec<Word>,
    reads: Vec<Word>,
    stdin: Option<Stdin>,
    script: Option<(String, bool)>,
    procsubs: Vec<&'a ast::SubshellCommand>,
    broken: Vec<String>,
}

struct Walker<'c> {
    ctx: &'c Context<'c>,
    home: String,
    /// The working directory of the command being looked at; `None` once a
    /// `cd` went somewhere not known.
    cwd: Option<String>,
    out: Vec<SimpleCommand>,
    opaque: Option<String>,
    /// Name of the function whose body is being walked.
    func: Option<String>,
    /// Functions found to be fork bombs.
    bombs: Vec<String>,
    /// Redirect targets of enclosing compound commands: a resolved path, or
    /// why it is not known.
    inherited: Vec<Result<String, String>>,
    /// Files enclosing compound commands read on their redirections
    /// (`while read l; do ...; done < FILE`): their commands read them.
    inherited_reads: Vec<Result<String, String>>,
    /// Variables this line sets to values that bash would run code from if
    /// they were evaluated as arithmetic or as a name (`a[$(cmd)]`), or
    /// whose value is not known. Variables the line never sets come from
    /// the environment the agent was started with.
    tainted: Vec<String>,
    /// The line sets `CDPATH`: `cd NAME` may go anywhere after that.
    cdpath: bool,
    /// Descriptors opened by `exec` redirections, for the rest of the line.
    exec_fds: Fds,
    /// Descriptors of the command being reported.
    cmd_fds: Fds,
    /// Descriptors set by the redirections of enclosing compound commands.
    outer_fds: Fds,
    /// Variables with the integer attribute: assignments to them are
    /// arithmetic.
    integers: Vec<String>,
    /// Variables assigned by words decoded since the last command was
    /// reported (`${NAME:=v}`).
    expanded: std::cell::RefCell<Vec<String>>,
    /// Functions defined anywhere in the line (or a payload of it), with
    /// the text their body was parsed from: a command of that name may
    /// call one, and its body is walked there, where it runs.
    functions: Vec<Rc<Function>>,
    /// Functions whose body is being walked for a call.
    calling: Vec<String>,
    /// How many texts were checked as arithmetic: a loop whose first pass
    /// checked none has nothing a tainted variable could change.
    arith_calls: std::cell::Cell<usize>,
    /// Walking a line a POSIX shell runs (`sh -c`, `dash -c`): where it
    /// and bash differ (braces, `time`), the command is opaque.
    posix: bool,
    /// Commands that load files as code or configuration (see
    /// [`crate::loads`]): their index, the files, their directory.
    runners: Vec<(usize, Vec<&'static str>, Option<String>)>,
}

impl<'c> Walker<'c> {
    fn new(ctx: &'c Context<'c>) -> Walker<'c> {
        Walker {
            ctx,
            home: paths::normalize(ctx.home),
            cwd: Some(paths::normalize(ctx.cwd)),
            out: Vec::new(),
            opaque: None,
            func: None,
            bombs: Vec::new(),
            inherited: Vec::new(),
            inherited_reads: Vec::new(),
            tainted: Vec::new(),
            cdpath: false,
            exec_fds: Vec::new(),
            cmd_fds: Vec::new(),
            outer_fds: Vec::new(),
            integers: Vec::new(),
            expanded: std::cell::RefCell::new(Vec::new()),
            functions: Vec::new(),
            calling: Vec::new(),
            runners: Vec::new(),
            posix: false,
            arith_calls: std::cell::Cell::new(0),
        }
    }

    /// Records that the line sets `name`; `clean` when its value is a
    /// literal bash cannot run anything from.
    fn set_var(&mut self, name: &str, clean: bool) {
        let name = name.split('[').next().unwrap_or(name);
        if clean {
            self.tainted.retain(|t| t != name);
        } else if !self.tainted.iter().any(|t| t == name) {
            self.tainted.push(name.to_owned());
        }
    }

    /// Why bash could run a command while evaluating `text` as arithmetic
    /// (an array subscript in a value is expanded again), if it could.
    fn arith_risk(&self, text: &str) -> Option<String> {
        self.arith_calls.set(self.arith_calls.get() + 1);
        if text.contains('`') || text.contains("$(") {
            return Some(format!(
                "`{text}` is evaluated as arithmetic, which runs the commands in it"
            ));
        }
        if text.contains(['\'', '"', '\\']) && text.contains('[') {
            return Some(format!("`{text}` hides a subscript from the analysis"));
        }
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let name = &text[start..i];
                if let Some(why) = vars::shell_risk(name) {
                    return Some(format!(
                        "arithmetic uses {}",
                        why.trim_start_matches("the ")
                    ));
                }
                if self.tainted.iter().any(|t| t == name) {
                    return Some(format!(
                        "the value of `{name}` is evaluated as arithmetic and is not known to be a number"
                    ));
                }
            } else if c.is_ascii_digit() {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'#')
                {
                    i += 1;
                }
            } else {
                i += 1;
            }
        }
        None
    }

    /// Why evaluating the variable name in `w` (`NAME`, `NAME[SUB]`,
    /// `NAME[SUB]=value`) could run a command, if it could.
    fn name_risk(&self, w: &Word, off: usize) -> Option<String> {
        let t = w.text.get(off..).unwrap_or("");
        let name = match t.find('=') {
            Some(eq) if !t[..eq].contains('[') || t[..eq].ends_with(']') => &t[..eq],
            _ => t,
        };
        if w.literal_len() < off + name.len() {
            return Some(format!(
                "the variable name `{t}` is not known before it runs"
            ));
        }
        let sub = name.split_once('[').map(|(_, s)| s)?;
        self.arith_risk(sub)
    }

    /// A stand-in command for a compound construct (`((...))`, `[[...]]`)
    /// the analysis cannot vouch for.
    fn opaque_construct(&mut self, text: &str, parent: Option<usize>, why: String) {
        self.out.push(SimpleCommand {
            command: text.to_owned(),
            binary: text.split_whitespace().next().unwrap_or("").to_owned(),
            sensitivity: Sensitivity::Mutate,
            tags: vec![tags::OPAQUE],
            notes: vec![why],
            parent,
            ..SimpleCommand::default()
        });
    }

    /// Checks arithmetic text found in a construct.
    fn check_arith(&mut self, text: &str, parent: Option<usize>) {
        if let Some(why) = self.arith_risk(text) {
            self.opaque_construct(&format!("(( {text} ))"), parent, why);
        }
    }

    /// A runner is opaque when another command of the line (before it, or
    /// after it in a loop) writes a file it loads as code or configuration.
    fn written_then_run(&mut self) {
        for (idx, files, cwd) in std::mem::take(&mut self.runners) {
            let inside = |mut j: usize, out: &[SimpleCommand]| {
                while let Some(p) = out.get(j).and_then(|c| c.parent) {
                    if p == idx {
                        return true;
                    }
                    j = p;
                }
                false
            };
            let written = self.out.iter().enumerate().find_map(|(j, c)| {
                if j == idx || inside(j, &self.out) {
                    return None;
                }
                c.writes
                    .iter()
                    .find(|w| loads::writes_loaded(w, &files, cwd.as_deref()))
            });
            if let Some(w) = written {
                let note = format!(
                    "`{}` loads `{w}` as code or configuration, which this line writes",
                    self.out[idx].binary
                );
                self.mark_opaque(idx, note);
            }
        }
    }

    fn finish(mut self) -> Analysis {
        self.written_then_run();
        // A command is at least as sensitive as what it runs.
        for i in (0..self.out.len()).rev() {
            if let Some(p) = self.out[i].parent
                && p < i
            {
                let s = self.out[i].sensitivity;
                if s > self.out[p].sensitivity {
                    self.out[p].sensitivity = s;
                }
            }
        }
        Analysis {
            commands: self.out,
            opaque: self.opaque,
        }
    }

    fn stopped(&self) -> bool {
        self.opaque.is_some()
    }

    fn set_opaque(&mut self, reason: String) {
        if self.opaque.is_none() {
            self.opaque = Some(reason);
        }
    }

    fn deeper(&mut self, env: Env) -> Option<Env> {
        let depth = env.depth + 1;
        if depth > self.ctx.limits.max_depth {
            self.set_opaque(too_deep(self.ctx.limits.max_depth));
            return None;
        }
        Some(Env { depth, ..env })
    }

    fn word(&self, raw: &str, subs: &mut Vec<String>) -> Word {
        let w = words::decode(raw, subs, self.ctx.limits.max_depth);
        if !w.assigns.is_empty() {
            self.expanded.borrow_mut().extend(w.assigns.iter().cloned());
        }
        w
    }

    /// The word of a file redirection: bash brace-expands it, and refuses
    /// it ("ambiguous redirect") unless that makes one word.
    fn redirect_word(&self, raw: &str, subs: &mut Vec<String>) -> Word {
        let mut w = self.word(raw, subs);
        if w.brace && self.posix {
            // `sh` does not expand braces, bash does.
            w.broken = true;
        } else if w.brace {
            match words::brace_expand(&w.text, 2).as_deref() {
                Some([one]) => w.text.clone_from(one),
                _ => w.broken = true,
            }
            w.brace = false;
        }
        w
    }

    /// Why the variables `names`, assigned to values not known here, make
    /// the line opaque: bash's own state, or a variable with the integer
    /// attribute (its value is evaluated as arithmetic).
    fn assign_risks(&mut self, names: &[String]) -> Vec<String> {
        let mut risks = Vec::new();
        for n in names {
            if n.starts_with('$') {
                risks.push(format!(
                    "`{n}` assigns a variable whose name is not known before it runs"
                ));
                continue;
            }
            self.set_var(n, false);
            risks.extend(vars::shell_risk(n));
            if let Some(why) = self.integer_risk(n, None) {
                risks.push(why);
            }
        }
        risks
    }

    /// Why giving the integer variable `name` the value `value` (`None`:
    /// not known here) could run a command, if `name` is one.
    fn integer_risk(&self, name: &str, value: Option<&Word>) -> Option<String> {
        let base = name.split('[').next().unwrap_or(name);
        if !self.integers.iter().any(|n| n == base) {
            return None;
        }
        match value {
            Some(v) if !v.glob && !v.split => self.arith_risk(&v.text),
            _ => Some(format!(
                "`{base}` has the integer attribute: a value not known here is evaluated as arithmetic"
            )),
        }
    }

    /// Tags an already reported command opaque.
    fn mark_opaque(&mut self, idx: usize, note: String) {
        if let Some(c) = self.out.get_mut(idx) {
            add_tag(&mut c.tags, tags::OPAQUE);
            c.notes.push(note);
            if c.sensitivity < Sensitivity::Mutate {
                c.sensitivity = Sensitivity::Mutate;
            }
        }
    }

    // ----- walking the tree -------------------------------------------------

    fn program(&mut self, program: &ast::Program, src: &str, env: Env) {
        let mut defs = Vec::new();
        for list in &program.complete_commands {
            definitions(list, &mut defs);
        }
        if !defs.is_empty() {
            let src: Rc<str> = Rc::from(src);
            for def in defs {
                let name = self.word(&def.fname.value, &mut Vec::new()).text;
                let text = def.body.to_string();
                // A payload parsed again (a body walked at each call) must
                // not add its definitions twice.
                if !self
                    .functions
                    .iter()
                    .any(|f| f.name == name && f.text == text)
                {
                    self.functions.push(Rc::new(Function {
                        name,
                        text,
                        body: def.body.clone(),
                        src: Rc::clone(&src),
                    }));
                }
            }
        }
        for list in &program.complete_commands {
            if self.stopped() {
                return;
            }
            self.list(list, src, env);
        }
    }

    fn list(&mut self, list: &ast::CompoundList, src: &str, env: Env) {
        for item in &list.0 {
            if self.stopped() {
                return;
            }
            let background = matches!(item.1, ast::SeparatorOperator::Async);
            let e = Env {
                background: env.background || background,
                ..env
            };
            // A background job runs in a subshell: its `cd` stays there.
            let saved_cwd = background.then(|| self.cwd.clone());
            let and_follows =
                |k: usize| matches!(item.0.additional.get(k), Some(ast::AndOr::And(_)));
            self.pipeline(
                &item.0.first,
                src,
                Env {
                    guarded: and_follows(0),
                    ..e
                },
            );
            for (k, next) in item.0.additional.iter().enumerate() {
                let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
                // After `a || b` or `a && b`, whether b ran is not known.
                let cwd_before = self.cwd.clone();
                self.pipeline(
                    p,
                    src,
                    Env {
                        guarded: and_follows(k + 1),
                        ..e
                    },
                );
                if self.cwd != cwd_before {
                    self.cwd = None;
                }
            }
            if let Some(c) = saved_cwd {
                self.cwd = c;
            }
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline, src: &str, env: Env) {
        if self.posix && p.timed.is_some() {
            // No `time` keyword in a POSIX `sh`: it runs /usr/bin/time.
            self.opaque_construct(
                "time",
                env.parent,
                "`time` is a program in a POSIX `sh`, a keyword in bash, and /bin/sh may be either"
                    .to_owned(),
            );
        }
        let n = p.seq.len();
        let mut decoder = env.upstream_decoder;
        let saved_cwd = (n > 1).then(|| self.cwd.clone());
        for (i, cmd) in p.seq.iter().enumerate() {
            if self.stopped() {
                return;
            }
            let e = Env {
                stdin: if i > 0 { Stdin::Pipe } else { env.stdin },
                upstream_decoder: decoder,
                background: env.background || n > 1,
                ..env
            };
            decoder |= self.command(cmd, src, e);
            if let Some(c) = &saved_cwd {
                self.cwd.clone_from(c);
            }
        }
    }

    /// Walks one command; returns whether it decodes data (for
    /// `base64 -d | sh`).
    fn command(&mut self, cmd: &ast::Command, src: &str, env: Env) -> bool {
        match cmd {
            ast::Command::Simple(sc) => self.simple(sc, src, env),
            ast::Command::Compound(cc, redirects) => {
                self.compound(cc, redirects.as_ref(), src, env);
                false
            }
            ast::Command::Function(def) => {
                self.function(def, src, env);
                false
            }
            ast::Command::ExtendedTest(test, redirects) => {
                let marks = self.marks();
                if let Some(r) = redirects {
                    self.compound_redirects(r, src, env);
                }
                self.extended_test(&test.expr, env);
                self.end_redirects(marks, env.parent);
                false
            }
        }
    }

    /// A command named like a function of the line may call it (or the
    /// program, where the function is not defined yet or any more): the
    /// body is walked here, where it runs, its commands children of the
    /// call.
    fn call(&mut self, name: &str, idx: usize, env: Env) {
        let bodies: Vec<Rc<Function>> = self
            .functions
            .iter()
            .filter(|f| f.name == name)
            .map(Rc::clone)
            .collect();
        if bodies.is_empty() {
            return;
        }
        if self.calling.iter().any(|n| n == name) {
            self.mark_opaque(
                idx,
                format!("the function `{name}` calls itself, which the analysis does not follow"),
            );
            return;
        }
        if let Some(c) = self.out.get_mut(idx) {
            c.notes.push(format!(
                "may call the function `{name}` defined on this line"
            ));
        }
        self.calling.push(name.to_owned());
        let saved_func = self.func.replace(name.to_owned());
        for body in bodies {
            let before = self.out.len();
            let e = Env {
                parent: Some(idx),
                ..env
            };
            self.compound(&body.body.0, body.body.1.as_ref(), &body.src, e);
            self.note_children(before, Some(idx), &format!("body of the function `{name}`"));
        }
        self.func = saved_func;
        self.calling.pop();
    }

    fn function(&mut self, def: &ast::FunctionDefinition, src: &str, env: Env) {
        let mut subs = Vec::new();
        let name = self.word(&def.fname.value, &mut subs).text;
        let saved = self.func.replace(name.clone());
        let saved_cwd = self.cwd.clone();
        let before = self.out.len();
        if name == "command_not_found_handle" {
            // bash calls it for every command it does not find.
            self.opaque_construct(
                &name,
                env.parent,
                "`command_not_found_handle` runs wherever a command is not found".to_owned(),
            );
        }
        self.compound(&def.body.0, def.body.1.as_ref(), src, env);
        self.func = saved;
        self.cwd = saved_cwd;
        if self.out[before..]
            .iter()
            .any(|c| c.tags.contains(&tags::FORK_BOMB))
        {
            self.bombs.push(name);
        }
    }

    /// Redirects on a compound command (or `[[ ]]`): walks substitutions
    /// in them and returns the writes its commands inherit.
    fn compound_redirects(&mut self, r: &ast::RedirectList, src: &str, env: Env) -> Option<Stdin> {
        let list: Vec<&ast::IoRedirect> = r.0.iter().collect();
        let mut subs = Vec::new();
        let red = self.redirects(&list, src, &mut subs);
        for a in &red.arith {
            self.check_arith(a, env.parent);
        }
        let assigned = self.expanded.take();
        for why in self.assign_risks(&assigned) {
            self.opaque_construct(&red.texts.join(" "), env.parent, why);
        }
        let saved_fds = std::mem::replace(&mut self.cmd_fds, red.fds.clone());
        self.outer_fds.extend(red.fds.iter().cloned());
        for w in &red.writes {
            if w.dynamic {
                self.inherited.push(Err(format!(
                    "redirect target `{}` is not known before it runs",
                    w.text
                )));
            } else {
                let (abs, unknown) = self.resolve(&w.text, None);
                if paths::is_harmless_device(&abs) {
                    continue;
                }
                if paths::descriptor(&abs).is_some() {
                    match self.through_descriptor(&abs, 0) {
                        Ok(files) => self.inherited.extend(files.into_iter().map(Ok)),
                        Err(why) => self.inherited.push(Err(why)),
                    }
                    continue;
                }
                if unknown {
                    self.inherited.push(Err(format!(
                        "redirect target `{}` is relative to a directory not known before it runs",
                        w.text
                    )));
                }
                self.inherited.push(Ok(abs));
            }
        }
        for w in &red.reads {
            if w.dynamic {
                self.inherited_reads.push(Err(format!(
                    "the file `{}` it reads is not known before it runs",
                    w.text
                )));
            } else {
                let (abs, unknown) = self.resolve(&w.text, None);
                if unknown {
                    self.inherited_reads.push(Err(format!(
                        "the file `{}` it reads is relative to a directory not known before it runs",
                        w.text
                    )));
                } else if !paths::is_harmless_device(&abs) && paths::descriptor(&abs).is_none() {
                    self.inherited_reads.push(Ok(abs));
                }
            }
        }
        self.cmd_fds = saved_fds;
        for text in subs {
            self.line(
                &text,
                "command substitution",
                env.parent,
                env,
                true,
                Stdin::Default,
            );
        }
        for ps in red.procsubs {
            self.procsub(ps, src, env.parent, env);
        }
        red.stdin
    }

    fn compound(
        &mut self,
        cc: &ast::CompoundCommand,
        redirects: Option<&ast::RedirectList>,
        src: &str,
        env: Env,
    ) {
        let Some(mut e) = self.deeper(env) else {
            return;
        };
        let marks = self.marks();
        if let Some(r) = redirects
            && let Some(stdin) = self.compound_redirects(r, src, env)
        {
            e.stdin = stdin;
        }
        match cc {
            ast::CompoundCommand::Arithmetic(a) => {
                // brush-parser reads `( ( cmd ) )` as `((cmd))`; bash runs
                // it as nested subshells unless the parentheses touch.
                let text = span_str(src, &a.loc);
                let arithmetic = text.is_some_and(|t| t.starts_with("((") && t.ends_with("))"));
                if arithmetic {
                    self.check_arith(&a.expr.value, e.parent);
                    self.text_subs(&a.expr.value, e);
                } else {
                    let saved = self.cwd.clone();
                    self.line(&a.expr.value, "subshell", e.parent, e, false, e.stdin);
                    self.cwd = saved;
                }
            }
            ast::CompoundCommand::ArithmeticForClause(f) => self.looped(&|w| {
                for x in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    w.check_arith(&x.value, e.parent);
                    w.text_subs(&x.value, e);
                }
                w.list(&f.body.list, src, e);
            }),
            ast::CompoundCommand::BraceGroup(b) => self.list(&b.list, src, e),
            ast::CompoundCommand::Subshell(s) => {
                let saved = self.cwd.clone();
                self.list(&s.list, src, e);
                self.cwd = saved;
            }
            ast::CompoundCommand::ForClause(f) => self.looped(&|w| {
                let mut clean = true;
                let mut risks: Vec<String> =
                    vars::shell_risk(&f.variable_name).into_iter().collect();
                for v in f.values.iter().flatten() {
                    let d = w.word_subs(&v.value, e);
                    clean &= value_is_clean(&d);
                    risks.extend(w.integer_risk(&f.variable_name, Some(&d)));
                }
                if f.values.is_none() {
                    risks.extend(w.integer_risk(&f.variable_name, None));
                }
                for why in risks {
                    w.opaque_construct(&format!("for {}", f.variable_name), e.parent, why);
                }
                // `for x;` walks the positional parameters.
                w.set_var(&f.variable_name, clean && f.values.is_some());
                w.list(&f.body.list, src, e);
            }),
            ast::CompoundCommand::CaseClause(c) => {
                self.word_subs(&c.value.value, e);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word_subs(&p.value, e);
                    }
                    if let Some(body) = &item.cmd {
                        self.list(body, src, e);
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.list(&i.condition, src, e);
                self.list(&i.then, src, e);
                for clause in i.elses.iter().flatten() {
                    if let Some(c) = &clause.condition {
                        self.list(c, src, e);
                    }
                    self.list(&clause.body, src, e);
                }
            }
            ast::CompoundCommand::WhileClause(c) | ast::CompoundCommand::UntilClause(c) => {
                self.looped(&|w| {
                    w.list(&c.0, src, e);
                    w.list(&c.1.list, src, e);
                });
            }
            ast::CompoundCommand::Coprocess(c) => {
                // `coproc NAME` sets the array NAME and NAME_PID.
                if let Some(why) = c.name.as_ref().and_then(|n| vars::shell_risk(&n.value)) {
                    self.opaque_construct("coproc", e.parent, why);
                }
                self.command(
                    &c.body,
                    src,
                    Env {
                        background: true,
                        ..e
                    },
                );
            }
        }
        self.end_redirects(marks, env.parent);
    }

    /// Where the redirections of a compound command start in the walker's
    /// lists: (outputs, commands, inputs, descriptors).
    fn marks(&self) -> (usize, usize, usize, usize) {
        (
            self.inherited.len(),
            self.out.len(),
            self.inherited_reads.len(),
            self.outer_fds.len(),
        )
    }

    /// Ends the redirections of a compound command begun at `marks`.
    fn end_redirects(&mut self, marks: (usize, usize, usize, usize), parent: Option<usize>) {
        let (mark, first_out, read_mark, fd_mark) = marks;
        if self.out.len() == first_out && self.inherited.len() > mark {
            // `{ (( i = 1 )); } > FILE`, `[[ -f x ]] > FILE`: no simple
            // command inside to carry the write, but the shell opens FILE
            // all the same.
            let mut sc = SimpleCommand {
                command: "{ ... } (redirected)".to_owned(),
                sensitivity: Sensitivity::Write,
                parent,
                ..SimpleCommand::default()
            };
            for inh in &self.inherited[mark..] {
                match inh {
                    Ok(path) => sc.writes.push(path.clone()),
                    Err(note) => {
                        sc.tags = vec![tags::OPAQUE];
                        sc.sensitivity = Sensitivity::Mutate;
                        sc.notes.push(note.clone());
                    }
                }
            }
            self.out.push(sc);
        }
        self.inherited.truncate(mark);
        self.inherited_reads.truncate(read_mark);
        self.outer_fds.truncate(fd_mark);
    }

    /// Walks a loop. What one pass sets is there for the next: when a pass
    /// taints a variable or gives one the integer attribute, the loop is
    /// walked again and what only that pass finds opaque is kept. A `cd`
    /// in a loop leaves the directory not known (it ran 0 or more times).
    fn looped(&mut self, walk: &dyn Fn(&mut Walker<'c>)) {
        let cwd = self.cwd.clone();
        let state = (
            self.tainted.clone(),
            self.integers.len(),
            self.arith_calls.get(),
        );
        let first = self.out.len();
        walk(self);
        let tainted =
            self.arith_calls.get() > state.2 && self.tainted.iter().any(|t| !state.0.contains(t));
        if tainted || self.integers.len() > state.1 {
            let second = self.out.len();
            walk(self);
            let opaque = |c: &SimpleCommand| c.tags.contains(&tags::OPAQUE);
            let found = self.out[second..].iter().any(opaque);
            if !found || self.out[first..second].iter().any(opaque) {
                self.out.truncate(second);
            }
        }
        if self.cwd != cwd {
            self.cwd = None;
        }
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr, env: Env) {
        let mut stack = vec![expr];
        while let Some(x) = stack.pop() {
            match x {
                ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                    stack.push(a);
                    stack.push(b);
                }
                ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                    stack.push(a)
                }
                ast::ExtendedTestExpr::UnaryTest(op, w) => {
                    let d = self.word_subs(&w.value, env);
                    if matches!(
                        op,
                        ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                            | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                    ) && let Some(why) = self.name_risk(&d, 0)
                    {
                        self.opaque_construct(&format!("[[ -v {} ]]", w.value), env.parent, why);
                    }
                }
                ast::ExtendedTestExpr::BinaryTest(op, l, r) => {
                    let arithmetic = matches!(
                        op,
                        ast::BinaryPredicate::ArithmeticEqualTo
                            | ast::BinaryPredicate::ArithmeticNotEqualTo
                            | ast::BinaryPredicate::ArithmeticLessThan
                            | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
                            | ast::BinaryPredicate::ArithmeticGreaterThan
                            | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                    );
                    for side in [l, r] {
                        let d = self.word_subs(&side.value, env);
                        if arithmetic && let Some(why) = self.arith_risk(&d.text) {
                            self.opaque_construct(
                                &format!("[[ {} {op} {} ]]", l.value, r.value),
                                env.parent,
                                why,
                            );
                        }
                    }
                }
            }
        }
    }

    /// Reports the command substitutions in a word, and returns it decoded.
    fn word_subs(&mut self, raw: &str, env: Env) -> Word {
        let mut subs = Vec::new();
        let w = self.word(raw, &mut subs);
        let assigned = self.expanded.take();
        for why in self.assign_risks(&assigned) {
            self.opaque_construct(raw, env.parent, why);
        }
        if w.broken
            && let Some(p) = env.parent
        {
            self.mark_opaque(p, format!("cannot decode `{raw}`"));
        }
        for a in &w.arith {
            self.check_arith(a, env.parent);
        }
        for text in subs {
            self.line(
                &text,
                "command substitution",
                env.parent,
                env,
                true,
                Stdin::Default,
            );
        }
        w
    }

    /// Reports the command substitutions in free text (arithmetic).
    fn text_subs(&mut self, text: &str, env: Env) {
        if text.contains(['$', '`']) {
            self.word_subs(text, env);
        }
    }

    fn procsub(&mut self, ps: &ast::SubshellCommand, src: &str, parent: Option<usize>, env: Env) {
        let Some(e) = self.deeper(env) else {
            return;
        };
        let saved = self.cwd.clone();
        let before = self.out.len();
        let sub_env = Env {
            depth: e.depth,
            parent,
            in_subst: true,
            stdin: Stdin::Default,
            upstream_decoder: false,
            background: false,
            guarded: false,
        };
        self.list(&ps.list, src, sub_env);
        self.cwd = saved;
        self.note_children(before, parent, "process substitution");
    }

    fn note_children(&mut self, before: usize, parent: Option<usize>, note: &str) {
        for c in &mut self.out[before..] {
            if c.parent == parent && !c.notes.iter().any(|n| n == note) {
                c.notes.insert(0, note.to_owned());
            }
        }
    }

    /// Parses `text` as a command line and walks it, its commands being
    /// children of `parent`.
    fn line(
        &mut self,
        text: &str,
        note: &str,
        parent: Option<usize>,
        env: Env,
        in_subst: bool,
        stdin: Stdin,
    ) {
        if self.stopped() || text.trim().is_empty() {
            return;
        }
        let Some(e) = self.deeper(env) else {
            return;
        };
        let scan = prescan::scan(text);
        if e.depth + scan.depth > self.ctx.limits.max_depth {
            self.set_opaque(too_deep(self.ctx.limits.max_depth));
            return;
        }
        if let Some(why) = scan.bad_heredoc {
            match parent {
                Some(p) => self.mark_opaque(p, format!("{note} cannot be analysed: {why}")),
                None => self.set_opaque(format!("parse error: {why}")),
            }
            return;
        }
        let program = match parse(text) {
            Ok(p) => p,
            Err(reason) => {
                match parent {
                    Some(p) => self.mark_opaque(p, format!("{note} cannot be analysed: {reason}")),
                    None => self.set_opaque(reason),
                }
                return;
            }
        };
        let saved = self.cwd.clone();
        let before = self.out.len();
        let sub_env = Env {
            depth: e.depth,
            parent,
            in_subst: env.in_subst || in_subst,
            stdin,
            upstream_decoder: false,
            background: false,
            guarded: false,
        };
        self.program(&program, text, sub_env);
        self.cwd = saved;
        self.note_children(before, parent, note);
    }

    // ----- simple commands --------------------------------------------------

    fn redirects<'a>(
        &self,
        list: &[&'a ast::IoRedirect],
        src: &str,
        subs: &mut Vec<String>,
    ) -> Redirs<'a> {
        let mut r = Redirs::default();
        for redirect in list {
            match redirect {
                ast::IoRedirect::File(fd, kind, target) => {
                    let fd_s = fd.map(|n| n.to_string()).unwrap_or_default();
                    let op = kind_str(kind);
                    let input = matches!(
                        kind,
                        ast::IoFileRedirectKind::Read
                            | ast::IoFileRedirectKind::DuplicateInput
                            | ast::IoFileRedirectKind::ReadAndWrite
                    );
                    let n = fd.unwrap_or(if input { 0 } else { 1 });
                    let on_stdin = matches!(fd, None | Some(0));
                    match target {
                        ast::IoFileRedirectTarget::Filename(w) => {
                            r.texts.push(format!("{fd_s}{op} {}", w.value));
                            let d = self.redirect_word(&w.value, subs);
                            r.arith.extend(d.arith.iter().cloned());
                            if d.broken {
                                r.broken.push(w.value.clone());
                            }
                            r.fds.push((n, FdTarget::File(d.clone())));
                            match kind {
                                ast::IoFileRedirectKind::Read
                                | ast::IoFileRedirectKind::DuplicateInput => {
                                    if on_stdin {
                                        r.stdin = Some(Stdin::File);
                                    }
                                    r.reads.push(d);
                                }
                                ast::IoFileRedirectKind::ReadAndWrite => {
                                    if on_stdin {
                                        r.stdin = Some(Stdin::File);
                                    }
                                    r.writes.push(d);
                                }
                                _ => r.writes.push(d),
                            }
                        }
                        ast::IoFileRedirectTarget::Fd(m) => {
                            r.texts.push(format!("{fd_s}{op}{m}"));
                            r.fds.push((n, FdTarget::Dup(*m)));
                        }
                        ast::IoFileRedirectTarget::Duplicate(w) => {
                            r.texts.push(format!("{fd_s}{op}{}", w.value));
                            let d = self.redirect_word(&w.value, subs);
                            r.arith.extend(d.arith.iter().cloned());
                            let digits = d.text.trim_end_matches('-');
                            let is_fd = !d.dynamic
                                && (d.text == "-"
                                    || (!digits.is_empty()
                                        && digits.bytes().all(|b| b.is_ascii_digit())));
                            if is_fd {
                                let target = match digits.parse::<i32>() {
                                    Ok(m) => FdTarget::Dup(m),
                                    Err(_) => FdTarget::Nothing,
                                };
                                r.fds.push((n, target));
                            } else if d.dynamic {
                                // `>&$x` is a descriptor or a file: not known.
                                r.fds.push((n, FdTarget::File(d.clone())));
                                r.writes.push(d);
                            } else {
                                r.fds.push((n, FdTarget::File(d.clone())));
                                if matches!(kind, ast::IoFileRedirectKind::DuplicateOutput) {
                                    r.fds.push((2, FdTarget::File(d.clone())));
                                }
                                // `>&file` is `&>file`.
                                if matches!(kind, ast::IoFileRedirectKind::DuplicateOutput) {
                                    r.writes.push(d);
                                } else {
                                    r.reads.push(d);
                                }
                            }
                        }
                        ast::IoFileRedirectTarget::ProcessSubstitution(k, sub) => {
                            r.texts
                                .push(format!("{fd_s}{op} {}", procsub_text(k, sub, src)));
                            r.procsubs.push(sub);
                            r.fds.push((n, FdTarget::Nothing));
                            if matches!(kind, ast::IoFileRedirectKind::Read) && on_stdin {
                                r.stdin = Some(Stdin::ProcSub);
                            }
                        }
                    }
                }
                ast::IoRedirect::HereDocument(fd, doc) => {
                    r.fds.push((fd.unwrap_or(0), FdTarget::Nothing));
                    let fd_s = fd.map(|n| n.to_string()).unwrap_or_default();
                    let dash = if doc.remove_tabs { "-" } else { "" };
                    r.texts
                        .push(format!("{fd_s}<<{dash}{}", doc.here_end.value));
                    let body = if doc.requires_expansion {
                        let b =
                            words::decode_heredoc(&doc.doc.value, subs, self.ctx.limits.max_depth);
                        self.expanded.borrow_mut().extend(b.assigns.iter().cloned());
                        b
                    } else {
                        Word::literal(doc.doc.value.clone())
                    };
                    r.arith.extend(body.arith.iter().cloned());
                    if matches!(fd, None | Some(0)) {
                        r.stdin = Some(Stdin::File);
                        r.script = Some((body.text, body.dynamic));
                    }
                }
                ast::IoRedirect::HereString(fd, w) => {
                    r.fds.push((fd.unwrap_or(0), FdTarget::Nothing));
                    let fd_s = fd.map(|n| n.to_string()).unwrap_or_default();
                    r.texts.push(format!("{fd_s}<<< {}", w.value));
                    let d = self.word(&w.value, subs);
                    r.arith.extend(d.arith.iter().cloned());
                    if matches!(fd, None | Some(0)) {
                        r.stdin = Some(Stdin::File);
                        r.script = Some((d.text, d.dynamic));
                    }
                }
                ast::IoRedirect::OutputAndError(w, append) => {
                    let op = if *append { "&>>" } else { "&>" };
                    r.texts.push(format!("{op} {}", w.value));
                    let d = self.redirect_word(&w.value, subs);
                    r.arith.extend(d.arith.iter().cloned());
                    if d.broken {
                        r.broken.push(w.value.clone());
                    }
                    r.fds.push((1, FdTarget::File(d.clone())));
                    r.fds.push((2, FdTarget::File(d.clone())));
                    r.writes.push(d);
                }
            }
        }
        r
    }

    fn assignment(&self, a: &ast::Assignment, raw: &ast::Word, subs: &mut Vec<String>) -> Assign {
        let (name, index) = match &a.name {
            ast::AssignmentName::VariableName(n) => (n.clone(), None),
            ast::AssignmentName::ArrayElementName(n, i) => (n.clone(), Some(i)),
        };
        // `a[SUB]=v`: SUB is expanded (its substitutions run) and, for an
        // indexed array, evaluated as arithmetic.
        let index = index.map(|i| {
            let d = self.word(i, subs);
            let mut texts = d.arith;
            texts.push(d.text);
            texts
        });
        let value = match &a.value {
            ast::AssignmentValue::Scalar(w) => self.word(&w.value, subs),
            ast::AssignmentValue::Array(items) => {
                let mut v = Word::default();
                for (k, (key, val)) in items.iter().enumerate() {
                    if let Some(key) = key {
                        let _ = self.word(&key.value, subs);
                    }
                    let d = self.word(&val.value, subs);
                    if k > 0 {
                        v.text.push(' ');
                    }
                    v.text.push_str(&d.text);
                    v.dynamic |= d.dynamic;
                    v.broken |= d.broken;
                }
                v
            }
        };
        let mut value = value;
        value.arith.extend(index.into_iter().flatten());
        Assign {
            name,
            raw: raw.value.clone(),
            value,
        }
    }

    fn item<'a>(
        &self,
        item: &'a ast::CommandPrefixOrSuffixItem,
        prefix: bool,
        src: &str,
        items: &mut Items<'a>,
        subs: &mut Vec<String>,
    ) {
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => items.redirects.push(r),
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w)
                if prefix && items.words.is_empty() =>
            {
                let assign = self.assignment(a, w, subs);
                if assign.value.broken {
                    items.broken.push(w.value.clone());
                }
                items.assigns.push(assign);
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w)
            | ast::CommandPrefixOrSuffixItem::Word(w) => {
                let d = self.word(&w.value, subs);
                if d.broken {
                    items.broken.push(w.value.clone());
                }
                items.words.push(d);
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(k, ps) => {
                items.words.push(Word {
                    text: procsub_text(k, ps, src),
                    dynamic: true,
                    procsub: true,
                    ..Word::default()
                });
                items.procsubs.push(ps);
            }
        }
    }

    fn simple(&mut self, sc: &ast::SimpleCommand, src: &str, env: Env) -> bool {
        let mut subs: Vec<String> = Vec::new();
        let mut items = Items::default();
        for item in sc.prefix.iter().flat_map(|p| p.0.iter()) {
            self.item(item, true, src, &mut items, &mut subs);
        }
        if let Some(w) = &sc.word_or_name {
            let d = self.word(&w.value, &mut subs);
            if d.broken {
                items.broken.push(w.value.clone());
            }
            items.words.push(d);
        }
        for item in sc.suffix.iter().flat_map(|s| s.0.iter()) {
            self.item(item, false, src, &mut items, &mut subs);
        }
        let Items {
            words: ordered,
            assigns,
            redirects,
            mut procsubs,
            mut broken,
        } = items;
        let red = self.redirects(&redirects, src, &mut subs);
        broken.extend(red.broken);
        procsubs.extend(red.procsubs.iter().copied());

        let mut p = Pending::new(ordered, env.parent);
        p.assigns = assigns;
        p.redir_texts = red.texts;
        p.redir_writes = red.writes;
        p.redir_reads = red.reads;
        p.fds = red.fds;
        p.redir_arith = red.arith;
        p.broken = broken;
        p.stdin = red.stdin.unwrap_or(env.stdin);
        p.script = red.script;
        p.from_ast = true;

        let Some((idx, decoder)) = self.run_pending(p, env) else {
            return false;
        };
        for text in subs {
            self.line(
                &text,
                "command substitution",
                Some(idx),
                env,
                true,
                Stdin::Default,
            );
        }
        for ps in procsubs {
            self.procsub(ps, src, Some(idx), env);
        }
        decoder
    }

    /// Reports a command and, one after the other, the commands it runs
    /// (without recursion, so a chain of wrappers cannot exhaust the stack).
    /// Returns the index of the first command and whether any decodes data.
    fn run_pending(&mut self, first: Pending, env: Env) -> Option<(usize, bool)> {
        let mut stack = vec![first];
        let mut first_idx = None;
        let mut decoder = false;
        while let Some(p) = stack.pop() {
            if self.stopped() {
                break;
            }
            let Some((idx, dec, inners)) = self.emit(p, env) else {
                break;
            };
            first_idx.get_or_insert(idx);
            decoder |= dec;
            stack.extend(inners.into_iter().rev());
        }
        first_idx.map(|i| (i, decoder))
    }

    /// The text (and dynamism) of a path named by the classifier.
    fn path_text(pr: &PathRef, words: &[Word]) -> Option<(String, bool)> {
        match pr {
            PathRef::Arg { idx, off } => words
                .get(*idx)
                .map(|w| (w.text.get(*off..).unwrap_or("").to_owned(), w.dynamic)),
            PathRef::Lit(s) => Some((s.clone(), false)),
            PathRef::Into { dir, src } => {
                let src = words.get(*src)?;
                let (dir_text, dir_dyn) = match dir {
                    Some((i, off)) => {
                        let w = words.get(*i)?;
                        (w.text.get(*off..).unwrap_or(""), w.dynamic)
                    }
                    None => (".", false),
                };
                let base = paths::basename(&src.text);
                if base.is_empty() || base == "." || base == ".." {
                    return None;
                }
                Some((
                    format!("{}/{}", dir_text.trim_end_matches('/'), base),
                    dir_dyn || src.dynamic,
                ))
            }
        }
    }

    /// Resolves a path against `base` or the working directory. The flag
    /// says the path is relative to a directory not known statically.
    fn resolve(&self, text: &str, base: Option<&str>) -> (String, bool) {
        let relative =
            !text.starts_with('/') && !text.starts_with('~') && paths::home_rest(text).is_none();
        let cwd = base.or(self.cwd.as_deref()).unwrap_or(self.ctx.cwd);
        // `~-` is `$OLDPWD`, `~+N` / `~-N` / `~N` entries of the directory
        // stack, `~user` a home the password database knows (`/home/user`
        // is only a convention): only `~` and `~+` are known here.
        let dir_stack = text.strip_prefix('~').is_some_and(|r| {
            let head = r.split('/').next().unwrap_or("");
            !head.is_empty() && head != "+"
        });
        let unknown = dir_stack || (relative && base.is_none() && self.cwd.is_none());
        let abs = paths::resolve(text, cwd, &self.home);
        match paths::proc_alias(&abs, cwd) {
            Some(Ok(real)) => (real, unknown),
            Some(Err(())) => (abs, true),
            None => (abs, unknown),
        }
    }

    fn add_write(
        &self,
        sc: &mut SimpleCommand,
        text: &str,
        dynamic: bool,
        what: &str,
        base: Option<&str>,
    ) {
        if dynamic {
            add_tag(&mut sc.tags, tags::OPAQUE);
            sc.notes
                .push(format!("{what} `{text}` is not known before it runs"));
            return;
        }
        if text.is_empty() {
            return;
        }
        let (abs, unknown) = self.resolve(text, base);
        if paths::is_harmless_device(&abs) {
            return;
        }
        if paths::descriptor(&abs).is_some() {
            match self.through_descriptor(&abs, 0) {
                Ok(files) => {
                    for f in files {
                        if !sc.writes.contains(&f) {
                            sc.writes.push(f);
                        }
                    }
                }
                Err(why) => {
                    add_tag(&mut sc.tags, tags::OPAQUE);
                    sc.notes.push(why);
                }
            }
            return;
        }
        if unknown {
            add_tag(&mut sc.tags, tags::OPAQUE);
            sc.notes.push(format!(
                "{what} `{text}` is relative to a directory not known before it runs"
            ));
        }
        if paths::parent(&abs).contains(['*', '?', '[']) {
            // The built-in rules test a pattern's name against the files
            // they protect; a pattern in a directory could be any of them.
            add_tag(&mut sc.tags, tags::OPAQUE);
            sc.notes.push(format!(
                "{what} `{text}` has a pattern in its directory, not known before it runs"
            ));
        }
        if !sc.writes.contains(&abs) {
            sc.writes.push(abs);
        }
    }

    /// The files a write to a descriptor path (`/dev/fd/3`, `/dev/stdout`)
    /// reaches: opening it opens the descriptor's file anew, for writing.
    /// The shell's own 0, 1 and 2, not redirected, are the agent's pipes.
    fn through_descriptor(&self, path: &str, depth: usize) -> Result<Vec<String>, String> {
        let unknown = || format!("`{path}` is a descriptor the analysis cannot resolve");
        let Some(fd) = paths::descriptor(path)
            .flatten()
            .and_then(|n| i32::try_from(n).ok())
        else {
            return Err(unknown());
        };
        self.descriptor_files(fd, depth).ok_or_else(unknown)
    }

    fn descriptor_files(&self, fd: i32, depth: usize) -> Option<Vec<String>> {
        if depth > FD_DEPTH {
            return None;
        }
        // Any redirection of the descriptor counts, wherever it stands in
        // the command: the analysis does not order them.
        let targets: Vec<&FdTarget> = self
            .cmd_fds
            .iter()
            .chain(&self.outer_fds)
            .chain(&self.exec_fds)
            .filter(|(n, _)| *n == fd)
            .map(|(_, t)| t)
            .collect();
        if targets.is_empty() {
            return (fd <= 2).then(Vec::new);
        }
        let mut files = Vec::new();
        for t in targets {
            match t {
                FdTarget::Nothing => {}
                FdTarget::Dup(m) => files.extend(self.descriptor_files(*m, depth + 1)?),
                FdTarget::File(w) => {
                    if w.dynamic {
                        return None;
                    }
                    let (abs, unknown) = self.resolve(&w.text, None);
                    if unknown {
                        return None;
                    }
                    if paths::descriptor(&abs).is_some() {
                        let m = paths::descriptor(&abs)
                            .flatten()
                            .and_then(|n| i32::try_from(n).ok())?;
                        // `>/dev/stdout` reopens what fd 1 was before: the
                        // other redirections of it, or the shell's own.
                        if m != fd {
                            files.extend(self.descriptor_files(m, depth + 1)?);
                        }
                    } else if !paths::is_harmless_device(&abs) {
                        files.push(abs);
                    }
                }
            }
        }
        Some(files)
    }

    fn add_read(&self, sc: &mut SimpleCommand, text: &str, base: Option<&str>) {
        if text.is_empty() {
            return;
        }
        let (abs, unknown) = self.resolve(text, base);
        if unknown {
            add_tag(&mut sc.tags, tags::OPAQUE);
            sc.notes.push(format!(
                "the file `{text}` it reads is relative to a directory not known before it runs"
            ));
        }
        if paths::is_harmless_device(&abs) || sc.writes.contains(&abs) || sc.reads.contains(&abs) {
            return;
        }
        sc.reads.push(abs);
    }

    /// Tags `opaque` for an assignment after which bash may read the rest
    /// of the line in another character set (see [`crate::locale`]).
    fn locale_change(sc: &mut SimpleCommand, name: &str, value: &Word) {
        let note = if name == "LOCPATH" {
            "`LOCPATH` makes programs read character sets from files the analysis cannot check"
                .to_owned()
        } else if !crate::locale::CTYPE_VARIABLES.contains(&name) {
            return;
        } else if value.dynamic {
            format!("the locale in `{name}` is not known before it runs")
        } else if !crate::locale::is_safe(&value.text) {
            format!(
                "`{name}={}` selects a character set in which shell syntax can hide inside a multibyte character",
                value.text
            )
        } else {
            return;
        };
        add_tag(&mut sc.tags, tags::OPAQUE);
        sc.notes.push(note);
    }

    /// Tags `env-exec` for an assignment that makes programs run others,
    /// and queues the command line in its value.
    fn env_exec(
        sc: &mut SimpleCommand,
        name: &str,
        value: &Word,
        lines: &mut Vec<(String, bool, String)>,
    ) {
        if !is_exec_var(name) {
            return;
        }
        add_tag(&mut sc.tags, tags::ENV_EXEC);
        sc.notes
            .push(format!("`{name}` can make programs run other programs"));
        if LINE_VARS.contains(&name) {
            let v = value.text.trim_start_matches('|');
            if !v.trim().is_empty() {
                if value.dynamic {
                    add_tag(&mut sc.tags, tags::OPAQUE);
                    sc.notes.push(format!(
                        "the command in `{name}` is not known before it runs"
                    ));
                }
                lines.push((v.to_owned(), value.dynamic, format!("command in `{name}`")));
            }
        }
    }

    /// Builds and reports one command. Returns its index, whether it decodes
    /// data, and the argv commands it runs (to be reported next).
    fn emit(&mut self, p: Pending, env: Env) -> Option<(usize, bool, Vec<Pending>)> {
        if self.out.len() >= self.ctx.limits.max_commands {
            self.set_opaque(too_many(self.ctx.limits.max_commands));
            return None;
        }
        let mut sc = SimpleCommand {
            parent: p.parent,
            ..SimpleCommand::default()
        };
        self.cmd_fds.clone_from(&p.fds);
        if let Some(n) = &p.note {
            sc.notes.push(n.clone());
        }
        let expanded_assigns = self.expanded.take();

        // command, binary, argv
        let mut command = String::new();
        if p.words.is_empty() {
            for a in &p.assigns {
                if !command.is_empty() {
                    command.push(' ');
                }
                command.push_str(&a.raw);
            }
        }
        for (i, w) in p.words.iter().enumerate() {
            if i > 0 {
                command.push(' ');
            }
            command.push_str(&w.text);
        }
        for t in &p.redir_texts {
            if !command.is_empty() {
                command.push(' ');
            }
            command.push_str(t);
        }
        sc.command = command;
        if let Some(first) = p.words.first() {
            sc.binary = first.text.clone();
            sc.argv = p.words[1..].iter().map(|w| w.text.clone()).collect();
        }

        // Brace expansion happens before anything else: classify the words
        // bash would really run.
        if self.posix && p.words.iter().any(|w| w.brace) {
            add_tag(&mut sc.tags, tags::OPAQUE);
            sc.notes.push(
                "a POSIX `sh` does not expand braces, bash does, and /bin/sh may be either"
                    .to_owned(),
            );
        }
        let expanded;
        let words: &[Word] = if p.words.iter().any(|w| w.brace) {
            let mut out = Vec::with_capacity(p.words.len() + 4);
            let mut overflow = false;
            for w in &p.words {
                match w.brace.then(|| words::brace_expand(&w.text, 256)) {
                    Some(Some(alts)) => out.extend(alts.into_iter().map(|text| Word {
                        text,
                        dynamic: w.dynamic,
                        split: w.split,
                        ..Word::default()
                    })),
                    Some(None) => {
                        overflow = true;
                        out.push(w.clone());
                    }
                    None => out.push(w.clone()),
                }
            }
            if overflow {
                add_tag(&mut sc.tags, tags::OPAQUE);
                sc.notes
                    .push("brace expansion makes too many words".to_owned());
            }
            if p.words[0].brace {
                add_tag(&mut sc.tags, tags::OPAQUE);
                sc.notes.push(format!(
                    "the command name `{}` is a brace expansion",
                    p.words[0].text
                ));
            }
            expanded = out;
            &expanded
        } else {
            &p.words
        };

        // classification
        let facts = if let Some(s) = p.synthetic {
            Facts::new(s)
        } else if words.is_empty() {
            // Assignments change only the shell's variables; the ones that
            // matter are tagged below.
            let writes = !p.redir_writes.is_empty();
            Facts::new(if writes {
                Sensitivity::Write
            } else {
                Sensitivity::Read
            })
        } else if words[0].text.is_empty()
            || words[0].text.starts_with(char::is_whitespace)
            || words[0].text.ends_with(char::is_whitespace)
        {
            // bash never runs such a name; the parser misread something.
            let mut f = Facts::new(Sensitivity::Mutate);
            f.opaque(format!(
                "the command name `{}` cannot be what bash runs",
                words[0].text
            ));
            f
        } else if words[0].dynamic {
            let mut f = Facts::new(Sensitivity::Mutate);
            f.tag(
                tags::OPAQUE,
                format!(
                    "the command name `{}` is not known before it runs",
                    words[0].text
                ),
            );
            f
        } else {
            classify::classify(words)
        };
        let mut sens = facts.sensitivity;
        for t in &facts.tags {
            add_tag(&mut sc.tags, t);
        }
        sc.notes.extend(facts.notes.iter().cloned());
        for raw in &p.broken {
            add_tag(&mut sc.tags, tags::OPAQUE);
            sc.notes.push(format!("cannot decode `{raw}`"));
        }
        if !words.is_empty() && !paths::is_system_path(&sc.binary) {
            sens = sens.max(Sensitivity::Mutate);
        }

        // words the analysis must understand
        let mut risks: Vec<String> = Vec::new();
        for w in p.words.iter().chain(p.assigns.iter().map(|a| &a.value)) {
            risks.extend(w.arith.iter().filter_map(|a| self.arith_risk(a)));
        }
        risks.extend(p.redir_arith.iter().filter_map(|a| self.arith_risk(a)));
        for a in &p.assigns {
            if self.integers.contains(&a.name)
                && let Some(why) = self.arith_risk(&a.value.text)
            {
                risks.push(why);
            }
        }
        for &(i, off) in &facts.names {
            if let Some(w) = words.get(i) {
                risks.extend(self.name_risk(w, off));
            }
        }
        if p.more_args
            && !classify::tables::table(paths::basename(&sc.binary))
                .is_some_and(|t| t.operands == classify::opts::Operands::Free)
        {
            risks.push(format!(
                "`{}` gets more arguments from its input, not known before it runs",
                sc.binary
            ));
        }
        let free = classify::tables::table(paths::basename(&sc.binary))
            .is_some_and(|t| t.operands == classify::opts::Operands::Free);
        for (i, w) in words
            .iter()
            .enumerate()
            .take(facts.skip_from.min(words.len()))
            .skip(1)
        {
            if !w.dynamic || w.procsub || free {
                continue;
            }
            if w.split {
                risks.push(format!(
                    "the unquoted `{}` may become several arguments, not known before it runs",
                    w.text
                ));
            } else if !facts.data.contains(&i) {
                risks.push(format!(
                    "the argument `{}` is not known before it runs",
                    w.text
                ));
            }
        }
        risks.extend(self.assign_risks(&expanded_assigns));
        risks.extend(Self::builtin_risk(words));
        if !facts.inners.iter().any(|i| matches!(i, Inner::Line { .. })) {
            risks.extend(script_risk(words));
        }
        if !p.redir_texts.is_empty()
            && let Some(w) = p.words.iter().find(|w| is_fd_variable(&w.text))
        {
            // `{fd}>file` opens a descriptor and sets the variable `fd`.
            risks.push(format!(
                "`{}` before a redirection names a descriptor variable the analysis does not follow",
                w.text
            ));
        }
        for why in risks {
            add_tag(&mut sc.tags, tags::OPAQUE);
            sc.notes.push(why);
        }

        // environment
        let mut redirect_writes = false;
        let mut lines: Vec<(String, bool, String)> = Vec::new();
        for a in &p.assigns {
            if p.words.is_empty() {
                self.set_var(&a.name, value_is_clean(&a.value));
            }
            sc.env_changes.push(a.name.clone());
            Self::env_exec(&mut sc, &a.name, &a.value, &mut lines);
            Self::locale_change(&mut sc, &a.name, &a.value);
            if let Some(why) = assignment_risk(p.words.first(), &a.name, &a.value) {
                add_tag(&mut sc.tags, tags::OPAQUE);
                sc.notes.push(why);
            }
        }
        for n in &facts.env_changes {
            sc.env_changes.push(n.clone());
            let clean = facts.env_assigns.iter().any(|&i| {
                words.get(i).is_some_and(|w| {
                    wrappers::assignment_name(&w.text) == Some(n.as_str())
                        && w.text.split_once('=').is_some_and(|(_, v)| {
                            value_is_clean(&Word {
                                text: v.to_owned(),
                                ..w.clone()
                            })
                        })
                })
            });
            self.set_var(n, clean);
        }
        self.integers.extend(facts.int_vars.iter().cloned());
        for &i in &facts.env_assigns {
            let Some(w) = words.get(i) else { continue };
            if let Some(eq) = w.text.find('=') {
                let name = w.text[..eq].trim_end_matches('+');
                let value = Word {
                    text: w.text[eq + 1..].to_owned(),
                    ..w.clone()
                };
                if let Some(why) = self.integer_risk(name, Some(&value)) {
                    add_tag(&mut sc.tags, tags::OPAQUE);
                    sc.notes.push(why);
                }
                let value = Word {
                    text: w.text[eq + 1..].to_owned(),
                    dynamic: w.dynamic,
                    ..Word::default()
                };
                Self::env_exec(&mut sc, name, &value, &mut lines);
                Self::locale_change(&mut sc, name, &value);
            }
        }
        // Set by a builtin to a value not known here (`read PAGER`,
        // `printf -v PATH`).
        for n in &facts.env_changes {
            if !facts.env_assigns.iter().any(|&i| {
                words
                    .get(i)
                    .and_then(|w| wrappers::assignment_name(&w.text))
                    == Some(n.as_str())
            }) {
                if !facts.int_vars.contains(n)
                    && let Some(why) = self.integer_risk(n, None)
                {
                    add_tag(&mut sc.tags, tags::OPAQUE);
                    sc.notes.push(why);
                }
                let unknown = Word {
                    text: format!("${n}"),
                    dynamic: true,
                    ..Word::default()
                };
                Self::env_exec(&mut sc, n, &unknown, &mut lines);
            }
        }
        let mut var_writes: Vec<(String, Word)> = Vec::new();
        for a in &p.assigns {
            var_writes.push((a.name.clone(), a.value.clone()));
        }
        for &i in &facts.env_assigns {
            if let Some((name, value)) = words.get(i).and_then(|w| w.text.split_once('=')) {
                var_writes.push((
                    name.trim_end_matches('+').to_owned(),
                    Word {
                        text: value.to_owned(),
                        dynamic: words[i].dynamic,
                        ..Word::default()
                    },
                ));
            }
        }
        for (name, value) in var_writes {
            if writes_to_value(&name, &value.text) {
                let what = format!("file named by `{name}`");
                self.add_write(&mut sc, &value.text, value.dynamic, &what, None);
                redirect_writes |= value.dynamic || !value.text.is_empty();
            }
        }
        dedup(&mut sc.env_changes);
        self.cdpath |= sc.env_changes.iter().any(|n| n == "CDPATH");
        for n in &sc.env_changes {
            if let Some(why) = vars::shell_risk(n) {
                add_tag(&mut sc.tags, tags::OPAQUE);
                sc.notes.push(why);
            }
        }

        // writes
        let base_text = facts.base.as_ref().and_then(|b| Self::path_text(b, words));
        let base = base_text
            .as_ref()
            .filter(|(_, d)| !d)
            .map(|(t, _)| self.resolve(t, None).0);
        for w in &p.redir_writes {
            self.add_write(&mut sc, &w.text, w.dynamic, "redirect target", None);
            redirect_writes = true;
        }
        if redirect_writes && sc.writes.is_empty() && !sc.tags.contains(&tags::OPAQUE) {
            redirect_writes = false;
        }
        for pr in &facts.writes {
            let Some((text, dynamic)) = Self::path_text(pr, words) else {
                continue;
            };
            if text.contains("{}") && !p.placeholder.is_empty() {
                for root in &p.placeholder {
                    if !sc.writes.contains(root) {
                        sc.writes.push(root.clone());
                    }
                }
                continue;
            }
            self.add_write(&mut sc, &text, dynamic, "write target", base.as_deref());
        }
        for w in &p.extra_writes {
            if !sc.writes.contains(w) {
                sc.writes.push(w.clone());
            }
        }
        if p.from_ast {
            for inh in &self.inherited_reads {
                match inh {
                    Ok(path) => {
                        if !sc.reads.contains(path) {
                            sc.reads.push(path.clone());
                        }
                    }
                    Err(note) => {
                        add_tag(&mut sc.tags, tags::OPAQUE);
                        sc.notes.push(note.clone());
                    }
                }
            }
            for inh in &self.inherited {
                match inh {
                    Ok(path) => {
                        if !sc.writes.contains(path) {
                            sc.writes.push(path.clone());
                        }
                        redirect_writes = true;
                    }
                    Err(note) => {
                        add_tag(&mut sc.tags, tags::OPAQUE);
                        sc.notes.push(note.clone());
                    }
                }
            }
        }
        if (facts.recursive_delete || p.synthetic.is_some())
            && let Some(w) = sc
                .writes
                .iter()
                .find(|w| paths::is_root_or_home(w, &self.home))
        {
            let note = format!("recursive delete of `{w}`");
            add_tag(&mut sc.tags, tags::RM_ROOT);
            sc.notes.push(note);
        }
        if let Some(w) = sc.writes.iter().find(|w| paths::is_block_device(w)) {
            let note = format!("writes to the block device `{w}`");
            add_tag(&mut sc.tags, tags::DD_DEVICE);
            sc.notes.push(note);
        }

        // reads
        for w in &p.redir_reads {
            if w.dynamic {
                // `< "$f"`, `exec 3<$F`, `$(< $X)`: a file not known, which
                // a read rule could not decide.
                add_tag(&mut sc.tags, tags::OPAQUE);
                sc.notes.push(format!(
                    "the file `{}` it reads is not known before it runs",
                    w.text
                ));
            } else {
                self.add_read(&mut sc, &w.text, None);
            }
        }
        let mut used = vec![false; words.len()];
        for &i in &facts.skip {
            if let Some(u) = used.get_mut(i) {
                *u = true;
            }
        }
        for pr in facts.reads.iter().chain(facts.writes.iter()) {
            if let PathRef::Arg { idx, .. } = pr
                && let Some(u) = used.get_mut(*idx)
            {
                *u = true;
            }
        }
        if !p.placeholder.is_empty() && words.iter().skip(1).any(|w| w.text.contains("{}")) {
            // `{}` is every file below the roots `find` walks.
            for root in &p.placeholder {
                let all = format!("{}/**", root.trim_end_matches('/'));
                if !sc.reads.contains(&all) {
                    sc.reads.push(all);
                }
            }
        }
        for pr in &facts.reads {
            if let PathRef::Arg { idx, .. } = pr
                && words.get(*idx).is_some_and(|w| w.procsub)
            {
                // `<(cmd)`: a pipe from a command analysed on its own.
                continue;
            }
            match Self::path_text(pr, words) {
                Some((text, false)) => self.add_read(&mut sc, &text, base.as_deref()),
                Some((text, true)) => {
                    add_tag(&mut sc.tags, tags::OPAQUE);
                    sc.notes.push(format!(
                        "the file `{text}` it reads is not known before it runs"
                    ));
                }
                None => {}
            }
        }
        for (i, w) in words
            .iter()
            .enumerate()
            .take(facts.skip_from.min(words.len()))
            .skip(1)
        {
            if used[i] || w.dynamic || w.procsub {
                continue;
            }
            if paths::looks_like_path(&w.text) {
                self.add_read(&mut sc, &w.text, base.as_deref());
            }
        }

        // programs read from standard input
        let bin_name = paths::basename(&sc.binary).to_owned();
        if let Some(is_shell) = facts.stdin_program {
            match (&p.script, p.stdin) {
                (Some((text, dynamic)), _) => {
                    if is_shell {
                        if *dynamic {
                            add_tag(&mut sc.tags, tags::OPAQUE);
                            sc.notes.push(format!(
                                "the script fed to `{bin_name}` is not known before it runs"
                            ));
                        }
                        lines.push((
                            text.clone(),
                            *dynamic,
                            format!("here-document fed to `{bin_name}`"),
                        ));
                    } else {
                        add_tag(&mut sc.tags, tags::INLINE_INTERPRETER);
                        sc.notes.push(format!(
                            "`{bin_name}` reads its program from a here-document"
                        ));
                    }
                }
                (None, Stdin::File) => {
                    // `sh < script`: a program in a file the analysis does
                    // not read.
                    add_tag(&mut sc.tags, tags::OPAQUE);
                    sc.notes.push(format!(
                        "`{bin_name}` runs a program it reads from a file, which the analysis does not read"
                    ));
                }
                (None, Stdin::Pipe | Stdin::ProcSub) => {
                    add_tag(&mut sc.tags, tags::PIPE_TO_SHELL);
                    sc.notes
                        .push(format!("`{bin_name}` runs a program it reads from a pipe"));
                    if env.upstream_decoder {
                        add_tag(&mut sc.tags, tags::BASE64_EXEC);
                        sc.notes.push("decoded data is run as a program".to_owned());
                    }
                }
                _ => {}
            }
        }
        if facts.sql
            && let Some((text, _)) = &p.script
            && classify::sql_is_destructive(text)
        {
            sens = Sensitivity::Destructive;
            sc.notes
                .push(format!("`{bin_name}` drops or truncates data"));
        }
        if env.in_subst && matches!(bin_name.as_str(), "curl" | "wget") {
            add_tag(&mut sc.tags, tags::REMOTE_SUBSTITUTION);
            sc.notes.push(format!(
                "output of `{bin_name}` is substituted into a command"
            ));
        }
        if !sc.binary.is_empty() {
            if env.background && self.func.as_deref() == Some(sc.binary.as_str()) {
                add_tag(&mut sc.tags, tags::FORK_BOMB);
                sc.notes.push(format!(
                    "function `{}` calls itself in the background",
                    sc.binary
                ));
            } else if self.bombs.contains(&sc.binary) {
                add_tag(&mut sc.tags, tags::FORK_BOMB);
                sc.notes
                    .push(format!("calls the fork bomb `{}`", sc.binary));
            }
        }

        // inner commands
        let mut inners: Vec<Pending> = Vec::new();
        for inner in &facts.inners {
            match inner {
                Inner::Argv {
                    start,
                    end,
                    note,
                    stdin,
                    placeholder,
                    more_args,
                } => {
                    let Some(ws) = words.get(*start..*end) else {
                        continue;
                    };
                    let mut q = Pending::new(ws.to_vec(), None);
                    q.note = Some(note.clone());
                    q.fds.clone_from(&p.fds);
                    q.more_args = *more_args;
                    if *stdin {
                        q.stdin = p.stdin;
                        q.script.clone_from(&p.script);
                    }
                    for pr in placeholder {
                        if let Some((t, false)) = Self::path_text(pr, words) {
                            q.placeholder.push(self.resolve(&t, base.as_deref()).0);
                        }
                    }
                    inners.push(q);
                }
                Inner::Synthetic {
                    argv,
                    writes,
                    note,
                    sensitivity,
                } => {
                    let mut q = Pending::new(argv.iter().map(Word::literal).collect(), None);
                    q.note = Some(note.clone());
                    q.synthetic = Some(*sensitivity);
                    for pr in writes {
                        if let Some((t, false)) = Self::path_text(pr, words) {
                            q.extra_writes.push(self.resolve(&t, base.as_deref()).0);
                        }
                    }
                    inners.push(q);
                }
                Inner::Line {
                    text,
                    dynamic,
                    note,
                } => {
                    if *dynamic {
                        add_tag(&mut sc.tags, tags::OPAQUE);
                        sc.notes.push(format!("{note} is not known before it runs"));
                    }
                    lines.push((text.clone(), *dynamic, note.clone()));
                }
            }
        }

        // sensitivity
        if redirect_writes {
            sens = sens.max(Sensitivity::Write);
        }
        if sc.tags.iter().any(|t| {
            matches!(
                *t,
                tags::RM_ROOT | tags::MKFS | tags::DD_DEVICE | tags::FORK_BOMB | tags::FORCE_PUSH
            )
        }) {
            sens = Sensitivity::Destructive;
        }
        if sc.tags.iter().any(|t| {
            matches!(
                *t,
                tags::OPAQUE
                    | tags::ENV_EXEC
                    | tags::PIPE_TO_SHELL
                    | tags::EVAL
                    | tags::INLINE_INTERPRETER
                    | tags::BASE64_EXEC
            )
        }) {
            sens = sens.max(Sensitivity::Mutate);
        }
        sc.sensitivity = sens;
        sc.tags.sort_unstable();
        sc.tags.dedup();
        dedup(&mut sc.notes);

        let idx = self.out.len();
        if !words.is_empty()
            && !words[0].dynamic
            && loads::is_runner(paths::basename(&words[0].text))
        {
            let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
            if let Some(files) = loads::loaded_by(&texts) {
                self.runners.push((idx, files, self.cwd.clone()));
            }
        }
        self.out.push(sc);

        if p.from_ast && p.parent == env.parent {
            let before = self.cwd.clone();
            self.apply_cd(facts.cd.as_ref(), words);
            if !env.guarded && self.cwd != before && facts.cd.is_some() {
                // `cd X; ...`: if X does not exist the shell stays where it
                // was, so what follows may run in either directory.
                self.cwd = None;
            }
            if facts.cd.is_some()
                && self
                    .functions
                    .iter()
                    .any(|f| f.name == self.out[idx].binary)
            {
                // `cd() { ...; }`: the function may run instead.
                self.cwd = None;
            }
            if words.len() == 1 && words[0].text == "exec" {
                // `exec 3<file`: the descriptors stay open for the rest.
                self.exec_fds.extend(p.fds.iter().cloned());
            }
        }
        if p.from_ast && !p.words.is_empty() && !p.words[0].dynamic {
            self.call(&p.words[0].text, idx, env);
        }
        // A POSIX shell runs the payload of `sh -c` and the command lines of
        // variables (`GIT_SSH_COMMAND`): no braces, no `time` keyword.
        let posix = POSIX_SHELLS.contains(&bin_name.as_str());
        for (text, _dynamic, note) in lines {
            let stdin = if note.starts_with("payload") {
                p.stdin
            } else {
                Stdin::Default
            };
            let saved = self.posix;
            self.posix = posix || note.starts_with("command in `");
            self.line(&text, &note, Some(idx), env, false, stdin);
            self.posix = saved;
        }
        for q in &mut inners {
            q.parent = Some(idx);
        }
        Some((idx, facts.decoder, inners))
    }

    /// Why a builtin changes how bash reads the rest of the line: `set`
    /// options not modelled, name references (`declare -n`: assignments
    /// through them reach a variable not named).
    fn builtin_risk(words: &[Word]) -> Option<String> {
        let (first, args) = words.split_first()?;
        if first.dynamic {
            return None;
        }
        match first.text.as_str() {
            "set" => {
                let args: Vec<(&str, bool)> =
                    args.iter().map(|w| (w.text.as_str(), w.dynamic)).collect();
                vars::set_risk(&args)
            }
            "declare" | "typeset" | "local" => args
                .iter()
                .take_while(|w| w.text != "--")
                .any(|w| {
                    (w.dynamic && w.literal_len() == 0)
                        || (w.text.starts_with('-') && w.text.contains('n'))
                })
                .then(|| format!("`{}` may make a name reference, whose assignments reach a variable not named", first.text)),
            _ => None,
        }
    }

    fn apply_cd(&mut self, cd: Option<&Cd>, words: &[Word]) {
        match cd {
            None => {}
            Some(Cd::Home) => self.cwd = Some(self.home.clone()),
            Some(Cd::Unknown) => self.cwd = None,
            Some(Cd::To(pr)) => match Self::path_text(pr, words) {
                Some((t, false))
                    if self.cdpath
                        && !t.starts_with(['/', '.', '~'])
                        && paths::home_rest(&t).is_none() =>
                {
                    self.cwd = None;
                }
                Some((t, false)) => {
                    let (abs, unknown) = self.resolve(&t, None);
                    self.cwd = if unknown { None } else { Some(abs) };
                }
                _ => self.cwd = None,
            },
        }
    }
}

/// A variable that makes programs run other programs or code
/// ([`EXEC_VARS`] and its families): tagged `env-exec`.
fn is_exec_var(name: &str) -> bool {
    EXEC_VARS.contains(&name)
        || name.starts_with("BASH_FUNC_")
        || name.starts_with("DYLD_")
        || name.starts_with("GIT_CONFIG_")
}

/// Variables that name directories a program loads code from: a list of
/// the project's own directories (`PYTHONPATH=src`) adds no code beyond
/// the project's, which the program runs anyway.
const CODE_PATH_VARIABLES: &[&str] = &["PYTHONPATH", "NODE_PATH", "PERL5LIB", "RUBYLIB"];

/// Why `NAME=value` before `program` (or alone: exported already, it
/// reaches every program that follows) makes the command opaque: a
/// variable the program reads for options, code or configuration and that
/// is not inert for it (`TAR_OPTIONS`, `MAKEFLAGS`, `npm_config_*`,
/// `classify::env`). A wrapper (`nice`, `timeout`) hands it on: any reader.
fn assignment_risk(program: Option<&Word>, name: &str, value: &Word) -> Option<String> {
    if is_exec_var(name) {
        // Decided by its own tag (`env-exec`), a command-valued one
        // analysed as a command (`GIT_PAGER=cat`).
        return None;
    }
    if CODE_PATH_VARIABLES.contains(&name)
        && value_is_clean(value)
        && value.text.split(':').all(|d| {
            !d.is_empty()
                && !d.starts_with(['/', '~', '-'])
                && !d.split('/').any(|part| part == "..")
        })
    {
        return None;
    }
    match program
        .filter(|w| !w.dynamic)
        .map(|w| paths::basename(&w.text))
    {
        Some(p) if !HANDS_ON_ENVIRONMENT.contains(&p) => classify::env::risk(p, name),
        _ => classify::env::risk_any(name),
    }
}

/// Programs that run another with the environment they were given.
const HANDS_ON_ENVIRONMENT: &[&str] = &[
    "env",
    "nice",
    "nohup",
    "timeout",
    "gtimeout",
    "time",
    "stdbuf",
    "setsid",
    "sudo",
    "doas",
    "xargs",
    "exec",
    "command",
    "builtin",
    "ionice",
    "chrt",
    "taskset",
    "unbuffer",
    "flock",
    "strace",
    "ltrace",
    "watch",
    "parallel",
    "caffeinate",
    "chroot",
    "script",
    "systemd-run",
];

/// Is a value one bash cannot run anything from when it is evaluated as a
/// name or arithmetic later (no expansion, subscript or glob)?
fn value_is_clean(w: &Word) -> bool {
    !w.dynamic && !w.broken && !w.text.contains(['[', '$', '`', '*', '?'])
}

/// Shells without bash's extensions (braces, the `time` keyword): what
/// their `-c` payload means may differ from bash's reading.
const POSIX_SHELLS: &[&str] = &["sh", "dash", "ash", "ksh", "mksh", "posh", "yash"];

/// Shells that run a script file named as their first operand.
const SHELLS: &[&str] = &[
    "bash", "sh", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "yash", "posh", "rbash", "fish",
    "csh", "tcsh",
];

/// Options of those shells that take the next word as their value.
const SHELL_VALUE_OPTIONS: &[&str] = &["-o", "+o", "-O", "+O", "--rcfile", "--init-file"];

/// Why a command runs a script from a file (`source lib.sh`, `. ./x`,
/// `bash build.sh`): code the analysis does not read.
fn script_risk(words: &[Word]) -> Option<String> {
    let (first, args) = words.split_first()?;
    let name = paths::basename(&first.text);
    let script = if matches!(first.text.as_str(), "source" | ".") {
        args.iter().find(|w| w.text != "--")
    } else if SHELLS.contains(&name) {
        let mut it = args.iter();
        let mut found = None;
        while let Some(w) = it.next() {
            let t = w.text.as_str();
            if SHELL_VALUE_OPTIONS.contains(&t) {
                it.next();
            } else if t == "--" {
                found = it.next();
                break;
            } else if !(t.starts_with('-') || t.starts_with('+')) || w.dynamic {
                found = Some(w);
                break;
            }
        }
        found
    } else {
        None
    }?;
    Some(format!(
        "`{name}` runs the commands in `{}`, which the analysis does not read",
        script.text
    ))
}

/// `{NAME}`: before a redirection, a variable bash stores a new descriptor in.
fn is_fd_variable(text: &str) -> bool {
    text.strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .is_some_and(|n| {
            n.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

fn add_tag(tags: &mut Vec<&'static str>, tag: &'static str) {
    if !tags.contains(&tag) {
        tags.push(tag);
    }
}

fn dedup(v: &mut Vec<String>) {
    let mut seen: Vec<String> = Vec::with_capacity(v.len());
    v.retain(|x| {
        if seen.contains(x) {
            false
        } else {
            seen.push(x.clone());
            true
        }
    });
}

fn kind_str(kind: &ast::IoFileRedirectKind) -> &'static str {
    match kind {
        ast::IoFileRedirectKind::Read => "<",
        ast::IoFileRedirectKind::Write => ">",
        ast::IoFileRedirectKind::Append => ">>",
        ast::IoFileRedirectKind::ReadAndWrite => "<>",
        ast::IoFileRedirectKind::Clobber => ">|",
        ast::IoFileRedirectKind::DuplicateInput => "<&",
        ast::IoFileRedirectKind::DuplicateOutput => ">&",
    }
}

/// `<(...)` / `>(...)` as written.
fn procsub_text(
    kind: &ast::ProcessSubstitutionKind,
    ps: &ast::SubshellCommand,
    src: &str,
) -> String {
    let sigil = match kind {
        ast::ProcessSubstitutionKind::Read => '<',
        ast::ProcessSubstitutionKind::Write => '>',
    };
    match span_str(src, &ps.loc) {
        Some(s) if s.starts_with('(') => format!("{sigil}{s}"),
        _ => format!("{sigil}({})", ps.list),
    }
}

/// The source text of a span (whose indices count characters).
fn span_str<'s>(src: &'s str, span: &brush_parser::SourceSpan) -> Option<&'s str> {
    let (start, end) = (span.start.index, span.end.index);
    if end < start {
        return None;
    }
    if src.is_ascii() {
        return src.get(start..end);
    }
    let mut it = src
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(src.len()));
    let s = it.nth(start)?;
    let e = if end == start {
        s
    } else {
        it.nth(end - start - 1)?
    };
    src.get(s..e)
}

/// The function definitions anywhere in `list`, nested ones too.
fn definitions<'a>(list: &'a ast::CompoundList, out: &mut Vec<&'a ast::FunctionDefinition>) {
    for item in &list.0 {
        let and_or = &item.0;
        let pipelines =
            std::iter::once(&and_or.first).chain(and_or.additional.iter().map(|a| match a {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
            }));
        for p in pipelines {
            for cmd in &p.seq {
                command_definitions(cmd, out);
            }
        }
    }
}

fn command_definitions<'a>(cmd: &'a ast::Command, out: &mut Vec<&'a ast::FunctionDefinition>) {
    match cmd {
        ast::Command::Function(def) => {
            out.push(def);
            compound_definitions(&def.body.0, out);
        }
        ast::Command::Compound(cc, _) => compound_definitions(cc, out),
        ast::Command::Simple(_) | ast::Command::ExtendedTest(..) => {}
    }
}

fn compound_definitions<'a>(
    cc: &'a ast::CompoundCommand,
    out: &mut Vec<&'a ast::FunctionDefinition>,
) {
    use ast::CompoundCommand as C;
    match cc {
        C::BraceGroup(b) => definitions(&b.list, out),
        C::Subshell(s) => definitions(&s.list, out),
        C::ForClause(f) => definitions(&f.body.list, out),
        C::ArithmeticForClause(f) => definitions(&f.body.list, out),
        C::WhileClause(w) | C::UntilClause(w) => {
            definitions(&w.0, out);
            definitions(&w.1.list, out);
        }
        C::CaseClause(c) => {
            for item in &c.cases {
                if let Some(body) = &item.cmd {
                    definitions(body, out);
                }
            }
        }
        C::IfClause(i) => {
            definitions(&i.condition, out);
            definitions(&i.then, out);
            for e in i.elses.iter().flatten() {
                if let Some(c) = &e.condition {
                    definitions(c, out);
                }
                definitions(&e.body, out);
            }
        }
        C::Coprocess(c) => command_definitions(&c.body, out),
        C::Arithmetic(_) => {}
    }
}
