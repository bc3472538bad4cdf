//! The script as an Inspect AI `.eval` log (version 3), one sample: a zip of `header.json` and
//! `samples/1_epoch_1.json`, deflated as Inspect writes them. The sample holds the final
//! `messages`, each message once in `message_pool`, one `model` event per call whose `input_refs`
//! range over the pool and whose `output` is the call's assistant message with its usage, and
//! every text over 100 characters once in `attachments` (`attachment://<key>` where it is used),
//! as Inspect condenses a sample.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{Script, arguments};

const MODEL: &str = "anthropic/claude-sonnet-4-5";

/// Texts over 100 characters, each stored once and referred to by key.
#[derive(Default)]
struct Attachments(Map<String, Value>);

impl Attachments {
    fn text(&mut self, text: &str) -> Value {
        if text.len() <= 100 {
            return text.into();
        }
        let key = format!("{:032x}", self.0.len() + 1);
        self.0.insert(key.clone(), text.into());
        format!("attachment://{key}").into()
    }
}

pub fn write(script: &Script, dir: &Path) -> (PathBuf, u64) {
    let mut a = Attachments::default();
    let (mut pool, mut events): (Vec<Value>, Vec<Value>) = (Vec::new(), Vec::new());
    let mut id = 0;
    let mut next_id = || {
        id += 1;
        format!("m{id:021}")
    };
    for (n, (turn, first, step)) in script.each_step().enumerate() {
        if first {
            let source = if n == 0 { json!("input") } else { Value::Null };
            let user = a.text(&script.turns[turn].user);
            pool.push(json!({"id": next_id(), "content": user, "source": source, "role": "user"}));
        }
        let mut content = Vec::new();
        if let Some(t) = &step.thinking {
            content.push(json!({"type": "reasoning", "reasoning": a.text(t), "redacted": false}));
        }
        if let Some(t) = &step.text {
            content.push(json!({"type": "text", "text": a.text(t)}));
        }
        let mut assistant = json!({"id": next_id(), "content": content, "source": "generate", "role": "assistant", "model": MODEL});
        if let Some(c) = &step.call {
            assistant["tool_calls"] =
                json!([{"id": c.id, "function": c.name, "arguments": arguments(c), "type": "function"}]);
        }
        let usage = json!({"input_tokens": 3, "output_tokens": 120, "total_tokens": step.prompt_tokens + 120,
            "input_tokens_cache_write": 400, "input_tokens_cache_read": step.prompt_tokens.saturating_sub(403)});
        events.push(json!({
            "event": "model", "timestamp": super::time(n), "model": MODEL, "input": [],
            "input_refs": [[0, pool.len()]], "tools": [], "tool_choice": "auto", "config": {},
            "output": {"model": MODEL, "choices": [{"message": assistant, "stop_reason": "tool_calls"}],
                "usage": usage, "time": 2.5},
            "working_start": n as f64
        }));
        pool.push(assistant);
        if let Some(c) = &step.call {
            let output = a.text(&c.output);
            pool.push(json!({"id": next_id(), "content": output, "role": "tool", "tool_call_id": c.id, "function": c.name}));
        }
    }
    let sample = json!({
        "id": 1, "epoch": 1, "input": a.text(&script.turns[0].user), "target": "",
        "messages": pool, "message_pool": pool, "events": events, "attachments": a.0,
        "output": {"model": MODEL, "choices": []}, "scores": {}, "metadata": {}, "store": {},
        "model_usage": {}, "total_time": 100.0, "working_time": 90.0, "uuid": "QtcjVqnkhuN9PDmPrhkyUa"
    });
    let header = json!({"version": 3, "status": "success",
        "eval": {"task": "fair", "task_id": "FhdYWFJ77GkBBV8uKGRTuQ", "created": "2026-01-07T10:00:00+00:00",
            "model": MODEL, "dataset": {"samples": 1}, "config": {}},
        "plan": {"steps": []}, "results": {}, "stats": {}});
    let path = dir.join("log.eval");
    std::fs::create_dir_all(dir).expect("a writable folder");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).expect("a writable folder"));
    let mut bytes = 0;
    for (name, value) in [("header.json", header), ("samples/1_epoch_1.json", sample)] {
        let text = value.to_string();
        zip.start_file(name, zip::write::SimpleFileOptions::default()).expect("a zip entry");
        zip.write_all(text.as_bytes()).expect("a zip entry");
        bytes += text.len() as u64;
    }
    zip.finish().expect("a finished zip");
    (path, bytes)
}
