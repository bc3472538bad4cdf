//! Import: read, detect and parse every file of the shared corpus into the normalised model, per
//! corpus folder (one agent or wire format each) and all together; throughput in file bytes. And
//! the walk that finds those files (`input::discover`), in files found per second: it once asked
//! for every directory's canonical path, which read each component of the path as a link.

#[path = "common/mod.rs"]
mod common;

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ctxbudget::input;

fn import(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let files = common::files_with_sizes(&corpus);
    let mut groups: Vec<(String, Vec<(PathBuf, u64)>)> = Vec::new();
    for (path, size) in &files {
        let folder = path.strip_prefix(&corpus).ok().and_then(|p| p.iter().next());
        let folder = folder.map_or_else(|| "other".to_owned(), |f| f.to_string_lossy().into_owned());
        match groups.iter_mut().find(|(name, _)| *name == folder) {
            Some((_, list)) => list.push((path.clone(), *size)),
            None => groups.push((folder, vec![(path.clone(), *size)])),
        }
    }
    groups.push(("corpus".to_owned(), files));
    let mut group = c.benchmark_group("import");
    group.sample_size(10);
    for (name, files) in &groups {
        group.throughput(Throughput::Bytes(files.iter().map(|f| f.1).sum()));
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                for (path, _) in files {
                    // Files no format reads are part of a real walk too; their error is the result.
                    let _ = std::hint::black_box(input::load(path, None));
                }
            })
        });
    }
    group.finish();
}

fn discover(c: &mut Criterion) {
    let Some(corpus) = common::corpus() else { return };
    let found = input::discover(std::slice::from_ref(&corpus)).files.len();
    let mut group = c.benchmark_group("discover");
    group.throughput(Throughput::Elements(found as u64));
    group.bench_function("corpus", |b| {
        b.iter(|| std::hint::black_box(input::discover(std::slice::from_ref(&corpus))))
    });
    group.finish();
}

criterion_group!(benches, import, discover);
criterion_main!(benches);
