//! Test support shared by the policy tests: a builder for small hand-made conversations and a
//! replay that records what a policy edits before each request, so a test can state "result 2 is
//! cleared before request 5" and check it. Test-only; the replay is the real engine.
//!
//! The meter counts one token per UTF-8 byte, so "real" tokens are bytes and numbers are easy to
//! follow by hand; anchor estimators are computed from chars and UTF-16 units as usual.

use crate::measure::{MeasureOptions, MeasuredConversation};
use crate::model::{Conversation, Item, Millis, Output, Request, Tokens, ToolResult};
use crate::policy::{Edit, Policy, PolicySpec, View};
use crate::replay::replay;
use crate::result::Run;
use crate::tokens::{Counter, DecideWith, Meter, Tokenizer};

/// Outputs longer than this many bytes are split (the threshold every policy test uses).
pub const THRESHOLD: usize = 16;

/// One token per byte.
struct Bytes;

impl Counter for Bytes {
    fn tokenizer(&self) -> Tokenizer {
        Tokenizer::O200k
    }
    fn count(&self, text: &str) -> u64 {
        text.len() as u64
    }
}

/// A meter that counts bytes as tokens, deciding as `decide` says.
pub fn meter(decide: DecideWith) -> Meter {
    Meter::with_counters(Box::new(Bytes), Box::new(Bytes)).deciding(decide)
}

/// A conversation under construction. Tool calls get ids `c0`, `c1`, … in order, so the n-th
/// [`Convo::tool`] is result index n.
#[derive(Default)]
pub struct Convo {
    items: Vec<Item>,
    calls: usize,
    now: Option<Millis>,
    overhead: Tokens,
}

impl Convo {
    /// An empty conversation.
    pub fn new() -> Self {
        Convo::default()
    }

    /// A system prompt.
    pub fn system(mut self, text: &str) -> Self {
        self.items.push(Item::System { text: text.into() });
        self
    }

    /// A typed user message (starts a human turn).
    pub fn user(mut self, text: &str) -> Self {
        self.items.push(Item::User { text: text.into(), meta: false, images: 0 });
        self
    }

    /// Assistant text.
    pub fn assistant(mut self, text: &str) -> Self {
        self.items.push(Item::Assistant { text: text.into() });
        self
    }

    /// A call of `tool` and its result `output`.
    pub fn tool(self, tool: &str, output: impl Into<String>) -> Self {
        self.tool_result(tool, output.into(), false, 0)
    }

    /// A call of `tool` with `arguments` (as sent) and its result.
    pub fn call_with(self, tool: &str, arguments: &str, output: impl Into<String>) -> Self {
        let mut c = self.tool(tool, output);
        let call = c.items.len() - 2;
        if let Item::ToolCall { arguments: a, .. } = &mut c.items[call] {
            *a = arguments.into();
        }
        c
    }

    /// A call of `tool` whose result reports an error.
    pub fn tool_error(self, tool: &str, output: impl Into<String>) -> Self {
        self.tool_result(tool, output.into(), true, 0)
    }

    /// A call of `tool` whose result carries `images` images besides `output`.
    pub fn tool_with_images(self, tool: &str, output: impl Into<String>, images: u32) -> Self {
        self.tool_result(tool, output.into(), false, images)
    }

    /// A tool result whose call is not in the trace.
    pub fn orphan_result(mut self, tool: &str, output: impl Into<String>) -> Self {
        let call_id = format!("c{}", self.calls);
        self.calls += 1;
        self.items.push(Item::ToolResult(ToolResult {
            call_id,
            name: Some(tool.into()),
            output: Output::Raw { output: output.into() },
            is_error: false,
            images: 0,
        }));
        self
    }

    fn tool_result(mut self, tool: &str, output: String, is_error: bool, images: u32) -> Self {
        let call_id = format!("c{}", self.calls);
        self.calls += 1;
        self.items.push(Item::ToolCall {
            call_id: call_id.clone(),
            name: tool.into(),
            arguments: "{}".into(),
        });
        self.items.push(Item::ToolResult(ToolResult {
            call_id,
            name: Some(tool.into()),
            output: Output::Raw { output },
            is_error,
            images,
        }));
        self
    }

    /// From now on, requests are made at `minutes` after the start (until changed).
    pub fn at(mut self, minutes: f64) -> Self {
        self.now = Some((minutes * 60_000.0) as Millis);
        self
    }

    /// Every request also sends `tokens` the trace does not record (`--overhead`).
    pub fn overhead(mut self, tokens: Tokens) -> Self {
        self.overhead = tokens;
        self
    }

    /// From now on, requests carry no timestamp.
    pub fn untimed(mut self) -> Self {
        self.now = None;
        self
    }

    /// An LLM request boundary (timestamped when [`Convo::at`] was called).
    pub fn request(mut self) -> Self {
        self.items.push(Item::Request(Request { id: None, timestamp: self.now, usage: None, model: None }));
        self
    }

    /// `n` rounds of: a call of `tool` with an output of `bytes` bytes, then a request.
    pub fn steps(mut self, n: usize, tool: &str, bytes: usize) -> Self {
        for _ in 0..n {
            self = self.tool(tool, text(bytes)).request();
        }
        self
    }

    /// The context is replaced by `summary`.
    pub fn compaction(mut self, summary: &str) -> Self {
        self.items.push(Item::Compaction { summary: Some(summary.into()) });
        self
    }

    /// The items.
    pub fn items(self) -> Vec<Item> {
        self.items
    }
}

/// `bytes` bytes of ASCII text on one line.
pub fn text(bytes: usize) -> String {
    "x".repeat(bytes)
}

/// `n` lines of `width` ASCII chars each, joined with `\n` (no trailing newline).
pub fn lines(n: usize, width: usize) -> String {
    vec!["y".repeat(width); n].join("\n")
}

/// A replay with the edits the policy made before each request.
pub struct Replayed {
    /// The run.
    pub run: Run,
    /// Edits emitted before each request, by request index.
    pub edits: Vec<Vec<Edit>>,
    /// The policy's warnings after the replay.
    pub warnings: Vec<String>,
}

impl Replayed {
    /// Indices of the results a `Prune` or `Replace` edit targets before request `k`.
    pub fn cleared_before(&self, k: usize) -> Vec<usize> {
        self.edits[k]
            .iter()
            .filter_map(|e| match e {
                Edit::Prune(i) | Edit::Replace(i, _) => Some(*i),
                Edit::ClearCall(..) | Edit::KeepPrevious => None,
            })
            .collect()
    }

    /// Requests before which the policy changed the context (the run's prune events).
    pub fn prune_requests(&self) -> Vec<usize> {
        self.run.rows.iter().filter(|r| r.changed_results > 0).map(|r| r.request).collect()
    }

    /// The text put in place of result `index` before request `k`, if any.
    pub fn replacement(&self, k: usize, index: usize) -> Option<&str> {
        self.edits[k].iter().find_map(|e| match e {
            Edit::Replace(i, text) if *i == index => Some(text.as_str()),
            _ => None,
        })
    }
}

/// Records the edits in force before each request: what the wrapped policy emits, with the
/// previous request's set added in when a non-sticky policy keeps it ([`Edit::KeepPrevious`]).
struct Recorder<'a> {
    inner: Box<dyn Policy>,
    log: &'a mut Vec<Vec<Edit>>,
    /// The set in force before the previous request, and the compactions seen then.
    previous: Vec<Edit>,
    compactions: usize,
}

impl Policy for Recorder<'_> {
    fn capabilities(&self) -> super::Capabilities {
        self.inner.capabilities()
    }

    fn compact(&mut self, view: &View<'_>) -> Option<super::compact::Compaction> {
        self.inner.compact(view)
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let start = edits.len();
        self.inner.before_request(view, edits);
        let new = &edits[start..];
        if view.compactions != self.compactions {
            self.previous.clear();
            self.compactions = view.compactions;
        }
        let mut set = if !self.inner.capabilities().sticky && new.contains(&Edit::KeepPrevious) {
            self.previous.clone()
        } else {
            Vec::new()
        };
        for e in new.iter().filter(|e| **e != Edit::KeepPrevious) {
            let same = |old: &Edit| match (old, e) {
                (Edit::ClearCall(a, _), Edit::ClearCall(b, _)) => a == b,
                (Edit::Prune(a) | Edit::Replace(a, _), Edit::Prune(b) | Edit::Replace(b, _)) => a == b,
                _ => false,
            };
            set.retain(|old| !same(old));
            set.push(e.clone());
        }
        self.previous = set.clone();
        self.log.push(set);
    }

    fn report(&self) -> super::PolicyReport {
        self.inner.report()
    }
}

/// Replays `convo` under `spec` at [`THRESHOLD`], deciding as `decide` says.
pub fn replay_with(convo: Convo, spec: &str, decide: DecideWith) -> Replayed {
    let spec = PolicySpec::parse(spec).unwrap_or_else(|e| panic!("{e}"));
    replay_policy(convo, spec.build(), decide)
}

/// Replays `convo` under `policy` at [`THRESHOLD`], deciding as `decide` says (for a policy built
/// without a spec, such as a test's reference implementation).
pub fn replay_policy(convo: Convo, policy: Box<dyn Policy>, decide: DecideWith) -> Replayed {
    let meter = meter(decide);
    let options = MeasureOptions { overhead: convo.overhead, ..MeasureOptions::default() };
    let conversation = Conversation { id: "main".into(), items: convo.items(), recorded_total: None };
    let measured = MeasuredConversation::new(&conversation, &meter, &options);
    let mut edits = Vec::new();
    let mut recorder = Recorder { inner: policy, log: &mut edits, previous: Vec::new(), compactions: 0 };
    let run = replay(&measured, THRESHOLD, &mut recorder, &meter);
    let warnings = recorder.report().warnings;
    Replayed { run, edits, warnings }
}

/// Replays `convo` under `spec`, each policy deciding with its anchor's estimator.
pub fn replay_spec(convo: Convo, spec: &str) -> Replayed {
    replay_with(convo, spec, DecideWith::Anchor)
}

/// A pseudo-random draw below `n` (a linear congruential generator: the same seed, the same
/// conversation), for generated test conversations.
pub fn draw(state: &mut u64, n: u64) -> u64 {
    *state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    (*state >> 33) % n.max(1)
}
