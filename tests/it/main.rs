//! The integration tests, as one test binary (`cargo test --release --test it`): black-box runs of
//! the `ctxbudget` binary, the fixtures and the shared corpus through the library, snapshots and
//! property tests. One binary links the tokenizer tables once, where one binary per file linked
//! them some twenty times over (build time and `target/` size); filter a module with
//! `cargo test --release --test it cli::`.
//!
//! Layout: `common` holds the helpers (the binary, the fixtures, the corpus); `snapshots/` holds
//! insta's files, named `it__<module>__<name>.snap`; `<module>.proptest-regressions` beside a
//! module holds its proptest seeds. Fixtures stay in `tests/fixtures/`. `tests/arena.rs` is the one
//! test kept in a binary of its own: it reads the process-wide arena counters, which the table
//! builds of the tests here would move.

// `counters` includes the benchmarks' helpers (`benches/common/mod.rs`), which include `common`
// again for the corpus's location: the same file as two modules, on purpose.
#![allow(clippy::duplicate_mod)]

/// The binary's allocator, so that the tokenizer tables a test builds in-process are built as the
/// binary builds them (`counters` checks the counts of tables built in its arena).
#[global_allocator]
static ALLOCATOR: ctxbudget::arena::Allocator = ctxbudget::arena::Allocator;

mod common;

mod analysis;
mod bad_input;
mod cli;
mod cli_formats;
mod corpus_agent_formats;
mod corpus_api_formats;
mod corpus_calibration;
mod corpus_claude_code;
mod corpus_cli_formats;
mod count_cache;
mod counters;
mod determinism;
mod fixtures_agent_formats;
mod fixtures_api_formats;
mod fixtures_user_formats;
mod fuzz_regressions;
mod json_contract;
mod output_safety;
mod parallel;
mod policies;
mod properties;
mod readme;
mod report;
mod snapshots;
