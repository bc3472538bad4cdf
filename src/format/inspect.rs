//! `inspect`: Inspect AI evaluation logs in their JSON form (`FORMATS.md` §7 of the shared corpus;
//! schema: `src/inspect_ai/log/_log.py`, `src/inspect_ai/model/_chat_message.py` in
//! UKGovernmentBEIS/inspect_ai). The binary `.eval` form is a zip of the same parts, read by
//! [`inspect_eval`](super::inspect_eval), which reads each sample here ([`read_sample_into`]).
//!
//! A log is `{version, status, eval{task, model, …}, plan, results, stats, samples[]}`; each sample
//! has `messages[]` (the final transcript), `events[]`, and `attachments{<md5>: text}`. Every string
//! `attachment://<md5>` in a sample is read as its attachment; one that cannot be resolved (anywhere
//! in the sample) is kept as it is, with a warning.
//!
//! **Attachments are resolved where and when they are read**, not in the whole sample first: each
//! model event is taken out of the sample, has the fields the reader reads resolved (`event`,
//! `model`, `timestamp`, `input`, `tools`, `output`, `call.response`), is read, and is dropped;
//! `messages` are resolved only when they are read (a sample without model events), and
//! everything else is only checked for unresolvable references. Inspect stores attachments to
//! de-duplicate the same long text sent again in every call: resolving each reference in place
//! cost one copy per reference (a 10 MB log whose thousand events each send one 8 MB text asked
//! for gigabytes; it now reads in under 80 MB), where reading one event at a time holds one
//! event's copies plus what the conversation keeps (its longest history). The numbers read are
//! the same either way.
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
//! - **Message pool** (log version 3): a sample's `message_pool` holds each message once and a
//!   model event's empty `input` is given by `input_refs`, `[start, end)` ranges into it; the
//!   ranges are expanded into the call's input (attachments resolved), as Inspect reads them.
//! - Errors name the file and the JSON path (`samples[0].events[3].input[2]: …`).
//!
//! The corpus holds no Inspect log; `tests/fixtures/inspect/eval-log.json` is a small hand-made
//! log written from the schema above, with its expected counts beside it.

use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::wire::{self, Builder, Calls, Chains, Mark, json_text, kind_of, str_field};
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
        for (i, sample) in samples.into_iter().enumerate() {
            read_sample_into(sample, &format!("samples[{i}]"), &model, &mut trace).map_err(fail)?;
        }
        Ok(trace)
    }
}

/// Reads one sample (`at` names it in errors and warnings) into `trace`: its conversations and
/// warnings. The JSON form and the `.eval` zip ([`super::inspect_eval`]) both read samples here.
pub(super) fn read_sample_into(
    mut sample: Value,
    at: &str,
    model: &str,
    trace: &mut Trace,
) -> Result<(), String> {
    let attachments = Attachments::take(&mut sample);
    let pool = MessagePool::take(&mut sample);
    let unresolved =
        attachments.unresolved(&sample) + pool.0.iter().map(|m| attachments.unresolved(m)).sum::<usize>();
    if unresolved > 0 {
        trace.warnings.push(format!(
            "{at}: {unresolved} `attachment://` reference(s) have no attachment; kept as they are"
        ));
    }
    let (conversations, warnings) = read_sample(&mut sample, &attachments, &pool, at, model)?;
    trace.conversations.extend(conversations);
    trace.warnings.extend(warnings);
    Ok(())
}

/// A sample's `message_pool` (log version 3): each message sent once, which model events name by
/// `input_refs`, `[start, end)` ranges into it, instead of repeating their whole `input`
/// (`src/inspect_ai/event/_pool.py`, `_expand_refs`, in UKGovernmentBEIS/inspect_ai at
/// 499e6152e7b8fc8cbd8ac5283536572aa6e4ab17).
struct MessagePool(Vec<Value>);

impl MessagePool {
    /// Moves the `message_pool` out of a sample.
    fn take(sample: &mut Value) -> MessagePool {
        match sample.get_mut("message_pool").map(Value::take) {
            Some(Value::Array(messages)) => MessagePool(messages),
            _ => MessagePool(Vec::new()),
        }
    }

    /// The input of a model event whose `input` is empty and whose `input_refs` name pool ranges:
    /// the indices of those messages in the pool, in order. `None` when the event holds its input
    /// itself.
    fn refs(&self, event: &Value, at: &str) -> Option<Result<Vec<usize>, String>> {
        let refs = event.get("input_refs")?.as_array()?;
        if event.get("input").and_then(Value::as_array).is_some_and(|input| !input.is_empty()) {
            return None;
        }
        let mut input = Vec::new();
        for (k, range) in refs.iter().enumerate() {
            let bound = |j: usize| range.get(j).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok());
            let (Some(start), Some(end)) = (bound(0), bound(1)) else {
                return Some(Err(format!(
                    "{at}.input_refs[{k}]: expected a [start, end] pair of message indices"
                )));
            };
            if self.0.get(start..end).is_none() {
                return Some(Err(format!(
                    "{at}.input_refs[{k}]: messages {start}..{end} are not in the sample's message_pool ({} messages)",
                    self.0.len()
                )));
            }
            input.extend(start..end);
        }
        Some(Ok(input))
    }
}

/// The last model event whose input came from the message pool, as converted: the next event
/// whose input begins with the same pool messages (and sends the same tools) converts only the
/// messages after them and adds them to the conversation the last one went to, when
/// [`Chains::push`] would choose that conversation ([`Chains::can_extend`]): conversion reads
/// messages in order and each message's items depend only on the messages before it, so the
/// items, names and notes are those a whole conversion gives, without converting, copying and
/// comparing the whole history at every call.
struct PooledHistory {
    /// The event's tools, as read.
    tools: Option<Value>,
    /// The pool indices of its input, in order.
    indices: Vec<usize>,
    /// The builder after its tools and input were converted, its items moved out: the names and
    /// notes gathered on the way.
    state: Builder,
    /// Where the event went.
    mark: Mark,
}

impl PooledHistory {
    /// The builder holding an event's converted history (tools, then these pool messages), and
    /// the mark of the call it continues when only the messages after that call's history are in
    /// it.
    fn convert(
        last: Option<PooledHistory>,
        chains: &Chains,
        tools: Option<&Value>,
        indices: &[usize],
        pool: &MessagePool,
        attachments: &Attachments,
        at: &str,
    ) -> Result<(Builder, Option<Mark>), String> {
        let reused = last.filter(|p| {
            p.tools.as_ref() == tools && indices.starts_with(&p.indices) && chains.can_extend(p.mark)
        });
        let (mut builder, done, extends) = match reused {
            Some(p) => (p.state, p.indices.len(), Some(p.mark)),
            None => {
                let mut b = Builder::default();
                openai_chat::tools(&mut b, tools);
                (b, 0, None)
            }
        };
        for (i, &k) in indices.iter().enumerate().skip(done) {
            let mut message = pool.0[k].clone();
            attachments.resolve(&mut message);
            openai_chat::message(&mut builder, &message, &format!("{at}.input[{i}]"), Calls::None)?;
        }
        Ok((builder, extends))
    }
}

/// The fields of a model event that [`read_sample`] reads (besides `event`), as JSON pointers.
const MODEL_EVENT_FIELDS: [&str; 6] =
    ["/model", "/timestamp", "/input", "/tools", "/output", "/call/response"];

/// A sample's `attachments`: the texts that its `attachment://<hash>` strings stand for.
struct Attachments(Map<String, Value>);

impl Attachments {
    /// Moves the `attachments` out of a sample (so they are neither resolved nor counted as part
    /// of it).
    fn take(sample: &mut Value) -> Attachments {
        match sample.get_mut("attachments").map(Value::take) {
            Some(Value::Object(map)) => Attachments(map),
            _ => Attachments(Map::new()),
        }
    }

    /// The attachment a string refers to: `Some(Err(()))` for a reference with no attachment.
    fn of(&self, s: &str) -> Option<Result<&str, ()>> {
        let hash = s.strip_prefix("attachment://")?;
        Some(self.0.get(hash).and_then(Value::as_str).ok_or(()))
    }

    /// Replaces every resolvable `attachment://<hash>` string in `v` with its text (a copy).
    fn resolve(&self, v: &mut Value) {
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => {
                    if let Some(Ok(text)) = self.of(s) {
                        *s = text.to_owned();
                    }
                }
                Value::Array(items) => stack.extend(items.iter_mut()),
                Value::Object(map) => stack.extend(map.values_mut()),
                _ => {}
            }
        }
    }

    /// How many `attachment://` strings in `v` have no attachment (nothing is copied).
    fn unresolved(&self, v: &Value) -> usize {
        let mut unresolved = 0;
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => unresolved += usize::from(matches!(self.of(s), Some(Err(())))),
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => stack.extend(map.values()),
                _ => {}
            }
        }
        unresolved
    }

    /// Resolves the values at these JSON pointers of `v`, where present.
    fn resolve_at(&self, v: &mut Value, pointers: &[&str]) {
        for pointer in pointers {
            if let Some(field) = v.pointer_mut(pointer) {
                self.resolve(field);
            }
        }
    }
}

/// Reads one sample. Its model events are taken out of it one at a time and dropped once read
/// (see the module's doc); what is left of the sample still holds its references.
fn read_sample(
    sample: &mut Value,
    attachments: &Attachments,
    pool: &MessagePool,
    at: &str,
    eval_model: &str,
) -> Result<(Vec<Conversation>, Vec<String>), String> {
    attachments.resolve_at(sample, &["/id", "/epoch"]);
    let id = sample.get("id").map(json_text).unwrap_or_else(|| at.to_owned());
    let name = match sample.get("epoch") {
        Some(epoch) => format!("{id}/epoch-{}", json_text(epoch)),
        None => id,
    };
    let events = sample.get_mut("events").and_then(Value::as_array_mut).map(Vec::as_mut_slice);
    let mut chains = Chains::default();
    let mut warnings = Vec::new();
    let mut pooled: Option<PooledHistory> = None;
    for (k, slot) in events.unwrap_or_default().iter_mut().enumerate() {
        let mut event = slot.take();
        attachments.resolve_at(&mut event, &["/event"]);
        if str_field(&event, "event") != "model" {
            continue;
        }
        attachments.resolve_at(&mut event, &MODEL_EVENT_FIELDS);
        let event = &event;
        let at = format!("{at}.events[{k}]");
        let tools = event.get("tools");
        let (mut b, extends, indices) = match pool.refs(event, &at).transpose()? {
            Some(indices) => {
                let last = pooled.take();
                let (b, extends) =
                    PooledHistory::convert(last, &chains, tools, &indices, pool, attachments, &at)?;
                (b, extends, Some(indices))
            }
            None => {
                let mut b = Builder::default();
                openai_chat::tools(&mut b, tools);
                let input = event
                    .get("input")
                    .and_then(Value::as_array)
                    .ok_or_else(|| format!("{at}.input: expected an array of messages"))?;
                openai_chat::messages(&mut b, input, &format!("{at}.input"), Calls::None)?;
                (b, None, None)
            }
        };
        let history = b.take_items();
        let state = indices.is_some().then(|| b.clone());
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
            model: Some(model.to_owned()).filter(|m| !m.is_empty()),
        };
        if let Some(message) = event.pointer("/output/choices/0/message") {
            openai_chat::message(&mut b, message, &format!("{at}.output.choices[0].message"), Calls::None)?;
        }
        let tail = b.take_items();
        let mark = match extends {
            Some(mark) => chains.extend(mark, history, request, tail, b.warnings(&at)),
            None => chains.push("model", history, request, tail, b.warnings(&at)),
        };
        pooled = indices.zip(state).map(|(indices, state)| PooledHistory {
            tools: tools.cloned(),
            indices,
            state,
            mark,
        });
    }
    if !chains.is_empty() {
        let (conversations, chain_warnings) =
            chains.finish(|index, _| if index == 0 { name.clone() } else { format!("{name}/side-{index}") });
        warnings.extend(chain_warnings);
        return Ok((conversations, warnings));
    }
    // No model events: the final transcript, one call per assistant message.
    attachments.resolve_at(sample, &["/messages"]);
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
    if let Some(why) = super::shared::first_bad_count(u, &super::shared::names_tokens) {
        return Some(Err(format!("output.usage: {why}; this request has no recorded size")));
    }
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
        cost_micro_usd: None,
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
    fn attachments_resolve_anywhere_and_missing_ones_are_counted() {
        let mut sample = json!({"messages": [{"role": "user", "content": "attachment://abc"}],
            "events": [{"input": ["attachment://abc", "attachment://zzz"]}], "attachments": {"abc": "long text"}});
        let attachments = Attachments::take(&mut sample);
        assert_eq!(attachments.unresolved(&sample), 1);
        attachments.resolve(&mut sample);
        assert_eq!(sample.pointer("/messages/0/content"), Some(&json!("long text")));
        assert_eq!(sample.pointer("/events/0/input/0"), Some(&json!("long text")));
        assert_eq!(sample.pointer("/events/0/input/1"), Some(&json!("attachment://zzz")));
    }

    /// How many strings in `v` are `text`.
    fn copies(v: &Value, text: &str) -> usize {
        match v {
            Value::String(s) => usize::from(s == text),
            Value::Array(items) => items.iter().map(|v| copies(v, text)).sum(),
            Value::Object(map) => map.values().map(|v| copies(v, text)).sum(),
            _ => 0,
        }
    }

    #[test]
    fn a_sample_is_read_without_a_copy_of_an_attachment_per_reference() {
        let text = "a long tool output ".repeat(100);
        let user = json!({"role": "user", "content": "attachment://abc"});
        let mut event = model_event(json!([user]), "ok", json!({"input_tokens": 10}));
        event["call"] = json!({"request": {"messages": [user]}, "response": {"id": "attachment://id"}});
        let info = json!({"event": "info", "data": "attachment://abc"});
        let mut events = vec![event; 50];
        events.push(info);
        let mut sample = json!({"id": 1, "messages": [user], "events": events,
            "attachments": {"abc": text, "id": "resp_1"}});
        let attachments = Attachments::take(&mut sample);
        let (conversations, _) =
            read_sample(&mut sample, &attachments, &MessagePool(Vec::new()), "samples[0]", "m").unwrap();
        let items = &conversations[0].items;
        assert!(matches!(&items[0], Item::User { text: t, .. } if *t == text), "{items:?}");
        assert!(matches!(&items[1], Item::Request(r) if r.id.as_deref() == Some("resp_1")), "{items:?}");
        // Each event was resolved as it was read, then dropped; before, the sample held 102
        // copies (one per reference, `call.request` and the `info` event included).
        assert_eq!(copies(&sample, &text), 0);
        assert_eq!(sample["events"], json!(vec![Value::Null; 51]));
        assert_eq!(sample.pointer("/messages/0/content"), Some(&json!("attachment://abc")));
    }

    #[test]
    fn a_model_event_is_resolved_only_where_the_reader_reads_it() {
        let mut event = json!({"event": "model", "input": ["attachment://abc"],
            "call": {"request": ["attachment://abc"], "response": {"id": "attachment://abc"}}});
        let attachments = Attachments(json!({"abc": "text"}).as_object().unwrap().clone());
        attachments.resolve_at(&mut event, &MODEL_EVENT_FIELDS);
        assert_eq!(
            event,
            json!({"event": "model", "input": ["text"], "call": {"request": ["attachment://abc"], "response": {"id": "text"}}})
        );
    }

    #[test]
    fn a_sample_without_model_events_reads_its_messages_resolved() {
        let log = json!({"version": 2, "eval": {"task": "t"}, "samples": [{"id": "attachment://id", "epoch": 1,
            "messages": [{"role": "user", "content": "attachment://q"}, {"role": "assistant", "content": "a"}],
            "attachments": {"q": "question", "id": "s1"}}]});
        let t = read(&log).unwrap();
        let c = &t.conversations[0];
        assert_eq!(c.id, "s1/epoch-1");
        assert!(matches!(&c.items[0], Item::User { text, .. } if text == "question"), "{:?}", c.items);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
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
