//! The opening every corpus command shares ([`corpus_command`]): check where the output goes,
//! find the inputs (or stop, when every path named failed), check the output against the files
//! found, seed the meter from `--count-cache`, and run on `-j` threads; then the pieces the
//! commands' bodies share: loading with a progress bar, whether a report is written, keeping the
//! counts, and the per-file helpers of the replaying commands.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use rayon::prelude::*;

use super::{print_problems, say};
use crate::analysis;
use crate::analysis::compare::PolicySource;
use crate::config::{InputConfig, SourceConfig, UsageError};
use crate::export::{self, ExportFormat, Output};
use crate::input::{self, Discovered};
use crate::pass;
use crate::pipeline::MeasuredFile;
use crate::tokens::Meter;

/// Where a command writes, for the checks made before and after its inputs are found.
pub(super) enum Target<'a> {
    /// One output file, or standard output.
    Output(&'a Output),
    /// A report directory (`report --out`); `force` writes into a folder of other files.
    ReportDir {
        /// The directory.
        out: &'a Path,
        /// `--force`.
        force: bool,
    },
}

/// A command's opening done: the inputs found and the meter seeded with the kept counts.
pub(super) struct Opened {
    /// The inputs found.
    pub found: Discovered,
    /// The meter, seeded from `--count-cache`.
    pub meter: Meter,
    /// The folders created for a report directory, outermost first (none for an output file).
    pub created: Vec<PathBuf>,
}

/// Runs a corpus command: the shared opening ([`open`]), then `body` on `-j` threads. A run with
/// nothing to read stops with the errors printed, before `body`.
pub(super) fn corpus_command(
    target: Target<'_>,
    source: &SourceConfig,
    meter: Meter,
    body: impl FnOnce(Opened) -> Result<ExitCode> + Send,
) -> Result<ExitCode> {
    if let Some(folder) = source.paths.first().filter(|_| source.bundled) {
        say(format_args!(
            "note: no path given, so this reads the bundled sample traces in {}; to analyse your own \
             logs pass files or folders, or --claude, --codex, --cline, --roo or --opencode (the folders \
             those agents keep their sessions in)",
            folder.display()
        ));
    }
    match open(target, source, meter)? {
        Ok(opened) => with_jobs(source.jobs, || body(opened)),
        Err(code) => Ok(code),
    }
}

/// Checks the target, finds the inputs, checks the target against them and seeds `meter`. A
/// report seeds first (its directory is created last, once every check passed).
fn open(target: Target<'_>, source: &SourceConfig, meter: Meter) -> Result<Result<Opened, ExitCode>> {
    match target {
        Target::Output(output) => {
            check_output(output, source)?;
            let found = match discover_or_stop(source) {
                Ok(found) => found,
                Err(code) => return Ok(Err(code)),
            };
            check_found(output, source, &found)?;
            let meter = seeded(meter, source.count_cache.as_deref(), &source.paths)?;
            Ok(Ok(Opened { found, meter, created: Vec::new() }))
        }
        Target::ReportDir { out, force } => {
            let meter = seeded(meter, source.count_cache.as_deref(), &source.paths)?;
            super::report::check_dir(out, &source.paths)?;
            let found = match discover_or_stop(source) {
                Ok(found) => found,
                Err(code) => return Ok(Err(code)),
            };
            super::report::check_found(out, source, &found)?;
            if !force {
                super::report::check_owned(out)?;
            }
            let created = super::report::create_dir(out)?;
            Ok(Ok(Opened { found, meter, created }))
        }
    }
}

/// The inputs named on the command line, found ([`input::discover`]), or the exit code of a run
/// that has nothing to read because every path named failed (a mistyped path, the default
/// `traces/` away from the repository, an agent's folder that does not exist): the errors are
/// printed and nothing is written, so an existing output or report is left as it is instead of
/// being replaced by an empty one (decision). A folder that exists but holds no session is not a
/// failure: its report is an empty one, as before.
fn discover_or_stop(source: &SourceConfig) -> std::result::Result<Discovered, ExitCode> {
    let (paths, missing): (Vec<PathBuf>, Vec<PathBuf>) =
        source.paths.iter().cloned().partition(|p| missing_agent_flag(p).is_none());
    let mut found = input::discover_logs(&paths, source.follow, source.input_format.is_none());
    let missing_warnings = missing.iter().map(|p| {
        format!(
            "{}: no such folder, so {} reads nothing (no sessions recorded on this machine?)",
            p.display(),
            missing_agent_flag(p).unwrap_or("--claude/--codex/--cline/--roo/--opencode")
        )
    });
    found.warnings.splice(0..0, missing_warnings);
    if paths.is_empty() && !missing.is_empty() {
        found.errors.push("no agent folder asked for exists; pass trace files or folders".to_owned());
    }
    if !found.files.is_empty() || found.errors.is_empty() {
        return Ok(found);
    }
    let mut errors = found.errors;
    errors.push(NOTHING_READ.to_owned());
    Err(print_problems(&found.warnings, &errors))
}

/// The flag that asked for `path`, when it is an agent's session folder under `$HOME`
/// (`~/.codex/sessions`, [`input::agent_homes`]) that does not exist: a machine without that agent
/// is no mistake, so the folder is named in a warning, and the other inputs are read.
fn missing_agent_flag(path: &Path) -> Option<&'static str> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    let agent = input::AgentHome::ALL.into_iter().find(|a| Path::new(&home).join(a.relative()) == path)?;
    (!path.exists()).then_some(agent.flag())
}

/// The last error of a run with no input to read (`discover_or_stop`, `writes`).
pub const NOTHING_READ: &str = "no input could be read: nothing written";

/// Whether a run that read `read` files and met `errors` writes its report to `output` (`None`:
/// the report directory). Not when some input failed and no file could be read, and the report
/// would replace a file: it would hold nothing but the errors, which are printed anyway, and would
/// replace the last run's report, as `discover_or_stop` avoids for paths that do not exist.
/// `errors` then ends with [`NOTHING_READ`]. Standard output gets its report as always, and so does
/// a run that met no error (files skipped in a walk, a folder with no session: an empty report).
pub(super) fn writes(output: Option<&Output>, read: usize, errors: &mut Vec<String>) -> bool {
    if read == 0 && !errors.is_empty() && !matches!(output, Some(Output::Stdout)) {
        errors.push(NOTHING_READ.to_owned());
        return false;
    }
    true
}

/// [`writes`] for a command that renders `format` to `output` once every file is read: and, when
/// no file could be read, not standard output either unless as JSON. A table of zeros under the
/// error (`sweep Cargo.toml`) reads as a result; the error alone says what happened (exit 1),
/// while JSON keeps the errors where a script reads them.
pub(super) fn writes_as(
    output: &Output,
    format: ExportFormat,
    read: usize,
    errors: &mut Vec<String>,
) -> bool {
    if read == 0 && !errors.is_empty() && format != ExportFormat::Json && matches!(output, Output::Stdout) {
        return false;
    }
    writes(Some(output), read, errors)
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

/// `meter` seeded with the counts kept in `cache` (`--count-cache`). The file is checked first as
/// an output is ([`Output::check`]: in a folder that exists, neither an input nor inside one, where
/// a walk would read it as a trace); a count cache that cannot be used (damaged, another version,
/// empty) is named in a warning, everything is counted afresh and the file is rewritten at the end
/// ([`keep_counts`]). A file that is not a count cache at all is refused: it is never replaced.
pub(super) fn seeded(mut meter: Meter, cache: Option<&Path>, inputs: &[PathBuf]) -> Result<Meter> {
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
pub(super) fn keep_counts(cache: Option<&Path>, meter: &mut Meter) {
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
/// made before the walk (`check_output`, [`seeded`]) cannot see it.
fn check_found(output: &Output, source: &SourceConfig, found: &Discovered) -> Result<()> {
    output.check_found(&found.files).map_err(|e| UsageError(format!("{e:#}")))?;
    check_cache_found(source, found)
}

/// `check_found` of the `--count-cache` file.
pub(super) fn check_cache_found(source: &SourceConfig, found: &Discovered) -> Result<()> {
    let Some(cache) = source.count_cache.as_deref() else { return Ok(()) };
    let cache = Output::File(cache.to_owned());
    cache.check_found(&found.files).map_err(|e| UsageError(format!("--count-cache: {e:#}")).into())
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
    /// The names of the tools the inputs call, for [`Loaded::check_tool_names`].
    pub tools: BTreeSet<String>,
    /// Every file found, with what was read from it.
    pub inputs: Vec<crate::result::InputFile>,
}

impl<T> Loaded<T> {
    /// Adds a warning for every tool name given in a parameter of `policies` (`tools`,
    /// `exclude_tools`, `tools_allow`, ...) that no tool of the inputs is called, with the closest
    /// names the inputs do have: `claude-code-micro:tools=read` compacts nothing when the tool is
    /// `Read`. Only names given (a parameter left at its default names every agent's tools), and
    /// only when the inputs call some tool.
    pub fn check_tool_names(&mut self, policies: &[crate::policy::PolicySpec]) {
        self.warnings.extend(unknown_tool_names(policies, &self.tools));
    }

    /// The [`Envelope`](crate::result::Envelope) of these inputs, with `settings`.
    pub fn envelope(&self, settings: crate::result::Settings) -> crate::result::Envelope {
        crate::result::Envelope {
            inputs: self.inputs.clone(),
            settings,
            errors: self.errors.clone(),
            warnings: self.warnings.clone(),
        }
    }

    /// Prints warnings and errors to stderr and returns the exit code they imply.
    pub fn finish(&self) -> ExitCode {
        print_problems(&self.warnings, &self.errors)
    }
}

/// Loads and measures the inputs found with `meter` (with a progress bar on stderr when it is a
/// terminal) and hands each measured file (its warnings and error already taken out) to `f` with
/// the meter, keeping only what `f` returns: memory holds the files being worked on and those
/// results, not the corpus, unless `f` keeps the file.
pub fn load_each<T: Send>(
    input: &InputConfig,
    found: &Discovered,
    meter: Meter,
    f: impl Fn(MeasuredFile, &Meter) -> T + Sync,
) -> Loaded<T> {
    load_found_each(input, found, meter, "measuring", |_, file, meter| f(file, meter))
}

/// [`load_each`] whose `f` also gets the file's place among the files found, and whose progress
/// bar says `message`: a [`pass::walk`] with a progress bar.
pub(super) fn load_found_each<T: Send>(
    input: &InputConfig,
    found: &Discovered,
    meter: Meter,
    message: &'static str,
    f: impl Fn(usize, MeasuredFile, &Meter) -> T + Sync,
) -> Loaded<T> {
    let bar = progress_bar(found.files.len(), message);
    // Its callers (compare, cost, report) report reuse, so the conversations carry the index.
    let job = crate::pipeline::Job { reuse: true, ..input.job() };
    let walked = pass::walk(f, found, &job, &meter, &|| bar.inc(1));
    bar.finish_and_clear();
    let pass::Walked { output: files, read, errors, warnings, inputs, tools } = walked;
    Loaded { meter, files, read, errors, warnings, tools, inputs }
}

/// Whether a policy parameter lists tool names, and whether they match case-insensitively with
/// `*` wildcards (OpenClaw's `tools_allow`/`tools_deny`) rather than exactly.
fn tool_parameter(key: &str) -> Option<bool> {
    if key.starts_with("tools_") {
        Some(true)
    } else if key == "tools" || key.ends_with("_tools") {
        Some(false)
    } else {
        None
    }
}

/// The warnings of [`Loaded::check_tool_names`]: one per tool name given to a policy in
/// `policies` that none of `tools` (the inputs' tools) matches.
pub(super) fn unknown_tool_names(
    policies: &[crate::policy::PolicySpec],
    tools: &BTreeSet<String>,
) -> Vec<String> {
    if tools.is_empty() {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for policy in policies {
        for param in policy.kind().params {
            let Some(patterns) = tool_parameter(param.key) else { continue };
            let value = policy.params.text(param.key);
            if value == param.default {
                continue;
            }
            for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let matches = |tool: &String| {
                    tool == name
                        || ((patterns || name.contains('*')) && crate::policy::wildcard_match(name, tool))
                };
                if tools.iter().any(matches) {
                    continue;
                }
                let close = crate::spec::closest_names(name, tools.iter().map(String::as_str), 3);
                let hint = if close.is_empty() {
                    format!("the inputs' tools: {}", listed(tools.iter().map(String::as_str), 8))
                } else {
                    format!("did you mean {}?", listed(close.into_iter(), 3))
                };
                let compared = if patterns { "" } else { " (names are compared exactly)" };
                warnings.push(format!(
                    "policy `{}`: `{}` names the tool `{name}`, which no tool of the inputs is \
                     called{compared}; {hint}",
                    policy.as_str(),
                    param.key
                ));
            }
        }
    }
    warnings
}

/// Up to `n` names, quoted and comma-separated, with how many more there are.
fn listed<'a>(names: impl Iterator<Item = &'a str>, n: usize) -> String {
    let names: Vec<&str> = names.collect();
    let shown: Vec<String> = names.iter().take(n).map(|t| format!("`{t}`")).collect();
    match names.len().saturating_sub(n) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// The settings line that names `--harness-compaction`, when it applies: when some input was
/// read by the format of an agent that compacts by itself ([`crate::harness::agent_policy`]), whose
/// recorded compactions the mode keeps, moves or drops; it also says what the mode does with the
/// clearings of tool results or thinking the inputs recorded, when they hold any
/// ([`crate::harness::Harness::applies_clearings`]). `None` otherwise, where every mode gives
/// the same numbers.
pub(super) fn harness_line(
    mode: crate::harness::HarnessCompaction,
    inputs: &[crate::result::InputFile],
) -> Option<String> {
    use crate::harness::{HarnessCompaction, agent_policy};
    let agents: BTreeSet<(&str, &str)> = inputs
        .iter()
        .filter_map(|i| i.format.as_deref())
        .filter_map(|f| agent_policy(f).map(|p| (f, p)))
        .collect();
    if agents.is_empty() {
        return None;
    }
    let what = match mode {
        HarnessCompaction::Simulated => {
            let applied: Vec<String> = agents.iter().map(|(f, p)| format!("{p} on {f} logs")).collect();
            format!(
                "each policy's replay drops the compactions the logs recorded and applies the agent's own \
                 trigger to its context ({})",
                applied.join(", ")
            )
        }
        HarnessCompaction::Recorded => {
            "the compactions the logs recorded are kept where they were in each policy's replay".to_owned()
        }
        HarnessCompaction::Off => {
            "the compactions the logs recorded are dropped in each policy's replay".to_owned()
        }
    };
    let clearings: usize = inputs.iter().map(|i| i.clearings).sum();
    let cleared = match mode {
        _ if clearings == 0 => String::new(),
        HarnessCompaction::Simulated => format!(
            " The {clearings} clearing(s) of tool results or thinking the logs recorded (Claude Code's microcompact, \
             Anthropic's context editing) are kept where they were, not simulated: microcompact's \
             trigger is not documented, and context editing's settings are not in the logs."
        ),
        HarnessCompaction::Recorded => format!(
            " So are the {clearings} clearing(s) of tool results or thinking the logs recorded (Claude Code's microcompact, \
             Anthropic's context editing)."
        ),
        HarnessCompaction::Off => format!(
            " So are the {clearings} clearing(s) of tool results or thinking the logs recorded (Claude Code's microcompact, \
             Anthropic's context editing): \
             the results and thinking are sent whole, but for the sessions as recorded."
        ),
    };
    Some(format!("Harness compaction: {} (--harness-compaction): {what}.{cleared}", mode.name()))
}

/// `sections` with `line` (a [`harness_line`]) put after the first section's settings line (the
/// one that names the cache TTL), or at the end of its text.
pub(super) fn with_settings_line(
    mut sections: Vec<export::analysis::Section>,
    line: Option<String>,
) -> Vec<export::analysis::Section> {
    if let (Some(first), Some(line)) = (sections.first_mut(), line) {
        let at = first.text.iter().position(|l| l.contains("cache TTL")).map_or(first.text.len(), |i| i + 1);
        first.text.insert(at, line);
    }
    sections
}

/// A progress bar over `files` files on stderr when it is a terminal; hidden otherwise.
pub(super) fn progress_bar(files: usize, message: &'static str) -> indicatif::ProgressBar {
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

/// A spinner saying `message` on stderr while a phase with no count of its own runs (the report's
/// charts), when stderr is a terminal; hidden otherwise.
pub(super) fn spinner(message: &'static str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// Adds a file's replayed conversations to a comparison, in file order.
pub(super) fn add_replayed(sum: &mut analysis::compare::Sum<'_>, replayed: Vec<analysis::compare::Replayed>) {
    for conversation in replayed {
        sum.add(conversation);
    }
}

/// Every conversation of `file` replayed under `sources` (in parallel), in file order: what a
/// comparison adds up ([`analysis::compare::add_up`]).
pub(super) fn replay_file(
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
pub(super) fn csv_lines(output: &Output, header: &[u8]) -> Result<export::InOrder<export::Streamed>> {
    let mut out = output.stream()?;
    out.write_all(header)?;
    Ok(export::InOrder::new(out))
}

/// Puts the lines of `runs` as part `index` of `lines`. Every file puts a part, an empty one when
/// its lines cannot be rendered (the error is returned, to be reported after the pass), so the
/// parts after it are written.
pub(super) fn put_timeline_lines<'r, W: Write>(
    lines: &export::InOrder<W>,
    index: usize,
    runs: impl Iterator<Item = &'r crate::result::Run>,
) -> std::result::Result<(), csv::Error> {
    let parts: Vec<_> = runs.map(|r| (&r.summary, r.rows.as_slice())).collect();
    lines.put_rendered(index, export::columns::timeline_csv_rows(&parts))
}
