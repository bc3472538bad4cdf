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
//! **Recommendation**: the largest threshold whose savings stay within `tolerance` (relative, default
//! 5%) of the best threshold's, because a larger threshold leaves more outputs whole (fewer lossy
//! summaries for the model) for almost the same saving. Then, for the tools whose outputs dominate,
//! the same recommendation with only that tool's threshold varied (every other tool kept at the
//! overall recommendation), which shows where a per-tool threshold would move. Pure: no I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::compare::PolicySource;
use crate::measure::{MeasuredConversation, MeasuredItem, MeasuredResult, ResultSizes};
use crate::model::Tokens;
use crate::policy::{Content, Edit, Policy, PolicySpec, View};
use crate::replay::replay_summary;
use crate::result::Run;
use crate::tokens::Meter;

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
        s.trim().parse().map_err(|_| format!("`{}` in `{spec}` is not a number of bytes", s.trim()))
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
struct Observed<'p> {
    inner: &'p mut dyn Policy,
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
    /// (which [`Edit::KeepPrevious`] keeps), and their summary and content tokens.
    previous: BTreeSet<usize>,
    previous_tokens: (Tokens, Tokens),
}

impl<'p> Observed<'p> {
    fn new(inner: &'p mut dyn Policy) -> Self {
        Observed {
            inner,
            summary: 0,
            overhead: 0,
            contents: 0,
            compactions: 0,
            next: 0,
            split_summaries: 0,
            present: (0, 0),
            previous: BTreeSet::new(),
            previous_tokens: (0, 0),
        }
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

impl Policy for Observed<'_> {
    fn sticky(&self) -> bool {
        self.inner.sticky()
    }

    fn on(&self) -> crate::policy::On {
        self.inner.on()
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
        let new: BTreeSet<usize> = edits[start..]
            .iter()
            .filter_map(|e| match e {
                Edit::Prune(i) | Edit::Replace(i, _) => Some(*i),
                Edit::ClearCall(..) | Edit::KeepPrevious => None,
            })
            .collect();
        let mut removed = (0, 0);
        let take = |index: usize, removed: &mut (Tokens, Tokens)| {
            if let Some((summary, content)) = present_tokens(view, index) {
                removed.0 += summary;
                removed.1 += content;
            }
        };
        if self.inner.sticky() {
            // The view shows earlier edits: these take the contents away from now on.
            for &i in &new {
                take(i, &mut removed);
            }
        } else {
            if edits[start..].contains(&Edit::KeepPrevious) {
                removed = self.previous_tokens;
                for i in new {
                    if self.previous.insert(i) {
                        take(i, &mut removed);
                    }
                }
            } else {
                for &i in &new {
                    take(i, &mut removed);
                }
                self.previous = new;
            }
            self.previous_tokens = removed;
        }
        self.summary += self.split_summaries;
        self.overhead += self.present.0 - removed.0;
        self.contents += self.present.1 - removed.1;
        if self.inner.sticky() {
            self.present.0 -= removed.0;
            self.present.1 -= removed.1;
        }
    }
}

/// Replays every conversation at `threshold` under `spec` and sums one sweep row (savings left 0).
fn row_at(
    conversations: &[&MeasuredConversation],
    threshold: usize,
    spec: &dyn PolicySource,
    meter: &Meter,
) -> SweepRow {
    rows_at(conversations, &[threshold], spec, meter).remove(0)
}

/// One sweep row per threshold (savings left 0). Each conversation is replayed once per distinct
/// split: thresholds that split the same outputs replay identically
/// ([`MeasuredConversation::splits_at`]). Every (conversation, distinct split) replay is one
/// parallel task, so one long conversation's replays are shared out too. Rows are sums and maxima,
/// added up in conversation order, so the result does not depend on the thread count.
fn rows_at(
    conversations: &[&MeasuredConversation],
    thresholds: &[usize],
    spec: &dyn PolicySource,
    meter: &Meter,
) -> Vec<SweepRow> {
    let plans: Vec<(Vec<usize>, Vec<usize>)> =
        conversations.par_iter().map(|c| c.split_plan(thresholds)).collect();
    let tasks: Vec<(usize, usize)> =
        plans.iter().enumerate().flat_map(|(k, (_, firsts))| firsts.iter().map(move |&t| (k, t))).collect();
    let replayed: Vec<SweepRow> =
        tasks.par_iter().map(|&(k, t)| conversation_row(conversations[k], t, spec, meter)).collect();
    let mut starts = Vec::with_capacity(plans.len());
    let mut next = 0;
    for (_, firsts) in &plans {
        starts.push(next);
        next += firsts.len();
    }
    thresholds
        .iter()
        .enumerate()
        .map(|(i, &threshold)| {
            let mut row = SweepRow { threshold, ..Default::default() };
            for ((slots, _), start) in plans.iter().zip(&starts) {
                add_row(&mut row, &replayed[start + slots[i]]);
            }
            row.split_share = share(row.split_results, row.tool_results);
            row
        })
        .collect()
}

/// One conversation's share of a sweep row.
fn conversation_row(
    c: &MeasuredConversation,
    threshold: usize,
    spec: &dyn PolicySource,
    meter: &Meter,
) -> SweepRow {
    let mut row = SweepRow::default();
    let mut inner = spec.fresh();
    let mut observed = Observed::new(&mut *inner);
    let run = replay_summary(c, threshold, &mut observed, meter);
    row.summary_tokens = observed.summary;
    row.overhead_tokens = observed.overhead;
    row.content_tokens = observed.contents;
    add_run(&mut row, &run);
    row
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

/// [`recommend`], but none when the rows swept no tool result: with nothing to split, every
/// threshold "saves" 0% and the largest one would be recommended from no evidence.
fn recommend_if_any(rows: &[SweepRow], tolerance: f64) -> Option<Recommendation> {
    rows.iter().any(|r| r.tool_results > 0).then(|| recommend(rows, tolerance)).flatten()
}

/// The largest threshold whose savings are within `tolerance` (relative) of the best.
pub fn recommend(rows: &[SweepRow], tolerance: f64) -> Option<Recommendation> {
    let (i, chosen, best) = choose(rows, tolerance, 0.0)?;
    let next = rows.get(i + 1).map(|r| (r.threshold, r.savings));
    let reason = if best.savings <= 0.0 {
        format!(
            "no threshold saves input tokens (best: {} at {} bytes), so splitting does not pay off under \
             this policy on these traces; {} bytes is the largest threshold tried within {} of the best",
            pct(best.savings),
            best.threshold,
            chosen.threshold,
            pct(tolerance)
        )
    } else {
        let tail = match next {
            Some((t, s)) => format!("the next larger threshold tried, {t} bytes, saves {}", pct(s)),
            None => "it is the largest threshold tried".to_owned(),
        };
        let within = if chosen.threshold == best.threshold {
            "the best of all thresholds tried".to_owned()
        } else {
            format!(
                "within {} of the best ({} at {} bytes)",
                pct(tolerance),
                pct(best.savings),
                best.threshold
            )
        };
        format!(
            "{} bytes saves {} of input tokens, {within}, and leaves every output of up to {} bytes whole; {tail}",
            chosen.threshold,
            pct(chosen.savings),
            chosen.threshold
        )
    };
    Some(recommendation(rows, i, best, tolerance, reason))
}

/// The recommendation for one tool: the largest threshold that keeps the tool's own contribution
/// (savings minus `unsplit`, the savings with this tool never split) within `tolerance` of its best.
/// `unsplit_splits` is how many outputs that never-split row splits (the other tools'), so what a
/// row splits beyond it is this tool's.
pub fn recommend_tool(
    rows: &[SweepRow],
    tolerance: f64,
    tool: &str,
    unsplit: f64,
    unsplit_splits: usize,
) -> Option<Recommendation> {
    let (i, chosen, best) = choose(rows, tolerance, unsplit)?;
    let points = |v: f64| format!("{:.1} points", (v - unsplit) * 100.0);
    let split_here = chosen.split_results.saturating_sub(unsplit_splits);
    let reason = if best.savings <= unsplit && split_here == 0 {
        format!(
            "splitting {tool} outputs saves nothing under this policy; {} bytes keeps them whole",
            chosen.threshold
        )
    } else if best.savings <= unsplit {
        // A threshold tried that kept them whole would save what the never-split row saves, so be
        // within the tolerance of the best, and the chosen threshold would be at least as large.
        format!(
            "splitting {tool} outputs saves nothing under this policy, and every threshold tried splits \
             some of them ({split_here} still split at {} bytes, the largest within {} of the best); a \
             threshold above their largest output keeps them whole",
            chosen.threshold,
            pct(tolerance)
        )
    } else {
        format!(
            "splitting {tool} outputs adds at best {} of savings (at {} bytes); {} bytes keeps {} of it, \
             within {} of that best",
            points(best.savings),
            best.threshold,
            chosen.threshold,
            points(chosen.savings),
            pct(tolerance)
        )
    };
    Some(recommendation(rows, i, best, tolerance, reason))
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// `(index, chosen row, best row)`: the best savings (largest threshold on a tie) and the largest
/// threshold whose savings above `zero` are within `tolerance` of the best's.
fn choose(rows: &[SweepRow], tolerance: f64, zero: f64) -> Option<(usize, &SweepRow, &SweepRow)> {
    // `max_by` keeps the last of equal elements: the largest threshold on a tie.
    let best = rows.iter().max_by(|a, b| a.savings.total_cmp(&b.savings))?;
    let gain = best.savings - zero;
    let floor = best.savings - tolerance * gain.abs();
    let (i, chosen) = rows.iter().enumerate().rev().find(|(_, r)| r.savings >= floor)?;
    Some((i, chosen, best))
}

fn recommendation(
    rows: &[SweepRow],
    i: usize,
    best: &SweepRow,
    tolerance: f64,
    reason: String,
) -> Recommendation {
    Recommendation {
        threshold: rows[i].threshold,
        savings: rows[i].savings,
        best_threshold: best.threshold,
        best_savings: best.savings,
        tolerance,
        next: rows.get(i + 1).map(|r| (r.threshold, r.savings)),
        reason,
    }
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
fn output_by_tool(conversations: &[&MeasuredConversation]) -> BTreeMap<String, (usize, Tokens)> {
    let mut by: BTreeMap<String, (usize, Tokens)> = BTreeMap::new();
    for (sizes, r) in conversations.iter().flat_map(|c| results(c)) {
        let e = by.entry(tool_of(r).to_owned()).or_default();
        e.0 += 1;
        e.1 += sizes.output().tokens;
    }
    by
}

fn sorted_tools(by: BTreeMap<String, (usize, Tokens)>) -> Vec<(String, usize, Tokens)> {
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
    let per_tool = ToolTotals {
        per_tool: plan
            .tools
            .iter()
            .map(|(tool, _, _)| tool_rows_with(conversations, tool, plan.overall, settings, policy, meter))
            .collect(),
    };
    Sweep { policy: policy.label().to_owned(), ..finish(totals, &plan, per_tool, settings) }
}

/// The first pass of a sweep over some conversations: the baseline, every threshold's row and the
/// output of every tool, as integer sums and maxima ([`SweepTotals::add`] adds two parts up).
#[derive(Debug, Clone, Default)]
pub struct SweepTotals {
    conversations: usize,
    requests: usize,
    baseline: SweepRow,
    /// One per threshold, ascending; `split_share` and `savings` are set by [`finish`].
    rows: Vec<SweepRow>,
    tools: BTreeMap<String, (usize, Tokens)>,
}

impl SweepTotals {
    /// Adds the totals of more conversations (of the same sweep).
    pub fn add(&mut self, other: SweepTotals) {
        if self.rows.is_empty() {
            self.rows = other.rows;
        } else {
            for (row, part) in self.rows.iter_mut().zip(&other.rows) {
                add_row(row, part);
            }
        }
        add_row(&mut self.baseline, &other.baseline);
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
    let none = PolicySpec::parse("none").unwrap_or_else(|e| unreachable!("`none` is registered: {e}"));
    SweepTotals {
        conversations: conversations.len(),
        requests: conversations.iter().map(|c| c.requests()).sum(),
        baseline: row_at(conversations, usize::MAX, &none, meter),
        rows: rows_at(conversations, &swept(settings), policy, meter),
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

/// Plans the per-tool pass from the totals of every conversation.
pub fn plan(totals: &SweepTotals, settings: &SweepSettings) -> SweepPlan {
    let rows = finished_rows(&totals.rows, totals.baseline.total_input_tokens);
    let tools = sorted_tools(totals.tools.clone());
    let all_output = tools.iter().map(|t| t.2).sum();
    match recommend_if_any(&rows, settings.tolerance) {
        Some(overall) => SweepPlan {
            tools: tools.into_iter().take(settings.top_tools).collect(),
            overall: overall.threshold,
            all_output,
        },
        None => SweepPlan { all_output, ..SweepPlan::default() },
    }
}

/// The second pass of a sweep over some conversations: per planned tool, its rows and its row with
/// its outputs left whole ([`ToolTotals::add_tool`] adds a part to one tool's).
#[derive(Debug, Clone, Default)]
pub struct ToolTotals {
    per_tool: Vec<ToolRows>,
}

impl ToolTotals {
    /// Rows of nothing for every tool of `plan`, to add parts to tool by tool ([`ToolTotals::add_tool`]).
    pub fn empty(plan: &SweepPlan, settings: &SweepSettings) -> ToolTotals {
        ToolTotals { per_tool: plan.tools.iter().map(|_| no_rows(settings)).collect() }
    }

    /// Adds the rows of more conversations to the `k`th tool of the plan.
    pub fn add_tool(&mut self, k: usize, part: &ToolRows) {
        add_rows(&mut self.per_tool[k], part);
    }
}

/// One tool's rows in the per-tool pass: one per threshold, and the one with its outputs whole.
pub type ToolRows = (Vec<SweepRow>, SweepRow);

/// The rows of no conversation.
fn no_rows(settings: &SweepSettings) -> ToolRows {
    let rows = swept(settings).into_iter().map(|threshold| SweepRow { threshold, ..SweepRow::default() });
    (rows.collect(), SweepRow { threshold: usize::MAX, ..SweepRow::default() })
}

fn add_rows((rows, unsplit): &mut ToolRows, (parts, part): &ToolRows) {
    for (row, part) in rows.iter_mut().zip(parts) {
        add_row(row, part);
    }
    add_row(unsplit, part);
}

/// The second pass of a sweep over `conversations`: nothing to do when the plan has no tool.
pub fn tool_totals(
    conversations: &[&MeasuredConversation],
    plan: &SweepPlan,
    settings: &SweepSettings,
    meter: &Meter,
) -> ToolTotals {
    let per_tool = plan
        .tools
        .iter()
        .map(|(tool, _, _)| tool_rows(conversations, tool, plan.overall, settings, meter))
        .collect();
    ToolTotals { per_tool }
}

/// `tool`'s rows over `conversations`, every other tool split at `overall`.
pub fn tool_rows(
    conversations: &[&MeasuredConversation],
    tool: &str,
    overall: usize,
    settings: &SweepSettings,
    meter: &Meter,
) -> ToolRows {
    tool_rows_with(conversations, tool, overall, settings, &settings.policy, meter)
}

/// [`tool_rows`] under `policy` instead of `settings.policy`.
fn tool_rows_with(
    conversations: &[&MeasuredConversation],
    tool: &str,
    overall: usize,
    settings: &SweepSettings,
    policy: &dyn PolicySource,
    meter: &Meter,
) -> ToolRows {
    let fixed: Vec<MeasuredConversation> =
        conversations.par_iter().map(|c| fix_other_tools(c, tool, overall)).collect();
    let refs: Vec<&MeasuredConversation> = fixed.iter().collect();
    let rows = rows_at(&refs, &swept(settings), policy, meter);
    (rows, row_at(&refs, usize::MAX, policy, meter))
}

/// One tool's rows at one overall threshold over the files they cover (by their place).
type Swept = (ToolRows, Vec<bool>);

/// The per-tool pass done beside the first, for a caller that reads the inputs file by file and
/// does not hold them. A tool's rows depend on the plan (the overall recommendation, the dominant
/// tools), which depends on every file's first pass; so each file is swept under the plan of the
/// files offered so far, its guess ([`Speculation::offer`]), and only what the final plan needs
/// beyond the guesses is left for a second read ([`Speculation::settle`]). On a corpus whose
/// recommendation settles early, that is the few files read first; on a varied one whose largest
/// files move the recommendation, it can be most of the bytes, never more than a whole second
/// read. Rows are kept per (overall threshold, tool) with the files they cover; they are integer
/// sums and maxima, so the sweep is the same bytes whichever guesses held, in whatever order the
/// files came.
#[derive(Debug)]
pub struct Speculation {
    files: usize,
    /// The first pass of the files offered so far.
    running: Mutex<SweepTotals>,
    /// Per (overall threshold, tool): the rows so far, and which files they cover.
    swept: Mutex<BTreeMap<(usize, String), Swept>>,
}

impl Speculation {
    /// For `files` files, offered by their place among them.
    pub fn new(files: usize) -> Speculation {
        Speculation { files, running: Mutex::new(SweepTotals::default()), swept: Mutex::new(BTreeMap::new()) }
    }

    /// Adds file `index`'s first pass (`totals`, of `conversations`) to the files offered so far,
    /// plans from them, and sweeps the planned tools over `conversations` at the planned overall
    /// threshold. (Sweeping a tool or two beyond the plan, in case the ranking moves, cost 3% of a
    /// streamed sweep of the shared corpus and of 13 copies and spared no read: not done.)
    pub fn offer(
        &self,
        index: usize,
        conversations: &[&MeasuredConversation],
        totals: &SweepTotals,
        settings: &SweepSettings,
        meter: &Meter,
    ) {
        if conversations.is_empty() {
            return;
        }
        let guess = {
            let mut running = crate::lock(&self.running);
            running.add(totals.clone());
            plan(&running, settings)
        };
        for (tool, _, _) in &guess.tools {
            let rows = tool_rows(conversations, tool, guess.overall, settings, meter);
            let mut swept = crate::lock(&self.swept);
            let (sum, covered) = swept
                .entry((guess.overall, tool.clone()))
                .or_insert_with(|| (no_rows(settings), vec![false; self.files]));
            add_rows(sum, &rows);
            covered[index] = true;
        }
    }

    /// Once every file was offered: per tool of `plan`, the rows of the files swept under it, and
    /// per file that has conversations (`has_conversations`, by its place; ascending) the places
    /// in `plan.tools` of the tools still to sweep over it.
    pub fn settle(
        self,
        plan: &SweepPlan,
        settings: &SweepSettings,
        has_conversations: impl Fn(usize) -> bool,
    ) -> (ToolTotals, Vec<(usize, Vec<usize>)>) {
        let swept = self.swept.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut totals = ToolTotals::empty(plan, settings);
        let mut covered = Vec::with_capacity(plan.tools.len());
        for (k, (tool, _, _)) in plan.tools.iter().enumerate() {
            match swept.get(&(plan.overall, tool.clone())) {
                Some((rows, files)) => {
                    totals.add_tool(k, rows);
                    covered.push(Some(files));
                }
                None => covered.push(None),
            }
        }
        let left = (0..self.files)
            .filter(|&i| has_conversations(i))
            .map(|i| {
                let tools = (0..plan.tools.len()).filter(|&k| !covered[k].is_some_and(|f| f[i])).collect();
                (i, tools)
            })
            .filter(|(_, tools): &(usize, Vec<usize>)| !tools.is_empty())
            .collect();
        (totals, left)
    }
}

/// The sweep from the totals of both passes over every conversation.
pub fn finish(
    totals: SweepTotals,
    plan: &SweepPlan,
    per_tool: ToolTotals,
    settings: &SweepSettings,
) -> Sweep {
    let baseline = totals.baseline.total_input_tokens;
    let rows = finished_rows(&totals.rows, baseline);
    let recommendation = recommend_if_any(&rows, settings.tolerance);
    let per_tool = plan
        .tools
        .iter()
        .zip(per_tool.per_tool)
        .map(|((tool, count, tokens), (rows, unsplit))| {
            let rows = finished_rows(&rows, baseline);
            let unsplit_savings = savings(unsplit.total_input_tokens, baseline);
            ToolRecommendation {
                output_share: if plan.all_output == 0 {
                    0.0
                } else {
                    *tokens as f64 / plan.all_output as f64
                },
                recommendation: recommend_tool(
                    &rows,
                    settings.tolerance,
                    tool,
                    unsplit_savings,
                    unsplit.split_results,
                ),
                unsplit_savings,
                tool: tool.clone(),
                results: *count,
                output_tokens: *tokens,
                rows,
            }
        })
        .collect();
    Sweep {
        policy: settings.policy.as_str().to_owned(),
        conversations: totals.conversations,
        requests: totals.requests,
        baseline_total_tokens: baseline,
        baseline_peak_tokens: totals.baseline.peak_context_tokens,
        rows,
        recommendation,
        per_tool,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testing::{self, meter, request, result, user};
    use std::sync::atomic::Ordering;

    /// "hi" (2 tokens); a 100-byte `read` result (automatic summary 93 bytes); request; a 40-byte
    /// `ls` result (summary "1 lines | " + 40 + "…" = 53); request; two more requests.
    fn measured(meter: &Meter) -> MeasuredConversation {
        let items = vec![
            user("hi"),
            result("a", "read", "x".repeat(100)),
            request(None),
            result("b", "ls", "y".repeat(40)),
            request(None),
            request(None),
            request(None),
        ];
        testing::measured(items, meter)
    }

    fn settings(thresholds: Vec<usize>, spec: &str) -> SweepSettings {
        SweepSettings {
            thresholds,
            policy: PolicySpec::parse(spec).unwrap(),
            tolerance: DEFAULT_TOLERANCE,
            top_tools: 5,
        }
    }

    #[test]
    fn threshold_lists_take_numbers_and_ranges() {
        assert_eq!(parse_thresholds("256, 0,64").unwrap(), [0, 64, 256]);
        assert_eq!(parse_thresholds("64..1024:x2").unwrap(), [64, 128, 256, 512, 1024]);
        assert_eq!(parse_thresholds("0..300:+100,1000").unwrap(), [0, 100, 200, 300, 1000]);
        assert_eq!(parse_thresholds(DEFAULT_THRESHOLDS).unwrap().len(), 12);
        for bad in ["", "a", "64..16", "64..128", "0..64:x2", "1..9:x1", "1..9:+0", "1..9:y2", "0..100000:+1"]
        {
            assert!(parse_thresholds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sweep_numbers_match_a_hand_count() {
        let (meter, _) = meter();
        let m = measured(&meter);
        let s = sweep(&[&m], &settings(vec![200, 50, 16], "keep-turns:n=2"), &meter);
        // Baseline (none, nothing split): 102, 142, 142, 142.
        assert_eq!(s.baseline_total_tokens, 528);
        assert_eq!(s.baseline_peak_tokens, 142);
        let at: Vec<usize> = s.rows.iter().map(|r| r.threshold).collect();
        assert_eq!(at, [16, 50, 200]);
        // Threshold 16: both split. Contexts: 2+193=195; +53+40 → 288; request 2 prunes a (−100)
        // → 188; request 3 prunes b (−40) → 148. Total 819.
        let r = &s.rows[0];
        assert_eq!(
            (r.split_results, r.total_input_tokens, r.peak_context_tokens, r.prune_events),
            (2, 819, 288, 2)
        );
        // Summaries resident: 93, 93+53, 93+53, 93+53 = 531; overhead while content present:
        // 93, 93+53, 53 (a pruned before request 2), 0 = 292; contents: 100, 140, 40, 0 = 280.
        assert_eq!((r.summary_tokens, r.overhead_tokens, r.content_tokens), (531, 292, 280));
        assert!((r.savings - (1.0 - 819.0 / 528.0)).abs() < 1e-12);
        // Threshold 50: only a splits. 195, 235, 135, 135 = 700.
        let r = &s.rows[1];
        assert_eq!((r.split_results, r.total_input_tokens), (1, 700));
        assert_eq!((r.summary_tokens, r.overhead_tokens, r.content_tokens), (4 * 93, 2 * 93, 200));
        assert!((r.split_share - 0.5).abs() < 1e-12);
        // Threshold 200: nothing splits: the baseline itself.
        assert_eq!((s.rows[2].split_results, s.rows[2].total_input_tokens, s.rows[2].savings), (0, 528, 0.0));
        // Best is 200 (0%, the others cost more than they save), so it is recommended.
        let rec = s.recommendation.as_ref().unwrap();
        assert_eq!(rec.threshold, 200);
        assert!(rec.reason.contains("no threshold saves input tokens"), "{}", rec.reason);
    }

    #[test]
    fn rows_over_several_conversations_are_the_sums_of_each_swept_alone() {
        let (meter, _) = meter();
        // Conversations with different numbers of distinct splits (2, 1 and none).
        let a = measured(&meter);
        let b =
            testing::measured(vec![user("go"), result("c", "cat", "z".repeat(300)), request(None)], &meter);
        let c = testing::measured(vec![user("only text"), request(None), request(None)], &meter);
        let at = settings(vec![0, 16, 50, 200, 400], "keep-turns:n=1");
        let together = sweep(&[&a, &b, &c], &at, &meter);
        let alone: Vec<Sweep> = [&a, &b, &c].iter().map(|m| sweep(&[*m], &at, &meter)).collect();
        for (i, row) in together.rows.iter().enumerate() {
            let sum = |f: fn(&SweepRow) -> Tokens| alone.iter().map(|s| f(&s.rows[i])).sum::<Tokens>();
            assert_eq!(row.total_input_tokens, sum(|r| r.total_input_tokens), "at {}", row.threshold);
            assert_eq!(row.summary_tokens, sum(|r| r.summary_tokens), "at {}", row.threshold);
            assert_eq!(row.content_tokens, sum(|r| r.content_tokens), "at {}", row.threshold);
            let splits: usize = alone.iter().map(|s| s.rows[i].split_results).sum();
            assert_eq!(row.split_results, splits, "at {}", row.threshold);
        }
        assert_ne!(together.rows[0].total_input_tokens, together.rows[4].total_input_tokens);
    }

    #[test]
    fn the_recommendation_is_the_largest_threshold_within_tolerance_of_the_best() {
        let row = |threshold, savings| SweepRow { threshold, savings, ..Default::default() };
        let rows = [row(0, 0.50), row(64, 0.52), row(128, 0.50), row(256, 0.495), row(512, 0.40)];
        // Best 52% at 64; 5% of it is 2.6 points: 256 (49.5%) is within, 512 (40%) is not.
        let r = recommend(&rows, 0.05).unwrap();
        assert_eq!((r.threshold, r.best_threshold, r.next), (256, 64, Some((512, 0.40))));
        assert!(r.reason.starts_with(
            "256 bytes saves 49.5% of input tokens, within 5.0% of the best (52.0% at 64 bytes)"
        ));
        assert_eq!(recommend(&rows, 0.0).unwrap().threshold, 64);
        assert_eq!(recommend(&rows, 0.5).unwrap().threshold, 512);
        assert_eq!(recommend(&[], 0.05), None);
    }

    #[test]
    fn a_tool_whose_split_saves_nothing_is_kept_whole_only_by_a_threshold_that_splits_none_of_it() {
        let row = |threshold, savings, split_results| SweepRow {
            threshold,
            savings,
            split_results,
            ..Default::default()
        };
        // Never splitting the tool saves 30%, with 5 outputs of other tools split. Splitting it
        // saves less at every threshold; at 1024 none of its outputs is split any more.
        let rows = [row(256, 0.28, 9), row(512, 0.29, 7), row(1024, 0.30, 5)];
        let r = recommend_tool(&rows, 0.05, "Read", 0.30, 5).unwrap();
        assert_eq!(r.threshold, 1024);
        assert_eq!(
            r.reason,
            "splitting Read outputs saves nothing under this policy; 1024 bytes keeps them whole"
        );
        // Up to 512 only: every threshold tried still splits some, and the reason says so.
        let r = recommend_tool(&rows[..2], 0.05, "Read", 0.30, 5).unwrap();
        assert_eq!(r.threshold, 512);
        assert!(
            r.reason.contains("every threshold tried splits some of them (2 still split at 512 bytes"),
            "{}",
            r.reason
        );
        assert!(!r.reason.contains("keeps them whole;"), "{}", r.reason);
    }

    #[test]
    fn counting_cost_does_not_grow_with_the_number_of_thresholds() {
        let (meter, calls) = meter();
        let m = measured(&meter);
        let after_measuring = calls.load(Ordering::SeqCst);
        assert!(after_measuring > 0);
        let few = sweep(&[&m], &settings(vec![64], "keep-results:n=1"), &meter);
        assert_eq!(calls.load(Ordering::SeqCst), after_measuring, "a one-threshold sweep recounted");
        let many =
            sweep(&[&m], &settings(parse_thresholds("0..4096:+16").unwrap(), "keep-results:n=1"), &meter);
        assert_eq!(calls.load(Ordering::SeqCst), after_measuring, "a 257-threshold sweep recounted");
        assert_eq!(many.rows.len(), 257);
        assert_eq!(few.rows[0], many.rows.iter().find(|r| r.threshold == 64).unwrap().clone());
        // Every text was counted exactly once, when it was measured.
        assert_eq!(after_measuring, meter.distinct_texts());
    }

    #[test]
    fn per_tool_sweeps_vary_one_tool_and_keep_the_others_at_the_recommendation() {
        let (meter, _) = meter();
        let m = measured(&meter);
        let s = sweep(&[&m], &settings(vec![16, 50, 200], "keep-turns:n=2"), &meter);
        let names: Vec<&str> = s.per_tool.iter().map(|t| t.tool.as_str()).collect();
        assert_eq!(names, ["read", "ls"]);
        assert_eq!((s.per_tool[0].results, s.per_tool[0].output_tokens), (1, 100));
        assert!((s.per_tool[0].output_share - 100.0 / 140.0).abs() < 1e-12);
        // Varying only `ls` with `read` fixed at 200 (unsplit): threshold 16 splits ls alone.
        // Contexts: 102, 102+93, 102+93, 102+53 = 545 (ls pruned before request 3).
        let ls = &s.per_tool[1];
        assert_eq!(ls.rows[0].total_input_tokens, 102 + 195 + 195 + 155);
        assert_eq!(ls.rows[2].total_input_tokens, 528);
        assert_eq!(ls.recommendation.as_ref().unwrap().threshold, 200);
    }

    #[test]
    fn a_speculation_settles_to_the_held_sweep_whichever_guesses_held() {
        let (meter, _) = meter();
        // `long` gains from splitting and pruning its large outputs; `short` only pays the summary
        // overhead, so alone it recommends splitting nothing (its guess has the right tools, the
        // wrong threshold); the second file has no conversation.
        let mut items = vec![user("go")];
        for (k, tool) in ["cat", "grep", "cat", "find"].iter().enumerate() {
            items.push(result(&format!("c{k}"), tool, format!("{k} ").repeat(150)));
            items.push(request(None));
            items.push(user("next"));
        }
        items.extend([request(None), request(None), request(None)]);
        let long = testing::measured(items, &meter);
        let short = testing::measured(
            vec![
                user("hi"),
                result("a", "cat", "x".repeat(100)),
                request(None),
                result("b", "grep", "y".repeat(40)),
            ],
            &meter,
        );
        let files: Vec<Vec<&MeasuredConversation>> =
            vec![vec![&short], vec![], vec![&long], vec![&short, &long]];
        let mut at = settings(vec![0, 16, 50, 200, 400], "keep-turns:n=1");
        at.top_tools = 2;
        let all: Vec<&MeasuredConversation> = files.iter().flatten().copied().collect();
        let held = sweep(&all, &at, &meter);
        assert!(held.per_tool.len() == 2 && held.recommendation.as_ref().unwrap().threshold < 400);
        assert_eq!(sweep(&[&short], &at, &meter).recommendation.unwrap().threshold, 400, "short alone");
        let mut read_again = Vec::new();
        for order in [[0, 1, 2, 3], [2, 3, 0, 1], [1, 0, 3, 2], [3, 2, 1, 0]] {
            let speculation = Speculation::new(files.len());
            let mut totals_of_all = SweepTotals::default();
            for i in order {
                let part = totals(&files[i], &at, &meter);
                speculation.offer(i, &files[i], &part, &at, &meter);
                totals_of_all.add(part);
            }
            let plan = plan(&totals_of_all, &at);
            let (mut per_tool, left) = speculation.settle(&plan, &at, |i| !files[i].is_empty());
            for (i, tools) in &left {
                assert!(*i != 1, "a file without conversations is not read again");
                for &t in tools {
                    let rows = tool_rows(&files[*i], &plan.tools[t].0, plan.overall(), &at, &meter);
                    per_tool.add_tool(t, &rows);
                }
            }
            assert_eq!(finish(totals_of_all, &plan, per_tool, &at), held, "order {order:?}");
            read_again.push(left);
        }
        // `short` first guesses the threshold wrong and is read again. `long` first ranks `find`
        // second (a tie with `grep`, broken by name) where the final plan has `grep` (with
        // `short`'s): it is read again for `grep` alone. After both, every guess holds.
        let (short_both, long_grep) = ((0, vec![0, 1]), (2, vec![1]));
        assert_eq!(read_again, [vec![short_both.clone()], vec![long_grep], vec![short_both], vec![]]);
    }

    #[test]
    fn fixing_other_tools_keeps_their_split_at_any_threshold() {
        let (meter, _) = meter();
        let m = measured(&meter);
        let fixed = fix_other_tools(&m, "ls", 16);
        let none = PolicySpec::parse("none").unwrap();
        // read is split (fixed at 16) even when replayed at a huge threshold.
        let r = row_at(&[&fixed], 10_000, &none, &meter);
        assert_eq!(r.split_results, 1);
        let unsplit = fix_other_tools(&m, "ls", 1_000);
        assert_eq!(row_at(&[&unsplit], 0, &none, &meter).split_results, 1, "only ls splits");
        // Fixing how a raw output splits does not change what the tool produced (anchors that
        // measure the whole output see the same, not summary + text).
        let outputs = |c: &MeasuredConversation| -> Vec<crate::tokens::Measure> {
            results(c).map(|(sizes, _)| sizes.output()).collect()
        };
        assert_eq!(outputs(&fixed), outputs(&m));
        assert_eq!(outputs(&unsplit), outputs(&m));
    }
}
