//! Goose's tool-pair summarisation (`compact:goose-tools`): `ctxbudget policies` lists it with its
//! upstream source, and on a real corpus session its batches reach the context exactly at the
//! requests Goose's rule, transcribed here from the source and run on the trace's items, gives.
//! The corpus test fails when `CI` is set and the corpus is missing; otherwise it is skipped with
//! a printed reason.

use crate::common;

use ctxbudget::input::load;
use ctxbudget::model::Item;
use serde_json::Value;

/// A corpus session with several human turns and enough tool calls for the default cutoff.
const SESSION: &str = "claude-code/codemie-code/session-3fe1b6bc.jsonl";

#[test]
fn policies_lists_goose_tool_pair_summarisation_with_its_source_and_parameters() {
    let out = common::ctxbudget().arg("policies").output().expect("the binary runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let at = text.find("\ncompact:goose-tools\n").expect("compact:goose-tools is listed");
    let entry = &text[at..text[at + 1..].find("\n\n").map_or(text.len(), |e| at + 1 + e)];
    assert!(
        entry.contains("source: block/goose crates/goose/src/context_mgmt/mod.rs@8d844eecbdfd"),
        "{entry}"
    );
    assert!(entry.contains("agents/agent.rs@8d844eecbdfd"), "{entry}");
    for param in ["window=128000", "threshold=0.8", "cutoff=0", "summary_tokens=11", "prompt_tokens=97"] {
        assert!(entry.contains(param), "{param} in {entry}");
    }
    // The summarisation prompts measured for the compaction policies that had a stand-in.
    assert!(text.contains("prompt_tokens=632"), "compact:goose's measured prompt");
    assert!(text.contains("prompt_tokens=441"), "compact:opencode's measured prompt");
}

/// Goose's rule on a conversation's items, transcribed from block/goose@8d844eecbdfd:
/// `compute_tool_call_cutoff` (cutoff = clamp(3 * floor(128000 * 0.8) / 20000, 10, 500) = 15),
/// `tool_ids_to_summarize` (the agent-visible calls less those of the current reply; more than
/// cutoff + 10 of them: the oldest 10) and `reply_internal` in `agents/agent.rs` (one batch per
/// reply, written to the session store only, so seen from the next reply). A reply starts at the
/// first request after a typed user message. Returns the requests where batches reach the context.
fn goose_rule(items: &[Item]) -> Vec<usize> {
    let cutoff = (3 * ((128_000_f64 * 0.8) as usize) / 20_000).clamp(10, 500);
    assert_eq!(cutoff, 15);
    let (mut request, mut results, mut before_reply) = (0, 0, 0);
    let (mut summarised, mut pending, mut new_reply) = (0, false, false);
    let mut reached = Vec::new();
    for item in items {
        match item {
            Item::User { meta: false, .. } => {
                new_reply = true;
                before_reply = results;
            }
            Item::ToolResult(_) => results += 1,
            Item::Request(_) => {
                if new_reply {
                    if pending {
                        reached.push(request);
                        pending = false;
                    }
                    // Calls already in a batch are not visible (or are on their way out).
                    if before_reply - summarised > cutoff + 10 {
                        summarised += 10;
                        pending = true;
                    }
                    new_reply = false;
                }
                request += 1;
            }
            _ => {}
        }
    }
    reached
}

#[test]
fn on_a_corpus_session_the_batches_arrive_where_goose_s_rule_says() {
    let Some(corpus) = common::corpus_root() else { return };
    let path = corpus.join(SESSION);
    let trace = load(&path, None).unwrap_or_else(|e| panic!("{e}"));
    let main = trace.conversations.iter().find(|c| c.id == "main").expect("a main conversation");
    assert!(!main.items.iter().any(|i| matches!(i, Item::Compaction { .. })), "no recorded compaction");
    let expected = goose_rule(&main.items);
    assert!(expected.len() >= 2, "the session reaches the rule more than once: {expected:?}");

    let out = common::ctxbudget()
        .args(["replay", path.to_str().unwrap(), "--policy", "compact:goose-tools", "--per-request"])
        .args(["--format", "json", "--harness-compaction", "off"])
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = report["runs"].as_array().unwrap().iter().find(|r| r["conversation"] == "main").unwrap();
    let rows = run["timeline"].as_array().unwrap();
    let tokens = |row: &Value, key: &str| row[key].as_u64().unwrap_or(0);
    let made: Vec<usize> =
        (0..rows.len()).filter(|&i| tokens(&rows[i], "summarization_input_tokens") > 0).collect();
    println!("{SESSION}: batches reach requests {made:?} (Goose's rule: {expected:?})");
    assert_eq!(made.first(), expected.first(), "the first batch arrives where Goose's rule says");
    assert_eq!(made, expected);
    assert_eq!(run["compactions"].as_u64(), Some(expected.len() as u64));
    for &at in &made {
        // Ten pairs, each with its 11-token summary and its 97-token prompt, uncached.
        assert_eq!(tokens(&rows[at], "summarization_output_tokens"), 110);
        assert_eq!(tokens(&rows[at], "summarization_cached_tokens"), 0);
        assert!(tokens(&rows[at], "summarization_input_tokens") > 10 * 97);
    }
}
