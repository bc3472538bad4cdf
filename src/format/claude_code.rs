//! `claude-code`: Claude Code session transcripts (`~/.claude/projects/<cwd>/<session>.jsonl`).
//!
//! Schema facts (see `FORMATS.md` §1 of the shared corpus):
//! - One API response is written over several lines, one per content block, all sharing
//!   `message.id`; lines of one response may be interleaved with the tool results of its earlier
//!   blocks. They are merged into **one request**, placed before the response's first line; its
//!   blocks stay together and the interleaved tool results follow them, which is the order the next
//!   request sends. A `<synthetic>` model line is generated locally: not a request, not sent.
//! - Recorded prompt size of a request = `input_tokens + cache_creation_input_tokens +
//!   cache_read_input_tokens`, taken once per `message.id` (from its first line that has one of
//!   the three as a number: a usage with none of them records no prompt size, not a prompt of 0);
//!   output tokens = the largest copy.
//! - Tool-result text is the string content, or its `text` blocks joined with `\n`; images are
//!   counted, not read as text, and each message's or result's images follow it as one
//!   [`Item::Unseen`] of kind image, sized by Anthropic's rule from the dimensions in the base64
//!   data's header ([`crate::unseen`]; its documented default when the data gives none). The top-level `toolUseResult` is UI data and is ignored.
//! - A `tool_reference` block in a tool result (ToolSearch's answer) makes the API load that
//!   deferred tool's schema into the prompt; the schema text is not in the file, so it cannot be
//!   counted: the trace carries one warning with how many there were, since every request after
//!   them is replayed smaller than it was sent (on the corpus, the request after a ToolSearch that
//!   returned four references recorded 5,521 more prompt tokens than the one before, the replay 45).
//! - `isSidechain` lines are subagent traffic with a context of their own: lines with an `agentId`
//!   form conversation `agent-<id>`; older inline sidechains without one are grouped by following
//!   `parentUuid` to their root (`sidechain-1`, `sidechain-2`, …). `subagents/agent-*.jsonl` files are
//!   read as files of their own.
//! - A `system` line with `subtype: compact_boundary` replaces the context; the `isCompactSummary`
//!   user line after it is the summary that starts the new one. One with `subtype:
//!   microcompact_boundary` clears the tool results it names from the next request on
//!   ([`Item::Cleared`], `microcompact`). An assistant `message.context_management.applied_edits`
//!   (Anthropic's server-side context editing) clears the oldest tool results from that response's
//!   own request: a marker before it (`context_edits`).
//! - Harness-injected user text is sent to the model, so it is kept, but marked `meta` so that it
//!   does not start a human turn (`FORMATS.md`: such lines "are harness-injected but still go to
//!   the model"). Decision: that is an `isMeta` line (command caveats, injected context), the
//!   `isCompactSummary` line, and text that starts with `<local-command-stdout>` or
//!   `<local-command-stderr>` (a local command's output) or with `[Request interrupted by user`
//!   (the CLI's interruption marker). A line whose text starts with `<command-name>` or
//!   `<command-message>` is the user typing a slash command: the human acted, so it starts a turn.
//!   Text the IDE extension adds to a human line (`<ide_opened_file>`, `<ide_selection>` blocks
//!   before the prompt) is counted as that line's user text.
//!
//! Lines are read into typed records (`Entry`) that keep only the fields the reader uses; every
//! other field (the UI's `toolUseResult` copy of each result is nearly half the bytes of a session)
//! is checked as JSON but never built. A field of an unexpected JSON type reads as absent, as it
//! did when lines were walked as `serde_json::Value`s; a key given twice in one object is an error.
//!
//! Decision: lines are replayed in file order within each conversation. Claude Code keeps a
//! `parentUuid` tree, and rewinds or forks make file order differ from the active path; rebuilding
//! the active path would drop requests that were really made and billed, so every recorded request
//! is replayed.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess};
use serde_json::Value;

use super::context_edits;
use super::look_alike::LookAlike;
use super::shared::{Loose, deserialize_loose};
use super::{Format, Head, read_json_lines_as};
use crate::error::TraceError;
use crate::model::{
    Conversation, Item, Output, RecordedTotal, Request, Tokens, ToolResult, Trace, UnseenKind, Usage,
};
use crate::time::parse_rfc3339;
use crate::unseen;

/// Claude Code session JSONL.
pub struct ClaudeCode;

const LINE_TYPES: [&str; 12] = [
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "attachment",
    "progress",
    "permission-mode",
    "last-prompt",
    "custom-title",
    "ai-title",
];

impl Format for ClaudeCode {
    fn look_alike(&self) -> Option<LookAlike> {
        Some(LookAlike {
            record_keys: &["sessionId", "uuid"],
            records_are: "a Claude Code session line",
            ..LookAlike::NONE
        })
    }

    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        if let Some(line) = head.first_json_line {
            let claude_keys = ["sessionId", "leafUuid", "isSnapshotUpdate", "parentUuid"];
            if head.first_type().is_some_and(|t| LINE_TYPES.contains(&t))
                && claude_keys.iter().any(|k| line.get(k).is_some())
            {
                return true;
            }
        }
        head.text.contains("\"parentUuid\"") && head.text.contains("\"sessionId\"")
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut reader = Reader::default();
        let mut warnings = Vec::new();
        read_json_lines_as(input, path, &mut warnings, |line, entry: Object<Entry>| {
            reader.line(path, line, entry)
        })?;
        let mut trace = reader.finish();
        warnings.append(&mut trace.warnings);
        trace.warnings = warnings;
        Ok(trace)
    }
}

/// A conversation being assembled.
#[derive(Default)]
struct Building {
    conversation: Conversation,
    /// `message.id` of the response whose lines are still arriving.
    open: Option<String>,
    /// Index of the open response's request item, to update its usage.
    open_request: usize,
    /// Whether the open response's `context_management` was read (from its first line that has
    /// one; `context_edits`).
    edits_read: bool,
    /// Blocks of the open response.
    response: Vec<Item>,
    /// Items that arrived after the open response started (tool results, user text).
    after: Vec<Item>,
    /// Tool names by call id.
    names: HashMap<String, String>,
}

impl Building {
    fn flush(&mut self) {
        self.conversation.items.append(&mut self.response);
        self.conversation.items.append(&mut self.after);
        self.open = None;
    }

    fn push(&mut self, item: Item) {
        if self.open.is_some() {
            self.after.push(item);
        } else {
            self.conversation.items.push(item);
        }
    }
}

/// The line-by-line assembler of Claude Code conversations, shared with
/// [`claude_stream`](super::claude_stream), whose lines carry the same Anthropic messages.
#[derive(Default)]
pub(crate) struct Reader {
    conversations: Vec<Building>,
    by_key: BTreeMap<String, usize>,
    /// Inline sidechain line uuid → conversation index.
    sidechain_of: HashMap<String, usize>,
    sidechains: usize,
    unknown_blocks: BTreeMap<String, usize>,
    /// `tool_reference` blocks in tool results: each loads a tool schema the file does not hold.
    tool_references: usize,
    /// Lines of a type this reader does not know, by type.
    unknown_lines: BTreeMap<String, usize>,
    /// Usage fields that are not token counts.
    bad_usage: super::shared::BadUsage,
    /// Other problems, each naming its file and line, in file order.
    warnings: Vec<String>,
}

impl Reader {
    /// The normalised `usage` of line `line`; one that is not a token count is noted, for a
    /// warning, and read as unrecorded.
    pub(crate) fn usage_at(
        &mut self,
        path: &Path,
        line: usize,
        usage: Option<&UsageFields>,
    ) -> Option<Usage> {
        match usage.map(UsageFields::normalised).transpose() {
            Ok(usage) => usage.flatten(),
            Err(why) => {
                self.bad_usage.note(format!("{}:{line}", path.display()), why);
                None
            }
        }
    }

    /// Index of the conversation called `key`, created empty on first use.
    pub(crate) fn conversation(&mut self, key: String) -> usize {
        if let Some(&i) = self.by_key.get(&key) {
            return i;
        }
        self.conversations
            .push(Building { conversation: Conversation::new(key.clone()), ..Default::default() });
        self.by_key.insert(key, self.conversations.len() - 1);
        self.conversations.len() - 1
    }

    /// Which conversation a user/assistant/system line belongs to.
    fn route(&mut self, e: &Entry) -> usize {
        if !e.is_sidechain.unwrap_or(false) {
            return self.conversation("main".into());
        }
        if let Some(agent) = &e.agent_id {
            return self.conversation(format!("agent-{agent}"));
        }
        let index = match e.parent_uuid.as_ref().and_then(|p| self.sidechain_of.get(p)) {
            Some(&i) => i,
            None => {
                self.sidechains += 1;
                let key = format!("sidechain-{}", self.sidechains);
                self.conversation(key)
            }
        };
        if let Some(uuid) = &e.uuid {
            self.sidechain_of.insert(uuid.clone(), index);
        }
        index
    }

    fn line(&mut self, path: &Path, line: usize, entry: Object<Entry>) -> Result<(), TraceError> {
        let (kind, e) = entry.typed(path, line)?;
        match kind.as_str() {
            // A line without a `message` is an error (`assistant_in`, `user_in`).
            "assistant" | "user" => {
                let c = self.route(&e);
                if kind == "user" {
                    self.user_in(c, path, line, e)
                } else {
                    self.assistant_in(c, path, line, e)
                }
            }
            "system" if e.subtype.as_deref() == Some("compact_boundary") => {
                let c = self.route(&e);
                self.compaction_in(c);
                Ok(())
            }
            "system" if e.subtype.as_deref() == Some("microcompact_boundary") => {
                let c = self.route(&e);
                self.microcompact_in(c, path, line, &e);
                Ok(())
            }
            // Other known line types are UI bookkeeping that is not sent to the model.
            known if LINE_TYPES.contains(&known) => Ok(()),
            // An unknown type (a newer Claude Code) is not replayed either, but counted and
            // warned about: it might hold something the model saw.
            unknown => {
                *self.unknown_lines.entry(unknown.to_owned()).or_default() += 1;
                Ok(())
            }
        }
    }

    /// Adds an assistant line (its `message` an Anthropic response, possibly one block of it) to
    /// conversation `c`, merging the lines of one response into one request.
    pub(crate) fn assistant_in(
        &mut self,
        c: usize,
        path: &Path,
        line: usize,
        e: Entry,
    ) -> Result<(), TraceError> {
        let message =
            e.message.ok_or_else(|| TraceError::line(path, line, "assistant line has no `message`"))?;
        if message.model.as_deref() == Some("<synthetic>") {
            return Ok(());
        }
        let id =
            message.id.ok_or_else(|| TraceError::line(path, line, "assistant line has no `message.id`"))?;
        let usage = self.usage_at(path, line, message.usage.as_ref());
        let model = message.model;
        let edits = message.context_management.as_ref().map(context_edits::read);
        let b = &mut self.conversations[c];
        if b.open.as_deref() == Some(id.as_str()) {
            // A further block of the open response: keep the largest output count.
            if let (Some(Item::Request(r)), Some(new)) = (b.conversation.items.get_mut(b.open_request), usage)
            {
                match r.usage.as_mut() {
                    Some(old) => old.output_tokens = old.output_tokens.max(new.output_tokens),
                    // The response's first lines recorded no prompt size: this one does.
                    None => r.usage = Some(new),
                }
            }
        } else {
            b.flush();
            let timestamp = e.timestamp.as_deref().and_then(parse_rfc3339);
            b.conversation.items.push(Item::Request(Request {
                id: Some(id.clone()),
                timestamp,
                usage,
                model,
            }));
            b.open_request = b.conversation.items.len() - 1;
            b.open = Some(id);
            b.edits_read = false;
        }
        if let Some(edits) = edits.filter(|_| !b.edits_read) {
            // The server cleared these results and thinking blocks from this request: the marker
            // goes before it.
            b.edits_read = true;
            if let Some(cleared) = edits.cleared {
                b.conversation.items.insert(b.open_request, Item::Cleared(cleared));
                b.open_request += 1;
            }
            let at = path.display();
            self.warnings.extend(edits.problems.into_iter().map(|p| format!("{at}:{line}: {p}")));
        }
        let b = &mut self.conversations[c];
        let blocks = match message.content {
            Content::Text(text) => {
                b.response.push(Item::Assistant { text });
                return Ok(());
            }
            Content::Blocks(blocks) => blocks,
            Content::Other => {
                return Err(TraceError::line(
                    path,
                    line,
                    "assistant `message.content` is neither text nor a list",
                ));
            }
        };
        for block in blocks {
            match block.kind.as_deref().unwrap_or("") {
                "text" => b.response.push(Item::Assistant { text: block.text.unwrap_or_default() }),
                "thinking" => b.response.push(Item::Thinking { text: block.thinking.unwrap_or_default() }),
                "tool_use" => {
                    let call_id = block.id.unwrap_or_default();
                    let name = block.name.unwrap_or_default();
                    let arguments = block.input.map(|v| v.to_string()).unwrap_or_default();
                    b.names.insert(call_id.clone(), name.clone());
                    b.response.push(Item::ToolCall { call_id, name, arguments });
                }
                other => *self.unknown_blocks.entry(format!("assistant {other}")).or_default() += 1,
            }
        }
        Ok(())
    }

    /// Adds a user line (text, images, tool results) to conversation `c`.
    pub(crate) fn user_in(&mut self, c: usize, path: &Path, line: usize, e: Entry) -> Result<(), TraceError> {
        let message = e.message.ok_or_else(|| TraceError::line(path, line, "user line has no `message`"))?;
        let meta = e.is_meta.unwrap_or(false) || e.is_compact_summary.unwrap_or(false);
        let blocks = match message.content {
            Content::Text(text) => {
                let meta = meta || harness_text(&text);
                self.conversations[c].push(Item::User { text, meta, images: 0 });
                return Ok(());
            }
            Content::Blocks(blocks) => blocks,
            Content::Other => {
                return Err(TraceError::line(
                    path,
                    line,
                    "user `message.content` is neither text nor a list",
                ));
            }
        };
        let mut text: Vec<String> = Vec::new();
        let (mut images, mut image_tokens) = (0u32, 0);
        for block in blocks {
            match block.kind.as_deref().unwrap_or("") {
                "text" => text.push(block.text.unwrap_or_default()),
                "image" => {
                    images += 1;
                    image_tokens += self::image_tokens(&block);
                }
                "tool_result" => {
                    let b = &mut self.conversations[c];
                    let call_id = block.tool_use_id.unwrap_or_default();
                    let (output, result_images, references, result_tokens) = tool_result_text(block.content);
                    self.tool_references += references;
                    let is_error = block.is_error.unwrap_or(false);
                    let name = b.names.get(&call_id).cloned();
                    b.push(Item::ToolResult(ToolResult {
                        call_id,
                        name,
                        output: Output::Raw { output },
                        is_error,
                        images: result_images,
                    }));
                    if let Some(item) = images_item(result_tokens) {
                        b.push(item);
                    }
                }
                other => *self.unknown_blocks.entry(format!("user {other}")).or_default() += 1,
            }
        }
        if !text.is_empty() || images > 0 {
            let text = text.join("\n");
            let meta = meta || harness_text(&text);
            self.conversations[c].push(Item::User { text, meta, images });
            if let Some(item) = images_item(image_tokens) {
                self.conversations[c].push(item);
            }
        }
        Ok(())
    }

    /// Conversation `c`'s context is replaced from here on (its summary follows as user text).
    pub(crate) fn compaction_in(&mut self, c: usize) {
        let b = &mut self.conversations[c];
        b.flush();
        b.conversation.items.push(Item::Compaction { summary: None });
    }

    /// Sets the aggregate usage of conversation `c` (for formats that also record session totals).
    pub(crate) fn set_recorded_total(&mut self, c: usize, total: RecordedTotal) {
        self.conversations[c].conversation.recorded_total = Some(total);
    }

    /// Requests assembled so far in conversation `c` (the open response's included).
    pub(crate) fn requests_in(&self, c: usize) -> usize {
        self.conversations[c].conversation.requests()
    }

    fn finish(self) -> Trace {
        self.finish_as("claude-code")
    }

    /// The trace, under the name of the format that read it.
    pub(crate) fn finish_as(mut self, format: &'static str) -> Trace {
        let mut trace = Trace { format, ..Default::default() };
        trace.warnings.extend(self.bad_usage.warning());
        trace.warnings.append(&mut self.warnings);
        for (kind, n) in &self.unknown_blocks {
            trace.warnings.push(format!("{n} `{kind}` content block(s) not replayed (unknown block type)"));
        }
        if self.tool_references > 0 {
            trace.warnings.push(format!(
                "{} `tool_reference` block(s) in tool results load tool schemas the file does not hold: \
                 the requests after them are replayed smaller than sent",
                self.tool_references
            ));
        }
        for (kind, n) in &self.unknown_lines {
            trace.warnings.push(format!(
                "{n} line(s) of type `{kind}` not replayed (unknown line type; a newer Claude Code version?)"
            ));
        }
        for b in &mut self.conversations {
            b.flush();
            trace.warnings.extend(context_edits::unsticky(&b.conversation));
        }
        trace.conversations = self.conversations.into_iter().map(|b| b.conversation).collect();
        trace
    }
}

/// User text the CLI writes, not the human, though it is sent: a local command's output and the
/// interruption marker. (A `<command-name>` / `<command-message>` line is the human typing a slash
/// command: it starts a turn.)
fn harness_text(text: &str) -> bool {
    const PREFIXES: [&str; 3] =
        ["<local-command-stdout>", "<local-command-stderr>", "[Request interrupted by user"];
    let text = text.trim_start();
    PREFIXES.iter().any(|p| text.starts_with(p))
}

/// Tool-result text (string, or `text` blocks joined with `\n`), its image count, its count of
/// `tool_reference` blocks (a deferred tool's schema, loaded into the prompt by the API: its text
/// is not in the file, so it cannot be counted) and the tokens of its images.
fn tool_result_text(content: Content) -> (String, u32, usize, Tokens) {
    match content {
        Content::Text(text) => (text, 0, 0, 0),
        Content::Blocks(blocks) => {
            let mut texts = Vec::new();
            let (mut images, mut references, mut tokens) = (0, 0, 0);
            for b in blocks {
                match b.kind.as_deref() {
                    Some("text") => texts.push(b.text.unwrap_or_default()),
                    Some("image") => {
                        images += 1;
                        tokens += image_tokens(&b);
                    }
                    Some("tool_reference") => references += 1,
                    _ => {}
                }
            }
            (texts.join("\n"), images, references, tokens)
        }
        Content::Other => (String::new(), 0, 0, 0),
    }
}

/// One line of a Claude Code transcript or of `stream-json` output, with only the fields the
/// readers use (the other fields are checked as JSON and skipped). Each field reads as `None`
/// when it is absent or of another JSON type, as `Value::get(…).and_then(Value::as_str)` did.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Entry {
    #[serde(rename = "type", deserialize_with = "loose_str")]
    kind: Option<String>,
    /// Present (of any type) or absent: a `message` that is not an object reads as an empty one.
    #[serde(deserialize_with = "present_object")]
    message: Option<Message>,
    #[serde(deserialize_with = "loose_str")]
    pub(crate) subtype: Option<String>,
    #[serde(deserialize_with = "loose_str")]
    timestamp: Option<String>,
    #[serde(rename = "isMeta", deserialize_with = "loose_bool")]
    is_meta: Option<bool>,
    /// The user line after a `compact_boundary` that holds the summary.
    #[serde(rename = "isCompactSummary", deserialize_with = "loose_bool")]
    is_compact_summary: Option<bool>,
    #[serde(rename = "isSidechain", deserialize_with = "loose_bool")]
    is_sidechain: Option<bool>,
    #[serde(rename = "agentId", deserialize_with = "loose_str")]
    agent_id: Option<String>,
    #[serde(rename = "parentUuid", deserialize_with = "loose_str")]
    parent_uuid: Option<String>,
    #[serde(deserialize_with = "loose_str")]
    uuid: Option<String>,
    /// `stream-json`: the Task tool call whose subagent wrote this line.
    #[serde(deserialize_with = "loose_str")]
    pub(crate) parent_tool_use_id: Option<String>,
    /// A `microcompact_boundary` line's metadata (`microcompact`; the streamed form's key is
    /// snake_case).
    #[serde(
        rename = "microcompactMetadata",
        alias = "microcompact_metadata",
        deserialize_with = "present_value"
    )]
    pub(crate) microcompact_metadata: Option<Value>,
    /// Where some `microcompact_boundary` lines carry it instead.
    #[serde(rename = "compactMetadata", alias = "compact_metadata", deserialize_with = "present_value")]
    pub(crate) compact_metadata: Option<Value>,
    /// `stream-json`: the session totals of the `result` line.
    #[serde(deserialize_with = "present_object")]
    pub(crate) usage: Option<UsageFields>,
}

impl Object<Entry> {
    /// The line's `type` and the rest of it; a line that is not an object with a string `type` is
    /// an error naming it.
    pub(crate) fn typed(self, path: &Path, line: usize) -> Result<(String, Entry), TraceError> {
        self.0
            .and_then(|mut e| Some((e.kind.take()?, e)))
            .ok_or_else(|| TraceError::line(path, line, "expected an object with a string `type`"))
    }
}

/// An Anthropic message (`message` of a line).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Message {
    #[serde(deserialize_with = "loose_str")]
    id: Option<String>,
    #[serde(deserialize_with = "loose_str")]
    model: Option<String>,
    content: Content,
    #[serde(deserialize_with = "present_object")]
    usage: Option<UsageFields>,
    /// The server-side context editing applied to the request (`context_edits`).
    #[serde(deserialize_with = "present_value")]
    context_management: Option<Value>,
}

/// A content block of a message, or of a tool result's content.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Block {
    #[serde(rename = "type", deserialize_with = "loose_str")]
    kind: Option<String>,
    #[serde(deserialize_with = "loose_str")]
    text: Option<String>,
    #[serde(deserialize_with = "loose_str")]
    thinking: Option<String>,
    #[serde(deserialize_with = "loose_str")]
    id: Option<String>,
    #[serde(deserialize_with = "loose_str")]
    name: Option<String>,
    /// A tool call's arguments, whatever their JSON (counted as their compact JSON text).
    #[serde(deserialize_with = "present_value")]
    input: Option<Value>,
    #[serde(deserialize_with = "loose_str")]
    tool_use_id: Option<String>,
    content: Content,
    #[serde(deserialize_with = "loose_bool")]
    is_error: Option<bool>,
    /// An image block's source (its base64 `data`, whose header gives the dimensions).
    #[serde(deserialize_with = "present_object")]
    source: Option<ImageSource>,
}

/// The source of an image block; only base64 data is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ImageSource {
    #[serde(deserialize_with = "loose_str")]
    data: Option<String>,
}

/// Tokens of an image block by Anthropic's rule, from its dimensions when its data gives them,
/// else the documented default ([`crate::unseen`]).
fn image_tokens(block: &Block) -> Tokens {
    let data = block.source.as_ref().and_then(|s| s.data.as_deref());
    match data.and_then(unseen::base64_image_dimensions) {
        Some((w, h)) => unseen::anthropic_image_tokens(w, h),
        None => unseen::ANTHROPIC_IMAGE_DEFAULT,
    }
}

/// The images of one message or result as one unseen item, if there are any.
fn images_item(tokens: Tokens) -> Option<Item> {
    (tokens > 0).then_some(Item::Unseen { kind: UnseenKind::Image, tokens })
}

/// Anthropic usage as recorded.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct UsageFields {
    #[serde(deserialize_with = "present_value")]
    input_tokens: Option<Value>,
    #[serde(deserialize_with = "present_value")]
    cache_creation_input_tokens: Option<Value>,
    #[serde(deserialize_with = "present_value")]
    cache_read_input_tokens: Option<Value>,
    #[serde(deserialize_with = "present_value")]
    output_tokens: Option<Value>,
}

impl UsageFields {
    /// Prompt size = input + cache creation + cache read (disjoint); `None` when none of the three
    /// is a number (a usage object with only `output_tokens`, or with input fields of other types,
    /// records no prompt size: read as 0 it would feed `reconcile` a prompt of nothing). A sum
    /// past `u64` stays at its largest value, which [`crate::model::Conversation::drop_implausible_usage`]
    /// then names. A field that is present but not a token count (negative, fractional, above
    /// `u64`, a string) is `Err` naming it: the whole usage is then unrecorded, since a prompt
    /// summed without one of its parts would be wrong.
    pub(crate) fn normalised(&self) -> Result<Option<Usage>, String> {
        let count = |key: &str, v: &Option<Value>| match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| super::shared::not_a_count(key, v)),
        };
        let input = count("input_tokens", &self.input_tokens)?;
        let write = count("cache_creation_input_tokens", &self.cache_creation_input_tokens)?;
        let read = count("cache_read_input_tokens", &self.cache_read_input_tokens)?;
        let output_tokens = count("output_tokens", &self.output_tokens)?;
        if input.is_none() && write.is_none() && read.is_none() {
            return Ok(None);
        }
        let (input, write, read) = (input.unwrap_or(0), write.unwrap_or(0), read.unwrap_or(0));
        Ok(Some(Usage {
            input_tokens: input.saturating_add(write).saturating_add(read),
            cache_read_tokens: Some(read),
            cache_write_tokens: Some(write),
            output_tokens,
            cost_micro_usd: None,
        }))
    }
}

/// A message's or a tool result's `content`: text, a list of blocks (an element that is not an
/// object reads as an empty block), or anything else.
#[derive(Debug, Default)]
enum Content {
    Text(String),
    Blocks(Vec<Block>),
    #[default]
    Other,
}

impl Loose for Content {
    fn from_str(v: &str) -> Content {
        Content::Text(v.to_owned())
    }
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Content, A::Error> {
        let mut blocks = Vec::new();
        while let Some(Object(block)) = seq.next_element::<Object<Block>>()? {
            blocks.push(block.unwrap_or_default());
        }
        Ok(Content::Blocks(blocks))
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Content, D::Error> {
        deserialize_loose(d)
    }
}

/// A JSON object read as `T`; any other JSON value reads as `None` (checked and skipped).
pub(crate) struct Object<T>(pub Option<T>);

impl<T> Default for Object<T> {
    fn default() -> Self {
        Object(None)
    }
}

impl<T: de::DeserializeOwned> Loose for Object<T> {
    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Object<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Object(Some(t)))
    }
}

impl<'de, T: de::DeserializeOwned> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Object<T>, D::Error> {
        deserialize_loose(d)
    }
}

/// A JSON scalar as the readers take it: a string, a boolean, a non-negative integer, or other.
#[derive(Default)]
enum Scalar {
    Str(String),
    Bool(bool),
    #[default]
    Other,
}

impl Loose for Scalar {
    fn from_str(v: &str) -> Scalar {
        Scalar::Str(v.to_owned())
    }
    fn from_bool(v: bool) -> Scalar {
        Scalar::Bool(v)
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        deserialize_loose(d)
    }
}

fn loose_str<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Scalar::deserialize(d)? {
        Scalar::Str(s) => Some(s),
        _ => None,
    })
}

fn loose_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(match Scalar::deserialize(d)? {
        Scalar::Bool(b) => Some(b),
        _ => None,
    })
}

/// A field present with any JSON value: an object read as `T`, anything else as `T::default()`.
fn present_object<'de, D: Deserializer<'de>, T: de::DeserializeOwned + Default>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Ok(Some(Object::<T>::deserialize(d)?.0.unwrap_or_default()))
}

/// A field present with any JSON value, kept as it is (`null` included).
fn present_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

mod microcompact;
#[cfg(test)]
mod tests;
