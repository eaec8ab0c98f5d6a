//! Colour for people reading `explain`, `audit`, `status` and `why` on a
//! terminal: `--color auto|always|never`. `auto` (the default) colours
//! only a terminal's standard output, and never when `NO_COLOR` is set to
//! anything but the empty string (or `CLICOLOR=0`, or `TERM=dumb`), as
//! anstream decides for clap's own help. Piped output stays plain text.
//!
//! `aileron hook` never gets here: it answers before the command line is
//! parsed.

use anstyle::{AnsiColor, Effects, Style};
use std::sync::atomic::{AtomicBool, Ordering};

static ON: AtomicBool = AtomicBool::new(false);

/// The `--color` words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    Always,
    Never,
}

/// Decides once, for standard output, before anything is printed.
pub fn init(when: When) {
    let on = match when {
        When::Always => true,
        When::Never => false,
        When::Auto => {
            anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
        }
    };
    ON.store(on, Ordering::Relaxed);
}

fn paint(style: Style, text: &str) -> String {
    if ON.load(Ordering::Relaxed) {
        format!("{style}{text}{style:#}")
    } else {
        text.to_owned()
    }
}

/// A decision word (`allow`, `deny`, `ask`, `judge`...), in its colour;
/// `width` pads it (after the colour, so columns stay aligned).
pub fn decision(word: &str, width: usize) -> String {
    let style = match word {
        "allow" => AnsiColor::Green.on_default(),
        "deny" => AnsiColor::Red.on_default().effects(Effects::BOLD),
        "ask" | "deny_writes" => AnsiColor::Yellow.on_default(),
        "judge" => AnsiColor::Magenta.on_default(),
        _ => Style::new(),
    };
    let pad = width.saturating_sub(word.chars().count());
    format!("{}{}", paint(style, word), " ".repeat(pad))
}

/// A rule id or a file:line.
pub fn rule(text: &str) -> String {
    paint(AnsiColor::Cyan.on_default(), text)
}

/// A heading or a name that matters.
pub fn bold(text: &str) -> String {
    paint(Style::new().effects(Effects::BOLD), text)
}

/// What is there for reference (ids, times).
pub fn dim(text: &str) -> String {
    paint(Style::new().effects(Effects::DIMMED), text)
}

/// Good news (`reachable`, `installed`) or bad (`not loaded`).
pub fn good(text: &str) -> String {
    paint(AnsiColor::Green.on_default(), text)
}

pub fn bad(text: &str) -> String {
    paint(AnsiColor::Red.on_default(), text)
}
