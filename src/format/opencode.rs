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
//! one `from_path` wrapper this format has): one listing of the session's message folder, then
//! per message one listing of its part folder and one open per file, all read into one reused
//! buffer. Each file is read into a typed record of the keys used here ([`Message`], [`Part`]),
//! the rest checked as JSON and skipped; [`read_session`] turns them into the trace.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::claude_code::Object;
use super::fields::{present, str_of, take_str};
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
        let text = super::shared::read_text(input, path)?;
        let session: Object<Session> = super::shared::parse_document_as(&text, path)?;
        let id = session.0.map(|mut s| take_str(&mut s.id)).unwrap_or_default();
        if !id.starts_with("ses_") {
            return Err(TraceError::content(path, "id: expected an OpenCode session id (`ses_…`)"));
        }
        let storage = storage_of(path).ok_or_else(|| {
            TraceError::content(path, "an OpenCode session file is read in its storage folder (storage/session/<project>/<id>.json)")
        })?;
        let mut buf = Vec::new();
        let messages: Vec<Message> = read_dir_json(&storage.join("message").join(&id), &mut buf)?;
        let mut session = Vec::with_capacity(messages.len());
        for message in messages {
            let parts = match &message.id {
                Some(Value::String(mid)) => read_dir_json(&storage.join("part").join(mid), &mut buf)?,
                _ => Vec::new(),
            };
            session.push((message, parts));
        }
        Ok(read_session(&id, session))
    }
}

/// A session file: its id.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Session {
    #[serde(deserialize_with = "present")]
    id: Option<Value>,
}

/// A message file, as far as the replay goes (a file that is not an object reads as empty).
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct Message {
    #[serde(deserialize_with = "present")]
    id: Option<Value>,
    #[serde(deserialize_with = "present")]
    role: Option<Value>,
    /// An older assistant message's system prompt strings.
    #[serde(deserialize_with = "present")]
    system: Option<Value>,
    time: Object<Time>,
    #[serde(rename = "modelID", deserialize_with = "present")]
    model_id: Option<Value>,
    tokens: Object<Tokens>,
    #[serde(deserialize_with = "present")]
    summary: Option<Value>,
}

/// A part file, as far as the replay goes (a file that is not an object reads as empty).
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct Part {
    #[serde(deserialize_with = "present")]
    id: Option<Value>,
    #[serde(rename = "type", deserialize_with = "present")]
    kind: Option<Value>,
    #[serde(deserialize_with = "present")]
    text: Option<Value>,
    #[serde(deserialize_with = "present")]
    ignored: Option<Value>,
    #[serde(deserialize_with = "present")]
    synthetic: Option<Value>,
    #[serde(deserialize_with = "present")]
    mime: Option<Value>,
    #[serde(rename = "callID", deserialize_with = "present")]
    call_id: Option<Value>,
    #[serde(deserialize_with = "present")]
    tool: Option<Value>,
    state: Object<State>,
    tokens: Object<Tokens>,
}

/// A tool part's `state`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct State {
    #[serde(deserialize_with = "present")]
    input: Option<Value>,
    #[serde(deserialize_with = "present")]
    status: Option<Value>,
    #[serde(deserialize_with = "present")]
    output: Option<Value>,
    #[serde(deserialize_with = "present")]
    error: Option<Value>,
    #[serde(deserialize_with = "present")]
    attachments: Option<Value>,
    time: Object<Time>,
}

/// `time{created, compacted}` of a message or a tool state.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Time {
    #[serde(deserialize_with = "present")]
    created: Option<Value>,
    #[serde(deserialize_with = "present")]
    compacted: Option<Value>,
}

/// OpenCode's `tokens{input, output, cache{read, write}}`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Tokens {
    #[serde(deserialize_with = "present")]
    input: Option<Value>,
    #[serde(deserialize_with = "present")]
    output: Option<Value>,
    cache: Object<Cache>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Cache {
    #[serde(deserialize_with = "present")]
    read: Option<Value>,
    #[serde(deserialize_with = "present")]
    write: Option<Value>,
}

/// Every `*.json` file of a folder, parsed, in file-name order (an absent folder holds none); a
/// file that is not a JSON object reads as an empty record. Files are read into `buf`, reused.
fn read_dir_json<T: DeserializeOwned + Default>(dir: &Path, buf: &mut Vec<u8>) -> Result<Vec<T>, TraceError> {
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
            buf.clear();
            std::fs::File::open(&file)
                .and_then(|mut f| f.read_to_end(buf))
                .map_err(|source| TraceError::Io { path: file.clone(), source })?;
            let text = match std::str::from_utf8(buf) {
                Ok(text) => std::borrow::Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(buf),
            };
            let record: Object<T> = super::shared::parse_document_as(&text, &file)?;
            Ok(record.0.unwrap_or_default())
        })
        .collect()
}

/// The session's conversation from its messages, each with its parts.
pub fn read_session(id: &str, mut messages: Vec<(Message, Vec<Part>)>) -> Trace {
    messages.sort_by(|(a, _), (b, _)| str_of(&a.id).cmp(str_of(&b.id)));
    let mut items = Vec::new();
    let mut pruned = 0;
    for (message, mut own) in messages {
        own.sort_by(|a, b| str_of(&a.id).cmp(str_of(&b.id)));
        match str_of(&message.role) {
            "user" => user(&mut items, own),
            "assistant" => pruned += assistant(&mut items, message, own),
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

fn is_true(v: &Option<Value>) -> bool {
    v == &Some(Value::Bool(true))
}

/// A user message's parts: text (synthetic text is meta), images counted on the text.
fn user(items: &mut Vec<Item>, parts: Vec<Part>) {
    let images =
        parts.iter().filter(|p| str_of(&p.kind) == "file" && str_of(&p.mime).starts_with("image/")).count()
            as u32;
    let mut images = Some(images).filter(|&n| n > 0);
    for mut part in parts {
        match str_of(&part.kind) {
            "text" if !is_true(&part.ignored) => items.push(Item::User {
                text: take_str(&mut part.text),
                meta: is_true(&part.synthetic),
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
fn assistant(items: &mut Vec<Item>, message: Message, mut parts: Vec<Part>) -> usize {
    for system in message.system.as_ref().and_then(Value::as_array).into_iter().flatten() {
        if let Some(text) = system.as_str() {
            items.push(Item::System { text: text.to_owned() });
        }
    }
    let created = message.time.0.as_ref().and_then(|t| t.created.as_ref()).and_then(Value::as_i64);
    let model = message.model_id.as_ref().and_then(Value::as_str).map(str::to_owned);
    let steps = parts.iter().filter(|p| str_of(&p.kind) == "step-start").count();
    if steps == 0 && !parts.is_empty() {
        items.push(Item::Request(Request {
            id: None,
            timestamp: created,
            usage: message.tokens.0.as_ref().and_then(usage),
            model: model.clone(),
        }));
    }
    let mut pruned = 0;
    let mut first_step = true;
    let summary = is_true(&message.summary);
    let mut summary_texts: Vec<String> = Vec::new();
    for k in 0..parts.len() {
        match str_of(&parts[k].kind) {
            "step-start" => {
                // This step's usage is on the next step-finish before another step starts.
                let finish = parts[k + 1..]
                    .iter()
                    .take_while(|p| str_of(&p.kind) != "step-start")
                    .find(|p| str_of(&p.kind) == "step-finish");
                let timestamp = if first_step { created } else { None };
                first_step = false;
                items.push(Item::Request(Request {
                    id: None,
                    timestamp,
                    usage: finish.and_then(|f| f.tokens.0.as_ref()).and_then(usage),
                    model: model.clone(),
                }));
            }
            "text" => {
                let text = take_str(&mut parts[k].text);
                if summary {
                    summary_texts.push(text.clone());
                }
                items.push(Item::Assistant { text });
            }
            "reasoning" => items.push(Item::Thinking { text: take_str(&mut parts[k].text) }),
            "tool" => pruned += tool(items, &mut parts[k]),
            _ => {}
        }
    }
    if summary {
        items.push(Item::Compaction { summary: Some(summary_texts.join("\n")) });
    }
    pruned
}

/// A tool part: the call and what OpenCode sends as its result; 1 when its output was pruned.
fn tool(items: &mut Vec<Item>, part: &mut Part) -> usize {
    let call_id = take_str(&mut part.call_id);
    let name = take_str(&mut part.tool);
    let mut state = part.state.0.take().unwrap_or_default();
    let arguments = state.input.as_ref().map(Value::to_string).unwrap_or_else(|| "{}".into());
    items.push(Item::ToolCall { call_id: call_id.clone(), name: name.clone(), arguments });
    let (output, is_error) = match str_of(&state.status) {
        "completed" => (take_str(&mut state.output), false),
        "error" => (take_str(&mut state.error), true),
        _ => (INTERRUPTED.to_owned(), true),
    };
    let images = state.attachments.as_ref().and_then(Value::as_array).map_or(0, |a| {
        a.iter().filter(|f| f.get("mime").and_then(Value::as_str).unwrap_or("").starts_with("image/")).count()
            as u32
    });
    items.push(Item::ToolResult(ToolResult {
        call_id,
        name: Some(name),
        output: Output::Raw { output },
        is_error,
        images,
    }));
    let compacted = state.time.0.as_ref().and_then(|t| t.compacted.as_ref());
    usize::from(compacted.is_some_and(|c| !c.is_null()))
}

/// A prompt size from OpenCode's `tokens{input, output, cache{read, write}}`.
fn usage(tokens: &Tokens) -> Option<Usage> {
    let n = |v: Option<&Option<Value>>| v.and_then(Option::as_ref).and_then(Value::as_u64);
    let input = n(Some(&tokens.input))?;
    let cache = tokens.cache.0.as_ref();
    let (read, write) = (n(cache.map(|c| &c.read)).unwrap_or(0), n(cache.map(|c| &c.write)).unwrap_or(0));
    let total = input.checked_add(read)?.checked_add(write)?;
    if total == 0 {
        return None;
    }
    Some(Usage {
        input_tokens: total,
        cache_read_tokens: Some(read),
        cache_write_tokens: Some(write),
        output_tokens: n(Some(&tokens.output)),
        cost_micro_usd: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn part(id: &str, v: Value) -> Part {
        let mut v = v;
        v["id"] = json!(id);
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn each_step_is_a_request_sized_by_its_step_finish_and_tools_are_calls_and_results() {
        let message = |v: Value| -> Message { serde_json::from_value(v).unwrap() };
        let messages = vec![
            (
                message(json!({"id": "msg_2", "role": "assistant", "time": {"created": 2}})),
                vec![
                    part("prt_1", json!({"type": "step-start"})),
                    part(
                        "prt_2",
                        json!({"type": "tool", "callID": "c1", "tool": "read",
                        "state": {"status": "completed", "input": {"filePath": "a"}, "output": "text", "time": {"compacted": 5}}}),
                    ),
                    part(
                        "prt_3",
                        json!({"type": "step-finish", "tokens": {"input": 10, "output": 3, "cache": {"read": 100, "write": 5}}}),
                    ),
                    part("prt_4", json!({"type": "step-start"})),
                    part(
                        "prt_5",
                        json!({"type": "tool", "callID": "c2", "tool": "bash", "state": {"status": "running", "input": {}}}),
                    ),
                    part("prt_6", json!({"type": "text", "text": "done"})),
                ],
            ),
            (
                message(json!({"id": "msg_1", "role": "user", "time": {"created": 1}})),
                vec![part("prt_1", json!({"type": "text", "text": "fix it"}))],
            ),
        ];
        let trace = read_session("ses_1", messages);
        assert!(matches!(&trace.conversations[0].items[0], Item::User { text, .. } if text == "fix it"));
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
