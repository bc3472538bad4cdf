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
//! ([`Edit::KeepPrevious`]) costs in proportion to its changes. Nothing is recounted per request
//! (texts were measured once in [`crate::measure`]; only text a policy writes, such as a
//! placeholder, is measured here, through the cache). [`replay_summary`] skips the per-request
//! rows. Pure: no I/O, no printing.

use std::collections::BTreeMap;

use crate::measure::{Category, MeasuredConversation, MeasuredItem};
use crate::model::Tokens;
use crate::policy::{Content, Edit, On, Policy, ResultState, View};
use crate::result::{Categories, RequestRow, Run, RunSummary};
use crate::time::format_rfc3339;
use crate::tokens::{Measure, Meter};

/// Prefix sums over item positions, for the size of a context prefix.
///
/// Each item has two slots: `2p` for its head (a result's summary, a call's name, a text) and
/// `2p + 1` for its tail (a result's content or placeholder, a call's arguments). An edit changes
/// only the tail, so the head before it still counts as a shared prefix.
///
/// Items come in order, so most additions are at the highest slot so far: those go to a running
/// sum, one entry per slot, in O(1). Only an addition below it (an edit of an older item) goes to
/// a Fenwick tree, allocated on first use, in O(log n). A replay is thus linear in the items and
/// pays log n per edit only (a Fenwick tree for every addition made a replay n log n).
struct Prefix {
    /// Number of slots.
    slots: usize,
    /// `before[k]`: the sum of the in-order additions below slot `k`, for every slot up to the
    /// highest one added so far.
    before: Vec<i64>,
    /// The sum of every in-order addition.
    total: i64,
    /// Additions below the highest slot, made after it was reached (empty until the first).
    tree: Vec<i64>,
}

impl Prefix {
    fn new(slots: usize) -> Self {
        let mut before = Vec::with_capacity(slots + 1);
        before.push(0);
        Prefix { slots, before, total: 0, tree: Vec::new() }
    }

    fn add(&mut self, position: usize, delta: i64) {
        let highest = self.before.len() - 1;
        if position >= highest {
            while self.before.len() <= position {
                self.before.push(self.total);
            }
            self.total += delta;
            return;
        }
        if self.tree.is_empty() {
            self.tree = vec![0; self.slots + 1];
        }
        let mut i = position + 1;
        while i < self.tree.len() {
            self.tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum over positions `< position`.
    fn before(&self, position: usize) -> i64 {
        let mut sum = self.before.get(position).copied().unwrap_or(self.total);
        let mut i = position.min(self.tree.len().saturating_sub(1));
        while i > 0 {
            sum += self.tree[i];
            i -= i & i.wrapping_neg();
        }
        sum
    }
}

/// How a non-sticky policy's edit changes one result for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transient {
    Pruned,
    Replaced(Measure),
}

/// What one transient edit changes in a request's counts, kept with the edit so that taking it
/// out undoes exactly what putting it in did.
#[derive(Debug, Clone, Copy, Default)]
struct Effect {
    /// Token deltas per category.
    categories: [i64; Category::COUNT],
    /// Deltas of the prunable contents: real tokens and the seed's estimate.
    prunable: [i64; 2],
    /// Prefix slot of the edited tail, and its token delta.
    at: usize,
    delta: i64,
}

/// A tool call in the context.
struct CallState {
    position: usize,
    /// As sent now (name + arguments, or name + replacement).
    measure: Measure,
    name: Measure,
    cleared: bool,
}

struct Engine<'a> {
    meter: &'a Meter,
    threshold: usize,
    results: Vec<ResultState<'a>>,
    /// For each tool result of the conversation, its call's index in `calls`
    /// ([`MeasuredConversation::result_calls`]); only those of `results` are looked at.
    result_call: &'a [Option<usize>],
    calls: Vec<CallState>,
    /// Index of the first result in the current context.
    first_result: usize,
    sums: [Measure; Category::COUNT],
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
    /// The previous request in this context: (position, context tokens, pruned tokens, timestamp).
    previous: Option<(usize, Tokens, Tokens)>,
    previous_timestamp: Option<i64>,
    /// Results a non-sticky policy edits for the current request: result index → the edit.
    transient: BTreeMap<usize, (Transient, Effect)>,
    /// Calls whose arguments a non-sticky policy replaced for the current request: call index →
    /// the call as sent (name + replacement).
    transient_calls: BTreeMap<usize, (Measure, Effect)>,
    /// The transient edits' effects, summed: category deltas and prunable deltas.
    transient_categories: [i64; Category::COUNT],
    transient_prunable: [i64; 2],
    /// The transient edits' token deltas by prefix slot, for the shared prefix in O(log n).
    transient_prefix: Prefix,
    /// Pruned tokens of contexts that a compaction replaced.
    pruned_carry: Tokens,
    /// What the context holds, counted as [`View`] documents.
    counts: Counts,
    /// Compaction markers met so far.
    compactions: usize,
    /// Hidden reasoning of the current turn, (position, tokens): dropped when the next turn starts.
    turn_scoped: Vec<(usize, Tokens)>,
}

/// Message, event and assistant-message counts of the current context, and the state of the
/// response being read (the items between two request boundaries).
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    messages: usize,
    events: usize,
    assistant_messages: usize,
    /// The current response already has its assistant message.
    response_message: bool,
    /// Tool calls in the current response.
    response_calls: usize,
}

impl Counts {
    /// A user text, or a compaction summary (sent as user text).
    fn user(&mut self) {
        self.messages += 1;
        self.events += 1;
    }

    /// Assistant text or reasoning: part of the response's one assistant message, and its event
    /// unless a tool call already made one.
    fn assistant_text(&mut self) {
        self.open_response();
    }

    /// A tool call: an action event, which the response's text (if any came first) is the thought of.
    fn tool_call(&mut self) {
        if !self.open_response() && self.response_calls > 0 {
            self.events += 1;
        }
        self.response_calls += 1;
    }

    /// Starts the response's assistant message and event if not done; returns whether it did.
    fn open_response(&mut self) -> bool {
        if self.response_message {
            return false;
        }
        self.response_message = true;
        self.messages += 1;
        self.events += 1;
        self.assistant_messages += 1;
        true
    }

    /// A tool result: one message (a tool message) and one observation event.
    fn tool_result(&mut self) {
        self.messages += 1;
        self.events += 1;
    }

    /// A request boundary: the next items belong to a new response.
    fn request(&mut self) {
        self.response_message = false;
        self.response_calls = 0;
    }
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
    fn add(&mut self, category: Category, position: usize, m: Measure) {
        self.sums[slot(category)] += m;
        self.unpruned += m.tokens;
        self.prefix.add(head(position), m.tokens as i64);
    }

    fn context(&self) -> Measure {
        let mut total = Measure::default();
        for m in &self.sums {
            total += *m;
        }
        total
    }

    /// A human turn starts: the hidden reasoning of the turns before is no longer sent, as the
    /// Responses API drops it (docs/unseen-context.md). Taken out like a sticky edit (the shared
    /// prefix ends at the first of it), but not counted as pruned: no policy removed it.
    fn drop_turn_scoped(&mut self) {
        let Some(&(first, _)) = self.turn_scoped.first() else { return };
        let mut dropped: Tokens = 0;
        for (position, tokens) in std::mem::take(&mut self.turn_scoped) {
            self.prefix.add(head(position), -(tokens as i64));
            dropped += tokens;
        }
        self.sums[slot(Category::HiddenReasoning)] = Measure::default();
        self.unpruned -= dropped;
        self.mark_changed(head(first));
    }

    fn compaction(&mut self, position: usize) {
        if let Some((_, _, pruned)) = self.previous {
            self.pruned_carry += pruned;
        }
        self.sums = [Measure::default(); Category::COUNT];
        self.unpruned = 0;
        self.first_result = self.results.len();
        self.context_start = position;
        self.previous = None;
        self.changed_at = None;
        self.clear_transient();
        self.counts = Counts::default();
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
                self.sums[slot(category)] -= removed;
                let mut delta = -(removed.tokens as i64);
                if let Content::Replaced(p) = new {
                    self.sums[slot(Category::Placeholders)] += p;
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
                self.sums[slot(Category::ToolCalls)] -= old;
                self.sums[slot(Category::ToolCalls)] += new;
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

    /// Turns a non-sticky policy's edits into this request's transient state; returns the category
    /// adjustments (as signed token deltas), the prunable adjustments, the number of results and
    /// calls that differ from the previous request, and the smallest position that differs.
    ///
    /// The edits are the whole set for this request, or, after an [`Edit::KeepPrevious`], what
    /// changes in the previous request's set: then the work is in proportion to the edits, not to
    /// the set, and a policy whose set grows request by request replays in linear time.
    fn transient_edits(
        &mut self,
        edits: &[Edit],
    ) -> ([i64; Category::COUNT], [i64; 2], usize, Option<usize>) {
        let keep = edits.iter().any(|e| matches!(e, Edit::KeepPrevious));
        let mut next: BTreeMap<usize, Transient> = BTreeMap::new();
        let mut next_calls: BTreeMap<usize, Measure> = BTreeMap::new();
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
        (self.transient_categories, self.transient_prunable, changed, first_change)
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
            effect.prunable = [-(removed.tokens as i64), -(removed.estimate as i64)];
        }
        if let Transient::Replaced(p) = state {
            effect.categories[slot(Category::Placeholders)] += p.tokens as i64;
            effect.delta += p.tokens as i64;
        }
        self.add_effect(&effect, 1);
        self.transient.insert(i, (state, effect));
    }

    /// Sets (or with `None` clears) the transient arguments of call `c`.
    fn set_call(&mut self, c: usize, sent: Option<Measure>, first_change: &mut Option<usize>) {
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
        for (sum, d) in self.transient_prunable.iter_mut().zip(effect.prunable) {
            *sum += sign * d;
        }
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

/// Replays `conversation` at `threshold` under `policy`, measuring any text the policy writes with
/// `meter`. The summary's labels (trace, format, policy, tokenizer) are left for the caller to fill.
pub fn replay(
    conversation: &MeasuredConversation,
    threshold: usize,
    policy: &mut dyn Policy,
    meter: &Meter,
) -> Run {
    replay_keeping(conversation, threshold, policy, meter, true)
}

/// [`replay`] without the per-request rows: the same summary (the rows come back empty), without
/// the cost of building a row per request, for sweeps and reports of one row per run.
pub fn replay_summary(
    conversation: &MeasuredConversation,
    threshold: usize,
    policy: &mut dyn Policy,
    meter: &Meter,
) -> Run {
    replay_keeping(conversation, threshold, policy, meter, false)
}

fn replay_keeping(
    conversation: &MeasuredConversation,
    threshold: usize,
    policy: &mut dyn Policy,
    meter: &Meter,
    keep_rows: bool,
) -> Run {
    let n = conversation.items.len();
    let mut e = Engine {
        meter,
        threshold,
        results: Vec::with_capacity(conversation.result_calls().len()),
        result_call: conversation.result_calls(),
        calls: Vec::with_capacity(conversation.tool_calls()),
        first_result: 0,
        sums: [Measure::default(); Category::COUNT],
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
        transient_prunable: [0; 2],
        transient_prefix: Prefix::new(2 * n),
        pruned_carry: 0,
        counts: Counts::default(),
        compactions: 0,
        turn_scoped: Vec::new(),
    };
    let sticky = policy.sticky();
    // A policy on whole outputs sees each result as one whole it may replace: an empty summary
    // and, as content, the summary and content the seed's split sends (so that with nothing
    // pruned the context is `none`'s, and savings are what the policy removes).
    let whole_outputs = policy.on() == On::Output;
    let mut summary = RunSummary { threshold, calibration: conversation.calibration, ..Default::default() };
    let mut rows = Vec::new();
    let mut edits = Vec::new();
    let mut recorded_any = false;
    let mut recorded_sum: Tokens = 0;

    for (position, item) in conversation.items.iter().enumerate() {
        match item {
            MeasuredItem::Text { category, measure, turn_start } => {
                if *turn_start {
                    e.turn += 1;
                    e.turn_started = true;
                    // OpenHands answers each user message with a RecallAction, one more event.
                    e.counts.events += 1;
                    e.drop_turn_scoped();
                }
                match category {
                    // The unrecorded overhead stands for the system prompt and tool schemas the
                    // trace does not hold: no chat message, and one event as the system prompt is.
                    Category::System | Category::Unrecorded => e.counts.events += 1,
                    // Hidden reasoning and server-side results are part of the model's response.
                    Category::Assistant
                    | Category::Thinking
                    | Category::HiddenReasoning
                    | Category::ServerSide => e.counts.assistant_text(),
                    // Part of the message or result they came with.
                    Category::Images => {}
                    _ => e.counts.user(),
                }
                if *category == Category::HiddenReasoning {
                    e.turn_scoped.push((position, measure.tokens));
                }
                e.add(*category, position, *measure);
            }
            MeasuredItem::ToolCall { measure, name_measure, .. } => {
                e.counts.tool_call();
                // The name is the call's head and the arguments its tail, so clearing the
                // arguments keeps the name in the shared prefix.
                e.sums[slot(Category::ToolCalls)] += *measure;
                e.unpruned += measure.tokens;
                e.prefix.add(head(position), name_measure.tokens as i64);
                e.prefix.add(tail(position), measure.tokens as i64 - name_measure.tokens as i64);
                e.calls.push(CallState { position, measure: *measure, name: *name_measure, cleared: false });
            }
            MeasuredItem::ToolResult(sizes, r) => {
                let output = sizes.output();
                let (summary_m, content) = match sizes.split_at(e.threshold) {
                    (summary, content) if whole_outputs => {
                        let mut whole = summary;
                        if let Some(c) = content {
                            whole += c;
                        }
                        (Measure::default(), Some(whole))
                    }
                    split => split,
                };
                summary.tool_results += 1;
                summary.tool_output_bytes += output.bytes;
                summary.tool_output_tokens += output.tokens;
                e.add(Category::ToolSummaries, position, summary_m);
                if let Some(c) = content {
                    summary.split_results += 1;
                    summary.content_tokens += c.tokens;
                    summary.content_estimate += c.estimate;
                    e.sums[slot(Category::ToolContents)] += c;
                    e.unpruned += c.tokens;
                    e.prefix.add(tail(position), c.tokens as i64);
                }
                let call = e.result_call[e.results.len()];
                e.results.push(ResultState {
                    index: e.results.len(),
                    result: r,
                    sizes,
                    summary: summary_m,
                    content: content.map_or(Content::None, Content::Present),
                    original: content,
                    first_request: e.requests,
                    turn: e.turn,
                    position,
                    call: call.map(|c| e.calls[c].measure),
                    event: e.counts.events,
                    assistant_messages: e.counts.assistant_messages,
                });
                e.counts.tool_result();
            }
            MeasuredItem::Compaction { summary: text } => {
                e.compaction(position);
                if let Some(m) = text {
                    e.counts.user();
                    e.add(Category::User, position, *m);
                }
            }
            MeasuredItem::Request { id, timestamp, usage } => {
                let view = View {
                    request: e.requests,
                    timestamp: *timestamp,
                    previous_timestamp: e.previous_timestamp,
                    turn: e.turn,
                    turn_start: e.turn_started,
                    results: &e.results[e.first_result..],
                    context: e.context(),
                    system: {
                        let mut system = e.sums[slot(Category::System)];
                        system += e.sums[slot(Category::Unrecorded)];
                        system
                    },
                    messages: e.counts.messages,
                    events: e.counts.events,
                    assistant_messages: e.counts.assistant_messages,
                    compactions: e.compactions,
                    decide: meter.decide_with(),
                    meter,
                };
                edits.clear();
                policy.before_request(&view, &mut edits);
                let (adjust, prunable_adjust, changed, transient_change) = if sticky {
                    let mut changed = 0;
                    for edit in &edits {
                        changed += usize::from(e.apply(edit));
                    }
                    ([0; Category::COUNT], [0; 2], changed, None)
                } else {
                    e.transient_edits(&edits)
                };

                let mut categories = Categories::default();
                let mut estimate: Tokens = 0;
                for c in Category::ALL {
                    let tokens = (e.sums[slot(c)].tokens as i64 + adjust[slot(c)]).max(0) as Tokens;
                    estimate += e.sums[slot(c)].estimate;
                    set_category(&mut categories, c, tokens);
                }
                let context_tokens = categories.total();
                let contents = e.sums[slot(Category::ToolContents)];
                let pruned = e.unpruned.saturating_sub(context_tokens);

                if let Some(u) = usage {
                    recorded_any = true;
                    recorded_sum += u.input_tokens;
                    summary.recorded_requests += 1;
                }
                summary.peak_context_tokens = summary.peak_context_tokens.max(context_tokens);
                summary.total_input_tokens += context_tokens;
                summary.final_context_tokens = context_tokens;
                if keep_rows {
                    let (shared, kept, previous_tokens) = match e.previous {
                        None => (0, 0, 0),
                        Some((previous_position, previous_tokens, _)) => {
                            let first_change = [e.changed_at, transient_change].into_iter().flatten().min();
                            let end = head(previous_position);
                            let cut = first_change.map_or(end, |c| c.min(end));
                            let base = e.prefix.before(head(e.context_start));
                            let sent_before = |at: usize| e.prefix.before(at) - base + e.transient_below(at);
                            let shared = sent_before(cut).clamp(0, previous_tokens as i64) as Tokens;
                            // The previous context's items as sent now: the content pruned from
                            // it is gone, what arrived since is not counted.
                            // (`max` then `min`, not `clamp`, which panics should the bounds cross.)
                            let kept = sent_before(end).max(shared as i64).min(context_tokens as i64).max(0)
                                as Tokens;
                            (shared, kept, previous_tokens)
                        }
                    };
                    let previous_pruned = e.previous.map_or(0, |p| p.2);
                    let gap_ms = match (timestamp, e.previous_timestamp) {
                        (Some(now), Some(before)) => Some(now.saturating_sub(before)),
                        _ => None,
                    };
                    // The seed's estimate of the context as sent: contents removed by a transient
                    // edit are taken out of it too.
                    let estimate = (estimate as i64 + prunable_adjust[1]).max(0) as Tokens;
                    rows.push(RequestRow {
                        request: e.requests,
                        id: id.clone(),
                        timestamp: timestamp.map(format_rfc3339),
                        turn: e.turn,
                        categories,
                        context_tokens,
                        context_estimate: estimate,
                        prunable_tokens: (contents.tokens as i64 + prunable_adjust[0]).max(0) as Tokens,
                        prunable_estimate: (contents.estimate as i64 + prunable_adjust[1]).max(0) as Tokens,
                        pruned_tokens: pruned,
                        freed_tokens: pruned.saturating_sub(previous_pruned),
                        changed_results: changed,
                        shared_prefix_tokens: shared,
                        previous_context_tokens: previous_tokens,
                        previous_kept_tokens: kept,
                        gap_ms,
                        recorded_input_tokens: usage.map(|u| u.input_tokens),
                        recorded_cache_read_tokens: usage.and_then(|u| u.cache_read_tokens),
                    });
                }
                if changed > 0 {
                    summary.prune_events += 1;
                }
                e.previous = Some((position, context_tokens, pruned));
                // The gap before the next request is from this one: when this one has no
                // timestamp, that gap is unknown (not measured from an older request, which would
                // overstate the idle time and fire the time-based policies or expire the cache).
                e.previous_timestamp = *timestamp;
                e.changed_at = None;
                e.turn_started = false;
                e.counts.request();
                e.requests += 1;
            }
        }
    }

    summary.requests = e.requests;
    summary.pruned_tokens = e.pruned_carry + e.previous.map_or(0, |p| p.2);
    summary.recorded_input_tokens =
        if recorded_any { Some(recorded_sum) } else { conversation.recorded_total.map(|t| t.input_tokens) };
    summary.conversation = conversation.id.clone();
    summary.transforms = conversation.transforms.clone();
    Run { summary, rows }
}

fn set_category(c: &mut Categories, category: Category, tokens: Tokens) {
    let slot = match category {
        Category::Unrecorded => &mut c.unrecorded,
        Category::System => &mut c.system,
        Category::User => &mut c.user,
        Category::Assistant => &mut c.assistant,
        Category::Thinking => &mut c.thinking,
        Category::HiddenReasoning => &mut c.hidden_reasoning,
        Category::ServerSide => &mut c.server_side,
        Category::Images => &mut c.images,
        Category::ToolCalls => &mut c.tool_calls,
        Category::ToolSummaries => &mut c.tool_summaries,
        Category::ToolContents => &mut c.tool_contents,
        Category::Placeholders => &mut c.placeholders,
    };
    *slot = tokens;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_sums_agree_with_a_plain_array_whatever_the_order_of_additions() {
        // Mostly in order, as a replay adds items, with edits of older slots and repeated slots.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % bound
        };
        for slots in [1usize, 2, 7, 64, 301] {
            let mut prefix = Prefix::new(slots);
            let mut plain = vec![0i64; slots];
            let mut highest = 0usize;
            for _ in 0..4 * slots {
                let position = match next(4) {
                    0 => next(slots as u64) as usize,
                    1 => highest,
                    _ => (highest + next(3) as usize).min(slots - 1),
                };
                highest = highest.max(position);
                let delta = next(200) as i64 - 50;
                prefix.add(position, delta);
                plain[position] += delta;
                for p in 0..=slots + 1 {
                    let want: i64 = plain[..p.min(slots)].iter().sum();
                    assert_eq!(prefix.before(p), want, "{slots} slots, before {p}");
                }
            }
        }
    }
    use crate::measure::MeasureOptions;
    use crate::model::{Conversation, Item, Output, Request, ToolResult};
    use crate::policy::PolicySpec;
    use crate::tokens::{DecideWith, Tokenizer};

    /// One token per byte, so expected numbers are easy to check by hand.
    fn meter() -> Meter {
        crate::policy::testing::meter(DecideWith::Tokenizer(Tokenizer::O200k))
    }

    /// Replays `items` at `threshold` under `policy`.
    fn replay_at(items: Vec<Item>, threshold: usize, policy: &mut dyn Policy) -> Run {
        let meter = meter();
        let conv = Conversation { id: "main".into(), items, recorded_total: None };
        let m = MeasuredConversation::new(&conv, &meter, &MeasureOptions::default());
        replay(&m, threshold, policy, &meter)
    }

    /// Replays `items` at threshold 16 under `policy`.
    fn replay_items(items: Vec<Item>, policy: &mut dyn Policy) -> Run {
        replay_at(items, 16, policy)
    }

    fn user(t: &str) -> Item {
        Item::User { text: t.into(), meta: false, images: 0 }
    }
    fn request() -> Item {
        Item::Request(Request::default())
    }
    fn result(id: &str, out: &str) -> Item {
        Item::ToolResult(ToolResult {
            call_id: id.into(),
            name: Some("t".into()),
            output: Output::Raw { output: out.into() },
            is_error: false,
            images: 0,
        })
    }

    fn run(items: Vec<Item>, threshold: usize, spec: &str) -> Run {
        let mut policy = PolicySpec::parse(spec).unwrap().build();
        replay_at(items, threshold, &mut *policy)
    }

    #[test]
    fn hidden_reasoning_is_sent_until_the_next_human_turn_and_is_not_counted_as_pruned() {
        let reasoning = |tokens| Item::Unseen { kind: crate::model::UnseenKind::Reasoning, tokens };
        let call = Item::ToolCall { call_id: "c1".into(), name: "t".into(), arguments: "{}".into() };
        let items = vec![
            user("fix"),    // 3 tokens
            request(),      // 0
            reasoning(100), // the call's reasoning, re-sent with the turn's later calls
            call,           // "t{}": 3 tokens
            result("c1", "ok"),
            request(), // 1
            reasoning(50),
            Item::Assistant { text: "done".into() },
            user("next"), // a new turn: the reasoning of the last one is dropped
            request(),    // 2
        ];
        let r = run(items, 1000, "none");
        let hidden: Vec<Tokens> = r.rows.iter().map(|row| row.categories.hidden_reasoning).collect();
        assert_eq!(hidden, [0, 100, 0]);
        let totals: Vec<Tokens> = r.rows.iter().map(|row| row.context_tokens).collect();
        assert_eq!(totals, [3, 3 + 100 + 3 + 2, 3 + 3 + 2 + 4 + 4]);
        assert_eq!(r.rows[2].pruned_tokens, 0, "no policy removed it");
        assert_eq!(r.summary.pruned_tokens, 0);
        // The previous request's prefix is sent again up to the dropped reasoning only.
        assert_eq!(r.rows[2].shared_prefix_tokens, 3);
        assert_eq!(r.rows[1].shared_prefix_tokens, 3);
    }

    #[test]
    fn a_summary_replay_reports_the_summary_of_a_full_replay_without_rows() {
        let meter = meter();
        let mut items = three_results();
        items[1] = Item::Request(Request {
            usage: Some(crate::model::Usage { input_tokens: 7, ..Default::default() }),
            ..Default::default()
        });
        let conv = Conversation { id: "main".into(), items, recorded_total: None };
        let m = MeasuredConversation::new(&conv, &meter, &MeasureOptions::default());
        for spec in ["none", "keep-turns:n=1", "swe-agent:n=1", "anthropic:trigger=150,keep=1"] {
            for threshold in [0, 16, 1000] {
                let build = || PolicySpec::parse(spec).unwrap().build();
                let full = replay(&m, threshold, &mut *build(), &meter);
                let lean = replay_summary(&m, threshold, &mut *build(), &meter);
                assert_eq!(full.rows.len(), 4, "{spec} at {threshold}");
                assert!(lean.rows.is_empty());
                assert_eq!(lean.summary, full.summary, "{spec} at {threshold}");
            }
        }
    }

    /// Elides every result but the newest `keep` of the current context (placeholder "gone", the
    /// call's arguments cleared too), non-sticky: the whole set before every request, or with
    /// `cumulative` only the newly elided ones after `KeepPrevious`.
    struct ElideOld {
        keep: usize,
        cumulative: bool,
        done: usize,
        compactions: usize,
    }

    impl Policy for ElideOld {
        fn sticky(&self) -> bool {
            false
        }
        fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
            if view.compactions != self.compactions {
                (self.compactions, self.done) = (view.compactions, 0);
            }
            let end = view.results.len().saturating_sub(self.keep);
            let start = if self.cumulative {
                edits.push(Edit::KeepPrevious);
                self.done.min(end)
            } else {
                0
            };
            for r in &view.results[start..end] {
                edits.push(Edit::Replace(r.index, "gone".into()));
                edits.push(Edit::ClearCall(r.index, "{}".into()));
            }
            self.done = self.done.max(end);
        }
    }

    #[test]
    fn a_cumulative_non_sticky_policy_replays_exactly_as_one_that_resends_its_whole_set() {
        let big = "x".repeat(100);
        let call =
            |id: &str| Item::ToolCall { call_id: id.into(), name: "t".into(), arguments: "a".repeat(30) };
        let mut items = vec![user("hi"), request()];
        for (k, id) in ["a", "b", "c", "d", "e", "f", "g"].iter().enumerate() {
            items.extend([call(id), result(id, &big), request()]);
            if k == 3 {
                items.push(Item::Compaction { summary: Some("summary".into()) });
                items.push(request());
            }
        }
        for keep in [0, 1, 2] {
            let whole = replay_items(
                items.clone(),
                &mut ElideOld { keep, cumulative: false, done: 0, compactions: 0 },
            );
            let cumulative = replay_items(
                items.clone(),
                &mut ElideOld { keep, cumulative: true, done: 0, compactions: 0 },
            );
            assert_eq!(cumulative.rows, whole.rows, "keep {keep}");
            assert_eq!(cumulative.summary, whole.summary, "keep {keep}");
            // Something was elided, and the context changed more than once.
            assert!(whole.rows.iter().any(|r| r.categories.placeholders > 0), "keep {keep}");
            assert!(whole.summary.prune_events > 1, "keep {keep}");
        }
    }

    /// user "hi" (2), then three results of 100 bytes, each followed by a request.
    fn three_results() -> Vec<Item> {
        let big = "x".repeat(100);
        vec![
            user("hi"),
            request(),
            result("a", &big),
            request(),
            result("b", &big),
            request(),
            result("c", &big),
            request(),
        ]
    }

    // The automatic summary of 100 x's is "1 lines | " + 80 x's + "…" = 10 + 80 + 3 = 93 bytes.
    const SUMMARY: u64 = 93;

    #[test]
    fn policy_none_keeps_everything_and_sums_per_request() {
        let r = run(three_results(), 16, "none");
        let contexts: Vec<Tokens> = r.rows.iter().map(|r| r.context_tokens).collect();
        let one = SUMMARY + 100;
        assert_eq!(contexts, [2, 2 + one, 2 + 2 * one, 2 + 3 * one]);
        assert_eq!(r.summary.peak_context_tokens, 2 + 3 * one);
        assert_eq!(r.summary.total_input_tokens, contexts.iter().sum::<u64>());
        assert_eq!(r.summary.split_results, 3);
        assert_eq!(r.summary.content_tokens, 300);
        assert_eq!(r.summary.content_estimate, 75);
        assert_eq!(r.summary.prune_events, 0);
        assert_eq!(r.rows[3].categories.tool_summaries, 3 * SUMMARY);
        // Nothing changes between requests: every previous context is a cached prefix.
        let shared: Vec<Tokens> = r.rows.iter().map(|r| r.shared_prefix_tokens).collect();
        assert_eq!(shared, [0, 2, 2 + one, 2 + 2 * one]);
    }

    #[test]
    fn below_the_threshold_nothing_is_split_or_prunable() {
        let r = run(three_results(), 100, "keep-turns:n=1");
        assert_eq!(r.summary.split_results, 0);
        assert_eq!(r.summary.prune_events, 0);
        assert_eq!(r.rows[3].context_tokens, 2 + 300);
    }

    #[test]
    fn keep_turns_prunes_after_n_requests_and_never_undoes_it() {
        let r = run(three_results(), 16, "keep-turns:n=1");
        // "a" is sent with request 1 and pruned before request 2, and so on.
        let contents: Vec<Tokens> = r.rows.iter().map(|r| r.categories.tool_contents).collect();
        assert_eq!(contents, [0, 100, 100, 100]);
        let pruned: Vec<Tokens> = r.rows.iter().map(|r| r.pruned_tokens).collect();
        assert_eq!(pruned, [0, 0, 100, 200]);
        assert_eq!(r.summary.prune_events, 2);
        assert_eq!(r.summary.pruned_tokens, 200);
        // Pruning "a" at request 2 breaks the prefix right at "a": only "hi" + a's summary stay.
        assert_eq!(r.rows[2].shared_prefix_tokens, 2 + SUMMARY);
        assert_eq!(r.rows[2].freed_tokens, 100);
    }

    #[test]
    fn keep_results_keeps_the_last_n() {
        let r = run(three_results(), 16, "keep-results:n=2");
        let contents: Vec<Tokens> = r.rows.iter().map(|r| r.categories.tool_contents).collect();
        assert_eq!(contents, [0, 100, 200, 200]);
        assert_eq!(r.summary.prune_events, 1);
    }

    #[test]
    fn budget_prunes_oldest_down_to_target_only_when_over_max() {
        // Contexts without pruning: 2, 195, 388, 581.
        let r = run(three_results(), 16, "budget:max=400,target=300");
        let contexts: Vec<Tokens> = r.rows.iter().map(|r| r.context_tokens).collect();
        // At request 3 (581 > 400): prune a (→481), prune b (→381), c is not needed… 381 > 300 → prune c (→281).
        assert_eq!(contexts, [2, 195, 388, 281]);
        assert_eq!(r.rows[3].changed_results, 3);
        assert_eq!(r.summary.prune_events, 1);
    }

    #[test]
    fn compaction_empties_the_context_and_starts_from_its_summary() {
        let mut items = three_results();
        items.push(Item::Compaction { summary: Some("summary!".into()) });
        items.push(request());
        let r = run(items, 16, "keep-turns:n=1");
        let last = r.rows.last().unwrap();
        assert_eq!(last.context_tokens, 8);
        assert_eq!(last.shared_prefix_tokens, 0);
        // Pruned tokens of the replaced context are still counted.
        assert_eq!(r.summary.pruned_tokens, 200);
    }

    #[test]
    fn placeholders_cost_tokens() {
        struct Placeholder;
        impl Policy for Placeholder {
            fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
                for r in view.results {
                    if view.request > r.first_request && matches!(r.content, Content::Present(_)) {
                        edits.push(Edit::Replace(r.index, "[cleared]".into()));
                    }
                }
            }
        }
        let r = replay_items(three_results(), &mut Placeholder);
        assert_eq!(r.rows[3].categories.placeholders, 2 * 9);
        assert_eq!(r.rows[3].pruned_tokens, 2 * (100 - 9));
    }

    #[test]
    fn a_non_sticky_policy_is_recomputed_for_every_request() {
        /// Clears every content except at odd requests.
        struct Flicker;
        impl Policy for Flicker {
            fn sticky(&self) -> bool {
                false
            }
            fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
                if view.request % 2 == 0 {
                    edits.extend(view.results.iter().map(|r| Edit::Prune(r.index)));
                }
            }
        }
        let r = replay_items(three_results(), &mut Flicker);
        let contents: Vec<Tokens> = r.rows.iter().map(|r| r.categories.tool_contents).collect();
        assert_eq!(contents, [0, 100, 0, 300]);
        // Request 2 clears a and b: the prefix breaks at a.
        assert_eq!(r.rows[2].shared_prefix_tokens, 2 + SUMMARY);
        // Request 3 restores them: the prefix breaks at a again.
        assert_eq!(r.rows[3].shared_prefix_tokens, 2 + SUMMARY);
        assert_eq!(r.summary.prune_events, 2);
    }

    /// Records what the view says before each request.
    #[derive(Default)]
    struct Probe {
        seen: Vec<(usize, usize, usize, u64, usize)>,
        results: Vec<(usize, usize)>,
    }
    impl Policy for Probe {
        fn before_request(&mut self, view: &View<'_>, _edits: &mut Vec<Edit>) {
            self.seen.push((
                view.messages,
                view.events,
                view.assistant_messages,
                view.system.bytes,
                view.compactions,
            ));
            self.results = view.results.iter().map(|r| (r.event, r.assistant_messages)).collect();
        }
    }

    #[test]
    fn the_view_counts_messages_events_and_assistant_messages() {
        let call = |id: &str| Item::ToolCall { call_id: id.into(), name: "t".into(), arguments: "{}".into() };
        let items = vec![
            Item::System { text: "sys".into() },
            user("hi"),
            request(),
            // One response: reasoning, text and two calls → one assistant message; the text is the
            // thought of the first call (one event), the second call is an event of its own.
            Item::Thinking { text: "hmm".into() },
            Item::Assistant { text: "let me see".into() },
            call("a"),
            call("b"),
            result("a", "x"),
            result("b", "y"),
            request(),
            // A response with text only, then a harness-injected user text.
            Item::Assistant { text: "done".into() },
            Item::User { text: "<reminder>".into(), meta: true, images: 0 },
            request(),
            Item::Compaction { summary: Some("summary".into()) },
            request(),
        ];
        let mut probe = Probe::default();
        replay_items(items, &mut probe);
        // (messages, events, assistant messages, system bytes, compactions)
        assert_eq!(
            probe.seen,
            [
                (1, 3, 0, 3, 0), // the user text; events: system + user + its RecallAction
                (4, 7, 1, 3, 0), // + assistant message, 2 results; events + 2 actions + 2 observations
                (6, 9, 2, 3, 0), // + "done" (message, event) + the reminder (message, event, no recall)
                (1, 1, 0, 0, 1), // after the compaction: its summary alone
            ]
        );
        // The results' event indices and assistant messages before them, in the last context: none.
        assert!(probe.results.is_empty());
    }

    /// "hi", then two rounds of a call of `t` with `arguments` and its result, each followed by a
    /// request.
    fn two_calls(arguments: &str) -> Vec<Item> {
        let call =
            |id: &str| Item::ToolCall { call_id: id.into(), name: "t".into(), arguments: arguments.into() };
        vec![
            user("hi"),
            request(),
            call("a"),
            result("a", "x"),
            request(),
            call("b"),
            result("b", "y"),
            request(),
        ]
    }

    #[test]
    fn results_know_their_event_index_and_the_assistant_messages_before_them() {
        let mut probe = Probe::default();
        replay_items(two_calls("{}"), &mut probe);
        // Events: hi 0, its RecallAction 1, call a 2, result a 3, call b 4, result b 5.
        assert_eq!(probe.results, [(3, 1), (5, 2)]);
    }

    #[test]
    fn a_non_sticky_policy_can_clear_call_arguments_for_one_request() {
        /// Clears the arguments of every call at request 2 only.
        struct ClearArgs;
        impl Policy for ClearArgs {
            fn sticky(&self) -> bool {
                false
            }
            fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
                if view.request == 2 {
                    edits.extend(view.results.iter().map(|r| Edit::ClearCall(r.index, "{}".into())));
                }
            }
        }
        let mut items = two_calls(&"a".repeat(50));
        items.push(request());
        let r = replay_items(items, &mut ClearArgs);
        let calls: Vec<Tokens> = r.rows.iter().map(|r| r.categories.tool_calls).collect();
        // "t" + 50 a's per call; cleared to "t" + "{}" at request 2, restored at request 3.
        assert_eq!(calls, [0, 51, 2 * 3, 2 * 51]);
        // The prefix breaks at the first call's arguments: "hi" + its name stay shared.
        assert_eq!(r.rows[2].shared_prefix_tokens, 2 + 1);
        assert_eq!(r.rows[2].changed_results, 2);
        assert_eq!(r.rows[3].shared_prefix_tokens, 2 + 1);
        assert_eq!(r.summary.prune_events, 2);
    }

    #[test]
    fn recorded_usage_is_summed_once_per_request() {
        let mut items = three_results();
        items[1] = Item::Request(Request {
            usage: Some(crate::model::Usage { input_tokens: 7, ..Default::default() }),
            ..Default::default()
        });
        let r = run(items, 16, "none");
        assert_eq!(r.summary.recorded_input_tokens, Some(7));
        assert_eq!(r.summary.recorded_requests, 1);
        let r = run(three_results(), 16, "none");
        assert_eq!(r.summary.recorded_input_tokens, None);
    }
}
