//! The recommendation: which (policy, `SUMMARY_THRESHOLD`) to ship, in cost, against one baseline.
//!
//! Every conversation is replayed under each policy of a grid at each threshold of the sweep's
//! grid, on the calibrated replay (what [`crate::measure`] gave), and each run is priced with the
//! prompt-cache model of [`super::cost`]. The **baseline** is the conversation as recorded: `none`
//! with nothing split (the threshold `None`, the same baseline as the sweep's and the
//! comparison's savings). It is itself a candidate, so "ship nothing" is an answer when no pair
//! costs less. The recommendation is the cheapest candidate that meets the constraints: its peak
//! context within the window, and its reuse share (the share of pruned results used again later,
//! when an analysis supplies it) at most `max_reuse`. Ties go to the larger threshold (more outputs
//! left whole), then to the grid's order.
//!
//! Thresholds that split a conversation's outputs alike replay alike
//! ([`MeasuredConversation::split_plan`]), so each conversation is replayed once per policy and
//! distinct split, not once per cell. Each conversation's cells are kept (integer sums, maxima and
//! one cost each), so the grid adds up in input order and a bootstrap over conversations
//! ([`bootstrap`]) says how firm the answer is. Pure: no I/O.

mod bootstrap;
mod per_tool;
mod words;

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::compare::PolicySource;
use super::cost::{CacheModel, RunPricer, cost_usd_of_run};
use super::reuse::{Recording, RunReuse, replay_with_reuse};
use super::summarization::CompactionTotals;
use crate::measure::MeasuredConversation;
use crate::model::Tokens;
use crate::policy::{PolicySpec, Unfired, Unfireds};
use crate::replay::{Keep, replay_forked, replay_keeping};
use crate::result::Run;
use crate::tokens::Meter;

pub use bootstrap::{Interval, bootstrap};
pub use per_tool::{ToolChoice, add_tool_cells, choose_tools, dominant, tool_cells};
pub use words::signed_pct;

/// The default bound on the reuse share, applied when the share is known (25%).
pub const DEFAULT_MAX_REUSE: f64 = 0.25;
/// Bootstrap resamples over conversations.
pub const RESAMPLES: usize = 2000;
/// The bootstrap's seed: a fixed one, so the same input gives the same interval.
pub const SEED: u64 = 0x5eed_c7b0_d6e7;
/// How many runners-up are listed.
pub const RUNNERS_UP: usize = 5;

/// What to evaluate.
#[derive(Debug, Clone)]
pub struct RecommendSettings {
    /// Policies of the grid, in display order (the baseline is added; `none` here is `none` with
    /// the threshold's split).
    pub policies: Vec<PolicySpec>,
    /// Thresholds in bytes (swept ascending, each once).
    pub thresholds: Vec<usize>,
    /// How requests are priced.
    pub cache: CacheModel,
    /// Context window: a candidate whose peak context exceeds it is ruled out.
    pub window: Tokens,
    /// Upper bound on the reuse share, applied to candidates whose share is known.
    pub max_reuse: Option<f64>,
    /// How many dominant tools get their own threshold.
    pub top_tools: usize,
}

impl RecommendSettings {
    /// The thresholds, ascending, each once.
    pub fn swept(&self) -> Vec<usize> {
        let mut t = self.thresholds.clone();
        t.sort_unstable();
        t.dedup();
        t
    }
}

/// One run's totals: what a candidate is judged on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    /// Sum of every request's context.
    pub input_tokens: Tokens,
    /// The cache-aware cost.
    pub cost: f64,
    /// Largest context of any request.
    pub peak: Tokens,
    /// Requests before which the policy changed the context.
    pub prune_events: usize,
    /// Results the policy pruned, and of those the agent reused later ([`super::reuse`]); `None`
    /// where the conversation was measured without its reuse index.
    pub reuse: Option<(usize, usize)>,
    /// The run's compactions and summarisation calls (their cost is in `cost`).
    pub compaction: CompactionTotals,
    /// The triggers of the runs that did not fire ([`crate::policy::PolicyReport::unfired`]), and
    /// whether some run did not describe one.
    pub unfired: (Unfireds, bool),
}

impl Cell {
    fn add(&mut self, o: &Cell) {
        self.input_tokens += o.input_tokens;
        self.cost += o.cost;
        self.peak = self.peak.max(o.peak);
        self.prune_events += o.prune_events;
        self.compaction += o.compaction;
        for u in o.unfired.0.iter() {
            self.unfired.0.add(u);
        }
        self.unfired.1 |= o.unfired.1;
        self.reuse = match (self.reuse, o.reuse) {
            (Some(a), Some(b)) => Some((a.0 + b.0, a.1 + b.1)),
            (a, b) => a.or(b),
        };
    }

    /// The share of pruned results reused later (0 when nothing was pruned), where known.
    pub fn reuse_share(&self) -> Option<f64> {
        self.reuse.map(|(pruned, reused)| if pruned == 0 { 0.0 } else { reused as f64 / pruned as f64 })
    }
}

/// The cost of a run: the one function every cost of the recommendation goes through. The
/// recommendation ranks by it: `cost_usd` of [`super::cost::cost_of_run`] (to the bit), the whole
/// bill at each request's model price ([`super::prices`]; explicit `--prices` apply to every
/// model), in [`COST_UNIT`]. It reads the rows a pricing needs ([`Keep::Priced`]).
pub fn price(run: &Run, cache: &CacheModel) -> f64 {
    cost_usd_of_run(&run.rows, cache)
}

/// The unit of every cost of the recommendation.
pub const COST_UNIT: &str = "USD";

fn cost_unit() -> String {
    COST_UNIT.to_owned()
}

fn cell_of(run: &Run, reuse: Option<RunReuse>, unfired: Option<Unfired>, cost: f64) -> Cell {
    let mut all = Unfireds::default();
    if let Some(u) = &unfired {
        all.add(u);
    }
    Cell {
        unfired: (all, unfired.is_none()),
        input_tokens: run.summary.total_input_tokens,
        cost,
        peak: run.summary.peak_context_tokens,
        prune_events: run.summary.prune_events,
        reuse: reuse.map(|r| (r.pruned_results, r.reused_results)),
        compaction: run.summary.compaction,
    }
}

/// One conversation's share of the grid: its baseline and one cell per (policy, threshold),
/// policy-major, thresholds ascending.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConversationGrid {
    /// Requests of the conversation.
    pub requests: usize,
    /// `none` with nothing split.
    pub baseline: Cell,
    /// Policy-major, thresholds ascending.
    pub cells: Vec<Cell>,
    /// Per tool: results and output tokens.
    pub tools: BTreeMap<String, (usize, Tokens)>,
}

/// Replays `c` under `source` at `threshold` and prices it.
pub fn run_cell(
    c: &MeasuredConversation,
    threshold: usize,
    source: &dyn PolicySource,
    settings: &RecommendSettings,
    meter: &Meter,
) -> Cell {
    if c.reuse.built {
        let (run, reuse, unfired) = replay_with_reuse(c, threshold, source.fresh(), meter, Keep::Priced);
        return cell_of(&run, Some(reuse), unfired, price(&run, &settings.cache));
    }
    let mut policy = source.fresh();
    let run = replay_keeping(c, threshold, &mut *policy, meter, Keep::Priced);
    cell_of(&run, None, policy.report().unfired, price(&run, &settings.cache))
}

/// The grid of one conversation: every policy at every threshold, each distinct split replayed
/// once, the policies in parallel, each policy's splits forked from one replay where they part
/// ([`policy_cells`]).
pub fn grid_of(c: &MeasuredConversation, settings: &RecommendSettings, meter: &Meter) -> ConversationGrid {
    let thresholds = settings.swept();
    let (slots, firsts) = c.split_plan(&thresholds);
    let none = super::compare::Baseline;
    let mut replayed: Vec<Vec<Cell>> = (0..=settings.policies.len())
        .into_par_iter()
        .map(|p| match p {
            0 => vec![run_cell(c, usize::MAX, &none, settings, meter)],
            p => policy_cells(c, &firsts, &settings.policies[p - 1], settings, meter),
        })
        .collect();
    let baseline = std::mem::take(&mut replayed[0][0]);
    // Each distinct split's cell is copied to every threshold of it, and moved to the last.
    let mut last = vec![0; firsts.len()];
    for (k, &s) in slots.iter().enumerate() {
        last[s] = k;
    }
    let mut cells = Vec::with_capacity(settings.policies.len() * slots.len());
    for policy in &mut replayed[1..] {
        for (k, &s) in slots.iter().enumerate() {
            cells.push(if last[s] == k { std::mem::take(&mut policy[s]) } else { policy[s].clone() });
        }
    }
    ConversationGrid { requests: c.requests(), baseline, cells, tools: per_tool::output_by_tool(c) }
}

/// The cells of `c` under `source` at each of `thresholds` (ascending, each splitting `c`
/// differently), the same as [`run_cell`] at each: one replay forked where the thresholds first
/// split a result differently ([`replay_forked`]), each run then priced and its reuse measured. A
/// forked run's price goes on from the running total of the run it was forked from, at the rows
/// they share ([`RunPricer`]).
pub fn policy_cells(
    c: &MeasuredConversation,
    thresholds: &[usize],
    source: &dyn PolicySource,
    settings: &RecommendSettings,
    meter: &Meter,
) -> Vec<Cell> {
    let fresh = || Recording::new(source.fresh());
    let runs = replay_forked(c, thresholds, &fresh, &Recording::fork, meter, Keep::Priced);
    let mut cells = vec![Cell::default(); thresholds.len()];
    let mut pricer = RunPricer::new(&settings.cache);
    // By a run's first threshold: the row `from` it was priced from, and its bill after each of
    // its rows from `from` on (`[k]`: after `from + k` rows). Runs come in threshold order, so the
    // run a run was forked from (at a row at or after its own `from`) is priced before it.
    let mut running: Vec<(usize, Vec<f64>)> = vec![(0, Vec::new()); thresholds.len()];
    for forked in runs {
        let (reuse, unfired) = forked.policy.reuse(c, thresholds[forked.thresholds.start]);
        let (from, total) = match forked.forked_from {
            Some((t, shared)) => (shared, running[t].1[shared - running[t].0]),
            None => (0, 0.0),
        };
        let rows = &forked.run.rows;
        let mut totals = Vec::with_capacity(rows.len() + 1 - from);
        totals.push(total);
        let cost = pricer.cost_usd_from(rows, from, total, Some(&mut totals));
        running[forked.thresholds.start] = (from, totals);
        let cell = cell_of(&forked.run, c.reuse.built.then_some(reuse), unfired, cost);
        let Some(last) = forked.thresholds.clone().last() else { continue };
        for slot in &mut cells[forked.thresholds.start..last] {
            *slot = cell.clone();
        }
        cells[last] = cell;
    }
    cells
}

/// `none`, the baseline's policy.
pub fn baseline_policy() -> PolicySpec {
    PolicySpec::parse("none").unwrap_or_else(|e| unreachable!("`none` is registered: {e}"))
}

/// One (policy, threshold) over every conversation: the fields of the JSON contract.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// The policy spec.
    pub policy: String,
    /// `SUMMARY_THRESHOLD` in bytes; `null`: nothing split (the baseline).
    pub threshold: Option<usize>,
    /// Sum of every request's context.
    pub input_tokens: Tokens,
    /// The cache-aware cost, the whole bill in USD ([`price`]).
    #[serde(rename = "cost_usd")]
    pub cost: f64,
    /// Largest context of any request.
    pub peak_context_tokens: Tokens,
    /// Share of pruned results whose content was used again later; `null` until measured.
    pub reuse_share: Option<f64>,
    /// `1 − input_tokens / baseline input tokens`.
    pub savings: f64,
    /// `cost / baseline cost − 1` (negative is cheaper).
    pub cost_change: f64,
    /// Requests before which the policy changed the context.
    pub prune_events: usize,
    /// Peak within the window and reuse share within the bound (when known).
    pub meets_constraints: bool,
    /// Compactions the runs made (0 for a policy that does not compact; docs/compaction.md) and
    /// what they summarised; the summarisation calls' cost is in `cost`.
    #[serde(flatten)]
    pub compaction: CompactionTotals,
    /// Why the policy never fired at this threshold ([`crate::analysis::compare::never_fired`]):
    /// its trigger beside the most it measured; `null` when it fired, and for the baseline.
    #[serde(default)]
    pub never_fired_reason: Option<String>,
}

/// The recommended pair and the baseline it is measured against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommended {
    /// The recommended candidate.
    #[serde(flatten)]
    pub pick: Candidate,
    /// The conversations as recorded: `none`, nothing split.
    pub baseline: Candidate,
}

/// A candidate that lost, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunnerUp {
    /// The policy spec.
    pub policy: String,
    /// Its best threshold (`null`: nothing split).
    pub threshold: Option<usize>,
    /// Its cost beyond the recommendation's, in USD.
    #[serde(rename = "extra_cost_usd")]
    pub extra_cost: f64,
    /// Its input tokens beyond the recommendation's (negative: it sends fewer).
    pub extra_tokens: i64,
    /// Why it lost, in words.
    pub reason: String,
}

/// The whole recommendation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recommendation {
    /// Conversations evaluated.
    pub conversations: usize,
    /// Requests per replay.
    pub requests: usize,
    /// The unit of every cost: [`COST_UNIT`] (not in the JSON, whose costs say it in their names,
    /// `cost_usd`).
    #[serde(skip, default = "cost_unit")]
    pub cost_unit: String,
    /// The cache model.
    pub cache: CacheModel,
    /// The context window.
    pub window: Tokens,
    /// The bound on the reuse share.
    pub max_reuse: Option<f64>,
    /// The answer in one sentence.
    pub sentence: String,
    /// The answer (absent when no request was replayed).
    pub recommendation: Option<Recommended>,
    /// The best candidate of each other policy, and the recommended policy's next best, cheapest
    /// first.
    pub runners_up: Vec<RunnerUp>,
    /// Bootstrap interval over conversations (absent with fewer than two).
    pub interval: Option<Interval>,
    /// Per dominant tool, its own cheapest threshold under the recommended policy.
    pub per_tool: Vec<ToolChoice>,
    /// Every pair tried, the baseline first, then policy-major with thresholds ascending.
    pub candidates: Vec<Candidate>,
}

/// Every conversation's grid added up (in the order given).
pub fn add_up(grids: &[ConversationGrid], cells: usize) -> ConversationGrid {
    let mut sum = ConversationGrid { cells: vec![Cell::default(); cells], ..Default::default() };
    for g in grids {
        sum.requests += g.requests;
        sum.baseline.add(&g.baseline);
        for (a, b) in sum.cells.iter_mut().zip(&g.cells) {
            a.add(b);
        }
        for (tool, (results, tokens)) in &g.tools {
            let e = sum.tools.entry(tool.clone()).or_default();
            e.0 += results;
            e.1 += tokens;
        }
    }
    sum
}

fn change(value: f64, base: f64) -> f64 {
    if base == 0.0 { 0.0 } else { value / base - 1.0 }
}

fn candidate(
    policy: &str,
    threshold: Option<usize>,
    c: &Cell,
    base: &Cell,
    s: &RecommendSettings,
) -> Candidate {
    let reuse_share = c.reuse_share();
    let within_reuse = match (reuse_share, s.max_reuse) {
        (Some(share), Some(max)) => share <= max,
        _ => true,
    };
    Candidate {
        policy: policy.to_owned(),
        threshold,
        input_tokens: c.input_tokens,
        cost: c.cost,
        peak_context_tokens: c.peak,
        reuse_share,
        savings: if base.input_tokens == 0 {
            0.0
        } else {
            1.0 - c.input_tokens as f64 / base.input_tokens as f64
        },
        cost_change: change(c.cost, base.cost),
        prune_events: c.prune_events,
        meets_constraints: c.peak <= s.window && within_reuse,
        compaction: c.compaction,
        never_fired_reason: super::compare::never_fired(
            policy,
            threshold.is_some(),
            super::compare::Quiet {
                prune_events: c.prune_events,
                compactions: c.compaction.compactions,
                peak: c.peak,
            },
            &c.unfired.0,
            !c.unfired.1,
        ),
    }
}

/// The candidates of a summed grid: the baseline first, then every (policy, threshold).
pub fn candidates(sum: &ConversationGrid, settings: &RecommendSettings) -> Vec<Candidate> {
    let thresholds = settings.swept();
    let mut out = vec![candidate("none", None, &sum.baseline, &sum.baseline, settings)];
    for (p, policy) in settings.policies.iter().enumerate() {
        for (k, &t) in thresholds.iter().enumerate() {
            let cell = &sum.cells[p * thresholds.len() + k];
            out.push(candidate(policy.as_str(), Some(t), cell, &sum.baseline, settings));
        }
    }
    out
}

/// Whether `a` is preferred to `b`: cheaper; on a tie, the larger threshold (nothing split is the
/// largest); then the earlier in the grid (the caller's order).
fn preferred(a: &Candidate, b: &Candidate) -> bool {
    match a.cost.total_cmp(&b.cost) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => a.threshold.unwrap_or(usize::MAX) > b.threshold.unwrap_or(usize::MAX),
    }
}

/// The index of the cheapest candidate among those `eligible`, by [`preferred`].
pub fn cheapest(candidates: &[Candidate], eligible: impl Fn(&Candidate) -> bool) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, c) in candidates.iter().enumerate().filter(|(_, c)| eligible(c)) {
        if best.is_none_or(|b| preferred(c, &candidates[b])) {
            best = Some(i);
        }
    }
    best
}

/// The recommendation from every conversation's grid (in input order); the per-tool part is
/// added by the caller ([`tool_cells`], [`choose_tools`]) since it needs the answer first.
pub fn finish(grids: &[ConversationGrid], settings: &RecommendSettings) -> (Recommendation, Option<usize>) {
    let thresholds = settings.swept();
    let sum = add_up(grids, settings.policies.len() * thresholds.len());
    let candidates = candidates(&sum, settings);
    let unit = COST_UNIT.to_owned();
    let mut out = Recommendation {
        conversations: grids.len(),
        requests: sum.requests,
        cost_unit: unit,
        cache: settings.cache.clone(),
        window: settings.window,
        max_reuse: settings.max_reuse,
        sentence: String::new(),
        recommendation: None,
        runners_up: Vec::new(),
        interval: None,
        per_tool: Vec::new(),
        candidates,
    };
    let pick = if sum.requests == 0 { None } else { cheapest(&out.candidates, |c| c.meets_constraints) };
    if let Some(i) = pick {
        let (pick, baseline) = (out.candidates[i].clone(), out.candidates[0].clone());
        out.runners_up = runners_up(&out.candidates, i, &out.cost_unit, settings.window);
        out.interval = bootstrap(grids, &out.candidates, i, runner_up_index(&out));
        out.recommendation = Some(Recommended { pick, baseline });
    }
    out.sentence = words::sentence(&out);
    (out, pick)
}

/// The recommendation over conversations held in memory: every grid, the answer, then the
/// dominant tools swept under the answer's policy. A caller that streams its files runs the same
/// steps file by file (`pass::recommend`).
pub fn recommend(
    conversations: &[&MeasuredConversation],
    settings: &RecommendSettings,
    meter: &Meter,
) -> Recommendation {
    let grids: Vec<ConversationGrid> =
        conversations.par_iter().map(|c| grid_of(c, settings, meter)).collect();
    let (mut out, pick) = finish(&grids, settings);
    if let Some(plan) = ToolPlan::of(&out, pick, &grids, settings) {
        let mut sum = Vec::new();
        for c in conversations {
            add_tool_cells(&mut sum, plan.cells(c, settings, meter));
        }
        plan.finish(&mut out, &sum, settings);
    }
    out
}

/// What the per-tool step sweeps: the dominant tools under the recommended pair.
#[derive(Debug, Clone)]
pub struct ToolPlan {
    tools: Vec<(String, usize, Tokens)>,
    names: Vec<String>,
    policy: PolicySpec,
    threshold: Option<usize>,
    cost: f64,
}

impl ToolPlan {
    /// The plan for `out`, whose pick is candidate `pick`; `None` without a pick or a tool.
    pub fn of(
        out: &Recommendation,
        pick: Option<usize>,
        grids: &[ConversationGrid],
        settings: &RecommendSettings,
    ) -> Option<ToolPlan> {
        let chosen = &out.candidates[pick?];
        let policy = if chosen.threshold.is_none() {
            baseline_policy()
        } else {
            settings.policies.iter().find(|p| p.as_str() == chosen.policy)?.clone()
        };
        let mut tools = BTreeMap::new();
        for g in grids {
            for (tool, (results, tokens)) in &g.tools {
                let e: &mut (usize, Tokens) = tools.entry(tool.clone()).or_default();
                e.0 += results;
                e.1 += tokens;
            }
        }
        let tools = dominant(&tools, settings.top_tools);
        let names = tools.iter().map(|t| t.0.clone()).collect::<Vec<_>>();
        (!tools.is_empty()).then_some(ToolPlan {
            tools,
            names,
            policy,
            threshold: chosen.threshold,
            cost: chosen.cost,
        })
    }

    /// One conversation's tool cells under the plan.
    pub fn cells(
        &self,
        c: &MeasuredConversation,
        settings: &RecommendSettings,
        meter: &Meter,
    ) -> Vec<Vec<Cell>> {
        tool_cells(c, &self.names, &self.policy, self.threshold, settings, meter)
    }

    /// Puts the tools' choices, from their cells summed over every conversation, into `out`.
    pub fn finish(&self, out: &mut Recommendation, sum: &[Vec<Cell>], settings: &RecommendSettings) {
        out.per_tool = choose_tools(&self.tools, sum, settings, self.threshold, self.cost);
    }
}

/// The index among the candidates of the first runner-up, if any.
fn runner_up_index(r: &Recommendation) -> Option<usize> {
    let first = r.runners_up.first()?;
    r.candidates.iter().position(|c| c.policy == first.policy && c.threshold == first.threshold)
}

/// The best candidate of each policy other than the pick's, and the pick's policy's best other
/// threshold (one that splits differently, so costs differently), cheapest first.
fn runners_up(candidates: &[Candidate], pick: usize, unit: &str, window: Tokens) -> Vec<RunnerUp> {
    let chosen = &candidates[pick];
    let mut policies: Vec<&str> = Vec::new();
    for c in candidates {
        if !policies.contains(&c.policy.as_str()) {
            policies.push(&c.policy);
        }
    }
    let mut best: Vec<usize> = Vec::new();
    for p in policies {
        let same = p == chosen.policy;
        let eligible = |c: &Candidate| c.policy == p && (!same || c.cost != chosen.cost);
        if let Some(i) = cheapest(candidates, eligible) {
            best.push(i);
        }
    }
    best.sort_by(|&a, &b| {
        let (a, b) = (&candidates[a], &candidates[b]);
        b.meets_constraints.cmp(&a.meets_constraints).then(a.cost.total_cmp(&b.cost))
    });
    best.into_iter()
        .take(RUNNERS_UP)
        .map(|i| words::runner_up(&candidates[i], chosen, unit, window))
        .collect()
}

#[cfg(test)]
mod tests;
