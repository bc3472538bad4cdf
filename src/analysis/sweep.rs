//! The threshold sweep: which `SUMMARY_THRESHOLD` should the seed's split use under a given policy?
//!
//! Every conversation is replayed under one policy at each threshold (measured once, so the counting
//! cost does not grow with the number of thresholds: a replay only looks measures up). Per threshold:
//! the share of tool results split, the summary and content tokens the requests carry, the summary
//! overhead (a split result sends `summary` *and* `content` until the content is pruned), peak and
//! total input tokens, and the savings.
//!
//! **Savings** are against `none` with nothing split (`1 − total / baseline`), the history as the
//! tool produced it, so every threshold is charged its own summary overhead and the numbers of
//! different thresholds compare.
//!
//! **Cost**: every threshold's row is also priced as `recommend` prices a pair: the whole bill in
//! USD at each request's model price with the prompt cache ([`super::cost::cost_usd_of_run`]), so
//! the tolerance can be said in money. Each conversation's bill is rounded to whole pico-USD and
//! the rows add those integers, so a sum is the same whatever order the files are added in.
//!
//! **Recommendation** ([`choice`]): the largest threshold whose savings stay within `tolerance`
//! (relative, default 5%) of the best threshold's, said in input tokens and USD too, because a
//! larger threshold leaves more outputs whole (fewer lossy summaries for the model) for almost the
//! same saving. Then, for the tools whose outputs dominate, the same recommendation with only that
//! tool's threshold varied (every other tool kept at the overall recommendation), which shows where
//! a per-tool threshold would move. Pure: no I/O.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::compare::PolicySource;
use super::cost::{CacheModel, cost_usd_of_run};
use crate::measure::{MeasuredConversation, MeasuredItem, MeasuredResult, ResultSizes};
use crate::model::Tokens;
use crate::policy::{Content, Edit, Policy, PolicySpec, View};
use crate::replay::{Keep, replay_forked};
use crate::result::Run;
use crate::tokens::Meter;

mod choice;
mod per_tool;

use choice::recommend_if_any;
pub use choice::{recommend, recommend_tool, usd};
use per_tool::tool_totals_with;
pub use per_tool::{Speculation, ToolRows, ToolTotals, finish, tool_rows, tool_totals};

/// The thresholds swept when none are given: 0, then 64 bytes to 64 KiB, doubling.
pub const DEFAULT_THRESHOLDS: &str = "0,64..65536:x2";
/// The default relative tolerance of the recommendation.
pub const DEFAULT_TOLERANCE: f64 = 0.05;
/// How many dominant tools get their own recommendation by default.
pub const DEFAULT_TOP_TOOLS: usize = 5;
/// The name used for results whose tool is not recorded.
pub const UNNAMED_TOOL: &str = "(unnamed)";

/// Parses a threshold list: comma-separated numbers and ranges `A..B:xK` (geometric, factor K ≥ 2)
/// or `A..B:+K` (arithmetic, step K ≥ 1), in bytes. The result is sorted and deduplicated.
pub fn parse_thresholds(spec: &str) -> Result<Vec<usize>, String> {
    const MAX: usize = 1000;
    let mut out = BTreeSet::new();
    let number = |s: &str| -> Result<usize, String> {
        crate::spec::parse_size_usize(s).map_err(|e| format!("{e} (in `{spec}`)"))
    };
    for part in spec.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(format!("empty item in threshold list `{spec}`"));
        }
        let Some((range, step)) = part.split_once("..") else {
            out.insert(number(part)?);
            continue;
        };
        let (end, step) = step
            .split_once(':')
            .ok_or_else(|| format!("range `{part}` needs a step: `A..B:xK` (multiply) or `A..B:+K` (add)"))?;
        let (mut at, end) = (number(range)?, number(end)?);
        if at > end {
            return Err(format!("range `{part}` runs backwards"));
        }
        let (geometric, k) = match (step.strip_prefix('x'), step.strip_prefix('+')) {
            (Some(k), _) => (true, number(k)?),
            (_, Some(k)) => (false, number(k)?),
            _ => return Err(format!("step `{step}` in `{part}` must be xK or +K")),
        };
        if (geometric && (k < 2 || at == 0)) || (!geometric && k == 0) {
            return Err(format!(
                "range `{part}` never advances (a geometric range needs a start above 0 and x2 or more)"
            ));
        }
        while at <= end {
            out.insert(at);
            if out.len() > MAX {
                return Err(format!("`{spec}` gives more than {MAX} thresholds"));
            }
            at = if geometric { at.saturating_mul(k) } else { at.saturating_add(k) };
            if at == usize::MAX {
                break;
            }
        }
    }
    if out.len() > MAX {
        return Err(format!("`{spec}` gives more than {MAX} thresholds"));
    }
    Ok(out.into_iter().collect())
}

/// What to sweep.
#[derive(Debug, Clone)]
pub struct SweepSettings {
    /// Thresholds in bytes (any order; swept ascending).
    pub thresholds: Vec<usize>,
    /// The policy replayed at every threshold.
    pub policy: PolicySpec,
    /// Relative tolerance of the recommendation (0.05 = within 5% of the best savings).
    pub tolerance: f64,
    /// How many dominant tools get their own recommendation.
    pub top_tools: usize,
    /// How the rows are priced (`cost_usd`): `recommend`'s prices and cache lifetime.
    pub cache: CacheModel,
}

/// One threshold of the sweep, summed over every conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepRow {
    /// `SUMMARY_THRESHOLD` in bytes.
    pub threshold: usize,
    /// Tool results.
    pub tool_results: usize,
    /// Of them, split into summary + content.
    pub split_results: usize,
    /// `split_results / tool_results`.
    pub split_share: f64,
    /// Summary tokens of split results, summed over the requests that carry them (they stay resident
    /// after a prune).
    pub summary_tokens: Tokens,
    /// Content tokens, summed over the requests that carry them.
    pub content_tokens: Tokens,
    /// Summary tokens sent while the result's content is also sent (what splitting adds before a
    /// prune), summed over requests.
    pub overhead_tokens: Tokens,
    /// Largest context of any request.
    pub peak_context_tokens: Tokens,
    /// Sum of every request's context.
    pub total_input_tokens: Tokens,
    /// Requests before which the policy changed the context.
    pub prune_events: usize,
    /// `1 − total_input_tokens / baseline`, the baseline being `none` with nothing split.
    pub savings: f64,
    /// The whole bill in USD with the prompt cache, each conversation's rounded to a pico-USD
    /// (`recommend`'s pricing); absent in the per-tool rows, which are not priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// A recommended threshold and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recommendation {
    /// The recommended threshold (bytes).
    pub threshold: usize,
    /// Its savings.
    pub savings: f64,
    /// The threshold with the largest savings (the largest one on a tie).
    pub best_threshold: usize,
    /// Its savings.
    pub best_savings: f64,
    /// The relative tolerance used.
    pub tolerance: f64,
    /// The tolerance in input tokens: the most a threshold may send beyond the best's and be
    /// within it (`tolerance × best's savings × baseline`, rounded down; for one tool, its own
    /// savings above the never-split row's).
    pub tolerance_tokens: Tokens,
    /// Input tokens the recommended threshold sends beyond the best's.
    pub extra_input_tokens: Tokens,
    /// What the recommended threshold's bill is beyond the best's, in USD (negative: it costs
    /// less); absent where the rows are not priced (per tool).
    pub extra_cost_usd: Option<f64>,
    /// The next larger threshold tried and its savings, if any.
    pub next: Option<(usize, f64)>,
    /// The reason in words.
    pub reason: String,
}

/// How the recommendation moves when only one tool's threshold varies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolRecommendation {
    /// Tool name.
    pub tool: String,
    /// Results of this tool.
    pub results: usize,
    /// Real tokens of its outputs, each counted once.
    pub output_tokens: Tokens,
    /// Its share of all tool-output tokens.
    pub output_share: f64,
    /// Savings with this tool's outputs never split (the others at the overall recommendation): the
    /// zero point of the tool's own contribution.
    pub unsplit_savings: f64,
    /// The recommendation for this tool, if it has any result.
    pub recommendation: Option<Recommendation>,
    /// The sweep of this tool's threshold.
    pub rows: Vec<SweepRow>,
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// The policy spec.
    pub policy: String,
    /// Conversations swept.
    pub conversations: usize,
    /// Requests per replay.
    pub requests: usize,
    /// Total input tokens under `none` with nothing split (the savings baseline).
    pub baseline_total_tokens: Tokens,
    /// Peak context under `none` with nothing split.
    pub baseline_peak_tokens: Tokens,
    /// The bill in USD under `none` with nothing split (`recommend`'s baseline `cost_usd`).
    pub baseline_cost_usd: f64,
    /// One row per threshold, ascending.
    pub rows: Vec<SweepRow>,
    /// The recommendation (absent when there is nothing to sweep).
    pub recommendation: Option<Recommendation>,
    /// Per dominant tool, largest share first.
    pub per_tool: Vec<ToolRecommendation>,
}

/// Watches a policy's view to sum, over the requests, the summary tokens of the split results in
/// the context, the summary overhead (summaries of split results whose content is sent) and the
/// content tokens sent.
///
/// Kept as running sums, so a request costs what its new results and its own edits cost, not a
/// walk over the whole context (which made a sweep quadratic in the conversation: 1.5 s for a
/// trace of 2,112 requests that a replay reads in 0.1 s). Results only join the context at its
/// new end and leave it all at once at a compaction; a summary never changes; a sticky policy's
/// view shows its earlier edits, which take a present content away for good; a non-sticky
/// policy's view never shows them, so its contents stay present and only this request's edits
/// (with the previous request's after [`Edit::KeepPrevious`]) take some away.
struct Observed {
    inner: Box<dyn Policy>,
    summary: Tokens,
    overhead: Tokens,
    /// Content tokens the requests carry (each request's `tool_contents`).
    contents: Tokens,
    /// Compactions seen (a new one starts an empty context).
    compactions: usize,
    /// Index of the first result not yet taken into the sums below.
    next: usize,
    /// Summary tokens of the split results in the context.
    split_summaries: Tokens,
    /// Summary and content tokens of the results whose content the view shows present.
    present: (Tokens, Tokens),
    /// For a non-sticky policy: the results its edits took away before the previous request
    /// (which [`Edit::KeepPrevious`] keeps), ascending, and their summary and content tokens.
    previous: Vec<usize>,
    previous_tokens: (Tokens, Tokens),
    /// The results this request's edits take away, ascending (kept to reuse its room).
    new: Vec<usize>,
}

impl Observed {
    fn new(inner: Box<dyn Policy>) -> Self {
        Observed {
            inner,
            summary: 0,
            overhead: 0,
            contents: 0,
            compactions: 0,
            next: 0,
            split_summaries: 0,
            present: (0, 0),
            previous: Vec::new(),
            previous_tokens: (0, 0),
            new: Vec::new(),
        }
    }

    /// A copy of the counts and of the policy they watch, in their state now ([`Policy::fork`]);
    /// `None` when that policy cannot be copied.
    fn fork(&self) -> Option<Observed> {
        Some(Observed {
            inner: self.inner.fork()?,
            previous: self.previous.clone(),
            new: Vec::new(),
            ..*self
        })
    }
}

/// Summary and content tokens of result `index` when the view shows its content present.
fn present_tokens(view: &View<'_>, index: usize) -> Option<(Tokens, Tokens)> {
    let r = view.result(index)?;
    match r.content {
        Content::Present(c) => Some((r.summary.tokens, c.tokens)),
        _ => None,
    }
}

impl Policy for Observed {
    fn capabilities(&self) -> crate::policy::Capabilities {
        self.inner.capabilities()
    }

    fn compact(&mut self, view: &View<'_>) -> Option<crate::policy::compact::Compaction> {
        self.inner.compact(view)
    }

    fn report(&self) -> crate::policy::PolicyReport {
        self.inner.report()
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        if view.compactions != self.compactions {
            self.compactions = view.compactions;
            self.split_summaries = 0;
            self.present = (0, 0);
            self.previous.clear();
            self.previous_tokens = (0, 0);
        }
        let first = view.results.first().map_or(self.next, |r| r.index);
        for r in &view.results[view.position(self.next)..] {
            if r.original.is_some() {
                self.split_summaries += r.summary.tokens;
            }
            if let Content::Present(c) = r.content {
                self.present.0 += r.summary.tokens;
                self.present.1 += c.tokens;
            }
        }
        self.next = self.next.max(first + view.results.len());

        let start = edits.len();
        self.inner.before_request(view, edits);
        // What this request's edits take away.
        let mut new = std::mem::take(&mut self.new);
        new.clear();
        new.extend(edits[start..].iter().filter_map(|e| match e {
            Edit::Prune(i) | Edit::Replace(i, _) => Some(*i),
            Edit::ClearCall(..) | Edit::KeepPrevious => None,
        }));
        new.sort_unstable();
        new.dedup();
        let mut removed = (0, 0);
        let take = |index: usize, removed: &mut (Tokens, Tokens)| {
            if let Some((summary, content)) = present_tokens(view, index) {
                removed.0 += summary;
                removed.1 += content;
            }
        };
        if self.inner.capabilities().sticky {
            // The view shows earlier edits: these take the contents away from now on.
            for &i in &new {
                take(i, &mut removed);
            }
        } else {
            if edits[start..].contains(&Edit::KeepPrevious) {
                removed = self.previous_tokens;
                for &i in &new {
                    if let Err(at) = self.previous.binary_search(&i) {
                        self.previous.insert(at, i);
                        take(i, &mut removed);
                    }
                }
            } else {
                for &i in &new {
                    take(i, &mut removed);
                }
                std::mem::swap(&mut self.previous, &mut new);
            }
            self.previous_tokens = removed;
        }
        self.new = new;
        self.summary += self.split_summaries;
        self.overhead += self.present.0 - removed.0;
        self.contents += self.present.1 - removed.1;
        if self.inner.capabilities().sticky {
            self.present.0 -= removed.0;
            self.present.1 -= removed.1;
        }
    }
}

/// Replays every conversation at `threshold` under `spec` and sums one sweep row (savings left 0),
/// with its bill in pico-USD when `cache` prices it (else 0).
fn row_at(
    conversations: &[&MeasuredConversation],
    threshold: usize,
    spec: &dyn PolicySource,
    meter: &Meter,
    cache: Option<&CacheModel>,
) -> (SweepRow, u128) {
    rows_at(conversations, &[threshold], spec, meter, cache).remove(0)
}

/// One sweep row per threshold (savings left 0), each with its bill in pico-USD when `cache`
/// prices the runs (else 0). Each conversation is replayed once per distinct split: thresholds
/// that split the same outputs replay identically ([`MeasuredConversation::splits_at`]), and the
/// replays of its distinct splits share their common prefix ([`replay_forked`]). Every
/// conversation is one parallel task. Rows are integer sums and maxima, added up in conversation
/// order, so the result does not depend on the thread count.
fn rows_at(
    conversations: &[&MeasuredConversation],
    thresholds: &[usize],
    spec: &dyn PolicySource,
    meter: &Meter,
    cache: Option<&CacheModel>,
) -> Vec<(SweepRow, u128)> {
    let replayed: Vec<_> = conversations
        .par_iter()
        .map(|c| {
            let (slots, firsts) = c.split_plan(thresholds);
            (slots, conversation_rows(c, &firsts, spec, meter, cache))
        })
        .collect();
    thresholds
        .iter()
        .enumerate()
        .map(|(i, &threshold)| {
            let (mut row, mut pico) = (SweepRow { threshold, ..Default::default() }, 0u128);
            for (slots, parts) in &replayed {
                let (part, part_pico) = &parts[slots[i]];
                add_row(&mut row, part);
                pico = pico.saturating_add(*part_pico);
            }
            row.split_share = share(row.split_results, row.tool_results);
            (row, pico)
        })
        .collect()
}

/// One conversation's share of a sweep row at each of `thresholds` (ascending, each splitting `c`
/// differently), with its bill in pico-USD when `cache` prices it: one replay forked where the
/// thresholds first split a result differently ([`replay_forked`]), the same as a replay from the
/// start at each.
fn conversation_rows(
    c: &MeasuredConversation,
    thresholds: &[usize],
    spec: &dyn PolicySource,
    meter: &Meter,
    cache: Option<&CacheModel>,
) -> Vec<(SweepRow, u128)> {
    let keep = if cache.is_some() { Keep::Priced } else { Keep::Summary };
    let fresh = || Observed::new(spec.fresh());
    let runs = replay_forked(c, thresholds, &fresh, &Observed::fork, meter, keep);
    let mut rows = vec![(SweepRow::default(), 0); thresholds.len()];
    for forked in runs {
        let observed = &forked.policy;
        let mut row = SweepRow {
            summary_tokens: observed.summary,
            overhead_tokens: observed.overhead,
            content_tokens: observed.contents,
            ..SweepRow::default()
        };
        add_run(&mut row, &forked.run);
        let pico = cache.map_or(0, |cache| pico_usd(cost_usd_of_run(&forked.run.rows, cache)));
        for i in forked.thresholds {
            rows[i] = (row.clone(), pico);
        }
    }
    rows
}

/// USD in whole pico-USD (rounded; a bill is never negative, so below 0 is 0).
fn pico_usd(usd: f64) -> u128 {
    (usd * 1e12).round() as u128
}

/// Pico-USD in USD.
fn usd_of_pico(pico: u128) -> f64 {
    pico as f64 / 1e12
}

fn add_row(row: &mut SweepRow, part: &SweepRow) {
    row.tool_results += part.tool_results;
    row.split_results += part.split_results;
    row.summary_tokens += part.summary_tokens;
    row.content_tokens += part.content_tokens;
    row.overhead_tokens += part.overhead_tokens;
    row.peak_context_tokens = row.peak_context_tokens.max(part.peak_context_tokens);
    row.total_input_tokens += part.total_input_tokens;
    row.prune_events += part.prune_events;
}

fn add_run(row: &mut SweepRow, run: &Run) {
    row.tool_results += run.summary.tool_results;
    row.split_results += run.summary.split_results;
    row.peak_context_tokens = row.peak_context_tokens.max(run.summary.peak_context_tokens);
    row.total_input_tokens += run.summary.total_input_tokens;
    row.prune_events += run.summary.prune_events;
}

fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

fn savings(total: Tokens, baseline: Tokens) -> f64 {
    if baseline == 0 { 0.0 } else { 1.0 - total as f64 / baseline as f64 }
}

fn tool_of(r: &MeasuredResult) -> &str {
    r.name.as_deref().unwrap_or(UNNAMED_TOOL)
}

fn results(c: &MeasuredConversation) -> impl Iterator<Item = (&ResultSizes, &MeasuredResult)> {
    c.items.iter().filter_map(|i| match i {
        MeasuredItem::ToolResult(sizes, r) => Some((sizes, &**r)),
        _ => None,
    })
}

/// Tools by total output tokens (largest first, then by name): `(name, results, tokens)`.
pub fn tools_by_output(conversations: &[&MeasuredConversation]) -> Vec<(String, usize, Tokens)> {
    sorted_tools(output_by_tool(conversations))
}

/// Per tool: results and output tokens.
pub(crate) fn output_by_tool(conversations: &[&MeasuredConversation]) -> BTreeMap<String, (usize, Tokens)> {
    let mut by: BTreeMap<String, (usize, Tokens)> = BTreeMap::new();
    for (sizes, r) in conversations.iter().flat_map(|c| results(c)) {
        let e = by.entry(tool_of(r).to_owned()).or_default();
        e.0 += 1;
        e.1 += sizes.output().tokens;
    }
    by
}

pub(crate) fn sorted_tools(by: BTreeMap<String, (usize, Tokens)>) -> Vec<(String, usize, Tokens)> {
    let mut out: Vec<(String, usize, Tokens)> = by.into_iter().map(|(n, (k, t))| (n, k, t)).collect();
    out.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    out
}

/// A copy of `c` in which every raw result of another tool than `tool` is split as at `threshold`,
/// whatever threshold the copy is later replayed at. The copy shares the texts (`Arc`s).
pub fn fix_other_tools(c: &MeasuredConversation, tool: &str, threshold: usize) -> MeasuredConversation {
    let mut out = c.clone();
    for item in &mut out.items {
        let MeasuredItem::ToolResult(sizes, r) = item else { continue };
        if sizes.presplit.is_some() || tool_of(r) == tool {
            continue;
        }
        if r.text.len() > threshold {
            sizes.presplit = Some(true);
        } else {
            sizes.presplit = Some(false);
            sizes.summary = sizes.text;
            let r = std::sync::Arc::make_mut(r);
            r.summary = r.text.clone();
        }
    }
    out
}

/// Sweeps `settings.thresholds` over `conversations`: [`totals`], [`plan`], [`tool_totals`] and
/// [`finish`] over the same conversations, held in memory. A caller that cannot hold them runs the
/// passes file by file, adding the parts up ([`SweepTotals::add`], then [`Speculation`] and
/// [`ToolTotals::add_tool`] for the per-tool rows): every number in them is an integer sum or
/// maximum, so the result is the same bytes.
pub fn sweep(conversations: &[&MeasuredConversation], settings: &SweepSettings, meter: &Meter) -> Sweep {
    sweep_with(conversations, settings, &settings.policy, meter)
}

/// [`sweep`] under any policy, such as one written outside this crate: `policy` builds a fresh
/// policy per replay and labels the sweep; `settings.policy` is not used.
pub fn sweep_with(
    conversations: &[&MeasuredConversation],
    settings: &SweepSettings,
    policy: &dyn PolicySource,
    meter: &Meter,
) -> Sweep {
    let totals = totals_with(conversations, settings, policy, meter);
    let plan = plan(&totals, settings);
    let per_tool = tool_totals_with(conversations, &plan, settings, policy, meter);
    Sweep { policy: policy.label().to_owned(), ..finish(totals, &plan, per_tool, settings) }
}

/// The first pass of a sweep over some conversations: the baseline, every threshold's row and the
/// output of every tool, as integer sums and maxima ([`SweepTotals::add`] adds two parts up).
#[derive(Debug, Clone, Default)]
pub struct SweepTotals {
    conversations: usize,
    requests: usize,
    /// The baseline's row and bill in pico-USD.
    baseline: (SweepRow, u128),
    /// One per threshold, ascending, with its bill in pico-USD; `split_share` and `savings` are
    /// set by [`finish`].
    rows: Vec<(SweepRow, u128)>,
    tools: BTreeMap<String, (usize, Tokens)>,
}

/// Adds a priced row to another: integer sums, so in any order.
fn add_priced((row, pico): &mut (SweepRow, u128), (part, part_pico): &(SweepRow, u128)) {
    add_row(row, part);
    *pico = pico.saturating_add(*part_pico);
}

impl SweepTotals {
    /// Adds the totals of more conversations (of the same sweep).
    pub fn add(&mut self, other: SweepTotals) {
        if self.rows.is_empty() {
            self.rows = other.rows;
        } else {
            for (row, part) in self.rows.iter_mut().zip(&other.rows) {
                add_priced(row, part);
            }
        }
        add_priced(&mut self.baseline, &other.baseline);
        self.conversations += other.conversations;
        self.requests += other.requests;
        for (tool, (results, tokens)) in other.tools {
            let e = self.tools.entry(tool).or_default();
            e.0 += results;
            e.1 += tokens;
        }
    }
}

/// The thresholds of `settings`, ascending, each once.
fn swept(settings: &SweepSettings) -> Vec<usize> {
    let mut thresholds = settings.thresholds.clone();
    thresholds.sort_unstable();
    thresholds.dedup();
    thresholds
}

/// The first pass of a sweep over `conversations`.
pub fn totals(
    conversations: &[&MeasuredConversation],
    settings: &SweepSettings,
    meter: &Meter,
) -> SweepTotals {
    totals_with(conversations, settings, &settings.policy, meter)
}

/// [`totals`] under `policy` instead of `settings.policy`.
fn totals_with(
    conversations: &[&MeasuredConversation],
    settings: &SweepSettings,
    policy: &dyn PolicySource,
    meter: &Meter,
) -> SweepTotals {
    SweepTotals {
        conversations: conversations.len(),
        requests: conversations.iter().map(|c| c.requests()).sum(),
        baseline: row_at(
            conversations,
            usize::MAX,
            &crate::analysis::compare::Baseline,
            meter,
            Some(&settings.cache),
        ),
        rows: rows_at(conversations, &swept(settings), policy, meter, Some(&settings.cache)),
        tools: output_by_tool(conversations),
    }
}

/// What the second pass sweeps, decided from the first pass's totals of every conversation: the
/// dominant tools (largest output first), each swept with every other tool kept at the overall
/// recommendation. No tool when there is no recommendation.
#[derive(Debug, Clone, Default)]
pub struct SweepPlan {
    /// `(name, results, output tokens)`, at most `settings.top_tools`.
    pub tools: Vec<(String, usize, Tokens)>,
    /// The overall recommended threshold the other tools are split at.
    overall: usize,
    all_output: Tokens,
}

impl SweepPlan {
    /// The overall recommended threshold the other tools are split at.
    pub fn overall(&self) -> usize {
        self.overall
    }
}

/// `rows` with their shares and savings against `baseline`.
fn finished_rows(rows: &[SweepRow], baseline: Tokens) -> Vec<SweepRow> {
    rows.iter()
        .map(|r| SweepRow {
            split_share: share(r.split_results, r.tool_results),
            savings: savings(r.total_input_tokens, baseline),
            ..r.clone()
        })
        .collect()
}

/// [`finished_rows`] of priced rows, each with its bill in USD.
fn priced_rows(rows: &[(SweepRow, u128)], baseline: Tokens) -> Vec<SweepRow> {
    rows.iter()
        .map(|(r, pico)| SweepRow {
            split_share: share(r.split_results, r.tool_results),
            savings: savings(r.total_input_tokens, baseline),
            cost_usd: Some(usd_of_pico(*pico)),
            ..r.clone()
        })
        .collect()
}

/// Plans the per-tool pass from the totals of every conversation.
pub fn plan(totals: &SweepTotals, settings: &SweepSettings) -> SweepPlan {
    let baseline = totals.baseline.0.total_input_tokens;
    let rows = priced_rows(&totals.rows, baseline);
    let tools = sorted_tools(totals.tools.clone());
    let all_output = tools.iter().map(|t| t.2).sum();
    match recommend_if_any(&rows, settings.tolerance, baseline) {
        Some(overall) => SweepPlan {
            tools: tools.into_iter().take(settings.top_tools).collect(),
            overall: overall.threshold,
            all_output,
        },
        None => SweepPlan { all_output, ..SweepPlan::default() },
    }
}

#[cfg(test)]
mod tests;
