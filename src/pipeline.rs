//! The replay pipeline over many files: load each file, measure each conversation once, replay it
//! under every policy at every threshold, and collect the runs in a deterministic order.
//!
//! Files are processed in parallel (rayon) and the results are put back in input order, so the
//! output is the same bytes at any thread count. One bad file is reported with its reason and does
//! not stop the others. This module reads files only through [`crate::input`] and never prints.

use std::path::Path;

use rayon::prelude::*;

use crate::analysis::reconcile::ReconcileReport;
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
pub struct Job<'a> {
    /// Thresholds (bytes) to split at.
    pub thresholds: Vec<usize>,
    /// Policies to replay.
    pub policies: Vec<PolicySpec>,
    /// Re-split outputs that a tool already split.
    pub resplit: bool,
    /// Record-time transforms applied to outputs before the split.
    pub transforms: &'a [Box<dyn Transform>],
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
pub fn replay_trace(path: &str, trace: &Trace, job: &Job<'_>, meter: &Meter) -> Vec<Run> {
    replay_trace_with_warnings(path, trace, job, meter).0
}

/// Replays one loaded trace, with the warnings its policies reported (each once, in order,
/// naming the conversation and the policy).
pub fn replay_trace_with_warnings(
    path: &str,
    trace: &Trace,
    job: &Job<'_>,
    meter: &Meter,
) -> (Vec<Run>, Vec<String>) {
    let opts = MeasureOptions { resplit: job.resplit, transforms: job.transforms };
    let mut runs = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    for conversation in &trace.conversations {
        let measured = MeasuredConversation::new(conversation, meter, &opts);
        for &threshold in &job.thresholds {
            for spec in &job.policies {
                let mut policy = spec.build();
                let mut run = replay(&measured, threshold, &mut *policy, meter);
                for w in policy.warnings() {
                    let w = format!("conversation `{}`: policy `{}`: {w}", conversation.id, spec.as_str());
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                }
                let s = &mut run.summary;
                s.trace = path.to_owned();
                s.format = trace.format.to_owned();
                s.policy = spec.as_str().to_owned();
                s.tokenizer = meter.report_tokenizer().name().to_owned();
                s.decide_with = meter.decide_with().name().to_owned();
                runs.push(run);
            }
        }
    }
    (runs, warnings)
}

/// At most this many broken call/result links are listed per file; the rest are counted.
pub const LINK_WARNINGS_PER_FILE: usize = 5;

/// Broken call/result links, as warnings naming the conversation: the first
/// [`LINK_WARNINGS_PER_FILE`] in file order, then one line counting the rest.
pub fn link_warnings(trace: &Trace) -> Vec<String> {
    let mut out = Vec::new();
    let (mut more, mut conversations) = (0, std::collections::BTreeSet::new());
    for c in &trace.conversations {
        for p in c.link_problems() {
            if out.len() < LINK_WARNINGS_PER_FILE {
                out.push(format!("conversation `{}`: {p}", c.id));
            } else {
                more += 1;
                conversations.insert(c.id.as_str());
            }
        }
    }
    if more > 0 {
        out.push(format!("{more} more broken call/result links in {} conversation(s)", conversations.len()));
    }
    out
}

/// What loading one file found by [`input::discover`] gave.
pub enum Loaded {
    /// The trace, with the warnings of the file (its own and broken call/result links).
    Trace(Trace, Vec<String>),
    /// A file a directory walk found that no format recognises: skipped with this warning.
    Skipped(String),
    /// The file could not be read: the error.
    Failed(String),
}

/// Loads one file. A file found in a directory walk that no format recognises (or that is empty,
/// or not text) is skipped with a warning; named explicitly, it is an error.
pub fn load_found(path: &Path, explicit: bool, format: Option<&'static dyn Format>) -> Loaded {
    match input::load(path, format) {
        Err(e) if !explicit && e.is_skippable() => Loaded::Skipped(e.skip_warning()),
        Err(e) => Loaded::Failed(e.to_string()),
        Ok(trace) => {
            let mut warnings = trace.warnings.clone();
            warnings.extend(link_warnings(&trace));
            Loaded::Trace(trace, warnings)
        }
    }
}

/// Loads and replays every file, in parallel, returning outcomes in input order.
pub fn replay_files(found: &Discovered, job: &Job<'_>, meter: &Meter) -> Vec<FileOutcome> {
    found
        .files
        .par_iter()
        .zip(found.explicit.par_iter())
        .map(|(path, &explicit)| {
            let shown = path.display().to_string();
            match load_found(path, explicit, job.input_format) {
                Loaded::Skipped(w) => FileOutcome { warnings: vec![w], path: shown, ..Default::default() },
                Loaded::Failed(e) => FileOutcome { path: shown, error: Some(e), ..Default::default() },
                Loaded::Trace(trace, mut warnings) => {
                    let (runs, policy_warnings) = replay_trace_with_warnings(&shown, &trace, job, meter);
                    warnings.extend(policy_warnings);
                    FileOutcome { runs, format: Some(trace.format), warnings, path: shown, error: None }
                }
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
    job: &Job<'_>,
    meter: &Meter,
    done: &(dyn Fn() + Sync),
) -> Vec<MeasuredFile> {
    let opts = MeasureOptions { resplit: job.resplit, transforms: job.transforms };
    found
        .files
        .par_iter()
        .zip(found.explicit.par_iter())
        .map(|(path, &explicit)| {
            let shown = path.display().to_string();
            let out = match load_found(path, explicit, job.input_format) {
                Loaded::Skipped(w) => MeasuredFile { warnings: vec![w], path: shown, ..Default::default() },
                Loaded::Failed(e) => MeasuredFile { path: shown, error: Some(e), ..Default::default() },
                Loaded::Trace(trace, warnings) => MeasuredFile {
                    conversations: trace
                        .conversations
                        .iter()
                        .map(|c| MeasuredConversation::new(c, meter, &opts))
                        .collect(),
                    format: Some(trace.format),
                    warnings,
                    path: shown,
                    error: None,
                },
            };
            done();
            out
        })
        .collect()
}

/// Loads every file in parallel and reconciles each conversation's replayed context with its
/// recorded usage (see [`crate::analysis::reconcile`]). Conversations stay in input order; the
/// `worst` requests are taken over all of them. Unrecognised files found in a walk are skipped
/// with a warning, as in [`replay_files`].
pub fn reconcile_files(
    found: &Discovered,
    input_format: Option<&'static dyn Format>,
    meter: &Meter,
    per_request: bool,
    worst: usize,
) -> ReconcileReport {
    use crate::analysis::reconcile::{self, RequestFit};
    let tokenizer = meter.report_tokenizer();
    let opts = MeasureOptions { resplit: false, transforms: &[] };
    let outcomes: Vec<_> = found
        .files
        .par_iter()
        .zip(found.explicit.par_iter())
        .map(|(path, &explicit)| {
            let shown = path.display().to_string();
            let mut fits = Vec::new();
            let mut rows: Vec<RequestFit> = Vec::new();
            let (trace, warnings) = match load_found(path, explicit, input_format) {
                Loaded::Skipped(w) => return (shown, fits, rows, vec![w], None),
                Loaded::Failed(e) => return (shown, fits, rows, Vec::new(), Some(e)),
                Loaded::Trace(trace, warnings) => (trace, warnings),
            };
            for conversation in &trace.conversations {
                let measured = MeasuredConversation::new(conversation, meter, &opts);
                let sent = reconcile::sent_contexts(&shown, conversation, &measured);
                let (mut fit, fitted) =
                    reconcile::reconcile(&shown, trace.format, conversation, sent, tokenizer);
                if per_request {
                    fit.requests_detail = Some(fitted.clone());
                }
                fits.push(fit);
                rows.extend(fitted);
            }
            (shown, fits, rows, warnings, None)
        })
        .collect();
    let mut report = ReconcileReport {
        tokenizer: tokenizer.name().to_owned(),
        errors: found.errors.clone(),
        ..Default::default()
    };
    let mut all_rows = Vec::new();
    for (path, fits, rows, warnings, error) in outcomes {
        report.warnings.extend(
            warnings.into_iter().map(|w| if w.starts_with(&path) { w } else { format!("{path}: {w}") }),
        );
        report.errors.extend(error);
        for fit in &fits {
            if let Some(note) = reconcile::tokenizer_note(&fit.provider, tokenizer) {
                if !report.notes.contains(&note) {
                    report.notes.push(note);
                }
            }
        }
        report.conversations.extend(fits);
        all_rows.extend(rows);
    }
    report.formats = reconcile::by_format(&report.conversations, &all_rows);
    report.worst = reconcile::worst(&all_rows, worst);
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Conversation, Item, Output, ToolResult};

    fn orphan(id: &str) -> Item {
        Item::ToolResult(ToolResult {
            call_id: id.into(),
            name: None,
            output: Output::Raw { output: String::new() },
            is_error: false,
            images: 0,
        })
    }

    #[test]
    fn link_warnings_list_the_first_few_and_count_the_rest() {
        let mut a = Conversation::new("a");
        a.items = (0..4).map(|i| orphan(&format!("x{i}"))).collect();
        let mut b = Conversation::new("b");
        b.items = (0..3).map(|i| orphan(&format!("y{i}"))).collect();
        let trace = Trace { format: "native", conversations: vec![a, b], warnings: vec![] };
        let w = link_warnings(&trace);
        assert_eq!(w.len(), LINK_WARNINGS_PER_FILE + 1);
        assert_eq!(
            w[4],
            "conversation `b`: tool result for call `y0` (after request 0) has no matching call"
        );
        assert_eq!(w[5], "2 more broken call/result links in 1 conversation(s)");
    }
}
