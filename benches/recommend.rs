//! Recommend: the grid of `ctxbudget recommend` (8 policies × 32 thresholds, priced with the
//! prompt cache) on the shared corpus, measured with a fresh meter each time (counting included,
//! as a command runs), against one replay of the same corpus (the default policies at 256 bytes,
//! measured the same way). The goal of issue 25: the grid costs at most 1.5× the replay.

#[path = "common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ctxbudget::analysis::recommend::{RecommendSettings, recommend};
use ctxbudget::analysis::sweep::parse_thresholds;
use ctxbudget::input;
use ctxbudget::measure::MeasuredConversation;
use ctxbudget::pipeline::{Job, replay_files};

fn grid(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let found = input::discover(&[corpus]);
    let settings = RecommendSettings {
        policies: common::specs(&common::SWEEP_POLICIES),
        thresholds: parse_thresholds(common::SWEEP_THRESHOLDS).expect("a valid threshold list"),
        cache: ctxbudget::CacheModel::default(),
        window: 200_000,
        max_reuse: None,
        top_tools: 0,
    };
    let mut group = c.benchmark_group("recommend");
    group.sample_size(10);
    group.throughput(Throughput::Elements(found.files.len() as u64));
    group.bench_function("one replay", |b| {
        b.iter(|| {
            let meter = common::default_meter();
            let job = Job { thresholds: vec![256], policies: common::default_policies(), ..Job::default() };
            replay_files(&found, &job, &meter, &|| {}).len()
        })
    });
    group.bench_function("grid 8x32", |b| {
        b.iter(|| {
            let meter = common::default_meter();
            let files = ctxbudget::pipeline::measure_files(&found, &Job::default(), &meter, &|| {});
            let conversations: Vec<&MeasuredConversation> =
                files.iter().flat_map(|f| &f.conversations).collect();
            recommend(&conversations, &settings, &meter).candidates.len()
        })
    });
    group.finish();
}

criterion_group!(benches, grid);
criterion_main!(benches);
