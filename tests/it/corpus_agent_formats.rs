//! Every agent trajectory in the shared corpus (`../shared/corpus/{swe-agent, mini-swe-agent,
//! openhands, gemini-cli}/`) imports without error, through format detection, as the format of
//! its folder; its tool-result count equals the one `PROVENANCE.md` lists (or differs by a
//! deliberate amount explained in [`DELIBERATE`]); and where usage was recorded, the import
//! carries it: per-request prompt sizes, compared with the numbers read straight from the file,
//! or for SWE-agent the aggregate total listed in `PROVENANCE.md`. OpenHands file-edit results are
//! the message the editor returned, read straight from the file, not the diff in `content`.
//!
//! Skipped, with a printed reason, when the corpus is absent. Run with `--nocapture` to see one
//! summary line per file.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ctxbudget::input;
use ctxbudget::model::{Conversation, Item, RecordedTotal, Trace};
use serde_json::Value;

/// Corpus folders and the format each must be detected as.
const FOLDERS: [(&str, &str); 4] = [
    ("swe-agent", "swe-agent"),
    ("mini-swe-agent", "mini-swe-agent"),
    ("openhands", "openhands"),
    ("gemini-cli", "gemini-cli"),
];

/// Files whose tool-result count differs from `PROVENANCE.md` on purpose: (file name, our count
/// minus the listed one, why).
const DELIBERATE: [(&str, i64, &str); 4] = [
    (
        "github_issue.traj.json",
        1,
        "the last message (the submission diff) is the output of the final `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff` call, so it is that call's result",
    ),
    ("django__django-11149.traj.json", 1, "the submission is the final call's result (as above)"),
    (
        "django__django-15629.traj.json",
        -1,
        "+1 for the submission; -2 for the two format-error messages that answer replies with two bash blocks: no command ran, they are harness feedback",
    ),
    (
        "basic_gui_mode.json",
        -3,
        "the three `null` observations (acknowledging a state change, the user's message and the agent's closing message) are bookkeeping that OpenHands does not send to the model",
    ),
];

fn corpus() -> Option<PathBuf> {
    common::corpus_root()
}

/// A `PROVENANCE.md` table row: tool results and the recorded-usage cell, by corpus path.
fn provenance(corpus: &Path) -> BTreeMap<String, (usize, String)> {
    let text = std::fs::read_to_string(corpus.join("PROVENANCE.md")).expect("PROVENANCE.md in the corpus");
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 8 {
            continue;
        }
        if let Ok(results) = cells[5].parse() {
            rows.insert(cells[0].trim_matches('`').to_owned(), (results, cells[7].to_owned()));
        }
    }
    rows
}

/// `key=N` inside a text such as `aggregate only: tokens_sent=7141 … api_calls=5`.
fn field(text: &str, key: &str) -> Option<u64> {
    let at = text.find(&format!("{key}="))? + key.len() + 1;
    text[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// Recorded prompt sizes of the requests, in order.
fn recorded(c: &[Conversation]) -> Vec<u64> {
    c.iter()
        .flat_map(|c| &c.items)
        .filter_map(|i| match i {
            Item::Request(r) => r.usage.map(|u| u.input_tokens),
            _ => None,
        })
        .collect()
}

/// The per-call prompt sizes written in the file, read without the importer.
fn prompt_sizes_in_file(format: &str, doc: &Value) -> Vec<u64> {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64);
    match format {
        "mini-swe-agent" => {
            let messages = doc.get("messages").or(Some(doc)).and_then(Value::as_array).unwrap();
            messages.iter().filter_map(|m| n(m.pointer("/extra/response/usage/prompt_tokens"))).collect()
        }
        "openhands" => {
            let mut seen = Vec::new();
            let mut sizes = Vec::new();
            for e in doc.as_array().unwrap() {
                let Some(r) = e.pointer("/tool_call_metadata/model_response") else { continue };
                let id = r.get("id").and_then(Value::as_str).unwrap().to_owned();
                if let (false, Some(p)) = (seen.contains(&id), n(r.pointer("/usage/prompt_tokens"))) {
                    sizes.push(p);
                    seen.push(id);
                }
            }
            sizes
        }
        "gemini-cli" => {
            doc["messages"].as_array().unwrap().iter().filter_map(|m| n(m.pointer("/tokens/input"))).collect()
        }
        _ => Vec::new(),
    }
}

fn summary(trace: &Trace) -> String {
    let c = &trace.conversations;
    let total = c.iter().find_map(|c| c.recorded_total);
    format!(
        "{} conversation(s), {} requests, {} tool results, {} requests with a recorded size, recorded total {}",
        c.len(),
        c.iter().map(Conversation::requests).sum::<usize>(),
        c.iter().map(Conversation::tool_results).sum::<usize>(),
        recorded(c).len(),
        total.map_or("none".to_owned(), |t| format!("{} over {} calls", t.input_tokens, t.calls)),
    )
}

#[test]
fn every_agent_trajectory_in_the_corpus_imports_with_the_listed_counts_and_usage() {
    let Some(corpus) = corpus() else { return };
    let listed = provenance(&corpus);
    let mut checked = 0;
    for (folder, format) in FOLDERS {
        let Some(dir) = common::corpus(folder) else { continue };
        let found = input::discover(&[dir]);
        assert!(found.errors.is_empty(), "{:?}", found.errors);
        for path in &found.files {
            let trace = input::load(path, None).unwrap_or_else(|e| panic!("{e}"));
            let rel = path.strip_prefix(&corpus).unwrap().to_string_lossy().into_owned();
            println!("{rel}: {}", summary(&trace));
            assert_eq!(trace.format, format, "{rel}");
            assert!(
                trace.conversations.iter().all(|c| !c.id.is_empty()),
                "{rel}: a conversation without a name"
            );
            let results: usize = trace.conversations.iter().map(Conversation::tool_results).sum();
            let name = path.file_name().unwrap().to_string_lossy();
            let Some((listed_results, usage)) = listed.get(&rel) else {
                println!("  not listed in PROVENANCE.md: counts not compared");
                continue;
            };
            let delta = DELIBERATE.iter().find(|d| d.0 == name).map_or(0, |d| d.1);
            assert_eq!(
                results as i64,
                *listed_results as i64 + delta,
                "{rel}: PROVENANCE.md lists {listed_results} tool results (deliberate difference {delta})"
            );

            let sizes = recorded(&trace.conversations);
            let total = trace.conversations.iter().find_map(|c| c.recorded_total);
            if format == "swe-agent" {
                let want = field(usage, "tokens_sent")
                    .filter(|&t| t > 0)
                    .map(|t| RecordedTotal { input_tokens: t, calls: field(usage, "api_calls").unwrap() });
                assert_eq!(total, want, "{rel}: {usage}");
                assert!(usage.starts_with("aggregate only") == want.is_some(), "{rel}: {usage}");
                assert!(sizes.is_empty(), "{rel}: SWE-agent records no per-call usage");
            } else if usage.starts_with("yes") {
                let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
                let in_file = prompt_sizes_in_file(format, &doc);
                assert!(!in_file.is_empty(), "{rel}: PROVENANCE.md says usage was recorded");
                assert_eq!(sizes, in_file, "{rel}: recorded sizes per request, in order");
            } else {
                assert!(sizes.is_empty() && total.is_none(), "{rel}: {usage}");
            }
            checked += 1;
        }
    }
    println!("checked {checked} files");
}

/// OpenHands sends `str(obs)` for a file edit: for an `oh_aci` edit that is the editor's own
/// message (`extras.formatted_output_and_error`), not the diff in `content`. Every such
/// observation of the corpus is imported as that message, read here straight from the file.
#[test]
fn openhands_edit_results_are_the_editors_message_not_the_diff() {
    let Some(corpus) = corpus() else { return };
    let found = input::discover(&[corpus.join("openhands")]);
    let mut checked = 0;
    for path in &found.files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let Some(events) = doc.as_array() else { continue };
        let mut want = BTreeMap::new();
        for e in events {
            let Some(call_id) = e.pointer("/tool_call_metadata/tool_call_id").and_then(Value::as_str) else {
                continue;
            };
            let Some(action_id) = e.get("id").and_then(Value::as_i64) else { continue };
            let answer = events.iter().find(|o| {
                o.get("cause").and_then(Value::as_i64) == Some(action_id)
                    && o["observation"] == "edit"
                    && o.pointer("/extras/impl_source").and_then(Value::as_str) == Some("oh_aci")
            });
            if let Some(o) = answer {
                let message =
                    o.pointer("/extras/formatted_output_and_error").and_then(Value::as_str).unwrap();
                assert_ne!(
                    o["content"].as_str(),
                    Some(message),
                    "{}: a diff unlike the message",
                    path.display()
                );
                want.insert(call_id.to_owned(), message.to_owned());
            }
        }
        let trace = input::load(path, None).unwrap_or_else(|e| panic!("{e}"));
        for item in trace.conversations.iter().flat_map(|c| &c.items) {
            if let Item::ToolResult(r) = item
                && let Some(message) = want.remove(&r.call_id)
            {
                assert_eq!(r.output.full_text(), message, "{}: {}", path.display(), r.call_id);
                checked += 1;
            }
        }
        assert!(want.is_empty(), "{}: edits without a result: {want:?}", path.display());
    }
    println!("checked {checked} edit results");
    assert!(checked >= 3, "the corpus has 3 oh_aci edits (basic.json 1, basic_gui_mode.json 2)");
}
