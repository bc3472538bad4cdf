//! One way to walk a corpus: a [`Pass`] sees each input file once, loaded and measured, and keeps
//! a part of it; then it finishes over the parts in input order. [`walk`] runs a pass over the
//! inputs found (in parallel, files handed out in input order, the parts put back in it), so every
//! analysis of the command line is also a library call with the same memory behaviour: [`replay`],
//! [`reconcile`], [`sweep`], [`recommend`], and through [`walk`] with a pass of their own,
//! `compare`, `cost`, `calibrate` and `report`. Nothing else walks the files: the loader under
//! [`walk`] ([`crate::pipeline::measure_each`]) is the only one.
//!
//! **The memory policy.** A walk holds the files being worked on (one per worker, plus the first
//! batch read while the tokenizer's tables are built) and the parts, never the corpus, unless a
//! pass keeps the files. A file's trace is dropped once it is measured, unless the pass asks to see
//! it ([`Pass::RECORDED`]). An analysis that needs a second look at the files asks [`holds`]:
//! inputs up to [`HOLD_BYTES`] (counting [`HOLD_BYTES_PER_FILE`] for each file) are held, larger
//! ones, or any with `--low-memory`, are walked again over the files that need it only
//! ([`Discovered`] narrowed by [`again`]); a second walk counts nothing (the meter's cache has every
//! text by then). A file that cannot be read again (standard input, a pipe) is held either way.
//!
//! **The strategies that remain**, each for a measured goal (docs/performance.md, "Memory"):
//! - *One walk, a small part per file*: replay to JSON or CSV (each file's part rendered and
//!   written in input order by the worker that replayed it), compare, cost, calibrate, reconcile.
//!   Memory does not grow with the requests: 77–98 MB for JSON and CSV on the generated 1 GB
//!   corpus, against 0.6–1 GB when the report was held.
//! - *One walk, the parts held to the end*: a replay rendered as a table or Markdown, one row per
//!   run, and a per-request one of inputs that [`holds`] allows: every line waits for the widths
//!   of every row.
//! - *Two walks*, for what needs the whole corpus before it can use a file: the per-request table
//!   of inputs not held (the first walk sizes the columns, the second writes the rows: 137 against
//!   326 MB held on the 1 GB corpus), the sweep's per-tool rows and recommend's per-tool step,
//!   which depend on the overall answer (the sweep guesses them as it reads: [`sweep`]; 62–65 MB
//!   against 164–166 MB held on 13 copies of the shared corpus). Within [`HOLD_BYTES`] holding is
//!   the faster (`sweep` of the shared corpus: 95.5 ms held, 111.5 ms read twice). Every figure is
//!   measured in docs/performance.md ("Memory").
//!
//! Nothing here prints: progress is a callback the caller supplies, called once per file.

mod recommend;
mod reconcile;
mod replay;
mod sweep;

pub use recommend::recommend;
pub use reconcile::{ReconcilePass, ReconciledFile, reconcile};
pub use replay::{ReplayPass, ReplayedFile, replay};
pub use sweep::{FirstRead, Step, SweepPart, SweepPass, sweep};

use std::collections::BTreeSet;

use crate::input::{self, Discovered};
use crate::pipeline::{Job, MeasuredFile, measure_each, prefix_path};
use crate::result::InputFile;
use crate::tokens::Meter;

/// An analysis as one walk over a corpus.
pub trait Pass: Sync {
    /// What the pass keeps of one file (small, unless the pass holds the file itself).
    type Part: Send;
    /// What the pass gives at the end.
    type Output;

    /// Whether the pass also sees each conversation as its log recorded it
    /// ([`MeasuredFile::recorded`]), beside its measure: `reconcile` does (the images a user
    /// message carried are not measured). Off by default: a file's trace is dropped once measured.
    const RECORDED: bool = false;

    /// The part of file `index` (its place among the files found), measured with `meter`. A file
    /// that could not be read comes with no conversations; its warnings and error are taken out
    /// already (the walk reports them).
    fn file(&self, index: usize, file: MeasuredFile, meter: &Meter) -> Self::Part;

    /// The warnings the pass met in the file whose part this is (a policy's), taken out of it: the
    /// walk lists them right after the file's own, with its path in front. None by default.
    fn warnings(&self, _part: &mut Self::Part) -> Vec<String> {
        Vec::new()
    }

    /// The result, from every file's part in input order.
    fn finish(self, parts: Vec<Self::Part>) -> Self::Output;
}

/// Any `Fn(index, file, meter) -> T` is a pass that keeps what it returns, in input order.
impl<T: Send, F: Fn(usize, MeasuredFile, &Meter) -> T + Sync> Pass for F {
    type Part = T;
    type Output = Vec<T>;

    fn file(&self, index: usize, file: MeasuredFile, meter: &Meter) -> T {
        self(index, file, meter)
    }

    fn finish(self, parts: Vec<T>) -> Vec<T> {
        parts
    }
}

/// What a walk gave: the pass's result and the problems met on the way.
#[derive(Debug)]
pub struct Walked<O> {
    /// The pass's result.
    pub output: O,
    /// How many files were read (a format recognised them and they held no error).
    pub read: usize,
    /// Files or paths that could not be read: the search's errors, then each file's, in order.
    pub errors: Vec<String>,
    /// Non-fatal problems, each prefixed with its file, in the same order.
    pub warnings: Vec<String>,
    /// Every file found, in input order, with what was read from it (the first read's).
    pub inputs: Vec<InputFile>,
    /// The names of the tools the inputs call (of their calls, and of their results: a log may
    /// record a result's tool without its call), to check the tool names a policy is given.
    pub tools: BTreeSet<String>,
}

/// Runs `pass` over the files `found`, each loaded and measured as `job` says with `meter` (the
/// job's thresholds and policies are not used), on the current rayon pool; `progress` is called
/// once per file, after the pass has its part. Memory holds the files being worked on and the
/// parts, not the corpus, unless the pass keeps the files.
pub fn walk<P: Pass>(
    pass: P,
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    progress: &(dyn Fn() + Sync),
) -> Walked<P::Output> {
    let files = measure_each(found, job, meter, P::RECORDED, progress, |index, mut file| {
        let mut warnings: Vec<String> =
            file.warnings.drain(..).map(|w| prefix_path(&file.path, &w)).collect();
        let error = file.error.take();
        let input = InputFile {
            path: file.path.clone(),
            format: file.format.map(str::to_owned),
            conversations: file.conversations.len(),
            requests: file.conversations.iter().map(|c| c.requests()).sum(),
            clearings: file.conversations.iter().map(|c| c.clearings()).sum(),
        };
        let tools = tool_names(&file);
        let mut part = pass.file(index, file, meter);
        warnings.extend(pass.warnings(&mut part).iter().map(|w| prefix_path(&input.path, w)));
        (warnings, error, input, tools, part)
    });
    let (warnings, errors) = found.problems();
    let mut walked = Walked {
        output: Vec::with_capacity(files.len()),
        read: 0,
        errors,
        warnings,
        inputs: Vec::with_capacity(files.len()),
        tools: BTreeSet::new(),
    };
    for (warnings, error, input, tools, part) in files {
        walked.read += usize::from(input.format.is_some());
        walked.warnings.extend(warnings);
        walked.errors.extend(error);
        walked.inputs.push(input);
        walked.tools.extend(tools);
        walked.output.push(part);
    }
    let Walked { output, read, errors, warnings, inputs, tools } = walked;
    Walked { output: pass.finish(output), read, errors, warnings, inputs, tools }
}

/// The names of the tools `file`'s conversations call: of their calls, and of their results.
fn tool_names(file: &MeasuredFile) -> BTreeSet<String> {
    use crate::measure::MeasuredItem;
    let items = file.conversations.iter().flat_map(|c| &c.items);
    items
        .filter_map(|item| match item {
            MeasuredItem::ToolCall { name, .. } => Some(name.clone()),
            MeasuredItem::ToolResult(_, result) => result.name.clone(),
            _ => None,
        })
        .collect()
}

/// The files of `found` at `places` (in that order), for a second pass over them alone.
pub fn again(found: &Discovered, places: impl IntoIterator<Item = usize>) -> Discovered {
    let mut narrowed = Discovered::default();
    for i in places {
        narrowed.files.push(found.files[i].clone());
        narrowed.explicit.push(found.explicit[i]);
    }
    narrowed
}

/// Inputs up to this many bytes are held in memory by a sweep (about 0.6 bytes per input byte), or
/// their rows by a per-request table (about 0.3); larger ones are read twice, which costs a second
/// import but no counting (the meter's cache has every text by then).
pub const HOLD_BYTES: u64 = 256 << 20;

/// What each file adds to its size in [`holds`]: a small file held costs far more than its bytes
/// (its items, their measures and strings). Measured: `sweep -j 2` of 60,000 copies of a 2 KB
/// session (17 items), 124 MB of input, held 566 MB in 3.1 s against 129 MB in 1.7 s not held, 7.3
/// KB a file; so they are no longer held, while the shared corpus (55 files, 19 MB) and its 13
/// copies (246 MB) still are.
pub const HOLD_BYTES_PER_FILE: u64 = 8 << 10;

/// Whether a pass holds what it needs of the inputs found rather than read them twice. An input
/// that cannot be read again ([`input::rereadable`]: standard input, a pipe) is held either way,
/// by the pass itself: read twice, it gave a per-request table no rows and a sweep other per-tool
/// savings.
pub fn holds(found: &Discovered, low_memory: bool) -> bool {
    !low_memory && found.files.iter().map(|f| input::size(f) + HOLD_BYTES_PER_FILE).sum::<u64>() <= HOLD_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the requests of each file and adds them up at the end.
    struct Requests;

    impl Pass for Requests {
        type Part = usize;
        type Output = (usize, Vec<usize>);

        fn file(&self, _: usize, file: MeasuredFile, _: &Meter) -> usize {
            file.conversations.iter().map(|c| c.requests()).sum()
        }

        fn finish(self, parts: Vec<usize>) -> (usize, Vec<usize>) {
            (parts.iter().sum(), parts)
        }
    }

    /// Notes every file it sees in a warning of its own; sees the conversations as recorded when
    /// `R`.
    struct Noting<const R: bool>;

    impl<const R: bool> Pass for Noting<R> {
        type Part = (usize, usize, Vec<String>);
        type Output = Vec<(usize, usize)>;
        const RECORDED: bool = R;

        fn file(&self, index: usize, file: MeasuredFile, _: &Meter) -> Self::Part {
            (file.conversations.len(), file.recorded.len(), vec![format!("seen as file {index}")])
        }

        fn warnings(&self, part: &mut Self::Part) -> Vec<String> {
            std::mem::take(&mut part.2)
        }

        fn finish(self, parts: Vec<Self::Part>) -> Vec<(usize, usize)> {
            parts.into_iter().map(|(measured, recorded, _)| (measured, recorded)).collect()
        }
    }

    #[test]
    fn a_pass_s_own_warnings_follow_its_file_s_and_the_trace_is_kept_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        // A result with no call (a load warning), a file no format reads (skipped, found in a
        // walk), and a clean file.
        let orphan =
            "{\"type\":\"tool_result\",\"call_id\":\"c9\",\"output\":\"x\"}\n{\"type\":\"request\"}\n";
        std::fs::write(dir.path().join("a.jsonl"), orphan).unwrap();
        std::fs::write(dir.path().join("b.txt"), "not a trace\n").unwrap();
        std::fs::write(dir.path().join("c.jsonl"), "{\"type\":\"user\",\"text\":\"hi\"}\n").unwrap();
        let files: Vec<_> = ["a.jsonl", "b.txt", "c.jsonl"].iter().map(|f| dir.path().join(f)).collect();
        // `b.txt` as a walk of its folder would find it: skipped, with a warning.
        let found = Discovered { files, explicit: vec![true, false, true], ..Default::default() };
        let meter = crate::tokens::testing::bytes_meter();
        let kept = walk(Noting::<true>, &found, &Job::default(), &meter, &|| {});
        let dropped = walk(Noting::<false>, &found, &Job::default(), &meter, &|| {});
        assert_eq!(kept.output, [(1, 1), (0, 0), (1, 1)]);
        assert_eq!(dropped.output, [(1, 0), (0, 0), (1, 0)]);
        let file = |i: usize| found.files[i].display().to_string();
        let expected = [
            format!("{}: conversation `main`: tool result for call `c9`", file(0)),
            format!("{}: seen as file 0", file(0)),
            format!("{}: ", file(1)),
            format!("{}: seen as file 1", file(1)),
            format!("{}: seen as file 2", file(2)),
        ];
        assert_eq!(kept.warnings.len(), expected.len(), "{:?}", kept.warnings);
        for (got, want) in kept.warnings.iter().zip(&expected) {
            assert!(got.starts_with(want.as_str()), "{got:?} is not {want:?}: {:?}", kept.warnings);
        }
    }

    #[test]
    fn a_pass_sees_every_file_once_and_finishes_over_the_parts_in_input_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (k, requests) in [2, 0, 1].iter().enumerate() {
            let mut text = String::from("{\"type\":\"user\",\"text\":\"hi\"}\n");
            text.push_str(&"{\"type\":\"request\"}\n".repeat(*requests));
            let path = dir.path().join(format!("{k}.jsonl"));
            std::fs::write(&path, text).unwrap();
            files.push(path);
        }
        files.push(dir.path().join("missing.jsonl"));
        let found = Discovered { explicit: vec![true; files.len()], files, ..Default::default() };
        let meter = crate::tokens::testing::bytes_meter();
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let progress = || {
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let walked = walk(Requests, &found, &Job::default(), &meter, &progress);
        assert_eq!(walked.output, (3, vec![2, 0, 1, 0]));
        assert_eq!((walked.read, walked.errors.len()), (3, 1), "{:?}", walked.errors);
        assert_eq!(seen.into_inner(), 4);
        let second = again(&found, [2, 0]);
        assert_eq!(second.files, [found.files[2].clone(), found.files[0].clone()]);
    }
}
