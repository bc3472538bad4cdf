//! Per tool, where its own threshold would differ from the recommendation's: under the
//! recommended policy, every other tool's outputs split at the recommended threshold, only this
//! tool's threshold varies over the grid, and each run is priced. A tool whose cheapest threshold
//! costs less than the recommendation is worth a threshold of its own. Pure: no I/O.

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Cell, RecommendSettings, run_cell};
use crate::analysis::sweep::{fix_other_tools, sorted_tools};
use crate::measure::MeasuredConversation;
use crate::model::Tokens;
use crate::policy::PolicySpec;
use crate::tokens::Meter;

/// One dominant tool's own cheapest threshold under the recommended policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolChoice {
    /// Tool name.
    pub tool: String,
    /// Results of this tool.
    pub results: usize,
    /// Real tokens of its outputs, each counted once.
    pub output_tokens: Tokens,
    /// Its cheapest threshold, every other tool at the recommendation's (the larger on a tie).
    pub threshold: usize,
    /// The cost at that threshold, in USD.
    #[serde(rename = "cost_usd")]
    pub cost: f64,
    /// Input tokens at that threshold.
    pub input_tokens: Tokens,
    /// `cost / the recommendation's cost − 1` (negative: this tool's own threshold saves).
    pub cost_change: f64,
    /// Its own threshold differs from the recommendation's and costs less.
    pub differs: bool,
}

/// Output of each tool in `c`: results and tokens.
pub fn output_by_tool(c: &MeasuredConversation) -> BTreeMap<String, (usize, Tokens)> {
    crate::analysis::sweep::output_by_tool(&[c])
}

/// The dominant tools of the summed outputs, largest first, at most `top`.
pub fn dominant(tools: &BTreeMap<String, (usize, Tokens)>, top: usize) -> Vec<(String, usize, Tokens)> {
    sorted_tools(tools.clone()).into_iter().take(top).collect()
}

/// Per tool of `tools`, one cell per threshold of `settings` for `c` under `policy`: the tool's
/// threshold varied, every other tool split at `overall` (`None`: kept whole).
pub fn tool_cells(
    c: &MeasuredConversation,
    tools: &[String],
    policy: &PolicySpec,
    overall: Option<usize>,
    settings: &RecommendSettings,
    meter: &Meter,
) -> Vec<Vec<Cell>> {
    let thresholds = settings.swept();
    tools
        .iter()
        .map(|tool| {
            let fixed = fix_other_tools(c, tool, overall.unwrap_or(usize::MAX));
            let (slots, firsts) = fixed.split_plan(&thresholds);
            let replayed: Vec<Cell> =
                firsts.par_iter().map(|&t| run_cell(&fixed, t, policy, settings, meter)).collect();
            slots.iter().map(|&s| replayed[s].clone()).collect()
        })
        .collect()
}

/// The tools' choices from their cells summed over every conversation (`cells[tool][threshold]`),
/// against the recommendation's `threshold` and `cost`.
pub fn choose_tools(
    tools: &[(String, usize, Tokens)],
    cells: &[Vec<Cell>],
    settings: &RecommendSettings,
    threshold: Option<usize>,
    cost: f64,
) -> Vec<ToolChoice> {
    let thresholds = settings.swept();
    tools
        .iter()
        .zip(cells)
        .filter_map(|((tool, results, output_tokens), cells)| {
            // The cheapest, the larger threshold on a tie (`min_by` keeps the first of equals).
            let (k, best) = cells.iter().enumerate().rev().min_by(|a, b| a.1.cost.total_cmp(&b.1.cost))?;
            let t = thresholds[k];
            Some(ToolChoice {
                tool: tool.clone(),
                results: *results,
                output_tokens: *output_tokens,
                threshold: t,
                cost: best.cost,
                input_tokens: best.input_tokens,
                cost_change: if cost == 0.0 { 0.0 } else { best.cost / cost - 1.0 },
                differs: Some(t) != threshold && best.cost < cost,
            })
        })
        .collect()
}

/// Adds one conversation's tool cells to the sum (empty: takes them as they are).
pub fn add_tool_cells(sum: &mut Vec<Vec<Cell>>, part: Vec<Vec<Cell>>) {
    if sum.is_empty() {
        *sum = part;
        return;
    }
    for (a, b) in sum.iter_mut().zip(&part) {
        for (x, y) in a.iter_mut().zip(b) {
            x.add(y);
        }
    }
}
