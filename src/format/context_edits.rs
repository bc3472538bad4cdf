//! Anthropic's server-side context editing as a Messages API response reports it (beta
//! `context-management-2025-06-27`; platform.claude.com/docs/en/build-with-claude/context-editing):
//! `context_management.applied_edits[]`, each `{type, cleared_tool_uses, cleared_input_tokens}`
//! for `clear_tool_uses_20250919` and `{type, cleared_thinking_turns, cleared_input_tokens}` for
//! `clear_thinking_20251015`. The server cleared them from the request whose response says so,
//! before the model saw it, recomputing from the full history the client sent.
//!
//! Read by every format whose records hold these responses (`claude_code`, `claude_stream`,
//! `cassette`, `inspect`): the edits of one response become one [`Item::Cleared`] with their
//! counts ([`Cleared::oldest`] for the tool uses, [`Cleared::thinking_turns`] for the thinking
//! turns), placed before that request (`measure::cleared` chooses the oldest results and the
//! thinking blocks of the oldest turns of the context). An empty list, or a count of 0, clears
//! nothing. What is malformed (not an object, not a list, a count that is negative, fractional or
//! a string, an unknown edit type) is returned as a problem for the reader to name with its file
//! and line; what is valid is kept.
//!
//! Stickiness: a clearing marker is sticky (the replay keeps a result or a thinking block cleared
//! from the marker on). The server recomputes each request's edit from the full history, which
//! only grows, so once it clears it clears at least the same oldest results (and thinking turns)
//! at every later request, and a sticky marker is exact. A later response that reports fewer (or
//! none: `clear_at_least` not reached, the beta left off) is the exception [`unsticky`] names in
//! a warning. Pure: no I/O.

use serde_json::Value;

use super::shared::not_a;
use super::wire::kind_of;
use crate::model::{Cleared, Conversation, Item, MAX_RECORDED_TOKENS, Tokens};

/// The edit type that clears tool results.
pub(crate) const CLEAR_TOOL_USES: &str = "clear_tool_uses_20250919";
/// The edit type that clears thinking blocks.
pub(crate) const CLEAR_THINKING: &str = "clear_thinking_20251015";

/// What one response's `context_management` reports.
#[derive(Debug, Default)]
pub(crate) struct Edits {
    /// The tool results and thinking turns the server cleared, as a marker (none when it cleared
    /// none).
    pub cleared: Option<Cleared>,
    /// What is malformed, each naming its field.
    pub problems: Vec<String>,
}

/// Reads a response's `context_management` value.
pub(crate) fn read(context_management: &Value) -> Edits {
    let mut out = Edits::default();
    if context_management.is_null() {
        return out;
    }
    let Value::Object(cm) = context_management else {
        out.problems.push(format!(
            "`context_management` is {}, not an object (ignored)",
            kind_of(context_management)
        ));
        return out;
    };
    let edits = match cm.get("applied_edits") {
        None | Some(Value::Null) => return out,
        Some(Value::Array(edits)) => edits,
        Some(other) => {
            out.problems.push(format!(
                "`context_management.applied_edits` is {}, not a list (ignored)",
                kind_of(other)
            ));
            return out;
        }
    };
    let (mut uses, mut tokens, mut turns) = (0usize, None::<Tokens>, 0usize);
    for (i, edit) in edits.iter().enumerate() {
        let at = format!("context_management.applied_edits[{i}]");
        let Value::Object(e) = edit else {
            out.problems.push(format!("`{at}` is {}, not an object (ignored)", kind_of(edit)));
            continue;
        };
        // A count of `key`, or the problem named with what follows from it (`then`).
        let count = |key: &str, then: &str, out: &mut Edits| {
            let v = e.get(key).filter(|v| !v.is_null());
            let problem = match v.map(|v| (v, v.as_u64())) {
                Some((_, Some(n))) if n <= MAX_RECORDED_TOKENS => return Some(n),
                Some((_, Some(_))) => format!("`{at}.{key}` is above {MAX_RECORDED_TOKENS}"),
                Some((v, None)) => not_a(&format!("{at}.{key}"), v, "count"),
                None => format!("`{at}` has no `{key}`"),
            };
            out.problems.push(format!("{problem} ({then})"));
            None
        };
        match e.get("type").and_then(Value::as_str) {
            Some(CLEAR_TOOL_USES) => {
                if let Some(n) = count("cleared_tool_uses", "the edit is ignored", &mut out) {
                    uses += n as usize;
                    if let Some(t) = count("cleared_input_tokens", "ignored; the count is kept", &mut out) {
                        *tokens.get_or_insert(0) += t;
                    }
                }
            }
            Some(CLEAR_THINKING) => {
                if let Some(n) = count("cleared_thinking_turns", "the edit is ignored", &mut out) {
                    turns += n as usize;
                    // Checked, not used: the turns' own thinking blocks are what the replay takes out.
                    count("cleared_input_tokens", "ignored; the count is kept", &mut out);
                }
            }
            Some(other) => {
                let shown: String = other.chars().take(40).collect();
                out.problems
                    .push(format!("`{at}.type` {shown:?} is not an edit this reader knows (not replayed)"));
            }
            None => out.problems.push(format!("`{at}` has no string `type` (ignored)")),
        }
    }
    if uses > 0 || turns > 0 {
        out.cleared = Some(Cleared {
            oldest: (uses > 0).then_some(uses),
            tokens_saved: tokens.filter(|_| uses > 0),
            thinking_turns: (turns > 0).then_some(turns),
            ..Cleared::default()
        });
    }
    out
}

/// Where `conversation` breaks the sticky model: requests whose response reports fewer cleared
/// tool uses (or thinking turns), or none, than an earlier request of the same context, as a
/// warning per kind naming the conversation and the first such request (the replay keeps the
/// earlier clearing).
pub(crate) fn unsticky(conversation: &Conversation) -> Vec<String> {
    let uses = fewer(conversation, |c| c.oldest, "tool uses");
    let turns = fewer(conversation, |c| c.thinking_turns, "thinking turns");
    uses.into_iter().chain(turns).collect()
}

/// A count a clearing marker gives.
type Count = fn(&Cleared) -> Option<usize>;

/// [`unsticky`] for the count `count` reads, of `noun`.
fn fewer(conversation: &Conversation, count: Count, noun: &str) -> Option<String> {
    let (mut in_force, mut own, mut request) = (0usize, None::<usize>, 0usize);
    let (mut fewer, mut first) = (0usize, None::<(usize, usize, usize)>);
    for item in &conversation.items {
        match item {
            Item::Cleared(c) => own = count(c).or(own),
            Item::Compaction { .. } => (in_force, own) = (0, None),
            Item::Request(_) => {
                let n = own.take().unwrap_or(0);
                if n < in_force {
                    fewer += 1;
                    first.get_or_insert((request, n, in_force));
                }
                in_force = in_force.max(n);
                request += 1;
            }
            _ => {}
        }
    }
    let (r, n, before) = first?;
    Some(format!(
        "conversation `{}`: {fewer} request(s) report fewer cleared {noun} than an earlier one \
         (first: request {r}, {n} after {before}); the replay keeps the earlier clearing, so it \
         sends less than the provider did there (docs/unseen-context.md, \"Clearing\")",
        conversation.id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_edits_of_one_response_become_one_marker_with_both_counts() {
        let e = read(&json!({"applied_edits": [
            {"type": CLEAR_THINKING, "cleared_thinking_turns": 3, "cleared_input_tokens": 15000},
            {"type": CLEAR_TOOL_USES, "cleared_tool_uses": 8, "cleared_input_tokens": 50000},
        ]}));
        assert!(e.problems.is_empty(), "{:?}", e.problems);
        let c = e.cleared.expect("a marker");
        assert_eq!((c.oldest, c.tokens_saved, c.thinking_turns), (Some(8), Some(50000), Some(3)));
        // Thinking alone: no tool-use count, and no size that would choose results.
        let e = read(&json!({"applied_edits": [
            {"type": CLEAR_THINKING, "cleared_thinking_turns": 2, "cleared_input_tokens": 900}]}));
        let c = e.cleared.expect("a marker");
        assert_eq!((c.oldest, c.tokens_saved, c.thinking_turns), (None, None, Some(2)));
        assert!(c.call_ids.is_empty());
    }

    #[test]
    fn an_empty_list_or_a_zero_count_clears_nothing() {
        for cm in [
            json!({"applied_edits": []}),
            json!({}),
            Value::Null,
            json!({"applied_edits": [
            {"type": CLEAR_TOOL_USES, "cleared_tool_uses": 0, "cleared_input_tokens": 0}]}),
            json!({"applied_edits": [
            {"type": CLEAR_THINKING, "cleared_thinking_turns": 0, "cleared_input_tokens": 0}]}),
        ] {
            let e = read(&cm);
            assert!(e.cleared.is_none() && e.problems.is_empty(), "{cm}");
        }
    }

    #[test]
    fn malformed_fields_are_named_and_ignored() {
        let problems = |cm: Value| read(&cm).problems;
        assert_eq!(problems(json!([])), ["`context_management` is an array, not an object (ignored)"]);
        assert_eq!(
            problems(json!({"applied_edits": "2"})),
            ["`context_management.applied_edits` is a string, not a list (ignored)"]
        );
        let e = read(&json!({"applied_edits": [
            {"type": CLEAR_TOOL_USES, "cleared_tool_uses": -2, "cleared_input_tokens": 10},
            {"type": CLEAR_TOOL_USES, "cleared_tool_uses": "2", "cleared_input_tokens": 10},
            {"type": "clear_everything", "cleared_tool_uses": 1},
            7,
            {"type": CLEAR_THINKING, "cleared_thinking_turns": 1.5, "cleared_input_tokens": 10},
            {"type": CLEAR_THINKING, "cleared_input_tokens": 10},
        ]}));
        assert!(e.cleared.is_none());
        assert_eq!(
            e.problems,
            [
                "`context_management.applied_edits[0].cleared_tool_uses` is -2 (a negative number), not a count (the edit is ignored)",
                "`context_management.applied_edits[1].cleared_tool_uses` is \"2\" (a string), not a count (the edit is ignored)",
                "`context_management.applied_edits[2].type` \"clear_everything\" is not an edit this reader knows (not replayed)",
                "`context_management.applied_edits[3]` is a number, not an object (ignored)",
                "`context_management.applied_edits[4].cleared_thinking_turns` is 1.5 (a fractional number), not a count (the edit is ignored)",
                "`context_management.applied_edits[5]` has no `cleared_thinking_turns` (the edit is ignored)",
            ]
        );
        // A valid count is kept though its token figure is not.
        let e = read(&json!({"applied_edits": [
            {"type": CLEAR_THINKING, "cleared_thinking_turns": 1, "cleared_input_tokens": -1}]}));
        assert_eq!(e.cleared.and_then(|c| c.thinking_turns), Some(1));
        assert_eq!(
            e.problems,
            [
                "`context_management.applied_edits[0].cleared_input_tokens` is -1 (a negative number), not a count (ignored; the count is kept)"
            ]
        );
    }

    #[test]
    fn a_request_reporting_fewer_than_an_earlier_one_is_named() {
        let marker = |n| Item::Cleared(Cleared { oldest: Some(n), ..Cleared::default() });
        let request = || Item::Request(crate::model::Request::default());
        let mut c = Conversation::new("main");
        c.items = vec![request(), marker(2), request(), marker(3), request(), request()];
        let w = unsticky(&c);
        assert_eq!(w.len(), 1, "request 3 reports none after 3: {w:?}");
        assert!(
            w[0].contains("1 request(s)")
                && w[0].contains("tool uses")
                && w[0].contains("request 3, 0 after 3")
        );
        c.items.truncate(5);
        assert_eq!(unsticky(&c), Vec::<String>::new(), "2 then 3: the count grows");
        c.items.extend([Item::Compaction { summary: None }, request()]);
        assert_eq!(unsticky(&c), Vec::<String>::new(), "a compaction starts a new context");
    }

    #[test]
    fn fewer_thinking_turns_than_an_earlier_response_are_named_apart() {
        let marker = |uses, turns| {
            Item::Cleared(Cleared { oldest: uses, thinking_turns: turns, ..Cleared::default() })
        };
        let request = || Item::Request(crate::model::Request::default());
        let mut c = Conversation::new("main");
        // Tool uses 1, 1; thinking turns 2, then 1.
        c.items = vec![marker(Some(1), Some(2)), request(), marker(Some(1), Some(1)), request()];
        let w = unsticky(&c);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("fewer cleared thinking turns") && w[0].contains("request 1, 1 after 2"),
            "{}",
            w[0]
        );
    }
}
