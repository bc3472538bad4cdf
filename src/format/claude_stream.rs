//! `claude-stream`: what `claude -p --output-format stream-json` (and the Claude Agent SDK) print,
//! one JSON object per line (often saved with a `.txt` or `.log` name).
//!
//! Schema facts (see `FORMATS.md` §2 of the shared corpus):
//! - `type` is `system` (`subtype: "init"` first: session id, tool names, model; nothing of it is
//!   replayed text), `assistant`, `user` or `result` (last: session totals).
//! - `assistant`/`user` lines are `{type, message, parent_tool_use_id, session_id, uuid}`, and
//!   `message` is the same Anthropic message as in a Claude Code transcript, split one content block
//!   per line in the same way. They are therefore assembled by the Claude Code reader
//!   (`claude_code::Reader`): one request per `message.id`, usage taken once (input + cache
//!   creation + cache read), tool-result text and block handling identical. There is no
//!   `parentUuid` tree: order is file order.
//! - `parent_tool_use_id` ≠ null marks subagent (Task tool) traffic: it has a context window of its
//!   own, so it is its own conversation, `task-<parent_tool_use_id>`; the parent sees only the Task
//!   tool's result.
//! - `system` lines with `subtype: "compact_boundary"` (newer SDKs) replace the context; one with
//!   `subtype: "microcompact_boundary"` clears earlier tool results, read as in a transcript
//!   (`claude_code::microcompact`; the metadata may be under `microcompact_metadata`, possibly
//!   with only `tokensSaved`).
//! - The `result` line's `usage` (Anthropic fields) is recorded as the `main` conversation's
//!   [`RecordedTotal`]: it is what the session billed on its main model (side models such as haiku
//!   are only in `modelUsage`, not replayed). Per-request usage takes precedence where present.
//! - Other line types (`stream_event` partial deltas with `--include-partial-messages`, hooks, …)
//!   are progress output, not sent to the model, and are ignored.
//!
//! The prompt given with `-p` is not echoed in the stream, so the first request's recorded size
//! includes text the replay never sees (with the system prompt and tool schemas):
//! `ctxbudget reconcile` shows it as the fitted intercept.

use std::io::BufRead;
use std::path::Path;

use super::claude_code::{Entry, Object, Reader};
use super::{Format, Head, read_json_lines_as};
use crate::error::TraceError;
use crate::model::{RecordedTotal, Trace};

/// Claude Code / Agent SDK `stream-json` output.
pub struct ClaudeStream;

const LINE_TYPES: [&str; 4] = ["system", "assistant", "user", "result"];

/// Name of the conversation the top-level agent's lines belong to.
pub const MAIN: &str = "main";

impl Format for ClaudeStream {
    fn name(&self) -> &'static str {
        "claude-stream"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let Some(line) = head.first_json_line else { return false };
        let Some(kind) = head.first_type() else { return false };
        if !LINE_TYPES.contains(&kind) || line.get("session_id").is_none() || line.get("sessionId").is_some()
        {
            return false;
        }
        match kind {
            "system" => line.get("subtype").is_some(),
            "assistant" | "user" => line.get("message").is_some() && line.get("parent_tool_use_id").is_some(),
            _ => line.get("usage").is_some() || line.get("subtype").is_some(),
        }
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut reader = Reader::default();
        let main = reader.conversation(MAIN.into());
        let mut warnings = Vec::new();
        read_json_lines_as(input, path, &mut warnings, |line, entry: Object<Entry>| {
            let (kind, e) = entry.typed(path, line)?;
            let c = match &e.parent_tool_use_id {
                Some(parent) => reader.conversation(format!("task-{parent}")),
                None => main,
            };
            match kind.as_str() {
                "assistant" => reader.assistant_in(c, path, line, e),
                "user" => reader.user_in(c, path, line, e),
                "system" if e.subtype.as_deref() == Some("compact_boundary") => {
                    reader.compaction_in(c);
                    Ok(())
                }
                "system" if e.subtype.as_deref() == Some("microcompact_boundary") => {
                    reader.microcompact_in(c, path, line, &e);
                    Ok(())
                }
                "result" => {
                    if let Some(u) = reader.usage_at(path, line, e.usage.as_ref()) {
                        let calls = reader.requests_in(main) as u64;
                        reader
                            .set_recorded_total(main, RecordedTotal { input_tokens: u.input_tokens, calls });
                    }
                    Ok(())
                }
                _ => Ok(()),
            }
        })?;
        let mut trace = reader.finish_as(self.name());
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
        Ok(trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::claude_code;
    use crate::format::with_head;
    use crate::model::{Item, Output, Request};

    /// (conversation, requests, tool results) of each conversation.
    fn counts(t: &Trace) -> Vec<(String, usize, usize)> {
        t.conversations.iter().map(|c| (c.id.clone(), c.requests(), c.tool_results())).collect()
    }

    fn read(lines: &[&str]) -> Trace {
        let text = lines.join("\n") + "\n";
        ClaudeStream.read(&mut text.as_bytes(), Path::new("agent_log_raw.txt")).unwrap()
    }

    const INIT: &str =
        r#"{"type":"system","subtype":"init","session_id":"s","tools":["Bash"],"model":"claude-sonnet-4-5"}"#;

    fn asst(id: &str, parent: &str, block: &str) -> String {
        format!(
            r#"{{"type":"assistant","parent_tool_use_id":{parent},"session_id":"s","message":{{"id":"{id}","role":"assistant","content":[{block}],"usage":{{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}}}}"#
        )
    }

    fn result(id: &str, parent: &str, text: &str) -> String {
        format!(
            r#"{{"type":"user","parent_tool_use_id":{parent},"session_id":"s","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{text}"}}]}}}}"#
        )
    }

    #[test]
    fn blocks_of_one_message_are_one_request_and_results_follow() {
        let t = read(&[
            INIT,
            &asst("m1", "null", r#"{"type":"text","text":"let me look"}"#),
            &asst("m1", "null", r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}"#),
            &result("t1", "null", "a b"),
            &asst("m2", "null", r#"{"type":"text","text":"done"}"#),
        ]);
        assert_eq!(t.format, "claude-stream");
        assert_eq!(counts(&t), [("main".to_owned(), 2, 1)]);
        let Item::Request(Request { usage: Some(u), .. }) = &t.conversations[0].items[0] else {
            panic!("{:?}", t.conversations[0].items)
        };
        assert_eq!(u.input_tokens, 113);
        let Item::ToolResult(r) = &t.conversations[0].items[3] else { panic!() };
        assert_eq!((r.name.as_deref(), &r.output), (Some("Bash"), &Output::Raw { output: "a b".into() }));
    }

    #[test]
    fn subagent_lines_are_a_conversation_of_their_own() {
        let t = read(&[
            INIT,
            &asst("m1", "null", r#"{"type":"tool_use","id":"task1","name":"Task","input":{}}"#),
            &asst("s1", r#""task1""#, r#"{"type":"tool_use","id":"t2","name":"Read","input":{}}"#),
            &result("t2", r#""task1""#, "file"),
            &asst("s2", r#""task1""#, r#"{"type":"text","text":"found it"}"#),
            &result("task1", "null", "found it"),
        ]);
        assert_eq!(counts(&t), [("main".to_owned(), 1, 1), ("task-task1".to_owned(), 2, 1)]);
    }

    #[test]
    fn the_result_line_is_the_session_total() {
        let total = r#"{"type":"result","subtype":"success","session_id":"s","num_turns":3,"usage":{"input_tokens":6,"cache_creation_input_tokens":20,"cache_read_input_tokens":200,"output_tokens":9}}"#;
        let t = read(&[INIT, &asst("m1", "null", r#"{"type":"text","text":"hi"}"#), total]);
        assert_eq!(t.conversations[0].recorded_total, Some(RecordedTotal { input_tokens: 226, calls: 1 }));
    }

    #[test]
    fn fixture_counts() {
        // Expected numbers: tests/fixtures/claude-stream/EXPECTED.md.
        let text = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/claude-stream/agent_log_raw.txt"
        ));
        with_head(Path::new("agent_log_raw.txt"), text.as_bytes(), true, |h| assert!(ClaudeStream.detect(h)));
        let t = ClaudeStream.read(&mut text.as_bytes(), Path::new("agent_log_raw.txt")).unwrap();
        assert_eq!(counts(&t), [("main".to_owned(), 2, 2), ("task-toolu_2".to_owned(), 2, 1)]);
        let sizes: Vec<Vec<u64>> = t
            .conversations
            .iter()
            .map(|c| {
                c.items
                    .iter()
                    .filter_map(|i| match i {
                        Item::Request(r) => r.usage.map(|u| u.input_tokens),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        assert_eq!(sizes, [vec![1103, 1404], vec![205, 252]]);
        let images: u32 = t.conversations[1]
            .items
            .iter()
            .map(|i| if let Item::ToolResult(r) = i { r.images } else { 0 })
            .sum();
        assert_eq!(images, 1);
        assert_eq!(t.conversations[0].recorded_total, Some(RecordedTotal { input_tokens: 2507, calls: 2 }));
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn unknown_line_types_are_ignored_and_a_typeless_line_is_an_error() {
        let partial = r#"{"type":"stream_event","session_id":"s","event":{"type":"content_block_delta"}}"#;
        let t = read(&[INIT, partial]);
        assert_eq!(counts(&t), [("main".to_owned(), 0, 0)]);
        let text = format!("{INIT}\n{{\"session_id\":\"s\"}}\n");
        let e = ClaudeStream.read(&mut text.as_bytes(), Path::new("x.txt")).unwrap_err();
        assert_eq!(e.to_string(), "x.txt:2: expected an object with a string `type`");
    }

    #[test]
    fn detects_stream_lines_but_not_transcripts_or_native_lines() {
        with_head(Path::new("a.txt"), INIT.as_bytes(), true, |h| assert!(ClaudeStream.detect(h)));
        let first_assistant = asst("m1", "null", r#"{"type":"text","text":"x"}"#);
        with_head(Path::new("a"), first_assistant.as_bytes(), true, |h| assert!(ClaudeStream.detect(h)));
        let transcript = br#"{"type":"user","sessionId":"s","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}"#;
        with_head(Path::new("a"), transcript, true, |h| {
            assert!(!ClaudeStream.detect(h));
            assert!(claude_code::ClaudeCode.detect(h));
        });
        with_head(Path::new("a"), br#"{"type":"system","text":"sys"}"#, true, |h| {
            assert!(!ClaudeStream.detect(h))
        });
        // And the existing formats do not claim stream lines.
        with_head(Path::new("a.txt"), INIT.as_bytes(), true, |h| {
            assert!(!claude_code::ClaudeCode.detect(h));
            assert!(!crate::format::native::Native.detect(h));
        });
    }
}
