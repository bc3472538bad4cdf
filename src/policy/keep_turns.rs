//! `keep-turns:n=N` — the seed's window: a tool result's content is sent with the first `N` requests
//! that see it and pruned before the next one (sticky, as the seed's prune sets `content = None`).
//!
//! Results enter the context in order and all age at the same pace, so they expire in order: a
//! cursor walks forward and the policy costs O(1) amortised per request.
//!
//! Decides with no estimate (it counts requests), so `--decide-with` does not change it.

use super::{Content, Edit, Kind, Param, Peak, Policy, PolicyReport, Unfired, View};

/// The `keep-turns` policy.
pub const KIND: Kind = Kind {
    name: "keep-turns",
    about: "send each content with the first n requests that see it, then prune it",
    source: "the seed design (prune in a pre_llm_request hook after several turns)",
    params: &[Param { key: "n", default: "3", about: "requests that see a content before it is pruned" }],
    build: |p| {
        let KeepTurnsParams { n } = p.typed()?;
        Ok(super::builder(move || Box::new(KeepTurns::new(n)) as Box<dyn Policy>))
    },
};

/// The parameters of `keep-turns`.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeepTurnsParams {
    /// Requests that see a content before it is pruned.
    pub n: usize,
}

/// Prunes contents that have been sent `n` times.
#[derive(Clone)]
pub struct KeepTurns {
    n: usize,
    /// Conversation-wide index of the oldest result not yet considered expired.
    next: usize,
    /// Put SWE-agent's `Old environment output: (N lines omitted)` in place of an expired content
    /// instead of removing it (the Complexity Trap's masking).
    swe_placeholder: bool,
    /// The most requests any present content had been sent with.
    peak: Peak,
    fired: bool,
}

impl KeepTurns {
    /// A window of `n` requests.
    pub fn new(n: usize) -> Self {
        KeepTurns { n, next: 0, swe_placeholder: false, peak: Peak::default(), fired: false }
    }

    /// A window of `n` requests whose expired contents are replaced by SWE-agent's placeholder.
    pub fn with_swe_placeholder(n: usize) -> Self {
        KeepTurns { n, next: 0, swe_placeholder: true, peak: Peak::default(), fired: false }
    }
}

impl Policy for KeepTurns {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        super::fork_of(self)
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        for r in &view.results[view.position(self.next)..] {
            if matches!(r.content, Content::Present(_)) {
                self.peak.see((view.request - r.first_request) as u64);
            }
            if view.request - r.first_request < self.n {
                break;
            }
            if matches!(r.content, Content::Present(_)) {
                self.fired = true;
                edits.push(if self.swe_placeholder {
                    Edit::Replace(r.index, super::swe_agent::placeholder(r, false))
                } else {
                    Edit::Prune(r.index)
                });
            }
            self.next = r.index + 1;
        }
    }

    fn report(&self) -> PolicyReport {
        let template = format!(
            "prunes a content once {} requests have sent it; the most any content had been sent: {{peak}}",
            self.n
        );
        PolicyReport {
            unfired: (!self.fired).then(|| Unfired::new(template, self.peak.0)),
            ..PolicyReport::default()
        }
    }
}
