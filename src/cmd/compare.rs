//! `ctxbudget compare` and `ctxbudget cost`: every policy replayed over the corpus beside the
//! baseline, added up in input order; `cost` renders the same comparison as prices.

use std::process::ExitCode;

use anyhow::Result;

use super::opening::{
    Opened, Target, add_replayed, corpus_command, harness_line, keep_counts, load_found_each, replay_file,
    with_settings_line, writes_as,
};
use crate::analysis;
use crate::config::CompareConfig;
use crate::export;
use crate::pipeline::InOrderFold;

pub(super) fn run(c: CompareConfig, cost: bool) -> Result<ExitCode> {
    corpus_command(Target::Output(&c.output), &c.input.source, c.input.meter(), |opened| {
        let Opened { found, meter, .. } = opened;
        // Each file is replayed as soon as it is measured and then dropped, and its conversations
        // are added up as soon as the files before it are: memory holds the comparison (its prune
        // events among it), not the corpus nor a result per conversation.
        let policies = analysis::compare::with_baseline(&c.settings.policies);
        let sources = analysis::compare::sources(&policies);
        let sum = InOrderFold::new(analysis::compare::Sum::new(&sources), add_replayed);
        let mut loaded = load_found_each(&c.input, &found, meter, "measuring", |index, file, meter| {
            sum.put(index, replay_file(&file, &sources, &c.settings, meter, false));
        });
        loaded.check_tool_names(&c.settings.policies);
        let result = sum.finish().finish(&c.settings);
        if writes_as(&c.output, c.format, loaded.read, &mut loaded.errors) {
            let envelope = loaded.envelope(crate::config::settings::compare(&c));
            let harness = harness_line(c.input.harness_compaction, &loaded.inputs);
            if cost {
                let lines: Vec<String> = harness.into_iter().collect();
                export::analysis::write_cost(&c.output, c.format, &result, envelope, &lines)?;
            } else {
                let sections = || with_settings_line(export::analysis::compare_sections(&result), harness);
                let value = crate::result::Enveloped { result: &result, envelope };
                export::analysis::write(&c.output, c.format, sections, &value)?;
            }
        }
        keep_counts(c.input.source.count_cache.as_deref(), &mut loaded.meter);
        Ok(loaded.finish())
    })
}
