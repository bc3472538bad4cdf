//! JSON: the [`ReplayReport`] verbatim, pretty-printed, ending in a newline. The contract other
//! tools read (`timeline` is present on each run only with `--per-request`): the runs, then the
//! keys every command's JSON carries (`inputs`, `settings`, `errors`, `warnings`: [`Envelope`]).
//!
//! [`Envelope`]: crate::result::Envelope
//!
//! [`JsonRuns`] writes the same bytes as the document is made, one file's runs at a time, so that
//! `replay --per-request --format json` does not hold every request of the corpus: a run is
//! pretty-printed on its own and indented to its depth in the document (a JSON string holds no raw
//! newline, so indenting after every newline byte is exact).

use std::io::Write;

use anyhow::Result;

use super::Exporter;
use crate::result::{ReplayReport, RunSummary};

/// Writes the JSON contract.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn write(&self, report: &ReplayReport, _per_request: bool, out: &mut dyn Write) -> Result<()> {
        let mut out = std::io::BufWriter::new(out);
        serde_json::to_writer_pretty(&mut out, report).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        Ok(out.flush()?)
    }
}

/// What the document holds before its first run.
const START: &[u8] = b"{\n  \"runs\": [";

/// Where a run starts: after the previous one, on its own line, at the runs' depth.
const BEFORE_RUN: &[u8] = b",\n    ";

/// The JSON document of [`JsonExporter`] written in parts: [`JsonRuns::new`] writes its start,
/// runs rendered by [`runs_part`] are written through it (in order, by one writer at a time,
/// e.g. an [`InOrder`](super::InOrder)), and [`JsonRuns::finish`] writes the end, errors and
/// warnings included.
pub struct JsonRuns<W> {
    out: W,
    /// Whether a run was written (the first one's separator is dropped).
    any: bool,
}

impl<W: Write> JsonRuns<W> {
    /// Writes the start of the document to `out`.
    pub fn new(mut out: W) -> std::io::Result<JsonRuns<W>> {
        out.write_all(START)?;
        Ok(JsonRuns { out, any: false })
    }

    /// Writes the end of the document (the keys of `rest` after its runs, which are not written)
    /// and gives the writer back.
    pub fn finish(mut self, rest: &ReplayReport) -> Result<W> {
        let rest = serde_json::to_vec_pretty(&ReplayReport { runs: Vec::new(), ..rest.clone() })?;
        // `{ "runs": [` then, with no run, `],` and the rest of the document.
        let after_runs = rest.strip_prefix(START).expect("the document starts with its runs");
        if self.any {
            self.out.write_all(b"\n  ")?;
        }
        self.out.write_all(after_runs)?;
        self.out.write_all(b"\n")?;
        Ok(self.out)
    }
}

/// `runs` as the document holds them, each after a separator: a part to write through a
/// [`JsonRuns`].
pub fn runs_part<'r>(runs: impl IntoIterator<Item = &'r RunSummary>) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    for run in runs {
        out.extend_from_slice(BEFORE_RUN);
        for &b in &serde_json::to_vec_pretty(run)? {
            out.push(b);
            if b == b'\n' {
                out.extend_from_slice(b"    ");
            }
        }
    }
    Ok(out)
}

impl<W: Write> Write for JsonRuns<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.any && !buf.is_empty() {
            // The first run of the document is not after another: its separator's comma goes.
            self.any = true;
            debug_assert_eq!(buf[0], b',');
            return Ok(self.out.write(&buf[1..])? + 1);
        }
        self.out.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::InOrder;

    fn run(name: &str, rows: Option<usize>) -> RunSummary {
        let mut r = RunSummary { trace: name.into(), conversation: "main".into(), ..Default::default() };
        r.requests = 3;
        r.timeline = rows.map(|n| {
            (0..n).map(|i| crate::result::RequestRow { request: i, ..Default::default() }).collect()
        });
        r
    }

    /// The document written in parts, one part per file, the parts put in `order`.
    fn streamed(
        files: &[Vec<RunSummary>],
        errors: &[String],
        warnings: &[String],
        order: &[usize],
    ) -> Vec<u8> {
        let parts = InOrder::new(JsonRuns::new(Vec::new()).unwrap());
        for &i in order {
            parts.put(i, runs_part(&files[i]).unwrap());
        }
        let rest = ReplayReport {
            errors: errors.to_vec(),
            warnings: warnings.to_vec(),
            inputs: vec![crate::result::InputFile { path: "x".into(), ..Default::default() }],
            settings: [("threshold".to_owned(), serde_json::json!(256))].into(),
            ..Default::default()
        };
        parts.finish(files.len()).unwrap().finish(&rest).unwrap()
    }

    #[test]
    fn the_document_written_in_parts_is_the_exporters() {
        let errors = ["a.jsonl: bad line 3 \"quoted\"\nand a newline".to_owned()];
        let warnings = ["b.jsonl: odd".to_owned(), "c.jsonl: odder".to_owned()];
        let cases: Vec<Vec<Vec<RunSummary>>> = vec![
            vec![],
            vec![vec![]],
            vec![vec![], vec![run("x", Some(2))], vec![]],
            vec![vec![run("x", Some(0)), run("y", None)], vec![], vec![run("z\n\"w\"", Some(3))]],
        ];
        for files in cases {
            for (e, w) in [(&[][..], &[][..]), (&errors[..], &warnings[..])] {
                let report = ReplayReport {
                    runs: files.iter().flatten().cloned().collect(),
                    errors: e.to_vec(),
                    warnings: w.to_vec(),
                    inputs: vec![crate::result::InputFile { path: "x".into(), ..Default::default() }],
                    settings: [("threshold".to_owned(), serde_json::json!(256))].into(),
                };
                let whole = JsonExporter.render(&report, true).unwrap();
                let forward: Vec<usize> = (0..files.len()).collect();
                let backward: Vec<usize> = (0..files.len()).rev().collect();
                for order in [forward, backward] {
                    let parts = streamed(&files, e, w, &order);
                    assert_eq!(
                        String::from_utf8(parts).unwrap(),
                        String::from_utf8(whole.clone()).unwrap(),
                        "{} files, order {order:?}",
                        files.len()
                    );
                }
            }
        }
    }
}
