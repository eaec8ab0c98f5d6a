//! Knowledge about specific programs: which only read, which write which of
//! their arguments, which run other programs (wrappers, interpreters, option
//! forms such as `git -c core.pager=...`), and which are catastrophic.
//!
//! [`classify`] looks at one decoded argv and returns [`Facts`]; the analyser
//! turns them into the fields of a `SimpleCommand` (resolving paths, adding
//! redirects, walking the inner commands).

mod awk;
pub(crate) mod env;
mod files;
mod git;
pub(crate) mod interp;
pub(crate) mod opts;
mod protect;
pub(crate) mod tables;
mod tools;
pub(crate) mod wrappers;

use crate::Sensitivity;
use crate::paths;
use crate::tags;
use crate::words::Word;

/// A path named by a command: resolved by the analyser against the working
/// directory (or [`Facts::base`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PathRef {
    /// `args[idx].text[off..]`.
    Arg { idx: usize, off: usize },
    /// A path the classifier made up (`.` for "the working directory").
    Lit(String),
    /// The directory `args[dir.0].text[dir.1..]` (the working directory
    /// when `None`) joined with the basename of `args[src]`: what a copy
    /// into a directory writes.
    Into {
        dir: Option<(usize, usize)>,
        src: usize,
    },
}

impl PathRef {
    pub(crate) fn arg(idx: usize) -> PathRef {
        PathRef::Arg { idx, off: 0 }
    }
}

/// A command run by the classified one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Inner {
    /// `args[start..end]` is the argv of a program it runs (`sudo rm x`).
    Argv {
        start: usize,
        end: usize,
        note: String,
        /// The inner program gets the outer one's standard input.
        stdin: bool,
        /// What `{}` stands for in the inner argv (`find -exec`).
        placeholder: Vec<PathRef>,
        /// More arguments, not known here, are added (`xargs`).
        more_args: bool,
    },
    /// A command it performs itself, reported as if it ran it
    /// (`find -delete` as `rm {}`).
    Synthetic {
        argv: Vec<String>,
        writes: Vec<PathRef>,
        note: String,
        sensitivity: Sensitivity,
    },
    /// A shell command line it runs (`bash -c`, `watch`, `git -c core.pager`).
    Line {
        text: String,
        /// The text contains expansions whose value is not known.
        dynamic: bool,
        note: String,
    },
}

/// What `cd`-like commands do to the working directory of what follows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Cd {
    To(PathRef),
    Home,
    Unknown,
}

/// What the classifier knows about one command.
#[derive(Clone, Debug)]
pub(crate) struct Facts {
    pub sensitivity: Sensitivity,
    pub tags: Vec<&'static str>,
    pub notes: Vec<String>,
    pub writes: Vec<PathRef>,
    pub reads: Vec<PathRef>,
    /// Arguments that are not paths (programs, patterns, payloads).
    pub skip: Vec<usize>,
    /// Arguments from this index on belong to an inner command.
    pub skip_from: usize,
    pub env_changes: Vec<String>,
    /// `NAME=value` arguments that set variables for an inner command
    /// (`env X=1 cmd`, `sudo X=1 cmd`, `export X=1`): index of the argument.
    pub env_assigns: Vec<usize>,
    pub inners: Vec<Inner>,
    /// Directory relative paths of this command are relative to (`git -C`).
    pub base: Option<PathRef>,
    pub cd: Option<Cd>,
    /// Decodes base64/hex/compressed data (`base64 -d`, `xxd -r`, `zcat`).
    pub decoder: bool,
    /// Reads a program from standard input; `Some(true)` for a shell.
    pub stdin_program: Option<bool>,
    /// Deletes its write targets recursively (`rm -r`): checked for `/`, `~`.
    pub recursive_delete: bool,
    /// A database client: a here-document fed to it is SQL.
    pub sql: bool,
    /// Arguments whose value may be unknown without harm (option values and
    /// data operands): any other argument from an expansion makes the
    /// command opaque.
    pub data: Vec<usize>,
    /// Arguments bash evaluates as variable names (`printf -v NAME`,
    /// `read NAME`, `test -v NAME`), as argument index and byte offset: a
    /// subscript in them is arithmetic.
    pub names: Vec<(usize, usize)>,
    /// Variables given the integer attribute (`declare -i n`): what is
    /// assigned to them later is evaluated as arithmetic.
    pub int_vars: Vec<String>,
}

impl Facts {
    pub(crate) fn new(sensitivity: Sensitivity) -> Facts {
        Facts {
            sensitivity,
            tags: Vec::new(),
            notes: Vec::new(),
            writes: Vec::new(),
            reads: Vec::new(),
            skip: Vec::new(),
            skip_from: usize::MAX,
            env_changes: Vec::new(),
            env_assigns: Vec::new(),
            inners: Vec::new(),
            base: None,
            cd: None,
            decoder: false,
            stdin_program: None,
            recursive_delete: false,
            sql: false,
            data: Vec::new(),
            names: Vec::new(),
            int_vars: Vec::new(),
        }
    }

    /// Tags the command opaque: the analysis cannot vouch for it.
    pub(crate) fn opaque(&mut self, note: impl Into<String>) {
        self.tag(tags::OPAQUE, note);
        self.at_least(Sensitivity::Mutate);
    }

    /// Takes in a parse by the program's complete table: options it does
    /// not know make the command opaque; option values, and operands when
    /// they are data, may come from expansions.
    pub(crate) fn accept(&mut self, name: &str, p: &opts::Parsed, table: &opts::Table) {
        for why in &p.problems {
            self.opaque(format!("`{name}`: {why}"));
        }
        self.data.extend(&p.values);
        match table.operands {
            opts::Operands::Free => self.data.extend(&p.operands),
            opts::Operands::Data => {
                for &i in &p.operands {
                    if p.maybe_options.contains(&i) {
                        self.opaque(format!(
                            "an argument of `{name}` is not known before it runs and may be an option"
                        ));
                    } else {
                        self.data.push(i);
                    }
                }
            }
            opts::Operands::Files => {}
        }
    }

    pub(crate) fn at_least(&mut self, s: Sensitivity) {
        if s > self.sensitivity {
            self.sensitivity = s;
        }
    }

    pub(crate) fn tag(&mut self, tag: &'static str, note: impl Into<String>) {
        self.tags.push(tag);
        self.notes.push(note.into());
        if matches!(
            tag,
            tags::RM_ROOT | tags::MKFS | tags::DD_DEVICE | tags::FORK_BOMB | tags::FORCE_PUSH
        ) {
            self.at_least(Sensitivity::Destructive);
        }
    }

    pub(crate) fn write(&mut self, idx: usize) {
        self.writes.push(PathRef::arg(idx));
    }

    pub(crate) fn write_at(&mut self, idx: usize, off: usize) {
        self.writes.push(PathRef::Arg { idx, off });
    }

    pub(crate) fn read(&mut self, idx: usize) {
        self.reads.push(PathRef::arg(idx));
    }

    /// Runs `args[start..]` as a program.
    pub(crate) fn run_argv(&mut self, args: &[Word], start: usize, note: String, stdin: bool) {
        if start < args.len() {
            self.inners.push(Inner::Argv {
                start,
                end: args.len(),
                note,
                stdin,
                placeholder: Vec::new(),
                more_args: false,
            });
            self.skip_from = self.skip_from.min(start);
        }
    }

    /// Runs the text of `args[idx][off..]` as a shell command line.
    pub(crate) fn run_line_arg(&mut self, args: &[Word], idx: usize, off: usize, note: String) {
        if let Some(w) = args.get(idx) {
            let text = w.text.get(off..).unwrap_or("");
            self.run_line(text, w.dynamic, note);
            self.skip.push(idx);
        }
    }

    pub(crate) fn run_line(&mut self, text: &str, dynamic: bool, note: String) {
        if !text.trim().is_empty() {
            self.inners.push(Inner::Line {
                text: text.to_owned(),
                dynamic,
                note,
            });
        }
    }
}

/// Classifies the command whose decoded argv is `args` (`args[0]` is the
/// program and is not dynamic).
pub(crate) fn classify(args: &[Word]) -> Facts {
    let bin = args[0].text.as_str();
    let name = paths::basename(bin);
    let name = if name.is_empty() { bin } else { name };
    let mut f = wrappers::classify(name, args)
        .or_else(|| interp::classify(name, args))
        .or_else(|| files::classify(name, args))
        .or_else(|| git::classify(name, args))
        .or_else(|| tools::classify(name, args))
        .unwrap_or_else(|| Facts::new(Sensitivity::Mutate));
    protect::check(&mut f, args);
    f
}

/// Does this SQL text drop or truncate something?
pub(crate) fn sql_is_destructive(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|w| {
        w[0] == "drop"
            && matches!(
                w[1],
                "table" | "database" | "schema" | "index" | "view" | "user" | "role" | "owned"
            )
    }) || words.contains(&"truncate")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql() {
        assert!(sql_is_destructive("DROP TABLE users;"));
        assert!(sql_is_destructive("truncate users"));
        assert!(!sql_is_destructive("select * from dropped"));
    }
}
