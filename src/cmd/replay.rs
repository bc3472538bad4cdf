//! `ctxbudget replay`: every file replayed under the chosen policies at one threshold
//! ([`crate::pass::replay`]), rendered and written. JSON and CSV go out as the files are replayed;
//! a per-request table or Markdown of inputs too large to hold ([`crate::pass::holds`]) is
//! written in two passes (the first sizes the columns); anything else is rendered from the whole
//! report.

use std::process::ExitCode;

use anyhow::Result;

use super::opening::{
    Opened, Target, corpus_command, csv_lines, keep_counts, progress_bar, put_timeline_lines,
    unknown_tool_names, writes, writes_as,
};
use super::print_problems;
use crate::config::ReplayConfig;
use crate::export::{self, Output};
use crate::input::{self, Discovered};
use crate::pass::{self, Walked};
use crate::pipeline::Job;
use crate::result::{InputFile, ReplayReport, RequestRow, Run, RunSummary};
use crate::tokens::Meter;

pub(super) fn run(c: ReplayConfig) -> Result<ExitCode> {
    corpus_command(Target::Output(&c.output), &c.input.source, c.input.meter(), |opened| {
        let Opened { found, mut meter, .. } = opened;
        let job = Job { thresholds: vec![c.threshold], policies: c.policies.clone(), ..c.input.job() };
        let bar = progress_bar(found.files.len(), "replaying");
        // JSON and CSV are written as the files are replayed (each file's part rendered by the
        // worker that replayed it, not all at the end on one thread).
        let streamed = matches!(c.format, export::ExportFormat::Csv | export::ExportFormat::Json);
        let twice = match c.format.timeline_parts() {
            Some(parts) if c.per_request && !crate::pass::holds(&found, c.low_memory) => Some(parts),
            _ => None,
        };
        let code = if streamed {
            let code = replay_as_it_goes(&c, &found, &job, &meter, &|| bar.inc(1))?;
            bar.finish_and_clear();
            code
        } else if let Some(parts) = twice {
            bar.set_length(2 * found.files.len() as u64);
            let code = replay_twice(&c, &found, &job, &meter, &*parts, &|| bar.inc(1))?;
            bar.finish_and_clear();
            code
        } else {
            let (mut report, read) = replay_report(&c, &found, &job, &meter, &|| bar.inc(1));
            bar.finish_and_clear();
            if writes_as(&c.output, c.format, read, &mut report.errors) {
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
    let rows = c.per_request;
    let Walked { output, read, errors, warnings, tools, .. } =
        pass::replay(found, job, meter, rows, done, |_, file| file.runs);
    let mut report = ReplayReport { errors, warnings, ..Default::default() };
    for run in output.into_iter().flatten() {
        let mut summary = run.summary;
        if rows {
            summary.timeline = Some(run.rows);
        }
        report.runs.push(summary);
    }
    report.warnings.extend(unknown_tool_names(&c.policies, &tools));
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
    let rows = c.per_request;
    if c.format == export::ExportFormat::Json {
        let parts = export::InOrder::new(export::json::JsonRuns::new(c.output.stream()?)?);
        let walked = pass::replay(found, job, meter, rows, done, |index, file| {
            let runs: Vec<_> = file
                .runs
                .into_iter()
                .map(|r| RunSummary { timeline: rows.then_some(r.rows), ..r.summary })
                .collect();
            let rendered = parts.put_rendered(index, export::json::runs_part(&runs)).map_err(Into::into);
            (input_of(&file.path, file.format, &runs), rendered)
        });
        let (rest, read) = problems_of(c, walked)?;
        let out = parts.finish(found.files.len())?.finish(&rest)?;
        let ReplayReport { warnings, mut errors, .. } = rest;
        // Dropped unfinished, a file's temporary copy is removed and the file left as it is.
        if writes(Some(&c.output), read, &mut errors) {
            out.finish()?;
        }
        Ok(print_problems(&warnings, &errors))
    } else {
        // CSV: one line per request (timeline.csv's) or one per run.
        let header = if rows { export::columns::timeline_csv_header()? } else { export::csv::runs_header()? };
        let lines = csv_lines(&c.output, &header)?;
        let walked = pass::replay(found, job, meter, rows, done, |index, file| {
            let summaries: Vec<_> = file.runs.iter().map(|r| r.summary.clone()).collect();
            let rendered = if rows {
                put_timeline_lines(&lines, index, file.runs.iter()).map_err(Into::into)
            } else {
                lines.put_rendered(index, export::csv::runs_rows(&summaries))
            };
            (input_of(&file.path, file.format, &summaries), rendered)
        });
        let (ReplayReport { warnings, mut errors, .. }, read) = problems_of(c, walked)?;
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
    let mut first = timeline_first_pass(&c.policies, found, job, meter, done);
    if !writes_as(&c.output, c.format, first.read, &mut first.report.errors) {
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
    held: Vec<Option<Vec<Run>>>,
}

/// The runs of a replayed file, each with its rows.
fn runs_of(runs: &[Run]) -> Vec<(&RunSummary, &[RequestRow])> {
    runs.iter().map(|r| (&r.summary, r.rows.as_slice())).collect()
}

fn timeline_first_pass(
    policies: &[crate::policy::PolicySpec],
    found: &Discovered,
    job: &Job<'_>,
    meter: &Meter,
    done: &(dyn Fn() + Sync),
) -> TimelinePass {
    use export::columns::{ColumnStats, TIMELINE_HEADERS, timeline_stats};
    let walked = pass::replay(found, job, meter, true, done, |index, file| {
        let stats = timeline_stats(&runs_of(&file.runs));
        if input::rereadable(&found.files[index]) {
            (stats, file.runs.into_iter().map(|r| r.summary).collect(), None)
        } else {
            (stats, file.runs.iter().map(|r| r.summary.clone()).collect(), Some(file.runs))
        }
    });
    let Walked { output, read, errors, warnings, tools, .. } = walked;
    let mut first = TimelinePass {
        stats: ColumnStats::new(&TIMELINE_HEADERS),
        files: Vec::with_capacity(output.len()),
        report: ReplayReport { errors, warnings, ..Default::default() },
        read,
        held: Vec::with_capacity(output.len()),
    };
    for (stats, summaries, held) in output {
        first.stats.merge(&stats);
        first.files.push(stats);
        first.held.push(held);
        first.report.runs.extend::<Vec<RunSummary>>(summaries);
    }
    first.report.warnings.extend(unknown_tool_names(policies, &tools));
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
    let mut places = Vec::new();
    for (index, kept) in held.iter().enumerate() {
        match kept {
            Some(runs) => {
                let mut part = Vec::new();
                export::write_timeline_rows(parts, &stats, &runs_of(runs), &mut part, |_| ())
                    .expect("writing to a Vec cannot fail");
                rows.put(index, part);
                done();
            }
            None => places.push(index),
        }
    }
    drop(held);
    let again = pass::again(found, places.iter().copied());
    let changed = pass::replay(&again, job, meter, true, done, |k, file| {
        let index = places[k];
        let mut part = Vec::new();
        let mut drawn = export::columns::ColumnStats::new(&export::columns::TIMELINE_HEADERS);
        export::write_timeline_rows(parts, &stats, &runs_of(&file.runs), &mut part, |cells| drawn.add(cells))
            .expect("writing to a Vec cannot fail");
        rows.put(index, part);
        (drawn != files[index]).then(|| {
            format!(
                "{}: read differently the second time (changed while the replay read it?): its rows are \
                 the second read's and may not line up",
                file.path
            )
        })
    });
    report.warnings.extend(changed.output.into_iter().flatten());
    let mut out = rows.finish(found.files.len())?;
    parts.tail(&stats, &report, &mut out)?;
    out.finish()?;
    Ok(report)
}

/// The file `path` as the JSON lists it among its inputs: its conversations and requests, from its
/// runs (each conversation counted once, whatever the policies and thresholds).
fn input_of(path: &str, format: Option<&str>, runs: &[RunSummary]) -> InputFile {
    crate::result::input_file(path, format, runs.iter().map(|r| (r.conversation.as_str(), r.requests)))
}

/// The report of files replayed as they went, without its runs (written already): the inputs,
/// the settings, the warnings (the search's, each file's prefixed with it, then those of tool
/// names no input has) and errors; and how many files were read. The first part that could not
/// be rendered, if any, instead.
fn problems_of(
    c: &ReplayConfig,
    walked: Walked<Vec<(InputFile, Result<()>)>>,
) -> Result<(ReplayReport, usize)> {
    let Walked { output, read, errors, warnings, tools, .. } = walked;
    let settings = crate::config::settings::replay(c);
    let mut rest = ReplayReport { warnings, errors, settings, ..Default::default() };
    for (input, rendered) in output {
        rendered?;
        rest.inputs.push(input);
    }
    rest.warnings.extend(unknown_tool_names(&c.policies, &tools));
    Ok((rest, read))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use clap::Parser;
    use std::path::Path;

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
            let meter = c.input.meter();
            let job = Job {
                thresholds: vec![c.threshold],
                policies: c.policies.clone(),
                resplit: false,
                transforms: &[],
                overhead: 0,
                input_format: None,
                calibrate: false,
                reuse: false,
                harness_compaction: Default::default(),
            };
            let first = timeline_first_pass(&c.policies, &found, &job, &meter, &|| ());
            if changed {
                let mut text = std::fs::read_to_string(&session).unwrap();
                text.push_str("{\"type\": \"request\"}\n");
                std::fs::write(&session, text).unwrap();
            }
            let table = Output::File(out.join("table.txt"));
            let parts = export::ExportFormat::Table(Default::default()).timeline_parts().unwrap();
            let report = timeline_second_pass(&table, &found, &job, &meter, &*parts, first, &|| ()).unwrap();
            let named =
                report.warnings.iter().any(|w| w.contains("session.jsonl: read differently the second time"));
            assert_eq!(named, changed, "{:?}", report.warnings);
            assert!(std::fs::read_to_string(out.join("table.txt")).unwrap().contains("Totals per policy"));
        }
    }
}
