//! `openhands`: OpenHands trajectories (a JSON array of events, as saved for trajectory replay
//! and `tests/runtime/trajs`, or `{trajectory: [events]}` as the server's trajectory endpoint
//! returns it) and evaluation `output.jsonl` (one instance per line:
//! `{instance_id, instruction, history[events], metrics, …}`).
//!
//! Schema facts (`FORMATS.md` §10 of the shared corpus; OpenHands `openhands/events/`,
//! `openhands/llm/metrics.py`, `openhands/memory/conversation_memory.py`): each event has `id`,
//! `timestamp`, `source` (`agent`, `user`, `environment`) and either `action` + `args` or
//! `observation` + `content` + `extras` + `cause` (the id of the action it answers).
//!
//! - **Actions with `tool_call_metadata` are tool calls**: id `tool_call_id`, name
//!   `function_name` (else the action type), arguments = the matching call's `arguments` in the
//!   stored `model_response`, else the action's `args` as JSON (without `thought`).
//! - **One request per model response**, placed before the first action of that response:
//!   several actions of one response (`total_calls_in_response` > 1) repeat the same
//!   `model_response`, so requests are keyed by `model_response.id`. The response's message text
//!   (else the first action's `thought`) is assistant text; its calls stay together, before
//!   their results, which is the order the next request sends. An action whose metadata has no
//!   `model_response` is its own request.
//! - **Observations answering a call are its tool results** (`cause` → action `id`, else
//!   `tool_call_metadata.tool_call_id`); `error` observations are marked as errors. The text is
//!   what `ConversationMemory._process_observation` sends, which is not always `content`:
//!   - `run`: `content` with `extras.metadata.prefix`/`suffix` around it, as
//!     `CmdOutputObservation.to_agent_observation` sends it (newer versions also append
//!     working-directory / interpreter / exit-code lines: not reproduced);
//!   - `edit`: `str(FileEditObservation)`, not `content` (a unified diff without context): for
//!     `extras.impl_source: "oh_aci"` the editor's message `extras.formatted_output_and_error`
//!     (e.g. `File created successfully at: …`); otherwise, for a new file (`extras.prev_exist:
//!     false`), `[New file {extras.path} is created with the provided content.]\n`. For an
//!     existing file OpenHands sends a visualised diff rebuilt with difflib from the old and new
//!     contents: that is not reproduced, and `content` (a diff of the same change) stands in for it;
//!   - `error`: `content` + `\n[Error occurred in processing last action]`;
//!   - `user_rejected`: `OBSERVATION:\n` + `content` + `\n[Last action has been rejected by the user]`;
//!   - any other: `content`. `max_message_chars` truncation is not reproduced.
//! - `message` actions by `source:"user"` are user turns; an agent `message` without metadata is
//!   a model response without calls (a request with assistant text); an agent `think` without
//!   metadata is assistant text; the `system` action is the system prompt (`args.content`), and
//!   its `args.tools` (the schemas sent with every call) are system text too, as JSON.
//! - Bookkeeping is skipped: `agent_state_changed` and `null` observations, `change_agent_state`,
//!   `recall` and other actions that neither call a tool nor carry text. Other observations that
//!   answer no call (a `recall` result, an error the environment raised) are sent to the model as
//!   user text: they are kept as `meta` user text, worded as above.
//! - **Usage**: `tool_call_metadata.model_response.usage` (litellm's OpenAI shape:
//!   `prompt_tokens` is the whole prompt — checked on the corpus, where it equals input + cache
//!   read + cache creation for Claude — with cached tokens a subset), else the instance's
//!   `metrics.token_usages[]` entry with the same `response_id`. Event `llm_metrics` are running
//!   totals and are not used.
//! - **Condensations**: a `condensation` action (the LLM-summarising condenser's) is a compaction:
//!   the context restarts with its `summary` and the earlier events it did not forget (its own
//!   and the earlier condensations' `forgotten_event_ids` or `forgotten_events_start_id`..=`_end_id`),
//!   read again without their requests ([`condensation`]).
//! - Timestamps are the action events' `timestamp` (local ISO time without zone, read as UTC).
//! - A trajectory is one conversation (`main`); each `output.jsonl` line is one, named by its
//!   `instance_id` (else `line-N`). A single record (one line, or pretty-printed) is read too.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::look_alike::LookAlike;
use super::shared::{content_text, json_text, openai_usage, parse_document, read_text, str_at};
use super::{Format, Head, read_json_lines};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Output, Request, ToolResult, Trace, Usage};
use crate::time::parse_rfc3339;

/// OpenHands trajectories and evaluation output.
pub struct OpenHands;

impl Format for OpenHands {
    fn look_alike(&self) -> Option<LookAlike> {
        // How OpenHands sends a tool's result to a model without function calling.
        let line: fn(&str) -> bool =
            |l| l.starts_with("EXECUTION RESULT of [") && l.trim_end().ends_with("]:");
        Some(LookAlike { line: Some(line), lines_are: "tool results of OpenHands", ..LookAlike::NONE })
    }

    fn name(&self) -> &'static str {
        "openhands"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let o = head.outline();
        let events = |p: &str| {
            o.has(&format!("{p}.source"))
                && o.has(&format!("{p}.id"))
                && (o.has(&format!("{p}.action")) || o.has(&format!("{p}.observation")))
        };
        (o.is_array() && events("[]"))
            || (o.is_object() && o.has(".instance_id") && events(".history[]"))
            || (o.is_object() && events(".trajectory[]"))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let text = read_text(input, path)?;
        let mut trace = Trace { format: "openhands", ..Default::default() };
        if text.trim_start().starts_with('[') {
            let doc = parse_document(&text, path)?;
            let events = doc.as_array().map(Vec::as_slice).unwrap_or_default();
            let (c, bad) = conversation("main", events, &BTreeMap::new())
                .map_err(|(i, e)| TraceError::content(path, format!("[{i}]: {e}")))?;
            trace.conversations.push(c);
            trace.warnings.extend(bad.map(|w| format!("{}: {w}", path.display())));
            return Ok(trace);
        }
        // One evaluation record, pretty-printed or on one line, or JSON Lines of them; or the
        // server's `{trajectory: [events]}`.
        if let Ok(record) = serde_json::from_str::<Value>(&text) {
            if let Some(events) = record.get("trajectory").and_then(Value::as_array) {
                let (c, bad) = conversation("main", events, &BTreeMap::new())
                    .map_err(|(i, e)| TraceError::content(path, format!("trajectory[{i}]: {e}")))?;
                trace.conversations.push(c);
                trace.warnings.extend(bad.map(|w| format!("{}: trajectory{w}", path.display())));
                return Ok(trace);
            }
            let (c, bad) = record_conversation(&record, "main").map_err(|e| TraceError::content(path, e))?;
            trace.conversations.push(c);
            trace.warnings.extend(bad.map(|w| format!("{}: {w}", path.display())));
            return Ok(trace);
        }
        let mut warnings = Vec::new();
        let mut bad_lines = Vec::new();
        read_json_lines(&mut text.as_bytes(), path, &mut warnings, |line, v| {
            let (c, bad) = record_conversation(&v, &format!("line-{line}"))
                .map_err(|e| TraceError::line(path, line, e))?;
            trace.conversations.push(c);
            bad_lines.extend(bad.map(|w| format!("{}:{line}: {w}", path.display())));
            Ok(())
        })?;
        trace.warnings = warnings;
        trace.warnings.extend(bad_lines);
        Ok(trace)
    }
}

/// The conversation of one evaluation record (`instance_id`, `history`, `metrics`), and the
/// warning about its usage fields that are not token counts, if any.
fn record_conversation(v: &Value, fallback_id: &str) -> Result<(Conversation, Option<String>), String> {
    let history = v
        .get("history")
        .and_then(Value::as_array)
        .ok_or("expected an evaluation record with a `history` array of events")?;
    let id = v
        .get("instance_id")
        .map_or_else(|| fallback_id.to_owned(), |i| i.as_str().map_or_else(|| i.to_string(), str::to_owned));
    let mut bad = super::shared::BadUsage::default();
    let usages = token_usages(v.get("metrics"), &mut bad);
    let (c, bad_history) =
        conversation(&id, history, &usages).map_err(|(i, e)| format!("history[{i}]: {e}"))?;
    Ok((c, bad.warning().or(bad_history.map(|w| format!("history{w}")))))
}

/// `metrics.token_usages[]` by `response_id`; an entry with a field that is not a token count
/// is noted in `bad` and left out.
fn token_usages(metrics: Option<&Value>, bad: &mut super::shared::BadUsage) -> BTreeMap<String, Usage> {
    let mut out = BTreeMap::new();
    let list = metrics.and_then(|m| m.get("token_usages")).and_then(Value::as_array);
    for (i, u) in list.into_iter().flatten().enumerate() {
        let Some(id) = u.get("response_id").and_then(Value::as_str) else { continue };
        let usage = super::shared::usage_from(
            u,
            "prompt_tokens",
            Some("cache_read_tokens"),
            Some("cache_write_tokens"),
            "completion_tokens",
        );
        match usage {
            Ok(Some(usage)) => {
                out.insert(id.to_owned(), usage);
            }
            Ok(None) => {}
            Err(why) => bad.note(format!("metrics.token_usages[{i}]"), why),
        }
    }
    out
}

#[derive(Default)]
struct Builder {
    conversation: Conversation,
    /// Key of the model response whose actions are still arriving.
    open: Option<String>,
    /// Calls of the open response.
    response: Vec<Item>,
    /// Results and other items that arrived while it was open.
    after: Vec<Item>,
    /// Action event id → (call id, tool name).
    calls: HashMap<i64, (String, String)>,
    /// Tool names by call id.
    names: HashMap<String, String>,
    /// Where the event being read is (`[i]`), to name a bad usage field.
    place: String,
    bad_usage: super::shared::BadUsage,
}

impl Builder {
    fn flush(&mut self) {
        self.conversation.items.append(&mut self.response);
        self.conversation.items.append(&mut self.after);
        self.open = None;
    }

    fn push(&mut self, item: Item) {
        if self.open.is_some() { self.after.push(item) } else { self.conversation.items.push(item) }
    }
}

/// The conversation of `events`, and the warning about their usage fields that are not token
/// counts (its place starts with the event's index, `[i]…`), if any.
fn conversation(
    id: &str,
    events: &[Value],
    usages: &BTreeMap<String, Usage>,
) -> Result<(Conversation, Option<String>), (usize, String)> {
    let mut b = Builder { conversation: Conversation::new(id), ..Default::default() };
    let mut forgotten: BTreeSet<i64> = BTreeSet::new();
    // Events the condensations so far sent again.
    let mut reread = 0usize;
    for (i, e) in events.iter().enumerate() {
        b.place = format!("[{i}]");
        if !e.is_object() {
            return Err((i, "expected an event object".into()));
        }
        match e.get("action").and_then(Value::as_str) {
            Some(CONDENSATION) => {
                let budget = REREAD_PER_EVENT.saturating_mul(events.len()).saturating_sub(reread);
                let read = condensation(&mut b, &events[..i], e, &mut forgotten, usages, budget);
                reread += read.ok_or_else(|| (i, TOO_MANY_CONDENSATIONS.to_owned()))?;
            }
            Some(action) => action_event(&mut b, e, action, usages),
            None => event(&mut b, e).map_err(|why| (i, why))?,
        }
    }
    b.flush();
    Ok((b.conversation, b.bad_usage.warning()))
}

/// The `action` of the LLM-summarising condenser's events (`CondensationAction`).
const CONDENSATION: &str = "condensation";

/// An event that is not an action: an observation, else an error.
fn event(b: &mut Builder, e: &Value) -> Result<(), String> {
    match e.get("observation").and_then(Value::as_str) {
        Some(observation) => {
            observation_event(b, e, observation);
            Ok(())
        }
        None => Err("an event has neither a string `action` nor a string `observation`".into()),
    }
}

/// A condenser's `condensation` action (`openhands/events/action/agent.py` `CondensationAction`,
/// `openhands/memory/view.py` `View.from_events`): its forgotten events (`forgotten_event_ids`,
/// else `forgotten_events_start_id`..=`forgotten_events_end_id`) join those of the condensations
/// before it, and the context restarts as the view OpenHands sends from then on: a compaction
/// marker carrying `summary`, then every earlier event not forgotten (the kept head, with the
/// system prompt, and the kept tail), read again without their requests (they were billed where
/// they happened). OpenHands puts the summary after the kept head (`summary_offset`); here it
/// comes first, which changes the cache prefix but not the tokens sent.
fn condensation(
    b: &mut Builder,
    before: &[Value],
    e: &Value,
    forgotten: &mut BTreeSet<i64>,
    usages: &BTreeMap<String, Usage>,
    budget: usize,
) -> Option<usize> {
    let args = e.get("args");
    let known = forgotten.len();
    let listed = args.and_then(|a| a.get("forgotten_event_ids")).and_then(Value::as_array);
    match listed {
        Some(ids) => forgotten.extend(ids.iter().filter_map(Value::as_i64)),
        None => {
            let bound = |key: &str| args.and_then(|a| a.get(key)).and_then(Value::as_i64);
            if let (Some(start), Some(end)) =
                (bound("forgotten_events_start_id"), bound("forgotten_events_end_id"))
            {
                forgotten.extend(start..=end.min(start.saturating_add(MAX_FORGOTTEN)));
            }
        }
    }
    if forgotten.len() == known {
        // Nothing more forgotten: OpenHands sends the same view (a summary alone is not sent
        // without a forgotten range to stand for).
        return Some(0);
    }
    let kept: Vec<&Value> = before
        .iter()
        .filter(|e| e.is_object() && e.get("action").and_then(Value::as_str) != Some(CONDENSATION))
        .filter(|e| !e.get("id").and_then(Value::as_i64).is_some_and(|id| forgotten.contains(&id)))
        .collect();
    if kept.len() > budget {
        return None;
    }
    b.flush();
    let summary = args.map(|a| str_at(a, "summary")).filter(|s| !s.is_empty());
    b.conversation.items.push(Item::Compaction { summary });
    let mut again = Builder::default();
    for e in &kept {
        match e.get("action").and_then(Value::as_str) {
            Some(action) => action_event(&mut again, e, action, usages),
            None => {
                let _ = event(&mut again, e);
            }
        }
    }
    again.flush();
    let items = again.conversation.items.into_iter().filter(|i| !matches!(i, Item::Request(_)));
    b.conversation.items.extend(items);
    Some(kept.len())
}

/// Events the condensations of one conversation may send again, per event of it: each sends the
/// events it kept again (about half the condenser's `max_size` in OpenHands' own logs), so a log of
/// many condensations that forget little would otherwise grow its trace with the square of its
/// length.
const REREAD_PER_EVENT: usize = 64;

const TOO_MANY_CONDENSATIONS: &str = "too many condensations for the events they keep (each sends the events it kept again): not an OpenHands log as written";

/// The most events one condensation's id range forgets (a range is a log's word: a hostile one
/// does not make the reader allocate without bound).
const MAX_FORGOTTEN: i64 = 1 << 20;

fn action_event(b: &mut Builder, e: &Value, action: &str, usages: &BTreeMap<String, Usage>) {
    let args = e.get("args").cloned().unwrap_or(Value::Null);
    let source = e.get("source").and_then(Value::as_str).unwrap_or("");
    let timestamp = e.get("timestamp").and_then(Value::as_str).and_then(parse_rfc3339);
    let metadata = e.get("tool_call_metadata").filter(|m| m.is_object());
    let Some(metadata) = metadata else {
        match (action, source) {
            ("message", "user") => {
                b.flush();
                let images = args.get("image_urls").and_then(Value::as_array).map_or(0, |a| a.len() as u32);
                b.push(Item::User { text: str_at(&args, "content"), meta: false, images });
            }
            ("message", _) => {
                b.flush();
                let id = e.get("response_id").and_then(Value::as_str).map(str::to_owned);
                let usage = id.as_ref().and_then(|id| usages.get(id)).copied();
                b.push(Item::Request(Request { id, timestamp, usage, model: None }));
                b.push(Item::Assistant { text: str_at(&args, "content") });
            }
            ("think", _) => {
                let text = str_at(&args, "thought");
                if !text.is_empty() {
                    b.push(Item::Assistant { text });
                }
            }
            ("system", _) => {
                b.flush();
                b.push(Item::System { text: str_at(&args, "content") });
                if let Some(tools) = args.get("tools").filter(|t| t.as_array().is_some_and(|a| !a.is_empty()))
                {
                    b.push(Item::System { text: tools.to_string() });
                }
            }
            _ => {} // bookkeeping: change_agent_state, recall, …
        }
        return;
    };
    let response = metadata.get("model_response").filter(|r| r.is_object());
    let response_id = response.and_then(|r| r.get("id")).and_then(Value::as_str).map(str::to_owned);
    let event_id = e.get("id").and_then(Value::as_i64);
    let key = response_id.clone().unwrap_or_else(|| format!("event-{}", event_id.unwrap_or(-1)));
    let message =
        response.and_then(|r| r.get("choices")).and_then(|c| c.get(0)).and_then(|c| c.get("message"));
    if b.open.as_deref() != Some(key.as_str()) {
        b.flush();
        let recorded = match response.and_then(|r| r.get("usage")).and_then(openai_usage).transpose() {
            Ok(usage) => usage,
            Err(why) => {
                let place = format!("{}.tool_call_metadata.model_response.usage", b.place);
                b.bad_usage.note(place, why);
                None
            }
        };
        let usage = recorded.or_else(|| response_id.as_ref().and_then(|id| usages.get(id)).copied());
        let model = response.and_then(|r| r.get("model")).and_then(Value::as_str).map(str::to_owned);
        b.conversation.items.push(Item::Request(Request { id: response_id, timestamp, usage, model }));
        let (text, _) = content_text(message.and_then(|m| m.get("content")));
        let text = if text.is_empty() { str_at(&args, "thought") } else { text };
        if !text.is_empty() {
            b.conversation.items.push(Item::Assistant { text });
        }
        b.open = Some(key);
    }
    let call_id = str_at(metadata, "tool_call_id");
    let name = metadata.get("function_name").and_then(Value::as_str).unwrap_or(action).to_owned();
    let recorded = message
        .and_then(|m| m.get("tool_calls"))
        .and_then(Value::as_array)
        .and_then(|calls| {
            calls.iter().find(|c| c.get("id").and_then(Value::as_str) == Some(call_id.as_str()))
        })
        .and_then(|c| c.get("function"))
        .and_then(|f| f.get("arguments"));
    let arguments = json_text(recorded).unwrap_or_else(|| {
        let mut args = args.clone();
        if let Some(map) = args.as_object_mut() {
            map.remove("thought");
        }
        args.to_string()
    });
    if let Some(id) = event_id {
        b.calls.insert(id, (call_id.clone(), name.clone()));
    }
    b.names.insert(call_id.clone(), name.clone());
    b.response.push(Item::ToolCall { call_id, name, arguments });
}

fn observation_event(b: &mut Builder, e: &Value, observation: &str) {
    if matches!(observation, "agent_state_changed" | "null") {
        return;
    }
    let text = observation_text(e, observation);
    let by_cause = e.get("cause").and_then(Value::as_i64).and_then(|c| b.calls.get(&c)).cloned();
    let by_metadata = e
        .get("tool_call_metadata")
        .and_then(|m| m.get("tool_call_id"))
        .and_then(Value::as_str)
        .and_then(|id| b.names.get(id).map(|n| (id.to_owned(), n.clone())));
    match by_cause.or(by_metadata) {
        Some((call_id, name)) => b.push(Item::ToolResult(ToolResult {
            call_id,
            name: Some(name),
            output: Output::Raw { output: text },
            is_error: observation == "error",
            images: 0,
        })),
        None if !text.is_empty() => b.push(Item::User { text, meta: true, images: 0 }),
        None => {}
    }
}

/// The text OpenHands sends the model for an observation, as `ConversationMemory._process_observation`
/// builds it (`max_message_chars` truncation aside): `content`, except for the observations below.
fn observation_text(e: &Value, observation: &str) -> String {
    let content = str_at(e, "content");
    let extras = e.get("extras");
    match observation {
        // `CmdOutputObservation.to_agent_observation`.
        "run" => match extras.and_then(|x| x.get("metadata")) {
            Some(m) => format!("{}{content}{}", str_at(m, "prefix"), str_at(m, "suffix")),
            None => content,
        },
        // `str(FileEditObservation)`.
        "edit" => extras.and_then(edit_text).unwrap_or(content),
        "error" => content + "\n[Error occurred in processing last action]",
        "user_rejected" => format!("OBSERVATION:\n{content}\n[Last action has been rejected by the user]"),
        _ => content,
    }
}

/// `FileEditObservation.__str__` from the event's `extras`: the editor's own message for an
/// `oh_aci` edit (the field's default, empty, when it is missing), the one-line notice for a new
/// file; `None` (keep `content`) for an existing file, whose visualised diff is not rebuilt, or
/// when `prev_exist` is not recorded.
fn edit_text(extras: &Value) -> Option<String> {
    if extras.get("impl_source").and_then(Value::as_str) == Some("oh_aci") {
        return Some(str_at(extras, "formatted_output_and_error"));
    }
    match extras.get("prev_exist").and_then(Value::as_bool) {
        Some(false) => {
            Some(format!("[New file {} is created with the provided content.]\n", str_at(extras, "path")))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shared::testing::{FOREIGN, kinds};
    use crate::format::with_head;

    fn read(text: &str) -> Trace {
        OpenHands.read(&mut text.as_bytes(), Path::new("t.json")).unwrap()
    }

    fn response(id: &str, calls: &str, prompt: u64) -> String {
        format!(
            r#"{{"id": "{id}", "choices": [{{"message": {{"content": "Let me look.", "tool_calls": [{calls}]}}}}], "usage": {{"prompt_tokens": {prompt}, "completion_tokens": 9, "prompt_tokens_details": {{"cached_tokens": 10}}, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 10}}}}"#
        )
    }

    fn trajectory() -> String {
        let two_calls = r#"{"id": "t1", "function": {"name": "execute_bash", "arguments": "{\"command\": \"ls\"}"}}, {"id": "t2", "function": {"name": "str_replace_editor", "arguments": "{\"command\": \"view\"}"}}"#;
        let r1 = response("chatcmpl-1", two_calls, 3000);
        format!(
            r#"[
  {{"id": 0, "timestamp": "2025-01-20T20:29:13.519638", "source": "environment", "message": "", "observation": "agent_state_changed", "content": "", "extras": {{}}}},
  {{"id": 1, "timestamp": "2025-01-20T20:29:13.6", "source": "agent", "message": "", "action": "system", "args": {{"content": "You are OpenHands.", "tools": [{{"type": "function"}}]}}}},
  {{"id": 2, "timestamp": "2025-01-20T20:29:32.262843", "source": "user", "message": "do it", "action": "message", "args": {{"content": "do it", "image_urls": []}}}},
  {{"id": 3, "timestamp": "2025-01-20T20:29:32.289136", "source": "user", "message": "No observation", "cause": 2, "observation": "null", "content": "", "extras": {{}}}},
  {{"id": 4, "timestamp": "2025-01-20T20:29:35.040676", "source": "agent", "action": "run", "args": {{"command": "ls", "thought": "Let me look."}},
   "tool_call_metadata": {{"function_name": "execute_bash", "tool_call_id": "t1", "model_response": {r1}, "total_calls_in_response": 2}}}},
  {{"id": 5, "timestamp": "2025-01-20T20:29:35.7", "source": "agent", "cause": 4, "observation": "run", "content": "a.py",
   "extras": {{"metadata": {{"prefix": "", "suffix": "\n[The command completed with exit code 0.]"}}}}}},
  {{"id": 6, "timestamp": "2025-01-20T20:29:36", "source": "agent", "action": "read", "args": {{"path": "a.py"}},
   "tool_call_metadata": {{"function_name": "str_replace_editor", "tool_call_id": "t2", "model_response": {r1}, "total_calls_in_response": 2}}}},
  {{"id": 7, "timestamp": "2025-01-20T20:29:36.1", "source": "agent", "cause": 6, "observation": "read", "content": "print(1)", "extras": {{}}}},
  {{"id": 8, "timestamp": "2025-01-20T20:30:35.414886", "source": "agent", "message": "done", "action": "message", "args": {{"content": "All done."}}}},
  {{"id": 9, "timestamp": "2025-01-20T20:30:35.421080", "source": "agent", "message": "No observation", "cause": 8, "observation": "null", "content": "", "extras": {{}}}}
]"#
        )
    }

    #[test]
    fn one_request_per_model_response_with_calls_before_their_results() {
        let t = read(&trajectory());
        let c = &t.conversations[0];
        let order = "system system user request assistant call call result result request assistant";
        assert_eq!(kinds(&c.items), order.split(' ').collect::<Vec<_>>());
        let Item::Request(r) = &c.items[3] else { panic!() };
        assert_eq!(r.id.as_deref(), Some("chatcmpl-1"));
        assert_eq!(r.timestamp, parse_rfc3339("2025-01-20T20:29:35.040676Z"));
        let u = r.usage.unwrap();
        assert_eq!((u.input_tokens, u.cache_read_tokens, u.cache_write_tokens), (3000, Some(10), Some(5)));
        match (&c.items[5], &c.items[7], &c.items[8]) {
            (Item::ToolCall { call_id, name, arguments }, Item::ToolResult(r1), Item::ToolResult(r2)) => {
                assert_eq!((call_id.as_str(), name.as_str()), ("t1", "execute_bash"));
                assert_eq!(arguments, "{\"command\": \"ls\"}");
                assert_eq!((r1.call_id.as_str(), r1.name.as_deref()), ("t1", Some("execute_bash")));
                assert_eq!(r1.output.full_text(), "a.py\n[The command completed with exit code 0.]");
                assert_eq!((r2.call_id.as_str(), r2.name.as_deref()), ("t2", Some("str_replace_editor")));
            }
            other => panic!("{other:?}"),
        }
        let Item::Request(last) = &c.items[9] else { panic!() };
        assert_eq!(last.usage, None, "a reply without calls records no usage");
    }

    /// A run action calling `call` in its own model response, and its observation.
    fn step(id: i64, call: &str, output: &str) -> String {
        format!(
            r#"{{"id": {id}, "source": "agent", "action": "run", "args": {{"command": "ls"}}, "tool_call_metadata": {{"function_name": "execute_bash", "tool_call_id": "{call}", "model_response": {{"id": "r{id}"}}}}}},
            {{"id": {}, "source": "agent", "cause": {id}, "observation": "run", "content": "{output}", "extras": {{}}}}"#,
            id + 1
        )
    }

    #[test]
    fn a_condensation_restarts_the_context_with_its_summary_and_the_events_it_kept() {
        let head = r#"{"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands."}},
            {"id": 1, "source": "user", "action": "message", "args": {"content": "fix it"}}"#;
        let by_range = r#"{"id": 8, "source": "agent", "action": "condensation", "args": {"forgotten_events_start_id": 2, "forgotten_events_end_id": 5, "summary": "Listed twice.", "summary_offset": 1}}"#;
        let (one, two, three, four) =
            (step(2, "c1", "one"), step(4, "c2", "two"), step(6, "c3", "three"), step(9, "c4", "four"));
        let text = format!("[{head}, {one}, {two}, {three}, {by_range}, {four}]");
        let c = &read(&text).conversations[0];
        let before = "system user request call result request call result request call result";
        let after = "compaction system user call result request call result";
        assert_eq!(kinds(&c.items), format!("{before} {after}").split(' ').collect::<Vec<_>>());
        let Item::Compaction { summary } = &c.items[11] else { panic!("{:?}", c.items) };
        assert_eq!(summary.as_deref(), Some("Listed twice."));
        let Item::ToolResult(kept) = &c.items[15] else { panic!("{:?}", c.items) };
        assert_eq!(kept.output.full_text(), "three", "the tail the condensation kept is sent again");
        // A later condensation by ids forgets what the first did too, and the newest step.
        let by_ids = r#"{"id": 11, "source": "agent", "action": "condensation", "args": {"forgotten_event_ids": [6, 7], "summary": ""}}"#;
        let c =
            &read(&format!("[{head}, {one}, {two}, {three}, {by_range}, {four}, {by_ids}]")).conversations[0];
        let tail: Vec<_> = kinds(&c.items).into_iter().skip(19).collect();
        assert_eq!(tail, ["compaction", "system", "user", "call", "result"]);
        let Item::Compaction { summary } = &c.items[19] else { panic!("{:?}", c.items) };
        assert_eq!(*summary, None, "an empty summary is none");
        let Item::ToolResult(kept) = &c.items[23] else { panic!("{:?}", c.items) };
        assert_eq!(kept.output.full_text(), "four");
    }

    #[test]
    fn condensations_that_forget_nothing_new_change_nothing_and_endless_ones_are_refused() {
        let head = r#"{"id": 0, "source": "user", "action": "message", "args": {"content": "fix it"}}"#;
        let again = r#"{"id": 9, "source": "agent", "action": "condensation", "args": {"forgotten_event_ids": [], "summary": "S"}}"#;
        let c = &read(&format!("[{head}, {}, {again}]", step(1, "c1", "one"))).conversations[0];
        assert_eq!(kinds(&c.items), ["user", "request", "call", "result"]);
        // Each condensation forgets one more id that no event has, and re-reads all before it.
        let mut events = vec![head.to_owned()];
        for n in 0..200 {
            events.push(step(1000 + 2 * n, &format!("c{n}"), "x"));
            let forget = format!(
                r#"{{"id": {}, "source": "agent", "action": "condensation", "args": {{"forgotten_event_ids": [{}]}}}}"#,
                5000 + n,
                9000 + n
            );
            events.push(forget);
        }
        let text = format!("[{}]", events.join(", "));
        let err = OpenHands.read(&mut text.as_bytes(), Path::new("t.json")).unwrap_err().to_string();
        assert!(err.contains("too many condensations"), "{err}");
    }

    #[test]
    fn evaluation_output_lines_are_conversations_with_usage_from_metrics() {
        let events = r#"[{"id": 0, "source": "user", "action": "message", "args": {"content": "fix it"}},
            {"id": 1, "source": "agent", "action": "run", "args": {"command": "ls"}, "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "c1", "model_response": {"id": "r1"}}},
            {"id": 2, "source": "agent", "cause": 1, "observation": "error", "content": "boom", "extras": {}}]"#
            .replace('\n', " ");
        let metrics = r#"{"accumulated_token_usage": {"prompt_tokens": 700}, "token_usages": [{"model": "m", "prompt_tokens": 700, "completion_tokens": 3, "cache_read_tokens": 100, "cache_write_tokens": 0, "response_id": "r1"}]}"#;
        let text = format!(
            "{{\"instance_id\": \"a__b-1\", \"history\": {events}, \"metrics\": {metrics}}}\n{{\"instance_id\": \"a__b-2\", \"history\": []}}\n"
        );
        let t = read(&text);
        assert_eq!(t.conversations.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["a__b-1", "a__b-2"]);
        let c = &t.conversations[0];
        let Item::Request(r) = &c.items[1] else { panic!("{:?}", c.items) };
        assert_eq!(r.usage.map(|u| (u.input_tokens, u.cache_read_tokens)), Some((700, Some(100))));
        let Item::ToolResult(result) = &c.items[3] else { panic!("{:?}", c.items) };
        assert!(result.is_error);
    }

    #[test]
    fn results_are_the_text_openhands_sends_for_edits_errors_and_rejections() {
        let call = |id: u32, action: &str| {
            format!(
                r#"{{"id": {id}, "source": "agent", "action": "{action}", "args": {{}}, "tool_call_metadata": {{"function_name": "str_replace_editor", "tool_call_id": "c{id}", "model_response": {{"id": "r{id}"}}}}}}"#
            )
        };
        let observation = |cause: u32, kind: &str, extras: &str| {
            format!(
                r#"{{"id": {}, "source": "agent", "cause": {cause}, "observation": "{kind}", "content": "--- a\n+++ b\n+print(1)", "extras": {extras}}}"#,
                cause + 1
            )
        };
        let events = [
            call(0, "edit"),
            observation(
                0,
                "edit",
                r#"{"path": "/w/a.py", "prev_exist": false, "impl_source": "oh_aci", "formatted_output_and_error": "File created successfully at: /w/a.py"}"#,
            ),
            call(2, "edit"),
            observation(
                2,
                "edit",
                r#"{"path": "/w/b.py", "prev_exist": false, "impl_source": "llm_based_edit"}"#,
            ),
            call(4, "edit"),
            observation(
                4,
                "edit",
                r#"{"path": "/w/c.py", "prev_exist": true, "impl_source": "llm_based_edit"}"#,
            ),
            call(6, "run"),
            observation(6, "error", "{}"),
            call(8, "run"),
            observation(8, "user_rejected", "{}"),
        ];
        let t = read(&format!("[{}]", events.join(",\n")));
        let results: Vec<(String, bool)> = t.conversations[0]
            .items
            .iter()
            .filter_map(|i| match i {
                Item::ToolResult(r) => Some((r.output.full_text().into_owned(), r.is_error)),
                _ => None,
            })
            .collect();
        let diff = "--- a\n+++ b\n+print(1)";
        let want = [
            ("File created successfully at: /w/a.py".to_owned(), false),
            ("[New file /w/b.py is created with the provided content.]\n".to_owned(), false),
            (diff.to_owned(), false), // the visualised diff of an existing file is not rebuilt
            (format!("{diff}\n[Error occurred in processing last action]"), true),
            (format!("OBSERVATION:\n{diff}\n[Last action has been rejected by the user]"), false),
        ];
        assert_eq!(results, want);
    }

    #[test]
    fn errors_name_the_line_or_the_event() {
        let lines = "{\"instance_id\": 1, \"history\": []}\n{\"instance_id\": 2}\n";
        let e = OpenHands.read(&mut lines.as_bytes(), Path::new("o.jsonl")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "o.jsonl:2: expected an evaluation record with a `history` array of events"
        );
        let e = OpenHands
            .read(&mut r#"[{"id": 0, "source": "user"}]"#.as_bytes(), Path::new("t.json"))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json: [0]: an event has neither a string `action` nor a string `observation`"
        );
    }

    #[test]
    fn detects_trajectories_and_evaluation_output_only() {
        with_head(Path::new("x"), trajectory().as_bytes(), true, |h| assert!(OpenHands.detect(h)));
        let line = "{\"instance_id\": \"x\", \"instruction\": \"i\", \"history\": [{\"id\": 0, \"source\": \"user\", \"action\": \"message\"}]}\n";
        with_head(Path::new("x"), line.as_bytes(), true, |h| assert!(OpenHands.detect(h)));
        for (what, text) in FOREIGN {
            with_head(Path::new("x"), text.as_bytes(), true, |h| assert!(!OpenHands.detect(h), "{what}"));
        }
        let wrapped = format!("{{\"trajectory\": {}}}", trajectory());
        with_head(Path::new("x"), wrapped.as_bytes(), true, |h| {
            assert!(OpenHands.detect(h));
            assert!(!crate::format::swe_agent::SweAgent.detect(h), "SWE-agent must leave it alone");
        });
        assert_eq!(read(&wrapped).conversations[0], read(&trajectory()).conversations[0]);
    }
}
