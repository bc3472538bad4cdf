//! The application layer: runs a resolved [`Config`], prints warnings and errors to stderr once,
//! and decides the exit code. The only place (with `main.rs`) that prints.
//!
//! Exit codes: 0 when every input was read, 1 when some input failed (the others are still
//! reported; when no file could be read at all, no output file or report is written: see
//! `writes`), 2 for usage errors (bad flags, policy specs or output paths).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use rayon::prelude::*;

use crate::analysis::compare::PolicySource;
use crate::analysis::sweep::Speculation;
use crate::config::{
    CalibrateConfig, CompareConfig, Config, CountConfig, InputConfig, ReconcileConfig, ReplayConfig,
    ReportConfig, SourceConfig, SplitConfig, SweepConfig, UsageError,
};
use crate::export::Output;
use crate::input::{self, Discovered};
use crate::measure::MeasuredConversation;
use crate::pipeline::{
    InOrderFold, Job, MeasuredFile, measure_each, prefix_path, reconcile_files, replay_files,
    replay_files_each, replay_files_without_rows,
};
use crate::policy::registry;
use crate::result::{ReplayReport, RequestRow, RunSummary};
use crate::split::ToolOutput;
use crate::tokens::{Meter, Tokenizer, estimate};
use crate::{analysis, export};

/// Every input was read.
pub const EXIT_OK: u8 = 0;
/// Some input failed; the others were reported.
pub const EXIT_SOME_FAILED: u8 = 1;
/// The program was called wrongly.
pub const EXIT_USAGE: u8 = 2;

/// Runs a command.
pub fn run(config: Config) -> Result<ExitCode> {
    match config {
        Config::Replay(c) => replay(c),
        Config::Split(c) => split(c),
        Config::Count(c) => count(c),
        Config::Policies => {
            stdout(&policies_text())?;
            Ok(ExitCode::from(EXIT_OK))
        }
        Config::Reconcile(c) => reconcile(c),
        Config::Sweep(c) => sweep(c),
        Config::Compare(c) => compare(c, false),
        Config::Cost(c) => compare(c, true),
        Config::Calibrate(c) => calibrate(c),
        Config::Report(c) => report(c),
    }
}

/// Every input of an analysis, loaded and measured once, with the problems met: what the analysis
/// kept of each file ([`load_each`]).
pub struct Loaded<T> {
    /// The meter the texts were measured with (replays reuse its cache).
    pub meter: Meter,
    /// Files in input order.
    pub files: Vec<T>,
    /// How many of them were read (a format recognised them and they held no error).
    pub read: usize,
    /// Files or paths that could not be read.
    pub errors: Vec<String>,
    /// Non-fatal problems, prefixed with their file.
    pub warnings: Vec<String>,
}

impl<T> Loaded<T> {
    /// Prints warnings and errors to stderr and returns the exit code they imply.
    pub fn finish(&self) -> ExitCode {
        print_problems(&self.warnings, &self.errors)
    }
}

/// Loads and measures the inputs found (with a progress bar on stderr when it is a terminal) and
/// hands each measured file (its warnings and error already taken out) to `f` with the meter,
/// keeping only what `f` returns: memory holds the files being worked on and those results, not
/// the corpus, unless `f` keeps the file.
pub fn load_each<T: Send>(
    input: &InputConfig,
    found: &Discovered,
    f: impl Fn(MeasuredFile, &Meter) -> T + Sync,
) -> Result<Loaded<T>> {
    let meter = meter(input)?;
    Ok(load_found_each(input, found, meter, "measuring", |_, file, meter| f(file, meter)))
}

/// The inputs named on the command line, found ([`input::discover`]), or the exit code of a run
/// that has nothing to read because every path named failed (a mistyped path, the default
/// `traces/` away from the repository, an agent's folder that does not exist): the errors are
/// printed and nothing is written, so an existing output or report is left as it is instead of
/// being replaced by an empty one (decision). A folder that exists but holds no session is not a
/// failure: its report is an empty one, as before.
fn discover_or_stop(source: &SourceConfig) -> std::result::Result<Discovered, ExitCode> {
    let found = input::discover_following(&source.paths, source.follow);
    if !found.files.is_empty() || found.errors.is_empty() {
        return Ok(found);
    }
    let mut errors = found.errors;
    errors.push(NOTHING_READ.to_owned());
    Err(print_problems(&found.warnings, &errors))
}

/// The last error of a run with no input to read (`discover_or_stop`, `writes`).
pub const NOTHING_READ: &str = "no input could be read: nothing written";

/// Whether a run that read `read` files and met `errors` writes its report to `output` (`None`:
/// the report directory). Not when some input failed and no file could be read, and the report
/// would replace a file: it would hold nothing but the errors, which are printed anyway, and would
/// replace the last run's report, as [`discover_or_stop`] avoids for paths that do not exist.
/// `errors` then ends with [`NOTHING_READ`]. Standard output gets its report as always, and so does
/// a run that met no error (files skipped in a walk, a folder with no session: an empty report).
fn writes(output: Option<&Output>, read: usize, errors: &mut Vec<String>) -> bool {
    if read == 0 && !errors.is_empty() && !matches!(output, Some(Output::Stdout)) {
        errors.push(NOTHING_READ.to_owned());
        return false;
    }
    true
}

/// [`load_each`] of files already found, with `meter` (whose count cache a second read reuses);
/// `f` also gets the file's place among them.
fn load_found_each<T: Send>(
    input: &InputConfig,
    found: &Discovered,
    meter: Meter,
    message: &'static str,
    f: impl Fn(usize, MeasuredFile, &Meter) -> T + Sync,
) -> Loaded<T> {
    let job = input.job();
    let bar = progress_bar(found.files.len(), message);
    let files = measure_each(found, &job, &meter, &|| bar.inc(1), |index, mut file| {
        let warnings: Vec<String> = file.warnings.drain(..).map(|w| prefix_path(&file.path, &w)).collect();
        let error = file.error.take();
        let read = file.format.is_some();
        (warnings, error, read, f(index, file, &meter))
    });
    bar.finish_and_clear();
    let (warnings, errors) = found.problems();
    let mut loaded = Loaded { files: Vec::new(), read: 0, errors, warnings, meter };
    for (warnings, error, read, kept) in files {
        loaded.read += usize::from(read);
        loaded.warnings.extend(warnings);
        loaded.errors.extend(error);
        loaded.files.push(kept);
    }
    loaded
}

/// A progress bar over `files` files on stderr when it is a terminal; hidden otherwise.
fn progress_bar(files: usize, message: &'static str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(files as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} files ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message);
    bar
}

/// Runs `f` on `jobs` threads when set, else on rayon's default pool.
fn with_jobs<T: Send>(jobs: Option<usize>, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    match jobs {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .with_context(|| format!("cannot start {n} worker threads (-j {n})"))?
            .install(f),
        None => f(),
    }
}

/// `input`'s meter, seeded with the counts its `--count-cache` file keeps ([`seeded`]).
fn meter(input: &InputConfig) -> Result<Meter> {
    seeded(input.meter(), input.source.count_cache.as_deref(), &input.source.paths)
}

/// `meter` seeded with the counts kept in `cache` (`--count-cache`). The file is checked first as
/// an output is ([`Output::check`]: in a folder that exists, neither an input nor inside one, where
/// a walk would read it as a trace); a count cache that cannot be used (damaged, another version,
/// empty) is named in a warning, everything is counted afresh and the file is rewritten at the end
/// ([`keep_counts`]). A file that is not a count cache at all is refused: it is never replaced.
fn seeded(mut meter: Meter, cache: Option<&Path>, inputs: &[std::path::PathBuf]) -> Result<Meter> {
    let Some(path) = cache else { return Ok(meter) };
    let refuse = |why: String| -> anyhow::Error { UsageError(format!("--count-cache: {why}")).into() };
    if path.is_dir() {
        return Err(refuse(format!("{} is a directory; give a file name", path.display())));
    }
    // A device or a pipe holds no counts to keep, and reading one may never end (`/dev/zero`).
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(refuse(format!(
            "{} is not a regular file (a device or a pipe); give a file name",
            path.display()
        )));
    }
    Output::File(path.to_owned()).check(inputs).map_err(|e| refuse(format!("{e:#}")))?;
    match input::read_counts(path) {
        Ok(Some(kept)) => {
            meter.seed(&kept);
        }
        Ok(None) => {}
        Err(e) if e.foreign => {
            return Err(refuse(format!("{}; it is left as it is: name a new file or a count cache", e.why)));
        }
        Err(e) => say(format_args!("warning: {}; counting afresh", e.why)),
    }
    Ok(meter)
}

/// Adds `meter`'s counts to the `cache` file, read again first so that counts another run wrote
/// meanwhile stay (a count cache that cannot be used is replaced, a file that is not one is left
/// alone with a warning); the file is left alone when nothing is
/// new, and not created when there is nothing to keep (a run that counts with the estimate only).
/// A failure is only a warning: the output is written already, and right.
fn keep_counts(cache: Option<&Path>, meter: &mut Meter) {
    let Some(path) = cache else { return };
    let (mut kept, usable) = match input::read_counts(path) {
        Ok(Some(kept)) => (kept, true),
        Err(e) if e.foreign => {
            say(format_args!("warning: counts not kept: {}; it is left as it is", e.why));
            return;
        }
        Ok(None) | Err(_) => (crate::counts::StoredCounts::default(), false),
    };
    let before = kept.len();
    meter.keep(&mut kept);
    if kept.len() == before && (usable || kept.is_empty()) {
        return;
    }
    if let Err(e) = export::write_atomically(path, &kept.encode()) {
        say(format_args!("warning: counts not kept: {e:#}"));
    }
}

/// Checks the output file before anything is read ([`Output::check`]: its folder exists, it is no
/// input given), and that it is not the `--count-cache` file, which the report would replace.
fn check_output(output: &Output, source: &SourceConfig) -> Result<()> {
    output.check(&source.paths).map_err(|e| UsageError(format!("{e:#}")))?;
    if let (Output::File(out), Some(cache)) = (output, source.count_cache.as_deref()) {
        if export::resolve(out).is_ok_and(|o| export::resolve(cache).is_ok_and(|c| o == c)) {
            return Err(UsageError(format!(
                "refusing to write {}: it is the --count-cache file; choose another output path",
                out.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Refuses, once the inputs are found, an output or a `--count-cache` file that is one of the
/// files found (exit 2, nothing read or written yet): reached through a symbolic link inside a
/// folder read, or the file standard input is redirected from, it is no path given, so the checks
/// made before the walk ([`check_output`], [`seeded`]) cannot see it.
fn check_found(output: &Output, source: &SourceConfig, found: &Discovered) -> Result<()> {
    output.check_found(&found.files).map_err(|e| UsageError(format!("{e:#}")))?;
    check_cache_found(source, found)
}

/// [`check_found`] of the `--count-cache` file.
fn check_cache_found(source: &SourceConfig, found: &Discovered) -> Result<()> {
    let Some(cache) = source.count_cache.as_deref() else { return Ok(()) };
    let cache = Output::File(cache.to_owned());
    cache.check_found(&found.files).map_err(|e| UsageError(format!("--count-cache: {e:#}")).into())
}

/// Inputs up to this many bytes are held in memory by a sweep (about 0.6 bytes per input byte), or
/// their rows by a per-request table (about 0.3); larger ones are read twice ([`finish_sweep`],
/// [`replay_twice`]), which costs a second import but no counting.
const HOLD_BYTES: u64 = 256 << 20;

/// What each file adds to its size in [`holds`]: a small file held costs far more than its bytes
/// (its items, their measures and strings). Measured: `sweep -j 2` of 60,000 copies of a 2 KB
/// session (17 items), 124 MB of input, held 566 MB in 3.1 s against 129 MB in 1.7 s not held, 7.3
/// KB a file; so they are no longer held, while the shared corpus (55 files, 19 MB) and its 13
/// copies (246 MB) still are.
const HOLD_BYTES_PER_FILE: u64 = 8 << 10;

/// Whether a command holds what it needs of the inputs found rather than read them twice. An input
/// that cannot be read again ([`input::rereadable`]: standard input, a pipe) is held either way,
/// by itself ([`SweepPart::of`], [`timeline_first_pass`]): read twice, it gave a per-request table
/// no rows and a sweep other per-tool savings.
fn holds(found: &Discovered, low_memory: bool) -> bool {
    !low_memory && found.files.iter().map(|f| input::size(f) + HOLD_BYTES_PER_FILE).sum::<u64>() <= HOLD_BYTES
}

fn sweep(c: SweepConfig) -> Result<ExitCode> {
    check_output(&c.output, &c.input.source)?;
    let found = match discover_or_stop(&c.input.source) {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    check_found(&c.output, &c.input.source, &found)?;
    with_jobs(c.input.source.jobs, || {
        let speculation = Speculation::new(found.files.len());
        let keep = SweepKeep::of(&found, c.low_memory, &speculation);
        let sum = std::sync::Mutex::default();
        let Loaded { meter, files, read, mut errors, mut warnings } =
            load_found_each(&c.input, &found, meter(&c.input)?, "measuring", |index, file, meter| {
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
enum SweepKeep<'a> {
    /// The measured file itself: the inputs are small enough to hold ([`holds`]).
    File,
    /// Its per-tool rows under the plan of the files read before it; what the final plan needs
    /// beyond them is read again ([`Speculation`]).
    Rows(&'a Speculation),
    /// Both: its rows as [`SweepKeep::Rows`], and the file, for what the final plan needs beyond
    /// them, since it cannot be read again ([`input::rereadable`]).
    RowsAndFile(&'a Speculation),
}

impl<'a> SweepKeep<'a> {
    fn of(found: &Discovered, low_memory: bool, speculation: &'a Speculation) -> SweepKeep<'a> {
        if holds(found, low_memory) { SweepKeep::File } else { SweepKeep::Rows(speculation) }
    }

    /// What is kept of `file`: the file too when it is not held but cannot be read again.
    fn of_file(self, file: &Path) -> SweepKeep<'a> {
        match self {
            SweepKeep::Rows(speculation) if !input::rereadable(file) => SweepKeep::RowsAndFile(speculation),
            keep => keep,
        }
    }
}

/// One file's share of a sweep's first pass: the requests of each of its conversations (to notice
/// a file that reads differently the second time) and, when the inputs are held, the file itself
/// for the second pass. Its totals go straight into the sweep's sum ([`SweepPart::of`]).
struct SweepPart {
    shape: Vec<usize>,
    held: Option<MeasuredFile>,
}

impl SweepPart {
    /// File `index`'s part, its totals added to `sum` and its per-tool rows offered to the
    /// speculation when the file is not kept. The totals are integer sums and maxima, so adding
    /// them as the files come gives the same sum in any order; keeping them per file until the end
    /// held about 2.7 KB a file (`sweep --low-memory -j 1` of 20,000 and 60,000 copies of a 2 KB
    /// session: 62 and 170 MB).
    fn of(
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
struct FirstPass {
    sum: std::sync::Mutex<analysis::sweep::SweepTotals>,
    parts: Vec<SweepPart>,
    speculation: Speculation,
}

/// Ends a sweep from its first pass: plans from the totals, then sweeps the dominant tools, which
/// depend on the overall recommendation, over the held files or, when they were not held, takes
/// the per-tool rows the files were swept for as they were read (`speculation`) and reads again
/// only the files some planned tool was not swept over, for those tools (holding one file per
/// worker; it counts nothing, the meter's cache has every text), except those held because they
/// cannot be read again, swept from memory. A file that reads differently the second time (a live
/// session being written) is named in a warning. The meter comes back with the sweep.
fn finish_sweep(
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
        let again = Discovered {
            files: left.iter().map(|(i, _)| found.files[*i].clone()).collect(),
            explicit: left.iter().map(|(i, _)| found.explicit[*i]).collect(),
            ..Discovered::default()
        };
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

fn compare(c: CompareConfig, cost: bool) -> Result<ExitCode> {
    check_output(&c.output, &c.input.source)?;
    let found = match discover_or_stop(&c.input.source) {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    check_found(&c.output, &c.input.source, &found)?;
    with_jobs(c.input.source.jobs, || {
        // Each file is replayed as soon as it is measured and then dropped, and its conversations
        // are added up as soon as the files before it are: memory holds the comparison (its prune
        // events among it), not the corpus nor a result per conversation.
        let policies = analysis::compare::with_baseline(&c.settings.policies);
        let sources = analysis::compare::sources(&policies);
        let sum = InOrderFold::new(analysis::compare::Sum::new(&sources), add_replayed);
        let mut loaded =
            load_found_each(&c.input, &found, meter(&c.input)?, "measuring", |index, file, meter| {
                sum.put(index, replay_file(&file, &sources, &c.settings, meter, false));
            });
        let result = sum.finish().finish(&c.settings);
        if writes(Some(&c.output), loaded.read, &mut loaded.errors) {
            if cost {
                export::analysis::write_cost(&c.output, c.format, &result)?;
            } else {
                let sections = || export::analysis::compare_sections(&result);
                export::analysis::write(&c.output, c.format, sections, &result)?;
            }
        }
        keep_counts(c.input.source.count_cache.as_deref(), &mut loaded.meter);
        Ok(loaded.finish())
    })
}

fn calibrate(c: CalibrateConfig) -> Result<ExitCode> {
    check_output(&c.output, &c.input.source)?;
    let found = match discover_or_stop(&c.input.source) {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    check_found(&c.output, &c.input.source, &found)?;
    with_jobs(c.input.source.jobs, || {
        // Each file's tool outputs are estimated as soon as it is measured, and the file dropped:
        // memory holds one small sample per tool output, not the corpus.
        let estimators = analysis::calibration::default_estimators();
        let mut loaded = load_each(&c.input, &found, |file, _| {
            let conversations: Vec<&MeasuredConversation> = file.conversations.iter().collect();
            analysis::calibration::samples(&conversations, &estimators)
        })?;
        let samples: Vec<_> = std::mem::take(&mut loaded.files).into_iter().flatten().collect();
        let result =
            analysis::calibration::calibrate_samples(&samples, &estimators, c.input.source.tokenizer.name());
        if writes(Some(&c.output), loaded.read, &mut loaded.errors) {
            let sections = || export::analysis::calibration_sections(&result);
            export::analysis::write(&c.output, c.format, sections, &result)?;
        }
        keep_counts(c.input.source.count_cache.as_deref(), &mut loaded.meter);
        Ok(loaded.finish())
    })
}

/// Refuses a report directory that overlaps an input path (`-`: what standard input reads), before
/// anything is read or written: a refused report leaves nothing behind among the inputs.
fn check_report_dir(out: &std::path::Path, inputs: &[std::path::PathBuf]) -> Result<()> {
    let out = export::resolve(out)?;
    for input in inputs {
        let given = input::given(input);
        if given.canonicalize().is_ok_and(|i| out == i || out.starts_with(&i) || i.starts_with(&out)) {
            return Err(UsageError(format!(
                "refusing to write the report into {}: it overlaps the input {}; choose another --out",
                out.display(),
                given.display()
            ))
            .into());
        }
    }
    Ok(())
}

/// Refuses a report directory that holds files but no sign of a previous report (its
/// `report.json`, or a temporary file a killed run left): a report replaces files of its names
/// and removes `charts/timeline-*`, which in a folder of the user's own files would destroy them.
fn check_report_owned(out: &std::path::Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(out) else { return Ok(()) };
    let names: Vec<std::ffi::OsString> = entries.flatten().map(|e| e.file_name()).collect();
    let ours = |n: &std::ffi::OsString| {
        n.to_str().is_some_and(|n| n == crate::report::REPORT_JSON || n.starts_with(export::TEMP_PREFIX))
    };
    // An empty `charts/` is what a run that read nothing leaves when it cannot remove it.
    let empty_charts = |n: &std::ffi::OsString| {
        n == crate::chart::DIR && std::fs::read_dir(out.join(n)).is_ok_and(|mut d| d.next().is_none())
    };
    if names.iter().all(empty_charts) || names.iter().any(ours) {
        return Ok(());
    }
    Err(UsageError(format!(
        "refusing to write the report into {}: it holds files but no previous report ({} not found); \
         choose an empty or new --out, or pass --force to write there anyway",
        out.display(),
        crate::report::REPORT_JSON
    ))
    .into())
}

/// Refuses, once the inputs are found, a report directory that holds one of them (a file reached
/// through a symbolic link inside a folder read, or the one standard input is redirected from:
/// [`check_report_dir`] sees only the paths given), and a `--count-cache` file that is one of
/// them ([`check_found`]). A directory not created yet holds nothing; one that exists costs a
/// `canonicalize` per file found.
fn check_report_found(out: &std::path::Path, source: &SourceConfig, found: &Discovered) -> Result<()> {
    if let Ok(dir) = out.canonicalize() {
        for file in &found.files {
            if let Some(inside) = file.canonicalize().ok().filter(|f| f.starts_with(&dir)) {
                return Err(UsageError(format!(
                    "refusing to write the report into {}: it holds {}, an input (found as {}); choose \
                     another --out",
                    dir.display(),
                    inside.display(),
                    file.display()
                ))
                .into());
            }
        }
    }
    check_cache_found(source, found)
}

/// Creates the report directory (and `charts/` in it) before any work, once the inputs are found;
/// returns the folders it created, outermost first ([`remove_created`]).
fn create_report_dir(out: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
    let charts = out.join(crate::chart::DIR);
    let mut created = Vec::new();
    let mut dir = Some(charts.as_path());
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        created.push(d.to_owned());
        dir = d.parent();
    }
    created.reverse();
    std::fs::create_dir_all(&charts).map_err(|e| {
        // The folder exists: what stands in the way is its `charts`, not the folder.
        if out.is_dir() && charts.exists() {
            return UsageError(format!(
                "cannot create {}: a file of that name is in the way (move it away, or choose another --out)",
                charts.display()
            ));
        }
        UsageError(format!(
            "cannot create the report directory {}: {}",
            out.display(),
            input::describe_io(&e)
        ))
    })?;
    Ok(created)
}

/// Removes the folders [`create_report_dir`] created for a report that is not written, innermost
/// first, each only while it is empty (best effort: a folder something else wrote into meanwhile
/// is left, and so are those around it).
fn remove_created(created: &[std::path::PathBuf]) {
    for d in created.iter().rev() {
        if std::fs::remove_dir(d).is_err() {
            return;
        }
    }
}

fn report(c: ReportConfig) -> Result<ExitCode> {
    let meter_with_kept_counts = meter(&c.input)?;
    check_report_dir(&c.out, &c.input.source.paths)?;
    let found = match discover_or_stop(&c.input.source) {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    check_report_found(&c.out, &c.input.source, &found)?;
    if !c.force {
        check_report_owned(&c.out)?;
    }
    let created = create_report_dir(&c.out)?;
    with_jobs(c.input.source.jobs, || {
        // Each file is compared, calibrated and swept as soon as it is measured, its comparison
        // added up as soon as the files before it are (`InOrderFold`). Its runs' rows are
        // written to timeline.csv at once (in input order, through a temporary file renamed into
        // place with the other files), and kept only for the conversations that may get a chart
        // (`TimelineChoice`); the file itself is kept for the sweep's per-tool pass only when the
        // inputs are small enough to hold (see `finish_sweep`). Nothing in the directory is
        // replaced before every file has been read, and nothing at all when none could be
        // (`writes`).
        export::remove_leftovers(&c.out, &[crate::chart::DIR]);
        let mut staged = export::staged::Staged::create(&c.out, &[crate::chart::DIR])?;
        let mut timeline_file = staged.file(crate::report::TIMELINE_CSV)?;
        timeline_file.write_all(&export::columns::timeline_csv_header()?)?;
        let timeline_csv = export::InOrder::new(timeline_file);
        let speculation = Speculation::new(found.files.len());
        let keep = SweepKeep::of(&found, c.low_memory, &speculation);
        let sum = std::sync::Mutex::default();
        let policies = analysis::compare::with_baseline(&c.compare.policies);
        let sources = analysis::compare::sources(&policies);
        let compared = InOrderFold::new(analysis::compare::Sum::new(&sources), add_replayed);
        let estimators = analysis::calibration::default_estimators();
        let choice = crate::report::TimelineChoice::new(c.timelines);
        let Loaded { meter, files, read, mut errors, mut warnings } =
            load_found_each(&c.input, &found, meter_with_kept_counts, "measuring", |index, file, meter| {
                let shown = crate::report::InputFile {
                    path: file.path.clone(),
                    format: file.format.map(str::to_owned),
                    conversations: file.conversations.len(),
                };
                let mut replayed = replay_file(&file, &sources, &c.compare, meter, true);
                let runs: Vec<_> = replayed.iter_mut().map(|r| r.take_runs()).collect();
                let rendered = put_timeline_lines(&timeline_csv, index, runs.iter().flat_map(|c| &c.runs));
                for (k, conversation) in runs.into_iter().enumerate() {
                    choice.offer((index, k), conversation);
                }
                let conversations: Vec<&MeasuredConversation> = file.conversations.iter().collect();
                let samples = analysis::calibration::samples(&conversations, &estimators);
                let fidelity = Fidelity::of(&conversations);
                compared.put(index, replayed);
                let keep = keep.of_file(&found.files[index]);
                (shown, rendered, samples, fidelity, SweepPart::of(index, file, &c.sweep, meter, keep, &sum))
            });
        let (mut shown, mut samples, mut parts, mut fidelity) =
            (Vec::new(), Vec::new(), Vec::new(), Fidelity::default());
        for (file, rendered, file_samples, file_fidelity, part) in files {
            rendered?;
            shown.push(file);
            samples.extend(file_samples);
            fidelity.add(file_fidelity);
            parts.push(part);
        }
        if !writes(None, read, &mut errors) {
            // Dropped unfinished, timeline.csv's temporary copy is removed.
            drop(timeline_csv);
            drop(staged);
            remove_created(&created);
            return Ok(print_problems(&warnings, &errors));
        }
        // A write error already names the file.
        let timeline_file = timeline_csv.finish(found.files.len())?;
        // A conversation's place among all of them, from its file's and its own.
        let mut first_of_file = Vec::with_capacity(shown.len());
        let mut conversations = 0;
        for f in &shown {
            first_of_file.push(conversations);
            conversations += f.conversations;
        }
        let kept =
            choice.into_kept().into_iter().map(|((file, k), runs)| (first_of_file[file] + k, runs)).collect();
        let timelines = crate::report::Timelines { conversations, kept };
        let comparison = compared.finish().finish(&c.compare);
        let calibration =
            analysis::calibration::calibrate_samples(&samples, &estimators, c.input.source.tokenizer.name());
        let first = FirstPass { sum, parts, speculation };
        let (sweep, mut meter) = finish_sweep(&c.input, &found, meter, first, &c.sweep, &mut warnings);
        // Nothing is counted after the sweep: the counts are kept, and the meter's memory given
        // back, before the report is built.
        keep_counts(c.input.source.count_cache.as_deref(), &mut meter);
        drop(meter);
        let input = crate::report::ReportInput {
            version: env!("CARGO_PKG_VERSION"),
            paths: c.input.source.paths.iter().map(|p| p.display().to_string()).collect(),
            files: shown,
            settings: report_settings(&c),
            sweep: &sweep,
            comparison: &comparison,
            calibration: &calibration,
            fidelity: fidelity.calibrated(),
            calibration_methods: fidelity.methods,
            warnings: &warnings,
            errors: &errors,
            timelines: c.timelines,
        };
        let files = crate::report::build(&input, timelines)?;
        timeline_file.finish()?;
        write_report(staged, &input, &files, &c.out)?;
        let mut summary = String::new();
        for line in crate::report::findings(&input) {
            summary.push_str(&line);
            summary.push('\n');
        }
        summary.push_str(&format!(
            "wrote {} ({} files)\n",
            c.out.join(crate::report::INDEX).display(),
            files.len() + 3
        ));
        stdout(&summary)?;
        Ok(print_problems(&warnings, &errors))
    })
}

/// Writes the rest of a report beside the old one (report.json, prune-events.csv and `files`),
/// then moves the new report in, its index last ([`export::staged::Staged::move_in`]). Each
/// file's errors name it once (`cannot write REPORT/report.json: …`).
fn write_report(
    mut staged: export::staged::Staged,
    input: &crate::report::ReportInput<'_>,
    files: &[crate::report::ReportFile],
    out: &std::path::Path,
) -> Result<()> {
    let mut json = staged.file(crate::report::REPORT_JSON)?;
    serde_json::to_writer_pretty(&mut json, input).map_err(std::io::Error::from)?;
    json.finish()?;
    let mut events = staged.file(crate::report::PRUNE_EVENTS_CSV)?;
    crate::report::write_prune_events(input, &mut events)?;
    events.finish()?;
    for f in files {
        staged.write(&f.path, &f.bytes)?;
    }
    let charts: std::collections::BTreeSet<&str> =
        files.iter().filter_map(|f| f.path.strip_prefix(crate::chart::DIR)?.strip_prefix('/')).collect();
    staged.move_in(crate::report::INDEX, || {
        export::remove_stale(&out.join(crate::chart::DIR), |name| {
            crate::chart::is_timeline_file(name) && !charts.contains(name)
        })
    })
}

/// The calibrated replay's held-out predictions and methods over a report's conversations.
#[derive(Default)]
struct Fidelity {
    pairs: Vec<(crate::model::Tokens, f64)>,
    methods: std::collections::BTreeMap<String, usize>,
}

impl Fidelity {
    fn of(conversations: &[&MeasuredConversation]) -> Fidelity {
        let mut f = Fidelity::default();
        for m in conversations {
            f.pairs.extend(crate::calibrate::held_out(m, analysis::reconcile::MIN_CALIBRATED));
            *f.methods.entry(m.calibration.method.name().to_owned()).or_default() += 1;
        }
        f
    }

    fn add(&mut self, other: Fidelity) {
        self.pairs.extend(other.pairs);
        for (k, n) in other.methods {
            *self.methods.entry(k).or_default() += n;
        }
    }

    fn calibrated(&self) -> analysis::reconcile::Calibrated {
        analysis::reconcile::Calibrated::from_pairs(&self.pairs, || {
            format!("no conversation records {} or more prompt sizes", analysis::reconcile::MIN_CALIBRATED)
        })
    }
}

/// The settings a report lists, in display order.
fn report_settings(c: &ReportConfig) -> Vec<(String, String)> {
    let p = &c.compare.cache.prices;
    let specs = |v: &[crate::policy::PolicySpec]| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ");
    vec![
        ("tokenizer".into(), c.input.source.tokenizer.name().into()),
        ("policies decide with (--decide-with)".into(), {
            let d = c.input.decide;
            format!("{} ({})", d.name(), d.meaning())
        }),
        ("input format".into(), c.input.source.input_format.map_or("auto".into(), |f| f.name().to_owned())),
        ("re-split pre-split outputs".into(), c.input.resplit.to_string()),
        (
            "unrecorded tokens per request (--overhead)".into(),
            c.input.overhead.map_or("calibrated per conversation".into(), |o| o.to_string()),
        ),
        ("sweep policy".into(), c.sweep.policy.as_str().into()),
        (
            "sweep thresholds (bytes)".into(),
            c.sweep.thresholds.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" "),
        ),
        ("sweep tolerance".into(), format!("{}%", c.sweep.tolerance * 100.0)),
        ("tools with their own recommendation".into(), c.sweep.top_tools.to_string()),
        ("compared policies".into(), specs(&c.compare.policies)),
        ("comparison threshold (bytes)".into(), c.compare.threshold.to_string()),
        ("context window (tokens)".into(), c.compare.window.to_string()),
        (
            "prices".into(),
            format!(
                "{}: input {}, write {}, read {} {}",
                p.name,
                p.input,
                p.write,
                p.read,
                crate::export::analysis::price_unit(p)
            ),
        ),
        ("cache TTL".into(), analysis::cost::format_ttl(c.compare.cache.ttl_ms)),
        ("timeline charts (--timelines)".into(), c.timelines.map_or("all".into(), |n| n.to_string())),
    ]
}

fn reconcile(c: ReconcileConfig) -> Result<ExitCode> {
    check_output(&c.output, &c.source)?;
    let found = match discover_or_stop(&c.source) {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    check_found(&c.output, &c.source, &found)?;
    let mut meter = seeded(
        Meter::with_backend(c.source.tokenizer, c.source.tokenizer, c.source.counter),
        c.source.count_cache.as_deref(),
        &c.source.paths,
    )?;
    let run = || -> Result<ExitCode> {
        let (mut report, read) =
            reconcile_files(&found, c.source.input_format, &meter, c.per_request, c.worst);
        if writes(Some(&c.output), read, &mut report.errors) {
            let bytes = crate::export::reconcile::render(&report, c.format, c.per_request)?;
            c.output.write(&bytes)?;
        }
        keep_counts(c.source.count_cache.as_deref(), &mut meter);
        Ok(print_problems(&report.warnings, &report.errors))
    };
    with_jobs(c.source.jobs, run)
}

fn replay(c: ReplayConfig) -> Result<ExitCode> {
    check_output(&c.output, &c.input.source)?;
    let found = match discover_or_stop(&c.input.source) {
        Ok(found) => found,
        Err(code) => return Ok(code),
    };
    check_found(&c.output, &c.input.source, &found)?;
    with_jobs(c.input.source.jobs, || {
        let mut meter = meter(&c.input)?;
        let job = Job { thresholds: vec![c.threshold], policies: c.policies.clone(), ..c.input.job() };
        let bar = progress_bar(found.files.len(), "replaying");
        // JSON and CSV are written as the files are replayed (each file's part rendered by the
        // worker that replayed it, not all at the end on one thread).
        let streamed = matches!(c.format, export::ExportFormat::Csv | export::ExportFormat::Json);
        let twice = match c.format.timeline_parts() {
            Some(parts) if c.per_request && !holds(&found, c.low_memory) => Some(parts),
            _ => None,
        };
        let code = if streamed {
            let code = replay_as_it_goes(&c, &found, &job, &meter, &|| bar.inc(1))?;
            bar.finish_and_clear();
            code
        } else if let Some(parts) = twice {
            bar.set_length(2 * found.files.len() as u64);
            let code = replay_twice(&c, &found, &job, &meter, parts, &|| bar.inc(1))?;
            bar.finish_and_clear();
            code
        } else {
            let (mut report, read) = replay_report(&c, &found, &job, &meter, &|| bar.inc(1));
            bar.finish_and_clear();
            if writes(Some(&c.output), read, &mut report.errors) {
                let mut out = c.output.stream()?;
                c.format.exporter().write(&report, c.per_request, &mut out)?;
                out.finish()?;
            }
            print_problems(&report.warnings, &report.errors)
        };
        keep_counts(c.input.source.count_cache.as_deref(), &mut meter);
        Ok(code)
    })
}

/// The whole report of a replay: every run's summary, with its rows under `--per-request`; and
/// how many files were read.
fn replay_report(
    c: &ReplayConfig,
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    done: &(dyn Fn() + Sync),
) -> (ReplayReport, usize) {
    let outcomes = if c.per_request {
        replay_files(found, job, meter, done)
    } else {
        replay_files_without_rows(found, job, meter, done)
    };
    let (warnings, errors) = found.problems();
    let mut report = ReplayReport { errors, warnings, ..Default::default() };
    let read = outcomes.iter().filter(|o| o.format.is_some()).count();
    for o in outcomes {
        add_problems(&mut report.warnings, &mut report.errors, &o.path, &o.warnings, o.error);
        for run in o.runs {
            let mut summary = run.summary;
            if c.per_request {
                summary.timeline = Some(run.rows);
            }
            report.runs.push(summary);
        }
    }
    (report, read)
}

/// `replay --format json` and `--format csv` (with or without `--per-request`), written as the
/// files are replayed: each file's part is rendered by the worker that replayed it and goes out in
/// input order as soon as the files before it are written, and its runs are dropped, so memory
/// does not grow with the requests or the conversations and no serial rendering of the whole
/// report is left for the end. The same bytes as the CSV and JSON exporters write.
fn replay_as_it_goes(
    c: &ReplayConfig,
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    done: &(dyn Fn() + Sync),
) -> Result<ExitCode> {
    if c.format == export::ExportFormat::Json {
        let parts = export::InOrder::new(export::json::JsonRuns::new(c.output.stream()?)?);
        let rows = c.per_request;
        let outcomes = replay_files_each(found, job, meter, rows, done, |index, outcome| {
            let runs: Vec<_> = outcome
                .runs
                .into_iter()
                .map(|r| crate::result::RunSummary { timeline: rows.then_some(r.rows), ..r.summary })
                .collect();
            let rendered = parts.put_rendered(index, export::json::runs_part(&runs)).map_err(Into::into);
            (outcome.path, outcome.format.is_some(), outcome.warnings, outcome.error, rendered)
        });
        let (warnings, mut errors, read) = problems_of(found, outcomes)?;
        let out = parts.finish(found.files.len())?.finish(&errors, &warnings)?;
        // Dropped unfinished, a file's temporary copy is removed and the file left as it is.
        if writes(Some(&c.output), read, &mut errors) {
            out.finish()?;
        }
        Ok(print_problems(&warnings, &errors))
    } else {
        // CSV: one line per request (timeline.csv's) or one per run.
        let rows = c.per_request;
        let header = if rows { export::columns::timeline_csv_header()? } else { export::csv::runs_header()? };
        let lines = csv_lines(&c.output, &header)?;
        let outcomes = replay_files_each(found, job, meter, rows, done, |index, outcome| {
            let read = outcome.format.is_some();
            let rendered = if rows {
                put_timeline_lines(&lines, index, outcome.runs.iter()).map_err(Into::into)
            } else {
                let runs: Vec<_> = outcome.runs.into_iter().map(|r| r.summary).collect();
                lines.put_rendered(index, export::csv::runs_rows(&runs))
            };
            (outcome.path, read, outcome.warnings, outcome.error, rendered)
        });
        let (warnings, mut errors, read) = problems_of(found, outcomes)?;
        let out = lines.finish(found.files.len())?;
        if writes(Some(&c.output), read, &mut errors) {
            out.finish()?;
        }
        Ok(print_problems(&warnings, &errors))
    }
}

/// `replay --per-request` as a table or Markdown, without holding every row: a first pass adds up
/// the columns' stats ([`export::columns::ColumnStats`]) and keeps the run summaries (for the
/// totals), dropping each file's rows (but those of a file that cannot be read again, such as
/// standard input); a second pass replays the files again (every count is in the meter's cache by
/// then) and writes each file's rows, in input order, as soon as the files before it are written.
/// The same bytes as the exporter writes from the whole report.
fn replay_twice(
    c: &ReplayConfig,
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    parts: &dyn export::TimelineParts,
    done: &(dyn Fn() + Sync),
) -> Result<ExitCode> {
    let mut first = timeline_first_pass(found, job, meter, done);
    if !writes(Some(&c.output), first.read, &mut first.report.errors) {
        return Ok(print_problems(&first.report.warnings, &first.report.errors));
    }
    let report = timeline_second_pass(&c.output, found, job, meter, parts, first, done)?;
    Ok(print_problems(&report.warnings, &report.errors))
}

/// What the first pass of [`replay_twice`] keeps: the stats of every row, each file's own (to
/// notice a file that reads differently the second time), the report without its rows, and the
/// runs with their rows of each file that cannot be read again ([`input::rereadable`]).
struct TimelinePass {
    stats: export::columns::ColumnStats,
    files: Vec<export::columns::ColumnStats>,
    report: ReplayReport,
    read: usize,
    held: Vec<Option<Vec<crate::result::Run>>>,
}

/// The runs of a replayed file, each with its rows.
fn runs_of(outcome: &crate::pipeline::FileOutcome) -> Vec<(&RunSummary, &[RequestRow])> {
    outcome.runs.iter().map(|r| (&r.summary, r.rows.as_slice())).collect()
}

fn timeline_first_pass(
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    done: &(dyn Fn() + Sync),
) -> TimelinePass {
    use export::columns::{ColumnStats, TIMELINE_HEADERS, timeline_stats};
    let outcomes = replay_files_each(found, job, meter, true, done, |index, outcome| {
        let stats = timeline_stats(&runs_of(&outcome));
        let (summaries, held): (Vec<_>, _) = if input::rereadable(&found.files[index]) {
            (outcome.runs.into_iter().map(|r| r.summary).collect(), None)
        } else {
            (outcome.runs.iter().map(|r| r.summary.clone()).collect(), Some(outcome.runs))
        };
        (stats, summaries, held, outcome.format.is_some(), outcome.path, outcome.warnings, outcome.error)
    });
    let (warnings, errors) = found.problems();
    let mut first = TimelinePass {
        stats: ColumnStats::new(&TIMELINE_HEADERS),
        files: Vec::with_capacity(outcomes.len()),
        report: ReplayReport { errors, warnings, ..Default::default() },
        read: 0,
        held: Vec::with_capacity(outcomes.len()),
    };
    for (stats, summaries, held, read, path, warnings, error) in outcomes {
        first.read += usize::from(read);
        first.stats.merge(&stats);
        first.files.push(stats);
        first.held.push(held);
        add_problems(&mut first.report.warnings, &mut first.report.errors, &path, &warnings, error);
        first.report.runs.extend(summaries);
    }
    first
}

/// Writes the table the first pass sized, replaying the files again (those it held, which cannot
/// be read again, are drawn from it); a file whose rows differ
/// from the first read (a live session being written) is named in a warning, and its rows are the
/// second read's (drawn in the first read's columns, so they may not line up). Returns the report
/// of the first pass with those warnings.
fn timeline_second_pass(
    output: &Output,
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    parts: &dyn export::TimelineParts,
    first: TimelinePass,
    done: &(dyn Fn() + Sync),
) -> Result<ReplayReport> {
    let TimelinePass { stats, files, mut report, held, .. } = first;
    let mut out = output.stream()?;
    parts.head(&stats, &mut out)?;
    let rows = export::InOrder::new(out);
    // The files held by the first pass are drawn from it, the others replayed again.
    let mut again = Discovered::default();
    let mut places = Vec::new();
    for (index, kept) in held.iter().enumerate() {
        match kept {
            Some(runs) => {
                let runs: Vec<_> = runs.iter().map(|r| (&r.summary, r.rows.as_slice())).collect();
                let mut part = Vec::new();
                export::write_timeline_rows(parts, &stats, &runs, &mut part, |_| ())
                    .expect("writing to a Vec cannot fail");
                rows.put(index, part);
                done();
            }
            None => {
                again.files.push(found.files[index].clone());
                again.explicit.push(found.explicit[index]);
                places.push(index);
            }
        }
    }
    drop(held);
    let changed = replay_files_each(&again, job, meter, true, done, |k, outcome| {
        let index = places[k];
        let mut part = Vec::new();
        let mut drawn = export::columns::ColumnStats::new(&export::columns::TIMELINE_HEADERS);
        export::write_timeline_rows(parts, &stats, &runs_of(&outcome), &mut part, |cells| drawn.add(cells))
            .expect("writing to a Vec cannot fail");
        rows.put(index, part);
        (drawn != files[index]).then(|| {
            format!(
                "{}: read differently the second time (changed while the replay read it?): its rows are \
                 the second read's and may not line up",
                outcome.path
            )
        })
    });
    report.warnings.extend(changed.into_iter().flatten());
    let mut out = rows.finish(found.files.len())?;
    parts.tail(&stats, &report, &mut out)?;
    out.finish()?;
    Ok(report)
}

/// What is left of a file written as it went: its path, whether it was read, its warnings and
/// error, and whether its part could be rendered.
type Written = (String, bool, Vec<String>, Option<String>, Result<()>);

/// The warnings (prefixed with their file) and errors of files replayed as they went, after the
/// errors of the search, and how many files were read; the first part that could not be
/// rendered, if any, instead.
fn problems_of(found: &Discovered, outcomes: Vec<Written>) -> Result<(Vec<String>, Vec<String>, usize)> {
    let (mut warnings, mut errors) = found.problems();
    let mut read = 0;
    for (path, was_read, file_warnings, error, rendered) in outcomes {
        rendered?;
        read += usize::from(was_read);
        add_problems(&mut warnings, &mut errors, &path, &file_warnings, error);
    }
    Ok((warnings, errors, read))
}

/// Adds one replayed file's warnings (prefixed with its path) and error to a report's, after those
/// of the files before it.
fn add_problems(
    warnings: &mut Vec<String>,
    errors: &mut Vec<String>,
    path: &str,
    file_warnings: &[String],
    error: Option<String>,
) {
    warnings.extend(file_warnings.iter().map(|w| prefix_path(path, w)));
    errors.extend(error);
}

/// Adds a file's replayed conversations to a comparison, in file order.
fn add_replayed(sum: &mut analysis::compare::Sum<'_>, replayed: Vec<analysis::compare::Replayed>) {
    for conversation in replayed {
        sum.add(conversation);
    }
}

/// Every conversation of `file` replayed under `sources` (in parallel), in file order: what a
/// comparison adds up ([`analysis::compare::add_up`]).
fn replay_file(
    file: &MeasuredFile,
    sources: &[&dyn PolicySource],
    settings: &analysis::compare::CompareSettings,
    meter: &Meter,
    keep_rows: bool,
) -> Vec<analysis::compare::Replayed> {
    let replay =
        |c| analysis::compare::replay_conversation(&file.path, c, sources, settings, meter, keep_rows);
    file.conversations.par_iter().map(replay).collect()
}

/// Lines of a CSV file (a report's timeline.csv, or `replay --format csv`) written to `output` as
/// the files are replayed: `header`, then each file's part in input order.
fn csv_lines(output: &Output, header: &[u8]) -> Result<export::InOrder<export::Streamed>> {
    let mut out = output.stream()?;
    out.write_all(header)?;
    Ok(export::InOrder::new(out))
}

/// Puts the lines of `runs` as part `index` of `lines`. Every file puts a part, an empty one when
/// its lines cannot be rendered (the error is returned, to be reported after the pass), so the
/// parts after it are written.
fn put_timeline_lines<'r, W: Write>(
    lines: &export::InOrder<W>,
    index: usize,
    runs: impl Iterator<Item = &'r crate::result::Run>,
) -> std::result::Result<(), csv::Error> {
    let parts: Vec<_> = runs.map(|r| (&r.summary, r.rows.as_slice())).collect();
    lines.put_rendered(index, export::columns::timeline_csv_rows(&parts))
}

/// The requests of each conversation of `file`: what a second read of it must find again.
fn shape(file: &MeasuredFile) -> Vec<usize> {
    file.conversations.iter().map(|c| c.requests()).collect()
}

/// Writes one line to stderr. A stderr that cannot be written (a closed pipe after `2>&1 | head`,
/// a full disk) loses the line but does not end the run, whose output is written already and
/// whose exit code still says how it went (`eprintln!` would panic: exit 101).
///
/// Messages quote the logs (paths, ids, tool names, values), so control characters other than a
/// newline or a tab are shown escaped (`\u{1b}`): an escape sequence in a log must not drive the
/// terminal (retitle it, hide text, move the cursor).
pub fn say(line: std::fmt::Arguments<'_>) {
    let line = line.to_string();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", printable(&line));
}

/// `text` with its control characters other than newline and tab escaped ([`say`]).
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Prints warnings and errors to stderr once; the exit code says whether any input failed.
fn print_problems(warnings: &[String], errors: &[String]) -> ExitCode {
    for w in warnings {
        say(format_args!("warning: {w}"));
    }
    for e in errors {
        say(format_args!("error: {e}"));
    }
    ExitCode::from(if errors.is_empty() { EXIT_OK } else { EXIT_SOME_FAILED })
}

/// Writes to stdout, reporting a closed pipe as an error (which `main` turns into exit 0).
fn stdout(text: &str) -> Result<()> {
    Output::Stdout.write(text.as_bytes())
}

/// At most this many bytes of text are read by `count` and `split` (which hold the whole text):
/// a stream with no end (`/dev/zero`, `yes`) is an error after it instead of taking all the
/// machine's memory (decision; 4.5 GB in 5 s for `count /dev/zero` before). A 1 GiB text is far
/// beyond any tool output, and counting one takes a few GB.
pub const MAX_TEXT_BYTES: u64 = 1 << 30;

/// The text of `split` and `count`: `file`, or stdin when it is absent or `-`.
fn read_input(file: Option<&Path>) -> Result<String> {
    let (read, name) = match file.filter(|p| *p != Path::new("-")) {
        Some(p) => {
            let (f, ahead) = input::open_input(p).with_context(|| format!("cannot read {}", p.display()))?;
            let read =
                input::read_up_to(std::io::Read::chain(std::io::Cursor::new(ahead), f), MAX_TEXT_BYTES)
                    .with_context(|| format!("cannot read {}", p.display()));
            (read?, p.display().to_string())
        }
        None => (
            input::read_up_to(std::io::stdin(), MAX_TEXT_BYTES).context("cannot read stdin")?,
            "stdin".to_owned(),
        ),
    };
    let Some(bytes) = read else {
        anyhow::bail!(
            "{name}: more than {} GiB of text (a stream with no end?); count and split hold the whole text \
             in memory: pass a smaller text",
            MAX_TEXT_BYTES >> 30
        );
    };
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!("{name}: not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to())
    })
}

fn split(c: SplitConfig) -> Result<ExitCode> {
    let text = read_input(c.file.as_deref())?;
    let out = ToolOutput::from_output(&text, c.threshold);
    let rendered = if c.json {
        let v = serde_json::json!({
            "threshold": c.threshold,
            "bytes": text.len(),
            "lines": text.lines().count(),
            "split": out.content.is_some(),
            "summary": out.summary,
            "content": out.content,
        });
        format!("{}\n", serde_json::to_string_pretty(&v)?)
    } else {
        split_text(&text, &out, c.threshold)
    };
    stdout(&rendered)?;
    Ok(ExitCode::from(EXIT_OK))
}

/// The human-readable explanation of one split.
pub fn split_text(text: &str, out: &ToolOutput, threshold: usize) -> String {
    let lines = text.lines().count();
    match &out.content {
        None => format!(
            "{} bytes <= threshold {threshold}: not split; the whole output is the summary and nothing is prunable.\n\
             summary ({} bytes):\n{}\n",
            text.len(),
            out.summary.len(),
            out.summary
        ),
        Some(content) => format!(
            "{} bytes > threshold {threshold}: split ({lines} lines).\n\
             summary ({} bytes, kept after prune):\n{}\n\
             content ({} bytes, removed by prune): the whole output\n\
             sent before prune: summary + \"\\n\" + content = {} bytes\n",
            text.len(),
            out.summary.len(),
            out.summary,
            content.len(),
            out.summary.len() + 1 + content.len()
        ),
    }
}

fn count(c: CountConfig) -> Result<ExitCode> {
    let text = read_input(c.file.as_deref())?;
    let mut out = format!(
        "{:<10}{:>12}\n{:<10}{:>12}\n{:<10}{:>12}\n{:<10}{:>12}  (len/4)\n",
        "bytes",
        text.len(),
        "chars",
        text.chars().count(),
        "lines",
        text.lines().count(),
        "estimate",
        estimate(&text)
    );
    // Each tokenizer on its own worker: their tables are built side by side.
    let counted: Vec<(Tokenizer, crate::model::Tokens)> = c
        .tokenizers
        .par_iter()
        .copied()
        .filter(|t| *t != Tokenizer::Estimate)
        .map(|t| (t, t.counter_with(c.counter).count(&text)))
        .collect();
    for (t, n) in counted {
        let ratio = if n > 0 {
            format!("  ({:.2} bytes/token)", text.len() as f64 / n as f64)
        } else {
            String::new()
        };
        out.push_str(&format!("{:<10}{:>12}{ratio}\n", t.name(), n));
    }
    stdout(&out)?;
    Ok(ExitCode::from(EXIT_OK))
}

/// The text of `ctxbudget policies`: every policy, then every record-time transform, each with
/// its parameters (`key=default  meaning`) and source.
pub fn policies_text() -> String {
    let mut out = String::from(
        "Policies (--policy name:key=value,...; --policies FILE). Each decides with its anchor's own\n\
         estimate unless --decide-with says otherwise.\n\n",
    );
    let transforms = crate::transform::registry().iter().map(|k| (k.name, k.about, k.source, k.params));
    let policies = registry().iter().map(|k| (k.name, k.about, k.source, k.params));
    for (name, about, source, params) in policies {
        push_entry(&mut out, name, about, source, params);
    }
    out.push_str("Record-time transforms (--transform name[:key=value,...], applied before the split).\n\n");
    for (name, about, source, params) in transforms {
        push_entry(&mut out, name, about, source, params);
    }
    out
}

fn push_entry(out: &mut String, name: &str, about: &str, source: &str, params: &[crate::policy::Param]) {
    out.push_str(&format!("{name}\n    {about}\n    source: {source}\n"));
    for p in params {
        let default = if p.default.is_empty() { "\"\"" } else { p.default };
        out.push_str(&format!("    {}={}  {}\n", p.key, default, p.about));
    }
    out.push('\n');
}

/// Whether an error is a closed stdout (e.g. piped into `head`), which is not a failure.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The exit code for an error that ended the run.
pub fn exit_code_for(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<UsageError>().is_some() { EXIT_USAGE } else { EXIT_SOME_FAILED }
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_escaped_for_the_terminal_but_newlines_and_tabs_kept() {
        assert_eq!(super::printable("a\tb\nc"), "a\tb\nc");
        assert_eq!(super::printable("x\u{1b}]0;owned\u{7}y\r"), "x\\u{1b}]0;owned\\u{7}y\\u{d}");
    }
    use super::*;
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
    fn a_per_request_table_whose_file_changes_between_its_two_reads_names_it() {
        for changed in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let fixture =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cache-trap/session.jsonl");
            let session = dir.path().join("session.jsonl");
            std::fs::copy(fixture, &session).unwrap();
            let out = dir.path().join("out");
            std::fs::create_dir(&out).unwrap();
            let args = ["ctxbudget", "replay", "--tokenizer", "estimate", "--per-request", "--low-memory"];
            let cli =
                crate::cli::Cli::try_parse_from(args.into_iter().chain([session.to_str().unwrap()])).unwrap();
            let Ok(Config::Replay(c)) = Config::from_cli(cli) else { panic!("a replay") };
            let found = input::discover(&c.input.source.paths);
            let meter = meter(&c.input).unwrap();
            let job = Job {
                thresholds: vec![c.threshold],
                policies: c.policies.clone(),
                resplit: false,
                transforms: &[],
                overhead: 0,
                input_format: None,
                calibrate: false,
            };
            let first = timeline_first_pass(&found, &job, &meter, &|| ());
            if changed {
                let mut text = std::fs::read_to_string(&session).unwrap();
                text.push_str("{\"type\": \"request\"}\n");
                std::fs::write(&session, text).unwrap();
            }
            let table = Output::File(out.join("table.txt"));
            let parts = export::ExportFormat::Table.timeline_parts().unwrap();
            let report = timeline_second_pass(&table, &found, &job, &meter, parts, first, &|| ()).unwrap();
            let named =
                report.warnings.iter().any(|w| w.contains("session.jsonl: read differently the second time"));
            assert_eq!(named, changed, "{:?}", report.warnings);
            assert!(std::fs::read_to_string(out.join("table.txt")).unwrap().contains("Totals per policy"));
        }
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
