//! Markdown: the same tables as the terminal exporter, as GitHub-flavoured pipe tables, for pasting
//! into a design review.

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
    render_rows(&t.headers, || t.rows.iter())
}

/// [`render_tabular`] of rows made on demand, twice: once to find the numeric columns (their rule
/// aligns them right), once to write them, so that a table of every request holds one row's cells
/// at a time.
pub fn render_rows<R, I>(headers: &[&str], rows: impl Fn() -> I) -> String
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
    let mut out = String::new();
    out.push_str(&format!("| {} |\n", headers.join(" | ")));
    let rule: Vec<&str> = numeric.iter().map(|n| if *n && any { "---:" } else { "---" }).collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in rows() {
        let cells: Vec<String> = row.as_ref().iter().map(|c| escape(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

impl Exporter for MarkdownExporter {
    fn render(&self, report: &ReplayReport, per_request: bool) -> Result<Vec<u8>> {
        let mut out = String::from("## Runs\n\n");
        out.push_str(&if per_request {
            render_rows(&columns::TIMELINE_HEADERS, || columns::timeline_rows(&report.runs))
        } else {
            render_tabular(&columns::runs_brief(&report.runs))
        });
        out.push_str("\n## Totals per policy\n\n");
        out.push_str(&render_tabular(&columns::totals(report)));
        Ok(out.into_bytes())
    }
}
