//! `keep-results:n=N` — only the `N` most recent tool results keep their content; older contents are
//! pruned (sticky). Every result counts towards `N`, split or not, as Anthropic's and LangChain's
//! "keep the last N tool uses" do.

use super::{Content, Edit, Kind, Param, Peak, Policy, PolicyReport, Unfired, View};

/// The `keep-results` policy.
pub const KIND: Kind = Kind {
    name: "keep-results",
    about: "only the n most recent tool results keep their content",
    source: "count window, as in Anthropic `keep` / LangChain `ClearToolUsesEdit(keep=...)`, applied every request",
    params: &[Param { key: "n", default: "5", about: "most recent results that keep their content" }],
    build: |p| {
        let KeepResultsParams { n } = p.typed()?;
        Ok(super::builder(move || {
            Box::new(KeepResults { n, next: 0, peak: Peak::default(), fired: false }) as Box<dyn Policy>
        }))
    },
};

/// The parameters of `keep-results`.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeepResultsParams {
    /// Most recent results that keep their content.
    pub n: usize,
}

/// Keeps the contents of the last `n` results.
#[derive(Clone)]
pub struct KeepResults {
    n: usize,
    next: usize,
    /// The most results the context held.
    peak: Peak,
    fired: bool,
}

impl Policy for KeepResults {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        super::fork_of(self)
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        self.peak.see(view.results.len() as u64);
        let keep_from = view.results.len().saturating_sub(self.n);
        for r in &view.results[view.position(self.next).min(keep_from)..keep_from] {
            if matches!(r.content, Content::Present(_)) {
                self.fired = true;
                edits.push(Edit::Prune(r.index));
            }
        }
        if keep_from > 0 {
            self.next = view.results[keep_from - 1].index + 1;
        }
    }

    fn report(&self) -> PolicyReport {
        let template = format!("keeps the newest {} results; the context held at most {{peak}}", self.n);
        PolicyReport {
            unfired: (!self.fired).then(|| Unfired::new(template, self.peak.0)),
            ..PolicyReport::default()
        }
    }
}
