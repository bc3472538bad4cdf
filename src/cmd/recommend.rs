//! `ctxbudget recommend`: the (policy, threshold) grid priced over the corpus, one library call
//! ([`crate::pass::recommend`], which holds small inputs and reads large ones again for the
//! per-tool step), with a progress bar and the output written.

use std::process::ExitCode;

use anyhow::Result;

use super::opening::{
    Opened, Target, corpus_command, harness_line, keep_counts, progress_bar, unknown_tool_names,
    with_settings_line, writes,
};
use super::print_problems;
use crate::config::{RecommendConfig, settings};
use crate::export;
use crate::pass;
use crate::result::{Envelope, Enveloped};

pub(super) fn run(c: RecommendConfig) -> Result<ExitCode> {
    corpus_command(Target::Output(&c.output), &c.input.source, c.input.meter(), |opened| {
        let Opened { found, mut meter, .. } = opened;
        let bar = progress_bar(found.files.len(), "measuring");
        let progress = || bar.inc(1);
        // The reuse index, so each candidate's reuse share is known and `--max-reuse` applies.
        let job = crate::pipeline::Job { reuse: true, ..c.input.job() };
        let walked = pass::recommend(&found, &job, &meter, &c.settings, c.low_memory, &progress);
        bar.finish_and_clear();
        let pass::Walked { output: result, read, mut errors, mut warnings, inputs, tools } = walked;
        warnings.extend(unknown_tool_names(&c.settings.policies, &tools));
        if writes(Some(&c.output), read, &mut errors) {
            let every_pair = c.format == export::ExportFormat::Csv;
            let harness = harness_line(c.input.harness_compaction, &inputs);
            let sections = || with_settings_line(export::recommend::sections(&result, every_pair), harness);
            let envelope = Envelope {
                inputs,
                settings: settings::recommend(&c),
                errors: errors.clone(),
                warnings: warnings.clone(),
            };
            export::analysis::write(&c.output, c.format, sections, &Enveloped { result: &result, envelope })?;
        }
        keep_counts(c.input.source.count_cache.as_deref(), &mut meter);
        Ok(print_problems(&warnings, &errors))
    })
}
