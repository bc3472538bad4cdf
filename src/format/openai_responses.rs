//! `openai-responses`: OpenAI Responses API items (`FORMATS.md` §6 of the shared corpus;
//! <https://platform.openai.com/docs/api-reference/responses>).
//!
//! A file is one JSON document: an array of items, a request body `{model, instructions?, tools?,
//! input: string | [items]}`, or a response body `{object: "response", output: [items], usage}`.
//! One conversation, `main`.
//!
//! Items: `message{role, content}` (also written without `type`; content a string or parts
//! `input_text`/`output_text`/`refusal`, images counted and sized) is system (`system`/`developer`), user or
//! assistant text; `reasoning{summary[]}` is thinking (its summary texts; `encrypted_content` is
//! opaque and not counted); `function_call{call_id, name, arguments}` and
//! `custom_tool_call{call_id, name, input}` are calls; `function_call_output{call_id, output}` and
//! `custom_tool_call_output` their results, **linked by `call_id`** (`id` is the item's own id).
//! Other built-in tool items follow the same rule: `*_call` is a call (named after its `name`, or
//! its type without `_call`; arguments = `arguments`, `input` or `action`), `*_call_output` its
//! result; a call without `call_id` (e.g. `web_search_call`, whose results stay server-side) is a
//! call under its `id` with no result. `item_reference` items are noted, not replayed.
//!
//! **Request boundaries:** an LLM call produced each run of consecutive model output items
//! (reasoning, assistant message, calls), so a boundary sits before each such run. A request body
//! is one more call: a boundary follows its input. A response body is one call whose boundary
//! precedes its output and carries its `usage` (`input_tokens`; cached is a subset).
//! `instructions` are system text; `tools` are sent with every request and counted once as system
//! text (compact JSON), a proxy for the provider's rendering.
//!
//! **Images.** The `input_image` parts of an item (a message, or a call output given as parts) are
//! followed by one image item ([`Item::Unseen`]) sized by OpenAI's rule for the model of the
//! request that sends them (the body's `model`; none named: the gpt-4o rule), from the dimensions
//! of a `data:` URL's image and the part's `detail` (`crate::unseen::openai`; a URL or `file_id`
//! counts as a 1024 × 1024 image). An `input_file` part is counted, not sized. The converter is shared with
//! [`cassette`](super::cassette).

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::openai_chat::key_path;
use super::wire::{self, Builder, Calls, Family, RESPONSES_ITEM_TYPES, json_text, kind_of, str_field};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Request, Trace};

/// OpenAI Responses items, request bodies and response bodies.
pub struct OpenAiResponses;

/// Whether an object is a Responses request body (`input`) or response body (`output` items).
fn is_body(o: &serde_json::Map<String, Value>) -> bool {
    if o.contains_key("messages") || wire::is_foreign(o) {
        return false;
    }
    match (o.get("input"), o.get("output")) {
        (Some(Value::String(_)), _) => o.contains_key("model"),
        (Some(Value::Array(items)), _) => {
            matches!(wire::classify(items), Some(Family::Responses | Family::Plain))
        }
        (None, Some(Value::Array(items))) => {
            o.get("object").and_then(Value::as_str) == Some("response")
                || (!items.is_empty() && wire::classify(items) == Some(Family::Responses))
        }
        _ => false,
    }
}

impl Format for OpenAiResponses {
    fn name(&self) -> &'static str {
        "openai-responses"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        match head.document() {
            Some(Value::Array(items)) => wire::classify(items) == Some(Family::Responses),
            Some(Value::Object(o)) => is_body(o),
            _ => false,
        }
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let doc = wire::read_document(input, path)?;
        let fail = |message: String| TraceError::content(path, message);
        let mut b = Builder::default();
        b.size_openai_images(doc.get("model").and_then(Value::as_str));
        let mut warnings = Vec::new();
        match &doc {
            Value::Array(list) => items(&mut b, list, "", Calls::BeforeEachAssistant).map_err(fail)?,
            Value::Object(o) if o.contains_key("input") => {
                body(&mut b, &doc, "", Calls::BeforeEachAssistant).map_err(fail)?;
                b.request();
            }
            Value::Object(o) if o.contains_key("output") => {
                let mut request = Request {
                    id: o.get("id").and_then(Value::as_str).map(str::to_owned),
                    model: o.get("model").and_then(Value::as_str).map(str::to_owned),
                    ..Default::default()
                };
                match wire::usage_of_response(&doc) {
                    Some(Ok(u)) => request.usage = Some(u),
                    Some(Err(why)) => warnings.push(format!("usage: {why}")),
                    None => {}
                }
                b.push(Item::Request(request));
                response(&mut b, &doc, "").map_err(fail)?;
            }
            Value::Object(_) => {
                return Err(fail(
                    "the object has neither `input` (a request body) nor `output` (a response body)".into(),
                ));
            }
            other => {
                return Err(fail(format!(
                    "expected an array of items, a request body or a response body, found {}",
                    kind_of(other)
                )));
            }
        }
        warnings.extend(b.warnings(""));
        let conversation = Conversation { id: "main".into(), items: b.take_items(), recorded_total: None };
        Ok(Trace { format: self.name(), conversations: vec![conversation], warnings })
    }
}

/// A request body: tools, instructions, then `input` (a string is one user message).
pub(crate) fn body(b: &mut Builder, body: &Value, at: &str, calls: Calls) -> Result<(), String> {
    b.size_openai_images(body.get("model").and_then(Value::as_str));
    super::openai_chat::tools(b, body.get("tools"));
    if let Some(Value::String(s)) = body.get("instructions") {
        b.text(|text| Item::System { text }, s.clone());
    }
    let at = key_path(at, "input");
    match body.get("input") {
        Some(Value::String(s)) => {
            b.push(Item::User { text: s.clone(), meta: false, images: 0 });
            Ok(())
        }
        Some(Value::Array(list)) => items(b, list, &at, calls),
        Some(other) => Err(format!("{at}: expected a string or an array of items, found {}", kind_of(other))),
        None => Err(format!("{at}: a request body needs `input`")),
    }
}

/// A response body's `output` items (no boundary: the caller places it).
pub(crate) fn response(b: &mut Builder, body: &Value, at: &str) -> Result<(), String> {
    let at = key_path(at, "output");
    let list = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{at}: expected an array of items"))?;
    items(b, list, &at, Calls::None)
}

/// Whether an item was produced by the model.
fn is_model_item(item: &Value, kind: &str) -> bool {
    match kind {
        "message" => str_field(item, "role") == "assistant",
        "reasoning" => true,
        k => k.ends_with("_call") || k == "mcp_list_tools",
    }
}

/// A list of items.
pub(crate) fn items(b: &mut Builder, list: &[Value], at: &str, calls: Calls) -> Result<(), String> {
    let mut in_model_run = false;
    for (i, item) in list.iter().enumerate() {
        let at = format!("{at}[{i}]");
        if !item.is_object() {
            return Err(format!("{at}: expected an item object, found {}", kind_of(item)));
        }
        // Input messages may omit `type` (EasyInputMessage).
        let kind = match item.get("type").and_then(Value::as_str) {
            Some(k) => k,
            None if item.get("role").is_some() => "message",
            None => return Err(format!("{at}: an item needs a `type` (or a `role` for a message)")),
        };
        let model = is_model_item(item, kind);
        if model && !in_model_run && calls == Calls::BeforeEachAssistant {
            b.request();
        }
        in_model_run = model;
        one(b, item, kind, &at)?;
        b.images_item();
    }
    Ok(())
}

fn one(b: &mut Builder, item: &Value, kind: &str, at: &str) -> Result<(), String> {
    let call_id = |key: &str| -> Result<String, String> {
        item.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("{at}: a `{kind}` item needs a string `{key}`"))
    };
    match kind {
        "message" => message(b, item, at)?,
        "reasoning" => {
            let summary: Vec<&str> = item
                .get("summary")
                .and_then(Value::as_array)
                .map(|parts| parts.iter().map(|p| str_field(p, "text")).collect())
                .unwrap_or_default();
            let content: Vec<&str> = item
                .get("content")
                .and_then(Value::as_array)
                .map(|parts| parts.iter().map(|p| str_field(p, "text")).collect())
                .unwrap_or_default();
            let text =
                summary.into_iter().chain(content).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n");
            b.text(|text| Item::Thinking { text }, text);
        }
        "function_call" | "custom_tool_call" => {
            let arguments =
                item.get("arguments").or_else(|| item.get("input")).map(json_text).unwrap_or_default();
            b.call(call_id("call_id")?, str_field(item, "name").to_owned(), arguments);
        }
        "item_reference" => {
            b.note("`item_reference` item(s) not replayed (the referenced item is stored server-side)")
        }
        k if k.ends_with("_call_output") => {
            let (output, images) = match item.get("output") {
                Some(Value::Array(parts)) => output_parts(b, parts),
                Some(v) => (json_text(v), 0),
                None => (String::new(), 0),
            };
            b.result_with_images(call_id("call_id")?, None, output, false, images);
        }
        k if k.ends_with("_call") => {
            let id = call_id("call_id").or_else(|_| call_id("id"))?;
            let name =
                item.get("name").and_then(Value::as_str).unwrap_or_else(|| k.trim_end_matches("_call"));
            let arguments = ["arguments", "input", "action", "code"]
                .iter()
                .find_map(|key| item.get(*key))
                .map(json_text)
                .unwrap_or_default();
            b.call(id, name.to_owned(), arguments);
        }
        other if RESPONSES_ITEM_TYPES.contains(&other) => b.note(format!("`{other}` item(s) not replayed")),
        other => b.note(format!("`{other}` item(s) not replayed (unknown item type)")),
    }
    Ok(())
}

fn message(b: &mut Builder, item: &Value, at: &str) -> Result<(), String> {
    let (text, images) = match item.get("content") {
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(parts)) => parts_text(b, parts),
        Some(Value::Null) | None => (String::new(), 0),
        Some(other) => {
            return Err(format!(
                "{at}.content: expected a string or a list of parts, found {}",
                kind_of(other)
            ));
        }
    };
    push_message(b, str_field(item, "role"), text, images).map_err(|e| format!("{at}: {e}"))
}

/// A message's list of content parts as the Responses API writes them: the text of its text and
/// refusal parts, one per line, and how many images and files it carries; a part of another type
/// is noted as not replayed.
pub(crate) fn parts_text(b: &mut Builder, parts: &[Value]) -> (String, u32) {
    let mut texts = Vec::new();
    let mut images = 0;
    for part in parts {
        match str_field(part, "type") {
            "input_text" | "output_text" | "text" => texts.push(str_field(part, "text")),
            "refusal" => texts.push(str_field(part, "refusal")),
            "input_image" => {
                images += 1;
                b.image_part(part);
            }
            "input_file" => images += 1,
            other => b.note(format!("`{other}` content part(s) not replayed (unknown part type)")),
        }
    }
    (texts.join("\n"), images)
}

/// A call output given as a list of parts: the text of its parts, one per line, and its
/// `input_image` parts (noted for sizing).
fn output_parts(b: &mut Builder, parts: &[Value]) -> (String, u32) {
    let mut images = 0;
    for part in parts.iter().filter(|p| str_field(p, "type") == "input_image") {
        images += 1;
        b.image_part(part);
    }
    let text = parts.iter().map(|p| str_field(p, "text")).filter(|t| !t.is_empty()).collect::<Vec<_>>();
    (text.join("\n"), images)
}

/// Adds a message of `role` with its text and images: system and developer text as the system
/// prompt, a user message unless it is empty, assistant text; another role is an error.
pub(crate) fn push_message(b: &mut Builder, role: &str, text: String, images: u32) -> Result<(), String> {
    match role {
        "system" | "developer" => b.text(|text| Item::System { text }, text),
        "user" => {
            if !text.is_empty() || images > 0 {
                b.push(Item::User { text, meta: false, images });
            }
        }
        "assistant" => b.text(|text| Item::Assistant { text }, text),
        other => {
            return Err(format!(
                "unknown message role `{other}` (expected system, developer, user or assistant)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::with_head;
    use crate::model::ToolResult;

    fn read(text: &str) -> Result<Trace, TraceError> {
        OpenAiResponses.read(&mut text.as_bytes(), Path::new("r.json"))
    }

    fn detects(text: &str) -> bool {
        with_head(Path::new("r.json"), text.as_bytes(), true, |h| OpenAiResponses.detect(h))
    }

    const ITEMS: &str = r#"[
      {"role": "user", "content": "where?"},
      {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "two places"}], "encrypted_content": "xx"},
      {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "locate", "arguments": "{\"q\":\"A\"}"},
      {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_b", "name": "apply_patch", "input": "*** Begin Patch"},
      {"type": "function_call_output", "call_id": "call_a", "output": "51,0"},
      {"type": "custom_tool_call_output", "call_id": "call_b", "output": "Done"},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Found."}]}
    ]"#;

    #[test]
    fn items_link_by_call_id_and_each_model_run_is_one_request() {
        let t = read(ITEMS).unwrap();
        let c = &t.conversations[0];
        assert_eq!((c.requests(), c.tool_results()), (2, 2));
        assert!(matches!(c.items[1], Item::Request(_)));
        assert!(matches!(&c.items[2], Item::Thinking { text } if text == "two places"));
        let names: Vec<(&str, Option<&str>)> = c
            .items
            .iter()
            .filter_map(|i| match i {
                Item::ToolResult(ToolResult { call_id, name, .. }) => {
                    Some((call_id.as_str(), name.as_deref()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(names, [("call_a", Some("locate")), ("call_b", Some("apply_patch"))]);
        assert!(matches!(c.items[7], Item::Request(_)));
    }

    #[test]
    fn a_response_body_is_one_request_with_its_usage() {
        let t = read(r#"{"object": "response", "id": "resp_1", "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}],
            "usage": {"input_tokens": 335, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 44}}"#)
        .unwrap();
        let Item::Request(r) = &t.conversations[0].items[0] else { panic!() };
        assert_eq!(r.usage.map(|u| u.input_tokens), Some(335));
        assert_eq!(r.id.as_deref(), Some("resp_1"));
    }

    #[test]
    fn a_request_body_reads_instructions_and_a_string_input() {
        let t = read(r#"{"model": "gpt-4o", "instructions": "be brief", "input": "hi"}"#).unwrap();
        let c = &t.conversations[0];
        assert!(matches!(&c.items[0], Item::System { text } if text == "be brief"));
        assert_eq!(c.requests(), 1);
    }

    #[test]
    fn errors_name_the_item() {
        let e = read(r#"[{"type": "function_call_output", "output": "x"}]"#).unwrap_err();
        assert_eq!(e.to_string(), "r.json: [0]: a `function_call_output` item needs a string `call_id`");
    }

    #[test]
    fn detects_responses_items_only() {
        assert!(detects(ITEMS));
        assert!(detects(r#"{"model": "gpt-4o", "input": [{"role": "user", "content": "hi"}]}"#));
        assert!(detects(r#"{"object": "response", "output": []}"#));
        assert!(!detects(r#"[{"role": "user", "content": "hi"}]"#));
        assert!(!detects(r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#));
        assert!(!detects(
            r#"{"timestamp": "t", "type": "response_item", "payload": {"type": "function_call"}}"#
        ));
        assert!(!detects("{\"type\":\"response_item\",\"payload\":{}}\n{\"type\":\"event_msg\"}\n"));
    }
}
