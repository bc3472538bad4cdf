//! `compact:opencode` — opencode's overflow compaction: when the last response's token count
//! reaches the usable window (the window less `COMPACTION_BUFFER` = 20,000 reserved for the
//! summary's output, `packages/opencode/src/session/overflow.ts`), the session is summarised and
//! continues from the summary. Newer versions also keep a recent tail of 2k-15k tokens
//! (`preserve_recent_tokens`, `compaction.ts`); the replay keeps none. The summarisation call
//! sends the compaction agent's system prompt (`agent/prompt/compaction.txt`, 149 o200k tokens)
//! and a user message that wraps the conversation in the summary request and its template
//! (`buildPrompt` in `packages/core/src/session/compaction.ts` and `compaction-suffix.ts`, 292
//! without the conversation): 441 (docs/compaction.md, "Billing"). In its default mode
//! (`compaction.mode` other than `"suffix"`), `processCompaction`
//! (`packages/opencode/src/session/compaction.ts`@31e22f65a23c, the `activeMode = "prepend"`
//! branch of `makeProcessor`) sends `tools: {}`, the compaction agent's system prompt and that one
//! user message, through `LLM.stream` (`session/llm.ts`@31e22f65a23c), whose middleware applies
//! `ProviderTransform.message`; for an Anthropic model its `applyCaching`
//! (`packages/opencode/src/provider/transform.ts`, read at 47767a7cffba) marks the first two
//! system messages and the last two others `cacheControl: ephemeral`. The call thus sets cache
//! breakpoints, but with no tools and its own system prompt where the conversation's requests
//! open with theirs, no prefix of it is the conversation's cached prefix: nothing is read and
//! all of its input is written ([`super::CallCache::Written`]; docs/compaction.md, "Billing").
//! The opt-in `"suffix"` mode appends the request to the conversation's own request and would
//! read its prefix; it is not replayed.

use super::{CallCache, SUMMARY_FROM_LOG, SUMMARY_RATIO, SUMMARY_TOKENS, Summarizer};
use crate::policy::{Kind, Param};

/// The policy's name.
pub const NAME: &str = "compact:opencode";

/// The `compact:opencode` policy.
pub const KIND: Kind = Kind {
    name: NAME,
    about: "opencode overflow compaction: summarise the session when the context reaches the window \
            less the 20k compaction buffer",
    source: "sst/opencode packages/opencode/src/session/overflow.ts@31e22f65a23c (COMPACTION_BUFFER = \
             20_000, usable = limit - reserved) and session/compaction.ts@31e22f65a23c; prompt: \
             packages/core/src/session/compaction.ts and compaction-suffix.ts@31e22f65a23c, \
             agent/prompt/compaction.txt (anomalyco/opencode@052b2f33587c)",
    params: &[
        Param { key: "window", default: "200000", about: "the model's context window, tokens" },
        Param {
            key: "buffer",
            default: "20000",
            about: "tokens reserved below the window (compaction.reserved)",
        },
        SUMMARY_RATIO,
        SUMMARY_TOKENS,
        SUMMARY_FROM_LOG,
        Param {
            key: "prompt_tokens",
            default: "441",
            about: "tokens of the summarisation instructions: the compaction agent's prompt and the \
                    summary request around the conversation (o200k)",
        },
    ],
    build: |p| {
        let q: OpencodeParams = p.typed()?;
        p.at_least("window", q.window, 1)?;
        let summarizer = Summarizer { cache: CallCache::Written, ..Summarizer::from_params(p)? };
        let limit = q.window.saturating_sub(q.buffer);
        Ok(super::at_usage_limit(NAME, limit, summarizer))
    },
};

/// The parameters of `compact:opencode`.
/// (The summary's keys are read by [`Summarizer::from_params`].)
#[derive(Debug, Clone, serde::Deserialize)]
pub struct OpencodeParams {
    /// The context window.
    pub window: u64,
    /// Tokens reserved below it.
    pub buffer: u64,
}
