//! The commands: one file per command, each a short room over one shared opening
//! (`opening`: check the outputs, find the inputs, seed the meter, run on `-j` threads). This
//! module dispatches a resolved [`Config`], prints warnings and errors to stderr once, and decides
//! the exit code; it and `main.rs` are the only places that print.
//!
//! Exit codes: 0 when every input was read, 1 when some input failed (the others are still
//! reported; when no file could be read at all, no output file or report is written: see
//! `opening::writes`), 2 for usage errors (bad flags, policy specs or output paths).

mod calibrate;
mod compare;
mod completions;
mod count;
mod opening;
mod policies;
mod recommend;
mod reconcile;
mod replay;
mod report;
mod split;
mod sweep;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use crate::config::{Config, UsageError};
use crate::export::Output;

pub use count::MAX_TEXT_BYTES;
pub use opening::{Loaded, NOTHING_READ, load_each};
pub use policies::policies_text;
pub use split::split_text;

/// Every input was read.
pub const EXIT_OK: u8 = 0;
/// Some input failed; the others were reported.
pub const EXIT_SOME_FAILED: u8 = 1;
/// The program was called wrongly.
pub const EXIT_USAGE: u8 = 2;

/// Runs a command.
pub fn run(config: Config) -> Result<ExitCode> {
    match config {
        Config::Replay(c) => replay::run(c),
        Config::Split(c) => split::run(c),
        Config::Count(c) => count::run(c),
        Config::Policies => policies::run(),
        Config::Reconcile(c) => reconcile::run(c),
        Config::Sweep(c) => sweep::run(c),
        Config::Compare(c) => compare::run(c, false),
        Config::Recommend(c) => recommend::run(c),
        Config::Cost(c) => compare::run(c, true),
        Config::Calibrate(c) => calibrate::run(c),
        Config::Report(c) => report::run(c),
        Config::Completions(shell) => completions::completions(shell),
        Config::Man => completions::man(),
    }
}

/// Writes one line to stderr. A stderr that cannot be written (a closed pipe after `2>&1 | head`,
/// a full disk) loses the line but does not end the run, whose output is written already and
/// whose exit code still says how it went (`eprintln!` would panic: exit 101).
///
/// Messages quote the logs (paths, ids, tool names, values), so control characters other than a
/// newline or a tab are shown escaped (`\u{1b}`): an escape sequence in a log must not drive the
/// terminal (retitle it, hide text, move the cursor).
pub fn say(line: std::fmt::Arguments<'_>) {
    let line = line.to_string();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", printable(&line));
}

/// `text` with its control characters other than newline and tab escaped ([`say`]).
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Prints warnings and errors to stderr once; the exit code says whether any input failed.
fn print_problems(warnings: &[String], errors: &[String]) -> ExitCode {
    for w in warnings {
        say(format_args!("warning: {w}"));
    }
    for e in errors {
        say(format_args!("error: {e}"));
    }
    ExitCode::from(if errors.is_empty() { EXIT_OK } else { EXIT_SOME_FAILED })
}

/// Writes to stdout, reporting a closed pipe as an error (which `main` turns into exit 0).
fn stdout(text: &str) -> Result<()> {
    Output::Stdout.write(text.as_bytes())
}

/// Whether an error is a closed stdout (e.g. piped into `head`), which is not a failure.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The exit code for an error that ended the run.
pub fn exit_code_for(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<UsageError>().is_some() { EXIT_USAGE } else { EXIT_SOME_FAILED }
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_escaped_for_the_terminal_but_newlines_and_tabs_kept() {
        assert_eq!(super::printable("a\tb\nc"), "a\tb\nc");
        assert_eq!(super::printable("x\u{1b}]0;owned\u{7}y\r"), "x\\u{1b}]0;owned\\u{7}y\\u{d}");
    }
}
