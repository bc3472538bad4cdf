//! The journal form of a Gemini CLI recording (`session-<time>-<id>.jsonl`, Gemini CLI 0.39 and
//! later), folded into the message list Gemini CLI itself rebuilds from it on resume
//! (`loadConversationRecord` in `packages/core/src/services/chatRecordingService.ts`).
//!
//! Each line is one record: the session header (`{sessionId, projectHash, startTime, kind, …}`,
//! possibly with a `messages` array), a message (any object with a string `id`), `{"$set": {…}}`
//! (metadata; a `messages` array in it is a checkpoint that replaces every message), or
//! `{"$rewindTo": id}` (a rewind: that message and every one after it are dropped, all of them
//! when the id is unknown). A message whose `id` was seen before replaces the earlier copy in
//! its place: the recorder appends a model message again once its tool calls finish, and the
//! last copy is the whole message. The result is the history later requests were built from;
//! the requests of rewound messages were made but their record is gone, so they are not
//! replayed (a warning counts them). A last line cut off mid-write is skipped with a warning;
//! any other invalid line is an error naming it.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::At;
use crate::error::TraceError;
use crate::format::read_json_lines;

/// The messages a journal leaves, in history order, each with the line it was read from.
pub(super) fn messages(
    text: &str,
    path: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<(At, Value)>, TraceError> {
    let mut journal = Journal::default();
    read_json_lines(&mut text.as_bytes(), path, warnings, |line, record| {
        journal.apply(line, record);
        Ok(())
    })?;
    if journal.rewound > 0 {
        warnings.push(format!(
            "{}: {} message(s) removed by a rewind (`$rewindTo`) are not replayed: the recording keeps only the \
             history after it",
            path.display(),
            journal.rewound
        ));
    }
    if journal.unknown > 0 {
        warnings.push(format!(
            "{}: {} line(s) neither a message, `$set`, `$rewindTo` nor the session header were skipped",
            path.display(),
            journal.unknown
        ));
    }
    Ok(journal.order)
}

#[derive(Default)]
struct Journal {
    order: Vec<(At, Value)>,
    /// Each message id's place in `order`.
    place: HashMap<String, usize>,
    rewound: usize,
    unknown: usize,
}

impl Journal {
    fn apply(&mut self, line: usize, record: Value) {
        if let Some(id) = record.get("$rewindTo").and_then(Value::as_str) {
            let keep = self.place.get(id).copied().unwrap_or(0);
            self.truncate(keep);
        } else if record.get("id").is_some_and(Value::is_string) {
            self.put(line, record);
        } else if let Some(set) = record.get("$set").filter(|s| s.is_object()) {
            if let Some(Value::Array(messages)) = set.get("messages") {
                self.order.clear();
                self.place.clear();
                self.put_all(line, messages);
            }
        } else if record.get("sessionId").is_some_and(Value::is_string) {
            self.put_all(line, record.get("messages").and_then(Value::as_array).map_or(&[], Vec::as_slice));
        } else {
            self.unknown += 1;
        }
    }

    /// [`Journal::put`] for each message of a list (those with a string `id`).
    fn put_all(&mut self, line: usize, messages: &[Value]) {
        for m in messages.iter().filter(|m| m.get("id").is_some_and(Value::is_string)) {
            self.put(line, m.clone());
        }
    }

    /// Adds a message, or replaces the earlier copy of it in its place.
    fn put(&mut self, line: usize, message: Value) {
        let id = message.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        match self.place.get(&id) {
            Some(&i) => self.order[i] = (At::Line(line), message),
            None => {
                self.place.insert(id, self.order.len());
                self.order.push((At::Line(line), message));
            }
        }
    }

    /// Drops the messages from place `keep` on.
    fn truncate(&mut self, keep: usize) {
        self.rewound += self.order.len() - keep;
        self.order.truncate(keep);
        self.place.retain(|_, &mut i| i < keep);
    }
}
