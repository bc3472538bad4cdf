//! `ctxbudget count`: a text's size in bytes, characters, lines, the estimate and each
//! tokenizer's tokens. Also reads the one text `count` and `split` take.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use rayon::prelude::*;

use super::{EXIT_OK, stdout};
use crate::config::CountConfig;
use crate::input;
use crate::tokens::{Tokenizer, estimate};

/// At most this many bytes of text are read by `count` and `split` (which hold the whole text):
/// a stream with no end (`/dev/zero`, `yes`) is an error after it instead of taking all the
/// machine's memory (decision; 4.5 GB in 5 s for `count /dev/zero` before). A 1 GiB text is far
/// beyond any tool output, and counting one takes a few GB.
pub const MAX_TEXT_BYTES: u64 = 1 << 30;

/// The text of `split` and `count`: `file`, or stdin when it is absent or `-`.
pub(super) fn read_input(file: Option<&Path>) -> Result<String> {
    let (read, name) = match file.filter(|p| *p != Path::new("-")) {
        Some(p) => {
            let (f, ahead) = input::open_input(p).with_context(|| format!("cannot read {}", p.display()))?;
            let read =
                input::read_up_to(std::io::Read::chain(std::io::Cursor::new(ahead), f), MAX_TEXT_BYTES)
                    .with_context(|| format!("cannot read {}", p.display()));
            (read?, p.display().to_string())
        }
        None => (
            input::read_up_to(std::io::stdin(), MAX_TEXT_BYTES).context("cannot read stdin")?,
            "stdin".to_owned(),
        ),
    };
    let Some(bytes) = read else {
        anyhow::bail!(
            "{name}: more than {} GiB of text (a stream with no end?); count and split hold the whole text \
             in memory: pass a smaller text",
            MAX_TEXT_BYTES >> 30
        );
    };
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!("{name}: not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to())
    })
}

pub(super) fn run(c: CountConfig) -> Result<ExitCode> {
    let text = read_input(c.file.as_deref())?;
    let mut out = format!(
        "{:<10}{:>12}\n{:<10}{:>12}\n{:<10}{:>12}\n{:<10}{:>12}  (len/4)\n",
        "bytes",
        text.len(),
        "chars",
        text.chars().count(),
        "lines",
        text.lines().count(),
        "estimate",
        estimate(&text)
    );
    // Each tokenizer on its own worker: their tables are built side by side.
    let counted: Vec<(Tokenizer, crate::model::Tokens)> = c
        .tokenizers
        .par_iter()
        .copied()
        .filter(|t| *t != Tokenizer::Estimate)
        .map(|t| (t, t.counter_with(c.counter).count(&text)))
        .collect();
    for (t, n) in counted {
        let ratio = if n > 0 {
            format!("  ({:.2} bytes/token)", text.len() as f64 / n as f64)
        } else {
            String::new()
        };
        out.push_str(&format!("{:<10}{:>12}{ratio}\n", t.name(), n));
    }
    stdout(&out)?;
    Ok(ExitCode::from(EXIT_OK))
}
