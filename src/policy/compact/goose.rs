//! `compact:goose` — Goose's auto-compaction: when the context reaches
//! `GOOSE_AUTO_COMPACT_THRESHOLD` (0.8) of the window, the old messages are hidden from the agent
//! and a summary is appended (`crates/goose/src/context_mgmt/mod.rs`). The summarisation call
//! sends the `compaction.md` template (621 o200k tokens without the conversation it wraps) and the
//! request to summarise (11), measured on block/goose@8d844eecbdfd (docs/compaction.md,
//! "Billing"). At that commit the call is made with prompt caching off: `do_compact`
//! (`crates/goose/src/context_mgmt/mod.rs`:336) calls the model through `complete_compaction`
//! (:292), which runs it with `one_shot_model_config` (`crates/goose/src/model_config.rs`:118-121
//! and 179: thinking off, `with_prompt_cache_disabled`), and the Anthropic format then sets no `cache_control` on
//! the system prompt, the tools or the messages
//! (`crates/goose-provider-types/src/formats/anthropic.rs`:443, 497, 515). Nothing is read or
//! written: all of its input is priced at the plain input price ([`super::CallCache::Off`];
//! docs/compaction.md, "Billing"). Goose's tool-pair summarisation, on by default beside it, is
//! `compact:goose-tools` ([`super::goose_tools`]).

use super::{CallCache, SUMMARY_FROM_LOG, SUMMARY_RATIO, SUMMARY_TOKENS, Summarizer};
use crate::policy::{Kind, Param};

/// The `compact:goose` policy.
pub const KIND: Kind = Kind {
    name: "compact:goose",
    about: "Goose auto-compaction: summarise the conversation when the context reaches 0.8 of the window",
    source: "block/goose crates/goose/src/context_mgmt/mod.rs@331a84297237 (GOOSE_AUTO_COMPACT_THRESHOLD 0.8); \
             prompt: crates/goose-context-management/src/prompts/compaction.md and summarize.rs@8d844eecbdfd",
    params: &[
        Param { key: "window", default: "128000", about: "the model's context window, tokens" },
        Param {
            key: "threshold",
            default: "0.8",
            about: "GOOSE_AUTO_COMPACT_THRESHOLD: fraction of the window",
        },
        SUMMARY_RATIO,
        SUMMARY_TOKENS,
        SUMMARY_FROM_LOG,
        Param {
            key: "prompt_tokens",
            default: "632",
            about: "tokens of the summarisation instructions: the compaction.md template and the \
                    request to summarise (o200k)",
        },
    ],
    build: |p| {
        let q: GooseParams = p.typed()?;
        p.at_least("window", q.window, 1)?;
        if !(q.threshold > 0.0 && q.threshold <= 1.0) {
            return Err(p.bad(
                "threshold",
                format!("must be a fraction above 0 and at most 1, got `{}`", q.threshold),
            ));
        }
        let summarizer = Summarizer { cache: CallCache::Off, ..Summarizer::from_params(p)? };
        let limit = (q.window as f64 * q.threshold).round() as u64;
        Ok(super::at_limit(limit, summarizer))
    },
};

/// The parameters of `compact:goose`.
/// (The summary's keys are read by [`Summarizer::from_params`].)
#[derive(Debug, Clone, serde::Deserialize)]
pub struct GooseParams {
    /// The context window.
    pub window: u64,
    /// Fraction of it that triggers.
    pub threshold: f64,
}
