//! `ctxbudget sweep`: the threshold sweep over the corpus. A first pass adds up every file's
//! totals (and keeps the file when the inputs are small enough to hold, [`crate::pass::holds`]);
//! [`finish_sweep`] plans from them, then sweeps the dominant tools over the held files or, not
//! held, over the per-tool rows guessed as the files were read and a second read of the rest.
//! The report reuses both halves.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::opening::{Loaded, Opened, Target, corpus_command, keep_counts, load_found_each, writes};
use super::print_problems;
use crate::analysis;
use crate::analysis::sweep::Speculation;
use crate::config::{InputConfig, SweepConfig};
use crate::export;
use crate::input::{self, Discovered};
use crate::measure::MeasuredConversation;
use crate::pipeline::MeasuredFile;
use crate::tokens::Meter;

pub(super) fn run(c: SweepConfig) -> Result<ExitCode> {
    corpus_command(Target::Output(&c.output), &c.input.source, c.input.meter(), |opened| {
        let Opened { found, meter, .. } = opened;
        let speculation = Speculation::new(found.files.len());
        let keep = SweepKeep::of(&found, c.low_memory, &speculation);
        let sum = std::sync::Mutex::default();
        let Loaded { meter, files, read, mut errors, mut warnings } =
            load_found_each(&c.input, &found, meter, "measuring", |index, file, meter| {
                let keep = keep.of_file(&found.files[index]);
                SweepPart::of(index, file, &c.settings, meter, keep, &sum)
            });
        let first = FirstPass { sum, parts: files, speculation };
        let (result, mut meter) = finish_sweep(&c.input, &found, meter, first, &c.settings, &mut warnings);
        if writes(Some(&c.output), read, &mut errors) {
            let sections = || export::analysis::sweep_sections(&result);
            export::analysis::write(&c.output, c.format, sections, &result)?;
        }
        keep_counts(c.input.source.count_cache.as_deref(), &mut meter);
        Ok(print_problems(&warnings, &errors))
    })
}
/// What a sweep's first pass keeps of each file for the per-tool pass.
#[derive(Clone, Copy)]
pub(super) enum SweepKeep<'a> {
    /// The measured file itself: the inputs are small enough to hold ([`crate::pass::holds`]).
    File,
    /// Its per-tool rows under the plan of the files read before it; what the final plan needs
    /// beyond them is read again ([`Speculation`]).
    Rows(&'a Speculation),
    /// Both: its rows as [`SweepKeep::Rows`], and the file, for what the final plan needs beyond
    /// them, since it cannot be read again ([`input::rereadable`]).
    RowsAndFile(&'a Speculation),
}

impl<'a> SweepKeep<'a> {
    pub(super) fn of(found: &Discovered, low_memory: bool, speculation: &'a Speculation) -> SweepKeep<'a> {
        if crate::pass::holds(found, low_memory) { SweepKeep::File } else { SweepKeep::Rows(speculation) }
    }

    /// What is kept of `file`: the file too when it is not held but cannot be read again.
    pub(super) fn of_file(self, file: &Path) -> SweepKeep<'a> {
        match self {
            SweepKeep::Rows(speculation) if !input::rereadable(file) => SweepKeep::RowsAndFile(speculation),
            keep => keep,
        }
    }
}

/// One file's share of a sweep's first pass: the requests of each of its conversations (to notice
/// a file that reads differently the second time) and, when the inputs are held, the file itself
/// for the second pass. Its totals go straight into the sweep's sum ([`SweepPart::of`]).
pub(super) struct SweepPart {
    shape: Vec<usize>,
    held: Option<MeasuredFile>,
}

impl SweepPart {
    /// File `index`'s part, its totals added to `sum` and its per-tool rows offered to the
    /// speculation when the file is not kept. The totals are integer sums and maxima, so adding
    /// them as the files come gives the same sum in any order; keeping them per file until the end
    /// held about 2.7 KB a file (`sweep --low-memory -j 1` of 20,000 and 60,000 copies of a 2 KB
    /// session: 62 and 170 MB).
    pub(super) fn of(
        index: usize,
        file: MeasuredFile,
        settings: &analysis::sweep::SweepSettings,
        meter: &Meter,
        keep: SweepKeep<'_>,
        sum: &std::sync::Mutex<analysis::sweep::SweepTotals>,
    ) -> SweepPart {
        let conversations: Vec<&MeasuredConversation> = file.conversations.iter().collect();
        let totals = analysis::sweep::totals(&conversations, settings, meter);
        if let SweepKeep::Rows(speculation) | SweepKeep::RowsAndFile(speculation) = keep {
            speculation.offer(index, &conversations, &totals, settings, meter);
        }
        crate::lock(sum).add(totals);
        let held = matches!(keep, SweepKeep::File | SweepKeep::RowsAndFile(_));
        SweepPart { shape: shape(&file), held: held.then_some(file) }
    }
}

/// What a sweep's first pass gave: the sum of every file's totals, each file's part (every file
/// found, in input order) and the speculation the files were offered to.
pub(super) struct FirstPass {
    pub(super) sum: std::sync::Mutex<analysis::sweep::SweepTotals>,
    pub(super) parts: Vec<SweepPart>,
    pub(super) speculation: Speculation,
}

/// Ends a sweep from its first pass: plans from the totals, then sweeps the dominant tools, which
/// depend on the overall recommendation, over the held files or, when they were not held, takes
/// the per-tool rows the files were swept for as they were read (`speculation`) and reads again
/// only the files some planned tool was not swept over, for those tools (holding one file per
/// worker; it counts nothing, the meter's cache has every text), except those held because they
/// cannot be read again, swept from memory. A file that reads differently the second time (a live
/// session being written) is named in a warning. The meter comes back with the sweep.
pub(super) fn finish_sweep(
    input: &InputConfig,
    found: &Discovered,
    mut meter: Meter,
    first: FirstPass,
    settings: &analysis::sweep::SweepSettings,
    warnings: &mut Vec<String>,
) -> (analysis::sweep::Sweep, Meter) {
    use analysis::sweep::{plan, tool_rows, tool_totals};
    let FirstPass { sum, parts, speculation } = first;
    let totals = sum.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (mut shapes, mut held) = (Vec::with_capacity(parts.len()), Vec::with_capacity(parts.len()));
    for part in parts {
        shapes.push(part.shape);
        held.push(part.held);
    }
    let plan = plan(&totals, settings);
    if held.iter().all(Option::is_some) {
        let conversations: Vec<&MeasuredConversation> =
            held.iter().flatten().flat_map(|f| &f.conversations).collect();
        let per_tool = tool_totals(&conversations, &plan, settings, &meter);
        return (analysis::sweep::finish(totals, &plan, per_tool, settings), meter);
    }
    let (mut per_tool, left) = speculation.settle(&plan, settings, |i| !shapes[i].is_empty());
    // A file held because it cannot be read again is swept from memory for the tools left.
    let (from_memory, left): (Vec<_>, Vec<_>) = left.into_iter().partition(|(i, _)| held[*i].is_some());
    for (i, tools) in &from_memory {
        let Some(file) = &held[*i] else { continue };
        let conversations: Vec<&MeasuredConversation> = file.conversations.iter().collect();
        for &t in tools {
            per_tool
                .add_tool(t, &tool_rows(&conversations, &plan.tools[t].0, plan.overall(), settings, &meter));
        }
    }
    if !left.is_empty() {
        let again = crate::pass::again(found, left.iter().map(|(i, _)| *i));
        let second = load_found_each(input, &again, meter, "per tool", |k, file, meter| {
            let conversations: Vec<&MeasuredConversation> = file.conversations.iter().collect();
            let rows: Vec<_> = left[k]
                .1
                .iter()
                .map(|&t| (t, tool_rows(&conversations, &plan.tools[t].0, plan.overall(), settings, meter)))
                .collect();
            (file.path.clone(), rows, shape(&file))
        });
        meter = second.meter;
        for ((path, rows, shape), (i, tools)) in second.files.into_iter().zip(&left) {
            if shape != shapes[*i] {
                let names: Vec<&str> = tools.iter().map(|&t| plan.tools[t].0.as_str()).collect();
                warnings.push(format!(
                    "{path}: read differently the second time (changed while the sweep read it?): its per-tool \
                     rows of {} use the second read",
                    names.join(", ")
                ));
            }
            for (t, part) in &rows {
                per_tool.add_tool(*t, part);
            }
        }
    }
    (analysis::sweep::finish(totals, &plan, per_tool, settings), meter)
}

/// The requests of each conversation of `file`: what a second read of it must find again.
fn shape(file: &MeasuredFile) -> Vec<usize> {
    file.conversations.iter().map(|c| c.requests()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use clap::Parser;

    /// A sweep of the cache-trap fixture copied into a temporary folder, with its first pass done,
    /// the file not held and its per-tool rows guessed under a tolerance of 100% (the largest
    /// threshold), so that the guess is not the recommendation and the file is read again.
    fn first_pass(dir: &Path) -> (SweepConfig, Discovered, Meter, FirstPass) {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cache-trap/session.jsonl");
        std::fs::copy(fixture, dir.join("session.jsonl")).unwrap();
        let cli = crate::cli::Cli::try_parse_from(
            ["ctxbudget", "sweep", "--tokenizer", "estimate"].into_iter().chain([dir.to_str().unwrap()]),
        )
        .unwrap();
        let Ok(Config::Sweep(c)) = Config::from_cli(cli) else { panic!("a sweep") };
        let found = input::discover(&c.input.source.paths);
        let speculation = Speculation::new(found.files.len());
        let guessing = analysis::sweep::SweepSettings { tolerance: 1.0, ..c.settings.clone() };
        let sum = std::sync::Mutex::default();
        let first = load_found_each(&c.input, &found, c.input.meter(), "", |index, file, meter| {
            SweepPart::of(index, file, &guessing, meter, SweepKeep::Rows(&speculation), &sum)
        });
        assert!(first.files[0].held.is_none());
        (c, found, first.meter, FirstPass { sum, parts: first.files, speculation })
    }

    #[test]
    fn a_file_that_reads_differently_the_second_time_is_named_in_a_warning() {
        for changed in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let (c, found, meter, first) = first_pass(dir.path());
            if changed {
                // A live session gets another request between the two reads.
                let path = dir.path().join("session.jsonl");
                let mut text = std::fs::read_to_string(&path).unwrap();
                text.push_str("{\"type\": \"request\"}\n");
                std::fs::write(&path, text).unwrap();
            }
            let mut warnings = Vec::new();
            let (sweep, _) = finish_sweep(&c.input, &found, meter, first, &c.settings, &mut warnings);
            assert!(!sweep.per_tool.is_empty(), "the fixture has a recommendation and a tool to sweep");
            let named =
                warnings.iter().any(|w| w.contains("session.jsonl: read differently the second time"));
            assert_eq!(named, changed, "{warnings:?}");
        }
    }
}
