//! The script as OpenCode's session storage: `session/<project>/<session>.json`, a message file per
//! user message and per model call (`message/<session>/<message>.json`), and a part file per part
//! (`part/<message>/<part>.json`: the user's `text`; a call's `step-start`, `reasoning`, `text`,
//! `tool` with its input and output, and `step-finish` with its tokens), written indented as
//! OpenCode writes them. Ids grow with the order, as OpenCode's do.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Script, arguments, put};

const SESSION: &str = "ses_6a1f0c2b3ffeAbCdEfGhIjKlMn";
const PROJECT: &str = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750";

pub fn write(script: &Script, dir: &Path) -> (PathBuf, u64) {
    let storage = dir.join("storage");
    let session = storage.join("session").join(PROJECT).join(format!("{SESSION}.json"));
    let mut bytes = put(
        &session,
        &serde_json::to_string_pretty(&json!({"id": SESSION, "version": "0.15.8", "projectID": PROJECT,
            "directory": "/home/u/src/app", "title": "A session",
            "time": {"created": 1_760_000_000_000u64, "updated": 1_760_000_090_000u64}}))
        .unwrap(),
    );
    let (mut message_n, mut part_n) = (0usize, 0usize);
    let mut write_message = |message: Value, parts: Vec<Value>, bytes: &mut u64| {
        let id = format!("msg_{message_n:012x}ABCDEFGHIJKLMNOP");
        message_n += 1;
        let mut message = message;
        message["id"] = id.clone().into();
        message["sessionID"] = SESSION.into();
        message["time"] = json!({"created": 1_760_000_000_000u64 + message_n as u64 * 1000});
        let file = storage.join("message").join(SESSION).join(format!("{id}.json"));
        *bytes += put(&file, &serde_json::to_string_pretty(&message).unwrap());
        for mut part in parts {
            let part_id = format!("prt_{part_n:012x}ABCDEFGHIJKLMN");
            part_n += 1;
            part["id"] = part_id.clone().into();
            part["sessionID"] = SESSION.into();
            part["messageID"] = id.clone().into();
            let file = storage.join("part").join(&id).join(format!("{part_id}.json"));
            *bytes += put(&file, &serde_json::to_string_pretty(&part).unwrap());
        }
    };
    let model = json!({"providerID": "anthropic", "modelID": "claude-sonnet-4-5"});
    for (turn, first, step) in script.each_step() {
        if first {
            let user = json!({"role": "user", "agent": "build", "model": model});
            write_message(user, vec![json!({"type": "text", "text": script.turns[turn].user})], &mut bytes);
        }
        let tokens = json!({"input": 3, "output": 120, "reasoning": 0,
            "cache": {"read": step.prompt_tokens.saturating_sub(403), "write": 400}});
        let mut parts = vec![json!({"type": "step-start", "snapshot": "a1b2"})];
        if let Some(t) = &step.thinking {
            parts.push(json!({"type": "reasoning", "text": t, "time": {"start": 1, "end": 2}}));
        }
        if let Some(t) = &step.text {
            parts.push(json!({"type": "text", "text": t, "time": {"start": 2, "end": 3}}));
        }
        let finish = if step.call.is_some() { "tool-calls" } else { "stop" };
        if let Some(c) = &step.call {
            let state = if c.is_error {
                json!({"status": "error", "input": arguments(c), "error": c.output, "time": {"start": 3, "end": 4}})
            } else {
                json!({"status": "completed", "input": arguments(c), "output": c.output, "title": c.name,
                    "metadata": {}, "time": {"start": 3, "end": 4}})
            };
            parts.push(json!({"type": "tool", "callID": c.id, "tool": c.name, "state": state}));
        }
        parts.push(json!({"type": "step-finish", "reason": finish, "cost": 0.0123, "tokens": tokens}));
        let assistant = json!({"role": "assistant", "modelID": "claude-sonnet-4-5", "providerID": "anthropic",
            "mode": "build", "path": {"cwd": "/home/u/src/app", "root": "/home/u/src/app"},
            "cost": 0.0123, "tokens": tokens, "finish": finish});
        write_message(assistant, parts, &mut bytes);
    }
    (session, bytes)
}
