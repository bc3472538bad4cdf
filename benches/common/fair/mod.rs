//! One real conversation written in every format `import-formats` compares (`benches/import.rs`),
//! so that each importer is timed on the same content: the same user texts, assistant texts,
//! reasoning, tool calls and tool outputs, at the sizes they were recorded. The conversation is
//! taken from a real Claude Code session of the shared corpus, read by `ctxbudget` itself
//! ([`Script::from_conversation`]), and each writer (one file per format beside this one) lays it
//! out as that format's files do (`docs/formats.md`, the fixtures in `tests/fixtures/<format>/`).
//!
//! Every writer gives one request per [`Step`] and one tool result per call (aider, which has no
//! tool calls, sends each output as user text: no tool result), which
//! `tests/it/fair_inputs.rs` checks by importing each written input.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use ctxbudget::model::{Conversation, Item};

mod aider;
mod claude_code;
mod cline;
mod codex_exec;
mod codex_legacy;
mod inspect_eval;
mod opencode;

/// A tool call and what it returned.
#[derive(Debug, Clone)]
pub struct Call {
    /// The id linking call and result.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON object text.
    pub arguments: String,
    /// The tool's output.
    pub output: String,
    /// The tool reported an error.
    pub is_error: bool,
}

/// One model call: its reasoning, its text and at most one tool call (one call per step, so that
/// formats that infer requests from the order of items, `codex exec --json`, count the same).
#[derive(Debug, Clone, Default)]
pub struct Step {
    /// Reasoning text, when the call returned some.
    pub thinking: Option<String>,
    /// Assistant text, when the call returned some.
    pub text: Option<String>,
    /// The tool call it made, with its result.
    pub call: Option<Call>,
    /// A plausible recorded prompt size: the conversation's bytes before it, over 4.
    pub prompt_tokens: u64,
}

/// A human message and the model calls that answered it.
#[derive(Debug, Clone)]
pub struct Turn {
    /// What the person typed.
    pub user: String,
    /// The model calls of the turn, in order.
    pub steps: Vec<Step>,
}

/// A conversation as a list of turns.
#[derive(Debug, Clone)]
pub struct Script {
    /// The turns, in order.
    pub turns: Vec<Turn>,
}

/// One written input: the format that reads it, the file given to `input::load`, its bytes
/// (for the `.eval` zip, its entries' bytes inflated: the JSON the importer parses).
pub struct Input {
    pub format: &'static str,
    pub path: PathBuf,
    pub bytes: u64,
}

impl Script {
    /// The conversation's human turns, model calls and tool calls with their results, in order.
    /// Harness text (`meta` user items), system text and compactions are left out; a model call
    /// with several tool calls becomes one step per call; a step with neither a call nor a human
    /// message after it is merged into the next; calls without a result are left out.
    pub fn from_conversation(c: &Conversation) -> Script {
        let mut turns: Vec<Turn> = Vec::new();
        let mut step = Step::default();
        let mut fresh = true; // a request boundary came: the next output opens a step
        let flush = |turns: &mut Vec<Turn>, step: &mut Step| {
            let s = std::mem::take(step);
            if s.thinking.is_some() || s.text.is_some() || s.call.is_some() {
                if let Some(t) = turns.last_mut() {
                    t.steps.push(s);
                }
            }
        };
        for item in &c.items {
            match item {
                Item::User { text, meta: false, .. } => {
                    flush(&mut turns, &mut step);
                    match turns.last_mut() {
                        Some(t) if t.steps.is_empty() => {
                            t.user.push_str("\n\n");
                            t.user.push_str(text);
                        }
                        _ => turns.push(Turn { user: text.clone(), steps: Vec::new() }),
                    }
                }
                Item::Request(_) => fresh = true,
                Item::Thinking { text } | Item::Assistant { text } if !turns.is_empty() => {
                    if fresh || step.call.is_some() {
                        flush(&mut turns, &mut step);
                        fresh = false;
                    }
                    let slot = if matches!(item, Item::Thinking { .. }) {
                        &mut step.thinking
                    } else {
                        &mut step.text
                    };
                    append(slot, text);
                }
                Item::ToolCall { call_id, name, arguments } if !turns.is_empty() => {
                    if fresh || step.call.is_some() {
                        flush(&mut turns, &mut step);
                        fresh = false;
                    }
                    step.call = Some(Call {
                        id: call_id.clone(),
                        name: name.clone(),
                        arguments: arguments.clone(),
                        output: String::new(),
                        is_error: false,
                    });
                }
                Item::ToolResult(r) => {
                    let output = r.output.full_text().into_owned();
                    let open =
                        turns.last_mut().into_iter().flat_map(|t| t.steps.iter_mut()).chain([&mut step]);
                    for s in open {
                        if let Some(call) = s.call.as_mut().filter(|k| k.id == r.call_id) {
                            call.output = output.clone();
                            call.is_error = r.is_error;
                        }
                    }
                }
                _ => {}
            }
        }
        flush(&mut turns, &mut step);
        let mut script = Script { turns };
        script.tidy();
        script
    }

    /// Leaves out calls without a result and merges a step without a call into the next step of
    /// its turn; then sets each step's recorded prompt size.
    fn tidy(&mut self) {
        for turn in &mut self.turns {
            let mut steps: Vec<Step> = Vec::new();
            for mut s in std::mem::take(&mut turn.steps) {
                if s.call.as_ref().is_some_and(|c| c.output.is_empty()) {
                    s.call = None;
                }
                match steps.last_mut() {
                    Some(last) if last.call.is_none() => {
                        let mut merged = std::mem::take(last);
                        for (slot, text) in [(&mut merged.thinking, s.thinking), (&mut merged.text, s.text)] {
                            if let Some(t) = text {
                                append(slot, &t);
                            }
                        }
                        merged.call = s.call;
                        *last = merged;
                    }
                    _ => {
                        if s.thinking.is_some() || s.text.is_some() || s.call.is_some() {
                            steps.push(s);
                        }
                    }
                }
            }
            turn.steps = steps;
        }
        self.turns.retain(|t| !t.steps.is_empty());
        let mut bytes = 0u64;
        for turn in &mut self.turns {
            bytes += turn.user.len() as u64;
            for s in &mut turn.steps {
                s.prompt_tokens = 1000 + bytes / 4;
                for t in [&s.thinking, &s.text].into_iter().flatten() {
                    bytes += t.len() as u64;
                }
                if let Some(c) = &s.call {
                    bytes += (c.arguments.len() + c.output.len()) as u64;
                }
            }
        }
    }

    /// Model calls in all.
    pub fn steps(&self) -> usize {
        self.turns.iter().map(|t| t.steps.len()).sum()
    }

    /// Tool calls (each with its result) in all.
    pub fn calls(&self) -> usize {
        self.turns.iter().flat_map(|t| &t.steps).filter(|s| s.call.is_some()).count()
    }

    /// Every step in order, with its turn's index and whether it is its turn's first.
    pub fn each_step(&self) -> impl Iterator<Item = (usize, bool, &Step)> {
        self.turns
            .iter()
            .enumerate()
            .flat_map(|(t, turn)| turn.steps.iter().enumerate().map(move |(i, s)| (t, i == 0, s)))
    }
}

fn append(slot: &mut Option<String>, text: &str) {
    match slot {
        Some(s) => {
            s.push_str("\n\n");
            s.push_str(text);
        }
        None => *slot = Some(text.to_owned()),
    }
}

/// A writer: lays the script out under a folder and returns the path to import and the bytes
/// written.
pub type Writer = fn(&Script, &Path) -> (PathBuf, u64);

/// The formats `import-formats` compares, each with its writer.
pub const WRITERS: [(&str, Writer); 7] = [
    ("claude-code", claude_code::write),
    ("cline", cline::write),
    ("aider", aider::write),
    ("codex-exec", codex_exec::write),
    ("codex-legacy", codex_legacy::write),
    ("inspect-eval", inspect_eval::write),
    ("opencode", opencode::write),
];

/// Writes the script in every format under `dir` (each in a folder named after its format).
pub fn write_all(script: &Script, dir: &Path) -> Vec<Input> {
    WRITERS
        .iter()
        .map(|(format, write)| {
            let (path, bytes) = write(script, &dir.join(format));
            Input { format, path, bytes }
        })
        .collect()
}

/// The conversation the comparison is made on: the main conversation of the corpus's largest
/// Claude Code session (`claude-code/codemie-code/session-624a4a58.jsonl`, 2.6 MB).
pub fn corpus_script(corpus: &Path) -> Script {
    let source = corpus.join("claude-code/codemie-code/session-624a4a58.jsonl");
    let trace = ctxbudget::input::load(&source, None).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let main = trace.conversations.iter().find(|c| c.id == "main").expect("the session's main conversation");
    Script::from_conversation(main)
}

/// Writes `text` at `path`, creating its folder; returns its bytes.
pub fn put(path: &Path, text: &str) -> u64 {
    std::fs::create_dir_all(path.parent().expect("a file in a folder")).expect("a writable folder");
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.len() as u64
}

/// An RFC 3339 time `seconds` after the conversation's start.
pub fn time(seconds: usize) -> String {
    format!("2026-01-07T{:02}:{:02}:{:02}.000Z", 10 + seconds / 3600, seconds / 60 % 60, seconds % 60)
}

/// The call's arguments as a JSON value (an object; text that is not JSON becomes `{"input": …}`).
pub fn arguments(call: &Call) -> serde_json::Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| serde_json::json!({ "input": call.arguments }))
}
