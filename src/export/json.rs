//! JSON: the [`ReplayReport`] verbatim, pretty-printed, ending in a newline. The contract other
//! tools read (`timeline` is present on each run only with `--per-request`).

use anyhow::Result;

use super::Exporter;
use crate::result::ReplayReport;

/// Writes the JSON contract.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn render(&self, report: &ReplayReport, _per_request: bool) -> Result<Vec<u8>> {
        let mut out = serde_json::to_vec_pretty(report)?;
        out.push(b'\n');
        Ok(out)
    }
}
