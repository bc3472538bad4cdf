//! Exact counts of OpenAI's encodings: the [`Backend`]s that implement them, [`Bpe`] (the
//! [`Counter`] over a backend) and the guards that keep every count exact and every run finite.
//!
//! The `tiktoken` crate is the one backend in every build: the fastest on the corpus, and it merges
//! a long piece in O(n log n) (a heap), so hostile text slows it but does not hang it
//! (docs/performance.md, "One counter by default"). Two more are Cargo features, for the
//! differential tests: tiktoken-rs (`counter-tiktoken-rs`), OpenAI's vendored core, the
//! reference, which panics on whitespace runs of roughly a million characters (fancy-regex's
//! backtracking limit) and so is never given one; and bpe-openai (`counter-bpe`), linear in time
//! and memory, which then counts every text with a pathological piece ([`has_long_run`]). A backend
//! that panics on a text hands it to another one, so a count stays exact and nothing crashes.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;
use std::sync::Once;

use super::{Counter, Estimate, Tokenizer};
use crate::model::Tokens;

/// Whitespace runs at least this long (bytes) are never given to tiktoken-rs, which panics
/// somewhere between 500k and 1M spaces (fancy-regex's backtracking limit,
/// `../shared/design/TOKENIZERS.md` §1); this leaves a wide margin, and such runs are rare in real
/// output.
const LONG_WHITESPACE_RUN: usize = 100_000;

/// Runs of letters, or of punctuation, at least this long (bytes) never go to the regular counters
/// either. Both encodings cut text into pieces with a regex before merging: a piece is a run of
/// letters, of punctuation, of whitespace or up to three digits, so only such a run makes a long
/// piece, and both regular counters merge a long piece in superlinear time and memory (1 MB of
/// letters in tiktoken-rs: 1.2 s; 4 MB: 6.3 s; a 200 MB word: 575 s and 10 GB, and 100 s and
/// 5.3 GB in the `tiktoken` crate). A long run of mixed classes (JSON without spaces, base64, a
/// URL) is cut into short pieces and is not pathological.
const LONG_WORD: usize = 10_000;

/// Which implementation counts the exact encodings (`--counter`).
///
/// Both give OpenAI's counts: `tests/counters.rs` (`--features all-counters`) checks every text
/// a replay of the shared corpus counts, for o200k and cl100k, and the unit tests below check
/// pathological whitespace. The default is the fastest measured; tiktoken-rs is the reference,
/// built only with the `counter-tiktoken-rs` feature ([`Backend::is_built`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Backend {
    /// The `tiktoken` crate (goliajp/rust-tiktoken): a pure-Rust port with
    /// allocation-free counting and a per-thread cache of merged pieces. No backtracking regex.
    #[default]
    Tiktoken,
    /// tiktoken-rs `encode_ordinary`: OpenAI's own core, vendored; the reference. Built with the
    /// `counter-tiktoken-rs` feature; without it a [`Bpe`] asked for it counts with the default.
    TiktokenRs,
}

impl Backend {
    /// Every backend, in display order.
    pub const ALL: [Backend; 2] = [Backend::Tiktoken, Backend::TiktokenRs];

    /// The name used on the command line (the crate's name).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Tiktoken => "tiktoken",
            Backend::TiktokenRs => "tiktoken-rs",
        }
    }

    /// Whether this binary was built with the backend (its Cargo feature).
    pub fn is_built(self) -> bool {
        match self {
            Backend::Tiktoken => true,
            Backend::TiktokenRs => cfg!(feature = "counter-tiktoken-rs"),
        }
    }

    /// The backend itself when it is built, else an error that names the feature to build with.
    pub fn built(self) -> Result<Backend, String> {
        match self {
            b if b.is_built() => Ok(b),
            b => Err(format!(
                "the {b} counter is not built into this binary; build it with \
                 `cargo build --release --features counter-{b}`, or use --counter {}",
                Backend::default()
            )),
        }
    }

    /// The other backend: where a text goes when this one cannot count it (when it is built).
    fn other(self) -> Backend {
        match self {
            Backend::Tiktoken => Backend::TiktokenRs,
            Backend::TiktokenRs => Backend::Tiktoken,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("unknown counter `{s}` (expected tiktoken or tiktoken-rs)"))
    }
}

impl Tokenizer {
    /// A counter for this tokenizer, implemented by `backend` (ignored for the estimate).
    pub fn counter_with(self, backend: Backend) -> Box<dyn Counter> {
        match (self, backend) {
            (Tokenizer::Estimate, _) => Box::new(Estimate),
            (_, backend) => Box::new(Bpe::with_backend(self, backend)),
        }
    }
}

/// An exact OpenAI BPE counter on a [`Backend`]. The guards of this module apply: tiktoken-rs never
/// sees a whitespace run that would make it panic, a text with a pathological piece goes to
/// bpe-openai when it is built, and a backend that panics hands the text to the other one.
pub struct Bpe {
    tokenizer: Tokenizer,
    backend: Backend,
}

impl Bpe {
    /// A counter for `o200k` or `cl100k` on the default backend (loaded on first use).
    ///
    /// # Panics
    /// When given [`Tokenizer::Estimate`], which is not a BPE encoding.
    pub fn new(tokenizer: Tokenizer) -> Bpe {
        Bpe::with_backend(tokenizer, Backend::default())
    }

    /// A counter for `o200k` or `cl100k` on `backend`, or on the default one when `backend` is not
    /// built ([`Backend::is_built`]: the counts are the same). `provider` counts with o200k (its
    /// conversations that count with cl100k get a cl100k counter of their own:
    /// [`crate::tokens::Meter::resolved`]).
    ///
    /// # Panics
    /// When given [`Tokenizer::Estimate`], which is not a BPE encoding.
    pub fn with_backend(tokenizer: Tokenizer, backend: Backend) -> Bpe {
        assert!(tokenizer != Tokenizer::Estimate, "estimate is not a BPE encoding");
        let tokenizer = if tokenizer == Tokenizer::Provider { Tokenizer::O200k } else { tokenizer };
        let backend = if backend.is_built() { backend } else { Backend::default() };
        Bpe { tokenizer, backend }
    }
}

impl Counter for Bpe {
    fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }
    fn count(&self, text: &str) -> Tokens {
        exact(self.tokenizer, self.backend, text)
    }
    fn prepare(&self) {
        tables(self.tokenizer, self.backend);
    }
    fn kept_as(&self) -> Option<String> {
        Some(format!("{}/{}", self.tokenizer.name(), self.backend.name()))
    }
}

/// Builds the tables of `tokenizer` in `backend` once per process, whether [`Counter::prepare`] or a first count asks for them; a thread that asks while another
/// builds them waits.
fn tables(tokenizer: Tokenizer, backend: Backend) {
    static BUILT: [Once; 4] = [const { Once::new() }; 4];
    let slot = usize::from(backend == Backend::TiktokenRs) * 2 + usize::from(tokenizer == Tokenizer::Cl100k);
    BUILT[slot].call_once(|| {
        count_with_tables(tokenizer, backend, "");
    });
}

/// Counts `text` with `backend`, unguarded.
fn raw_count(tokenizer: Tokenizer, backend: Backend, text: &str) -> Tokens {
    tables(tokenizer, backend);
    count_with_tables(tokenizer, backend, text)
}

/// Counts `text` with `backend`. Each encoding is a lazily built static of its crate (built on
/// first use, by whichever thread gets there first; the others wait for it): [`tables`] is that
/// first use.
fn count_with_tables(tokenizer: Tokenizer, backend: Backend, text: &str) -> Tokens {
    match (backend, tokenizer) {
        #[cfg(feature = "counter-tiktoken-rs")]
        (Backend::TiktokenRs, Tokenizer::Cl100k) => {
            tiktoken_rs::cl100k_base_singleton().encode_ordinary(text).len() as Tokens
        }
        #[cfg(feature = "counter-tiktoken-rs")]
        (Backend::TiktokenRs, _) => tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len() as Tokens,
        // Without its feature tiktoken-rs is never asked ([`Bpe::with_backend`], [`exact_with`]).
        (_, t) => {
            let name = if t == Tokenizer::Cl100k { "cl100k_base" } else { "o200k_base" };
            // Both vocabularies are compiled in (Cargo.toml features), so the lookup cannot fail.
            let bpe = tiktoken::get_encoding(name).expect("o200k_base and cl100k_base are compiled in");
            bpe.count(text) as Tokens
        }
    }
}

/// Counts `text` exactly, starting with `backend`: a text with a long piece ([`has_long_run`])
/// goes to the linear counter when it is built and never to tiktoken-rs, and a backend that panics
/// hands the text to the other one. A text that makes every backend panic (never observed) is
/// counted in two halves, which can differ from the true count by a token or two at the seam,
/// rather than crash the run.
fn exact(tokenizer: Tokenizer, backend: Backend, text: &str) -> Tokens {
    #[cfg(feature = "counter-bpe")]
    let long = {
        let long = has_long_run(text);
        if long {
            if let Ok(n) = catch_unwind(AssertUnwindSafe(|| pathological(tokenizer, text))) {
                return n;
            }
        }
        Some(long)
    };
    #[cfg(not(feature = "counter-bpe"))]
    let long = None;
    exact_with(&|b, t| raw_count(tokenizer, b, t), Backend::is_built, backend, text, long)
}

/// Whether `text` holds a piece that the regular counters must not get: a run of whitespace of
/// 100,000 bytes, or a run of letters or of punctuation of 10,000 bytes.
/// Digits end every run (the encodings cut numbers into pieces of up to three digits). Classes are
/// read off the bytes, and a non-ASCII byte continues every run (it may be a letter, a mark, a
/// symbol or a space such as U+3000), so the guard errs towards the linear counter, which is exact
/// too.
///
/// Most texts are passed over without reading every byte: a run of 10,000 bytes or more (the
/// shortest that counts) holds two consecutive multiples of 5,000 and every byte between them, so
/// a text in which no such stretch is all of one run's bytes has no long run, and in ordinary text
/// a stretch ends within a few bytes. Only a text with such a stretch is scanned byte by byte.
/// That scan of every text of 10,000 bytes or more was 3% of an o200k replay: the shared corpus,
/// one thread, 1,383.4 → 1,337.6 million instructions (`valgrind --tool=callgrind`).
pub fn has_long_run(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() < LONG_WORD {
        return false;
    }
    let mut at = 0;
    while at + RUN_STRIDE < bytes.len() {
        let mut classes = ALL_RUNS;
        if bytes[at..=at + RUN_STRIDE].iter().all(|&b| {
            classes &= runs_continued_by(b);
            classes != 0
        }) {
            return scan_long_run(bytes);
        }
        at += RUN_STRIDE;
    }
    false
}

/// The distance between the points [`has_long_run`] looks at first: half of the shortest long run.
const RUN_STRIDE: usize = LONG_WORD / 2;

/// The runs of [`has_long_run`] as bits: whitespace, letters, punctuation.
const SPACE_RUN: u8 = 1;
const LETTER_RUN: u8 = 2;
const PUNCT_RUN: u8 = 4;
const ALL_RUNS: u8 = SPACE_RUN | LETTER_RUN | PUNCT_RUN;

/// The runs that byte `b` continues (a digit ends every run; a non-ASCII byte continues all of
/// them).
fn runs_continued_by(b: u8) -> u8 {
    match b {
        b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => SPACE_RUN,
        b'0'..=b'9' => 0,
        b'a'..=b'z' | b'A'..=b'Z' => LETTER_RUN,
        0x80.. => ALL_RUNS,
        _ => PUNCT_RUN,
    }
}

/// [`has_long_run`] byte by byte: the length of the current run of each kind.
fn scan_long_run(bytes: &[u8]) -> bool {
    let (mut space, mut letter, mut punct) = (0usize, 0usize, 0usize);
    for &b in bytes {
        let runs = runs_continued_by(b);
        let go_on = |length: usize, run: u8| if runs & run != 0 { length + 1 } else { 0 };
        (space, letter, punct) =
            (go_on(space, SPACE_RUN), go_on(letter, LETTER_RUN), go_on(punct, PUNCT_RUN));
        if space >= LONG_WHITESPACE_RUN || letter >= LONG_WORD || punct >= LONG_WORD {
            return true;
        }
    }
    false
}

/// Counts a text with a pathological run (with the `counter-bpe` feature): bpe-openai
/// (github/rust-gems), which implements the same encodings without a backtracking regex and merges
/// a piece in linear time (a 200 MB word: 4.7 s, 450 MB) and gives the same counts (tests below, and `tests/it/bad_input.rs`).
#[cfg(feature = "counter-bpe")]
fn pathological(tokenizer: Tokenizer, text: &str) -> Tokens {
    let bpe = match tokenizer {
        Tokenizer::Cl100k => bpe_openai::cl100k_base(),
        _ => bpe_openai::o200k_base(),
    };
    bpe.count(text) as Tokens
}

/// [`exact`] over any raw counter (tests inject one that panics) and any set of built backends
/// (`built`: [`Backend::is_built`], or every backend in the tests, which then run without the
/// `counter-tiktoken-rs` feature); `long` is [`has_long_run`] of `text` when the caller already
/// knows it.
fn exact_with(
    raw: &dyn Fn(Backend, &str) -> Tokens,
    built: fn(Backend) -> bool,
    backend: Backend,
    text: &str,
    long: Option<bool>,
) -> Tokens {
    let mut long = long;
    for b in [backend, backend.other()] {
        if !built(b) || b == Backend::TiktokenRs && *long.get_or_insert_with(|| has_long_run(text)) {
            continue;
        }
        if let Ok(n) = catch_unwind(AssertUnwindSafe(|| raw(b, text))) {
            return n;
        }
    }
    let mut mid = text.len() / 2;
    while !text.is_char_boundary(mid) {
        mid += 1;
    }
    if mid == 0 || mid == text.len() {
        // Empty or a single character: at most four bytes, and a byte-level BPE never counts
        // more tokens than bytes.
        return text.len() as Tokens;
    }
    exact_with(raw, built, backend, &text[..mid], None) + exact_with(raw, built, backend, &text[mid..], None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long run found wherever it starts against the points looked at first, and one byte
    /// shorter never, for each kind of run.
    #[test]
    fn a_long_run_is_found_at_any_offset_and_one_byte_less_is_not() {
        for (unit, long) in [("x", LONG_WORD), ("-", LONG_WORD), (" ", LONG_WHITESPACE_RUN), ("é", LONG_WORD)]
        {
            let offsets =
                [0, 1, 2, RUN_STRIDE - 1, RUN_STRIDE, RUN_STRIDE + 1, 2 * RUN_STRIDE - 1, 3 * RUN_STRIDE + 7];
            for offset in offsets.into_iter().chain((0..RUN_STRIDE).step_by(997)) {
                let text =
                    |len: usize| format!("{}{}1{}", "7".repeat(offset), unit.repeat(len), "7".repeat(3));
                let units = long.div_ceil(unit.len());
                assert!(has_long_run(&text(units)), "{unit:?} × {units} at {offset}");
                assert!(!has_long_run(&text(long / unit.len() - 1)), "{unit:?} short at {offset}");
                // Broken by one digit in the middle: two halves, neither long.
                let halves =
                    format!("{}{}5{}", "7".repeat(offset), unit.repeat(units / 2), unit.repeat(units / 2));
                assert!(!has_long_run(&halves), "{unit:?} halves at {offset}");
            }
        }
    }

    proptest::proptest! {
        /// The points looked at first never hide a long run the byte-by-byte scan finds: texts
        /// made of runs of every kind, with lengths about the stride and the thresholds.
        #[test]
        fn looking_at_points_first_finds_what_scanning_every_byte_finds(
            runs in proptest::collection::vec(
                (proptest::sample::select(vec![" ", "\n", "a", "Z", "5", "-", "{", "é", "日"]),
                 proptest::prop_oneof![1usize..40, 4_990usize..5_010, 9_990usize..10_010, 99_990usize..100_010]),
                1..8,
            )
        ) {
            let text: String = runs.iter().map(|(unit, n)| unit.repeat(*n)).collect();
            let reference = text.len() >= LONG_WORD && scan_long_run(text.as_bytes());
            proptest::prop_assert_eq!(has_long_run(&text), reference);
        }
    }

    #[test]
    fn o200k_and_cl100k_count_known_strings_with_every_backend() {
        // Reference counts from OpenAI's tokenizers.
        for b in Backend::ALL {
            assert_eq!(Tokenizer::O200k.counter_with(b).count("hello world"), 2, "{b}");
            assert_eq!(Tokenizer::Cl100k.counter_with(b).count("hello world"), 2, "{b}");
            let specials = "before <|endoftext|> after <|fim_prefix|>";
            assert_eq!(Tokenizer::Cl100k.counter_with(b).count(specials), 14, "{b}");
        }
    }

    #[test]
    fn special_token_text_counts_as_ordinary_text() {
        for b in Backend::ALL {
            let n = Tokenizer::O200k.counter_with(b).count("<|endoftext|>");
            assert!(n > 1, "{b}: counted as a single special token: {n}");
        }
    }

    #[test]
    fn a_million_spaces_do_not_crash_and_count_as_bpe_openai_does() {
        // 7,814 is what bpe-openai 0.3.2 (no backtracking, so no crash) counts for this text in
        // both encodings (`../shared/design/TOKENIZERS.md` §2), an implementation independent of
        // both backends.
        let text = format!("{}x", " ".repeat(1_000_000));
        for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
            for b in Backend::ALL {
                assert_eq!(t.counter_with(b).count(&text), 7_814, "{t} {b}");
            }
        }
    }

    /// Every backend taken as built, so the fallbacks between them are tested in every build.
    const EVERY: fn(Backend) -> bool = |_| true;

    #[test]
    fn a_backend_that_panics_hands_the_text_to_the_other_and_long_runs_skip_tiktoken_rs() {
        let calls = std::sync::Mutex::new(Vec::new());
        let raw = |b: Backend, t: &str| -> Tokens {
            calls.lock().unwrap().push(b);
            if b == Backend::Tiktoken && t.len() > 3 {
                panic!("injected");
            }
            t.len() as Tokens
        };
        assert_eq!(exact_with(&raw, EVERY, Backend::Tiktoken, "abcdef", None), 6);
        assert_eq!(*calls.lock().unwrap(), [Backend::Tiktoken, Backend::TiktokenRs]);
        // A long whitespace run never reaches tiktoken-rs, even as the preferred backend.
        let calls = std::sync::Mutex::new(Vec::new());
        let raw = |b: Backend, t: &str| -> Tokens {
            calls.lock().unwrap().push(b);
            t.len() as Tokens
        };
        let spaces = " ".repeat(LONG_WHITESPACE_RUN);
        assert_eq!(
            exact_with(&raw, EVERY, Backend::TiktokenRs, &spaces, None),
            LONG_WHITESPACE_RUN as Tokens
        );
        assert_eq!(*calls.lock().unwrap(), [Backend::Tiktoken]);
    }

    #[test]
    fn a_text_both_backends_panic_on_is_counted_in_halves() {
        let raw = |_: Backend, t: &str| -> Tokens {
            if t.chars().count() > 2 {
                panic!("injected");
            }
            1
        };
        // 5 chars → 2 + 3 → 2 + (1 + 2): three pieces of at most 2 chars, one token each.
        assert_eq!(exact_with(&raw, EVERY, Backend::Tiktoken, "aあbいc", None), 3);
    }
}
