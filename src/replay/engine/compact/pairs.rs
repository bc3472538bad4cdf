//! A compaction of tool pairs ([`Pairs`], Goose's tool-pair summarisation): each tool result the
//! compaction names leaves the context with its call, and a summary of the size the compaction
//! gives per pair takes their place, as user text at the request's own position (Goose appends
//! the summaries as user messages). The rest of the context stays, and so does its cached
//! prefix up to the first pair replaced. Each pair is its own summarisation call, sending the
//! pair and the instructions, uncached: what the call's billing counts.
//!
//! A replaced result stays in the results a policy sees, with nothing left of it (its summary
//! empty, its content pruned, its call gone), so that later edits leave it alone; the message and
//! event counts stay as they were (a summary message stands for each tool message). Pure: no
//! I/O.

use super::super::{Adjustment, Category, Engine, head, slot, tail};
use super::{Summarised, sized};
use crate::model::Tokens;
use crate::policy::Content;
use crate::policy::compact::{Compaction, Pairs};
use crate::tokens::TextSize;

impl Engine<'_> {
    /// Replaces the pairs `pairs` names that are still in the context (their results and calls)
    /// with a summary each, before the request at `position`; `adjustment` (this request's
    /// transient edits) loses the edits of what left. `None` when none of them is in the context.
    pub(in crate::replay) fn replace_pairs(
        &mut self,
        compaction: &Compaction,
        pairs: Pairs,
        position: usize,
        adjustment: &mut Adjustment,
    ) -> Option<Summarised> {
        let (from, to) = (pairs.from.max(self.first_result), pairs.to.min(self.results.len()));
        if from >= to {
            return None;
        }
        let mut first_change = adjustment.first_change;
        let (mut summarized, mut summary, mut input): (Tokens, Tokens, Tokens) = (0, 0, 0);
        for i in from..to {
            let removed = self.remove_pair(i, &mut first_change);
            summarized += removed;
            summary += compaction.summary.tokens(removed);
            input += removed + compaction.prompt_tokens;
        }
        adjustment.categories = self.transient_categories;
        adjustment.prunable = self.transient_prunable;
        adjustment.first_change = first_change;
        self.add(Category::User, position, sized(summary));
        Some(Summarised {
            summarized_tokens: summarized,
            summary_tokens: summary,
            input_tokens: input,
            cached_tokens: 0,
            uncached: compaction.cache == crate::policy::compact::CallCache::Off,
        })
    }

    /// Takes result `i` and its call out of the context: their tokens as sent now leave the sums,
    /// the prefix sums and the unpruned total (what a policy pruned from them before stays
    /// counted as pruned). Returns the tokens that left.
    fn remove_pair(&mut self, i: usize, first_change: &mut Option<usize>) -> Tokens {
        if self.transient.contains_key(&i) {
            self.set_result(i, None, first_change);
        }
        let r = &mut self.results[i];
        let (content, category) = match r.content {
            Content::Present(c) => (c, Category::ToolContents),
            Content::Replaced(p) => (p, Category::Placeholders),
            Content::None | Content::Pruned => (TextSize::default(), Category::ToolContents),
        };
        let (position, summary) = (r.position, r.summary);
        r.content = Content::Pruned;
        r.summary = TextSize::default();
        r.call = None;
        self.sums[slot(Category::ToolSummaries)] -= summary;
        self.sums[slot(category)] -= content;
        self.prefix.add(head(position), -(summary.tokens as i64));
        self.prefix.add(tail(position), -(content.tokens as i64));
        self.mark_changed(head(position));
        let mut removed = summary.tokens + content.tokens;
        if let Some(c) = self.result_call[i].filter(|&c| self.calls[c].position >= self.context_start) {
            if self.transient_calls.contains_key(&c) {
                self.set_call(c, None, first_change);
            }
            let call = &mut self.calls[c];
            let (measure, name, at) = (call.measure, call.name, call.position);
            call.measure = TextSize::default();
            call.name = TextSize::default();
            call.cleared = true;
            self.sums[slot(Category::ToolCalls)] -= measure;
            self.prefix.add(head(at), -(name.tokens as i64));
            self.prefix.add(tail(at), name.tokens as i64 - measure.tokens as i64);
            self.mark_changed(head(at));
            removed += measure.tokens;
        }
        self.unpruned = self.unpruned.saturating_sub(removed);
        removed
    }
}
