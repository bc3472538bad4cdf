//! Property tests (proptest) of the replay's invariants, on random conversations:
//! - the tokens of a context are the sum of its parts: every request's context equals the sum of
//!   the sizes of the items it holds, computed here independently from the seed's rules (summary
//!   and content at the threshold, compaction restarts the context), per category and in total,
//!   with the `len/4` estimate and with a real tokenizer;
//! - prune only ever removes content: under every policy, at every request, the system, user,
//!   assistant, thinking and tool-summary tokens are exactly those of `none`; tool contents are at
//!   most those of `none`; only call arguments (cleared by some anchors) and placeholders may differ;
//!   prune-only policies put no placeholder and leave calls alone (a policy on whole outputs,
//!   `on=output`, counts a result as one piece of content, so there summary and content together
//!   are at most `none`'s);
//! - a sticky prune is never undone: under every sticky policy a result's content goes only
//!   present → replaced → pruned, never back, and a result never split is never touched;
//! - a sweep row's summary, overhead and content tokens, kept as running sums, are what walking
//!   the whole context at every request gives, under every policy.
//!
//! Determinism across threads and input order is tested on the binary in `determinism.rs`.

use std::collections::{BTreeMap, BTreeSet};

use ctxbudget::analysis::sweep::{DEFAULT_TOLERANCE, SweepSettings, sweep};
use ctxbudget::measure::{MeasureOptions, MeasuredConversation};
use ctxbudget::model::{Conversation, Item, Output, Request, ToolResult, UnseenKind};
use ctxbudget::policy::{self, Capabilities, Content, Edit, On, Policy, PolicyReport, PolicySpec, View};
use ctxbudget::replay::replay;
use ctxbudget::result::{Categories, Run};
use ctxbudget::split::summary_of;
use ctxbudget::tokens::{Meter, Tokenizer};
use proptest::prelude::*;

/// Policies whose parameters are scaled down so that they fire on small random conversations,
/// besides every policy with its defaults.
const SCALED: &[&str] = &[
    "keep-turns:n=1",
    "keep-results:n=1",
    "budget:max=300,target=100",
    "anthropic:trigger=200,keep=1,clear_tool_inputs=true",
    "anthropic:trigger=200,keep=1,sticky=true",
    "langchain:trigger=200,keep=1,clear_tool_inputs=true",
    "opencode:protect=50,minimum=10,turns=1",
    "gemini:protect=50,minimum=10",
    "swe-agent:n=1",
    "complexity-trap:m=1",
    "openhands:attention_window=3",
    "openhands-amortized:max_size=6",
    "openclaw:ttl=1m,context_window=500,soft_trim_max_chars=200,soft_trim_head_chars=50,soft_trim_tail_chars=50,min_prunable_tool_chars=100",
    "openclaw:ttl=1m,context_window=500,min_prunable_tool_chars=100,sticky=true",
    "claude-code-micro:gap=1m,keep=1,tools=bash",
];

/// The core policies, which only prune (no placeholder, no call edits; the anchors replace contents
/// with placeholders or previews).
const PRUNE_ONLY: &[&str] = &["keep-turns", "keep-results", "budget"];

fn specs() -> Vec<PolicySpec> {
    let defaults = policy::registry().iter().map(|k| k.name);
    defaults.chain(SCALED.iter().copied()).map(|s| PolicySpec::parse(s).unwrap()).collect()
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z \n]{0,40}",
        2 => "[a-zé日 \n\t{}\":,]{0,300}",
        1 => "[a-z\n]{200,1200}",
    ]
}

fn item() -> impl Strategy<Value = Item> {
    let call_id = "c[0-5]";
    let tool =
        prop_oneof![Just("bash".to_owned()), Just("Read".to_owned()), Just("run_shell_command".to_owned())];
    prop_oneof![
        1 => text().prop_map(|text| Item::System { text }),
        2 => (text(), any::<bool>()).prop_map(|(text, meta)| Item::User { text, meta, images: 0 }),
        2 => text().prop_map(|text| Item::Assistant { text }),
        1 => text().prop_map(|text| Item::Thinking { text }),
        3 => (call_id, tool.clone(), text()).prop_map(|(call_id, name, arguments)| Item::ToolCall { call_id, name, arguments }),
        4 => (call_id, proptest::option::of(tool), text()).prop_map(|(call_id, name, output)| {
            Item::ToolResult(ToolResult { call_id, name, output: Output::Raw { output }, is_error: false, images: 0 })
        }),
        1 => ("c[0-5]", text(), proptest::option::of(text())).prop_map(|(call_id, summary, content)| {
            Item::ToolResult(ToolResult {
                call_id,
                name: Some("bash".into()),
                output: Output::Split { summary, content },
                is_error: false,
                images: 0,
            })
        }),
        4 => proptest::option::of(0i64..7_200_000).prop_map(|gap| {
            // The gap is turned into an increasing timestamp below.
            Item::Request(Request { id: None, timestamp: gap, usage: None, model: None })
        }),
        1 => proptest::option::of(text()).prop_map(|summary| Item::Compaction { summary }),
    ]
}

/// Unseen content of any kind (hidden reasoning, server-side results, images).
fn unseen() -> impl Strategy<Value = Item> {
    (0..3usize, 0u64..5000).prop_map(|(kind, tokens)| {
        let kind = [UnseenKind::Reasoning, UnseenKind::ServerSide, UnseenKind::Image][kind];
        Item::Unseen { kind, tokens }
    })
}

/// A random conversation that also holds unseen content (kept apart from [`conversation`], whose
/// fixed-seed stream the policy coverage test below depends on).
fn conversation_with_unseen() -> impl Strategy<Value = Conversation> {
    (conversation(), proptest::collection::vec((0usize..40, unseen()), 0..8)).prop_map(|(mut c, unseen)| {
        for (at, item) in unseen {
            c.items.insert(at.min(c.items.len()), item);
        }
        c
    })
}

/// A random conversation; requests get increasing timestamps (or none).
fn conversation() -> impl Strategy<Value = Conversation> {
    proptest::collection::vec(item(), 0..40).prop_map(|mut items| {
        let mut now = 1_700_000_000_000i64;
        for item in &mut items {
            if let Item::Request(r) = item {
                r.timestamp = r.timestamp.map(|gap| {
                    now += gap;
                    now
                });
            }
        }
        Conversation { id: "main".into(), items, recorded_total: None }
    })
}

fn measure(c: &Conversation, meter: &Meter) -> MeasuredConversation {
    MeasuredConversation::new(c, meter, &MeasureOptions::default())
}

/// The categories of every request's context, computed from the items alone: the oracle.
fn expected_contexts(c: &Conversation, threshold: usize, count: &dyn Fn(&str) -> u64) -> Vec<Categories> {
    let mut out = Vec::new();
    let mut now = Categories::default();
    // With hidden reasoning in the conversation, readable reasoning is part of the reasoning items
    // and leaves with them at the next human turn.
    let hidden = c.items.iter().any(|i| matches!(i, Item::Unseen { kind: UnseenKind::Reasoning, .. }));
    for item in &c.items {
        match item {
            Item::System { text } => now.system += count(text),
            Item::User { text, meta, .. } => {
                if !meta {
                    // A human turn: the hidden reasoning of the turns before is not sent again.
                    now.hidden_reasoning = 0;
                    if hidden {
                        now.thinking = 0;
                    }
                }
                now.user += count(text)
            }
            Item::Unseen { kind: UnseenKind::Reasoning, tokens } => now.hidden_reasoning += tokens,
            Item::Unseen { kind: UnseenKind::ServerSide, tokens } => now.server_side += tokens,
            Item::Unseen { kind: UnseenKind::Image, tokens } => now.images += tokens,
            Item::Assistant { text } => now.assistant += count(text),
            Item::Thinking { text } => now.thinking += count(text),
            Item::ToolCall { name, arguments, .. } => now.tool_calls += count(name) + count(arguments),
            Item::ToolResult(r) => match &r.output {
                Output::Raw { output } if output.len() > threshold => {
                    now.tool_summaries += count(&summary_of(output));
                    now.tool_contents += count(output);
                }
                Output::Raw { output } => now.tool_summaries += count(output),
                Output::Split { summary, content } => {
                    now.tool_summaries += count(summary);
                    now.tool_contents += content.as_deref().map_or(0, count);
                }
            },
            Item::Request(_) => out.push(now),
            // The generators make no clearing marker (`microcompact` tests those).
            Item::Cleared(_) => {}
            Item::Compaction { summary } => {
                now = Categories::default();
                now.user += summary.as_deref().map_or(0, count);
            }
        }
    }
    out
}

fn run(c: &MeasuredConversation, threshold: usize, spec: &PolicySpec, meter: &Meter) -> Run {
    let mut p = spec.build();
    replay(c, threshold, &mut *p, meter)
}

proptest! {
    #![proptest_config(crate::common::proptest_config(256))]

    #[test]
    fn the_tokens_of_a_context_are_the_sum_of_its_parts(c in conversation_with_unseen(), threshold in 0usize..400) {
        let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
        let measured = measure(&c, &meter);
        let r = run(&measured, threshold, &PolicySpec::parse("none").unwrap(), &meter);
        let expected = expected_contexts(&c, threshold, &|t| t.len() as u64 / 4);
        prop_assert_eq!(r.rows.len(), expected.len());
        for (row, want) in r.rows.iter().zip(&expected) {
            prop_assert_eq!(&row.categories, want);
            prop_assert_eq!(row.context_tokens, want.total());
            prop_assert_eq!(row.categories.total(), row.context_tokens);
            prop_assert_eq!(row.pruned_tokens, 0);
        }
    }

    #[test]
    fn prune_only_removes_content_never_a_summary_or_anything_else(c in conversation(), threshold in 0usize..300) {
        let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
        let measured = measure(&c, &meter);
        let none = run(&measured, threshold, &PolicySpec::parse("none").unwrap(), &meter);
        for spec in specs() {
            let r = run(&measured, threshold, &spec, &meter);
            prop_assert_eq!(r.rows.len(), none.rows.len());
            let prune_only = PRUNE_ONLY.contains(&spec.kind().name);
            // On whole outputs a result is one piece, counted as content: a clear may take its
            // summary too.
            let whole = spec.build().capabilities().on == On::Output;
            for (row, base) in r.rows.iter().zip(&none.rows) {
                let (a, b) = (&row.categories, &base.categories);
                let at = format!("{} at request {}", spec.as_str(), row.request);
                let tools = |c: &Categories| {
                    if whole { (0, c.tool_summaries + c.tool_contents) } else { (c.tool_summaries, c.tool_contents) }
                };
                let ((summaries, contents), (base_summaries, base_contents)) = (tools(a), tools(b));
                prop_assert_eq!(
                    (a.system, a.user, a.assistant, a.thinking, summaries),
                    (b.system, b.user, b.assistant, b.thinking, base_summaries),
                    "{}", at
                );
                prop_assert!(contents <= base_contents, "{}", at);
                prop_assert!(a.tool_calls <= b.tool_calls, "{}", at);
                prop_assert_eq!(row.categories.total(), row.context_tokens);
                if prune_only {
                    prop_assert_eq!((a.placeholders, a.tool_calls), (0, b.tool_calls), "{}", at);
                    prop_assert_eq!(row.context_tokens + row.pruned_tokens, base.context_tokens, "{}", at);
                }
            }
        }
    }

    #[test]
    fn a_sticky_prune_is_never_undone(c in conversation_with_unseen(), threshold in 0usize..300) {
        let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
        let measured = measure(&c, &meter);
        for spec in specs() {
            let mut watch = Watch { inner: spec.build(), seen: Vec::new() };
            if !watch.capabilities().sticky {
                continue;
            }
            replay(&measured, threshold, &mut watch, &meter);
            for pair in watch.seen.windows(2) {
                let (before, after) = (&pair[0], &pair[1]);
                for (index, (state, edited)) in before {
                    let Some((next, _)) = after.get(index) else { continue };
                    let at = format!("{}: result {index}: {state:?} then {next:?}", spec.as_str());
                    prop_assert!(rank(*state) <= rank(*next), "{}", at);
                    if *state == Content::None {
                        prop_assert_eq!(*next, Content::None, "{}", at);
                    }
                    if *edited && matches!(state, Content::Present(_) | Content::Replaced(_)) {
                        prop_assert!(*next != *state, "{}: the edit did not take", at);
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_config(128))]

    #[test]
    fn a_sweep_row_sums_what_every_request_carries(c in conversation(), threshold in 0usize..300) {
        let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
        let measured = measure(&c, &meter);
        for spec in specs() {
            let settings = SweepSettings {
                thresholds: vec![threshold],
                policy: spec.clone(),
                tolerance: DEFAULT_TOLERANCE,
                top_tools: 0,
                cache: Default::default(),
            };
            let row = &sweep(&[&measured], &settings, &meter).rows[0];
            let mut carried = Carried::new(spec.build());
            replay(&measured, threshold, &mut carried, &meter);
            prop_assert_eq!(
                (row.summary_tokens, row.overhead_tokens, row.content_tokens),
                (carried.summary, carried.overhead, carried.contents),
                "{}", spec.as_str()
            );
        }
    }
}

/// The sweep's sums worked out the plain way, by walking the context at every request: summaries
/// of split results, those of them whose content is sent, and the contents sent (what this
/// request's edits take away, and for a non-sticky policy the previous request's too when it keeps
/// them, is not sent).
struct Carried {
    inner: Box<dyn Policy>,
    summary: u64,
    overhead: u64,
    contents: u64,
    previous: BTreeSet<usize>,
    compactions: usize,
}

impl Carried {
    fn new(inner: Box<dyn Policy>) -> Carried {
        Carried { inner, summary: 0, overhead: 0, contents: 0, previous: Default::default(), compactions: 0 }
    }
}

impl Policy for Carried {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let start = edits.len();
        self.inner.before_request(view, edits);
        let mut removed = edited(&edits[start..]);
        if !self.capabilities().sticky {
            if view.compactions != self.compactions {
                self.previous.clear();
                self.compactions = view.compactions;
            }
            if edits[start..].contains(&Edit::KeepPrevious) {
                removed.extend(self.previous.iter().copied());
            }
            self.previous = removed.clone();
        }
        for r in view.results.iter().filter(|r| r.original.is_some()) {
            self.summary += r.summary.tokens;
            if let Content::Present(content) = r.content {
                if !removed.contains(&r.index) {
                    self.overhead += r.summary.tokens;
                    self.contents += content.tokens;
                }
            }
        }
    }
}

/// The results `edits` prune or replace.
fn edited(edits: &[Edit]) -> BTreeSet<usize> {
    edits
        .iter()
        .filter_map(|e| match e {
            Edit::Prune(i) | Edit::Replace(i, _) => Some(*i),
            Edit::ClearCall(..) | Edit::KeepPrevious => None,
        })
        .collect()
}

/// How far a content has gone: present (or never split), replaced, pruned.
fn rank(c: Content) -> u8 {
    match c {
        Content::None | Content::Present(_) => 0,
        Content::Replaced(_) => 1,
        Content::Pruned => 2,
    }
}

/// A policy that records, before each request, each result's content state and whether the
/// inner policy edited it then.
struct Watch {
    inner: Box<dyn Policy>,
    seen: Vec<BTreeMap<usize, (Content, bool)>>,
}

impl Policy for Watch {
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let start = edits.len();
        self.inner.before_request(view, edits);
        let edited = edited(&edits[start..]);
        self.seen
            .push(view.results.iter().map(|r| (r.index, (r.content, edited.contains(&r.index)))).collect());
    }

    fn report(&self) -> PolicyReport {
        self.inner.report()
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_config(24))]

    /// The same identity with a real tokenizer: every text counted on its own with o200k.
    #[test]
    fn with_a_real_tokenizer_too_the_context_is_the_sum_of_its_parts(c in conversation_with_unseen(), threshold in 0usize..400) {
        let meter = Meter::new(Tokenizer::O200k, Tokenizer::Estimate);
        let measured = measure(&c, &meter);
        let r = run(&measured, threshold, &PolicySpec::parse("none").unwrap(), &meter);
        let o200k = Tokenizer::O200k.counter();
        let expected = expected_contexts(&c, threshold, &|t| o200k.count(t));
        for (row, want) in r.rows.iter().zip(&expected) {
            prop_assert_eq!(&row.categories, want);
        }
    }
}

/// The properties above are only worth something if the policies act on the random conversations:
/// every scaled policy edits some context among 200 of them (a fixed seed, so this is stable).
#[test]
fn every_scaled_policy_acts_on_the_random_conversations() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let meter = Meter::new(Tokenizer::Estimate, Tokenizer::Estimate);
    let mut runner = TestRunner::deterministic();
    let mut events: BTreeMap<&str, usize> = SCALED.iter().map(|s| (*s, 0)).collect();
    for _ in 0..200 {
        let c = conversation().new_tree(&mut runner).unwrap().current();
        let measured = measure(&c, &meter);
        for s in SCALED {
            let r = run(&measured, 64, &PolicySpec::parse(s).unwrap(), &meter);
            *events.get_mut(s).unwrap() += r.summary.prune_events;
        }
    }
    let idle: Vec<&&str> = events.iter().filter(|(_, n)| **n == 0).map(|(s, _)| s).collect();
    assert!(idle.is_empty(), "never fired: {idle:?} ({events:?})");
}
