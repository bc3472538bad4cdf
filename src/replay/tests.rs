//! Unit tests of the replay: hand-made conversations replayed under the built-in policies, with
//! the numbers worked out by hand (one token per byte).

use super::*;
use crate::measure::MeasureOptions;
use crate::model::{Conversation, Item, Output, Request, ToolResult};
use crate::policy::{Capabilities, Content, Edit, PolicySpec, View};
use crate::tokens::{DecideWith, Tokenizer};

/// One token per byte, so expected numbers are easy to check by hand.
fn meter() -> Meter {
    crate::policy::testing::meter(DecideWith::Tokenizer(Tokenizer::O200k))
}

/// Replays `items` at `threshold` under `policy`.
fn replay_at(items: Vec<Item>, threshold: usize, policy: &mut dyn Policy) -> Run {
    let meter = meter();
    let conv = Conversation { id: "main".into(), items, recorded_total: None };
    let m = MeasuredConversation::new(&conv, &meter, &MeasureOptions::default());
    replay(&m, threshold, policy, &meter)
}

/// Replays `items` at threshold 16 under `policy`.
fn replay_items(items: Vec<Item>, policy: &mut dyn Policy) -> Run {
    replay_at(items, 16, policy)
}

fn user(t: &str) -> Item {
    Item::User { text: t.into(), meta: false, images: 0 }
}
fn request() -> Item {
    Item::Request(Request::default())
}
fn result(id: &str, out: &str) -> Item {
    Item::ToolResult(ToolResult {
        call_id: id.into(),
        name: Some("t".into()),
        output: Output::Raw { output: out.into() },
        is_error: false,
        images: 0,
    })
}

fn run(items: Vec<Item>, threshold: usize, spec: &str) -> Run {
    let mut policy = PolicySpec::parse(spec).unwrap().build();
    replay_at(items, threshold, &mut *policy)
}

#[test]
fn hidden_reasoning_is_sent_until_the_next_human_turn_and_is_not_counted_as_pruned() {
    let reasoning = |tokens| Item::Unseen { kind: crate::model::UnseenKind::Reasoning, tokens };
    let call = Item::ToolCall { call_id: "c1".into(), name: "t".into(), arguments: "{}".into() };
    let items = vec![
        user("fix"),    // 3 tokens
        request(),      // 0
        reasoning(100), // the call's reasoning, re-sent with the turn's later calls
        call,           // "t{}": 3 tokens
        result("c1", "ok"),
        request(), // 1
        reasoning(50),
        Item::Assistant { text: "done".into() },
        user("next"), // a new turn: the reasoning of the last one is dropped
        request(),    // 2
    ];
    let r = run(items, 1000, "none");
    let hidden: Vec<Tokens> = r.rows.iter().map(|row| row.categories.hidden_reasoning).collect();
    assert_eq!(hidden, [0, 100, 0]);
    let totals: Vec<Tokens> = r.rows.iter().map(|row| row.context_tokens).collect();
    assert_eq!(totals, [3, 3 + 100 + 3 + 2, 3 + 3 + 2 + 4 + 4]);
    assert_eq!(r.rows[2].pruned_tokens, 0, "no policy removed it");
    assert_eq!(r.summary.pruned_tokens, 0);
    // The previous request's prefix is sent again up to the dropped reasoning only.
    assert_eq!(r.rows[2].shared_prefix_tokens, 3);
    assert_eq!(r.rows[1].shared_prefix_tokens, 3);
}

#[test]
fn a_summary_replay_reports_the_summary_of_a_full_replay_without_rows() {
    let meter = meter();
    let mut items = three_results();
    items[1] = Item::Request(Request {
        usage: Some(crate::model::Usage { input_tokens: 7, ..Default::default() }),
        ..Default::default()
    });
    let conv = Conversation { id: "main".into(), items, recorded_total: None };
    let m = MeasuredConversation::new(&conv, &meter, &MeasureOptions::default());
    for spec in ["none", "keep-turns:n=1", "swe-agent:n=1", "anthropic:trigger=150,keep=1"] {
        for threshold in [0, 16, 1000] {
            let build = || PolicySpec::parse(spec).unwrap().build();
            let full = replay(&m, threshold, &mut *build(), &meter);
            let lean = replay_summary(&m, threshold, &mut *build(), &meter);
            assert_eq!(full.rows.len(), 4, "{spec} at {threshold}");
            assert!(lean.rows.is_empty());
            assert_eq!(lean.summary, full.summary, "{spec} at {threshold}");
        }
    }
}

/// Elides every result but the newest `keep` of the current context (placeholder "gone", the
/// call's arguments cleared too), non-sticky: the whole set before every request, or with
/// `cumulative` only the newly elided ones after `KeepPrevious`.
struct ElideOld {
    keep: usize,
    cumulative: bool,
    done: usize,
    compactions: usize,
}

impl Policy for ElideOld {
    fn capabilities(&self) -> Capabilities {
        Capabilities { sticky: false, ..Capabilities::default() }
    }
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        if view.compactions != self.compactions {
            (self.compactions, self.done) = (view.compactions, 0);
        }
        let end = view.results.len().saturating_sub(self.keep);
        let start = if self.cumulative {
            edits.push(Edit::KeepPrevious);
            self.done.min(end)
        } else {
            0
        };
        for r in &view.results[start..end] {
            edits.push(Edit::Replace(r.index, "gone".into()));
            edits.push(Edit::ClearCall(r.index, "{}".into()));
        }
        self.done = self.done.max(end);
    }
}

#[test]
fn a_cumulative_non_sticky_policy_replays_exactly_as_one_that_resends_its_whole_set() {
    let big = "x".repeat(100);
    let call = |id: &str| Item::ToolCall { call_id: id.into(), name: "t".into(), arguments: "a".repeat(30) };
    let mut items = vec![user("hi"), request()];
    for (k, id) in ["a", "b", "c", "d", "e", "f", "g"].iter().enumerate() {
        items.extend([call(id), result(id, &big), request()]);
        if k == 3 {
            items.push(Item::Compaction { summary: Some("summary".into()) });
            items.push(request());
        }
    }
    for keep in [0, 1, 2] {
        let whole =
            replay_items(items.clone(), &mut ElideOld { keep, cumulative: false, done: 0, compactions: 0 });
        let cumulative =
            replay_items(items.clone(), &mut ElideOld { keep, cumulative: true, done: 0, compactions: 0 });
        assert_eq!(cumulative.rows, whole.rows, "keep {keep}");
        assert_eq!(cumulative.summary, whole.summary, "keep {keep}");
        // Something was elided, and the context changed more than once.
        assert!(whole.rows.iter().any(|r| r.categories.placeholders > 0), "keep {keep}");
        assert!(whole.summary.prune_events > 1, "keep {keep}");
    }
}

/// user "hi" (2), then three results of 100 bytes, each followed by a request.
fn three_results() -> Vec<Item> {
    let big = "x".repeat(100);
    vec![
        user("hi"),
        request(),
        result("a", &big),
        request(),
        result("b", &big),
        request(),
        result("c", &big),
        request(),
    ]
}

// The automatic summary of 100 x's is "1 lines | " + 80 x's + "…" = 10 + 80 + 3 = 93 bytes.
const SUMMARY: u64 = 93;

#[test]
fn policy_none_keeps_everything_and_sums_per_request() {
    let r = run(three_results(), 16, "none");
    let contexts: Vec<Tokens> = r.rows.iter().map(|r| r.context_tokens).collect();
    let one = SUMMARY + 100;
    assert_eq!(contexts, [2, 2 + one, 2 + 2 * one, 2 + 3 * one]);
    assert_eq!(r.summary.peak_context_tokens, 2 + 3 * one);
    assert_eq!(r.summary.total_input_tokens, contexts.iter().sum::<u64>());
    assert_eq!(r.summary.split_results, 3);
    assert_eq!(r.summary.content_tokens, 300);
    assert_eq!(r.summary.content_estimate, 75);
    assert_eq!(r.summary.prune_events, 0);
    assert_eq!(r.rows[3].categories.tool_summaries, 3 * SUMMARY);
    // Nothing changes between requests: every previous context is a cached prefix.
    let shared: Vec<Tokens> = r.rows.iter().map(|r| r.shared_prefix_tokens).collect();
    assert_eq!(shared, [0, 2, 2 + one, 2 + 2 * one]);
}

#[test]
fn below_the_threshold_nothing_is_split_or_prunable() {
    let r = run(three_results(), 100, "keep-turns:n=1");
    assert_eq!(r.summary.split_results, 0);
    assert_eq!(r.summary.prune_events, 0);
    assert_eq!(r.rows[3].context_tokens, 2 + 300);
}

#[test]
fn keep_turns_prunes_after_n_requests_and_never_undoes_it() {
    let r = run(three_results(), 16, "keep-turns:n=1");
    // "a" is sent with request 1 and pruned before request 2, and so on.
    let contents: Vec<Tokens> = r.rows.iter().map(|r| r.categories.tool_contents).collect();
    assert_eq!(contents, [0, 100, 100, 100]);
    let pruned: Vec<Tokens> = r.rows.iter().map(|r| r.pruned_tokens).collect();
    assert_eq!(pruned, [0, 0, 100, 200]);
    assert_eq!(r.summary.prune_events, 2);
    assert_eq!(r.summary.pruned_tokens, 200);
    // Pruning "a" at request 2 breaks the prefix right at "a": only "hi" + a's summary stay.
    assert_eq!(r.rows[2].shared_prefix_tokens, 2 + SUMMARY);
    assert_eq!(r.rows[2].freed_tokens, 100);
}

#[test]
fn keep_results_keeps_the_last_n() {
    let r = run(three_results(), 16, "keep-results:n=2");
    let contents: Vec<Tokens> = r.rows.iter().map(|r| r.categories.tool_contents).collect();
    assert_eq!(contents, [0, 100, 200, 200]);
    assert_eq!(r.summary.prune_events, 1);
}

#[test]
fn budget_prunes_oldest_down_to_target_only_when_over_max() {
    // Contexts without pruning: 2, 195, 388, 581.
    let r = run(three_results(), 16, "budget:max=400,target=300");
    let contexts: Vec<Tokens> = r.rows.iter().map(|r| r.context_tokens).collect();
    // At request 3 (581 > 400): prune a (→481), prune b (→381), c is not needed… 381 > 300 → prune c (→281).
    assert_eq!(contexts, [2, 195, 388, 281]);
    assert_eq!(r.rows[3].changed_results, 3);
    assert_eq!(r.summary.prune_events, 1);
}

#[test]
fn compaction_empties_the_context_and_starts_from_its_summary() {
    let mut items = three_results();
    items.push(Item::Compaction { summary: Some("summary!".into()) });
    items.push(request());
    let r = run(items, 16, "keep-turns:n=1");
    let last = r.rows.last().unwrap();
    assert_eq!(last.context_tokens, 8);
    assert_eq!(last.shared_prefix_tokens, 0);
    // Pruned tokens of the replaced context are still counted.
    assert_eq!(r.summary.pruned_tokens, 200);
}

#[test]
fn placeholders_cost_tokens() {
    struct Placeholder;
    impl Policy for Placeholder {
        fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
            for r in view.results {
                if view.request > r.first_request && matches!(r.content, Content::Present(_)) {
                    edits.push(Edit::Replace(r.index, "[cleared]".into()));
                }
            }
        }
    }
    let r = replay_items(three_results(), &mut Placeholder);
    assert_eq!(r.rows[3].categories.placeholders, 2 * 9);
    assert_eq!(r.rows[3].pruned_tokens, 2 * (100 - 9));
}

#[test]
fn a_non_sticky_policy_is_recomputed_for_every_request() {
    /// Clears every content except at odd requests.
    struct Flicker;
    impl Policy for Flicker {
        fn capabilities(&self) -> Capabilities {
            Capabilities { sticky: false, ..Capabilities::default() }
        }
        fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
            if view.request % 2 == 0 {
                edits.extend(view.results.iter().map(|r| Edit::Prune(r.index)));
            }
        }
    }
    let r = replay_items(three_results(), &mut Flicker);
    let contents: Vec<Tokens> = r.rows.iter().map(|r| r.categories.tool_contents).collect();
    assert_eq!(contents, [0, 100, 0, 300]);
    // Request 2 clears a and b: the prefix breaks at a.
    assert_eq!(r.rows[2].shared_prefix_tokens, 2 + SUMMARY);
    // Request 3 restores them: the prefix breaks at a again.
    assert_eq!(r.rows[3].shared_prefix_tokens, 2 + SUMMARY);
    assert_eq!(r.summary.prune_events, 2);
}

/// Records what the view says before each request.
#[derive(Default)]
struct Probe {
    seen: Vec<(usize, usize, usize, u64, usize)>,
    results: Vec<(usize, usize)>,
}
impl Policy for Probe {
    fn before_request(&mut self, view: &View<'_>, _edits: &mut Vec<Edit>) {
        self.seen.push((
            view.messages,
            view.events,
            view.assistant_messages,
            view.system.bytes,
            view.compactions,
        ));
        self.results = view.results.iter().map(|r| (r.event, r.assistant_messages)).collect();
    }
}

#[test]
fn the_view_counts_messages_events_and_assistant_messages() {
    let call = |id: &str| Item::ToolCall { call_id: id.into(), name: "t".into(), arguments: "{}".into() };
    let items = vec![
        Item::System { text: "sys".into() },
        user("hi"),
        request(),
        // One response: reasoning, text and two calls → one assistant message; the text is the
        // thought of the first call (one event), the second call is an event of its own.
        Item::Thinking { text: "hmm".into() },
        Item::Assistant { text: "let me see".into() },
        call("a"),
        call("b"),
        result("a", "x"),
        result("b", "y"),
        request(),
        // A response with text only, then a harness-injected user text.
        Item::Assistant { text: "done".into() },
        Item::User { text: "<reminder>".into(), meta: true, images: 0 },
        request(),
        Item::Compaction { summary: Some("summary".into()) },
        request(),
    ];
    let mut probe = Probe::default();
    replay_items(items, &mut probe);
    // (messages, events, assistant messages, system bytes, compactions)
    assert_eq!(
        probe.seen,
        [
            (1, 3, 0, 3, 0), // the user text; events: system + user + its RecallAction
            (4, 7, 1, 3, 0), // + assistant message, 2 results; events + 2 actions + 2 observations
            (6, 9, 2, 3, 0), // + "done" (message, event) + the reminder (message, event, no recall)
            (1, 1, 0, 0, 1), // after the compaction: its summary alone
        ]
    );
    // The results' event indices and assistant messages before them, in the last context: none.
    assert!(probe.results.is_empty());
}

/// "hi", then two rounds of a call of `t` with `arguments` and its result, each followed by a
/// request.
fn two_calls(arguments: &str) -> Vec<Item> {
    let call =
        |id: &str| Item::ToolCall { call_id: id.into(), name: "t".into(), arguments: arguments.into() };
    vec![
        user("hi"),
        request(),
        call("a"),
        result("a", "x"),
        request(),
        call("b"),
        result("b", "y"),
        request(),
    ]
}

#[test]
fn results_know_their_event_index_and_the_assistant_messages_before_them() {
    let mut probe = Probe::default();
    replay_items(two_calls("{}"), &mut probe);
    // Events: hi 0, its RecallAction 1, call a 2, result a 3, call b 4, result b 5.
    assert_eq!(probe.results, [(3, 1), (5, 2)]);
}

#[test]
fn a_non_sticky_policy_can_clear_call_arguments_for_one_request() {
    /// Clears the arguments of every call at request 2 only.
    struct ClearArgs;
    impl Policy for ClearArgs {
        fn capabilities(&self) -> Capabilities {
            Capabilities { sticky: false, ..Capabilities::default() }
        }
        fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
            if view.request == 2 {
                edits.extend(view.results.iter().map(|r| Edit::ClearCall(r.index, "{}".into())));
            }
        }
    }
    let mut items = two_calls(&"a".repeat(50));
    items.push(request());
    let r = replay_items(items, &mut ClearArgs);
    let calls: Vec<Tokens> = r.rows.iter().map(|r| r.categories.tool_calls).collect();
    // "t" + 50 a's per call; cleared to "t" + "{}" at request 2, restored at request 3.
    assert_eq!(calls, [0, 51, 2 * 3, 2 * 51]);
    // The prefix breaks at the first call's arguments: "hi" + its name stay shared.
    assert_eq!(r.rows[2].shared_prefix_tokens, 2 + 1);
    assert_eq!(r.rows[2].changed_results, 2);
    assert_eq!(r.rows[3].shared_prefix_tokens, 2 + 1);
    assert_eq!(r.summary.prune_events, 2);
}

#[test]
fn recorded_usage_is_summed_once_per_request() {
    let mut items = three_results();
    items[1] = Item::Request(Request {
        usage: Some(crate::model::Usage { input_tokens: 7, ..Default::default() }),
        ..Default::default()
    });
    let r = run(items, 16, "none");
    assert_eq!(r.summary.recorded_input_tokens, Some(7));
    assert_eq!(r.summary.recorded_requests, 1);
    let r = run(three_results(), 16, "none");
    assert_eq!(r.summary.recorded_input_tokens, None);
}
