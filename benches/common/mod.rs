//! Helpers shared by the benchmarks, the speed harness (`examples/speed.rs`) and the differential
//! counter test (`tests/counters.rs`): where the shared corpus is, and every text a replay of it
//! counts. Included with `#[path]`, so each user compiles only what it calls.
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use ctxbudget::input;
use ctxbudget::pipeline::Job;
use ctxbudget::policy::{PolicySpec, registry};
use ctxbudget::tokens::{Backend, DecideWith, Meter, Recording, Tokenizer};

#[path = "../../tests/it/common.rs"]
mod tests_common;

/// The shared corpus beside the checkout, or `None` (after printing why) when it is absent.
pub fn corpus() -> Option<std::path::PathBuf> {
    tests_common::corpus("")
}

/// Every registered policy with its default parameters, in registry order.
pub fn every_policy() -> Vec<PolicySpec> {
    registry()
        .iter()
        .map(|k| PolicySpec::parse(k.name).unwrap_or_else(|e| panic!("registered policy `{}`: {e}", k.name)))
        .collect()
}

/// The policies `replay` runs by default.
pub fn default_policies() -> Vec<PolicySpec> {
    ctxbudget::config::policies(&[]).expect("the default policies parse")
}

/// Every distinct text that measuring the files under `dir` and replaying them under every
/// policy at `threshold` counts (tool outputs, summaries, messages, call arguments, placeholders),
/// sorted. Counted in o200k by tiktoken-rs where the `counter-tiktoken-rs` feature builds it, by the
/// default `tiktoken` crate otherwise; the counts are not kept.
pub fn replayed_texts(dir: &Path, threshold: usize) -> Vec<String> {
    replayed_texts_with(dir, threshold, every_policy())
}

/// [`replayed_texts`] under these policies only.
pub fn replayed_texts_with(dir: &Path, threshold: usize, policies: Vec<PolicySpec>) -> Vec<String> {
    let texts = Arc::new(Mutex::new(Vec::new()));
    let report = Recording::new(Tokenizer::O200k.counter_with(Backend::TiktokenRs), texts.clone());
    let decide = Tokenizer::Estimate.counter();
    let meter = Meter::with_counters(Box::new(report), decide).deciding(DecideWith::Anchor);
    let job = Job { thresholds: vec![threshold], policies, ..Job::default() };
    let found = input::discover(&[dir.to_owned()]);
    let runs = ctxbudget::pass::replay(&found, &job, &meter, true, &|| {}, |_, file| file.runs.len()).output;
    assert!(runs.iter().any(|&n| n > 0), "nothing replayed under {}", dir.display());
    let mut texts = std::mem::take(&mut *texts.lock().expect("no thread panicked while recording"));
    texts.sort_unstable();
    texts.dedup();
    texts
}

/// The eight policies of the sweep goal: the four defaults and four anchors (three of them
/// non-sticky, recomputed before every request).
pub const SWEEP_POLICIES: [&str; 8] = [
    "none",
    "keep-turns:n=3",
    "keep-results:n=5",
    "budget:max=100000,target=50000",
    "anthropic",
    "langchain",
    "swe-agent",
    "opencode",
];

/// The 32 thresholds of the sweep goal: 0 to 7,936 bytes in steps of 256.
pub const SWEEP_THRESHOLDS: &str = "0..7936:+256";

/// Parses policy specs that are known to be valid.
pub fn specs(specs: &[&str]) -> Vec<PolicySpec> {
    specs.iter().map(|s| PolicySpec::parse(s).unwrap_or_else(|e| panic!("{e}"))).collect()
}

/// The meter `ctxbudget replay --tokenizer o200k` uses: o200k reports, policies decide with their
/// anchors. Pinned to o200k (the default was o200k when docs/performance.md's timings were taken;
/// the command line's default is now `provider`) so the benches keep measuring what those say.
pub fn default_meter() -> Meter {
    Meter::with_backend(Tokenizer::O200k, Tokenizer::Estimate, Backend::default())
        .deciding(DecideWith::Anchor)
}

/// Every file under `dir` a directory walk finds, with its size in bytes.
pub fn files_with_sizes(dir: &Path) -> Vec<(std::path::PathBuf, u64)> {
    input::discover(&[dir.to_owned()])
        .files
        .into_iter()
        .map(|p| {
            let size = std::fs::metadata(&p).map_or(0, |m| m.len());
            (p, size)
        })
        .collect()
}

/// Every conversation under `dir`, measured with `meter` (files no format reads are left out).
pub fn measured(dir: &Path, meter: &Meter) -> Vec<ctxbudget::measure::MeasuredConversation> {
    ctxbudget::pipeline::measure_files(&input::discover(&[dir.to_owned()]), &Job::default(), meter, &|| {})
        .into_iter()
        .flat_map(|f| f.conversations)
        .collect()
}
