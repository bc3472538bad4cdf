//! Which tool results a clearing marker ([`Item::Cleared`]: Claude Code's microcompact, or
//! Anthropic's server-side context editing) clears, resolved once every item is measured, as
//! ordinals among the conversation's tool results ([`MeasuredItem::Cleared`]); the replay then
//! sends each of them as the placeholder from the marker on (`replay::engine`), for every policy:
//! the agent, or the provider, did clear them.
//!
//! - **A count** (the provider's `cleared_tool_uses`): the that-many oldest results of the current
//!   context (since the last compaction), cleared before or not; a count above the results there
//!   are clears them all. Sticky, like the others (docs/unseen-context.md, "Clearing").
//! - **Named results.** Each call id names the latest result with that id since the last
//!   compaction that no earlier marker cleared; an id that names none clears nothing (the
//!   importer warns).
//! - **No names** (a streamed form that records only the size): an estimate. The clearing's size
//!   is the step the recorded prompt takes across the marker, where the requests on both sides
//!   record one and no compaction lies between: the prompt before, plus what the log appends
//!   between the two requests, less the prompt after (the usage is trusted over the log's own
//!   figure). Elsewhere it is the log's `tokensSaved`. The oldest results still in the context are
//!   taken as cleared until their size reaches it (microcompact clears the oldest first and keeps
//!   the latest). Sizes are the report's tokens while the recorded figures are the provider's, so
//!   the choice is close, not exact.
//!
//! - **Thinking turns** (the provider's `cleared_thinking_turns`): the thinking texts of the
//!   that-many oldest turns of the current context that hold thinking, cleared before or not. A
//!   turn is the assistant's responses from one human message (a user text that starts a turn)
//!   to the next, tool results between them included, as Anthropic's extended-thinking
//!   documentation counts an assistant turn; texts that leave at a human turn anyway
//!   (turn-scoped reasoning) are not counted. The replay no longer sends them from the marker on.
//!
//! The reuse index takes the same results as absent from the request after the marker on
//! ([`cleared_from`]).
//!
//! Pure: no I/O.

use std::sync::Arc;

use super::{Category, MeasuredItem};
use crate::model::{Cleared, Conversation, Item, Tokens};

impl super::MeasuredConversation {
    /// Whether some clearing marker clears thinking texts: a replay then keeps where each
    /// thinking text is (`replay::engine`), which it does not otherwise need.
    pub fn clears_thinking(&self) -> bool {
        self.links().clears_thinking
    }

    /// The clearing markers the log recorded that clear some result or thinking text
    /// ([`MeasuredItem::Cleared`]).
    pub fn clearings(&self) -> usize {
        self.items
            .iter()
            .filter(|i| {
                matches!(i, MeasuredItem::Cleared { results, thinking, .. }
                    if !results.is_empty() || !thinking.is_empty())
            })
            .count()
    }
}

/// A tool result of the current context: its call id, ordinal, size and whether it is cleared.
struct Open<'a> {
    call_id: &'a str,
    ordinal: usize,
    tokens: Tokens,
    cleared: bool,
}

/// A thinking text of the current context: its ordinal, its turn and whether it is cleared.
struct OpenThinking {
    ordinal: usize,
    turn: usize,
    cleared: bool,
}

/// Fills in the results and thinking texts of every [`MeasuredItem::Cleared`] of `measured` (the
/// items of `conversation`, measured one by one, in the same order, turn-scoped texts marked).
pub fn resolve(conversation: &Conversation, measured: &mut [MeasuredItem]) {
    if !conversation.items.iter().any(|i| matches!(i, Item::Cleared(_))) {
        return;
    }
    let mut open: Vec<Open<'_>> = Vec::new();
    let mut ordinal = 0;
    let mut thinking = Thinking::default();
    for (k, item) in conversation.items.iter().enumerate() {
        thinking.note(&measured[k]);
        match item {
            Item::ToolResult(r) => {
                let tokens = match &measured[k] {
                    MeasuredItem::ToolResult(sizes, _) => sizes.output().tokens,
                    _ => 0,
                };
                open.push(Open { call_id: &r.call_id, ordinal, tokens, cleared: false });
                ordinal += 1;
            }
            Item::Compaction { .. } => {
                open.clear();
                thinking.open.clear();
            }
            Item::Cleared(c) => {
                let chosen = if let Some(n) = c.oldest {
                    first(&mut open, n)
                } else if !c.call_ids.is_empty() {
                    named(&mut open, c)
                } else if c.thinking_turns.is_none() {
                    let budget = usage_step(conversation, measured, k).or(c.tokens_saved).unwrap_or(0);
                    oldest(&mut open, budget)
                } else {
                    Vec::new()
                };
                let turns = c.thinking_turns.map_or_else(Vec::new, |n| thinking.first_turns(n));
                if let MeasuredItem::Cleared { results, thinking, .. } = &mut measured[k] {
                    *results = Arc::from(chosen);
                    *thinking = Arc::from(turns);
                }
            }
            _ => {}
        }
    }
}

/// Per tool result of `measured` (`results` of them), the first request from which a clearing
/// marker takes it out of the context (the first request after the marker; `usize::MAX`: never),
/// for the reuse index ([`crate::reuse_index::ReuseIndex::cleared`]); empty when no marker
/// clears anything.
pub fn cleared_from(measured: &[MeasuredItem], results: usize) -> Vec<usize> {
    let mut from = Vec::new();
    let mut requests = 0;
    for item in measured {
        match item {
            MeasuredItem::Request { .. } => requests += 1,
            MeasuredItem::Cleared { results: cleared, .. } if !cleared.is_empty() => {
                from.resize(results, usize::MAX);
                for &i in cleared.iter().filter(|&&i| i < results) {
                    from[i] = from[i].min(requests);
                }
            }
            _ => {}
        }
    }
    from
}

/// The thinking texts of the current context, by turn, for [`resolve`].
#[derive(Default)]
struct Thinking {
    open: Vec<OpenThinking>,
    /// Thinking texts so far (the next one's ordinal).
    ordinal: usize,
    /// Human turns so far.
    turn: usize,
}

impl Thinking {
    /// Notes a measured item: a human turn starts, or a thinking text is added.
    fn note(&mut self, item: &MeasuredItem) {
        let MeasuredItem::Text { category, turn_start, turn_scoped, .. } = item else { return };
        self.turn += usize::from(*turn_start);
        if *category == Category::Thinking {
            if !turn_scoped {
                self.open.push(OpenThinking { ordinal: self.ordinal, turn: self.turn, cleared: false });
            }
            self.ordinal += 1;
        }
    }

    /// The thinking texts of the `n` oldest turns of the context that hold thinking, marked
    /// cleared: those not cleared before.
    fn first_turns(&mut self, n: usize) -> Vec<usize> {
        let (mut chosen, mut turns, mut last) = (Vec::new(), 0, None);
        for t in &mut self.open {
            if last != Some(t.turn) {
                if turns == n {
                    break;
                }
                (turns, last) = (turns + 1, Some(t.turn));
            }
            if !t.cleared {
                t.cleared = true;
                chosen.push(t.ordinal);
            }
        }
        chosen
    }
}

/// The results `c` names, marked cleared.
fn named(open: &mut [Open<'_>], c: &Cleared) -> Vec<usize> {
    let mut chosen = Vec::new();
    for id in &c.call_ids {
        if let Some(r) = open.iter_mut().rev().find(|r| !r.cleared && r.call_id == id) {
            r.cleared = true;
            chosen.push(r.ordinal);
        }
    }
    chosen.sort_unstable();
    chosen
}

/// The `n` oldest results of the context, marked cleared: those not cleared before.
fn first(open: &mut [Open<'_>], n: usize) -> Vec<usize> {
    let n = n.min(open.len());
    open[..n]
        .iter_mut()
        .filter(|r| !r.cleared)
        .map(|r| {
            r.cleared = true;
            r.ordinal
        })
        .collect()
}

/// The oldest results not yet cleared whose sizes reach `budget`, marked cleared.
fn oldest(open: &mut [Open<'_>], budget: Tokens) -> Vec<usize> {
    let (mut chosen, mut sum) = (Vec::new(), 0);
    for r in open.iter_mut().filter(|r| !r.cleared) {
        if sum >= budget {
            break;
        }
        r.cleared = true;
        sum += r.tokens;
        chosen.push(r.ordinal);
    }
    chosen
}

/// What the recorded prompt drops by across the marker at `at`: the last request before it with
/// a recorded prompt, plus what is appended up to the first request after it with one, less that
/// one's prompt (0 when it grows); `None` when either is missing or a compaction lies between.
fn usage_step(conversation: &Conversation, measured: &[MeasuredItem], at: usize) -> Option<Tokens> {
    let items = &conversation.items;
    let recorded = |i: &Item| match i {
        Item::Request(r) => r.usage.map(|u| u.input_tokens),
        _ => None,
    };
    let before = (0..at).rev().find(|&i| recorded(&items[i]).is_some() || is_compaction(&items[i]))?;
    let after = (at + 1..items.len()).find(|&i| recorded(&items[i]).is_some() || is_compaction(&items[i]))?;
    let (y_before, y_after) = (recorded(&items[before])?, recorded(&items[after])?);
    let appended: Tokens = measured[before + 1..after].iter().map(appended_tokens).sum();
    Some((y_before + appended).saturating_sub(y_after))
}

fn is_compaction(item: &Item) -> bool {
    matches!(item, Item::Compaction { .. })
}

/// Tokens an item adds to the context as measured (requests and markers add none).
fn appended_tokens(item: &MeasuredItem) -> Tokens {
    match item {
        MeasuredItem::Text { measure, .. } | MeasuredItem::ToolCall { measure, .. } => measure.tokens,
        MeasuredItem::ToolResult(sizes, _) => sizes.output().tokens,
        MeasuredItem::Compaction { .. } | MeasuredItem::Request { .. } | MeasuredItem::Cleared { .. } => 0,
    }
}

/// What a walk over measured items (the calibration's, the residual's, the fit's) takes out of
/// its context at each clearing marker: the tool results it clears that are still in the context
/// and not cleared before, with their whole outputs' tokens, and the thinking texts it clears
/// ([`Clearing::thinking`]). Each walker adds the placeholders.
#[derive(Debug, Clone, Default)]
pub struct Clearing {
    /// Each tool result's output tokens so far, and whether it is cleared.
    results: Vec<(Tokens, bool)>,
    /// The first result of the current context.
    first: usize,
    /// Each thinking text's tokens so far, and whether it is cleared.
    thinking: Vec<(Tokens, bool)>,
    /// The first thinking text of the current context.
    first_thinking: usize,
    /// The thinking tokens the last item took out.
    thinking_cleared: Tokens,
}

impl Clearing {
    /// Notes `item`; at a clearing marker, the results it clears (ordinal, output tokens), and
    /// the thinking tokens it clears as [`Clearing::thinking`].
    pub fn step(&mut self, item: &MeasuredItem) -> Vec<(usize, Tokens)> {
        self.thinking_cleared = 0;
        match item {
            MeasuredItem::ToolResult(sizes, _) => self.results.push((sizes.output().tokens, false)),
            MeasuredItem::Text { category: Category::Thinking, measure, .. } => {
                self.thinking.push((measure.tokens, false));
            }
            MeasuredItem::Compaction { .. } => {
                self.first = self.results.len();
                self.first_thinking = self.thinking.len();
            }
            MeasuredItem::Cleared { results, thinking, .. } => {
                for &i in thinking.iter().filter(|&&i| i >= self.first_thinking) {
                    if let Some((tokens, cleared)) = self.thinking.get_mut(i).filter(|t| !t.1) {
                        *cleared = true;
                        self.thinking_cleared += *tokens;
                    }
                }
                let mut out = Vec::with_capacity(results.len());
                for &i in results.iter().filter(|&&i| i >= self.first) {
                    if let Some((tokens, cleared)) = self.results.get_mut(i).filter(|r| !r.1) {
                        *cleared = true;
                        out.push((i, *tokens));
                    }
                }
                return out;
            }
            _ => {}
        }
        Vec::new()
    }

    /// The thinking tokens the last item [`Clearing::step`] noted took out of the context (0 but
    /// at a marker that clears thinking).
    pub fn thinking(&self) -> Tokens {
        self.thinking_cleared
    }

    /// `context` after `item`, for a walker that keeps one running total: at a clearing marker,
    /// less the outputs and thinking it clears ([`Clearing::step`]) and plus a placeholder for
    /// each result; else as it was (the item is noted all the same).
    pub fn context_after(&mut self, item: &MeasuredItem, context: Tokens) -> Tokens {
        let cleared = self.step(item);
        let MeasuredItem::Cleared { placeholder, .. } = item else { return context };
        let removed: Tokens = cleared.iter().map(|c| c.1).sum::<Tokens>() + self.thinking_cleared;
        (context + placeholder.tokens * cleared.len() as Tokens).saturating_sub(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Output, Request, ToolResult, Usage};
    use crate::tokens::{Meter, Tokenizer};

    fn result(id: &str, text: &str) -> Item {
        Item::ToolResult(ToolResult {
            call_id: id.into(),
            name: None,
            output: Output::Raw { output: text.into() },
            is_error: false,
            images: 0,
        })
    }

    fn request(prompt: Option<Tokens>) -> Item {
        Item::Request(Request {
            usage: prompt.map(|input_tokens| Usage { input_tokens, ..Usage::default() }),
            ..Request::default()
        })
    }

    fn measured(items: Vec<Item>) -> super::super::MeasuredConversation {
        let c = Conversation { items, ..Conversation::default() };
        super::super::MeasuredConversation::new(
            &c,
            &Meter::new(Tokenizer::Estimate, Tokenizer::Estimate),
            &super::super::MeasureOptions::default(),
        )
    }

    /// What every marker of `items` clears: the results' ordinals, or the thinking texts'.
    fn marked(items: Vec<Item>, thinking_texts: bool) -> Vec<Vec<usize>> {
        let m = measured(items);
        m.items
            .iter()
            .filter_map(|i| match i {
                MeasuredItem::Cleared { thinking, .. } if thinking_texts => Some(thinking.to_vec()),
                MeasuredItem::Cleared { results, .. } => Some(results.to_vec()),
                _ => None,
            })
            .collect()
    }

    fn cleared_in(items: Vec<Item>) -> Vec<Vec<usize>> {
        marked(items, false)
    }

    #[test]
    fn named_results_are_the_latest_with_the_id_since_the_last_compaction_and_cleared_once() {
        let mark = |ids: &[&str]| {
            Item::Cleared(Cleared {
                call_ids: ids.iter().map(|s| s.to_string()).collect(),
                tokens_saved: None,
                oldest: None,
                thinking_turns: None,
            })
        };
        let got = cleared_in(vec![
            result("a", "old a"),
            Item::Compaction { summary: None },
            result("a", "new a"),
            result("b", "b"),
            mark(&["b", "a", "missing"]),
            mark(&["a", "b"]),
        ]);
        assert_eq!(got, [vec![1, 2], vec![]], "ordinals in order; a second marker clears nothing again");
    }

    #[test]
    fn the_reuse_index_takes_a_cleared_result_as_absent_from_the_next_request_on() {
        let mark = Item::Cleared(Cleared { call_ids: vec!["a".into()], ..Cleared::default() });
        let items =
            vec![result("a", "a"), request(None), result("b", "b"), request(None), mark, request(None)];
        let c = Conversation { items, ..Conversation::default() };
        let opts = super::super::MeasureOptions { reuse: true, ..Default::default() };
        let m = super::super::MeasuredConversation::new(
            &c,
            &Meter::new(Tokenizer::Estimate, Tokenizer::Estimate),
            &opts,
        );
        assert_eq!(m.reuse.cleared, [2, usize::MAX], "`a` from request 2, `b` never");
        assert!(!m.reuse.cleared_at(0, 1) && m.reuse.cleared_at(0, 2) && !m.reuse.cleared_at(1, 2));
        assert_eq!(cleared_from(&m.items[..4], 2), Vec::<usize>::new(), "no marker, nothing kept");
    }

    #[test]
    fn without_names_the_oldest_results_reach_the_usage_step_or_else_tokens_saved() {
        // len/4: each 40-byte output is 10 tokens.
        let out = "x".repeat(40);
        let mark = |saved| Item::Cleared(Cleared { tokens_saved: Some(saved), ..Cleared::default() });
        let items = |before, after| {
            vec![
                result("a", &out),
                result("b", &out),
                result("c", &out),
                request(before),
                mark(25),
                request(after),
            ]
        };
        // The usage drops by 12 (100 → 88, nothing appended): two results, though the log says 25.
        assert_eq!(cleared_in(items(Some(100), Some(88))), [vec![0, 1]]);
        // No usage after: `tokensSaved` (25) takes three.
        assert_eq!(cleared_in(items(Some(100), None)), [vec![0, 1, 2]]);
        // Usage that grows: nothing was cleared.
        assert_eq!(cleared_in(items(Some(100), Some(130))), [Vec::<usize>::new()]);
    }

    #[test]
    fn a_count_clears_the_oldest_results_of_the_context_once_each() {
        let count =
            |n| Item::Cleared(Cleared { oldest: Some(n), tokens_saved: Some(1), ..Cleared::default() });
        let got = cleared_in(vec![
            result("a", "old"),
            Item::Compaction { summary: None },
            result("b", "b"),
            result("c", "c"),
            count(1),
            result("d", "d"),
            // The oldest three since the compaction: `b` was cleared already.
            count(3),
            count(9),
        ]);
        assert_eq!(got, [vec![1], vec![2, 3], vec![]], "the count, not the size, chooses");
    }

    fn thinking(text: &str) -> Item {
        Item::Thinking { text: text.into() }
    }

    fn human(text: &str) -> Item {
        Item::User { text: text.into(), meta: false, images: 0 }
    }

    fn turns(n: usize) -> Item {
        Item::Cleared(Cleared { thinking_turns: Some(n), ..Cleared::default() })
    }

    #[test]
    fn thinking_turns_clear_the_thinking_of_the_oldest_turns_that_hold_some_once_each() {
        let got = marked(
            vec![
                human("one"),
                thinking("t0"),
                request(None),
                result("a", "a"),
                // A second response of the same turn: the same thinking turn.
                thinking("t1"),
                request(None),
                human("two: no thinking"),
                request(None),
                human("three"),
                thinking("t2"),
                request(None),
                human("four"),
                thinking("t3"),
                turns(1),
                request(None),
                // The oldest two turns holding thinking: `t2` is new, turn one was cleared before.
                turns(2),
                request(None),
                turns(9),
            ],
            true,
        );
        assert_eq!(got, [vec![0, 1], vec![2], vec![3]]);
    }

    #[test]
    fn a_thinking_marker_clears_no_result_and_a_compaction_starts_the_count_again() {
        let m = measured(vec![
            human("one"),
            thinking("old"),
            result("a", &"x".repeat(40)),
            request(Some(100)),
            Item::Compaction { summary: None },
            human("two"),
            thinking(&"n".repeat(8)),
            turns(1),
            request(Some(50)),
        ]);
        let marker = m.items.iter().find(|i| matches!(i, MeasuredItem::Cleared { .. })).unwrap();
        let MeasuredItem::Cleared { results, thinking, .. } = marker else { unreachable!() };
        assert!(results.is_empty(), "no count and no ids: no result, whatever the usage step");
        assert_eq!(&thinking[..], [1], "the thinking of the turn after the compaction");
        // The walkers take the thinking text's tokens out (8 bytes: 2 tokens by len/4), no placeholder.
        let mut clearing = Clearing::default();
        let contexts: Vec<Tokens> = m
            .items
            .iter()
            .scan(0, |context, item| {
                *context = clearing.context_after(item, *context);
                *context += appended_tokens(item);
                Some(*context)
            })
            .collect();
        let at = m.items.iter().position(|i| matches!(i, MeasuredItem::Cleared { .. })).unwrap();
        assert_eq!(clearing.thinking(), 0, "the last item, a request, clears nothing");
        assert_eq!(contexts[at - 1] - contexts[at], 2, "{contexts:?}");
    }
}
