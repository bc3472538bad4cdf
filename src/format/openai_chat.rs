//! `openai-chat`: OpenAI Chat Completions messages (`FORMATS.md` §4 of the shared corpus).
//!
//! Three file shapes, one JSON document each:
//! - a bare message array `[{role, content, …}, …]`: one conversation, `main`;
//! - an array of trajectories `[{task_id, trial, reward, info, traj: [messages]}]` as tau-bench
//!   publishes them (`historical_trajectories/*.json`): one conversation per trajectory, named
//!   `task-<task_id>/trial-<trial>` (or `traj-<index>` without those fields);
//! - a request body `{model, messages: [...], tools?}`: one conversation, `main`.
//!
//! Messages: `system`/`developer` are system text; `user` text (parts of type `text` joined with
//! `\n`, image parts counted); `assistant` text, `tool_calls[]{id, function{name, arguments}}` (one
//! item per call, so parallel calls are several items) and `reasoning_content` (sent back by some
//! OpenAI-compatible providers) as thinking; `content` may be null, a string or a list of parts.
//! `tool` messages are results linked by `tool_call_id` == `tool_calls[].id`; their tool name is
//! the linked call's. The legacy `function_call` / `role: "function"` pair links by name.
//!
//! **Request boundaries.** An LLM call produced each assistant message, so a boundary sits before
//! every assistant message: its context is everything before it. A request body is itself one more
//! call, so it also gets a boundary after its last message. None of these shapes records usage.
//!
//! **Tool schemas.** A request body's `tools` are sent with every request: they are counted once,
//! as system text (the compact JSON of the `tools` array) before the first message, so every
//! request's context includes them. The provider renders them in its own internal form, so this
//! count is a proxy of their real size.
//!
//! **Images.** Each message's `image_url` parts (also `input_image`, `image`) are followed by one
//! image item ([`Item::Unseen`]) sized by OpenAI's rule for the model of the request that sends
//! them (a request body's `model`; a bare list names none: the gpt-4o rule), from the dimensions
//! of a `data:` URL's image and the part's `detail` (`crate::unseen::openai`; a URL the log does
//! not hold counts as a 1024 × 1024 image). The same holds for an OpenAI cassette's bodies;
//! Inspect's messages, whose model may be any provider's, only count their images.
//!
//! The message converter is shared with [`cassette`](super::cassette) (each recorded request body)
//! and [`inspect`](super::inspect) (Inspect's ChatMessages differ only in details it accepts:
//! `tool_calls[].function` as a name with `arguments` beside it as an object, `reasoning` content
//! parts, tool `function` and `error`).
//!
//! Detection rejects other agents' documents: objects with SWE-agent (`trajectory`, `history`),
//! mini-swe-agent (`trajectory_format`, `info`), Gemini CLI (`sessionId`) or Inspect (`eval`) keys;
//! message lists whose elements carry a `type` (Gemini CLI, Claude Code, Responses items) or no
//! `role` (OpenHands events); Anthropic or Responses markers (`wire::classify`); and
//! mini-swe-agent's bare message lists (`*.traj.json` names, `<returncode>` observations).

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::shared::{self, Loose};
use super::wire::{self, Builder, Calls, Family, json_text, kind_of, str_field};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Trace};

/// OpenAI Chat Completions message arrays, trajectory arrays and request bodies.
pub struct OpenAiChat;

/// The shape of a document this format reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Messages,
    Trajectories,
    Body,
}

fn shape(doc: &Value) -> Option<Shape> {
    match doc {
        Value::Array(elements) => {
            let first = elements.first()?.as_object()?;
            if first.contains_key("traj") || (first.contains_key("task_id") && first.contains_key("reward")) {
                let all = elements.iter().filter_map(|e| e.get("traj")?.as_array()).flatten();
                let messages: Vec<Value> = all.cloned().collect();
                return matches!(wire::classify(&messages)?, Family::Plain | Family::Chat)
                    .then_some(Shape::Trajectories);
            }
            matches!(wire::classify(elements)?, Family::Plain | Family::Chat).then_some(Shape::Messages)
        }
        Value::Object(body) => {
            matches!(wire::classify_body(body)?, Family::Plain | Family::Chat).then_some(Shape::Body)
        }
        _ => None,
    }
}

/// Whether a file looks like a mini-swe-agent message list (read by that format).
fn is_mini_swe_agent(head: &Head<'_>) -> bool {
    let name = head.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".traj.json")
        || name.ends_with(".traj")
        || head.text.contains("<returncode>")
        || head.text.contains("mswea_")
}

impl Format for OpenAiChat {
    fn name(&self) -> &'static str {
        "openai-chat"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        !is_mini_swe_agent(head) && head.document().and_then(shape).is_some()
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let text = shared::read_text(input, path)?;
        let mut trace = Trace { format: self.name(), ..Default::default() };
        let fail = |message: String| TraceError::content(path, message);
        // Arrays (message lists, trajectories) are read straight into messages; anything else
        // (a request body, or not a chat document at all) as a `Value`.
        if text.trim_start().starts_with('[') {
            let elements: Vec<Element> = shared::parse_document_as(&text, path)?;
            drop(text);
            if elements.first().is_some_and(|e| e.traj.is_some()) {
                let mut seen = std::collections::BTreeSet::new();
                for (i, element) in elements.into_iter().enumerate() {
                    let at = format!("[{i}]");
                    let Some(Messages::List(traj)) = element.traj else {
                        return Err(fail(format!("{at}: a trajectory needs a `traj` array of messages")));
                    };
                    let mut id = match (&element.task_id, &element.trial) {
                        (Some(task), Some(trial)) => {
                            format!("task-{}/trial-{}", json_text(task), json_text(trial))
                        }
                        _ => format!("traj-{i}"),
                    };
                    if !seen.insert(id.clone()) {
                        id = format!("{id}#{i}");
                    }
                    let mut b = Builder::default();
                    b.size_openai_images(None);
                    let at_traj = format!("{at}.traj");
                    for (k, m) in traj.into_iter().enumerate() {
                        message_of(&mut b, m, &format!("{at_traj}[{k}]"), Calls::BeforeEachAssistant)
                            .map_err(fail)?;
                    }
                    trace.warnings.extend(b.warnings(&at));
                    trace.conversations.push(Conversation {
                        id,
                        items: b.take_items(),
                        recorded_total: None,
                    });
                }
            } else {
                let mut b = Builder::default();
                b.size_openai_images(None);
                for (i, element) in elements.into_iter().enumerate() {
                    message_of(&mut b, element.message, &format!("[{i}]"), Calls::BeforeEachAssistant)
                        .map_err(fail)?;
                }
                trace.warnings.extend(b.warnings(""));
                trace.conversations.push(Conversation {
                    id: "main".into(),
                    items: b.take_items(),
                    recorded_total: None,
                });
            }
            return Ok(trace);
        }
        let doc = shared::parse_document(&text, path)?;
        match &doc {
            Value::Object(_) => {
                let mut b = Builder::default();
                body(&mut b, &doc, "", Calls::BeforeEachAssistant).map_err(fail)?;
                b.request();
                trace.warnings.extend(b.warnings(""));
                let mut c = Conversation { id: "main".into(), items: b.take_items(), recorded_total: None };
                c.name_model(doc.get("model").and_then(Value::as_str));
                trace.conversations.push(c);
            }
            other => {
                return Err(fail(format!(
                    "expected a message array, an array of trajectories or a request body object, found {}",
                    kind_of(other)
                )));
            }
        }
        Ok(trace)
    }
}

/// One chat message as the converter reads it: the fields it uses, each any JSON value as written
/// (null included; the converter checks the types and names what it found). Read straight from a
/// document, everything else checked as JSON and skipped, with no map built per message (the
/// 4 MB tau-bench file spent most of its import building, searching and dropping `Value` maps), or
/// taken from a `Value` (request bodies, cassettes, Inspect). Anything but an object reads as a
/// message with no field, as `Value::get` sees it; a key given twice keeps its last value, as a
/// `Value` map does.
#[derive(Debug, Default)]
pub(crate) struct Message {
    role: Option<Value>,
    content: Option<Value>,
    tool_calls: Option<Value>,
    tool_call_id: Option<Value>,
    name: Option<Value>,
    function: Option<Value>,
    function_call: Option<Value>,
    reasoning_content: Option<Value>,
    reasoning: Option<Value>,
    error: Option<Value>,
}

impl Message {
    /// The field `key` of the message, if it is one the converter uses.
    fn slot(&mut self, key: &str) -> Option<&mut Option<Value>> {
        Some(match key {
            "role" => &mut self.role,
            "content" => &mut self.content,
            "tool_calls" => &mut self.tool_calls,
            "tool_call_id" => &mut self.tool_call_id,
            "name" => &mut self.name,
            "function" => &mut self.function,
            "function_call" => &mut self.function_call,
            "reasoning_content" => &mut self.reasoning_content,
            "reasoning" => &mut self.reasoning,
            "error" => &mut self.error,
            _ => return None,
        })
    }

    /// The message a `Value` holds.
    pub(crate) fn from_value(v: &Value) -> Message {
        let mut m = Message::default();
        if let Value::Object(fields) = v {
            for (key, value) in fields {
                if let Some(slot) = m.slot(key) {
                    *slot = Some(value.clone());
                }
            }
        }
        m
    }
}

/// An element of a top-level array: a message, or a tau-bench trajectory (`traj`, `task_id`,
/// `trial`), read as both.
#[derive(Debug, Default)]
struct Element {
    message: Message,
    /// Present when the key is, whatever its value.
    traj: Option<Messages>,
    task_id: Option<Value>,
    trial: Option<Value>,
}

/// A value that should be a list of messages.
#[derive(Debug, Default)]
enum Messages {
    List(Vec<Message>),
    /// Anything else (the converter's error says what was expected).
    #[default]
    Other,
}

impl<'de> serde::Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shared::deserialize_loose(d)
    }
}

impl<'de> serde::Deserialize<'de> for Element {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shared::deserialize_loose(d)
    }
}

impl<'de> serde::Deserialize<'de> for Messages {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        shared::deserialize_loose(d)
    }
}

/// An array where a message or a trajectory should be is read as values, not skipped, so that
/// nesting deeper than serde_json's limit is refused with its error, as when the whole document
/// was one `Value`.
fn read_values<'de, A: serde::de::SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<Value>()?.is_some() {}
    Ok(())
}

impl Loose for Message {
    fn from_map<'de, A: serde::de::MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut m = Message::default();
        while let Some(Key(key)) = map.next_key()? {
            m.read(&key, &mut map)?;
        }
        Ok(m)
    }
    fn from_seq<'de, A: serde::de::SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        read_values(seq).map(|()| Message::default())
    }
}

impl Loose for Element {
    fn from_seq<'de, A: serde::de::SeqAccess<'de>>(seq: A) -> Result<Self, A::Error> {
        read_values(seq).map(|()| Element::default())
    }
    fn from_map<'de, A: serde::de::MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut e = Element::default();
        while let Some(Key(key)) = map.next_key()? {
            match &*key {
                "traj" => e.traj = Some(map.next_value()?),
                "task_id" => e.task_id = Some(map.next_value()?),
                "trial" => e.trial = Some(map.next_value()?),
                _ => e.message.read(&key, &mut map)?,
            }
        }
        Ok(e)
    }
}

impl Loose for Messages {
    fn from_seq<'de, A: serde::de::SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(m) = seq.next_element()? {
            list.push(m);
        }
        Ok(Messages::List(list))
    }
}

impl Message {
    /// Reads the value of `key` from `map` into its field, or checks and skips it.
    fn read<'de, A: serde::de::MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match self.slot(key) {
            Some(slot) => *slot = Some(map.next_value()?),
            None => {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// An object key, borrowed from the document when it has no escape.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> serde::de::Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Joins a JSON path and a key: `messages` under `a.b` is `a.b.messages`.
pub(crate) fn key_path(at: &str, key: &str) -> String {
    if at.is_empty() { key.to_owned() } else { format!("{at}.{key}") }
}

/// A request body: `tools` as system text, then `messages`.
pub(crate) fn body(b: &mut Builder, body: &Value, at: &str, calls: Calls) -> Result<(), String> {
    b.size_openai_images(body.get("model").and_then(Value::as_str));
    tools(b, body.get("tools"));
    let at = key_path(at, "messages");
    let list = body
        .get("messages")
        .ok_or_else(|| format!("{at}: a request body needs `messages`"))?
        .as_array()
        .ok_or_else(|| format!("{at}: expected an array of messages"))?;
    messages(b, list, &at, calls)
}

/// Tool schemas as one system text (compact JSON), when there are any.
pub(crate) fn tools(b: &mut Builder, tools: Option<&Value>) {
    match tools {
        Some(Value::Array(list)) if !list.is_empty() => {
            b.push(Item::System { text: json_text(&Value::Array(list.clone())) })
        }
        Some(Value::Object(o)) if !o.is_empty() => {
            b.push(Item::System { text: json_text(&Value::Object(o.clone())) })
        }
        _ => {}
    }
}

/// A list of messages.
pub(crate) fn messages(b: &mut Builder, list: &[Value], at: &str, calls: Calls) -> Result<(), String> {
    for (i, m) in list.iter().enumerate() {
        message(b, m, &format!("{at}[{i}]"), calls)?;
    }
    Ok(())
}

/// Text and image count of a `content` (null, a string, or a list of parts). Reasoning parts go to
/// `thinking` when given, else they are noted as not replayed.
fn content(
    b: &mut Builder,
    content: Option<Value>,
    at: &str,
    mut thinking: Option<&mut Vec<String>>,
) -> Result<(String, u32), String> {
    match content {
        None | Some(Value::Null) => Ok((String::new(), 0)),
        Some(Value::String(s)) => Ok((s, 0)),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            let mut images = 0;
            for part in &parts {
                match str_field(part, "type") {
                    "text" | "input_text" | "output_text" => texts.push(str_field(part, "text").to_owned()),
                    "refusal" => texts.push(str_field(part, "refusal").to_owned()),
                    "image_url" | "image" | "input_image" => {
                        images += 1;
                        b.image_part(part);
                    }
                    "reasoning" => match thinking.as_deref_mut() {
                        Some(out) if part.get("redacted").and_then(Value::as_bool) != Some(true) => {
                            out.push(str_field(part, "reasoning").to_owned())
                        }
                        _ => b.note("redacted or misplaced reasoning part(s) not replayed"),
                    },
                    other => b.note(format!("`{other}` content part(s) not replayed (unknown part type)")),
                }
            }
            Ok((texts.join("\n"), images))
        }
        Some(other) => Err(format!(
            "{at}.content: expected null, a string or a list of parts, found {}",
            kind_of(&other)
        )),
    }
}

/// One message given as a `Value` (request bodies, cassettes, Inspect).
pub(crate) fn message(b: &mut Builder, m: &Value, at: &str, calls: Calls) -> Result<(), String> {
    message_of(b, Message::from_value(m), at, calls)
}

/// One message; its texts move into the trace, followed by its images' item when they are sized.
fn message_of(b: &mut Builder, m: Message, at: &str, calls: Calls) -> Result<(), String> {
    message_items(b, m, at, calls)?;
    b.images_item();
    Ok(())
}

/// The items of one message.
fn message_items(b: &mut Builder, mut m: Message, at: &str, calls: Calls) -> Result<(), String> {
    let role = match m.role.take() {
        Some(Value::String(role)) => role,
        _ => return Err(format!("{at}: a message needs a string `role`")),
    };
    match role.as_str() {
        "system" | "developer" => {
            let (text, _) = content(b, m.content, at, None)?;
            b.text(|text| Item::System { text }, text);
        }
        "user" => {
            let (text, images) = content(b, m.content, at, None)?;
            if !text.is_empty() || images > 0 {
                b.push(Item::User { text, meta: false, images });
            }
        }
        "assistant" => assistant(b, m, at, calls)?,
        "tool" => {
            let call_id = match m.tool_call_id.take() {
                Some(Value::String(id)) => id,
                _ => return Err(format!("{at}: a tool message needs a string `tool_call_id`")),
            };
            let (mut text, images) = content(b, m.content.take(), at, None)?;
            // Inspect: a failed call is sent as "Error: <message>" (src/inspect_ai/model/_openai.py).
            let error = m.error.as_ref().filter(|e| !e.is_null());
            if let Some(e) = error {
                text = format!("Error: {}", str_field(e, "message"));
            }
            let hint = m.name.as_ref().or(m.function.as_ref()).and_then(Value::as_str).map(str::to_owned);
            b.result_with_images(call_id, hint, text, error.is_some(), images);
        }
        "function" => {
            let name = m.name.as_ref().and_then(Value::as_str).unwrap_or("").to_owned();
            let (text, _) = content(b, m.content, at, None)?;
            let call_id = b.anonymous_result_id(&name).unwrap_or_else(|| format!("{name}#?"));
            b.result(call_id, Some(name), text, false);
        }
        other => {
            return Err(format!(
                "{at}: unknown role `{other}` (expected system, developer, user, assistant, tool or function)"
            ));
        }
    }
    Ok(())
}

fn assistant(b: &mut Builder, m: Message, at: &str, calls: Calls) -> Result<(), String> {
    if calls == Calls::BeforeEachAssistant {
        b.request();
    }
    let mut thinking = Vec::new();
    for reasoning in [m.reasoning_content, m.reasoning] {
        if let Some(Value::String(s)) = reasoning {
            thinking.push(s);
        }
    }
    let (text, _) = content(b, m.content, at, Some(&mut thinking))?;
    for t in thinking {
        b.text(|text| Item::Thinking { text }, t);
    }
    b.text(|text| Item::Assistant { text }, text);
    match &m.tool_calls {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            for (k, call) in list.iter().enumerate() {
                let at = format!("{at}.tool_calls[{k}]");
                let id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("{at}: a tool call needs a string `id`"))?;
                let (name, arguments) = match call.get("function") {
                    Some(Value::Object(f)) => (
                        f.get("name").and_then(Value::as_str).unwrap_or(""),
                        f.get("arguments").map(json_text).unwrap_or_default(),
                    ),
                    // Inspect: `function` is the name, `arguments` an object beside it.
                    Some(Value::String(name)) => {
                        (name.as_str(), call.get("arguments").map(json_text).unwrap_or_default())
                    }
                    _ => return Err(format!("{at}: a tool call needs `function` (`{{name, arguments}}`)")),
                };
                b.call(id.to_owned(), name.to_owned(), arguments);
            }
        }
        Some(other) => return Err(format!("{at}.tool_calls: expected an array, found {}", kind_of(other))),
    }
    if let Some(f) = m.function_call.as_ref().filter(|f| f.is_object()) {
        b.anonymous_call(
            str_field(f, "name").to_owned(),
            f.get("arguments").map(json_text).unwrap_or_default(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::with_head;
    use crate::model::{Output, ToolResult};

    fn read(text: &str) -> Result<Trace, TraceError> {
        OpenAiChat.read(&mut text.as_bytes(), Path::new("c.json"))
    }

    fn detects(name: &str, text: &str) -> bool {
        with_head(Path::new(name), text.as_bytes(), true, |h| OpenAiChat.detect(h))
    }

    const PARALLEL: &str = r#"[
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "weather?"}, {"type": "image_url", "image_url": {"url": "x"}}]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "time", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "noon"},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "sunny"}]},
        {"role": "assistant", "content": "Sunny at noon."}
    ]"#;

    #[test]
    fn parallel_calls_are_one_request_and_results_take_their_call_names() {
        let t = read(PARALLEL).unwrap();
        let c = &t.conversations[0];
        assert_eq!((c.requests(), c.tool_results()), (2, 2));
        assert!(matches!(&c.items[1], Item::User { text, images: 1, .. } if text == "weather?"));
        // The image's URL holds no size and the list names no model: 1024 × 1024 on gpt-4o.
        assert_eq!(c.items[2], Item::Unseen { kind: crate::model::UnseenKind::Image, tokens: 765 });
        assert!(matches!(c.items[3], Item::Request(_)));
        let results: Vec<(&str, Option<&str>, String)> = c
            .items
            .iter()
            .filter_map(|i| match i {
                Item::ToolResult(ToolResult { call_id, name, output, .. }) => {
                    Some((call_id.as_str(), name.as_deref(), output.full_text().into_owned()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(results, [("c2", Some("time"), "noon".into()), ("c1", Some("weather"), "sunny".into())]);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn a_request_body_counts_its_tools_as_system_text_and_is_one_more_call() {
        let t = read(r#"{"model": "gpt-4o", "tools": [{"type": "function", "function": {"name": "f"}}],
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "bye"}]}"#)
        .unwrap();
        let c = &t.conversations[0];
        assert!(
            matches!(&c.items[0], Item::System { text } if text == r#"[{"function":{"name":"f"},"type":"function"}]"#)
        );
        assert_eq!(c.requests(), 2);
        assert!(matches!(c.items.last(), Some(Item::Request(_))));
    }

    #[test]
    fn trajectories_are_conversations_of_their_own() {
        let t = read(r#"[{"task_id": 3, "trial": 0, "reward": 1.0, "info": {}, "traj": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]},
                         {"task_id": 3, "trial": 1, "reward": 0.0, "info": {}, "traj": [{"role": "user", "content": "c"}]}]"#)
        .unwrap();
        let ids: Vec<&str> = t.conversations.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["task-3/trial-0", "task-3/trial-1"]);
        assert_eq!(t.conversations[0].requests(), 1);
    }

    #[test]
    fn inspect_style_calls_and_errors_are_read() {
        let t = read(r#"[{"role": "assistant", "content": [{"type": "reasoning", "reasoning": "think"}, {"type": "text", "text": "run"}],
                          "tool_calls": [{"id": "b1", "function": "bash", "arguments": {"cmd": "ls"}}]},
                         {"role": "tool", "tool_call_id": "b1", "function": "bash", "content": "", "error": {"type": "timeout", "message": "timed out"}}]"#)
        .unwrap();
        let items = &t.conversations[0].items;
        assert!(matches!(&items[1], Item::Thinking { text } if text == "think"));
        assert!(matches!(&items[3], Item::ToolCall { arguments, .. } if arguments == r#"{"cmd":"ls"}"#));
        let Item::ToolResult(r) = &items[4] else { panic!("{items:?}") };
        assert!(r.is_error);
        assert_eq!(r.output, Output::Raw { output: "Error: timed out".into() });
    }

    #[test]
    fn errors_name_the_message_path() {
        let e = read(r#"[{"task_id": 1, "trial": 0, "reward": 0, "traj": [{"role": "user", "content": "a"}, {"role": "tool", "content": "x"}]}]"#)
            .unwrap_err();
        assert_eq!(e.to_string(), "c.json: [0].traj[1]: a tool message needs a string `tool_call_id`");
        let e = read(r#"[{"role": "robot", "content": "a"}]"#).unwrap_err();
        assert!(e.to_string().starts_with("c.json: [0]: unknown role `robot`"), "{e}");
        let e = read("[{\"role\": \"user\",\n \"content\": }]").unwrap_err();
        assert!(e.to_string().starts_with("c.json:2: invalid JSON"), "{e}");
    }

    #[test]
    fn messages_are_read_as_a_value_map_reads_them() {
        // Unknown fields of any shape are skipped; a key given twice keeps its last value; an
        // escaped key is its text; `name: null` hides `function` as `Value::get` did.
        let t = read(
            r#"[{"role": "user", "content": "first", "meta": {"a": [1, {"b": null}]}, "content": "second"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c", "name": null, "function": "g", "content": "out"}]"#,
        )
        .unwrap();
        let items = &t.conversations[0].items;
        assert!(matches!(&items[0], Item::User { text, .. } if text == "second"), "{items:?}");
        let Some(Item::ToolResult(r)) = items.last() else { panic!("{items:?}") };
        assert_eq!((r.call_id.as_str(), r.name.as_deref()), ("c", Some("f")));
        // Through the `Value` path too (request bodies, cassettes, Inspect): with no call to
        // name the result, the hint names it, and `name: null` hides `function`.
        let name = |json: &str| {
            let mut b = Builder::default();
            message(&mut b, &serde_json::from_str(json).unwrap(), "", Calls::None).unwrap();
            let Some(Item::ToolResult(r)) = b.take_items().pop() else { panic!("{json}") };
            r.name
        };
        assert_eq!(
            name(r#"{"role": "tool", "tool_call_id": "c", "function": "g", "content": "x"}"#).as_deref(),
            Some("g")
        );
        assert_eq!(
            name(r#"{"role": "tool", "tool_call_id": "c", "name": null, "function": "g", "content": "x"}"#),
            None
        );
    }

    #[test]
    fn elements_that_are_not_messages_or_trajectories_are_errors_naming_them() {
        let e = read(r#"[{"role": "user", "content": "a"}, 5]"#).unwrap_err();
        assert_eq!(e.to_string(), "c.json: [1]: a message needs a string `role`");
        let e = read(r#"[{"task_id": 1, "trial": 0, "traj": {"role": "user"}}]"#).unwrap_err();
        assert_eq!(e.to_string(), "c.json: [0]: a trajectory needs a `traj` array of messages");
        let e = read(r#"[{"task_id": 1, "trial": 0, "traj": []}, {"task_id": 2}]"#).unwrap_err();
        assert_eq!(e.to_string(), "c.json: [1]: a trajectory needs a `traj` array of messages");
        let e = read(r#"[{"traj": [{"role": "user", "content": 5}]}]"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "c.json: [0].traj[0].content: expected null, a string or a list of parts, found a number"
        );
        let e = read("7").unwrap_err();
        assert!(e.to_string().ends_with("request body object, found a number"), "{e}");
        assert_eq!(read("[]").unwrap().conversations[0].items.len(), 0);
    }

    #[test]
    fn detects_chat_shapes_only() {
        assert!(detects("a.json", PARALLEL));
        assert!(detects("a.json", r#"[{"role": "user", "content": "hi"}]"#));
        assert!(detects("a.json", r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#));
        assert!(detects(
            "a.json",
            r#"[{"task_id": 0, "reward": 1, "trial": 0, "traj": [{"role": "system", "content": "x"}]}]"#
        ));
        // Anthropic, Responses, other agents' documents.
        assert!(!detects(
            "a.json",
            r#"{"model": "m", "system": "s", "messages": [{"role": "user", "content": "hi"}]}"#
        ));
        assert!(!detects(
            "a.json",
            r#"[{"role": "user", "content": "hi"}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]"#
        ));
        assert!(!detects(
            "a.json",
            r#"{"messages": [{"role": "user", "content": "x"}], "trajectory_format": "mini-swe-agent-1"}"#
        ));
        assert!(!detects(
            "a.json",
            r#"{"info": {"mini_version": "1"}, "messages": [{"role": "user", "content": "x"}]}"#
        ));
        assert!(!detects("a.traj.json", r#"[{"role": "user", "content": "x"}]"#));
        assert!(!detects("a.json", r#"[{"role": "user", "content": "<returncode>0</returncode>"}]"#));
        assert!(!detects("a.json", r#"{"sessionId": "s", "messages": [{"type": "user", "content": "x"}]}"#));
        assert!(!detects("a.json", r#"{"trajectory": [], "history": [{"role": "user", "content": "x"}]}"#));
        assert!(!detects("a.json", r#"[{"id": 0, "source": "user", "action": "message", "args": {}}]"#));
        assert!(!detects("a.jsonl", "{\"type\":\"user\",\"text\":\"hi\"}\n"));
    }
}
