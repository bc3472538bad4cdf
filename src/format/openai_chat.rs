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
        let doc = wire::read_document(input, path)?;
        let mut trace = Trace { format: self.name(), ..Default::default() };
        let fail = |message: String| TraceError::content(path, message);
        match &doc {
            Value::Array(elements) if elements.first().is_some_and(|e| e.get("traj").is_some()) => {
                let mut seen = std::collections::BTreeSet::new();
                for (i, element) in elements.iter().enumerate() {
                    let at = format!("[{i}]");
                    let traj = element.get("traj").and_then(Value::as_array).ok_or_else(|| {
                        fail(format!("{at}: a trajectory needs a `traj` array of messages"))
                    })?;
                    let mut id = match (element.get("task_id"), element.get("trial")) {
                        (Some(task), Some(trial)) => {
                            format!("task-{}/trial-{}", json_text(task), json_text(trial))
                        }
                        _ => format!("traj-{i}"),
                    };
                    if !seen.insert(id.clone()) {
                        id = format!("{id}#{i}");
                    }
                    let mut b = Builder::default();
                    messages(&mut b, traj, &format!("{at}.traj"), Calls::BeforeEachAssistant)
                        .map_err(fail)?;
                    trace.warnings.extend(b.warnings(&at));
                    trace.conversations.push(Conversation {
                        id,
                        items: b.take_items(),
                        recorded_total: None,
                    });
                }
            }
            Value::Array(elements) => {
                let mut b = Builder::default();
                messages(&mut b, elements, "", Calls::BeforeEachAssistant).map_err(fail)?;
                trace.warnings.extend(b.warnings(""));
                trace.conversations.push(Conversation {
                    id: "main".into(),
                    items: b.take_items(),
                    recorded_total: None,
                });
            }
            Value::Object(_) => {
                let mut b = Builder::default();
                body(&mut b, &doc, "", Calls::BeforeEachAssistant).map_err(fail)?;
                b.request();
                trace.warnings.extend(b.warnings(""));
                trace.conversations.push(Conversation {
                    id: "main".into(),
                    items: b.take_items(),
                    recorded_total: None,
                });
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

/// Joins a JSON path and a key: `messages` under `a.b` is `a.b.messages`.
pub(crate) fn key_path(at: &str, key: &str) -> String {
    if at.is_empty() { key.to_owned() } else { format!("{at}.{key}") }
}

/// A request body: `tools` as system text, then `messages`.
pub(crate) fn body(b: &mut Builder, body: &Value, at: &str, calls: Calls) -> Result<(), String> {
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
    content: Option<&Value>,
    at: &str,
    mut thinking: Option<&mut Vec<String>>,
) -> Result<(String, u32), String> {
    match content {
        None | Some(Value::Null) => Ok((String::new(), 0)),
        Some(Value::String(s)) => Ok((s.clone(), 0)),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            let mut images = 0;
            for part in parts {
                match str_field(part, "type") {
                    "text" | "input_text" | "output_text" => texts.push(str_field(part, "text").to_owned()),
                    "refusal" => texts.push(str_field(part, "refusal").to_owned()),
                    "image_url" | "image" | "input_image" => images += 1,
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
        Some(other) => {
            Err(format!("{at}.content: expected null, a string or a list of parts, found {}", kind_of(other)))
        }
    }
}

/// One message.
pub(crate) fn message(b: &mut Builder, m: &Value, at: &str, calls: Calls) -> Result<(), String> {
    let role = m
        .get("role")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{at}: a message needs a string `role`"))?;
    match role {
        "system" | "developer" => {
            let (text, _) = content(b, m.get("content"), at, None)?;
            b.text(|text| Item::System { text }, text);
        }
        "user" => {
            let (text, images) = content(b, m.get("content"), at, None)?;
            if !text.is_empty() || images > 0 {
                b.push(Item::User { text, meta: false, images });
            }
        }
        "assistant" => assistant(b, m, at, calls)?,
        "tool" => {
            let call_id = m
                .get("tool_call_id")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{at}: a tool message needs a string `tool_call_id`"))?;
            let (mut text, images) = content(b, m.get("content"), at, None)?;
            // Inspect: a failed call is sent as "Error: <message>" (src/inspect_ai/model/_openai.py).
            let error = m.get("error").filter(|e| !e.is_null());
            if let Some(e) = error {
                text = format!("Error: {}", str_field(e, "message"));
            }
            let hint = m.get("name").or_else(|| m.get("function")).and_then(Value::as_str).map(str::to_owned);
            b.result_with_images(call_id.to_owned(), hint, text, error.is_some(), images);
        }
        "function" => {
            let name = str_field(m, "name");
            let (text, _) = content(b, m.get("content"), at, None)?;
            let call_id = b.anonymous_result_id(name).unwrap_or_else(|| format!("{name}#?"));
            b.result(call_id, Some(name.to_owned()), text, false);
        }
        other => {
            return Err(format!(
                "{at}: unknown role `{other}` (expected system, developer, user, assistant, tool or function)"
            ));
        }
    }
    Ok(())
}

fn assistant(b: &mut Builder, m: &Value, at: &str, calls: Calls) -> Result<(), String> {
    if calls == Calls::BeforeEachAssistant {
        b.request();
    }
    let mut thinking = Vec::new();
    for key in ["reasoning_content", "reasoning"] {
        if let Some(Value::String(s)) = m.get(key) {
            thinking.push(s.clone());
        }
    }
    let (text, _) = content(b, m.get("content"), at, Some(&mut thinking))?;
    for t in thinking {
        b.text(|text| Item::Thinking { text }, t);
    }
    b.text(|text| Item::Assistant { text }, text);
    match m.get("tool_calls") {
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
    if let Some(f) = m.get("function_call").filter(|f| f.is_object()) {
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
        assert!(matches!(c.items[2], Item::Request(_)));
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
