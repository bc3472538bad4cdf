//! Split: the seed's split of every tool output of the shared corpus (the automatic summary and
//! the split at the default threshold); throughput in output bytes.

#[path = "common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ctxbudget::input;
use ctxbudget::model::Item;
use ctxbudget::split::{ToolOutput, summary_of};

fn split(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let outputs: Vec<String> = input::discover(&[corpus])
        .files
        .iter()
        .filter_map(|p| input::load(p, None).ok())
        .flat_map(|t| t.conversations)
        .flat_map(|c| c.items)
        .filter_map(|i| match i {
            Item::ToolResult(r) => Some(r.output.full_text().into_owned()),
            _ => None,
        })
        .collect();
    let mut group = c.benchmark_group("split");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(outputs.iter().map(|o| o.len() as u64).sum()));
    group.bench_function("summary_of", |b| {
        b.iter(|| outputs.iter().map(|o| summary_of(o).len()).sum::<usize>())
    });
    group.bench_function("from_output_256", |b| {
        b.iter(|| outputs.iter().map(|o| ToolOutput::from_output(o, 256).summary.len()).sum::<usize>())
    });
    group.finish();
}

criterion_group!(benches, split);
criterion_main!(benches);
