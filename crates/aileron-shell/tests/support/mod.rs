//! What the tests of the analysis share: the context they run it in, and
//! what it means for the engine.

use aileron_shell::{Analysis, Context, Limits, Sensitivity, analyse, tags};

pub const CWD: &str = "/work/p";
pub const HOME: &str = "/home/u";

pub fn run(line: &str) -> Analysis {
    analyse(
        line,
        &Context {
            cwd: CWD,
            home: HOME,
            limits: Limits::default(),
        },
    )
}

/// Tags that make the built-in rules ask.
pub const ASKING: &[&str] = &[
    tags::OPAQUE,
    tags::PIPE_TO_SHELL,
    tags::EVAL,
    tags::BASE64_EXEC,
    tags::REMOTE_SUBSTITUTION,
    tags::INLINE_INTERPRETER,
    tags::ENV_EXEC,
];

/// No opaque part, no tag that asks, every command `read`: only then can
/// a profile's read-only rule allow the line.
pub fn vouched(a: &Analysis) -> bool {
    a.opaque.is_none()
        && a.commands.iter().all(|c| {
            c.sensitivity == Sensitivity::Read && !c.tags.iter().any(|t| ASKING.contains(t))
        })
}

pub fn writes(a: &Analysis, path: &str) -> bool {
    a.commands
        .iter()
        .any(|c| c.writes.iter().any(|w| w == path))
}

pub fn reads(a: &Analysis, path: &str) -> bool {
    a.commands.iter().any(|c| c.reads.iter().any(|r| r == path))
}
