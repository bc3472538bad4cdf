//! CSV: every field of every run (or, with `--per-request`, one row per request), with the JSON
//! field names as the header. Every CSV the tool writes goes through [`Writer`], which neutralises
//! cells a spreadsheet would run as a formula (docs/hostile-input.md); nothing here does I/O of
//! its own but to the writer it is given.

use std::borrow::Cow;

use anyhow::Result;

use super::Exporter;
use super::columns::{self, Tabular};
use crate::result::{ReplayReport, RunSummary};

/// Writes CSV.
pub struct CsvExporter;

/// Renders any table as CSV.
pub fn render_tabular(t: &Tabular) -> Result<Vec<u8>> {
    let mut w = Writer::from_writer(Vec::new());
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
    let mut w = Writer::from_writer(Vec::new());
    for row in &columns::runs_full(runs).rows {
        w.write_record(row)?;
    }
    Ok(w.into_inner()?)
}

/// A CSV writer whose every cell is [`neutralised`]: conversation ids, tool names and paths come
/// from untrusted logs, and a cell such as `=HYPERLINK("http://x")` must reach a spreadsheet as
/// text, not as a formula.
pub struct Writer<W: std::io::Write>(csv::Writer<W>);

impl<W: std::io::Write> Writer<W> {
    /// A writer with the `csv` crate's defaults (comma, `\n`, quoting as needed).
    pub fn from_writer(out: W) -> Self {
        Writer(csv::Writer::from_writer(out))
    }

    /// Writes one record.
    pub fn write_record<I, T>(&mut self, record: I) -> csv::Result<()>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<str>,
    {
        for cell in record {
            self.write_field(cell.as_ref())?;
        }
        self.end_record()
    }

    /// Writes one cell of the current record.
    pub fn write_field(&mut self, cell: &str) -> csv::Result<()> {
        self.0.write_field(neutralised(cell).as_bytes())
    }

    /// Ends the current record.
    pub fn end_record(&mut self) -> csv::Result<()> {
        self.0.write_record(None::<&[u8]>)
    }

    /// Flushes the buffered records to the underlying writer.
    pub fn flush(&mut self) -> csv::Result<()> {
        Ok(self.0.flush()?)
    }

    /// The underlying writer, flushed.
    pub fn into_inner(self) -> csv::Result<W> {
        self.0.into_inner().map_err(|e| csv::Error::from(e.into_error()))
    }
}

/// `cell` as a spreadsheet shows it as text: a cell that begins with `=`, `+`, `-`, `@`, a tab or a
/// carriage return (OWASP's list of formula triggers) gets a leading `'`, unless it is a number
/// (`-12`, `-0.5`, `+3e2`, `-4.1%`), which stays numeric.
pub fn neutralised(cell: &str) -> Cow<'_, str> {
    match cell.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r') if !is_number(cell) => Cow::Owned(format!("'{cell}")),
        _ => Cow::Borrowed(cell),
    }
}

/// Whether `s` is a plain decimal number as this tool writes one: a sign, digits with at most
/// one point, an exponent, a trailing `%`.
fn is_number(s: &str) -> bool {
    let s = s.strip_suffix('%').unwrap_or(s);
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = s.split_once(['e', 'E']).unwrap_or((s, "1"));
    let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    !(whole.is_empty() && fraction.is_empty())
        && digits(whole)
        && digits(fraction)
        && !exponent.is_empty()
        && digits(exponent)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_triggers_are_neutralised_and_numbers_kept() {
        for (cell, written) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("@SUM(1)", "'@SUM(1)"),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("-", "'-"),
            ("-.", "'-."),
            ("-inf", "'-inf"),
            ("-1e", "'-1e"),
            ("-12", "-12"),
            ("-0.5", "-0.5"),
            ("+3e2", "+3e2"),
            ("-4.1%", "-4.1%"),
            ("-.5", "-.5"),
            ("plain = text", "plain = text"),
            ("", ""),
        ] {
            assert_eq!(neutralised(cell), written, "{cell:?}");
        }
    }

    #[test]
    fn a_table_with_a_hostile_id_is_written_as_text() {
        let t = Tabular {
            headers: vec!["conversation", "delta"],
            rows: vec![vec!["=1+1".into(), "-3".into()], vec!["@x,\"y\"".into(), "-0.5%".into()]],
        };
        let csv = String::from_utf8(render_tabular(&t).unwrap()).unwrap();
        assert_eq!(csv, "conversation,delta\n'=1+1,-3\n\"'@x,\"\"y\"\"\",-0.5%\n");
    }
}
