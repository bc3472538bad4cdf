//! The tests that need every counter built, as their own small test binary: `Cargo.toml` gives it
//! `required-features = ["all-counters"]`, so `cargo test --release` leaves it out and `.ci/run`
//! runs it with `cargo test --release --features all-counters --test counters`. Building with a
//! feature compiles the library and the binary again; as its own target it does not compile the
//! whole of `tests/it` again too (docs/development.md, "CI time and size").
//!
//! - The exact counters agree on every text a replay of the shared corpus counts (skipped when the
//!   corpus is absent): the default `tiktoken` crate (and bpe-openai, for pathological pieces)
//!   against tiktoken-rs, OpenAI's vendored core, for o200k and cl100k. This is what lets the faster
//!   third-party port be the default (`../shared/design/TOKENIZERS.md` §2 records earlier versions
//!   of it that diverged on newlines, punctuation and slashes).
//! - `--counter tiktoken-rs` gives the same replay of the corpus as the default counter.
//! - A count cache keeps each counter's counts apart.
//! - The guards on pathological texts: a text with a long run goes to bpe-openai, which agrees with
//!   both others; below tiktoken-rs's crash size the backends agree on long whitespace. The
//!   library's own unit tests need no counter feature (they inject the raw counters), so
//!   `cargo test --release` runs every one of them.
//!
//! Without the feature, `--counter tiktoken-rs` is refused with the feature named
//! (`tests/it/counters.rs`).

// The benchmarks' helpers include `tests/it/common.rs` again for the corpus's location: the same
// file as two modules, on purpose.
#![allow(clippy::duplicate_mod)]

#[path = "it/common.rs"]
mod common;

#[path = "../benches/common/mod.rs"]
mod bench_common;

use common::stdout_of as stdout;
use ctxbudget::counts::StoredCounts;
use ctxbudget::tokens::{Backend, Tokenizer, has_long_run, longest_whitespace_run};
use rayon::prelude::*;

#[test]
fn every_backend_counts_every_replayed_corpus_text_like_tiktoken_rs() {
    let Some(corpus) = bench_common::corpus() else { return };
    let texts = bench_common::replayed_texts(&corpus, 256);
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

#[test]
fn both_exact_counters_give_the_same_replay_of_the_corpus() {
    let Some(corpus) = common::corpus("") else { return };
    let corpus = corpus.to_str().unwrap();
    let run = |counter: &str| {
        stdout(&["replay", corpus, "--format", "json", "--tokenizer", "cl100k", "--counter", counter])
    };
    assert!(run("tiktoken") == run("tiktoken-rs"), "the counters disagree on the corpus");
}

#[test]
fn a_count_cache_keeps_each_counters_counts_apart() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("counts.ctxcounts");
    let cache_arg = cache.to_str().unwrap();
    let kept = || StoredCounts::decode(&std::fs::read(&cache).unwrap()).expect("a usable count cache");
    let replay = |counter: &str, extra: &[&str]| {
        stdout(&[&["replay", "traces", "--counter", counter, "--format", "json"][..], extra].concat())
    };
    let plain = replay("tiktoken", &[]);
    assert_eq!(replay("tiktoken", &["--count-cache", cache_arg]), plain);
    let before = kept();
    assert!(before.section("o200k/tiktoken").len() > 50, "the traces' texts are kept");
    assert!(before.section("o200k/tiktoken-rs").is_empty());
    // The same texts under the other counter: the same output, kept in a section of their own, the
    // first section untouched.
    let plain = replay("tiktoken-rs", &[]);
    assert_eq!(replay("tiktoken-rs", &["--count-cache", cache_arg]), plain);
    let after = kept();
    assert_eq!(after.section("o200k/tiktoken"), before.section("o200k/tiktoken"));
    assert_eq!(after.section("o200k/tiktoken-rs"), before.section("o200k/tiktoken"), "the same counts");
}

/// Each backend's own count of `text`, unguarded: the crates called directly, as the library's
/// raw counts are.
fn raw(tokenizer: Tokenizer, backend: Backend, text: &str) -> usize {
    let cl100k = tokenizer == Tokenizer::Cl100k;
    match backend {
        Backend::TiktokenRs if cl100k => tiktoken_rs::cl100k_base_singleton().encode_ordinary(text).len(),
        Backend::TiktokenRs => tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len(),
        Backend::Tiktoken => {
            let name = if cl100k { "cl100k_base" } else { "o200k_base" };
            tiktoken::get_encoding(name).unwrap().count(text)
        }
    }
}

/// bpe-openai's count of `text`: the linear counter texts with a long run go to.
fn linear(tokenizer: Tokenizer, text: &str) -> usize {
    let bpe =
        if tokenizer == Tokenizer::Cl100k { bpe_openai::cl100k_base() } else { bpe_openai::o200k_base() };
    bpe.count(text)
}

#[test]
fn pathological_texts_go_to_the_linear_counter_and_agree_with_both_others() {
    let letters: String = (0..30_000u32).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect();
    let base64: String = (0..30_000u32)
        .map(|i| {
            char::from(
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[(i * 13 % 64) as usize],
            )
        })
        .collect();
    let url = format!("https://example.com/{}?q=1&r=2", "path/segment-".repeat(1_500));
    let cjk = "日本語の文章".repeat(3_000);
    let punct = "-=".repeat(6_000);
    let spaces = format!("a{}b", " ".repeat(150_000));
    let mixed = format!("{}\n{}x", " ".repeat(120_000), "\t".repeat(3));
    // Long runs without whitespace but of mixed classes are cut into short pieces: the regular
    // counters get them, and agree with the linear one.
    let json = r#"{"id":"0a1b2c","text":"line\nnext\tcol","n":[1,2,3]},"#.repeat(1_000);
    for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
        for (text, long) in [(&letters, true), (&punct, true), (&cjk, true), (&spaces, true), (&mixed, true)]
            .into_iter()
            .chain([(&base64, false), (&url, false), (&json, false)])
        {
            assert_eq!(has_long_run(text), long, "{}", &text[..20]);
            let reference = raw(t, Backend::TiktokenRs, text);
            assert_eq!(linear(t, text), reference, "{t}: {}", &text[..20]);
            if long {
                assert_eq!(raw(t, Backend::Tiktoken, text), reference, "{t}");
            }
            assert_eq!(t.counter_with(Backend::Tiktoken).count(text) as usize, reference, "{t}");
        }
    }
    assert!(!has_long_run(&"word ".repeat(100_000)));
}

#[test]
fn backends_agree_on_long_whitespace_below_the_crash_size() {
    for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
        for text in [
            format!("a{}b", " ".repeat(150_000)),
            format!("{}\n{}x", " ".repeat(120_000), "\t".repeat(3)),
            "fn main() {\n    println!(\"日本語 <|endoftext|>\");\n}\n".repeat(50),
        ] {
            let reference = raw(t, Backend::TiktokenRs, &text);
            assert_eq!(raw(t, Backend::Tiktoken, &text), reference, "{t}");
            for b in Backend::ALL {
                assert_eq!(t.counter_with(b).count(&text) as usize, reference, "{t} {b}");
            }
        }
    }
}

#[test]
fn a_count_cache_names_the_tiktoken_rs_counter() {
    let counter = Tokenizer::Cl100k.counter_with(Backend::TiktokenRs);
    assert_eq!(counter.kept_as().as_deref(), Some("cl100k/tiktoken-rs"));
}
