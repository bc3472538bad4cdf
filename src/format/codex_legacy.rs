//! `codex-legacy`: Codex CLI rollouts in the layout written before 0.40 (mid 2025; any
//! `~/.codex/sessions` older than September 2025 holds them). The current layout, where every line
//! is `{timestamp, type, payload}`, is read by [`codex`](super::codex).
//!
//! The first line is a bare header `{id, timestamp, instructions?, cwd?, model?, git?,
//! originator?, cli_version?}`; after it come `{"record_type": "state"}` markers (skipped) and bare
//! OpenAI Responses items with no wrapper and no time of their own (`message`, `reasoning`,
//! `function_call`, `function_call_output`, `local_shell_call`, …), converted by the Responses
//! importer ([`openai_responses::items`](super::openai_responses)): a request before each run of
//! model output items, calls linked to their outputs by `call_id`, each output the whole string
//! Codex sent (`{"output": …, "metadata": …}`). The header's `instructions`, when a string, are
//! system text.
//!
//! **Not recorded in this layout:** usage (token counts were not written to rollouts yet), so
//! there is nothing to reconcile; the base instructions when `instructions` is `null`; the time of
//! each request. A warning says so once per file.

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

use super::look_alike::LookAlike;
use super::openai_responses;
use super::read_json_lines;
use super::wire::{Builder, Calls};
use super::{Format, Head};
use crate::error::TraceError;
use crate::model::{Conversation, Item, Trace};

/// Keys of the bare header line.
const HEADER_KEYS: [&str; 8] =
    ["id", "timestamp", "instructions", "cwd", "model", "git", "originator", "cli_version"];

/// Codex CLI rollouts written before 0.40.
pub struct CodexLegacy;

impl Format for CodexLegacy {
    fn look_alike(&self) -> Option<LookAlike> {
        Some(LookAlike {
            record_keys: &["id", "timestamp", "instructions"],
            records_are: "the header of a Codex CLI rollout from before 0.40",
            ..LookAlike::NONE
        })
    }

    fn name(&self) -> &'static str {
        "codex-legacy"
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        let Some(line) = head.first_json_line.and_then(Value::as_object) else { return false };
        line.get("id").is_some_and(Value::is_string)
            && line.get("timestamp").is_some_and(Value::is_string)
            && line.keys().all(|k| HEADER_KEYS.contains(&k.as_str()))
    }

    fn read(&self, input: &mut dyn BufRead, path: &Path) -> Result<Trace, TraceError> {
        let mut warnings = Vec::new();
        let mut instructions = None;
        let mut items = Vec::new();
        read_json_lines(input, path, &mut warnings, |line, v| {
            if line == 1 || v.get("record_type").is_some() {
                if line == 1 {
                    instructions = v.get("instructions").and_then(Value::as_str).map(str::to_owned);
                }
                return Ok(());
            }
            if !v.get("type").is_some_and(Value::is_string) {
                return Err(TraceError::line(
                    path,
                    line,
                    "expected a Responses item with a string `type` (a pre-0.40 Codex rollout line)",
                ));
            }
            items.push(v);
            Ok(())
        })?;
        let mut b = Builder::default();
        if let Some(text) = instructions {
            b.text(|text| Item::System { text }, text);
        }
        openai_responses::items(&mut b, &items, "", Calls::BeforeEachAssistant)
            .map_err(|e| TraceError::content(path, e))?;
        warnings.extend(b.warnings(""));
        warnings.push(
            "a Codex rollout in the layout written before 0.40: it records no usage (nothing to reconcile) and \
             no time per request; a newer Codex writes both"
                .to_owned(),
        );
        let conversation = Conversation { id: "main".into(), items: b.take_items(), recorded_total: None };
        Ok(Trace { format: self.name(), conversations: vec![conversation], warnings })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::shared::testing::{FOREIGN, kinds};
    use crate::format::with_head;

    #[test]
    fn errors_name_the_line_and_state_markers_are_skipped() {
        let text = "{\"id\":\"s\",\"timestamp\":\"2025-08-01T10:00:00Z\",\"instructions\":\"be brief\"}\n\
                    {\"record_type\":\"state\"}\n\
                    {\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"hi\"}]}\n\
                    {\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"hello\"}]}\n";
        let t = CodexLegacy.read(&mut text.as_bytes(), Path::new("r.jsonl")).unwrap();
        assert_eq!(kinds(&t.conversations[0].items), ["system", "user", "request", "assistant"]);
        let bad = "{\"id\":\"s\",\"timestamp\":\"t\"}\n{\"role\":\"user\"}\n";
        let e = CodexLegacy.read(&mut bad.as_bytes(), Path::new("r.jsonl")).unwrap_err();
        assert!(e.to_string().starts_with("r.jsonl:2: expected a Responses item"), "{e}");
    }

    #[test]
    fn detects_the_bare_header_only() {
        let detects =
            |text: &str| with_head(Path::new("r.jsonl"), text.as_bytes(), true, |h| CodexLegacy.detect(h));
        assert!(detects("{\"id\":\"s\",\"timestamp\":\"2025-08-01T10:00:00Z\",\"instructions\":null}\n"));
        assert!(detects(
            "{\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/p\",\"originator\":\"codex_cli_rs\",\"cli_version\":\"0.34.0\"}\n"
        ));
        assert!(!detects("{\"id\":\"s\",\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}\n"));
        assert!(!detects("{\"id\":\"s\",\"timestamp\":\"t\",\"message\":\"x\"}\n"));
        for (what, text) in FOREIGN {
            assert!(!detects(text), "{what}");
        }
    }
}
