//! `claude-code`: Claude Code session transcripts (`~/.claude/projects/<cwd>/<session>.jsonl`).
//!
//! Schema facts (see `FORMATS.md` §1 of the shared corpus):
//! - One API response is written over several lines, one per content block, all sharing
//!   `message.id`; lines of one response may be interleaved with the tool results of its earlier
//!   blocks. They are merged into **one request**, placed before the response's first line; its
//!   blocks stay together and the interleaved tool results follow them, which is the order the next
//!   request sends. A `<synthetic>` model line is generated locally: not a request, not sent.
//! - Recorded prompt size of a request = `input_tokens + cache_creation_input_tokens +
//!   cache_read_input_tokens`, taken once per `message.id`; output tokens = the largest copy.
//! - Tool-result text is the string content, or its `text` blocks joined with `\n`; images are
//!   counted, not read as text. The top-level `toolUseResult` is UI data and is ignored.
//! - `isSidechain` lines are subagent traffic with a context of their own: lines with an `agentId`
//!   form conversation `agent-<id>`; older inline sidechains without one are grouped by following
//!   `parentUuid` to their root (`sidechain-1`, `sidechain-2`, …). `subagents/agent-*.jsonl` files are
//!   read as files of their own.
//! - A `system` line with `subtype: compact_boundary` replaces the context; the `isCompactSummary`
//!   user line after it is the summary that starts the new one.
//! - `isMeta` user lines are sent to the model but do not start a human turn.
//!
//! Decision: lines are replayed in file order within each conversation. Claude Code keeps a
//! `parentUuid` tree, and rewinds or forks make file order differ from the active path; rebuilding
//! the active path would drop requests that were really made and billed, so every recorded request
//! is replayed.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::{Format, Head, read_json_lines_skipping};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Output, RecordedTotal, Request, ToolResult, Trace, Usage};
use crate::time::parse_rfc3339;

/// Claude Code session JSONL.
pub struct ClaudeCode;

const LINE_TYPES: [&str; 12] = [
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "attachment",
    "progress",
    "permission-mode",
    "last-prompt",
    "custom-title",
    "ai-title",
];

impl Format for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        if let Some(line) = head.first_json_line {
            let claude_keys = ["sessionId", "leafUuid", "isSnapshotUpdate", "parentUuid"];
            if head.first_type().is_some_and(|t| LINE_TYPES.contains(&t))
                && claude_keys.iter().any(|k| line.get(k).is_some())
            {
                return true;
            }
        }
        head.text.contains("\"parentUuid\"") && head.text.contains("\"sessionId\"")
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut reader = Reader::default();
        let mut warnings = Vec::new();
        read_json_lines_skipping(input, path, &mut warnings, &["toolUseResult"], |line, value| {
            reader.line(path, line, &value)
        })?;
        let mut trace = reader.finish();
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
        Ok(trace)
    }
}

/// A conversation being assembled.
#[derive(Default)]
struct Building {
    conversation: Conversation,
    /// `message.id` of the response whose lines are still arriving.
    open: Option<String>,
    /// Index of the open response's request item, to update its usage.
    open_request: usize,
    /// Blocks of the open response.
    response: Vec<Item>,
    /// Items that arrived after the open response started (tool results, user text).
    after: Vec<Item>,
    /// Tool names by call id.
    names: HashMap<String, String>,
}

impl Building {
    fn flush(&mut self) {
        self.conversation.items.append(&mut self.response);
        self.conversation.items.append(&mut self.after);
        self.open = None;
    }

    fn push(&mut self, item: Item) {
        if self.open.is_some() {
            self.after.push(item);
        } else {
            self.conversation.items.push(item);
        }
    }
}

/// The line-by-line assembler of Claude Code conversations, shared with
/// [`claude_stream`](super::claude_stream), whose lines carry the same Anthropic messages.
#[derive(Default)]
pub(crate) struct Reader {
    conversations: Vec<Building>,
    by_key: BTreeMap<String, usize>,
    /// Inline sidechain line uuid → conversation index.
    sidechain_of: HashMap<String, usize>,
    sidechains: usize,
    unknown_blocks: BTreeMap<String, usize>,
    /// Lines of a type this reader does not know, by type.
    unknown_lines: BTreeMap<String, usize>,
}

impl Reader {
    /// Index of the conversation called `key`, created empty on first use.
    pub(crate) fn conversation(&mut self, key: String) -> usize {
        if let Some(&i) = self.by_key.get(&key) {
            return i;
        }
        self.conversations
            .push(Building { conversation: Conversation::new(key.clone()), ..Default::default() });
        self.by_key.insert(key, self.conversations.len() - 1);
        self.conversations.len() - 1
    }

    /// Which conversation a user/assistant/system line belongs to.
    fn route(&mut self, v: &Value) -> usize {
        let sidechain = v.get("isSidechain").and_then(Value::as_bool).unwrap_or(false);
        if !sidechain {
            return self.conversation("main".into());
        }
        if let Some(agent) = v.get("agentId").and_then(Value::as_str) {
            return self.conversation(format!("agent-{agent}"));
        }
        let parent = v.get("parentUuid").and_then(Value::as_str);
        let index = match parent.and_then(|p| self.sidechain_of.get(p)) {
            Some(&i) => i,
            None => {
                self.sidechains += 1;
                let key = format!("sidechain-{}", self.sidechains);
                self.conversation(key)
            }
        };
        if let Some(uuid) = v.get("uuid").and_then(Value::as_str) {
            self.sidechain_of.insert(uuid.to_owned(), index);
        }
        index
    }

    fn line(&mut self, path: &Path, line: usize, v: &Value) -> Result<(), TraceError> {
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            return Err(TraceError::line(path, line, "expected an object with a string `type`"));
        };
        match kind {
            "assistant" | "user" => {
                if v.get("message").is_none() {
                    return Err(TraceError::line(path, line, format!("{kind} line has no `message`")));
                }
                let c = self.route(v);
                if kind == "user" {
                    self.user_in(c, path, line, v)
                } else {
                    self.assistant_in(c, path, line, v)
                }
            }
            "system" if v.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
                let c = self.route(v);
                self.compaction_in(c);
                Ok(())
            }
            // Other known line types are UI bookkeeping that is not sent to the model.
            known if LINE_TYPES.contains(&known) => Ok(()),
            // An unknown type (a newer Claude Code) is not replayed either, but counted and
            // warned about: it might hold something the model saw.
            unknown => {
                *self.unknown_lines.entry(unknown.to_owned()).or_default() += 1;
                Ok(())
            }
        }
    }

    /// Adds an assistant line (its `message` an Anthropic response, possibly one block of it) to
    /// conversation `c`, merging the lines of one response into one request.
    pub(crate) fn assistant_in(
        &mut self,
        c: usize,
        path: &Path,
        line: usize,
        v: &Value,
    ) -> Result<(), TraceError> {
        let message = v
            .get("message")
            .ok_or_else(|| TraceError::line(path, line, "assistant line has no `message`"))?;
        if message.get("model").and_then(Value::as_str) == Some("<synthetic>") {
            return Ok(());
        }
        let id = message
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| TraceError::line(path, line, "assistant line has no `message.id`"))?;
        let usage = message.get("usage").map(usage_of);
        let b = &mut self.conversations[c];
        if b.open.as_deref() == Some(id) {
            // A further block of the open response: keep the largest output count.
            if let (Some(Item::Request(r)), Some(new)) = (b.conversation.items.get_mut(b.open_request), usage)
            {
                if let Some(old) = r.usage.as_mut() {
                    old.output_tokens = old.output_tokens.max(new.output_tokens);
                }
            }
        } else {
            b.flush();
            let timestamp = v.get("timestamp").and_then(Value::as_str).and_then(parse_rfc3339);
            b.conversation.items.push(Item::Request(Request { id: Some(id.to_owned()), timestamp, usage }));
            b.open_request = b.conversation.items.len() - 1;
            b.open = Some(id.to_owned());
        }
        let blocks = match message.get("content") {
            Some(Value::String(s)) => {
                b.response.push(Item::Assistant { text: s.clone() });
                return Ok(());
            }
            Some(Value::Array(blocks)) => blocks,
            _ => {
                return Err(TraceError::line(
                    path,
                    line,
                    "assistant `message.content` is neither text nor a list",
                ));
            }
        };
        for block in blocks {
            match block.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" => b.response.push(Item::Assistant { text: str_field(block, "text") }),
                "thinking" => b.response.push(Item::Thinking { text: str_field(block, "thinking") }),
                "tool_use" => {
                    let call_id = str_field(block, "id");
                    let name = str_field(block, "name");
                    let arguments = block.get("input").map(Value::to_string).unwrap_or_default();
                    b.names.insert(call_id.clone(), name.clone());
                    b.response.push(Item::ToolCall { call_id, name, arguments });
                }
                other => *self.unknown_blocks.entry(format!("assistant {other}")).or_default() += 1,
            }
        }
        Ok(())
    }

    /// Adds a user line (text, images, tool results) to conversation `c`.
    pub(crate) fn user_in(
        &mut self,
        c: usize,
        path: &Path,
        line: usize,
        v: &Value,
    ) -> Result<(), TraceError> {
        let message =
            v.get("message").ok_or_else(|| TraceError::line(path, line, "user line has no `message`"))?;
        let meta = v.get("isMeta").and_then(Value::as_bool).unwrap_or(false);
        let blocks = match message.get("content") {
            Some(Value::String(s)) => {
                self.conversations[c].push(Item::User { text: s.clone(), meta, images: 0 });
                return Ok(());
            }
            Some(Value::Array(blocks)) => blocks,
            _ => {
                return Err(TraceError::line(
                    path,
                    line,
                    "user `message.content` is neither text nor a list",
                ));
            }
        };
        let mut text: Vec<&str> = Vec::new();
        let mut images = 0u32;
        for block in blocks {
            match block.get("type").and_then(Value::as_str).unwrap_or("") {
                "text" => text.push(block.get("text").and_then(Value::as_str).unwrap_or("")),
                "image" => images += 1,
                "tool_result" => {
                    let b = &mut self.conversations[c];
                    let call_id = str_field(block, "tool_use_id");
                    let (output, result_images) = tool_result_text(block.get("content"));
                    let is_error = block.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                    let name = b.names.get(&call_id).cloned();
                    b.push(Item::ToolResult(ToolResult {
                        call_id,
                        name,
                        output: Output::Raw { output },
                        is_error,
                        images: result_images,
                    }));
                }
                other => *self.unknown_blocks.entry(format!("user {other}")).or_default() += 1,
            }
        }
        if !text.is_empty() || images > 0 {
            self.conversations[c].push(Item::User { text: text.join("\n"), meta, images });
        }
        Ok(())
    }

    /// Conversation `c`'s context is replaced from here on (its summary follows as user text).
    pub(crate) fn compaction_in(&mut self, c: usize) {
        let b = &mut self.conversations[c];
        b.flush();
        b.conversation.items.push(Item::Compaction { summary: None });
    }

    /// Sets the aggregate usage of conversation `c` (for formats that also record session totals).
    pub(crate) fn set_recorded_total(&mut self, c: usize, total: RecordedTotal) {
        self.conversations[c].conversation.recorded_total = Some(total);
    }

    /// Requests assembled so far in conversation `c` (the open response's included).
    pub(crate) fn requests_in(&self, c: usize) -> usize {
        self.conversations[c].conversation.requests()
    }

    fn finish(self) -> Trace {
        self.finish_as("claude-code")
    }

    /// The trace, under the name of the format that read it.
    pub(crate) fn finish_as(mut self, format: &'static str) -> Trace {
        let mut trace = Trace { format, ..Default::default() };
        for (kind, n) in &self.unknown_blocks {
            trace.warnings.push(format!("{n} `{kind}` content block(s) not replayed (unknown block type)"));
        }
        for (kind, n) in &self.unknown_lines {
            trace.warnings.push(format!(
                "{n} line(s) of type `{kind}` not replayed (unknown line type; a newer Claude Code version?)"
            ));
        }
        for b in &mut self.conversations {
            b.flush();
        }
        trace.conversations = self.conversations.into_iter().map(|b| b.conversation).collect();
        trace
    }
}

/// The string field `key` of `v`, or an empty string.
pub(crate) fn str_field(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// Tool-result text (string, or `text` blocks joined with `\n`) and its image count.
pub(crate) fn tool_result_text(content: Option<&Value>) -> (String, u32) {
    match content {
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(blocks)) => {
            let mut texts = Vec::new();
            let mut images = 0;
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => texts.push(b.get("text").and_then(Value::as_str).unwrap_or("")),
                    Some("image") => images += 1,
                    _ => {}
                }
            }
            (texts.join("\n"), images)
        }
        _ => (String::new(), 0),
    }
}

/// Anthropic usage normalised: prompt size = input + cache creation + cache read (disjoint).
pub(crate) fn usage_of(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (input, write, read) =
        (n("input_tokens"), n("cache_creation_input_tokens"), n("cache_read_input_tokens"));
    Usage {
        input_tokens: input + write + read,
        cache_read_tokens: Some(read),
        cache_write_tokens: Some(write),
        output_tokens: u.get("output_tokens").and_then(Value::as_u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::with_head;

    fn read(lines: &[&str]) -> Trace {
        let text = lines.join("\n") + "\n";
        ClaudeCode.read(&mut text.as_bytes(), Path::new("s.jsonl")).unwrap()
    }

    const USER: &str = r#"{"type":"user","sessionId":"s","uuid":"u1","parentUuid":null,"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"list files"}}"#;

    fn asst(id: &str, block: &str, out: u64) -> String {
        format!(
            r#"{{"type":"assistant","sessionId":"s","timestamp":"2025-01-01T00:00:01Z","message":{{"id":"{id}","model":"claude","content":[{block}],"usage":{{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":{out}}}}}}}"#
        )
    }

    fn result(id: &str, content: &str) -> String {
        format!(
            r#"{{"type":"user","sessionId":"s","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":{content}}}]}}}}"#
        )
    }

    #[test]
    fn one_response_over_several_lines_is_one_request_with_usage_once() {
        let t = read(&[
            USER,
            &asst("m1", r#"{"type":"thinking","thinking":"hmm"}"#, 5),
            &asst("m1", r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}"#, 30),
            &result("t1", r#""a\nb""#),
            &asst("m2", r#"{"type":"text","text":"done"}"#, 2),
        ]);
        let c = &t.conversations[0];
        assert_eq!(c.requests(), 2);
        let Item::Request(r) = &c.items[1] else { panic!("{:?}", c.items[1]) };
        let u = r.usage.unwrap();
        assert_eq!(u.input_tokens, 1103);
        assert_eq!(u.output_tokens, Some(30));
        assert_eq!(r.timestamp, parse_rfc3339("2025-01-01T00:00:01Z"));
        match &c.items[4] {
            Item::ToolResult(tr) => {
                assert_eq!(tr.name.as_deref(), Some("Bash"));
                assert_eq!(tr.output, Output::Raw { output: "a\nb".into() });
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn interleaved_blocks_of_one_response_stay_before_its_tool_results() {
        let t = read(&[
            USER,
            &asst("m1", r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#, 1),
            &result("t1", r#""one""#),
            &asst("m1", r#"{"type":"tool_use","id":"t2","name":"Read","input":{}}"#, 2),
            &result("t2", r#""two""#),
        ]);
        let kinds: Vec<&str> = t.conversations[0]
            .items
            .iter()
            .map(|i| match i {
                Item::User { .. } => "user",
                Item::Request(_) => "request",
                Item::ToolCall { .. } => "call",
                Item::ToolResult(_) => "result",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["user", "request", "call", "call", "result", "result"]);
    }

    #[test]
    fn result_text_blocks_are_joined_and_images_counted() {
        let t = read(&[
            USER,
            &asst("m1", r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#, 1),
            &result(
                "t1",
                r#"[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]"#,
            ),
        ]);
        let Item::ToolResult(tr) = &t.conversations[0].items[3] else { panic!() };
        assert_eq!(tr.output, Output::Raw { output: "a\nb".into() });
        assert_eq!(tr.images, 1);
    }

    #[test]
    fn synthetic_lines_are_not_requests() {
        let synthetic = r#"{"type":"assistant","sessionId":"s","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"No response requested."}]}}"#;
        let t = read(&[USER, synthetic]);
        assert_eq!(t.conversations[0].requests(), 0);
    }

    #[test]
    fn sidechains_are_conversations_of_their_own() {
        let side_root = r#"{"type":"user","isSidechain":true,"sessionId":"s","uuid":"s1","parentUuid":null,"message":{"role":"user","content":"sub task"}}"#;
        let side_reply = r#"{"type":"assistant","isSidechain":true,"sessionId":"s","uuid":"s2","parentUuid":"s1","message":{"id":"ms","content":[{"type":"text","text":"ok"}]}}"#;
        let agent = r#"{"type":"user","isSidechain":true,"agentId":"abc","sessionId":"s","message":{"role":"user","content":"hi"}}"#;
        let t = read(&[USER, side_root, side_reply, agent]);
        let ids: Vec<&str> = t.conversations.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["main", "sidechain-1", "agent-abc"]);
        assert_eq!(t.conversations[1].requests(), 1);
    }

    #[test]
    fn compact_boundary_is_a_compaction_marker() {
        let boundary = r#"{"type":"system","subtype":"compact_boundary","sessionId":"s","compactMetadata":{"trigger":"auto","preTokens":1}}"#;
        let summary = r#"{"type":"user","sessionId":"s","isCompactSummary":true,"message":{"role":"user","content":"summary"}}"#;
        let t = read(&[USER, boundary, summary]);
        assert!(matches!(t.conversations[0].items[1], Item::Compaction { summary: None }));
        assert!(matches!(&t.conversations[0].items[2], Item::User { text, .. } if text == "summary"));
    }

    #[test]
    fn unknown_line_types_are_counted_in_a_warning() {
        let future = r#"{"type":"hologram","sessionId":"s","uuid":"h"}"#;
        let title = r#"{"type":"ai-title","sessionId":"s","title":"t"}"#;
        let t = read(&[USER, future, title, future]);
        assert_eq!(
            t.warnings,
            ["2 line(s) of type `hologram` not replayed (unknown line type; a newer Claude Code version?)"]
        );
        assert_eq!(t.conversations[0].items.len(), 1);
    }

    #[test]
    fn missing_message_id_is_an_error_naming_the_line() {
        let bad = r#"{"type":"assistant","sessionId":"s","message":{"content":[]}}"#;
        let text = format!("{USER}\n{bad}\n");
        let e = ClaudeCode.read(&mut text.as_bytes(), Path::new("s.jsonl")).unwrap_err();
        assert_eq!(e.to_string(), "s.jsonl:2: assistant line has no `message.id`");
    }

    #[test]
    fn detects_session_lines() {
        with_head(Path::new("a"), USER.as_bytes(), true, |h| assert!(ClaudeCode.detect(h)));
        with_head(Path::new("a"), b"{\"type\":\"user\",\"text\":\"x\"}", true, |h| {
            assert!(!ClaudeCode.detect(h))
        });
    }
}
