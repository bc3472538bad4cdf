//! `ctxbudget report`: the HTML report directory. One pass over the corpus compares, calibrates
//! and sweeps each file as it is measured and writes its rows to timeline.csv; then the sweep is
//! finished ([`crate::pass::FirstRead::finish`]), the charts and pages built, and the new report moved
//! in over the old one. Also the checks of the report directory made by the shared opening.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use super::opening::{
    Loaded, Opened, Target, add_replayed, check_cache_found, corpus_command, keep_counts, load_found_each,
    progress_bar, put_timeline_lines, replay_file, writes,
};
use super::{print_problems, stdout};
use crate::config::{ReportConfig, SourceConfig, UsageError};
use crate::input::{self, Discovered};
use crate::measure::MeasuredConversation;
use crate::pass::{Pass, SweepPart, SweepPass};
use crate::pipeline::{InOrderFold, MeasuredFile};
use crate::tokens::Meter;
use crate::{analysis, export};

/// Refuses a report directory that overlaps an input path (`-`: what standard input reads), before
/// anything is read or written: a refused report leaves nothing behind among the inputs.
pub(super) fn check_dir(out: &Path, inputs: &[PathBuf]) -> Result<()> {
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
pub(super) fn check_owned(out: &Path) -> Result<()> {
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
/// [`check_dir`] sees only the paths given), and a `--count-cache` file that is one of
/// them (`super::opening`). A directory not created yet holds nothing; one that exists costs a
/// `canonicalize` per file found.
pub(super) fn check_found(out: &Path, source: &SourceConfig, found: &Discovered) -> Result<()> {
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
pub(super) fn create_dir(out: &Path) -> Result<Vec<PathBuf>> {
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

/// Removes the folders [`create_dir`] created for a report that is not written, innermost
/// first, each only while it is empty (best effort: a folder something else wrote into meanwhile
/// is left, and so are those around it).
fn remove_created(created: &[PathBuf]) {
    for d in created.iter().rev() {
        if std::fs::remove_dir(d).is_err() {
            return;
        }
    }
}

pub(super) fn run(c: ReportConfig) -> Result<ExitCode> {
    let target = Target::ReportDir { out: &c.out, force: c.force };
    corpus_command(target, &c.input.source, c.input.meter(), |opened| {
        let Opened { found, meter, created } = opened;
        // Nothing in the directory is replaced before every file has been read, and nothing at
        // all when none could be (`writes`).
        export::remove_leftovers(&c.out, &[crate::chart::DIR]);
        let mut staged = export::staged::Staged::create(&c.out, &[crate::chart::DIR])?;
        let mut timeline_file = staged.file(crate::report::TIMELINE_CSV)?;
        timeline_file.write_all(&export::columns::timeline_csv_header()?)?;
        let policies = analysis::compare::with_baseline(&c.compare.policies);
        let sources = analysis::compare::sources(&policies);
        let pass = ReportPass {
            c: &c,
            timeline_csv: export::InOrder::new(timeline_file),
            sweep: SweepPass::new(&found, &c.sweep, c.low_memory),
            sources: &sources,
            compared: InOrderFold::new(analysis::compare::Sum::new(&sources), add_replayed),
            estimators: analysis::calibration::default_estimators(),
            choice: crate::report::TimelineChoice::new(c.timelines),
        };
        let mut loaded = load_found_each(&c.input, &found, meter, "measuring", |index, file, meter| {
            pass.file(index, file, meter)
        });
        loaded.check_tool_names(&c.compare.policies);
        let ReportPass { timeline_csv, sweep, compared, estimators, choice, .. } = pass;
        let Loaded { meter, files, read, mut errors, mut warnings, inputs, .. } = loaded;
        let gathered = Gathered::of(files)?;
        if !writes(None, read, &mut errors) {
            // Dropped unfinished, timeline.csv's temporary copy is removed.
            drop(timeline_csv);
            drop(staged);
            remove_created(&created);
            return Ok(print_problems(&warnings, &errors));
        }
        // A write error already names the file.
        let timeline_file = timeline_csv.finish(found.files.len())?;
        let timelines = gathered.timelines(choice);
        let comparison = compared.finish().finish(&c.compare);
        let (recommendation, _) = analysis::recommend::finish(&gathered.grids, &c.recommend);
        let calibration = analysis::calibration::calibrate_samples(
            &gathered.samples,
            &estimators,
            c.input.source.tokenizer.name(),
        );
        let bar = progress_bar(0, "per tool");
        let progress = |step| super::sweep::progress_step(&bar, step);
        let first = sweep.finish(gathered.parts);
        let sweep = first.finish(&found, &c.input.job(), &meter, &mut warnings, &progress);
        bar.finish_and_clear();
        let mut meter = meter;
        // Nothing is counted after the sweep: the counts are kept, and the meter's memory given
        // back, before the report is built.
        keep_counts(c.input.source.count_cache.as_deref(), &mut meter);
        drop(meter);
        let input = crate::report::ReportInput {
            version: env!("CARGO_PKG_VERSION"),
            paths: c.input.source.paths.iter().map(|p| p.display().to_string()).collect(),
            files: gathered.shown,
            settings: report_settings(&c),
            sweep: &sweep,
            comparison: &comparison,
            recommendation: &recommendation,
            calibration: &calibration,
            fidelity: gathered.fidelity.calibrated(),
            calibration_methods: gathered.fidelity.methods,
            provider_defaults: gathered.fidelity.provider_defaults,
            warnings: &warnings,
            errors: &errors,
            timelines: c.timelines,
        };
        let drawing = super::opening::spinner("drawing the charts");
        let files = crate::report::build(&input, timelines);
        drawing.finish_and_clear();
        let files = files?;
        timeline_file.finish()?;
        let envelope = crate::result::Envelope {
            inputs,
            settings: crate::config::settings::report(&c),
            errors: errors.clone(),
            warnings: warnings.clone(),
        };
        write_report(staged, &crate::result::Enveloped { result: &input, envelope }, &files, &c.out)?;
        stdout(&summary(&input, &files, &c.out))?;
        Ok(print_problems(&warnings, &errors))
    })
}

/// What the report's pass shares between the files: each file is compared, calibrated and swept
/// as soon as it is measured, its comparison added up as soon as the files before it are
/// (`InOrderFold`). Its runs' rows are written to timeline.csv at once (in input order, through a
/// temporary file renamed into place with the other files), and kept only for the conversations
/// that may get a chart (`TimelineChoice`); the file itself is kept for the sweep's per-tool pass
/// only when the inputs are small enough to hold ([`SweepPass`]).
struct ReportPass<'a, F> {
    c: &'a ReportConfig,
    timeline_csv: export::InOrder<export::staged::StagedFile>,
    sweep: SweepPass<'a>,
    sources: &'a [&'a dyn analysis::compare::PolicySource],
    compared: InOrderFold<Vec<analysis::compare::Replayed>, analysis::compare::Sum<'a>, F>,
    estimators: [&'static dyn analysis::calibration::Estimator; 4],
    choice: crate::report::TimelineChoice,
}

/// What the report keeps of one file.
struct FilePart {
    shown: crate::report::InputFile,
    rendered: std::result::Result<(), csv::Error>,
    samples: Vec<analysis::calibration::Sample>,
    fidelity: Fidelity,
    grids: Vec<analysis::recommend::ConversationGrid>,
    sweep: SweepPart,
}

impl<'a, F: Fn(&mut analysis::compare::Sum<'a>, Vec<analysis::compare::Replayed>)> ReportPass<'a, F> {
    /// File `index`'s part: its rows written, its comparison added up, its samples and sweep part.
    fn file(&self, index: usize, file: MeasuredFile, meter: &Meter) -> FilePart {
        let shown = crate::report::InputFile {
            path: file.path.clone(),
            format: file.format.map(str::to_owned),
            conversations: file.conversations.len(),
        };
        let mut replayed = replay_file(&file, self.sources, &self.c.compare, meter, true);
        let runs: Vec<_> = replayed.iter_mut().map(|r| r.take_runs()).collect();
        let rendered = put_timeline_lines(&self.timeline_csv, index, runs.iter().flat_map(|c| &c.runs));
        for (k, conversation) in runs.into_iter().enumerate() {
            self.choice.offer((index, k), conversation);
        }
        let conversations: Vec<&MeasuredConversation> = file.conversations.iter().collect();
        let samples = analysis::calibration::samples(&conversations, &self.estimators);
        let fidelity = Fidelity::of(&conversations, file.format);
        self.compared.put(index, replayed);
        let grids =
            conversations.iter().map(|c| analysis::recommend::grid_of(c, &self.c.recommend, meter)).collect();
        let sweep = self.sweep.file(index, file, meter);
        FilePart { shown, rendered, samples, fidelity, grids, sweep }
    }
}

/// Every file's part, gathered in input order.
struct Gathered {
    shown: Vec<crate::report::InputFile>,
    samples: Vec<analysis::calibration::Sample>,
    fidelity: Fidelity,
    grids: Vec<analysis::recommend::ConversationGrid>,
    parts: Vec<SweepPart>,
}

impl Gathered {
    /// The parts gathered, or the first file whose timeline rows could not be rendered.
    fn of(files: Vec<FilePart>) -> Result<Gathered> {
        let mut g = Gathered {
            shown: Vec::new(),
            samples: Vec::new(),
            fidelity: Fidelity::default(),
            grids: Vec::new(),
            parts: Vec::new(),
        };
        for f in files {
            f.rendered?;
            g.shown.push(f.shown);
            g.samples.extend(f.samples);
            g.fidelity.add(f.fidelity);
            g.grids.extend(f.grids);
            g.parts.push(f.sweep);
        }
        Ok(g)
    }

    /// The conversations `choice` kept for a chart, each at its place among all of them (from its
    /// file's and its own).
    fn timelines(&self, choice: crate::report::TimelineChoice) -> crate::report::Timelines {
        let mut first_of_file = Vec::with_capacity(self.shown.len());
        let mut conversations = 0;
        for f in &self.shown {
            first_of_file.push(conversations);
            conversations += f.conversations;
        }
        let seen = choice.seen();
        let kept =
            choice.into_kept().into_iter().map(|((file, k), runs)| (first_of_file[file] + k, runs)).collect();
        crate::report::Timelines { conversations, kept, seen }
    }
}

/// What `report` prints: its findings, then where the report is.
fn summary(
    input: &crate::report::ReportInput<'_>,
    files: &[crate::report::ReportFile],
    out: &Path,
) -> String {
    let mut summary = String::new();
    for line in crate::report::findings(input) {
        summary.push_str(&line);
        summary.push('\n');
    }
    summary.push_str(&format!(
        "wrote {} ({} files)\n",
        out.join(crate::report::INDEX).display(),
        files.len() + 3
    ));
    summary
}

/// Writes the rest of a report beside the old one (report.json: the report's input with the
/// envelope every command's JSON carries; prune-events.csv and `files`), then moves the new
/// report in, its index last ([`export::staged::Staged::move_in`]). Each file's errors name it
/// once (`cannot write REPORT/report.json: …`).
fn write_report(
    mut staged: export::staged::Staged,
    json_input: &crate::result::Enveloped<&crate::report::ReportInput<'_>>,
    files: &[crate::report::ReportFile],
    out: &Path,
) -> Result<()> {
    let mut json = staged.file(crate::report::REPORT_JSON)?;
    serde_json::to_writer_pretty(&mut json, json_input).map_err(std::io::Error::from)?;
    json.finish()?;
    let mut events = staged.file(crate::report::PRUNE_EVENTS_CSV)?;
    crate::report::write_prune_events(json_input.result, &mut events)?;
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
    /// Conversations of method `default` whose agent has no default: the provider's ratio alone.
    provider_defaults: usize,
}

impl Fidelity {
    /// The conversations of one file, read as `format`.
    fn of(conversations: &[&MeasuredConversation], format: Option<&str>) -> Fidelity {
        let mut f = Fidelity::default();
        let agent_has_default = crate::calibrate::agent_default(format.unwrap_or_default()).is_some();
        for m in conversations {
            f.pairs.extend(crate::calibrate::held_out(m, analysis::reconcile::MIN_CALIBRATED));
            *f.methods.entry(m.calibration.method.name().to_owned()).or_default() += 1;
            let method = m.calibration.method;
            f.provider_defaults +=
                usize::from(method == crate::calibrate::Method::Default && !agent_has_default);
        }
        f
    }

    fn add(&mut self, other: Fidelity) {
        self.pairs.extend(other.pairs);
        self.provider_defaults += other.provider_defaults;
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
        ("harness compaction (--harness-compaction)".into(), c.input.harness_compaction.name().into()),
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
