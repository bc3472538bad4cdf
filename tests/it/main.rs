//! The integration tests, as one test binary (`cargo test --release --test it`): black-box runs of
//! the `ctxbudget` binary, the fixtures and the shared corpus through the library, snapshots and
//! property tests. One binary links the tokenizer tables once, where one binary per file linked
//! them some twenty times over (build time and `target/` size); filter a module with
//! `cargo test --release --test it cli::`.
//!
//! Layout: `common` holds the helpers (the binary, the fixtures, the corpus); `snapshots/` holds
//! insta's files, named `it__<module>__<name>.snap`; `<module>.proptest-regressions` beside a
//! module holds its proptest seeds. Fixtures stay in `tests/fixtures/`.

// `counters` includes the benchmarks' helpers (`benches/common/mod.rs`), which include `common`
// again for the corpus's location: the same file as two modules, on purpose.
#![allow(clippy::duplicate_mod)]

mod common;

mod analysis;
mod anchors;
mod bad_input;
mod cli;
mod cli_formats;
mod cli_mistakes;
mod compaction;
mod compaction_goose;
mod compaction_outputs;
mod compaction_uncached;
mod context_editing;
mod corpus_agent_formats;
mod corpus_api_formats;
mod corpus_calibration;
mod corpus_claude_code;
mod corpus_cli_formats;
mod corpus_transforms;
mod count_cache;
mod counters;
mod determinism;
mod fair_inputs;
mod fixtures_agent_formats;
mod fixtures_api_formats;
mod fixtures_local_formats;
mod fixtures_look_alike_formats;
mod fixtures_user_formats;
mod fuzz_regressions;
mod json_contract;
mod microcompact;
mod module_graph;
mod openai_images;
mod output_safety;
mod parallel;
mod policies;
mod prices;
mod properties;
mod provider;
mod readme;
mod recommend;
mod report;
mod reuse;
mod snapshots;
mod terminal_width;

/// The guard of `common::corpus_root`'s promise: a test that found the corpus by a path of its own
/// could skip itself under `CI`, so no module but `common` names the corpus's folder in code.
#[test]
fn every_corpus_test_finds_the_corpus_through_common() {
    // Split, so that this line does not name the folder itself.
    let folder = concat!("shared", "/corpus");
    // Every test target: this binary's modules and `tests/counters.rs`.
    let dir = common::root().join("tests");
    for file in common::files_under(&dir, &[".rs"]) {
        if file.ends_with("common.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            assert!(
                code.starts_with("//") || !code.contains(folder),
                "{}:{}: find the corpus with common::corpus or common::corpus_root",
                file.display(),
                n + 1
            );
        }
    }
}
