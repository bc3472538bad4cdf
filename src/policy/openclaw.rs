//! `openclaw` — OpenClaw session pruning in `cache-ttl` mode, with its defaults.
//!
//! Source: `openclaw/openclaw`, `docs/concepts/session-pruning.md`,
//! `src/agents/pi-extensions/context-pruning/settings.ts` (`DEFAULT_CONTEXT_PRUNING_SETTINGS`:
//! `ttl` 5 min, `keepLastAssistants` 3, `softTrimRatio` 0.3, `hardClearRatio` 0.5,
//! `minPrunableToolChars` 50,000, `softTrim {maxChars 4000, headChars 1500, tailChars 1500}`,
//! `hardClear {enabled, placeholder "[Old tool result content cleared]"}`), `pruner.ts`
//! (`pruneContextMessages`) and `extension.ts` (the TTL gate). ANCHORS.md §5.
//!
//! Mechanism: prune only when the last call is at least `ttl` old (the prompt cache has expired,
//! so rewriting the prefix costs nothing extra). The window is estimated in chars (chars ≈ tokens ×
//! 4; default 200,000 tokens). Tool results before the `keep_last_assistants`-th last assistant
//! message and after the first user message are prunable (never ones with images, never denied
//! tools). If the context is at least `soft_trim_ratio` of the window, every prunable result longer
//! than `soft_trim_max_chars` is cut to its head and tail with a note of its size; if it is still at
//! least `hard_clear_ratio` and the prunable results hold at least `min_prunable_tool_chars`, they
//! are replaced by the placeholder, oldest first, until the ratio falls under `hard_clear_ratio`.
//!
//! Decisions:
//! - **Persistence.** The documented behaviour projects the pruned messages for that one request
//!   ("pruning is transient per request"), so the next request, inside the TTL, re-sends the
//!   unpruned history (OpenClaw PR #137021: "pruning never saved a cache write and instead added
//!   one uncached request", fixed by persisting the projection). `sticky=false` (default)
//!   reproduces the documented behaviour, `sticky=true` the fix.
//! - **Chars in the seed's model.** A tool result's text is its summary and its content; only the
//!   content can be trimmed or cleared, so the chars a result frees and the prunable total are
//!   counted on the content, and the context on everything sent except the system prompt (which
//!   OpenClaw keeps out of the message list; so is `--overhead`, which stands for it and the tool
//!   schemas), plus 8,000 chars per tool-result image.
//! - **No timestamps.** Without them the TTL gate never opens: the policy never fires and reports a
//!   warning. The newer per-request `maxToolResultChars` cap is not part of the pruning the
//!   anchor describes and is left out; so is the later rule that prunes images beyond the newest 3.
//! - **Parameters are checked, not clamped.** OpenClaw clamps `softTrimRatio` and `hardClearRatio`
//!   to [0, 1] and ignores a value that is not a finite number (`computeEffectiveSettings`); a
//!   spec is checked instead, so NaN, infinities and ratios outside [0, 1] are errors naming the
//!   key, as is a `context_window` of 0 (no window to fill) or one whose chars overflow.
//! - **Incremental, with the same results.** OpenClaw recomputes the whole projection on every
//!   request; replayed that way (a soft trim measured and a placeholder written for every old
//!   result, every request) the replay is quadratic in the requests. The prunable results are a
//!   prefix of the context's results (those before the cutoff, which only moves forward) filtered
//!   by fixed properties, so each is looked at once, when the cutoff passes it (`Tracked`):
//!   running sums give the context after soft trims and the prunable chars, and a tree of the
//!   chars each clear frees (`PrefixMax`) finds where the oldest-first hard clear stops in
//!   O(log n). Only results this policy edited (sticky) can change their content, so only those
//!   are looked at again. Non-sticky, the set given before the previous request is kept
//!   ([`Edit::KeepPrevious`]) and only what changes is given, unless a result leaves the set; the
//!   replay is then near-linear. The tests replay generated conversations against the direct
//!   recomputation, which they keep.

use std::collections::BTreeSet;

use super::gemini::{utf16_head, utf16_tail};
use super::{
    Capabilities, Content, Edit, Estimator, GapWatch, Kind, List, Minutes, On, Param, Params, Policy,
    PolicyReport, ResultState, ToolPatterns, View,
};
use crate::error::SpecError;
use crate::model::Millis;
use crate::tokens::TextSize;

/// OpenClaw's default hard-clear placeholder.
pub const PLACEHOLDER: &str = "[Old tool result content cleared]";

/// OpenClaw counts each image block as this many chars.
const IMAGE_CHARS: u64 = 8_000;

/// The `openclaw` policy.
pub const KIND: Kind = Kind {
    name: "openclaw",
    about: "cache-ttl session pruning: after an idle gap of `ttl`, soft-trim then hard-clear old tool \
            results while the context fills the estimated window",
    source: "OpenClaw docs/concepts/session-pruning.md, src/agents/pi-extensions/context-pruning/ (ANCHORS.md §5)",
    params: &[
        super::ON_OUTPUT,
        Param {
            key: "ttl",
            default: "5m",
            about: "prune only when the previous request is at least this old (0 turns pruning off, as in OpenClaw)",
        },
        Param {
            key: "keep_last_assistants",
            default: "3",
            about: "tool results after the n-th last assistant message stay",
        },
        Param {
            key: "soft_trim_ratio",
            default: "0.3",
            about: "soft-trim when the context is this fraction of the window",
        },
        Param {
            key: "hard_clear_ratio",
            default: "0.5",
            about: "hard-clear while the context is at least this fraction",
        },
        Param {
            key: "min_prunable_tool_chars",
            default: "50000",
            about: "hard-clear only if prunable results hold this many chars",
        },
        Param {
            key: "soft_trim_max_chars",
            default: "4000",
            about: "results longer than this are soft-trimmed",
        },
        Param {
            key: "soft_trim_head_chars",
            default: "1500",
            about: "chars kept from the start by a soft trim",
        },
        Param {
            key: "soft_trim_tail_chars",
            default: "1500",
            about: "chars kept from the end by a soft trim",
        },
        Param { key: "hard_clear", default: "true", about: "whether hard-clearing is enabled" },
        Param { key: "placeholder", default: PLACEHOLDER, about: "text in place of a hard-cleared result" },
        Param { key: "context_window", default: "200000", about: "window in tokens (chars = tokens × 4)" },
        Param {
            key: "tools_allow",
            default: "",
            about: "only these tools are pruned (`*` wildcards; empty = all)",
        },
        Param {
            key: "tools_deny",
            default: "",
            about: "these tools are never pruned (`*` wildcards; deny wins)",
        },
        Param {
            key: "sticky",
            default: "false",
            about: "persist the pruned messages (PR #137021) instead of one request",
        },
    ],
    build: |p| {
        let params = OpenClaw::checked(p)?;
        let (allow, deny) = (ToolPatterns::new(&params.tools_allow), ToolPatterns::new(&params.tools_deny));
        Ok(super::builder(move || {
            let policy = OpenClaw::with_tools(&params, allow.clone(), deny.clone());
            super::with_on(params.on, Box::new(policy))
        }))
    },
};

/// The parameters of `openclaw` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct OpenClawParams {
    pub on: On,
    pub ttl: Minutes,
    pub keep_last_assistants: usize,
    pub soft_trim_ratio: f64,
    pub hard_clear_ratio: f64,
    pub min_prunable_tool_chars: u64,
    pub soft_trim_max_chars: usize,
    pub soft_trim_head_chars: usize,
    pub soft_trim_tail_chars: usize,
    pub hard_clear: bool,
    pub placeholder: String,
    pub context_window: u64,
    pub tools_allow: List,
    pub tools_deny: List,
    pub sticky: bool,
}

/// OpenClaw's cache-TTL session pruning.
pub struct OpenClaw {
    ttl: Millis,
    keep_last_assistants: usize,
    soft_trim_ratio: f64,
    hard_clear_ratio: f64,
    min_prunable_tool_chars: u64,
    max_chars: usize,
    head_chars: usize,
    tail_chars: usize,
    hard_clear: bool,
    placeholder: String,
    window_chars: u64,
    allow: ToolPatterns,
    deny: ToolPatterns,
    sticky: bool,
    gaps: GapWatch,
    state: Tracked,
}

/// A ratio of the window, from 0 to 1 (the range OpenClaw clamps it to).
fn fraction(p: &Params, key: &str, ratio: f64) -> Result<f64, SpecError> {
    if (0.0..=1.0).contains(&ratio) {
        Ok(ratio)
    } else {
        Err(p.bad(key, format!("must be a fraction from 0 to 1, got `{}`", p.text(key))))
    }
}

/// What a prunable result becomes for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Trim,
    Clear,
}

/// A prunable result's share of the request's sums, under the content it has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Part {
    /// Chars a soft trim adds to the context (negative: it frees them).
    soft: i64,
    /// Chars of its content after a soft trim (what counts as prunable).
    chars: u64,
    /// Chars a hard clear frees (0 when the clear loop skips it).
    freed: i64,
    /// Its content is whole and long enough to be soft-trimmed.
    trim: bool,
    /// The hard-clear loop clears it when it reaches it.
    clear: bool,
}

/// A result before the cutoff that the policy may prune.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Offset in [`View::results`] (the context's results).
    offset: usize,
    /// Index among the conversation's results (what edits name).
    index: usize,
    /// Chars of its soft-trimmed text, when its text is long enough to trim.
    trimmed: Option<u64>,
    part: Part,
}

/// Where the previous request's non-sticky set ended: results at `Entry` positions below `end`
/// cleared, the others up to `len` trimmed when they can be.
#[derive(Debug, Clone, Copy)]
struct Held {
    end: usize,
    len: usize,
}

/// What the policy keeps from request to request within one context (a compaction starts over).
#[derive(Debug, Default)]
struct Tracked {
    /// Compactions met when this context started.
    compactions: usize,
    /// Results of the context whose images are in `images`.
    imaged: usize,
    images: u64,
    /// Results of the context the cutoff has passed (each looked at once for `entries`).
    admitted: usize,
    /// The placeholder's measure and chars.
    placeholder: Option<(TextSize, u64)>,
    /// The prunable results, oldest first, and their parts summed.
    entries: Vec<Entry>,
    soft: i64,
    prunable: u64,
    freed: PrefixMax,
    /// Positions in `entries` of the parts that trim, and of those that clear.
    trims: BTreeSet<usize>,
    clears: BTreeSet<usize>,
    /// Positions edited before the previous requests (sticky): their content has changed.
    edited: Vec<usize>,
    /// The set the replay holds from the previous request (non-sticky).
    held: Option<Held>,
}

impl Tracked {
    fn push(&mut self, entry: Entry) {
        self.entries.push(Entry { part: Part::default(), ..entry });
        self.freed.push(0);
        self.set_part(self.entries.len() - 1, entry.part);
    }

    fn set_part(&mut self, position: usize, part: Part) {
        let old = std::mem::replace(&mut self.entries[position].part, part);
        self.soft += part.soft - old.soft;
        self.prunable = self.prunable - old.chars + part.chars;
        self.freed.set(position, part.freed);
        for (set, was, is) in
            [(&mut self.trims, old.trim, part.trim), (&mut self.clears, old.clear, part.clear)]
        {
            if was && !is {
                set.remove(&position);
            } else if is && !was {
                set.insert(position);
            }
        }
    }

    /// The fate of the entry at `position` when the clears end at `end`.
    fn fate(&self, position: usize, end: usize) -> Option<Fate> {
        let part = self.entries[position].part;
        if position < end { part.clear.then_some(Fate::Clear) } else { part.trim.then_some(Fate::Trim) }
    }

    /// What changes from the `held` set to the one clearing up to `end` (non-sticky: parts do not
    /// change), or `None` when a result leaves the set, which only a whole new set can say.
    fn changes(&self, held: Held, end: usize) -> Option<Vec<(usize, Fate)>> {
        let (low, high) = (end.min(held.end), end.max(held.end));
        let mut changes = Vec::new();
        for position in (low..high).chain(high.max(held.len)..self.entries.len()) {
            let before = if position < held.len { self.fate(position, held.end) } else { None };
            match (self.fate(position, end), before) {
                (None, Some(_)) => return None,
                (Some(fate), before) if Some(fate) != before => changes.push((position, fate)),
                _ => {}
            }
        }
        Some(changes)
    }
}

/// Sums and greatest prefix sums over a sequence of signed values that grows at the end, as a
/// segment tree: finds the first position where the running sum exceeds a bound in O(log n), after
/// any value changed in O(log n).
#[derive(Debug, Default)]
struct PrefixMax {
    /// Leaves (a power of two, or 0).
    width: usize,
    len: usize,
    /// Node `n` has children `2n` and `2n + 1`; leaf `i` is node `width + i`.
    sum: Vec<i64>,
    best: Vec<i64>,
}

/// The greatest prefix sum of an empty node: below any bound, and far from overflowing when added to.
const NO_PREFIX: i64 = i64::MIN / 4;

impl PrefixMax {
    fn push(&mut self, value: i64) {
        if self.len == self.width {
            let width = (2 * self.width).max(1);
            let mut sum = vec![0; 2 * width];
            let mut best = vec![NO_PREFIX; 2 * width];
            sum[width..width + self.len].copy_from_slice(&self.sum[self.width..self.width + self.len]);
            best[width..width + self.len].copy_from_slice(&self.best[self.width..self.width + self.len]);
            (self.width, self.sum, self.best) = (width, sum, best);
            for node in (1..width).rev() {
                self.pull(node);
            }
        }
        self.len += 1;
        self.set(self.len - 1, value);
    }

    fn set(&mut self, position: usize, value: i64) {
        let mut node = self.width + position;
        (self.sum[node], self.best[node]) = (value, value);
        while node > 1 {
            node /= 2;
            self.pull(node);
        }
    }

    fn pull(&mut self, node: usize) {
        let (left, right) = (2 * node, 2 * node + 1);
        self.sum[node] = self.sum[left] + self.sum[right];
        self.best[node] = self.best[left].max(self.sum[left].saturating_add(self.best[right]));
    }

    /// The first position whose running sum (its value included) exceeds `bound`.
    fn first_above(&self, bound: i64) -> Option<usize> {
        if self.len == 0 || self.best[1] <= bound {
            return None;
        }
        let (mut node, mut before) = (1, 0i64);
        while node < self.width {
            let left = 2 * node;
            if before.saturating_add(self.best[left]) > bound {
                node = left;
            } else {
                before += self.sum[left];
                node = left + 1;
            }
        }
        Some(node - self.width)
    }
}

impl OpenClaw {
    /// The parameters of `p`, read and checked (the window in chars must fit a `u64`).
    fn checked(p: &Params) -> Result<OpenClawParams, SpecError> {
        let params: OpenClawParams = p.typed()?;
        let window = p.at_least("context_window", params.context_window, 1)?;
        window.checked_mul(4).ok_or_else(|| {
            p.bad("context_window", format!("must be at most {}, got {window}", u64::MAX / 4))
        })?;
        fraction(p, "soft_trim_ratio", params.soft_trim_ratio)?;
        fraction(p, "hard_clear_ratio", params.hard_clear_ratio)?;
        Ok(params)
    }

    /// A fresh policy with checked parameters.
    #[cfg(test)]
    fn new(p: &OpenClawParams) -> OpenClaw {
        OpenClaw::with_tools(p, ToolPatterns::new(&p.tools_allow), ToolPatterns::new(&p.tools_deny))
    }

    /// A fresh policy with checked parameters and its tool patterns compiled.
    fn with_tools(p: &OpenClawParams, allow: ToolPatterns, deny: ToolPatterns) -> OpenClaw {
        OpenClaw {
            ttl: p.ttl.0,
            keep_last_assistants: p.keep_last_assistants,
            soft_trim_ratio: p.soft_trim_ratio,
            hard_clear_ratio: p.hard_clear_ratio,
            min_prunable_tool_chars: p.min_prunable_tool_chars,
            max_chars: p.soft_trim_max_chars,
            head_chars: p.soft_trim_head_chars,
            tail_chars: p.soft_trim_tail_chars,
            hard_clear: p.hard_clear,
            placeholder: p.placeholder.clone(),
            window_chars: p.context_window * 4,
            allow,
            deny,
            sticky: p.sticky,
            gaps: GapWatch::default(),
            state: Tracked::default(),
        }
    }

    /// Chars of the text measured by `m`: its JavaScript length, or 4 × its tokens when deciding
    /// with a tokenizer.
    fn chars(view: &View<'_>, m: &TextSize) -> u64 {
        if view.anchored() { m.chars.utf16 } else { 4 * view.tokens(Estimator::Real, m) }
    }

    /// The context's share of the window.
    fn ratio(&self, chars: u64) -> f64 {
        chars as f64 / self.window_chars as f64
    }

    fn tool_prunable(&self, tool: &str) -> bool {
        (self.allow.is_empty() || self.allow.matches(tool)) && !self.deny.matches(tool)
    }

    /// `softTrimToolResultMessage`: head, `...`, tail and a note with the original size.
    fn soft_trim(&self, text: &str) -> Option<String> {
        let raw = text.encode_utf16().count();
        if raw <= self.max_chars || self.head_chars + self.tail_chars >= raw {
            return None;
        }
        let (head, tail) = (utf16_head(text, self.head_chars), utf16_tail(text, self.tail_chars));
        Some(format!(
            "{head}\n...\n{tail}\n\n[Tool result trimmed: kept first {} chars and last {} chars of {raw} chars.]",
            self.head_chars, self.tail_chars
        ))
    }

    /// Before the `keep_last_assistants`-th last assistant message: true of a prefix of the
    /// context's results, which only grows until a compaction.
    fn before_cutoff(&self, view: &View<'_>, r: &ResultState<'_>) -> bool {
        self.keep_last_assistants == 0
            || r.assistant_messages + self.keep_last_assistants <= view.assistant_messages
    }

    /// What never changes about a result: after the first user message, no images, a pruned tool.
    fn may_prune(&self, r: &ResultState<'_>) -> bool {
        r.turn >= 1 && r.result.images == 0 && self.tool_prunable(r.tool())
    }

    /// The share of a prunable result with content `content`.
    fn part(view: &View<'_>, content: Content, trimmed: Option<u64>, placeholder: (TextSize, u64)) -> Part {
        let (cleared, placeholder_chars) = placeholder;
        let clearing = |chars: u64| chars as i64 - placeholder_chars as i64;
        match content {
            Content::Present(c) => {
                let before = Self::chars(view, &c);
                let chars = trimmed.unwrap_or(before);
                let soft = chars as i64 - before as i64;
                Part { soft, chars, freed: clearing(chars), trim: trimmed.is_some(), clear: true }
            }
            // Cleared at an earlier request (sticky): clearing it again frees nothing, and an edit
            // that changes nothing is not one to give.
            Content::Replaced(p) if p == cleared => Part { chars: Self::chars(view, &p), ..Part::default() },
            Content::Replaced(p) => {
                let chars = Self::chars(view, &p);
                Part { chars, freed: clearing(chars), clear: true, ..Part::default() }
            }
            Content::None | Content::Pruned => Part::default(),
        }
    }

    /// Brings the tracked state up to `view`: images counted, results the cutoff passed admitted,
    /// results edited before (sticky) looked at again.
    fn track(&mut self, view: &View<'_>) {
        let placeholder = *self.state.placeholder.get_or_insert_with(|| {
            let m = view.measure(&self.placeholder);
            (m, Self::chars(view, &m))
        });
        for position in std::mem::take(&mut self.state.edited) {
            let entry = self.state.entries[position];
            let part = Self::part(view, view.results[entry.offset].content, entry.trimmed, placeholder);
            self.state.set_part(position, part);
        }
        while let Some(r) = view.results.get(self.state.admitted) {
            if !self.before_cutoff(view, r) {
                break;
            }
            let offset = self.state.admitted;
            self.state.admitted += 1;
            if !self.may_prune(r) || matches!(r.content, Content::None | Content::Pruned) {
                continue;
            }
            let trimmed = match r.content {
                Content::Present(_) => {
                    self.soft_trim(&r.result.text).map(|text| Self::chars(view, &view.measure(&text)))
                }
                _ => None,
            };
            let part = Self::part(view, r.content, trimmed, placeholder);
            self.state.push(Entry { offset, index: r.index, trimmed, part });
        }
    }

    /// Where the oldest-first hard clear of a context of `total` chars stops: entries before the
    /// returned position are cleared (those already cleared are skipped).
    fn clear_end(&self, total: u64) -> usize {
        // The ratio grows with the total, so the loop stops at the first entry reached with fewer
        // than `limit` chars left: once the chars freed so far exceed `total - limit`.
        let (mut limit, mut high) = (0, total);
        while limit < high {
            let middle = limit + (high - limit) / 2;
            if self.ratio(middle) < self.hard_clear_ratio {
                limit = middle + 1;
            } else {
                high = middle;
            }
        }
        let last = self.state.freed.first_above((total - limit) as i64);
        last.map_or(self.state.entries.len(), |last| last + 1)
    }

    /// The edit that gives the entry at `position` its fate.
    fn edit(&self, view: &View<'_>, position: usize, fate: Fate) -> Edit {
        let entry = self.state.entries[position];
        let text = match fate {
            Fate::Clear => self.placeholder.clone(),
            Fate::Trim => self
                .soft_trim(&view.results[entry.offset].result.text)
                .unwrap_or_else(|| unreachable!("result {} was found long enough to trim", entry.index)),
        };
        Edit::Replace(entry.index, text)
    }
}

impl Policy for OpenClaw {
    fn capabilities(&self) -> Capabilities {
        Capabilities { sticky: self.sticky, ..Capabilities::default() }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        if view.compactions != self.state.compactions {
            self.state = Tracked { compactions: view.compactions, ..Tracked::default() };
        }
        // A non-sticky set lasts one request: unless given again, the replay drops it.
        let held = self.state.held.take();
        let Some(gap) = self.gaps.gap(view) else { return };
        // A TTL of 0 turns the pruning off, as OpenClaw's extension does (`ttlMs <= 0`).
        if self.ttl <= 0 || gap < self.ttl || view.assistant_messages < self.keep_last_assistants {
            return;
        }
        let fresh = &view.results[self.state.imaged..];
        self.state.images += fresh.iter().map(|r| u64::from(r.result.images)).sum::<u64>();
        self.state.imaged = view.results.len();
        let mut sent = view.context;
        sent -= view.system;
        let total = Self::chars(view, &sent) + IMAGE_CHARS * self.state.images;
        if self.ratio(total) < self.soft_trim_ratio {
            return;
        }
        self.track(view);
        // The context after soft trims.
        let total = total.saturating_add_signed(self.state.soft);
        let end = if self.hard_clear
            && self.ratio(total) >= self.hard_clear_ratio
            && self.state.prunable >= self.min_prunable_tool_chars
        {
            self.clear_end(total)
        } else {
            0
        };
        let s = &self.state;
        if self.sticky {
            // Earlier edits are in the contents already: give the clears, and the trims of results
            // still whole; look at those results again before the next request.
            let changed: Vec<(usize, Fate)> = (s.clears.range(..end).map(|p| (*p, Fate::Clear)))
                .chain(s.trims.range(end..).map(|p| (*p, Fate::Trim)))
                .collect();
            edits.extend(changed.iter().map(|(p, fate)| self.edit(view, *p, *fate)));
            self.state.edited.extend(changed.iter().map(|(p, _)| *p));
            return;
        }
        match held.and_then(|held| s.changes(held, end)) {
            Some(changes) => {
                edits.push(Edit::KeepPrevious);
                edits.extend(changes.into_iter().map(|(p, fate)| self.edit(view, p, fate)));
            }
            None => {
                let fates = (0..s.entries.len()).filter_map(|p| Some((p, s.fate(p, end)?)));
                edits.extend(fates.map(|(p, fate)| self.edit(view, p, fate)));
            }
        }
        self.state.held = Some(Held { end, len: self.state.entries.len() });
    }

    fn report(&self) -> PolicyReport {
        let warnings = if self.ttl <= 0 {
            vec!["`ttl=0` turns OpenClaw's cache-ttl pruning off (as OpenClaw does): it never fires".into()]
        } else {
            self.gaps.warnings(KIND.name)
        };
        PolicyReport { warnings, ..PolicyReport::default() }
    }
}

#[cfg(test)]
mod tests;
