//! Anthropic's server-side context editing as a Messages API response reports it (beta
//! `context-management-2025-06-27`; platform.claude.com/docs/en/build-with-claude/context-editing):
//! `context_management.applied_edits[]`, each `{type, cleared_tool_uses, cleared_input_tokens}`
//! for `clear_tool_uses_20250919` and `{type, cleared_thinking_turns, cleared_input_tokens}` for
//! `clear_thinking_20251015`. The server cleared them from the request whose response says so,
//! before the model saw it, recomputing from the full history the client sent.
//!
//! Read by every format whose records hold these responses (`claude_code`, `claude_stream`,
//! `cassette`, `inspect`): a tool-use edit becomes an [`Item::Cleared`] with its count
//! ([`Cleared::oldest`]), placed before that request (`measure::cleared` clears the oldest results
//! of the context). Thinking clearing is read but not replayed: the reader says so in one warning
//! ([`ThinkingCleared`]). An empty list, or a count of 0, clears nothing. What is malformed (not
//! an object, not a list, a count that is negative, fractional or a string, an unknown edit type)
//! is returned as a problem for the reader to name with its file and line; what is valid is kept.
//!
//! Stickiness: a clearing marker is sticky (the replay keeps a result cleared from the marker on).
//! The server recomputes each request's edit from the full history, which only grows, so once it
//! clears it clears at least the same oldest results at every later request, and a sticky marker
//! is exact. A later response that reports fewer (or none: `clear_at_least` not reached, the beta
//! left off) is the exception [`unsticky`] names in a warning. Pure: no I/O.

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
    /// The tool results the server cleared, as a marker (none when it cleared none).
    pub cleared: Option<Cleared>,
    /// Thinking turns and input tokens it cleared (not replayed).
    pub thinking: Option<(u64, Tokens)>,
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
    let (mut uses, mut tokens) = (0usize, None::<Tokens>);
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
                let n = count("cleared_thinking_turns", "ignored", &mut out);
                let t = count("cleared_input_tokens", "ignored", &mut out);
                if n.is_some() || t.is_some() {
                    let (turns, sum) = out.thinking.get_or_insert((0, 0));
                    (*turns, *sum) = (*turns + n.unwrap_or(0), *sum + t.unwrap_or(0));
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
    if uses > 0 {
        out.cleared = Some(Cleared { oldest: Some(uses), tokens_saved: tokens, ..Cleared::default() });
    }
    out
}

/// The thinking clearing the responses of one file report, for one warning: the replay does not
/// take thinking out, so those requests replay larger than they were sent.
#[derive(Debug, Default)]
pub(crate) struct ThinkingCleared {
    responses: usize,
    turns: u64,
    tokens: Tokens,
    first: Option<String>,
}

impl ThinkingCleared {
    /// Notes the thinking clearing of the response at `at`, if any.
    pub(crate) fn note(&mut self, at: impl FnOnce() -> String, thinking: Option<(u64, Tokens)>) {
        let Some((turns, tokens)) = thinking else { return };
        self.responses += 1;
        self.turns += turns;
        self.tokens += tokens;
        self.first.get_or_insert_with(at);
    }

    /// The warning, if any response cleared thinking.
    pub(crate) fn warning(&self) -> Option<String> {
        let first = self.first.as_ref()?;
        Some(format!(
            "{first}: {} response(s) report `{CLEAR_THINKING}` edits ({} thinking turn(s), {} input \
             tokens cleared): thinking clearing is not replayed, so those requests replay larger \
             than they were sent",
            self.responses, self.turns, self.tokens
        ))
    }
}

/// Where `conversation` breaks the sticky model: requests whose response reports fewer cleared
/// tool uses (or none) than an earlier request of the same context, as a warning naming the
/// conversation and the first such request (the replay keeps the earlier clearing).
pub(crate) fn unsticky(conversation: &Conversation) -> Option<String> {
    let (mut in_force, mut own, mut request) = (0usize, None::<usize>, 0usize);
    let (mut fewer, mut first) = (0usize, None::<(usize, usize, usize)>);
    for item in &conversation.items {
        match item {
            Item::Cleared(Cleared { oldest: Some(n), .. }) => own = Some(*n),
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
        "conversation `{}`: {fewer} request(s) report fewer cleared tool uses than an earlier one \
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
    fn tool_use_edits_become_a_count_and_thinking_is_kept_apart() {
        let e = read(&json!({"applied_edits": [
            {"type": CLEAR_THINKING, "cleared_thinking_turns": 3, "cleared_input_tokens": 15000},
            {"type": CLEAR_TOOL_USES, "cleared_tool_uses": 8, "cleared_input_tokens": 50000},
        ]}));
        assert!(e.problems.is_empty(), "{:?}", e.problems);
        assert_eq!(e.cleared.map(|c| (c.oldest, c.tokens_saved)), Some((Some(8), Some(50000))));
        assert_eq!(e.thinking, Some((3, 15000)));
    }

    #[test]
    fn an_empty_list_or_a_zero_count_clears_nothing() {
        for cm in [
            json!({"applied_edits": []}),
            json!({}),
            Value::Null,
            json!({"applied_edits": [
            {"type": CLEAR_TOOL_USES, "cleared_tool_uses": 0, "cleared_input_tokens": 0}]}),
        ] {
            let e = read(&cm);
            assert!(e.cleared.is_none() && e.thinking.is_none() && e.problems.is_empty(), "{cm}");
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
        ]}));
        assert!(e.cleared.is_none());
        assert_eq!(
            e.problems,
            [
                "`context_management.applied_edits[0].cleared_tool_uses` is -2 (a negative number), not a count (the edit is ignored)",
                "`context_management.applied_edits[1].cleared_tool_uses` is \"2\" (a string), not a count (the edit is ignored)",
                "`context_management.applied_edits[2].type` \"clear_everything\" is not an edit this reader knows (not replayed)",
                "`context_management.applied_edits[3]` is a number, not an object (ignored)",
            ]
        );
    }

    #[test]
    fn a_request_reporting_fewer_than_an_earlier_one_is_named() {
        let marker = |n| Item::Cleared(Cleared { oldest: Some(n), ..Cleared::default() });
        let request = || Item::Request(crate::model::Request::default());
        let mut c = Conversation::new("main");
        c.items = vec![request(), marker(2), request(), marker(3), request(), request()];
        let w = unsticky(&c).expect("request 3 reports none after 3");
        assert!(w.contains("1 request(s)") && w.contains("request 3, 0 after 3"), "{w}");
        c.items.truncate(5);
        assert_eq!(unsticky(&c), None, "2 then 3: the count grows");
        c.items.extend([Item::Compaction { summary: None }, request()]);
        assert_eq!(unsticky(&c), None, "a compaction starts a new context");
    }
}
