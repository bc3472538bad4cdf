//! Token counters behind one trait, and the cache that counts each distinct text once.
//!
//! Three counters: `estimate` (the seed's `len / 4`, UTF-8 bytes, integer division per text),
//! `o200k` and `cl100k` (OpenAI's encodings, exact, always as ordinary text, so recorded text such
//! as `<|endoftext|>` counts as the plain text it is). Two [`Backend`]s implement the exact ones
//! and give the same counts: the `tiktoken` crate (the default, the fastest measured, see README
//! "Which exact counter") and tiktoken-rs (OpenAI's vendored core, the reference, `--counter
//! tiktoken-rs`).
//! tiktoken-rs panics on whitespace runs of roughly a million characters (fancy-regex's
//! backtracking limit); it is never given such a text, and a backend that panics on any text hands
//! it to the other one, so a count stays exact and nothing crashes.
//!
//! A [`Meter`] pairs the report's counter with the counter policies decide with and caches counts by
//! a 128-bit hash of the text, so a replay with many policies and thresholds never recounts a text.
//! Counting is pure; nothing here prints or reads files.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::str::FromStr;
use std::sync::{Arc, Mutex, Once};

use serde::{Deserialize, Serialize};

use crate::counts::{Entry, StoredCounts};
use crate::lock;
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

    /// A counter for this tokenizer, with the default [`Backend`].
    pub fn counter(self) -> Box<dyn Counter> {
        self.counter_with(Backend::default())
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
/// through the policy view's `tokens`.
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

impl DecideWith {
    /// What the policies decide with, in words, for a reader who has not seen the option.
    pub fn meaning(self) -> &'static str {
        match self {
            DecideWith::Anchor => "each policy's own estimator, as the agent it comes from counts",
            DecideWith::Real => "the report's tokenizer, for every policy",
            DecideWith::Tokenizer(Tokenizer::Estimate) => "len/4, for every policy",
            DecideWith::Tokenizer(_) => "this tokenizer, for every policy",
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
    /// Builds whatever the counter loads lazily (an encoding's tables), so that a caller can do it
    /// on one worker while the others read files. Counting works without it.
    fn prepare(&self) {}
    /// The name its counts are kept under between runs ([`crate::counts`]), for an exact counter
    /// whose counts are worth keeping; `None` (the default) keeps nothing.
    fn kept_as(&self) -> Option<String> {
        None
    }
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

/// Whitespace runs at least this long (bytes) are never given to tiktoken-rs, which panics
/// somewhere between 500k and 1M spaces (fancy-regex's backtracking limit, TOKENIZERS.md §1); this
/// leaves a wide margin, and such runs are rare in real output.
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
/// Both give OpenAI's counts: `tests/counters.rs` checks every text a replay of the shared corpus
/// counts, for o200k and cl100k, and the unit tests below check pathological whitespace. The
/// default is the fastest; tiktoken-rs stays available as the reference (README, "Which exact
/// counter", has the measurements behind the choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Backend {
    /// The `tiktoken` crate (goliajp/rust-tiktoken): a pure-Rust port with
    /// allocation-free counting and a per-thread cache of merged pieces. No backtracking regex.
    #[default]
    Tiktoken,
    /// tiktoken-rs `encode_ordinary`: OpenAI's own core, vendored; the reference.
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

    /// The other backend: where a text goes when this one cannot count it.
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

/// An exact OpenAI BPE counter: tiktoken-rs by default ([`Bpe::new`]), or any [`Backend`]. The
/// guards of [`Backend`] apply: tiktoken-rs never sees a whitespace run that would make it panic,
/// and a backend that panics hands the text to the other one.
pub struct Bpe {
    tokenizer: Tokenizer,
    backend: Backend,
}

impl Bpe {
    /// A tiktoken-rs counter for `o200k` or `cl100k` (the encoding is loaded on first use).
    ///
    /// # Panics
    /// When given [`Tokenizer::Estimate`], which is not a BPE encoding.
    pub fn new(tokenizer: Tokenizer) -> Bpe {
        Bpe::with_backend(tokenizer, Backend::TiktokenRs)
    }

    /// A counter for `o200k` or `cl100k` on `backend`.
    ///
    /// # Panics
    /// When given [`Tokenizer::Estimate`], which is not a BPE encoding.
    pub fn with_backend(tokenizer: Tokenizer, backend: Backend) -> Bpe {
        assert!(tokenizer != Tokenizer::Estimate, "estimate is not a BPE encoding");
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

/// Builds the tables of `tokenizer` in `backend` once per process, in the arena
/// ([`crate::arena::building`]: o200k 64–72 → 36–40 ms when the binary installs its allocator),
/// whether [`Counter::prepare`] or a first count asks for them; a thread that asks while another
/// builds them waits.
fn tables(tokenizer: Tokenizer, backend: Backend) {
    static BUILT: [Once; 4] = [const { Once::new() }; 4];
    let slot = usize::from(backend == Backend::TiktokenRs) * 2 + usize::from(tokenizer == Tokenizer::Cl100k);
    BUILT[slot].call_once(|| {
        crate::arena::building(|| count_with_tables(tokenizer, backend, ""));
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
        (Backend::TiktokenRs, Tokenizer::Cl100k) => {
            tiktoken_rs::cl100k_base_singleton().encode_ordinary(text).len() as Tokens
        }
        (Backend::TiktokenRs, _) => tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len() as Tokens,
        (Backend::Tiktoken, t) => {
            let name = if t == Tokenizer::Cl100k { "cl100k_base" } else { "o200k_base" };
            // Both vocabularies are compiled in (Cargo.toml features), so the lookup cannot fail.
            let bpe = tiktoken::get_encoding(name).expect("o200k_base and cl100k_base are compiled in");
            bpe.count(text) as Tokens
        }
    }
}

/// Counts `text` exactly, starting with `backend`: a text with a long piece ([`has_long_run`])
/// goes to the linear counter and never to tiktoken-rs, and a backend that panics hands the text
/// to the other one. A text that makes both panic (never observed) is counted in two halves, which
/// can differ from the true count by a token or two at the seam, rather than crash the run.
fn exact(tokenizer: Tokenizer, backend: Backend, text: &str) -> Tokens {
    let long = has_long_run(text);
    if long {
        if let Ok(n) = catch_unwind(AssertUnwindSafe(|| pathological(tokenizer, text))) {
            return n;
        }
    }
    exact_with(&|b, t| raw_count(tokenizer, b, t), backend, text, Some(long))
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

/// Counts a text with a pathological run: bpe-openai (github/rust-gems), which implements the same
/// encodings without a backtracking regex and merges a piece in linear time (a 200 MB word: 4.7 s,
/// 450 MB) and gives the same counts (tests below, and `tests/bad_input.rs`).
fn pathological(tokenizer: Tokenizer, text: &str) -> Tokens {
    let bpe = match tokenizer {
        Tokenizer::Cl100k => bpe_openai::cl100k_base(),
        _ => bpe_openai::o200k_base(),
    };
    bpe.count(text) as Tokens
}

/// [`exact`] over any raw counter (tests inject one that panics); `long` is [`has_long_run`] of
/// `text` when the caller already knows it.
fn exact_with(
    raw: &dyn Fn(Backend, &str) -> Tokens,
    backend: Backend,
    text: &str,
    long: Option<bool>,
) -> Tokens {
    let mut long = long;
    for b in [backend, backend.other()] {
        if b == Backend::TiktokenRs && *long.get_or_insert_with(|| has_long_run(text)) {
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
    exact_with(raw, backend, &text[..mid], None) + exact_with(raw, backend, &text[mid..], None)
}

/// A counter that keeps a copy of every text it counts, for differential tests and benchmarks
/// (behind a [`Meter`], whose cache asks for each distinct text once, that is every distinct text
/// a measurement and a replay count). The order of the texts depends on thread scheduling.
pub struct Recording {
    inner: Box<dyn Counter>,
    texts: Arc<Mutex<Vec<String>>>,
}

impl Recording {
    /// Counts with `inner` and appends every text to `texts`.
    pub fn new(inner: Box<dyn Counter>, texts: Arc<Mutex<Vec<String>>>) -> Recording {
        Recording { inner, texts }
    }
}

impl Counter for Recording {
    fn tokenizer(&self) -> Tokenizer {
        self.inner.tokenizer()
    }
    fn count(&self, text: &str) -> Tokens {
        lock(&self.texts).push(text.to_owned());
        self.inner.count(text)
    }
    fn prepare(&self) {
        self.inner.prepare();
    }
}

/// Length in chars of the longest run of whitespace in `text`.
pub fn longest_whitespace_run(text: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in text.chars() {
        run = if c.is_whitespace() { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

const SHARDS: usize = 64;

/// Counts by 128-bit text hash, shared between threads. Counts do not depend on the order in
/// which texts arrive, so sharing the cache cannot change any output. The lock is held only to
/// look a count up or put it in, never while counting, and the 64 shards each sit on their own
/// cache lines: two threads meet only when they want the same shard at the same moment.
pub struct CountCache {
    shards: Vec<Shard>,
    /// Whether counts kept from an earlier run were put in ([`CountCache::seed`]).
    seeded: bool,
}

/// One shard, alone on two 64-byte cache lines (processors prefetch lines in pairs), so that
/// threads working in different shards never write to the same line.
#[repr(align(128))]
struct Shard(Mutex<HashMap<u128, Tokens, KeyHash>>);

/// The map's keys are already hashes of the texts: their high half serves as the map's hash (the
/// low half picks the shard).
#[derive(Debug, Default, Clone, Copy)]
struct KeyHash;

impl BuildHasher for KeyHash {
    type Hasher = KeyHasher;
    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(0)
    }
}

struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `u128` keys are hashed (`write_u128`); this keeps any other input well defined.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = (n >> 64) as u64;
    }
}

impl Default for CountCache {
    fn default() -> Self {
        CountCache {
            shards: (0..SHARDS).map(|_| Shard(Mutex::new(HashMap::default()))).collect(),
            seeded: false,
        }
    }
}

impl CountCache {
    /// The key a text's count is cached under, in memory and in a count cache file
    /// ([`crate::counts`]): its xxh3-128 hash.
    pub fn key(text: &str) -> u128 {
        xxhash_rust::xxh3::xxh3_128(text.as_bytes())
    }

    /// The cached count of `text`, computing it with `count` on a miss.
    pub fn get_or_count(&self, text: &str, count: impl FnOnce(&str) -> Tokens) -> Tokens {
        let key = CountCache::key(text);
        let shard = &self.shards[(key as usize) % SHARDS].0;
        if let Some(n) = lock(shard).get(&key) {
            return *n;
        }
        let n = count(text);
        lock(shard).insert(key, n);
        n
    }

    /// Puts in counts kept from an earlier run, keyed by [`CountCache::key`].
    pub fn seed(&mut self, entries: &[Entry]) {
        for shard in &mut self.shards {
            let map = shard.0.get_mut().unwrap_or_else(|e| e.into_inner());
            map.reserve(entries.len() / SHARDS + 1);
        }
        for &(key, tokens) in entries {
            let map = self.shards[(key as usize) % SHARDS].0.get_mut().unwrap_or_else(|e| e.into_inner());
            map.insert(key, tokens);
        }
        self.seeded |= !entries.is_empty();
    }

    /// Every count held, in no particular order (seeded ones included).
    pub fn entries(&self) -> Vec<Entry> {
        let mut out = Vec::with_capacity(self.len());
        for shard in &self.shards {
            out.extend(lock(&shard.0).iter().map(|(&k, &n)| (k, n)));
        }
        out
    }

    /// Number of distinct texts counted (or seeded).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).len()).sum()
    }

    /// Whether nothing was counted yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
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

    /// A meter that reports with `report` and lets policies decide with `decide`, both counted
    /// by `backend`.
    pub fn with_backend(report: Tokenizer, decide: Tokenizer, backend: Backend) -> Meter {
        Meter::with_counters(report.counter_with(backend), decide.counter_with(backend))
    }

    /// Loads both counters' tables now (see [`Counter::prepare`]), in parallel when the pool has
    /// a free worker: call it on one worker while the others read files, so the first count does
    /// not wait.
    ///
    /// A counter whose cache was seeded with kept counts ([`Meter::seed`]) is left alone: the
    /// texts it is asked for were most likely counted before, and a miss builds the tables then.
    pub fn prepare(&self) {
        let report = || {
            if !self.report_cache.seeded {
                self.report.prepare();
            }
        };
        let decide = || {
            if !self.decide_cache.seeded {
                self.decide.prepare();
            }
        };
        rayon::join(report, decide);
    }

    /// The caches worth keeping between runs, with the name each is kept under: the report's, and
    /// the decision counter's when it is another exact tokenizer.
    fn kept_caches(&mut self) -> Vec<(String, &mut CountCache)> {
        let separate = self.decide.tokenizer() != self.report.tokenizer();
        let mut out = Vec::new();
        if let Some(name) = self.report.kept_as() {
            out.push((name, &mut self.report_cache));
        }
        if let Some(name) = self.decide.kept_as().filter(|_| separate) {
            out.push((name, &mut self.decide_cache));
        }
        out
    }

    /// Seeds the caches with counts kept from earlier runs ([`crate::counts`]); returns how many
    /// were put in. Call it before measuring.
    pub fn seed(&mut self, kept: &StoredCounts) -> usize {
        let mut seeded = 0;
        for (name, cache) in self.kept_caches() {
            let entries = kept.section(&name);
            cache.seed(entries);
            seeded += entries.len();
        }
        seeded
    }

    /// Adds every count this meter holds to `kept`, to be written for the next run.
    pub fn keep(&mut self, kept: &mut StoredCounts) {
        for (name, cache) in self.kept_caches() {
            kept.merge(&name, cache.entries());
        }
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

    /// Distinct texts counted so far with the report's tokenizer (kept counts it was seeded with
    /// included).
    pub fn distinct_texts(&self) -> usize {
        self.report_cache.len()
    }
}

/// `(chars, non-ASCII chars, UTF-16 code units)` of `text`.
///
/// Counted on the bytes: in valid UTF-8 every byte that is not a continuation byte (`10xxxxxx`)
/// starts a char, ASCII chars are the bytes below 0x80, and only a 4-byte char (lead byte 0xF0 or
/// above) takes two UTF-16 code units. Byte counters summed over chunks of 255 bytes let the
/// compiler vectorise the loop: 0.5 ms for 10 MB of Claude Code JSON against 5.6 ms for a loop
/// over `chars()` and 7.6 ms with 64-bit counters (a throwaway benchmark, 2026-11-30).
pub fn char_counts(text: &str) -> (u64, u64, u64) {
    if text.is_ascii() {
        let n = text.len() as u64;
        return (n, 0, n);
    }
    let (mut chars, mut ascii, mut four) = (0u64, 0u64, 0u64);
    for chunk in text.as_bytes().chunks(255) {
        let (mut c, mut a, mut f) = (0u8, 0u8, 0u8);
        for &b in chunk {
            c += u8::from((b as i8) >= -0x40);
            a += u8::from(b < 0x80);
            f += u8::from(b >= 0xF0);
        }
        chars += u64::from(c);
        ascii += u64::from(a);
        four += u64::from(f);
    }
    (chars, chars - ascii, chars + four)
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
        assert_eq!(
            Tokenizer::O200k.counter_with(Backend::Tiktoken).kept_as().as_deref(),
            Some("o200k/tiktoken")
        );
        assert_eq!(
            Tokenizer::Cl100k.counter_with(Backend::TiktokenRs).kept_as().as_deref(),
            Some("cl100k/tiktoken-rs")
        );
        assert_eq!(Tokenizer::Estimate.counter().kept_as(), None);
    }

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
    fn pathological_texts_go_to_the_linear_counter_and_agree_with_both_others() {
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
        let punct = "-=".repeat(6_000);
        let spaces = format!("a{}b", " ".repeat(150_000));
        let mixed = format!("{}\n{}x", " ".repeat(120_000), "\t".repeat(3));
        for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
            for text in [&letters, &punct, &cjk, &spaces, &mixed] {
                assert!(has_long_run(text), "{}", &text[..20]);
                let reference = raw_count(t, Backend::TiktokenRs, text);
                assert_eq!(pathological(t, text), reference, "{t}: {}", &text[..20]);
                assert_eq!(raw_count(t, Backend::Tiktoken, text), reference, "{t}");
                assert_eq!(exact(t, Backend::Tiktoken, text), reference, "{t}");
            }
        }
        assert!(!has_long_run(&"word ".repeat(100_000)));
        assert!(!has_long_run(&"x".repeat(LONG_WORD - 1)));
        // Long runs without whitespace but of mixed classes are cut into short pieces: the
        // regular counters get them, and agree with the linear one.
        let json = r#"{"id":"0a1b2c","text":"line\nnext\tcol","n":[1,2,3]},"#.repeat(1_000);
        for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
            for text in [&base64, &url, &json] {
                assert!(!has_long_run(text), "{}", &text[..20]);
                let reference = raw_count(t, Backend::TiktokenRs, text);
                assert_eq!(pathological(t, text), reference, "{t}: {}", &text[..20]);
                assert_eq!(exact(t, Backend::Tiktoken, text), reference, "{t}");
            }
        }
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
        // both encodings (TOKENIZERS.md §2), an implementation independent of both backends.
        let text = format!("{}x", " ".repeat(1_000_000));
        for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
            for b in Backend::ALL {
                assert_eq!(t.counter_with(b).count(&text), 7_814, "{t} {b}");
            }
        }
    }

    #[test]
    fn backends_agree_on_long_whitespace_below_the_crash_size() {
        for t in [Tokenizer::O200k, Tokenizer::Cl100k] {
            for text in [
                format!("a{}b", " ".repeat(150_000)),
                format!("{}\n{}x", " ".repeat(120_000), "\t".repeat(3)),
                "fn main() {\n    println!(\"日本語 <|endoftext|>\");\n}\n".repeat(50),
            ] {
                let reference = raw_count(t, Backend::TiktokenRs, &text);
                assert_eq!(raw_count(t, Backend::Tiktoken, &text), reference, "{t}");
                for b in Backend::ALL {
                    assert_eq!(t.counter_with(b).count(&text), reference, "{t} {b}");
                }
            }
        }
    }

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
        assert_eq!(exact_with(&raw, Backend::Tiktoken, "abcdef", None), 6);
        assert_eq!(*calls.lock().unwrap(), [Backend::Tiktoken, Backend::TiktokenRs]);
        // A long whitespace run never reaches tiktoken-rs, even as the preferred backend.
        let calls = std::sync::Mutex::new(Vec::new());
        let raw = |b: Backend, t: &str| -> Tokens {
            calls.lock().unwrap().push(b);
            t.len() as Tokens
        };
        let spaces = " ".repeat(LONG_WHITESPACE_RUN);
        assert_eq!(exact_with(&raw, Backend::TiktokenRs, &spaces, None), LONG_WHITESPACE_RUN as Tokens);
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
        assert_eq!(exact_with(&raw, Backend::Tiktoken, "aあbいc", None), 3);
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
}
