//! Helpers shared by the importers of one-document JSON formats (agent trajectories, chat
//! recordings): a shallow outline of a possibly cut-off JSON head for detection, reading a whole
//! document with errors that name the line, and the small conversions several formats need
//! (OpenAI-style message content and usage, Unix times).
//!
//! Detection sees at most [`HEAD_BYTES`](super::HEAD_BYTES) of a file, and a pretty-printed JSON
//! document is rarely complete there, so it cannot be parsed. [`Outline`] walks the head with a
//! tiny lexer instead and records which keys appear where (`.trajectory[].action`, `[].role`) and
//! the short string values beside them, which is enough to tell the formats apart.
//!
//! Pure functions: no file I/O (readers are passed in), no printing.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use crate::error::TraceError;
use crate::model::{Millis, Usage};

/// Containers nested deeper than this are walked but their keys are not recorded.
const MAX_DEPTH: usize = 5;
/// String values longer than this (bytes, as escaped in the file) are not recorded.
const MAX_VALUE: usize = 200;
/// At most this many values are kept per key path.
const MAX_VALUES: usize = 8;

/// Which keys appear where in the head of a JSON document.
///
/// Paths name a key by the way to it: `.messages[].role` is the `role` key of objects inside the
/// `messages` array of the root object; `[].source` is the `source` key of objects in a root array.
/// Only the first JSON value of the text is walked (the first line of a JSON Lines file).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outline {
    root: Option<u8>,
    first_key: Option<String>,
    /// Container path → keys seen directly in objects at that path.
    keys: BTreeMap<String, BTreeSet<String>>,
    /// Key path → short string values seen (raw, as escaped in the file).
    values: BTreeMap<String, Vec<String>>,
    complete: bool,
}

struct Frame {
    path: String,
    object: bool,
    key: Option<String>,
    expect_key: bool,
}

impl Outline {
    /// Walks `text` (the head of a file, possibly cut anywhere).
    pub fn scan(text: &str) -> Outline {
        let b = text.as_bytes();
        let mut o = Outline::default();
        let mut stack: Vec<Frame> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b':' => i += 1,
                b'{' | b'[' => {
                    let path = match stack.last() {
                        None => {
                            o.root = Some(c);
                            String::new()
                        }
                        // Paths deeper than MAX_DEPTH are never recorded: building them would make
                        // a deeply nested head quadratic in time and memory.
                        Some(_) if stack.len() >= MAX_DEPTH => String::new(),
                        Some(f) if f.object => format!("{}.{}", f.path, f.key.as_deref().unwrap_or("")),
                        Some(f) => format!("{}[]", f.path),
                    };
                    stack.push(Frame { path, object: c == b'{', key: None, expect_key: c == b'{' });
                    i += 1;
                }
                b'}' | b']' => {
                    stack.pop();
                    i += 1;
                    if stack.is_empty() {
                        o.complete = o.root.is_some();
                        break;
                    }
                }
                b',' => {
                    if let Some(f) = stack.last_mut().filter(|f| f.object) {
                        f.expect_key = true;
                        f.key = None;
                    }
                    i += 1;
                }
                b'"' => {
                    let Some((s, end)) = string_at(text, i) else { break };
                    i = end;
                    let depth = stack.len();
                    let Some(f) = stack.last_mut() else { break };
                    if f.object && f.expect_key {
                        f.expect_key = false;
                        f.key = Some(s.to_owned());
                        if depth == 1 && o.first_key.is_none() {
                            o.first_key = Some(s.to_owned());
                        }
                        if depth <= MAX_DEPTH {
                            o.keys.entry(f.path.clone()).or_default().insert(s.to_owned());
                        }
                    } else if f.object && depth <= MAX_DEPTH && s.len() <= MAX_VALUE {
                        let path = format!("{}.{}", f.path, f.key.as_deref().unwrap_or(""));
                        let values = o.values.entry(path).or_default();
                        if values.len() < MAX_VALUES {
                            values.push(s.to_owned());
                        }
                    }
                }
                _ => {
                    if stack.is_empty() {
                        break; // not a JSON object or array
                    }
                    while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        i += 1;
                    }
                }
            }
        }
        o
    }

    /// The root is an object.
    pub fn is_object(&self) -> bool {
        self.root == Some(b'{')
    }

    /// The root is an array.
    pub fn is_array(&self) -> bool {
        self.root == Some(b'[')
    }

    /// The first key of the root object.
    pub fn first_key(&self) -> Option<&str> {
        self.first_key.as_deref()
    }

    /// The whole first value was inside the text.
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// Whether the key at `path` (e.g. `.history[].role`) was seen.
    pub fn has(&self, path: &str) -> bool {
        let Some(dot) = path.rfind('.') else { return false };
        self.keys.get(&path[..dot]).is_some_and(|k| k.contains(&path[dot + 1..]))
    }

    /// Keys seen in objects at a container path (`""` for the root object, `[]` for the elements
    /// of a root array).
    pub fn keys(&self, container: &str) -> impl Iterator<Item = &str> {
        self.keys.get(container).into_iter().flatten().map(String::as_str)
    }

    /// Short string values seen at a key path.
    pub fn values(&self, path: &str) -> impl Iterator<Item = &str> {
        self.values.get(path).into_iter().flatten().map(String::as_str)
    }

    /// The first short string value seen at a key path.
    pub fn value(&self, path: &str) -> Option<&str> {
        self.values(path).next()
    }
}

/// The raw text of the JSON string starting at `text[start] == '"'`, and the index after it.
fn string_at(text: &str, start: usize) -> Option<(&str, usize)> {
    let b = text.as_bytes();
    let mut j = start + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Some((text.get(start + 1..j)?, j + 1)),
            _ => j += 1,
        }
    }
    None
}

/// Reads a whole input as one JSON document. Invalid UTF-8 or JSON is an error naming the line.
pub fn read_document(input: &mut dyn BufRead, path: &Path) -> Result<Value, TraceError> {
    let text = read_text(input, path)?;
    parse_document(&text, path)
}

/// Reads a whole input as UTF-8 text; invalid UTF-8 is an error naming the line.
pub fn read_text(input: &mut dyn BufRead, path: &Path) -> Result<String, TraceError> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes).map_err(|source| TraceError::Io { path: path.to_owned(), source })?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..valid].iter().filter(|&&b| b == b'\n').count() + 1;
        TraceError::line(path, line, format!("invalid UTF-8 at byte {valid} of the file; {NOT_UTF8}"))
    })
}

/// What to do about text that is not UTF-8.
pub const NOT_UTF8: &str = "session logs are UTF-8 text: re-save the file as UTF-8";

/// Parses text as one JSON document; an error names the line and column.
pub fn parse_document(text: &str, path: &Path) -> Result<Value, TraceError> {
    parse_document_as(text, path)
}

/// [`parse_document`] into any type (a format's own records, which may borrow from `text`), with
/// the same errors.
pub fn parse_document_as<'a, T: serde::Deserialize<'a>>(text: &'a str, path: &Path) -> Result<T, TraceError> {
    serde_json::from_str(text).map_err(|e| {
        let message = if e.is_eof() {
            format!(
                "the JSON document ends early, at line {} column {} (a session still being written, or a cut-off copy?); nothing was replayed",
                e.line(),
                e.column()
            )
        } else {
            format!("invalid JSON (the file must be one JSON document): {}", describe_json_error(&e))
        };
        TraceError::line(path, e.line(), message)
    })
}

/// A serde_json error in words: its message with the position, and for nesting deeper than
/// serde_json's limit (128), what that means.
pub fn describe_json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.starts_with("recursion limit exceeded") {
        format!("{text} (values nested more than 128 deep; no trace format nests that deep)")
    } else {
        text
    }
}

/// One step of a JSON path: an object key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Parses a path such as `messages[1].content[0]`, `[2].traj` or `samples` (keys are ASCII
/// letters, digits, `_` and `-`).
fn parse_json_path(path: &str) -> Option<Vec<Step>> {
    let b = path.as_bytes();
    let (mut steps, mut i) = (Vec::new(), 0);
    let is_key = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    while i < b.len() {
        match b[i] {
            b'[' => {
                let close = i + path[i..].find(']')?;
                steps.push(Step::Index(path[i + 1..close].parse().ok()?));
                i = close + 1;
            }
            b'.' if i > 0 => i += 1,
            c if is_key(c) => {
                let start = i;
                while i < b.len() && is_key(b[i]) {
                    i += 1;
                }
                steps.push(Step::Key(path[start..i].to_owned()));
            }
            _ => return None,
        }
    }
    (!steps.is_empty()).then_some(steps)
}

/// The 1-based line on which the value at `path` (`messages[1].content`, `[0].traj[2]`) starts in
/// the JSON document `text`, if the path parses and the value is there. A single pass with a small
/// stack: no recursion, whatever the nesting, and no allocation per value.
pub fn line_of_json_path(text: &str, path: &str) -> Option<usize> {
    let target = parse_json_path(path)?;
    let b = text.as_bytes();
    // Per open container: (is an object, the step to the value being read in it).
    let mut stack: Vec<(bool, Step)> = Vec::new();
    let mut expect_key = false;
    let (mut line, mut i) = (1, 0);
    let at_target = |stack: &[(bool, Step)]| {
        stack.len() == target.len() && stack.iter().zip(&target).all(|((_, s), t)| s == t)
    };
    while i < b.len() {
        match b[i] {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b':' => i += 1,
            b',' => {
                match stack.last_mut() {
                    Some((true, _)) => expect_key = true,
                    Some((false, Step::Index(n))) => *n += 1,
                    _ => {}
                }
                i += 1;
            }
            b'}' | b']' => {
                stack.pop();
                expect_key = false;
                i += 1;
            }
            b'"' if expect_key => {
                let (key, end) = string_at(text, i)?;
                if let Some((true, step)) = stack.last_mut() {
                    *step = Step::Key(key.to_owned());
                }
                expect_key = false;
                i = end;
            }
            c => {
                if at_target(&stack) {
                    return Some(line);
                }
                match c {
                    b'{' => {
                        stack.push((true, Step::Key(String::new())));
                        expect_key = true;
                        i += 1;
                    }
                    b'[' => {
                        stack.push((false, Step::Index(0)));
                        i += 1;
                    }
                    b'"' => i = string_at(text, i)?.1,
                    _ => {
                        while i < b.len()
                            && !matches!(b[i], b',' | b'}' | b']' | b'\n' | b' ' | b'\t' | b'\r')
                        {
                            i += 1;
                        }
                    }
                }
            }
        }
    }
    None
}

/// Text of an OpenAI-style message `content` and the number of images in it.
///
/// A string is the text itself. A list of parts contributes each part's `text` (a string part is
/// text too), joined with `\n`; parts of type `image`/`image_url`, or with `inlineData`, are
/// counted as images. Anything else (null, missing) is empty.
pub fn content_text(content: Option<&Value>) -> (String, u32) {
    match content {
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(parts)) => {
            let mut texts: Vec<&str> = Vec::new();
            let mut images = 0;
            for part in parts {
                if let Some(s) = part.as_str() {
                    texts.push(s);
                } else if let Some(s) = part.get("text").and_then(Value::as_str) {
                    texts.push(s);
                } else if matches!(part.get("type").and_then(Value::as_str), Some("image" | "image_url"))
                    || part.get("inlineData").is_some()
                {
                    images += 1;
                }
            }
            (texts.join("\n"), images)
        }
        _ => (String::new(), 0),
    }
}

/// The recorded token count at `key` of the usage object `usage`: `Ok(None)` when it is absent
/// or `null`, `Err` naming the field and its value when it is present but not a whole number
/// from 0 to `u64::MAX` (negative, fractional, above `u64`, a string): a count no provider
/// reports, which the caller reads as unrecorded and warns about rather than dropping silently.
pub fn recorded_count(usage: &Value, key: &str) -> Result<Option<u64>, String> {
    match usage.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| not_a_count(key, v)),
    }
}

/// The first field of the usage object `usage` (or of an object in it, such as
/// `prompt_tokens_details`) whose name `is_count` and whose value is neither `null` nor a token
/// count, as [`not_a_count`] says it; for the formats that read a provider's usage object by
/// several shapes, so that every shape is checked the same way.
pub fn first_bad_count(usage: &Value, is_count: &dyn Fn(&str) -> bool) -> Option<String> {
    let Value::Object(fields) = usage else { return None };
    fields.iter().find_map(|(key, v)| match v {
        Value::Object(_) => first_bad_count(v, is_count),
        Value::Null => None,
        // A list under a token-ish name is a breakdown (Gemini's `candidatesTokensDetails`).
        Value::Array(_) => None,
        v if is_count(key) && v.as_u64().is_none() => Some(not_a_count(key, v)),
        _ => None,
    })
}

/// Whether a provider's usage field named `key` is a token count (`input_tokens`,
/// `cached_tokens`, `promptTokenCount`, ...).
pub fn names_tokens(key: &str) -> bool {
    key.to_ascii_lowercase().contains("token")
}

/// Why `v`, the value of the usage field `key`, is not a token count.
pub fn not_a_count(key: &str, v: &Value) -> String {
    format!("usage field {}", not_a(key, v, "token count"))
}

/// "`key` is <the value> (<what it is>), not a <noun>": why `v` is not a count of `noun`s.
pub fn not_a(key: &str, v: &Value, noun: &str) -> String {
    let what = match v {
        Value::Number(n) if n.is_i64() => "a negative number",
        Value::Number(n) if n.as_f64().is_some_and(|f| f >= 18_446_744_073_709_551_615.0) => "above 2^64",
        Value::Number(n) if n.as_f64().is_some_and(|f| f < 0.0) => "a negative number",
        Value::Number(_) => "a fractional number",
        Value::String(_) => "a string",
        Value::Bool(_) => "a boolean",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
        Value::Null => "null",
    };
    // The value as JSON (control characters escaped), cut to keep a hostile value short.
    let mut shown = v.to_string();
    if shown.len() > 40 {
        let cut = (0..=40).rev().find(|&i| shown.is_char_boundary(i)).unwrap_or(0);
        shown.truncate(cut);
        shown.push('…');
    }
    format!("`{key}` is {shown} ({what}), not a {noun}")
}

/// The usage fields of one file that are not token counts ([`recorded_count`]'s errors), as one
/// warning: the first such field with where it is, and how many more there were.
#[derive(Debug, Default)]
pub struct BadUsage {
    first: Option<(String, String)>,
    more: usize,
}

impl BadUsage {
    /// Notes a bad field `why` at `at` (`path:line`, or a place in a document).
    pub fn note(&mut self, at: String, why: String) {
        if self.first.is_none() {
            self.first = Some((at, why));
        } else {
            self.more += 1;
        }
    }

    /// The warning, if a field was noted.
    pub fn warning(&self) -> Option<String> {
        let (at, why) = self.first.as_ref()?;
        let more = match self.more {
            0 => String::new(),
            n => format!(" ({n} more such usage record(s) in this file)"),
        };
        Some(format!("{at}: {why}; that request's usage is read as unrecorded{more}"))
    }
}

/// Usage from an OpenAI-style (or litellm) `usage` object: `prompt_tokens` is the whole prompt,
/// cached tokens (`prompt_tokens_details.cached_tokens`, or litellm's `cache_read_input_tokens`)
/// are a subset of it, `cache_creation_input_tokens` (litellm, Anthropic models) likewise.
/// `None` when there is no `prompt_tokens`.
/// A field that is present but not a token count is `Err` ([`recorded_count`]).
pub fn openai_usage(u: &Value) -> Option<Result<Usage, String>> {
    openai_counts(u).transpose()
}

/// [`openai_usage`] with the absence of `prompt_tokens` as `Ok(None)`.
fn openai_counts(u: &Value) -> Result<Option<Usage>, String> {
    let Some(input_tokens) = recorded_count(u, "prompt_tokens")? else { return Ok(None) };
    let cached = u.get("prompt_tokens_details").map_or(Ok(None), |d| recorded_count(d, "cached_tokens"))?;
    let cache_read_tokens = match cached {
        Some(n) => Some(n),
        None => recorded_count(u, "cache_read_input_tokens")?,
    };
    Ok(Some(Usage {
        input_tokens,
        cache_read_tokens,
        cache_write_tokens: recorded_count(u, "cache_creation_input_tokens")?,
        output_tokens: recorded_count(u, "completion_tokens")?,
        cost_micro_usd: None,
    }))
}

/// The usage of the object `u` from its fields named `prompt` (the whole prompt: `Ok(None)`
/// without it), `read` and `write` (cache counts, where the format has them) and `output`; a
/// field that is not a token count is `Err` ([`recorded_count`]).
pub fn usage_from(
    u: &Value,
    prompt: &str,
    read: Option<&str>,
    write: Option<&str>,
    output: &str,
) -> Result<Option<Usage>, String> {
    let Some(input_tokens) = recorded_count(u, prompt)? else { return Ok(None) };
    let optional = |key: Option<&str>| key.map_or(Ok(None), |k| recorded_count(u, k));
    Ok(Some(Usage {
        input_tokens,
        cache_read_tokens: optional(read)?,
        cache_write_tokens: optional(write)?,
        output_tokens: recorded_count(u, output)?,
        cost_micro_usd: None,
    }))
}

/// Milliseconds from a Unix time in seconds (integer or fractional), if `v` is a number.
pub fn unix_seconds(v: Option<&Value>) -> Option<Millis> {
    let s = v?.as_f64()?;
    (s.is_finite() && s > 0.0).then(|| (s * 1000.0).round() as Millis)
}

/// `text` with the last occurrence of `action` (trimmed) taken out, and the trimmed action.
///
/// Agents that write their action inside the message text (SWE-agent v0, mini-swe-agent) send
/// that text once; splitting it this way keeps assistant text + call arguments equal to the bytes
/// sent. When the action does not occur in the text, the text is kept whole.
pub fn split_action(text: &str, action: &str) -> (String, String) {
    let action = action.trim();
    match text.rfind(action).filter(|_| !action.is_empty()) {
        Some(at) => (format!("{}{}", &text[..at], &text[at + action.len()..]), action.to_owned()),
        None => (text.to_owned(), action.to_owned()),
    }
}

/// An OpenAI-style tool call `{id, function: {name, arguments}}` as (id, name, arguments).
/// Arguments given as an object rather than JSON text are written as JSON; a call without an id
/// gets `fallback_id`.
pub fn openai_call(call: &Value, fallback_id: String) -> (String, String, String) {
    let id = call.get("id").and_then(Value::as_str).map_or(fallback_id, str::to_owned);
    let function = call.get("function");
    let name = function.map(|f| str_at(f, "name")).unwrap_or_default();
    let arguments = json_text(function.and_then(|f| f.get("arguments"))).unwrap_or_default();
    (id, name, arguments)
}

/// A string as it is, any other JSON value as JSON text.
pub fn json_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// The string at `key`, or empty.
pub fn str_at(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// A record read from any JSON value: an object by [`Loose::from_map`], an array by
/// [`Loose::from_seq`], a string, a boolean or a non-negative integer by their hooks, and anything
/// else, or whatever a type does not take, as its default. A value of an unexpected type thus
/// becomes a record an importer names in its own error instead of a parse error, and what is not
/// kept is still checked as JSON. A type's `Deserialize` calls [`deserialize_loose`].
pub(crate) trait Loose: Default {
    /// Reads an object; by default checks and skips it.
    fn from_map<'de, A: serde::de::MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }

    /// Reads an array; by default checks and skips it.
    fn from_seq<'de, A: serde::de::SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }

    /// Reads a string.
    fn from_str(_: &str) -> Self {
        Self::default()
    }

    /// Reads a boolean.
    fn from_bool(_: bool) -> Self {
        Self::default()
    }

    /// Reads a non-negative integer.
    fn from_count(_: u64) -> Self {
        Self::default()
    }
}

/// Deserializes a [`Loose`] type from any JSON value.
pub(crate) fn deserialize_loose<'de, T: Loose, D: serde::Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(LooseVisitor(std::marker::PhantomData))
}

struct LooseVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Loose> serde::de::Visitor<'de> for LooseVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::from_seq(seq)
    }
    fn visit_str<E>(self, v: &str) -> Result<T, E> {
        Ok(T::from_str(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<T, E> {
        Ok(T::from_bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok(T::from_count(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::default())
    }
}

/// Test helpers for the importers.
#[cfg(test)]
pub(crate) mod testing {
    use crate::model::Item;

    /// The kind of each item, for asserting the order an importer produced.
    pub fn kinds(items: &[Item]) -> Vec<&'static str> {
        items.iter().map(kind).collect()
    }

    /// The kind of one item.
    pub fn kind(item: &Item) -> &'static str {
        match item {
            Item::System { .. } => "system",
            Item::User { .. } => "user",
            Item::Assistant { .. } => "assistant",
            Item::Thinking { .. } => "thinking",
            Item::ToolCall { .. } => "call",
            Item::ToolResult(_) => "result",
            Item::Request(_) => "request",
            Item::Unseen { .. } => "unseen",
            Item::Compaction { .. } => "compaction",
            Item::Cleared(_) => "cleared",
        }
    }

    /// Documents in the shapes of the other formats, for negative detection tests:
    /// (what it is, the file text).
    pub const FOREIGN: &[(&str, &str)] = &[
        (
            "claude-code line",
            "{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":\"u\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
        ),
        ("native line", "{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"request\"}\n"),
        (
            "OpenAI chat array with tool calls",
            r#"[{"role":"system","content":"sys"},{"role":"user","content":"ls"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"<returncode>0</returncode>\n<output>a</output>"},{"role":"assistant","content":"```bash\nls\n```"}]"#,
        ),
        (
            "OpenAI chat array without tool calls",
            r#"[{"role":"system","content":"You are helpful."},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]"#,
        ),
        (
            "tau-bench trajectories",
            r#"[{"task_id":0,"trial":0,"reward":1.0,"info":{},"traj":[{"role":"system","content":"policy"},{"role":"user","content":"hi"}]}]"#,
        ),
        (
            "OpenAI request body",
            r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"ok"}],"tools":[]}"#,
        ),
        (
            "Anthropic request body",
            r#"{"model":"claude-sonnet-4","max_tokens":1024,"system":"sys","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#,
        ),
        (
            "OpenAI Responses input",
            r#"{"model":"gpt-4.1","input":[{"type":"message","role":"user","content":"hi"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]}"#,
        ),
        (
            "OpenAI Responses item list",
            r#"[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]"#,
        ),
        (
            "Codex rollout",
            "{\"timestamp\":\"2025-09-24T19:22:20.000Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\",\"cwd\":\"/w\"}}\n{\"timestamp\":\"2025-09-24T19:22:21.000Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[]}}\n",
        ),
        (
            "VCR cassette",
            "interactions:\n- request:\n    body: '{\"messages\":[]}'\n    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n  response:\n    status:\n      code: 200\n",
        ),
        (
            "Inspect AI log",
            r#"{"version":2,"status":"success","eval":{"task":"t","model":"openai/gpt-4o"},"plan":{},"results":{},"stats":{},"samples":[{"id":1,"messages":[{"role":"user","content":"hi"}],"events":[]}]}"#,
        ),
        ("plain text", "hello world\n"),
    ];
}

#[cfg(test)]
mod tests;
