//! `gemini-cli`: Gemini CLI chat recordings
//! (`~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json`, one JSON document; from Gemini
//! CLI 0.39 on `session-<time>-<id>.jsonl`, a journal of records folded into the same message list
//! by [`journal`]).
//!
//! Schema facts (`FORMATS.md` §11 of the shared corpus; Gemini CLI
//! `packages/core/src/services/chatRecordingService.ts` and `core/geminiChat.ts`):
//! `{sessionId, projectHash, startTime, lastUpdated, messages[]}`; a message is
//! `{id, timestamp, type, content, …}` with `type` `user`, `gemini`, or UI-only `info`, `error`,
//! `warning` (skipped). A `gemini` message may carry `thoughts`, `tokens` and `toolCalls[]`, each
//! call with its result inline: `result[].functionResponse{id, name, response{output | error}}`.
//!
//! - **A `gemini` message is (at least) one request**, placed before it: its text, then its
//!   calls (`toolCalls[].args` as JSON), then their results (linked by id), which the next
//!   request sends.
//! - **One recorded message can hold several requests.** The recorder appends the tool calls of
//!   a response that has no text and no thought summary to the previous `gemini` message
//!   (`recordToolCalls`), so a message may hold calls of several consecutive model calls. Each
//!   batch of calls is recorded when it completes, all with one `timestamp`: consecutive calls
//!   with the same `timestamp` are one response, and each batch after the first is a request of
//!   its own (placed after the previous batch's results).
//! - **Usage**: `tokens.input` (`promptTokenCount`; `cached` is a subset) is the first request
//!   of the message. The recorder keeps only that one: the usage of the appended calls is queued
//!   and overwritten, so their requests have no recorded size. Output tokens = `output` +
//!   `thoughts`.
//! - Thought summaries (`thoughts`) are not sent back to the model (`geminiChat.ts` drops thought
//!   parts from the history), so they are not replayed; adding `tokens.thoughts` as hidden
//!   reasoning makes the calibrated error worse on the recordings measured
//!   (docs/unseen-context.md, "Gemini's thoughts").
//! - A result's text is `response.output` (or `response.error`, marked as an error; a call with
//!   status `error` or `cancelled` is an error too); any other response object is sent as JSON.
//!   Other parts of `result` (inline data) are counted as images.
//! - **Timestamps**: a request's time is the time in its first call's id
//!   (`<tool>-<Unix ms>-<hex>`, made when the response arrived), else the message `timestamp`
//!   (first batch; for a message of calls only, that is when the calls finished) or the batch's.
//! - Not recorded: the system prompt, tool schemas and environment context (the gap a
//!   reconciliation fit absorbs). Gemini CLI's chat compression, if it ran, leaves no marker the
//!   importer knows of: the replay keeps the whole history.

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::shared::{content_text, json_text, parse_document, read_text, str_at};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Millis, Output, Request, ToolResult, Trace, Usage};
use crate::time::parse_rfc3339;

mod journal;

/// Gemini CLI chat recordings.
pub struct GeminiCli;

impl Format for GeminiCli {
    fn name(&self) -> &'static str {
        "gemini-cli"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let o = head.outline();
        o.is_object()
            && o.has(".sessionId")
            && o.has(".projectHash")
            && (o.has(".messages[].type") || !o.has(".messages"))
            && !o.has(".messages[].role")
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let text = read_text(input, path)?;
        let mut warnings = Vec::new();
        let messages = if is_journal(&text) {
            journal::messages(&text, path, &mut warnings)?
        } else {
            document_messages(&text, path)?
        };
        let mut c = Conversation::new("main");
        let mut bad_usage = super::shared::BadUsage::default();
        for (at, m) in &messages {
            let kind = m
                .get("type")
                .and_then(Value::as_str)
                .ok_or_else(|| at.error(path, "expected a message with a string `type`"))?;
            match kind {
                "user" => {
                    let (text, images) = content_text(m.get("content"));
                    c.items.push(Item::User { text, meta: false, images });
                }
                "gemini" => {
                    let tokens = m.get("tokens").filter(|t| t.is_object());
                    match tokens.and_then(|t| super::shared::first_bad_count(t, &|_| true)) {
                        Some(why) => {
                            bad_usage.note(at.place(path, "tokens"), why);
                            gemini(&mut c, m, false)
                        }
                        None => gemini(&mut c, m, true),
                    }
                }
                _ => {} // info, error, warning: shown in the UI, not sent
            }
        }
        warnings.extend(bad_usage.warning());
        Ok(Trace { format: "gemini-cli", conversations: vec![c], warnings })
    }
}

/// Where a message was read: its index in a document's `messages`, or its line in a journal.
#[derive(Clone, Copy, Debug, PartialEq)]
enum At {
    Index(usize),
    Line(usize),
}

impl At {
    fn error(self, path: &Path, message: &str) -> TraceError {
        match self {
            At::Index(i) => TraceError::content(path, format!("messages[{i}]: {message}")),
            At::Line(n) => TraceError::line(path, n, message),
        }
    }

    fn place(self, path: &Path, field: &str) -> String {
        match self {
            At::Index(i) => format!("{}: messages[{i}].{field}", path.display()),
            At::Line(n) => format!("{}:{n}: {field}", path.display()),
        }
    }
}

/// A recording of Gemini CLI 0.39 and later is a journal (`.jsonl`): its first line is a whole
/// JSON value of its own with more lines after it. A document's first line is `{`, or the
/// document is one line.
fn is_journal(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first_is_whole =
        lines.next().is_some_and(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v.is_object()));
    first_is_whole && lines.next().is_some()
}

/// The `messages` of a recording that is one JSON document.
fn document_messages(text: &str, path: &Path) -> Result<Vec<(At, Value)>, TraceError> {
    let mut doc = parse_document(text, path)?;
    match doc.get_mut("messages").map(Value::take) {
        Some(Value::Array(messages)) => {
            Ok(messages.into_iter().enumerate().map(|(i, m)| (At::Index(i), m)).collect())
        }
        _ => Err(TraceError::content(
            path,
            "no `messages` array: a Gemini CLI recording is {sessionId, projectHash, messages}",
        )),
    }
}

/// Adds a model message; `with_usage` false reads its recorded usage as unrecorded.
fn gemini(c: &mut Conversation, m: &Value, with_usage: bool) {
    let message_time = m.get("timestamp").and_then(Value::as_str).and_then(parse_rfc3339);
    let usage = m.get("tokens").filter(|t| with_usage && t.is_object()).and_then(|t| {
        let n = |k: &str| t.get(k).and_then(Value::as_u64);
        Some(Usage {
            input_tokens: n("input")?,
            cache_read_tokens: n("cached"),
            cache_write_tokens: None,
            output_tokens: n("output").map(|o| o.saturating_add(n("thoughts").unwrap_or(0))),
            cost_micro_usd: None,
        })
    });
    let calls: &[Value] = m.get("toolCalls").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let batches = batches(calls);
    let first_time = batches.first().and_then(|b| id_time(&b[0])).or(message_time);
    let model = m.get("model").and_then(Value::as_str).map(str::to_owned);
    c.items.push(Item::Request(Request { id: None, timestamp: first_time, usage, model: model.clone() }));
    let (text, _) = content_text(m.get("content"));
    if !text.is_empty() {
        c.items.push(Item::Assistant { text });
    }
    for (n, batch) in batches.iter().enumerate() {
        if n > 0 {
            let batch_time = batch[0].get("timestamp").and_then(Value::as_str).and_then(parse_rfc3339);
            c.items.push(Item::Request(Request {
                id: None,
                timestamp: id_time(&batch[0]).or(batch_time),
                usage: None,
                model: model.clone(),
            }));
        }
        for call in *batch {
            c.items.push(Item::ToolCall {
                call_id: str_at(call, "id"),
                name: str_at(call, "name"),
                arguments: json_text(call.get("args")).unwrap_or_default(),
            });
        }
        for call in *batch {
            c.items.push(Item::ToolResult(result(call)));
        }
    }
}

/// Runs of consecutive calls recorded with the same `timestamp`.
fn batches(calls: &[Value]) -> Vec<&[Value]> {
    let time = |v: &Value| v.get("timestamp").and_then(Value::as_str).map(str::to_owned);
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=calls.len() {
        if i == calls.len() || time(&calls[i]) != time(&calls[start]) {
            out.push(&calls[start..i]);
            start = i;
        }
    }
    out
}

/// The Unix milliseconds inside a call id `<tool>-<13 digits>-<hex>`.
fn id_time(call: &Value) -> Option<Millis> {
    let id = call.get("id").and_then(Value::as_str)?;
    id.split('-').rev().skip(1).find(|p| p.len() == 13 && p.bytes().all(|b| b.is_ascii_digit()))?.parse().ok()
}

fn result(call: &Value) -> ToolResult {
    let call_id = str_at(call, "id");
    let status = call.get("status").and_then(Value::as_str).unwrap_or("");
    let mut texts = Vec::new();
    let mut images = 0;
    let mut is_error = matches!(status, "error" | "cancelled");
    for part in call.get("result").and_then(Value::as_array).into_iter().flatten() {
        if let Some(response) = part.get("functionResponse").and_then(|f| f.get("response")) {
            if let Some(out) = response.get("output").and_then(Value::as_str) {
                texts.push(out.to_owned());
            } else if let Some(err) = response.get("error").and_then(Value::as_str) {
                texts.push(err.to_owned());
                is_error = true;
            } else {
                texts.push(response.to_string());
            }
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            texts.push(text.to_owned());
        } else {
            images += 1;
        }
    }
    ToolResult {
        call_id,
        name: Some(str_at(call, "name")).filter(|n| !n.is_empty()),
        output: Output::Raw { output: texts.join("\n") },
        is_error,
        images,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shared::testing::{FOREIGN, kinds};
    use crate::format::with_head;

    fn call(name: &str, ms: u64, recorded: &str, response: &str) -> String {
        format!(
            r#"{{"id": "{name}-{ms}-ab12", "name": "{name}", "args": {{"path": "a"}}, "status": "success", "timestamp": "{recorded}",
               "result": [{{"functionResponse": {{"id": "{name}-{ms}-ab12", "name": "{name}", "response": {response}}}}}], "displayName": "X"}}"#
        )
    }

    fn session() -> String {
        let merged = [
            call("read_file", 1_764_625_691_235, "2025-12-01T21:48:11.367Z", r#"{"output": "one"}"#),
            call("write_file", 1_764_625_701_890, "2025-12-01T21:49:35.822Z", r#"{"output": "two"}"#),
            call("read_file", 1_764_625_701_990, "2025-12-01T21:49:35.822Z", r#"{"error": "no such file"}"#),
        ]
        .join(",");
        format!(
            r#"{{"sessionId": "5b95", "projectHash": "fb8e", "startTime": "2025-12-01T21:45:34.362Z", "lastUpdated": "2025-12-01T21:50:10.837Z",
  "messages": [
    {{"id": "u1", "timestamp": "2025-12-01T21:48:06.052Z", "type": "user", "content": "copy it"}},
    {{"id": "g1", "timestamp": "2025-12-01T21:48:11.367Z", "type": "gemini", "content": "", "thoughts": [{{"subject": "s", "description": "d"}}],
      "tokens": {{"input": 11826, "output": 37, "cached": 0, "thoughts": 175, "tool": 0, "total": 12038}}, "model": "gemini-2.5-pro", "toolCalls": [{merged}]}},
    {{"id": "i1", "timestamp": "2025-12-01T21:49:00.000Z", "type": "info", "content": "Request cancelled."}},
    {{"id": "g2", "timestamp": "2025-12-01T21:50:10.837Z", "type": "gemini", "content": "Done.",
      "tokens": {{"input": 18325, "output": 63, "cached": 17305, "thoughts": 0, "tool": 0, "total": 18388}}}}
  ]}}"#
        )
    }

    fn read(text: &str) -> Trace {
        GeminiCli.read(&mut text.as_bytes(), Path::new("session.json")).unwrap()
    }

    #[test]
    fn calls_appended_to_one_message_are_split_into_requests_by_batch() {
        let t = read(&session());
        let c = &t.conversations[0];
        let order = "user request call result request call call result result request assistant";
        assert_eq!(kinds(&c.items), order.split(' ').collect::<Vec<_>>());
        let requests: Vec<&Request> =
            c.items.iter().filter_map(|i| if let Item::Request(r) = i { Some(r) } else { None }).collect();
        assert_eq!(requests[0].usage.map(|u| (u.input_tokens, u.output_tokens)), Some((11826, Some(212))));
        assert_eq!(requests[0].timestamp, Some(1_764_625_691_235), "the first call's id time");
        assert_eq!(requests[1].usage, None, "the recorder overwrote the appended calls' usage");
        assert_eq!(requests[1].timestamp, Some(1_764_625_701_890));
        assert_eq!(
            requests[2].usage.map(|u| (u.input_tokens, u.cache_read_tokens)),
            Some((18325, Some(17305)))
        );
        assert_eq!(requests[2].timestamp, parse_rfc3339("2025-12-01T21:50:10.837Z"));
        let Item::ToolResult(r) = &c.items[8] else { panic!() };
        assert_eq!(
            (r.call_id.as_str(), r.name.as_deref()),
            ("read_file-1764625701990-ab12", Some("read_file"))
        );
        assert_eq!((r.output.full_text().as_ref(), r.is_error), ("no such file", true));
        let Item::ToolCall { arguments, .. } = &c.items[2] else { panic!() };
        assert_eq!(arguments, r#"{"path":"a"}"#);
    }

    #[test]
    fn a_message_without_type_is_an_error_naming_it() {
        let e = GeminiCli
            .read(
                &mut r#"{"sessionId": "s", "projectHash": "p", "messages": [{"content": "x"}]}"#.as_bytes(),
                Path::new("s.json"),
            )
            .unwrap_err();
        assert_eq!(e.to_string(), "s.json: messages[0]: expected a message with a string `type`");
    }

    #[test]
    fn detects_recordings_only() {
        with_head(Path::new("x"), session().as_bytes(), true, |h| assert!(GeminiCli.detect(h)));
        for (what, text) in FOREIGN {
            with_head(Path::new("x"), text.as_bytes(), true, |h| assert!(!GeminiCli.detect(h), "{what}"));
        }
    }

    /// A journal (`.jsonl`) as Gemini CLI 0.39+ writes it: the header, an `info` line, `$set`
    /// lines, and model message `g1` written twice (the second copy once its calls finished).
    fn journal(tail: &str) -> String {
        let call = call("read_file", 1_776_948_791_357, "2026-04-23T12:53:11.357Z", r#"{"output": "one"}"#)
            .replace('\n', " ");
        let tokens = r#""tokens": {"input": 13906, "output": 20, "cached": 0, "thoughts": 306, "tool": 0, "total": 14232}"#;
        [
            r#"{"sessionId": "0ab8", "projectHash": "9da8", "startTime": "2026-04-23T12:52:52.759Z", "kind": "main"}"#.to_owned(),
            r#"{"id": "i1", "timestamp": "2026-04-23T12:53:02.597Z", "type": "info", "content": "created"}"#.to_owned(),
            r#"{"$set": {"lastUpdated": "2026-04-23T12:53:02.597Z"}}"#.to_owned(),
            r#"{"id": "u1", "timestamp": "2026-04-23T12:53:05.283Z", "type": "user", "content": [{"text": "look"}]}"#.to_owned(),
            format!(r#"{{"id": "g1", "timestamp": "2026-04-23T12:53:11.300Z", "type": "gemini", "content": "", {tokens}}}"#),
            r#"{"$set": {"lastUpdated": "2026-04-23T12:53:11.300Z"}}"#.to_owned(),
            format!(r#"{{"id": "g1", "timestamp": "2026-04-23T12:53:11.300Z", "type": "gemini", "content": "", {tokens}, "toolCalls": [{call}]}}"#),
            r#"{"id": "g2", "timestamp": "2026-04-23T12:53:18.000Z", "type": "gemini", "content": "Read.", "tokens": {"input": 29082, "output": 5}}"#.to_owned(),
            tail.to_owned(),
        ]
        .join("\n")
    }

    fn read_journal(text: &str) -> Result<Trace, TraceError> {
        GeminiCli.read(&mut text.as_bytes(), Path::new("s.jsonl"))
    }

    fn inputs(t: &Trace) -> Vec<u64> {
        let c = &t.conversations[0];
        c.items
            .iter()
            .filter_map(|i| if let Item::Request(r) = i { r.usage.map(|u| u.input_tokens) } else { None })
            .collect()
    }

    #[test]
    fn a_journal_keeps_the_last_copy_of_each_message_in_its_place() {
        let text = journal("");
        with_head(Path::new("s.jsonl"), text.as_bytes(), true, |h| assert!(GeminiCli.detect(h)));
        let t = read_journal(&text).unwrap();
        let order = "user request call result request assistant";
        assert_eq!(kinds(&t.conversations[0].items), order.split(' ').collect::<Vec<_>>());
        assert_eq!(inputs(&t), [13906, 29082]);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn a_rewind_drops_the_message_and_every_one_after_it() {
        let tail = [
            r#"{"id": "u2", "timestamp": "2026-04-23T12:54:00.000Z", "type": "user", "content": "again"}"#,
            r#"{"id": "g3", "timestamp": "2026-04-23T12:54:05.000Z", "type": "gemini", "content": "No.", "tokens": {"input": 30000, "output": 2}}"#,
            r#"{"$rewindTo": "g2"}"#,
            r#"{"id": "g4", "timestamp": "2026-04-23T12:55:05.000Z", "type": "gemini", "content": "Yes.", "tokens": {"input": 29100, "output": 2}}"#,
        ]
        .join("\n");
        let t = read_journal(&journal(&tail)).unwrap();
        assert_eq!(inputs(&t), [13906, 29100], "g2, u2 and g3 were rewound");
        assert_eq!(t.warnings.len(), 1);
        assert!(t.warnings[0].contains("3 message(s) removed by a rewind"), "{}", t.warnings[0]);
        let t = read_journal(&journal(r#"{"$rewindTo": "unknown"}"#)).unwrap();
        assert!(t.conversations[0].items.is_empty(), "an unknown id rewinds every message");
    }

    #[test]
    fn a_checkpoint_replaces_every_message() {
        let tail = r#"{"$set": {"messages": [{"id": "u9", "type": "user", "content": "short"}, {"id": "g9", "type": "gemini", "content": "ok", "tokens": {"input": 700, "output": 1}}]}}"#;
        let t = read_journal(&journal(tail)).unwrap();
        assert_eq!(kinds(&t.conversations[0].items), ["user", "request", "assistant"]);
        assert_eq!(inputs(&t), [700]);
    }

    #[test]
    fn a_journal_line_without_type_is_an_error_naming_the_line() {
        let e = read_journal(&journal(r#"{"id": "x", "content": "?"}"#)).unwrap_err();
        assert_eq!(e.to_string(), "s.jsonl:9: expected a message with a string `type`");
        let e = read_journal(&journal("{\"id\": \"x\"} trailing\n")).unwrap_err();
        assert!(e.to_string().starts_with("s.jsonl:9:"), "{e}");
    }

    #[test]
    fn a_journal_cut_off_mid_write_keeps_what_was_written() {
        let t = read_journal(&journal(r#"{"id": "g3", "type": "gem"#)).unwrap();
        assert_eq!(inputs(&t), [13906, 29082]);
        assert_eq!(t.warnings.len(), 1, "{:?}", t.warnings);
    }

    #[test]
    fn a_one_line_document_is_not_a_journal() {
        let one_line: String = session().lines().map(str::trim).collect::<Vec<_>>().join(" ");
        assert_eq!(inputs(&read(&one_line)), [11826, 18325]);
    }
}
