//! The library's front door: a replay builder over loaded traces, and policies written outside
//! the crate.
//!
//! [`Replayer`] gathers what a replay needs (thresholds, policies, the meter, calibration or a
//! fixed overhead) and measures each conversation once, exactly as the command line does, then
//! replays it ([`Replayer::replay`]), compares the policies ([`Replayer::compare`]) or sweeps the
//! threshold under each ([`Replayer::sweep`]). Any policy goes: a registry spec
//! ([`PolicySpec`]) or a user-written [`Policy`] wrapped by [`policy_fn`]. Nothing here reads
//! files or prints: traces come in loaded ([`crate::input::load`]), results go out as the
//! analyses' serde structs. Its default meter is the command line's: `--tokenizer provider`
//! (each conversation in its provider's tokens), policies deciding with their anchors; what the
//! user sees and what a library caller gets are the same numbers.

use crate::analysis::compare::{CompareSettings, Comparison, PolicySource, compare_sources};
use crate::analysis::cost::CacheModel;
use crate::analysis::sweep::{self, Sweep, SweepSettings};
use crate::harness::HarnessCompaction;
use crate::measure::MeasuredConversation;
use crate::model::{Tokens, Trace};
use crate::pipeline::{Job, Replaying, replay_measured};
use crate::policy::{Policy, PolicySpec};
use crate::result::Run;
use crate::split::SUMMARY_THRESHOLD;
use crate::tokens::{DecideWith, Meter, Tokenizer};

/// A policy built by a closure and shown under a label: how a [`Policy`] written outside the
/// crate enters a replay, a comparison or a sweep ([`policy_fn`]).
pub struct PolicyFn<F> {
    label: String,
    make: F,
}

/// A policy source named `label` whose fresh policy (one per conversation) `make` builds.
///
/// ```
/// use ctxbudget::{Edit, Policy, View, policy_fn};
///
/// /// Prunes nothing: the same context as `none`.
/// struct KeepAll;
/// impl Policy for KeepAll {
///     fn before_request(&mut self, _view: &View<'_>, _edits: &mut Vec<Edit>) {}
/// }
///
/// let source = policy_fn("keep-all", || Box::new(KeepAll));
/// # use ctxbudget::PolicySource;
/// assert_eq!(source.label(), "keep-all");
/// ```
pub fn policy_fn<F>(label: impl Into<String>, make: F) -> PolicyFn<F>
where
    F: Fn() -> Box<dyn Policy> + Sync,
{
    PolicyFn { label: label.into(), make }
}

impl<F> PolicySource for PolicyFn<F>
where
    F: Fn() -> Box<dyn Policy> + Sync,
{
    fn label(&self) -> &str {
        &self.label
    }

    fn fresh(&self) -> Box<dyn Policy> {
        (self.make)()
    }
}

/// A replay to run: thresholds × policies over loaded traces, measured as the command line
/// measures (each conversation in its provider's tokens, [`Tokenizer::Provider`]; policies deciding
/// with their own anchors; each conversation calibrated from its recorded usage unless a fixed
/// overhead is given). The default follows the command line's, so a library caller and the CLI
/// give the same numbers; [`Replayer::meter`] with `Meter::new(Tokenizer::O200k,
/// Tokenizer::Estimate)` counts every conversation in o200k instead.
///
/// ```no_run
/// use ctxbudget::{PolicySpec, Replayer};
///
/// let trace = ctxbudget::input::load("traces/explore-split.jsonl".as_ref(), None)?;
/// let runs = Replayer::new()
///     .threshold(256)
///     .policy(PolicySpec::parse("keep-turns:n=3")?)
///     .replay("explore-split.jsonl", &trace);
/// for run in &runs {
///     println!("{} {} {}", run.summary.policy, run.summary.threshold, run.summary.total_input_tokens);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Replayer {
    meter: Meter,
    thresholds: Vec<usize>,
    policies: Vec<Box<dyn PolicySource>>,
    overhead: Option<Tokens>,
    rows: bool,
    harness_compaction: HarnessCompaction,
}

impl Default for Replayer {
    fn default() -> Replayer {
        Replayer::new()
    }
}

impl Replayer {
    /// No threshold or policy yet (with none given, [`SUMMARY_THRESHOLD`] and `none`), the
    /// command line's default meter, calibration on, per-request rows kept.
    pub fn new() -> Replayer {
        Replayer {
            meter: Meter::new(Tokenizer::Provider, Tokenizer::Estimate).deciding(DecideWith::Anchor),
            thresholds: Vec::new(),
            policies: Vec::new(),
            overhead: None,
            rows: true,
            harness_compaction: HarnessCompaction::default(),
        }
    }

    /// Counts with `meter` instead (another tokenizer, or policies deciding otherwise).
    pub fn meter(mut self, meter: Meter) -> Replayer {
        self.meter = meter;
        self
    }

    /// Adds a threshold (UTF-8 bytes) to split at.
    pub fn threshold(mut self, bytes: usize) -> Replayer {
        self.thresholds.push(bytes);
        self
    }

    /// Adds a policy: a registry spec, or any [`PolicySource`] such as [`policy_fn`]'s.
    pub fn policy(mut self, policy: impl PolicySource + 'static) -> Replayer {
        self.policies.push(Box::new(policy));
        self
    }

    /// Adds `tokens` of unrecorded overhead to every request instead of calibrating.
    pub fn overhead(mut self, tokens: Tokens) -> Replayer {
        self.overhead = Some(tokens);
        self
    }

    /// What every replay but the as-recorded baseline does with the compactions a log recorded
    /// (the command line's `--harness-compaction`; by default
    /// [`HarnessCompaction::Simulated`], docs/compaction.md).
    pub fn harness_compaction(mut self, mode: HarnessCompaction) -> Replayer {
        self.harness_compaction = mode;
        self
    }

    /// Keeps only each run's summary (no per-request rows): less memory for long traces.
    pub fn without_rows(mut self) -> Replayer {
        self.rows = false;
        self
    }

    /// The meter the replay counts with.
    pub fn meter_ref(&self) -> &Meter {
        &self.meter
    }

    fn thresholds(&self) -> Vec<usize> {
        if self.thresholds.is_empty() { vec![SUMMARY_THRESHOLD] } else { self.thresholds.clone() }
    }

    /// The policies, `none` when none was given.
    fn sources(&self) -> Vec<&dyn PolicySource> {
        self.policies.iter().map(|p| &**p as &dyn PolicySource).collect()
    }

    /// Every conversation of `trace`, measured once as the command line measures it (with the
    /// reuse index [`crate::compare`] reads).
    pub fn measure(&self, trace: &Trace) -> Vec<MeasuredConversation> {
        let job = Job {
            overhead: self.overhead.unwrap_or(0),
            calibrate: self.overhead.is_none(),
            reuse: true,
            harness_compaction: self.harness_compaction,
            ..Job::default()
        };
        trace.conversations.iter().map(|c| job.measure(c, trace.format, &self.meter)).collect()
    }

    /// Replays every conversation of `trace` (read from `path`) at every threshold under every
    /// policy: runs in that nesting order, labelled as the command line labels them.
    pub fn replay(&self, path: &str, trace: &Trace) -> Vec<Run> {
        let measured = self.measure(trace);
        let none = none_spec();
        let mut sources = self.sources();
        if sources.is_empty() {
            sources.push(&none);
        }
        let thresholds = self.thresholds();
        let replaying = Replaying {
            path,
            format: trace.format,
            thresholds: &thresholds,
            sources: &sources,
            rows: self.rows,
        };
        replay_measured(&measured, &replaying, &self.meter).0
    }

    /// Compares the policies (`none` first unless one is labelled so) on `traces` (path, trace)
    /// at the first threshold, with a `window`-token context and `cache` prices.
    pub fn compare(&self, traces: &[(&str, &Trace)], window: Tokens, cache: CacheModel) -> Comparison {
        let measured = self.measure_all(traces);
        let conversations: Vec<(&str, &MeasuredConversation)> =
            measured.iter().flat_map(|(path, ms)| ms.iter().map(move |m| (*path, m))).collect();
        let none = none_spec();
        let mut sources = self.sources();
        if !sources.iter().any(|s| s.label() == "none") {
            sources.insert(0, &none);
        }
        let settings =
            CompareSettings { policies: Vec::new(), threshold: self.thresholds()[0], window, cache };
        compare_sources(&conversations, &sources, &settings, &self.meter)
    }

    /// Sweeps the thresholds given ([`sweep::DEFAULT_THRESHOLDS`] when only one or none was) under
    /// each policy on `traces`, one [`Sweep`] per policy, with the default tolerance and number
    /// of per-tool recommendations.
    pub fn sweep(&self, traces: &[(&str, &Trace)]) -> Vec<Sweep> {
        let measured = self.measure_all(traces);
        let conversations: Vec<&MeasuredConversation> = measured.iter().flat_map(|(_, ms)| ms).collect();
        let thresholds = if self.thresholds.len() > 1 {
            self.thresholds.clone()
        } else {
            sweep::parse_thresholds(sweep::DEFAULT_THRESHOLDS)
                .unwrap_or_else(|e| unreachable!("the default thresholds parse: {e}"))
        };
        let settings = SweepSettings {
            thresholds,
            policy: none_spec(),
            tolerance: sweep::DEFAULT_TOLERANCE,
            top_tools: sweep::DEFAULT_TOP_TOOLS,
            cache: Default::default(),
        };
        let none = none_spec();
        let mut sources = self.sources();
        if sources.is_empty() {
            sources.push(&none);
        }
        sources.iter().map(|s| sweep::sweep_with(&conversations, &settings, *s, &self.meter)).collect()
    }

    fn measure_all<'p>(&self, traces: &[(&'p str, &Trace)]) -> Vec<(&'p str, Vec<MeasuredConversation>)> {
        traces.iter().map(|(path, trace)| (*path, self.measure(trace))).collect()
    }
}

/// The registry's `none`.
fn none_spec() -> PolicySpec {
    PolicySpec::parse("none").unwrap_or_else(|e| unreachable!("`none` is registered: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::{self, with_baseline};
    use crate::model::{Conversation, Item, Output, Request, ToolResult};
    use crate::pipeline::replay_trace;

    fn trace() -> Trace {
        let mut c = Conversation::new("main");
        c.items.push(Item::User { text: "look".into(), meta: false, images: 0 });
        for k in 0..4 {
            c.items.push(Item::ToolCall {
                call_id: format!("c{k}"),
                name: "read".into(),
                arguments: "{}".into(),
            });
            c.items.push(Item::ToolResult(ToolResult {
                call_id: format!("c{k}"),
                name: Some("read".into()),
                output: Output::Raw { output: format!("line {k}\n").repeat(40 * (k + 1)) },
                is_error: false,
                images: 0,
            }));
            c.items.push(Item::Request(Request::default()));
        }
        Trace { format: "native", conversations: vec![c], warnings: Vec::new() }
    }

    fn meter() -> Meter {
        Meter::new(Tokenizer::Estimate, Tokenizer::Estimate).deciding(DecideWith::Anchor)
    }

    fn spec(s: &str) -> PolicySpec {
        PolicySpec::parse(s).unwrap()
    }

    /// The registry spec `s` hidden behind a closure, as a policy from outside the crate is seen.
    fn wrapped(s: &str) -> impl PolicySource + 'static {
        let spec = spec(s);
        policy_fn(format!("custom {s}"), move || spec.build())
    }

    #[test]
    fn the_builder_replays_as_the_pipeline_does() {
        let specs = [spec("none"), spec("keep-results:n=1")];
        let job =
            Job { thresholds: vec![0, 64], policies: specs.to_vec(), calibrate: true, ..Job::default() };
        let expected = replay_trace("t.jsonl", &trace(), &job, &meter());
        let ours = Replayer::new()
            .meter(meter())
            .threshold(0)
            .threshold(64)
            .policy(specs[0].clone())
            .policy(specs[1].clone())
            .replay("t.jsonl", &trace());
        assert_eq!(ours, expected);
    }

    #[test]
    fn a_policy_behind_a_closure_compares_as_its_spec_does() {
        let t = trace();
        let custom = Replayer::new().meter(meter()).policy(wrapped("keep-results:n=1"));
        let ours = custom.compare(&[("t.jsonl", &t)], 1000, CacheModel::default());
        let measured = custom.measure(&t);
        let settings = CompareSettings {
            policies: vec![spec("keep-results:n=1")],
            threshold: SUMMARY_THRESHOLD,
            window: 1000,
            cache: CacheModel::default(),
        };
        let builtin = compare::compare(&[("t.jsonl", &measured[0])], &settings, &meter());
        assert_eq!(with_baseline(&settings.policies).len(), ours.policies.len());
        for (a, b) in ours.policies.iter().zip(&builtin.policies) {
            assert_eq!(a.policy.replace("custom ", ""), b.policy);
            assert_eq!(
                (a.total_input_tokens, a.savings, a.prune_events),
                (b.total_input_tokens, b.savings, b.prune_events)
            );
        }
        assert!(ours.policies[1].pruned_tokens > 0, "the custom policy prunes: {:?}", ours.policies[1]);
    }

    #[test]
    fn a_policy_behind_a_closure_sweeps_as_its_spec_does() {
        let t = trace();
        let ours =
            Replayer::new().meter(meter()).policy(wrapped("keep-results:n=1")).sweep(&[("t.jsonl", &t)]);
        let measured = Replayer::new().meter(meter()).measure(&t);
        let refs: Vec<&MeasuredConversation> = measured.iter().collect();
        let settings = SweepSettings {
            thresholds: sweep::parse_thresholds(sweep::DEFAULT_THRESHOLDS).unwrap(),
            policy: spec("keep-results:n=1"),
            tolerance: sweep::DEFAULT_TOLERANCE,
            top_tools: sweep::DEFAULT_TOP_TOOLS,
            cache: Default::default(),
        };
        let builtin = sweep::sweep(&refs, &settings, &meter());
        assert_eq!(ours.len(), 1);
        assert_eq!(ours[0].policy, "custom keep-results:n=1");
        assert_eq!(Sweep { policy: builtin.policy.clone(), ..ours[0].clone() }, builtin);
    }
}
