//! `compact:anthropic-sdk` — the Anthropic SDK tool runner's client-side `compaction_control`:
//! when the last response's tokens (input + cache creation + cache read + output) exceed
//! `context_token_threshold` (`DEFAULT_THRESHOLD = 100_000`), the runner asks the model for a
//! summary with `DEFAULT_SUMMARY_PROMPT` (253 o200k tokens, docs/compaction.md) and replaces the
//! whole message list with it. The summary request follows the runner's messages, through the
//! same client, and nothing in the runner turns prompt caching off: the call is priced as a cached
//! call of the context ([`super::CallCache::Prefix`]; docs/compaction.md, "Billing").

use super::{SUMMARY_FROM_LOG, SUMMARY_RATIO, SUMMARY_TOKENS, Summarizer};
use crate::policy::{Kind, Param};

/// The `compact:anthropic-sdk` policy.
pub const KIND: Kind = Kind {
    name: "compact:anthropic-sdk",
    about: "Anthropic SDK compaction_control: replace the messages with a summary once the context \
            exceeds context_token_threshold (100k)",
    source: "anthropics/anthropic-sdk-python src/anthropic/lib/tools/_beta_compaction_control.py@6b76649f99bd \
             (DEFAULT_THRESHOLD = 100_000, DEFAULT_SUMMARY_PROMPT)",
    params: &[
        Param { key: "context_token_threshold", default: "100000", about: "compact above this many tokens" },
        SUMMARY_RATIO,
        SUMMARY_TOKENS,
        SUMMARY_FROM_LOG,
        Param { key: "prompt_tokens", default: "253", about: "tokens of DEFAULT_SUMMARY_PROMPT (o200k)" },
    ],
    build: |p| {
        let q: AnthropicSdkParams = p.typed()?;
        p.at_least("context_token_threshold", q.context_token_threshold, 1)?;
        let summarizer = Summarizer::from_params(p)?;
        // "Exceeds": one token over the threshold.
        let limit = q.context_token_threshold + 1;
        Ok(super::at_limit(limit, summarizer))
    },
};

/// The parameters of `compact:anthropic-sdk`.
/// (The summary's keys are read by [`Summarizer::from_params`].)
#[derive(Debug, Clone, serde::Deserialize)]
pub struct AnthropicSdkParams {
    /// The threshold.
    pub context_token_threshold: u64,
}
