//! The replay's state machine: the context as sent so far (running sums per category, prefix
//! sums over positions, the results and calls in it), the items that grow it, the policy's edits
//! (sticky ones change the sums; a non-sticky policy's are kept beside them with their effect, so
//! taking one out undoes it exactly) and the measurement of each request. Pure: no I/O.

use std::collections::BTreeMap;

mod cleared;
mod compact;
mod counts;
mod messages;
use super::prefix::Prefix;
use crate::measure::{Category, MeasuredConversation, MeasuredResult, ResultSizes};
use crate::model::{Millis, Tokens};
use crate::policy::{CallText, Content, Edit, Policy, ResultState, View};
use crate::result::{Categories, RequestRow};
use crate::time::format_rfc3339;
use crate::tokens::{Meter, TextSize};
pub(super) use compact::Summarised;
use counts::Counts;

/// Signed deltas of the prunable contents: real tokens and the seed's `len/4` estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Prunable {
    tokens: i64,
    estimate: i64,
}

/// What a request's edits change in its counts before they are read.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Adjustment {
    /// Token deltas per category: a non-sticky policy's edits (a sticky one's are in the sums).
    categories: [i64; Category::COUNT],
    /// Deltas of the prunable contents, from a non-sticky policy's edits.
    prunable: Prunable,
    /// Results and calls the edits changed since the previous request.
    pub(super) changed: usize,
    /// Smallest prefix slot a non-sticky policy's edits changed.
    first_change: Option<usize>,
}

/// The previous request of the current context.
#[derive(Debug, Clone, Copy)]
struct Previous {
    /// Its position in the conversation.
    position: usize,
    /// Its context tokens as sent.
    context_tokens: Tokens,
    /// Tokens the policy had removed from its context.
    pruned: Tokens,
}

/// A request's context as sent, after the policy's edits.
pub(super) struct Sent {
    /// Tokens per category.
    pub(super) categories: Categories,
    /// Their total.
    pub(super) context_tokens: Tokens,
    /// The seed's `len/4` estimate of the context, before transient edits.
    estimate: Tokens,
    /// The tool contents still in the context (before transient edits).
    contents: TextSize,
    /// Tokens the policy has removed from the context.
    pub(super) pruned: Tokens,
}

/// How a non-sticky policy's edit changes one result for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transient {
    Pruned,
    Replaced(TextSize),
}

/// What one transient edit changes in a request's counts, kept with the edit so that taking it
/// out undoes exactly what putting it in did.
#[derive(Debug, Clone, Copy, Default)]
struct Effect {
    /// Token deltas per category.
    categories: [i64; Category::COUNT],
    /// Deltas of the prunable contents.
    prunable: Prunable,
    /// Prefix slot of the edited tail, and its token delta.
    at: usize,
    delta: i64,
}

/// A tool call in the context.
#[derive(Clone, Copy)]
struct CallState {
    position: usize,
    /// As sent now (name + arguments, or name + replacement).
    measure: TextSize,
    name: TextSize,
    cleared: bool,
}

/// The replay's state: the context as sent so far, its running sums and prefix sums, and the
/// edits in force. Copied where a grid forks a replay ([`Engine::fork`]).
pub(super) struct Engine<'a> {
    meter: &'a Meter,
    threshold: usize,
    results: Vec<ResultState<'a>>,
    /// For each tool result of the conversation, its call's index in `calls`
    /// ([`MeasuredConversation::result_calls`]); only those of `results` are looked at.
    result_call: &'a [Option<usize>],
    calls: Vec<CallState>,
    /// Index of the first result in the current context.
    first_result: usize,
    sums: [TextSize; Category::COUNT],
    /// The sum of `sums`, kept with them (the context's size, read twice per request).
    total: TextSize,
    /// The overhead a compaction restarts with ([`MeasuredConversation::restart_overhead`]).
    restart_overhead: Option<Tokens>,
    /// Tokens the context would have with no edit at all.
    unpruned: Tokens,
    prefix: Prefix,
    /// Position where the current context starts.
    context_start: usize,
    requests: usize,
    turn: usize,
    turn_started: bool,
    /// Smallest position changed by sticky edits since the previous request.
    changed_at: Option<usize>,
    /// The previous request in this context.
    previous: Option<Previous>,
    previous_timestamp: Option<i64>,
    /// Results a non-sticky policy edits for the current request: result index → the edit.
    transient: BTreeMap<usize, (Transient, Effect)>,
    /// Calls whose arguments a non-sticky policy replaced for the current request: call index →
    /// the call as sent (name + replacement).
    transient_calls: BTreeMap<usize, (TextSize, Effect)>,
    /// The transient edits' effects, summed: category deltas and prunable deltas.
    transient_categories: [i64; Category::COUNT],
    transient_prunable: Prunable,
    /// The transient edits' token deltas by prefix slot, for the shared prefix in O(log n).
    transient_prefix: Prefix,
    /// Pruned tokens of contexts that a compaction replaced.
    pruned_carry: Tokens,
    /// What the context holds, counted as [`View`] documents.
    counts: Counts,
    /// Compaction markers met so far.
    compactions: usize,
    /// Hidden reasoning of the current turn, (position, tokens): dropped when the next turn starts.
    turn_scoped: Vec<(usize, Category, TextSize)>,
    /// Each thinking text so far, (position, size), where the log's clearings clear thinking
    /// ([`Engine::cleared_thinking`]); empty otherwise.
    thinking: Vec<(usize, TextSize)>,
    /// The summary ratio of the log's own compactions, for a policy that compacts.
    log_summary_ratio: Option<f64>,
    /// The messages one by one, for a policy that reads them
    /// ([`crate::policy::Capabilities::message_sizes`]).
    tracker: Option<messages::Tracker<'a>>,
}

fn slot(c: Category) -> usize {
    c as usize
}

/// Prefix slot of an item's head.
fn head(position: usize) -> usize {
    2 * position
}

/// Prefix slot of an item's tail.
fn tail(position: usize) -> usize {
    2 * position + 1
}

impl<'a> Engine<'a> {
    #[inline(always)]
    fn add(&mut self, category: Category, position: usize, m: TextSize) {
        self.grow(category, m);
        self.unpruned += m.tokens;
        self.prefix.add(head(position), m.tokens as i64);
    }

    /// Adds `m` to `category`'s sum and to the total.
    fn grow(&mut self, category: Category, m: TextSize) {
        self.sums[slot(category)] += m;
        self.total += m;
    }

    /// Takes `m` out of `category`'s sum and out of the total.
    fn shrink(&mut self, category: Category, m: TextSize) {
        self.sums[slot(category)] -= m;
        self.total -= m;
    }

    /// A human turn starts: the turn-scoped texts of the turns before (hidden reasoning, and the
    /// summaries and framing of the reasoning items it belongs to) are no longer sent, as the
    /// Responses API drops them (docs/unseen-context.md). Taken out like a sticky edit (the shared
    /// prefix ends at the first of them), but not counted as pruned: no policy removed them.
    fn drop_turn_scoped(&mut self) {
        let Some(&(first, ..)) = self.turn_scoped.first() else { return };
        let mut dropped: Tokens = 0;
        for (position, category, measure) in std::mem::take(&mut self.turn_scoped) {
            self.prefix.add(head(position), -(measure.tokens as i64));
            self.shrink(category, measure);
            dropped += measure.tokens;
        }
        self.unpruned -= dropped;
        self.mark_changed(head(first));
    }

    fn compaction(&mut self, position: usize) {
        if let Some(p) = self.previous {
            self.pruned_carry += p.pruned;
        }
        self.sums = [TextSize::default(); Category::COUNT];
        self.total = TextSize::default();
        self.unpruned = 0;
        self.first_result = self.results.len();
        self.context_start = position;
        self.previous = None;
        self.changed_at = None;
        self.clear_transient();
        self.counts = Counts::default();
        self.tracked(|t| t.compaction());
        self.compactions += 1;
        self.turn_scoped.clear();
    }

    fn mark_changed(&mut self, position: usize) {
        self.changed_at = Some(self.changed_at.map_or(position, |c| c.min(position)));
    }

    /// Applies a sticky edit. Returns whether it changed anything.
    fn apply(&mut self, edit: &Edit) -> bool {
        let index = match edit {
            Edit::Prune(i) | Edit::Replace(i, _) | Edit::ClearCall(i, _) => *i,
            // Sticky edits always stay.
            Edit::KeepPrevious => return false,
        };
        if index < self.first_result || index >= self.results.len() {
            return false;
        }
        let position = self.results[index].position;
        match edit {
            Edit::Prune(_) | Edit::Replace(..) => {
                let old = self.results[index].content;
                let (removed, category) = match old {
                    Content::Present(c) => (c, Category::ToolContents),
                    Content::Replaced(p) => (p, Category::Placeholders),
                    Content::None | Content::Pruned => return false,
                };
                let new = match edit {
                    Edit::Replace(_, text) => Content::Replaced(self.meter.measure(text)),
                    _ => Content::Pruned,
                };
                if new == old {
                    return false;
                }
                self.shrink(category, removed);
                let mut delta = -(removed.tokens as i64);
                if let Content::Replaced(p) = new {
                    self.grow(Category::Placeholders, p);
                    delta += p.tokens as i64;
                }
                self.results[index].content = new;
                self.prefix.add(tail(position), delta);
                self.mark_changed(tail(position));
                true
            }
            Edit::ClearCall(_, text) => {
                let Some(c) = self.result_call[index] else { return false };
                if self.calls[c].cleared || self.calls[c].position < self.context_start {
                    return false;
                }
                let mut new = self.calls[c].name;
                new += self.meter.measure(text);
                let old = self.calls[c].measure;
                self.shrink(Category::ToolCalls, old);
                self.grow(Category::ToolCalls, new);
                self.calls[c].measure = new;
                self.calls[c].cleared = true;
                let position = self.calls[c].position;
                self.prefix.add(tail(position), new.tokens as i64 - old.tokens as i64);
                self.mark_changed(tail(position));
                true
            }
            Edit::KeepPrevious => false,
        }
    }

    /// Turns a non-sticky policy's edits into this request's transient state, and returns what
    /// they change in the request's counts.
    ///
    /// The edits are the whole set for this request, or, after an [`Edit::KeepPrevious`], what
    /// changes in the previous request's set: then the work is in proportion to the edits, not to
    /// the set, and a policy whose set grows request by request replays in linear time.
    fn transient_edits(&mut self, edits: &[Edit]) -> Adjustment {
        let keep = edits.iter().any(|e| matches!(e, Edit::KeepPrevious));
        // No edit to make, and none to keep or none to take out: the set stays as it is.
        let none_in_force = self.transient.is_empty() && self.transient_calls.is_empty();
        if edits.iter().all(|e| matches!(e, Edit::KeepPrevious)) && (keep || none_in_force) {
            let (categories, prunable) = (self.transient_categories, self.transient_prunable);
            return Adjustment { categories, prunable, changed: 0, first_change: None };
        }
        let mut next: BTreeMap<usize, Transient> = BTreeMap::new();
        let mut next_calls: BTreeMap<usize, TextSize> = BTreeMap::new();
        for e in edits {
            match e {
                Edit::KeepPrevious => {}
                Edit::Prune(i) => {
                    next.insert(*i, Transient::Pruned);
                }
                Edit::Replace(i, text) => {
                    next.insert(*i, Transient::Replaced(self.meter.measure(text)));
                }
                Edit::ClearCall(i, text) => {
                    let call = self.result_call[..self.results.len()].get(*i).copied().flatten();
                    if let Some(c) = call.filter(|_| *i >= self.first_result) {
                        let state = &self.calls[c];
                        if !state.cleared && state.position >= self.context_start {
                            let mut sent = state.name;
                            sent += self.meter.measure(text);
                            next_calls.insert(c, sent);
                        }
                    }
                }
            }
        }
        next.retain(|i, _| {
            *i >= self.first_result
                && *i < self.results.len()
                && matches!(self.results[*i].content, Content::Present(_) | Content::Replaced(_))
        });
        let mut changed = 0;
        let mut first_change: Option<usize> = None;
        if !keep {
            let gone: Vec<usize> = self.transient.keys().filter(|i| !next.contains_key(i)).copied().collect();
            let gone_calls: Vec<usize> =
                self.transient_calls.keys().filter(|c| !next_calls.contains_key(c)).copied().collect();
            for i in gone {
                self.set_result(i, None, &mut first_change);
                changed += 1;
            }
            for c in gone_calls {
                self.set_call(c, None, &mut first_change);
                changed += 1;
            }
        }
        for (i, t) in next {
            if self.transient.get(&i).map(|e| e.0) != Some(t) {
                self.set_result(i, Some(t), &mut first_change);
                changed += 1;
            }
        }
        for (c, sent) in next_calls {
            if self.transient_calls.get(&c).map(|e| e.0) != Some(sent) {
                self.set_call(c, Some(sent), &mut first_change);
                changed += 1;
            }
        }
        Adjustment {
            categories: self.transient_categories,
            prunable: self.transient_prunable,
            changed,
            first_change,
        }
    }

    /// Sets (or with `None` clears) the transient edit of result `i`.
    fn set_result(&mut self, i: usize, state: Option<Transient>, first_change: &mut Option<usize>) {
        if let Some((_, old)) = self.transient.remove(&i) {
            self.add_effect(&old, -1);
        }
        let at = tail(self.results[i].position);
        *first_change = Some(first_change.map_or(at, |c| c.min(at)));
        let Some(state) = state else { return };
        let mut effect = Effect { at, ..Effect::default() };
        let (removed, category) = match self.results[i].content {
            Content::Present(c) => (c, Category::ToolContents),
            Content::Replaced(p) => (p, Category::Placeholders),
            // Filtered out by the caller: there is nothing to edit.
            Content::None | Content::Pruned => return,
        };
        effect.categories[slot(category)] -= removed.tokens as i64;
        effect.delta -= removed.tokens as i64;
        if category == Category::ToolContents {
            effect.prunable =
                Prunable { tokens: -(removed.tokens as i64), estimate: -(removed.estimate as i64) };
        }
        if let Transient::Replaced(p) = state {
            effect.categories[slot(Category::Placeholders)] += p.tokens as i64;
            effect.delta += p.tokens as i64;
        }
        self.add_effect(&effect, 1);
        self.transient.insert(i, (state, effect));
    }

    /// Sets (or with `None` clears) the transient arguments of call `c`.
    fn set_call(&mut self, c: usize, sent: Option<TextSize>, first_change: &mut Option<usize>) {
        if let Some((_, old)) = self.transient_calls.remove(&c) {
            self.add_effect(&old, -1);
        }
        let at = tail(self.calls[c].position);
        *first_change = Some(first_change.map_or(at, |f| f.min(at)));
        let Some(sent) = sent else { return };
        let delta = sent.tokens as i64 - self.calls[c].measure.tokens as i64;
        let mut effect = Effect { at, delta, ..Effect::default() };
        effect.categories[slot(Category::ToolCalls)] = delta;
        self.add_effect(&effect, 1);
        self.transient_calls.insert(c, (sent, effect));
    }

    fn add_effect(&mut self, effect: &Effect, sign: i64) {
        for (sum, d) in self.transient_categories.iter_mut().zip(effect.categories) {
            *sum += sign * d;
        }
        self.transient_prunable.tokens += sign * effect.prunable.tokens;
        self.transient_prunable.estimate += sign * effect.prunable.estimate;
        self.transient_prefix.add(effect.at, sign * effect.delta);
    }

    /// Takes every transient edit out (a compaction replaced the context).
    fn clear_transient(&mut self) {
        let effects: Vec<Effect> =
            self.transient.values().map(|e| e.1).chain(self.transient_calls.values().map(|e| e.1)).collect();
        for effect in &effects {
            self.add_effect(effect, -1);
        }
        self.transient.clear();
        self.transient_calls.clear();
    }

    /// Tokens the current transient edits add below `position`.
    fn transient_below(&self, position: usize) -> i64 {
        self.transient_prefix.before(position)
    }
}

/// Growing the context item by item, and measuring each request.
impl<'a> Engine<'a> {
    /// An empty context for `conversation`, split at `threshold`, measuring with `meter`.
    pub(super) fn new(conversation: &'a MeasuredConversation, threshold: usize, meter: &'a Meter) -> Self {
        let n = conversation.items.len();
        Engine {
            meter,
            threshold,
            results: Vec::with_capacity(conversation.result_calls().len()),
            result_call: conversation.result_calls(),
            calls: Vec::with_capacity(conversation.tool_calls()),
            first_result: 0,
            sums: [TextSize::default(); Category::COUNT],
            total: TextSize::default(),
            restart_overhead: conversation.restart_overhead,
            unpruned: 0,
            prefix: Prefix::new(2 * n),
            context_start: 0,
            requests: 0,
            turn: 0,
            turn_started: false,
            changed_at: None,
            previous: None,
            previous_timestamp: None,
            transient: BTreeMap::new(),
            transient_calls: BTreeMap::new(),
            transient_categories: [0; Category::COUNT],
            transient_prunable: Prunable::default(),
            transient_prefix: Prefix::new(2 * n),
            pruned_carry: 0,
            counts: Counts::default(),
            compactions: 0,
            turn_scoped: Vec::new(),
            thinking: Vec::new(),
            log_summary_ratio: None,
            tracker: None,
        }
    }

    /// A copy of the state now, to replay on from here a second way ([`super::fork`]); its lists
    /// keep the room the rest of the conversation needs (a copy sized to what they hold now
    /// would grow them again, item by item).
    pub(super) fn fork(&self) -> Self {
        Engine {
            results: super::with_room(&self.results, self.results.capacity()),
            calls: super::with_room(&self.calls, self.calls.capacity()),
            prefix: self.prefix.clone(),
            transient: self.transient.clone(),
            transient_calls: self.transient_calls.clone(),
            transient_prefix: self.transient_prefix.clone(),
            turn_scoped: super::with_room(&self.turn_scoped, self.turn_scoped.capacity()),
            thinking: super::with_room(&self.thinking, self.thinking.capacity()),
            tracker: self.tracker.clone(),
            ..*self
        }
    }

    /// Splits the results still to come at `threshold` (a forked replay's, [`super::fork`]).
    pub(super) fn set_threshold(&mut self, threshold: usize) {
        self.threshold = threshold;
    }

    /// Requests replayed so far.
    pub(super) fn requests(&self) -> usize {
        self.requests
    }

    /// Tokens removed by the policy in every context so far (those a compaction replaced and the
    /// current one).
    pub(super) fn pruned_total(&self) -> Tokens {
        self.pruned_carry + self.previous.map_or(0, |p| p.pruned)
    }

    /// A text item (system, user, assistant, reasoning, images, ...).
    #[inline]
    pub(super) fn text(
        &mut self,
        position: usize,
        category: Category,
        measure: TextSize,
        turn_start: bool,
        turn_scoped: bool,
    ) {
        if turn_start {
            self.turn += 1;
            self.turn_started = true;
            // OpenHands answers each user message with a RecallAction, one more event.
            self.counts.events += 1;
            self.drop_turn_scoped();
        }
        match category {
            // The unrecorded overhead stands for the system prompt and tool schemas the
            // trace does not hold: no chat message, and one event as the system prompt is.
            Category::System | Category::Unrecorded => self.counts.events += 1,
            // Structure around the items already counted.
            Category::Framing => {}
            // Hidden reasoning and server-side results are part of the model's response.
            Category::Assistant | Category::Thinking | Category::HiddenReasoning | Category::ServerSide => {
                self.counts.assistant_text()
            }
            // Part of the message or result they came with.
            Category::Images => {}
            _ => self.counts.user(),
        }
        if turn_scoped {
            self.turn_scoped.push((position, category, measure));
        }
        self.tracked(|t| t.text(category, measure, turn_start, turn_scoped));
        self.add(category, position, measure);
    }

    /// A tool call, `measure` in all and `name` of it its name, with its texts.
    #[inline]
    pub(super) fn tool_call(
        &mut self,
        position: usize,
        measure: TextSize,
        name: TextSize,
        text: CallText<'a>,
    ) {
        self.counts.tool_call();
        self.tracked(|t| t.tool_call(text));
        // The name is the call's head and the arguments its tail, so clearing the
        // arguments keeps the name in the shared prefix.
        self.grow(Category::ToolCalls, measure);
        self.unpruned += measure.tokens;
        self.prefix.add(head(position), name.tokens as i64);
        self.prefix.add(tail(position), measure.tokens as i64 - name.tokens as i64);
        self.calls.push(CallState { position, measure, name, cleared: false });
    }

    /// A tool result, split at the threshold as the seed splits it (or, for a policy on whole
    /// outputs, one whole it may replace: an empty summary and, as content, the summary and
    /// content the seed's split sends, so that with nothing pruned the context is `none`'s).
    /// Returns the content, if any.
    #[inline]
    pub(super) fn tool_result(
        &mut self,
        position: usize,
        sizes: &'a ResultSizes,
        result: &'a MeasuredResult,
        whole_outputs: bool,
    ) -> Option<TextSize> {
        let (summary, content) = match sizes.split_at(self.threshold) {
            (summary, content) if whole_outputs => {
                let mut whole = summary;
                if let Some(c) = content {
                    whole += c;
                }
                (TextSize::default(), Some(whole))
            }
            split => split,
        };
        self.add(Category::ToolSummaries, position, summary);
        if let Some(c) = content {
            self.grow(Category::ToolContents, c);
            self.unpruned += c.tokens;
            self.prefix.add(tail(position), c.tokens as i64);
        }
        let call = self.result_call[self.results.len()];
        self.results.push(ResultState {
            index: self.results.len(),
            result,
            sizes,
            summary,
            content: content.map_or(Content::None, Content::Present),
            original: content,
            first_request: self.requests,
            turn: self.turn,
            position,
            call: call.map(|c| self.calls[c].measure),
            event: self.counts.events,
            assistant_messages: self.counts.assistant_messages,
        });
        self.counts.tool_result();
        content
    }

    /// A compaction marker: the context empties and starts from its summary, if any.
    pub(super) fn compaction_marker(&mut self, position: usize, summary: Option<TextSize>) {
        self.compaction(position);
        if let Some(m) = summary {
            self.counts.user();
            self.tracked(|t| t.user(m));
            self.add(Category::User, position, m);
        }
    }

    /// Lets `policy` see the context before the request at `timestamp` and applies its edits,
    /// kept if `sticky`, for this request only if not (`edits` is scratch space); returns what they change in the request's counts.
    #[inline]
    pub(super) fn edit(
        &mut self,
        policy: &mut dyn Policy,
        sticky: bool,
        timestamp: Option<Millis>,
        edits: &mut Vec<Edit>,
    ) -> Adjustment {
        let view = self.view(timestamp);
        edits.clear();
        policy.before_request(&view, edits);
        if !sticky {
            return self.transient_edits(edits);
        }
        let changed = edits.iter().map(|edit| usize::from(self.apply(edit))).sum();
        Adjustment { changed, ..Adjustment::default() }
    }

    /// The context as a policy sees it before the request at `timestamp`.
    fn view(&self, timestamp: Option<Millis>) -> View<'_> {
        let mut system = self.sums[slot(Category::System)];
        system += self.sums[slot(Category::Unrecorded)];
        system += self.sums[slot(Category::Framing)];
        View {
            request: self.requests,
            timestamp,
            previous_timestamp: self.previous_timestamp,
            turn: self.turn,
            turn_start: self.turn_started,
            results: &self.results[self.first_result..],
            context: self.total,
            system,
            messages: self.counts.messages,
            events: self.counts.events,
            assistant_messages: self.counts.assistant_messages,
            compactions: self.compactions,
            log_summary_ratio: self.log_summary_ratio,
            reported: None,
            message_sizes: self.tracker.as_ref().map(|t| &t.sizes),
            decide: self.meter.decide_with(),
            meter: self.meter,
        }
    }

    /// The current request's context as sent, with `adjustment` applied.
    #[inline]
    pub(super) fn sent(&self, adjustment: &Adjustment) -> Sent {
        let tokens = |c: Category| {
            (self.sums[slot(c)].tokens as i64 + adjustment.categories[slot(c)]).max(0) as Tokens
        };
        let categories = Categories {
            unrecorded: tokens(Category::Unrecorded),
            framing: tokens(Category::Framing),
            system: tokens(Category::System),
            user: tokens(Category::User),
            assistant: tokens(Category::Assistant),
            thinking: tokens(Category::Thinking),
            hidden_reasoning: tokens(Category::HiddenReasoning),
            server_side: tokens(Category::ServerSide),
            images: tokens(Category::Images),
            tool_calls: tokens(Category::ToolCalls),
            tool_summaries: tokens(Category::ToolSummaries),
            tool_contents: tokens(Category::ToolContents),
            placeholders: tokens(Category::Placeholders),
        };
        let context_tokens = categories.total();
        Sent {
            categories,
            context_tokens,
            estimate: self.total.estimate,
            contents: self.sums[slot(Category::ToolContents)],
            pruned: self.unpruned.saturating_sub(context_tokens),
        }
    }

    /// The row of the current request, sent as `sent`.
    #[inline]
    pub(super) fn row(
        &self,
        request: &super::RequestItem<'_>,
        sent: Sent,
        adjustment: &Adjustment,
    ) -> RequestRow {
        let (shared, kept) = self.previous.map_or((0, 0), |p| self.shared_and_kept(p, &sent, adjustment));
        let gap_ms = match (request.timestamp, self.previous_timestamp) {
            (Some(now), Some(before)) => Some(now.saturating_sub(before)),
            _ => None,
        };
        let prunable = adjustment.prunable;
        let adjusted = |value: Tokens, delta: i64| (value as i64 + delta).max(0) as Tokens;
        RequestRow {
            request: self.requests,
            id: if request.labels { request.id.clone() } else { None },
            timestamp: request.timestamp.filter(|_| request.labels).map(format_rfc3339),
            turn: self.turn,
            categories: sent.categories,
            context_tokens: sent.context_tokens,
            // The seed's estimate of the context as sent: contents removed by a transient edit
            // are taken out of it too.
            context_estimate: adjusted(sent.estimate, prunable.estimate),
            prunable_tokens: adjusted(sent.contents.tokens, prunable.tokens),
            prunable_estimate: adjusted(sent.contents.estimate, prunable.estimate),
            pruned_tokens: sent.pruned,
            freed_tokens: sent.pruned.saturating_sub(self.previous.map_or(0, |p| p.pruned)),
            changed_results: adjustment.changed,
            shared_prefix_tokens: shared,
            previous_context_tokens: self.previous.map_or(0, |p| p.context_tokens),
            previous_kept_tokens: kept,
            gap_ms,
            recorded_input_tokens: request.usage.map(|u| u.input_tokens),
            recorded_cache_read_tokens: request.usage.and_then(|u| u.cache_read_tokens),
            recorded_output_tokens: request.usage.and_then(|u| u.output_tokens),
            recorded_cost_micro_usd: request.usage.and_then(|u| u.cost_micro_usd),
            model: request.model.clone(),
            ..RequestRow::default()
        }
    }

    /// The prefix the current request shares with `previous`, and how much of `previous`'s
    /// context it still sends (the content pruned from it is gone, what arrived since is not
    /// counted).
    fn shared_and_kept(&self, previous: Previous, sent: &Sent, adjustment: &Adjustment) -> (Tokens, Tokens) {
        let first_change = [self.changed_at, adjustment.first_change].into_iter().flatten().min();
        // Through the request's own head slot: a compaction made at that request put the new
        // context's start there (nothing else is ever added at a request's position).
        let end = tail(previous.position);
        let cut = first_change.map_or(end, |c| c.min(end));
        let base = self.prefix.before(head(self.context_start));
        let sent_before = |at: usize| self.prefix.before(at) - base + self.transient_below(at);
        let shared = sent_before(cut).clamp(0, previous.context_tokens as i64) as Tokens;
        // (`max` then `min`, not `clamp`, which panics should the bounds cross.)
        let kept = sent_before(end).max(shared as i64).min(sent.context_tokens as i64).max(0) as Tokens;
        (shared, kept)
    }

    /// Ends the request at `position` (made at `timestamp`), sent with `context_tokens` of which
    /// `pruned` removed: the next items belong to the next request.
    pub(super) fn end_request(
        &mut self,
        position: usize,
        timestamp: Option<Millis>,
        context_tokens: Tokens,
        pruned: Tokens,
    ) {
        self.previous = Some(Previous { position, context_tokens, pruned });
        // The gap before the next request is from this one: when this one has no
        // timestamp, that gap is unknown (not measured from an older request, which would
        // overstate the idle time and fire the time-based policies or expire the cache).
        self.previous_timestamp = timestamp;
        self.changed_at = None;
        self.turn_started = false;
        self.counts.request();
        self.tracked(|t| t.end_request());
        self.requests += 1;
    }
}
