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
//! Counting, as `count_tokens_approximately` (`langchain_core/messages/utils.py`, read at
//! `911f4d4`) does it, exactly, message by message: `ceil(chars / 4) + 3`, where a message's chars
//! are its content (a string: `len`, in code points), its role (`user`, `assistant`, `tool`), a
//! tool message's `tool_call_id` and `name` (the tool's, as LangGraph's `ToolNode` names it) and
//! an AI message's `len(repr(tool_calls))` ([`repr`]: each call's name, id and arguments as
//! Python's `repr` of the dict `json.loads` gives). The messages are the replay's
//! ([`super::MessageSizes`], which this policy asks for): each user text (and compaction summary)
//! a `HumanMessage`; each model response one `AIMessage` whose content is its text, reasoning and
//! server-side content together (modelled: a string, as the OpenAI chat shape holds it; content
//! blocks, whose `repr` upstream counts instead of the calls, are not modelled) and whose
//! `tool_calls` are its calls; each tool result a `ToolMessage` of the text the replay sends.
//! Arguments that are not a JSON object are a custom tool's free text, `{'__arg1': text}` as
//! `langchain_openai` holds it. The system prompt and the tools are not among the messages,
//! nor is `--overhead`, which stands for them. What a clear frees is the tool message's count
//! before less after (the placeholder in place of its content), as upstream's recount finds it;
//! with `clear_tool_inputs`, what clearing a call's arguments frees is estimated from the call's
//! size (`ceil(chars / 4)`), not from its AI message's recount.
//!
//! Per-message sums are kept as the context grows, so the count costs a few operations per new
//! message and per request; each call's `repr` length and each tool message's id and name chars
//! are worked out once per measured conversation, by its first replay that keeps the messages,
//! and read by the others ([`super::CallText::repr_chars`], [`MessageSizes::results`]); the
//! other policies' replays do not keep the messages at all.

mod repr;

use super::{
    Capabilities, Content, Edit, Estimator, Kind, List, MessageSizes, On, Param, Policy, Role, View,
};
use crate::tokens::TextSize;

/// LangChain's `DEFAULT_TOOL_PLACEHOLDER`.
pub const PLACEHOLDER: &str = "[cleared]";

/// Extra tokens per message in `count_tokens_approximately`.
const TOKENS_PER_MESSAGE: u64 = 3;

/// Chars of the roles `_get_message_openai_role` gives: `user`, `assistant`, `tool`.
const USER_ROLE: u64 = 4;
const ASSISTANT_ROLE: u64 = 9;
const TOOL_ROLE: u64 = 4;

/// Chars of `repr(tool_call)` for the call `call_id` of `name` with `arguments` as sent, as
/// LangChain holds it (see [`repr`]): what the replay keeps per call ([`super::CallText`]).
pub fn call_repr_chars(call_id: &str, name: &str, arguments: &str) -> u64 {
    repr::call_chars(name, call_id, repr::args_chars(arguments))
}

/// `ceil(chars / 4) + 3`: one message of `chars` (role and ids included).
fn message_tokens(chars: u64) -> u64 {
    chars.div_ceil(4) + TOKENS_PER_MESSAGE
}

/// The `langchain` policy.
pub const KIND: Kind = Kind {
    name: "langchain",
    about: "ClearToolUsesEdit: past the trigger, clear all tool messages but the `keep` most recent \
            on a copy of every request (never persisted)",
    source: "langchain-ai/langchain libs/langchain_v1/langchain/agents/middleware/context_editing.py ClearToolUsesEdit \
             (indexed at 925aa15), libs/core/langchain_core/messages/utils.py count_tokens_approximately (read at \
             911f4d4); differences: docs/policies.md (ANCHORS.md §5)",
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
                    count: Count::default(),
                    others: Others::default(),
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
#[derive(Clone)]
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
    /// The tool messages' part of the approximate count, kept as results arrive.
    count: Count,
    /// The other messages' part, kept as messages arrive.
    others: Others,
}

/// What the tool messages of the current context add to the approximate count. A non-sticky
/// policy's results are sent whole in the persistent state, so each is counted once, when it
/// arrives, and the count costs nothing per request.
#[derive(Debug, Clone, Default)]
struct Count {
    /// Compactions seen: a new one starts a context and the sums over.
    compactions: usize,
    /// Results of the context counted.
    seen: usize,
    /// Tokens of their tool messages.
    tokens: u64,
    /// Chars of their contents as sent (the context's total holds them too).
    chars: u64,
}

/// What the user and AI messages of the current context add to the approximate count.
#[derive(Debug, Clone, Default)]
struct Others {
    /// Compactions seen: a new one starts a context and the sums over.
    compactions: usize,
    /// `prefix[k]`: the tokens of the messages before message `k` (one more entry than the
    /// messages counted).
    prefix: Vec<u64>,
}

impl Others {
    /// The tokens of the messages of `sizes`, recounting those from the first that changed.
    fn tokens(&mut self, compactions: usize, sizes: &MessageSizes<'_>) -> u64 {
        if compactions != self.compactions || self.prefix.is_empty() {
            // A new context: the list is kept (the replay presizes the messages' list for the
            // largest context the conversation can have).
            self.compactions = compactions;
            self.prefix.clear();
            self.prefix.reserve(sizes.messages.capacity() + 1);
            self.prefix.push(0);
        }
        let from = sizes.unchanged.min(self.prefix.len() - 1);
        self.prefix.truncate(from + 1);
        for (k, m) in sizes.messages.iter().enumerate().skip(from) {
            let calls = &sizes.calls[m.calls.clone()];
            // `len(repr(tool_calls))`, each call's worked out once per conversation; `and
            // message.tool_calls`: no call adds nothing.
            let calls =
                if calls.is_empty() { 0 } else { repr::list_chars(calls.iter().map(|c| c.repr_chars)) };
            let role = match m.role {
                Role::User => USER_ROLE,
                Role::Assistant => ASSISTANT_ROLE,
            };
            let before = self.prefix[k];
            self.prefix.push(before + message_tokens(m.size.chars.chars + role + calls));
        }
        self.prefix[sizes.messages.len()]
    }
}

/// Chars a tool message adds besides its content: its `tool_call_id`, its `name` (counted once per
/// conversation when the replay keeps the messages, [`MessageSizes::results`]) and its role.
fn tool_message_chars(r: &super::ResultState<'_>, sizes: Option<&MessageSizes<'_>>) -> u64 {
    let id_and_name = match sizes.and_then(|s| s.results.get(r.index)) {
        Some(&chars) => chars,
        None => r.result.call_id.chars().count() as u64 + r.tool().chars().count() as u64,
    };
    id_and_name + TOOL_ROLE
}

impl LangChain {
    /// `count_tokens_approximately` of the request's messages (see the module doc).
    fn approximate_count(&mut self, view: &View<'_>, messages: &TextSize) -> u64 {
        if view.compactions != self.count.compactions || self.count.seen > view.results.len() {
            self.count = Count { compactions: view.compactions, ..Count::default() };
        }
        for r in &view.results[self.count.seen..] {
            let chars = r.sent().chars.chars;
            self.count.tokens += message_tokens(chars + tool_message_chars(r, view.message_sizes));
            self.count.chars += chars;
        }
        self.count.seen = view.results.len();
        let Some(sizes) = view.message_sizes else {
            // Only when a wrapper did not pass `message_sizes` on: the other messages from the
            // totals, rounded once over their sum.
            let ai = view.assistant_messages as u64;
            let user = (view.messages as u64).saturating_sub(view.results.len() as u64 + ai);
            let rest = messages.chars.chars.saturating_sub(self.count.chars)
                + USER_ROLE * user
                + ASSISTANT_ROLE * ai;
            return self.count.tokens + rest.div_ceil(4) + TOKENS_PER_MESSAGE * (user + ai);
        };
        self.count.tokens + self.others.tokens(view.compactions, sizes)
    }
}

impl Policy for LangChain {
    fn fork(&self) -> Option<Box<dyn Policy>> {
        super::fork_of(self)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { sticky: false, message_sizes: true, ..Capabilities::default() }
    }

    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        let mut messages = view.context;
        messages -= view.system;
        // Under `--decide-with` other than `anchor`, the chosen counter's tokens of the messages.
        let count = if view.anchored() {
            self.approximate_count(view, &messages)
        } else {
            view.tokens(Estimator::LangChain, &messages)
        };
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
        let placeholder_chars = measured.chars.chars;
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
            let mut freed = if view.anchored() {
                // The tool message's count before the clear, less after it (the summary stays).
                let rest = r.summary.chars.chars + tool_message_chars(r, view.message_sizes);
                message_tokens(content.chars.chars + rest)
                    .saturating_sub(message_tokens(placeholder_chars + rest))
            } else {
                view.tokens(Estimator::LangChain, &content).saturating_sub(placeholder)
            };
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
        // count_tokens_approximately before request k (k ≤ 10 results, ids c0..c9), by hand:
        // - each tool message: its content (a 91-char summary + 8,000 chars, one piece on whole
        //   outputs), its id (2), its name `Read` (4) and role `tool` (4): ceil(8,101 / 4) + 3 =
        //   2,029;
        // - the user message `go`: ceil((2 + 4) / 4) + 3 = 5;
        // - each AI message: no text, `assistant` (9), repr of its one call
        //   `[{'name': 'Read', 'args': {}, 'id': 'cJ', 'type': 'tool_call'}]` (63 chars):
        //   ceil(72 / 4) + 3 = 21.
        // k = 9: 9 × 2,029 + 5 + 9 × 21 = 18,455; k = 10: 20,290 + 5 + 210 = 20,505. The system
        // prompt is not counted.
        let r = replay_spec(session(14), "langchain:trigger=20000");
        assert!(r.cleared_before(9).is_empty(), "18,455 does not exceed 20,000");
        assert_eq!(r.cleared_before(10), (0..7).collect::<Vec<_>>(), "all but the last 3 of 10");
        assert_eq!(r.replacement(10, 0), Some("[cleared]"));
        // Never persisted: the count stays over the trigger and one more result goes per request.
        assert_eq!(r.cleared_before(14), (0..11).collect::<Vec<_>>());
        assert_eq!(r.prune_requests(), [10, 11, 12, 13, 14]);
        assert_eq!(r.run.rows[14].categories.placeholders, 11 * 9);
    }

    #[test]
    fn the_count_is_exact_to_the_token() {
        // The counts worked out above are the trigger's edges: over 20,504 at request 10, not
        // over 20,505; over 18,454 at request 9, not over 18,455.
        let fires_at = |trigger: u64| {
            let r = replay_spec(session(14), &format!("langchain:trigger={trigger},keep=0"));
            r.prune_requests()[0]
        };
        assert_eq!(fires_at(20_504), 10);
        assert_eq!(fires_at(20_505), 11);
        assert_eq!(fires_at(18_454), 9);
        assert_eq!(fires_at(18_455), 10);
    }

    #[test]
    fn each_message_is_rounded_on_its_own() {
        // Before request 0: three user messages of 2 chars, each ceil((2 + 4) / 4) + 3 = 5 (15;
        // rounded once over their sum it would be ceil(18 / 4) + 9 = 14); before request 1 also
        // one tool message `c0` of 8 chars, ceil((8 + 2 + 4 + 4) / 4) + 3 = 8, and one AI
        // message with its call, 21 as above: 44.
        let c = || Convo::new().user("go").user("on").user("ok").request().tool("Read", text(8)).request();
        let fires = |trigger: u64| {
            let r = replay_spec(c(), &format!("langchain:trigger={trigger},keep=0"));
            r.prune_requests().first().copied()
        };
        assert_eq!(fires(43), Some(1));
        assert_eq!(fires(44), None);
        assert_eq!(fires(14), Some(1), "fires at request 0 too, with no result to clear");
    }

    #[test]
    fn arguments_count_as_their_python_repr() {
        // The AI message of `Read` with `{"path":"a.rs","n":1.0}`: `assistant` (9) and
        // `[{'name': 'Read', 'args': {'path': 'a.rs', 'n': 1.0}, 'id': 'c0', 'type': 'tool_call'}]`
        // (87 chars; the arguments' JSON text is 3 shorter than their repr): ceil(96 / 4) + 3 =
        // 27. With `go` (5) and the tool message of 8 chars (8): 40 at request 1.
        let c = || {
            Convo::new()
                .user("go")
                .request()
                .call_with("Read", r#"{"path":"a.rs","n":1.0}"#, text(8))
                .request()
        };
        let fires = |trigger: u64| {
            let r = replay_spec(c(), &format!("langchain:trigger={trigger},keep=0"));
            r.prune_requests().first().copied()
        };
        assert_eq!(fires(39), Some(1));
        assert_eq!(fires(40), None);
    }

    #[test]
    fn free_text_arguments_are_one_string_argument() {
        // `bash` with the command `ls -la` as sent: `assistant` (9) and
        // `[{'name': 'bash', 'args': {'__arg1': 'ls -la'}, 'id': 'c0', 'type': 'tool_call'}]`
        // (81 chars): ceil(90 / 4) + 3 = 26. With `go` (5) and the tool message (8): 39 at
        // request 1, and its result is cleared as any other.
        let c = || Convo::new().user("go").request().call_with("bash", "ls -la", text(8)).request();
        let fires = |trigger: u64| {
            let r = replay_spec(c(), &format!("langchain:trigger={trigger},keep=0"));
            r.prune_requests().first().copied()
        };
        assert_eq!(fires(38), Some(1));
        assert_eq!(fires(39), None);
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
        // On contents each tool message goes from ceil((8,000 + 2 + 4) / 4) + 3 to
        // ceil((9 + 2 + 4) / 4) + 3: 1,998 tokens freed; 6,000 needs 4 of them, the oldest, every
        // time; the set never changes, so the prefix breaks once.
        let r = replay_spec(session(14), "langchain:trigger=20000,clear_at_least=6000,on=content");
        assert_eq!(r.cleared_before(10), [0, 1, 2, 3]);
        assert_eq!(r.cleared_before(14), [0, 1, 2, 3]);
        assert_eq!(r.prune_requests(), [10]);
        // On whole outputs the 91-char summary goes too: 2,025 − 4 = 2,021 each; 3 suffice.
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
