//! What a shell is asked to run, from its bash-style arguments
//! (`aileron-sh` is called the way agents call bash).

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

/// Reads bash's options far enough to know what will run, as bash reads
/// them: `c` and `s` count whichever their sign (`+c` is `-c`), each `o`
/// or `O` in a group takes the next argument (`-coo pipefail errexit CMD`),
/// and `--`, a lone `-` or a lone `+` ends the options.
pub fn parse(args: &[String]) -> Invocation {
    let mut command_mode = false;
    // `-s`: commands come from stdin; the remaining words are `$1`, `$2`, ...
    let mut stdin_mode = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--version" | "--help" => return Invocation::Probe,
            "--" | "-" | "+" => {
                i += 1;
                break;
            }
            "--rcfile" | "--init-file" => i += 1,
            // Other long options take no argument (after a short option
            // bash refuses them and runs nothing).
            _ if a.starts_with("--") => {}
            _ if a.starts_with('-') || a.starts_with('+') => {
                let group = &a[1..];
                command_mode |= group.contains('c');
                stdin_mode |= group.contains('s');
                i += group.chars().filter(|&c| c == 'o' || c == 'O').count();
            }
            _ => break,
        }
        i += 1;
    }
    match (command_mode, args.get(i)) {
        (true, Some(cmd)) => Invocation::Command(cmd.clone()),
        // `bash -c` without a command is an error bash reports itself.
        (true, None) => Invocation::Probe,
        (false, _) if stdin_mode => Invocation::Shell,
        (false, Some(script)) => Invocation::Script(script.clone()),
        (false, None) => Invocation::Shell,
    }
}

/// `argv[0]` for the real shell that runs in the shim's place: a login
/// shell (called as `-bash`) keeps its leading dash; otherwise it is the
/// real shell's path.
pub fn real_shell_arg0(arg0: &str, real_shell: &str) -> String {
    if arg0.starts_with('-') {
        format!("-{}", real_shell.rsplit('/').next().unwrap_or(real_shell))
    } else {
        real_shell.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_shell_keeps_its_dash() {
        assert_eq!(real_shell_arg0("-aileron-sh", "/bin/bash"), "-bash");
        assert_eq!(real_shell_arg0("/x/aileron-sh", "/bin/bash"), "/bin/bash");
        assert_eq!(real_shell_arg0("sh", "/usr/bin/zsh"), "/usr/bin/zsh");
    }

    fn p(args: &[&str]) -> Invocation {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
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
