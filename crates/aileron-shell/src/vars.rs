//! bash's own state: its variables and its `set` options, each with what
//! the analysis does about it. A variable or option not listed makes the
//! command that changes it opaque.
//!
//! The variables are those of the bash 5.2 manual ("Shell Variables"); the
//! environment variables a *program* reads are its entry's business in the
//! program registry (`classify/`), and locale variables are checked by
//! [`crate::locale`].

/// What changing one of bash's variables does to the rest of the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Effect {
    /// Nothing the analysis relies on: a counter, a read-only value, a
    /// setting of interactive shells, or one the analysis already models
    /// (`IFS`: expanded values are never taken as known words; `CDPATH`,
    /// `TMPDIR`, `HISTFILE`, locale variables: handled where they act).
    Inert,
    /// Changes what later words, names or paths mean; says how.
    Opaque(&'static str),
}

use Effect::{Inert, Opaque};

const RUNS: &str = "changes which program a command name runs";
const PATHS: &str = "changes what `~`, `cd` or a pattern stands for";
const STARTUP: &str = "makes a shell run code from it";
const OPTIONS: &str = "changes options of the shells started later";
const GETTEXT: &str = "changes what `$\"...\"` strings are translated to";

/// bash's variables. Sorted by name.
const BASH_VARS: &[(&str, Effect)] = &[
    ("BASH", Inert),
    ("BASHOPTS", Opaque(OPTIONS)),
    ("BASHPID", Inert),
    ("BASH_ALIASES", Opaque(RUNS)),
    ("BASH_ARGC", Inert),
    ("BASH_ARGV", Inert),
    ("BASH_ARGV0", Inert),
    ("BASH_CMDS", Opaque(RUNS)),
    ("BASH_COMMAND", Inert),
    ("BASH_COMPAT", Opaque(OPTIONS)),
    ("BASH_ENV", Opaque(STARTUP)),
    ("BASH_EXECUTION_STRING", Inert),
    ("BASH_LINENO", Inert),
    ("BASH_LOADABLES_PATH", Opaque(RUNS)),
    ("BASH_REMATCH", Inert),
    ("BASH_SOURCE", Inert),
    ("BASH_SUBSHELL", Inert),
    ("BASH_TRAPSIG", Inert),
    ("BASH_VERSINFO", Inert),
    ("BASH_VERSION", Inert),
    (
        "BASH_XTRACEFD",
        Opaque("makes the trace of `set -x` write to a descriptor"),
    ),
    ("CDPATH", Inert),
    ("CHILD_MAX", Inert),
    ("COLUMNS", Inert),
    ("COMPREPLY", Inert),
    ("COPROC", Inert),
    ("DIRSTACK", Opaque(PATHS)),
    ("EMACS", Inert),
    ("ENV", Opaque(STARTUP)),
    ("EPOCHREALTIME", Inert),
    ("EPOCHSECONDS", Inert),
    ("EUID", Inert),
    ("EXECIGNORE", Opaque(RUNS)),
    ("FCEDIT", Opaque(RUNS)),
    ("FIGNORE", Inert),
    ("FUNCNAME", Inert),
    ("FUNCNEST", Inert),
    ("GLOBIGNORE", Opaque(PATHS)),
    ("GLOBSORT", Inert),
    ("GROUPS", Inert),
    ("HISTCMD", Inert),
    ("HISTCONTROL", Inert),
    ("HISTFILE", Inert),
    ("HISTFILESIZE", Inert),
    ("HISTIGNORE", Inert),
    ("HISTSIZE", Inert),
    ("HISTTIMEFORMAT", Inert),
    ("HOME", Opaque(PATHS)),
    ("HOSTFILE", Inert),
    ("HOSTNAME", Inert),
    ("HOSTTYPE", Inert),
    ("IFS", Inert),
    ("IGNOREEOF", Inert),
    ("INPUTRC", Opaque(STARTUP)),
    ("INSIDE_EMACS", Inert),
    ("LANG", Inert),
    ("LINENO", Inert),
    ("LINES", Inert),
    ("MACHTYPE", Inert),
    ("MAIL", Inert),
    ("MAILCHECK", Inert),
    ("MAILPATH", Inert),
    ("MAPFILE", Inert),
    ("OLDPWD", Opaque(PATHS)),
    ("OPTARG", Inert),
    ("OPTERR", Inert),
    ("OPTIND", Inert),
    ("OSTYPE", Inert),
    ("PATH", Opaque(RUNS)),
    ("PIPESTATUS", Inert),
    ("POSIXLY_CORRECT", Opaque(OPTIONS)),
    ("PPID", Inert),
    ("PROMPT_COMMAND", Opaque(STARTUP)),
    ("PROMPT_DIRTRIM", Inert),
    ("PS0", Opaque(STARTUP)),
    ("PS1", Opaque(STARTUP)),
    ("PS2", Opaque(STARTUP)),
    ("PS3", Inert),
    ("PS4", Opaque(STARTUP)),
    ("PWD", Opaque(PATHS)),
    ("RANDOM", Inert),
    ("REPLY", Inert),
    ("SECONDS", Inert),
    ("SHELL", Inert),
    ("SHELLOPTS", Opaque(OPTIONS)),
    ("SHLVL", Inert),
    ("SRANDOM", Inert),
    ("TEXTDOMAIN", Opaque(GETTEXT)),
    ("TEXTDOMAINDIR", Opaque(GETTEXT)),
    ("TIMEFORMAT", Inert),
    ("TMOUT", Inert),
    ("TMPDIR", Inert),
    ("UID", Inert),
    ("_", Inert),
    ("auto_resume", Inert),
    ("histchars", Inert),
];

/// Name prefixes bash keeps for itself: a name under one of them that is
/// not listed is a variable of a bash the table does not know.
const BASH_PREFIXES: &[&str] = &["BASH", "COMP_", "READLINE_"];

/// Why changing the shell variable `name` (`a[1]` counts as `a`) makes
/// the rest of the line opaque, if it does.
pub(crate) fn shell_risk(name: &str) -> Option<String> {
    let name = name.split('[').next().unwrap_or(name);
    let why = match BASH_VARS.binary_search_by(|(n, _)| n.cmp(&name)) {
        Ok(i) => match BASH_VARS[i].1 {
            Inert => return None,
            Opaque(why) => why,
        },
        Err(_) if BASH_PREFIXES.iter().any(|p| name.starts_with(p)) => {
            "is a variable of bash the analysis does not model"
        }
        Err(_) => return None,
    };
    Some(format!("the shell variable `{name}` {why}"))
}

/// `set` options (`-o NAME` and its letter) that change nothing the
/// analysis relies on: exit and trace behaviour, globbing turned off,
/// brace expansion and job control.
const SAFE_SET: &[(char, &str)] = &[
    ('e', "errexit"),
    ('u', "nounset"),
    ('x', "xtrace"),
    ('v', "verbose"),
    ('f', "noglob"),
    ('n', "noexec"),
    ('C', "noclobber"),
    ('b', "notify"),
    ('h', "hashall"),
    ('m', "monitor"),
    ('B', "braceexpand"),
    ('H', "histexpand"),
    ('E', "errtrace"),
    ('T', "functrace"),
    ('\0', "pipefail"),
    ('\0', "history"),
    ('\0', "ignoreeof"),
    ('\0', "emacs"),
    ('\0', "vi"),
    ('\0', "nolog"),
];

/// Why a `set` command's arguments change how bash reads the rest of the
/// line (`-k`, `-o keyword`, `-a`, `-P`, `-o posix`, ...), if they do.
/// `args` are the words after `set`; `dynamic[i]` says `args[i]` is not
/// known before it runs.
pub(crate) fn set_risk(args: &[(&str, bool)]) -> Option<String> {
    let mut it = args.iter();
    while let Some(&(a, dynamic)) = it.next() {
        if dynamic {
            return Some(format!(
                "the `set` option `{a}` is not known before it runs"
            ));
        }
        if a == "--" || a == "-" || !(a.starts_with('-') || a.starts_with('+')) {
            // The positional parameters follow.
            return None;
        }
        for c in a[1..].chars() {
            if c == 'o' {
                match it.next() {
                    // `set -o` alone lists the options.
                    None => return None,
                    Some(&(name, d)) => {
                        if d || !SAFE_SET.iter().any(|&(_, n)| n == name) {
                            return Some(format!(
                                "`set -o {name}` changes how bash reads the commands after it"
                            ));
                        }
                    }
                }
            } else if !SAFE_SET.iter().any(|&(l, _)| l == c && c != '\0') {
                return Some(format!(
                    "`set -{c}` changes how bash reads the commands after it"
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_for_binary_search() {
        assert!(BASH_VARS.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn variables() {
        assert!(shell_risk("BASH_CMDS[ls]").is_some());
        assert!(shell_risk("BASH_FUTURE_THING").is_some());
        assert!(shell_risk("PWD").is_some());
        assert!(shell_risk("IFS").is_none());
        assert!(shell_risk("my_var").is_none());
    }

    #[test]
    fn set_options() {
        let s = |v: &[&str]| set_risk(&v.iter().map(|a| (*a, false)).collect::<Vec<_>>());
        assert!(s(&["-euo", "pipefail"]).is_none());
        assert!(s(&["-x"]).is_none());
        assert!(s(&["--", "-k"]).is_none());
        assert!(s(&["-k"]).is_some());
        assert!(s(&["-ek"]).is_some());
        assert!(s(&["-o", "keyword"]).is_some());
        assert!(s(&["+o", "posix"]).is_some());
        assert!(s(&["-a"]).is_some());
        assert!(s(&["-P"]).is_some());
    }
}
