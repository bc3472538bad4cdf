//! The hand-made fixtures of the agent trajectory formats (`tests/fixtures/<format>/`), each read
//! through format detection and checked against the table in the `EXPECTED.md` beside it:
//! format, conversations, requests, requests with a recorded size, tool results, recorded total.
//! Every tool result must also answer a call made earlier in its conversation and name its tool.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ctxbudget::input;
use ctxbudget::model::{Conversation, Item, RecordedTotal};

const FORMATS: [&str; 6] = ["swe-agent", "mini-swe-agent", "openhands", "gemini-cli", "cline", "codex-exec"];

/// One row of an `EXPECTED.md` table.
#[derive(Debug)]
struct Expected {
    file: String,
    format: String,
    conversations: usize,
    requests: usize,
    recorded_requests: usize,
    tool_results: usize,
    total: Option<RecordedTotal>,
}

fn number(cell: &str, what: &str) -> usize {
    cell.parse().unwrap_or_else(|_| panic!("`{cell}` is not a number ({what})"))
}

/// `none` or `N over C calls`.
fn total(cell: &str) -> Option<RecordedTotal> {
    if cell == "none" {
        return None;
    }
    let words: Vec<&str> = cell.split(' ').collect();
    match words.as_slice() {
        [n, "over", c, "calls"] => Some(RecordedTotal {
            input_tokens: number(n, "recorded total") as u64,
            calls: number(c, "calls") as u64,
        }),
        _ => panic!("recorded total `{cell}` is neither `none` nor `N over C calls`"),
    }
}

fn expected(dir: &Path) -> Vec<Expected> {
    let text = std::fs::read_to_string(dir.join("EXPECTED.md")).expect("EXPECTED.md beside the fixtures");
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 7, "{l}");
            Expected {
                file: cells[0].trim_matches('`').to_owned(),
                format: cells[1].to_owned(),
                conversations: number(cells[2], "conversations"),
                requests: number(cells[3], "requests"),
                recorded_requests: number(cells[4], "requests with recorded size"),
                tool_results: number(cells[5], "tool results"),
                total: total(cells[6]),
            }
        })
        .collect()
}

fn recorded_requests(c: &Conversation) -> usize {
    c.items.iter().filter(|i| matches!(i, Item::Request(r) if r.usage.is_some())).count()
}

/// Every result answers a call made before it and carries that call's name.
fn assert_results_are_linked(file: &Path, c: &Conversation) {
    let mut calls = BTreeSet::new();
    for item in &c.items {
        match item {
            Item::ToolCall { call_id, name, .. } => {
                calls.insert((call_id.clone(), name.clone()));
            }
            Item::ToolResult(r) => {
                let name = r
                    .name
                    .clone()
                    .unwrap_or_else(|| panic!("{}: result {} has no name", file.display(), r.call_id));
                assert!(
                    calls.contains(&(r.call_id.clone(), name.clone())),
                    "{}: result {} ({name}) answers no earlier call",
                    file.display(),
                    r.call_id
                );
            }
            _ => {}
        }
    }
}

#[test]
fn every_agent_fixture_reads_as_its_expected_md_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut checked = 0;
    for format in FORMATS {
        let dir = root.join(format);
        let rows = expected(&dir);
        assert!(!rows.is_empty(), "{}: no rows", dir.display());
        for row in rows {
            let path: PathBuf = dir.join(&row.file);
            let trace = input::load(&path, None).unwrap_or_else(|e| panic!("{e}"));
            let c = &trace.conversations;
            let got = (
                trace.format,
                c.len(),
                c.iter().map(Conversation::requests).sum::<usize>(),
                c.iter().map(recorded_requests).sum::<usize>(),
                c.iter().map(Conversation::tool_results).sum::<usize>(),
                c.iter().find_map(|c| c.recorded_total),
            );
            let want = (
                row.format.as_str(),
                row.conversations,
                row.requests,
                row.recorded_requests,
                row.tool_results,
                row.total,
            );
            assert_eq!(got, want, "{} (format, conversations, requests, recorded, results, total)", row.file);
            for conversation in c {
                assert!(!conversation.id.is_empty(), "{}: a conversation without a name", row.file);
                assert_results_are_linked(&path, conversation);
            }
            assert!(trace.warnings.is_empty(), "{}: {:?}", row.file, trace.warnings);
            checked += 1;
        }
    }
    assert_eq!(checked, 9, "fixtures listed in the EXPECTED.md files");
}
