//! The harness's own compaction under a counterfactual ([`crate::harness`]): the agent's trigger
//! run beside a prune policy ([`WithHarness`], built by [`trigger`]; a policy that compacts stands
//! in for it), and the as-recorded baseline, which keeps the log's compactions where they were
//! recorded whatever the mode ([`as_recorded`]), so it still reproduces the bill
//! (docs/compaction.md); it keeps the log's clearings of tool results too, which a replay under
//! `off` drops ([`crate::harness::Harness::applies_clearings`]). Nothing here prints or does I/O.

use crate::harness::Harness;
use crate::policy::{Capabilities, Edit, Policy, PolicyReport, PolicySpec, View};

use super::Compaction;

/// The agent's compaction policy of `harness` to run beside a policy (`compacts`: whether that
/// policy compacts itself, in which case its compaction stands in for the agent's and nothing is
/// added); `None` unless the harness is `simulated`.
pub fn trigger(harness: Harness, compacts: bool) -> Option<Box<dyn Policy>> {
    let name = harness.policy.filter(|_| !compacts)?;
    Some(PARSED.with_borrow_mut(|parsed| {
        let at = match parsed.iter().position(|(n, _)| *n == name) {
            Some(at) => at,
            None => {
                let spec =
                    PolicySpec::parse(name).unwrap_or_else(|e| unreachable!("`{name}` is registered: {e}"));
                parsed.push((name, spec));
                parsed.len() - 1
            }
        };
        parsed[at].1.build()
    }))
}

thread_local! {
    /// The agents' compaction specs, each parsed once per thread: a sweep asks for the trigger at
    /// every replay of a conversation, and parsing it each time was 7.8% of the default policies'
    /// replay (docs/performance.md).
    static PARSED: std::cell::RefCell<Vec<(&'static str, PolicySpec)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// A policy run beside the agent's compaction trigger: its edits, then the trigger's compactions.
pub struct WithHarness<'p> {
    policy: &'p mut dyn Policy,
    trigger: &'p mut dyn Policy,
}

impl<'p> WithHarness<'p> {
    /// `policy` beside `trigger`.
    pub fn new(policy: &'p mut dyn Policy, trigger: &'p mut dyn Policy) -> WithHarness<'p> {
        WithHarness { policy, trigger }
    }
}

impl Policy for WithHarness<'_> {
    /// The policy's, compacting: the trigger's compactions are asked for beside its edits.
    fn capabilities(&self) -> Capabilities {
        Capabilities { compacts: true, ..self.policy.capabilities() }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        self.policy.before_request(view, edits);
    }

    fn compact(&mut self, view: &View<'_>) -> Option<Compaction> {
        self.trigger.compact(view)
    }

    /// The policy's own: the agent's compaction is not the policy firing.
    fn report(&self) -> PolicyReport {
        self.policy.report()
    }
}

/// A policy replayed on the log's compactions as recorded, whatever `--harness-compaction` says:
/// the as-recorded baseline ([`as_recorded`]).
struct AsRecorded(Box<dyn Policy>);

impl Policy for AsRecorded {
    fn capabilities(&self) -> Capabilities {
        Capabilities { as_recorded: true, ..self.0.capabilities() }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        self.0.before_request(view, edits);
    }

    fn compact(&mut self, view: &View<'_>) -> Option<Compaction> {
        self.0.compact(view)
    }

    fn report(&self) -> PolicyReport {
        self.0.report()
    }
}

/// `policy` replayed on the log's compactions as recorded whatever the mode: how the baseline
/// (`none`, nothing split) stays the sessions as recorded, the bill they reproduce.
pub fn as_recorded(policy: Box<dyn Policy>) -> Box<dyn Policy> {
    Box::new(AsRecorded(policy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::HarnessCompaction;

    #[test]
    fn the_harness_wrappers_pass_the_wrapped_policys_questions_on() {
        // LangChain reads the messages one by one: a wrapper that did not say so would leave it
        // counting from the totals (the replay keeps per-message sizes only when asked).
        let langchain = || crate::policy::PolicySpec::parse("langchain").unwrap().build();
        let cc = Harness::resolve(HarnessCompaction::Simulated, "claude-code");
        let mut inner = langchain();
        let mut agent = trigger(cc, false).unwrap();
        let beside = WithHarness::new(&mut *inner, &mut *agent).capabilities();
        assert!(beside.message_sizes && !beside.as_recorded && beside.compacts && !beside.sticky);
        let baseline = as_recorded(langchain()).capabilities();
        assert!(baseline.message_sizes && baseline.as_recorded && !baseline.sticky);
        let none = as_recorded(crate::policy::PolicySpec::parse("none").unwrap().build()).capabilities();
        assert!(!none.message_sizes && none.as_recorded && none.sticky);
    }

    #[test]
    fn a_compacting_policy_stands_in_for_the_agents_trigger() {
        let cc = Harness::resolve(HarnessCompaction::Simulated, "opencode");
        assert!(trigger(cc, false).is_some_and(|t| t.capabilities().compacts));
        assert!(trigger(cc, true).is_none());
        assert!(trigger(Harness::RECORDED, false).is_none());
    }

    use super::super::claude_code;
    use crate::harness;
    use crate::measure::{MeasureOptions, MeasuredConversation};
    use crate::model::{Conversation, Item, Request};
    use crate::tokens::Meter;
    use crate::tokens::{DecideWith, Tokenizer};

    fn user(t: &str) -> Item {
        Item::User { text: t.into(), meta: false, images: 0 }
    }

    fn request() -> Item {
        Item::Request(Request::default())
    }

    /// 100 bytes, request 0; 100 more, request 1; a recorded compaction (its summary of 10 bytes in
    /// the marker, or as the user text after it) and request 2; 100 more, request 3. One token per
    /// byte.
    fn measured(summary_in_marker: bool, harness: Harness) -> (MeasuredConversation, crate::tokens::Meter) {
        let meter = crate::policy::testing::meter(DecideWith::Tokenizer(Tokenizer::O200k));
        let mut items = vec![user(&"a".repeat(100)), request(), user(&"b".repeat(100)), request()];
        if summary_in_marker {
            items.push(Item::Compaction { summary: Some("s".repeat(10)) });
        } else {
            items.extend([Item::Compaction { summary: None }, user(&"s".repeat(10))]);
        }
        items.extend([request(), user(&"c".repeat(100)), request()]);
        let conv = Conversation { id: "main".into(), items, recorded_total: None };
        let mut m = MeasuredConversation::new(&conv, &meter, &MeasureOptions::default());
        m.harness = harness;
        (m, meter)
    }

    /// The context of each request of `m` under `policy`.
    fn contexts(m: &MeasuredConversation, meter: &crate::tokens::Meter, policy: &mut dyn Policy) -> Vec<u64> {
        crate::replay::replay(m, 16, policy, meter).rows.iter().map(|r| r.context_tokens).collect()
    }

    /// A trigger at 150 tokens with a 5-token summary.
    const TRIGGER: &str = "compact:anthropic-sdk:context_token_threshold=150,summary_tokens=5";

    #[test]
    fn each_mode_replays_the_logs_compaction_as_it_says() {
        let none = || PolicySpec::parse("none").unwrap().build();
        let simulated = Harness { mode: HarnessCompaction::Simulated, policy: Some(TRIGGER), agent: None };
        let off = Harness { mode: HarnessCompaction::Off, policy: None, agent: None };
        for in_marker in [true, false] {
            let (m, meter) = measured(in_marker, Harness::RECORDED);
            assert_eq!(contexts(&m, &meter, &mut *none()), [100, 200, 10, 110], "recorded");
            // The compaction and its summary dropped: the context keeps growing.
            let (m, meter) = measured(in_marker, off);
            assert_eq!(contexts(&m, &meter, &mut *none()), [100, 200, 200, 300], "off");
            // The trigger fires at request 1 (200 tokens), the log's compaction is dropped.
            let (m, meter) = measured(in_marker, simulated);
            let run = crate::replay::replay(&m, 16, &mut *none(), &meter);
            let sent: Vec<u64> = run.rows.iter().map(|r| r.context_tokens).collect();
            assert_eq!(sent, [100, 5, 5, 105], "simulated");
            assert_eq!((run.summary.compaction.compactions, run.summary.compaction.summary_tokens), (1, 5));
            assert_eq!(run.summary.harness_compaction, "simulated");
            assert_eq!(run.summary.harness_compaction_policy.as_deref(), Some(TRIGGER));
            // The baseline stays as recorded whatever the mode.
            assert_eq!(contexts(&m, &meter, &mut *as_recorded(none())), [100, 200, 10, 110], "baseline");
        }
    }

    #[test]
    fn a_compacting_policy_replaces_the_agents_trigger_and_a_prune_policy_runs_beside_it() {
        let simulated = Harness { mode: HarnessCompaction::Simulated, policy: Some(TRIGGER), agent: None };
        let (m, meter) = measured(true, simulated);
        // Its own trigger at 250 tokens: never reached once the log's compaction is dropped... until
        // request 3 (300 tokens).
        let own =
            PolicySpec::parse("compact:anthropic-sdk:context_token_threshold=250,summary_tokens=7").unwrap();
        assert_eq!(contexts(&m, &meter, &mut *own.build()), [100, 200, 200, 7]);
        // keep-turns prunes nothing here (no tool results): the agent's trigger still fires.
        let prune = PolicySpec::parse("keep-turns:n=1").unwrap();
        assert_eq!(contexts(&m, &meter, &mut *prune.build()), [100, 5, 5, 105]);
    }

    /// Claude Code's trigger at 250 tokens, with a 5-token summary.
    const CLAUDE_CODE: &str = "compact:claude-code:window=350,buffer=100,summary_tokens=5";

    /// 100 bytes, request 0 (the provider recorded a prompt of `first` and an output of 30); 100
    /// more, request 1 (`second`, 30); 100 more, request 2. One token per byte, the log of a Claude
    /// Code session.
    fn usage_recorded(first: u64, second: u64, harness: Harness) -> (MeasuredConversation, Meter) {
        let meter = crate::policy::testing::meter(DecideWith::Tokenizer(Tokenizer::O200k));
        let recorded = |input_tokens| {
            let usage = crate::model::Usage { input_tokens, output_tokens: Some(30), ..Default::default() };
            Item::Request(Request { usage: Some(usage), ..Request::default() })
        };
        let items = vec![
            user(&"a".repeat(100)),
            recorded(first),
            user(&"b".repeat(100)),
            recorded(second),
            user(&"c".repeat(100)),
            request(),
        ];
        let conv = Conversation { id: "main".into(), items, recorded_total: None };
        let mut m = MeasuredConversation::new(&conv, &meter, &MeasureOptions::default());
        m.harness = harness;
        (m, meter)
    }

    #[test]
    fn the_logs_agents_trigger_reads_the_usage_the_provider_would_have_reported() {
        use HarnessCompaction::{Off, Simulated};
        let agent = Some(claude_code::NAME);
        let simulated = Harness { mode: Simulated, policy: Some(CLAUDE_CODE), agent };
        let none = || PolicySpec::parse("none").unwrap().build();
        let policy = |spec: &str| PolicySpec::parse(spec).unwrap().build();
        // The provider recorded 90 and then 60 (it cleared what the log still holds): request 1 is
        // estimated at request 0's usage, 100 + (90 - 100) + 30 = 120, request 2 at request 1's,
        // 200 + (60 - 200) + 30 = 90, both under 250.
        let (m, meter) = usage_recorded(90, 60, simulated);
        assert_eq!(contexts(&m, &meter, &mut *none()), [100, 200, 300], "never compacts");
        // The same trigger chosen as a policy reads it too, in every mode.
        let (m, meter) = usage_recorded(90, 60, Harness { mode: Off, policy: None, agent });
        assert_eq!(contexts(&m, &meter, &mut *policy(CLAUDE_CODE)), [100, 200, 300]);
        // Another agent's trigger reads the context as sent: 300 at request 2.
        let sdk = "compact:anthropic-sdk:context_token_threshold=249,summary_tokens=5";
        assert_eq!(contexts(&m, &meter, &mut *policy(sdk)), [100, 200, 5]);
        // So does the trigger on a log whose agent is not known.
        let (m, meter) = usage_recorded(90, 60, Harness { mode: Off, policy: None, agent: None });
        assert_eq!(contexts(&m, &meter, &mut *policy(CLAUDE_CODE)), [100, 200, 5]);
        // The previous response's usage, not the next prompt: request 1 reads 100 + 50 + 30 = 180,
        // although its own prompt (200 + 50) reaches the trigger.
        let (m, meter) = usage_recorded(150, 60, simulated);
        assert_eq!(contexts(&m, &meter, &mut *none()), [100, 200, 300]);
        // The output counts: 100 + (230 - 100) + 30 = 260 at request 1 (230 without it).
        let (m, meter) = usage_recorded(230, 60, simulated);
        assert_eq!(contexts(&m, &meter, &mut *none()), [100, 5, 105]);
        // After the replay's own compaction nothing is carried: request 2 reads 105 as sent.
        // Codex counts the next prompt: request 1 reads 200 + (150 - 100) = 250 and compacts.
        let codex = "compact:codex:window=1000,model_auto_compact_token_limit=250,summary_tokens=5";
        let agent = Some(super::super::codex::NAME);
        let (m, meter) = usage_recorded(150, 60, Harness { mode: Off, policy: None, agent });
        assert_eq!(contexts(&m, &meter, &mut *policy(codex)), [100, 5, 105]);
        assert_eq!(harness::agent_policy("claude-code"), Some(claude_code::NAME));
        assert_eq!(harness::agent_policy("codex"), Some(super::super::codex::NAME));
        assert_eq!(harness::agent_policy("opencode"), Some(super::super::opencode::NAME));
    }

    #[test]
    fn the_baseline_wrapper_is_replayed_as_recorded_and_changes_nothing_else() {
        let none = PolicySpec::parse("none").unwrap();
        assert!(!none.build().capabilities().as_recorded);
        let wrapped = as_recorded(none.build()).capabilities();
        assert_eq!(wrapped, Capabilities { as_recorded: true, ..Capabilities::default() });
    }
}
