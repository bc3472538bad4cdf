//! The script as a Claude Code session (`~/.claude/projects/<cwd>/<session>.jsonl`): one line per
//! user message, per content block of a response (the blocks of one response share `message.id`
//! and carry its usage), and per tool result, which also keeps the UI's `toolUseResult` copy of
//! the output, as the corpus's sessions do.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Script, arguments, put, time};

const SESSION: &str = "624a4a58-0000-4000-8000-000000000000";

/// The line fields every Claude Code line carries, with this line's uuid, parent and time.
fn line(uuid: usize, at: usize, kind: &str, message: Value) -> Value {
    json!({
        "parentUuid": if uuid == 0 { Value::Null } else { format!("00000000-0000-4000-8000-{:012}", uuid - 1).into() },
        "isSidechain": false,
        "userType": "external",
        "cwd": "/Users/user/repo",
        "sessionId": SESSION,
        "version": "2.0.76",
        "gitBranch": "main",
        "type": kind,
        "message": message,
        "uuid": format!("00000000-0000-4000-8000-{uuid:012}"),
        "timestamp": time(at),
    })
}

pub fn write(script: &Script, dir: &Path) -> (PathBuf, u64) {
    let mut out = String::new();
    let mut uuid = 0;
    let push = |v: Value, out: &mut String| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    for (n, (turn, first, step)) in script.each_step().enumerate() {
        if first {
            let m = json!({"role": "user", "content": script.turns[turn].user});
            push(line(uuid, n, "user", m), &mut out);
            uuid += 1;
        }
        let mut blocks = Vec::new();
        if let Some(t) = &step.thinking {
            blocks.push(json!({"type": "thinking", "thinking": t, "signature": "EpcBCkYIBxgCKkB"}));
        }
        if let Some(t) = &step.text {
            blocks.push(json!({"type": "text", "text": t}));
        }
        if let Some(c) = &step.call {
            blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": arguments(c)}));
        }
        for block in blocks {
            let message = json!({
                "model": "claude-sonnet-4-5-20250929",
                "id": format!("msg_{n:024}"),
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": 3,
                    "cache_creation_input_tokens": 400,
                    "cache_read_input_tokens": step.prompt_tokens.saturating_sub(403),
                    "output_tokens": 120,
                    "service_tier": "standard"
                }
            });
            let mut l = line(uuid, n, "assistant", message);
            l["requestId"] = format!("req_{n:024}").into();
            push(l, &mut out);
            uuid += 1;
        }
        if let Some(c) = &step.call {
            let m = json!({"role": "user", "content": [
                {"tool_use_id": c.id, "type": "tool_result", "content": c.output, "is_error": c.is_error}
            ]});
            let mut l = line(uuid, n, "user", m);
            l["toolUseResult"] =
                json!({"stdout": c.output, "stderr": "", "interrupted": false, "isImage": false});
            push(l, &mut out);
            uuid += 1;
        }
    }
    let path = dir.join("session.jsonl");
    let bytes = put(&path, &out);
    (path, bytes)
}
