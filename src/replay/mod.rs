//! The replay: a measured conversation, request by request, under one policy at one threshold.
//!
//! Items are appended to the context in order. At each request boundary the policy sees the context
//! and edits it (sticky edits persist, as the seed's prune does; a non-sticky policy's edits apply to
//! that request only), then the request's context is measured: real tokens per category, the `len/4`
//! estimate, what is still prunable, what the policy has removed, and the prefix it shares with the
//! previous request (what a prompt cache could serve). A compaction marker empties the context.
//!
//! Linear in the trace, plus a log per edit: running sums per category, prefix sums over item
//! positions (`Prefix`: O(1) per item added in order, O(log n) per edit of an older one), result
//! to call links worked out once per measured conversation, and policies that keep cursors. A
//! non-sticky policy's edits are kept from request to request with their effect on the sums (and
//! a second `Prefix` for the shared prefix), so a policy that gives only what changed
//! ([`Edit::KeepPrevious`](crate::policy::Edit::KeepPrevious)) costs in proportion to its changes. Nothing is recounted per request
//! (texts were measured once in [`crate::measure`]; only text a policy writes, such as a
//! placeholder, is measured here, through the cache). [`replay_summary`] skips the per-request
//! rows. Pure: no I/O, no printing.

mod engine;
mod prefix;
pub mod recorded;
mod reported;
#[cfg(test)]
mod tests;

use crate::harness::Harness;
use crate::measure::{Category, MeasuredConversation, MeasuredItem};
use crate::model::Tokens;
use crate::model::{Millis, Usage};
use crate::policy::compact::harness::{WithHarness, trigger};
use crate::policy::{CallText, On, Policy};
use crate::result::{CompactionTotals, Run, RunSummary};
use crate::tokens::{Meter, TextSize};
use engine::{Engine, Summarised};

/// Replays `conversation` at `threshold` under `policy`, measuring any text the policy writes with
/// `meter`. The summary's labels (trace, format, policy, tokenizer) are left for the caller to fill.
pub fn replay(
    conversation: &MeasuredConversation,
    threshold: usize,
    policy: &mut dyn Policy,
    meter: &Meter,
) -> Run {
    replay_keeping(conversation, threshold, policy, meter, Keep::Rows)
}

/// [`replay`] without the per-request rows: the same summary (the rows come back empty), without
/// the cost of building a row per request, for sweeps and reports of one row per run.
pub fn replay_summary(
    conversation: &MeasuredConversation,
    threshold: usize,
    policy: &mut dyn Policy,
    meter: &Meter,
) -> Run {
    replay_keeping(conversation, threshold, policy, meter, Keep::Summary)
}

/// What a replay keeps of each request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Nothing: the summary only ([`replay_summary`]).
    Summary,
    /// Every row in full ([`replay`]).
    Rows,
    /// The rows a pricing reads: every row without the request's id and time as text (`id` and
    /// `timestamp` are `None`, `gap_ms` is kept), for a grid that prices many runs.
    Priced,
}

/// [`replay`], keeping of each request what `keep` says.
pub fn replay_keeping(
    conversation: &MeasuredConversation,
    threshold: usize,
    policy: &mut dyn Policy,
    meter: &Meter,
    keep: Keep,
) -> Run {
    // The meter of the tokenizer the conversation was counted with (`--tokenizer provider`).
    let meter = meter.resolved(conversation.calibration.tokenizer.map(Into::into));
    let harness = if policy.as_recorded() { Harness::RECORDED } else { conversation.harness };
    let mut beside;
    let policy: &mut dyn Policy = match trigger(harness, policy.compacts()) {
        Some(trigger) => {
            beside = WithHarness::new(policy, trigger);
            &mut beside
        }
        None => policy,
    };
    let mut run = replay_with(conversation, threshold, policy, meter, keep, harness.drops_recorded());
    run.summary.harness_compaction = harness.mode.name().to_owned();
    run.summary.harness_compaction_policy = harness.policy.map(str::to_owned);
    run
}

/// The replay loop; `drop_recorded`: the log's own compactions are dropped ([`Dropping`]).
fn replay_with(
    conversation: &MeasuredConversation,
    threshold: usize,
    policy: &mut dyn Policy,
    meter: &Meter,
    keep: Keep,
    drop_recorded: bool,
) -> Run {
    let keep_rows = keep != Keep::Summary;
    let mut e = Engine::new(conversation, threshold, meter);
    let sticky = policy.sticky();
    let whole_outputs = policy.on() == On::Output;
    let compacts = policy.compacts();
    if compacts {
        e.set_log_summary_ratio(recorded::summary_ratio(conversation));
    }
    // Each call's `len(repr(call))`, for a policy that reads the messages one by one.
    let call_reprs = if policy.message_sizes() { e.track_messages(conversation) } else { &[] };
    let mut calls = 0;
    let mut summary = RunSummary { threshold, calibration: conversation.calibration, ..Default::default() };
    let mut rows = Vec::with_capacity(if keep_rows { conversation.requests() } else { 0 });
    let mut edits = Vec::new();
    // The recorded prompt sizes summed, once a request records one.
    let mut recorded: Option<Tokens> = None;
    let mut dropping = Dropping::No;
    // The log as recorded beside the replay, for the estimate its agent's trigger reads.
    let mut residual = conversation.harness.agent.filter(|_| compacts).map(reported::Residual::new);
    for (position, item) in conversation.items.iter().enumerate() {
        residual.iter_mut().for_each(|r| r.item(item));
        match item {
            MeasuredItem::Text { category, measure, turn_start, turn_scoped } => {
                if !dropping.drops(*category) {
                    e.text(position, *category, *measure, *turn_start, *turn_scoped)
                }
            }
            MeasuredItem::ToolCall { measure, name_measure, call_id, name, arguments } => {
                let repr_chars = call_reprs.get(calls).copied().unwrap_or(0);
                calls += 1;
                let text = CallText { call_id, name, arguments, repr_chars };
                e.tool_call(position, *measure, *name_measure, text)
            }
            MeasuredItem::ToolResult(sizes, result) => {
                let content = e.tool_result(position, sizes, result, whole_outputs);
                add_tool_result(&mut summary, sizes.output(), content);
            }
            MeasuredItem::Compaction { summary: text } if drop_recorded => {
                dropping = if text.is_some() { Dropping::Restated } else { Dropping::Summary };
            }
            MeasuredItem::Compaction { summary: text } => e.compaction_marker(position, *text),
            MeasuredItem::Request { id, timestamp, usage, model } => {
                dropping = Dropping::No;
                let mut adjustment = e.edit(policy, sticky, *timestamp, &mut edits);
                let mut sent = e.sent(&adjustment);
                let summarised = if compacts {
                    let reported = residual.as_ref().and_then(|r| r.estimate(sent.context_tokens));
                    let s = e.compact(policy, position, *timestamp, &mut adjustment, &sent, reported);
                    if s.is_some() {
                        sent = e.sent(&adjustment);
                    }
                    s
                } else {
                    None
                };
                let (context_tokens, pruned) = (sent.context_tokens, sent.pruned);
                residual
                    .iter_mut()
                    .for_each(|r| r.request(usage.as_ref(), summarised.is_some(), context_tokens));
                if let Some(u) = usage {
                    *recorded.get_or_insert(0) += u.input_tokens;
                    summary.recorded_requests += 1;
                }
                summary.peak_context_tokens = summary.peak_context_tokens.max(context_tokens);
                summary.total_input_tokens += context_tokens;
                summary.final_context_tokens = context_tokens;
                if keep_rows {
                    let labels = keep == Keep::Rows;
                    let request =
                        RequestItem { id, timestamp: *timestamp, usage: usage.as_ref(), model, labels };
                    let mut row = e.row(&request, sent, &adjustment);
                    if let Some(s) = summarised {
                        row.summarization_input_tokens = s.input_tokens;
                        row.summarization_cached_tokens = s.cached_tokens;
                        row.summarization_output_tokens = s.summary_tokens;
                    }
                    rows.push(row);
                }
                if let Some(s) = summarised {
                    add_summarised(&mut summary, s);
                }
                if adjustment.changed > 0 {
                    summary.prune_events += 1;
                }
                e.end_request(position, *timestamp, context_tokens, pruned);
            }
        }
    }
    summary.requests = e.requests();
    summary.pruned_tokens = e.pruned_total();
    summary.recorded_input_tokens = recorded.or(conversation.recorded_total.map(|t| t.input_tokens));
    summary.conversation = conversation.id.clone();
    summary.transforms = conversation.transforms.clone();
    Run { summary, rows }
}

/// A request boundary as the measured conversation records it.
struct RequestItem<'c> {
    /// Provider id of the response.
    id: &'c Option<String>,
    /// When it was made.
    timestamp: Option<Millis>,
    /// Recorded usage.
    usage: Option<&'c Usage>,
    /// The model the log names.
    model: &'c Option<std::sync::Arc<str>>,
    /// The row carries the id and the time as text (a pricing reads neither: [`Keep`]).
    labels: bool,
}

/// Between a recorded compaction the replay drops and the next request: the texts that only
/// restart the context there are dropped with it. The system prompt and the unrecorded overhead
/// sent again after it are already in the context, and the summary, when the marker does not hold
/// it, is the first user text after it (Claude Code's `isCompactSummary` line), as
/// [`recorded::recorded_compactions`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dropping {
    /// No dropped compaction since the last request.
    No,
    /// After one that held its summary: the restated system prompt and overhead go.
    Restated,
    /// After one without its summary: those and the first user text go.
    Summary,
}

impl Dropping {
    /// Whether a text of `category` here is dropped (a dropped summary ends the user-text watch).
    fn drops(&mut self, category: Category) -> bool {
        match (*self, category) {
            (Dropping::No, _) => false,
            (_, Category::System | Category::Unrecorded) => true,
            (Dropping::Summary, Category::User) => {
                *self = Dropping::Restated;
                true
            }
            _ => false,
        }
    }
}

/// Adds a compaction the policy made to the run's totals.
fn add_summarised(summary: &mut RunSummary, s: Summarised) {
    summary.compaction += CompactionTotals {
        compactions: 1,
        summarized_tokens: s.summarized_tokens,
        summary_tokens: s.summary_tokens,
        summarization_input_tokens: s.input_tokens,
        summarization_output_tokens: s.summary_tokens,
    };
}

/// Adds a tool result's output (and its content, when split) to the run's totals.
fn add_tool_result(summary: &mut RunSummary, output: TextSize, content: Option<TextSize>) {
    summary.tool_results += 1;
    summary.tool_output_bytes += output.bytes;
    summary.tool_output_tokens += output.tokens;
    if let Some(c) = content {
        summary.split_results += 1;
        summary.content_tokens += c.tokens;
        summary.content_estimate += c.estimate;
    }
}
