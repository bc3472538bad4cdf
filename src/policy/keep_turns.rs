//! `keep-turns:n=N` — the seed's window: a tool result's content is sent with the first `N` requests
//! that see it and pruned before the next one (sticky, as the seed's prune sets `content = None`).
//!
//! Results enter the context in order and all age at the same pace, so they expire in order: a
//! cursor walks forward and the policy costs O(1) amortised per request.

use super::{Content, Edit, Kind, Param, Policy, View};

/// The `keep-turns` policy.
pub const KIND: Kind = Kind {
    name: "keep-turns",
    about: "send each content with the first n requests that see it, then prune it",
    source: "the seed design (prune in a pre_llm_request hook after several turns)",
    params: &[Param { key: "n", default: "3", about: "requests that see a content before it is pruned" }],
    build: |p| Ok(Box::new(KeepTurns { n: p.get("n")?, next: 0 })),
};

/// Prunes contents that have been sent `n` times.
pub struct KeepTurns {
    n: usize,
    /// Conversation-wide index of the oldest result not yet considered expired.
    next: usize,
}

impl KeepTurns {
    /// A window of `n` requests.
    pub fn new(n: usize) -> Self {
        KeepTurns { n, next: 0 }
    }
}

impl Policy for KeepTurns {
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let Some(first) = view.results.first() else { return };
        let start = self.next.saturating_sub(first.index);
        for r in &view.results[start.min(view.results.len())..] {
            if view.request - r.first_request < self.n {
                break;
            }
            if matches!(r.content, Content::Present(_)) {
                edits.push(Edit::Prune(r.index));
            }
            self.next = r.index + 1;
        }
    }
}
