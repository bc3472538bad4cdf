//! Claude Code's microcompact (`microcompact_boundary` lines) replayed as recorded: the fixtures
//! of `tests/fixtures/claude-code-microcompact/` (their README gives every number), through the
//! binary.

use serde_json::Value;

use crate::common::{ctxbudget, replay_none_per_request as replay, root, timeline_contexts as contexts};

fn fixture(name: &str) -> std::path::PathBuf {
    root().join("tests/fixtures/claude-code-microcompact").join(name)
}

const UNCALIBRATED: [&str; 6] = ["--tokenizer", "estimate", "--threshold", "100000", "--overhead", "0"];

/// The fixture `session.jsonl` without its boundary line, in a temporary file.
fn without_boundary(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let text = std::fs::read_to_string(fixture("session.jsonl")).unwrap();
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("microcompact_boundary")).collect();
    assert_eq!(kept.len() + 1, text.lines().count(), "one boundary line");
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    path
}

#[test]
fn replay_of_none_drops_by_the_cleared_results_at_the_boundary() {
    let (cleared, warnings) = replay(&fixture("session.jsonl"), &UNCALIBRATED);
    assert_eq!(contexts(&cleared), [2, 107, 312, 43]);
    assert!(!warnings.contains("microcompact"), "{warnings}");
    let dir = tempfile::tempdir().unwrap();
    let (kept, _) = replay(&without_boundary(&dir), &UNCALIBRATED);
    assert_eq!(contexts(&kept), [2, 107, 312, 327]);
    // The two results (100 + 200 tokens) are sent as two 8-token placeholders from request 3.
    let last = &cleared["runs"][0]["timeline"][3];
    assert_eq!(last["placeholders"].as_u64(), Some(16), "{last}");
    assert_eq!(last["pruned_tokens"].as_u64(), Some(0), "the agent cleared them, no policy pruned");
    // The cache breaks at the first cleared result: the prefix shared with request 2 is what
    // came before it (the prompt and the first call).
    assert_eq!(last["shared_prefix_tokens"].as_u64(), Some(7), "{last}");
}

#[test]
fn the_calibrated_replay_reproduces_usage_that_records_the_clearing() {
    // The recorded prompts are the contexts of the cleared replay plus 1000: with the clearing
    // the calibrated replay meets them; without it, request 3 is 284 tokens over.
    let (cleared, _) =
        replay(&fixture("session.jsonl"), &["--tokenizer", "estimate", "--threshold", "100000"]);
    assert_eq!(contexts(&cleared), [1002, 1107, 1312, 1043]);
    let dir = tempfile::tempdir().unwrap();
    let (kept, _) = replay(&without_boundary(&dir), &["--tokenizer", "estimate", "--threshold", "100000"]);
    let last = contexts(&kept)[3];
    assert!(last > 1043 + 200, "without the clearing the last request is replayed {last}");
}

#[test]
fn without_ids_the_usage_step_sizes_the_clearing_over_tokens_saved() {
    let (report, warnings) = replay(&fixture("stream-no-ids.txt"), &UNCALIBRATED);
    assert_eq!(report["runs"][0]["format"].as_str(), Some("claude-stream"), "{report}");
    // The step is 284 (tokens_saved says 50): toolu_1 and toolu_2, as with the ids.
    assert_eq!(contexts(&report), [2, 107, 312, 43]);
    assert!(!warnings.contains("microcompact"), "{warnings}");
}

#[test]
fn malformed_metadata_is_named_with_file_and_line_and_what_is_valid_is_kept() {
    let (report, warnings) = replay(&fixture("malformed.jsonl"), &UNCALIBRATED);
    assert_eq!(contexts(&report), [2, 107, 312, 235], "toolu_1 is still cleared");
    let at = "malformed.jsonl:8: microcompact_boundary: ";
    for problem in [
        "`compactedToolIds[0]` is a number, not a string (ignored)",
        "usage field `tokensSaved` is -5 (a negative number), not a token count (ignored)",
    ] {
        assert!(warnings.contains(&format!("{at}{problem}")), "{problem} in:\n{warnings}");
    }
}

#[test]
fn a_counterfactual_policy_sees_the_cleared_results_as_already_cleared() {
    // Split at 100 bytes, keep-results:n=1 prunes toolu_1's content (100) at request 2; from the
    // boundary on both it and `none` send the two placeholders, and nothing counts as pruned.
    let split = ["--tokenizer", "estimate", "--threshold", "100", "--overhead", "0"];
    let run = |policy: &str| {
        let out = ctxbudget()
            .arg("replay")
            .arg(fixture("session.jsonl"))
            .args(["--policy", policy, "--format", "json", "--per-request"])
            .args(split)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = report["runs"][0]["timeline"].as_array().unwrap().clone();
        rows.iter()
            .map(|r| (r["context_tokens"].as_u64().unwrap(), r["pruned_tokens"].as_u64().unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(run("none"), [(2, 0), (130, 0), (358, 0), (43, 0)]);
    assert_eq!(run("keep-results:n=1"), [(2, 0), (130, 0), (258, 100), (43, 0)]);
}

/// `compare FILE --policy POLICY` as JSON, with `extra` arguments.
fn compare(file: &std::path::Path, policy: &str, extra: &[&str]) -> Value {
    let out = ctxbudget()
        .arg("compare")
        .arg(file)
        .args(["--policy", policy, "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The row of `policy` in a comparison.
fn row<'a>(report: &'a Value, policy: &str) -> &'a Value {
    let rows = report["policies"].as_array().expect("policies");
    rows.iter().find(|r| r["policy"] == policy).unwrap_or_else(|| panic!("no {policy} in {report}"))
}

#[test]
fn off_sends_the_cleared_results_whole_and_the_other_modes_keep_the_recorded_clearing() {
    let file = fixture("session.jsonl");
    for (mode, last, cleared) in [("simulated", 43, Some(2)), ("recorded", 43, Some(2)), ("off", 327, None)] {
        let (report, _) = replay(&file, &[&UNCALIBRATED[..], &["--harness-compaction", mode]].concat());
        assert_eq!(contexts(&report), [2, 107, 312, last], "{mode}");
        let run = &report["runs"][0];
        assert_eq!(run["harness_compaction"].as_str(), Some(mode));
        assert_eq!(run["cleared_results"].as_u64(), cleared, "{mode}: {run}");
    }
    // The baseline is the session as recorded, cleared, whatever the mode; `none` follows the mode.
    let at =
        |mode: &str| compare(&file, "none", &[&UNCALIBRATED[..], &["--harness-compaction", mode]].concat());
    let (recorded, off) = (at("recorded"), at("off"));
    let total = |r: &Value| row(r, "none")["total_input_tokens"].as_u64().unwrap();
    assert_eq!(recorded["baseline_input_tokens"].as_u64(), Some(2 + 107 + 312 + 43));
    assert_eq!(off["baseline_input_tokens"], recorded["baseline_input_tokens"]);
    assert_eq!((total(&recorded), total(&off)), (2 + 107 + 312 + 43, 2 + 107 + 312 + 327));
}

#[test]
fn the_settings_line_says_what_each_mode_does_with_the_recorded_clearings() {
    let text = |file: &std::path::Path, mode: &str| {
        let out = ctxbudget()
            .arg("compare")
            .arg(file)
            .args(["--policy", "none", "--format", "markdown", "--harness-compaction", mode])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let file = fixture("session.jsonl");
    for (mode, says) in [
        (
            "simulated",
            "The 1 clearing(s) of tool results or thinking the logs recorded (Claude Code's microcompact, Anthropic's context editing) are kept",
        ),
        ("recorded", "So are the 1 clearing(s) of tool results or thinking the logs recorded"),
        ("off", "the results and thinking are sent whole, but for the sessions as recorded."),
    ] {
        assert!(text(&file, mode).contains(says), "{mode}: {}", text(&file, mode));
    }
    let dir = tempfile::tempdir().unwrap();
    assert!(!text(&without_boundary(&dir), "simulated").contains("clearing"));
}

/// `reuse.jsonl` (README): `src/config/loader_settings.rs` is in toolu_1's output (39 bytes, not
/// split) and in toolu_2's content (396 bytes, split at 256); the boundary clears toolu_1 before
/// request 3, whose response reads the file. `keep-results:n=1` prunes toolu_2's content at
/// request 3: the only copy left was in the cleared result.
#[test]
fn a_term_only_a_cleared_result_still_held_is_lost_with_the_pruned_one() {
    let file = fixture("reuse.jsonl");
    let reused = |file: &std::path::Path, extra: &[&str]| {
        let report = compare(file, "keep-results:n=1", extra);
        let r = row(&report, "keep-results:n=1");
        (r["pruned_results"].as_u64().unwrap(), r["reused_results"].as_u64().unwrap())
    };
    assert_eq!(reused(&file, &[]), (1, 1), "simulated keeps the clearing");
    assert_eq!(reused(&file, &["--harness-compaction", "recorded"]), (1, 1));
    // Under `off` toolu_1 is sent whole at request 3 and still holds the term.
    assert_eq!(reused(&file, &["--harness-compaction", "off"]), (1, 0));
    // So it does without the boundary line.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("microcompact_boundary")).collect();
    let path = dir.path().join("reuse.jsonl");
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    assert_eq!(reused(&path, &[]), (1, 0));
}
