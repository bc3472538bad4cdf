//! `inspect-eval`: Inspect AI eval logs in their binary `.eval` form, the default since 2024: a zip
//! of JSON parts (`src/inspect_ai/log/_recorders/eval.py` in UKGovernmentBEIS/inspect_ai). It
//! gives the same facts as the JSON form [`inspect`](super::inspect) reads, and reads each sample
//! with it.
//!
//! - **Layout.** `header.json` is the log without its samples (`version`, `status`, `eval{task,
//!   model, …}`, `plan`, `results`, `stats`), written when the run finishes; `samples/<id>_epoch_<n>.json`
//!   one sample each, written as samples finish; `_journal/start.json` (`version`, `eval`, `plan`),
//!   written first; `_journal/summaries/<n>.json`, `summaries.json`, `reductions.json` hold scores
//!   only and are not read. A log whose run is still going or was killed has no `header.json`: the
//!   eval's model comes from `_journal/start.json`, and a warning says the log is unfinished.
//! - **Order.** Samples are read in Inspect's order (`sort_samples`: by epoch, then by id, numbers
//!   as numbers), taken from each entry's name, so the output does not depend on the order the
//!   entries were written in.
//! - **Compression.** Entries are stored or deflated (what Inspect writes); another method (zstd,
//!   which newer Inspect versions can read) is an error naming the entry and saying to convert the
//!   log with `inspect log convert --to json`.
//! - **Bounds** (a zip can claim anything, and a small deflated entry can expand a thousandfold):
//!   the zip is read up to [`MAX_ZIP_BYTES`]; each entry is decompressed up to
//!   [`MAX_ENTRY_BYTES`] and all of them up to [`MAX_TOTAL_BYTES`], counted as they are
//!   decompressed, not as the zip says; beyond, an error names the entry and the bound. One entry
//!   is held at a time.
//!
//! Detection: the zip signature `PK\x03\x04` at the start and either the name `.eval` or one of
//! Inspect's entry names (`_journal/start.json`, `header.json`, `samples/`) in the first bytes.

use std::io::{BufRead, Cursor, Read};
use std::path::Path;

use serde_json::Value;
use zip::ZipArchive;
use zip::result::ZipError;

use super::inspect::{Sample, Source, parse_records, read_sample_into};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::Trace;

/// Inspect AI eval logs (`.eval` zip).
pub struct InspectEval;

/// A `.eval` file is read into memory up to this many bytes.
pub const MAX_ZIP_BYTES: u64 = 4 << 30;
/// One entry is decompressed up to this many bytes (a sample of a long agent run is tens of MB).
pub const MAX_ENTRY_BYTES: u64 = 1 << 30;
/// All entries together are decompressed up to this many bytes.
pub const MAX_TOTAL_BYTES: u64 = 16 << 30;

/// The bytes every zip (its first local file header) starts with.
pub const ZIP_MAGIC: &[u8] = b"PK\x03\x04";

/// Whether `head` (a file's first bytes) is a zip that looks like an Inspect log.
pub fn is_eval_zip(path: &Path, head: &[u8]) -> bool {
    let named = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("eval"));
    let window = &head[..head.len().min(super::HEAD_BYTES)];
    let has = |needle: &[u8]| window.windows(needle.len()).any(|w| w == needle);
    head.starts_with(ZIP_MAGIC)
        && (named || has(b"_journal/start.json") || has(b"header.json") || has(b"samples/"))
}

impl Format for InspectEval {
    fn name(&self) -> &'static str {
        "inspect-eval"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        is_eval_zip(head.path, head.text.as_bytes())
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut bytes = Vec::new();
        input
            .take(MAX_ZIP_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
        let fail = |message: String| TraceError::content(path, message);
        if bytes.len() as u64 > MAX_ZIP_BYTES {
            return Err(fail(format!(
                "more than {} GiB: an Inspect `.eval` log is read into memory whole; convert it with \
                 `inspect log convert --to json` and read the JSON",
                MAX_ZIP_BYTES >> 30
            )));
        }
        let mut zip = ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
            fail(format!("not a readable zip ({e}); an Inspect `.eval` log is a zip of JSON files"))
        })?;
        let mut budget = MAX_TOTAL_BYTES;
        let mut trace = Trace { format: self.name(), ..Default::default() };
        let header = match read_entry(&mut zip, "header.json", &mut budget, path)? {
            Some(header) => parse_entry::<Value>(&header, "header.json", path)?,
            None => {
                trace.warnings.push(
                    "no header.json: the run was still going or was stopped before it finished; \
                     the samples written so far are read"
                        .into(),
                );
                let start =
                    read_entry(&mut zip, "_journal/start.json", &mut budget, path)?.ok_or_else(|| {
                        fail("neither header.json nor _journal/start.json: not an Inspect `.eval` log".into())
                    })?;
                parse_entry::<Value>(&start, "_journal/start.json", path)?
            }
        };
        let model = header.pointer("/eval/model").and_then(Value::as_str).unwrap_or("").to_owned();
        let mut samples: Vec<(SampleKey, String)> = zip
            .file_names()
            .filter(|n| n.starts_with("samples/") && n.ends_with(".json"))
            .map(|n| (SampleKey::of(n), n.to_owned()))
            .collect();
        samples.sort();
        if samples.is_empty() {
            trace.warnings.push("the log holds no samples (written without them?); nothing to replay".into());
        }
        for (_, name) in samples {
            let Some(text) = read_entry(&mut zip, &name, &mut budget, path)? else { continue };
            let sample: Sample<'_> = parse_entry(&text, &name, path)?;
            let mut tree = || Source::Sample(&text).sample(0);
            read_sample_into(sample, &name, &model, &mut tree, &mut trace).map_err(fail)?;
        }
        Ok(trace)
    }
}

/// Where a sample entry sorts: Inspect's `sort_samples` key (epoch, then id, a number before any
/// text and numbers by value), then the name itself (a tie-break for names not in its pattern).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct SampleKey {
    epoch: u64,
    /// `(false, n)` for a numeric id `n`, `(true, 0)` for a text id (after every number).
    rank: (bool, u128),
    id: String,
}

impl SampleKey {
    /// The key of `samples/<id>_epoch_<epoch>.json`; a name of another shape sorts last by name.
    fn of(name: &str) -> SampleKey {
        let stem = name.trim_start_matches("samples/").trim_end_matches(".json");
        match stem.rsplit_once("_epoch_").and_then(|(id, e)| Some((id, e.parse::<u64>().ok()?))) {
            Some((id, epoch)) => {
                let rank = id.parse().map_or((true, 0), |n| (false, n));
                SampleKey { epoch, rank, id: id.to_owned() }
            }
            None => SampleKey { epoch: u64::MAX, rank: (true, 0), id: stem.to_owned() },
        }
    }
}

/// Parses the text of the entry `name` as JSON: an error names the file and the entry.
fn parse_entry<'a, T: serde::Deserialize<'a>>(
    text: &'a str,
    name: &str,
    path: &Path,
) -> Result<T, TraceError> {
    parse_records(text, Path::new(name)).map_err(|e| TraceError::content(path, format!("{name}: {e}")))
}

/// Reads the entry `name` as text: `None` when the zip has no such entry. Decompressed bytes
/// count against `budget`; an entry over [`MAX_ENTRY_BYTES`] or the budget is an error.
fn read_entry(
    zip: &mut ZipArchive<Cursor<Vec<u8>>>,
    name: &str,
    budget: &mut u64,
    path: &Path,
) -> Result<Option<String>, TraceError> {
    let fail = |message: String| TraceError::content(path, format!("{name}: {message}"));
    let entry = match zip.by_name(name) {
        Ok(entry) => entry,
        Err(ZipError::FileNotFound) => return Ok(None),
        Err(ZipError::UnsupportedArchive(why)) => {
            return Err(fail(format!(
                "{why}; Inspect's zips are deflated: convert this log with `inspect log convert --to json` \
                 and read the JSON"
            )));
        }
        Err(e) => return Err(fail(format!("cannot read the zip entry: {e}"))),
    };
    let limit = MAX_ENTRY_BYTES.min(*budget);
    // The size the zip claims (up to 64 MiB: a claim is not a fact), so that inflating does not
    // grow the buffer by copies; a wrong claim only costs a copy.
    let claimed = usize::try_from(entry.size().min(limit).min(64 << 20)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(claimed.saturating_add(1));
    entry.take(limit + 1).read_to_end(&mut bytes).map_err(|e| fail(format!("cannot decompress: {e}")))?;
    if bytes.len() as u64 > limit {
        let which = if limit == MAX_ENTRY_BYTES { "this entry" } else { "the log's entries together" };
        return Err(fail(format!(
            "{which} decompress to more than {} MiB (a zip bomb, or a log too large to read): not read",
            limit >> 20
        )));
    }
    *budget -= bytes.len() as u64;
    let text = String::from_utf8(bytes).map_err(|e| {
        fail(format!("invalid UTF-8 at byte {}; Inspect writes UTF-8 JSON", e.utf8_error().valid_up_to()))
    })?;
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    /// A zip of `(name, text)` entries, deflated.
    fn zip_of(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, text) in entries {
            w.start_file(*name, SimpleFileOptions::default()).unwrap();
            w.write_all(text.as_bytes()).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    fn read(bytes: Vec<u8>) -> Result<Trace, TraceError> {
        InspectEval.read(&mut Cursor::new(bytes), Path::new("log.eval"))
    }

    const HEADER: &str = r#"{"version":2,"status":"success","eval":{"task":"t","model":"openai/gpt-4o"}}"#;

    fn sample(id: &str, epoch: u32, tokens: u64) -> String {
        format!(
            r#"{{"id":{id},"epoch":{epoch},"events":[{{"event":"model","input":[{{"role":"user","content":"hi"}}],
               "output":{{"choices":[{{"message":{{"role":"assistant","content":"ok"}}}}],
               "usage":{{"input_tokens":{tokens}}}}}}}]}}"#
        )
    }

    #[test]
    fn samples_are_read_in_inspects_order_whatever_the_zip_order() {
        let (s10, s2, s1e2) = (sample("10", 1, 10), sample("2", 1, 2), sample("1", 2, 12));
        let bytes = zip_of(&[
            ("_journal/start.json", HEADER),
            ("samples/10_epoch_1.json", &s10),
            ("samples/1_epoch_2.json", &s1e2),
            ("samples/2_epoch_1.json", &s2),
            ("header.json", HEADER),
        ]);
        let trace = read(bytes).unwrap();
        let ids: Vec<&str> = trace.conversations.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["2/epoch-1", "10/epoch-1", "1/epoch-2"]);
        assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
    }

    #[test]
    fn a_log_without_a_header_is_read_from_its_journal_with_a_warning() {
        let s = sample("1", 1, 5);
        let trace = read(zip_of(&[("_journal/start.json", HEADER), ("samples/1_epoch_1.json", &s)])).unwrap();
        assert_eq!(trace.conversations.len(), 1);
        assert!(trace.warnings[0].contains("no header.json"), "{:?}", trace.warnings);
    }

    #[test]
    fn a_bad_sample_is_an_error_naming_its_entry() {
        let e = read(zip_of(&[("header.json", HEADER), ("samples/1_epoch_1.json", "{\"events\": [")]))
            .unwrap_err();
        assert!(e.to_string().contains("samples/1_epoch_1.json"), "{e}");
        let e = read(b"PK\x03\x04 not really a zip".to_vec()).unwrap_err();
        assert!(e.to_string().contains("not a readable zip"), "{e}");
    }

    #[test]
    fn an_entry_that_expands_past_the_bound_is_refused_without_reading_it_all() {
        let mut budget = 1000;
        let big = "x".repeat(5000);
        let mut zip = ZipArchive::new(Cursor::new(zip_of(&[("header.json", &big)]))).unwrap();
        let e = read_entry(&mut zip, "header.json", &mut budget, Path::new("log.eval")).unwrap_err();
        assert!(
            e.to_string().contains("header.json: the log's entries together decompress to more than"),
            "{e}"
        );
    }

    #[test]
    fn sample_keys_follow_inspects_sort() {
        let mut names =
            ["samples/b_epoch_1.json", "samples/10_epoch_1.json", "samples/9_epoch_1.json", "samples/x.json"];
        names.sort_by_key(|n| SampleKey::of(n));
        assert_eq!(
            names,
            ["samples/9_epoch_1.json", "samples/10_epoch_1.json", "samples/b_epoch_1.json", "samples/x.json"]
        );
    }
}
