//! The replay pipeline over many files: load each file, measure each conversation once, replay it
//! under every policy at every threshold, and collect the runs in a deterministic order.
//!
//! Files are processed in parallel (rayon) and the results are put back in input order, so the
//! output is the same bytes at any thread count. One bad file is reported with its reason and does
//! not stop the others. This module reads files only through [`crate::input`] and never prints.

use rayon::prelude::*;

use crate::error::TraceError;
use crate::format::Format;
use crate::input::{self, Discovered};
use crate::measure::{MeasureOptions, MeasuredConversation};
use crate::model::Trace;
use crate::policy::PolicySpec;
use crate::replay::replay;
use crate::result::Run;
use crate::tokens::Meter;
use crate::transform::Transform;

/// What to replay and how.
pub struct Job {
    /// Thresholds (bytes) to split at.
    pub thresholds: Vec<usize>,
    /// Policies to replay.
    pub policies: Vec<PolicySpec>,
    /// Re-split outputs that a tool already split.
    pub resplit: bool,
    /// Record-time transforms applied to outputs before the split.
    pub transforms: Vec<Box<dyn Transform>>,
    /// Read every file with this format instead of detecting.
    pub input_format: Option<&'static dyn Format>,
}

/// The outcome of one input file.
#[derive(Debug, Default)]
pub struct FileOutcome {
    /// The path as given or found.
    pub path: String,
    /// The format that read it, if any did.
    pub format: Option<&'static str>,
    /// One run per conversation × threshold × policy, in that nesting order.
    pub runs: Vec<Run>,
    /// Non-fatal problems.
    pub warnings: Vec<String>,
    /// Why the file could not be replayed, if it could not.
    pub error: Option<String>,
}

/// Replays one loaded trace.
pub fn replay_trace(path: &str, trace: &Trace, job: &Job, meter: &Meter) -> Vec<Run> {
    let opts = MeasureOptions { resplit: job.resplit, transforms: &job.transforms };
    let mut runs = Vec::new();
    for conversation in &trace.conversations {
        let measured = MeasuredConversation::new(conversation, meter, &opts);
        for &threshold in &job.thresholds {
            for spec in &job.policies {
                let mut policy = spec.build();
                let mut run = replay(&measured, threshold, &mut *policy, meter);
                let s = &mut run.summary;
                s.trace = path.to_owned();
                s.format = trace.format.to_owned();
                s.policy = spec.as_str().to_owned();
                s.tokenizer = meter.report_tokenizer().name().to_owned();
                s.decide_with = meter.decide_tokenizer().name().to_owned();
                runs.push(run);
            }
        }
    }
    runs
}

/// Loads and replays every file, in parallel, returning outcomes in input order. A file found in a
/// directory walk that no format recognises is skipped with a warning; named explicitly, it is an
/// error.
pub fn replay_files(found: &Discovered, job: &Job, meter: &Meter) -> Vec<FileOutcome> {
    found
        .files
        .par_iter()
        .zip(found.explicit.par_iter())
        .map(|(path, &explicit)| {
            let shown = path.display().to_string();
            match input::load(path, job.input_format) {
                Err(e @ TraceError::Unrecognised { .. }) if !explicit => {
                    FileOutcome { warnings: vec![format!("skipped: {e}")], path: shown, ..Default::default() }
                }
                Ok(trace) => FileOutcome {
                    runs: replay_trace(&shown, &trace, job, meter),
                    format: Some(trace.format),
                    warnings: trace.warnings,
                    path: shown,
                    error: None,
                },
                Err(e) => FileOutcome { path: shown, error: Some(e.to_string()), ..Default::default() },
            }
        })
        .collect()
}

/// One input file, loaded and measured (for the analyses, which replay it many times).
#[derive(Debug, Default)]
pub struct MeasuredFile {
    /// The path as given or found.
    pub path: String,
    /// The format that read it, if any did.
    pub format: Option<&'static str>,
    /// Its conversations, each measured once.
    pub conversations: Vec<MeasuredConversation>,
    /// Non-fatal problems.
    pub warnings: Vec<String>,
    /// Why the file could not be read, if it could not.
    pub error: Option<String>,
}

/// Loads and measures every file in parallel, returning them in input order; `done` is called once
/// per file as it finishes (for a progress bar). Files are treated as in [`replay_files`]; the
/// job's thresholds and policies are not used.
pub fn measure_files(
    found: &Discovered,
    job: &Job,
    meter: &Meter,
    done: &(dyn Fn() + Sync),
) -> Vec<MeasuredFile> {
    let opts = MeasureOptions { resplit: job.resplit, transforms: &job.transforms };
    found
        .files
        .par_iter()
        .zip(found.explicit.par_iter())
        .map(|(path, &explicit)| {
            let shown = path.display().to_string();
            let out = match input::load(path, job.input_format) {
                Err(e @ TraceError::Unrecognised { .. }) if !explicit => MeasuredFile {
                    warnings: vec![format!("skipped: {e}")],
                    path: shown,
                    ..Default::default()
                },
                Ok(trace) => MeasuredFile {
                    conversations: trace
                        .conversations
                        .iter()
                        .map(|c| MeasuredConversation::new(c, meter, &opts))
                        .collect(),
                    format: Some(trace.format),
                    warnings: trace.warnings,
                    path: shown,
                    error: None,
                },
                Err(e) => MeasuredFile { path: shown, error: Some(e.to_string()), ..Default::default() },
            };
            done();
            out
        })
        .collect()
}
