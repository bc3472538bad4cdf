//! The script as a `codex exec --json` event stream: `thread.started`, then per turn
//! `turn.started`, the items (`reasoning`, `agent_message`, and each call as a
//! `command_execution` started and completed with its aggregated output) and `turn.completed`
//! with the thread's usage so far. The stream does not hold what the person typed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Call, Script, arguments, put};

/// The command line of a call: its `command` argument, or the tool's name and its arguments.
fn command(call: &Call) -> String {
    match arguments(call).get("command").and_then(Value::as_str) {
        Some(c) => format!("bash -lc '{c}'"),
        None => format!("{} {}", call.name, call.arguments),
    }
}

pub fn write(script: &Script, dir: &Path) -> (PathBuf, u64) {
    let mut lines =
        vec![json!({"type": "thread.started", "thread_id": "0199c0de-1111-7222-8333-944445555666"})];
    let (mut item, mut input, mut cached) = (0, 0u64, 0u64);
    let mut next = |value: Value| {
        let mut value = value;
        value["id"] = format!("item_{item}").into();
        item += 1;
        value
    };
    for turn in &script.turns {
        lines.push(json!({"type": "turn.started"}));
        for step in &turn.steps {
            if let Some(t) = &step.thinking {
                lines.push(
                    json!({"type": "item.completed", "item": next(json!({"type": "reasoning", "text": t}))}),
                );
            }
            if let Some(t) = &step.text {
                lines.push(json!({"type": "item.completed", "item": next(json!({"type": "agent_message", "text": t}))}));
            }
            if let Some(c) = &step.call {
                let mut started = next(json!({"type": "command_execution", "command": command(c),
                    "aggregated_output": "", "exit_code": null, "status": "in_progress"}));
                lines.push(json!({"type": "item.started", "item": started.clone()}));
                started["aggregated_output"] = c.output.clone().into();
                started["exit_code"] = i64::from(c.is_error).into();
                started["status"] = if c.is_error { "failed" } else { "completed" }.into();
                lines.push(json!({"type": "item.completed", "item": started}));
            }
            input += step.prompt_tokens;
            cached += step.prompt_tokens.saturating_sub(403);
        }
        lines.push(json!({"type": "turn.completed", "usage": {"input_tokens": input, "cached_input_tokens": cached, "output_tokens": 1380}}));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = dir.join("run.jsonl");
    let bytes = put(&path, &text);
    (path, bytes)
}
