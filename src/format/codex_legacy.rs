//! `codex-legacy`: Codex CLI rollouts in the layout written before 0.40 (mid 2025; any
//! `~/.codex/sessions` older than September 2025 holds them). The current layout, where every line
//! is `{timestamp, type, payload}`, is read by [`codex`](super::codex).
//!
//! The first line is a bare header `{id, timestamp, instructions?, cwd?, model?, git?,
//! originator?, cli_version?}`; after it come `{"record_type": "state"}` markers (skipped) and bare
//! OpenAI Responses items with no wrapper and no time of their own (`message`, `reasoning`,
//! `function_call`, `function_call_output`, `local_shell_call`, …), converted by the rules of the
//! Responses importer ([`openai_responses`](super::openai_responses)): a request before each run
//! of model output items, calls linked to their outputs by `call_id`, each output the whole string
//! Codex sent (`{"output": …, "metadata": …}`). The header's `instructions`, when a string, are
//! system text. Each line is read into a typed record of the keys those rules use ([`Line`]), the
//! rest of it checked as JSON and skipped, and converted as it is read; an item those rules refuse
//! is an error naming its line.
//!
//! **Not recorded in this layout:** usage (token counts were not written to rollouts yet), so
//! there is nothing to reconcile; the base instructions when `instructions` is `null`; the time of
//! each request. A warning says so once per file.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::claude_code::Object;
use super::fields::{present, str_of, take_str};
use super::look_alike::LookAlike;
use super::openai_responses;
use super::read_json_lines_as;
use super::wire::{Builder, RESPONSES_ITEM_TYPES, kind_of};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Trace};

/// Keys of the bare header line.
const HEADER_KEYS: [&str; 8] =
    ["id", "timestamp", "instructions", "cwd", "model", "git", "originator", "cli_version"];

/// Codex CLI rollouts written before 0.40.
pub struct CodexLegacy;

impl Format for CodexLegacy {
    fn look_alike(&self) -> Option<LookAlike> {
        Some(LookAlike {
            record_keys: &["id", "timestamp", "instructions"],
            records_are: "the header of a Codex CLI rollout from before 0.40",
            ..LookAlike::NONE
        })
    }

    fn name(&self) -> &'static str {
        "codex-legacy"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let Some(line) = head.first_json_line.and_then(Value::as_object) else { return false };
        line.get("id").is_some_and(Value::is_string)
            && line.get("timestamp").is_some_and(Value::is_string)
            && line.keys().all(|k| HEADER_KEYS.contains(&k.as_str()))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut warnings = Vec::new();
        let mut b = Builder::default();
        let mut in_model_run = false;
        read_json_lines_as(input, path, &mut warnings, |line, l: Object<Line>| {
            let mut l = l.0.unwrap_or_default();
            if line == 1 || l.record_type.is_some() {
                if line == 1 {
                    b.text(|text| Item::System { text }, take_str(&mut l.instructions));
                }
                return Ok(());
            }
            let kind = match l.kind.take() {
                Some(Value::String(kind)) => kind,
                _ => {
                    return Err(TraceError::line(
                        path,
                        line,
                        "expected a Responses item with a string `type` (a pre-0.40 Codex rollout line)",
                    ));
                }
            };
            let model = l.is_model_item(&kind);
            if model && !in_model_run {
                b.request();
            }
            in_model_run = model;
            l.convert(&mut b, &kind).map_err(|e| TraceError::line(path, line, e))
        })?;
        warnings.extend(b.warnings(""));
        warnings.push(
            "a Codex rollout in the layout written before 0.40: it records no usage (nothing to reconcile) and \
             no time per request; a newer Codex writes both"
                .to_owned(),
        );
        let conversation = Conversation { id: "main".into(), items: b.take_items(), recorded_total: None };
        Ok(Trace { format: self.name(), conversations: vec![conversation], warnings })
    }
}

/// A line: the header's `instructions`, a state marker's `record_type`, or a Responses item's
/// keys, each as the JSON it holds.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Line {
    #[serde(deserialize_with = "present")]
    record_type: Option<Value>,
    #[serde(deserialize_with = "present")]
    instructions: Option<Value>,
    #[serde(rename = "type", deserialize_with = "present")]
    kind: Option<Value>,
    #[serde(deserialize_with = "present")]
    role: Option<Value>,
    #[serde(deserialize_with = "present")]
    content: Option<Value>,
    #[serde(deserialize_with = "present")]
    summary: Option<Value>,
    #[serde(deserialize_with = "present")]
    call_id: Option<Value>,
    #[serde(deserialize_with = "present")]
    id: Option<Value>,
    #[serde(deserialize_with = "present")]
    name: Option<Value>,
    #[serde(deserialize_with = "present")]
    arguments: Option<Value>,
    #[serde(deserialize_with = "present")]
    input: Option<Value>,
    #[serde(deserialize_with = "present")]
    action: Option<Value>,
    #[serde(deserialize_with = "present")]
    code: Option<Value>,
    #[serde(deserialize_with = "present")]
    output: Option<Value>,
}

/// A value as text: strings as they are, `null` empty, anything else as compact JSON.
fn into_text(v: Value) -> String {
    match v {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The non-empty `text`s of a list of parts, one per line.
fn part_texts(parts: Option<&Value>) -> impl Iterator<Item = &str> {
    let parts = parts.and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    parts.iter().map(|p| p.get("text").and_then(Value::as_str).unwrap_or("")).filter(|t| !t.is_empty())
}

impl Line {
    /// Whether the item was produced by the model.
    fn is_model_item(&self, kind: &str) -> bool {
        match kind {
            "message" => str_of(&self.role) == "assistant",
            "reasoning" => true,
            k => k.ends_with("_call") || k == "mcp_list_tools",
        }
    }

    /// The string `key` (`call_id` or `id`), or an error naming it.
    fn call_id(&mut self, kind: &str, key: &str) -> Result<String, String> {
        let v = if key == "id" { &mut self.id } else { &mut self.call_id };
        match v.take() {
            Some(Value::String(s)) => Ok(s),
            other => {
                *v = other;
                Err(format!("a `{kind}` item needs a string `{key}`"))
            }
        }
    }

    /// Converts the item of type `kind`.
    fn convert(mut self, b: &mut Builder, kind: &str) -> Result<(), String> {
        match kind {
            "message" => self.message(b)?,
            "reasoning" => {
                let summary = part_texts(self.summary.as_ref());
                let text = summary.chain(part_texts(self.content.as_ref())).collect::<Vec<_>>().join("\n");
                b.text(|text| Item::Thinking { text }, text);
            }
            "function_call" | "custom_tool_call" => {
                let arguments = self.arguments.take().or_else(|| self.input.take()).map(into_text);
                b.call(
                    self.call_id(kind, "call_id")?,
                    take_str(&mut self.name),
                    arguments.unwrap_or_default(),
                );
            }
            "item_reference" => {
                b.note("`item_reference` item(s) not replayed (the referenced item is stored server-side)")
            }
            k if k.ends_with("_call_output") => {
                let output = match self.output.take() {
                    Some(Value::Array(parts)) => {
                        let parts = Value::Array(parts);
                        part_texts(Some(&parts)).collect::<Vec<_>>().join("\n")
                    }
                    Some(v) => into_text(v),
                    None => String::new(),
                };
                b.result(self.call_id(kind, "call_id")?, None, output, false);
            }
            k if k.ends_with("_call") => {
                let id = self.call_id(k, "call_id").or_else(|_| self.call_id(k, "id"))?;
                let name = match self.name.take() {
                    Some(Value::String(name)) => name,
                    _ => k.trim_end_matches("_call").to_owned(),
                };
                let arguments = [&mut self.arguments, &mut self.input, &mut self.action, &mut self.code]
                    .into_iter()
                    .find_map(Option::take)
                    .map(into_text)
                    .unwrap_or_default();
                b.call(id, name, arguments);
            }
            other if RESPONSES_ITEM_TYPES.contains(&other) => {
                b.note(format!("`{other}` item(s) not replayed"))
            }
            other => b.note(format!("`{other}` item(s) not replayed (unknown item type)")),
        }
        Ok(())
    }

    fn message(mut self, b: &mut Builder) -> Result<(), String> {
        let (text, images) = match self.content.take() {
            Some(Value::String(s)) => (s, 0),
            Some(Value::Array(parts)) => openai_responses::parts_text(b, &parts),
            Some(Value::Null) | None => (String::new(), 0),
            Some(other) => {
                return Err(format!(
                    "content: expected a string or a list of parts, found {}",
                    kind_of(&other)
                ));
            }
        };
        openai_responses::push_message(b, str_of(&self.role), text, images)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shared::testing::{FOREIGN, kinds};
    use crate::format::with_head;

    #[test]
    fn errors_name_the_line_and_state_markers_are_skipped() {
        let text = "{\"id\":\"s\",\"timestamp\":\"2025-08-01T10:00:00Z\",\"instructions\":\"be brief\"}\n\
                    {\"record_type\":\"state\"}\n\
                    {\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"hi\"}]}\n\
                    {\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"hello\"}]}\n";
        let t = CodexLegacy.read(&mut text.as_bytes(), Path::new("r.jsonl")).unwrap();
        assert_eq!(kinds(&t.conversations[0].items), ["system", "user", "request", "assistant"]);
        let bad =
            "{\"id\":\"s\",\"timestamp\":\"t\"}\n{\"type\":\"function_call_output\",\"output\":\"x\"}\n";
        let e = CodexLegacy.read(&mut bad.as_bytes(), Path::new("r.jsonl")).unwrap_err();
        assert_eq!(e.to_string(), "r.jsonl:2: a `function_call_output` item needs a string `call_id`");
        let bad = "{\"id\":\"s\",\"timestamp\":\"t\"}\n{\"role\":\"user\"}\n";
        let e = CodexLegacy.read(&mut bad.as_bytes(), Path::new("r.jsonl")).unwrap_err();
        assert!(e.to_string().starts_with("r.jsonl:2: expected a Responses item"), "{e}");
    }

    #[test]
    fn detects_the_bare_header_only() {
        let detects =
            |text: &str| with_head(Path::new("r.jsonl"), text.as_bytes(), true, |h| CodexLegacy.detect(h));
        assert!(detects("{\"id\":\"s\",\"timestamp\":\"2025-08-01T10:00:00Z\",\"instructions\":null}\n"));
        assert!(detects(
            "{\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/p\",\"originator\":\"codex_cli_rs\",\"cli_version\":\"0.34.0\"}\n"
        ));
        assert!(!detects("{\"id\":\"s\",\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}\n"));
        assert!(!detects("{\"id\":\"s\",\"timestamp\":\"t\",\"message\":\"x\"}\n"));
        for (what, text) in FOREIGN {
            assert!(!detects(text), "{what}");
        }
    }
}
