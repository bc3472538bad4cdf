//! The usage the provider would have reported, in a counterfactual replay, as the trigger of the
//! agent that wrote the log reads it. Claude Code, Codex and opencode decide to compact on the
//! usage the provider reported for the previous response, not on a count of their own:
//!
//! - opencode (`sst/opencode` `packages/opencode/src/session/overflow.ts`@31e22f65a23c,
//!   `isOverflow`) compares the last assistant message's `tokens.total`, else `input + output +
//!   cache.read + cache.write`: the previous request's whole prompt and its output.
//! - Claude Code (closed source) compacted `session-624a4a58.jsonl` when the previous response's
//!   prompt and output stood at 155,979 and not when they stood at 154,476 (docs/compaction.md):
//!   the same count.
//! - Codex (`openai/codex` `codex-rs/core/src/context_manager/history.rs`@023fad268e08,
//!   `get_total_token_usage`, read after each sampling request) adds to the previous response's
//!   `total_tokens` (its prompt and output) an estimate of the items recorded after it, the tool
//!   outputs: a count of the next prompt.
//!
//! The calibrated replay of the log as recorded still misses some of what the provider counted (a
//! server-side clearing of old tool results, the end of a segment the calibration's medians under-
//! or over-state: docs/calibration.md), so a recorded prompt size `recorded(j)` is carried as its
//! *residual* `recorded(j) − as_recorded(j)`, where `as_recorded` is the calibrated context of the
//! log replayed as recorded (the baseline: `none`, nothing split, the log's compactions where they
//! were), worked out once per conversation ([`as_recorded_contexts`]); `j` is the last request
//! before `k` that recorded a size. The estimate for request `k` is then, for Claude Code and
//! opencode, `context(k − 1) + residual + output(k − 1)` (the counterfactual prompt of the previous
//! request and the output the log recorded for it), and for Codex `context(k) + residual`.
//!
//! The residual belongs to the recorded context since the log's last compaction. It is carried
//! while the replayed context holds the same history: a compaction the log recorded (kept or
//! dropped by `--harness-compaction`) starts a new stretch with no residual until one of its
//! requests records a size, and a compaction the replay makes stops the carrying until the log's
//! next compaction (the recorded sizes are then of a context the replay no longer holds). Where
//! nothing is carried the trigger reads the calibrated context as sent, as before. Pure: no I/O.

use crate::measure::cleared::Clearing;
use crate::measure::{MeasuredConversation, MeasuredItem};
use crate::model::{Tokens, Usage};
use crate::policy::compact::{Reported, codex};

/// The context of the log replayed as recorded (the baseline: `none`, nothing split, the log's
/// compactions where they were) at each request of `conversation`, in order: what a residual is
/// taken against. The same for every replay of the conversation, so worked out once and kept with
/// it ([`MeasuredConversation::recorded_contexts`]).
pub(super) fn as_recorded_contexts(conversation: &MeasuredConversation) -> &[Tokens] {
    conversation.recorded_contexts().get_or_init(|| {
        let mut walk =
            AsRecorded { clearing: conversation.clears().then(Clearing::default), ..Default::default() };
        let items = conversation.items.iter();
        items
            .filter_map(|item| {
                walk.item(item);
                matches!(item, MeasuredItem::Request { .. }).then_some(walk.context)
            })
            .collect()
    })
}

/// The log replayed as recorded, item by item.
#[derive(Debug, Default)]
struct AsRecorded {
    /// The context so far.
    context: Tokens,
    /// Of which sent only until the next human turn starts.
    turn_scoped: Tokens,
    /// The results the log's clearing markers take out of the context (`None`: the log has no
    /// marker).
    clearing: Option<Clearing>,
}

impl AsRecorded {
    fn item(&mut self, item: &MeasuredItem) {
        if let Some(clearing) = &mut self.clearing {
            self.context = clearing.context_after(item, self.context);
        }
        match item {
            MeasuredItem::Text { measure, turn_start, turn_scoped, .. } => {
                // As the replay drops the turn-scoped texts when a human turn starts.
                if *turn_start {
                    self.context -= std::mem::take(&mut self.turn_scoped);
                }
                if *turn_scoped {
                    self.turn_scoped += measure.tokens;
                }
                self.context += measure.tokens;
            }
            MeasuredItem::ToolCall { measure, .. } => self.context += measure.tokens,
            MeasuredItem::ToolResult(sizes, _) => {
                // Split as the baseline splits it: not at all (`usize::MAX`).
                let (summary, content) = sizes.split_at(usize::MAX);
                self.context += summary.tokens + content.map_or(0, |c| c.tokens);
            }
            MeasuredItem::Compaction { summary } => {
                self.context = summary.map_or(0, |s| s.tokens);
                self.turn_scoped = 0;
            }
            MeasuredItem::Cleared { .. } | MeasuredItem::Request { .. } => {}
        }
    }
}

/// The residual carried beside a replay.
#[derive(Debug, Clone)]
pub(super) struct Residual<'a> {
    /// The compaction policy of the agent that wrote the log: the trigger the estimate is for.
    agent: &'static str,
    /// The agent counts the previous response (its prompt and output), not the next prompt.
    previous_response: bool,
    /// The as-recorded context at each request ([`as_recorded_contexts`]).
    as_recorded: &'a [Tokens],
    /// Requests so far.
    requests: usize,
    /// `recorded − as_recorded` of the last request of this stretch that recorded a prompt size.
    residual: Option<i64>,
    /// The previous request's counterfactual context as sent, and the output the log recorded
    /// for it.
    previous: Option<(Tokens, Tokens)>,
    /// The replay compacted since the log's last compaction.
    diverged: bool,
}

impl<'a> Residual<'a> {
    /// Nothing carried yet, for the trigger of `agent` (its compaction policy's name), beside a
    /// replay of a log whose as-recorded context at each request is `as_recorded`.
    pub(super) fn new(agent: &'static str, as_recorded: &'a [Tokens]) -> Residual<'a> {
        let previous_response = agent != codex::NAME;
        Residual {
            agent,
            previous_response,
            as_recorded,
            requests: 0,
            residual: None,
            previous: None,
            diverged: false,
        }
    }

    /// A compaction the log recorded (kept or dropped by the replay): a new stretch.
    pub(super) fn compaction(&mut self) {
        self.residual = None;
        self.diverged = false;
    }

    /// The estimate for a request whose counterfactual context is `context_tokens`, if a residual
    /// is carried.
    pub(super) fn estimate(&self, context_tokens: Tokens) -> Option<Reported> {
        let residual = self.residual.filter(|_| !self.diverged)?;
        let counted = if self.previous_response {
            let (context, output) = self.previous?;
            context + output
        } else {
            context_tokens
        };
        let tokens = (counted as i64).saturating_add(residual).max(0) as Tokens;
        Some(Reported { agent: self.agent, tokens })
    }

    /// After a request that recorded `usage`, compacted by the replay before it if `compacted`,
    /// sent with `context_tokens` tokens of context.
    pub(super) fn request(&mut self, usage: Option<&Usage>, compacted: bool, context_tokens: Tokens) {
        self.diverged |= compacted;
        if let Some(u) = usage {
            let as_recorded = self.as_recorded.get(self.requests).copied().unwrap_or(0);
            self.residual = Some(u.input_tokens as i64 - as_recorded as i64);
        }
        self.requests += 1;
        let output = usage.and_then(|u| u.output_tokens).unwrap_or(0);
        self.previous = Some((context_tokens, output));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{MeasureOptions, MeasuredConversation};
    use crate::model::{Conversation, Item, Output, Request, ToolResult, UnseenKind};
    use crate::policy::{PolicySpec, compact::harness::as_recorded};
    use crate::tokens::{DecideWith, Tokenizer};

    fn user(t: &str) -> Item {
        Item::User { text: t.into(), meta: false, images: 0 }
    }

    fn recorded(input_tokens: Tokens) -> Item {
        let usage = Usage { input_tokens, ..Usage::default() };
        Item::Request(Request { usage: Some(usage), ..Request::default() })
    }

    /// One token per byte: a first turn with hidden reasoning and a call whose 300-byte output
    /// splits at the replay's threshold; a second turn (the reasoning dropped); the log's
    /// compaction with its summary; a request that records no size; one that does.
    fn conversation() -> (MeasuredConversation, crate::tokens::Meter) {
        let meter = crate::policy::testing::meter(DecideWith::Tokenizer(Tokenizer::O200k));
        let lines = crate::policy::testing::lines(10, 29);
        let items = vec![
            user(&"a".repeat(100)),
            recorded(150),
            Item::Unseen { kind: UnseenKind::Reasoning, tokens: 40 },
            Item::ToolCall { call_id: "c".into(), name: "t".into(), arguments: "{}".into() },
            Item::ToolResult(ToolResult {
                call_id: "c".into(),
                name: Some("t".into()),
                output: Output::Raw { output: lines },
                is_error: false,
                images: 0,
            }),
            recorded(500),
            user(&"b".repeat(50)),
            recorded(480),
            Item::Compaction { summary: Some("s".repeat(10)) },
            Item::Request(Request::default()),
            user(&"c".repeat(20)),
            recorded(45),
        ];
        let conv = Conversation { id: "main".into(), items, recorded_total: None };
        (MeasuredConversation::new(&conv, &meter, &MeasureOptions::default()), meter)
    }

    #[test]
    fn the_log_as_recorded_is_tracked_as_the_baseline_replays_it() {
        let (m, meter) = conversation();
        let mut baseline = as_recorded(PolicySpec::parse("none").unwrap().build());
        let rows = crate::replay::replay(&m, usize::MAX, &mut *baseline, &meter).rows;
        let contexts = as_recorded_contexts(&m);
        let mut r = Residual::new("compact:claude-code", contexts);
        let mut residuals = Vec::new();
        for item in &m.items {
            match item {
                MeasuredItem::Compaction { .. } => r.compaction(),
                MeasuredItem::Request { usage, .. } => {
                    r.request(usage.as_ref(), false, 0);
                    residuals.push(r.residual);
                }
                _ => {}
            }
        }
        let replayed: Vec<Tokens> = rows.iter().map(|row| row.context_tokens).collect();
        assert_eq!(contexts, replayed, "the baseline's contexts");
        // The reasoning is sent at request 1 and dropped when the second turn starts.
        assert_eq!(rows[1].categories.hidden_reasoning, 40);
        assert_eq!(rows[2].categories.hidden_reasoning, 0);
        let expected: Vec<Option<i64>> = rows
            .iter()
            .scan(None, |carried, row| {
                let now = row.recorded_input_tokens.map(|t| t as i64 - row.context_tokens as i64);
                // A request that records nothing keeps the stretch's last residual; the log's
                // compaction (before request 3) clears it.
                *carried = now.or(if row.request == 3 { None } else { *carried });
                Some(*carried)
            })
            .collect();
        assert_eq!(residuals, expected);
        assert_eq!(residuals[3], None, "no size recorded since the log's compaction");
        assert_eq!(residuals[4], Some(45 - 30), "the summary and the user text");
    }

    #[test]
    fn the_residual_is_carried_until_the_replay_compacts_and_again_from_the_logs_next_compaction() {
        let (m, _) = conversation();
        let contexts = as_recorded_contexts(&m);
        let mut r = Residual::new("compact:codex", contexts);
        let mut estimates = Vec::new();
        let mut requests = 0;
        for item in &m.items {
            match item {
                MeasuredItem::Compaction { .. } => r.compaction(),
                MeasuredItem::Request { usage, .. } => {
                    estimates.push(r.estimate(1000).map(|e| (e.agent, e.tokens)));
                    // The replay compacts before request 1: nothing carried until the log compacts.
                    r.request(usage.as_ref(), requests == 1, 0);
                    requests += 1;
                }
                _ => {}
            }
        }
        let first = 150 - 100;
        assert_eq!(estimates[0], None, "no request recorded a size before the first");
        assert_eq!(estimates[1], Some(("compact:codex", 1000 + first)), "request 0's residual");
        assert_eq!(estimates[2], None, "the replay compacted before request 1");
        assert_eq!(estimates[3], None, "the log's compaction: a new stretch, no size recorded yet");
        assert_eq!(estimates[4], None, "request 3 recorded no size");
        // A residual that would take the estimate below zero stops at zero (the first request's
        // as-recorded context is the first user text, 100).
        let mut r = Residual::new("compact:codex", contexts);
        r.request(Some(&Usage { input_tokens: 0, ..Usage::default() }), false, 0);
        assert_eq!(r.estimate(40).map(|e| e.tokens), Some(0));
    }

    #[test]
    fn claude_code_and_opencode_read_the_previous_response_codex_the_next_prompt() {
        let (m, _) = conversation();
        // The first request's as-recorded context: the first user text, 100.
        let contexts = as_recorded_contexts(&m);
        assert_eq!(contexts[0], 100);
        let usage = Usage { input_tokens: 150, output_tokens: Some(20), ..Usage::default() };
        for (agent, expected) in [
            // The previous request sent 120 counterfactual tokens: 120 + (150 - 100) + 20.
            ("compact:claude-code", 190),
            ("compact:opencode", 190),
            // The next prompt, 1000 counterfactual tokens, and the residual.
            ("compact:codex", 1050),
        ] {
            let mut r = Residual::new(agent, contexts);
            assert_eq!(r.estimate(1000), None, "{agent}: nothing recorded yet");
            r.request(Some(&usage), false, 120);
            assert_eq!(r.estimate(1000).map(|e| e.tokens), Some(expected), "{agent}");
        }
        // A request that recorded no output adds none; its residual is the stretch's last.
        let mut r = Residual::new("compact:claude-code", contexts);
        r.request(Some(&usage), false, 120);
        r.request(None, false, 300);
        assert_eq!(r.estimate(0).map(|e| e.tokens), Some(300 + 50));
    }
}
