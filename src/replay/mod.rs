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
mod fork;
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
use crate::policy::{CallText, Edit, On, Policy};
use crate::result::{CompactionTotals, RequestRow, Run, RunSummary};
use crate::tokens::{Meter, TextSize};
use engine::{Engine, Summarised};
pub use fork::{Forked, replay_forked};

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
    let (harness, mut trigger) = harness_of(conversation, policy);
    beside(policy, trigger.as_mut(), |policy| {
        let mut replaying = Replaying::new(conversation, threshold, policy, meter, keep, harness);
        let mut edits = Vec::new();
        for (position, item) in conversation.items.iter().enumerate() {
            replaying.item(position, item, policy, &mut edits);
        }
        replaying.finish()
    })
}

/// Runs `f` on `policy`, with the agent's `trigger` beside it when there is one ([`WithHarness`]).
fn beside<R>(
    policy: &mut dyn Policy,
    trigger: Option<&mut Box<dyn Policy>>,
    f: impl FnOnce(&mut dyn Policy) -> R,
) -> R {
    match trigger {
        Some(trigger) => f(&mut WithHarness::new(policy, &mut **trigger)),
        None => f(policy),
    }
}

/// The harness `policy` is replayed under on `conversation` (the log's compactions as recorded
/// for the as-recorded baseline), and the agent's trigger to run beside it, if any.
fn harness_of(
    conversation: &MeasuredConversation,
    policy: &dyn Policy,
) -> (Harness, Option<Box<dyn Policy>>) {
    let caps = policy.capabilities();
    let harness = run_harness(conversation, &caps);
    (harness, trigger(harness, caps.compacts))
}

/// The harness a policy of capabilities `caps` is replayed under on `conversation`: the log's
/// compactions and clearings as recorded for the as-recorded baseline, else the conversation's.
pub(crate) fn run_harness(
    conversation: &MeasuredConversation,
    caps: &crate::policy::Capabilities,
) -> Harness {
    if caps.as_recorded { Harness::RECORDED } else { conversation.harness }
}

/// `items` copied into a list with room for `capacity`.
fn with_room<T: Clone>(items: &[T], capacity: usize) -> Vec<T> {
    let mut copy = Vec::with_capacity(capacity.max(items.len()));
    copy.extend_from_slice(items);
    copy
}

/// One replay in progress: the engine and the run's totals so far, fed item by item
/// ([`Replaying::item`], the policy given each time, with the agent's trigger beside it when
/// there is one); copied where a grid forks a replay ([`Replaying::fork`]).
struct Replaying<'a> {
    conversation: &'a MeasuredConversation,
    e: Engine<'a>,
    keep: Keep,
    harness: Harness,
    /// The log's own compactions are dropped ([`Dropping`]).
    drop_recorded: bool,
    /// The log's own clearings of tool results and thinking are applied
    /// ([`Harness::applies_clearings`]).
    clearings: bool,
    /// Some of them clear thinking: the engine keeps where each thinking text is.
    thinking_clearings: bool,
    sticky: bool,
    whole_outputs: bool,
    compacts: bool,
    /// Each call's `len(repr(call))`, for a policy that reads the messages one by one.
    call_reprs: &'a [u64],
    /// Tool calls met so far.
    calls: usize,
    summary: RunSummary,
    rows: Vec<RequestRow>,
    /// The recorded prompt sizes summed, once a request records one.
    recorded: Option<Tokens>,
    dropping: Dropping,
    /// The log as recorded beside the replay, for the estimate its agent's trigger reads.
    residual: Option<reported::Residual<'a>>,
}

impl<'a> Replaying<'a> {
    /// Nothing replayed yet of `conversation` at `threshold` under `policy` (with its trigger),
    /// measuring with `meter`, under `harness`.
    fn new(
        conversation: &'a MeasuredConversation,
        threshold: usize,
        policy: &dyn Policy,
        meter: &'a Meter,
        keep: Keep,
        harness: Harness,
    ) -> Self {
        // The meter of the tokenizer the conversation was counted with (`--tokenizer provider`).
        let meter = meter.resolved(conversation.calibration.tokenizer.map(Into::into));
        let mut e = Engine::new(conversation, threshold, meter);
        let caps = policy.capabilities();
        let compacts = caps.compacts;
        if compacts {
            e.set_log_summary_ratio(recorded::summary_ratio(conversation));
        }
        let call_reprs = if caps.message_sizes { e.track_messages(conversation) } else { &[] };
        let keep_rows = keep != Keep::Summary;
        Replaying {
            conversation,
            e,
            keep,
            harness,
            drop_recorded: harness.drops_recorded(),
            clearings: harness.applies_clearings(),
            thinking_clearings: harness.applies_clearings() && conversation.clears_thinking(),
            sticky: caps.sticky,
            whole_outputs: caps.on == On::Output,
            compacts,
            call_reprs,
            calls: 0,
            summary: RunSummary { threshold, calibration: conversation.calibration, ..Default::default() },
            rows: Vec::with_capacity(if keep_rows { conversation.requests() } else { 0 }),
            recorded: None,
            dropping: Dropping::No,
            residual: (conversation.harness.agent.filter(|_| compacts))
                .map(|agent| reported::Residual::new(agent, reported::as_recorded_contexts(conversation))),
        }
    }

    /// A copy of the replay so far, with room for the rest of its rows ([`Engine::fork`]).
    fn fork(&self) -> Self {
        Replaying {
            e: self.e.fork(),
            summary: self.summary.clone(),
            rows: with_room(&self.rows, self.rows.capacity()),
            residual: self.residual.clone(),
            ..*self
        }
    }

    /// From here on, results are split at `threshold` (all split so far as it splits them).
    fn set_threshold(&mut self, threshold: usize) {
        self.e.set_threshold(threshold);
        self.summary.threshold = threshold;
    }

    /// The item at `position`; `edits` is scratch space.
    fn item(
        &mut self,
        position: usize,
        item: &'a MeasuredItem,
        policy: &mut dyn Policy,
        edits: &mut Vec<Edit>,
    ) {
        if let (MeasuredItem::Compaction { .. }, Some(r)) = (item, &mut self.residual) {
            r.compaction();
        }
        let e = &mut self.e;
        match item {
            MeasuredItem::Text { category, measure, turn_start, turn_scoped } => {
                if !self.dropping.drops(*category) {
                    e.text(position, *category, *measure, *turn_start, *turn_scoped)
                }
                if self.thinking_clearings && *category == Category::Thinking {
                    e.thinking_text(position, *measure);
                }
            }
            MeasuredItem::ToolCall { measure, name_measure, call_id, name, arguments } => {
                let repr_chars = self.call_reprs.get(self.calls).copied().unwrap_or(0);
                self.calls += 1;
                let text = CallText { call_id, name, arguments, repr_chars };
                e.tool_call(position, *measure, *name_measure, text)
            }
            MeasuredItem::ToolResult(sizes, result) => {
                let content = e.tool_result(position, sizes, result, self.whole_outputs);
                add_tool_result(&mut self.summary, sizes.output(), content);
            }
            MeasuredItem::Compaction { summary: text } if self.drop_recorded => {
                self.dropping = if text.is_some() { Dropping::Restated } else { Dropping::Summary };
            }
            MeasuredItem::Compaction { summary: text } => e.compaction_marker(position, *text),
            MeasuredItem::Cleared { results, placeholder, thinking } if self.clearings => {
                self.summary.cleared_results += e.cleared(results, *placeholder);
                self.summary.cleared_thinking_blocks += e.cleared_thinking(thinking);
            }
            MeasuredItem::Cleared { .. } => {}
            MeasuredItem::Request { id, timestamp, usage, model } => {
                let request =
                    RequestItem { id, timestamp: *timestamp, usage: usage.as_ref(), model, labels: false };
                self.request(position, request, policy, edits);
            }
        }
    }

    /// The request at `position`: the policy's edits, its compaction, the request's row.
    fn request(
        &mut self,
        position: usize,
        request: RequestItem<'a>,
        policy: &mut dyn Policy,
        edits: &mut Vec<Edit>,
    ) {
        let (e, summary) = (&mut self.e, &mut self.summary);
        let timestamp = request.timestamp;
        self.dropping = Dropping::No;
        let mut adjustment = e.edit(policy, self.sticky, timestamp, edits);
        let mut sent = e.sent(&adjustment);
        let summarised = if self.compacts {
            let reported = self.residual.as_ref().and_then(|r| r.estimate(sent.context_tokens));
            let s = e.compact(policy, position, timestamp, &mut adjustment, &sent, reported);
            if s.is_some() {
                sent = e.sent(&adjustment);
            }
            s
        } else {
            None
        };
        let (context_tokens, pruned) = (sent.context_tokens, sent.pruned);
        let usage = request.usage;
        self.residual.iter_mut().for_each(|r| r.request(usage, summarised.is_some(), context_tokens));
        if let Some(u) = usage {
            *self.recorded.get_or_insert(0) += u.input_tokens;
            summary.recorded_requests += 1;
        }
        summary.peak_context_tokens = summary.peak_context_tokens.max(context_tokens);
        summary.total_input_tokens += context_tokens;
        summary.final_context_tokens = context_tokens;
        if self.keep != Keep::Summary {
            let request = RequestItem { labels: self.keep == Keep::Rows, ..request };
            let mut row = e.row(&request, sent, &adjustment);
            if let Some(s) = summarised {
                row.summarization_input_tokens = s.input_tokens;
                row.summarization_cached_tokens = s.cached_tokens;
                row.summarization_output_tokens = s.summary_tokens;
                row.summarization_uncached = s.uncached;
            }
            self.rows.push(row);
        }
        if let Some(s) = summarised {
            add_summarised(summary, s);
        }
        if adjustment.changed > 0 {
            summary.prune_events += 1;
        }
        e.end_request(position, timestamp, context_tokens, pruned);
    }

    /// The run, once every item was given.
    fn finish(self) -> Run {
        let (e, mut summary, conversation) = (self.e, self.summary, self.conversation);
        summary.requests = e.requests();
        summary.pruned_tokens = e.pruned_total();
        summary.recorded_input_tokens = self.recorded.or(conversation.recorded_total.map(|t| t.input_tokens));
        summary.conversation = conversation.id.clone();
        summary.transforms = conversation.transforms.clone();
        summary.harness_compaction = self.harness.mode.name().to_owned();
        summary.harness_compaction_policy = self.harness.policy.map(str::to_owned);
        Run { summary, rows: self.rows }
    }
}

/// A request boundary as the measured conversation records it.
#[derive(Clone, Copy)]
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
