//! `codex`: OpenAI Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`).
//!
//! Schema facts (see `FORMATS.md` §3 of the shared corpus): each line is `{timestamp, type,
//! payload}` with `type` ∈ `session_meta`, `turn_context`, `response_item`, `event_msg`,
//! `compacted`. `response_item` payloads are OpenAI Responses API input items — what Codex re-sends
//! to the model — so they are the replayed history; `event_msg` is the UI stream and mostly
//! duplicates them.
//!
//! What counts as sent text:
//! - `session_meta.base_instructions.text` (0.12x; 0.40 has `instructions: null`) is the request's
//!   `instructions` field, sent with **every** call: system text at the start, and again after each
//!   compaction.
//! - `message` items: `developer` (and `system`) → system text; `user` → user text, harness-injected
//!   (meta) when it starts with `<environment_context>`, `<user_instructions>`,
//!   `# AGENTS.md instructions` or `<permissions instructions>`; `assistant` → assistant text.
//!   `turn_context` lines are settings, not text: the instructions they carry are also recorded as
//!   the injected items above, so counting them would count twice.
//! - `function_call` (name, prefixed with its `namespace` as Codex flattens MCP tool names, and the
//!   arguments string), `custom_tool_call` (e.g. `apply_patch`, its `input`), `local_shell_call` and
//!   `web_search_call` (its `action`; it has no output item) are tool calls. **Decision on web
//!   searches:** the results of a `web_search_call` are added to the context by the provider and
//!   the rollout does not hold them, so an [`Item::Unseen`] of kind server-side with no size of
//!   its own stands for them; the calibration sizes it from the step the recorded prompt takes
//!   across it (`calibrate::steps`, docs/unseen-context.md). It goes before the request of the
//!   run that searched, not after the call: the provider feeds the results to the model within
//!   that call, whose recorded prompt already holds them (on a real 0.125 rollout each of three
//!   searches steps the recorded prompt at its own call and the step stays; on real 0.104 ones it
//!   falls back at the next call, and the calibration sizes the item by what stays: 0 there;
//!   docs/unseen-context.md). No result item follows the call ([`crate::model::HOSTED_WEB_SEARCH`]).
//! - `function_call_output` / `custom_tool_call_output` are tool results, linked by `call_id`.
//!   **Decision on 0.40 outputs:** `output` there is a JSON string `{"output":…,"metadata":{…}}`
//!   and that whole string is what Codex sent back to the model (codex-rs
//!   `core/src/tools/mod.rs::format_exec_output_for_model` builds it with `serde_json::to_string`,
//!   and the rollout records the same payload content), so the replayed output is the whole string
//!   as recorded, escapes and metadata included. 0.12x outputs are plain text with a `Chunk ID / Wall
//!   time / Process exited / Original token count / Output:` header, replayed as recorded too.
//!   `is_error` is set from `metadata.exit_code` or the `Process exited with code N` line.
//!   **Except where Codex rewrote it on the wire:** from 0.45 (openai/codex#4718, merged
//!   2025-10-04), when the model's `apply_patch` tool is freeform (`gpt-5-codex`, `gpt-5.1*`,
//!   `gpt-5.2*`, `codex-*`), Codex sends a `shell` / `container.exec` / `apply_patch` call's JSON
//!   output as text — `Exit code: N`, `Wall time: S seconds`, `Total output lines: T` when the
//!   output starts with that header, `Output:`, the output, joined with `\n`
//!   (`core/src/client_common.rs::reserialize_shell_outputs`) — while the rollout keeps the JSON.
//!   Those outputs are replayed as that text: on a 0.58 `gpt-5.1-codex` rollout the JSON string
//!   is 1 677 o200k tokens where the recorded prompt grew by 1 486 (docs/calibration.md, "Fresh
//!   logs"). 0.40 rollouts (`gpt-5-codex`, the corpus's) predate the rewrite: their recorded steps
//!   match the JSON string.
//! - **Decision on `reasoning` items:** the readable parts — `summary[].text` and, when present,
//!   `content[].text` — are thinking text. `encrypted_content` is the model's reasoning, which the
//!   Responses API decrypts and sends to the model again with every later call of the same turn,
//!   and drops once a new user turn starts (OpenAI's reasoning guide: the reasoning of earlier
//!   turns is discarded from the context). Its text is opaque, but its size is recorded: the
//!   `last_token_usage.reasoning_output_tokens` of the call that produced it. So each run's first
//!   reasoning item is followed by an [`Item::Unseen`] of kind reasoning with that many tokens
//!   (none when the call recorded none); the replay drops it at the next human turn
//!   (docs/unseen-context.md measures what it changes).
//! - `input_image` parts (a pasted screenshot in a user message, an image in a tool output given
//!   as parts) are counted on their item and followed by one [`Item::Unseen`] of kind image per
//!   item, sized by OpenAI's rule for the model of the first request after it (the call that
//!   first sends it; a rollout writes the `turn_context` that names the model after the prompt)
//!   from the dimensions of its `data:` URL (`crate::unseen::openai`, docs/unseen-context.md).
//! - `event_msg.user_message` is the typed prompt. It is a duplicate of a `user` response item in
//!   CLI rollouts and is dropped when one with the same text (or containing it) is recorded in the
//!   same turn; Codex Desktop writes prompts only there, and then it is the user text.
//! - `compacted` is a compaction marker: its `replacement_history` (newer versions) is the new
//!   context, else its `message` is the summary that starts it. A `compaction` item there (a
//!   remote compaction's summary, `encrypted_content` only) holds no readable text: nothing is
//!   replayed for it and the calibrated overhead of the segment it starts takes its size.
//!
//! **Decision on request boundaries.** Codex writes no request record. One model call is one run
//! of consecutive output items (reasoning, assistant message, tool calls; parallel calls are one
//! run), ended by any input item (user/developer message, tool output), a `turn_context`, a typed
//! prompt or a compaction; the request sits before the run's first item. Its recorded prompt size is
//! `last_token_usage.input_tokens` of the `token_count` event that belongs to that call (cached
//! tokens are a subset, kept as the cache-read figure). `token_count` with `info: null` carries no
//! usage, and one whose cumulative `total_token_usage` equals the previous one's is a repeat, not a
//! call. Versions differ in where the event falls: 0.40 writes it after the call's `turn_context` and
//! before the call's items; newer versions after the items (even after the tool outputs). So an
//! event is attached to the latest run when that run has no usage yet; otherwise it waits for the
//! next run (0.40), and if an input item, a `turn_context` or another event comes first, the call
//! produced no recorded item (an aborted turn) and it becomes a request of its own where it stands.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::look_alike::LookAlike;
use super::shared::str_at;
use super::{Format, Head, read_json_lines};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Millis, Output, Request, ToolResult, Trace, UnseenKind, Usage};
use crate::time::parse_rfc3339;
use crate::unseen::openai::{OpenAiImage, size_images};

/// Codex CLI rollout JSONL.
pub struct Codex;

const LINE_TYPES: [&str; 5] = ["session_meta", "turn_context", "response_item", "event_msg", "compacted"];

/// Prefixes of user items that the harness injects rather than a person types.
const INJECTED: [&str; 4] = [
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
];

impl Format for Codex {
    fn look_alike(&self) -> Option<LookAlike> {
        Some(LookAlike {
            record_keys: &["timestamp", "type", "payload"],
            records_are: "a Codex CLI rollout line",
            ..LookAlike::NONE
        })
    }

    fn name(&self) -> &'static str {
        "codex"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let Some(line) = head.first_json_line else { return false };
        head.first_type().is_some_and(|t| LINE_TYPES.contains(&t)) && line.get("payload").is_some()
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut reader = Reader::default();
        let mut warnings = Vec::new();
        read_json_lines(input, path, &mut warnings, |line, v| reader.line(path, line, &v))?;
        reader.flush_pending();
        reader.flush_prompts();
        for (kind, n) in &reader.unknown {
            warnings.push(format!("{n} `{kind}` item(s) not replayed (unknown item type)"));
        }
        for (kind, n) in &reader.unknown_records {
            warnings.push(format!(
                "{n} line(s) of record type `{kind}` not replayed: a Codex rollout layout this build does not read"
            ));
        }
        warnings.extend(reader.bad_usage.warning());
        let mut conversation = Conversation::new("main");
        // A reasoning item whose call recorded no reasoning tokens adds nothing.
        reader.items.retain(|i| !matches!(i, Item::Unseen { kind: UnseenKind::Reasoning, tokens: 0 }));
        size_images(&mut reader.items, &reader.images, reader.model.as_deref());
        conversation.items = reader.items;
        Ok(Trace { format: self.name(), conversations: vec![conversation], warnings })
    }
}

#[derive(Default)]
struct Reader {
    items: Vec<Item>,
    /// `session_meta.base_instructions.text`, re-sent after a compaction.
    instructions: Option<String>,
    seen_meta: bool,
    /// The last item was an output item: the current model call's run is still going.
    run_active: bool,
    /// Index of the latest run's request, while a `token_count` may still belong to it.
    open: Option<usize>,
    /// A `token_count` (usage, reasoning tokens, time) waiting for the run it belongs to.
    pending: Option<(Usage, Option<u64>, Option<Millis>)>,
    /// Reasoning output tokens of the latest run's call, once its usage is known.
    run_reasoning: Option<u64>,
    /// Index of the latest run's hidden reasoning item, once its reasoning item is read.
    run_slot: Option<usize>,
    /// Cumulative `total_token_usage` of the last `token_count`, to drop repeats.
    last_total: Option<Value>,
    /// User response-item texts since the last run started (to drop duplicate prompt events).
    turn_user_texts: Vec<String>,
    /// Prompt events not (yet) mirrored by a user response item.
    prompts: Vec<String>,
    names: HashMap<String, String>,
    /// Reading a compaction's replacement history: its items are context, not new calls.
    replaying: bool,
    web_searches: usize,
    unknown: BTreeMap<String, usize>,
    /// Lines of a record type no Codex layout read here writes, by type.
    unknown_records: BTreeMap<String, usize>,
    /// `last_token_usage` fields that are not token counts.
    bad_usage: super::shared::BadUsage,
    /// The model of the latest `turn_context` (`payload.model`).
    model: Option<String>,
    /// `session_meta.cli_version` as (major, minor), when it reads as a version.
    cli_version: Option<(u64, u64)>,
    /// The images of each image item, in order, sized once the requests' models are known.
    images: Vec<Vec<OpenAiImage>>,
}

impl Reader {
    fn line(&mut self, path: &Path, line: usize, v: &Value) -> Result<(), TraceError> {
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            return Err(TraceError::line(path, line, "expected an object with a string `type`"));
        };
        let payload = v.get("payload").unwrap_or(&Value::Null);
        let at = v.get("timestamp").and_then(Value::as_str).and_then(parse_rfc3339);
        match kind {
            "session_meta" if !self.seen_meta => {
                self.seen_meta = true;
                self.cli_version = payload.get("cli_version").and_then(Value::as_str).and_then(major_minor);
                let text = payload
                    .get("base_instructions")
                    .and_then(|b| b.get("text").or(Some(b)))
                    .and_then(Value::as_str)
                    .or_else(|| payload.get("instructions").and_then(Value::as_str));
                if let Some(text) = text.filter(|t| !t.is_empty()) {
                    self.instructions = Some(text.to_owned());
                    self.items.push(Item::System { text: text.to_owned() });
                }
            }
            "turn_context" => {
                self.flush_pending();
                if let Some(model) = payload.get("model").and_then(Value::as_str) {
                    self.model = Some(model.to_owned());
                }
                self.open = None;
                self.run_active = false;
            }
            "response_item" => self.response_item(path, line, payload, at)?,
            "event_msg" => match payload.get("type").and_then(Value::as_str) {
                Some("token_count") => self.token_count(payload, at, || format!("{}:{line}", path.display())),
                Some("user_message") => {
                    let text = str_at(payload, "message");
                    self.run_active = false;
                    self.open = None;
                    if !self.turn_user_texts.iter().any(|t| t.contains(text.as_str())) {
                        self.prompts.push(text);
                    }
                }
                // The rest duplicates response items or is UI progress.
                _ => {}
            },
            "compacted" => {
                self.flush_pending();
                self.prompts.clear();
                self.open = None;
                self.run_active = false;
                let replacement = payload.get("replacement_history").and_then(Value::as_array);
                let summary = match replacement {
                    Some(_) => None,
                    None => payload.get("message").and_then(Value::as_str).map(str::to_owned),
                };
                self.items.push(Item::Compaction { summary });
                if let Some(text) = &self.instructions {
                    self.items.push(Item::System { text: text.clone() });
                }
                self.replaying = true;
                for item in replacement.into_iter().flatten() {
                    self.response_item(path, line, item, at)?;
                }
                self.replaying = false;
                self.run_active = false;
                self.open = None;
            }
            // A resumed session's later headers repeat the first; a line without `payload` is
            // no rollout record (another format's file read with `--input-format codex`).
            other if other != "session_meta" && v.get("payload").is_some() => {
                *self.unknown_records.entry(other.to_owned()).or_default() += 1;
            }
            _ => {}
        }
        Ok(())
    }

    fn token_count(&mut self, payload: &Value, at: Option<Millis>, here: impl Fn() -> String) {
        let Some(info) = payload.get("info").filter(|i| !i.is_null()) else { return };
        let total = info.get("total_token_usage").cloned();
        if total.is_some() && total == self.last_total {
            return;
        }
        self.last_total = total;
        let Some(last) = info.get("last_token_usage") else { return };
        let usage = super::shared::usage_from(
            last,
            "input_tokens",
            Some("cached_input_tokens"),
            None,
            "output_tokens",
        );
        let usage = match usage {
            Ok(Some(usage)) => usage,
            Ok(None) => return,
            Err(why) => return self.bad_usage.note(here(), why),
        };
        let reasoning = match super::shared::recorded_count(last, "reasoning_output_tokens") {
            Ok(n) => n,
            Err(why) => return self.bad_usage.note(here(), why),
        };
        if let Some(Item::Request(r)) = self.open.and_then(|i| self.items.get_mut(i)) {
            if r.usage.is_none() {
                r.usage = Some(usage);
                self.run_reasoning = reasoning;
                self.fill_reasoning();
                return;
            }
        }
        self.flush_pending();
        self.pending = Some((usage, reasoning, at));
    }

    /// Sizes the latest run's hidden reasoning item from its call's recorded reasoning tokens,
    /// once both are known (the `token_count` comes before the items in 0.40, after them later).
    fn fill_reasoning(&mut self) {
        let (Some(slot), Some(n)) = (self.run_slot, self.run_reasoning) else { return };
        if let Some(Item::Unseen { tokens, .. }) = self.items.get_mut(slot) {
            *tokens = n;
        }
    }

    /// A `token_count` whose call left no recorded item becomes a request where it stands.
    fn flush_pending(&mut self) {
        if let Some((usage, _, timestamp)) = self.pending.take() {
            self.items.push(Item::Request(Request {
                id: None,
                timestamp,
                usage: Some(usage),
                model: self.model.clone(),
            }));
            self.open = None;
        }
    }

    fn flush_prompts(&mut self) {
        for text in std::mem::take(&mut self.prompts) {
            self.items.push(Item::User { text, meta: false, images: 0 });
        }
    }

    /// Before an output item: starts a new run (a request) unless one is going.
    fn output(&mut self, at: Option<Millis>) {
        if self.run_active || self.replaying {
            return;
        }
        self.flush_prompts();
        let (usage, reasoning, timestamp) = match self.pending.take() {
            Some((u, r, t)) => (Some(u), r, t.or(at)),
            None => (None, None, at),
        };
        self.run_reasoning = reasoning;
        self.run_slot = None;
        self.items.push(Item::Request(Request { id: None, timestamp, usage, model: self.model.clone() }));
        self.open = Some(self.items.len() - 1);
        self.run_active = true;
        self.turn_user_texts.clear();
    }

    /// Before an input item: the run is over.
    fn input(&mut self) {
        self.flush_pending();
        self.run_active = false;
    }

    fn response_item(
        &mut self,
        path: &Path,
        line: usize,
        p: &Value,
        at: Option<Millis>,
    ) -> Result<(), TraceError> {
        let Some(kind) = p.get("type").and_then(Value::as_str) else {
            return Err(TraceError::line(path, line, "response_item payload has no string `type`"));
        };
        match kind {
            "message" => return self.message(path, line, p, at),
            "reasoning" => self.reasoning(p, at),
            "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call" => {
                self.tool_call(kind, p, at)
            }
            "function_call_output" | "custom_tool_call_output" => self.tool_output(p),
            // Codex's own undo checkpoint (a git commit id), never sent to the model; and the
            // encrypted summary of a remote compaction, sent but opaque: the overhead of the
            // segment it starts takes its size.
            "ghost_snapshot" | "compaction" => {}
            other => *self.unknown.entry(format!("response_item {other}")).or_default() += 1,
        }
        Ok(())
    }

    /// A `message` item: the assistant's text, the user's (or an injected context), or a system text.
    fn message(&mut self, path: &Path, line: usize, p: &Value, at: Option<Millis>) -> Result<(), TraceError> {
        let (text, images) = content_text(p.get("content"));
        self.message_items(path, line, p, at, text, images)?;
        self.images_item(p.get("content"));
        Ok(())
    }

    /// The item of a `message` of `text` and `images` images.
    fn message_items(
        &mut self,
        path: &Path,
        line: usize,
        p: &Value,
        at: Option<Millis>,
        text: String,
        images: u32,
    ) -> Result<(), TraceError> {
        match p.get("role").and_then(Value::as_str).unwrap_or("") {
            "assistant" => {
                self.output(at);
                self.items.push(Item::Assistant { text });
            }
            "user" => {
                self.input();
                self.prompts.retain(|prompt| !text.contains(prompt.as_str()));
                self.flush_prompts();
                let meta = INJECTED.iter().any(|prefix| text.trim_start().starts_with(prefix));
                self.turn_user_texts.push(text.clone());
                self.items.push(Item::User { text, meta, images });
            }
            "developer" | "system" => {
                self.input();
                self.items.push(Item::System { text });
            }
            other => {
                return Err(TraceError::line(
                    path,
                    line,
                    format!("message role `{other}` is not user, assistant, developer or system"),
                ));
            }
        }
        Ok(())
    }

    /// A `reasoning` item: its readable summary, and a slot for the encrypted part sent again.
    fn reasoning(&mut self, p: &Value, at: Option<Millis>) {
        self.output(at);
        let mut parts: Vec<&str> = Vec::new();
        for key in ["summary", "content"] {
            for part in p.get(key).and_then(Value::as_array).into_iter().flatten() {
                if let Some(t) = part.get("text").and_then(Value::as_str) {
                    parts.push(t);
                }
            }
        }
        if !parts.is_empty() {
            self.items.push(Item::Thinking { text: parts.join("\n") });
        }
        // The encrypted reasoning this item carries is sent again with the turn's later
        // calls: sized from its call's recorded reasoning tokens (module doc).
        if !self.replaying && self.run_slot.is_none() {
            self.items.push(Item::Unseen { kind: UnseenKind::Reasoning, tokens: 0 });
            self.run_slot = Some(self.items.len() - 1);
            self.fill_reasoning();
        }
    }

    /// A call item: a function, custom tool, local shell or web search call.
    fn tool_call(&mut self, kind: &str, p: &Value, at: Option<Millis>) {
        self.output(at);
        let call_id = match p.get("call_id").and_then(Value::as_str) {
            Some(id) => id.to_owned(),
            None => {
                self.web_searches += 1;
                p.get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("{kind}-{}", self.web_searches), str::to_owned)
            }
        };
        let (name, arguments) = match kind {
            "function_call" => {
                let name = str_at(p, "name");
                let name = match p.get("namespace").and_then(Value::as_str) {
                    Some(ns) => format!("{ns}{name}"),
                    None => name,
                };
                (name, str_at(p, "arguments"))
            }
            "custom_tool_call" => (str_at(p, "name"), str_at(p, "input")),
            "local_shell_call" => ("local_shell".to_owned(), json_field(p, "action")),
            _ => (crate::model::HOSTED_WEB_SEARCH.to_owned(), json_field(p, "action")),
        };
        self.names.insert(call_id.clone(), name.clone());
        self.items.push(Item::ToolCall { call_id, name, arguments });
        if kind == "web_search_call" {
            self.search_results();
        }
    }

    /// The unseen item that holds a web search's results (module doc): the provider feeds them
    /// to the model within the call that searched, so they go before that call's request (its
    /// recorded prompt already holds them); in a compaction's replacement history, where they are
    /// context only, after the call.
    fn search_results(&mut self) {
        let results = Item::Unseen { kind: UnseenKind::ServerSide, tokens: 0 };
        match self.open.filter(|_| self.run_active && !self.replaying) {
            Some(request) => {
                self.items.insert(request, results);
                self.open = Some(request + 1);
                if let Some(slot) = self.run_slot.as_mut().filter(|slot| **slot >= request) {
                    *slot += 1;
                }
            }
            None => self.items.push(results),
        }
    }

    /// A call's output item.
    fn tool_output(&mut self, p: &Value) {
        self.input();
        let call_id = str_at(p, "call_id");
        let (output, images) = match p.get("output") {
            Some(Value::String(s)) => (s.clone(), 0),
            Some(Value::Array(_)) => content_text(p.get("output")),
            Some(Value::Object(o)) => match o.get("content") {
                Some(Value::String(s)) => (s.clone(), 0),
                Some(c @ Value::Array(_)) => content_text(Some(c)),
                _ => (Value::Object(o.clone()).to_string(), 0),
            },
            _ => (String::new(), 0),
        };
        let is_error = exit_code(&output).is_some_and(|c| c != 0);
        let name = self.names.get(&call_id).cloned();
        let shell = name.as_deref().is_some_and(|n| matches!(n, "shell" | "container.exec" | "apply_patch"));
        let output = match shell && self.rewrites_shell_outputs() {
            true => as_sent_text(&output).unwrap_or(output),
            false => output,
        };
        self.items.push(Item::ToolResult(ToolResult {
            call_id,
            name,
            output: Output::Raw { output },
            is_error,
            images,
        }));
        let parts = p.get("output").map(|o| o.get("content").unwrap_or(o));
        self.images_item(parts);
    }

    /// After a message or output: one image item for the `input_image` parts of its content, if
    /// it has any, sized at the end by the model of the request that sends it (module doc).
    fn images_item(&mut self, content: Option<&Value>) {
        let Some(Value::Array(parts)) = content else { return };
        let images: Vec<OpenAiImage> = parts
            .iter()
            .filter(|part| matches!(part.get("type").and_then(Value::as_str), Some("input_image" | "image")))
            .map(OpenAiImage::of_part)
            .collect();
        if !images.is_empty() {
            self.images.push(images);
            self.items.push(Item::Unseen { kind: UnseenKind::Image, tokens: 0 });
        }
    }
}

impl Reader {
    /// Whether Codex sent this rollout's shell outputs as text rather than as the recorded JSON
    /// (module doc): 0.45 or later, with a model whose `apply_patch` tool is freeform.
    fn rewrites_shell_outputs(&self) -> bool {
        let freeform =
            |m: &str| ["gpt-5-codex", "gpt-5.1", "gpt-5.2", "codex-"].iter().any(|p| m.starts_with(p));
        self.cli_version.is_some_and(|v| v >= (0, 45)) && self.model.as_deref().is_some_and(freeform)
    }
}

/// `"0.58.0"` → (0, 58); `"0.128.0-alpha.1"` → (0, 128).
fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    Some((major, minor))
}

/// The text Codex sends for a shell call's JSON output `{"output":…,"metadata":{"exit_code":…,
/// "duration_seconds":…}}` (module doc), or `None` when the output is not of that shape. The
/// numbers print as Rust prints an `i32` and an `f32` (`0.0` → `0`).
fn as_sent_text(output: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Exec {
        output: String,
        metadata: Metadata,
    }
    #[derive(serde::Deserialize)]
    struct Metadata {
        exit_code: i32,
        duration_seconds: f32,
    }
    if !output.starts_with('{') {
        return None;
    }
    let exec: Exec = serde_json::from_str(output).ok()?;
    let mut sections = vec![
        format!("Exit code: {}", exec.metadata.exit_code),
        format!("Wall time: {} seconds", exec.metadata.duration_seconds),
    ];
    let mut body = exec.output.as_str();
    let header = body.strip_prefix("Total output lines: ").and_then(|rest| rest.split_once('\n'));
    if let Some((total, rest)) = header.and_then(|(t, rest)| Some((t.parse::<u32>().ok()?, rest))) {
        sections.push(format!("Total output lines: {total}"));
        body = rest.strip_prefix('\n').unwrap_or(rest);
    }
    sections.push("Output:".to_owned());
    sections.push(body.to_owned());
    Some(sections.join("\n"))
}

/// Text of a Responses API content list (`input_text`, `output_text`, `text` parts joined with
/// `\n`) and the number of images in it; a plain string is its own text.
fn content_text(content: Option<&Value>) -> (String, u32) {
    match content {
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            let mut images = 0;
            for part in parts {
                match part.get("type").and_then(Value::as_str) {
                    Some("input_image") | Some("image") => images += 1,
                    _ => {
                        if let Some(t) = part.get("text").and_then(Value::as_str) {
                            texts.push(t);
                        }
                    }
                }
            }
            (texts.join("\n"), images)
        }
        _ => (String::new(), 0),
    }
}

fn json_field(v: &Value, key: &str) -> String {
    v.get(key).map(Value::to_string).unwrap_or_default()
}

/// The exit code a shell output reports: `metadata.exit_code` of a 0.40 JSON output, or the
/// `Process exited with code N` header line of a 0.12x one.
fn exit_code(output: &str) -> Option<i64> {
    /// The only part of a 0.40 output read here: its `output` (the bulk of it) is checked as JSON
    /// and skipped instead of being copied into a `Value`.
    #[derive(serde::Deserialize)]
    struct Exec {
        metadata: Option<Value>,
    }
    if output.starts_with('{') {
        match serde_json::from_str::<Exec>(output) {
            Ok(exec) => return exec.metadata?.get("exit_code")?.as_i64(),
            // What a record cannot take but a `Value` can (a key given twice) reads as before.
            Err(_) => {
                if let Ok(v) = serde_json::from_str::<Value>(output) {
                    return v.get("metadata")?.get("exit_code")?.as_i64();
                }
            }
        }
    }
    output
        .lines()
        .take(6)
        .find_map(|l| l.strip_prefix("Process exited with code "))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests;
