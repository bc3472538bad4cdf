//! `cline`: task folders of Cline and its forks Roo Code and Kilo Code
//! (`<VS Code global storage>/<extension id>/tasks/<task id>/`), read as one conversation.
//!
//! A task folder holds `api_conversation_history.json` (the messages sent to the model, Anthropic
//! Messages blocks), `ui_messages.json` (what the panel showed, with each API request's usage)
//! and `task_metadata.json` (files in context, model used). The history alone reads as Anthropic
//! Messages, but wrongly: these agents send tool results as plain **user text blocks**
//! (`[read_file for 'a.rs'] Result:` then the output), so an Anthropic reading finds no tool
//! result at all. Here:
//!
//! - **Tool results.** A user text block whose first line is `[<tool>…] Result:` starts a tool
//!   result; the text and image blocks after it, up to the next such block or harness feedback,
//!   are the rest of it (older versions write the header and the output as two blocks). The
//!   result answers the oldest unanswered `tool_use` of that tool in the assistant message before
//!   it (native tool calling); when there is none (the XML tool calls of older versions, written
//!   inside the assistant text), a call of that name with no arguments is placed before the
//!   result, and the XML stays in the assistant text, so every byte is counted once. A result
//!   whose output starts with `The tool execution failed` is an error. Roo Code's native
//!   `tool_result` blocks are read as Anthropic's.
//! - **Harness feedback is not tool output.** `<environment_details>` blocks, "Tool \[x\] was not
//!   executed …", `[ERROR] …`, `[TASK RESUMPTION] …` and the `# task_progress` reminders are the
//!   agent's own text, sent as user text: they become meta user items ([`is_feedback`]). A call
//!   answered only by "was not executed" keeps no result (the link check says so).
//! - **Requests.** An LLM call produced each assistant message: a boundary sits before it.
//! - **Recorded usage.** `ui_messages.json` beside the history records each request as a
//!   `say: api_req_started` entry whose `text` is JSON with `tokensIn`, `tokensOut`,
//!   `cacheWrites`, `cacheReads`, and whose `conversationHistoryIndex` + 2 is the index of the
//!   assistant message it produced (checked on a real task: 36 of 36). The prompt size is
//!   `tokensIn + cacheWrites + cacheReads`, as Cline sums a request's context; `cost` (USD, as Cline
//!   priced it) is the request's recorded cost and the entry's `modelInfo.modelId` its model. Entries without
//!   an index (versions before it was added) are matched in order when there are as many of them
//!   as assistant messages; otherwise the usage is left unrecorded, with a warning. Without
//!   `ui_messages.json`, the `metrics.tokens{prompt, completion, cached}` newer versions put on
//!   each assistant message are read (`cached` = cache writes + reads).
//!
//! The only file access is [`Cline::read`] reading `ui_messages.json` beside the history; the
//! conversion ([`read_task`]) is pure. The history is read into typed records of the keys used
//! here ([`Message`], [`Block`]), the rest checked as JSON and skipped; assistant blocks follow
//! the rules of [`anthropic_messages`](super::anthropic_messages), and Roo Code's native
//! `tool_result` blocks are read as that importer reads them.

use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::claude_code::Object;
use super::fields::{Shape, present, str_of, take_str};
use super::look_alike::LookAlike;
use super::shared::{parse_document_as, read_text};
use super::wire::{Builder, json_text, kind_of, str_field};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Millis, Request, Trace, Usage};

/// The file of a task folder that holds the messages sent.
pub const HISTORY_FILE: &str = "api_conversation_history.json";
/// The file of a task folder that holds the panel's messages and each request's usage.
pub const UI_FILE: &str = "ui_messages.json";
/// Files of a task folder that are read with the history, or are not sessions: a directory walk
/// passes over them when the history is beside them.
pub const COMPANION_FILES: [&str; 3] = [UI_FILE, "task_metadata.json", "settings.json"];

/// Cline / Roo Code / Kilo Code task histories.
pub struct Cline;

impl Format for Cline {
    fn look_alike(&self) -> Option<LookAlike> {
        Some(LookAlike {
            line: Some(|l| result_header(l).is_some()),
            lines_are: "tool results of Cline, Roo Code and Kilo Code",
            record_keys: &[],
            records_are: "",
            advice: ", or name it api_conversation_history.json in its task folder",
        })
    }

    fn name(&self) -> &'static str {
        "cline"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let named = head.path.file_name().is_some_and(|n| n == HISTORY_FILE);
        match head.document() {
            Some(Value::Array(messages)) => {
                (named && messages.first().is_some_and(|m| m.get("role").is_some()))
                    || messages.first().is_some_and(opens_a_task)
            }
            _ => false,
        }
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let history = read_text(input, path)?;
        let ui_path = path.with_file_name(UI_FILE);
        // The one file access of the format: the usage log beside the history, when there is one.
        let ui = if path.file_name().is_some_and(|n| n == HISTORY_FILE) {
            std::fs::read(&ui_path).ok()
        } else {
            None
        };
        read_task(&history, path, ui.as_deref().map(|bytes| (bytes, ui_path.as_path())))
    }
}

/// Whether a message opens a task as these agents write it: a user message whose blocks hold
/// the `<task>` and the `<environment_details>` the agent appends.
fn opens_a_task(m: &Value) -> bool {
    let Some(blocks) = m.get("content").and_then(Value::as_array) else { return false };
    let starts = |prefix: &str| blocks.iter().any(|b| str_field(b, "text").trim_start().starts_with(prefix));
    str_field(m, "role") == "user" && starts("<task>") && starts("<environment_details>")
}

/// A message of the history, as far as the replay goes.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Message {
    #[serde(deserialize_with = "present")]
    role: Option<Value>,
    content: Shape<Block>,
    /// Newer versions: `metrics.tokens{prompt, completion, cached}`.
    metrics: Object<Metrics>,
}

/// A content block of a message, or of a Roo Code `tool_result`'s content.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Block {
    #[serde(rename = "type", deserialize_with = "present")]
    kind: Option<Value>,
    #[serde(deserialize_with = "present")]
    text: Option<Value>,
    #[serde(deserialize_with = "present")]
    thinking: Option<Value>,
    #[serde(deserialize_with = "present")]
    id: Option<Value>,
    #[serde(deserialize_with = "present")]
    name: Option<Value>,
    /// A call's arguments, whatever their JSON (counted as their compact JSON text).
    #[serde(deserialize_with = "present")]
    input: Option<Value>,
    #[serde(deserialize_with = "present")]
    tool_use_id: Option<Value>,
    content: Shape<Block>,
    #[serde(deserialize_with = "present")]
    is_error: Option<Value>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Metrics {
    tokens: Object<MetricTokens>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct MetricTokens {
    #[serde(deserialize_with = "present")]
    prompt: Option<Value>,
    #[serde(deserialize_with = "present")]
    cached: Option<Value>,
    #[serde(deserialize_with = "present")]
    completion: Option<Value>,
}

/// The history document: a list of messages, or something else named in the error.
type History = Shape<Message>;

/// Reads a task: its history text (read from `path`) and, when found, the bytes of
/// `ui_messages.json` and its path.
pub fn read_task(history: &str, path: &Path, ui: Option<(&[u8], &Path)>) -> Result<Trace, TraceError> {
    let doc: History = parse_document_as(history, path)?;
    let fail = |message: String| TraceError::content(path, message);
    let messages = match doc {
        Shape::List(messages) => messages,
        other => {
            return Err(fail(format!("expected the task's list of messages, found {}", other.kind())));
        }
    };
    let mut warnings = Vec::new();
    let recorded = match ui {
        Some((bytes, ui_path)) => requests_of_ui(bytes, ui_path, &messages, &mut warnings)?,
        None => messages.iter().map(metrics_usage).collect(),
    };
    let mut b = Builder::default();
    let mut pending: Vec<(String, String)> = Vec::new();
    let mut synthetic = 0usize;
    for (i, m) in messages.into_iter().enumerate() {
        let at = || format!("[{i}]");
        match m.role.as_ref().and_then(Value::as_str) {
            Some("assistant") => {
                b.push(Item::Request(recorded.get(i).cloned().flatten().unwrap_or_default()));
                let before = b.items.len();
                assistant(&mut b, m.content, &at).map_err(fail)?;
                pending = b.items[before..]
                    .iter()
                    .filter_map(|item| match item {
                        Item::ToolCall { call_id, name, .. } => Some((call_id.clone(), name.clone())),
                        _ => None,
                    })
                    .collect();
            }
            Some("user") => user(&mut b, m.content, &at, &mut pending, &mut synthetic).map_err(fail)?,
            Some(other) => {
                return Err(fail(format!("{}: unknown role `{other}` (expected user or assistant)", at())));
            }
            None => return Err(fail(format!("{}: a message needs a string `role`", at()))),
        }
    }
    warnings.extend(b.warnings(""));
    let conversation = Conversation { id: "main".into(), items: b.take_items(), recorded_total: None };
    Ok(Trace { format: "cline", conversations: vec![conversation], warnings })
}

/// An assistant message's blocks, as [`anthropic_messages`](super::anthropic_messages) reads them:
/// consecutive text blocks are one assistant text, thinking is thinking, `tool_use` a call.
fn assistant(b: &mut Builder, content: Shape<Block>, at: &dyn Fn() -> String) -> Result<(), String> {
    let list = match content {
        Shape::List(list) => list,
        Shape::Text(text) => {
            b.text(|text| Item::Assistant { text }, text);
            return Ok(());
        }
        Shape::Other(v) => {
            return Err(format!(
                "{}.content: expected a string or a list of blocks, found {}",
                at(),
                kind_of(&v)
            ));
        }
        Shape::Absent => return Err(format!("{}: a message needs `content`", at())),
    };
    let mut text: Vec<&str> = Vec::new();
    for (k, block) in list.iter().enumerate() {
        let kind = str_of(&block.kind);
        if kind != "text" && !text.is_empty() {
            b.push(Item::Assistant { text: text.join("\n") });
            text.clear();
        }
        match kind {
            "text" => text.push(str_of(&block.text)),
            "thinking" => b.text(|text| Item::Thinking { text }, str_of(&block.thinking).to_owned()),
            "tool_use" => {
                let Some(Value::String(id)) = &block.id else {
                    return Err(format!("{}.content[{k}]: a tool_use needs a string `id`", at()));
                };
                let arguments = block.input.as_ref().map(Value::to_string).unwrap_or_default();
                b.call(id.clone(), str_of(&block.name).to_owned(), arguments);
            }
            other => {
                b.note(format!("assistant `{other}` block(s) not replayed (unknown or encrypted block type)"))
            }
        }
    }
    if !text.is_empty() {
        b.push(Item::Assistant { text: text.join("\n") });
    }
    Ok(())
}

/// A tool result being gathered from consecutive user blocks.
struct Open {
    call_id: String,
    name: String,
    texts: Vec<String>,
    images: u32,
}

/// A user message: tool results, harness feedback and what the person wrote.
fn user(
    b: &mut Builder,
    content: Shape<Block>,
    at: &dyn Fn() -> String,
    pending: &mut Vec<(String, String)>,
    synthetic: &mut usize,
) -> Result<(), String> {
    let blocks = match content {
        Shape::List(blocks) => blocks,
        Shape::Text(text) => {
            let meta = is_feedback(&text);
            b.push(Item::User { text, meta, images: 0 });
            return Ok(());
        }
        Shape::Other(v) => {
            return Err(format!("{}.content: expected a string or blocks, found {}", at(), kind_of(&v)));
        }
        Shape::Absent => return Err(format!("{}: a message needs `content`", at())),
    };
    let mut open: Option<Open> = None;
    for (k, mut block) in blocks.into_iter().enumerate() {
        match str_of(&block.kind) {
            "text" => {
                let text = take_str(&mut block.text);
                if let Some(name) = result_header(&text).map(str::to_owned) {
                    close(b, open.take());
                    let call_id = answered_call(b, &name, pending, synthetic);
                    open = Some(Open { call_id, name, texts: vec![text], images: 0 });
                } else if is_feedback(&text) {
                    close(b, open.take());
                    b.push(Item::User { text, meta: true, images: 0 });
                } else if let Some(o) = open.as_mut() {
                    o.texts.push(text);
                } else {
                    b.push(Item::User { text, meta: false, images: 0 });
                }
            }
            "image" | "document" => match open.as_mut() {
                Some(o) => o.images += 1,
                None => b.push(Item::User { text: String::new(), meta: false, images: 1 }),
            },
            "tool_result" => {
                close(b, open.take());
                let Some(Value::String(id)) = &block.tool_use_id else {
                    return Err(format!(
                        "{}.content[{k}].content[0]: a tool_result needs a string `tool_use_id`",
                        at()
                    ));
                };
                pending.retain(|(call, _)| call != id);
                let id = id.clone();
                let is_error = block.is_error.as_ref().and_then(Value::as_bool).unwrap_or(false);
                let (output, images) = result_content(b, block.content);
                b.result_with_images(id, None, output, is_error, images);
            }
            other => b.note(format!("user `{other}` block(s) not replayed (unknown block type)")),
        }
    }
    close(b, open);
    Ok(())
}

/// A `tool_result`'s text (a string, or its `text` blocks joined with `\n`; any other JSON as
/// its text) and its image count, as [`anthropic_messages`](super::anthropic_messages) reads it.
fn result_content(b: &mut Builder, content: Shape<Block>) -> (String, u32) {
    match content {
        Shape::List(list) => {
            let mut texts = Vec::new();
            let mut images = 0;
            for block in &list {
                match str_of(&block.kind) {
                    "text" => texts.push(str_of(&block.text)),
                    "image" | "document" => images += 1,
                    other => {
                        b.note(format!("tool_result `{other}` block(s) not replayed (unknown block type)"))
                    }
                }
            }
            (texts.join("\n"), images)
        }
        Shape::Text(text) => (text, 0),
        Shape::Other(v) => (json_text(&v), 0),
        Shape::Absent => (String::new(), 0),
    }
}

/// Appends a gathered result.
fn close(b: &mut Builder, open: Option<Open>) {
    let Some(o) = open else { return };
    let output = o.texts.join("\n");
    let body = output.split_once('\n').map_or("", |(_, rest)| rest);
    let is_error = body.trim_start().starts_with("The tool execution failed");
    b.result_with_images(o.call_id, Some(o.name), output, is_error, o.images);
}

/// The call a result of `name` answers: the oldest unanswered call of that name in the message
/// before, else a new call placed before the result (the agent wrote the call as XML in its text).
fn answered_call(
    b: &mut Builder,
    name: &str,
    pending: &mut Vec<(String, String)>,
    synthetic: &mut usize,
) -> String {
    if let Some(k) = pending.iter().position(|(_, n)| n == name) {
        return pending.remove(k).0;
    }
    *synthetic += 1;
    let id = format!("cline-{synthetic}");
    b.call(id.clone(), name.to_owned(), String::new());
    id
}

/// The tool name of a result header: a first line `[<tool>…] Result:`.
pub fn result_header(text: &str) -> Option<&str> {
    let first = text.lines().next()?;
    let rest = first.strip_prefix('[')?;
    if !first.trim_end().ends_with("] Result:") {
        return None;
    }
    let end = rest.find([' ', ']']).unwrap_or(rest.len());
    let name = &rest[..end];
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '.');
    (!name.is_empty() && name.chars().all(valid)).then_some(name)
}

/// Whether a user text is the agent's own feedback rather than a person's words or tool output.
pub fn is_feedback(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<environment_details>")
        || (t.starts_with("Tool [") && t.lines().next().is_some_and(|l| l.contains("] was not executed")))
        || t.starts_with("[ERROR]")
        || t.starts_with("[TASK RESUMPTION]")
        || t.starts_with("# task_progress")
}

/// One `ui_messages.json` entry, as far as usage goes; its strings borrow from the file's text
/// when they hold no escape (most of the panel's texts are never used).
#[derive(Deserialize)]
struct UiMessage<'a> {
    #[serde(default)]
    ts: Option<Millis>,
    #[serde(default, borrow)]
    say: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, rename = "conversationHistoryIndex")]
    history_index: Option<i64>,
    /// The model of the request (newer versions: `modelInfo.modelId`).
    #[serde(default, rename = "modelInfo")]
    model_info: Option<Value>,
}

/// The usage fields of an `api_req_started` entry's `text`.
#[derive(Deserialize)]
struct ApiRequest {
    #[serde(default, rename = "tokensIn")]
    tokens_in: Option<u64>,
    #[serde(default, rename = "tokensOut")]
    tokens_out: Option<u64>,
    #[serde(default, rename = "cacheWrites")]
    cache_writes: Option<u64>,
    #[serde(default, rename = "cacheReads")]
    cache_reads: Option<u64>,
    /// What the request cost in USD, as Cline priced it.
    #[serde(default)]
    cost: Option<f64>,
}

/// The request of each history message (by index) that `ui_messages.json` records.
fn requests_of_ui(
    bytes: &[u8],
    path: &Path,
    messages: &[Message],
    warnings: &mut Vec<String>,
) -> Result<Vec<Option<Request>>, TraceError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    let ui: Vec<UiMessage<'_>> = parse_document_as(&text, path)?;
    let mut out: Vec<Option<Request>> = vec![None; messages.len()];
    let mut in_order = Vec::new();
    for m in ui.iter().filter(|m| m.say.as_deref() == Some("api_req_started")) {
        let model = m.model_info.as_ref().and_then(|i| i.get("modelId")).and_then(Value::as_str);
        let request = Request {
            id: None,
            timestamp: m.ts,
            usage: ui_usage(m.text.as_deref()),
            model: model.map(str::to_owned),
        };
        match m.history_index {
            // A retried request is recorded again with the same index: the last one counts.
            Some(index) => {
                if let Some(slot) = usize::try_from(index + 2).ok().and_then(|i| out.get_mut(i)) {
                    *slot = Some(request);
                }
            }
            None => in_order.push(request),
        }
    }
    if in_order.is_empty() {
        return Ok(out);
    }
    let assistants: Vec<usize> =
        (0..messages.len()).filter(|&i| str_of(&messages[i].role) == "assistant").collect();
    if in_order.len() == assistants.len() {
        for (i, request) in assistants.into_iter().zip(in_order) {
            out[i] = Some(request);
        }
    } else {
        warnings.push(format!(
            "{}: {} API request(s) without a history index for {} assistant message(s): their usage cannot \
             be matched and is left unrecorded",
            path.display(),
            in_order.len(),
            assistants.len()
        ));
    }
    Ok(out)
}

/// The usage an `api_req_started` entry's text records, when it records `tokensIn`.
fn ui_usage(text: Option<&str>) -> Option<Usage> {
    let a: ApiRequest = serde_json::from_str(text?).ok()?;
    Some(Usage {
        input_tokens: a.tokens_in? + a.cache_writes.unwrap_or(0) + a.cache_reads.unwrap_or(0),
        cache_read_tokens: a.cache_reads,
        cache_write_tokens: a.cache_writes,
        output_tokens: a.tokens_out,
        cost_micro_usd: a.cost.and_then(Usage::micro_usd),
    })
}

/// Usage newer versions write on an assistant message: `metrics.tokens{prompt, completion,
/// cached}`.
fn metrics_usage(m: &Message) -> Option<Request> {
    let tokens = m.metrics.0.as_ref()?.tokens.0.as_ref()?;
    let prompt = tokens.prompt.as_ref()?.as_u64()?;
    let cached = tokens.cached.as_ref().and_then(Value::as_u64);
    let usage = Usage {
        input_tokens: prompt + cached.unwrap_or(0),
        cache_read_tokens: None,
        cache_write_tokens: None,
        output_tokens: tokens.completion.as_ref().and_then(Value::as_u64),
        cost_micro_usd: None,
    };
    Some(Request { id: None, timestamp: None, usage: Some(usage), model: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shared::testing::kinds;
    use crate::format::with_head;
    use crate::model::{Output, ToolResult};

    fn read(history: &str, ui: Option<&str>) -> Trace {
        read_task(
            history,
            Path::new("t/api_conversation_history.json"),
            ui.map(|u| (u.as_bytes(), Path::new("t/ui_messages.json"))),
        )
        .unwrap()
    }

    const XML: &str = r#"[
      {"role": "user", "content": [{"type": "text", "text": "<task>\nlist\n</task>"}, {"type": "text", "text": "<environment_details>\nx\n</environment_details>"}]},
      {"role": "assistant", "content": [{"type": "text", "text": "<list_files>\n<path>.</path>\n</list_files>"}]},
      {"role": "user", "content": [{"type": "text", "text": "[list_files for '.'] Result:"}, {"type": "text", "text": "a.rs"}, {"type": "text", "text": "[ERROR] You did not use a tool."}]},
      {"role": "assistant", "content": "done"}
    ]"#;

    #[test]
    fn xml_calls_get_a_call_before_their_result_and_feedback_stays_user_text() {
        let t = read(XML, None);
        let c = &t.conversations[0];
        assert_eq!(
            kinds(&c.items),
            ["user", "user", "request", "assistant", "call", "result", "user", "request", "assistant"]
        );
        let Item::ToolResult(ToolResult { call_id, name, output, .. }) = &c.items[5] else { panic!() };
        assert_eq!((call_id.as_str(), name.as_deref()), ("cline-1", Some("list_files")));
        assert_eq!(output, &Output::Raw { output: "[list_files for '.'] Result:\na.rs".into() });
        assert!(matches!(&c.items[6], Item::User { meta: true, .. }), "[ERROR] is the harness's");
        assert!(matches!(&c.items[1], Item::User { meta: true, .. }), "environment details");
        assert!(matches!(&c.items[0], Item::User { meta: false, .. }), "the task");
    }

    #[test]
    fn usage_without_a_history_index_is_matched_in_order_only_when_the_counts_agree() {
        let entry = |n: u64| {
            format!(
                r#"{{"ts": 1, "type": "say", "say": "api_req_started", "text": "{{\"tokensIn\": {n}, \"cacheReads\": 1}}"}}"#
            )
        };
        let ui = format!("[{}, {}]", entry(10), entry(20));
        let sizes = |t: &Trace| -> Vec<Option<u64>> {
            t.conversations[0]
                .items
                .iter()
                .filter_map(|i| {
                    if let Item::Request(r) = i { Some(r.usage.map(|u| u.input_tokens)) } else { None }
                })
                .collect()
        };
        let t = read(XML, Some(&ui));
        assert_eq!(sizes(&t), [Some(11), Some(21)]);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
        let t = read(XML, Some(&format!("[{}]", entry(10))));
        assert_eq!(sizes(&t), [None, None]);
        assert_eq!(
            t.warnings,
            [
                "t/ui_messages.json: 1 API request(s) without a history index for 2 assistant message(s): their usage \
              cannot be matched and is left unrecorded"
            ]
        );
    }

    #[test]
    fn result_headers_and_feedback_are_told_apart() {
        assert_eq!(result_header("[read_file for 'a b].rs'] Result:\nx"), Some("read_file"));
        assert_eq!(result_header("[attempt_completion] Result:"), Some("attempt_completion"));
        assert_eq!(
            result_header("[read_file for 'a.ts'. Reading several files at once is faster.] Result:"),
            Some("read_file")
        );
        assert_eq!(result_header("[ERROR] You did not use a tool"), None);
        assert_eq!(result_header("see [x] Result: here"), None);
        assert_eq!(result_header("[a b] Result:"), Some("a"));
        assert_eq!(result_header("[] Result:"), None);
        assert!(is_feedback("Tool [write_to_file] was not executed because a tool has already been used"));
        assert!(is_feedback("\n<environment_details>\n</environment_details>"));
        assert!(!is_feedback("<task>\nfix\n</task>"));
    }

    #[test]
    fn errors_name_the_message() {
        let e = read_task(r#"[{"role": "tool", "content": "x"}]"#, Path::new("h.json"), None).unwrap_err();
        assert_eq!(e.to_string(), "h.json: [0]: unknown role `tool` (expected user or assistant)");
        let e = read_task(r#"{"role": "user"}"#, Path::new("h.json"), None).unwrap_err();
        assert_eq!(e.to_string(), "h.json: expected the task's list of messages, found an object");
        let bad_ui = Some((&b"{"[..], Path::new("ui_messages.json")));
        assert!(
            read_task("[]", Path::new("h.json"), bad_ui)
                .unwrap_err()
                .to_string()
                .starts_with("ui_messages.json:1:")
        );
    }

    #[test]
    fn detects_task_histories_by_name_or_by_their_first_message() {
        let detects =
            |name: &str, text: &str| with_head(Path::new(name), text.as_bytes(), true, |h| Cline.detect(h));
        assert!(detects("x.json", XML));
        assert!(detects(HISTORY_FILE, r#"[{"role": "user", "content": "hi"}]"#));
        assert!(!detects("x.json", r#"[{"role": "user", "content": "hi"}]"#));
        assert!(!detects("x.json", r#"[{"role": "user", "content": [{"type": "text", "text": "<task>"}]}]"#));
        for (what, text) in crate::format::shared::testing::FOREIGN {
            assert!(!detects("x.json", text), "{what}");
        }
    }
}
