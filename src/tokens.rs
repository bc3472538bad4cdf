//! Token counters behind one trait, and the cache that counts each distinct text once.
//!
//! Three counters: `estimate` (the seed's `len / 4`, UTF-8 bytes, integer division per text),
//! `o200k` and `cl100k` (OpenAI's encodings, exact, via tiktoken-rs `encode_ordinary`, so recorded text
//! such as `<|endoftext|>` counts as the plain text it is). tiktoken-rs panics on whitespace runs
//! of roughly a million characters (fancy-regex's backtracking limit); such texts are counted by
//! bpe-openai instead, which implements the same encodings without backtracking and gives the same
//! counts, so the count stays exact and nothing crashes. So are texts with a very long run without
//! whitespace (a minified file, a base64 blob, a 200 MB line of one word): tiktoken-rs merges such a
//! piece in superlinear time and memory (1 MB of letters: 1.2 s; 4 MB: 6.3 s; 200 MB: 575 s and
//! 10 GB), bpe-openai in linear time (200 MB: 4.7 s, 450 MB).
//!
//! A [`Meter`] pairs the report's counter with the counter policies decide with and caches counts by
//! a 128-bit hash of the text, so a replay with many policies and thresholds never recounts a text.
//! Counting is pure; nothing here prints or reads files.

use std::collections::HashMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::model::{Bytes, Tokens};

/// Which tokenizer a count uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tokenizer {
    /// The seed's estimate: UTF-8 bytes / 4, rounded down.
    Estimate,
    /// OpenAI `o200k_base` (gpt-4o, gpt-4.1, gpt-5, o-series).
    O200k,
    /// OpenAI `cl100k_base` (gpt-4, gpt-3.5-turbo).
    Cl100k,
}

impl Tokenizer {
    /// Every tokenizer, in display order.
    pub const ALL: [Tokenizer; 3] = [Tokenizer::Estimate, Tokenizer::O200k, Tokenizer::Cl100k];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Estimate => "estimate",
            Tokenizer::O200k => "o200k",
            Tokenizer::Cl100k => "cl100k",
        }
    }

    /// A counter for this tokenizer.
    pub fn counter(self) -> Box<dyn Counter> {
        match self {
            Tokenizer::Estimate => Box::new(Estimate),
            Tokenizer::O200k | Tokenizer::Cl100k => Box::new(Bpe::new(self)),
        }
    }
}

impl fmt::Display for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tokenizer {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Tokenizer::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown tokenizer `{s}` (expected estimate, o200k or cl100k)"))
    }
}

/// What prune policies decide with (`--decide-with`).
///
/// Each policy reproduces an anchor that counts in its own way (opencode `round(len/4)` on
/// JavaScript string length, LangChain `chars/4 + 3` per message, Gemini CLI per-character weights,
/// the seed `len/4` per text); [`DecideWith::Anchor`] lets each one do so. [`DecideWith::Real`] makes
/// every policy decide with the report's tokenizer, and [`DecideWith::Tokenizer`] with a fixed
/// counter (the behaviour `--decide-with estimate|o200k|cl100k` always had). Policies resolve it
/// through [`crate::policy::View::tokens`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DecideWith {
    /// Each policy's own anchor estimator.
    Anchor,
    /// The report's tokenizer (real tokens).
    Real,
    /// This counter, through [`Measure::decide`].
    Tokenizer(Tokenizer),
}

impl DecideWith {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            DecideWith::Anchor => "anchor",
            DecideWith::Real => "real",
            DecideWith::Tokenizer(t) => t.name(),
        }
    }
}

impl fmt::Display for DecideWith {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Counts the tokens of a text.
pub trait Counter: Send + Sync {
    /// Which tokenizer this is.
    fn tokenizer(&self) -> Tokenizer;
    /// Tokens in `text`.
    fn count(&self, text: &str) -> Tokens;
}

/// The seed's estimate: `len / 4` in UTF-8 bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Estimate;

/// The seed's per-text estimate, `len / 4` with integer division.
pub fn estimate(text: &str) -> Tokens {
    text.len() as Tokens / 4
}

impl Counter for Estimate {
    fn tokenizer(&self) -> Tokenizer {
        Tokenizer::Estimate
    }
    fn count(&self, text: &str) -> Tokens {
        estimate(text)
    }
}

/// Whitespace runs at least this long go to bpe-openai: tiktoken-rs panics somewhere between 500k
/// and 1M spaces; this leaves a wide margin and such runs are rare in real output.
const LONG_WHITESPACE_RUN: usize = 100_000;

/// Runs of non-whitespace at least this long (chars) go to bpe-openai: tiktoken-rs takes 0.28 s for
/// 100k letters and grows faster than linearly; below this, the two take about the same time.
const LONG_WORD: usize = 10_000;

/// An exact OpenAI BPE counter (tiktoken-rs, with bpe-openai for pathological whitespace and very
/// long words).
pub struct Bpe {
    tokenizer: Tokenizer,
    tiktoken: &'static tiktoken_rs::CoreBPE,
}

impl Bpe {
    /// A counter for `o200k` or `cl100k`.
    ///
    /// # Panics
    /// When given [`Tokenizer::Estimate`], which is not a BPE encoding.
    pub fn new(tokenizer: Tokenizer) -> Bpe {
        let tiktoken = match tokenizer {
            Tokenizer::O200k => tiktoken_rs::o200k_base_singleton(),
            Tokenizer::Cl100k => tiktoken_rs::cl100k_base_singleton(),
            Tokenizer::Estimate => panic!("estimate is not a BPE encoding"),
        };
        Bpe { tokenizer, tiktoken }
    }

    fn fallback(&self, text: &str) -> Tokens {
        let bpe = match self.tokenizer {
            Tokenizer::O200k => bpe_openai::o200k_base(),
            _ => bpe_openai::cl100k_base(),
        };
        bpe.count(text) as Tokens
    }
}

impl Counter for Bpe {
    fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }

    fn count(&self, text: &str) -> Tokens {
        let (whitespace, word) = longest_runs(text);
        if whitespace >= LONG_WHITESPACE_RUN || word >= LONG_WORD {
            return self.fallback(text);
        }
        // Belt and braces: any other input that trips the regex engine is counted by the fallback.
        catch_unwind(AssertUnwindSafe(|| self.tiktoken.encode_ordinary(text).len() as Tokens))
            .unwrap_or_else(|_| self.fallback(text))
    }
}

/// Length in chars of the longest run of whitespace in `text`.
pub fn longest_whitespace_run(text: &str) -> usize {
    longest_runs(text).0
}

/// Lengths in chars of the longest run of whitespace and of the longest run of anything else.
pub fn longest_runs(text: &str) -> (usize, usize) {
    let (mut best, mut run) = ([0usize; 2], [0usize; 2]);
    for c in text.chars() {
        let k = usize::from(!c.is_whitespace());
        run[k] += 1;
        run[1 - k] = 0;
        best[k] = best[k].max(run[k]);
    }
    (best[0], best[1])
}

const SHARDS: usize = 64;

/// Counts by 128-bit text hash, shared between threads. Counts do not depend on the order in
/// which texts arrive, so sharing the cache cannot change any output.
pub struct CountCache {
    shards: Vec<Mutex<HashMap<u128, Tokens>>>,
}

impl Default for CountCache {
    fn default() -> Self {
        CountCache { shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect() }
    }
}

impl CountCache {
    /// The cached count of `text`, computing it with `count` on a miss.
    pub fn get_or_count(&self, text: &str, count: impl FnOnce(&str) -> Tokens) -> Tokens {
        let key = xxhash_rust::xxh3::xxh3_128(text.as_bytes());
        let shard = &self.shards[(key as usize) % SHARDS];
        if let Some(n) = lock(shard).get(&key) {
            return *n;
        }
        let n = count(text);
        lock(shard).insert(key, n);
        n
    }

    /// Number of distinct texts counted.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len()).sum()
    }

    /// Whether nothing was counted yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned shard only means another thread panicked mid-insert of a plain number.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Size facts about one text, or sums of them: bytes, real tokens (the report's tokenizer), the
/// seed's `len / 4` estimate (per text, then summed, as the seed's framework adds them up) and the
/// tokens policies decide with. `chars`, `non_ascii` and `utf16` let any character-based estimator
/// (opencode's JavaScript `length / 4`, Gemini CLI's per-character weights) be computed from sums
/// without the text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Measure {
    /// UTF-8 bytes.
    pub bytes: Bytes,
    /// Unicode scalar values (`str::chars`).
    pub chars: u64,
    /// Of those, not ASCII.
    pub non_ascii: u64,
    /// UTF-16 code units (JavaScript's `length`).
    pub utf16: u64,
    /// Tokens with the report's tokenizer.
    pub tokens: Tokens,
    /// The seed's estimate, `bytes / 4` per text.
    pub estimate: Tokens,
    /// Tokens with the tokenizer policies decide with.
    pub decide: Tokens,
}

impl std::ops::AddAssign for Measure {
    fn add_assign(&mut self, o: Measure) {
        self.bytes += o.bytes;
        self.chars += o.chars;
        self.non_ascii += o.non_ascii;
        self.utf16 += o.utf16;
        self.tokens += o.tokens;
        self.estimate += o.estimate;
        self.decide += o.decide;
    }
}

impl std::ops::SubAssign for Measure {
    fn sub_assign(&mut self, o: Measure) {
        self.bytes -= o.bytes;
        self.chars -= o.chars;
        self.non_ascii -= o.non_ascii;
        self.utf16 -= o.utf16;
        self.tokens -= o.tokens;
        self.estimate -= o.estimate;
        self.decide -= o.decide;
    }
}

/// The report's counter and the decision counter, each with a cache.
pub struct Meter {
    report: Box<dyn Counter>,
    decide: Box<dyn Counter>,
    report_cache: CountCache,
    decide_cache: CountCache,
    decide_with: DecideWith,
}

impl fmt::Debug for Meter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meter")
            .field("report", &self.report.tokenizer())
            .field("decide", &self.decide.tokenizer())
            .field("decide_with", &self.decide_with)
            .finish()
    }
}

impl Meter {
    /// A meter that reports with `report` and lets policies decide with `decide`.
    pub fn new(report: Tokenizer, decide: Tokenizer) -> Meter {
        Meter::with_counters(report.counter(), decide.counter())
    }

    /// A meter over any two counters (tests use deterministic stubs).
    pub fn with_counters(report: Box<dyn Counter>, decide: Box<dyn Counter>) -> Meter {
        let decide_with = DecideWith::Tokenizer(decide.tokenizer());
        Meter {
            report,
            decide,
            report_cache: CountCache::default(),
            decide_cache: CountCache::default(),
            decide_with,
        }
    }

    /// The same meter, with policies deciding as `decide_with` says. With [`DecideWith::Anchor`] or
    /// [`DecideWith::Real`] the decision counter goes unused, so give [`Meter::new`] the cheap
    /// [`Tokenizer::Estimate`] for it.
    pub fn deciding(mut self, decide_with: DecideWith) -> Meter {
        self.decide_with = decide_with;
        self
    }

    /// What policies decide with.
    pub fn decide_with(&self) -> DecideWith {
        self.decide_with
    }

    /// The report's tokenizer.
    pub fn report_tokenizer(&self) -> Tokenizer {
        self.report.tokenizer()
    }

    /// The tokenizer policies decide with.
    pub fn decide_tokenizer(&self) -> Tokenizer {
        self.decide.tokenizer()
    }

    /// Tokens of `text` with the report's tokenizer (cached).
    pub fn tokens(&self, text: &str) -> Tokens {
        count_with(&*self.report, &self.report_cache, text)
    }

    /// Tokens of `text` with the decision tokenizer (cached; free when it is the estimate or the
    /// same as the report's).
    pub fn decide_tokens(&self, text: &str) -> Tokens {
        if self.decide.tokenizer() == self.report.tokenizer() {
            self.tokens(text)
        } else {
            count_with(&*self.decide, &self.decide_cache, text)
        }
    }

    /// Bytes, report tokens and decision tokens of `text`.
    pub fn measure(&self, text: &str) -> Measure {
        let (chars, non_ascii, utf16) = char_counts(text);
        Measure {
            bytes: text.len() as Bytes,
            chars,
            non_ascii,
            utf16,
            tokens: self.tokens(text),
            estimate: estimate(text),
            decide: self.decide_tokens(text),
        }
    }

    /// Distinct texts counted so far with the report's tokenizer.
    pub fn distinct_texts(&self) -> usize {
        self.report_cache.len()
    }
}

/// `(chars, non-ASCII chars, UTF-16 code units)` of `text`.
pub fn char_counts(text: &str) -> (u64, u64, u64) {
    if text.is_ascii() {
        let n = text.len() as u64;
        return (n, 0, n);
    }
    let (mut chars, mut non_ascii, mut utf16) = (0u64, 0u64, 0u64);
    for c in text.chars() {
        chars += 1;
        non_ascii += u64::from(!c.is_ascii());
        utf16 += c.len_utf16() as u64;
    }
    (chars, non_ascii, utf16)
}

fn count_with(counter: &dyn Counter, cache: &CountCache, text: &str) -> Tokens {
    match counter.tokenizer() {
        // Cheaper to compute than to look up, and empty text is zero everywhere.
        Tokenizer::Estimate => counter.count(text),
        _ if text.is_empty() => 0,
        _ => cache.get_or_count(text, |t| counter.count(t)),
    }
}

/// Counters for tests elsewhere in the crate.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Counter, Meter, Tokenizer, Tokens};

    /// One token per byte (reported as o200k), so expected numbers are easy to check by hand.
    pub(crate) struct Bytes;

    impl Counter for Bytes {
        fn tokenizer(&self) -> Tokenizer {
            Tokenizer::O200k
        }
        fn count(&self, text: &str) -> Tokens {
            text.len() as Tokens
        }
    }

    /// A meter that counts one token per byte for reports and decisions.
    pub(crate) fn bytes_meter() -> Meter {
        Meter::with_counters(Box::new(Bytes), Box::new(Bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn estimate_is_bytes_over_four_rounded_down() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("abc"), 0);
        assert_eq!(estimate("abcd"), 1);
        assert_eq!(estimate("あ"), 0); // 3 bytes
        assert_eq!(estimate("ああ"), 1); // 6 bytes
    }

    #[test]
    fn o200k_and_cl100k_count_known_strings() {
        // Reference counts from OpenAI's tokenizers.
        assert_eq!(Bpe::new(Tokenizer::O200k).count("hello world"), 2);
        assert_eq!(Bpe::new(Tokenizer::Cl100k).count("hello world"), 2);
        assert_eq!(Bpe::new(Tokenizer::Cl100k).count("before <|endoftext|> after <|fim_prefix|>"), 14);
    }

    #[test]
    fn special_token_text_counts_as_ordinary_text() {
        let n = Bpe::new(Tokenizer::O200k).count("<|endoftext|>");
        assert!(n > 1, "counted as a single special token: {n}");
    }

    #[test]
    fn a_million_spaces_do_not_crash_and_match_the_reference_scaled_case() {
        for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
            let bpe = Bpe::new(t);
            let text = format!("{}x", " ".repeat(1_000_000));
            let n = bpe.count(&text);
            assert!(n > 1000, "{t}: {n}");
        }
    }

    #[test]
    fn fallback_agrees_with_tiktoken_below_the_crash_size() {
        for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
            let bpe = Bpe::new(t);
            for text in [
                format!("a{}b", " ".repeat(150_000)),
                format!("{}\n{}x", " ".repeat(120_000), "\t".repeat(3)),
                "fn main() {\n    println!(\"日本語 <|endoftext|>\");\n}\n".repeat(50),
            ] {
                let reference = bpe.tiktoken.encode_ordinary(&text).len() as Tokens;
                assert_eq!(bpe.fallback(&text), reference, "{t}");
                assert_eq!(bpe.count(&text), reference, "{t}");
            }
        }
    }

    #[test]
    fn long_words_go_to_the_fallback_and_agree_with_tiktoken() {
        let letters: String = (0..30_000u32).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect();
        let base64: String = (0..30_000u32)
            .map(|i| {
                char::from(
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                        [(i * 13 % 64) as usize],
                )
            })
            .collect();
        let url = format!("https://example.com/{}?q=1&r=2", "path/segment-".repeat(1_500));
        let cjk = "日本語の文章".repeat(3_000);
        for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
            let bpe = Bpe::new(t);
            for text in [&letters, &base64, &url, &cjk] {
                assert!(longest_runs(text).1 >= LONG_WORD);
                let reference = bpe.tiktoken.encode_ordinary(text).len() as Tokens;
                assert_eq!(bpe.count(text), reference, "{t}: {}", &text[..20]);
            }
        }
    }

    #[test]
    fn longest_runs_count_whitespace_and_words_in_chars() {
        assert_eq!(longest_runs("ab  cde   f"), (3, 3));
        assert_eq!(longest_runs(""), (0, 0));
        assert_eq!(longest_runs("日本語 x"), (1, 3));
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
            Measure { bytes: 8, chars: 8, non_ascii: 0, utf16: 8, tokens: 8, estimate: 2, decide: 2 }
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
    }
}
