//! The compactions a log itself recorded, measured: where each happened, how large the context was
//! just before, how much was summarised away and how large the summary is. Compaction policies
//! size their summaries by the ratio these show ([`summary_ratio`]); docs/compaction.md tabulates
//! them for the corpus. Pure: no I/O.

use crate::measure::{Category, MeasuredConversation, MeasuredItem};
use crate::model::Tokens;

/// One compaction the log recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RecordedCompaction {
    /// Index of the first request after it (the first one sent on the summary).
    pub request: usize,
    /// The context of the last request before it, as replayed with nothing pruned (calibrated:
    /// provider tokens).
    pub context_before: Tokens,
    /// The prompt size the provider recorded for that request, if any.
    pub recorded_before: Option<Tokens>,
    /// Tokens summarised away: every item since the previous compaction but the system prompt
    /// and the unrecorded overhead, including what arrived after the last request.
    pub summarized_tokens: Tokens,
    /// Tokens of the summary: the text recorded with the marker, or the first user text after it
    /// (Claude Code's `isCompactSummary` line); `None` when the log holds neither.
    pub summary_tokens: Option<Tokens>,
    /// The prompt size the provider recorded for the first request after it, if any.
    pub recorded_after: Option<Tokens>,
}

/// Every compaction `conversation` recorded, in order.
pub fn recorded_compactions(conversation: &MeasuredConversation) -> Vec<RecordedCompaction> {
    let mut out: Vec<RecordedCompaction> = Vec::new();
    // Tokens since the last compaction: summarisable, and kept (system prompt, overhead).
    let (mut since, mut kept) = (0, 0);
    let mut last_request: (Tokens, Option<Tokens>) = (0, None);
    let mut requests = 0;
    // The last compaction is still waiting for its summary text or its first request.
    let mut open = false;
    let mut clearing = crate::measure::cleared::Clearing::default();
    for item in &conversation.items {
        since = clearing.context_after(item, since);
        match item {
            MeasuredItem::Text { category, measure, .. } => {
                if let (true, Some(c), Category::User) = (open, out.last_mut(), category) {
                    c.summary_tokens.get_or_insert(measure.tokens);
                }
                match category {
                    Category::System | Category::Unrecorded => kept += measure.tokens,
                    _ => since += measure.tokens,
                }
            }
            MeasuredItem::ToolCall { measure, .. } => since += measure.tokens,
            MeasuredItem::ToolResult(sizes, _) => since += sizes.output().tokens,
            MeasuredItem::Cleared { .. } => {}
            MeasuredItem::Compaction { summary } => {
                out.push(RecordedCompaction {
                    request: requests,
                    context_before: last_request.0,
                    recorded_before: last_request.1,
                    summarized_tokens: since,
                    summary_tokens: summary.map(|s| s.tokens),
                    recorded_after: None,
                });
                (since, kept, open) = (summary.map_or(0, |s| s.tokens), 0, true);
            }
            MeasuredItem::Request { usage, .. } => {
                let recorded = usage.as_ref().map(|u| u.input_tokens);
                if let (true, Some(c)) = (open, out.last_mut()) {
                    c.recorded_after = recorded;
                    open = false;
                }
                last_request = (since + kept, recorded);
                requests += 1;
            }
        }
    }
    out
}

/// Summary tokens per token summarised away over the log's recorded compactions that hold their
/// summary, or `None` when it has none.
pub fn summary_ratio(conversation: &MeasuredConversation) -> Option<f64> {
    // Most logs record none (every compacting replay asks).
    if !conversation.items.iter().any(|i| matches!(i, MeasuredItem::Compaction { .. })) {
        return None;
    }
    let (mut summary, mut summarized) = (0, 0);
    for c in recorded_compactions(conversation) {
        if let Some(s) = c.summary_tokens.filter(|_| c.summarized_tokens > 0) {
            summary += s;
            summarized += c.summarized_tokens;
        }
    }
    (summarized > 0).then(|| summary as f64 / summarized as f64)
}
