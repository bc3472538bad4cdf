//! `ctxbudget split`: how the seed's `ToolOutput` splits one text at a threshold.

use std::process::ExitCode;

use anyhow::Result;

use super::count::read_input;
use super::{EXIT_OK, stdout};
use crate::config::SplitConfig;
use crate::split::ToolOutput;

pub(super) fn run(c: SplitConfig) -> Result<ExitCode> {
    let text = read_input(c.file.as_deref())?;
    let out = ToolOutput::from_output(&text, c.threshold);
    let rendered = if c.json {
        let v = serde_json::json!({
            "threshold": c.threshold,
            "bytes": text.len(),
            "lines": text.lines().count(),
            "split": out.content.is_some(),
            "summary": out.summary,
            "content": out.content,
        });
        format!("{}\n", serde_json::to_string_pretty(&v)?)
    } else {
        split_text(&text, &out, c.threshold)
    };
    stdout(&rendered)?;
    Ok(ExitCode::from(EXIT_OK))
}

/// The human-readable explanation of one split.
pub fn split_text(text: &str, out: &ToolOutput, threshold: usize) -> String {
    let lines = text.lines().count();
    match &out.content {
        None => format!(
            "{} bytes <= threshold {threshold}: not split; the whole output is the summary and nothing is prunable.\n\
             summary ({} bytes):\n{}\n",
            text.len(),
            out.summary.len(),
            out.summary
        ),
        Some(content) => format!(
            "{} bytes > threshold {threshold}: split ({lines} lines).\n\
             summary ({} bytes, kept after prune):\n{}\n\
             content ({} bytes, removed by prune): the whole output\n\
             sent before prune: summary + \"\\n\" + content = {} bytes\n",
            text.len(),
            out.summary.len(),
            out.summary,
            content.len(),
            out.summary.len() + 1 + content.len()
        ),
    }
}
