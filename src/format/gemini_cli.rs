//! `gemini-cli`: Gemini CLI chat recordings
//! (`~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json`, one JSON document).
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
//!   parts from the history), so they are not replayed.
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

use super::shared::{content_text, json_text, read_document, str_at};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Millis, Output, Request, ToolResult, Trace, Usage};
use crate::time::parse_rfc3339;

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
        let doc = read_document(input, path)?;
        let messages = doc.get("messages").and_then(Value::as_array).ok_or_else(|| {
            TraceError::content(
                path,
                "no `messages` array: a Gemini CLI recording is {sessionId, projectHash, messages}",
            )
        })?;
        let mut c = Conversation::new("main");
        let mut bad_usage = super::shared::BadUsage::default();
        for (i, m) in messages.iter().enumerate() {
            let kind = m.get("type").and_then(Value::as_str).ok_or_else(|| {
                TraceError::content(path, format!("messages[{i}]: expected a message with a string `type`"))
            })?;
            match kind {
                "user" => {
                    let (text, images) = content_text(m.get("content"));
                    c.items.push(Item::User { text, meta: false, images });
                }
                "gemini" => {
                    let tokens = m.get("tokens").filter(|t| t.is_object());
                    match tokens.and_then(|t| super::shared::first_bad_count(t, &|_| true)) {
                        Some(why) => {
                            bad_usage.note(format!("{}: messages[{i}].tokens", path.display()), why);
                            gemini(&mut c, m, false)
                        }
                        None => gemini(&mut c, m, true),
                    }
                }
                _ => {} // info, error, warning: shown in the UI, not sent
            }
        }
        Ok(Trace {
            format: "gemini-cli",
            conversations: vec![c],
            warnings: bad_usage.warning().into_iter().collect(),
        })
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
}
