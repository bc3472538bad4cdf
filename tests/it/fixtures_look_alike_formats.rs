//! Detection never reads a file silently wrong (`src/format/look_alike.rs`): a file another format
//! reads with no tool result, whose user text carries a known agent's tool-result marks, gets one
//! warning naming that format and its `--input-format`; a file no format reads but whose first
//! line carries a known agent's record keys, or whose text carries a format's marks, is named in
//! the error. One test per signature, built from the project's fixtures; and no such warning on
//! any fixture or corpus file read with detection.

use crate::common;

use std::path::{Path, PathBuf};

use ctxbudget::error::TraceError;
use ctxbudget::format;
use ctxbudget::input;
use ctxbudget::model::Trace;
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    common::root().join("tests/fixtures").join(name)
}

fn load_as(path: &Path, name: &str) -> Trace {
    input::load(path, Some(format::by_name(name).unwrap())).unwrap()
}

/// Whether a warning or error is one of the look-alike messages.
fn is_look_alike(message: &str) -> bool {
    ["with no tool result, but", "its text looks like", "carries the keys of"]
        .iter()
        .any(|m| message.contains(m))
}

/// The one look-alike warning of `trace`, checked to name `--input-format name`.
fn look_alike_naming(trace: &Trace, name: &str) -> String {
    let found: Vec<&String> = trace.warnings.iter().filter(|w| is_look_alike(w)).collect();
    assert_eq!(found.len(), 1, "{:?}", trace.warnings);
    assert!(found[0].contains(&format!("`--input-format {name}`")), "{}", found[0]);
    found[0].clone()
}

/// `messages` written as an OpenAI chat message array in a temporary folder, and read with
/// detection: what a user's own export of a text-protocol agent's messages would be.
fn read_as_chat(messages: &Value) -> Trace {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("messages.json");
    std::fs::write(&path, serde_json::to_vec_pretty(messages).unwrap()).unwrap();
    let trace = input::load(&path, None).unwrap();
    assert_eq!(trace.format, "openai-chat");
    assert_eq!(trace.conversations.iter().map(|c| c.tool_results()).sum::<usize>(), 0);
    trace
}

/// The error a file gets when no format recognises it.
fn unrecognised(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let e = input::load(&path, None).unwrap_err();
    assert!(matches!(e, TraceError::Unrecognised { .. }), "{e}");
    e.to_string()
}

#[test]
fn a_mini_swe_agent_message_list_read_as_openai_chat_names_mini_swe_agent() {
    let path = fixture("mini-swe-agent/bare-list.traj.json");
    let trace = load_as(&path, "openai-chat");
    assert!(trace.conversations[0].requests() > 0, "read, but with no tool result");
    let w = look_alike_naming(&trace, "mini-swe-agent");
    assert!(w.contains("tool results of mini-swe-agent (`<returncode>0</returncode>`)"), "{w}");
    // Read as what it is, there is nothing to warn about.
    assert!(load_as(&path, "mini-swe-agent").warnings.iter().all(|w| !is_look_alike(w)));
}

#[test]
fn a_swe_agent_history_exported_as_chat_messages_names_swe_agent() {
    let traj: Value =
        serde_json::from_slice(&std::fs::read(fixture("swe-agent/v0-text-actions.traj")).unwrap()).unwrap();
    // The `history` as bare chat messages (its `agent`, `thought`, `action` keys dropped).
    let messages: Vec<Value> = traj["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!({"role": m["role"], "content": m["content"]}))
        .collect();
    // SWE-agent's state lines, counted straight from the fixture: `(Open file: …)` and
    // `(Current directory: …)` after each observation.
    let state_lines = messages
        .iter()
        .flat_map(|m| m["content"].as_str().unwrap().lines())
        .filter(|l| l.starts_with("(Open file: ") || l.starts_with("(Current directory: "))
        .count();
    assert!(state_lines >= 2, "{state_lines}");
    let w = look_alike_naming(&read_as_chat(&Value::Array(messages)), "swe-agent");
    let expected = format!("but {state_lines} line(s) of its user text look like observations of SWE-agent");
    assert!(w.contains(&expected), "{w}");
}

#[test]
fn openhands_results_sent_without_function_calling_name_openhands() {
    // OpenHands' non-function-calling prompt: a tool's result is a user message headed
    // `EXECUTION RESULT of [<tool>]:`.
    let messages = json!([
        {"role": "system", "content": "You are OpenHands agent."},
        {"role": "user", "content": "Fix the test."},
        {"role": "assistant", "content": "<function=execute_bash>\n<parameter=command>pytest</parameter>\n</function>"},
        {"role": "user", "content": "EXECUTION RESULT of [execute_bash]:\n1 failed\n[Command finished with exit code 1]"},
        {"role": "assistant", "content": "The test fails."}
    ]);
    let w = look_alike_naming(&read_as_chat(&messages), "openhands");
    assert!(w.contains("1 line(s) of its user text look like tool results of OpenHands"), "{w}");
}

#[test]
fn a_cline_history_read_as_openai_chat_names_cline() {
    let trace = load_as(&fixture("cline/task/api_conversation_history.json"), "openai-chat");
    let w = look_alike_naming(&trace, "cline");
    assert!(w.contains("4 line(s)") && w.contains("Cline, Roo Code and Kilo Code"), "{w}");
}

#[test]
fn an_aider_chat_history_cut_above_its_first_run_names_aider_chat() {
    let text = std::fs::read_to_string(fixture("aider-chat/.aider.chat.history.md")).unwrap();
    let tokens_lines = text.lines().filter(|l| l.starts_with("> Tokens: ")).count();
    // Without the `# aider chat started at` line that detection looks for.
    let cut = text.split_once('\n').unwrap().1;
    let e = unrecognised("chat.md", cut);
    assert!(
        e.contains(&format!("its text looks like the chat history aider writes ({tokens_lines} line(s)")),
        "{e}"
    );
    assert!(e.contains("`--input-format aider-chat`"), "{e}");
}

#[test]
fn a_codex_rollout_of_an_unknown_layout_names_codex() {
    let text = std::fs::read_to_string(fixture("codex/rollout-0.40.jsonl")).unwrap();
    let renamed = text.replacen("\"type\":\"session_meta\"", "\"type\":\"session_header\"", 1);
    let e = unrecognised("rollout.jsonl", &renamed);
    assert!(e.contains("the keys of a Codex CLI rollout line (`timestamp`, `type`, `payload`)"), "{e}");
    assert!(e.contains("type `session_header`") && e.contains("`--input-format codex`"), "{e}");
    // Doing what it says reads the rest, and counts the record it does not know.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rollout.jsonl");
    std::fs::write(&path, &renamed).unwrap();
    let trace = load_as(&path, "codex");
    assert!(trace.conversations[0].tool_results() > 0);
    assert!(
        trace.warnings.iter().any(|w| w == "1 line(s) of record type `session_header` not replayed: a Codex rollout layout this build does not read"),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn a_legacy_codex_header_with_a_key_it_did_not_have_names_codex_legacy() {
    let text = std::fs::read_to_string(fixture("codex-legacy/rollout-2025-08-20.jsonl")).unwrap();
    let added = text.replacen("{\"id\":", "{\"sandbox\":\"off\",\"id\":", 1);
    let e = unrecognised("rollout.jsonl", &added);
    assert!(e.contains("the header of a Codex CLI rollout from before 0.40"), "{e}");
    assert!(e.contains("`--input-format codex-legacy`"), "{e}");
}

#[test]
fn a_codex_exec_stream_starting_with_an_unknown_event_names_codex_exec() {
    let text = std::fs::read_to_string(fixture("codex-exec/run.jsonl")).unwrap();
    let renamed = text.replacen("\"thread.started\"", "\"thread.resumed\"", 1);
    assert_ne!(renamed, text);
    let e = unrecognised("run.jsonl", &renamed);
    assert!(e.contains("a `codex exec --json` event") && e.contains("`--input-format codex-exec`"), "{e}");
}

#[test]
fn claude_code_lines_of_an_unknown_layout_name_claude_code() {
    let e = unrecognised(
        "session.jsonl",
        "{\"type\":\"checkpoint\",\"uuid\":\"u1\",\"sessionId\":\"s\"}\n{\"type\":\"checkpoint\",\"uuid\":\"u2\",\"sessionId\":\"s\"}\n",
    );
    assert!(e.contains("a Claude Code session line (`sessionId`, `uuid`)"), "{e}");
    assert!(e.contains("type `checkpoint`") && e.contains("`--input-format claude-code`"), "{e}");
}

#[test]
fn agent_jsonl_given_the_wrong_input_format_names_the_format_that_reads_it() {
    // A Claude Code session read as a Codex rollout, and a Codex rollout read as a Claude Code
    // session: nothing to replay, and the warning names the format detection chooses.
    for (file, forced, reads_as) in [
        ("fuzz/format_claude_code/zero-usage-reconcile.jsonl", "codex", "claude-code"),
        ("codex/rollout-0.40.jsonl", "claude-code", "codex"),
        ("codex/rollout-0.40.jsonl", "codex-legacy", "codex"),
        ("codex-exec/run.jsonl", "codex", "codex-exec"),
    ] {
        let trace = load_as(&fixture(file), forced);
        assert_eq!(trace.conversations.iter().map(|c| c.requests()).sum::<usize>(), 0, "{file}");
        let expected =
            format!("read as `{forced}` (--input-format), it holds no request: it reads as `{reads_as}`");
        assert!(trace.warnings.contains(&expected), "{file}: {:?}", trace.warnings);
    }
}

#[test]
fn log_text_quoted_in_a_look_alike_warning_is_neutralised() {
    let messages = json!([
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "<returncode>0</returncode>\u{1b}]0;owned\u{7}\n<output>\n</output>"},
        {"role": "assistant", "content": "done"}
    ]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("messages.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&messages).unwrap()).unwrap();
    let w = look_alike_naming(&load_as(&path, "openai-chat"), "mini-swe-agent");
    assert!(!w.chars().any(char::is_control), "{w:?}");
    assert!(w.contains("\\u{1b}]0;owned\\u{7}"), "{w}");
    // With detection no format reads it (a `<returncode>` list without a ```bash block is neither
    // mini-swe-agent's nor OpenAI chat's): the error names the format its text resembles.
    let e = input::load(&path, None).unwrap_err().to_string();
    assert!(e.contains("its text looks like tool results of mini-swe-agent (1 line(s)"), "{e}");
    assert!(!e.chars().any(char::is_control), "{e:?}");
}

/// Every look-alike warning or error that reading every file under `dir` with detection gives.
fn look_alikes_under(dir: &Path) -> Vec<String> {
    let found = input::discover(&[dir.to_owned()]);
    assert!(found.files.len() > 10, "{} files under {}", found.files.len(), dir.display());
    let mut out = Vec::new();
    for path in &found.files {
        match input::load(path, None) {
            Ok(trace) => out.extend(trace.warnings.into_iter().filter(|w| is_look_alike(w))),
            Err(e) => out.extend(Some(e.to_string()).filter(|e| is_look_alike(e))),
        }
    }
    out
}

#[test]
fn no_fixture_read_with_detection_gets_a_look_alike_warning() {
    assert_eq!(look_alikes_under(&common::root().join("tests/fixtures")), Vec::<String>::new());
}

#[test]
fn no_corpus_file_read_with_detection_gets_a_look_alike_warning() {
    let Some(corpus) = common::corpus_root() else { return };
    assert_eq!(look_alikes_under(&corpus), Vec::<String>::new());
}
