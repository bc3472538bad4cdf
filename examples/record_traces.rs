//! Regenerates the bundled `traces/`: sessions in the native format assembled from real commands
//! run on this repository (file reads, searches, a build and a test run).
//!
//! The user and assistant turns are scripted; every tool output is the real output of the command
//! shown in the tool call, captured when this program runs, and every request carries the time it
//! was recorded. Run from the repository root:
//!
//! ```sh
//! cargo build --release && cargo run --release --example record_traces
//! ```
//!
//! It writes `traces/*.jsonl` and nothing else. Outputs change when the code changes, which is the
//! point: the traces are a real snapshot, and tests that read them compute their expectations from
//! the files rather than hard-coding them.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use ctxbudget::format::native;
use ctxbudget::model::{Conversation, Item, Output, Request, ToolResult};

const SYSTEM: &str = "You are a coding agent working in the ctxbudget repository (Rust). \
Use the tools to inspect the code before answering. Tools: list_dir(path), read_file(path), \
grep(pattern, path), bash(command). Keep answers short and cite file paths.";

/// A session being recorded.
struct Session {
    conversations: Vec<Conversation>,
    next_call: usize,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Runs `program args` in the repository and returns stdout followed by stderr, as a tool would.
fn run(program: &str, args: &[&str]) -> String {
    match Command::new(program).args(args).output() {
        Ok(out) => {
            let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&out.stderr));
            if !out.status.success() {
                text.push_str(&format!("\n[exit status: {}]\n", out.status.code().unwrap_or(-1)));
            }
            text
        }
        Err(e) => format!("error: cannot run {program}: {e}"),
    }
}

impl Session {
    fn new(id: &str) -> Self {
        let mut c = Conversation::new(id);
        c.items.push(Item::System { text: SYSTEM.into() });
        Session { conversations: vec![c], next_call: 1 }
    }

    fn items(&mut self) -> &mut Vec<Item> {
        &mut self.conversations.last_mut().expect("a session has a conversation").items
    }

    fn subagent(&mut self, id: &str, task: &str) {
        let mut c = Conversation::new(id);
        c.items.push(Item::System { text: SYSTEM.into() });
        c.items.push(Item::User { text: task.into(), meta: false, images: 0 });
        self.conversations.push(c);
    }

    fn user(&mut self, text: &str) {
        self.items().push(Item::User { text: text.into(), meta: false, images: 0 });
    }

    fn request(&mut self) {
        self.items().push(Item::Request(Request {
            id: None,
            timestamp: Some(now_ms()),
            usage: None,
            model: None,
        }));
    }

    /// One model step: a request, the assistant's text, then a tool call and its real output.
    fn step(&mut self, say: &str, tool: &str, arguments: serde_json::Value, output: Output) {
        self.request();
        if !say.is_empty() {
            self.items().push(Item::Assistant { text: say.into() });
        }
        let call_id = format!("call_{:03}", self.next_call);
        self.next_call += 1;
        self.items().push(Item::ToolCall {
            call_id: call_id.clone(),
            name: tool.into(),
            arguments: arguments.to_string(),
        });
        self.items().push(Item::ToolResult(ToolResult {
            call_id,
            name: Some(tool.into()),
            output,
            is_error: false,
            images: 0,
        }));
    }

    fn answer(&mut self, text: &str) {
        self.request();
        self.items().push(Item::Assistant { text: text.into() });
    }

    fn write(&self, path: &Path) {
        let mut out = Vec::new();
        native::write(&self.conversations, &mut out).expect("writing to memory cannot fail");
        std::fs::write(path, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        println!("wrote {}", path.display());
    }
}

fn raw(output: String) -> Output {
    Output::Raw { output }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("error: cannot read {path}: {e}"))
}

/// The seed's tools may write their own summary: `read_file: PATH — N lines`.
fn read_presplit(path: &str) -> Output {
    let text = read(path);
    Output::Split {
        summary: format!("read_file: {path} — {} lines", text.lines().count()),
        content: Some(text),
    }
}

fn explore_split() -> Session {
    let mut s = Session::new("main");
    s.user("How does ctxbudget decide whether a tool output is split into summary and content? Point me at the code.");
    s.step(
        "I'll look at the source tree first.",
        "list_dir",
        serde_json::json!({"path": "src"}),
        raw(run("ls", &["-la", "src"])),
    );
    s.step(
        "",
        "grep",
        serde_json::json!({"pattern": "fn from_output", "path": "src"}),
        raw(run("grep", &["-rn", "fn from_output", "src"])),
    );
    s.step(
        "The split lives in src/split.rs.",
        "read_file",
        serde_json::json!({"path": "src/split.rs"}),
        raw(read("src/split.rs")),
    );
    s.step(
        "Let me check where the threshold is applied during a replay.",
        "grep",
        serde_json::json!({"pattern": "split_at", "path": "src"}),
        raw(run("grep", &["-rn", "split_at", "src"])),
    );
    s.answer(
        "`ToolOutput::from_output` in src/split.rs reproduces the seed's `From<String>`: outputs of at most \
         `threshold` UTF-8 bytes stay whole as the summary; longer ones get `\"{lines} lines | {first 80 chars}…\"` \
         as summary and the whole output as content. `MeasuredResult::split_at` in src/measure.rs applies it per threshold.",
    );
    s.user("Run the split unit tests.");
    s.step(
        "",
        "bash",
        serde_json::json!({"command": "cargo test --release --lib split::"}),
        raw(run("cargo", &["test", "--release", "--lib", "split::"])),
    );
    s.answer("All split tests pass.");
    s
}

fn build_and_test() -> Session {
    let mut s = Session::new("main");
    s.user("Build the project, run the library tests and tell me how the replay measures the cached prefix.");
    s.step(
        "Building first.",
        "bash",
        serde_json::json!({"command": "cargo build --release"}),
        raw(run("cargo", &["build", "--release"])),
    );
    s.step(
        "",
        "bash",
        serde_json::json!({"command": "cargo test --release --lib"}),
        raw(run("cargo", &["test", "--release", "--lib"])),
    );
    s.step(
        "Tests pass. Now the prefix computation.",
        "grep",
        serde_json::json!({"pattern": "shared_prefix", "path": "src"}),
        raw(run("grep", &["-rn", "shared_prefix", "src"])),
    );
    s.step(
        "",
        "read_file",
        serde_json::json!({"path": "src/replay/prefix.rs"}),
        raw(read("src/replay/prefix.rs")),
    );
    s.answer(
        "The engine keeps a Fenwick tree over item positions (two slots per item: head and tail), so the prefix \
         shared with the previous request is a prefix sum up to the first edited position.",
    );
    s.user("Which policies exist, and how is `keep-turns` implemented?");
    s.step("", "list_dir", serde_json::json!({"path": "src/policy"}), raw(run("ls", &["-la", "src/policy"])));
    s.step(
        "",
        "read_file",
        serde_json::json!({"path": "src/policy/keep_turns.rs"}),
        raw(read("src/policy/keep_turns.rs")),
    );
    s.step(
        "",
        "bash",
        serde_json::json!({"command": "./target/release/ctxbudget policies"}),
        raw(run("./target/release/ctxbudget", &["policies"])),
    );
    s.answer("`keep-turns:n=N` prunes a content once N requests have sent it; a cursor keeps it linear.");
    s.user("Show me the recent history of the repository.");
    s.step(
        "",
        "bash",
        serde_json::json!({"command": "git log --stat -n 5"}),
        raw(run("git", &["log", "--stat", "-n", "5"])),
    );
    s.answer("Those are the latest commits.");
    s.subagent("agent-review", "Review src/tokens.rs for panics on user input and report in two lines.");
    s.step("", "read_file", serde_json::json!({"path": "src/tokens.rs"}), raw(read("src/tokens.rs")));
    s.step(
        "",
        "grep",
        serde_json::json!({"pattern": "unwrap|expect|panic", "path": "src/tokens.rs"}),
        raw(run("grep", &["-nE", "unwrap|expect|panic", "src/tokens.rs"])),
    );
    s.answer("tiktoken-rs's panic on huge whitespace runs is routed to bpe-openai; the only other panic is in tests.");
    s
}

fn non_ascii_review() -> Session {
    let mut s = Session::new("main");
    s.user("シードの設計で、非ASCIIのツール出力はどう扱われますか？ 閾値はバイトで数えますか？");
    s.step(
        "非ASCII文字を含む行を探します。",
        "grep",
        serde_json::json!({"pattern": "[^ -~]", "path": "src"}),
        raw(run("grep", &["-rnP", "[^\\x00-\\x7F]", "src"])),
    );
    s.step("", "read_file", serde_json::json!({"path": "src/model.rs"}), read_presplit("src/model.rs"));
    s.step("", "read_file", serde_json::json!({"path": "src/tokens.rs"}), read_presplit("src/tokens.rs"));
    s.step(
        "",
        "bash",
        serde_json::json!({"command": "printf '日本語のログ行\\n' | ctxbudget count"}),
        raw(run("sh", &["-c", "printf '日本語のログ行です。閾値はバイト数で比較されます。\\n' | ./target/release/ctxbudget count"])),
    );
    s.answer(
        "閾値はUTF-8のバイト数で比較されます（`s.len()`）。要約の先頭行は80文字（char）で切られ、末尾に `…` が付きます。\
         日本語は1文字3バイトなので、len/4 の見積もりは o200k ではほぼ正確ですが、cl100k では過小評価になります。",
    );
    s
}

fn main() {
    if !Path::new("Cargo.toml").is_file() || !Path::new("src/split.rs").is_file() {
        eprintln!("run this from the repository root");
        std::process::exit(2);
    }
    std::fs::create_dir_all("traces").expect("cannot create traces/");
    explore_split().write(Path::new("traces/explore-split.jsonl"));
    build_and_test().write(Path::new("traces/build-and-test.jsonl"));
    non_ascii_review().write(Path::new("traces/non-ascii-review.jsonl"));
}
