//! Why a shell's arguments are refused.

/// What [`invocation::checked_args`](crate::invocation::checked_args) refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An option that makes the shell run a file nobody decided
    /// (`--rcfile`, `--init-file`, `--debugger`, `-O extdebug`); `runs` says
    /// what it runs.
    #[error("aileron: denied: the shell option {option} runs {runs}, which aileron does not check")]
    RunsUncheckedFile {
        option: &'static str,
        runs: &'static str,
    },
}
