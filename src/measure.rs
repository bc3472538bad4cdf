//! A conversation with every text measured once, ready to replay at any threshold.
//!
//! The seed's split depends on the threshold only through *whether* an output is split: the content
//! is always the whole output and the automatic summary (`"{lines} lines | {first line}…"`) does not
//! depend on the threshold. So each output and its automatic summary are measured once here, and a
//! replay at threshold `t` picks `(output, None)` or `(summary, Some(output))` without counting again.
//! That is what keeps a sweep over many thresholds as cheap as one replay.
//!
//! Record-time transforms (truncation, spilling to a file) change the output *before* the split;
//! they are applied here, and one that builds the tool's own summary and content (a spill) makes
//! the result one the tool split. Items are measured in parallel and kept in order. Pure: no I/O, no
//! printing.

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::model::Calibration;
use crate::model::{
    CLEARED_PLACEHOLDER, Conversation, Item, Millis, Output, RecordedTotal, Tokens, UnseenKind, Usage,
};
use crate::reuse_index::ReuseIndex;
use crate::split::summary_of;
use crate::tokens::{CharCounts, Measure, Meter, TextSize};
use crate::transform::{self, Transform};

/// What a piece of sent text is, for the per-category breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// Tokens every request sends that the trace does not record (system prompt, tool schemas):
    /// the calibrated overhead (fitted by the calibration) or `--overhead`.
    Unrecorded,
    /// Message structure the provider adds around each item (role markers, call and output
    /// wrappers), fitted by the calibration where the tokenizer is the provider's: the same for
    /// every policy while the item stays.
    Framing,
    /// System prompt and developer instructions.
    System,
    /// User text (typed or injected), compaction summaries.
    User,
    /// Assistant text.
    Assistant,
    /// Assistant reasoning sent back as readable text.
    Thinking,
    /// Reasoning the log holds only encrypted or not at all, sized from the recorded reasoning
    /// output tokens; dropped when the next human turn starts
    /// ([`UnseenKind::Reasoning`]).
    HiddenReasoning,
    /// Content the provider added server-side (web search results), sized from the usage step it
    /// caused.
    ServerSide,
    /// Images, tokenised by the provider's rule from their dimensions.
    Images,
    /// Tool call names and arguments.
    ToolCalls,
    /// Tool-result summaries (and unsplit outputs, which are their own summary).
    ToolSummaries,
    /// Tool-result contents still present.
    ToolContents,
    /// Text a policy put in place of pruned content (placeholders, previews).
    Placeholders,
}

impl Category {
    /// The category of unseen content of `kind`.
    pub fn of_unseen(kind: UnseenKind) -> Category {
        match kind {
            UnseenKind::Reasoning => Category::HiddenReasoning,
            UnseenKind::ServerSide => Category::ServerSide,
            UnseenKind::Image => Category::Images,
        }
    }

    /// Number of categories.
    pub const COUNT: usize = 13;

    /// Every category in report order.
    pub const ALL: [Category; Category::COUNT] = [
        Category::Unrecorded,
        Category::Framing,
        Category::System,
        Category::User,
        Category::Assistant,
        Category::Thinking,
        Category::HiddenReasoning,
        Category::ServerSide,
        Category::Images,
        Category::ToolCalls,
        Category::ToolSummaries,
        Category::ToolContents,
        Category::Placeholders,
    ];

    /// Name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Category::Unrecorded => "unrecorded",
            Category::Framing => "framing",
            Category::System => "system",
            Category::User => "user",
            Category::Assistant => "assistant",
            Category::Thinking => "thinking",
            Category::HiddenReasoning => "hidden_reasoning",
            Category::ServerSide => "server_side",
            Category::Images => "images",
            Category::ToolCalls => "tool_calls",
            Category::ToolSummaries => "tool_summaries",
            Category::ToolContents => "tool_contents",
            Category::Placeholders => "placeholders",
        }
    }
}

/// What every replay reads of a tool result at every threshold: its two measures and whether the
/// tool split it. Kept in the item, beside the shared rest ([`MeasuredResult`]), so that a replay
/// walking a long trace reads memory in order instead of following a pointer per result (a third
/// of a long sweep's replay time waited on those pointers, `perf annotate`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResultSizes {
    /// Size of the result's `text`.
    pub text: TextSize,
    /// Size of the result's `summary`.
    pub summary: TextSize,
    /// `Some(has_content)` when the tool already split the output (kept as written).
    pub presplit: Option<bool>,
    /// What the whole output is made of ([`ResultSizes::output`]); set when measured, and not
    /// changed by a replay that splits a raw output as a tool would
    /// (the sweep's `fix_other_tools`).
    pub whole: Whole,
}

/// The parts of a tool result's whole output, as the tool produced it.
///
/// A result the tool split with content is the text `summary + "\n" + content`
/// ([`crate::model::Output::full_text`], what `--resplit` measures as one text): its whole output
/// counts that newline too, so `tool_output_bytes` is the same with and without `--resplit`. The
/// newline's bytes, chars and UTF-16 units are one each and its `len/4` estimate 0; its tokens are
/// counted once per tokenizer and kept here in two bytes, which fit in the padding of
/// [`ResultSizes`] (the replayed context counts summary and content apart, without it:
/// docs/json.md, "What is measured").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whole {
    /// The text alone (a raw output).
    Text,
    /// The summary alone (a tool's split without content).
    Summary,
    /// Summary, `\n`, text (a tool's split with content).
    Joined {
        /// Tokens of `"\n"` with the report's tokenizer.
        newline_tokens: u8,
        /// Tokens of `"\n"` with the tokenizer policies decide with.
        newline_decide: u8,
    },
}

impl ResultSizes {
    /// Summary and content measures at `threshold`, by the seed's rule.
    pub fn split_at(&self, threshold: usize) -> (TextSize, Option<TextSize>) {
        match self.presplit {
            Some(true) => (self.summary, Some(self.text)),
            Some(false) => (self.summary, None),
            None if self.text.bytes > threshold as u64 => (self.summary, Some(self.text)),
            None => (self.text, None),
        }
    }

    /// Size of the whole output as the tool produced it (after transforms), [`Whole`].
    pub fn output(&self) -> TextSize {
        match self.whole {
            Whole::Text => self.text,
            Whole::Summary => self.summary,
            Whole::Joined { newline_tokens, newline_decide } => {
                let mut m = self.summary;
                m += TextSize {
                    measure: Measure {
                        bytes: 1,
                        tokens: newline_tokens.into(),
                        estimate: 0,
                        decide: newline_decide.into(),
                    },
                    chars: CharCounts { chars: 1, non_ascii: 0, utf16: 1 },
                };
                m += self.text;
                m
            }
        }
    }
}

/// A tool result, measured: what a replay reads only when a policy asks (its sizes are in the
/// item, [`ResultSizes`]).
#[derive(Debug, Clone)]
pub struct MeasuredResult {
    /// Call id linking it to its call.
    pub call_id: String,
    /// Tool name, when known.
    pub name: Option<String>,
    /// The tool reported an error.
    pub is_error: bool,
    /// Images in the result.
    pub images: u32,
    /// The output after record-time transforms (for a result a tool already split: its content).
    /// Shared, so that the sweep's per-tool copies of a conversation do not copy texts.
    pub text: Arc<String>,
    /// The summary used when split: the automatic one, or the one the tool wrote.
    pub summary: Arc<String>,
    /// Bytes of the output as recorded, before transforms.
    pub recorded_bytes: u64,
    /// Numbers estimators work out from `text`, each once, when first asked for
    /// ([`MeasuredResult::derived`]).
    derived: [OnceLock<u64>; CacheSlot::COUNT],
}

/// A slot of a [`MeasuredResult`]'s per-estimator cache: a number one estimator works out from a
/// result's text and reads in every replay of a sweep (a line count, an escaped length). What a
/// slot holds is the business of the estimator that owns it; the slots are handed out in one
/// place, beside the estimators, so no two share one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheSlot(usize);

impl CacheSlot {
    /// Number of slots each result keeps.
    pub const COUNT: usize = 2;

    /// Slot `index`, below [`CacheSlot::COUNT`] (checked when the constant is built).
    pub const fn new(index: usize) -> CacheSlot {
        assert!(index < CacheSlot::COUNT, "no such cache slot");
        CacheSlot(index)
    }
}

impl MeasuredResult {
    /// The number in `slot`, worked out by `of_text` from the result's text the first time it is
    /// asked for: an estimator that needs one number per output in every replay of a sweep pays
    /// for it once. `of_text` must be the same function for every call with `slot`.
    pub fn derived(&self, slot: CacheSlot, of_text: impl FnOnce(&str) -> u64) -> u64 {
        *self.derived[slot.0].get_or_init(|| of_text(&self.text))
    }

    /// The summary text at `threshold`, for a result of `sizes`.
    pub fn summary_at(&self, sizes: &ResultSizes, threshold: usize) -> &str {
        match sizes.split_at(threshold).1 {
            Some(_) => &self.summary,
            None if sizes.presplit.is_some() => &self.summary,
            None => &self.text,
        }
    }
}

/// One measured item.
#[derive(Debug, Clone)]
pub enum MeasuredItem {
    /// Plain text of a category.
    Text {
        /// Which category.
        category: Category,
        /// Its measure.
        measure: TextSize,
        /// A human turn starts here (a user message that is not harness-injected).
        turn_start: bool,
        /// Sent only until the next human turn starts ([`MeasuredConversation::new`] says which).
        turn_scoped: bool,
    },
    /// A tool call.
    ToolCall {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Size of name + arguments.
        measure: TextSize,
        /// Size of the name alone (what remains when a policy clears the arguments).
        name_measure: TextSize,
        /// The arguments as sent, for a policy whose anchor reads them (LangChain's count parses
        /// them). Shared, so that copies of a conversation do not copy them.
        arguments: Arc<str>,
    },
    /// A tool result: its sizes, and the rest of it (shared: the sweep's per-tool copies of a
    /// conversation change sizes, and copy a result only when they change its texts).
    ToolResult(ResultSizes, Arc<MeasuredResult>),
    /// A request boundary.
    Request {
        /// Provider id, when recorded.
        id: Option<String>,
        /// When it was made.
        timestamp: Option<Millis>,
        /// Recorded usage.
        usage: Option<Usage>,
        /// The model the log names.
        model: Option<Arc<str>>,
    },
    /// The agent or the provider cleared earlier tool results ([`Item::Cleared`]): from here on
    /// each of `results` (ordinals among the conversation's tool results, resolved by
    /// [`cleared::resolve`]) is sent as `placeholder` instead of its output, and each thinking
    /// text of `thinking` (ordinals among the conversation's [`Category::Thinking`] texts) is no
    /// longer sent.
    Cleared {
        /// Ordinals of the results cleared.
        results: Arc<[usize]>,
        /// Size of the placeholder each is sent as.
        placeholder: TextSize,
        /// Ordinals of the thinking texts cleared (the provider's thinking clearing).
        thinking: Arc<[usize]>,
    },
    /// The context is replaced; the optional summary starts the new one (as user text).
    Compaction {
        /// Size of the summary.
        summary: Option<TextSize>,
    },
}

impl MeasuredItem {
    /// Whether the provider wraps this item in message structure of its own (the framing the
    /// calibration fits): a user, assistant or system text, a tool call, a tool output, a
    /// compaction summary. Hidden reasoning is not counted (its recorded size is what the provider
    /// re-sends), nor unrecorded content.
    pub fn framed(&self) -> bool {
        match self {
            MeasuredItem::Text { category, .. } => {
                !matches!(category, Category::Unrecorded | Category::Framing | Category::HiddenReasoning)
            }
            MeasuredItem::ToolCall { .. } | MeasuredItem::ToolResult(..) => true,
            MeasuredItem::Compaction { summary } => summary.is_some(),
            MeasuredItem::Request { .. } | MeasuredItem::Cleared { .. } => false,
        }
    }
}

/// A conversation with every text measured.
#[derive(Debug, Clone)]
pub struct MeasuredConversation {
    /// Conversation id.
    pub id: String,
    /// Items in order.
    pub items: Vec<MeasuredItem>,
    /// Aggregate recorded usage, for formats that store only that.
    pub recorded_total: Option<RecordedTotal>,
    /// Record-time transforms applied, as specs.
    pub transforms: Vec<String>,
    /// The calibration applied (fitted by the calibration module): the unrecorded overhead and the ratio
    /// of provider tokens to report tokens.
    pub calibration: Calibration,
    /// Where the agent first reuses its tool results' terms (built from the raw texts, which are
    /// not kept): what the reuse analysis checks a run's prunes against.
    pub reuse: Arc<ReuseIndex>,
    /// What a replay does with the compactions the log recorded (`--harness-compaction`, resolved
    /// for the agent that wrote it): kept where recorded unless the pipeline says otherwise.
    pub harness: crate::harness::Harness,
    /// The unrecorded overhead a compaction the replay makes restarts the context with (set by the
    /// calibration, `calibrate::apply`: the overhead the log showed after a compaction); `None`
    /// keeps the unrecorded overhead the context had.
    pub restart_overhead: Option<Tokens>,
    /// [`MeasuredConversation::result_calls`], the number of tool calls and whether any item is
    /// a clearing marker, worked out on first use.
    links: OnceLock<Links>,
    /// [`MeasuredConversation::message_texts`], filled on first use.
    message_texts: OnceLock<MessageTexts>,
    /// [`MeasuredConversation::recorded_contexts`], filled on first use.
    recorded_contexts: Derived<Vec<Tokens>>,
}

/// What a replay works out of a conversation's items on first use and keeps with it; a copy
/// starts without it (a copy whose items then change, as the sweep's `fix_other_tools` re-splits
/// outputs, works it out again from its own).
#[derive(Debug, Default)]
struct Derived<T>(OnceLock<T>);

impl<T> Clone for Derived<T> {
    fn clone(&self) -> Self {
        Derived(OnceLock::new())
    }
}

/// What the replays of a conversation read of its items' order, worked out once
/// ([`MeasuredConversation::result_calls`], [`MeasuredConversation::tool_calls`],
/// [`MeasuredConversation::clears`]).
#[derive(Debug, Clone, Default)]
struct Links {
    /// Each tool result's call, as an index among the tool calls.
    result_calls: Vec<Option<usize>>,
    /// Tool calls in all.
    calls: usize,
    /// Some item is a clearing marker ([`MeasuredItem::Cleared`]).
    clears: bool,
    /// Some clearing marker clears thinking texts.
    clears_thinking: bool,
}

/// What a replay that keeps the messages one by one (for a policy that reads them) works out of
/// a conversation's texts once, on first use, and keeps with it
/// ([`MeasuredConversation::message_texts`]), so the replays of a sweep do it once per
/// conversation. Measuring does not fill it.
#[derive(Debug, Clone, Default)]
pub(crate) struct MessageTexts {
    /// A number per tool call, in order (LangChain's `len(repr(call))`).
    pub(crate) calls: Vec<u64>,
    /// A number per tool result, in order (the chars of its call id and tool name).
    pub(crate) results: Vec<u64>,
    /// At least as many as the messages a replay's context holds at once (what the replay
    /// presizes its list of messages with).
    pub(crate) messages: usize,
}

/// How to measure.
#[derive(Default)]
pub struct MeasureOptions<'a> {
    /// Re-split outputs that a tool already split.
    pub resplit: bool,
    /// Record-time transforms, applied in order to each raw output.
    pub transforms: &'a [Box<dyn Transform>],
    /// Tokens every request sends that the trace does not record (system prompt, tool schemas):
    /// an [`Category::Unrecorded`] item at the start of the conversation and after every
    /// compaction (the system prompt is sent again with the summary).
    pub overhead: Tokens,
    /// Build the [`ReuseIndex`] (what the reuse analysis of `compare` reads); off, it is empty.
    pub reuse: bool,
}

/// The measure of `tokens` unrecorded tokens: as many tokens under every counter, and four ASCII
/// bytes (chars, UTF-16 units) per token, so every estimator (`len/4`, opencode, LangChain,
/// Gemini CLI) also counts `tokens`. Unseen content ([`Item::Unseen`], already in the provider's
/// tokens) is measured the same way.
pub fn overhead_measure(tokens: Tokens) -> TextSize {
    TextSize {
        measure: Measure { bytes: 4 * tokens, tokens, estimate: tokens, decide: tokens },
        chars: CharCounts { chars: 4 * tokens, non_ascii: 0, utf16: 4 * tokens },
    }
}

impl MeasuredConversation {
    /// Measures every text of `conversation` with `meter`. Items are measured in parallel (rayon),
    /// each on its own, and kept in order, so the result does not depend on the thread count.
    pub fn new(
        conversation: &Conversation,
        meter: &Meter,
        opts: &MeasureOptions<'_>,
    ) -> MeasuredConversation {
        // Small items are cheap: handing them out one by one would cost more than measuring them.
        const ITEMS_PER_TASK: usize = 8;
        let measure = || -> Vec<MeasuredItem> {
            conversation
                .items
                .par_iter()
                .with_min_len(ITEMS_PER_TASK)
                .map(|item| measure_item(item, meter, opts))
                .collect()
        };
        // The reuse index only for the analyses that read it: it costs a fifth of a replay.
        let (mut measured, mut reuse) = if opts.reuse {
            rayon::join(measure, || ReuseIndex::new(conversation))
        } else {
            (measure(), ReuseIndex::default())
        };
        scope_reasoning(&mut measured);
        cleared::resolve(conversation, &mut measured);
        if reuse.built {
            reuse.cleared = cleared::cleared_from(&measured, reuse.results);
        }
        let mut m = MeasuredConversation {
            id: conversation.id.clone(),
            items: measured,
            recorded_total: conversation.recorded_total,
            transforms: opts.transforms.iter().map(|t| t.spec()).collect(),
            calibration: Calibration::NONE,
            reuse: Arc::new(reuse),
            harness: Default::default(),
            restart_overhead: None,
            links: OnceLock::new(),
            message_texts: OnceLock::new(),
            recorded_contexts: Derived::default(),
        };
        if opts.overhead > 0 {
            m.add_overhead(opts.overhead);
            m.calibration = Calibration::fixed(opts.overhead);
        }
        m
    }

    /// Adds `tokens` of [`Category::Unrecorded`] at the start and after every compaction (the
    /// system prompt is sent again with the summary); nothing for 0. Before any replay: the
    /// call/result links are worked out on first use.
    pub fn add_overhead(&mut self, tokens: Tokens) {
        if tokens == 0 {
            return;
        }
        let measured = std::mem::take(&mut self.items);
        let mut items = Vec::with_capacity(measured.len() + 1);
        items.push(overhead_item(tokens));
        for item in measured {
            let compaction = matches!(item, MeasuredItem::Compaction { .. });
            items.push(item);
            if compaction {
                items.push(overhead_item(tokens));
            }
        }
        self.items = items;
    }

    /// Adds the calibration's framing, `per_item` provider tokens for each item the provider wraps
    /// ([`MeasuredItem::framed`]), as [`Category::Framing`] items: for a turn-scoped item, one
    /// right after it and scoped with it (it leaves the context with the item); for the others,
    /// one before each request holding the framing of those appended since the request before.
    /// Rounded so that the framing since the last compaction is the rounded product; nothing for 0.
    pub fn add_framing(&mut self, per_item: f64) {
        if per_item <= 0.0 {
            return;
        }
        let framing = |tokens: Tokens, turn_scoped: bool| MeasuredItem::Text {
            category: Category::Framing,
            measure: overhead_measure(tokens),
            turn_start: false,
            turn_scoped,
        };
        let measured = std::mem::take(&mut self.items);
        let mut items = Vec::with_capacity(measured.len() + measured.len() / 4);
        let (mut count, mut added) = (0u64, 0u64);
        let due = |count: u64, added: &mut u64| {
            let total = (per_item * count as f64).round() as u64;
            let d = total.saturating_sub(*added);
            *added = (*added).max(total);
            d
        };
        for item in measured {
            let framed = u64::from(item.framed());
            count += framed;
            match &item {
                MeasuredItem::Compaction { .. } => (count, added) = (framed, 0),
                MeasuredItem::Request { .. } => match due(count, &mut added) {
                    0 => {}
                    d => items.push(framing(d, false)),
                },
                MeasuredItem::Text { turn_scoped: true, .. } if framed == 1 => {
                    let d = due(count, &mut added);
                    items.push(item);
                    if d > 0 {
                        items.push(framing(d, true));
                    }
                    continue;
                }
                _ => {}
            }
            items.push(item);
        }
        self.items = items;
    }

    /// For each tool result, in order, the call it answers: the ordinal, among the conversation's
    /// tool calls, of the latest call with its id before it and after the last compaction (the
    /// calls before a compaction are gone). The same for every replay, so it is worked out once,
    /// on first use: a replay used to look every call id up in a hash map (a sixth of a replay of
    /// a long trace). Edits to `items` after that first use must keep the calls, results and
    /// compactions in place (the sweep's `fix_other_tools` only changes
    /// how results split).
    pub fn result_calls(&self) -> &[Option<usize>] {
        &self.links().result_calls
    }

    /// Number of tool calls (what a replay presizes its table of calls with).
    pub fn tool_calls(&self) -> usize {
        self.links().calls
    }

    /// Whether some item is a clearing marker ([`MeasuredItem::Cleared`]): a walker that follows
    /// them ([`cleared::Clearing`]) has nothing to follow when none is.
    pub fn clears(&self) -> bool {
        self.links().clears
    }

    /// What the replay works out on first use and keeps here for a policy that reads the
    /// messages one by one ([`MessageTexts`]).
    pub(crate) fn message_texts(&self) -> &OnceLock<MessageTexts> {
        &self.message_texts
    }

    /// What the replay works out on first use and keeps here for the trigger of a compacting
    /// policy: the context of the log replayed as recorded at each request
    /// (`replay::reported`).
    pub(crate) fn recorded_contexts(&self) -> &OnceLock<Vec<Tokens>> {
        &self.recorded_contexts.0
    }

    fn links(&self) -> &Links {
        self.links.get_or_init(|| {
            let mut by_id: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
            let mut links = Links::default();
            for item in &self.items {
                match item {
                    MeasuredItem::ToolCall { call_id, .. } => {
                        by_id.insert(call_id, links.calls);
                        links.calls += 1;
                    }
                    MeasuredItem::ToolResult(_, r) => {
                        links.result_calls.push(by_id.get(r.call_id.as_str()).copied())
                    }
                    MeasuredItem::Compaction { .. } => by_id.clear(),
                    MeasuredItem::Cleared { thinking, .. } => {
                        links.clears = true;
                        links.clears_thinking |= !thinking.is_empty();
                    }
                    MeasuredItem::Text { .. } | MeasuredItem::Request { .. } => {}
                }
            }
            links
        })
    }

    /// How many outputs the seed's rule splits at `threshold`. The rule is monotone (a longer
    /// output is split whenever a shorter one is), so two thresholds with the same count split
    /// exactly the same outputs, and since the threshold is used for nothing else, replays at
    /// them are identical but for the threshold they report: a sweep replays each count once.
    pub fn splits_at(&self, threshold: usize) -> usize {
        self.items
            .iter()
            .filter(
                |i| matches!(i, MeasuredItem::ToolResult(sizes, _) if sizes.split_at(threshold).1.is_some()),
            )
            .count()
    }

    /// Which thresholds replay alike ([`MeasuredConversation::splits_at`]): for each threshold,
    /// the index of its distinct split; and for each distinct split, in order of first appearance,
    /// the first threshold that gives it (the one to replay). Ascending thresholds (as sweeps and
    /// `recommend` give them) take one binary search per result instead of a pass per threshold.
    pub fn split_plan(&self, thresholds: &[usize]) -> (Vec<usize>, Vec<usize>) {
        if thresholds.is_sorted() {
            return self.ascending_split_plan(thresholds);
        }
        let mut firsts: Vec<(usize, usize)> = Vec::new();
        let slots = thresholds
            .iter()
            .map(|&t| {
                let splits = self.splits_at(t);
                firsts.iter().position(|(s, _)| *s == splits).unwrap_or_else(|| {
                    firsts.push((splits, t));
                    firsts.len() - 1
                })
            })
            .collect();
        (slots, firsts.into_iter().map(|(_, t)| t).collect())
    }

    /// [`MeasuredConversation::split_plan`] of ascending `thresholds`: a result's split changes
    /// once at most over ascending thresholds (more bytes than the threshold), so neighbouring
    /// thresholds split alike unless some result's split changes between them, and the first
    /// threshold of each run of alike ones is the one to replay.
    fn ascending_split_plan(&self, thresholds: &[usize]) -> (Vec<usize>, Vec<usize>) {
        let Some(&lowest) = thresholds.first() else { return (Vec::new(), Vec::new()) };
        let mut parts = vec![false; thresholds.len()];
        for i in &self.items {
            let MeasuredItem::ToolResult(sizes, _) = i else { continue };
            let first = sizes.split_at(lowest).1.is_some();
            let change = thresholds.partition_point(|&t| sizes.split_at(t).1.is_some() == first);
            if let Some(p) = parts.get_mut(change) {
                *p = true;
            }
        }
        let (mut slots, mut firsts) = (vec![0], vec![lowest]);
        for (i, &t) in thresholds.iter().enumerate().skip(1) {
            if parts[i] {
                firsts.push(t);
            }
            slots.push(firsts.len() - 1);
        }
        (slots, firsts)
    }

    /// Number of request boundaries.
    pub fn requests(&self) -> usize {
        self.items.iter().filter(|i| matches!(i, MeasuredItem::Request { .. })).count()
    }
}

/// Measures one item.
fn measure_item(item: &Item, meter: &Meter, opts: &MeasureOptions<'_>) -> MeasuredItem {
    match item {
        Item::System { text } => text_item(Category::System, meter.measure(text), false),
        Item::User { text, meta, .. } => text_item(Category::User, meter.measure(text), !meta),
        Item::Assistant { text } => text_item(Category::Assistant, meter.measure(text), false),
        Item::Thinking { text } => text_item(Category::Thinking, meter.measure(text), false),
        Item::ToolCall { call_id, name, arguments } => {
            let name_measure = meter.measure(name);
            let mut measure = name_measure;
            measure += meter.measure(arguments);
            MeasuredItem::ToolCall {
                call_id: call_id.clone(),
                name: name.clone(),
                measure,
                name_measure,
                arguments: Arc::from(arguments.as_str()),
            }
        }
        Item::ToolResult(r) => {
            let recorded_bytes = r.output.full_text().len() as u64;
            let (text, summary, presplit) = match &r.output {
                Output::Split { summary, content } if !opts.resplit => {
                    (content.clone().unwrap_or_default(), summary.clone(), Some(content.is_some()))
                }
                output => {
                    let raw = output.full_text().into_owned();
                    match transform::apply_all(opts.transforms, raw, r.name.as_deref()) {
                        Output::Raw { output: text } => {
                            let summary = summary_of(&text);
                            (text, summary, None)
                        }
                        // A split the transform built for the tool (a spill): kept as written.
                        Output::Split { summary, content } => {
                            let presplit = Some(content.is_some());
                            (content.unwrap_or_default(), summary, presplit)
                        }
                    }
                }
            };
            let text_measure =
                if presplit == Some(false) { TextSize::default() } else { meter.measure(&text) };
            let whole = match presplit {
                None => Whole::Text,
                Some(false) => Whole::Summary,
                Some(true) => {
                    let newline = meter.measure("\n");
                    let byte = |n: Tokens| u8::try_from(n).unwrap_or(u8::MAX);
                    Whole::Joined {
                        newline_tokens: byte(newline.tokens),
                        newline_decide: byte(newline.decide),
                    }
                }
            };
            let sizes = ResultSizes { text: text_measure, summary: meter.measure(&summary), presplit, whole };
            MeasuredItem::ToolResult(
                sizes,
                Arc::new(MeasuredResult {
                    call_id: r.call_id.clone(),
                    name: r.name.clone(),
                    is_error: r.is_error,
                    images: r.images,
                    text: Arc::new(text),
                    summary: Arc::new(summary),
                    recorded_bytes,
                    derived: Default::default(),
                }),
            )
        }
        Item::Request(r) => MeasuredItem::Request {
            id: r.id.clone(),
            timestamp: r.timestamp,
            usage: r.usage,
            model: r.model.as_deref().map(Arc::from),
        },
        Item::Unseen { kind, tokens } => {
            text_item(Category::of_unseen(*kind), overhead_measure(*tokens), false)
        }
        Item::Compaction { summary } => {
            MeasuredItem::Compaction { summary: summary.as_deref().map(|s| meter.measure(s)) }
        }
        // The results it names are resolved once every item is measured (`cleared::resolve`).
        Item::Cleared(_) => MeasuredItem::Cleared {
            results: Arc::from([]),
            placeholder: meter.measure(CLEARED_PLACEHOLDER),
            thinking: Arc::from([]),
        },
    }
}

/// Where a conversation holds hidden reasoning (the Responses API's encrypted reasoning items), its
/// readable reasoning summaries are parts of those items and leave the context with them when a
/// human turn starts: every [`Category::Thinking`] text becomes turn-scoped. Claude's thinking
/// blocks (no hidden reasoning) stay as recorded (docs/unseen-context.md has both measurements).
fn scope_reasoning(items: &mut [MeasuredItem]) {
    let hidden =
        |i: &MeasuredItem| matches!(i, MeasuredItem::Text { category: Category::HiddenReasoning, .. });
    if !items.iter().any(hidden) {
        return;
    }
    for item in items {
        if let MeasuredItem::Text { category: Category::Thinking, turn_scoped, .. } = item {
            *turn_scoped = true;
        }
    }
}

fn text_item(category: Category, measure: TextSize, turn_start: bool) -> MeasuredItem {
    MeasuredItem::Text { category, measure, turn_start, turn_scoped: category == Category::HiddenReasoning }
}

/// The unrecorded item of `tokens` provider tokens.
fn overhead_item(tokens: Tokens) -> MeasuredItem {
    MeasuredItem::Text {
        category: Category::Unrecorded,
        measure: overhead_measure(tokens),
        turn_start: false,
        turn_scoped: false,
    }
}

pub mod cleared;
#[cfg(test)]
mod tests;
