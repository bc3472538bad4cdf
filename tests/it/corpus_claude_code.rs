//! The Claude Code importer on every real session of the shared corpus (skipped when it is absent).
//!
//! Expectations are computed independently of the importer, by scanning each file's JSON lines here:
//! requests = distinct `message.id`s of non-`<synthetic>` assistant lines; tool results = `tool_result`
//! blocks in user lines. They are also checked against PROVENANCE.md's "tool results" column.

use crate::common;

use std::collections::BTreeSet;

use ctxbudget::format::by_name;
use ctxbudget::input::load;
use ctxbudget::model::{Item, UnseenKind};
use serde_json::Value;

#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    requests: usize,
    tool_results: usize,
}

fn independent_counts(text: &str) -> Counts {
    let mut ids = BTreeSet::new();
    let mut tool_results = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str() {
            Some("assistant") if v["message"]["model"] != "<synthetic>" => {
                ids.insert(v["message"]["id"].as_str().unwrap().to_owned());
            }
            Some("user") => {
                if let Some(blocks) = v["message"]["content"].as_array() {
                    tool_results += blocks.iter().filter(|b| b["type"] == "tool_result").count();
                }
            }
            _ => {}
        }
    }
    Counts { requests: ids.len(), tool_results }
}

#[test]
fn every_claude_code_session_imports_with_the_right_request_and_result_counts() {
    let Some(dir) = common::corpus("claude-code") else { return };
    let files = common::files_under(&dir, &[".jsonl"]);
    assert!(files.len() >= 20, "expected the corpus's Claude Code sessions, found {}", files.len());
    let corpus_root = dir.parent().unwrap();
    for file in files {
        let trace = load(&file, None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(trace.format, "claude-code", "{}", file.display());
        let mut got = Counts::default();
        let mut with_usage = 0;
        for c in &trace.conversations {
            got.requests += c.requests();
            got.tool_results += c.tool_results();
            with_usage +=
                c.items.iter().filter(|i| matches!(i, Item::Request(r) if r.usage.is_some())).count();
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let want = independent_counts(&text);
        assert_eq!(got, want, "{}", file.display());
        assert_eq!(with_usage, got.requests, "{}: every request carries its recorded usage", file.display());
        let relative = file.strip_prefix(corpus_root).unwrap().to_string_lossy().into_owned();
        let listed = common::provenance_tool_results(&relative)
            .unwrap_or_else(|| panic!("{relative} is not listed in PROVENANCE.md"));
        assert_eq!(got.tool_results as u64, listed, "{relative}: PROVENANCE.md lists {listed}");
    }
}

/// `tool_reference` blocks inside `tool_result` contents of user lines, counted from the JSON.
fn tool_references_in(text: &str) -> usize {
    let mut n = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        let Some(blocks) = v["message"]["content"].as_array().filter(|_| v["type"] == "user") else {
            continue;
        };
        for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
            n += b["content"]
                .as_array()
                .map_or(0, |c| c.iter().filter(|x| x["type"] == "tool_reference").count());
        }
    }
    n
}

/// Each `tool_reference` loads a deferred tool's schema the file does not hold: a file with any
/// says how many in one warning (the corpus has 25, from ToolSearch in one session and its subagents).
#[test]
fn tool_reference_blocks_are_counted_in_one_warning_per_file() {
    let Some(dir) = common::corpus("claude-code") else { return };
    let mut total = 0;
    for file in common::files_under(&dir, &[".jsonl"]) {
        let n = tool_references_in(&std::fs::read_to_string(&file).unwrap());
        let warned: Vec<String> = load(&file, None)
            .unwrap()
            .warnings
            .into_iter()
            .filter(|w| w.contains("`tool_reference`"))
            .collect();
        let want: Vec<String> = (n > 0)
            .then(|| {
                format!(
                    "{n} `tool_reference` block(s) in tool results load tool schemas the file does not hold: \
                     the requests after them are replayed smaller than sent"
                )
            })
            .into_iter()
            .collect();
        assert_eq!(warned, want, "{}", file.display());
        total += n;
    }
    assert_eq!(total, 25);
}

#[test]
fn the_auto_compacted_session_resets_its_context() {
    let Some(dir) = common::corpus("claude-code/codemie-code") else { return };
    let trace = load(&dir.join("session-624a4a58.jsonl"), by_name("claude-code")).unwrap();
    let main = &trace.conversations[0];
    let compactions = main.items.iter().filter(|i| matches!(i, Item::Compaction { .. })).count();
    assert_eq!(compactions, 1);
    // The summary after it (`isCompactSummary`) is sent, but the harness wrote it: no human turn.
    let at = main.items.iter().position(|i| matches!(i, Item::Compaction { .. })).unwrap();
    let summary = main.items[at + 1..].iter().find(|i| matches!(i, Item::User { .. }));
    assert!(
        matches!(summary, Some(Item::User { text, meta: true, .. }) if text.starts_with("This session is being continued")),
        "{summary:?}"
    );
}

#[test]
fn subagent_files_are_conversations_named_after_their_agent() {
    let Some(dir) = common::corpus("claude-code/daaain-claude-code-log/-src-experiments-claude_p") else {
        return;
    };
    let file = dir.join("29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl");
    let trace = load(&file, None).unwrap();
    let ids: Vec<&str> = trace.conversations.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["agent-a2271d1"]);
}

/// The replay counts a split result's summary and content apart; the model receives them joined by
/// `\n`. This measures what that costs in accuracy on every split output of the corpus (at the
/// default threshold) and keeps it bounded. Run with `--nocapture` to see the numbers.
#[test]
fn counting_summary_and_content_apart_stays_within_two_tokens_of_the_joined_text() {
    use ctxbudget::split::ToolOutput;
    use ctxbudget::tokens::Tokenizer;
    let Some(dir) = common::corpus("claude-code") else { return };
    for tokenizer in [Tokenizer::O200k, Tokenizer::Cl100k] {
        let counter = tokenizer.counter();
        let (mut joined, mut parts, mut results) = (0i64, 0i64, 0);
        for file in common::files_under(&dir, &[".jsonl"]) {
            for c in load(&file, None).unwrap().conversations {
                for item in &c.items {
                    let Item::ToolResult(r) = item else { continue };
                    let out = ToolOutput::from_output(&r.output.full_text(), 256);
                    let Some(content) = &out.content else { continue };
                    let j = counter.count(&out.sent_text()) as i64;
                    let p = (counter.count(&out.summary) + counter.count(content)) as i64;
                    assert!((j - p).abs() <= 2, "{}: joined {j} vs parts {p}", file.display());
                    joined += j;
                    parts += p;
                    results += 1;
                }
            }
        }
        println!(
            "{tokenizer}: {results} split results, joined {joined} tokens, parts {parts} tokens, difference {:.3}%",
            (joined - parts) as f64 * 100.0 / joined as f64
        );
        assert!(results > 400);
    }
}

/// The corpus's two sessions with an image: each image is followed by its tokens by Anthropic's
/// rule, from the PNG header in its base64 data (2000 × 1008 → scaled to 1568 × 790, capped at
/// 1600; 1002 × 606 → 810), as docs/unseen-context.md measured. Under `CI` the corpus must be there.
#[test]
fn images_are_sized_from_their_dimensions_by_anthropics_rule() {
    let Some(dir) = common::corpus("claude-code/daaain-claude-code-log") else { return };
    for (file, want) in [
        ("-Users-dain-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl", 1600),
        ("-Users-dain-workspace-danieldemmel-me-next/9e953218-585f-4692-89df-9e0747a31c68.jsonl", 810),
    ] {
        let trace = load(&dir.join(file), by_name("claude-code")).unwrap();
        let images: Vec<(UnseenKind, u64)> = trace.conversations[0]
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Unseen { kind, tokens } => Some((*kind, *tokens)),
                _ => None,
            })
            .collect();
        assert_eq!(images, [(UnseenKind::Image, want)], "{file}");
    }
}
