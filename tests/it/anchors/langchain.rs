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
//! The count, `count_tokens_approximately` (`libs/core/langchain_core/messages/utils.py`, read at
//! `911f4d4`): per message `ceil(chars / 4) + 3`, chars being the content, the role (`user`,
//! `assistant`, `tool`), a tool message's `tool_call_id` and an AI message's `repr(tool_calls)`
//! (55 chars per call besides its name, arguments and id). Named differences, as the policy
//! documents them: the messages other than tool messages are rounded once over their sum (the
//! replay gives their total, not each one), a call's arguments count as their JSON text, only
//! the calls whose results are in the context add their repr, and the tool message's `name` is
//! not counted. Chars are the library's measured char counts of the texts the replay sends (a
//! result's summary and content as the seed splits them). Modelled: `on=content` clears only a
//! result the seed splits.

use std::collections::BTreeSet;

use ctxbudget::measure::{Category, MeasuredItem};

use super::{Cleared, On, Session, THRESHOLD, prunable, requests, results};

const PLACEHOLDER: &str = "[cleared]";

/// `ceil(chars / 4) + 3`.
fn message(chars: u64) -> u64 {
    chars.div_ceil(4) + 3
}

/// The approximate count of the messages in `items`, and for each tool result in them (by item
/// position) whether its call is in the nearest AI message before it.
fn messages(items: &[MeasuredItem], offset: usize) -> (u64, Vec<(usize, bool)>) {
    // Tool messages are counted one by one; the others together (chars, messages).
    let (mut tool_tokens, mut chars, mut others) = (0u64, 0u64, 0u64);
    // Hidden reasoning is sent until the next human turn starts.
    let last_turn = items.iter().rposition(|i| matches!(i, MeasuredItem::Text { turn_start: true, .. }));
    // The calls of the nearest AI message, the calls of the context, and whether the current
    // response has opened an AI message.
    let (mut ai_calls, mut calls, mut opened): (BTreeSet<&str>, BTreeSet<&str>, bool) =
        (BTreeSet::new(), BTreeSet::new(), false);
    let mut tool_messages = Vec::new();
    let open = |opened: &mut bool, chars: &mut u64, others: &mut u64, ai_calls: &mut BTreeSet<&str>| {
        if !*opened {
            (*opened, *chars, *others) = (true, *chars + "assistant".len() as u64, *others + 1);
            ai_calls.clear();
        }
    };
    for (k, item) in items.iter().enumerate() {
        match item {
            MeasuredItem::Request { .. } => opened = false,
            MeasuredItem::Text { category, measure, .. } => match category {
                Category::System | Category::Unrecorded | Category::Framing | Category::Images => {}
                Category::Assistant
                | Category::Thinking
                | Category::HiddenReasoning
                | Category::ServerSide => {
                    if !(*category == Category::HiddenReasoning && last_turn.is_some_and(|t| k < t)) {
                        chars += measure.chars.chars;
                    }
                    open(&mut opened, &mut chars, &mut others, &mut ai_calls);
                }
                _ => (chars, others) = (chars + measure.chars.chars + "user".len() as u64, others + 1),
            },
            MeasuredItem::ToolCall { call_id, measure, .. } => {
                open(&mut opened, &mut chars, &mut others, &mut ai_calls);
                chars += measure.chars.chars;
                ai_calls.insert(call_id);
                calls.insert(call_id);
            }
            MeasuredItem::ToolResult(sizes, r) => {
                let (summary, content) = sizes.split_at(THRESHOLD);
                let id = r.call_id.chars().count() as u64;
                let sent = summary.chars.chars + content.map_or(0, |c| c.chars.chars);
                tool_tokens += message(sent + id + "tool".len() as u64);
                if calls.contains(r.call_id.as_str()) {
                    // `{'name': …, 'args': …, 'id': …, 'type': 'tool_call'}` and its separator.
                    chars += 55 + id;
                }
                tool_messages.push((offset + k, ai_calls.contains(r.call_id.as_str())));
            }
            MeasuredItem::Compaction { summary } => {
                if let Some(s) = summary {
                    (chars, others) = (chars + s.chars.chars + "user".len() as u64, others + 1);
                }
            }
        }
    }
    (tool_tokens + chars.div_ceil(4) + 3 * others, tool_messages)
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
