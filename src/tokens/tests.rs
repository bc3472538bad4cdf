//! Unit tests of the tokenizers, the meter and the text sizes.

use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One token per byte under a chosen tokenizer and name, counting its counts and preparations.
struct Kept {
    tokenizer: Tokenizer,
    name: Option<&'static str>,
    counted: Arc<AtomicUsize>,
    prepared: Arc<AtomicUsize>,
}

impl Counter for Kept {
    fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }
    fn count(&self, text: &str) -> Tokens {
        self.counted.fetch_add(1, Ordering::SeqCst);
        text.len() as Tokens
    }
    fn prepare(&self) {
        self.prepared.fetch_add(1, Ordering::SeqCst);
    }
    fn kept_as(&self) -> Option<String> {
        self.name.map(str::to_owned)
    }
}

fn kept_meter(
    report: Option<&'static str>,
    decide: Tokenizer,
) -> (Meter, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (counted, prepared) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let counter = |tokenizer, name| {
        Box::new(Kept { tokenizer, name, counted: counted.clone(), prepared: prepared.clone() })
    };
    let meter = Meter::with_counters(counter(Tokenizer::O200k, report), counter(decide, Some("d")));
    (meter, counted, prepared)
}

fn key(text: &str) -> u128 {
    CountCache::key(text)
}

#[test]
fn setting_a_sizes_tokens_leaves_its_other_counts() {
    let mut size = TextSize {
        measure: Measure { bytes: 8, tokens: 2, estimate: 2, decide: 3 },
        chars: CharCounts { chars: 8, non_ascii: 0, utf16: 8 },
    };
    let before = size;
    size.set_tokens(5);
    assert_eq!(size.tokens, 5);
    assert_eq!(TextSize { measure: Measure { tokens: 2, ..size.measure }, ..size }, before);
}

#[test]
fn seeded_counts_are_used_and_kept_with_the_new_ones() {
    let mut stored = StoredCounts::default();
    // A kept count that is not the stub's (3 bytes): it must be what the meter reports.
    stored.merge("r", vec![(key("abc"), 40)]);
    stored.merge("other", vec![(key("zz"), 1)]);
    let (mut meter, counted, prepared) = kept_meter(Some("r"), Tokenizer::Cl100k);
    assert_eq!(meter.seed(&stored), 1);
    meter.prepare();
    assert_eq!(prepared.load(Ordering::SeqCst), 1, "only the decision counter, which was not seeded");
    assert_eq!(meter.tokens("abc"), 40);
    assert_eq!(counted.load(Ordering::SeqCst), 0);
    assert_eq!(meter.tokens("hello"), 5);
    assert_eq!(meter.decide_tokens("abc"), 3);
    assert_eq!(counted.load(Ordering::SeqCst), 2);
    meter.keep(&mut stored);
    let mut r = vec![(key("abc"), 40), (key("hello"), 5)];
    r.sort();
    assert_eq!(stored.section("r"), r.as_slice());
    assert_eq!(stored.section("d"), &[(key("abc"), 3)]);
    assert_eq!(stored.section("other"), &[(key("zz"), 1)], "another counter's counts stay");
}

#[test]
fn only_exact_counters_of_their_own_are_kept() {
    // No name: nothing kept. The decision counter on the report's tokenizer shares its cache.
    let (mut meter, _, prepared) = kept_meter(None, Tokenizer::O200k);
    let mut stored = StoredCounts::default();
    stored.merge("d", vec![(key("abc"), 40)]);
    assert_eq!(meter.seed(&stored), 0);
    meter.prepare();
    assert_eq!(prepared.load(Ordering::SeqCst), 2);
    meter.tokens("abc");
    let mut after = stored.clone();
    meter.keep(&mut after);
    assert_eq!(after, stored);
    assert_eq!(Tokenizer::O200k.counter_with(Backend::Tiktoken).kept_as().as_deref(), Some("o200k/tiktoken"));
    assert_eq!(Tokenizer::Estimate.counter().kept_as(), None);
}

#[test]
fn a_provider_meter_keeps_and_seeds_the_counts_of_its_cl100k_meter() {
    let mut meter = Meter::new(Tokenizer::Provider, Tokenizer::Estimate);
    assert_eq!(meter.choice(), Tokenizer::Provider, "Meter::new keeps the choice");
    let name = Tokenizer::Cl100k.counter().kept_as().unwrap();
    let text = "日本語の文章を数えます。";
    let cl100k = meter.resolved(Some(Tokenizer::Cl100k)).tokens(text);
    assert_eq!(cl100k, Tokenizer::Cl100k.counter().count(text));
    assert_ne!(cl100k, meter.tokens(text), "the text tells o200k and cl100k apart");
    let mut kept = StoredCounts::default();
    meter.keep(&mut kept);
    assert_eq!(kept.section(&name), &[(key(text), cl100k)]);
    // A fresh meter seeded with a forged cl100k count uses it for cl100k only.
    let mut forged = StoredCounts::default();
    forged.merge(&name, vec![(key(text), 999)]);
    let mut fresh = Meter::new(Tokenizer::Provider, Tokenizer::Estimate);
    assert_eq!(fresh.seed(&forged), 1);
    assert_eq!(fresh.resolved(Some(Tokenizer::Cl100k)).tokens(text), 999);
    assert_eq!(fresh.resolved(Some(Tokenizer::O200k)).tokens(text), meter.tokens(text));
    // Under o200k nothing of cl100k is seeded.
    assert_eq!(Meter::new(Tokenizer::O200k, Tokenizer::Estimate).seed(&forged), 0);
}

#[test]
fn estimate_is_bytes_over_four_rounded_down() {
    assert_eq!(estimate(""), 0);
    assert_eq!(estimate("abc"), 0);
    assert_eq!(estimate("abcd"), 1);
    assert_eq!(estimate("あ"), 0); // 3 bytes
    assert_eq!(estimate("ああ"), 1); // 6 bytes
}

#[test]
fn longest_whitespace_run_counts_chars() {
    assert_eq!(longest_whitespace_run("a  b   c"), 3);
    assert_eq!(longest_whitespace_run(""), 0);
    assert_eq!(longest_whitespace_run(" \n\t\u{3000}x"), 4);
}

struct Counting(Arc<AtomicUsize>);
impl Counter for Counting {
    fn tokenizer(&self) -> Tokenizer {
        Tokenizer::O200k
    }
    fn count(&self, text: &str) -> Tokens {
        self.0.fetch_add(1, Ordering::SeqCst);
        text.len() as Tokens
    }
}

#[test]
fn meter_counts_each_distinct_text_once() {
    let calls = Arc::new(AtomicUsize::new(0));
    let meter = Meter::with_counters(Box::new(Counting(calls.clone())), Box::new(Estimate));
    for _ in 0..5 {
        assert_eq!(meter.tokens("some text"), 9);
        assert_eq!(meter.tokens("other"), 5);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(meter.distinct_texts(), 2);
    assert_eq!(
        meter.measure("abcdefgh"),
        TextSize {
            measure: Measure { bytes: 8, tokens: 8, estimate: 2, decide: 2 },
            chars: CharCounts { chars: 8, non_ascii: 0, utf16: 8 }
        }
    );
}

#[test]
fn a_meter_decides_with_its_tokenizer_unless_told_otherwise() {
    let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Cl100k);
    assert_eq!(meter.decide_with(), DecideWith::Tokenizer(Tokenizer::Cl100k));
    assert_eq!(meter.decide_with().name(), "cl100k");
    let meter = meter.deciding(DecideWith::Anchor);
    assert_eq!(meter.decide_with().name(), "anchor");
    assert_eq!(DecideWith::Real.to_string(), "real");
}

#[test]
fn char_counts_distinguish_bytes_chars_and_utf16() {
    assert_eq!(char_counts("abc"), (3, 0, 3));
    assert_eq!(char_counts("aあ😀"), (3, 2, 4));
    // Against the definition, char by char, on every width of char.
    // Long ones cross the 255-byte chunks; in the ASCII one a counter reaches 255 in a chunk.
    let (long, ascii) = ("é😀a日".repeat(300), format!("{}é", "a".repeat(600)));
    let short =
        ["é", "ﬀ\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}", "ab😀😀cd\u{2028}", "ÿ\n日本語"];
    for text in short.into_iter().chain([long.as_str(), ascii.as_str()]) {
        let chars = text.chars().count() as u64;
        let non_ascii = text.chars().filter(|c| !c.is_ascii()).count() as u64;
        let utf16 = text.encode_utf16().count() as u64;
        assert_eq!(char_counts(text), (chars, non_ascii, utf16), "{text:?}");
    }
}
