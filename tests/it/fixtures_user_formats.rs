//! The fixtures of the formats users keep on their own machines (Cline / Roo Code / Kilo Code
//! task folders, …), each read through format detection and checked against an independent
//! count of the same files written here: tool results, requests and recorded prompt sizes
//! counted straight from the JSON, not through the importer.

use std::path::{Path, PathBuf};

use ctxbudget::format;
use ctxbudget::input;
use ctxbudget::model::{Conversation, Item, Trace};
use serde_json::Value;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(path)
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Recorded prompt size of each request, in order (`None` where unrecorded).
fn recorded(c: &Conversation) -> Vec<Option<u64>> {
    c.items
        .iter()
        .filter_map(|i| match i {
            Item::Request(r) => Some(r.usage.map(|u| u.input_tokens)),
            _ => None,
        })
        .collect()
}

/// The Cline task counted straight from its files: (tool results, requests, recorded sizes,
/// harness feedback blocks).
fn count_cline(dir: &Path) -> (usize, usize, Vec<Option<u64>>, usize) {
    let history = json(&dir.join("api_conversation_history.json"));
    let messages = history.as_array().unwrap();
    let (mut results, mut feedback) = (0, 0);
    for m in messages.iter().filter(|m| m["role"] == "user") {
        for block in m["content"].as_array().unwrap() {
            let text = block["text"].as_str().unwrap_or("");
            let first = text.lines().next().unwrap_or("");
            if first.starts_with('[') && first.ends_with("] Result:") {
                results += 1;
            }
            if text.starts_with("<environment_details>") || text.starts_with("Tool [") {
                feedback += 1;
            }
        }
    }
    let assistants: Vec<usize> =
        (0..messages.len()).filter(|&i| messages[i]["role"] == "assistant").collect();
    // The last `api_req_started` recorded for each history index, which produced message index + 2.
    let mut sizes = vec![None; messages.len()];
    for m in json(&dir.join("ui_messages.json")).as_array().unwrap() {
        if m["say"] != "api_req_started" {
            continue;
        }
        let t: Value = serde_json::from_str(m["text"].as_str().unwrap()).unwrap();
        let at = (m["conversationHistoryIndex"].as_i64().unwrap() + 2) as usize;
        sizes[at] = t["tokensIn"]
            .as_u64()
            .map(|n| n + t["cacheWrites"].as_u64().unwrap_or(0) + t["cacheReads"].as_u64().unwrap_or(0));
    }
    let sizes: Vec<Option<u64>> = assistants.iter().map(|&i| sizes[i]).collect();
    (results, assistants.len(), sizes, feedback)
}

#[test]
fn a_cline_task_folder_reads_as_one_conversation_with_its_results_and_recorded_usage() {
    let dir = fixture("cline/task");
    let trace = input::load(&dir.join("api_conversation_history.json"), None).unwrap();
    assert_eq!(trace.format, "cline");
    assert_eq!(trace.conversations.len(), 1);
    let c = &trace.conversations[0];
    let (results, requests, sizes, feedback) = count_cline(&dir);
    assert_eq!((c.tool_results(), c.requests(), recorded(c)), (results, requests, sizes.clone()));
    assert_eq!(sizes, [Some(2112), Some(2529), Some(2907), Some(3066), Some(3395)], "the hand count");
    let meta = c.items.iter().filter(|i| matches!(i, Item::User { meta: true, .. })).count();
    assert_eq!(meta, feedback, "harness feedback is its own category");
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
}

#[test]
fn a_walk_of_a_cline_task_folder_finds_only_its_history() {
    let found = input::discover(&[fixture("cline")]);
    assert_eq!(found.files, [fixture("cline/task/api_conversation_history.json")]);
    assert!(found.warnings.is_empty() && found.errors.is_empty(), "{found:?}");
}

fn load_as(path: &Path, name: &str) -> Trace {
    input::load(path, Some(format::by_name(name).unwrap())).unwrap()
}

#[test]
fn a_cline_history_read_as_anthropic_messages_warns_that_it_looks_like_cline() {
    let trace = load_as(&fixture("cline/task/api_conversation_history.json"), "anthropic-messages");
    assert_eq!(trace.conversations[0].tool_results(), 0, "the reading the warning is about");
    let warning = trace.warnings.iter().find(|w| w.contains("Cline")).expect("a look-alike warning");
    assert!(
        warning.starts_with("read as `anthropic-messages` with no tool result, but 4 line(s)"),
        "{warning}"
    );
    assert!(warning.contains("--input-format cline"), "{warning}");
    // Read as what it is, there is nothing to warn about.
    let trace = load_as(&fixture("cline/task/api_conversation_history.json"), "cline");
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
}

#[test]
fn a_cline_history_without_its_folder_is_still_detected_by_its_first_message() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("exported.json");
    std::fs::copy(fixture("cline/task/api_conversation_history.json"), &copy).unwrap();
    let trace = input::load(&copy, None).unwrap();
    assert_eq!(trace.format, "cline");
    assert_eq!(trace.conversations[0].tool_results(), 4);
    // No ui_messages.json beside it: the `metrics.tokens` on the first assistant message is all
    // that records usage (12 prompt + 2100 cached).
    assert_eq!(recorded(&trace.conversations[0]), [Some(2112), None, None, None, None]);
}

/// A `codex exec --json` stream counted straight from its lines: (tool results, requests,
/// the last `turn.completed` input tokens). A request is a turn's first output, or output after
/// a tool's output (the stream marks no model call).
fn count_codex_exec(path: &Path) -> (usize, usize, Option<u64>) {
    let (mut results, mut requests, mut total) = (0, 0, None);
    let mut next_is_request = false;
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str().unwrap() {
            "turn.started" => next_is_request = true,
            "turn.completed" => total = v["usage"]["input_tokens"].as_u64(),
            "item.completed" => {
                if next_is_request {
                    requests += 1;
                }
                let has_output = matches!(
                    v["item"]["type"].as_str(),
                    Some("command_execution" | "mcp_tool_call" | "file_change")
                );
                results += usize::from(has_output);
                next_is_request = has_output;
            }
            _ => {}
        }
    }
    (results, requests, total)
}

#[test]
fn a_codex_exec_stream_reads_its_tool_outputs_and_the_runs_recorded_total() {
    let path = fixture("codex-exec/run.jsonl");
    let trace = input::load(&path, None).unwrap();
    assert_eq!(trace.format, "codex-exec");
    let c = &trace.conversations[0];
    let (results, requests, total) = count_codex_exec(&path);
    assert_eq!((c.tool_results(), c.requests()), (results, requests));
    assert_eq!(c.recorded_total.map(|t| (t.input_tokens, t.calls)), total.map(|n| (n, requests as u64)));
    assert_eq!((results, requests, total), (5, 6, Some(41210)), "the hand count");
    assert!(recorded(c).iter().all(Option::is_none), "the total covers six requests: none has a size");
    let errors = c.items.iter().filter(|i| matches!(i, Item::ToolResult(r) if r.is_error)).count();
    assert_eq!(errors, 1, "cargo test exited 101");
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
}

/// A pre-0.40 Codex rollout counted straight from its lines: (tool results, requests). A request
/// is each run of model output items (reasoning, assistant message, call).
fn count_codex_legacy(path: &Path) -> (usize, usize) {
    let (mut results, mut requests, mut in_run) = (0, 0, false);
    for line in std::fs::read_to_string(path).unwrap().lines().skip(1) {
        let v: Value = serde_json::from_str(line).unwrap();
        let model = match v["type"].as_str() {
            Some("reasoning" | "function_call") => true,
            Some("message") => v["role"] == "assistant",
            Some("function_call_output") => {
                results += 1;
                false
            }
            _ => continue, // `record_type: state`
        };
        requests += usize::from(model && !in_run);
        in_run = model;
    }
    (results, requests)
}

#[test]
fn a_pre_0_40_codex_rollout_reads_its_items_and_says_what_the_layout_lacks() {
    let path = fixture("codex-legacy/rollout-2025-08-20.jsonl");
    let trace = input::load(&path, None).unwrap();
    assert_eq!(trace.format, "codex-legacy");
    let c = &trace.conversations[0];
    assert_eq!((c.tool_results(), c.requests()), count_codex_legacy(&path));
    assert_eq!(count_codex_legacy(&path), (3, 3), "the hand count");
    assert!(recorded(c).iter().all(Option::is_none) && c.recorded_total.is_none());
    assert!(c.link_problems().is_empty(), "{:?}", c.link_problems());
    assert_eq!(trace.warnings.len(), 1, "{:?}", trace.warnings);
    assert!(
        trace.warnings[0].contains("layout written before 0.40: it records no usage"),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn an_aider_llm_log_reads_one_request_per_block_chained_into_conversations() {
    let path = fixture("aider/.aider.llm.history");
    let text = std::fs::read_to_string(&path).unwrap();
    let blocks = text.lines().filter(|l| l.starts_with("TO LLM ")).count();
    let replies = text.lines().filter(|l| l.starts_with("LLM RESPONSE ")).count();
    let trace = input::load(&path, None).unwrap();
    assert_eq!(trace.format, "aider");
    let requests: usize = trace.conversations.iter().map(Conversation::requests).sum();
    assert_eq!((requests, blocks, replies), (3, 3, 3));
    let ids: Vec<&str> = trace.conversations.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["main", "main-2"], "the third request sends another history");
    // Each request's context is its block's messages: the last user message of each block is
    // the last user item before its request boundary.
    let main = &trace.conversations[0].items;
    let before = |k: usize| {
        let at = main.iter().enumerate().filter(|(_, i)| matches!(i, Item::Request(_))).nth(k).unwrap().0;
        main[..at].iter().rev().find_map(|i| match i {
            Item::User { text, .. } => Some(text.as_str()),
            _ => None,
        })
    };
    assert_eq!(before(0), Some("make parse ignore empty items"));
    assert_eq!(before(1), Some("I added these files to the chat: src/parse.py"));
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
    // A directory walk reads the log although it is a hidden file.
    assert_eq!(input::discover(&[fixture("aider")]).files, [path]);
}
