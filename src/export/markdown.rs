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
    let mut out = String::new();
    out.push_str(&format!("| {} |\n", t.headers.join(" | ")));
    let numeric: Vec<bool> = (0..t.headers.len())
        .map(|i| {
            !t.rows.is_empty()
                && t.rows.iter().all(|r| r[i].trim_end_matches('%').parse::<f64>().is_ok() || r[i].is_empty())
        })
        .collect();
    let rule: Vec<&str> = numeric.iter().map(|n| if *n { "---:" } else { "---" }).collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in &t.rows {
        let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

impl Exporter for MarkdownExporter {
    fn render(&self, report: &ReplayReport, per_request: bool) -> Result<Vec<u8>> {
        let main =
            if per_request { columns::timeline(&report.runs) } else { columns::runs_brief(&report.runs) };
        let mut out = String::from("## Runs\n\n");
        out.push_str(&render_tabular(&main));
        out.push_str("\n## Totals per policy\n\n");
        out.push_str(&render_tabular(&columns::totals(report)));
        Ok(out.into_bytes())
    }
}
