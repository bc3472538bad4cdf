//! Count: every distinct text a default replay of the shared corpus counts, by each exact counter
//! in each encoding, on one thread and on all; then the count cache (every text a hit) and
//! `Meter::measure` on a warm cache. Throughput in text bytes.
//!
//! The `tiktoken` crate keeps a per-thread cache of merged pieces, so after the first iteration
//! these are its warm figures; `benches/peers.sh` measures one cold pass in a fresh process.

#[path = "common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ctxbudget::tokens::{Backend, CountCache, Tokenizer};
use rayon::prelude::*;

fn count(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let texts = common::replayed_texts_with(&corpus, 256, common::default_policies());
    let bytes: u64 = texts.iter().map(|t| t.len() as u64).sum();
    let mut group = c.benchmark_group("count");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    for tokenizer in [Tokenizer::O200k, Tokenizer::Cl100k] {
        for backend in Backend::ALL.into_iter().filter(|b| b.is_built()) {
            let counter = tokenizer.counter_with(backend);
            counter.prepare();
            group.bench_function(format!("{tokenizer}/{backend}/1-thread"), |b| {
                b.iter(|| texts.iter().map(|t| counter.count(t)).sum::<u64>())
            });
            group.bench_function(format!("{tokenizer}/{backend}/all-threads"), |b| {
                b.iter(|| texts.par_iter().map(|t| counter.count(t)).sum::<u64>())
            });
        }
    }
    let cache = CountCache::default();
    for t in &texts {
        cache.get_or_count(t, |t| t.len() as u64);
    }
    group.bench_function("cache-hits/1-thread", |b| {
        b.iter(|| texts.iter().map(|t| cache.get_or_count(t, |_| unreachable!("cached"))).sum::<u64>())
    });
    group.bench_function("cache-hits/all-threads", |b| {
        b.iter(|| texts.par_iter().map(|t| cache.get_or_count(t, |_| unreachable!("cached"))).sum::<u64>())
    });
    let meter = common::default_meter();
    for t in &texts {
        meter.measure(t);
    }
    group.bench_function("measure-warm/1-thread", |b| {
        b.iter(|| texts.iter().map(|t| meter.measure(t).tokens).sum::<u64>())
    });
    group.finish();
}

criterion_group!(benches, count);
criterion_main!(benches);
