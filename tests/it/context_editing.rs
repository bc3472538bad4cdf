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
