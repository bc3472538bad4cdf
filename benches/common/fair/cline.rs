//! The script as a Cline task folder: `api_conversation_history.json` (Anthropic Messages; native
//! `tool_use` calls, each result sent back as a user text block `[<tool> for '<arg>'] Result:`
//! followed by the output, every user message closed by an `<environment_details>` block) and
//! `ui_messages.json` (per request an `api_req_started` entry whose `text` is JSON holding the
//! request's user content as Cline renders it and its usage, `conversationHistoryIndex` + 2 being
//! the assistant message it produced; the assistant's text and each tool use as panel entries).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Call, Script, arguments, put};

const ENVIRONMENT: &str = "<environment_details>\n# VSCode Visible Files\nsrc/lib.rs\n\n# VSCode Open Tabs\nsrc/lib.rs\n\n# Current Time\n1/7/2026, 10:00:00 AM (UTC, UTC+0:00)\n\n# Current Mode\nACT MODE\n</environment_details>";

/// The `for '<arg>'` of a result header: the call's first string argument, first line, cut short.
fn header(call: &Call) -> String {
    let args = arguments(call);
    let arg = args.as_object().and_then(|o| o.values().find_map(Value::as_str)).unwrap_or("");
    let arg: String = arg.lines().next().unwrap_or("").chars().take(50).collect();
    format!("[{} for '{arg}'] Result:", call.name)
}

pub fn write(script: &Script, dir: &Path) -> (PathBuf, u64) {
    let (mut history, mut ui): (Vec<Value>, Vec<Value>) = (Vec::new(), Vec::new());
    let mut pending: Option<&Call> = None; // a call whose result the next user message sends
    let mut ts = 1_767_780_000_000u64;
    for (n, (turn, first, step)) in script.each_step().enumerate() {
        // The result, then the feedback that ends it, then what the person typed; or what the
        // person typed, then the feedback.
        let mut blocks: Vec<String> = Vec::new();
        let result = pending.take().map(|c| format!("{}\n{}", header(c), c.output));
        let user = first.then(|| {
            let user = &script.turns[turn].user;
            if n == 0 { format!("<task>\n{user}\n</task>") } else { user.clone() }
        });
        match result {
            Some(r) => blocks.extend([Some(r), Some(ENVIRONMENT.to_owned()), user].into_iter().flatten()),
            None => blocks.extend([user, Some(ENVIRONMENT.to_owned())].into_iter().flatten()),
        }
        let request = blocks.join("\n\n");
        let content: Vec<Value> = blocks.iter().map(|t| json!({"type": "text", "text": t})).collect();
        history.push(json!({"role": "user", "content": content}));
        ts += 1000;
        let usage = json!({
            "request": request,
            "tokensIn": 3,
            "tokensOut": 120,
            "cacheWrites": 400,
            "cacheReads": step.prompt_tokens.saturating_sub(403),
            "cost": 0.0123
        });
        let index = history.len() as i64 - 2; // the assistant message comes next, at index + 2
        ui.push(json!({"ts": ts, "type": "say", "say": "api_req_started", "text": usage.to_string(), "conversationHistoryIndex": index}));
        let mut content = Vec::new();
        if let Some(t) = &step.thinking {
            content.push(json!({"type": "thinking", "thinking": t, "signature": "EpcBCkYIBxgCKkB"}));
        }
        if let Some(t) = &step.text {
            content.push(json!({"type": "text", "text": t}));
            ui.push(json!({"ts": ts + 1, "type": "say", "say": "text", "text": t, "partial": false, "conversationHistoryIndex": index + 1}));
        }
        if let Some(c) = &step.call {
            content.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": arguments(c)}));
            let mut tool = arguments(c);
            tool["tool"] = c.name.clone().into();
            ui.push(json!({"ts": ts + 2, "type": "ask", "ask": "tool", "text": tool.to_string(), "partial": false, "conversationHistoryIndex": index + 1}));
            pending = Some(c);
        }
        history.push(json!({"role": "assistant", "content": content}));
    }
    if let Some(c) = pending {
        history.push(json!({"role": "user", "content": [
            {"type": "text", "text": format!("{}\n{}", header(c), c.output)},
            {"type": "text", "text": ENVIRONMENT}
        ]}));
    }
    let path = dir.join("task/api_conversation_history.json");
    let bytes = put(&path, &Value::from(history).to_string())
        + put(&dir.join("task/ui_messages.json"), &Value::from(ui).to_string());
    (path, bytes)
}
