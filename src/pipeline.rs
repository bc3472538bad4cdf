//! The replay pipeline's pieces: what to replay and how ([`Job`]), loading one file found
//! ([`load_found`]), measuring a loaded trace ([`MeasuredFile`]), replaying measured conversations
//! under every policy at every threshold (`replay_measured`), and the one loader every corpus
//! pass stands on ([`measure_each`], which `pass::walk` calls).
//!
//! Files are processed in parallel (rayon), and so are the texts of a conversation and its replays
//! (see [`replay_trace_with_warnings`]); results are put back in input order, so the output is the
//! same bytes at any thread count. One of the workers builds the tokenizer's tables while the
//! others read the first files; no thread runs beyond `-j`. Only the files being worked on are in
//! memory. One bad file is reported with its reason and does not stop the others. This module
//! reads files only through [`crate::input`] and never prints.

use std::path::Path;

use rayon::prelude::*;

use crate::analysis::compare::PolicySource;
use crate::format::Format;
use crate::harness::{Harness, HarnessCompaction};
use crate::input::{self, Discovered};
use crate::measure::{MeasureOptions, MeasuredConversation};
use crate::model::{Conversation, Trace};
use crate::policy::PolicySpec;
use crate::replay::{replay, replay_summary};
use crate::result::Run;
use crate::tokens::Meter;
use crate::transform::Transform;

/// What to replay and how. The default replays nothing (no threshold, no policy) with no
/// transform, no overhead and detected formats: what a caller that only measures needs.
#[derive(Default)]
pub struct Job<'a> {
    /// Thresholds (bytes) to split at.
    pub thresholds: Vec<usize>,
    /// Policies to replay.
    pub policies: Vec<PolicySpec>,
    /// Re-split outputs that a tool already split.
    pub resplit: bool,
    /// Record-time transforms applied to outputs before the split.
    pub transforms: &'a [Box<dyn Transform>],
    /// Unrecorded tokens every request sends (see [`MeasureOptions::overhead`]).
    pub overhead: crate::model::Tokens,
    /// Read every file with this format instead of detecting.
    pub input_format: Option<&'static dyn Format>,
    /// Calibrate every conversation ([`crate::calibrate`]) when `overhead` is 0: what the command
    /// line does unless `--overhead` is given.
    pub calibrate: bool,
    /// Build each conversation's reuse index ([`MeasureOptions::reuse`]): for `compare`, `cost`
    /// and `report`, whose rows say how many pruned results the agent reused.
    pub reuse: bool,
    /// What every replay but the baseline does with the log's own compactions
    /// (`--harness-compaction`; [`HarnessCompaction::Simulated`] by default, which is `recorded`
    /// for a log whose agent's trigger is not known).
    pub harness_compaction: HarnessCompaction,
}

impl Job<'_> {
    /// `conversation` (of a file read by `format`) measured as the job says: with the fixed
    /// overhead, or calibrated.
    pub fn measure(&self, conversation: &Conversation, format: &str, meter: &Meter) -> MeasuredConversation {
        let opts = MeasureOptions {
            resplit: self.resplit,
            transforms: self.transforms,
            overhead: self.overhead,
            reuse: self.reuse,
        };
        let model = crate::calibrate::model_named(conversation);
        let counted = crate::calibrate::meter_for(meter, format, model);
        let mut m = MeasuredConversation::new(conversation, counted, &opts);
        if self.calibrate && self.overhead == 0 {
            let c = crate::calibrate::calibrate(&m, format, meter.choice());
            crate::calibrate::apply(&mut m, &c);
        }
        if meter.choice() == crate::tokens::Tokenizer::Provider {
            m.calibration.tokenizer = counted.report_tokenizer().encoding();
        }
        m.harness = Harness::resolve(self.harness_compaction, format);
        m
    }
}

/// Items that come in any order, each with its place (`0..n`, each once), added up in the order
/// of their places as soon as every earlier one has come: a parallel pass adds up in input order,
/// as floating-point sums need for the same bytes at any thread count, without keeping every item
/// to the end (only those that came before an earlier one, which are few when the places are
/// handed out in order).
pub struct InOrderFold<T, A, F> {
    state: std::sync::Mutex<(usize, std::collections::BTreeMap<usize, T>, A)>,
    add: F,
}

impl<T, A, F: Fn(&mut A, T)> InOrderFold<T, A, F> {
    /// Nothing added to `acc` yet; `add` adds one item.
    pub fn new(acc: A, add: F) -> InOrderFold<T, A, F> {
        InOrderFold { state: std::sync::Mutex::new((0, std::collections::BTreeMap::new(), acc)), add }
    }

    /// Puts the item of place `index`, adding it and every waiting one after it that can now be.
    pub fn put(&self, index: usize, item: T) {
        let mut state = crate::lock(&self.state);
        let (next, waiting, acc) = &mut *state;
        waiting.insert(index, item);
        while let Some(item) = waiting.remove(next) {
            (self.add)(acc, item);
            *next += 1;
        }
    }

    /// What was added up: every item, in the order of their places (any left waiting behind a
    /// place never put are added last, in their order).
    pub fn finish(self) -> A {
        let (_, waiting, mut acc) =
            self.state.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        for item in waiting.into_values() {
            (self.add)(&mut acc, item);
        }
        acc
    }
}

/// Replays one loaded trace.
pub fn replay_trace(path: &str, trace: &Trace, job: &Job<'_>, meter: &Meter) -> Vec<Run> {
    replay_trace_with_warnings(path, trace, job, meter).0
}

/// Replays one loaded trace, with the warnings its policies reported (each once, in order,
/// naming the conversation and the policy).
///
/// Conversations are measured one after the other (each in parallel inside), then every
/// conversation × threshold × policy is replayed in parallel and the runs are put back in that
/// nesting order, so the output does not depend on the thread count.
pub fn replay_trace_with_warnings(
    path: &str,
    trace: &Trace,
    job: &Job<'_>,
    meter: &Meter,
) -> (Vec<Run>, Vec<String>) {
    let measured: Vec<MeasuredConversation> =
        trace.conversations.iter().map(|c| job.measure(c, trace.format, meter)).collect();
    let sources: Vec<&dyn PolicySource> = job.policies.iter().map(|p| p as &dyn PolicySource).collect();
    let replaying =
        Replaying { path, format: trace.format, thresholds: &job.thresholds, sources: &sources, rows: true };
    replay_measured(&measured, &replaying, meter)
}

/// What [`replay_measured`] replays the conversations of one trace under, and how it labels the runs.
pub(crate) struct Replaying<'a> {
    /// The trace's path, as runs name it.
    pub path: &'a str,
    /// The trace's format.
    pub format: &'a str,
    /// Every threshold, in order.
    pub thresholds: &'a [usize],
    /// Every policy, in order (built in or a library user's).
    pub sources: &'a [&'a dyn PolicySource],
    /// Whether to keep the per-request rows ([`replay_summary`] when not).
    pub rows: bool,
}

/// Replays measured conversations at every threshold under every policy, with the warnings the
/// policies reported (each once, in order). Runs come in conversation × threshold × policy order.
pub(crate) fn replay_measured(
    measured: &[MeasuredConversation],
    r: &Replaying<'_>,
    meter: &Meter,
) -> (Vec<Run>, Vec<String>) {
    // Thresholds that split the same outputs give the same replay: each is replayed once
    // ([`MeasuredConversation::split_plan`]) and copied to the others with its own threshold.
    let mut unique: Vec<(&MeasuredConversation, usize, &dyn PolicySource)> = Vec::new();
    let mut slots: Vec<(usize, usize)> = Vec::new();
    let n = r.sources.len();
    for m in measured {
        let (split_of, firsts) = m.split_plan(r.thresholds);
        let base = unique.len();
        for &threshold in &firsts {
            unique.extend(r.sources.iter().map(|&p| (m, threshold, p)));
        }
        for (&split, &threshold) in split_of.iter().zip(r.thresholds) {
            slots.extend((0..n).map(|k| (base + split * n + k, threshold)));
        }
    }
    let replayed: Vec<(Run, Vec<String>)> = unique
        .into_par_iter()
        .map(|(measured, threshold, source)| {
            let mut policy = source.fresh();
            let mut run = if r.rows {
                replay(measured, threshold, &mut *policy, meter)
            } else {
                replay_summary(measured, threshold, &mut *policy, meter)
            };
            let warnings = policy
                .report()
                .warnings
                .into_iter()
                .map(|w| format!("conversation `{}`: policy `{}`: {w}", measured.id, source.label()))
                .collect();
            let s = &mut run.summary;
            s.trace = r.path.to_owned();
            s.format = r.format.to_owned();
            s.policy = source.label().to_owned();
            s.tokenizer = meter.choice().name().to_owned();
            s.decide_with = meter.decide_with().name().to_owned();
            (run, warnings)
        })
        .collect();
    let mut runs = Vec::with_capacity(slots.len());
    let mut warnings: Vec<String> = Vec::new();
    for (index, threshold) in slots {
        let (run, run_warnings) = &replayed[index];
        for w in run_warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
        let mut run = run.clone();
        run.summary.threshold = threshold;
        runs.push(run);
    }
    (runs, warnings)
}

/// At most this many broken call/result links are listed per file; the rest are counted.
pub const LINK_WARNINGS_PER_FILE: usize = 5;

/// Broken call/result links, as warnings naming the conversation: the first
/// [`LINK_WARNINGS_PER_FILE`] in file order, then one line counting the rest.
pub fn link_warnings(trace: &Trace) -> Vec<String> {
    let mut out = Vec::new();
    let (mut more, mut conversations) = (0, std::collections::BTreeSet::new());
    // A call of a tool the provider runs itself has no result item in the log.
    let hosted = |p: &crate::model::LinkProblem| {
        matches!(p, crate::model::LinkProblem::CallWithoutResult { name, .. }
            if trace.hosted_tools().contains(&name.as_str()))
    };
    for c in &trace.conversations {
        for p in c.link_problems().into_iter().filter(|p| !hosted(p)) {
            if out.len() < LINK_WARNINGS_PER_FILE {
                out.push(format!("conversation `{}`: {p}", c.id));
            } else {
                more += 1;
                conversations.insert(c.id.as_str());
            }
        }
    }
    if more > 0 {
        out.push(format!("{more} more broken call/result links in {} conversation(s)", conversations.len()));
    }
    out
}

/// What loading one file found by [`input::discover`] gave.
pub enum Loaded {
    /// The trace, with the warnings of the file (its own and broken call/result links).
    Trace(Trace, Vec<String>),
    /// A file a directory walk found that no format recognises: skipped with this warning.
    Skipped(String),
    /// The file could not be read: the error.
    Failed(String),
}

/// Loads one file. A file found in a directory walk that no format recognises (or that is empty,
/// or not text) is skipped with a warning; named explicitly, it is an error.
pub fn load_found(path: &Path, explicit: bool, format: Option<&'static dyn Format>) -> Loaded {
    match input::load(path, format) {
        Err(e) if !explicit && e.is_skippable() => Loaded::Skipped(e.skip_warning()),
        Err(e) => Loaded::Failed(e.to_string()),
        Ok(mut trace) => {
            let mut warnings = trace.warnings.clone();
            warnings.extend(trace.conversations.iter_mut().filter_map(|c| c.drop_implausible_usage()));
            warnings.extend(link_warnings(&trace));
            Loaded::Trace(trace, warnings)
        }
    }
}

/// The first files, up to about this many bytes, are read (in parallel) before any is measured,
/// while one worker builds the tokenizer's tables: reading them takes about as long as the
/// tables (tens of milliseconds), which would otherwise stall the first count.
const FIRST_BATCH_BYTES: u64 = 32 << 20;

/// ... and at most this many files: small files are held at several times their size (a 2 KB
/// session takes about 5 KB parsed), and 4,096 of them take longer to read than the tables to
/// build. Measured: `replay --format csv -j 2` of 60,000 copies of a 2 KB session, whose first
/// 32 MB are 16,000 files, held 120 MB at its peak.
const FIRST_BATCH_FILES: usize = 4096;

/// Loads every file found and hands each one (its path as shown, what loading gave) to `f`; the
/// results come back in input order. The first files ([`FIRST_BATCH_BYTES`]) are read in parallel
/// while one worker builds the meter's tokenizer tables ([`Meter::prepare`]; a worker that finishes
/// its side first helps with the other); every other file is loaded by the worker that then hands
/// it to `f` and drops it, so the workers never wait for each other between files and the memory
/// held is the first batch plus one file per worker.
///
/// On one thread nothing can be read while the tables are built, so the first batch is the first
/// file alone, read after the tables: every file is then measured right after it is read, while
/// it is still in the processor's caches (the shared corpus, one thread: 156.8 → 153.3 ms with
/// o200k, 30 interleaved rounds; 52.3 → 47.7 ms with `--tokenizer estimate`, 10 rounds; peak RSS
/// 41 → 38 MB).
fn each_file<T: Send>(
    found: &Discovered,
    format: Option<&'static dyn Format>,
    meter: &Meter,
    f: impl Fn(usize, String, Loaded) -> T + Sync,
) -> Vec<T> {
    let first_bytes = if rayon::current_num_threads() > 1 { FIRST_BATCH_BYTES } else { 0 };
    each_file_after(found, format, meter, first_bytes, f)
}

/// [`each_file`] with a first batch of `first_bytes`.
fn each_file_after<T: Send>(
    found: &Discovered,
    format: Option<&'static dyn Format>,
    meter: &Meter,
    first_bytes: u64,
    f: impl Fn(usize, String, Loaded) -> T + Sync,
) -> Vec<T> {
    // Nothing to read, nothing to count: the tables are not built (a run on an empty folder or
    // on paths that do not exist ends at once instead of after the 40 ms of o200k's tables).
    if found.files.is_empty() {
        return Vec::new();
    }
    // The first batch: at least one file; only its files (and the one after) are looked at.
    let (mut first, mut bytes) = (0, 0);
    while first < found.files.len() {
        let size = input::size(&found.files[first]);
        if first > 0 && (bytes + size > first_bytes || first >= FIRST_BATCH_FILES) {
            break;
        }
        bytes += size;
        first += 1;
    }
    let load = |i: usize| -> (usize, String, Loaded) {
        let path = &found.files[i];
        (i, path.display().to_string(), load_found(path, found.explicit[i], format))
    };
    let ((), head): ((), Vec<(usize, String, Loaded)>) =
        rayon::join(|| meter.prepare(), || (0..first).into_par_iter().map(load).collect());
    // The other files are taken one at a time, in input order, by whichever worker is free, so
    // they finish in about that order (a caller that writes per-file output in order keeps few
    // parts waiting); the results are put back in input order.
    let mut out: Vec<(usize, T)> = head
        .into_par_iter()
        .map(|(i, shown, loaded)| (i, f(i, shown, loaded)))
        .chain((first..found.files.len()).par_bridge().map(|i| {
            let (i, shown, loaded) = load(i);
            (i, f(i, shown, loaded))
        }))
        .collect();
    out.sort_unstable_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, t)| t).collect()
}

/// One input file, loaded and measured (for the analyses, which replay it many times).
#[derive(Debug, Default)]
pub struct MeasuredFile {
    /// The path as given or found.
    pub path: String,
    /// The format that read it, if any did.
    pub format: Option<&'static str>,
    /// Its conversations, each measured once.
    pub conversations: Vec<MeasuredConversation>,
    /// Non-fatal problems.
    pub warnings: Vec<String>,
    /// Why the file could not be read, if it could not.
    pub error: Option<String>,
    /// Its conversations as the log recorded them, beside their measures, for a pass that needs
    /// what measuring leaves out (`reconcile`: the images a user message carried); empty unless
    /// asked for ([`measure_each`]'s `recorded`), the trace being dropped once measured.
    pub recorded: Vec<Conversation>,
}

/// Loads and measures every file in parallel, returning them in input order; `done` is called once
/// per file as it finishes (for a progress bar). Files that cannot be read come with their error;
/// the job's thresholds and policies are not used. Holds every measured conversation: see
/// [`measure_each`] for the form that does not.
pub fn measure_files(
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    done: &(dyn Fn() + Sync),
) -> Vec<MeasuredFile> {
    measure_each(found, job, meter, false, done, |_, file| file)
}

/// [`measure_files`] that hands each file to `f` as soon as it is measured and keeps only what `f`
/// returns (in input order): an analysis whose result adds up conversation by conversation keeps
/// one small result per conversation instead of the measured corpus. `f` also gets the file's
/// place among the files found (files finish in any order). `done` is called after `f`. With
/// `recorded`, each file keeps its conversations as recorded ([`MeasuredFile::recorded`]).
pub fn measure_each<T: Send>(
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    recorded: bool,
    done: &(dyn Fn() + Sync),
    f: impl Fn(usize, MeasuredFile) -> T + Sync,
) -> Vec<T> {
    each_file(found, job.input_format, meter, |index, shown, loaded| {
        let file = match loaded {
            Loaded::Skipped(w) => MeasuredFile { warnings: vec![w], path: shown, ..Default::default() },
            Loaded::Failed(e) => MeasuredFile { path: shown, error: Some(e), ..Default::default() },
            Loaded::Trace(trace, warnings) => MeasuredFile {
                conversations: trace
                    .conversations
                    .iter()
                    .map(|c| job.measure(c, trace.format, meter))
                    .collect(),
                format: Some(trace.format),
                warnings,
                path: shown,
                error: None,
                recorded: if recorded { trace.conversations } else { Vec::new() },
            },
        };
        let out = f(index, file);
        done();
        out
    })
}

/// A warning of the file `path` as a report lists it: with the path in front, unless it already
/// names its file.
pub fn prefix_path(path: &str, warning: &str) -> String {
    if warning.starts_with(path) { warning.to_owned() } else { format!("{path}: {warning}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Conversation, Item, Output, ToolResult};

    fn orphan(id: &str) -> Item {
        Item::ToolResult(ToolResult {
            call_id: id.into(),
            name: None,
            output: Output::Raw { output: String::new() },
            is_error: false,
            images: 0,
        })
    }

    #[test]
    fn a_grid_of_thresholds_gives_each_threshold_its_own_replay_in_nesting_order() {
        let raw = |id: &str, n: usize| {
            Item::ToolResult(ToolResult {
                call_id: id.into(),
                name: None,
                output: Output::Raw { output: "x".repeat(n) },
                is_error: false,
                images: 0,
            })
        };
        let request = || Item::Request(Default::default());
        let mut c = Conversation::new("main");
        c.items = vec![raw("a", 30), request(), raw("b", 300), request(), raw("c", 3000), request()];
        let trace = Trace { format: "native", conversations: vec![c.clone()], warnings: vec![] };
        let policies: Vec<PolicySpec> = ["none", "keep-turns:n=1", "swe-agent:n=1"]
            .iter()
            .map(|p| PolicySpec::parse(p).unwrap())
            .collect();
        // 0 and 10 split the same outputs, as do 400 and 2000: each pair is replayed once.
        let thresholds = vec![0, 10, 400, 2000, 5000];
        let job = Job { thresholds: thresholds.clone(), policies, ..Job::default() };
        let meter = crate::tokens::testing::bytes_meter();
        let runs = replay_trace("t", &trace, &job, &meter);
        assert_eq!(runs.len(), thresholds.len() * job.policies.len());
        let measured = MeasuredConversation::new(&c, &meter, &MeasureOptions::default());
        for (k, run) in runs.iter().enumerate() {
            let (threshold, spec) = (thresholds[k / 3], &job.policies[k % 3]);
            let alone = replay(&measured, threshold, &mut *spec.build(), &meter);
            assert_eq!(run.summary.threshold, threshold);
            assert_eq!(run.summary.policy, spec.as_str());
            assert_eq!(run.rows, alone.rows, "{} at {threshold}", spec.as_str());
            assert_eq!(run.summary.total_input_tokens, alone.summary.total_input_tokens);
        }
    }

    #[test]
    fn files_come_back_whole_and_in_input_order_whatever_the_first_batch() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Vec::new();
        for (k, size) in [10, 300, 20, 20, 500, 5, 5].iter().enumerate() {
            let line = format!("{{\"type\":\"user\",\"text\":\"{}\"}}\n", "x".repeat(*size));
            let path = dir.path().join(format!("{k}.jsonl"));
            std::fs::write(&path, line).unwrap();
            files.push(path);
        }
        let found = Discovered { explicit: vec![true; files.len()], files, ..Default::default() };
        let meter = crate::tokens::testing::bytes_meter();
        let expected: Vec<String> = found.files.iter().map(|p| p.display().to_string()).collect();
        // First batches of one file, of several, and of every file.
        for budget in [1, 400, 1 << 20] {
            let seen = each_file_after(&found, None, &meter, budget, |_, shown, loaded| {
                assert!(matches!(loaded, Loaded::Trace(..)), "{shown}");
                shown
            });
            assert_eq!(seen, expected, "budget {budget}");
        }
    }

    /// Where tables were built: the rayon worker index, if any, and the thread.
    type Builds = std::sync::Arc<std::sync::Mutex<Vec<(Option<usize>, std::thread::ThreadId)>>>;

    /// Records on which thread its tables were built.
    struct Preparing(Builds);

    impl crate::tokens::Counter for Preparing {
        fn tokenizer(&self) -> crate::tokens::Tokenizer {
            crate::tokens::Tokenizer::O200k
        }
        fn count(&self, text: &str) -> crate::model::Tokens {
            text.len() as crate::model::Tokens
        }
        fn prepare(&self) {
            self.0.lock().unwrap().push((rayon::current_thread_index(), std::thread::current().id()));
        }
    }

    #[test]
    fn the_tables_are_built_by_a_worker_of_the_pool_so_one_job_is_one_thread() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<_> = (0..3)
            .map(|k| {
                let path = dir.path().join(format!("{k}.jsonl"));
                std::fs::write(&path, "{\"type\":\"user\",\"text\":\"hi\"}\n").unwrap();
                path
            })
            .collect();
        let found = Discovered { explicit: vec![true; files.len()], files, ..Default::default() };
        let prepared = Builds::default();
        let meter =
            Meter::with_counters(Box::new(Preparing(prepared.clone())), Box::new(crate::tokens::Estimate));
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let handed: Vec<std::thread::ThreadId> =
            pool.install(|| each_file(&found, None, &meter, |_, _, _| std::thread::current().id()));
        let prepared = prepared.lock().unwrap();
        assert_eq!(prepared.len(), 1, "the report counter's tables, once");
        let (index, thread) = prepared[0];
        assert_eq!(index, Some(0), "built on the pool's only worker, not on a thread of its own");
        assert!(handed.iter().all(|t| *t == thread), "every file handled on that same thread");
    }

    #[test]
    fn no_file_builds_no_tables() {
        let found = Discovered { errors: vec!["missing: not found".into()], ..Default::default() };
        let prepared = Builds::default();
        let meter =
            Meter::with_counters(Box::new(Preparing(prepared.clone())), Box::new(crate::tokens::Estimate));
        let handed: Vec<usize> = each_file(&found, None, &meter, |i, _, _| i);
        assert!(handed.is_empty());
        assert!(prepared.lock().unwrap().is_empty(), "tables built for no file");
    }

    #[test]
    fn items_put_in_any_order_are_added_in_the_order_of_their_places() {
        let fold = InOrderFold::new(Vec::new(), |acc: &mut Vec<usize>, item: usize| acc.push(item));
        for index in [3, 0, 2, 5, 1, 4] {
            fold.put(index, index * 10);
        }
        assert_eq!(fold.finish(), [0, 10, 20, 30, 40, 50]);
        // Puts from many threads at once, in whatever order they run.
        let fold = InOrderFold::new(Vec::new(), |acc: &mut Vec<usize>, item: usize| acc.push(item));
        (0..1000).into_par_iter().rev().for_each(|i| fold.put(i, i));
        assert_eq!(fold.finish(), (0..1000).collect::<Vec<_>>());
        // A place never put leaves the later ones waiting; they are added at the end.
        let fold = InOrderFold::new(Vec::new(), |acc: &mut Vec<usize>, item: usize| acc.push(item));
        fold.put(2, 2);
        fold.put(0, 0);
        assert_eq!(fold.finish(), [0, 2]);
    }

    #[test]
    fn link_warnings_list_the_first_few_and_count_the_rest() {
        let mut a = Conversation::new("a");
        a.items = (0..4).map(|i| orphan(&format!("x{i}"))).collect();
        let mut b = Conversation::new("b");
        b.items = (0..3).map(|i| orphan(&format!("y{i}"))).collect();
        let trace = Trace { format: "native", conversations: vec![a, b], warnings: vec![] };
        let w = link_warnings(&trace);
        assert_eq!(w.len(), LINK_WARNINGS_PER_FILE + 1);
        assert_eq!(
            w[4],
            "conversation `b`: tool result for call `y0` (after request 0) has no matching call"
        );
        assert_eq!(w[5], "2 more broken call/result links in 1 conversation(s)");
    }

    #[test]
    fn a_hosted_web_search_without_a_result_is_no_broken_link_in_codex_only() {
        use crate::model::{HOSTED_WEB_SEARCH, Item};
        let search = |id: &str, tool: &str| Item::ToolCall {
            call_id: id.into(),
            name: tool.into(),
            arguments: "{}".into(),
        };
        let mut c = Conversation::new("main");
        c.items = vec![search("ws_1", HOSTED_WEB_SEARCH)];
        let codex = Trace { format: "codex", conversations: vec![c.clone()], warnings: vec![] };
        assert_eq!(link_warnings(&codex), Vec::<String>::new());
        // Another unanswered call in the same trace is still named.
        c.items.push(search("call_2", "shell"));
        let codex = Trace { conversations: vec![c.clone()], ..codex };
        assert_eq!(link_warnings(&codex).len(), 1, "{:?}", link_warnings(&codex));
        // In another format a tool of that name is the agent's own: its call owes a result.
        let chat = Trace { format: "openai-chat", ..codex };
        let w = link_warnings(&chat);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w.iter().any(|w| w.ends_with("call `ws_1` (web_search, after request 0) has no result")),
            "{w:?}"
        );
    }
}
