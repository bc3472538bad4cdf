//! The script as aider's `.aider.llm.history`: per request a `TO LLM <time>` block holding the
//! whole history it sent (`-------`-separated messages, each line prefixed by its role), then
//! `LLM RESPONSE <time>` and the reply. aider has no tool calls: a call is written as the reply's
//! text and its output as the next user message, as aider sends files and command output.

use std::path::{Path, PathBuf};

use super::{Script, put, time};

const SYSTEM: &str = "Act as an expert software developer.\nAlways use best practices when coding.\nRespect and use existing conventions, libraries, etc that are already present in the code base.";

/// A message: its role's prefix on every line.
fn message(out: &mut String, role: &str, text: &str) {
    for line in text.split('\n') {
        out.push_str(role);
        out.push(' ');
        out.push_str(line);
        out.push('\n');
    }
}

pub fn write(script: &Script, dir: &Path) -> (PathBuf, u64) {
    let mut history: Vec<(&str, String)> = vec![("SYSTEM", SYSTEM.to_owned())];
    let mut out = String::new();
    for (n, (turn, first, step)) in script.each_step().enumerate() {
        if first {
            history.push(("USER", script.turns[turn].user.clone()));
        }
        out.push_str(&format!("TO LLM {}\n", &time(2 * n)[..19]));
        for (role, text) in &history {
            out.push_str("-------\n");
            message(&mut out, role, text);
        }
        let mut reply: Vec<&str> = Vec::new();
        reply.extend(step.thinking.as_deref());
        reply.extend(step.text.as_deref());
        let call = step.call.as_ref().map(|c| format!("{} {}", c.name, c.arguments));
        reply.extend(call.as_deref());
        let reply = reply.join("\n\n");
        out.push_str(&format!("LLM RESPONSE {}\n", &time(2 * n + 1)[..19]));
        message(&mut out, "ASSISTANT", &reply);
        history.push(("ASSISTANT", reply));
        if let Some(c) = &step.call {
            history.push(("USER", c.output.clone()));
        }
    }
    let path = dir.join(".aider.llm.history");
    let bytes = put(&path, &out);
    (path, bytes)
}
