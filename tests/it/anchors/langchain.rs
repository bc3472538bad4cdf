//! `langchain` beside `ClearToolUsesEdit.apply` as LangChain writes it: `langchain-ai/langchain`
//! `libs/langchain_v1/langchain/agents/middleware/context_editing.py` (read at `925aa15`):
//!
//! ```python
//! tokens = count_tokens(messages)
//! if tokens <= self.trigger: return
//! candidates = [(idx, msg) for idx, msg in enumerate(messages) if isinstance(msg, ToolMessage)]
//! if self.keep >= len(candidates): candidates = []
//! elif self.keep: candidates = candidates[: -self.keep]
//! for idx, tool_message in candidates:
//!     ai_message = next((m for m in reversed(messages[:idx]) if isinstance(m, AIMessage)), None)
//!     if ai_message is None: continue
//!     tool_call = next((call for call in ai_message.tool_calls if call.get("id") == tool_message.tool_call_id), None)
//!     if tool_call is None: continue
//!     if (tool_message.name or tool_call["name"]) in excluded_tools: continue
//!     messages[idx] = tool_message.model_copy(update={"content": self.placeholder, ...})
//!     if self.clear_at_least > 0: ... if cleared_tokens >= self.clear_at_least: break
//! ```
//!
//! on a deep copy of the request's messages (`wrap_model_call`), so nothing persists. The
//! messages, built here from the items: each user text (and a compaction summary) is a
//! `HumanMessage`, each model response with text, reasoning or calls one `AIMessage` holding its
//! calls, each tool result a `ToolMessage`; the system prompt and the calibrated overhead are not
//! messages (`request.system_message` is apart).
//!
//! The count, a named difference: the policy's documented approximation, `ceil(chars / 4) + 3`
//! per message over the whole list, where chars are those of the texts the replay sends (a
//! result's summary and content as the seed splits them) and of the calls' names and arguments;
//! upstream's `count_tokens_approximately` rounds per message and adds each message's role, a
//! tool message's `tool_call_id` and an AI message's `repr(tool_calls)` (issue 31, left). Sizes
//! are the library's measured char counts. Modelled: `on=content` clears only a result the seed
//! splits.

use std::collections::BTreeSet;

use ctxbudget::measure::{Category, MeasuredItem};

use super::{Cleared, On, Session, THRESHOLD, prunable, requests, results};

const PLACEHOLDER: &str = "[cleared]";

/// The approximate count of the messages in `items`, and for each tool result in them (by item
/// position) whether its call is in the nearest AI message before it.
fn messages(items: &[MeasuredItem], offset: usize) -> (u64, Vec<(usize, bool)>) {
    let (mut chars, mut messages) = (0u64, 0u64);
    // Hidden reasoning is sent until the next human turn starts.
    let last_turn = items.iter().rposition(|i| matches!(i, MeasuredItem::Text { turn_start: true, .. }));
    // The calls of the nearest AI message, and whether the current response has opened one.
    let (mut ai_calls, mut opened): (BTreeSet<&str>, bool) = (BTreeSet::new(), false);
    let mut tool_messages = Vec::new();
    for (k, item) in items.iter().enumerate() {
        match item {
            MeasuredItem::Request { .. } => opened = false,
            MeasuredItem::Text { category, measure, .. } => match category {
                Category::System | Category::Unrecorded | Category::Images => {}
                Category::Assistant
                | Category::Thinking
                | Category::HiddenReasoning
                | Category::ServerSide => {
                    if !(*category == Category::HiddenReasoning && last_turn.is_some_and(|t| k < t)) {
                        chars += measure.chars.chars;
                    }
                    if !opened {
                        (opened, messages) = (true, messages + 1);
                        ai_calls.clear();
                    }
                }
                _ => (chars, messages) = (chars + measure.chars.chars, messages + 1),
            },
            MeasuredItem::ToolCall { call_id, measure, .. } => {
                chars += measure.chars.chars;
                if !opened {
                    (opened, messages) = (true, messages + 1);
                    ai_calls.clear();
                }
                ai_calls.insert(call_id);
            }
            MeasuredItem::ToolResult(sizes, r) => {
                let (summary, content) = sizes.split_at(THRESHOLD);
                chars += summary.chars.chars + content.map_or(0, |c| c.chars.chars);
                messages += 1;
                tool_messages.push((offset + k, ai_calls.contains(r.call_id.as_str())));
            }
            MeasuredItem::Compaction { summary } => {
                if let Some(s) = summary {
                    (chars, messages) = (chars + s.chars.chars, messages + 1);
                }
            }
        }
    }
    (chars.div_ceil(4) + 3 * messages, tool_messages)
}

fn expected(s: &Session, on: On, trigger: u64, keep: usize) -> Vec<Cleared> {
    let all = results(&s.measured);
    requests(&s.measured)
        .iter()
        .map(|req| {
            let (count, tool_messages) = messages(&s.measured.items[req.start..req.end], req.start);
            let mut cleared = Cleared::default();
            if count <= trigger {
                return cleared;
            }
            let candidates = if keep >= tool_messages.len() { 0 } else { tool_messages.len() - keep };
            for &(position, call_found) in &tool_messages[..candidates] {
                let r = &all[all.partition_point(|r| r.position < position)];
                if call_found && prunable(r, on) {
                    cleared.results.insert(r.index, PLACEHOLDER.to_owned());
                }
            }
            cleared
        })
        .collect()
}

#[test]
fn langchain_clears_what_clear_tool_uses_clears_on_every_corpus_session() {
    let specs = [
        "langchain",
        "langchain:on=content",
        "langchain:trigger=20000",
        "langchain:trigger=20000,on=content",
        "langchain:trigger=5000,keep=0",
        "langchain:trigger=5000,keep=0,on=content",
    ];
    super::check("langchain", &specs, str::to_owned, |s, spec, on| {
        let (trigger, keep) = if spec.contains("trigger=20000") {
            (20_000, 3)
        } else if spec.contains("keep=0") {
            (5_000, 0)
        } else {
            (100_000, 3)
        };
        expected(s, on, trigger, keep)
    });
}
