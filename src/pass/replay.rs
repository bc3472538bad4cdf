//! The replay as a corpus pass: [`replay`] replays each file under every policy at every
//! threshold as soon as it is measured, drops its conversations, and hands its runs (with their
//! per-request rows, or their summaries only) to the caller's function, keeping only what that
//! returns. A caller that writes each file's part as it comes (`replay --format json`/`csv`) holds
//! one file per worker; one that keeps the runs holds the report. The policies' warnings follow
//! each file's own, as the file's.
//!
//! Nothing here prints: progress is a callback, problems come back as strings.

use super::{Pass, Walked, walk};
use crate::analysis::compare::PolicySource;
use crate::input::Discovered;
use crate::pipeline::{Job, MeasuredFile, Replaying, replay_measured};
use crate::result::Run;
use crate::tokens::Meter;

/// One file replayed: its runs, one per conversation × threshold × policy in that nesting order.
#[derive(Debug, Default)]
pub struct ReplayedFile {
    /// The path as given or found.
    pub path: String,
    /// The format that read it; `None` for a file that could not be read (no runs).
    pub format: Option<&'static str>,
    /// Its runs, each with its per-request rows when the replay keeps them (else none).
    pub runs: Vec<Run>,
}

/// The replay of a job as a [`Pass`]: each file's runs go to `each`, which keeps what it returns.
pub struct ReplayPass<'a, F> {
    job: &'a Job<'a>,
    rows: bool,
    each: F,
}

impl<'a, F> ReplayPass<'a, F> {
    /// Replays every file at `job`'s thresholds under its policies, keeping each run's per-request
    /// rows when `rows`, and hands each file's runs, with its place among the files found, to
    /// `each`.
    pub fn new(job: &'a Job<'a>, rows: bool, each: F) -> ReplayPass<'a, F> {
        ReplayPass { job, rows, each }
    }
}

impl<T: Send, F: Fn(usize, ReplayedFile) -> T + Sync> Pass for ReplayPass<'_, F> {
    /// What `each` kept, and the policies' warnings.
    type Part = (T, Vec<String>);
    type Output = Vec<T>;

    fn file(&self, index: usize, file: MeasuredFile, meter: &Meter) -> (T, Vec<String>) {
        let MeasuredFile { path, format, conversations, .. } = file;
        let (runs, warnings) = match format {
            Some(format) => {
                let sources: Vec<&dyn PolicySource> =
                    self.job.policies.iter().map(|p| p as &dyn PolicySource).collect();
                let replaying = Replaying {
                    path: &path,
                    format,
                    thresholds: &self.job.thresholds,
                    sources: &sources,
                    rows: self.rows,
                };
                replay_measured(&conversations, &replaying, meter)
            }
            None => (Vec::new(), Vec::new()),
        };
        // Only the runs are left of the file when `each` sees them.
        drop(conversations);
        ((self.each)(index, ReplayedFile { path, format, runs }), warnings)
    }

    fn warnings(&self, part: &mut (T, Vec<String>)) -> Vec<String> {
        std::mem::take(&mut part.1)
    }

    fn finish(self, parts: Vec<(T, Vec<String>)>) -> Vec<T> {
        parts.into_iter().map(|(kept, _)| kept).collect()
    }
}

/// Replays the files `found` at `job`'s thresholds under its policies, each loaded and measured as
/// `job` says with `meter`, on the current rayon pool; each file's runs (with their per-request
/// rows when `rows`) go to `each` as soon as the file is replayed, on the worker that replayed it,
/// and only what `each` returns is kept, in input order. `progress` is called once per file.
///
/// ```
/// use ctxbudget::pipeline::Job;
/// use ctxbudget::{Meter, PolicySpec, Tokenizer};
///
/// let found = ctxbudget::input::discover(&["traces".into()]);
/// let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
/// let policies = vec![PolicySpec::parse("keep-turns:n=3").unwrap()];
/// let job = Job { thresholds: vec![256], policies, ..Job::default() };
/// // Keeps one number per file: the tokens its runs sent (the runs without their rows).
/// let walked = ctxbudget::pass::replay(&found, &job, &meter, false, &|| {}, |_, file| {
///     file.runs.iter().map(|r| r.summary.total_input_tokens).sum::<ctxbudget::Tokens>()
/// });
/// assert!(walked.read > 0 && walked.errors.is_empty());
/// assert_eq!(walked.output.len(), found.files.len());
/// ```
pub fn replay<T: Send>(
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    rows: bool,
    progress: &(dyn Fn() + Sync),
    each: impl Fn(usize, ReplayedFile) -> T + Sync,
) -> Walked<Vec<T>> {
    walk(ReplayPass::new(job, rows, each), found, job, meter, progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Loaded, load_found, prefix_path, replay_trace_with_warnings};
    use crate::policy::PolicySpec;
    use std::path::Path;

    #[test]
    fn each_file_s_runs_are_its_replay_and_its_policy_warnings_follow_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cache-trap/session.jsonl");
        std::fs::copy(&fixture, dir.path().join("a.jsonl")).unwrap();
        // A result with no call: a warning of the file's own, before its policies'.
        let orphan =
            "{\"type\":\"tool_result\",\"call_id\":\"c9\",\"output\":\"x\"}\n{\"type\":\"request\"}\n";
        std::fs::write(dir.path().join("b.jsonl"), orphan).unwrap();
        let found = crate::input::discover(&[dir.path().to_owned()]);
        let policies: Vec<PolicySpec> =
            ["none", "openclaw:ttl=0"].iter().map(|p| PolicySpec::parse(p).unwrap()).collect();
        let job = Job { thresholds: vec![0, 256], policies, ..Job::default() };
        let meter = crate::tokens::testing::bytes_meter();
        for rows in [true, false] {
            let walked = replay(&found, &job, &meter, rows, &|| {}, |_, file| file.runs);
            let mut warnings = Vec::new();
            for (path, runs) in found.files.iter().zip(&walked.output) {
                let Loaded::Trace(trace, own) = load_found(path, true, None) else {
                    panic!("{path:?} loads")
                };
                let shown = path.display().to_string();
                let (expected, policy) = replay_trace_with_warnings(&shown, &trace, &job, &meter);
                assert_eq!(runs.len(), expected.len());
                for (run, whole) in runs.iter().zip(&expected) {
                    assert_eq!(run.summary, whole.summary);
                    assert_eq!(run.rows, if rows { whole.rows.clone() } else { Vec::new() });
                }
                warnings.extend(own.iter().chain(&policy).map(|w| prefix_path(&shown, w)));
            }
            assert!(warnings.iter().any(|w| w.contains("tool result for call `c9`")), "{warnings:?}");
            assert!(warnings.iter().any(|w| w.contains("`ttl=0`")), "{warnings:?}");
            assert_eq!(walked.warnings, warnings);
        }
    }
}
