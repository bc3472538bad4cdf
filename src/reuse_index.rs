//! The reuse index of a conversation: which tool results' texts the agent quotes later, and where
//! it first does (docs/reuse.md has the definition, its limits and measured shares).
//!
//! A *term* is a path, an identifier or a whole line (as [`terms`] finds them). For each term, the
//! index keeps the agent's **first use** in a context (between two compactions): the first
//! assistant text, reasoning or tool-call argument that contains it, provided no always-sent item
//! before it (system or user text, a compaction summary, an earlier assistant text or call)
//! contains it, and provided a tool result sent before the request that produced the use does.
//! Those results are the term's *holders*. A policy that has removed every holder's content when
//! that request is made has removed the only copy of a term the agent then quoted: that is what
//! the reuse analysis (`analysis::reuse`) counts. Later uses of the same term need no check: the first use
//! is itself an always-sent item holding it.
//!
//! Built once per conversation from its raw texts (the measured conversation keeps only tool
//! results' texts), in one pass with hash sets of 64-bit term hashes: linear in the text. Terms
//! are told apart by their xxh3 hash; two terms with one hash (odds about 2^-64 per pair) would
//! be read as one. The sets key on those hashes as they are ([`TermHasher`]: an xxh3 hash is
//! already uniform, hashing it again with SipHash was a fifth of the index's cost). Pure: no I/O,
//! no policy, no counting.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::model::{Conversation, Item, Output};
use crate::split::FIRST_LINE_CHARS;
#[cfg(test)]
use crate::split::summary_with_lines;

/// Shortest path or identifier counted as a term, in bytes: shorter ones (`id`, `src`, `x.y`)
/// recur by chance.
pub const MIN_TERM_BYTES: usize = 6;

/// Shortest line counted as a term, in bytes after trimming: shorter lines (`}`, `return x;`,
/// `fi`) recur by chance.
pub const MIN_LINE_BYTES: usize = 24;

/// A tool result that held a term when the agent first used it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder {
    /// Index of the result among the conversation's tool results.
    pub result: usize,
    /// The term is also in the result's summary (the seed's automatic one, or the one the tool
    /// wrote), which a prune of the content leaves in the context.
    pub in_summary: bool,
}

/// The agent's first use of a term that only tool results held before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstUse {
    /// Index of the request whose response used the term (0-based).
    pub request: usize,
    /// The results that held it and were sent with that request, oldest first.
    pub holders: Vec<Holder>,
}

/// The first uses of a conversation, in the order of the uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReuseIndex {
    /// Every first use that some result held, in the order of the items (so by request,
    /// ascending: the reuse analysis skips those before a run's first prune).
    pub uses: Vec<FirstUse>,
    /// Tool results in the conversation.
    pub results: usize,
    /// Whether the index was built (an empty default stands for one not asked for:
    /// `MeasureOptions::reuse` in the measure module).
    pub built: bool,
    /// Per tool result, the first request it is not sent with because the agent cleared it
    /// (Claude Code's microcompact, `src/measure/cleared.rs`; `usize::MAX`: never); empty when
    /// the log records no clearing. Filled once the clearings are resolved, after the index is
    /// built (`cleared_from` in `src/measure/cleared.rs`).
    pub cleared: Vec<usize>,
}

/// A holder while the index is built: with the requests made before the result.
#[derive(Debug, Clone, Copy)]
struct Held {
    holder: Holder,
    requests_before: usize,
}

/// A term's holders while the index is built: most terms have one, kept without an allocation.
#[derive(Debug, Clone)]
enum Helds {
    One(Held),
    Many(Vec<Held>),
}

impl Helds {
    fn push(&mut self, held: Held) {
        match self {
            Helds::One(first) => *self = Helds::Many(vec![*first, held]),
            Helds::Many(all) => all.push(held),
        }
    }

    fn as_slice(&self) -> &[Held] {
        match self {
            Helds::One(held) => std::slice::from_ref(held),
            Helds::Many(all) => all,
        }
    }
}

/// The hasher of the index's sets: a term's key is its xxh3 hash, already uniform, so it is its
/// own hash (the order of the sets is never read, so nothing depends on it).
#[derive(Default)]
struct TermHasher(u64);

impl Hasher for TermHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are hashed ([`Hasher::write_u64`]); anything else is folded in.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Terms<V> = HashMap<u64, V, BuildHasherDefault<TermHasher>>;
type TermSet = HashSet<u64, BuildHasherDefault<TermHasher>>;

/// The state of one context (between two compactions) while the index is built.
#[derive(Default)]
struct Context {
    /// Terms some always-sent item holds.
    sent: TermSet,
    /// Terms only results hold, with those results.
    held: Terms<Helds>,
}

impl ReuseIndex {
    /// The index of `conversation`.
    pub fn new(conversation: &Conversation) -> ReuseIndex {
        let mut index = ReuseIndex { built: true, ..ReuseIndex::default() };
        let mut context = Context::default();
        let mut requests = 0usize;
        let mut scratch = Vec::new();
        for item in &conversation.items {
            match item {
                Item::System { text } | Item::User { text, .. } => {
                    terms(text, &mut scratch);
                    context.send(&scratch);
                }
                Item::Assistant { text } | Item::Thinking { text } => {
                    terms(text, &mut scratch);
                    context.use_terms(&scratch, requests, &mut index.uses);
                }
                Item::ToolCall { arguments, .. } => {
                    argument_terms(arguments, &mut scratch);
                    context.use_terms(&scratch, requests, &mut index.uses);
                }
                Item::ToolResult(r) => {
                    context.hold(&r.output, index.results, requests, &mut scratch);
                    index.results += 1;
                }
                Item::Request(_) => requests += 1,
                Item::Compaction { summary } => {
                    context = Context::default();
                    if let Some(s) = summary {
                        terms(s, &mut scratch);
                        context.send(&scratch);
                    }
                }
                // A result the agent cleared (Claude Code's microcompact) stays a holder here; the
                // reuse analysis takes it as absent from the request it is cleared for on
                // (`cleared`, filled once the clearings are resolved).
                Item::Unseen { .. } | Item::Cleared(_) => {}
            }
        }
        index
    }

    /// Whether the agent had cleared result `result` when request `request` was made: a run that
    /// applies the log's clearings does not send it there, summary and all.
    pub fn cleared_at(&self, result: usize, request: usize) -> bool {
        self.cleared.get(result).is_some_and(|&from| from <= request)
    }
}

impl Context {
    /// An always-sent item holds `found`: none of them can be lost any more.
    fn send(&mut self, found: &[u64]) {
        for t in found {
            self.sent.insert(*t);
            self.held.remove(t);
        }
    }

    /// The agent used `found` in the response to the request made last (`requests` made so far):
    /// the first use of each term only results hold.
    fn use_terms(&mut self, found: &[u64], requests: usize, uses: &mut Vec<FirstUse>) {
        for t in found {
            if !self.sent.insert(*t) {
                continue;
            }
            let Some(held) = self.held.remove(t) else { continue };
            // A result that came after the request (in the same response) was not sent with it.
            let holders: Vec<Holder> =
                held.as_slice().iter().filter(|h| h.requests_before < requests).map(|h| h.holder).collect();
            if let (Some(request), false) = (requests.checked_sub(1), holders.is_empty()) {
                uses.push(FirstUse { request, holders });
            }
        }
    }

    /// Result `result` (made after `requests` requests) holds the terms of `output`.
    fn hold(&mut self, output: &Output, result: usize, requests: usize, scratch: &mut Vec<u64>) {
        // The summary's terms, sorted and without repeats as `terms` leaves them, and the
        // content's in `scratch`.
        let mut in_summary = Vec::new();
        scratch.clear();
        match output {
            Output::Raw { output } => {
                // The automatic summary's line count is the content's, counted on the way.
                let lines = add_terms(output, scratch);
                let mut summary = String::new();
                automatic_summary(output, lines, &mut summary);
                terms(&summary, &mut in_summary);
            }
            Output::Split { summary, content } => {
                terms(summary, &mut in_summary);
                add_terms(content.as_deref().unwrap_or(""), scratch);
            }
        }
        // Sorted once with the summary's.
        scratch.extend_from_slice(&in_summary);
        scratch.sort_unstable();
        scratch.dedup();
        for t in scratch.iter() {
            if self.sent.contains(t) {
                continue;
            }
            let holder = Holder { result, in_summary: in_summary.binary_search(t).is_ok() };
            let held = Held { holder, requests_before: requests };
            match self.held.entry(*t) {
                Entry::Occupied(mut all) => all.get_mut().push(held),
                Entry::Vacant(none) => {
                    none.insert(Helds::One(held));
                }
            }
        }
    }
}

/// [`summary_with_lines`]`(output, lines)` written into `out`, without the copies of the first line
/// and of the whole that building it as a new string makes.
fn automatic_summary(output: &str, lines: usize, out: &mut String) {
    let first = output.lines().next().unwrap_or("");
    let end = first.char_indices().nth(FIRST_LINE_CHARS).map_or(first.len(), |(i, _)| i);
    out.clear();
    // The count's decimal digits, written without the formatting machinery (one summary per
    // result).
    let (mut digits, mut k, mut n) = ([0u8; 20], 20, lines);
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[k..].iter().map(|&d| char::from(d)));
    out.push_str(" lines | ");
    out.push_str(&first[..end]);
    out.push('…');
}

/// A byte's classes, as [`add_terms`] reads them from [`CLASS`]: part of a path or identifier
/// term, a letter, a mark that plain words lack (`_`, `.`, `/`, a digit), a capital, a slash.
const TERM: u8 = 1;
const ALPHA: u8 = 2;
const MARK: u8 = 4;
const UPPER: u8 = 8;
const SLASH: u8 = 16;

/// Every byte's classes, one lookup per byte of a text.
static CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut class = 0;
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-') {
            class |= TERM;
        }
        if c.is_ascii_alphabetic() {
            class |= ALPHA;
        }
        if matches!(c, b'_' | b'.' | b'/') || c.is_ascii_digit() {
            class |= MARK;
        }
        if c.is_ascii_uppercase() {
            class |= UPPER;
        }
        if c == b'/' {
            class |= SLASH;
        }
        table[b] = class;
        b += 1;
    }
    table
};

/// Whether `t` is distinctive enough to be a term: long enough, with a letter, and with a mark
/// that plain English words lack (`_`, `.`, `/`, a digit, or a capital after the first letter,
/// as in `camelCase`).
fn distinctive(t: &[u8]) -> bool {
    t.len() >= MIN_TERM_BYTES
        && t.iter().any(u8::is_ascii_alphabetic)
        && (t.iter().any(|b| matches!(b, b'_' | b'.' | b'/') || b.is_ascii_digit())
            || t[1..].iter().any(u8::is_ascii_uppercase))
}

/// The terms of `text`, hashed, sorted and without repeats, into `out`: every distinctive run of
/// term bytes (trimmed of `.` and `-` at either end and `/` at the end), each path's suffixes
/// after a `/` (so `src/main.rs` matches `/home/me/src/main.rs`), and every normalised line of at
/// least [`MIN_LINE_BYTES`] with a letter ([`normalise_line`]).
pub fn terms(text: &str, out: &mut Vec<u64>) {
    terms_counting_lines(text, out);
}

/// [`terms`], returning the number of lines of `text` (`text.lines().count()`).
fn terms_counting_lines(text: &str, out: &mut Vec<u64>) -> usize {
    out.clear();
    let lines = add_terms(text, out);
    out.sort_unstable();
    out.dedup();
    lines
}

/// Adds the terms of `text` to `out` (unsorted); returns the number of its lines. One pass: its
/// lines (as `str::lines` cuts them) are taken at each `\n` the scan for runs meets.
fn add_terms(text: &str, out: &mut Vec<u64>) -> usize {
    let bytes = text.as_bytes();
    let (mut i, mut line_start, mut lines) = (0, 0, 0);
    while i < bytes.len() {
        if CLASS[usize::from(bytes[i])] & TERM == 0 {
            if bytes[i] == b'\n' {
                let line = &text[line_start..i];
                add_line(line.strip_suffix('\r').unwrap_or(line), out);
                lines += 1;
                line_start = i + 1;
            }
            i += 1;
            continue;
        }
        let (start, mut seen) = (i, 0);
        while let Some(&b) = bytes.get(i) {
            let class = CLASS[usize::from(b)];
            if class & TERM == 0 {
                break;
            }
            seen |= class;
            i += 1;
        }
        // Trimming only shortens a run and its suffixes are parts of it: a run too short, without
        // a letter, or without a mark or a capital anywhere holds no distinctive term.
        if i - start >= MIN_TERM_BYTES && seen & ALPHA != 0 && seen & (MARK | UPPER) != 0 {
            add_run(&bytes[start..i], seen & SLASH != 0, out);
        }
    }
    if line_start < bytes.len() {
        add_line(&text[line_start..], out);
        lines += 1;
    }
    lines
}

/// A line's term, if it has one: the line normalised ([`normalise_line`]), when it is long enough
/// and has a letter.
fn add_line(line: &str, out: &mut Vec<u64>) {
    // Normalising only shortens a line.
    if line.len() < MIN_LINE_BYTES {
        return;
    }
    let line = normalise_line(line);
    if line.len() >= MIN_LINE_BYTES && line.bytes().any(|b| b.is_ascii_alphabetic()) {
        out.push(xxh3_64_with_seed(line.as_bytes(), 1));
    }
}

/// A run of term bytes: the run trimmed, and each of its path suffixes (when it has a `/`), when
/// distinctive.
fn add_run(run: &[u8], slash: bool, out: &mut Vec<u64>) {
    let start = run.iter().position(|b| !matches!(b, b'.' | b'-')).unwrap_or(run.len());
    let end = run.iter().rposition(|b| !matches!(b, b'.' | b'-' | b'/')).map_or(start, |e| e + 1);
    if start >= end {
        return;
    }
    let run = &run[start..end];
    if distinctive(run) {
        out.push(xxh3_64_with_seed(run, 0));
    }
    if !slash {
        return;
    }
    for (k, _) in run.iter().enumerate().filter(|(_, b)| **b == b'/') {
        let suffix = &run[k + 1..];
        if distinctive(suffix) {
            out.push(xxh3_64_with_seed(suffix, 0));
        }
    }
}

/// A line as compared: trimmed, without a leading line number as file viewers print them
/// (`12→`, `12\t`, `12:`, `12|`) and without one leading diff mark (`+` or `-`), so a line read
/// from `cat -n` matches the same line in a patch or an edit's `old_string`.
pub fn normalise_line(line: &str) -> &str {
    let mut l = trim(line);
    let digits = l.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let rest = &l[digits..];
        for mark in ["→", "\t", ":", "|"] {
            if let Some(r) = rest.strip_prefix(mark) {
                l = r.trim();
                break;
            }
        }
    }
    if let Some(r) = l.strip_prefix(['+', '-']) {
        l = r.trim();
    }
    l
}

/// `text.trim()`, the ASCII white space at either end (the usual case) taken off without decoding
/// characters.
fn trim(text: &str) -> &str {
    // The ASCII characters `char::is_whitespace` holds (`\x0b` too, unlike `u8::is_ascii_whitespace`).
    let white = |b: &u8| matches!(b, b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' | b' ');
    let bytes = text.as_bytes();
    let start = bytes.iter().position(|b| !white(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !white(b)).map_or(start, |e| e + 1);
    // Cut at ASCII bytes, so at character boundaries; a non-ASCII end may be white space too.
    let mut t = &text[start..end];
    if t.as_bytes().first().is_some_and(|b| !b.is_ascii()) {
        t = t.trim_start();
    }
    if t.as_bytes().last().is_some_and(|b| !b.is_ascii()) {
        t = t.trim_end();
    }
    t
}

/// The terms of a tool call's arguments: of each string in them when they are JSON (so lines of
/// an escaped `old_string` or patch are lines again), else of the text as is.
pub fn argument_terms(arguments: &str, out: &mut Vec<u64>) {
    out.clear();
    let mut json = serde_json::Deserializer::from_str(arguments);
    if StringTerms(out).deserialize(&mut json).and_then(|()| json.end()).is_err() {
        // Not JSON: whatever was read of it is read again as text.
        out.clear();
        add_terms(arguments, out);
    }
    out.sort_unstable();
    out.dedup();
}

/// Adds the terms of each string of a JSON value, as it is read (no tree of it is built): what an
/// object holds under each key, not its keys.
struct StringTerms<'o>(&'o mut Vec<u64>);

impl<'de> DeserializeSeed<'de> for StringTerms<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StringTerms<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        add_terms(s, self.0);
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        while items.next_element_seed(StringTerms(&mut *self.0))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(StringTerms(&mut *self.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        terms(text, &mut out);
        out
    }

    fn has(text: &str, term: &str) -> bool {
        found(text).contains(&xxh3_64_with_seed(term.as_bytes(), 0))
    }

    #[test]
    fn paths_and_identifiers_are_terms_and_plain_words_are_not() {
        let text = "Because the function parse_config in src/config.rs calls MeasuredConversation.";
        assert!(has(text, "parse_config"));
        assert!(has(text, "src/config.rs"));
        assert!(has(text, "config.rs"), "a path's suffix after a slash");
        assert!(has(text, "MeasuredConversation"), "trailing full stop trimmed");
        assert!(!has(text, "Because") && !has(text, "function"), "plain words");
        assert!(!has("x.rs a_b", "x.rs"), "too short");
        assert!(!has("1234567", "1234567"), "no letter");
    }

    /// The terms as first defined, byte by byte, without the quick checks of [`add_terms`].
    fn oracle(text: &str) -> Vec<u64> {
        let term_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-');
        let (bytes, mut out, mut i) = (text.as_bytes(), Vec::new(), 0);
        while i < bytes.len() {
            if !term_byte(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && term_byte(bytes[i]) {
                i += 1;
            }
            add_run(&bytes[start..i], true, &mut out);
        }
        for line in text.lines() {
            let line = normalise_line(line);
            if line.len() >= MIN_LINE_BYTES && line.bytes().any(|b| b.is_ascii_alphabetic()) {
                out.push(xxh3_64_with_seed(line.as_bytes(), 1));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn the_quick_checks_find_the_terms_the_definition_finds() {
        let texts = [
            "Because the function parse_config in src/config.rs calls MeasuredConversation.",
            "Sentence. Another one; camelCase and CamelCase, x.rs, ...trail---, ./a/b/longer_name/",
            "  12→    let total = items.iter().sum();\n-    let x = compute(1, 2, 3);\r\n+short\n",
            "/home/me/src/main.rs:42: error[E0308]: mismatched types (éàü ünïcode_idént 日本語)\n",
            "v1.2.3 abc-def-ghi 2024-01-01 ABCDEF abcdef a1b2c3 __init__ ------ ...... //////\n",
            "a line that is long enough to count\r\n\r\n\nanother line long enough, ended by CR only\r",
            "\u{a0}\u{2003} a line that starts with white space beyond ASCII \u{3000}\n\x0b\x0c  vertical tab line, long enough\x0b",
        ];
        for text in texts {
            let mut counted = Vec::new();
            let lines = terms_counting_lines(text, &mut counted);
            assert_eq!(counted, oracle(text), "{text:?}");
            assert_eq!(lines, text.lines().count(), "{text:?}");
            assert!(!counted.is_empty(), "{text:?}");
        }
    }

    #[test]
    fn a_raw_result_holds_its_automatic_summary_terms_as_summary_terms() {
        let output = format!("fn parse_config() {{}}\n{}\nfn other_function() {{}}\n", "x".repeat(30));
        let conversation = Conversation {
            id: "c".into(),
            items: vec![
                Item::ToolResult(crate::model::ToolResult {
                    call_id: "a".into(),
                    name: Some("read".into()),
                    output: Output::Raw { output: output.clone() },
                    is_error: false,
                    images: 0,
                }),
                Item::Request(Default::default()),
                Item::Assistant { text: "parse_config and other_function".into() },
            ],
            recorded_total: None,
        };
        let index = ReuseIndex::new(&conversation);
        assert_eq!(index.uses.len(), 2, "{index:?}");
        // `parse_config` is in the first line, the summary (`3 lines | fn parse_config() {}…`).
        let mut in_summary: Vec<bool> = index.uses.iter().map(|u| u.holders[0].in_summary).collect();
        in_summary.sort_unstable();
        assert_eq!(in_summary, [false, true]);
        assert!(crate::split::summary_of(&output).starts_with("3 lines | fn parse_config"));
    }

    #[test]
    fn the_automatic_summary_is_the_split_one() {
        let long = "é".repeat(100);
        let texts =
            ["", "one line", "first\r\nsecond\n", "\n\nthird", "a\rb\nc", long.as_str(), "x\u{2028}y"];
        let mut out = String::from("left over");
        for text in texts {
            for lines in [text.lines().count(), 10, 1_234_567, usize::MAX] {
                automatic_summary(text, lines, &mut out);
                assert_eq!(out, summary_with_lines(text, lines), "{text:?}");
            }
        }
    }

    /// The terms of arguments as first read: the JSON parsed into a tree, each string's terms.
    fn argument_oracle(arguments: &str) -> Vec<u64> {
        fn walk(value: &serde_json::Value, out: &mut Vec<u64>) {
            match value {
                serde_json::Value::String(s) => {
                    add_terms(s, out);
                }
                serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
                serde_json::Value::Object(map) => map.values().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        match serde_json::from_str::<serde_json::Value>(arguments) {
            Ok(value) => walk(&value, &mut out),
            Err(_) => {
                add_terms(arguments, &mut out);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn arguments_read_as_they_parse_have_the_terms_of_the_parsed_tree() {
        let texts = [
            r#"{"file_path": "/home/me/src/main.rs", "old_string": "    let total = items.iter().sum();\n}"}"#,
            r#"{"edits": [{"old": "parse_config()", "new": "parse_settings()"}, 42, 1.5e3, true, null], "n": -7}"#,
            r#"["src/a_b.rs", ["nested_name", {"deep": "MeasuredConversation"}]]"#,
            r#""a bare string with some_identifier""#,
            r#"{"escaped": "line_one\nline_two \u00e9t\u00e9 \"quoted_term\"", "other_key_name": 12}"#,
            r#"{"truncated": "src/main.rs", "rest": ["#,
            r#"{"a": "src/one.rs"} trailing_text.rs"#,
            "not json at all: src/main.rs parse_config",
            "",
        ];
        for text in texts {
            let mut got = vec![7];
            argument_terms(text, &mut got);
            assert_eq!(got, argument_oracle(text), "{text:?}");
        }
        let mut got = Vec::new();
        argument_terms(texts[0], &mut got);
        assert!(got.contains(&xxh3_64_with_seed(b"src/main.rs", 0)), "a path in a string value");
        // A key an object repeats: each value's terms (a parsed tree keeps only the last).
        argument_terms(r#"{"a": "first_term", "a": "second_term"}"#, &mut got);
        let want = [xxh3_64_with_seed(b"first_term", 0), xxh3_64_with_seed(b"second_term", 0)];
        assert!(want.iter().all(|t| got.contains(t)), "{got:?}");
    }

    #[test]
    fn a_line_read_with_numbers_matches_the_line_in_a_patch_or_an_edit() {
        let line = "    let total = items.iter().sum();";
        let read = found(&format!("   12→{line}\n"));
        let mut edit = Vec::new();
        argument_terms(&serde_json::json!({"old_string": format!("{line}\n}}")}).to_string(), &mut edit);
        let patch = found(&format!("@@\n-{line}\n+    let total = 0;\n"));
        let want = xxh3_64_with_seed(line.trim().as_bytes(), 1);
        assert!(read.contains(&want) && edit.contains(&want) && patch.contains(&want));
        assert_eq!(normalise_line("  7\tfoo"), "foo");
        assert_eq!(normalise_line("2024-01-01 is a date"), "2024-01-01 is a date");
        for text in ["", " ", "\u{a0}", " \u{a0} x \u{2003}\t", "\x0bx\x0b", "é ", " \u{85}x\u{85} ", "\r\n"]
        {
            assert_eq!(trim(text), text.trim(), "{text:?}");
        }
    }
}
