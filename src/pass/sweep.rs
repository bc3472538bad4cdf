//! The threshold sweep as a corpus pass, with the memory policy of [`super::holds`]: [`sweep`]
//! runs it in one call. A first read adds up every file's totals and keeps the file when the
//! inputs are small enough to hold; [`FirstRead::finish`] plans from the totals, then sweeps the
//! dominant tools over the held files or, not held, over the per-tool rows guessed as the files
//! were read ([`Speculation`]) and a second read of the files the guesses missed. An analysis that
//! walks the corpus for more than the sweep (the report) runs [`SweepPass::file`] inside its own
//! pass and finishes the same way.
//!
//! Nothing here prints: progress is a callback ([`Step`]), problems come back as strings.

use std::path::Path;
use std::sync::Mutex;

use super::{Pass, Walked, again, holds, walk};
use crate::analysis::sweep::{
    Speculation, Sweep, SweepSettings, SweepTotals, finish, plan, tool_rows, tool_totals, totals,
};
use crate::input::{self, Discovered};
use crate::measure::MeasuredConversation;
use crate::pipeline::{Job, MeasuredFile};
use crate::tokens::Meter;

/// What a sweep's progress callback is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// One more file was read (in the first read or the second).
    File,
    /// A second read of this many files begins (files not held that the guesses missed).
    Again(usize),
}

/// Sweeps `settings.thresholds` over the files `found`, loaded and measured as `job` says with
/// `meter`, on the current rayon pool: the same bytes as [`crate::analysis::sweep::sweep`] over
/// every conversation held, in the memory of [`holds`]`(found, low_memory)`. `progress` is called
/// once per file read, and once before a second read. Warnings name a file that read differently
/// the second time (a live session being written).
///
/// ```
/// use ctxbudget::analysis::sweep::{DEFAULT_THRESHOLDS, parse_thresholds};
/// use ctxbudget::pipeline::Job;
/// use ctxbudget::{Meter, PolicySpec, SweepSettings, Tokenizer};
///
/// let found = ctxbudget::input::discover(&["traces".into()]);
/// let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
/// let settings = SweepSettings {
///     thresholds: parse_thresholds(DEFAULT_THRESHOLDS).unwrap(),
///     policy: PolicySpec::parse("keep-turns:n=3").unwrap(),
///     tolerance: 0.05,
///     top_tools: 5,
///     cache: Default::default(),
/// };
/// // Low memory: each file is dropped once read; the files whose per-tool rows the guesses
/// // missed are read again.
/// let low = ctxbudget::pass::sweep(&found, &Job::default(), &meter, &settings, true, &|_| {});
/// let held = ctxbudget::pass::sweep(&found, &Job::default(), &meter, &settings, false, &|_| {});
/// assert!(low.read > 0 && low.errors.is_empty());
/// assert_eq!(low.output, held.output, "the same sweep either way");
/// ```
pub fn sweep(
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    settings: &SweepSettings,
    low_memory: bool,
    progress: &(dyn Fn(Step) + Sync),
) -> Walked<Sweep> {
    let pass = SweepPass::new(found, settings, low_memory);
    let Walked { output: first, read, errors, mut warnings, inputs, tools } =
        walk(pass, found, job, meter, &|| progress(Step::File));
    let output = first.finish(found, job, meter, &mut warnings, progress);
    Walked { output, read, errors, warnings, inputs, tools }
}

/// What the first read keeps of each file for the per-tool rows.
#[derive(Clone, Copy)]
enum Keep {
    /// The measured file itself: the inputs are small enough to hold ([`holds`]).
    File,
    /// Its per-tool rows under the plan of the files read before it; what the final plan needs
    /// beyond them is read again ([`Speculation`]).
    Rows,
    /// Both: its rows, and the file, since it cannot be read again ([`input::rereadable`]).
    RowsAndFile,
}

/// The first read of a sweep, as a [`Pass`]: each file's totals go into one sum as the files come
/// (integer sums and maxima, the same in any order; kept per file until the end they held about
/// 2.7 KB a file: `sweep --low-memory -j 1` of 20,000 and 60,000 copies of a 2 KB session, 62 and
/// 170 MB), its per-tool rows are guessed when it is not held.
pub struct SweepPass<'a> {
    found: &'a Discovered,
    settings: &'a SweepSettings,
    holds: bool,
    sum: Mutex<SweepTotals>,
    speculation: Speculation,
}

impl<'a> SweepPass<'a> {
    /// The first read of a sweep of the files `found` under `settings`; the files are held when
    /// [`holds`]`(found, low_memory)`.
    pub fn new(found: &'a Discovered, settings: &'a SweepSettings, low_memory: bool) -> SweepPass<'a> {
        SweepPass {
            found,
            settings,
            holds: holds(found, low_memory),
            sum: Mutex::default(),
            speculation: Speculation::new(found.files.len()),
        }
    }

    /// What is kept of the file at `path`: the file too when it is not held but cannot be read
    /// again.
    fn keep(&self, path: &Path) -> Keep {
        match self.holds {
            true => Keep::File,
            false if !input::rereadable(path) => Keep::RowsAndFile,
            false => Keep::Rows,
        }
    }
}

/// One file's share of a sweep's first read: the requests of each of its conversations (to notice
/// a file that reads differently the second time) and, when it is held, the file itself.
pub struct SweepPart {
    shape: Vec<usize>,
    held: Option<MeasuredFile>,
}

impl Pass for SweepPass<'_> {
    type Part = SweepPart;
    type Output = FirstRead;

    fn file(&self, index: usize, file: MeasuredFile, meter: &Meter) -> SweepPart {
        let keep = self.keep(&self.found.files[index]);
        let conversations: Vec<&MeasuredConversation> = file.conversations.iter().collect();
        let totals = totals(&conversations, self.settings, meter);
        if let Keep::Rows | Keep::RowsAndFile = keep {
            self.speculation.offer(index, &conversations, &totals, self.settings, meter);
        }
        crate::lock(&self.sum).add(totals);
        let held = matches!(keep, Keep::File | Keep::RowsAndFile);
        SweepPart { shape: shape(&file), held: held.then_some(file) }
    }

    fn finish(self, parts: Vec<SweepPart>) -> FirstRead {
        let totals = self.sum.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (mut shapes, mut held) = (Vec::with_capacity(parts.len()), Vec::with_capacity(parts.len()));
        for part in parts {
            shapes.push(part.shape);
            held.push(part.held);
        }
        FirstRead { totals, shapes, held, speculation: self.speculation, settings: self.settings.clone() }
    }
}

/// What a sweep's first read gave: the sum of every file's totals, each file's requests and held
/// file (every file found, in input order), and the speculation the files were offered to.
pub struct FirstRead {
    totals: SweepTotals,
    shapes: Vec<Vec<usize>>,
    held: Vec<Option<MeasuredFile>>,
    speculation: Speculation,
    settings: SweepSettings,
}

impl FirstRead {
    /// Ends the sweep: plans from the totals, then sweeps the dominant tools, which depend on the
    /// overall recommendation, over the held files or, when they were not held, takes the rows the
    /// files were swept for as they were read and reads again only the files some planned tool
    /// was not swept over, for those tools (one file per worker; it counts nothing, the meter's
    /// cache has every text), except those held because they cannot be read again. A file that
    /// reads differently the second time is named in `warnings`; the second read's own problems
    /// were met and reported by the first.
    pub fn finish(
        self,
        found: &Discovered,
        job: &Job<'_>,
        meter: &Meter,
        warnings: &mut Vec<String>,
        progress: &(dyn Fn(Step) + Sync),
    ) -> Sweep {
        let FirstRead { totals, shapes, held, speculation, settings } = self;
        let settings = &settings;
        let plan = plan(&totals, settings);
        if held.iter().all(Option::is_some) {
            let conversations: Vec<&MeasuredConversation> =
                held.iter().flatten().flat_map(|f| &f.conversations).collect();
            let per_tool = tool_totals(&conversations, &plan, settings, meter);
            return finish(totals, &plan, per_tool, settings);
        }
        let (mut per_tool, left) = speculation.settle(&plan, settings, |i| !shapes[i].is_empty());
        let rows_of = |file: &MeasuredFile, tools: &[usize], meter: &Meter| {
            let conversations: Vec<&MeasuredConversation> = file.conversations.iter().collect();
            let row = |&t: &usize| {
                (t, tool_rows(&conversations, &plan.tools[t].0, plan.overall(), settings, meter))
            };
            tools.iter().map(row).collect::<Vec<_>>()
        };
        // A file held because it cannot be read again is swept from memory for the tools left.
        let (from_memory, left): (Vec<_>, Vec<_>) = left.into_iter().partition(|(i, _)| held[*i].is_some());
        for (i, tools) in &from_memory {
            let Some(file) = &held[*i] else { continue };
            for (t, part) in rows_of(file, tools, meter) {
                per_tool.add_tool(t, &part);
            }
        }
        if left.is_empty() {
            return finish(totals, &plan, per_tool, settings);
        }
        progress(Step::Again(left.len()));
        let second = again(found, left.iter().map(|(i, _)| *i));
        let read = |k: usize, file: MeasuredFile, meter: &Meter| {
            (rows_of(&file, &left[k].1, meter), file.path.clone(), shape(&file))
        };
        let walked = walk(read, &second, job, meter, &|| progress(Step::File));
        for ((rows, path, shape), (i, tools)) in walked.output.into_iter().zip(&left) {
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
        finish(totals, &plan, per_tool, settings)
    }
}

/// The requests of each conversation of `file`: what a second read of it must find again.
fn shape(file: &MeasuredFile) -> Vec<usize> {
    file.conversations.iter().map(|c| c.requests()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySpec;

    fn settings(tolerance: f64) -> SweepSettings {
        SweepSettings {
            thresholds: crate::analysis::sweep::parse_thresholds(crate::analysis::sweep::DEFAULT_THRESHOLDS)
                .unwrap(),
            policy: PolicySpec::parse("keep-turns:n=3").unwrap(),
            tolerance,
            top_tools: 5,
            cache: Default::default(),
        }
    }

    /// The cache-trap fixture copied into a temporary folder, found.
    fn fixture(dir: &Path) -> Discovered {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cache-trap/session.jsonl");
        std::fs::copy(fixture, dir.join("session.jsonl")).unwrap();
        input::discover(&[dir.to_owned()])
    }

    #[test]
    fn a_low_memory_sweep_gives_the_sweep_of_the_held_conversations() {
        let dir = tempfile::tempdir().unwrap();
        let found = fixture(dir.path());
        let meter = crate::tokens::testing::bytes_meter();
        let settings = settings(0.05);
        let steps = Mutex::new(Vec::new());
        let progress = |s: Step| crate::lock(&steps).push(s);
        let low = sweep(&found, &Job::default(), &meter, &settings, true, &progress);
        let held = sweep(&found, &Job::default(), &meter, &settings, false, &|_| ());
        assert_eq!((low.read, low.errors.len()), (1, 0), "{:?}", low.errors);
        assert!(!low.output.per_tool.is_empty(), "the fixture has a tool to sweep");
        assert_eq!(low.output, held.output);
        let walked =
            crate::pass::walk(|_, f: MeasuredFile, _: &Meter| f, &found, &Job::default(), &meter, &|| {});
        let conversations: Vec<&MeasuredConversation> =
            walked.output.iter().flat_map(|f| &f.conversations).collect();
        let whole = crate::analysis::sweep::sweep(&conversations, &settings, &meter);
        assert_eq!(low.output, whole);
        assert_eq!(crate::lock(&steps).first(), Some(&Step::File));
    }

    #[test]
    fn a_file_that_reads_differently_the_second_time_is_named_in_a_warning() {
        for changed in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let found = fixture(dir.path());
            let estimate = crate::tokens::Tokenizer::Estimate;
            let meter = Meter::new(estimate, estimate);
            let settings = settings(0.05);
            // Guessed under a tolerance of 100% (the largest threshold), the per-tool rows are
            // not the recommendation's, so the file is read again.
            let guessing = SweepSettings { tolerance: 1.0, ..settings.clone() };
            let pass = SweepPass::new(&found, &guessing, true);
            let parts = walk(|i, f, m: &Meter| pass.file(i, f, m), &found, &Job::default(), &meter, &|| {});
            let first = FirstRead { settings: settings.clone(), ..pass.finish(parts.output) };
            assert!(first.held[0].is_none());
            if changed {
                // A live session gets another request between the two reads.
                let path = dir.path().join("session.jsonl");
                let mut text = std::fs::read_to_string(&path).unwrap();
                text.push_str("{\"type\": \"request\"}\n");
                std::fs::write(&path, text).unwrap();
            }
            let mut warnings = Vec::new();
            let sweep = first.finish(&found, &Job::default(), &meter, &mut warnings, &|_| ());
            assert!(!sweep.per_tool.is_empty(), "the fixture has a recommendation and a tool to sweep");
            let named =
                warnings.iter().any(|w| w.contains("session.jsonl: read differently the second time"));
            assert_eq!(named, changed, "{warnings:?}");
        }
    }
}
