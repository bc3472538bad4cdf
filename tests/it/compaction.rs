//! Compaction policies on the corpus's sessions that recorded a compaction: `compact:<agent>` with
//! the agent's own trigger, the log's compactions dropped (`--harness-compaction simulated`),
//! compacts within one request of where the log did on the log as recorded (outputs not split),
//! within two at the default 256-byte split (whose summaries the session did not send), with a
//! summary the size the log's own shows (docs/compaction.md; `--nocapture` prints the table); on a
//! session the agent never compacted, its trigger does not fire either; the as-recorded baseline
//! stays the same under every mode. The corpus tests fail when `CI` is set and the corpus is
//! missing; otherwise they are skipped with a printed reason.

use crate::common;

use serde_json::Value;

/// Corpus sessions that recorded a compaction, with the policy of the agent that wrote them.
const SESSIONS: &[(&str, &str)] =
    &[("claude-code/codemie-code/session-624a4a58.jsonl", "compact:claude-code")];

/// A threshold no output reaches: the outputs are sent whole, as the log recorded them.
const UNSPLIT: &str = "1GB";

/// The run of `policy` on `path` under `harness`, at `threshold`.
fn run(path: &str, policy: &str, harness: &str, threshold: &str) -> Value {
    let out = common::ctxbudget()
        .args(["replay", path, "--policy", policy, "--per-request", "--format", "json"])
        .args(["--harness-compaction", harness, "--threshold", threshold])
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let run = report["runs"][0].clone();
    assert_eq!(run["harness_compaction"], harness, "the run names its mode");
    run
}

/// The per-request rows of `policy` on `path` under `harness`, at `threshold`.
fn rows(path: &str, policy: &str, harness: &str, threshold: &str) -> Vec<Value> {
    run(path, policy, harness, threshold)["timeline"].as_array().expect("a timeline").clone()
}

fn tokens(row: &Value, key: &str) -> u64 {
    row[key].as_u64().unwrap_or(0)
}

/// The log's own compactions, replayed as recorded under `none`: (the first request after each,
/// its summary's tokens, the `user` text of that request, which is the summary alone).
fn recorded_compactions(path: &str) -> Vec<(usize, u64)> {
    let recorded = rows(path, "none", "recorded", UNSPLIT);
    (1..recorded.len())
        .filter(|&i| tokens(&recorded[i], "previous_context_tokens") == 0)
        .map(|i| (i, tokens(&recorded[i], "user")))
        .collect()
}

/// How far from the log's compaction the agent's trigger may compact, at each threshold: issue
/// 32's goal, one request, on the log as recorded; at the default 256-byte split the summaries of
/// the split outputs add about 580 tokens the session did not send, and Claude Code's count stood
/// 265 tokens under its trigger two requests before it compacted (docs/compaction.md, "What the
/// trigger reads").
const WITHIN: &[(&str, usize)] = &[(UNSPLIT, 1), ("256", 2)];

#[test]
fn each_agents_trigger_compacts_within_one_request_of_the_log_with_the_logs_summary_size() {
    let Some(corpus) = common::corpus_root() else { return };
    println!("| session | policy | threshold | recorded (request, summary) | simulated (request, summary) |");
    for ((session, policy), &(threshold, within)) in
        SESSIONS.iter().flat_map(|s| WITHIN.iter().map(move |w| (s, w)))
    {
        let path = corpus.join(session);
        let path = path.to_str().unwrap();
        let recorded = recorded_compactions(path);
        assert!(!recorded.is_empty(), "{session} records a compaction");
        // The agent's trigger on the policy's own context, the log's compactions dropped: it reads
        // the usage the provider would have reported (docs/compaction.md, "What the trigger reads").
        let simulated = rows(path, policy, "simulated", threshold);
        let made: Vec<(usize, u64)> = (0..simulated.len())
            .filter(|&i| tokens(&simulated[i], "summarization_input_tokens") > 0)
            .map(|i| (i, tokens(&simulated[i], "summarization_output_tokens")))
            .collect();
        println!("| `{session}` | `{policy}` | {threshold} | {recorded:?} | {made:?} |");
        assert_eq!(made.len(), recorded.len(), "{session}: {policy} compacts as often as the log");
        for (&(at, summary), &(log_at, log_summary)) in made.iter().zip(&recorded) {
            assert!(
                at.abs_diff(log_at) <= within,
                "{session} at {threshold}: {policy} compacted at {at}, the log at {log_at}"
            );
            let off = summary.abs_diff(log_summary) as f64 / log_summary as f64;
            assert!(off < 0.02, "{session}: summary {summary} tokens, the log's {log_summary}");
        }
    }
}

/// Claude Code never compacted `session-3fe1b6bc.jsonl` (its largest recorded prompt is 142,670
/// tokens), but its replayed context runs about 30,000 tokens over the recorded one after the
/// provider cleared old tool results at request 56: read on the replay's context, the trigger
/// fired before request 60. Read on the usage the provider would have reported, it does not fire,
/// for `none` at the default threshold under the default `simulated`, nor on the log as recorded.
#[test]
fn the_agents_trigger_does_not_fire_where_the_agent_did_not_compact() {
    let Some(corpus) = common::corpus_root() else { return };
    let path = corpus.join("claude-code/codemie-code/session-3fe1b6bc.jsonl");
    let path = path.to_str().unwrap();
    for (policy, threshold) in [("none", "256"), ("none", UNSPLIT), ("compact:claude-code", "256")] {
        let run = run(path, policy, "simulated", threshold);
        assert_eq!(run["harness_compaction_policy"], "compact:claude-code", "the agent's trigger runs");
        let peak = run["peak_context_tokens"].as_u64().unwrap();
        assert!(peak > 155_000, "the replayed context reaches the 155,000-token trigger: {peak}");
        assert_eq!(run["compactions"], 0, "{policy} at {threshold}: {}", run["timeline"]);
    }
}

/// `compare --format json` of `path` under `harness`: the baseline's input tokens and cost, and
/// each policy's input tokens and compactions.
fn compared(path: &str, harness: &str) -> (Value, Vec<(String, u64)>) {
    let out = common::ctxbudget()
        .args(["compare", path, "--policy", "opencode", "--format", "json", "--harness-compaction", harness])
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let policies = c["policies"].as_array().unwrap();
    let totals = policies
        .iter()
        .map(|p| (p["policy"].as_str().unwrap().to_owned(), p["total_input_tokens"].as_u64().unwrap()))
        .collect();
    (serde_json::json!([c["baseline_input_tokens"], c["baseline_cost"]]), totals)
}

#[test]
fn the_baseline_stays_as_recorded_under_every_mode_while_the_policies_follow_it() {
    let Some(corpus) = common::corpus_root() else { return };
    let (session, _) = SESSIONS[0];
    let path = corpus.join(session);
    let path = path.to_str().unwrap();
    let (recorded, as_recorded) = compared(path, "recorded");
    let (simulated, with_trigger) = compared(path, "simulated");
    let (off, growing) = compared(path, "off");
    assert_eq!(recorded, simulated, "the baseline does not follow --harness-compaction");
    assert_eq!(recorded, off, "the baseline does not follow --harness-compaction");
    // `none` at the threshold: the log's compaction at 37; the trigger's earlier (at 35), restarting
    // with the overhead the log showed after its own (docs/calibration.md, "Applied"); none at all.
    let none = |t: &[(String, u64)]| t.iter().find(|(p, _)| p == "none").unwrap().1;
    assert!(none(&with_trigger) < none(&as_recorded), "compacting earlier sends less");
    assert!(none(&growing) > none(&as_recorded), "a context that never restarts sends more");
}

#[test]
fn a_log_of_an_agent_with_no_known_trigger_keeps_its_compactions_unless_told_off() {
    // A native log (no agent's trigger known) that compacted once.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("compacted.jsonl");
    let long = "word ".repeat(400);
    let lines = [
        format!(r#"{{"type":"user","text":"{long}"}}"#),
        r#"{"type":"request"}"#.to_owned(),
        format!(r#"{{"type":"user","text":"{long}"}}"#),
        r#"{"type":"request"}"#.to_owned(),
        r#"{"type":"compaction","summary":"what happened"}"#.to_owned(),
        r#"{"type":"user","text":"go on"}"#.to_owned(),
        r#"{"type":"request"}"#.to_owned(),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let run = |harness: Option<&str>| {
        let mut cmd = common::ctxbudget();
        cmd.args(["replay", "--policy", "none", "--format", "json"]).arg(&path);
        if let Some(h) = harness {
            cmd.args(["--harness-compaction", h]);
        }
        let out = cmd.output().expect("the binary runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["runs"][0].clone()
    };
    let default = run(None);
    assert_eq!(default["harness_compaction"], "recorded", "simulated needs a known agent");
    assert_eq!(default["harness_compaction_policy"], Value::Null);
    let recorded = run(Some("recorded"));
    assert_eq!(default["total_input_tokens"], recorded["total_input_tokens"]);
    let off = run(Some("off"));
    assert_eq!(off["harness_compaction"], "off");
    assert!(
        off["total_input_tokens"].as_u64() > recorded["total_input_tokens"].as_u64(),
        "with its compaction ignored the context keeps growing: {off} vs {recorded}"
    );
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
