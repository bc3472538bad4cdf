//! The application layer: runs a resolved [`Config`], prints warnings and errors to stderr once,
//! and decides the exit code. The only place (with `main.rs`) that prints.
//!
//! Exit codes: 0 when every input was read, 1 when some input failed (the others are still
//! reported), 2 for usage errors (bad flags, policy specs or output paths).

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::config::{Config, CountConfig, ReconcileConfig, ReplayConfig, SplitConfig, UsageError};
use crate::input;
use crate::pipeline::{Job, reconcile_files, replay_files};
use crate::policy::registry;
use crate::result::ReplayReport;
use crate::split::ToolOutput;
use crate::tokens::{Meter, Tokenizer, estimate};

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
    }
}

fn reconcile(c: ReconcileConfig) -> Result<ExitCode> {
    if let Err(e) = c.output.check(&c.paths) {
        return Err(UsageError(format!("{e:#}")).into());
    }
    let run = || -> Result<ExitCode> {
        let found = input::discover(&c.paths);
        let meter = Meter::new(c.tokenizer, c.tokenizer);
        let report = reconcile_files(&found, c.input_format, &meter, c.per_request, c.worst);
        let bytes = crate::export::reconcile::render(&report, c.format, c.per_request)?;
        c.output.write(&bytes)?;
        Ok(print_problems(&report.warnings, &report.errors))
    };
    with_jobs(c.jobs, run)
}

fn replay(mut c: ReplayConfig) -> Result<ExitCode> {
    if let Err(e) = c.output.check(&c.paths) {
        return Err(UsageError(format!("{e:#}")).into());
    }
    let transforms = std::mem::take(&mut c.transforms);
    let run = || -> Result<ExitCode> {
        let found = input::discover(&c.paths);
        let meter = Meter::new(c.tokenizer, c.decide_with).deciding(c.decide);
        let job = Job {
            thresholds: vec![c.threshold],
            policies: c.policies.clone(),
            resplit: c.resplit,
            transforms,
            input_format: c.input_format,
        };
        let outcomes = replay_files(&found, &job, &meter);
        let mut report = ReplayReport { errors: found.errors.clone(), ..Default::default() };
        for o in outcomes {
            report.warnings.extend(o.warnings.iter().map(|w| prefix_path(&o.path, w)));
            if let Some(e) = o.error {
                report.errors.push(e);
            }
            for run in o.runs {
                let mut summary = run.summary;
                if c.per_request {
                    summary.timeline = Some(run.rows);
                }
                report.runs.push(summary);
            }
        }
        let bytes = c.format.exporter().render(&report, c.per_request)?;
        c.output.write(&bytes)?;
        Ok(print_problems(&report.warnings, &report.errors))
    };
    with_jobs(c.jobs, run)
}

/// Prints warnings and errors to stderr once; the exit code says whether any input failed.
fn print_problems(warnings: &[String], errors: &[String]) -> ExitCode {
    for w in warnings {
        eprintln!("warning: {w}");
    }
    for e in errors {
        eprintln!("error: {e}");
    }
    ExitCode::from(if errors.is_empty() { EXIT_OK } else { EXIT_SOME_FAILED })
}

/// Runs `run` on a pool of `jobs` threads, or on the default pool.
fn with_jobs(jobs: Option<usize>, run: impl FnOnce() -> Result<ExitCode> + Send) -> Result<ExitCode> {
    match jobs {
        Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build()?.install(run),
        None => run(),
    }
}

/// Writes to stdout, reporting a closed pipe as an error (which `main` turns into exit 0).
fn stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Warnings that do not already name their file get its path in front.
fn prefix_path(path: &str, warning: &str) -> String {
    if warning.starts_with(path) { warning.to_owned() } else { format!("{path}: {warning}") }
}

fn read_input(file: Option<&Path>) -> Result<String> {
    let mut bytes = Vec::new();
    let name = match file {
        Some(p) => {
            bytes = std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?;
            p.display().to_string()
        }
        None => {
            std::io::stdin().read_to_end(&mut bytes).context("cannot read stdin")?;
            "stdin".to_owned()
        }
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
    for t in c.tokenizers.into_iter().filter(|t| *t != Tokenizer::Estimate) {
        let n = t.counter().count(&text);
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
