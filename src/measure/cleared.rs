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
//! The reuse index takes the same results as absent from the request after the marker on
//! ([`cleared_from`]).
//!
//! Pure: no I/O.

use std::sync::Arc;

use super::MeasuredItem;
use crate::model::{Cleared, Conversation, Item, Tokens};

/// A tool result of the current context: its call id, ordinal, size and whether it is cleared.
struct Open<'a> {
    call_id: &'a str,
    ordinal: usize,
    tokens: Tokens,
    cleared: bool,
}

/// Fills in the results of every [`MeasuredItem::Cleared`] of `measured` (the items of
/// `conversation`, measured one by one, in the same order).
pub fn resolve(conversation: &Conversation, measured: &mut [MeasuredItem]) {
    if !conversation.items.iter().any(|i| matches!(i, Item::Cleared(_))) {
        return;
    }
    let mut open: Vec<Open<'_>> = Vec::new();
    let mut ordinal = 0;
    for (k, item) in conversation.items.iter().enumerate() {
        match item {
            Item::ToolResult(r) => {
                let tokens = match &measured[k] {
                    MeasuredItem::ToolResult(sizes, _) => sizes.output().tokens,
                    _ => 0,
                };
                open.push(Open { call_id: &r.call_id, ordinal, tokens, cleared: false });
                ordinal += 1;
            }
            Item::Compaction { .. } => open.clear(),
            Item::Cleared(c) => {
                let chosen = if let Some(n) = c.oldest {
                    first(&mut open, n)
                } else if c.call_ids.is_empty() {
                    let budget = usage_step(conversation, measured, k).or(c.tokens_saved).unwrap_or(0);
                    oldest(&mut open, budget)
                } else {
                    named(&mut open, c)
                };
                if let MeasuredItem::Cleared { results, .. } = &mut measured[k] {
                    *results = Arc::from(chosen);
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
/// and not cleared before, with their whole outputs' tokens. Each walker adds the placeholders.
#[derive(Debug, Clone, Default)]
pub struct Clearing {
    /// Each tool result's output tokens so far, and whether it is cleared.
    results: Vec<(Tokens, bool)>,
    /// The first result of the current context.
    first: usize,
}

impl Clearing {
    /// Notes `item`; at a clearing marker, the results it clears (ordinal, output tokens).
    pub fn step(&mut self, item: &MeasuredItem) -> Vec<(usize, Tokens)> {
        match item {
            MeasuredItem::ToolResult(sizes, _) => self.results.push((sizes.output().tokens, false)),
            MeasuredItem::Compaction { .. } => self.first = self.results.len(),
            MeasuredItem::Cleared { results, .. } => {
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

    /// `context` after `item`, for a walker that keeps one running total: at a clearing marker,
    /// less the outputs it clears ([`Clearing::step`]) and plus a placeholder for each; else as
    /// it was (the item is noted all the same).
    pub fn context_after(&mut self, item: &MeasuredItem, context: Tokens) -> Tokens {
        let cleared = self.step(item);
        let MeasuredItem::Cleared { placeholder, .. } = item else { return context };
        let removed: Tokens = cleared.iter().map(|c| c.1).sum();
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

    fn cleared_in(items: Vec<Item>) -> Vec<Vec<usize>> {
        let c = Conversation { items, ..Conversation::default() };
        let m = super::super::MeasuredConversation::new(
            &c,
            &Meter::new(Tokenizer::Estimate, Tokenizer::Estimate),
            &super::super::MeasureOptions::default(),
        );
        m.items
            .iter()
            .filter_map(|i| match i {
                MeasuredItem::Cleared { results, .. } => Some(results.to_vec()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn named_results_are_the_latest_with_the_id_since_the_last_compaction_and_cleared_once() {
        let mark = |ids: &[&str]| {
            Item::Cleared(Cleared {
                call_ids: ids.iter().map(|s| s.to_string()).collect(),
                tokens_saved: None,
                oldest: None,
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
        let mark = Item::Cleared(Cleared { call_ids: vec!["a".into()], tokens_saved: None, oldest: None });
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
}
