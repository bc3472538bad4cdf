//! `compact:claude-code` — Claude Code's autocompact: when the context reaches the window less the
//! autocompact buffer, the whole conversation is summarised and the session continues from the
//! summary (a `compact_boundary` line, then an `isCompactSummary` user line, in its JSONL).
//!
//! Claude Code's source is not public. The rule is the one its `/context` shows and the community
//! ports reproduce: threshold = window − buffer, and with `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` set,
//! the smaller of that and `pct`% of the window (port: `auto_compact_threshold`, which caps the
//! override at the buffer's threshold). The buffer is the one `/context` shows in Claude Code 2.0
//! ("Autocompact buffer: 45.0k tokens (22.5%)" of 200k; later versions show ~33k, `buffer=33000`),
//! and it is the one the corpus's recorded compaction fits: Claude Code 2.0.76 compacted at
//! `preTokens` 155,979 after a request of 154,476 that it did not compact at, so the threshold
//! lies in between, and 200,000 − 45,000 = 155,000 does (docs/compaction.md). The summary keeps
//! nothing of the conversation (the files Claude Code re-reads after it are part of the next
//! requests in the log). Its summarisation call sends the conversation, and nothing published
//! says it turns prompt caching off: it is priced as a cached call of the context
//! ([`super::CallCache::Prefix`]; docs/compaction.md, "Billing").

use super::{SUMMARY_FROM_LOG, SUMMARY_RATIO, SUMMARY_TOKENS, Summarizer};
use crate::policy::{Kind, Param};

/// The policy's name.
pub const NAME: &str = "compact:claude-code";

/// The `compact:claude-code` policy.
pub const KIND: Kind = Kind {
    name: NAME,
    about: "Claude Code autocompact: summarise the whole context when it reaches the window less the \
            autocompact buffer (or CLAUDE_AUTOCOMPACT_PCT_OVERRIDE percent of the window)",
    source: "Claude Code 2.0 (closed source): /context's 45.0k autocompact buffer; rule as ported in \
             auto_compact_threshold (window - buffer, capped by the percent override); fits the \
             corpus's compact_boundary (preTokens 155979, docs/compaction.md)",
    params: &[
        Param { key: "window", default: "200000", about: "the model's context window, tokens" },
        Param { key: "buffer", default: "45000", about: "autocompact buffer below the window, tokens" },
        Param {
            key: "pct",
            default: "0",
            about: "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: compact at this percent of the window when lower \
                    than window - buffer (0: unset)",
        },
        SUMMARY_RATIO,
        SUMMARY_TOKENS,
        SUMMARY_FROM_LOG,
        Param {
            key: "prompt_tokens",
            default: "481",
            about: "tokens of the summarisation instructions (Claude Code's are not published: the \
                    largest measured, OpenHands', stands in)",
        },
    ],
    build: |p| {
        let q: ClaudeCodeParams = p.typed()?;
        p.at_least("window", q.window, 1)?;
        if q.pct > 100 {
            return Err(p.bad("pct", format!("must be a percent from 0 to 100, got {}", q.pct)));
        }
        let summarizer = Summarizer::from_params(p)?;
        let limit = threshold(q.window, q.buffer, q.pct);
        Ok(super::at_usage_limit(NAME, limit, summarizer))
    },
};

/// The parameters of `compact:claude-code`.
/// (The summary's keys are read by [`Summarizer::from_params`].)
#[derive(Debug, Clone, serde::Deserialize)]
pub struct ClaudeCodeParams {
    /// The context window.
    pub window: u64,
    /// The autocompact buffer.
    pub buffer: u64,
    /// `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` (0: unset).
    pub pct: u64,
}

/// The autocompact threshold: `window - buffer`, or `pct`% of the window when set and lower.
pub fn threshold(window: u64, buffer: u64, pct: u64) -> u64 {
    let base = window.saturating_sub(buffer);
    if pct == 0 { base } else { base.min(window * pct / 100) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_only_lowers_the_threshold() {
        assert_eq!(threshold(200_000, 45_000, 0), 155_000);
        assert_eq!(threshold(200_000, 45_000, 50), 100_000);
        assert_eq!(threshold(200_000, 45_000, 95), 155_000);
    }
}
