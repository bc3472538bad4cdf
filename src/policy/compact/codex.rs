//! `compact:codex` — Codex CLI's auto-compaction: when the tokens of the last turn's reported usage
//! reach `model_auto_compact_token_limit` (by default 90% of the model's context window,
//! `default_auto_compact_limit = context_window * 9 / 10` in `codex-rs/core/src/model_family.rs`),
//! the history is replaced by a summary (a `compacted` item in the rollout).
//!
//! Codex also carries the recent user messages (up to 20k tokens) into the new history; the replay
//! does not keep them (they are user texts spread over the context), so the context after a
//! simulated compaction is that much smaller than Codex's. The summarisation prompt is Codex's
//! `templates/compact/prompt.md`: 95 o200k tokens (`ctxbudget count`, docs/compaction.md). Codex
//! sends it after the history, through the session's model client, and OpenAI's prompt cache is
//! automatic (nothing turns it off): the call is priced as a cached call of the context
//! ([`super::CallCache::Prefix`]; docs/compaction.md, "Billing").

use super::{SUMMARY_FROM_LOG, SUMMARY_RATIO, SUMMARY_TOKENS, Summarizer};
use crate::policy::{Kind, Param};

/// The policy's name.
pub const NAME: &str = "compact:codex";

/// The `compact:codex` policy.
pub const KIND: Kind = Kind {
    name: NAME,
    about: "Codex auto-compaction: summarise the history when the context reaches \
            model_auto_compact_token_limit (default 90% of the window)",
    source: "openai/codex codex-rs/core/src/model_family.rs@b228bf43e221 (default_auto_compact_limit = \
             context_window * 9 / 10); codex-rs/core/templates/compact/prompt.md@928a707f6a5e",
    params: &[
        Param { key: "window", default: "272000", about: "the model's context window, tokens (gpt-5-codex)" },
        Param {
            key: "model_auto_compact_token_limit",
            default: "0",
            about: "compact at this many tokens (0: 90% of the window)",
        },
        SUMMARY_RATIO,
        SUMMARY_TOKENS,
        SUMMARY_FROM_LOG,
        Param { key: "prompt_tokens", default: "95", about: "tokens of Codex's compact prompt (o200k)" },
    ],
    build: |p| {
        let q: CodexParams = p.typed()?;
        p.at_least("window", q.window, 1)?;
        let summarizer = Summarizer::from_params(p)?;
        let limit = if q.model_auto_compact_token_limit > 0 {
            q.model_auto_compact_token_limit
        } else {
            q.window * 9 / 10
        };
        Ok(super::at_usage_limit(NAME, limit, summarizer))
    },
};

/// The parameters of `compact:codex`.
/// (The summary's keys are read by [`Summarizer::from_params`].)
#[derive(Debug, Clone, serde::Deserialize)]
pub struct CodexParams {
    /// The context window.
    pub window: u64,
    /// The limit (0: 90% of the window).
    pub model_auto_compact_token_limit: u64,
}
