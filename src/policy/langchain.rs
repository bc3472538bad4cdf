//! `langchain` — LangChain v1 `ContextEditingMiddleware` with `ClearToolUsesEdit`, with its defaults.
//!
//! Source: `langchain-ai/langchain`, `libs/langchain_v1/langchain/agents/middleware/context_editing.py`
//! (`ClearToolUsesEdit(trigger=100_000, clear_at_least=0, keep=3, clear_tool_inputs=False,
//! exclude_tools=(), placeholder="[cleared]")`, `token_count_method="approximate"`), and
//! `langchain_core/messages/utils.py` `count_tokens_approximately` (`ceil(chars / 4)` per message
//! plus 3 per message). ANCHORS.md §5.
//!
//! Mechanism, as `ClearToolUsesEdit.apply` does it on the outgoing request's copy of the messages:
//! count the messages (the system prompt and the tools are not among them, nor is `--overhead`,
//! which stands for them); if the count exceeds `trigger`, take
//! every tool message except the last `keep`, oldest first; skip one whose originating tool call is
//! not found or whose tool is excluded; replace its content with the placeholder (and, with
//! `clear_tool_inputs`, the call's arguments with `{}`); when `clear_at_least` is set, stop as soon
//! as the recount shows that many tokens cleared. Nothing is persisted: every request starts again
//! from the full history, so once the trigger is crossed it stays crossed, the clear re-fires on
//! every request and `keep` slides one slot per new tool message (langchain#37815). Unlike
//! Anthropic's `clear_at_least`, LangChain's is a stopping point, not a floor.
//!
//! Counting in our model: the message text is the context's text minus the system prompt, so the
//! count is `ceil(chars / 4) + 3 × messages` over the whole list ([`super::View::messages`]); the
//! per-message rounding, role names and tool-call ids that the real function adds are left out (at
//! most a few tokens per message). What a clear frees is counted per result as
//! `ceil(content / 4) − ceil(placeholder / 4)`.

use super::{Content, Edit, Estimator, Kind, List, On, Param, Policy, View};
use crate::tokens::TextSize;

/// LangChain's `DEFAULT_TOOL_PLACEHOLDER`.
pub const PLACEHOLDER: &str = "[cleared]";

/// Extra tokens per message in `count_tokens_approximately`.
const TOKENS_PER_MESSAGE: u64 = 3;

/// The `langchain` policy.
pub const KIND: Kind = Kind {
    name: "langchain",
    about: "ClearToolUsesEdit: past the trigger, clear all tool messages but the `keep` most recent \
            on a copy of every request (never persisted)",
    source: "langchain-ai/langchain libs/langchain_v1/langchain/agents/middleware/context_editing.py ClearToolUsesEdit \
             (indexed at 925aa15); differences: docs/policies.md (ANCHORS.md §5)",
    params: &[
        super::ON_OUTPUT,
        Param { key: "trigger", default: "100000", about: "clear when the approximate count exceeds this" },
        Param { key: "keep", default: "3", about: "most recent tool messages never cleared" },
        Param {
            key: "clear_at_least",
            default: "0",
            about: "stop clearing once this many tokens are cleared (0 = clear all)",
        },
        Param {
            key: "exclude_tools",
            default: "",
            about: "tools whose results are never cleared (comma-separated)",
        },
        Param {
            key: "clear_tool_inputs",
            default: "false",
            about: "also replace the cleared calls' arguments with {}",
        },
        Param { key: "placeholder", default: PLACEHOLDER, about: "text in place of a cleared result" },
    ],
    build: |p| {
        let params: LangChainParams = p.typed()?;
        Ok(super::builder(move || {
            let p = params.clone();
            super::with_on(
                p.on,
                Box::new(LangChain {
                    trigger: p.trigger,
                    keep: p.keep,
                    clear_at_least: p.clear_at_least,
                    exclude_tools: p.exclude_tools,
                    clear_tool_inputs: p.clear_tool_inputs,
                    placeholder: p.placeholder,
                    considered: 0,
                    cleared: 0,
                    compactions: 0,
                    placeholder_measure: None,
                }),
            )
        }))
    },
};

/// The parameters of `langchain` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct LangChainParams {
    pub on: On,
    pub trigger: u64,
    pub keep: usize,
    pub clear_at_least: u64,
    pub exclude_tools: List,
    pub clear_tool_inputs: bool,
    pub placeholder: String,
}

/// LangChain's context-editing middleware.
pub struct LangChain {
    trigger: u64,
    keep: usize,
    clear_at_least: u64,
    exclude_tools: Vec<String>,
    clear_tool_inputs: bool,
    placeholder: String,
    /// Results of the current context (from its first) already considered for clearing. Once
    /// the trigger is crossed it stays crossed and `keep` only slides forward, so the cleared set
    /// only grows: each request gives the newly cleared results after [`Edit::KeepPrevious`],
    /// which is the request the middleware builds, in time linear in the trace.
    considered: usize,
    /// Tokens cleared so far in this context (for `clear_at_least`).
    cleared: u64,
    /// Compactions seen: a new one starts a context with nothing cleared.
    compactions: usize,
    /// The placeholder as the replay's meter measures it (measured once, at the first clear).
    placeholder_measure: Option<TextSize>,
}

impl Policy for LangChain {
    fn sticky(&self) -> bool {
        false
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let mut messages = view.context;
        messages -= view.system;
        let count = view.tokens_with(
            || Estimator::LangChain.tokens(&messages) + TOKENS_PER_MESSAGE * view.messages as u64,
            &messages,
        );
        if count <= self.trigger {
            return;
        }
        if view.compactions != self.compactions {
            self.compactions = view.compactions;
            self.considered = 0;
            self.cleared = 0;
        }
        edits.push(Edit::KeepPrevious);
        let candidates = view.results.len().saturating_sub(self.keep);
        if self.clear_at_least > 0 && self.cleared >= self.clear_at_least {
            return;
        }
        let measured = *self.placeholder_measure.get_or_insert_with(|| view.measure(&self.placeholder));
        let placeholder = view.tokens(Estimator::LangChain, &measured);
        let start = self.considered.min(candidates);
        for (k, r) in view.results[start..candidates].iter().enumerate() {
            self.considered = start + k + 1;
            let Content::Present(content) = r.content else { continue };
            // The originating tool call must be found (in the context) and not excluded.
            let Some(call) = r.call else { continue };
            if self.exclude_tools.iter().any(|t| t == r.tool()) {
                continue;
            }
            edits.push(Edit::Replace(r.index, self.placeholder.clone()));
            let mut freed = view.tokens(Estimator::LangChain, &content).saturating_sub(placeholder);
            if self.clear_tool_inputs {
                edits.push(Edit::ClearCall(r.index, "{}".into()));
                freed += view.tokens(Estimator::LangChain, &call);
            }
            if self.clear_at_least > 0 {
                self.cleared += freed;
                if self.cleared >= self.clear_at_least {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::testing::{Convo, replay_spec, text};
    use crate::tokens::DecideWith;

    fn session(n: usize) -> Convo {
        Convo::new().system("You are a test.").user("go").request().steps(n, "Read", 8_000)
    }

    #[test]
    fn clears_on_a_copy_of_every_request_and_keep_slides() {
        // Approximate count before request k: the user text (2 chars) and k steps of a call
        // ("Read" + "{}") and a result (a 91-char summary + 8,000 chars), 8,097 chars per step,
        // over 4, plus 3 per message (1 user + 2 per step). The system prompt is not counted.
        // k = 9: ceil(72,875 / 4) + 3 × 19 = 18,276; k = 10: ceil(80,972 / 4) + 3 × 21 = 20,306.
        let r = replay_spec(session(14), "langchain:trigger=20000");
        assert!(r.cleared_before(9).is_empty(), "18,276 does not exceed 20,000");
        assert_eq!(r.cleared_before(10), (0..7).collect::<Vec<_>>(), "all but the last 3 of 10");
        assert_eq!(r.replacement(10, 0), Some("[cleared]"));
        // Never persisted: the count stays over the trigger and one more result goes per request.
        assert_eq!(r.cleared_before(14), (0..11).collect::<Vec<_>>());
        assert_eq!(r.prune_requests(), [10, 11, 12, 13, 14]);
        assert_eq!(r.run.rows[14].categories.placeholders, 11 * 9);
    }

    #[test]
    fn the_unrecorded_overhead_is_no_message_and_not_counted() {
        // `--overhead` stands for the system prompt and tool schemas, which the approximate count
        // leaves out: 50,000 of it moves nothing (it used to fire from request 3 on).
        let plain = replay_spec(session(14), "langchain:trigger=20000");
        let padded = replay_spec(session(14).overhead(50_000), "langchain:trigger=20000");
        assert_eq!(padded.edits, plain.edits);
        assert_eq!(padded.run.rows[14].categories.unrecorded, 50_000);
    }

    #[test]
    fn clear_at_least_stops_clearing_once_reached() {
        // On contents each result frees ceil(8,000 / 4) − ceil(9 / 4) = 1,997 tokens: 6,000 needs
        // 4 of them, the oldest, every time; the set never changes, so the prefix breaks once.
        let r = replay_spec(session(14), "langchain:trigger=20000,clear_at_least=6000,on=content");
        assert_eq!(r.cleared_before(10), [0, 1, 2, 3]);
        assert_eq!(r.cleared_before(14), [0, 1, 2, 3]);
        assert_eq!(r.prune_requests(), [10]);
        // On whole outputs the 91-char summary goes too: ceil(8,091 / 4) − 3 = 2,020; 3 suffice.
        let r = replay_spec(session(14), "langchain:trigger=20000,clear_at_least=6000");
        assert_eq!(r.cleared_before(14), [0, 1, 2]);
        assert_eq!(r.prune_requests(), [10]);
    }

    #[test]
    fn results_whose_call_is_missing_or_excluded_are_kept() {
        let c = Convo::new()
            .user("go")
            .request()
            .orphan_result("Read", text(8_000))
            .request()
            .tool("Bash", text(8_000))
            .request()
            .tool("Read", text(8_000))
            .request();
        let r = replay_spec(c, "langchain:trigger=100,keep=0,exclude_tools=Bash");
        assert_eq!(r.cleared_before(3), [2]);
    }

    #[test]
    fn real_tokens_drop_the_per_message_overhead() {
        // With the report's tokenizer (bytes here) the count is the context's bytes without the
        // system prompt: 2 + 8,101 × k (the summary's "…" is 3 bytes); 20,000 is exceeded at k = 3.
        let r = crate::policy::testing::replay_with(
            session(4),
            "langchain:trigger=20000,keep=1",
            DecideWith::Real,
        );
        assert!(r.cleared_before(2).is_empty());
        assert_eq!(r.cleared_before(3), [0, 1]);
    }
}
