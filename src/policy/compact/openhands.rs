//! `compact:openhands` — OpenHands' `LLMSummarizingCondenser`: when the view holds more than
//! `max_size` events (100 in the config, 120 in the SDK), it keeps the first `keep_first` events
//! (1: the system prompt; SDK 4) and the newest `max_size / 2 - keep_first - 1`, and summarises the
//! events between into one summary event (`get_condensation`, `should_condense`). The condenser's
//! own LLM runs with prompt caching off and sees only the forgotten events and its prompt (481
//! o200k tokens, docs/compaction.md): its call shares no prefix with the agent's cached
//! conversation and writes nothing to a cache, so it is priced at the plain input price, none of
//! it read ([`CallCache::Off`]; docs/compaction.md, "Billing").
//!
//! Events are counted as [`View::events`] counts them. The first `keep_first` events beyond the
//! system prompt are summarised with the rest (the replay keeps the system prompt and the tail),
//! and the tail is kept from the first tool result among the newest events on, as one block.

use super::{CallCache, Compaction, SUMMARY_FROM_LOG, SUMMARY_RATIO, SUMMARY_TOKENS, Summarizer};
use crate::policy::{Capabilities, Edit, Kind, Param, Policy, View};

/// The `compact:openhands` policy.
pub const KIND: Kind = Kind {
    name: "compact:openhands",
    about: "OpenHands LLMSummarizingCondenser: past max_size events, summarise all but the first \
            keep_first and the newest max_size/2 - keep_first - 1",
    source: "OpenHands/OpenHands openhands/memory/condenser/impl/llm_summarizing_condenser.py@76483ad8f5f5 \
             and openhands/core/config/condenser_config.py@d074f47c428b (max_size 100, keep_first 1)",
    params: &[
        Param { key: "max_size", default: "100", about: "events in the view before it is condensed" },
        Param { key: "keep_first", default: "1", about: "first events always kept (the system prompt)" },
        SUMMARY_RATIO,
        SUMMARY_TOKENS,
        SUMMARY_FROM_LOG,
        Param { key: "prompt_tokens", default: "481", about: "tokens of the condenser's prompt (o200k)" },
    ],
    build: |p| {
        let q: OpenhandsParams = p.typed()?;
        p.at_least("max_size", q.max_size, 4)?;
        if q.keep_first >= q.max_size / 2 {
            return Err(
                p.bad("keep_first", format!("must be less than half of max_size, got {}", q.keep_first))
            );
        }
        let summarizer = Summarizer::from_params(p)?;
        let (max_size, keep_first) = (q.max_size, q.keep_first);
        Ok(crate::policy::builder(move || {
            Box::new(Condenser { max_size, keep_first, summarizer }) as Box<dyn Policy>
        }))
    },
};

/// The parameters of `compact:openhands`.
/// (The summary's keys are read by [`Summarizer::from_params`].)
#[derive(Debug, Clone, serde::Deserialize)]
pub struct OpenhandsParams {
    /// Events before condensing.
    pub max_size: usize,
    /// First events kept.
    pub keep_first: usize,
}

/// The condenser.
struct Condenser {
    max_size: usize,
    keep_first: usize,
    summarizer: Summarizer,
}

impl Policy for Condenser {
    fn before_request(&mut self, _view: &View<'_>, _edits: &mut Vec<Edit>) {}

    fn capabilities(&self) -> Capabilities {
        Capabilities { compacts: true, ..Capabilities::default() }
    }

    fn compact(&mut self, view: &View<'_>) -> Option<Compaction> {
        if view.events <= self.max_size {
            return None;
        }
        let tail = (self.max_size / 2).saturating_sub(self.keep_first + 1);
        let first_kept = view.events.saturating_sub(tail);
        let keep_from = view.results.iter().find(|r| r.event >= first_kept).map(|r| r.position);
        Some(Compaction {
            whole_context: false,
            cache: CallCache::Off,
            ..self.summarizer.compaction(view, keep_from)
        })
    }
}
