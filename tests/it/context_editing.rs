//! Anthropic's server-side context editing (`context_management.applied_edits` on a response)
//! replayed as recorded: the fixtures of `tests/fixtures/anthropic-context-editing/` (their README
//! gives every number), a Claude Code session and an API cassette, through the binary.

use serde_json::Value;

use crate::common::{replay_none_per_request as replay, root, timeline_contexts as contexts};

fn fixture(name: &str) -> std::path::PathBuf {
    root().join("tests/fixtures/anthropic-context-editing").join(name)
}

const UNCALIBRATED: [&str; 6] = ["--tokenizer", "estimate", "--threshold", "100000", "--overhead", "0"];
const CALIBRATED: [&str; 4] = ["--tokenizer", "estimate", "--threshold", "100000"];

fn column(report: &Value, key: &str) -> Vec<Option<u64>> {
    report["runs"][0]["timeline"]
        .as_array()
        .expect("a timeline")
        .iter()
        .map(|row| row[key].as_u64())
        .collect()
}

/// Takes the `context_management` field out of a Claude Code line's message or a cassette
/// interaction's response; whether there was one.
fn strip(v: &mut Value) -> bool {
    ["/message", "/response/parsed_body"].iter().any(|p| match v.pointer_mut(p) {
        Some(Value::Object(m)) => m.remove("context_management").is_some(),
        _ => false,
    })
}

/// `file` with its `context_management` fields taken out, in a temporary file of the same name.
fn without_edits(dir: &tempfile::TempDir, name: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let stripped: String = text
        .lines()
        .map(|l| {
            let comma = if l.ends_with(',') { "," } else { "" };
            let mut v: Value = serde_json::from_str(l.trim_end_matches(',')).unwrap_or(Value::Null);
            if strip(&mut v) { format!("{v}{comma}\n") } else { format!("{l}\n") }
        })
        .collect();
    assert_ne!(stripped, text, "{name} reports an edit");
    let path = dir.path().join(name);
    std::fs::write(&path, stripped).unwrap();
    path
}

#[test]
fn the_request_whose_response_reports_two_cleared_tool_uses_drops_by_their_results() {
    let dir = tempfile::tempdir().unwrap();
    for (name, format) in [("session.jsonl", "claude-code"), ("cassette.json", "cassette")] {
        let (cleared, warnings) = replay(&fixture(name), &UNCALIBRATED);
        assert_eq!(cleared["runs"][0]["format"].as_str(), Some(format), "{name}");
        assert_eq!(contexts(&cleared), [2, 107, 312, 43], "{name}");
        assert!(!warnings.contains("context_management"), "{name}: {warnings}");
        let (kept, _) = replay(&without_edits(&dir, name), &UNCALIBRATED);
        assert_eq!(contexts(&kept), [2, 107, 312, 327], "{name} without the edit");
        // Request 3 itself sends the two oldest results (100 + 200) as two 8-token placeholders.
        let last = &cleared["runs"][0]["timeline"][3];
        assert_eq!(last["placeholders"].as_u64(), Some(16), "{name}: {last}");
        assert_eq!(last["pruned_tokens"].as_u64(), Some(0), "{name}: the provider cleared them, no policy");
    }
}

#[test]
fn the_calibrated_replay_meets_prompts_that_record_the_edit() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["session.jsonl", "cassette.json"] {
        let (cleared, _) = replay(&fixture(name), &CALIBRATED);
        let recorded: Vec<u64> =
            column(&cleared, "recorded_input_tokens").into_iter().map(Option::unwrap).collect();
        assert_eq!(recorded, [1002, 1107, 1312, 1043], "{name}");
        assert_eq!(contexts(&cleared), recorded, "{name}: the calibrated replay meets every recorded prompt");
        let (kept, _) = replay(&without_edits(&dir, name), &CALIBRATED);
        let last = contexts(&kept)[3];
        assert!(last > 1043 + 200, "{name}: without the edit the last request is replayed {last}");
    }
}

#[test]
fn an_empty_list_of_applied_edits_changes_nothing() {
    // Every response of `empty.jsonl` reports `"applied_edits": []`, as one corpus session does.
    let (report, warnings) = replay(&fixture("empty.jsonl"), &UNCALIBRATED);
    assert_eq!(contexts(&report), [2, 107, 312, 327]);
    assert!(!warnings.contains("context_management"), "{warnings}");
    let dir = tempfile::tempdir().unwrap();
    let (plain, _) = replay(&without_edits(&dir, "empty.jsonl"), &UNCALIBRATED);
    assert_eq!(report["runs"][0]["timeline"], plain["runs"][0]["timeline"]);
}

#[test]
fn malformed_fields_are_named_with_file_line_and_field_and_the_valid_count_is_kept() {
    let (report, warnings) = replay(&fixture("malformed.jsonl"), &UNCALIBRATED);
    // Line 8's count (1) is valid though its token figure is not: `toolu_1` is cleared.
    assert_eq!(contexts(&report), [2, 107, 312, 235]);
    for problem in [
        "malformed.jsonl:4: `context_management.applied_edits` is a string, not a list (ignored)",
        "malformed.jsonl:6: `context_management.applied_edits[0].cleared_tool_uses` is -2 (a negative number), \
         not a count (the edit is ignored)",
        "malformed.jsonl:8: `context_management.applied_edits[0].cleared_input_tokens` is \"100\" (a string), \
         not a count (ignored; the count is kept)",
    ] {
        assert!(warnings.contains(problem), "{problem} in:\n{warnings}");
    }
}

/// `thinking.jsonl`: three thinking turns; request 3's response reports one thinking turn
/// cleared, request 4's two and one tool use (README).
#[test]
fn the_requests_whose_responses_report_cleared_thinking_turns_drop_by_their_thinking() {
    let (cleared, warnings) = replay(&fixture("thinking.jsonl"), &UNCALIBRATED);
    assert!(!warnings.contains("context_management"), "{warnings}");
    // Request 3 without turn one's thinking (100 + 50); request 4 also without turn two's (20)
    // and with `toolu_1` (10) sent as the placeholder (8).
    assert_eq!(contexts(&cleared), [2, 117, 169, 54, 34]);
    assert_eq!(column(&cleared, "thinking"), [Some(0), Some(100), Some(150), Some(20), Some(0)]);
    let run = &cleared["runs"][0];
    assert_eq!(
        (run["cleared_results"].as_u64(), run["cleared_thinking_blocks"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(run["timeline"][3]["pruned_tokens"].as_u64(), Some(0), "the provider cleared it, no policy");
    let dir = tempfile::tempdir().unwrap();
    let (kept, _) = replay(&without_edits(&dir, "thinking.jsonl"), &UNCALIBRATED);
    assert_eq!(contexts(&kept), [2, 117, 169, 204, 206], "without the edits");
    assert_eq!(kept["runs"][0].get("cleared_thinking_blocks"), None, "left out when 0");
}

#[test]
fn the_calibrated_replay_meets_prompts_that_record_the_thinking_clearing() {
    let (cleared, _) = replay(&fixture("thinking.jsonl"), &CALIBRATED);
    let recorded: Vec<u64> =
        column(&cleared, "recorded_input_tokens").into_iter().map(Option::unwrap).collect();
    assert_eq!(recorded, [1002, 1117, 1169, 1054, 1034]);
    assert_eq!(contexts(&cleared), recorded, "the calibrated replay meets every recorded prompt");
    let dir = tempfile::tempdir().unwrap();
    let (kept, _) = replay(&without_edits(&dir, "thinking.jsonl"), &CALIBRATED);
    let last = contexts(&kept)[3];
    assert!(last > 1054 + 100, "without the edit request 3 is replayed {last}");
}

#[test]
fn harness_compaction_off_sends_the_thinking_and_the_other_modes_keep_the_recorded_clearing() {
    for (mode, want, blocks) in [
        ("recorded", [2, 117, 169, 54, 34], Some(3)),
        ("simulated", [2, 117, 169, 54, 34], Some(3)),
        ("off", [2, 117, 169, 204, 206], None),
    ] {
        let args = [&UNCALIBRATED[..], &["--harness-compaction", mode]].concat();
        let (report, _) = replay(&fixture("thinking.jsonl"), &args);
        assert_eq!(contexts(&report), want, "{mode}");
        assert_eq!(report["runs"][0]["cleared_thinking_blocks"].as_u64(), blocks, "{mode}");
    }
}

#[test]
fn a_compaction_of_the_replay_keeps_only_the_thinking_still_in_its_context_to_clear() {
    // The policy compacts before request 2 (169 > 150) to a 7-token summary: turn one's thinking
    // is summarised away, so request 3's edit clears nothing and request 4's only turn two's (20).
    let args = [
        &UNCALIBRATED[..],
        &["--policy", "compact:anthropic-sdk:context_token_threshold=150,summary_tokens=7"],
    ]
    .concat();
    let out = crate::common::ctxbudget()
        .arg("replay")
        .arg(fixture("thinking.jsonl"))
        .args(["--format", "json", "--per-request"])
        .args(&args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(contexts(&report), [2, 117, 7, 7 + 20 + 5 + 10, 7 + 20 + 5 + 10 + 2 - 20]);
    assert_eq!(report["runs"][0]["cleared_thinking_blocks"].as_u64(), Some(1));
}

#[test]
fn malformed_thinking_edits_are_named_with_file_line_and_field_and_the_valid_count_is_kept() {
    let (report, warnings) = replay(&fixture("thinking-malformed.jsonl"), &UNCALIBRATED);
    // Line 9's edit is ignored; line 11's count (2) is kept though its token figure is not.
    assert_eq!(contexts(&report), [2, 117, 169, 204, 34]);
    for problem in [
        "thinking-malformed.jsonl:9: `context_management.applied_edits[0].cleared_thinking_turns` is \"1\" \
         (a string), not a count (the edit is ignored)",
        "thinking-malformed.jsonl:11: `context_management.applied_edits[0].cleared_input_tokens` is -5 \
         (a negative number), not a count (ignored; the count is kept)",
    ] {
        assert!(warnings.contains(problem), "{problem} in:\n{warnings}");
    }
}

#[test]
fn a_policy_that_counts_the_messages_sees_the_cleared_thinking_gone() {
    // LangChain's trigger counts the messages one by one: at 130 it fires at requests 1 and 2
    // and, with the recorded thinking clearing applied, not at requests 3 and 4 (54 and 34 sent,
    // nothing cleared); under `off` the thinking stays and it fires there too.
    for (mode, want) in [("recorded", [2, 109, 161, 54, 34]), ("off", [2, 109, 161, 188, 190])] {
        let out = crate::common::ctxbudget()
            .arg("replay")
            .arg(fixture("thinking.jsonl"))
            .args(["--policy", "langchain:trigger=130,keep=0", "--format", "json", "--per-request"])
            .args(UNCALIBRATED)
            .args(["--harness-compaction", mode])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(contexts(&report), want, "{mode}");
    }
}
