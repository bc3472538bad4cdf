//! The script as a Codex CLI rollout of the layout before 0.40: a bare header line, then bare
//! Responses items (user and assistant `message`s, `reasoning` with its summary and encrypted
//! content, `function_call`, and `function_call_output` whose output is the JSON text
//! `{"output", "metadata"}` Codex sent), with a `record_type: state` line after each output.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Script, put};

pub fn write(script: &Script, dir: &Path) -> (PathBuf, u64) {
    let mut lines = vec![json!({
        "id": "5f3e2a10-0c1d-4e5f-8a9b-0c1d2e3f4a5b",
        "timestamp": "2026-01-07T10:00:00.000Z",
        "instructions": null,
        "git": {"commit_hash": "0123456789abcdef0123456789abcdef01234567", "branch": "main"}
    })];
    let message = |role: &str, kind: &str, id: Value, text: &str| json!({"type": "message", "id": id, "role": role, "content": [{"type": kind, "text": text}]});
    for (n, (turn, first, step)) in script.each_step().enumerate() {
        if first {
            lines.push(json!({"record_type": "state"}));
            lines.push(message("user", "input_text", Value::Null, &script.turns[turn].user));
        }
        if let Some(t) = &step.thinking {
            lines.push(json!({"type": "reasoning", "id": format!("rs_{n}"),
                "summary": [{"type": "summary_text", "text": t}], "encrypted_content": "gAAAAB-opaque"}));
        }
        if let Some(t) = &step.text {
            lines.push(message("assistant", "output_text", format!("msg_{n}").into(), t));
        }
        if let Some(c) = &step.call {
            lines.push(json!({"type": "function_call", "id": format!("fc_{n}"), "name": c.name,
                "arguments": c.arguments, "call_id": c.id}));
            let output = json!({"output": c.output,
                "metadata": {"exit_code": i64::from(c.is_error), "duration_seconds": 0.1}});
            lines
                .push(json!({"type": "function_call_output", "call_id": c.id, "output": output.to_string()}));
            lines.push(json!({"record_type": "state"}));
        }
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = dir.join("rollout-2025-08-20.jsonl");
    let bytes = put(&path, &text);
    (path, bytes)
}
