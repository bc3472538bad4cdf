//! The policy comparison: several policies side by side on the same conversations at one threshold.
//!
//! Per policy: peak and total input tokens, savings against the sessions as recorded (`none` with
//! nothing split: the one baseline of the sweep, the comparison and the recommendation, so the
//! same pair reads the same savings in each; `none` at the threshold is still replayed, first when
//! it is not asked for, and shows what the split alone costs), prune events, requests whose
//! context exceeds the window, and the cache-aware cost of [`super::cost`], also against that
//! baseline. A policy that saves tokens but costs more is flagged: the
//! rewrites its prunes force can outweigh what they free. Each run also counts the pruned results
//! the agent reused later ([`super::reuse`]), the risk a prune takes. Any [`PolicySpec`] works, so policies
//! added to the registry later compare without a change here. Pure: no I/O.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::cost::{CacheModel, CostTotals, PruneEvent, cost_of_run};
use super::reuse::{RunReuse, replay_with_reuse};
use super::summarization::{CompactionEvent, CompactionTotals};
use crate::measure::MeasuredConversation;
use crate::model::Tokens;
use crate::policy::{Policy, PolicySpec, Unfired, Unfireds};
use crate::replay::{Keep, replay};
use crate::result::Run;
use crate::tokens::Meter;

/// The default context window, in tokens.
pub const DEFAULT_WINDOW: Tokens = 200_000;

/// What to compare.
#[derive(Debug, Clone)]
pub struct CompareSettings {
    /// Policies, in display order (`none` is added first when missing).
    pub policies: Vec<PolicySpec>,
    /// `SUMMARY_THRESHOLD` in bytes.
    pub threshold: usize,
    /// Context window: requests above it are counted.
    pub window: Tokens,
    /// How requests are priced.
    pub cache: CacheModel,
}

/// One policy over every conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRow {
    /// The policy spec.
    pub policy: String,
    /// Conversations replayed.
    pub conversations: usize,
    /// Requests replayed.
    pub requests: usize,
    /// Largest context of any request.
    pub peak_context_tokens: Tokens,
    /// Sum of every request's context.
    pub total_input_tokens: Tokens,
    /// `1 − total / baseline_input_tokens` (the sessions as recorded).
    pub savings: f64,
    /// Tokens the policy removed.
    pub pruned_tokens: Tokens,
    /// Requests before which the policy changed the context.
    pub prune_events: usize,
    /// Requests whose context exceeds the window.
    pub over_window: usize,
    /// Cache-aware cost totals.
    pub cost: CostTotals,
    /// `cost / baseline_cost − 1` (negative is cheaper).
    pub cost_change: f64,
    /// The policy saves input tokens but costs more than the sessions as recorded.
    pub saves_tokens_costs_more: bool,
    /// Results whose content the policy removed (docs/reuse.md).
    pub pruned_results: usize,
    /// Of those, results the agent reused after the prune ([`super::reuse`]).
    pub reused_results: usize,
    /// `reused_results / pruned_results` (0 when nothing was pruned).
    pub reuse_share: f64,
    /// Tokens removed from the reused results.
    pub reused_tokens: Tokens,
    /// Compactions the runs made (0 for a policy that does not compact; docs/compaction.md) and
    /// what they summarised; the summarisation calls are billed in `cost`.
    #[serde(flatten)]
    pub compaction: CompactionTotals,
    /// Why a policy that pruned nothing never fired, in its own unit: its trigger beside the most
    /// it measured against it (`"trigger 100000 tokens > peak 80344"`, [`Policy::report`]), or,
    /// for a policy that does not describe its trigger and made no compaction either, the peak
    /// context. `None` when it fired, and for `none`.
    #[serde(default)]
    pub never_fired_reason: Option<String>,
}

impl PolicyRow {
    /// Why a run that saves input tokens costs more than the sessions as recorded, in words: its
    /// prunes' cache rewrites, its compactions' calls and cold context, or, with neither, what the
    /// split alone sends (every split output's summary beside its content).
    pub fn why_it_costs_more(&self) -> &'static str {
        match (self.prune_events > 0, self.compaction.compactions > 0) {
            (true, false) => "its prunes force cached tokens to be written again",
            (false, true) => {
                "its summarisation calls, and the uncached context after each compaction, cost more than it saves"
            }
            (true, true) => {
                "its prunes force cached tokens to be written again, and its summarisation calls and the uncached context after each compaction cost more"
            }
            (false, false) => {
                "it neither prunes nor compacts: the split sends each split output's summary beside its content"
            }
        }
    }
}

/// A prune event with where it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventRow {
    /// Input path.
    pub trace: String,
    /// Conversation id.
    pub conversation: String,
    /// Policy spec.
    pub policy: String,
    /// The event, priced.
    pub event: PruneEvent,
}

/// A summarisation call with where it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionEventRow {
    /// Input path.
    pub trace: String,
    /// Conversation id.
    pub conversation: String,
    /// Policy spec.
    pub policy: String,
    /// The call, priced.
    pub event: CompactionEvent,
}

/// The runs of one conversation, one per policy in [`Comparison::policies`] order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConversationRuns {
    /// Input path.
    pub trace: String,
    /// Conversation id.
    pub conversation: String,
    /// One run per policy.
    pub runs: Vec<Run>,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comparison {
    /// Threshold used.
    pub threshold: usize,
    /// Window used.
    pub window: Tokens,
    /// Cache model used.
    pub cache: CacheModel,
    /// Input tokens of the sessions as recorded (`none`, nothing split): the savings baseline.
    pub baseline_input_tokens: Tokens,
    /// Their cost: the baseline of `cost_change`.
    pub baseline_cost: f64,
    /// Their whole bill in USD at each request's model price ([`super::prices`]): the baseline of
    /// `recommend`, which ranks in USD.
    pub baseline_cost_usd: f64,
    /// One row per policy, `none` first.
    pub policies: Vec<PolicyRow>,
    /// Every prune event, by conversation, policy and request.
    pub events: Vec<EventRow>,
    /// Every compaction's summarisation call, by conversation, policy and request.
    #[serde(default)]
    pub compaction_events: Vec<CompactionEventRow>,
    /// The runs behind the rows (for timelines; not serialised). Empty when the conversations were
    /// replayed without their rows ([`replay_conversation`]).
    #[serde(skip)]
    pub conversations: Vec<ConversationRuns>,
}

impl Comparison {
    /// Whether any request was replayed: with none, every policy costs 0 and sits at 100% of
    /// `none`, which says nothing about the policies.
    pub fn replayed_any(&self) -> bool {
        self.policies.iter().any(|p| p.requests > 0)
    }
}

/// The policies to run: `none` first unless it is already in the list.
pub fn with_baseline(policies: &[PolicySpec]) -> Vec<PolicySpec> {
    let mut out = Vec::with_capacity(policies.len() + 1);
    if !policies.iter().any(|p| p.as_str() == "none") {
        out.push(PolicySpec::parse("none").unwrap_or_else(|e| unreachable!("`none` is registered: {e}")));
    }
    out.extend(policies.iter().cloned());
    out
}

/// `policies` as the sources a comparison replays.
pub fn sources(policies: &[PolicySpec]) -> Vec<&dyn PolicySource> {
    policies.iter().map(|p| p as &dyn PolicySource).collect()
}

/// Anything that names a policy and builds a fresh one per conversation: a [`PolicySpec`] from the
/// registry, or a hand-written policy (tests, experiments).
pub trait PolicySource: Sync {
    /// The name shown in reports.
    fn label(&self) -> &str;
    /// A fresh policy for one conversation.
    fn fresh(&self) -> Box<dyn Policy>;
}

impl PolicySource for PolicySpec {
    fn label(&self) -> &str {
        self.as_str()
    }
    fn fresh(&self) -> Box<dyn Policy> {
        self.build()
    }
}

/// The baseline: `none`, replayed on the log's compactions as recorded whatever
/// `--harness-compaction` says ([`crate::policy::compact::harness::as_recorded`]), so that it is
/// the sessions as recorded, the bill they reproduce (docs/compaction.md). Replayed with nothing
/// split, it is the one baseline of every savings figure.
pub struct Baseline;

impl PolicySource for Baseline {
    fn label(&self) -> &str {
        "none"
    }
    fn fresh(&self) -> Box<dyn Policy> {
        let none = PolicySpec::parse("none").unwrap_or_else(|e| unreachable!("`none` is registered: {e}"));
        crate::policy::compact::harness::as_recorded(none.build())
    }
}

/// Compares `settings.policies` (with `none` first when missing) on `conversations` (input path,
/// measured conversation).
pub fn compare(
    conversations: &[(&str, &MeasuredConversation)],
    settings: &CompareSettings,
    meter: &Meter,
) -> Comparison {
    let policies = with_baseline(&settings.policies);
    compare_sources(conversations, &sources(&policies), settings, meter)
}

/// Compares any policies, in the order given (`settings.policies` is not used). Savings and cost
/// changes are against the sessions as recorded. Every run keeps its rows.
pub fn compare_sources(
    conversations: &[(&str, &MeasuredConversation)],
    policies: &[&dyn PolicySource],
    settings: &CompareSettings,
    meter: &Meter,
) -> Comparison {
    // Every conversation's runs in parallel; the totals are then added up in input order.
    let replayed: Vec<Replayed> = conversations
        .par_iter()
        .map(|(trace, c)| replay_conversation(trace, c, policies, settings, meter, true))
        .collect();
    add_up(replayed, policies, settings)
}

/// One conversation replayed under every policy of a comparison, with what each run costs: the
/// part of a [`Comparison`] that one conversation contributes ([`replay_conversation`]), added up
/// by [`add_up`]. Without its runs' rows it is small, so a comparison of a corpus larger than
/// memory keeps one per conversation and never the measured corpus.
#[derive(Debug, Clone)]
pub struct Replayed {
    trace: String,
    conversation: String,
    /// Per policy, in the comparison's order.
    runs: Vec<PolicyRun>,
    /// Whether the runs keep their rows.
    rows: bool,
    /// Input tokens, cost and cost in USD of the conversation as recorded.
    baseline: (Tokens, f64, f64),
}

#[derive(Debug, Clone)]
struct PolicyRun {
    run: Run,
    over_window: usize,
    cost: CostTotals,
    events: Vec<PruneEvent>,
    compactions: Vec<CompactionEvent>,
    reuse: RunReuse,
    unfired: Option<Unfired>,
}

impl Replayed {
    /// Its runs with their rows, taken out for a caller that lists or draws them itself: what is
    /// left adds up as before ([`add_up`]) but leaves no runs in [`Comparison::conversations`].
    pub fn take_runs(&mut self) -> ConversationRuns {
        self.rows = false;
        let runs = self
            .runs
            .iter_mut()
            .map(|r| Run { summary: r.run.summary.clone(), rows: std::mem::take(&mut r.run.rows) })
            .collect();
        ConversationRuns { trace: self.trace.clone(), conversation: self.conversation.clone(), runs }
    }
}

/// Replays `c` (read from `trace`) under every policy at `settings.threshold` and prices each run.
/// `keep_rows` keeps the runs' per-request rows (the report draws them); without, each run keeps
/// its summary only, and [`add_up`] leaves [`Comparison::conversations`] empty.
pub fn replay_conversation(
    trace: &str,
    c: &MeasuredConversation,
    policies: &[&dyn PolicySource],
    settings: &CompareSettings,
    meter: &Meter,
    keep_rows: bool,
) -> Replayed {
    let runs = policies
        .iter()
        .map(|source| {
            let (mut run, reuse, unfired) =
                replay_with_reuse(c, settings.threshold, source.fresh(), meter, Keep::Rows);
            run.summary.trace = trace.to_owned();
            run.summary.policy = source.label().to_owned();
            run.summary.tokenizer = meter.choice().name().to_owned();
            run.summary.decide_with = meter.decide_tokenizer().name().to_owned();
            let (cost, events) = cost_of_run(&run.rows, &settings.cache);
            let compactions = super::summarization::events(&run.rows, &settings.cache);
            let over_window = run.rows.iter().filter(|r| r.context_tokens > settings.window).count();
            if !keep_rows {
                run.rows = Vec::new();
            }
            PolicyRun { run, over_window, cost, events, compactions, reuse, unfired }
        })
        .collect();
    Replayed {
        trace: trace.to_owned(),
        conversation: c.id.clone(),
        runs,
        rows: keep_rows,
        baseline: as_recorded(c, &settings.cache, meter),
    }
}

/// Input tokens, cost and cost in USD of `c` as recorded: `none` with nothing split, the one
/// baseline of every savings figure.
pub fn as_recorded(c: &MeasuredConversation, cache: &CacheModel, meter: &Meter) -> (Tokens, f64, f64) {
    let mut none = Baseline.fresh();
    let run = replay(c, usize::MAX, &mut *none, meter);
    let cost = cost_of_run(&run.rows, cache).0;
    (run.summary.total_input_tokens, cost.cost, cost.cost_usd)
}

/// Adds up replayed conversations into the comparison of `policies` (the ones they were replayed
/// under, in the same order). The totals are floating-point sums added in the order given, so the
/// same conversations in the same order give the same bytes, however they were replayed.
pub fn add_up(
    replayed: impl IntoIterator<Item = Replayed>,
    policies: &[&dyn PolicySource],
    settings: &CompareSettings,
) -> Comparison {
    let mut sum = Sum::new(policies);
    for conversation in replayed {
        sum.add(conversation);
    }
    sum.finish(settings)
}

/// [`add_up`] one conversation at a time, for a caller that adds them as they are replayed (in
/// the order they are to be added: a replayed conversation is then not kept, only what the
/// comparison lists of it).
pub struct Sum<'a> {
    policies: &'a [&'a dyn PolicySource],
    rows: Vec<PolicyRow>,
    events: Vec<EventRow>,
    compaction_events: Vec<CompactionEventRow>,
    runs_out: Vec<ConversationRuns>,
    baseline: (Tokens, f64, f64),
    /// Per policy: its runs' triggers, and whether every run described one.
    unfired: Vec<(Unfireds, bool)>,
}

impl<'a> Sum<'a> {
    /// Nothing added yet, for conversations replayed under `policies`.
    pub fn new(policies: &'a [&'a dyn PolicySource]) -> Sum<'a> {
        let rows = policies
            .iter()
            .map(|p| PolicyRow { policy: p.label().to_owned(), ..Default::default() })
            .collect();
        Sum {
            policies,
            rows,
            events: Vec::new(),
            compaction_events: Vec::new(),
            runs_out: Vec::new(),
            baseline: (0, 0.0, 0.0),
            unfired: vec![(Unfireds::default(), true); policies.len()],
        }
    }

    /// Adds the next conversation.
    pub fn add(&mut self, conversation: Replayed) {
        self.baseline.0 += conversation.baseline.0;
        self.baseline.1 += conversation.baseline.1;
        self.baseline.2 += conversation.baseline.2;
        let mut runs = Vec::with_capacity(self.policies.len());
        let rows = self.policies.iter().zip(&mut self.rows).zip(&mut self.unfired);
        for (((source, row), unfired), r) in rows.zip(conversation.runs) {
            match &r.unfired {
                Some(u) => unfired.0.add(u),
                None => unfired.1 = false,
            }
            let s = &r.run.summary;
            row.conversations += 1;
            row.requests += s.requests;
            row.peak_context_tokens = row.peak_context_tokens.max(s.peak_context_tokens);
            row.total_input_tokens += s.total_input_tokens;
            row.pruned_tokens += s.pruned_tokens;
            row.prune_events += s.prune_events;
            row.over_window += r.over_window;
            row.cost += r.cost;
            row.pruned_results += r.reuse.pruned_results;
            row.reused_results += r.reuse.reused_results;
            row.reused_tokens += r.reuse.reused_tokens;
            row.compaction += s.compaction;
            self.events.extend(r.events.into_iter().map(|event| EventRow {
                trace: conversation.trace.clone(),
                conversation: conversation.conversation.clone(),
                policy: source.label().to_owned(),
                event,
            }));
            self.compaction_events.extend(r.compactions.into_iter().map(|event| CompactionEventRow {
                trace: conversation.trace.clone(),
                conversation: conversation.conversation.clone(),
                policy: source.label().to_owned(),
                event,
            }));
            runs.push(r.run);
        }
        if conversation.rows {
            self.runs_out.push(ConversationRuns {
                trace: conversation.trace,
                conversation: conversation.conversation,
                runs,
            });
        }
    }

    /// The comparison of everything added.
    pub fn finish(self, settings: &CompareSettings) -> Comparison {
        let Sum {
            mut rows,
            events,
            compaction_events,
            runs_out,
            baseline: (tokens, cost, cost_usd),
            unfired,
            ..
        } = self;
        for (r, (unfired, described)) in rows.iter_mut().zip(unfired) {
            r.never_fired_reason = never_fired_reason(r, &unfired, described);
            r.reuse_share = RunReuse {
                pruned_results: r.pruned_results,
                reused_results: r.reused_results,
                reused_tokens: r.reused_tokens,
            }
            .share();
            r.savings = ratio_change(tokens as f64, r.total_input_tokens as f64);
            r.cost_change = if cost == 0.0 { 0.0 } else { r.cost.cost / cost - 1.0 };
            r.saves_tokens_costs_more = r.savings > 0.0 && r.cost_change > 0.0;
        }
        Comparison {
            threshold: settings.threshold,
            window: settings.window,
            cache: settings.cache.clone(),
            baseline_input_tokens: tokens,
            baseline_cost: cost,
            baseline_cost_usd: cost_usd,
            policies: rows,
            events,
            compaction_events,
            conversations: runs_out,
        }
    }
}

/// Why `row`'s policy never fired ([`PolicyRow::never_fired_reason`]): the triggers its runs
/// described when it pruned nothing and every run described one (whatever the agent's own
/// compaction did meanwhile); else, with no prune and no compaction, the peak context.
fn never_fired_reason(row: &PolicyRow, unfired: &Unfireds, described: bool) -> Option<String> {
    let quiet = Quiet {
        prune_events: row.prune_events,
        compactions: row.compaction.compactions,
        peak: row.peak_context_tokens,
    };
    never_fired(&row.policy, row.requests > 0, quiet, unfired, described)
}

/// What a run or a sum of runs did, for [`never_fired`].
#[derive(Debug, Clone, Copy)]
pub struct Quiet {
    /// Prune events.
    pub prune_events: usize,
    /// Compactions (the policy's or the agent's).
    pub compactions: usize,
    /// The peak context, in report tokens.
    pub peak: Tokens,
}

/// Why `policy` never fired, from what its runs did and the triggers they described
/// ([`PolicyRow::never_fired_reason`]; also the recommendation's candidates'): `None` when it
/// pruned, for `none`, and without requests.
pub fn never_fired(
    policy: &str,
    replayed: bool,
    q: Quiet,
    unfired: &Unfireds,
    described: bool,
) -> Option<String> {
    if q.prune_events > 0 || !replayed || policy == "none" {
        return None;
    }
    match unfired.text() {
        Some(text) if described => Some(text),
        _ if q.compactions == 0 => Some(format!(
            "no edit in any request (its trigger is not described); peak context {} tokens",
            q.peak
        )),
        _ => None,
    }
}

fn ratio_change(base: f64, value: f64) -> f64 {
    if base == 0.0 { 0.0 } else { 1.0 - value / base }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_costs_more_says_why_from_what_it_did() {
        let row = |prune_events, compactions| PolicyRow {
            prune_events,
            compaction: CompactionTotals { compactions, ..Default::default() },
            ..PolicyRow::default()
        };
        assert!(row(3, 0).why_it_costs_more().starts_with("its prunes"));
        assert!(row(0, 1).why_it_costs_more().starts_with("its summarisation calls"));
        assert!(
            row(3, 1).why_it_costs_more().contains("prunes")
                && row(3, 1).why_it_costs_more().contains("summarisation")
        );
        // `none` at a threshold: no prune, no compaction, yet more tokens than as recorded.
        assert!(row(0, 0).why_it_costs_more().contains("neither prunes nor compacts"));
    }
    use crate::analysis::cost::Prices;
    use crate::analysis::testing::{self, cache_trap};
    use crate::policy::{Content, Edit, View};

    fn meter() -> Meter {
        testing::meter().0
    }

    /// The cache trap of `testing` (195, then 1,195 tokens under `none`).
    fn measured(meter: &Meter) -> MeasuredConversation {
        testing::measured(cache_trap([None; 4]), meter)
    }

    fn settings(specs: &[&str], window: Tokens) -> CompareSettings {
        CompareSettings {
            policies: specs.iter().map(|s| PolicySpec::parse(s).unwrap()).collect(),
            threshold: 16,
            window,
            cache: CacheModel { prices: Prices::anthropic(), ttl_ms: Some(300_000) },
        }
    }

    #[test]
    fn every_policy_that_never_fired_names_its_trigger_and_a_policy_that_fired_none() {
        let meter = meter();
        let m = measured(&meter);
        let specs = [
            "budget:max=100000,target=50000",
            "keep-results:n=5",
            "keep-turns:n=9",
            "anthropic",
            "gemini",
            "opencode",
            "keep-turns:n=2",
            "swe-agent",
        ];
        let c = compare(&[("t.jsonl", &m)], &settings(&specs, 200_000), &meter);
        let reason = |name: &str| {
            let row = c.policies.iter().find(|p| p.policy == name).unwrap();
            (row.prune_events, row.never_fired_reason.clone())
        };
        // The trap's largest context is 1,195 report tokens; each policy counts its own way, so
        // the peaks below are the ones each policy measured, not all that number.
        let (events, budget) = reason("budget:max=100000,target=50000");
        assert_eq!(events, 0);
        assert!(
            budget.as_deref().is_some_and(|r| r.starts_with("trigger 100000 tokens > peak ")),
            "{budget:?}"
        );
        assert_eq!(
            reason("keep-results:n=5").1.as_deref(),
            Some("keeps the newest 5 results; the context held at most 1")
        );
        let turns = reason("keep-turns:n=9").1;
        assert_eq!(
            turns.as_deref(),
            Some("prunes a content once 9 requests have sent it; the most any content had been sent: 3")
        );
        assert_eq!(reason("anthropic").1.as_deref(), Some("trigger 100000 tokens > peak 1195"));
        assert!(
            reason("gemini")
                .1
                .is_some_and(|r| r.starts_with("masks once the tool output beyond the newest 50000"))
        );
        // opencode's walk, at the trap's one new human turn, found nothing beyond its 40000.
        assert_eq!(
            reason("opencode").1.as_deref(),
            Some(
                "prunes at a turn start once the outputs beyond the newest 40000 tokens, before the last \
                 2 turn(s), pass 20000 tokens; peak 0"
            )
        );
        // One that fired, and `none`: no reason.
        assert_eq!(reason("keep-turns:n=2"), (1, None));
        assert_eq!(reason("none").1, None);
        // A policy that does not describe its trigger gets the peak context.
        let (events, swe) = reason("swe-agent");
        if events == 0 {
            assert_eq!(
                swe.as_deref(),
                Some("no edit in any request (its trigger is not described); peak context 1195 tokens")
            );
        }
    }

    #[test]
    fn none_is_added_first_and_the_numbers_match_a_hand_count() {
        let meter = meter();
        let m = measured(&meter);
        let c = compare(&[("t.jsonl", &m)], &settings(&["keep-turns:n=2", "keep-results:n=0"], 1100), &meter);
        let names: Vec<&str> = c.policies.iter().map(|p| p.policy.as_str()).collect();
        assert_eq!(names, ["none", "keep-turns:n=2", "keep-results:n=0"]);
        let [none, turns, results] = &c.policies[..] else { panic!() };
        // none: 195, 1195, 1195, 1195.
        assert_eq!((none.total_input_tokens, none.peak_context_tokens, none.over_window), (3780, 1195, 3));
        // keep-turns:n=2 prunes before request 2: 195, 1195, 1095, 1095.
        assert_eq!((turns.total_input_tokens, turns.prune_events, turns.over_window), (3580, 1, 1));
        // Savings and cost changes are against the sessions as recorded: the 100-byte result
        // whole, 102, then 1102 × 3 = 3408 tokens, costing 102×1.25 + (1000×1.25 + 102×0.1) +
        // 2 × 1102×0.1 = 1608.1; the split alone (none at 16 bytes) costs more.
        assert_eq!((c.baseline_input_tokens, none.savings), (3408, 1.0 - 3780.0 / 3408.0));
        assert!((c.baseline_cost - 1608.1).abs() < 1e-9);
        assert!((turns.savings - (1.0 - 3580.0 / 3408.0)).abs() < 1e-12);
        // Costs (see cost.rs): none 1752.25, keep-turns 2882.25.
        assert!((none.cost.cost - 1752.25).abs() < 1e-9 && (turns.cost.cost - 2882.25).abs() < 1e-9);
        assert!((turns.cost_change - (2882.25 / 1608.1 - 1.0)).abs() < 1e-12);
        assert!(!turns.saves_tokens_costs_more && !none.saves_tokens_costs_more);
        // keep-results:n=0 prunes before request 0, before anything is cached: 95, 1095, 1095, 1095.
        assert_eq!(results.total_input_tokens, 3380);
        assert!(!results.saves_tokens_costs_more && results.cost_change < 0.0 && results.savings > 0.0);
        // One event each for the two pruning policies, with their rewrites.
        let ev: Vec<(&str, usize, Tokens, Tokens)> = c
            .events
            .iter()
            .map(|e| (e.policy.as_str(), e.event.request, e.event.freed_tokens, e.event.rewritten_tokens))
            .collect();
        assert_eq!(ev, [("keep-turns:n=2", 2, 100, 1000), ("keep-results:n=0", 0, 100, 0)]);
        assert_eq!(c.conversations[0].runs.len(), 3);
    }

    #[test]
    fn conversations_added_up_without_their_rows_compare_as_the_whole_set_does() {
        let meter = meter();
        let conversations: Vec<MeasuredConversation> = [None, Some("2025-01-01T00:00:00Z")]
            .into_iter()
            .map(|at| testing::measured(cache_trap([at; 4]), &meter))
            .collect();
        let pairs: Vec<(&str, &MeasuredConversation)> =
            conversations.iter().zip(["a.jsonl", "b.jsonl"]).map(|(c, t)| (t, c)).collect();
        let settings = settings(&["keep-turns:n=2", "keep-results:n=0"], 1100);
        let whole = compare(&pairs, &settings, &meter);
        let policies = with_baseline(&settings.policies);
        let sources = sources(&policies);
        // One conversation at a time, as a streaming caller replays them, without rows.
        let streamed = add_up(
            pairs.iter().map(|(t, c)| replay_conversation(t, c, &sources, &settings, &meter, false)),
            &sources,
            &settings,
        );
        assert_eq!((&streamed.policies, &streamed.events), (&whole.policies, &whole.events));
        assert!(whole.events.iter().any(|e| e.trace == "b.jsonl"), "both conversations counted");
        assert_eq!(whole.policies[0].conversations, 2);
        assert!(streamed.conversations.is_empty(), "no runs without their rows");
        assert_eq!(whole.conversations.len(), 2);
        assert!(whole.conversations.iter().all(|c| c.runs.iter().all(|r| !r.rows.is_empty())));
    }

    /// Clears every content with a placeholder from the second request on, afresh each time.
    struct Placeholder;
    impl Policy for Placeholder {
        fn capabilities(&self) -> crate::policy::Capabilities {
            crate::policy::Capabilities { sticky: false, ..Default::default() }
        }
        fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
            for r in view.results {
                if view.request > 0 && matches!(r.content, Content::Present(_)) {
                    edits.push(Edit::Replace(r.index, "[cleared]".into()));
                }
            }
        }
    }

    struct Hand(&'static str, fn() -> Box<dyn Policy>);
    impl PolicySource for Hand {
        fn label(&self) -> &str {
            self.0
        }
        fn fresh(&self) -> Box<dyn Policy> {
            (self.1)()
        }
    }

    #[test]
    fn hand_written_policies_compare_beside_registered_ones() {
        let meter = meter();
        let m = measured(&meter);
        let none = PolicySpec::parse("none").unwrap();
        let budget = PolicySpec::parse("budget:max=1100,target=1100").unwrap();
        let placeholder = Hand("placeholder", || Box::new(Placeholder));
        let sources: Vec<&dyn PolicySource> = vec![&none, &placeholder, &budget];
        let c = compare_sources(&[("t", &m)], &sources, &settings(&[], 200_000), &meter);
        let totals: Vec<(&str, Tokens, usize)> =
            c.policies.iter().map(|p| (p.policy.as_str(), p.total_input_tokens, p.prune_events)).collect();
        // placeholder: 195, then 95 + 9 ("[cleared]") + 1000 = 1104 from request 1 on; only request 1
        // changes the context (the same placeholder is kept afterwards).
        // budget: 1195 > 1100 at request 1: prune a (→ 1095) and stay pruned.
        assert_eq!(
            totals,
            [
                ("none", 3780, 0),
                ("placeholder", 195 + 3 * 1104, 1),
                ("budget:max=1100,target=1100", 195 + 3 * 1095, 1)
            ]
        );
        // The placeholder clears a at request 1, before the 1,000-byte message is cached: no rewrite.
        assert_eq!(c.events[0].event.rewritten_tokens, 0);
        // It sends fewer tokens than `none` at the same threshold, and costs less.
        assert!(c.policies[1].savings > c.policies[0].savings);
        assert!(c.policies[1].cost_change < c.policies[0].cost_change);
    }
}
