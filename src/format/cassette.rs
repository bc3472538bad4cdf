//! `cassette`: VCR YAML cassettes of LLM API calls, as pydantic-ai records them
//! (`tests/models/cassettes/**.yaml`; `FORMATS.md` §5 of the shared corpus).
//!
//! A cassette is `{interactions: [{request: {method, uri, headers, parsed_body}, response:
//! {status, headers, parsed_body}}], version}`. Each interaction is one LLM call; its request body
//! holds the full history so far and its response carries the provider's `usage`.
//!
//! - **Flows.** The provider of an interaction comes from its `uri`: `/messages` is Anthropic
//!   Messages, `/chat/completions` OpenAI Chat, `/responses` OpenAI Responses, `:generateContent`
//!   (`generativelanguage`/`aiplatform`) Gemini. Other calls (models lists, embeddings) are skipped
//!   with a warning. Each request body is read by that provider's converter
//!   ([`openai_chat`], [`anthropic_messages`],
//!   [`openai_responses`]; Gemini's `contents` by a small reader here).
//! - **Conversations.** An interaction continues the latest conversation of its provider whose
//!   history its own begins with, else starts a new one, named after the provider
//!   (`openai-chat`, `openai-chat-2`, `gemini`, …), in order of first call. The conversation is the
//!   longest history, with **one request boundary per interaction** where that interaction's
//!   history ended, carrying the usage its response recorded, and the last response's content
//!   appended.
//! - **The Gemini calls in an OpenAI cassette** (pydantic-ai's `test_multiple_agent_tool_calls`
//!   runs an agent on Gemini, then continues the same message history on OpenAI) are their own
//!   conversation, `gemini`: they were real calls with their own recorded usage and context. The
//!   OpenAI conversation starts with that earlier history already in its first request, exactly as
//!   it was sent. Gemini `functionCall`/`functionResponse` parts carry no id in these bodies: calls
//!   get `<name>#<n>` and each response links to the oldest unanswered call of its name; a
//!   response's text is the compact JSON of its `response` object.
//! - **Usage** (recorded prompt size): Anthropic input + cache creation + cache read; OpenAI
//!   `prompt_tokens` / `input_tokens` (cached tokens are a subset); Gemini `promptTokenCount`. A
//!   recorded prompt of 0 tokens (the first call of pydantic-ai's `test_openai_responses_model_retry`
//!   has all-zero usage) is not a measurement: that request gets no recorded size and a warning.
//! - Tool schemas (`tools`) count as system text, as in the three request-body formats.
//! - An Anthropic response's `context_management.applied_edits` (server-side context editing)
//!   clears the oldest tool results from that interaction's own request: a marker before its
//!   boundary (`context_edits`); malformed fields are warned about with the interaction's line.
//! - Errors name the file, the line where the interaction starts, and the path inside it.
//! - **YAML aliases are copied out within a budget.** The converters need a plain tree, so each
//!   alias becomes a copy of its anchor's node; all the copies of a file together may count at most
//!   64 MiB, or 8 times the file's size for files past 8 MiB (a node counts 32 bytes plus its
//!   text). Past that the file is an error naming the line of the alias that crossed it (a YAML
//!   "alias bomb": ten levels of ten aliases of one string, 1 KB on disk, would copy out 10^10
//!   strings), nothing of it is read, and the other files of a run still are; such a file costs
//!   under 100 MB. Recorders stay far below the budget: PyYAML writes an alias only for an object
//!   dumped twice, and the corpus's cassettes have none. Likewise nesting deeper than 128 levels
//!   (serde_json's limit for the JSON formats) is an error, and the parser's events are pulled in a
//!   loop rather than through its recursive `load`, so no file can overflow the stack.
//!
//! **YAML parser: `yaml-rust2`.** Compared for this module: `serde_yaml` is archived (RUSTSEC-2024-0320);
//! `serde_yml` is deprecated and its 0.0.12 and `libyml` carried unsoundness advisories
//! (RUSTSEC-2025-0068, RUSTSEC-2025-0067); `serde_norway` is a maintained fork of `serde_yaml` but
//! still parses through `unsafe-libyaml-norway`, a C-to-Rust translation of libyaml full of
//! `unsafe`; `saphyr` is the actively developed successor of `yaml-rust2` but its API is declared
//! less stable, and `serde-saphyr` needs Rust 1.89 (this crate's MSRV is 1.85). `yaml-rust2` is
//! pure safe Rust (no `unsafe` in its source), YAML 1.2 compliant (it passes the yaml-test-suite),
//! maintained with a stable API, MSRV 1.85, and with `default-features = false` it brings only
//! `arraydeque` and `hashlink` (with `hashbrown`, `foldhash`). Its event parser also gives each node's line, which the error
//! messages use. Cassettes are converted to `serde_json::Value` so the JSON converters apply as is.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Number, Value};
use yaml_rust2::Yaml;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use super::context_edits;
use super::openai_chat::key_path;
use super::wire::{self, Builder, Calls, Chains, json_text, str_field};
use super::{Format, Head, anthropic_messages, openai_chat, openai_responses};
use crate::error::TraceError;
use crate::model::{Item, Request, Trace};
use crate::time::parse_rfc3339;

/// VCR YAML cassettes of LLM API calls.
pub struct Cassette;

impl Format for Cassette {
    fn name(&self) -> &'static str {
        "cassette"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        if let Some(Value::Object(o)) = head.document() {
            // A cassette saved with VCR's JSON serializer.
            return o.get("interactions").and_then(Value::as_array).is_some_and(|list| {
                list.first().is_some_and(|i| i.get("request").is_some() && i.get("response").is_some())
            });
        }
        let yaml_top = |key: &str| head.text.lines().any(|l| l.trim_end() == key);
        (head.text.starts_with("interactions:") || yaml_top("interactions:"))
            && head.text.contains("request:")
            && ["uri:", "parsed_body:", "method:"].iter().any(|k| head.text.contains(k))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut text = String::new();
        input.read_to_string(&mut text).map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
        let (doc, lines) =
            parse_yaml(&text).map_err(|(line, message)| TraceError::line(path, line, message))?;
        let list = doc
            .get("interactions")
            .and_then(Value::as_array)
            .ok_or_else(|| TraceError::line(path, 1, "a cassette needs an `interactions` list"))?;
        let mut chains = Chains::default();
        let mut warnings = Vec::new();
        for (i, interaction) in list.iter().enumerate() {
            let line = lines.get(i).copied().unwrap_or(1);
            let at = format!("interactions[{i}]");
            interaction_into(&mut chains, interaction, (&at, line), &mut warnings)
                .map_err(|message| TraceError::line(path, line, message))?;
        }
        let (conversations, chain_warnings) = chains.finish(|_, id| id.to_owned());
        warnings.extend(chain_warnings);
        warnings.extend(conversations.iter().flat_map(context_edits::unsticky));
        Ok(Trace { format: self.name(), conversations, warnings })
    }
}

/// The API an interaction calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Provider {
    Anthropic,
    OpenAiChat,
    OpenAiResponses,
    Gemini,
}

impl Provider {
    fn of(uri: &str) -> Option<Provider> {
        let path = uri.split('?').next().unwrap_or(uri);
        if path.ends_with("/messages") {
            Some(Provider::Anthropic)
        } else if path.ends_with("/chat/completions") {
            Some(Provider::OpenAiChat)
        } else if path.ends_with("/responses") {
            Some(Provider::OpenAiResponses)
        } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
            Some(Provider::Gemini)
        } else {
            None
        }
    }

    fn flow(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAiChat => "openai-chat",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Gemini => "gemini",
        }
    }
}

/// A recorded body: `parsed_body`, else `body` (a JSON string, or `{string: …}` as VCR writes it).
fn recorded_body(side: &Value) -> Option<Value> {
    if let Some(v) = side.get("parsed_body").filter(|v| !v.is_null()) {
        return Some(v.clone());
    }
    let raw = match side.get("body")? {
        Value::String(s) => s.as_str(),
        other => other.get("string")?.as_str()?,
    };
    serde_json::from_str(raw).ok()
}

fn interaction_into(
    chains: &mut Chains,
    interaction: &Value,
    (at, line): (&str, usize),
    warnings: &mut Vec<String>,
) -> Result<(), String> {
    let request =
        interaction.get("request").ok_or_else(|| format!("{at}: an interaction needs a `request`"))?;
    let uri = str_field(request, "uri");
    let Some(provider) = Provider::of(uri) else {
        warnings.push(format!("{at}: `{uri}` is not an LLM call this importer reads; skipped"));
        return Ok(());
    };
    let Some(body) = recorded_body(request) else {
        warnings.push(format!("{at}: the request has no JSON body (`parsed_body`); skipped"));
        return Ok(());
    };
    let body_at = format!("{at}.request.parsed_body");
    let mut b = Builder::default();
    match provider {
        Provider::Anthropic => anthropic_messages::body(&mut b, &body, &body_at, Calls::None)?,
        Provider::OpenAiChat => openai_chat::body(&mut b, &body, &body_at, Calls::None)?,
        Provider::OpenAiResponses => openai_responses::body(&mut b, &body, &body_at, Calls::None)?,
        Provider::Gemini => gemini_body(&mut b, &body, &body_at)?,
    }
    let history = b.take_items();
    let mut recorded = Request::default();
    let mut cleared = None;
    let response = interaction.get("response").and_then(recorded_body);
    if let Some(response) = &response {
        let response_at = format!("{at}.response.parsed_body");
        recorded.id = ["id", "responseId"].iter().find_map(|k| response.get(*k)?.as_str()).map(str::to_owned);
        recorded.model =
            ["model", "modelVersion"].iter().find_map(|k| response.get(*k)?.as_str()).map(str::to_owned);
        recorded.timestamp = ["created", "created_at"]
            .iter()
            .find_map(|k| response.get(*k)?.as_i64())
            .map(|secs| secs * 1000)
            .or_else(|| response.get("createTime").and_then(Value::as_str).and_then(parse_rfc3339));
        match wire::usage_of_response(response) {
            Some(Ok(u)) => recorded.usage = Some(u),
            Some(Err(why)) => warnings.push(format!("{response_at}.usage: {why}")),
            None => warnings.push(format!("{response_at}: no usage recorded")),
        }
        match provider {
            Provider::Anthropic => {
                if let Some(cm) = response.get("context_management") {
                    let edits = context_edits::read(cm);
                    let at = format!("line {line}: {response_at}");
                    warnings.extend(edits.problems.into_iter().map(|p| format!("{at}: {p}")));
                    cleared = edits.cleared;
                }
                anthropic_messages::assistant(&mut b, response.get("content"), &response_at)?
            }
            Provider::OpenAiChat => {
                let choice = response
                    .pointer("/choices/0/message")
                    .ok_or_else(|| format!("{response_at}: no `choices[0].message`"))?;
                openai_chat::message(
                    &mut b,
                    choice,
                    &format!("{response_at}.choices[0].message"),
                    Calls::None,
                )?;
            }
            Provider::OpenAiResponses => openai_responses::response(&mut b, response, &response_at)?,
            Provider::Gemini => {
                if let Some(content) = response.pointer("/candidates/0/content") {
                    gemini_content(&mut b, content, &format!("{response_at}.candidates[0].content"))?;
                }
            }
        }
    } else {
        warnings.push(format!("{at}: the response has no JSON body; its content and usage are unknown"));
    }
    let tail = b.take_items();
    let mark = chains.push(provider.flow(), history, recorded, tail, b.warnings(at));
    if let Some(c) = cleared {
        chains.cleared(mark, c);
    }
    Ok(())
}

/// A Gemini `generateContent` request body: tools, system instruction, contents.
fn gemini_body(b: &mut Builder, body: &Value, at: &str) -> Result<(), String> {
    openai_chat::tools(b, body.get("tools"));
    if let Some(system) = body.get("systemInstruction").or_else(|| body.get("system_instruction")) {
        let parts = system.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let texts: Vec<&str> = parts.iter().map(|p| str_field(p, "text")).collect();
        b.text(|text| Item::System { text }, texts.join("\n"));
    }
    let at = key_path(at, "contents");
    let contents =
        body.get("contents").and_then(Value::as_array).ok_or_else(|| format!("{at}: expected an array"))?;
    for (i, content) in contents.iter().enumerate() {
        gemini_content(b, content, &format!("{at}[{i}]"))?;
    }
    Ok(())
}

/// One Gemini `Content{role, parts}`.
fn gemini_content(b: &mut Builder, content: &Value, at: &str) -> Result<(), String> {
    let model = str_field(content, "role") == "model";
    let parts = content
        .get("parts")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{at}: a content needs `parts`"))?;
    let mut images = 0;
    let mut texts: Vec<&str> = Vec::new();
    for part in parts {
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                b.text(|text| Item::Thinking { text }, text.to_owned());
            } else {
                texts.push(text);
            }
        } else if let Some(call) = part.get("functionCall") {
            let name = str_field(call, "name").to_owned();
            let arguments = call.get("args").map(json_text).unwrap_or_default();
            match call.get("id").and_then(Value::as_str) {
                Some(id) => b.call(id.to_owned(), name, arguments),
                None => b.anonymous_call(name, arguments),
            }
        } else if let Some(result) = part.get("functionResponse") {
            let name = str_field(result, "name");
            let id = match result.get("id").and_then(Value::as_str) {
                Some(id) => id.to_owned(),
                None => b.anonymous_result_id(name).unwrap_or_else(|| format!("{name}#?")),
            };
            let output = result.get("response").map(json_text).unwrap_or_default();
            b.result(id, Some(name.to_owned()), output, false);
        } else if part.get("inlineData").is_some() || part.get("fileData").is_some() {
            images += 1;
        } else {
            b.note("Gemini part(s) of an unknown kind not replayed");
        }
    }
    let text = texts.join("\n");
    if model {
        b.text(|text| Item::Assistant { text }, text);
    } else if !text.is_empty() || images > 0 {
        b.push(Item::User { text, meta: false, images });
    }
    Ok(())
}

/// Each node an alias copies out counts as this many bytes (a `serde_json::Value`), plus its text.
const NODE_BYTES: u64 = size_of::<Value>() as u64;
/// What aliases may copy out in any cassette, however small, in bytes (see [`expansion_limit`]).
const EXPANSION_FLOOR: u64 = 64 << 20;
/// What aliases may copy out per byte of the file, for cassettes past 8 MiB.
const EXPANSION_PER_BYTE: u64 = 8;
/// The deepest nesting read: serde_json's limit for the JSON formats. The converters, and a
/// `Value`'s drop, recurse once per level.
const MAX_DEPTH: usize = 128;

/// The most that alias expansion may add to a document of `len` bytes: 64 MiB, or 8 times the
/// file's size if that is more. Each alias is a copy of its anchor's tree, so ten aliases of ten
/// aliases of … of one string (a "billion laughs" file of 1 KB) would otherwise ask for gigabytes.
/// The limit is far above what a recorder writes: PyYAML aliases an object only when the same one
/// is dumped twice, and the corpus's cassettes have no alias at all.
fn expansion_limit(len: usize) -> u64 {
    EXPANSION_FLOOR.max(EXPANSION_PER_BYTE.saturating_mul(len as u64))
}

/// Parses a YAML document into JSON, with the 1-based line where each element of the top-level
/// `interactions` list starts. An error is (line, message).
fn parse_yaml(text: &str) -> Result<(Value, Vec<usize>), (usize, String)> {
    parse_yaml_within(text, expansion_limit(text.len()))
}

/// [`parse_yaml`] with aliases copying out at most `limit` bytes (counted as [`NODE_BYTES`] per
/// node plus the text of its strings and keys).
fn parse_yaml_within(text: &str, limit: u64) -> Result<(Value, Vec<usize>), (usize, String)> {
    let mut builder = YamlToJson { expansion_limit: limit, ..YamlToJson::default() };
    let mut parser = Parser::new_from_str(text);
    // Events are pulled one by one rather than through `Parser::load`, which recurses once per
    // nesting level (a stack overflow, on a worker thread's stack, at a few thousand levels) and
    // cannot stop at the first error. As `load` did, reading stops after the first document: a
    // second one in the file is not read.
    while builder.error.is_none() {
        let (event, mark) = parser.next_token().map_err(|e| {
            (
                e.marker().line().max(1),
                format!("invalid YAML: {} (column {})", e.info(), e.marker().col() + 1),
            )
        })?;
        let last = matches!(event, Event::DocumentEnd | Event::StreamEnd);
        builder.on_event(event, mark);
        if last {
            break;
        }
    }
    if let Some(e) = builder.error {
        return Err(e);
    }
    let doc =
        builder.root.ok_or((1, "the file is empty: a cassette needs an `interactions` list".to_owned()))?;
    Ok((doc, builder.interaction_lines))
}

/// A container being built, with its anchor and its size so far (as counted for the alias budget).
struct Frame {
    node: Node,
    anchor: usize,
    bytes: u64,
}

enum Node {
    Sequence(Vec<Value>),
    /// The entries so far and the key waiting for its value.
    Mapping(Map<String, Value>, Option<String>),
}

/// Builds a `serde_json::Value` from YAML parser events (core schema scalars, anchors resolved).
/// Aliases are copied out within a budget ([`expansion_limit`]); past it, the first alias that
/// crosses it is an error and the remaining events are ignored.
#[derive(Default)]
struct YamlToJson {
    stack: Vec<Frame>,
    /// Each anchored node, with its size.
    anchors: HashMap<usize, (Value, u64)>,
    root: Option<Value>,
    interaction_lines: Vec<usize>,
    error: Option<(usize, String)>,
    /// What aliases copied out so far, and the most they may.
    expanded: u64,
    expansion_limit: u64,
}

impl YamlToJson {
    fn insert(&mut self, value: Value, bytes: u64, anchor: usize, mark: Marker) {
        if anchor > 0 {
            self.anchors.insert(anchor, (value.clone(), bytes));
        }
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(value);
            return;
        };
        frame.bytes = frame.bytes.saturating_add(bytes);
        match &mut frame.node {
            Node::Sequence(items) => items.push(value),
            Node::Mapping(map, key) => match key.take() {
                None => *key = Some(json_text(&value)),
                Some(k) => {
                    if map.insert(k.clone(), value).is_some() && self.error.is_none() {
                        self.error = Some((mark.line(), format!("duplicate key `{k}` in a mapping")));
                    }
                }
            },
        }
    }

    fn open(&mut self, node: Node, anchor: usize, mark: Marker) {
        if self.starts_interaction() {
            self.interaction_lines.push(mark.line());
        }
        if self.stack.len() >= MAX_DEPTH {
            self.error = Some((
                mark.line(),
                format!("values nested more than {MAX_DEPTH} deep; no trace format nests that deep"),
            ));
            return;
        }
        self.stack.push(Frame { node, anchor, bytes: NODE_BYTES });
    }

    /// Whether a container starting now is an element of the top-level `interactions` list.
    fn starts_interaction(&self) -> bool {
        matches!(
            self.stack.as_slice(),
            [Frame { node: Node::Mapping(_, Some(key)), .. }, Frame { node: Node::Sequence(_), .. }]
                if key == "interactions"
        )
    }

    /// A copy of the anchored node `id`, if the budget allows it; else the error is recorded.
    fn expand(&mut self, id: usize, mark: Marker) -> Option<(Value, u64)> {
        let Some((value, bytes)) = self.anchors.get(&id) else { return Some((Value::Null, NODE_BYTES)) };
        self.expanded = self.expanded.saturating_add(*bytes);
        if self.expanded > self.expansion_limit {
            self.error = Some((
                mark.line(),
                format!(
                    "YAML aliases expand to more than {:.0} MiB by this one (a YAML alias bomb?); \
                     aliases may copy out at most {} MiB or {}x the file's size, so nothing was read \
                     from this file",
                    self.expansion_limit as f64 / f64::from(1 << 20),
                    EXPANSION_FLOOR >> 20,
                    EXPANSION_PER_BYTE
                ),
            ));
            return None;
        }
        Some((value.clone(), *bytes))
    }
}

impl MarkedEventReceiver for YamlToJson {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.error.is_some() {
            // The document is not used: building the rest of it would only cost memory.
            return;
        }
        match event {
            Event::Scalar(v, style, anchor, tag) => {
                let bytes = NODE_BYTES + v.len() as u64;
                let value = if style != TScalarStyle::Plain {
                    Value::String(v)
                } else {
                    let yaml = match tag {
                        Some(t) if t.handle == "tag:yaml.org,2002:" && t.suffix == "str" => Yaml::String(v),
                        _ => Yaml::from_str(&v),
                    };
                    scalar(yaml)
                };
                self.insert(value, bytes, anchor, mark);
            }
            Event::SequenceStart(anchor, _) => self.open(Node::Sequence(Vec::new()), anchor, mark),
            Event::MappingStart(anchor, _) => self.open(Node::Mapping(Map::new(), None), anchor, mark),
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(Frame { node, anchor, bytes }) = self.stack.pop() else { return };
                let value = match node {
                    Node::Sequence(items) => Value::Array(items),
                    Node::Mapping(map, _) => Value::Object(map),
                };
                self.insert(value, bytes, anchor, mark);
            }
            Event::Alias(id) => {
                if self.starts_interaction() {
                    self.interaction_lines.push(mark.line());
                }
                if let Some((value, bytes)) = self.expand(id, mark) {
                    self.insert(value, bytes, 0, mark);
                }
            }
            _ => {}
        }
    }
}

/// A resolved plain scalar as JSON.
fn scalar(yaml: Yaml) -> Value {
    match yaml {
        Yaml::Integer(i) => Value::Number(i.into()),
        Yaml::Real(s) => {
            s.parse::<f64>().ok().and_then(Number::from_f64).map_or(Value::String(s), Value::Number)
        }
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::String(s) => Value::String(s),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::with_head;
    use crate::model::ToolResult;

    fn read(text: &str) -> Result<Trace, TraceError> {
        Cassette.read(&mut text.as_bytes(), Path::new("c.yaml"))
    }

    #[test]
    fn yaml_scalars_follow_the_core_schema() {
        let (v, lines) = parse_yaml("interactions:\n- a: 1\n  b: '2'\n  c: 1.5\n  d: null\n  e: true\n  f: |-\n    x\n    y\n- &x {g: ~}\n- *x\nversion: 1\n").unwrap();
        assert_eq!(
            v,
            serde_json::json!({"interactions": [{"a": 1, "b": "2", "c": 1.5, "d": null, "e": true, "f": "x\ny"}, {"g": null}, {"g": null}], "version": 1})
        );
        assert_eq!(lines, [2, 10, 11]);
    }

    #[test]
    fn yaml_errors_name_the_line() {
        let e = read("interactions:\n- request: {a: 1\n").unwrap_err().to_string();
        assert!(e.starts_with("c.yaml:3: invalid YAML"), "{e}");
        let e = read("interactions:\n- a: 1\n  a: 2\n").unwrap_err().to_string();
        assert!(e.starts_with("c.yaml:3: duplicate key `a`"), "{e}");
    }

    /// `levels` anchors, each a list of ten aliases of the one before ("billion laughs"), in a key
    /// no importer reads, then a valid cassette of one call.
    fn alias_bomb(levels: usize) -> String {
        let mut lines = vec!["x0: &a0 'lol lol lol lol lol lol lol lol lol lol'".to_owned()];
        for i in 1..=levels {
            lines.push(format!("x{i}: &a{i} [{}]", vec![format!("*a{}", i - 1); 10].join(",")));
        }
        lines.push(
            "interactions:\n- request:\n    uri: https://api.anthropic.com/v1/messages\n    \
             parsed_body: {model: m, messages: [{role: user, content: hi}]}\n  response:\n    \
             parsed_body: {type: message, content: [{type: text, text: hi}], usage: {input_tokens: 5}}\n\
             version: 1"
                .to_owned(),
        );
        lines.join("\n")
    }

    #[test]
    fn a_yaml_alias_bomb_is_an_error_naming_the_alias_that_crosses_the_budget() {
        // Ten levels expand to 10^10 strings; the copies stop at 64 MiB, within level 6 (line 7).
        let e = read(&alias_bomb(10)).unwrap_err().to_string();
        assert!(e.starts_with("c.yaml:7: YAML aliases expand to more than 64 MiB by this one"), "{e}");
        assert!(e.contains("(a YAML alias bomb?)") && e.ends_with("nothing was read from this file"), "{e}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut yaml = "interactions: []\nz:\n".to_owned();
        for depth in 1..3000 {
            yaml += &format!("{}a:\n", " ".repeat(depth));
        }
        // `Parser::load` recursed per level: this overflowed a 2 MB thread stack.
        let e = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || parse_yaml(&yaml).unwrap_err())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(e, (130, "values nested more than 128 deep; no trace format nests that deep".to_owned()));
        let ok = format!("interactions: []\nz: {}1{}\n", "[".repeat(127), "]".repeat(127));
        assert!(parse_yaml(&ok).is_ok());
    }

    #[test]
    fn aliases_are_copied_out_up_to_the_budget() {
        // With 1 MiB: four levels copy out 0.87 MB; the fifth level's first alias (line 6) crosses.
        let (v, _) = parse_yaml_within(&alias_bomb(4), 1 << 20).unwrap();
        let lol = "lol lol lol lol lol lol lol lol lol lol";
        assert_eq!(v.pointer("/x4/9/0/5/1").and_then(Value::as_str), Some(lol));
        assert_eq!(v["interactions"][0]["request"]["parsed_body"]["model"], "m");
        let (line, message) = parse_yaml_within(&alias_bomb(5), 1 << 20).unwrap_err();
        assert_eq!(line, 6, "{message}");
        // The default budget reads a small bomb's cassette as any other.
        assert_eq!(read(&alias_bomb(3)).unwrap().conversations[0].id, "anthropic");
        assert_eq!(expansion_limit(1000), 64 << 20);
        assert_eq!(expansion_limit(100 << 20), 800 << 20);
    }

    const TWO_CALLS: &str = r#"interactions:
- request:
    method: POST
    uri: https://api.anthropic.com/v1/messages
    parsed_body:
      model: claude
      messages:
      - role: user
        content: go
  response:
    parsed_body:
      id: msg_1
      type: message
      content:
      - {type: tool_use, id: t1, name: run, input: {x: 1}}
      usage: {input_tokens: 10, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 3}
- request:
    uri: https://api.anthropic.com/v1/messages
    parsed_body:
      model: claude
      messages:
      - {role: user, content: go}
      - role: assistant
        content:
        - {type: tool_use, id: t1, name: run, input: {x: 1}}
      - role: user
        content:
        - {type: tool_result, tool_use_id: t1, content: done}
  response:
    parsed_body:
      id: msg_2
      type: message
      content: [{type: text, text: ok}]
      usage: {input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 115, output_tokens: 1}
- request:
    uri: https://api.anthropic.com/v1/models
  response: {}
version: 1
"#;

    #[test]
    fn each_interaction_is_one_request_with_its_recorded_usage() {
        let t = read(TWO_CALLS).unwrap();
        assert_eq!(t.conversations.len(), 1);
        let c = &t.conversations[0];
        assert_eq!(c.id, "anthropic");
        let sizes: Vec<Option<u64>> = c
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Request(r) => Some(r.usage.map(|u| u.input_tokens)),
                _ => None,
            })
            .collect();
        assert_eq!(sizes, [Some(115), Some(135)]);
        assert_eq!(c.tool_results(), 1);
        let Item::ToolResult(ToolResult { name, .. }) = &c.items[3] else { panic!("{:?}", c.items) };
        assert_eq!(name.as_deref(), Some("run"));
        assert!(matches!(c.items.last(), Some(Item::Assistant { text }) if text == "ok"));
        assert_eq!(
            t.warnings,
            [
                "interactions[2]: `https://api.anthropic.com/v1/models` is not an LLM call this importer reads; skipped"
            ]
        );
    }

    #[test]
    fn a_bad_body_is_an_error_naming_the_interaction_line() {
        let bad = TWO_CALLS.replace("tool_use_id: t1", "tool_use_idx: t1");
        let e = read(&bad).unwrap_err().to_string();
        assert_eq!(
            e,
            "c.yaml:17: interactions[1].request.parsed_body.messages[2].content[0]: a tool_result needs a string `tool_use_id`"
        );
    }

    #[test]
    fn gemini_calls_link_by_name_and_form_their_own_conversation() {
        let yaml = r#"interactions:
- request:
    uri: https://generativelanguage.googleapis.com/v1beta/models/g:generateContent
    parsed_body:
      contents:
      - {role: user, parts: [{text: capital?}]}
      - {role: model, parts: [{functionCall: {name: cap, args: {c: F}}}]}
      - {role: user, parts: [{functionResponse: {name: cap, response: {return_value: Paris}}}]}
  response:
    parsed_body:
      candidates: [{content: {role: model, parts: [{text: Paris.}]}}]
      usageMetadata: {promptTokenCount: 35, candidatesTokenCount: 8}
- request:
    uri: https://api.openai.com/v1/chat/completions
    parsed_body:
      model: gpt
      messages: [{role: user, content: capital?}]
  response:
    parsed_body:
      choices: [{message: {role: assistant, content: Paris}}]
      usage: {prompt_tokens: 9, completion_tokens: 1}
"#;
        let t = read(yaml).unwrap();
        let ids: Vec<&str> = t.conversations.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["gemini", "openai-chat"]);
        let Some(Item::ToolResult(r)) =
            t.conversations[0].items.iter().find(|i| matches!(i, Item::ToolResult(_)))
        else {
            panic!()
        };
        assert_eq!((r.call_id.as_str(), r.name.as_deref()), ("cap#1", Some("cap")));
        assert_eq!(r.output.full_text(), r#"{"return_value":"Paris"}"#);
    }

    #[test]
    fn detects_yaml_and_json_cassettes_only() {
        let yes = |t: &str| with_head(Path::new("c.yaml"), t.as_bytes(), true, |h| Cassette.detect(h));
        assert!(yes(TWO_CALLS));
        assert!(yes(r#"{"interactions": [{"request": {"uri": "u"}, "response": {}}], "version": 1}"#));
        assert!(!yes("name: ci\non:\n  push:\n"));
        assert!(!yes(r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#));
        assert!(!yes("{\"type\":\"user\",\"text\":\"interactions:\\nrequest: uri:\"}\n"));
    }
}
