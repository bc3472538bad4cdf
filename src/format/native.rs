//! `native`: the JSON Lines a framework built on the seed's design would write, one history item per
//! line. It is the project's own format (the bundled `traces/` use it) and the most direct way to
//! feed ctxbudget a session from any other tool.
//!
//! Every line is an object with a `type`:
//!
//! | `type` | fields |
//! |---|---|
//! | `conversation` | `id`: starts a new conversation in the same file (items before the first one belong to `main`) |
//! | `system`, `assistant`, `thinking` | `text` |
//! | `user` | `text`, optional `meta` (harness-injected, not a human turn), `images` |
//! | `tool_call` | `call_id`, `name`, `arguments` |
//! | `tool_result` | `call_id`, optional `name`, and either `output` (raw, split at replay) or `summary` + optional `content` (already split by the tool), optional `is_error`, `images` |
//! | `request` | an LLM call is made here: optional `id`, `timestamp` (RFC 3339), `usage` {`input_tokens`, `cache_read_tokens`, `cache_write_tokens`, `output_tokens`} |
//! | `unseen` | content billed but not held as text: `kind` (`reasoning`, `server_side`, `image`), `tokens` (docs/unseen-context.md) |
//! | `compaction` | the context is replaced; optional `summary` starts the new context |
//!
//! Unknown types or fields are errors naming the line: the format is ours, so a typo should not be
//! silently dropped.

use std::io::BufRead;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::{Format, Head, read_json_lines};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Trace};

/// The native JSON Lines format.
pub struct Native;

const ITEM_TYPES: [&str; 10] = [
    "conversation",
    "system",
    "user",
    "assistant",
    "thinking",
    "tool_call",
    "tool_result",
    "request",
    "unseen",
    "compaction",
];

/// Keys of the Claude Code and stream-json lines whose types are native ones (`user`, `system`,
/// ...), which no native item has: a first line with one of them is not taken for native.
const OTHER_FORMATS_KEYS: [&str; 6] = ["message", "sessionId", "session_id", "subtype", "uuid", "parentUuid"];

/// The name of the conversation that items before any `conversation` line belong to.
pub const DEFAULT_CONVERSATION: &str = "main";

impl Format for Native {
    fn name(&self) -> &'static str {
        "native"
    }

    /// By shape, not by validity: a first line that is an object whose `type` is a native type is
    /// native, so that a mistake in it (a misspelt field, a missing one) is the reader's error
    /// naming line 1, as on any other line, rather than "not a recognised trace format" (and, in
    /// a walk, a file silently skipped). Claude Code and stream-json lines have types such as
    /// `user` and `system` too, with keys no native item has (`OTHER_FORMATS_KEYS`): those are
    /// left to their readers (tried first) or to "not recognised".
    fn detect(&self, head: &Head<'_>) -> bool {
        let Some(line) = head.first_json_line.and_then(Value::as_object) else { return false };
        let native_type = line.get("type").and_then(Value::as_str).is_some_and(|t| ITEM_TYPES.contains(&t));
        native_type && !OTHER_FORMATS_KEYS.iter().any(|k| line.contains_key(*k))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut trace = Trace { format: self.name(), ..Default::default() };
        let mut current = Conversation::new(DEFAULT_CONVERSATION);
        let mut warnings = Vec::new();
        read_json_lines(input, path, &mut warnings, |line, value| {
            if value.get("type").and_then(Value::as_str) == Some("conversation") {
                let id = value.get("id").and_then(Value::as_str).ok_or_else(|| {
                    TraceError::line(path, line, "a `conversation` line needs a string `id`")
                })?;
                let next = Conversation::new(id);
                let done = std::mem::replace(&mut current, next);
                if !done.items.is_empty() {
                    trace.conversations.push(done);
                }
                return Ok(());
            }
            let item: Item = serde_json::from_value(value).map_err(|e| {
                TraceError::line(
                    path,
                    line,
                    format!("not a native item: {e} (types: {})", ITEM_TYPES.join(", ")),
                )
            })?;
            current.items.push(item);
            Ok(())
        })?;
        if !current.items.is_empty() || trace.conversations.is_empty() {
            trace.conversations.push(current);
        }
        trace.warnings = warnings;
        Ok(trace)
    }
}

/// Writes conversations in the native format (used to build `traces/` and by tests).
pub fn write(conversations: &[Conversation], out: &mut impl std::io::Write) -> std::io::Result<()> {
    #[derive(Serialize)]
    struct ConversationLine<'a> {
        r#type: &'static str,
        id: &'a str,
    }
    for (i, c) in conversations.iter().enumerate() {
        if i > 0 || c.id != DEFAULT_CONVERSATION {
            serde_json::to_writer(&mut *out, &ConversationLine { r#type: "conversation", id: &c.id })?;
            out.write_all(b"\n")?;
        }
        for item in &c.items {
            serde_json::to_writer(&mut *out, item)?;
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::with_head;
    use crate::model::{Output, Request, ToolResult};

    fn read(text: &str) -> Result<Trace, TraceError> {
        Native.read(&mut text.as_bytes(), Path::new("s.jsonl"))
    }

    #[test]
    fn reads_items_and_conversations() {
        let t = read(concat!(
            "{\"type\":\"user\",\"text\":\"hi\"}\n",
            "{\"type\":\"request\",\"timestamp\":\"2026-01-01T00:00:00Z\"}\n",
            "{\"type\":\"tool_call\",\"call_id\":\"c1\",\"name\":\"bash\",\"arguments\":\"{}\"}\n",
            "{\"type\":\"tool_result\",\"call_id\":\"c1\",\"output\":\"ok\"}\n",
            "{\"type\":\"conversation\",\"id\":\"sub\"}\n",
            "{\"type\":\"tool_result\",\"call_id\":\"c2\",\"summary\":\"s\",\"content\":\"c\"}\n",
        ))
        .unwrap();
        assert_eq!(t.conversations.len(), 2);
        assert_eq!(t.conversations[0].id, "main");
        assert_eq!(t.conversations[0].requests(), 1);
        assert_eq!(t.conversations[1].id, "sub");
        match &t.conversations[1].items[0] {
            Item::ToolResult(ToolResult { output: Output::Split { summary, content }, .. }) => {
                assert_eq!((summary.as_str(), content.as_deref()), ("s", Some("c")));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_fields_and_types_are_errors_naming_the_line() {
        let e = read("{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"user\",\"txt\":\"x\"}\n").unwrap_err();
        assert!(e.to_string().starts_with("s.jsonl:2: not a native item"), "{e}");
        let e = read("{\"type\":\"shout\",\"text\":\"x\"}\n").unwrap_err();
        assert!(e.to_string().contains("s.jsonl:1:"), "{e}");
    }

    #[test]
    fn a_tool_result_without_output_says_what_it_needs() {
        let e = read("{\"type\":\"tool_result\",\"call_id\":\"c\"}\n").unwrap_err();
        assert!(e.to_string().contains("needs `output`"), "{e}");
    }

    #[test]
    fn written_conversations_read_back_identically() {
        let mut main = Conversation::new("main");
        main.items.push(Item::System { text: "sys".into() });
        main.items.push(Item::Request(Request {
            id: Some("r1".into()),
            timestamp: Some(1000),
            usage: None,
            model: None,
        }));
        let mut sub = Conversation::new("agent-1");
        sub.items.push(Item::Compaction { summary: Some("sum".into()) });
        let mut out = Vec::new();
        write(&[main.clone(), sub.clone()], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let t = read(&text).unwrap();
        assert_eq!(t.conversations, vec![main, sub]);
    }

    #[test]
    fn detects_its_own_lines_but_not_claude_code_lines() {
        let yes = b"{\"type\":\"user\",\"text\":\"hi\"}\n";
        with_head(Path::new("a"), yes, true, |h| assert!(Native.detect(h)));
        // A mistake in the first line is still this format's, for its reader to name.
        for line in [&b"{\"type\":\"user\",\"txt\":\"hi\"}\n"[..], b"{\"type\":\"conversation\"}\n"] {
            with_head(Path::new("a"), line, true, |h| assert!(Native.detect(h)));
        }
        let other = b"{\"type\":\"shout\",\"text\":\"hi\"}\n[1]\n";
        with_head(Path::new("a"), other, true, |h| assert!(!Native.detect(h)));
        let no = b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"},\"uuid\":\"u\"}\n";
        with_head(Path::new("a"), no, true, |h| assert!(!Native.detect(h)));
    }
}
