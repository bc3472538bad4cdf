//! `ctxbudget reconcile`: each conversation's replayed context beside the usage its provider
//! recorded ([`crate::pass::reconcile`]), rendered and written.

use std::process::ExitCode;

use anyhow::Result;

use super::opening::{Opened, Target, corpus_command, keep_counts, progress_bar, writes_as};
use super::print_problems;
use crate::config::ReconcileConfig;
use crate::pass;
use crate::tokens::Meter;

pub(super) fn run(c: ReconcileConfig) -> Result<ExitCode> {
    let meter = Meter::with_backend(c.source.tokenizer, c.source.tokenizer, c.source.counter);
    corpus_command(Target::Output(&c.output), &c.source, meter, |opened| {
        let Opened { found, mut meter, .. } = opened;
        let bar = progress_bar(found.files.len(), "reconciling");
        let progress = || bar.inc(1);
        let walked =
            pass::reconcile(&found, c.source.input_format, &meter, c.per_request, c.worst, &progress);
        bar.finish_and_clear();
        let (mut report, read) = (walked.output, walked.read);
        report.settings = crate::config::settings::reconcile(&c);
        if writes_as(&c.output, c.format, read, &mut report.errors) {
            let bytes = crate::export::reconcile::render(&report, c.format, c.per_request)?;
            c.output.write(&bytes)?;
        }
        keep_counts(c.source.count_cache.as_deref(), &mut meter);
        Ok(print_problems(&report.warnings, &report.errors))
    })
}
