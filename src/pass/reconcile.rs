//! The reconciliation as a corpus pass: [`reconcile`] sets each conversation's replayed context
//! beside the usage its provider recorded ([`crate::analysis::reconcile`]) as soon as the file is
//! measured, keeping its fit and its requests' rows (the worst requests are taken over all of
//! them at the end). It sees each conversation as recorded beside its measure ([`Pass::RECORDED`]:
//! the images a user message carried are not measured).
//!
//! Nothing here prints: progress is a callback, problems come back as strings.

use super::{Pass, Walked, walk};
use crate::analysis::reconcile::{self, ConversationFit, ReconcileReport, RequestFit};
use crate::format::Format;
use crate::input::Discovered;
use crate::pipeline::{Job, MeasuredFile};
use crate::result::InputFile;
use crate::tokens::{Meter, Tokenizer};

/// The reconciliation as a [`Pass`]: each conversation fitted, each request's row kept.
pub struct ReconcilePass {
    /// The tokenizer every replayed count is in: the meter's choice.
    pub tokenizer: Tokenizer,
    /// Give each conversation's fit its requests (`--per-request`).
    pub per_request: bool,
    /// How many of the worst requests over all conversations the report lists.
    pub worst: usize,
}

/// What the reconciliation keeps of one file: what was read of it (as the report lists it), each
/// conversation's fit and every request's row.
pub struct ReconciledFile {
    input: InputFile,
    fits: Vec<ConversationFit>,
    rows: Vec<RequestFit>,
}

impl Pass for ReconcilePass {
    type Part = ReconciledFile;
    type Output = ReconcileReport;
    const RECORDED: bool = true;

    fn file(&self, _: usize, file: MeasuredFile, _: &Meter) -> ReconciledFile {
        let tokenizer = self.tokenizer;
        let (mut fits, mut rows) = (Vec::new(), Vec::new());
        let path = &file.path;
        if let Some(format) = file.format {
            for (conversation, measured) in file.recorded.iter().zip(&file.conversations) {
                let model = crate::calibrate::model_named(conversation);
                let sent = reconcile::sent_contexts(path, conversation, measured);
                let samples = if crate::calibrate::fit_inputs(format, model, tokenizer).kinds {
                    crate::calibrate::samples_by_kind(measured)
                } else {
                    crate::calibrate::samples(measured)
                };
                let (mut fit, fitted) =
                    reconcile::reconcile(path, format, conversation, sent, &samples, tokenizer);
                if self.per_request {
                    fit.requests_detail = Some(fitted.clone());
                }
                fits.push(fit);
                rows.extend(fitted);
            }
        }
        let conversations = fits.iter().map(|f| (f.conversation.as_str(), f.requests));
        let input = crate::result::input_file(path, file.format, conversations);
        ReconciledFile { input, fits, rows }
    }

    /// The report without its settings, errors and warnings: the conversations in input order,
    /// their pooled errors per format, the worst requests, the notes on the tokenizers, the inputs.
    fn finish(self, parts: Vec<ReconciledFile>) -> ReconcileReport {
        let mut report =
            ReconcileReport { tokenizer: self.tokenizer.name().to_owned(), ..Default::default() };
        let mut all_rows = Vec::new();
        for ReconciledFile { input, fits, rows } in parts {
            report.inputs.push(input);
            for fit in &fits {
                let note = reconcile::tokenizer_note(&fit.provider, self.tokenizer, fit.calibration.method);
                if let Some(note) = note.filter(|n| !report.notes.contains(n)) {
                    report.notes.push(note);
                }
            }
            report.conversations.extend(fits);
            all_rows.extend(rows);
        }
        report.formats = reconcile::by_format(&report.conversations, &all_rows);
        report.worst = reconcile::worst(&all_rows, self.worst);
        report
    }
}

/// Reconciles every conversation of the files `found` (read with `input_format` when given, else
/// the format detected) with `meter`, on the current rayon pool: the report of `reconcile` but
/// its settings, with the walk's errors and warnings. `progress` is called once per file.
pub fn reconcile(
    found: &Discovered,
    input_format: Option<&'static dyn Format>,
    meter: &Meter,
    per_request: bool,
    worst: usize,
    progress: &(dyn Fn() + Sync),
) -> Walked<ReconcileReport> {
    let job = Job { input_format, ..Job::default() };
    let pass = ReconcilePass { tokenizer: meter.choice(), per_request, worst };
    let mut walked = walk(pass, found, &job, meter, progress);
    walked.output.errors.clone_from(&walked.errors);
    walked.output.warnings.clone_from(&walked.warnings);
    walked
}
