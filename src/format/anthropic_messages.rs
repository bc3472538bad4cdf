//! `anthropic-messages`: Anthropic Messages API request bodies (`FORMATS.md` §5 of the shared
//! corpus; <https://docs.anthropic.com/en/api/messages>).
//!
//! A file is one JSON request body `{model, max_tokens, system?, tools?, messages: [...]}` (one
//! conversation, `main`), or a bare `messages` array whose blocks are Anthropic's.
//!
//! - `tools` are sent with every request: counted once as system text (the compact JSON of the
//!   array) before everything else, as Anthropic renders tools before the system prompt. The
//!   provider's own rendering differs, so the count is a proxy.
//! - `system` is a string or a list of `text` blocks (joined with `\n`).
//! - `messages[].content` is a string or a list of blocks. Assistant blocks: `text`, `thinking`
//!   (its `thinking` text), `tool_use{id, name, input}` (the input as compact JSON); user blocks:
//!   `text`, `image`/`document` (counted), `tool_result{tool_use_id, content, is_error}` whose
//!   content is a string or `text`/`image` blocks. All results of parallel calls sit in one user
//!   message; each links to its call by `tool_use_id` == `tool_use.id` and takes its name.
//!   Adjacent text blocks of one message become one item. `redacted_thinking` (encrypted) and
//!   server-tool blocks are counted in a warning, not replayed.
//!
//! **Request boundaries:** an LLM call produced each assistant message, so a boundary sits before
//! each one; the body is itself one more call, so a boundary follows its last message. A request
//! body records no usage. The converter is shared with [`cassette`](super::cassette).

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::openai_chat::key_path;
use super::wire::{self, Builder, Calls, Family, json_text, kind_of, str_field};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Trace};

/// Anthropic Messages request bodies.
pub struct AnthropicMessages;

impl Format for AnthropicMessages {
    fn name(&self) -> &'static str {
        "anthropic-messages"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        match head.document() {
            Some(Value::Object(body)) => wire::classify_body(body) == Some(Family::Anthropic),
            Some(Value::Array(messages)) => wire::classify(messages) == Some(Family::Anthropic),
            _ => false,
        }
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let doc = wire::read_document(input, path)?;
        let fail = |message: String| TraceError::content(path, message);
        let mut b = Builder::default();
        match &doc {
            Value::Object(_) => {
                body(&mut b, &doc, "", Calls::BeforeEachAssistant).map_err(fail)?;
                b.request();
            }
            Value::Array(list) => messages(&mut b, list, "", Calls::BeforeEachAssistant).map_err(fail)?,
            other => return Err(fail(format!("expected a request body object, found {}", kind_of(other)))),
        }
        let warnings = b.warnings("");
        let mut conversation =
            Conversation { id: "main".into(), items: b.take_items(), recorded_total: None };
        conversation.name_model(doc.get("model").and_then(Value::as_str));
        Ok(Trace { format: self.name(), conversations: vec![conversation], warnings })
    }
}

/// A request body: tools, system, messages.
pub(crate) fn body(b: &mut Builder, body: &Value, at: &str, calls: Calls) -> Result<(), String> {
    super::openai_chat::tools(b, body.get("tools"));
    match body.get("system") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => b.text(|text| Item::System { text }, s.clone()),
        Some(Value::Array(blocks)) => {
            let texts: Vec<&str> = blocks.iter().map(|x| str_field(x, "text")).collect();
            b.text(|text| Item::System { text }, texts.join("\n"));
        }
        Some(other) => {
            return Err(format!(
                "{}: expected a string or text blocks, found {}",
                key_path(at, "system"),
                kind_of(other)
            ));
        }
    }
    let at = key_path(at, "messages");
    let list = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{at}: a request body needs a `messages` array"))?;
    messages(b, list, &at, calls)
}

/// A list of messages.
pub(crate) fn messages(b: &mut Builder, list: &[Value], at: &str, calls: Calls) -> Result<(), String> {
    for (i, m) in list.iter().enumerate() {
        let at = format!("{at}[{i}]");
        match m.get("role").and_then(Value::as_str) {
            Some("user") => user(b, m.get("content"), &at)?,
            Some("assistant") => {
                if calls == Calls::BeforeEachAssistant {
                    b.request();
                }
                assistant(b, m.get("content"), &at)?;
            }
            Some(other) => return Err(format!("{at}: unknown role `{other}` (expected user or assistant)")),
            None => return Err(format!("{at}: a message needs a string `role`")),
        }
    }
    Ok(())
}

fn blocks<'a>(content: Option<&'a Value>, at: &str) -> Result<Option<&'a [Value]>, String> {
    match content {
        Some(Value::Array(list)) => Ok(Some(list)),
        Some(Value::String(_)) => Ok(None),
        Some(other) => {
            Err(format!("{at}.content: expected a string or a list of blocks, found {}", kind_of(other)))
        }
        None => Err(format!("{at}: a message needs `content`")),
    }
}

pub(crate) fn user(b: &mut Builder, content: Option<&Value>, at: &str) -> Result<(), String> {
    let Some(list) = blocks(content, at)? else {
        b.push(Item::User { text: json_text(content.unwrap_or(&Value::Null)), meta: false, images: 0 });
        return Ok(());
    };
    let mut text: Vec<&str> = Vec::new();
    let mut images = 0u32;
    let flush = |b: &mut Builder, text: &mut Vec<&str>, images: &mut u32| {
        if !text.is_empty() || *images > 0 {
            b.push(Item::User { text: text.join("\n"), meta: false, images: *images });
        }
        text.clear();
        *images = 0;
    };
    for (k, block) in list.iter().enumerate() {
        match str_field(block, "type") {
            "text" => text.push(str_field(block, "text")),
            "image" | "document" => images += 1,
            "tool_result" => {
                flush(b, &mut text, &mut images);
                let call_id = block.get("tool_use_id").and_then(Value::as_str).ok_or_else(|| {
                    format!("{at}.content[{k}]: a tool_result needs a string `tool_use_id`")
                })?;
                let (output, result_images) = result_content(b, block.get("content"));
                let is_error = block.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                b.result_with_images(call_id.to_owned(), None, output, is_error, result_images);
            }
            other => b.note(format!("user `{other}` block(s) not replayed (unknown block type)")),
        }
    }
    flush(b, &mut text, &mut images);
    Ok(())
}

/// A tool result's text (string, or `text` blocks joined with `\n`) and its image count.
fn result_content(b: &mut Builder, content: Option<&Value>) -> (String, u32) {
    match content {
        Some(Value::Array(list)) => {
            let mut texts = Vec::new();
            let mut images = 0;
            for block in list {
                match str_field(block, "type") {
                    "text" => texts.push(str_field(block, "text")),
                    "image" | "document" => images += 1,
                    other => {
                        b.note(format!("tool_result `{other}` block(s) not replayed (unknown block type)"))
                    }
                }
            }
            (texts.join("\n"), images)
        }
        Some(v) => (json_text(v), 0),
        None => (String::new(), 0),
    }
}

/// An assistant message's blocks (also a response `Message`'s `content`).
pub(crate) fn assistant(b: &mut Builder, content: Option<&Value>, at: &str) -> Result<(), String> {
    let Some(list) = blocks(content, at)? else {
        b.text(|text| Item::Assistant { text }, json_text(content.unwrap_or(&Value::Null)));
        return Ok(());
    };
    let mut text: Vec<&str> = Vec::new();
    for (k, block) in list.iter().enumerate() {
        let kind = str_field(block, "type");
        if kind != "text" && !text.is_empty() {
            b.push(Item::Assistant { text: text.join("\n") });
            text.clear();
        }
        match kind {
            "text" => text.push(str_field(block, "text")),
            "thinking" => b.text(|text| Item::Thinking { text }, str_field(block, "thinking").to_owned()),
            "tool_use" => {
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("{at}.content[{k}]: a tool_use needs a string `id`"))?;
                let arguments = block.get("input").map(Value::to_string).unwrap_or_default();
                b.call(id.to_owned(), str_field(block, "name").to_owned(), arguments);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::with_head;
    use crate::model::{Output, ToolResult};

    const BODY: &str = r#"{
      "model": "claude-haiku-4-5", "max_tokens": 4096,
      "system": [{"type": "text", "text": "be brief"}],
      "tools": [{"name": "lookup", "description": "d", "input_schema": {"type": "object"}}],
      "messages": [
        {"role": "user", "content": "who?"},
        {"role": "assistant", "content": [
          {"type": "thinking", "thinking": "two lookups", "signature": "s"},
          {"type": "text", "text": "Looking up."},
          {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"name": "A"}},
          {"type": "tool_use", "id": "t2", "name": "lookup", "input": {"name": "B"}}]},
        {"role": "user", "content": [
          {"type": "tool_result", "tool_use_id": "t1", "content": "a"},
          {"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": [{"type": "text", "text": "b"}, {"type": "image", "source": {}}]},
          {"type": "text", "text": "and?"}]}
      ]}"#;

    fn read(text: &str) -> Result<Trace, TraceError> {
        AnthropicMessages.read(&mut text.as_bytes(), Path::new("b.json"))
    }

    fn detects(text: &str) -> bool {
        with_head(Path::new("b.json"), text.as_bytes(), true, |h| AnthropicMessages.detect(h))
    }

    #[test]
    fn a_body_reads_tools_system_blocks_and_parallel_results() {
        let t = read(BODY).unwrap();
        let c = &t.conversations[0];
        let kinds = crate::format::shared::testing::kinds(&c.items);
        assert_eq!(
            kinds,
            [
                "system",
                "system",
                "user",
                "request",
                "thinking",
                "assistant",
                "call",
                "call",
                "result",
                "result",
                "user",
                "request"
            ]
        );
        let Item::ToolResult(ToolResult { name, output, is_error, images, .. }) = &c.items[9] else {
            panic!()
        };
        assert_eq!((name.as_deref(), is_error, images), (Some("lookup"), &true, &1));
        assert_eq!(output, &Output::Raw { output: "b".into() });
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn unknown_blocks_are_warned_and_errors_name_the_block() {
        let t = read(r#"{"messages": [{"role": "assistant", "content": [{"type": "redacted_thinking", "data": "x"}]}], "system": "s"}"#).unwrap();
        assert_eq!(
            t.warnings,
            ["1 assistant `redacted_thinking` block(s) not replayed (unknown or encrypted block type)"]
        );
        let e =
            read(r#"{"system": "s", "messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}"#)
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.json: messages[0].content[0]: a tool_result needs a string `tool_use_id`"
        );
    }

    #[test]
    fn detects_anthropic_bodies_only() {
        assert!(detects(BODY));
        assert!(detects(
            r#"[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]"#
        ));
        assert!(!detects(r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#));
        assert!(!detects(
            r#"{"model": "m", "messages": [{"role": "tool", "tool_call_id": "c", "content": "x"}], "system": "s"}"#
        ));
        assert!(!detects(
            r#"{"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use"}]}}"#
        ));
        assert!(!detects(
            r#"{"sessionId": "s", "messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}"#
        ));
    }
}
