//! The anchor policies on every real session of the corpus, beside an independent transcription
//! of each agent's rule (issue 31): for every request, the results the policy clears (and the
//! calls whose arguments it clears) must be the ones the transcription clears, with the same
//! text, under `on=output` and `on=content`.
//!
//! Each submodule transcribes one agent's rule from its source (file and commit cited there) over
//! the measured conversation's items, without calling the policy under test; the library gives
//! only what the rule reads as input (texts, whether a result errored, turn starts, and for the
//! token triggers the measured, calibrated sizes), and each says which. `on=content` is the same
//! rule on the seed's split, a modelled difference the transcriptions name: only a result the
//! seed splits ([`prunable`]) can be cleared, the others count as the agent counts them.
//!
//! The policy runs through the library's replay wrapped in [`Recorder`], which logs what is
//! cleared before each request. Each test prints, per spec, the sessions, requests and prune
//! events compared (`cargo test --release --test it anchors:: -- --nocapture`), and fails at the
//! first request that differs, naming the session.

mod anthropic;
mod gemini;
mod langchain;
mod opencode;
mod openhands;
mod swe_agent;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use ctxbudget::measure::{MeasuredConversation, MeasuredItem, MeasuredResult, ResultSizes};
use ctxbudget::{Capabilities, DecideWith, Edit, Meter, On, Policy, PolicySpec, Replayer, Tokenizer, View};

use crate::common;

/// The threshold the replays split at (the seed's).
pub const THRESHOLD: usize = ctxbudget::SUMMARY_THRESHOLD;

/// One conversation of the corpus, measured as the command line measures it (calibrated).
pub struct Session {
    /// File and conversation, for messages.
    pub name: String,
    /// The measured conversation.
    pub measured: MeasuredConversation,
}

/// What is cleared before one request: results (index → the text put in place, empty for a
/// plain prune) and the results whose calls lost their arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cleared {
    /// Cleared results and their replacement text.
    pub results: BTreeMap<usize, String>,
    /// Results whose call's arguments were cleared.
    pub calls: BTreeSet<usize>,
}

/// The measured meter of the command line (o200k report, anchors deciding).
pub fn meter() -> Meter {
    Meter::new(Tokenizer::O200k, Tokenizer::Estimate).deciding(DecideWith::Anchor)
}

/// Every conversation of every corpus file the library imports, measured once for all tests
/// (`None` when the corpus is absent, a failure under `CI`).
pub fn sessions() -> Option<&'static [Session]> {
    static SESSIONS: OnceLock<Vec<Session>> = OnceLock::new();
    let root = common::corpus_root()?;
    Some(SESSIONS.get_or_init(|| {
        let found = ctxbudget::input::discover(std::slice::from_ref(&root));
        // The transcriptions restart the context where the log compacted: replayed as recorded.
        let replayer = Replayer::new().harness_compaction(ctxbudget::HarnessCompaction::Recorded);
        let mut sessions = Vec::new();
        for file in &found.files {
            // Files the library does not import (notes, cassettes of other shapes) are not sessions.
            let Ok(trace) = ctxbudget::input::load(file, None) else { continue };
            let shown = file.strip_prefix(&root).unwrap_or(file).display().to_string();
            for (c, measured) in trace.conversations.iter().zip(replayer.measure(&trace)) {
                sessions.push(Session { name: format!("{shown} ({})", c.id), measured });
            }
        }
        assert!(sessions.len() >= 30, "the corpus holds dozens of sessions, found {}", sessions.len());
        sessions
    }))
}

/// Wraps a policy and logs, before each request, what the replay will send cleared: a sticky
/// policy's edits accumulate; a non-sticky one's are the request's own, added to the previous
/// request's after [`Edit::KeepPrevious`]; results a compaction removed are dropped.
pub struct Recorder {
    inner: Box<dyn Policy>,
    now: Cleared,
    /// One entry per request.
    pub log: Vec<Cleared>,
}

impl Recorder {
    /// Records `inner`.
    pub fn new(inner: Box<dyn Policy>) -> Recorder {
        Recorder { inner, now: Cleared::default(), log: Vec::new() }
    }
}

impl Policy for Recorder {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let from = edits.len();
        self.inner.before_request(view, edits);
        let mine = &edits[from..];
        if !self.inner.capabilities().sticky && !mine.contains(&Edit::KeepPrevious) {
            self.now = Cleared::default();
        }
        for e in mine {
            match e {
                Edit::Prune(i) => {
                    self.now.results.insert(*i, String::new());
                }
                Edit::Replace(i, text) => {
                    self.now.results.insert(*i, text.clone());
                }
                Edit::ClearCall(i, _) => {
                    self.now.calls.insert(*i);
                }
                Edit::KeepPrevious => {}
            }
        }
        let first = view.results.first().map_or(usize::MAX, |r| r.index);
        self.now.results.retain(|i, _| *i >= first);
        self.now.calls.retain(|i| *i >= first);
        self.log.push(self.now.clone());
    }
}

/// The policy of `spec` replayed on `session`: what it clears before each request.
pub fn replayed(session: &Session, spec: &str, meter: &Meter) -> Vec<Cleared> {
    let parsed = PolicySpec::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let mut recorder = Recorder::new(parsed.build());
    ctxbudget::replay::replay_summary(&session.measured, THRESHOLD, &mut recorder, meter);
    recorder.log
}

/// A request of a conversation, as item positions: the context it sends is `start..end` (`start`
/// is just after the last compaction), and `previous` is where the previous request's context
/// ended (or `start`).
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// First item of the context.
    pub start: usize,
    /// The request's own item (the context ends before it).
    pub end: usize,
    /// The previous request's item, or `start` when there is none in this context.
    pub previous: usize,
}

/// The requests of `m`, in order.
pub fn requests(m: &MeasuredConversation) -> Vec<Request> {
    let (mut out, mut start, mut previous) = (Vec::new(), 0, 0);
    for (position, item) in m.items.iter().enumerate() {
        match item {
            MeasuredItem::Compaction { .. } => {
                start = position;
                previous = position;
            }
            MeasuredItem::Request { .. } => {
                out.push(Request { start, end: position, previous });
                previous = position;
            }
            _ => {}
        }
    }
    out
}

/// A tool result of the conversation: its conversation-wide index (what edits name) and item.
pub struct Res<'a> {
    /// Index among all tool results of the conversation.
    pub index: usize,
    /// Item position.
    pub position: usize,
    /// Its sizes.
    pub sizes: &'a ResultSizes,
    /// Its texts and name.
    pub result: &'a MeasuredResult,
}

impl Res<'_> {
    /// The tool's name, `""` when unknown.
    pub fn tool(&self) -> &str {
        self.result.name.as_deref().unwrap_or("")
    }

    /// The whole output as the tool produced it (a tool's own split joined by a newline).
    pub fn whole(&self) -> String {
        match self.sizes.presplit {
            None => self.result.text.to_string(),
            Some(true) => format!("{}\n{}", self.result.summary, self.result.text),
            Some(false) => self.result.summary.to_string(),
        }
    }
}

/// Every tool result of `m` with its index, in order.
pub fn results(m: &MeasuredConversation) -> Vec<Res<'_>> {
    let mut out = Vec::new();
    for (position, item) in m.items.iter().enumerate() {
        if let MeasuredItem::ToolResult(sizes, result) = item {
            out.push(Res { index: out.len(), position, sizes, result });
        }
    }
    out
}

/// The results whose items lie in `range`.
pub fn within<'r, 'a>(all: &'r [Res<'a>], range: std::ops::Range<usize>) -> &'r [Res<'a>] {
    let lo = all.partition_point(|r| r.position < range.start);
    let hi = all.partition_point(|r| r.position < range.end);
    &all[lo..hi]
}

/// Whether a rule may clear `r` under `on`: any output on whole outputs; on the seed's split only
/// an output the seed splits (a tool's own split with content, or a raw output over the
/// threshold): the modelled difference of `on=content`.
pub fn prunable(r: &Res<'_>, on: On) -> bool {
    on == On::Output
        || match r.sizes.presplit {
            Some(has_content) => has_content,
            None => r.result.text.len() > THRESHOLD,
        }
}

/// What a comparison covered.
#[derive(Debug, Default)]
pub struct Tally {
    /// Conversations replayed.
    pub sessions: usize,
    /// Requests compared.
    pub requests: usize,
    /// Requests whose cleared set differs from the previous request's (a prune event).
    pub events: usize,
    /// Results cleared, summed over requests.
    pub cleared: usize,
}

/// Replays each of `specs` on every session beside `expected` (the transcription, given the
/// session, the spec and its `on`) and fails at the first request that differs; `text` normalises a replacement
/// text before comparing (the identity for most anchors). Returns what was compared.
pub fn check(
    anchor: &str,
    specs: &[&str],
    text: fn(&str) -> String,
    expected: impl Fn(&Session, &str, On) -> Vec<Cleared>,
) -> Option<Vec<(String, Tally)>> {
    let sessions = sessions()?;
    let meter = meter();
    let mut tallies = Vec::new();
    for spec in specs {
        let on = if spec.contains("on=content") { On::Content } else { On::Output };
        let mut tally = Tally::default();
        for s in sessions {
            let want = expected(s, spec, on);
            let got: Vec<Cleared> = replayed(s, spec, &meter)
                .into_iter()
                .map(|mut c| {
                    c.results.values_mut().for_each(|t| *t = text(t));
                    c
                })
                .collect();
            assert_eq!(got.len(), want.len(), "{anchor} `{spec}` on {}: requests", s.name);
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                if g != w {
                    panic!(
                        "{anchor} `{spec}` differs from the transcription on {}, request {k}:\n  \
                         expected (transcription) {w:?}\n  got (policy) {g:?}",
                        s.name
                    );
                }
            }
            tally.sessions += 1;
            tally.requests += want.len();
            tally.events += want.windows(2).filter(|w| w[0] != w[1]).count()
                + usize::from(want.first().is_some_and(|c| *c != Cleared::default()));
            tally.cleared += want.iter().map(|c| c.results.len()).sum::<usize>();
        }
        println!(
            "{anchor} `{spec}`: {} sessions, {} requests, {} prune events, {} results cleared (summed over requests), no request differs",
            tally.sessions, tally.requests, tally.events, tally.cleared
        );
        tallies.push((spec.to_string(), tally));
    }
    Some(tallies)
}

/// Python's `len(text.splitlines())`: lines end at `\n`, `\r`, `\r\n`, `\v`, `\f`, `\x1c`, `\x1d`,
/// `\x1e`, `\x85`, U+2028, U+2029; an unterminated last line counts.
pub fn python_splitlines(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let (mut lines, mut i) = (0, 0);
    while i < chars.len() {
        let mut j = i;
        while j < chars.len()
            && !matches!(
                chars[j],
                '\n' | '\r'
                    | '\u{b}'
                    | '\u{c}'
                    | '\u{1c}'
                    | '\u{1d}'
                    | '\u{1e}'
                    | '\u{85}'
                    | '\u{2028}'
                    | '\u{2029}'
            )
        {
            j += 1;
        }
        lines += 1;
        if j + 1 < chars.len() && chars[j] == '\r' && chars[j + 1] == '\n' {
            j += 1;
        }
        i = j + 1;
    }
    lines
}

#[test]
fn python_splitlines_counts_as_python() {
    // Values from CPython: len("a\nb".splitlines()) == 2, and so on.
    assert_eq!(python_splitlines(""), 0);
    assert_eq!(python_splitlines("a\nb"), 2);
    assert_eq!(python_splitlines("a\nb\n"), 2);
    assert_eq!(python_splitlines("\n"), 1);
    assert_eq!(python_splitlines("a\r\n\rb"), 3);
    assert_eq!(python_splitlines("a\u{2028}b\u{85}"), 2);
}
