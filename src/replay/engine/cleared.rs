//! The clearing of tool results the log records (Claude Code's microcompact, Anthropic's
//! server-side context editing; [`crate::measure::cleared`]): the engine's step that sends each
//! result cleared as the placeholder from the marker on, and the one that no longer sends the
//! thinking texts a provider's thinking clearing names, under the harness modes that keep the
//! log's clearings ([`crate::harness::Harness::applies_clearings`]).

use super::{Category, Content, Engine, TextSize, head, tail};
use crate::model::Tokens;

impl Engine<'_> {
    /// The agent cleared the results `cleared` ([`crate::measure::cleared`]): each still in the
    /// context is sent as `placeholder` from here on, whatever the policy did to it (a policy sees
    /// replaced content); taken out like a sticky edit, but not counted as pruned. How many it
    /// cleared (those a compaction of the replay summarised away are not in the context).
    pub(in crate::replay) fn cleared(&mut self, cleared: &[usize], placeholder: TextSize) -> usize {
        let mut count = 0;
        for &i in cleared {
            if i < self.first_result || i >= self.results.len() {
                continue;
            }
            count += 1;
            if self.transient.contains_key(&i) {
                let mut first_change = None;
                self.set_result(i, None, &mut first_change);
            }
            let state = &self.results[i];
            let (summary, content, original, position) =
                (state.summary, state.content, state.original, state.position);
            let (removed, category) = match content {
                Content::Present(c) => (c, Category::ToolContents),
                Content::Replaced(p) => (p, Category::Placeholders),
                Content::None | Content::Pruned => (TextSize::default(), Category::ToolContents),
            };
            self.shrink(Category::ToolSummaries, summary);
            self.shrink(category, removed);
            self.grow(Category::Placeholders, placeholder);
            self.prefix.add(head(position), -(summary.tokens as i64));
            self.prefix.add(tail(position), placeholder.tokens as i64 - removed.tokens as i64);
            let unedited = summary.tokens + original.map_or(0, |c| c.tokens);
            self.unpruned = (self.unpruned + placeholder.tokens).saturating_sub(unedited);
            let state = &mut self.results[i];
            state.summary = TextSize::default();
            state.content = Content::Replaced(placeholder);
            state.original = Some(placeholder);
            self.mark_changed(head(position));
        }
        count
    }

    /// A thinking text at `position`, noted where the log's clearings clear thinking (the
    /// replay's `thinking_clearings`): every one, in order, so its index is its ordinal.
    pub(in crate::replay) fn thinking_text(&mut self, position: usize, measure: TextSize) {
        self.thinking.push((position, measure));
        self.tracked(|t| t.thinking_text(measure));
    }

    /// The provider cleared the thinking texts `cleared` (ordinals, [`crate::measure::cleared`]):
    /// each still in the context is no longer sent from here on; taken out like a sticky edit,
    /// but not counted as pruned. How many it took out (those before the context's start, which
    /// a compaction of the replay summarised away, are not in the context).
    pub(in crate::replay) fn cleared_thinking(&mut self, cleared: &[usize]) -> usize {
        let mut count = 0;
        for &i in cleared {
            let Some(&(position, measure)) = self.thinking.get(i) else { continue };
            if position < self.context_start {
                continue;
            }
            count += 1;
            self.shrink(Category::Thinking, measure);
            self.prefix.add(head(position), -(measure.tokens as i64));
            self.unpruned = self.unpruned.saturating_sub(measure.tokens as Tokens);
            self.mark_changed(head(position));
            self.tracked(|t| t.cleared_thinking(i));
        }
        count
    }
}
