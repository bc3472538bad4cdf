//! Markdown: the same tables as the terminal exporter, as GitHub-flavoured pipe tables, for pasting
//! into a design review.

use std::io::Write;

use anyhow::Result;

use super::columns::{self, ColumnStats, Tabular};
use super::{Exporter, TimelineParts};
use crate::result::ReplayReport;

/// Writes Markdown tables.
pub struct MarkdownExporter;

fn escape(cell: &str) -> String {
    // `\<` keeps text from a trace (a conversation id, a tool name) from opening raw HTML in a
    // renderer that allows it, and still renders as `<` (a CommonMark backslash escape).
    cell.replace('|', "\\|").replace('<', "\\<").replace('\n', " ")
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
    let stats = ColumnStats::of(headers, rows());
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    write_head(headers, &stats, &mut out)?;
    let mut line = String::new();
    for row in rows() {
        line.clear();
        draw_row(&mut line, row.as_ref());
        out.write_all(line.as_bytes())?;
    }
    out.flush()
}

/// The header line of a table whose rows have `stats`, and the rule under it (`---:` for a
/// numeric column).
pub fn write_head(headers: &[&str], stats: &ColumnStats, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "| {} |", headers.join(" | "))?;
    let rule: Vec<&str> = (0..headers.len()).map(|i| if stats.right(i) { "---:" } else { "---" }).collect();
    writeln!(out, "| {} |", rule.join(" | "))
}

/// One row, as a line (pipes and `<` escaped, newlines turned into spaces).
pub fn draw_row<S: AsRef<str>>(out: &mut String, cells: &[S]) {
    out.push_str("| ");
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        out.push_str(&escape(cell.as_ref()));
    }
    out.push_str(" |\n");
}

impl Exporter for MarkdownExporter {
    fn write(&self, report: &ReplayReport, per_request: bool, out: &mut dyn Write) -> Result<()> {
        if per_request {
            return super::write_timeline(self, report, out);
        }
        out.write_all(b"## Runs\n\n")?;
        write_tabular(&columns::runs_brief(&report.runs), out)?;
        write_totals(report, out)
    }
}

impl TimelineParts for MarkdownExporter {
    fn head(&self, stats: &ColumnStats, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(b"## Runs\n\n")?;
        write_head(&columns::TIMELINE_HEADERS, stats, out)
    }

    fn draw_row(&self, _stats: &ColumnStats, cells: &[String], line: &mut String) {
        draw_row(line, cells);
    }

    fn tail(&self, _stats: &ColumnStats, report: &ReplayReport, out: &mut dyn Write) -> Result<()> {
        write_totals(report, out)
    }
}

/// The totals per policy, under the runs' table.
fn write_totals(report: &ReplayReport, out: &mut dyn Write) -> Result<()> {
    out.write_all(b"\n## Totals per policy\n\n")?;
    write_tabular(&columns::totals(report), out)?;
    if let Some(t) = super::compaction::runs(&report.runs) {
        out.write_all(b"\n## Compactions per run (runs that compacted)\n\n")?;
        write_tabular(&t, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_cannot_break_the_row_or_open_html() {
        let mut out = String::new();
        super::draw_row(&mut out, &["a|b", "<script>x</script>", "two\nlines"]);
        assert_eq!(out, "| a\\|b | \\<script>x\\</script> | two lines |\n");
    }
}
