//! The per-tool pass of the threshold sweep: for each dominant tool, its rows with only that
//! tool's threshold varied (every other tool split at the overall recommendation), in one pass
//! over held conversations or speculatively beside the first pass for a caller that streams its
//! files. Pure: no I/O.

use std::collections::BTreeMap;
use std::sync::Mutex;

use rayon::prelude::*;

use super::{
    Sweep, SweepPlan, SweepRow, SweepSettings, SweepTotals, ToolRecommendation, add_row, finished_rows,
    fix_other_tools, plan, priced_rows, recommend_if_any, recommend_tool, row_at, rows_at, savings, swept,
    usd_of_pico,
};
use crate::analysis::compare::PolicySource;
use crate::measure::MeasuredConversation;
use crate::tokens::Meter;

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
    tool_totals_with(conversations, plan, settings, &settings.policy, meter)
}

/// [`tool_totals`] under `policy` instead of `settings.policy`.
pub(super) fn tool_totals_with(
    conversations: &[&MeasuredConversation],
    plan: &SweepPlan,
    settings: &SweepSettings,
    policy: &dyn PolicySource,
    meter: &Meter,
) -> ToolTotals {
    let per_tool = plan
        .tools
        .iter()
        .map(|(tool, _, _)| tool_rows_with(conversations, tool, plan.overall, settings, policy, meter))
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
    let rows = rows_at(&refs, &swept(settings), policy, meter, None).into_iter().map(|(r, _)| r).collect();
    (rows, row_at(&refs, usize::MAX, policy, meter, None).0)
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
    let baseline = totals.baseline.0.total_input_tokens;
    let rows = priced_rows(&totals.rows, baseline);
    let recommendation = recommend_if_any(&rows, settings.tolerance, baseline);
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
                    baseline,
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
        baseline_peak_tokens: totals.baseline.0.peak_context_tokens,
        baseline_cost_usd: usd_of_pico(totals.baseline.1),
        rows,
        recommendation,
        per_tool,
    }
}
