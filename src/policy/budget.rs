//! `budget:max=T,target=U` — before a request whose context exceeds `T` tokens (as the policy
//! counts them, see `--decide-with`), prune the oldest contents until the context is at most `U`, or
//! nothing is left to prune. Sticky. The gap between `T` and `U` is the hysteresis that batches
//! prunes, so the prompt cache breaks rarely. Decides with the seed's own estimate (`len/4` per
//! text, [`Estimator::Seed`]) unless `--decide-with` says otherwise.

use super::{Content, Edit, Estimator, Kind, Param, Peak, Policy, PolicyReport, Unfired, View};

/// The `budget` policy.
pub const KIND: Kind = Kind {
    name: "budget",
    about: "when the context exceeds max, prune oldest contents down to target",
    source: "hysteresis budget (the batching that every shipped prune has, see ANCHORS.md §8)",
    params: &[
        Param { key: "max", default: "100000", about: "context size (tokens) that triggers a prune" },
        Param { key: "target", default: "50000", about: "context size to prune down to" },
    ],
    build: |p| {
        let BudgetParams { max, target } = p.typed()?;
        if target > max {
            return Err(p.bad("target", format!("must not exceed max ({max}), got {target}")));
        }
        Ok(super::builder(move || {
            Box::new(Budget { max, target, next: 0, peak: Peak::default(), fired: false }) as Box<dyn Policy>
        }))
    },
};

/// The parameters of `budget`.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetParams {
    /// Context size (tokens) that triggers a prune.
    pub max: u64,
    /// Context size to prune down to.
    pub target: u64,
}

/// Prunes oldest contents when over budget.
#[derive(Clone)]
pub struct Budget {
    max: u64,
    target: u64,
    next: usize,
    /// The largest context it measured.
    peak: Peak,
    fired: bool,
}

impl Policy for Budget {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        super::fork_of(self)
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let mut size = view.tokens(Estimator::Seed, &view.context);
        self.peak.see(size);
        if size <= self.max {
            return;
        }
        self.fired = true;
        for r in &view.results[view.position(self.next)..] {
            if size <= self.target {
                break;
            }
            if let Content::Present(c) = r.content {
                edits.push(Edit::Prune(r.index));
                size = size.saturating_sub(view.tokens(Estimator::Seed, &c));
            }
            self.next = r.index + 1;
        }
    }

    fn report(&self) -> PolicyReport {
        let template = format!("trigger {} tokens > peak {{peak}}", self.max);
        PolicyReport {
            unfired: (!self.fired).then(|| Unfired::new(template, self.peak.0)),
            ..PolicyReport::default()
        }
    }
}
