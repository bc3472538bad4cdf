//! Compaction policies on the corpus's sessions that recorded a compaction: `compact:<agent>` with
//! the agent's own trigger compacts where the log's prompt was within 2% of where the log did,
//! with a summary within 3% of the size the log's own shows (docs/compaction.md). Fails when `CI` is set and the corpus is
//! missing; otherwise skipped with a printed reason.

use crate::common;

use serde_json::Value;

/// Corpus sessions that recorded a compaction, with the policy of the agent that wrote them.
const SESSIONS: &[(&str, &str)] =
    &[("claude-code/codemie-code/session-624a4a58.jsonl", "compact:claude-code")];

fn rows(path: &str, policy: &str) -> Vec<Value> {
    let out = common::ctxbudget()
        .args(["replay", path, "--policy", policy, "--per-request", "--format", "json"])
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    report["runs"][0]["timeline"].as_array().expect("a timeline").clone()
}

fn tokens(row: &Value, key: &str) -> u64 {
    row[key].as_u64().unwrap_or(0)
}

#[test]
fn each_agents_trigger_compacts_within_one_request_of_the_log_with_the_logs_summary_size() {
    let Some(corpus) = common::corpus_root() else { return };
    for (session, policy) in SESSIONS {
        let path = corpus.join(session);
        let path = path.to_str().unwrap();
        // The log's own compaction: the first request after it starts a new context.
        let recorded = rows(path, "none");
        let at = (1..recorded.len())
            .find(|&i| tokens(&recorded[i], "previous_context_tokens") == 0)
            .unwrap_or_else(|| panic!("{session} records a compaction"));
        let recorded_summary = tokens(&recorded[at], "user");
        let simulated = rows(path, policy);
        let made: Vec<usize> = (0..simulated.len())
            .filter(|&i| tokens(&simulated[i], "summarization_input_tokens") > 0)
            .collect();
        assert!(!made.is_empty(), "{policy} compacts {session}");
        // The log's prompt nears the trigger slowly (0.3% a request before its compaction), more
        // finely than the calibration's error there (about 1%): the policy compacts at most one
        // request after the log, at a request whose recorded prompt was within 2% of the log's
        // last before its compaction.
        let last = tokens(&recorded[at - 1], "recorded_input_tokens") as f64;
        let near = tokens(&recorded[made[0]], "recorded_input_tokens") as f64 >= 0.98 * last;
        assert!(made[0] <= at + 1 && near, "{session}: {policy} compacted at {}, the log at {at}", made[0]);
        // The summary is the summarised context's share, so within 3% of the log's.
        let summary = tokens(&simulated[made[0]], "summarization_output_tokens");
        let off = summary.abs_diff(recorded_summary) as f64 / recorded_summary as f64;
        assert!(off < 0.03, "{session}: summary {summary} tokens, the log's {recorded_summary}");
    }
}

#[test]
fn a_prune_policy_reports_no_compaction_and_a_combined_one_is_labelled_as_written() {
    let out = common::ctxbudget()
        .args([
            "replay",
            "--policy",
            "opencode",
            "--policy",
            "keep-turns:n=3+compact:anthropic-sdk:context_token_threshold=2000",
        ])
        .args(["--format", "json"])
        .arg(common::root().join("traces"))
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = report["runs"].as_array().unwrap();
    let (mut pruned, mut combined) = (0, 0);
    for run in runs {
        let compactions = run["compactions"].as_u64().unwrap();
        if run["policy"] == "opencode" {
            assert_eq!(compactions, 0);
            assert_eq!(run["summarization_input_tokens"].as_u64(), Some(0));
            pruned += 1;
        } else {
            assert_eq!(run["policy"], "keep-turns:n=3+compact:anthropic-sdk:context_token_threshold=2000");
            if compactions > 0 {
                assert!(run["summarization_input_tokens"].as_u64().unwrap() > 2000, "{run}");
                assert!(run["summary_tokens"].as_u64().unwrap() > 0, "{run}");
            }
            combined += compactions;
        }
    }
    assert!(pruned > 0 && combined > 0, "the traces hold conversations over 2000 tokens");
}
