//! How firm the recommendation is: a bootstrap over conversations, as criterion gives one over
//! timings. Conversations are drawn with replacement ([`RESAMPLES`] times, from the fixed
//! [`SEED`], so the same input gives the same interval) and the pick's savings and cost change
//! against the baseline are worked out on each draw; the 2.5th and 97.5th percentiles bound the
//! 95% interval. The runner-up is said to lie within it when its own cost change does, and each
//! draw also says whether the pick stays cheaper than the runner-up. Pure: no I/O.

use serde::{Deserialize, Serialize};

use super::{Candidate, Cell, ConversationGrid, RESAMPLES, SEED};

/// A 95% bootstrap interval of the recommendation's savings and cost change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    /// Draws of the conversations.
    pub resamples: usize,
    /// Seed of the draws.
    pub seed: u64,
    /// Confidence level (0.95).
    pub level: f64,
    /// Savings of input tokens against the baseline: low and high bounds.
    pub savings: [f64; 2],
    /// Cost change against the baseline: low and high bounds.
    pub cost_change: [f64; 2],
    /// The first runner-up's cost change over every conversation, if there is a runner-up.
    pub runner_up_cost_change: Option<f64>,
    /// The runner-up's cost change lies within the pick's interval: the data do not separate them.
    pub runner_up_within: bool,
    /// Share of the draws in which the pick costs less than the runner-up.
    pub pick_cheaper_share: Option<f64>,
}

/// A small, fast, well-mixed generator (SplitMix64): the draws must be the same on every machine,
/// which a crate's default generator does not promise across versions.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n > 0`), by Lemire's multiply-shift (the bias is below 2^-32 for any
    /// number of conversations this reads).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// The cell of candidate `i` in one conversation's grid (candidate 0 is the baseline).
/// A draw's input tokens and cost.
#[derive(Default)]
struct Sum {
    input_tokens: crate::model::Tokens,
    cost: f64,
}

impl Sum {
    fn add(&mut self, c: &Cell) {
        self.input_tokens += c.input_tokens;
        self.cost += c.cost;
    }
}

fn cell(g: &ConversationGrid, i: usize) -> &Cell {
    if i == 0 { &g.baseline } else { &g.cells[i - 1] }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let at = (q * (sorted.len() - 1) as f64).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn ratio(value: f64, base: f64) -> f64 {
    if base == 0.0 { 0.0 } else { value / base - 1.0 }
}

/// The interval of candidate `pick` against the baseline over `grids`, and where the runner-up
/// `runner_up` falls; `None` with fewer than two conversations.
pub fn bootstrap(
    grids: &[ConversationGrid],
    candidates: &[Candidate],
    pick: usize,
    runner_up: Option<usize>,
) -> Option<Interval> {
    if grids.len() < 2 {
        return None;
    }
    let mut rng = SplitMix(SEED);
    let (mut savings, mut costs) = (Vec::with_capacity(RESAMPLES), Vec::with_capacity(RESAMPLES));
    let mut cheaper = 0usize;
    // Only the input tokens and costs are read, laid out once per conversation.
    let read: Vec<(&Cell, &Cell, f64)> = grids
        .iter()
        .map(|g| (cell(g, 0), cell(g, pick), runner_up.map_or(0.0, |r| cell(g, r).cost)))
        .collect();
    for _ in 0..RESAMPLES {
        // Summed as `Cell::add` sums them.
        let (mut base, mut chosen, mut other) = (Sum::default(), Sum::default(), 0.0);
        for _ in 0..read.len() {
            let (b, c, o) = read[rng.below(read.len())];
            base.add(b);
            chosen.add(c);
            other += o;
        }
        savings.push(-ratio(chosen.input_tokens as f64, base.input_tokens as f64));
        costs.push(ratio(chosen.cost, base.cost));
        cheaper += usize::from(chosen.cost < other);
    }
    savings.sort_by(f64::total_cmp);
    costs.sort_by(f64::total_cmp);
    let cost_change = [percentile(&costs, 0.025), percentile(&costs, 0.975)];
    let runner_up_cost_change = runner_up.map(|r| candidates[r].cost_change);
    Some(Interval {
        resamples: RESAMPLES,
        seed: SEED,
        level: 0.95,
        savings: [percentile(&savings, 0.025), percentile(&savings, 0.975)],
        cost_change,
        runner_up_cost_change,
        runner_up_within: runner_up_cost_change.is_some_and(|c| c >= cost_change[0] && c <= cost_change[1]),
        pick_cheaper_share: runner_up.map(|_| cheaper as f64 / RESAMPLES as f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_the_same_for_the_same_seed_and_stay_below_the_bound() {
        let (mut a, mut b) = (SplitMix(7), SplitMix(7));
        let draws: Vec<usize> = (0..1000).map(|_| a.below(5)).collect();
        assert_eq!(draws, (0..1000).map(|_| b.below(5)).collect::<Vec<_>>());
        assert!(draws.iter().all(|&d| d < 5));
        for k in 0..5 {
            let n = draws.iter().filter(|&&d| d == k).count();
            assert!((150..250).contains(&n), "{k} drawn {n} times in 1000");
        }
    }
}
