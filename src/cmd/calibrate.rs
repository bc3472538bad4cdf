//! `ctxbudget calibrate`: how well each estimator predicts the real token counts of the tool
//! outputs, from one small sample per output gathered as each file is measured.

use std::process::ExitCode;

use anyhow::Result;

use super::opening::{Opened, Target, corpus_command, keep_counts, load_each, writes_as};
use crate::analysis;
use crate::config::CalibrateConfig;
use crate::export;
use crate::measure::MeasuredConversation;

pub(super) fn run(c: CalibrateConfig) -> Result<ExitCode> {
    corpus_command(Target::Output(&c.output), &c.input.source, c.input.meter(), |opened| {
        let Opened { found, meter, .. } = opened;
        // Each file's tool outputs are estimated as soon as it is measured, and the file dropped:
        // memory holds one small sample per tool output, not the corpus.
        let estimators = analysis::calibration::default_estimators();
        let mut loaded = load_each(&c.input, &found, meter, |file, _| {
            let conversations: Vec<&MeasuredConversation> = file.conversations.iter().collect();
            analysis::calibration::samples(&conversations, &estimators)
        });
        let samples: Vec<_> = std::mem::take(&mut loaded.files).into_iter().flatten().collect();
        let result =
            analysis::calibration::calibrate_samples(&samples, &estimators, c.input.source.tokenizer.name());
        if writes_as(&c.output, c.format, loaded.read, &mut loaded.errors) {
            let sections = || export::analysis::calibration_sections(&result);
            let envelope = loaded.envelope(crate::config::settings::calibrate(&c));
            let value = crate::result::Enveloped { result: &result, envelope };
            export::analysis::write(&c.output, c.format, sections, &value)?;
        }
        keep_counts(c.input.source.count_cache.as_deref(), &mut loaded.meter);
        Ok(loaded.finish())
    })
}
