//! `ctxbudget sweep`: the threshold sweep over the corpus, one library call
//! ([`crate::pass::sweep`], which holds small inputs and reads large ones again), with a progress
//! bar and the output written.

use std::process::ExitCode;

use anyhow::Result;

use super::opening::{
    Opened, Target, corpus_command, harness_line, keep_counts, progress_bar, unknown_tool_names,
    with_settings_line, writes_as,
};
use super::print_problems;
use crate::config::{SweepConfig, settings};
use crate::export;
use crate::pass::{self, Step};
use crate::result::{Envelope, Enveloped};

pub(super) fn run(c: SweepConfig) -> Result<ExitCode> {
    corpus_command(Target::Output(&c.output), &c.input.source, c.input.meter(), |opened| {
        let Opened { found, mut meter, .. } = opened;
        let bar = progress_bar(found.files.len(), "measuring");
        let progress = |step| progress_step(&bar, step);
        let walked = pass::sweep(&found, &c.input.job(), &meter, &c.settings, c.low_memory, &progress);
        bar.finish_and_clear();
        let pass::Walked { output: result, read, mut errors, mut warnings, inputs, tools } = walked;
        warnings.extend(unknown_tool_names(std::slice::from_ref(&c.settings.policy), &tools));
        if writes_as(&c.output, c.format, read, &mut errors) {
            let harness = harness_line(c.input.harness_compaction, &inputs);
            let sections = || with_settings_line(export::analysis::sweep_sections(&result), harness);
            let envelope = Envelope {
                inputs,
                settings: settings::sweep(&c),
                errors: errors.clone(),
                warnings: warnings.clone(),
            };
            export::analysis::write(&c.output, c.format, sections, &Enveloped { result: &result, envelope })?;
        }
        keep_counts(c.input.source.count_cache.as_deref(), &mut meter);
        Ok(print_problems(&warnings, &errors))
    })
}

/// Moves a sweep's progress bar on: one more file, or a second read of some files begun.
pub(super) fn progress_step(bar: &indicatif::ProgressBar, step: Step) {
    match step {
        Step::File => bar.inc(1),
        Step::Again(files) => {
            bar.set_message("per tool");
            bar.set_position(0);
            bar.set_length(files as u64);
        }
    }
}
