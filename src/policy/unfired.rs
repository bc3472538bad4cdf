//! Why a policy never fired: the trigger it compares against, in its own unit, beside the most it
//! measured against that trigger, so a row that pruned nothing says why in numbers ("trigger
//! 100000 tokens > peak 80344") instead of reading as a failure to prune. Each policy describes its
//! own trigger ([`super::Policy::report`]); the comparison adds up a policy's runs (the largest
//! peak of each wording) and shows the words in the row and in the JSON (`never_fired_reason`).

use std::sync::Arc;

/// A policy's trigger and the most it measured against it in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfired {
    /// The sentence, with `{peak}` where the peak goes (shared: a grid copies it with every cell).
    pub template: Arc<str>,
    /// The most the policy measured against its trigger, in the trigger's unit.
    pub peak: u64,
}

impl Unfired {
    /// `template` (with `{peak}` where `peak` goes) at `peak`.
    pub fn new(template: impl Into<Arc<str>>, peak: u64) -> Unfired {
        Unfired { template: template.into(), peak }
    }

    /// The sentence with its peak.
    pub fn text(&self) -> String {
        self.template.replace("{peak}", &self.peak.to_string())
    }
}

/// The largest peak seen so far, for a policy to remember what it measured against its trigger.
#[derive(Debug, Clone, Copy, Default)]
pub struct Peak(pub u64);

impl Peak {
    /// Remembers `value` if it is the largest yet.
    pub fn see(&mut self, value: u64) {
        self.0 = self.0.max(value);
    }
}

/// The runs of one policy added up: each wording once, with the largest peak of its runs, in the
/// order first met. Shared when copied (a grid copies one with each of its cells), copied when
/// added to while shared; none is no allocation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unfireds(Option<Arc<Vec<Unfired>>>);

impl Unfireds {
    /// Adds a run's description.
    pub fn add(&mut self, u: &Unfired) {
        let all = Arc::make_mut(self.0.get_or_insert_with(Default::default));
        match all.iter_mut().find(|o| o.template == u.template) {
            Some(o) => o.peak = o.peak.max(u.peak),
            None => all.push(u.clone()),
        }
    }

    /// Each wording with its largest peak.
    pub fn iter(&self) -> impl Iterator<Item = &Unfired> {
        self.0.iter().flat_map(|all| all.iter())
    }

    /// The wordings joined with `; `, or `None` when none was added.
    pub fn text(&self) -> Option<String> {
        let all = self.0.as_deref().filter(|all| !all.is_empty())?;
        Some(all.iter().map(Unfired::text).collect::<Vec<_>>().join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_one_wording_keep_the_largest_peak_and_other_wordings_follow() {
        let mut all = Unfireds::default();
        assert_eq!(all.text(), None);
        all.add(&Unfired::new("trigger 100 tokens > peak {peak}", 80));
        all.add(&Unfired::new("trigger 100 tokens > peak {peak}", 95));
        all.add(&Unfired::new("trigger 100 tokens > peak {peak}", 10));
        assert_eq!(all.text().as_deref(), Some("trigger 100 tokens > peak 95"));
        all.add(&Unfired::new("no human turn started after the first", 0));
        assert_eq!(
            all.text().as_deref(),
            Some("trigger 100 tokens > peak 95; no human turn started after the first")
        );
        let mut p = Peak::default();
        p.see(3);
        p.see(1);
        assert_eq!(p.0, 3);
    }

    #[test]
    fn a_copy_added_to_leaves_the_original_as_it_was() {
        let mut all = Unfireds::default();
        all.add(&Unfired::new("trigger 100 tokens > peak {peak}", 80));
        let mut copy = all.clone();
        copy.add(&Unfired::new("trigger 100 tokens > peak {peak}", 95));
        copy.add(&Unfired::new("no human turn started after the first", 0));
        assert_eq!(all.text().as_deref(), Some("trigger 100 tokens > peak 80"));
        assert_eq!(copy.iter().count(), 2);
        assert_eq!(Unfireds::default().iter().count(), 0);
    }
}
