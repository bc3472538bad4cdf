//! `opencode`: OpenCode's session storage, the JSON-file layout of its data directory
//! (`storage/session/<project>/<session>.json`, `storage/message/<session>/<message>.json`,
//! `storage/part/<message>/<part>.json`; schema: `packages/opencode/src/session/message-v2.ts` in
//! sst/opencode, now anomalyco/opencode, at 007a9409bafea06d6b9084ff1f6d1fe9f5e3a803). A session
//! file is the entry point: one session is one conversation, named by its id.
//!
//! - **Order.** Messages in id order, parts in id order (OpenCode's ids are ascending in time,
//!   and it sorts by them).
//! - **Requests.** An assistant message holds one model call per `step-start` part; the call's
//!   recorded prompt size is its `step-finish` part's `tokens.input + tokens.cache.read +
//!   tokens.cache.write` (OpenCode stores `input` without the cached tokens for every provider).
//!   An assistant message without step parts (older versions) is one call, sized by the message's
//!   own `tokens`.
//! - **Items.** User `text` parts are user text (`synthetic` ones, such as the contents OpenCode
//!   reads for an attached file, are injected text: meta); image `file` parts count as images;
//!   assistant `text` is assistant text, `reasoning` thinking; a `tool` part is a call (its
//!   `state.input` as JSON) followed by its result: `state.output` when completed, `state.error`
//!   (an error) when failed, `[Tool execution was interrupted]` (an error) when left pending or
//!   running, as `toModelMessages` sends them. An older assistant message's `system` strings are
//!   system text.
//! - **Compaction.** An assistant message with `summary: true` is OpenCode's summary of the
//!   session so far: after it the context restarts from that summary ([`Item::Compaction`]).
//! - **Pruned outputs.** OpenCode's own prune marks old tool outputs `time.compacted` and sends
//!   them as `[Old tool result content cleared]` from then on. They are replayed whole, so that
//!   policies are compared on the real outputs; a warning counts them, as the recorded sizes
//!   after a prune are smaller than a replay without one.
//!
//! The only file access is [`OpenCode::read`] reading the session's message and part files (the
//! one `from_path` wrapper this format has); [`read_session`] turns their contents into the trace.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Output, Request, ToolResult, Trace, Usage};

/// OpenCode session storage.
pub struct OpenCode;

/// What OpenCode sends for a call that never finished.
const INTERRUPTED: &str = "[Tool execution was interrupted]";

/// The `storage` folder a session file `storage/session/<project>/<id>.json` belongs to.
pub fn storage_of(session_file: &Path) -> Option<&Path> {
    let project = session_file.parent()?;
    let session = project.parent()?;
    (session.file_name()? == "session").then_some(())?;
    session.parent()
}

/// Whether a file found in a walk is one of a storage folder's other records (messages, parts,
/// projects, diffs), read through its session or not a trace at all.
pub fn is_storage_record(path: &Path) -> bool {
    let mut parts = path.ancestors().skip(1);
    parts.any(|dir| {
        dir.parent()
            .is_some_and(|p| p.file_name().is_some_and(|n| n == "storage") && p.join("session").is_dir())
            && dir.file_name().is_some_and(|n| n != "session")
    })
}

impl Format for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let Some(Value::Object(session)) = head.first_json_line.or_else(|| head.document()) else {
            return false;
        };
        session.get("id").and_then(Value::as_str).is_some_and(|id| id.starts_with("ses_"))
            && session.get("time").is_some_and(Value::is_object)
            && !session.contains_key("role")
            && storage_of(head.path).is_some()
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let session = super::shared::read_document(input, path)?;
        let id = session.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        if !id.starts_with("ses_") {
            return Err(TraceError::content(path, "id: expected an OpenCode session id (`ses_…`)"));
        }
        let storage = storage_of(path).ok_or_else(|| {
            TraceError::content(path, "an OpenCode session file is read in its storage folder (storage/session/<project>/<id>.json)")
        })?;
        let messages = read_dir_json(&storage.join("message").join(&id))?;
        let mut parts = BTreeMap::new();
        for (_, message) in &messages {
            let Some(mid) = message.get("id").and_then(Value::as_str) else { continue };
            parts.insert(mid.to_owned(), read_dir_json(&storage.join("part").join(mid))?);
        }
        Ok(read_session(&id, &messages, &parts))
    }
}

/// Every `*.json` file of a folder, parsed, in file-name order (an absent folder holds none).
fn read_dir_json(dir: &Path) -> Result<Vec<(PathBuf, Value)>, TraceError> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let text =
                std::fs::read(&file).map_err(|source| TraceError::Io { path: file.clone(), source })?;
            let text = String::from_utf8_lossy(&text);
            let value = super::shared::parse_document(&text, &file)?;
            Ok((file, value))
        })
        .collect()
}

/// The session's conversation from its messages (with their paths, for warnings) and each
/// message's parts (by message id).
pub fn read_session(
    id: &str,
    messages: &[(PathBuf, Value)],
    parts: &BTreeMap<String, Vec<(PathBuf, Value)>>,
) -> Trace {
    let mut sorted: Vec<&Value> = messages.iter().map(|(_, m)| m).collect();
    sorted.sort_by(|a, b| str_of(a, "id").cmp(str_of(b, "id")));
    let mut items = Vec::new();
    let mut pruned = 0;
    let none = Vec::new();
    for message in sorted {
        let mut own: Vec<&Value> =
            parts.get(str_of(message, "id")).unwrap_or(&none).iter().map(|(_, p)| p).collect();
        own.sort_by(|a, b| str_of(a, "id").cmp(str_of(b, "id")));
        match str_of(message, "role") {
            "user" => user(&mut items, &own),
            "assistant" => pruned += assistant(&mut items, message, &own),
            _ => {}
        }
    }
    let mut warnings = Vec::new();
    if pruned > 0 {
        warnings.push(format!(
            "{pruned} tool output(s) were pruned by OpenCode (`time.compacted`) and sent as `[Old tool result content \
             cleared]` after that: they are replayed whole, so the requests after the prune were recorded smaller \
             than their replay without a policy"
        ));
    }
    let conversation = Conversation { id: id.to_owned(), items, recorded_total: None };
    Trace { format: OpenCode.name(), conversations: vec![conversation], warnings }
}

fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A user message's parts: text (synthetic text is meta), images counted on the text.
fn user(items: &mut Vec<Item>, parts: &[&Value]) {
    let images = parts
        .iter()
        .filter(|p| str_of(p, "type") == "file" && str_of(p, "mime").starts_with("image/"))
        .count() as u32;
    let mut images = Some(images).filter(|&n| n > 0);
    for part in parts {
        match str_of(part, "type") {
            "text" if part.get("ignored") != Some(&Value::Bool(true)) => items.push(Item::User {
                text: str_of(part, "text").to_owned(),
                meta: part.get("synthetic") == Some(&Value::Bool(true)),
                images: images.take().unwrap_or(0),
            }),
            "compaction" => {
                items.push(Item::User { text: "What did we do so far?".into(), meta: true, images: 0 })
            }
            _ => {}
        }
    }
    if let Some(images) = images {
        items.push(Item::User { text: String::new(), meta: false, images });
    }
}

/// An assistant message's parts; returns how many tool outputs OpenCode had pruned.
fn assistant(items: &mut Vec<Item>, message: &Value, parts: &[&Value]) -> usize {
    for system in message.get("system").and_then(Value::as_array).into_iter().flatten() {
        if let Some(text) = system.as_str() {
            items.push(Item::System { text: text.to_owned() });
        }
    }
    let created = message.pointer("/time/created").and_then(Value::as_i64);
    let model = message.get("modelID").and_then(Value::as_str).map(str::to_owned);
    let steps = parts.iter().filter(|p| str_of(p, "type") == "step-start").count();
    if steps == 0 && !parts.is_empty() {
        items.push(Item::Request(Request {
            id: None,
            timestamp: created,
            usage: message.get("tokens").and_then(usage),
            model: model.clone(),
        }));
    }
    let mut pruned = 0;
    let mut first_step = true;
    for (k, part) in parts.iter().enumerate() {
        match str_of(part, "type") {
            "step-start" => {
                // This step's usage is on the next step-finish before another step starts.
                let finish = parts[k + 1..]
                    .iter()
                    .take_while(|p| str_of(p, "type") != "step-start")
                    .find(|p| str_of(p, "type") == "step-finish");
                let timestamp = if first_step { created } else { None };
                first_step = false;
                items.push(Item::Request(Request {
                    id: None,
                    timestamp,
                    usage: finish.and_then(|f| f.get("tokens")).and_then(usage),
                    model: model.clone(),
                }));
            }
            "text" => items.push(Item::Assistant { text: str_of(part, "text").to_owned() }),
            "reasoning" => items.push(Item::Thinking { text: str_of(part, "text").to_owned() }),
            "tool" => pruned += tool(items, part),
            _ => {}
        }
    }
    if message.get("summary") == Some(&Value::Bool(true)) {
        let summary: Vec<&str> =
            parts.iter().filter(|p| str_of(p, "type") == "text").map(|p| str_of(p, "text")).collect();
        items.push(Item::Compaction { summary: Some(summary.join("\n")) });
    }
    pruned
}

/// A tool part: the call and what OpenCode sends as its result; 1 when its output was pruned.
fn tool(items: &mut Vec<Item>, part: &Value) -> usize {
    let call_id = str_of(part, "callID").to_owned();
    let name = str_of(part, "tool").to_owned();
    let state = part.get("state").unwrap_or(&Value::Null);
    let arguments = state.get("input").map(Value::to_string).unwrap_or_else(|| "{}".into());
    items.push(Item::ToolCall { call_id: call_id.clone(), name: name.clone(), arguments });
    let (output, is_error) = match str_of(state, "status") {
        "completed" => (str_of(state, "output").to_owned(), false),
        "error" => (str_of(state, "error").to_owned(), true),
        _ => (INTERRUPTED.to_owned(), true),
    };
    let images = state
        .get("attachments")
        .and_then(Value::as_array)
        .map_or(0, |a| a.iter().filter(|f| str_of(f, "mime").starts_with("image/")).count() as u32);
    items.push(Item::ToolResult(ToolResult {
        call_id,
        name: Some(name),
        output: Output::Raw { output },
        is_error,
        images,
    }));
    usize::from(state.pointer("/time/compacted").is_some_and(|c| !c.is_null()))
}

/// A prompt size from OpenCode's `tokens{input, output, cache{read, write}}`.
fn usage(tokens: &Value) -> Option<Usage> {
    let n = |p: &str| tokens.pointer(p).and_then(Value::as_u64);
    let input = n("/input")?;
    let (read, write) = (n("/cache/read").unwrap_or(0), n("/cache/write").unwrap_or(0));
    let total = input.checked_add(read)?.checked_add(write)?;
    if total == 0 {
        return None;
    }
    Some(Usage {
        input_tokens: total,
        cache_read_tokens: Some(read),
        cache_write_tokens: Some(write),
        output_tokens: n("/output"),
        cost_micro_usd: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn part(id: &str, v: Value) -> (PathBuf, Value) {
        let mut v = v;
        v["id"] = json!(id);
        (PathBuf::from(format!("{id}.json")), v)
    }

    #[test]
    fn each_step_is_a_request_sized_by_its_step_finish_and_tools_are_calls_and_results() {
        let messages = vec![
            (PathBuf::from("m1.json"), json!({"id": "msg_1", "role": "user", "time": {"created": 1}})),
            (PathBuf::from("m2.json"), json!({"id": "msg_2", "role": "assistant", "time": {"created": 2}})),
        ];
        let mut parts = BTreeMap::new();
        parts.insert("msg_1".to_owned(), vec![part("prt_1", json!({"type": "text", "text": "fix it"}))]);
        parts.insert(
            "msg_2".to_owned(),
            vec![
                part("prt_1", json!({"type": "step-start"})),
                part("prt_2", json!({"type": "tool", "callID": "c1", "tool": "read",
                    "state": {"status": "completed", "input": {"filePath": "a"}, "output": "text", "time": {"compacted": 5}}})),
                part("prt_3", json!({"type": "step-finish", "tokens": {"input": 10, "output": 3, "cache": {"read": 100, "write": 5}}})),
                part("prt_4", json!({"type": "step-start"})),
                part("prt_5", json!({"type": "tool", "callID": "c2", "tool": "bash", "state": {"status": "running", "input": {}}})),
                part("prt_6", json!({"type": "text", "text": "done"})),
            ],
        );
        let trace = read_session("ses_1", &messages, &parts);
        let c = &trace.conversations[0];
        assert_eq!((c.requests(), c.tool_results()), (2, 2));
        let sizes: Vec<Option<u64>> = c
            .items
            .iter()
            .filter_map(
                |i| if let Item::Request(r) = i { Some(r.usage.map(|u| u.input_tokens)) } else { None },
            )
            .collect();
        assert_eq!(sizes, [Some(115), None]);
        assert!(
            c.items.iter().any(
                |i| matches!(i, Item::ToolResult(r) if r.is_error && r.output.full_text() == INTERRUPTED)
            )
        );
        assert_eq!(trace.warnings.len(), 1, "one pruned output: {:?}", trace.warnings);
    }

    #[test]
    fn storage_paths_are_recognised() {
        assert_eq!(storage_of(Path::new("/d/storage/session/p1/ses_1.json")), Some(Path::new("/d/storage")));
        assert_eq!(storage_of(Path::new("/d/storage/message/ses_1/msg_1.json")), None);
    }
}
