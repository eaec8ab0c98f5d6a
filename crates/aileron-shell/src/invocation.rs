//! What a shell is asked to run, from its bash-style arguments
//! (`aileron-sh` is called the way agents call bash), and the arguments
//! and environment the real shell is then started with, so that it runs
//! only what was decided.
//!
//! bash runs more than its command: start-up files (`/etc/profile`,
//! `~/.bash_profile`, `~/.bashrc`, `--rcfile FILE`, and `~/.bash_logout`
//! when a login shell exits, even under `--noprofile`), the debugger's
//! start file (`--debugger`, `-O extdebug`), and code from its environment
//! (`BASH_ENV`, exported functions, `SHELLOPTS` with `xtrace` and a `PS4`
//! holding `$(...)`, prompts). None of that is part of the line that was
//! decided, so [`checked_args`] drops the login and interactive modes
//! (`-l`, `--login`, `-i`; a login shell's `argv[0]` dash is not passed on
//! either), refuses the options that name a file to run, [`startup_off`]
//! switches bash's start-up files off, and [`runs_as_code`] names the
//! variables the shim takes out of the environment.

use crate::Error;

/// The forms agents call a shell with.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    /// `-c CMD` (also `-lc`, `-c -l`, `-ic`, `-l -i -c`, ...).
    Command(String),
    /// `SCRIPT [ARGS]`: run a script file.
    Script(String),
    /// No command: an interactive shell, or a script read from stdin.
    Shell,
    /// `--version`, `--help`: harmless probes.
    Probe,
}

/// Where a shell's options end, as bash reads them.
struct Options {
    command_mode: bool,
    /// `-s`: commands come from stdin; the remaining words are `$1`, `$2`, ...
    stdin_mode: bool,
    probe: bool,
    /// The index after the last option word (an option's argument included),
    /// before a `--`, `-` or `+` that ends them.
    end: usize,
    /// The index of the first operand.
    operands: usize,
}

/// Reads bash's options far enough to know what will run, as bash reads
/// them: `c` and `s` count whichever their sign (`+c` is `-c`), each `o`
/// or `O` in a group takes the next argument (`-coo pipefail errexit CMD`),
/// and `--`, a lone `-` or a lone `+` ends the options.
fn options(args: &[String]) -> Options {
    let mut o = Options {
        command_mode: false,
        stdin_mode: false,
        probe: false,
        end: args.len(),
        operands: args.len(),
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--version" | "--help" => {
                o.probe = true;
                return o;
            }
            "--" | "-" | "+" => {
                o.end = i;
                o.operands = i + 1;
                return o;
            }
            "--rcfile" | "--init-file" => i += 1,
            // Other long options take no argument (after a short option
            // bash refuses them and runs nothing).
            _ if a.starts_with("--") => {}
            _ if a.starts_with('-') || a.starts_with('+') => {
                let group = &a[1..];
                o.command_mode |= group.contains('c');
                o.stdin_mode |= group.contains('s');
                i += group.chars().filter(|&c| c == 'o' || c == 'O').count();
            }
            _ => {
                o.end = i;
                o.operands = i;
                return o;
            }
        }
        i += 1;
    }
    o.end = args.len().min(i);
    o.operands = o.end;
    o
}

/// Whether `name` (a file name, no directory) is a shell's.
pub fn is_shell_name(name: &str) -> bool {
    crate::classify::interp::is_shell(name)
}

/// What `args` ask the shell to run (see [`options`] for how they are read).
pub fn parse(args: &[String]) -> Invocation {
    let o = options(args);
    if o.probe {
        return Invocation::Probe;
    }
    match (o.command_mode, args.get(o.operands)) {
        (true, Some(cmd)) => Invocation::Command(cmd.clone()),
        // `bash -c` without a command is an error bash reports itself.
        (true, None) => Invocation::Probe,
        (false, _) if o.stdin_mode => Invocation::Shell,
        (false, Some(script)) => Invocation::Script(script.clone()),
        (false, None) => Invocation::Shell,
    }
}

/// Variables the real shell runs as code, or that change how it reads the
/// command: taken out of the environment the shim hands it. `BASH_ENV`
/// (and `ENV` in POSIX mode) names a file a shell runs first, `SHELLOPTS`
/// and `BASHOPTS` switch options on (`xtrace`, `extdebug`) whose hooks
/// run `PS4` and more, and the prompts hold command substitutions.
pub const STRIPPED_VARIABLES: [&str; 9] = [
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "PROMPT_COMMAND",
];

/// Exported functions (`BASH_FUNC_git%%=() { ...; }`), which bash defines
/// before it reads the command: `git` would then run the function.
pub const FUNCTION_PREFIX: &str = "BASH_FUNC_";

/// Whether the environment variable `name` is one the shim takes out.
pub fn runs_as_code(name: &str) -> bool {
    name.starts_with(FUNCTION_PREFIX) || STRIPPED_VARIABLES.contains(&name)
}

/// The arguments the real shell gets in place of `args`: the same, but a
/// shell that is neither a login shell nor interactive (`l` and `i` are
/// taken out of option groups, `--login` is dropped), since either would
/// read start-up files that were not decided, and an interactive shell
/// reads its command differently from the analysis (aliases). Options
/// that name a file for bash to run are refused, with the one line to
/// print (the error's message): `--rcfile FILE`, `--init-file FILE`,
/// `--debugger` and `-O extdebug` (the debugger's start file).
pub fn checked_args(args: &[String]) -> Result<Vec<String>, Error> {
    let refuse =
        |option: &'static str, runs: &'static str| Err(Error::RunsUncheckedFile { option, runs });
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            // bash prints and exits; the options end.
            "--version" | "--help" | "--" | "-" | "+" => break,
            "--login" => {}
            "--rcfile" => return refuse("--rcfile", "a start-up file"),
            "--init-file" => return refuse("--init-file", "a start-up file"),
            "--debugger" => return refuse("--debugger", "the debugger's start file"),
            _ if a.starts_with("--") => out.push(a.to_owned()),
            _ if a.starts_with('-') || a.starts_with('+') => {
                let (sign, group) = a.split_at(1);
                let mut kept = sign.to_owned();
                let mut words = Vec::new();
                for c in group.chars() {
                    match c {
                        'l' | 'i' => {}
                        'o' | 'O' => {
                            kept.push(c);
                            if let Some(word) = args.get(i + 1 + words.len()) {
                                if c == 'O' && sign == "-" && word == "extdebug" {
                                    return refuse("-O extdebug", "the debugger's start file");
                                }
                                words.push(word.clone());
                            }
                        }
                        _ => kept.push(c),
                    }
                }
                if kept.len() > 1 {
                    out.push(kept);
                }
                i += words.len();
                out.extend(words);
            }
            _ => break,
        }
        i += 1;
    }
    out.extend(args.iter().skip(i).cloned());
    Ok(out)
}

/// The options that switch off the start-up files of `real_shell`, put
/// before all others: bash reads `~/.bashrc` even without `-i` when it
/// thinks sshd started it (`SSH_CLIENT` set, `SHLVL` below 2). Other
/// shells get none (the login and interactive modes are off already).
pub fn startup_off(real_shell: &str) -> &'static [&'static str] {
    if real_shell.rsplit('/').next() == Some("bash") {
        &["--noprofile", "--norc"]
    } else {
        &[]
    }
}

/// `argv` for the real shell: its own path as `argv[0]` (a leading dash
/// would make it a login shell, which runs `~/.bash_logout` when it exits,
/// and the name `sh` would make bash a POSIX shell), the options that
/// switch its start-up files off, then `args` (as [`checked_args`] gave them).
pub fn real_shell_argv(real_shell: &str, args: Vec<String>) -> Vec<String> {
    let off = startup_off(real_shell);
    let mut argv = Vec::with_capacity(1 + off.len() + args.len());
    argv.push(real_shell.to_owned());
    argv.extend(off.iter().map(|o| (*o).to_owned()));
    argv.extend(args);
    argv
}

/// For a [`Invocation::Script`] form: the arguments that run `text`, the
/// script as it was read and decided, instead of the file, which could
/// change (or, a FIFO, yield other bytes) when the shell read it again:
/// `-c -- TEXT SCRIPT ARGS...`, so that `$0` and the positional
/// parameters are the script's. Only `BASH_SOURCE` differs (empty).
pub fn with_script_text(args: &[String], text: String) -> Vec<String> {
    let o = options(args);
    let mut out: Vec<String> = args[..o.end.min(args.len())].to_vec();
    out.extend(["-c".to_owned(), "--".to_owned(), text]);
    out.extend(args.iter().skip(o.operands).cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    fn p(args: &[&str]) -> Invocation {
        parse(&s(args))
    }

    fn checked(args: &[&str]) -> Vec<String> {
        checked_args(&s(args)).unwrap()
    }

    #[test]
    fn the_real_shell_is_named_by_its_path_and_reads_no_start_up_files() {
        assert_eq!(
            real_shell_argv("/bin/bash", s(&["-c", "ls"])),
            ["/bin/bash", "--noprofile", "--norc", "-c", "ls"]
        );
        assert_eq!(
            real_shell_argv("/usr/bin/dash", s(&["-c", "ls"])),
            ["/usr/bin/dash", "-c", "ls"]
        );
    }

    #[test]
    fn login_and_interactive_modes_are_dropped() {
        assert_eq!(checked(&["-c", "ls"]), ["-c", "ls"]);
        assert_eq!(checked(&["-lc", "ls"]), ["-c", "ls"]);
        assert_eq!(checked(&["-c", "-l", "ls"]), ["-c", "ls"]);
        assert_eq!(checked(&["-l", "-i", "-c", "x"]), ["-c", "x"]);
        assert_eq!(checked(&["-lic", "x", "-l"]), ["-c", "x", "-l"]);
        assert_eq!(checked(&["+l", "-c", "x"]), ["-c", "x"]);
        assert_eq!(checked(&["--login", "-c", "x"]), ["-c", "x"]);
        assert_eq!(
            checked(&["-lo", "pipefail", "-c", "x"]),
            ["-o", "pipefail", "-c", "x"]
        );
        // An option's argument is not an option group.
        assert_eq!(
            checked(&["-o", "ignoreeof", "-c", "x"]),
            ["-o", "ignoreeof", "-c", "x"]
        );
        assert_eq!(checked(&["-e", "-l", "s.sh", "-l"]), ["-e", "s.sh", "-l"]);
        assert_eq!(checked(&["-l", "--", "-l"]), ["--", "-l"]);
        assert_eq!(checked(&["-i"]), Vec::<String>::new());
        assert_eq!(checked(&["--version"]), ["--version"]);
    }

    #[test]
    fn options_that_name_a_file_to_run_are_refused() {
        for args in [
            &["--rcfile", "x", "-i"][..],
            &["--init-file", "x", "-c", "ls"],
            &["--debugger", "-c", "ls"],
            &["-O", "extdebug", "-c", "ls"],
            &["-cO", "extdebug", "ls"],
            &["-oO", "pipefail", "extdebug", "-c", "ls"],
        ] {
            let err = checked_args(&s(args)).unwrap_err().to_string();
            assert!(err.starts_with("aileron: denied: "), "{args:?}: {err}");
        }
        assert!(checked_args(&s(&["+O", "extdebug", "-c", "ls"])).is_ok());
        assert!(checked_args(&s(&["-o", "extdebug", "-c", "ls"])).is_ok());
    }

    #[test]
    fn a_script_runs_as_the_text_that_was_read() {
        let run = |args: &[&str]| with_script_text(&s(args), "T".into());
        assert_eq!(run(&["s.sh", "a"]), ["-c", "--", "T", "s.sh", "a"]);
        assert_eq!(
            run(&["-e", "-o", "pipefail", "s.sh"]),
            ["-e", "-o", "pipefail", "-c", "--", "T", "s.sh"]
        );
        assert_eq!(run(&["--", "-s.sh", "a"]), ["-c", "--", "T", "-s.sh", "a"]);
        assert_eq!(run(&["-", "s.sh"]), ["-c", "--", "T", "s.sh"]);
        // What the shim runs is the command it decided.
        let args = run(&["-e", "--", "s.sh", "a"]);
        assert_eq!(parse(&args), Invocation::Command("T".into()));
    }

    #[test]
    fn variables_that_run_as_code_are_named() {
        for name in ["BASH_ENV", "ENV", "BASH_FUNC_git%%", "SHELLOPTS", "PS4"] {
            assert!(runs_as_code(name), "{name}");
        }
        for name in ["PATH", "HOME", "ENVIRONMENT", "BASH", "MY_BASH_ENV"] {
            assert!(!runs_as_code(name), "{name}");
        }
    }

    #[test]
    fn the_ways_agents_call_a_shell() {
        let c = |s: &str| Invocation::Command(s.to_owned());
        assert_eq!(p(&["-c", "ls"]), c("ls"));
        assert_eq!(p(&["-lc", "ls"]), c("ls"));
        assert_eq!(p(&["-c", "-l", "ls"]), c("ls"));
        assert_eq!(p(&["-l", "-c", "ls"]), c("ls"));
        assert_eq!(p(&["-l", "-i", "-c", "echo $PATH"]), c("echo $PATH"));
        assert_eq!(p(&["-ic", "ls", "argv0", "a1"]), c("ls"));
        assert_eq!(p(&["--login", "-c", "ls"]), c("ls"));
        assert_eq!(p(&["-o", "pipefail", "-c", "ls"]), c("ls"));
        assert_eq!(
            p(&["script.sh", "a"]),
            Invocation::Script("script.sh".into())
        );
        assert_eq!(
            p(&["-e", "script.sh"]),
            Invocation::Script("script.sh".into())
        );
        assert_eq!(p(&[]), Invocation::Shell);
        assert_eq!(p(&["-l"]), Invocation::Shell);
        assert_eq!(p(&["-i"]), Invocation::Shell);
        assert_eq!(p(&["-s"]), Invocation::Shell);
        assert_eq!(p(&["-s", "arg1"]), Invocation::Shell);
        assert_eq!(p(&["--version"]), Invocation::Probe);
    }

    /// Each form checked against bash 5.2 (`bash ARGS` with the command
    /// text `echo MARK` runs `MARK`): what bash runs is what is decided.
    #[test]
    fn options_end_and_take_arguments_as_in_bash() {
        let c = |s: &str| Invocation::Command(s.to_owned());
        assert_eq!(p(&["-c", "-", "rm x"]), c("rm x"));
        assert_eq!(p(&["-c", "+", "rm x"]), c("rm x"));
        assert_eq!(p(&["+c", "-", "rm x"]), c("rm x"));
        assert_eq!(p(&["+c", "rm x"]), c("rm x"));
        assert_eq!(p(&["-cs", "-", "rm x"]), c("rm x"));
        assert_eq!(p(&["-coo", "pipefail", "errexit", "rm x"]), c("rm x"));
        assert_eq!(p(&["-oO", "pipefail", "extglob", "-c", "rm x"]), c("rm x"));
        assert_eq!(p(&["-cO", "extglob", "rm x"]), c("rm x"));
        assert_eq!(p(&["+O", "extglob", "-c", "rm x"]), c("rm x"));
        assert_eq!(p(&["+s", "x"]), Invocation::Shell);
        assert_eq!(
            p(&["-", "script.sh"]),
            Invocation::Script("script.sh".into())
        );
        assert_eq!(p(&["+"]), Invocation::Shell);
    }
}
