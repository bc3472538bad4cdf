//! `none`: never prune. The baseline every saving is measured against.

use super::{Edit, Kind, Policy, View};

/// The `none` policy.
pub const KIND: Kind = Kind {
    name: "none",
    about: "never prune: every content stays in the context",
    source: "baseline",
    params: &[],
    build: |_| Ok(super::builder(|| Box::new(NoPrune) as Box<dyn Policy>)),
};

/// Never prunes.
#[derive(Clone)]
pub struct NoPrune;

impl Policy for NoPrune {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        super::fork_of(self)
    }

    fn before_request(&mut self, _view: &View<'_>, _edits: &mut Vec<Edit>) {}
}
