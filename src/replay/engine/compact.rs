//! A compaction a policy makes before a request: the context as it would be sent is summarised
//! away, but for the system prompt (and the recorded overhead that stands for it) and the recent
//! tail the agent keeps; a summary of the size the policy gives takes its place as user text, the
//! kept tail follows it as one block that later edits do not change, and the request is sent on
//! that new context, whose prefix the provider's cache does not yet hold.
//!
//! A compaction of tool pairs (Goose's) replaces only them, the rest of the context staying
//! ([`pairs`]).
//!
//! The new context starts at the request's own position: its pieces are put at the request's head
//! slot of the prefix sums, which holds nothing else (a request adds no text), so the next
//! request's shared prefix counts them. Pure: no I/O.

mod pairs;

use super::{Adjustment, Category, Engine, Sent, head, slot};
use crate::model::{Millis, Tokens};
use crate::policy::Policy;
use crate::policy::compact::{CallCache, Reported};
use crate::tokens::{Measure, TextSize};

/// What a compaction made before a request did: the counts its run and its row report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(in crate::replay) struct Summarised {
    /// Tokens summarised away.
    pub(in crate::replay) summarized_tokens: Tokens,
    /// Tokens of the summary.
    pub(in crate::replay) summary_tokens: Tokens,
    /// Input of the summarisation call: the context then (or only what it summarised) plus the
    /// instructions.
    pub(in crate::replay) input_tokens: Tokens,
    /// Of that input, the prefix the previous request had cached.
    pub(in crate::replay) cached_tokens: Tokens,
    /// The call was made with prompt caching off ([`CallCache::Off`]).
    pub(in crate::replay) uncached: bool,
}

/// A text of `tokens` tokens that the log does not hold (a summary no LLM wrote here): sized as
/// the `len/4` rule would size it, in every unit.
fn sized(tokens: Tokens) -> TextSize {
    TextSize {
        measure: Measure { bytes: 4 * tokens, tokens, estimate: tokens, decide: tokens },
        ..TextSize::default()
    }
}

impl Engine<'_> {
    /// Gives compaction policies the summary ratio of the log's own compactions.
    pub(in crate::replay) fn set_log_summary_ratio(&mut self, ratio: Option<f64>) {
        self.log_summary_ratio = ratio;
    }

    /// Asks `policy` whether to compact before the request at `position` (made at `timestamp`),
    /// after its edits (`adjustment`, which a compaction empties; `sent`, the context they leave;
    /// `reported`, the usage the provider would report for it, where the replay estimates it);
    /// compacts if it says so.
    pub(in crate::replay) fn compact(
        &mut self,
        policy: &mut dyn Policy,
        position: usize,
        timestamp: Option<Millis>,
        adjustment: &mut Adjustment,
        sent: &Sent,
        reported: Option<Reported>,
    ) -> Option<Summarised> {
        let compaction = {
            let mut view = self.view(timestamp);
            view.context.set_tokens(sent.context_tokens);
            view.reported = reported;
            policy.compact(&view)?
        };
        if let Some(pairs) = compaction.pairs {
            return self.replace_pairs(&compaction, pairs, position, adjustment);
        }
        let before = sent.context_tokens;
        let previous_pruned = self.previous.map_or(0, |p| p.pruned);
        let shared = self.previous.map_or(0, |p| self.shared_and_kept(p, sent, adjustment).0);
        let (system, unrecorded) = (self.sums[slot(Category::System)], self.sums[slot(Category::Unrecorded)]);
        let tail_from = compaction.keep_from.filter(|&p| p > self.context_start && p < position);
        let tail = tail_from.map_or(0, |p| {
            let at = head(p);
            let sent_from = self.prefix.before(head(position)) - self.prefix.before(at)
                + self.transient_below(head(position))
                - self.transient_below(at);
            sent_from.max(0) as Tokens
        });
        let tail_events = tail_from
            .and_then(|p| self.results[self.first_result..].iter().find(|r| r.position >= p))
            .map_or(0, |r| self.counts.events.saturating_sub(r.event));
        let summarized = before.saturating_sub(system.tokens + unrecorded.tokens + tail);
        let summary = compaction.summary.tokens(summarized);
        let input = if compaction.whole_context { before } else { summarized } + compaction.prompt_tokens;
        // Pruned by this request's own edits: carried like the previous request's.
        self.pruned_carry += sent.pruned.saturating_sub(previous_pruned);
        self.compaction(position);
        *adjustment = Adjustment::default();
        self.add(Category::System, position, system);
        // The overhead the log showed after a compaction, where the calibration fitted one: the
        // growth and what else accumulated before it are summarised away.
        let restart = self.restart_overhead.map_or(unrecorded, crate::measure::overhead_measure);
        self.add(Category::Unrecorded, position, restart);
        self.add(Category::User, position, sized(summary + tail));
        // The summary and the kept tail, as one user message.
        self.tracked(|t| t.user(sized(summary + tail)));
        let system_events = usize::from(system.tokens + restart.tokens > 0);
        self.counts.events = system_events + 1 + tail_events;
        self.counts.messages = 1 + tail_events;
        Some(Summarised {
            summarized_tokens: summarized,
            summary_tokens: summary,
            input_tokens: input,
            cached_tokens: if compaction.whole_context && compaction.cache == CallCache::Prefix {
                shared
            } else {
                0
            },
            uncached: compaction.cache == CallCache::Off,
        })
    }
}
