//! Markdown: the same tables as the terminal exporter, as GitHub-flavoured pipe tables, for pasting
//! into a design review.

use std::io::Write;

use anyhow::Result;

use super::Exporter;
use super::columns::{self, Tabular};
use crate::result::ReplayReport;

/// Writes Markdown tables.
pub struct MarkdownExporter;

fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace('\n', " ")
}

/// Renders one table as a pipe table.
pub fn render_tabular(t: &Tabular) -> String {
    super::drawn(|out| write_tabular(t, out))
}

/// [`render_tabular`] written to `out`.
pub fn write_tabular(t: &Tabular, out: &mut dyn Write) -> std::io::Result<()> {
    write_rows(&t.headers, || t.rows.iter(), out)
}

/// [`render_tabular`] of rows made on demand, written to `out` a line at a time. The rows are
/// walked twice, once to find the numeric columns (their rule aligns them right) and once to
/// write them, so that a table of every request holds one row's cells at a time.
pub fn write_rows<R, I>(headers: &[&str], rows: impl Fn() -> I, out: &mut dyn Write) -> std::io::Result<()>
where
    R: AsRef<[String]>,
    I: Iterator<Item = R>,
{
    let mut numeric = vec![true; headers.len()];
    let mut any = false;
    for r in rows() {
        any = true;
        for (n, c) in numeric.iter_mut().zip(r.as_ref()) {
            *n &= c.trim_end_matches('%').parse::<f64>().is_ok() || c.is_empty();
        }
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    writeln!(out, "| {} |", headers.join(" | "))?;
    let rule: Vec<&str> = numeric.iter().map(|n| if *n && any { "---:" } else { "---" }).collect();
    writeln!(out, "| {} |", rule.join(" | "))?;
    for row in rows() {
        let cells: Vec<String> = row.as_ref().iter().map(|c| escape(c)).collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    out.flush()
}

impl Exporter for MarkdownExporter {
    fn write(&self, report: &ReplayReport, per_request: bool, out: &mut dyn Write) -> Result<()> {
        out.write_all(b"## Runs\n\n")?;
        if per_request {
            write_rows(&columns::TIMELINE_HEADERS, || columns::timeline_rows(&report.runs), out)?;
        } else {
            write_tabular(&columns::runs_brief(&report.runs), out)?;
        }
        out.write_all(b"\n## Totals per policy\n\n")?;
        write_tabular(&columns::totals(report), out)?;
        Ok(())
    }
}
