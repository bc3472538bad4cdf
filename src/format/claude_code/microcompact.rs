//! Claude Code's microcompact: a `system` line with `subtype: microcompact_boundary`. From the
//! next request on, Claude Code sends each tool result it names with its content replaced by a
//! short placeholder ([`crate::model::CLEARED_PLACEHOLDER`]), while the transcript keeps the
//! original results; the line is read as an [`Item::Cleared`] naming them, which the as-recorded
//! replay applies (`measure::cleared`, `replay::engine`).
//!
//! The shape, as public parsers of Claude Code transcripts give it (no log of the corpus holds
//! the line; `docs/formats.md`):
//! `"microcompactMetadata": {"trigger": "auto", "preTokens": N, "tokensSaved": N,
//! "compactedToolIds": ["toolu_…"], "clearedAttachmentUUIDs": […]}`; some lines carry it under
//! `compactMetadata`, a streamed SDK form under `microcompact_metadata`, possibly without the id
//! list. Read: `compactedToolIds` (the results cleared) and `tokensSaved` (what sizes the clearing
//! where no id is given, an estimate). An id that is not a string, a `tokensSaved` that is not a
//! token count, an id no earlier call has, or a line that gives neither ids nor a size is named in
//! a warning (file and line), never a panic; what is valid of the line is kept.

use std::path::Path;

use serde_json::Value;

use super::{Entry, Reader};
use crate::format::shared::not_a_count;
use crate::model::{Cleared, Item, MAX_RECORDED_TOKENS};

impl Reader {
    /// Conversation `c`'s agent cleared the tool results the `microcompact_boundary` line `line`
    /// (`e`) names, from the next request on.
    pub(crate) fn microcompact_in(&mut self, c: usize, path: &Path, line: usize, e: &Entry) {
        let at = format!("{}:{line}: microcompact_boundary", path.display());
        let metadata = e.microcompact_metadata.as_ref().or(e.compact_metadata.as_ref());
        let (cleared, mut problems) = read_metadata(metadata);
        let b = &mut self.conversations[c];
        let unknown = cleared.call_ids.iter().filter(|id| !b.names.contains_key(id.as_str())).count();
        if unknown > 0 {
            problems.push(format!(
                "{unknown} of its {} `compactedToolIds` name(s) no earlier tool call: nothing cleared for them",
                cleared.call_ids.len()
            ));
        }
        if cleared.call_ids.is_empty() && cleared.tokens_saved.is_none() {
            problems
                .push("names no cleared result and no `tokensSaved`: the clearing is not replayed".into());
        }
        self.warnings.extend(problems.into_iter().map(|p| format!("{at}: {p}")));
        if cleared.call_ids.is_empty() && cleared.tokens_saved.is_none() {
            return;
        }
        b.flush();
        b.conversation.items.push(Item::Cleared(cleared));
    }
}

/// The clearing a line's metadata describes, and what is wrong with it.
fn read_metadata(metadata: Option<&Value>) -> (Cleared, Vec<String>) {
    let mut problems = Vec::new();
    let mut cleared = Cleared::default();
    let Some(m) = metadata else {
        return (cleared, problems);
    };
    let Value::Object(m) = m else {
        problems.push("its metadata is not an object".into());
        return (cleared, problems);
    };
    match m.get("compactedToolIds").or_else(|| m.get("compacted_tool_ids")) {
        None | Some(Value::Null) => {}
        Some(Value::Array(ids)) => {
            for (i, id) in ids.iter().enumerate() {
                match id {
                    Value::String(s) => cleared.call_ids.push(s.clone()),
                    other => problems
                        .push(format!("`compactedToolIds[{i}]` is {}, not a string (ignored)", kind(other))),
                }
            }
        }
        Some(other) => problems.push(format!("`compactedToolIds` is {}, not a list (ignored)", kind(other))),
    }
    match m.get("tokensSaved").or_else(|| m.get("tokens_saved")) {
        None | Some(Value::Null) => {}
        Some(v) => match v.as_u64() {
            Some(n) if n <= MAX_RECORDED_TOKENS => cleared.tokens_saved = Some(n),
            Some(n) => problems.push(format!("`tokensSaved` {n} is above {MAX_RECORDED_TOKENS} (ignored)")),
            None => problems.push(format!("{} (ignored)", not_a_count("tokensSaved", v))),
        },
    }
    (cleared, problems)
}

/// What kind of JSON value `v` is (for a warning: the value itself, untrusted, is not shown).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
