//! The hand-made fixtures of the API wire formats (`tests/fixtures/{openai-chat,
//! anthropic-messages,openai-responses,cassette,inspect}/`) import with the counts their
//! `EXPECTED.md` tables list, are recognised by exactly one format, and run through the binary.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use ctxbudget::format::{self, HEAD_BYTES};
use ctxbudget::model::{Item, Trace};

const DIRS: [&str; 5] = ["openai-chat", "anthropic-messages", "openai-responses", "cassette", "inspect"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// One row of an `EXPECTED.md` table.
#[derive(Debug)]
struct Row {
    file: String,
    format: String,
    conversation: String,
    requests: usize,
    tool_results: usize,
    /// Recorded prompt size per request, `None` for `-`.
    recorded: Vec<Option<u64>>,
}

fn expected(dir: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(fixtures().join(dir).join("EXPECTED.md")).unwrap();
    text.lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("| file") && !l.starts_with("|---"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 6, "{dir}/EXPECTED.md: bad row {l}");
            Row {
                file: cells[0].to_owned(),
                format: cells[1].to_owned(),
                conversation: cells[2].to_owned(),
                requests: cells[3].parse().unwrap(),
                tool_results: cells[4].parse().unwrap(),
                recorded: cells[5].split_whitespace().map(|s| s.parse().ok()).collect(),
            }
        })
        .collect()
}

fn recorded_sizes(items: &[Item]) -> Vec<Option<u64>> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Request(r) => Some(r.usage.map(|u| u.input_tokens)),
            _ => None,
        })
        .collect()
}

/// The formats whose `detect` accepts the file, as auto-detection would read it.
fn detectors(path: &Path) -> Vec<&'static str> {
    let bytes = std::fs::read(path).unwrap();
    let whole = bytes.len() <= HEAD_BYTES;
    format::with_head(path, &bytes, whole, |head| {
        format::all().into_iter().filter(|f| f.detect(head)).map(|f| f.name()).collect()
    })
}

#[test]
fn every_fixture_imports_with_the_counts_its_expected_table_lists() {
    for dir in DIRS {
        let rows = expected(dir);
        assert!(!rows.is_empty(), "{dir}/EXPECTED.md lists nothing");
        let mut files: Vec<&str> = rows.iter().map(|r| r.file.as_str()).collect();
        files.dedup();
        for file in files {
            let path = fixtures().join(dir).join(file);
            let trace: Trace = ctxbudget::input::load(&path, None).unwrap();
            let mine: Vec<&Row> = rows.iter().filter(|r| r.file == file).collect();
            assert_eq!(trace.format, mine[0].format, "{dir}/{file}");
            let ids: Vec<&str> = trace.conversations.iter().map(|c| c.id.as_str()).collect();
            let want: Vec<&str> = mine.iter().map(|r| r.conversation.as_str()).collect();
            assert_eq!(ids, want, "{dir}/{file}: conversations");
            for (c, row) in trace.conversations.iter().zip(&mine) {
                assert_eq!(c.requests(), row.requests, "{dir}/{file} {}: requests", c.id);
                assert_eq!(c.tool_results(), row.tool_results, "{dir}/{file} {}: tool results", c.id);
                assert_eq!(recorded_sizes(&c.items), row.recorded, "{dir}/{file} {}: recorded sizes", c.id);
            }
        }
    }
}

#[test]
fn every_fixture_is_recognised_by_exactly_one_format() {
    for dir in DIRS {
        for row in expected(dir) {
            let path = fixtures().join(dir).join(&row.file);
            assert_eq!(detectors(&path), [row.format.as_str()], "{}", path.display());
        }
    }
}

#[test]
fn every_tool_result_of_the_fixtures_carries_its_tool_name() {
    for dir in DIRS {
        for row in expected(dir) {
            let trace = ctxbudget::input::load(&fixtures().join(dir).join(&row.file), None).unwrap();
            for c in &trace.conversations {
                for item in &c.items {
                    if let Item::ToolResult(r) = item {
                        assert!(
                            r.name.as_deref().is_some_and(|n| !n.is_empty()),
                            "{dir}/{}: {r:?}",
                            row.file
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_inspect_fixture_resolves_attachments_and_sends_tool_errors_as_inspect_does() {
    let trace = ctxbudget::input::load(&fixtures().join("inspect/eval-log.json"), None).unwrap();
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
    let items = &trace.conversations[0].items;
    let texts: Vec<String> = items
        .iter()
        .filter_map(|i| match i {
            Item::System { text } | Item::User { text, .. } | Item::Assistant { text } => Some(text.clone()),
            Item::ToolResult(r) => Some(r.output.full_text().into_owned()),
            _ => None,
        })
        .collect();
    assert!(texts.iter().all(|t| !t.contains("attachment://")), "{texts:?}");
    assert!(texts.iter().any(|t| t.starts_with("You are a careful software engineer.")));
    assert!(texts.iter().any(|t| t.contains("FAILED tests/test_calc.py::test_divide")));
    let timeout = items
        .iter()
        .find_map(|i| match i {
            Item::ToolResult(r) if r.is_error => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(timeout.output.full_text(), "Error: Command timed out before completing.");
    assert_eq!(timeout.name.as_deref(), Some("python"));
}

#[test]
fn the_binary_replays_a_fixture_directory_and_warns_about_skipped_interactions() {
    let out = Command::cargo_bin("ctxbudget")
        .unwrap()
        .args(["replay", "--policy", "none", "--format", "csv"])
        .arg(fixtures().join("cassette"))
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(stdout.lines().filter(|l| l.contains("chat-and-anthropic.yaml")).count(), 2, "{stdout}");
    assert!(
        stderr.contains("interactions[1]: `https://api.openai.com/v1/embeddings` is not an LLM call"),
        "{stderr}"
    );
}

#[test]
fn a_file_forced_into_the_wrong_format_fails_naming_the_file_and_the_message() {
    let path = fixtures().join("anthropic-messages/request-body.json");
    let out = Command::cargo_bin("ctxbudget")
        .unwrap()
        .args(["replay", "--input-format", "openai-responses"])
        .arg(&path)
        .assert()
        .code(1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("request-body.json: the object has neither `input` (a request body) nor `output`"),
        "{stderr}"
    );
}
