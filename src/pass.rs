//! One way to walk a corpus: a [`Pass`] sees each input file once, loaded and measured, and keeps
//! a part of it; then it finishes over the parts in input order. [`walk`] runs a pass over the
//! inputs found (in parallel, files handed out in input order, the parts put back in it), so every
//! analysis of the command line is also a library call with the same memory behaviour. The memory
//! policy of the analyses that need a second look at the files ([`holds`]): hold what they need of
//! small inputs, read large ones again with another pass over those files only ([`Discovered`]
//! narrowed by [`again`]).
//!
//! Nothing here prints: progress is a callback the caller supplies, called once per file.

mod recommend;
mod sweep;

pub use recommend::recommend;
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

    /// The part of file `index` (its place among the files found), measured with `meter`. A file
    /// that could not be read comes with no conversations; its warnings and error are taken out
    /// already (the walk reports them).
    fn file(&self, index: usize, file: MeasuredFile, meter: &Meter) -> Self::Part;

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
    let files = measure_each(found, job, meter, progress, |index, mut file| {
        let warnings: Vec<String> = file.warnings.drain(..).map(|w| prefix_path(&file.path, &w)).collect();
        let error = file.error.take();
        let input = InputFile {
            path: file.path.clone(),
            format: file.format.map(str::to_owned),
            conversations: file.conversations.len(),
            requests: file.conversations.iter().map(|c| c.requests()).sum(),
        };
        let tools = tool_names(&file);
        (warnings, error, input, tools, pass.file(index, file, meter))
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
