//! Replay: the engine alone on the measured corpus under the default policies and under
//! `langchain` (throughput in requests replayed; `langchain-first` on conversations no replay
//! has seen, so it includes working out each call's `repr` length once), and the whole replay of the corpus as `ctxbudget replay` runs it (find,
//! read, split, count every text with a fresh cache, replay the default policies; throughput in
//! corpus bytes).

#[path = "common/mod.rs"]
mod common;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use ctxbudget::input;
use ctxbudget::pipeline::Job;
use ctxbudget::replay::replay_summary;

fn replay(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let meter = common::default_meter();
    let conversations = common::measured(&corpus, &meter);
    // Copies never replayed: the first replay of a copy works out its calls' `repr` lengths.
    let unreplayed = conversations.clone();
    let policies = common::default_policies();
    let requests: usize = conversations.iter().map(|c| c.requests()).sum();
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    group.throughput(Throughput::Elements((requests * policies.len()) as u64));
    group.bench_function("engine/default-policies", |b| {
        b.iter(|| {
            let mut total = 0;
            for c in &conversations {
                for p in &policies {
                    total += replay_summary(c, 256, &mut *p.build(), &meter).summary.total_input_tokens;
                }
            }
            total
        })
    });
    // The anchor that counts per message (`count_tokens_approximately`), on its own.
    let langchain = common::specs(&["langchain", "langchain:trigger=20000"]);
    group.throughput(Throughput::Elements((requests * langchain.len()) as u64));
    group.bench_function("engine/langchain", |b| {
        b.iter(|| {
            let mut total = 0;
            for c in &conversations {
                for p in &langchain {
                    total += replay_summary(c, 256, &mut *p.build(), &meter).summary.total_input_tokens;
                }
            }
            total
        })
    });
    // The same on conversations no replay has seen: each call's `repr` length worked out too, as
    // the one replay of `ctxbudget replay --policy langchain` does (the copies are made and dropped
    // outside the timing).
    group.bench_function("engine/langchain-first", |b| {
        b.iter_batched_ref(
            || unreplayed.clone(),
            |conversations| {
                let mut total = 0;
                for c in conversations.iter() {
                    for p in &langchain {
                        total += replay_summary(c, 256, &mut *p.build(), &meter).summary.total_input_tokens;
                    }
                }
                total
            },
            BatchSize::PerIteration,
        )
    });
    let found = input::discover(std::slice::from_ref(&corpus));
    let bytes: u64 = common::files_with_sizes(&corpus).iter().map(|f| f.1).sum();
    let job = Job { thresholds: vec![256], policies, ..Job::default() };
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("whole/default-policies", |b| {
        b.iter(|| {
            ctxbudget::pass::replay(&found, &job, &common::default_meter(), false, &|| {}, |_, f| f)
                .output
                .len()
        })
    });
    group.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
