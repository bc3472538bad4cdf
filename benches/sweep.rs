//! Sweep: `ctxbudget sweep`'s threshold sweep (32 thresholds, no per-tool part) under each of
//! eight policies on the measured corpus, against the one replay it is compared with in
//! docs/performance.md ("The latest run, in short"); throughput in conversation replays asked for
//! (thresholds × conversations).

#[path = "common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ctxbudget::analysis::sweep::{DEFAULT_TOLERANCE, SweepSettings, parse_thresholds, sweep};
use ctxbudget::measure::MeasuredConversation;

fn sweeps(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let meter = common::default_meter();
    let measured = common::measured(&corpus, &meter);
    let conversations: Vec<&MeasuredConversation> = measured.iter().collect();
    let thresholds = parse_thresholds(common::SWEEP_THRESHOLDS).expect("a valid threshold list");
    let mut group = c.benchmark_group("sweep");
    group.sample_size(10);
    group.throughput(Throughput::Elements((conversations.len() * thresholds.len()) as u64));
    for spec in common::specs(&common::SWEEP_POLICIES) {
        let settings = SweepSettings {
            thresholds: thresholds.clone(),
            policy: spec,
            tolerance: DEFAULT_TOLERANCE,
            top_tools: 0,
            cache: Default::default(),
        };
        group.bench_function(settings.policy.as_str().to_owned(), |b| {
            b.iter(|| sweep(&conversations, &settings, &meter).rows.len())
        });
    }
    group.finish();
}

criterion_group!(benches, sweeps);
criterion_main!(benches);
