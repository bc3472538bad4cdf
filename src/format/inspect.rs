//! `inspect`: Inspect AI evaluation logs in their JSON form (`FORMATS.md` §7 of the shared corpus;
//! schema: `src/inspect_ai/log/_log.py`, `src/inspect_ai/model/_chat_message.py` in
//! UKGovernmentBEIS/inspect_ai). The binary `.eval` form is a zip of the same parts, read by
//! [`inspect_eval`](super::inspect_eval), which reads each sample here ([`read_sample_into`]).
//!
//! A log is `{version, status, eval{task, model, …}, plan, results, stats, samples[]}`; each sample
//! has `messages[]` (the final transcript), `events[]`, and `attachments{<md5>: text}`. Every string
//! `attachment://<md5>` in a sample is read as its attachment; one that cannot be resolved (anywhere
//! in the sample) is kept as it is, with a warning. A sample is read into typed records
//! ([`records`]) that build only the parts read below and check the rest as JSON, noting its
//! references.
//!
//! **Attachments are resolved where and when they are read**, not in the whole sample first: each
//! model event is taken out of the sample, has the fields the reader reads resolved (`event`,
//! `model`, `timestamp`, `input`, `tools`, `output`, `call.response`), is read, and is dropped;
//! a pool message is resolved in place the first time it is read; `messages` are read and
//! resolved only for a sample without model events, and everything else is only checked for
//! unresolvable references. Inspect stores attachments to
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
//! - An Anthropic raw response's `context_management.applied_edits` (server-side context editing)
//!   clears the oldest tool results from that event's request on (`context_edits`).
//! - **Message pool** (log version 3): a sample's `message_pool` holds each message once and a
//!   model event's empty `input` is given by `input_refs`, `[start, end)` ranges into it; the
//!   ranges are expanded into the call's input (attachments resolved), as Inspect reads them.
//! - Errors name the file and the JSON path (`samples[0].events[3].input[2]: …`).
//!
//! The corpus holds no Inspect log; `tests/fixtures/inspect/eval-log.json` is a small hand-made
//! log written from the schema above, with its expected counts beside it.

mod records;

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use self::records::{Event, Log, Samples};
pub(super) use self::records::{Sample, Source, parse as parse_records};
use super::context_edits;
use super::wire::{self, Builder, Calls, Chains, Mark, json_text};
use super::{Format, Head, openai_chat};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Request, Trace, Usage};
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
        let text = super::shared::read_text(input, path)?;
        let log: Log<'_> = records::parse(&text, path)?;
        let fail = |message: String| TraceError::content(path, message);
        if log.kind != "an object" {
            return Err(fail(format!("expected an Inspect eval log object, found {}", log.kind)));
        }
        let Some(eval) = &log.eval else {
            return Err(fail("not an Inspect eval log: it has no `eval` header".into()));
        };
        let model = eval.get("model").and_then(Value::as_str).unwrap_or("");
        let mut trace = Trace { format: self.name(), ..Default::default() };
        let samples = match log.samples {
            Samples::List(samples) => samples,
            Samples::None => {
                trace
                    .warnings
                    .push("the log holds no samples (written without them?); nothing to replay".into());
                return Ok(trace);
            }
            Samples::Other(kind) => return Err(fail(format!("samples: expected an array, found {kind}"))),
        };
        let mut source = Source::Log(&text, None);
        for (i, sample) in samples.into_iter().enumerate() {
            let mut tree = || source.sample(i);
            read_sample_into(sample, &format!("samples[{i}]"), model, &mut tree, &mut trace).map_err(fail)?;
        }
        Ok(trace)
    }
}

/// Reads one sample (`at` names it in errors and warnings) into `trace`: its conversations and
/// warnings. The JSON form and the `.eval` zip ([`super::inspect_eval`]) both read samples here;
/// `tree` reads the sample again as a `Value` tree (see [`records`]).
pub(super) fn read_sample_into(
    mut sample: Sample<'_>,
    at: &str,
    model: &str,
    tree: &mut dyn FnMut() -> Result<Value, String>,
    trace: &mut Trace,
) -> Result<(), String> {
    let attachments = Attachments(std::mem::take(&mut sample.attachments));
    let mut unresolved = attachments.unresolved_in(&sample);
    if unresolved > 0 {
        unresolved = attachments.unresolved_in_tree(tree().map_err(|e| format!("{at}: {e}"))?);
    }
    if unresolved > 0 {
        trace.warnings.push(format!(
            "{at}: {unresolved} `attachment://` reference(s) have no attachment; kept as they are"
        ));
    }
    let mut pool = MessagePool::new(std::mem::take(&mut sample.pool));
    let (conversations, warnings) = read_sample(&mut sample, &attachments, &mut pool, at, model, tree)?;
    trace.conversations.extend(conversations);
    trace.warnings.extend(warnings);
    Ok(())
}

/// A sample's `message_pool` (log version 3): each message sent once, which model events name by
/// `input_refs`, `[start, end)` ranges into it, instead of repeating their whole `input`
/// (`src/inspect_ai/event/_pool.py`, `_expand_refs`, in UKGovernmentBEIS/inspect_ai at
/// 499e6152e7b8fc8cbd8ac5283536572aa6e4ab17). Each message has its attachments resolved in place
/// the first time it is read.
struct MessagePool {
    messages: Vec<Value>,
    /// Whether each message has had its attachments resolved.
    resolved: Vec<bool>,
}

impl MessagePool {
    fn new(messages: Vec<Value>) -> MessagePool {
        MessagePool { resolved: vec![false; messages.len()], messages }
    }

    /// The message at `k` (an index [`MessagePool::refs`] gave), its attachments resolved.
    fn get(&mut self, k: usize, attachments: &Attachments<'_>) -> &Value {
        if !std::mem::replace(&mut self.resolved[k], true) {
            attachments.resolve(&mut self.messages[k]);
        }
        &self.messages[k]
    }

    /// The input of a model event whose `input` is empty and whose `input_refs` name pool ranges:
    /// the indices of those messages in the pool, in order. `None` when the event holds its input
    /// itself.
    fn refs(&self, event: &Event, at: &str) -> Option<Result<Vec<usize>, String>> {
        let refs = event.input_refs.as_ref()?.as_array()?;
        if event.input.as_ref().and_then(Value::as_array).is_some_and(|input| !input.is_empty()) {
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
            if self.messages.get(start..end).is_none() {
                return Some(Err(format!(
                    "{at}.input_refs[{k}]: messages {start}..{end} are not in the sample's message_pool ({} messages)",
                    self.messages.len()
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
/// comparing the whole history at every call. The first message after them is most often the
/// last event's output (an agent sends what the model returned): when it is equal to it, its
/// items are those the output gave, copied rather than converted again.
struct PooledHistory {
    /// The event's tools, as read.
    tools: Option<Value>,
    /// The pool indices of its input, in order.
    indices: Vec<usize>,
    /// The builder after its tools and input were converted, its items moved out: the names and
    /// notes gathered on the way. Kept only when its output is not the pool's next message.
    state: Option<Builder>,
    /// Where the event went.
    mark: Mark,
    /// When the pool's message after the event's input is equal to its output: that message's
    /// index, the items the output gave and the builder after them.
    output: Option<(usize, Vec<Item>, Builder)>,
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
        pool: &mut MessagePool,
        attachments: &Attachments<'_>,
        at: &str,
    ) -> Result<(Builder, Option<Mark>), String> {
        let reused = last.filter(|p| {
            p.tools.as_ref() == tools && indices.starts_with(&p.indices) && chains.can_extend(p.mark)
        });
        let done = reused.as_ref().map_or(0, |p| p.indices.len());
        let (mut builder, done, extends) = match reused.map(|p| (p.output, p.state, p.mark)) {
            Some((Some((k, items, mut after)), _, mark)) if indices.get(done) == Some(&k) => {
                after.items = items;
                (after, done + 1, Some(mark))
            }
            Some((_, Some(state), mark)) => (state, done, Some(mark)),
            _ => {
                let mut b = Builder::default();
                openai_chat::tools(&mut b, tools);
                (b, 0, None)
            }
        };
        for (i, &k) in indices.iter().enumerate().skip(done) {
            let message = pool.get(k, attachments);
            openai_chat::message(&mut builder, message, &format!("{at}.input[{i}]"), Calls::None)?;
        }
        Ok((builder, extends))
    }
}

/// A sample's `attachments`: the texts that its `attachment://<hash>` strings stand for.
struct Attachments<'a>(HashMap<String, Cow<'a, str>>);

impl Attachments<'_> {
    /// The attachment a string refers to: `Some(Err(()))` for a reference with no attachment.
    fn of(&self, s: &str) -> Option<Result<&str, ()>> {
        let hash = s.strip_prefix("attachment://")?;
        Some(self.0.get(hash).map(|text| &**text).ok_or(()))
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

    /// Resolves each field present.
    fn resolve_each(&self, fields: &mut [&mut Option<Value>]) {
        for field in fields.iter_mut().filter_map(|f| f.as_mut()) {
            self.resolve(field);
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

    /// How many `attachment://` strings in a sample (its attachments aside) have no attachment:
    /// those in the parts read as values and those noted where the sample was only checked (in
    /// every value of a key given twice: never fewer than [`Attachments::unresolved_in_tree`]).
    fn unresolved_in(&self, sample: &Sample<'_>) -> usize {
        let built = [&sample.id, &sample.epoch].into_iter().flatten().chain(&sample.pool);
        let events = sample.events.iter().flat_map(Event::values);
        built.chain(events).map(|v| self.unresolved(v)).sum::<usize>()
            + sample.refs.iter().filter(|hash| !self.0.contains_key(hash.as_str())).count()
    }

    /// [`Attachments::unresolved_in`] on the sample as a whole tree, its `attachments` and a
    /// `message_pool` that is not a list left out, each pool message counted.
    fn unresolved_in_tree(&self, mut sample: Value) -> usize {
        let left_out = ["attachments", "message_pool"].map(|key| sample.get_mut(key).map(Value::take));
        let pool = match left_out {
            [_, Some(Value::Array(pool))] => pool,
            _ => Vec::new(),
        };
        self.unresolved(&sample) + pool.iter().map(|m| self.unresolved(m)).sum::<usize>()
    }
}

/// Reads one sample. Its model events are taken out of it one at a time and dropped once read
/// (see the module's doc).
fn read_sample(
    sample: &mut Sample<'_>,
    attachments: &Attachments<'_>,
    pool: &mut MessagePool,
    at: &str,
    eval_model: &str,
    tree: &mut dyn FnMut() -> Result<Value, String>,
) -> Result<(Vec<Conversation>, Vec<String>), String> {
    attachments.resolve_each(&mut [&mut sample.id, &mut sample.epoch]);
    let id = sample.id.as_ref().map(json_text).unwrap_or_else(|| at.to_owned());
    let name = match &sample.epoch {
        Some(epoch) => format!("{id}/epoch-{}", json_text(epoch)),
        None => id,
    };
    let mut chains = Chains::default();
    let mut warnings = Vec::new();
    let mut pooled: Option<PooledHistory> = None;
    for (k, slot) in sample.events.iter_mut().enumerate() {
        let mut event = std::mem::take(slot);
        attachments.resolve_each(&mut [&mut event.event]);
        if event.event.as_ref().and_then(Value::as_str) != Some("model") {
            continue;
        }
        let e = &mut event;
        attachments.resolve_each(&mut [
            &mut e.model,
            &mut e.timestamp,
            &mut e.input,
            &mut e.tools,
            &mut e.output,
            &mut e.response,
        ]);
        let at = format!("{at}.events[{k}]");
        let notes = &mut warnings;
        pooled = read_model_event(event, pooled, &mut chains, pool, attachments, &at, eval_model, notes)?;
    }
    if !chains.is_empty() {
        let (conversations, chain_warnings) =
            chains.finish(|index, _| if index == 0 { name.clone() } else { format!("{name}/side-{index}") });
        warnings.extend(chain_warnings);
        warnings.extend(conversations.iter().flat_map(context_edits::unsticky));
        return Ok((conversations, warnings));
    }
    // No model events: the final transcript, one call per assistant message.
    let mut messages =
        tree().map_err(|e| format!("{at}: {e}"))?.get_mut("messages").map(Value::take).unwrap_or_default();
    attachments.resolve(&mut messages);
    let messages = messages.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut b = Builder::default();
    openai_chat::messages(&mut b, messages, &format!("{at}.messages"), Calls::BeforeEachAssistant)?;
    warnings.extend(b.warnings(at));
    Ok((vec![Conversation { id: name, items: b.take_items(), recorded_total: None }], warnings))
}

/// Reads one model event (its fields resolved) into `chains`: the history it sent, its request and
/// what it returned. Gives what the next event may reuse of its converted history.
#[allow(clippy::too_many_arguments)]
fn read_model_event(
    mut event: Event,
    pooled: Option<PooledHistory>,
    chains: &mut Chains,
    pool: &mut MessagePool,
    attachments: &Attachments<'_>,
    at: &str,
    eval_model: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<PooledHistory>, String> {
    let tools = event.tools.take();
    let tools = tools.as_ref();
    let (mut b, extends, indices) = match pool.refs(&event, at).transpose()? {
        Some(indices) => {
            let (b, extends) =
                PooledHistory::convert(pooled, chains, tools, &indices, pool, attachments, at)?;
            (b, extends, Some(indices))
        }
        None => {
            let mut b = Builder::default();
            openai_chat::tools(&mut b, tools);
            let input = event
                .input
                .as_ref()
                .and_then(Value::as_array)
                .ok_or_else(|| format!("{at}.input: expected an array of messages"))?;
            openai_chat::messages(&mut b, input, &format!("{at}.input"), Calls::None)?;
            (b, None, None)
        }
    };
    let history = b.take_items();
    let output = output_message(&mut event);
    // The pool's message after this input, when it is this output: the next event's input most
    // often goes on with it, and its conversion is then the output's.
    let next = indices.as_ref().and_then(|i| i.last()).map(|&last| last + 1);
    let next = next.filter(|&k| k < pool.messages.len());
    let next = next.filter(|&k| output.as_ref().is_some_and(|o| pool.get(k, attachments) == o));
    let state = indices.as_ref().filter(|_| next.is_none()).map(|_| b.clone());
    let model = event.model.as_ref().and_then(Value::as_str).unwrap_or(eval_model);
    let request = Request {
        id: event.response.as_ref().and_then(|r| r.get("id")).and_then(Value::as_str).map(str::to_owned),
        timestamp: event.timestamp.as_ref().and_then(Value::as_str).and_then(parse_rfc3339),
        usage: match usage(&event, model) {
            Some(Ok(u)) => Some(u),
            Some(Err(why)) => {
                warnings.push(format!("{at}: {why}"));
                None
            }
            None => None,
        },
        model: Some(model.to_owned()).filter(|m| !m.is_empty()),
    };
    if let Some(message) = &output {
        openai_chat::message(&mut b, message, &format!("{at}.output.choices[0].message"), Calls::None)?;
    }
    let tail = b.take_items();
    let warnings_now = b.warnings(at);
    let output = next.map(|k| (k, tail.clone(), b));
    let mark = match extends {
        Some(mark) => chains.extend(mark, history, request, tail, warnings_now),
        None => chains.push("model", history, request, tail, warnings_now),
    };
    // Anthropic's server-side context editing, which the raw response reports (`context_edits`).
    if let Some(cm) = event.response.as_ref().and_then(|r| r.get("context_management")) {
        let edits = context_edits::read(cm);
        let at = format!("{at}.call.response");
        warnings.extend(edits.problems.into_iter().map(|p| format!("{at}: {p}")));
        if let Some(c) = edits.cleared {
            chains.cleared(mark, c);
        }
    }
    Ok(indices.map(|indices| PooledHistory { tools: tools.cloned(), indices, state, mark, output }))
}

/// The message a model event returned (`output.choices[0].message`), moved out of it.
fn output_message(event: &mut Event) -> Option<Value> {
    let choice = match event.output.as_mut()?.get_mut("choices")? {
        Value::Array(choices) => choices.first_mut(),
        // As `pointer("/choices/0")` reads an object.
        Value::Object(choices) => choices.get_mut("0"),
        _ => None,
    };
    choice?.get_mut("message").map(Value::take)
}

/// The usage of one model event: the raw provider response first, else Inspect's `output.usage`.
fn usage(event: &Event, model: &str) -> Option<Result<Usage, String>> {
    if let Some(raw) = event.response.as_ref().and_then(wire::usage_of_response) {
        return Some(raw);
    }
    let u = event.output.as_ref()?.get("usage")?;
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
    use serde_json::json;

    fn read(v: &Value) -> Result<Trace, TraceError> {
        Inspect.read(&mut v.to_string().as_bytes(), Path::new("log.json"))
    }

    fn model_event(input: Value, output: &str, usage: Value) -> Value {
        json!({"event": "model", "model": "anthropic/claude-sonnet-4", "timestamp": "2025-01-01T00:00:00.5+00:00",
               "input": input, "tools": [], "output": {"choices": [{"message": {"role": "assistant", "content": output}}], "usage": usage}})
    }

    /// A sample read as the typed records, from its JSON.
    fn sample(v: &Value) -> (Sample<'static>, Attachments<'static>) {
        let text: &'static str = Box::leak(v.to_string().into_boxed_str());
        let mut sample: Sample<'static> = serde_json::from_str(text).unwrap();
        let attachments = Attachments(std::mem::take(&mut sample.attachments));
        (sample, attachments)
    }

    #[test]
    fn references_with_no_attachment_are_counted_in_every_part_of_a_sample() {
        let (sample, attachments) = sample(&json!({
            "messages": [{"role": "user", "content": "attachment://abc"}, "attachment://m1"],
            "events": [{"input": ["attachment://abc", "attachment://zzz"], "call": {"request": "attachment://c1", "response": "attachment://c2"}},
                       {"event": "info", "data": {"deep": ["attachment://i1", "attachment://abc"]}}, "attachment://e1", 5],
            "message_pool": [{"content": "attachment://p1"}],
            "metadata": {"attachment://key-not-counted": "attachment://abc"},
            "store": "attachment://s1",
            "attachments": {"abc": "long text", "n": 5, "unused": "attachment://x1"}}));
        assert_eq!(
            attachments.0.keys().map(String::as_str).collect::<std::collections::BTreeSet<_>>(),
            ["abc", "unused"].into()
        );
        // Missing: zzz, c1, c2, i1, e1, m1, p1, s1; the attachments' own strings are not references.
        assert_eq!(attachments.unresolved_in(&sample), 8);
        assert_eq!(sample.events.len(), 4);
        let mut input = sample.events[0].input.clone().unwrap();
        attachments.resolve(&mut input);
        assert_eq!(input, json!(["long text", "attachment://zzz"]));
    }

    #[test]
    fn a_key_given_twice_counts_the_references_of_its_last_value_as_a_tree_does() {
        let text = r#"{"version": 2, "eval": {"task": "t"}, "samples": [{"id": 1, "metadata": "attachment://q", "metadata": 1,
            "store": {"a": "attachment://r", "a": "attachment://s"}, "attachments": {"m": "text"}, "attachments": {"n": "text"},
            "messages": [{"role": "user", "content": "attachment://n"}], "messages": [{"role": "user", "content": "attachment://m"}]}]}"#;
        let t = Inspect.read(&mut text.as_bytes(), Path::new("l.json")).unwrap();
        // The last values: `metadata` 1, `store.a` s (no attachment), `attachments` n, `messages` m
        // (no attachment). The records noted q, r, s, n, m: four with no attachment.
        assert_eq!(
            t.warnings,
            ["samples[0]: 2 `attachment://` reference(s) have no attachment; kept as they are"]
        );
        assert!(matches!(&t.conversations[0].items[0], Item::User { text, .. } if text == "attachment://m"));
    }

    #[test]
    fn a_pool_or_attachments_that_are_not_lists_or_objects_are_not_counted() {
        let (sample, attachments) =
            sample(&json!({"message_pool": {"a": "attachment://p"}, "attachments": ["attachment://a"]}));
        assert!(sample.pool.is_empty() && attachments.0.is_empty());
        assert_eq!(attachments.unresolved_in(&sample), 0);
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
        let (mut sample, attachments) = sample(&json!({"id": 1, "messages": [user], "events": events,
            "attachments": {"abc": text, "id": "resp_1"}}));
        // The call's request (a copy of the input) is not kept.
        assert_eq!(sample.events[0].values().count(), 7);
        let (conversations, _) = read_sample(
            &mut sample,
            &attachments,
            &mut MessagePool::new(Vec::new()),
            "samples[0]",
            "m",
            &mut || unreachable!("a sample with model events and no unresolved reference is not read again"),
        )
        .unwrap();
        let items = &conversations[0].items;
        assert!(matches!(&items[0], Item::User { text: t, .. } if *t == text), "{items:?}");
        assert!(matches!(&items[1], Item::Request(r) if r.id.as_deref() == Some("resp_1")), "{items:?}");
        // Each event was resolved as it was read, then dropped.
        assert!(sample.events.iter().all(|e| e.values().next().is_none()));
    }

    #[test]
    fn a_model_event_is_resolved_only_where_the_reader_reads_it() {
        let log = json!({"version": 2, "eval": {"task": "t"}, "samples": [{"id": "s", "events": [
            {"event": "attachment://ev", "input": [{"role": "user", "content": "attachment://abc"}], "input_refs": "attachment://abc",
             "call": {"response": {"id": "attachment://abc"}}}],
            "attachments": {"abc": "text", "ev": "model"}}]});
        let t = read(&log).unwrap();
        let c = &t.conversations[0];
        assert!(matches!(&c.items[0], Item::User { text, .. } if text == "text"), "{:?}", c.items);
        assert!(matches!(&c.items[1], Item::Request(r) if r.id.as_deref() == Some("text")), "{:?}", c.items);
    }

    #[test]
    fn bad_json_is_the_error_a_value_tree_gives() {
        let deep = format!(
            "{{\"eval\": {{}},\n \"samples\": [{{\"messages\": {}{}}}]}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        for bad in [
            deep.as_str(),
            r#"{"version": 2, "eval": {"task": "t"}, "samples": [{"messages": [1e400]}]}"#,
            r#"{"version": 2, "eval": {"task": "t"}, "samples": [{"messages": ["\ud800"]}]}"#,
            r#"{"version": 2, "eval": {"task": "t"}, "stats": {"n": 1e400}}"#,
            r#"{"version": 2, "eval": {"task": "t"}, "samples": [{"events": [{"event": "model",]}]}"#,
        ] {
            let path = Path::new("log.json");
            let e = Inspect.read(&mut bad.as_bytes(), path).unwrap_err().to_string();
            let tree = super::super::shared::parse_document(bad, path).unwrap_err().to_string();
            assert_eq!(e, tree, "{bad}");
        }
    }

    #[test]
    fn a_log_that_is_not_an_object_or_has_bad_samples_is_named() {
        let e = |t: &str| Inspect.read(&mut t.as_bytes(), Path::new("l.json")).unwrap_err().to_string();
        assert_eq!(e("[1]"), "l.json: expected an Inspect eval log object, found an array");
        assert_eq!(e(r#"{"version": 2}"#), "l.json: not an Inspect eval log: it has no `eval` header");
        assert_eq!(
            e(r#"{"eval": {}, "samples": {"a": 1}}"#),
            "l.json: samples: expected an array, found an object"
        );
        let t =
            Inspect.read(&mut r#"{"eval": {}, "samples": null}"#.as_bytes(), Path::new("l.json")).unwrap();
        assert!(t.warnings[0].contains("holds no samples"), "{:?}", t.warnings);
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

    #[test]
    fn an_anthropic_response_s_applied_edits_mark_its_own_request_and_bad_ones_are_named() {
        let user = json!({"role": "user", "content": "go"});
        let mut first = model_event(json!([user]), "ok", json!({"input_tokens": 10}));
        first["call"] = json!({"response": {"context_management": {"applied_edits": "1"}}});
        let said = json!({"role": "assistant", "content": "ok"});
        let mut second = model_event(json!([user, said]), "done", json!({"input_tokens": 12}));
        second["call"] = json!({"response": {"context_management": {"applied_edits": [
            {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 1, "cleared_input_tokens": 5}]}}});
        let log =
            json!({"version": 2, "eval": {"task": "t"}, "samples": [{"id": "s", "events": [first, second]}]});
        let t = read(&log).unwrap();
        let kinds: Vec<&str> = t.conversations[0]
            .items
            .iter()
            .map(|i| match i {
                Item::Cleared(c) => {
                    assert_eq!((c.oldest, c.tokens_saved), (Some(1), Some(5)));
                    "cleared"
                }
                Item::Request(_) => "request",
                _ => "text",
            })
            .collect();
        assert_eq!(kinds, ["text", "request", "text", "cleared", "request", "text"]);
        assert_eq!(
            t.warnings,
            [
                "samples[0].events[0].call.response: `context_management.applied_edits` is a string, not a list (ignored)"
            ]
        );
    }
}
