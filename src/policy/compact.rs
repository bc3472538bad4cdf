//! Compaction policies: when a harness summarises its context, how large the summary is, and what
//! it keeps after it. `compact:<agent>` names each agent's trigger with its defaults (one file per
//! agent below, each citing its source); `PRUNE+compact:<agent>` runs a prune policy and a
//! compaction policy together ([`combine`]), as the agents ship them.
//!
//! A compaction policy answers [`Policy::compact`] (asked only when it compacts,
//! [`super::Capabilities::compacts`]) with a [`Compaction`]: the replay then summarises everything
//! in the context before the request, except the system prompt and the recent tail the agent
//! keeps, into a summary of the size [`Summary`] gives, and bills the summarisation call
//! (docs/compaction.md). No LLM is called: the summary's size is the ratio of summary to
//! summarised tokens that the log's own recorded compactions show ([`View::log_summary_ratio`])
//! where it has any, else the agent's default ratio (measured on the corpus), or a fixed size.
//! Triggers count the context as sent, in provider tokens (the calibrated replay,
//! docs/calibration.md): what the agents read from the provider's reported usage; on a log of
//! their own agent, the triggers of the agents that read it (Claude Code, Codex, opencode) read the
//! replay's estimate of that usage ([`Reported`], [`at_usage_limit`]). Nothing here prints or does
//! I/O.

pub mod anthropic_sdk;
pub mod claude_code;
pub mod codex;
pub mod goose;
pub mod goose_tools;
pub mod harness;
pub mod opencode;
pub mod openhands;

use super::{Capabilities, Edit, Param, Policy, PolicyReport, View};
use crate::model::Tokens;

/// A compaction a policy asks for before a request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Compaction {
    /// How large the summary is.
    pub summary: Summary,
    /// Items at this conversation position and after are kept after the summary (the recent
    /// tail), as one block that later edits cannot change; `None` keeps nothing but the system
    /// prompt.
    pub keep_from: Option<usize>,
    /// Tokens of the summarisation instructions sent with the context in the summarisation call.
    pub prompt_tokens: Tokens,
    /// The summarisation call sends the whole context, whose prefix the provider's cache holds
    /// from the previous request (most agents); `false`: only what is summarised away (OpenHands'
    /// condenser, Goose's tool-pair calls).
    pub whole_context: bool,
    /// How the summarisation call uses the provider's prompt cache ([`CallCache`];
    /// docs/compaction.md, "Billing").
    pub cache: CallCache,
    /// Tool pairs replaced one by one, the rest of the context staying as it is ([`Pairs`]);
    /// `None`: the context is summarised as above.
    pub pairs: Option<Pairs>,
}

/// How a summarisation call uses the provider's prompt cache, which decides its input's price
/// (docs/compaction.md, "Billing").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallCache {
    /// The call sends the conversation as the agent's requests do, with cache breakpoints: the
    /// prefix the previous request cached is read, the rest written (Claude Code, Codex, the
    /// Anthropic SDK).
    Prefix,
    /// The call sets cache breakpoints, but opens with a system prompt and tools of its own, so
    /// no byte of it matches the conversation's cached prefix: nothing is read, all of its input
    /// is written (opencode's default compaction).
    Written,
    /// The call is made with prompt caching off: nothing is read or written, all of its input is
    /// at the plain input price (OpenHands' condenser, Goose's compaction and tool-pair calls).
    Off,
}

/// The tool call and result pairs a compaction replaces in place, each by a summary of its own
/// made by a call of its own (Goose's tool-pair summarisation, [`goose_tools`]): [`Compaction`]'s
/// `summary` and `prompt_tokens` are then per pair, and its `keep_from` is not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pairs {
    /// Conversation-wide index of the first result replaced ([`super::ResultState::index`]).
    pub from: usize,
    /// One past the last.
    pub to: usize,
}

/// The size of a compaction's summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Summary {
    /// A fixed number of tokens.
    Tokens(Tokens),
    /// This many tokens per token summarised away.
    Ratio(f64),
}

impl Summary {
    /// The summary's tokens when `summarised` tokens are summarised away.
    pub fn tokens(self, summarised: Tokens) -> Tokens {
        match self {
            Summary::Tokens(t) => t,
            Summary::Ratio(r) => (summarised as f64 * r).round() as Tokens,
        }
    }
}

/// Summary tokens per token summarised away, measured on the one compaction the shared corpus
/// records (Claude Code, `session-624a4a58.jsonl`: 3,371 summary tokens for 103,260 replaced;
/// docs/compaction.md); the default of every agent, whose own logs the corpus has none of.
pub const MEASURED_SUMMARY_RATIO: &str = "0.0326";

/// The `summary_ratio` parameter, with the measured default.
pub const SUMMARY_RATIO: Param = Param {
    key: "summary_ratio",
    default: MEASURED_SUMMARY_RATIO,
    about: "summary tokens per token summarised away, when the log records no compaction of its own \
            (or summary_from_log=false)",
};

/// The `summary_tokens` parameter.
pub const SUMMARY_TOKENS: Param = Param {
    key: "summary_tokens",
    default: "0",
    about: "a fixed summary size in tokens instead of a ratio (0: use the ratio)",
};

/// The `summary_from_log` parameter.
pub const SUMMARY_FROM_LOG: Param = Param {
    key: "summary_from_log",
    default: "true",
    about: "size summaries by the ratio of the compactions the log itself recorded, where it has any",
};

/// How a compaction policy sizes its summaries and its summarisation call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summarizer {
    /// Summary tokens per token summarised away.
    pub ratio: f64,
    /// A fixed summary size (0: use the ratio).
    pub tokens: Tokens,
    /// Prefer the ratio the log's own compactions show.
    pub from_log: bool,
    /// Tokens of the summarisation instructions.
    pub prompt_tokens: Tokens,
    /// How the summarisation call uses the prompt cache ([`CallCache::Prefix`] unless the policy
    /// says otherwise).
    pub cache: CallCache,
}

/// The summary's keys of every compaction policy's parameters.
#[derive(Debug, Clone, serde::Deserialize)]
struct SummaryParams {
    summary_ratio: f64,
    summary_tokens: u64,
    summary_from_log: bool,
    prompt_tokens: u64,
}

impl Summarizer {
    /// The summariser a compaction policy's parameters `p` describe (the ratio from 0 to 1).
    pub fn from_params(p: &super::Params) -> Result<Summarizer, crate::error::SpecError> {
        let q: SummaryParams = p.typed()?;
        if !(0.0..=1.0).contains(&q.summary_ratio) {
            let got = format!("must be a fraction from 0 to 1, got `{}`", q.summary_ratio);
            return Err(p.bad("summary_ratio", got));
        }
        Ok(Summarizer {
            ratio: q.summary_ratio,
            tokens: q.summary_tokens,
            from_log: q.summary_from_log,
            prompt_tokens: q.prompt_tokens,
            cache: CallCache::Prefix,
        })
    }

    /// The compaction to make now, keeping the items from `keep_from` on.
    pub fn compaction(&self, view: &View<'_>, keep_from: Option<usize>) -> Compaction {
        let summary = if self.tokens > 0 {
            Summary::Tokens(self.tokens)
        } else {
            Summary::Ratio(view.log_summary_ratio.filter(|_| self.from_log).unwrap_or(self.ratio))
        };
        let prompt_tokens = self.prompt_tokens;
        Compaction { summary, keep_from, prompt_tokens, whole_context: true, cache: self.cache, pairs: None }
    }
}

/// The usage the provider would have reported, as the trigger of the agent that wrote the log
/// reads it before a request, estimated by the replay (`src/replay/reported.rs`): the previous
/// request's context as sent and its recorded output (Claude Code, opencode) or this request's
/// context (Codex), plus the residual of the log's last recorded request (docs/compaction.md,
/// "What the trigger reads").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reported {
    /// The compaction policy of the log's agent (`crate::harness::agent_policy`): the one trigger
    /// the estimate is for.
    pub agent: &'static str,
    /// The estimated prompt size, in provider tokens.
    pub tokens: Tokens,
}

/// A compaction policy that fires when the context as sent reaches `limit` tokens and keeps
/// nothing after the summary but the system prompt (Claude Code, Codex, opencode, the Anthropic
/// SDK and Goose, each with its own limit).
#[derive(Clone)]
pub struct AtLimit {
    /// The trigger, in provider tokens.
    pub limit: Tokens,
    /// The summary's size.
    pub summarizer: Summarizer,
    /// The policy's name, when its agent decides on the provider's reported usage: on that
    /// agent's own logs it reads the replay's estimate of it ([`View::reported`]).
    reads_usage: Option<&'static str>,
    /// The request that was last compacted before: a context the summary does not bring under the
    /// limit is not compacted again at the very next request (the agents stop retrying too).
    last: Option<usize>,
    /// The largest context it saw.
    peak: super::Peak,
}

impl AtLimit {
    /// Fires at `limit` tokens.
    pub fn new(limit: Tokens, summarizer: Summarizer) -> AtLimit {
        AtLimit { limit, summarizer, reads_usage: None, last: None, peak: super::Peak::default() }
    }

    /// Fires at `limit` tokens of the reported usage where the replay estimates it for `agent`
    /// (this policy's name), of the context as sent elsewhere.
    pub fn on_usage(agent: &'static str, limit: Tokens, summarizer: Summarizer) -> AtLimit {
        AtLimit { reads_usage: Some(agent), ..AtLimit::new(limit, summarizer) }
    }

    /// The count the trigger compares with its limit.
    fn count(&self, view: &View<'_>) -> Tokens {
        let estimate = view.reported.filter(|r| self.reads_usage == Some(r.agent));
        estimate.map_or(view.context.tokens, |r| r.tokens)
    }
}

impl Policy for AtLimit {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        super::fork_of(self)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { compacts: true, ..Capabilities::default() }
    }

    fn before_request(&mut self, _view: &View<'_>, _edits: &mut Vec<Edit>) {}

    fn compact(&mut self, view: &View<'_>) -> Option<Compaction> {
        let count = self.count(view);
        self.peak.see(count);
        let again = self.last.is_some_and(|r| r + 1 == view.request);
        if count < self.limit || again {
            return None;
        }
        self.last = Some(view.request);
        Some(self.summarizer.compaction(view, None))
    }

    fn report(&self) -> PolicyReport {
        let template = format!("compacts at {} tokens > peak {{peak}}", self.limit);
        let unfired = self.last.is_none().then(|| super::Unfired::new(template, self.peak.0));
        PolicyReport { unfired, ..PolicyReport::default() }
    }
}

/// The builder of [`AtLimit`] at `limit` with `summarizer`: what every compaction kind that fires at
/// a token limit builds.
pub fn at_limit(limit: Tokens, summarizer: Summarizer) -> crate::spec::Builder<dyn Policy> {
    crate::policy::builder(move || Box::new(AtLimit::new(limit, summarizer)) as Box<dyn Policy>)
}

/// [`at_limit`] for the policy `agent` of an agent that decides on the provider's reported usage
/// (Claude Code, Codex, opencode): [`AtLimit::on_usage`].
pub fn at_usage_limit(
    agent: &'static str,
    limit: Tokens,
    summarizer: Summarizer,
) -> crate::spec::Builder<dyn Policy> {
    crate::policy::builder(move || Box::new(AtLimit::on_usage(agent, limit, summarizer)) as Box<dyn Policy>)
}

/// A prune policy and a compaction policy run together (`PRUNE+compact:AGENT`): the prune policy
/// edits the context before each request, the compaction policy then sees the pruned context.
struct Combined {
    prune: Box<dyn Policy>,
    compact: Box<dyn Policy>,
}

impl Policy for Combined {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        Some(Box::new(Combined { prune: self.prune.fork()?, compact: self.compact.fork()? }))
    }

    /// The prune policy's, compacting, reading the messages when either part does.
    fn capabilities(&self) -> Capabilities {
        let (prune, compact) = (self.prune.capabilities(), self.compact.capabilities());
        Capabilities { compacts: true, message_sizes: prune.message_sizes || compact.message_sizes, ..prune }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        self.prune.before_request(view, edits);
    }

    fn compact(&mut self, view: &View<'_>) -> Option<Compaction> {
        self.compact.compact(view)
    }

    /// Both parts' warnings, the prune's first; unfired when neither part fired: the prune's
    /// trigger, then the compaction's.
    fn report(&self) -> PolicyReport {
        let (prune, compact) = (self.prune.report(), self.compact.report());
        let unfired = prune.unfired.zip(compact.unfired).map(|(prune, compact)| {
            super::Unfired::new(format!("{}; {}", prune.text(), compact.template), compact.peak)
        });
        PolicyReport { warnings: [prune.warnings, compact.warnings].concat(), unfired }
    }
}

/// `prune` and `compact` together: `prune`'s edits, then `compact`'s compactions.
pub fn combine(prune: Box<dyn Policy>, compact: Box<dyn Policy>) -> Box<dyn Policy> {
    Box::new(Combined { prune, compact })
}

/// A compaction policy that notes when the log compacted by itself and those compactions were
/// replayed where they were recorded (harness compaction `recorded`, [`harness`]; under `simulated`
/// and `off` the replay drops them and this never warns): on such a conversation the policy's
/// tokens and costs are not what the agent would have sent, and the run says so.
struct Harnessed {
    inner: Box<dyn Policy>,
    /// Compactions this policy made.
    own: usize,
    /// Compactions the log recorded, as far as seen.
    recorded: usize,
}

impl Policy for Harnessed {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        Some(Box::new(Harnessed { inner: self.inner.fork()?, own: self.own, recorded: self.recorded }))
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { compacts: true, ..self.inner.capabilities() }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        self.inner.before_request(view, edits);
    }

    fn report(&self) -> PolicyReport {
        let mut report = self.inner.report();
        if self.recorded > 0 {
            report.warnings.push(format!(
                "the log compacted {} time(s) by itself; those compactions stay where they were recorded \
                 beside this policy's (harness compaction `recorded`: asked for, or the log's agent has \
                 no known trigger to simulate), so its tokens and cost here overstate what the agent \
                 would have sent",
                self.recorded
            ));
        }
        report
    }

    fn compact(&mut self, view: &View<'_>) -> Option<Compaction> {
        self.recorded = self.recorded.max(view.compactions.saturating_sub(self.own));
        let c = self.inner.compact(view);
        // A tool-pair compaction does not restart the context, nor count among the compactions met.
        self.own += usize::from(c.is_some_and(|c| c.pairs.is_none()));
        c
    }
}

/// `policy`, if it compacts, warning when the log compacted by itself ([`Harnessed`]).
pub fn harnessed(policy: Box<dyn Policy>) -> Box<dyn Policy> {
    if policy.capabilities().compacts {
        Box::new(Harnessed { inner: policy, own: 0, recorded: 0 })
    } else {
        policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySpec;

    #[test]
    fn each_agent_s_summarisation_call_reads_writes_or_skips_the_cache_as_its_source_says() {
        use crate::analysis::cost::CacheModel;
        use crate::analysis::summarization::summarization_cost;
        use crate::policy::testing::{Convo, replay_spec};
        let convo = || Convo::new().system("sys").user("u").request().steps(40, "read", 400);
        let model = CacheModel::default();
        let sizes = "summary_tokens=10,prompt_tokens=50";
        for (spec, cache) in [
            (format!("compact:claude-code:window=4000,buffer=1000,{sizes}"), CallCache::Prefix),
            (format!("compact:opencode:window=4000,buffer=1000,{sizes}"), CallCache::Written),
            (format!("compact:goose:window=4000,threshold=0.75,{sizes}"), CallCache::Off),
        ] {
            let rows = replay_spec(convo(), &spec).run.rows;
            let calls: Vec<_> = rows.iter().filter(|r| r.summarization_input_tokens > 0).collect();
            assert!(!calls.is_empty(), "{spec} compacts");
            for r in calls {
                let (input, read, output) = (
                    r.summarization_input_tokens,
                    r.summarization_cached_tokens,
                    r.summarization_output_tokens,
                );
                assert_eq!(r.summarization_uncached, cache == CallCache::Off, "{spec}: {r:?}");
                assert_eq!(
                    read > 0,
                    cache == CallCache::Prefix,
                    "{spec}: only a call of the conversation reads"
                );
                // Anthropic's relative prices: read 0.1, write 1.25, input 1, output 5.
                let want = match cache {
                    CallCache::Prefix => 0.1 * read as f64 + 1.25 * (input - read) as f64,
                    CallCache::Written => 1.25 * input as f64,
                    CallCache::Off => input as f64,
                } + 5.0 * output as f64;
                let got = summarization_cost(r, &model);
                assert!((got - want).abs() < 1e-6, "{spec}: {got} against {want}");
            }
        }
    }

    #[test]
    fn a_ratio_summary_scales_with_what_it_replaces_and_a_fixed_one_does_not() {
        assert_eq!(Summary::Ratio(0.05).tokens(100_000), 5_000);
        assert_eq!(Summary::Tokens(3_000).tokens(100_000), 3_000);
    }

    #[test]
    fn a_harnessed_combination_passes_on_that_its_prune_policy_reads_each_message() {
        let combined = PolicySpec::parse("langchain+compact:opencode").unwrap().build();
        let wrapped = harnessed(combined);
        let caps = wrapped.capabilities();
        assert!(caps.compacts && caps.message_sizes);
    }

    #[test]
    fn every_compaction_kind_compacts_and_a_prune_kind_does_not() {
        for name in ["compact:claude-code", "compact:codex", "compact:opencode", "compact:anthropic-sdk"] {
            assert!(PolicySpec::parse(name).unwrap().build().capabilities().compacts, "{name}");
        }
        assert!(PolicySpec::parse("compact:openhands").unwrap().build().capabilities().compacts);
        assert!(PolicySpec::parse("compact:goose").unwrap().build().capabilities().compacts);
        assert!(!PolicySpec::parse("opencode").unwrap().build().capabilities().compacts);
        let both = PolicySpec::parse("opencode+compact:opencode").unwrap();
        assert_eq!(both.as_str(), "opencode+compact:opencode");
        assert!(both.build().capabilities().compacts);
    }

    #[test]
    fn a_bad_summary_ratio_is_refused_with_its_key() {
        let e = PolicySpec::parse("compact:codex:summary_ratio=2").unwrap_err().to_string();
        assert!(e.contains("summary_ratio") && e.contains("fraction"), "{e}");
        let e = PolicySpec::parse("compact:codex+compact:opencode").unwrap_err().to_string();
        assert!(e.contains("prune policy") && e.contains("compaction policy"), "{e}");
        let e = PolicySpec::parse("compact:codex+opencode").unwrap_err().to_string();
        assert!(e.starts_with("unknown policy `compact:codex+opencode`"), "{e}");
    }
}
