//! The exact counters agree on every text a replay of the shared corpus counts (skipped when the
//! corpus is absent): the default `tiktoken` crate against tiktoken-rs, OpenAI's vendored core, for
//! o200k and cl100k. This is what lets the faster third-party port be the default
//! (`../shared/design/TOKENIZERS.md` §2 records earlier versions of it that diverged on newlines, punctuation and slashes).
//! tiktoken-rs is built only with its Cargo feature: `.ci/run` runs this file with
//! `--features all-counters`; without it, `--counter tiktoken-rs` is refused with the feature named.

#[cfg(feature = "counter-tiktoken-rs")]
#[path = "../../benches/common/mod.rs"]
mod common;

#[cfg(feature = "counter-tiktoken-rs")]
use ctxbudget::tokens::{Backend, Tokenizer, longest_whitespace_run};
#[cfg(feature = "counter-tiktoken-rs")]
use rayon::prelude::*;

#[cfg(not(feature = "counter-tiktoken-rs"))]
#[test]
fn a_counter_that_is_not_built_is_refused_with_the_feature_that_builds_it() {
    let out = assert_cmd::Command::cargo_bin("ctxbudget")
        .unwrap()
        .args(["replay", "traces", "--counter", "tiktoken-rs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("--features counter-tiktoken-rs"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[cfg(feature = "counter-tiktoken-rs")]
#[test]
fn every_backend_counts_every_replayed_corpus_text_like_tiktoken_rs() {
    let Some(corpus) = common::corpus() else { return };
    let texts = common::replayed_texts(&corpus, 256);
    // Thousands of texts of every kind the formats produce; a handful would prove little.
    assert!(texts.len() > 5_000, "only {} texts", texts.len());
    // Texts with a whitespace run tiktoken-rs is never given would be compared with themselves.
    let guarded = texts.iter().filter(|t| longest_whitespace_run(t) >= 100_000).count();
    for tokenizer in [Tokenizer::O200k, Tokenizer::Cl100k] {
        let reference = tokenizer.counter_with(Backend::TiktokenRs);
        for backend in Backend::ALL.into_iter().filter(|b| *b != Backend::TiktokenRs) {
            let counter = tokenizer.counter_with(backend);
            let mismatches: Vec<String> = texts
                .par_iter()
                .filter_map(|t| {
                    let (want, got) = (reference.count(t), counter.count(t));
                    (want != got)
                        .then(|| format!("{want} vs {got}: {:?}", t.chars().take(80).collect::<String>()))
                })
                .collect();
            let bytes: usize = texts.iter().map(|t| t.len()).sum();
            println!(
                "{tokenizer} {backend}: {} texts, {bytes} bytes, {} mismatches, {guarded} guarded",
                texts.len(),
                mismatches.len()
            );
            assert!(
                mismatches.is_empty(),
                "{tokenizer} {backend} differs from tiktoken-rs:\n{}",
                mismatches.join("\n")
            );
        }
    }
}
