//! `inspect`: Inspect AI evaluation logs in their JSON form (`FORMATS.md` §7 of the shared corpus;
//! schema: `src/inspect_ai/log/_log.py`, `src/inspect_ai/model/_chat_message.py` in
//! UKGovernmentBEIS/inspect_ai). The binary `.eval` form is a zip of the same parts: convert it
//! with `inspect log convert --to json` first.
//!
//! A log is `{version, status, eval{task, model, …}, plan, results, stats, samples[]}`; each sample
//! has `messages[]` (the final transcript), `events[]`, and `attachments{<md5>: text}`. Every string
//! `attachment://<md5>` anywhere in a sample is replaced by its attachment before reading; one
//! that cannot be resolved is kept as it is, with a warning.
//!
//! - **Requests.** Each `event: "model"` is one LLM call: its `input` is the full history that
//!   call sent (Inspect ChatMessages, read by the [`openai_chat`] converter,
//!   which accepts Inspect's `tool_calls[]{id, function, arguments: {…}}`, `reasoning` parts and
//!   tool `error`s, sent as `Error: <message>` as Inspect's providers do), its `tools` are counted
//!   as system text (compact JSON), and its `output.choices[0].message` is what it returned. Calls
//!   chain as in [`cassette`](super::cassette): a call whose history begins with the previous
//!   call's continues that conversation, with one boundary where its history ended.
//! - **Conversations.** One per sample, named `<sample id>/epoch-<epoch>`: the context of its
//!   first model call and every call continuing it. A model call whose input does not continue it
//!   (a model-graded scorer, a sub-agent) had a context of its own: it becomes a conversation
//!   `<sample id>/epoch-<epoch>/side-<n>` rather than being mixed into the agent's. A sample with no
//!   model events (a log written without them) falls back to its `messages`, with a boundary before
//!   each assistant message and no usage.
//! - **Usage** (recorded prompt size) comes from the raw provider response `call.response` when
//!   recorded (OpenAI `prompt_tokens`, Anthropic input + cache creation + cache read, …), else from
//!   Inspect's normalised `output.usage`: `input_tokens` alone, except for Anthropic models
//!   (`anthropic/…`, `…claude…`), whose `input_tokens` exclude the disjoint
//!   `input_tokens_cache_read`/`input_tokens_cache_write`, which are then added.
//! - Errors name the file and the JSON path (`samples[0].events[3].input[2]: …`).
//!
//! The corpus holds no Inspect log; `tests/fixtures/inspect/eval-log.json` is a small hand-made
//! log written from the schema above, with its expected counts beside it.

use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::wire::{self, Builder, Calls, Chains, json_text, kind_of, str_field};
use super::{Format, Head, openai_chat};
use crate::error::TraceError;
use crate::model::{Conversation, Request, Trace, Usage};
use crate::time::parse_rfc3339;

/// Inspect AI eval logs (JSON).
pub struct Inspect;

impl Format for Inspect {
    fn name(&self) -> &'static str {
        "inspect"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let Some(Value::Object(log)) = head.document() else { return false };
        log.get("version").is_some_and(Value::is_number)
            && log
                .get("eval")
                .and_then(Value::as_object)
                .is_some_and(|e| e.contains_key("task") || e.contains_key("model"))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut doc = wire::read_document(input, path)?;
        let fail = |message: String| TraceError::content(path, message);
        let Some(log) = doc.as_object_mut() else {
            return Err(fail(format!("expected an Inspect eval log object, found {}", kind_of(&doc))));
        };
        let model =
            log.get("eval").and_then(|e| e.get("model")).and_then(Value::as_str).unwrap_or("").to_owned();
        if !log.contains_key("eval") {
            return Err(fail("not an Inspect eval log: it has no `eval` header".into()));
        }
        let mut trace = Trace { format: self.name(), ..Default::default() };
        let samples = match log.get_mut("samples").map(Value::take) {
            Some(Value::Array(samples)) => samples,
            None | Some(Value::Null) => {
                trace
                    .warnings
                    .push("the log holds no samples (written without them?); nothing to replay".into());
                return Ok(trace);
            }
            Some(other) => {
                return Err(fail(format!("samples: expected an array, found {}", kind_of(&other))));
            }
        };
        for (i, mut sample) in samples.into_iter().enumerate() {
            let at = format!("samples[{i}]");
            let unresolved = resolve_attachments(&mut sample);
            if unresolved > 0 {
                trace.warnings.push(format!(
                    "{at}: {unresolved} `attachment://` reference(s) have no attachment; kept as they are"
                ));
            }
            let (conversations, warnings) = read_sample(&sample, &at, &model).map_err(fail)?;
            trace.conversations.extend(conversations);
            trace.warnings.extend(warnings);
        }
        Ok(trace)
    }
}

/// Replaces every `attachment://<hash>` string with its text from the sample's `attachments`.
/// Returns how many could not be resolved.
fn resolve_attachments(sample: &mut Value) -> usize {
    let attachments = match sample.get_mut("attachments").map(Value::take) {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let mut unresolved = 0;
    let mut stack = vec![sample];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                if let Some(hash) = s.strip_prefix("attachment://") {
                    match attachments.get(hash).and_then(Value::as_str) {
                        Some(text) => *s = text.to_owned(),
                        None => unresolved += 1,
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
    unresolved
}

fn read_sample(
    sample: &Value,
    at: &str,
    eval_model: &str,
) -> Result<(Vec<Conversation>, Vec<String>), String> {
    let id = sample.get("id").map(json_text).unwrap_or_else(|| at.to_owned());
    let name = match sample.get("epoch") {
        Some(epoch) => format!("{id}/epoch-{}", json_text(epoch)),
        None => id,
    };
    let events = sample.get("events").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut chains = Chains::default();
    let mut warnings = Vec::new();
    for (k, event) in events.iter().enumerate() {
        if str_field(event, "event") != "model" {
            continue;
        }
        let at = format!("{at}.events[{k}]");
        let mut b = Builder::default();
        openai_chat::tools(&mut b, event.get("tools"));
        let input = event
            .get("input")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{at}.input: expected an array of messages"))?;
        openai_chat::messages(&mut b, input, &format!("{at}.input"), Calls::None)?;
        let history = b.take_items();
        let model = event.get("model").and_then(Value::as_str).unwrap_or(eval_model);
        let request = Request {
            id: event.pointer("/call/response/id").and_then(Value::as_str).map(str::to_owned),
            timestamp: event.get("timestamp").and_then(Value::as_str).and_then(parse_rfc3339),
            usage: match usage(event, model) {
                Some(Ok(u)) => Some(u),
                Some(Err(why)) => {
                    warnings.push(format!("{at}: {why}"));
                    None
                }
                None => None,
            },
        };
        if let Some(message) = event.pointer("/output/choices/0/message") {
            openai_chat::message(&mut b, message, &format!("{at}.output.choices[0].message"), Calls::None)?;
        }
        let tail = b.take_items();
        chains.push("model", history, request, tail, b.warnings(&at));
    }
    if !chains.is_empty() {
        let (conversations, chain_warnings) =
            chains.finish(|index, _| if index == 0 { name.clone() } else { format!("{name}/side-{index}") });
        warnings.extend(chain_warnings);
        return Ok((conversations, warnings));
    }
    // No model events: the final transcript, one call per assistant message.
    let messages = sample.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut b = Builder::default();
    openai_chat::messages(&mut b, messages, &format!("{at}.messages"), Calls::BeforeEachAssistant)?;
    warnings.extend(b.warnings(at));
    Ok((vec![Conversation { id: name, items: b.take_items(), recorded_total: None }], warnings))
}

/// The usage of one model event: the raw provider response first, else Inspect's `output.usage`.
fn usage(event: &Value, model: &str) -> Option<Result<Usage, String>> {
    if let Some(raw) = event.pointer("/call/response").and_then(wire::usage_of_response) {
        return Some(raw);
    }
    let u = event.pointer("/output/usage")?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let (input, read, write) =
        (n("input_tokens")?, n("input_tokens_cache_read"), n("input_tokens_cache_write"));
    let lower = model.to_ascii_lowercase();
    let disjoint = lower.starts_with("anthropic/") || lower.contains("claude");
    let prompt = if disjoint { input + read.unwrap_or(0) + write.unwrap_or(0) } else { input };
    if prompt == 0 {
        return Some(Err("output.usage records a prompt of 0 tokens, which is not a measurement".into()));
    }
    Some(Ok(Usage {
        input_tokens: prompt,
        cache_read_tokens: read,
        cache_write_tokens: write,
        output_tokens: n("output_tokens"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::with_head;
    use crate::model::Item;
    use serde_json::json;

    fn read(v: &Value) -> Result<Trace, TraceError> {
        Inspect.read(&mut v.to_string().as_bytes(), Path::new("log.json"))
    }

    fn model_event(input: Value, output: &str, usage: Value) -> Value {
        json!({"event": "model", "model": "anthropic/claude-sonnet-4", "timestamp": "2025-01-01T00:00:00.5+00:00",
               "input": input, "tools": [], "output": {"choices": [{"message": {"role": "assistant", "content": output}}], "usage": usage}})
    }

    #[test]
    fn attachments_are_resolved_everywhere_in_a_sample() {
        let mut sample = json!({"messages": [{"role": "user", "content": "attachment://abc"}],
            "events": [{"input": ["attachment://abc", "attachment://zzz"]}], "attachments": {"abc": "long text"}});
        assert_eq!(resolve_attachments(&mut sample), 1);
        assert_eq!(sample.pointer("/messages/0/content"), Some(&json!("long text")));
        assert_eq!(sample.pointer("/events/0/input/0"), Some(&json!("long text")));
    }

    #[test]
    fn anthropic_usage_from_inspect_output_adds_the_disjoint_cache_counts() {
        let user = json!({"role": "user", "content": "hi"});
        let log = json!({"version": 2, "eval": {"task": "t", "model": "anthropic/claude-sonnet-4"}, "samples": [{"id": 7, "epoch": 2,
            "events": [model_event(json!([user]), "hello", json!({"input_tokens": 5, "input_tokens_cache_read": 100, "input_tokens_cache_write": 20, "output_tokens": 3}))]}]});
        let t = read(&log).unwrap();
        let c = &t.conversations[0];
        assert_eq!(c.id, "7/epoch-2");
        let Item::Request(r) = &c.items[1] else { panic!("{:?}", c.items) };
        assert_eq!(r.usage.map(|u| u.input_tokens), Some(125));
        assert_eq!(r.timestamp, parse_rfc3339("2025-01-01T00:00:00.500Z"));
        assert!(matches!(c.items.last(), Some(Item::Assistant { text }) if text == "hello"));
    }

    #[test]
    fn a_model_call_that_does_not_continue_the_sample_is_a_side_conversation() {
        let a = json!({"role": "user", "content": "task"});
        let grader = json!({"role": "user", "content": "grade this"});
        let log = json!({"version": 2, "eval": {"task": "t", "model": "openai/gpt-4o"}, "samples": [{"id": "s", "epoch": 1, "events": [
            model_event(json!([a]), "answer", json!({"input_tokens": 10})),
            model_event(json!([grader]), "GRADE: C", json!({"input_tokens": 20}))]}]});
        let t = read(&log).unwrap();
        let ids: Vec<&str> = t.conversations.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["s/epoch-1", "s/epoch-1/side-1"]);
    }

    #[test]
    fn errors_name_the_event_path() {
        let log = json!({"version": 2, "eval": {"task": "t"}, "samples": [{"id": 1, "events": [{"event": "model", "input": [{"role": "tool", "content": "x"}]}]}]});
        let e = read(&log).unwrap_err().to_string();
        assert_eq!(
            e,
            "log.json: samples[0].events[0].input[0]: a tool message needs a string `tool_call_id`"
        );
    }

    #[test]
    fn detects_eval_logs_only() {
        let yes = |t: &str| with_head(Path::new("l.json"), t.as_bytes(), true, |h| Inspect.detect(h));
        assert!(yes(
            r#"{"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "samples": []}"#
        ));
        assert!(!yes(r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#));
        assert!(!yes(
            r#"{"info": {"mini_version": "1"}, "messages": [], "trajectory_format": "mini-swe-agent-1"}"#
        ));
        assert!(!yes("PK\u{3}\u{4}binary zip"));
    }
}
