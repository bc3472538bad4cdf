//! CSV: every field of every run (or, with `--per-request`, one row per request), with the JSON
//! field names as the header.

use anyhow::Result;

use super::Exporter;
use super::columns::{self, Tabular};
use crate::result::{ReplayReport, RunSummary};

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

/// The header line of the CSV of runs (one row per conversation × policy, without
/// `--per-request`).
pub fn runs_header() -> Result<Vec<u8>> {
    render_tabular(&columns::runs_full(&[]))
}

/// The lines of `runs` in the CSV of runs, after its header: the lines of several calls, one
/// after the other, are the lines of one call over all their runs, so a replay writes each file's
/// part as soon as the files before it are written.
pub fn runs_rows(runs: &[RunSummary]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in &columns::runs_full(runs).rows {
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
