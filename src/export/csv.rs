//! CSV: every field of every run (or, with `--per-request`, one row per request), with the JSON
//! field names as the header.

use anyhow::Result;

use super::Exporter;
use super::columns::{self, Tabular};
use crate::result::ReplayReport;

/// Writes CSV.
pub struct CsvExporter;

/// Renders any table as CSV.
pub fn render_tabular(t: &Tabular) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&t.headers)?;
    for row in &t.rows {
        w.write_record(row)?;
    }
    Ok(w.into_inner()?)
}

impl Exporter for CsvExporter {
    fn write(&self, report: &ReplayReport, per_request: bool, out: &mut dyn std::io::Write) -> Result<()> {
        let bytes = if per_request {
            let parts: Vec<_> =
                report.runs.iter().map(|run| (run, run.timeline.as_deref().unwrap_or_default())).collect();
            columns::timeline_csv(&parts)?
        } else {
            render_tabular(&columns::runs_full(&report.runs))?
        };
        Ok(out.write_all(&bytes)?)
    }
}
