//! `codex-exec`: the event stream `codex exec --json` writes to standard output (JSON Lines),
//! which CI jobs keep as their record of a Codex run.
//!
//! Lines (codex-rs `exec/src/exec_events.rs`): `thread.started{thread_id}`, `turn.started`,
//! `item.started` / `item.updated` / `item.completed{item}`, `turn.completed{usage}`,
//! `turn.failed{error}`, `error{message}`. Only `item.completed` carries an item's final state;
//! the other item events are progress and are skipped. An item has an `id` and a `type` (`item_type`
//! in the first versions, whose agent message was `assistant_message`):
//!
//! - `agent_message{text}` is assistant text; `reasoning{text}` (the reasoning summary) is thinking.
//! - `command_execution{command, aggregated_output, exit_code, status}` is a call (`shell`, its
//!   arguments the command as JSON `{"command": …}`) and its result (the aggregated output; an
//!   error when the exit code is not 0 or the status is `failed`).
//! - `mcp_tool_call{server, tool, arguments, result, error}` is a call (`<server>.<tool>`) and its
//!   result (the result's content as JSON, or the error's message, an error).
//! - `file_change{changes[{path, kind}], status}` is an `apply_patch` call whose arguments are the
//!   list of changes (the stream does not hold the patch) and whose result is the status.
//! - `web_search{query}` and `todo_list{items}` are calls without a result (`web_search`,
//!   `update_plan`), as Codex records them; `error{message}` items become warnings.
//!
//! **Requests.** The stream does not mark model calls. A request is placed before the first model
//! output of a turn and before each model output (text, reasoning or a call) that follows a tool's
//! output: a model call follows every tool output. Calls with nothing between them are counted as
//! one request, as parallel calls are, so when the model made them one at a time the count is
//! lower than the real one.
//!
//! **Usage.** `turn.completed.usage.input_tokens` is the thread's total so far, summed over every
//! model call (codex-rs reports its `total_token_usage`): the last one is the stream's
//! [`RecordedTotal`], over the requests counted. When the stream holds one request only, the total
//! is that request's prompt size. `cached_input_tokens` is a subset of the input.
//!
//! **Not in the stream:** the prompt (given on the command line or standard input), the base
//! instructions, `AGENTS.md` and the environment context, so the replay starts without them (the
//! gap a reconciliation fit absorbs); the contents of file changes.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::claude_code::Object;
use super::fields::{present, str_of, take_str};
use super::look_alike::LookAlike;
use super::read_json_lines_as;
use super::wire::{Builder, json_text};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, RecordedTotal, Request, Trace, Usage};

/// Event types of the stream; the first line is one of them.
const EVENT_TYPES: [&str; 9] = [
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "error",
    "thread.error",
];

/// `codex exec --json` event streams.
pub struct CodexExec;

impl Format for CodexExec {
    fn look_alike(&self) -> Option<LookAlike> {
        Some(LookAlike {
            record_keys: &["type", "thread_id"],
            records_are: "a `codex exec --json` event",
            ..LookAlike::NONE
        })
    }

    fn name(&self) -> &'static str {
        "codex-exec"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let Some(line) = head.first_json_line.and_then(Value::as_object) else { return false };
        let event = head.first_type().is_some_and(|t| EVENT_TYPES.contains(&t) && t != "error");
        // `thread_id`, `item` or `usage` beside the type: a bare `{"type": "turn.started"}` is this
        // stream's too.
        event && line.keys().all(|k| ["type", "thread_id", "item", "usage", "error"].contains(&k.as_str()))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut stream = Stream::default();
        let mut warnings = Vec::new();
        read_json_lines_as(input, path, &mut warnings, |line, e: Object<Event>| stream.event(path, line, e))?;
        warnings.extend(stream.b.warnings(""));
        warnings.extend(stream.errors);
        let requests = stream.b.items.iter().filter(|i| matches!(i, Item::Request(_))).count();
        let mut conversation = Conversation::new("main");
        conversation.items = stream.b.take_items();
        if let Some(usage) = stream.usage {
            if requests == 1 {
                if let Some(Item::Request(r)) =
                    conversation.items.iter_mut().find(|i| matches!(i, Item::Request(_)))
                {
                    r.usage = Some(usage);
                }
            } else if requests > 1 {
                conversation.recorded_total =
                    Some(RecordedTotal { input_tokens: usage.input_tokens, calls: requests as u64 });
            }
        }
        Ok(Trace { format: self.name(), conversations: vec![conversation], warnings })
    }
}

/// One line of the stream: the keys the reader uses, each as the JSON it holds.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Event {
    #[serde(rename = "type", deserialize_with = "present")]
    kind: Option<Value>,
    usage: Object<Counts>,
    #[serde(deserialize_with = "present")]
    error: Option<Value>,
    #[serde(deserialize_with = "present")]
    message: Option<Value>,
    /// Boxed: the record is moved a few times on its way, the item is large.
    item: Object<Box<ItemFields>>,
}

/// `turn.completed.usage`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Counts {
    #[serde(deserialize_with = "present")]
    input_tokens: Option<Value>,
    #[serde(deserialize_with = "present")]
    cached_input_tokens: Option<Value>,
    #[serde(deserialize_with = "present")]
    output_tokens: Option<Value>,
}

/// An item of `item.*` events: the keys of every item type the reader converts.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ItemFields {
    #[serde(rename = "type", deserialize_with = "present")]
    kind: Option<Value>,
    #[serde(deserialize_with = "present")]
    item_type: Option<Value>,
    #[serde(deserialize_with = "present")]
    id: Option<Value>,
    #[serde(deserialize_with = "present")]
    text: Option<Value>,
    #[serde(deserialize_with = "present")]
    command: Option<Value>,
    #[serde(deserialize_with = "present")]
    aggregated_output: Option<Value>,
    #[serde(deserialize_with = "present")]
    exit_code: Option<Value>,
    #[serde(deserialize_with = "present")]
    status: Option<Value>,
    #[serde(deserialize_with = "present")]
    server: Option<Value>,
    #[serde(deserialize_with = "present")]
    tool: Option<Value>,
    #[serde(deserialize_with = "present")]
    arguments: Option<Value>,
    #[serde(deserialize_with = "present")]
    result: Option<Value>,
    #[serde(deserialize_with = "present")]
    error: Option<Value>,
    #[serde(deserialize_with = "present")]
    changes: Option<Value>,
    #[serde(deserialize_with = "present")]
    query: Option<Value>,
    #[serde(deserialize_with = "present")]
    items: Option<Value>,
    #[serde(deserialize_with = "present")]
    message: Option<Value>,
}

/// The stream being read.
#[derive(Default)]
struct Stream {
    b: Builder,
    /// A tool's output was the last item: the next model output is a new request.
    after_output: bool,
    /// A turn started and has had no model output yet.
    turn_open: bool,
    /// The last `turn.completed` usage.
    usage: Option<Usage>,
    /// `error` items and events, `turn.failed`.
    errors: Vec<String>,
}

impl Stream {
    fn event(&mut self, path: &Path, line: usize, e: Object<Event>) -> Result<(), TraceError> {
        let not_an_event = || {
            TraceError::line(
                path,
                line,
                "expected an event with a string `type` (a `codex exec --json` line)",
            )
        };
        let e = e.0.ok_or_else(not_an_event)?;
        let kind = e.kind.as_ref().and_then(Value::as_str).ok_or_else(not_an_event)?;
        match kind {
            "turn.started" => self.turn_open = true,
            "turn.completed" => {
                if let Some(u) = &e.usage.0 {
                    let number = |v: &Option<Value>| v.as_ref().and_then(Value::as_u64);
                    if let Some(input_tokens) = number(&u.input_tokens) {
                        self.usage = Some(Usage {
                            input_tokens,
                            cache_read_tokens: number(&u.cached_input_tokens),
                            cache_write_tokens: None,
                            output_tokens: number(&u.output_tokens),
                            cost_micro_usd: None,
                        });
                    }
                }
            }
            "turn.failed" | "error" | "thread.error" => {
                let message = match &e.error {
                    Some(error) => error.get("message"),
                    None => e.message.as_ref(),
                };
                let message = message.map(json_text).unwrap_or_default();
                self.errors.push(format!("line {line}: `{kind}`: {message}"));
            }
            "item.completed" => {
                let item = e.item.0.ok_or_else(|| {
                    TraceError::line(path, line, "an `item.completed` event needs an `item` object")
                })?;
                self.item(item, line);
            }
            _ => {}
        }
        Ok(())
    }

    /// Marks model output: a request before it when a turn starts or a tool output came before.
    fn model_output(&mut self) {
        if self.turn_open || self.after_output || !self.b.items.iter().any(|i| matches!(i, Item::Request(_)))
        {
            self.b.push(Item::Request(Request::default()));
        }
        self.turn_open = false;
        self.after_output = false;
    }

    fn item(&mut self, mut item: Box<ItemFields>, line: usize) {
        let kind = item.kind.take().or_else(|| item.item_type.take());
        let id = format!("{}@{line}", str_of(&item.id));
        match kind.as_ref().and_then(Value::as_str).unwrap_or("") {
            "agent_message" | "assistant_message" => {
                self.model_output();
                self.b.text(|text| Item::Assistant { text }, take_str(&mut item.text));
            }
            "reasoning" => {
                self.model_output();
                self.b.text(|text| Item::Thinking { text }, take_str(&mut item.text));
            }
            "command_execution" => {
                self.model_output();
                let command = item.command.as_ref().map_or_else(|| "null".to_owned(), Value::to_string);
                let arguments = format!("{{\"command\":{command}}}");
                self.b.call(id.clone(), "shell".into(), arguments);
                let failed = item.exit_code.as_ref().and_then(Value::as_i64).is_some_and(|c| c != 0)
                    || str_of(&item.status) == "failed";
                self.b.result(id, None, take_str(&mut item.aggregated_output), failed);
                self.after_output = true;
            }
            "mcp_tool_call" => {
                self.model_output();
                let name = format!("{}.{}", str_of(&item.server), str_of(&item.tool));
                self.b.call(id.clone(), name, item.arguments.as_ref().map(json_text).unwrap_or_default());
                let (output, failed) = match item.error.as_ref().filter(|e| !e.is_null()) {
                    Some(e) => (e.get("message").map_or_else(|| json_text(e), json_text), true),
                    None => {
                        let result = item.result.as_ref();
                        (
                            result
                                .and_then(|r| r.get("content"))
                                .or(result)
                                .map(json_text)
                                .unwrap_or_default(),
                            false,
                        )
                    }
                };
                self.b.result(id, None, output, failed || str_of(&item.status) == "failed");
                self.after_output = true;
            }
            "file_change" => {
                self.model_output();
                let changes = item.changes.as_ref().map(Value::to_string).unwrap_or_default();
                self.b.call(id.clone(), "apply_patch".into(), changes);
                let status = str_of(&item.status);
                self.b.result(id, None, status.to_owned(), status == "failed");
                self.after_output = true;
            }
            "web_search" => {
                self.model_output();
                let query = item.query.as_ref().map_or_else(|| "null".to_owned(), Value::to_string);
                let arguments = format!("{{\"query\":{query}}}");
                self.b.call(id, crate::model::HOSTED_WEB_SEARCH.into(), arguments);
            }
            "todo_list" => {
                self.model_output();
                let items = item.items.as_ref().map(Value::to_string).unwrap_or_default();
                self.b.call(id, "update_plan".into(), items);
            }
            "error" => self.errors.push(format!("line {line}: `error` item: {}", str_of(&item.message))),
            other => self.b.note(format!("`{other}` item(s) not replayed (unknown item type)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shared::testing::{FOREIGN, kinds};
    use crate::format::with_head;

    fn read(text: &str) -> Trace {
        CodexExec.read(&mut text.as_bytes(), Path::new("run.jsonl")).unwrap()
    }

    #[test]
    fn a_one_request_run_gives_its_request_the_recorded_size() {
        let t = read(concat!(
            r#"{"type":"thread.started","thread_id":"t"}"#,
            "\n",
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_0","item_type":"assistant_message","text":"hi"}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":100,"output_tokens":5}}"#,
            "\n",
        ));
        let c = &t.conversations[0];
        assert_eq!(kinds(&c.items), ["request", "assistant"]);
        let Item::Request(r) = &c.items[0] else { panic!() };
        let u = r.usage.unwrap();
        assert_eq!((u.input_tokens, u.cache_read_tokens, u.output_tokens), (900, Some(100), Some(5)));
        assert_eq!(c.recorded_total, None);
    }

    #[test]
    fn failures_are_warnings_and_mcp_errors_are_error_results() {
        let t = read(concat!(
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i1","type":"mcp_tool_call","server":"s","tool":"t","arguments":{},"result":null,"error":{"message":"boom"},"status":"failed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i2","type":"error","message":"stream disconnected"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i3","type":"collab_call"}}"#,
            "\n",
            r#"{"type":"turn.failed","error":{"message":"quota exceeded"}}"#,
            "\n",
        ));
        let c = &t.conversations[0];
        assert_eq!(kinds(&c.items), ["request", "call", "result"]);
        let Item::ToolResult(r) = &c.items[2] else { panic!() };
        assert!(r.is_error && r.output.full_text() == "boom" && r.name.as_deref() == Some("s.t"));
        assert_eq!(
            t.warnings,
            [
                "1 `collab_call` item(s) not replayed (unknown item type)",
                "line 3: `error` item: stream disconnected",
                "line 5: `turn.failed`: quota exceeded",
            ]
        );
    }

    #[test]
    fn a_line_that_is_not_an_event_is_an_error_naming_it() {
        let e =
            CodexExec.read(&mut &b"{\"type\":\"turn.started\"}\n{\"item\":1}\n"[..], Path::new("r.jsonl"));
        assert_eq!(
            e.unwrap_err().to_string(),
            "r.jsonl:2: expected an event with a string `type` (a `codex exec --json` line)"
        );
    }

    #[test]
    fn detects_exec_streams_only() {
        let detects =
            |text: &str| with_head(Path::new("r.jsonl"), text.as_bytes(), true, |h| CodexExec.detect(h));
        assert!(detects("{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n"));
        assert!(detects("{\"type\":\"turn.started\"}\n"));
        assert!(!detects("{\"type\":\"error\",\"message\":\"m\"}\n"));
        assert!(!detects("{\"type\":\"turn.started\",\"payload\":{}}\n"));
        for (what, text) in FOREIGN {
            assert!(!detects(text), "{what}");
        }
    }
}
