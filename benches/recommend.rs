//! Recommend: the grid of `ctxbudget recommend` (8 policies × 32 thresholds, priced with the
//! prompt cache) on the shared corpus, against one replay of the same corpus, each measured as its
//! command measures it, with a fresh meter each time (counting included):
//!
//! - `one replay`: what `ctxbudget replay` does, the default policies at 256 bytes, calibrated;
//! - `one pair`: what `ctxbudget recommend --policy keep-turns:n=3 --thresholds 256 --tools 0`
//!   does, one (policy, threshold) through the recommendation's own pass (calibrated, with the
//!   reuse index that prices the `--max-reuse` constraint);
//! - `grid 8x32`: the same pass with the eight policies of `benches/common` and `0..7936:+256`.
//!
//! The goal of issue 25: the grid costs at most 1.5× one replay. docs/recommend.md records the
//! ratios measured, against both.

#[path = "common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ctxbudget::analysis::recommend::RecommendSettings;
use ctxbudget::analysis::sweep::parse_thresholds;
use ctxbudget::input::{self, Discovered};
use ctxbudget::pipeline::Job;

/// The recommendation's settings for `policies` at `thresholds`, as the command's defaults give
/// them (no per-tool step, as `--tools 0`).
fn settings(policies: &[&str], thresholds: &str) -> RecommendSettings {
    RecommendSettings {
        policies: common::specs(policies),
        thresholds: parse_thresholds(thresholds).expect("a valid threshold list"),
        cache: ctxbudget::CacheModel::default(),
        window: 200_000,
        max_reuse: Some(ctxbudget::analysis::recommend::DEFAULT_MAX_REUSE),
        top_tools: 0,
    }
}

/// `ctxbudget recommend`'s pass over `found`: calibrated, with the reuse index, files held.
fn recommend(found: &Discovered, settings: &RecommendSettings) -> usize {
    let meter = common::default_meter();
    let job = Job { calibrate: true, reuse: true, ..Job::default() };
    ctxbudget::pass::recommend(found, &job, &meter, settings, false, &|| {}).output.candidates.len()
}

fn grid(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let found = input::discover(&[corpus]);
    let one_pair = settings(&["keep-turns:n=3"], "256");
    let grid = settings(&common::SWEEP_POLICIES, common::SWEEP_THRESHOLDS);
    let mut group = c.benchmark_group("recommend");
    group.sample_size(10);
    group.throughput(Throughput::Elements(found.files.len() as u64));
    group.bench_function("one replay", |b| {
        b.iter(|| {
            let meter = common::default_meter();
            let job = Job {
                thresholds: vec![256],
                policies: common::default_policies(),
                calibrate: true,
                ..Job::default()
            };
            ctxbudget::pass::replay(&found, &job, &meter, true, &|| {}, |_, f| f).output.len()
        })
    });
    group.bench_function("one pair", |b| b.iter(|| recommend(&found, &one_pair)));
    group.bench_function("grid 8x32", |b| b.iter(|| recommend(&found, &grid)));
    group.finish();
}

criterion_group!(benches, grid);
criterion_main!(benches);
