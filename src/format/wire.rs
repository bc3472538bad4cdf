//! Shared pieces of the API wire-format importers ([`openai_chat`](super::openai_chat),
//! [`anthropic_messages`](super::anthropic_messages), [`openai_responses`](super::openai_responses),
//! [`cassette`](super::cassette), [`inspect`](super::inspect)). It is not a format of its own.
//!
//! - Reading one whole JSON document, with errors that name the line and column.
//! - Detection from a truncated head: [`head_document`] closes the brackets of the first 64 KiB
//!   so the formats can look at a real JSON value, and [`classify`] says which API family a message
//!   list belongs to, so the formats' `detect` functions agree and never claim the same file.
//! - [`Builder`]: appends items, links each tool result to its call to fill in the tool name, and
//!   counts what was not replayed.
//! - [`Chains`]: turns a series of recorded calls, each holding the full history so far (VCR
//!   cassettes, Inspect model events), into conversations with one request boundary per call.
//! - [`usage_of_response`]: the prompt size a provider's response body records, normalised as in
//!   `FORMATS.md` (Anthropic: input + cache creation + cache read; OpenAI and Gemini: the prompt
//!   count alone, cached tokens being a subset).
//!
//! Like every format module it does no I/O of its own and never prints.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde_json::{Map, Value};

use super::Head;
use crate::model::{Cleared, Conversation, Item, Output, Request, ToolResult, UnseenKind, Usage};
use crate::unseen::openai::{OpenAiImage, size_images};

/// Where request boundaries go while converting a message list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Calls {
    /// An LLM call produced each assistant message (each run of model output items): a boundary
    /// sits before it. Used when a file is a transcript or a single request body.
    BeforeEachAssistant,
    /// The list is the history one recorded call sent; the caller places the boundary.
    None,
}

/// Reads a whole input as one JSON document. A syntax error names the line.
pub(crate) use super::shared::read_document;

/// The value a JSON document's head describes: the whole document when the head holds all of it,
/// else the head with its open strings cut and its brackets closed. `None` when the head is not a
/// JSON object or array, or holds more than one value (JSON Lines, read by other formats).
pub(crate) fn head_document(head: &Head<'_>) -> Option<Value> {
    let text = head.text.trim_start_matches('\u{feff}').trim_start();
    let first = *text.as_bytes().first()?;
    if first != b'{' && first != b'[' {
        return None;
    }
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut end: Option<usize> = None;
    structure(bytes, |i, b| {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    end = Some(i);
                    return false;
                }
            }
            _ => {}
        }
        true
    });
    let mut limit = bytes.len();
    if let Some(i) = end {
        // The first value is complete: it is the document if nothing follows it.
        if !text[i + 1..].trim().is_empty() {
            return None;
        }
        match serde_json::from_str(&text[..=i]) {
            Ok(doc) => return Some(doc),
            // A syntax error (a hand edit gone wrong): describe the part before it, so that the
            // format is still recognised and its reader names the line.
            Err(e) => limit = byte_offset(text, e.line(), e.column()).min(limit),
        }
    }
    // The last place before `limit` where everything before is complete, and the brackets open
    // there (found again rather than copied at every comma: that would be quadratic in a deeply
    // nested head).
    let mut cut: Option<usize> = None;
    structure(&bytes[..limit], |i, b| {
        match b {
            b',' => cut = Some(i),
            b'}' | b']' => cut = Some(i + 1),
            _ => {}
        }
        true
    });
    let at = cut?;
    let open = open_brackets(&bytes[..at]);
    let mut repaired = String::with_capacity(at + open.len());
    repaired.push_str(&text[..at]);
    repaired.extend(open.iter().rev().map(|&b| b as char));
    serde_json::from_str(&repaired).ok()
}

/// The byte offset of a 1-based line and column (serde_json's error position) in `text`.
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (start + column.saturating_sub(1)).min(text.len())
}

/// Calls `f` with the index and byte of every bracket and comma of `bytes` (JSON text) outside
/// strings, until it returns `false`.
fn structure(bytes: &[u8], mut f: impl FnMut(usize, u8) -> bool) {
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' | b'}' | b']' | b',' if !f(i, b) => return,
            _ => {}
        }
    }
}

/// The closing brackets of the containers open at the end of `bytes` (a JSON prefix), innermost
/// last.
fn open_brackets(bytes: &[u8]) -> Vec<u8> {
    let mut closers = Vec::new();
    structure(bytes, |_, b| {
        match b {
            b'{' => closers.push(b'}'),
            b'[' => closers.push(b']'),
            b'}' | b']' => {
                closers.pop();
            }
            _ => {}
        }
        true
    });
    closers
}

/// Which API a message list (or request body) is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// Only `{role, content: string}` messages: valid in every family; read as OpenAI Chat.
    Plain,
    /// OpenAI Chat Completions.
    Chat,
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Responses.
    Responses,
}

/// Item types of the OpenAI Responses API (`input[]` / `output[]`).
pub(crate) const RESPONSES_ITEM_TYPES: [&str; 22] = [
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "shell_call",
    "shell_call_output",
    "apply_patch_call",
    "apply_patch_call_output",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "item_reference",
    "compaction",
];

/// Content-part types only Anthropic uses.
const ANTHROPIC_BLOCKS: [&str; 9] = [
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "image",
    "document",
    "server_tool_use",
    "web_search_tool_result",
    "search_result",
];

/// Content-part types only OpenAI Chat uses.
const CHAT_PARTS: [&str; 3] = ["image_url", "input_audio", "file"];

/// Content-part types only OpenAI Responses uses.
const RESPONSES_PARTS: [&str; 4] = ["input_text", "output_text", "input_image", "input_file"];

/// Roles of chat messages in every family.
const ROLES: [&str; 6] = ["system", "developer", "user", "assistant", "tool", "function"];

/// The family of a message list, from the markers its messages carry. `None` when an element is
/// not a message (an agent's own event or line format) or when markers of two families mix.
pub(crate) fn classify(messages: &[Value]) -> Option<Family> {
    let mut seen = Family::Plain;
    let mut mark = |f: Family| -> bool {
        if seen == Family::Plain || seen == f {
            seen = f;
            true
        } else {
            false
        }
    };
    for m in messages {
        let m = m.as_object()?;
        if let Some(t) = m.get("type") {
            if !t.as_str().is_some_and(|t| RESPONSES_ITEM_TYPES.contains(&t)) || !mark(Family::Responses) {
                return None;
            }
            continue;
        }
        let role = m.get("role")?.as_str()?;
        if !ROLES.contains(&role) {
            return None;
        }
        let chat_keys = ["tool_calls", "tool_call_id", "function_call"];
        if (role == "tool" || role == "function" || chat_keys.iter().any(|k| m.contains_key(*k)))
            && !mark(Family::Chat)
        {
            return None;
        }
        match m.get("content") {
            Some(Value::Null) if !mark(Family::Chat) => return None,
            Some(Value::Array(parts)) => {
                for part in parts {
                    let t = part.get("type").and_then(Value::as_str).unwrap_or("");
                    let family = if ANTHROPIC_BLOCKS.contains(&t) {
                        Family::Anthropic
                    } else if CHAT_PARTS.contains(&t) {
                        Family::Chat
                    } else if RESPONSES_PARTS.contains(&t) {
                        Family::Responses
                    } else {
                        continue;
                    };
                    if !mark(family) {
                        return None;
                    }
                }
            }
            _ => {}
        }
    }
    Some(seen)
}

/// Top-level keys of the other agents' JSON documents (SWE-agent, mini-swe-agent, Gemini CLI,
/// Inspect, cassettes, Claude Code/Codex lines): an object with one of them is not a request body.
const FOREIGN_KEYS: [&str; 11] = [
    "trajectory",
    "history",
    "trajectory_format",
    "info",
    "sessionId",
    "projectHash",
    "instance_id",
    "eval",
    "samples",
    "interactions",
    "type",
];

/// Whether an object carries a key that marks another agent's document.
pub(crate) fn is_foreign(object: &Map<String, Value>) -> bool {
    FOREIGN_KEYS.iter().any(|k| object.contains_key(*k))
}

/// The family of a request body `{messages: [...], ...}` from its messages and its top-level
/// fields (`system`, `tools[].input_schema` are Anthropic; `tools[].function` is OpenAI Chat).
pub(crate) fn classify_body(body: &Map<String, Value>) -> Option<Family> {
    if is_foreign(body) {
        return None;
    }
    let messages = body.get("messages")?.as_array()?;
    let mut family = classify(messages)?;
    let tools = body.get("tools").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut top = Vec::new();
    if ["system", "anthropic_version", "stop_sequences", "top_k"].iter().any(|k| body.contains_key(*k))
        || tools.iter().any(|t| t.get("input_schema").is_some())
    {
        top.push(Family::Anthropic);
    }
    if tools.iter().any(|t| t.get("function").is_some())
        || ["n", "response_format", "logit_bias", "frequency_penalty"].iter().any(|k| body.contains_key(*k))
    {
        top.push(Family::Chat);
    }
    for f in top {
        if family == Family::Plain {
            family = f;
        } else if family != f {
            return None;
        }
    }
    Some(family)
}

/// A string field, or `""`.
pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A value as text: strings as they are, anything else as compact JSON.
pub(crate) fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        // The same bytes as `Display`, written straight into the string's buffer rather than
        // through a `fmt::Formatter`.
        other => serde_json::to_string(other).unwrap_or_else(|_| other.to_string()),
    }
}

/// A short description of a JSON value's type, for error messages.
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Items being assembled for one history, with the tool names of the calls seen so far.
#[derive(Debug, Default, Clone)]
pub(crate) struct Builder {
    /// The items, in the order they were sent.
    pub items: Vec<Item>,
    /// Tool name by call id.
    names: HashMap<String, String>,
    /// Calls without an id (Gemini), by name, oldest first, with the ids given to them.
    anonymous: BTreeMap<String, VecDeque<String>>,
    anonymous_calls: usize,
    /// What was not replayed, with counts (becomes warnings).
    notes: BTreeMap<String, usize>,
    /// OpenAI images to size, when the document is an OpenAI one ([`Builder::size_openai_images`]).
    openai_images: Option<OpenAiImages>,
}

/// OpenAI images waiting for the model that sizes them (`unseen::openai::size_images`).
#[derive(Debug, Default, Clone)]
struct OpenAiImages {
    /// The model the document names (a request body's), for images no request after names one.
    model: Option<String>,
    /// The images of each image item pushed, in order.
    items: Vec<Vec<OpenAiImage>>,
    /// Images read since the last image item.
    open: Vec<OpenAiImage>,
}

impl Builder {
    /// Appends any item.
    pub fn push(&mut self, item: Item) {
        self.items.push(item);
    }

    /// Appends a request boundary (an LLM call is made here).
    pub fn request(&mut self) {
        self.items.push(Item::Request(Request::default()));
    }

    /// Appends text of a role; empty text is not an item.
    pub fn text(&mut self, item: fn(String) -> Item, text: String) {
        if !text.is_empty() {
            self.items.push(item(text));
        }
    }

    /// Appends a tool call and remembers its name for the result.
    pub fn call(&mut self, call_id: String, name: String, arguments: String) {
        self.names.insert(call_id.clone(), name.clone());
        self.items.push(Item::ToolCall { call_id, name, arguments });
    }

    /// Appends a call that has no id of its own (Gemini): it gets `<name>#<n>`, and the next
    /// [`Builder::anonymous_result`] of that name links to it.
    pub fn anonymous_call(&mut self, name: String, arguments: String) {
        self.anonymous_calls += 1;
        let id = format!("{name}#{}", self.anonymous_calls);
        self.anonymous.entry(name.clone()).or_default().push_back(id.clone());
        self.call(id, name, arguments);
    }

    /// The id of the oldest unanswered id-less call of that name.
    pub fn anonymous_result_id(&mut self, name: &str) -> Option<String> {
        self.anonymous.get_mut(name)?.pop_front()
    }

    /// Appends a tool result; its name comes from the linked call, else from `name_hint`.
    pub fn result(&mut self, call_id: String, name_hint: Option<String>, text: String, is_error: bool) {
        self.result_with_images(call_id, name_hint, text, is_error, 0);
    }

    /// [`Builder::result`] with images counted.
    pub fn result_with_images(
        &mut self,
        call_id: String,
        name_hint: Option<String>,
        output: String,
        is_error: bool,
        images: u32,
    ) {
        let name = match self.names.get(&call_id) {
            Some(n) => Some(n.clone()),
            None => {
                self.note("tool result(s) answer no earlier call (name taken from the result)");
                name_hint.filter(|n| !n.is_empty())
            }
        };
        self.items.push(Item::ToolResult(ToolResult {
            call_id,
            name,
            output: Output::Raw { output },
            is_error,
            images,
        }));
    }

    /// Counts something that was not replayed.
    pub fn note(&mut self, what: impl Into<String>) {
        *self.notes.entry(what.into()).or_default() += 1;
    }

    /// The notes as warnings, prefixed with where they were found.
    pub fn warnings(&self, at: &str) -> Vec<String> {
        let at = if at.is_empty() { String::new() } else { format!("{at}: ") };
        self.notes.iter().map(|(what, n)| format!("{at}{n} {what}")).collect()
    }

    /// From here on, image parts read with [`Builder::image_part`] become image items sized by
    /// OpenAI's rules, for the model of the request that sends them, else `model`.
    pub fn size_openai_images(&mut self, model: Option<&str>) {
        let images = self.openai_images.get_or_insert_with(OpenAiImages::default);
        if let Some(model) = model {
            images.model = Some(model.to_owned());
        }
    }

    /// Notes an OpenAI image content part (`image_url`, `input_image`) of the message being read,
    /// when images are sized.
    pub fn image_part(&mut self, part: &Value) {
        if let Some(images) = &mut self.openai_images {
            images.open.push(OpenAiImage::of_part(part));
        }
    }

    /// Appends one image item for the image parts noted since the last one, if there are any.
    pub fn images_item(&mut self) {
        let Some(images) = &mut self.openai_images else { return };
        if !images.open.is_empty() {
            images.items.push(std::mem::take(&mut images.open));
            self.items.push(Item::Unseen { kind: UnseenKind::Image, tokens: 0 });
        }
    }

    /// Moves the items out, leaving the names and notes; their image items are sized.
    pub fn take_items(&mut self) -> Vec<Item> {
        let mut items = std::mem::take(&mut self.items);
        if let Some(images) = &mut self.openai_images {
            let sized = std::mem::take(&mut images.items);
            size_images(&mut items, &sized, images.model.as_deref());
        }
        items
    }
}

/// One conversation rebuilt from calls that each recorded their full history.
#[derive(Debug)]
struct Chain {
    id: String,
    /// Which flow (provider, endpoint) it belongs to.
    flow: String,
    /// The longest history sent so far.
    history: Vec<Item>,
    /// Request boundaries: (position in `history`, the call, the results the provider cleared
    /// from it: [`Chains::cleared`]).
    boundaries: Vec<(usize, Request, Option<Cleared>)>,
    /// What the last call returned.
    tail: Vec<Item>,
    /// Warnings of the latest history and tail.
    warnings: Vec<String>,
}

/// Conversations rebuilt from a series of recorded calls (see [`Chains::push`]).
#[derive(Debug, Default)]
pub(crate) struct Chains {
    chains: Vec<Chain>,
    /// Calls pushed so far.
    pushes: usize,
}

/// Where a call went: its conversation's index, and how many calls had been pushed with it
/// ([`Chains::extend`] is valid while that count has not moved).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    chain: usize,
    pushes: usize,
}

impl Chains {
    /// Adds one call: `history` is everything it sent, `request` its boundary (usage, id), `tail`
    /// what it returned. The call continues the latest conversation of its `flow` whose history its
    /// own begins with; otherwise it starts a new one, named after the flow (`flow`, `flow-2`, …).
    pub fn push(
        &mut self,
        flow: &str,
        history: Vec<Item>,
        request: Request,
        tail: Vec<Item>,
        warnings: Vec<String>,
    ) -> Mark {
        let found = self.chains.iter().rposition(|c| {
            c.flow == flow && history.len() >= c.history.len() && history[..c.history.len()] == c.history[..]
        });
        let index = match found {
            Some(i) => i,
            None => {
                let n = self.chains.iter().filter(|c| c.flow == flow).count();
                let id = if n == 0 { flow.to_owned() } else { format!("{flow}-{}", n + 1) };
                self.chains.push(Chain {
                    id,
                    flow: flow.to_owned(),
                    history: Vec::new(),
                    boundaries: Vec::new(),
                    tail: Vec::new(),
                    warnings: Vec::new(),
                });
                self.chains.len() - 1
            }
        };
        let chain = &mut self.chains[index];
        chain.boundaries.push((history.len(), request, None));
        chain.history = history;
        chain.tail = tail;
        chain.warnings = warnings;
        self.mark(index)
    }

    fn mark(&mut self, chain: usize) -> Mark {
        self.pushes += 1;
        Mark { chain, pushes: self.pushes }
    }

    /// Whether the call after the one `mark` names, sent with that call's history and more after
    /// it, would continue the same conversation through [`Chains::push`]: no call was pushed
    /// since, and no later conversation of its flow could be continued instead.
    pub fn can_extend(&self, mark: Mark) -> bool {
        let Some(chain) = self.chains.get(mark.chain) else { return false };
        mark.pushes == self.pushes && !self.chains[mark.chain + 1..].iter().any(|c| c.flow == chain.flow)
    }

    /// [`Chains::push`] of a call whose history is the history of the call `mark` names
    /// ([`Chains::can_extend`] holds) followed by `more`, without comparing the two.
    pub fn extend(
        &mut self,
        mark: Mark,
        more: Vec<Item>,
        request: Request,
        tail: Vec<Item>,
        warnings: Vec<String>,
    ) -> Mark {
        debug_assert!(self.can_extend(mark));
        let chain = &mut self.chains[mark.chain];
        chain.history.extend(more);
        chain.boundaries.push((chain.history.len(), request, None));
        chain.tail = tail;
        chain.warnings = warnings;
        self.mark(mark.chain)
    }

    /// The provider cleared `cleared` from the call `mark` names (Anthropic's server-side
    /// context editing, which its response reports): a marker goes before its boundary.
    pub fn cleared(&mut self, mark: Mark, cleared: Cleared) {
        if let Some(b) = self.chains.get_mut(mark.chain).and_then(|c| c.boundaries.last_mut()) {
            b.2 = Some(cleared);
        }
    }

    /// Whether no call was pushed yet.
    pub fn is_empty(&self) -> bool {
        self.chains.is_empty()
    }

    /// The conversations, in the order of their first call, and their warnings. Each is the
    /// longest history with a boundary where each call's history ended, then what the last call
    /// returned.
    pub fn finish(self, name: impl Fn(usize, &str) -> String) -> (Vec<Conversation>, Vec<String>) {
        let mut conversations = Vec::new();
        let mut warnings = Vec::new();
        for (index, chain) in self.chains.into_iter().enumerate() {
            let mut c = Conversation::new(name(index, &chain.id));
            let mut boundaries = chain.boundaries.into_iter().peekable();
            let boundary =
                |items: &mut Vec<Item>, (_, request, cleared): (usize, Request, Option<Cleared>)| {
                    items.extend(cleared.map(Item::Cleared));
                    items.push(Item::Request(request));
                };
            for (position, item) in chain.history.into_iter().enumerate() {
                while let Some(b) = boundaries.next_if(|(at, ..)| *at == position) {
                    boundary(&mut c.items, b);
                }
                c.items.push(item);
            }
            boundaries.for_each(|b| boundary(&mut c.items, b));
            c.items.extend(chain.tail);
            warnings.extend(chain.warnings);
            conversations.push(c);
        }
        (conversations, warnings)
    }
}

/// The usage a provider's response body records, with the prompt size normalised. Recognised
/// shapes: Anthropic `usage{input_tokens, cache_creation_input_tokens, cache_read_input_tokens}`,
/// OpenAI Chat `usage{prompt_tokens, prompt_tokens_details.cached_tokens}`, OpenAI Responses
/// `usage{input_tokens, input_tokens_details.cached_tokens}`, Gemini
/// `usageMetadata{promptTokenCount, cachedContentTokenCount}`.
///
/// A prompt of 0 tokens is not a measurement (a request always sends something; one recorded
/// OpenAI Responses cassette has all-zero usage): it is returned as `Err` so the caller can warn.
pub(crate) fn usage_of_response(body: &Value) -> Option<Result<Usage, String>> {
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
    let recorded = body.get("usageMetadata").or_else(|| body.get("usage"))?;
    if let Some(why) = super::shared::first_bad_count(recorded, &super::shared::names_tokens) {
        return Some(Err(format!("{why}; this request has no recorded size")));
    }
    let usage = if let Some(u) = body.get("usageMetadata") {
        Usage {
            input_tokens: n(u, "promptTokenCount")?,
            cache_read_tokens: n(u, "cachedContentTokenCount"),
            cache_write_tokens: None,
            output_tokens: n(u, "candidatesTokenCount").map(|c| c + n(u, "thoughtsTokenCount").unwrap_or(0)),
            cost_micro_usd: None,
        }
    } else {
        let u = body.get("usage")?;
        if let Some(prompt) = n(u, "prompt_tokens") {
            Usage {
                input_tokens: prompt,
                cache_read_tokens: u.get("prompt_tokens_details").and_then(|d| n(d, "cached_tokens")),
                cache_write_tokens: None,
                output_tokens: n(u, "completion_tokens"),
                cost_micro_usd: None,
            }
        } else if u.get("cache_creation_input_tokens").is_some()
            || u.get("cache_read_input_tokens").is_some()
            || body.get("type").and_then(Value::as_str) == Some("message")
        {
            let (input, write, read) = (
                n(u, "input_tokens")?,
                n(u, "cache_creation_input_tokens").unwrap_or(0),
                n(u, "cache_read_input_tokens").unwrap_or(0),
            );
            Usage {
                input_tokens: input.saturating_add(write).saturating_add(read),
                cache_read_tokens: Some(read),
                cache_write_tokens: Some(write),
                output_tokens: n(u, "output_tokens"),
                cost_micro_usd: None,
            }
        } else {
            Usage {
                input_tokens: n(u, "input_tokens")?,
                cache_read_tokens: u.get("input_tokens_details").and_then(|d| n(d, "cached_tokens")),
                cache_write_tokens: None,
                output_tokens: n(u, "output_tokens"),
                cost_micro_usd: None,
            }
        }
    };
    if usage.input_tokens == 0 {
        return Some(Err("the response records a prompt of 0 tokens, which is not a measurement; \
                         this request has no recorded size"
            .into()));
    }
    Some(Ok(usage))
}

#[cfg(test)]
mod tests;
