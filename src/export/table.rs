//! Terminal table: the run summaries (or the per-request timeline) followed by totals per policy,
//! drawn with comfy-table. Numbers are right-aligned; nothing depends on the terminal width, so
//! the output is the same on a terminal and in a pipe.

use anyhow::Result;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ContentArrangement, Table};

use super::Exporter;
use super::columns::{self, Tabular};
use crate::result::ReplayReport;

/// Writes terminal tables.
pub struct TableExporter;

/// Renders one table.
pub fn render_tabular(t: &Tabular) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Disabled);
    table.set_header(t.headers.iter().copied());
    for row in &t.rows {
        table.add_row(row.iter().map(String::as_str));
    }
    for (i, column) in table.column_iter_mut().enumerate() {
        let numeric = t.rows.iter().all(|r| r[i].is_empty() || looks_numeric(&r[i]));
        if numeric && !t.rows.is_empty() {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table.to_string()
}

fn looks_numeric(s: &str) -> bool {
    s.trim_end_matches('%').parse::<f64>().is_ok()
}

impl Exporter for TableExporter {
    fn render(&self, report: &ReplayReport, per_request: bool) -> Result<Vec<u8>> {
        let main =
            if per_request { columns::timeline(&report.runs) } else { columns::runs_brief(&report.runs) };
        let mut out = render_tabular(&main);
        out.push_str("\n\nTotals per policy (all conversations)\n");
        out.push_str(&render_tabular(&columns::totals(report)));
        out.push('\n');
        Ok(out.into_bytes())
    }
}
