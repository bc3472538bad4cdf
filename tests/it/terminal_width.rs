//! Terminal tables fit the terminal: every line of every command's table output is at most
//! `COLUMNS` wide (100 when unset), measured in terminal columns (unicode width, not bytes), on
//! traces/ and on corpus files with long paths; `--wide` still draws every column the CSV has.

use std::path::{Path, PathBuf};

use unicode_width::UnicodeWidthStr;

use crate::common::{self, ctxbudget};

/// Each command's arguments whose output is a terminal table.
const COMMANDS: [&[&str]; 9] = [
    &["replay"],
    &["replay", "--per-request"],
    &["sweep"],
    &["compare"],
    &["cost"],
    &["calibrate"],
    &["reconcile"],
    &["reconcile", "--per-request"],
    &["recommend"],
];

/// stdout of `ctxbudget ARGS INPUT --tokenizer estimate`, with `COLUMNS` as given (or unset).
fn table(args: &[&str], input: &Path, columns: Option<&str>, wide: bool) -> String {
    let mut cmd = ctxbudget();
    cmd.args(args).arg(input).args(["--tokenizer", "estimate"]);
    if wide {
        cmd.arg("--wide");
    }
    match columns {
        Some(c) => cmd.env("COLUMNS", c),
        None => cmd.env_remove("COLUMNS"),
    };
    let out = cmd.output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?} {}: {out:?}", input.display());
    String::from_utf8(out.stdout).unwrap()
}

/// The inputs: traces/, and a corpus folder whose files lie five folders deep.
fn inputs() -> Vec<PathBuf> {
    let mut inputs = vec![common::root().join("traces")];
    inputs.extend(common::corpus("claude-code/codemie-code"));
    inputs
}

fn widest(text: &str) -> (usize, &str) {
    text.lines().map(|l| (l.width(), l)).max_by_key(|(w, _)| *w).unwrap_or((0, ""))
}

#[test]
fn every_table_fits_in_100_columns_when_columns_is_unset() {
    for input in inputs() {
        for args in COMMANDS {
            let out = table(args, &input, None, false);
            assert!(out.contains('┌'), "{args:?} {}: a table\n{out}", input.display());
            let (width, line) = widest(&out);
            assert!(width <= 100, "{args:?} {}: {width} columns:\n{line}\n\n{out}", input.display());
        }
    }
}

#[test]
fn every_table_fits_the_width_columns_gives() {
    for input in inputs() {
        for args in COMMANDS {
            let out = table(args, &input, Some("80"), false);
            let (width, line) = widest(&out);
            assert!(width <= 80, "{args:?} {}: {width} columns:\n{line}", input.display());
        }
    }
    // Not a number: the default width.
    let traces = common::root().join("traces");
    let out = table(&["compare"], &traces, Some("wide"), false);
    assert!(widest(&out).0 <= 100);
}

/// The columns each command's tables had before tables were fitted, in order, table by table.
fn every_column(args: &[&str]) -> Vec<&'static [&'static str]> {
    use ctxbudget::export::{analysis as a, columns as c, recommend as m, reconcile as r};
    match args {
        ["replay"] => vec![&c::RUNS_BRIEF_HEADERS, &c::TOTALS_HEADERS],
        ["replay", "--per-request"] => vec![&c::TIMELINE_HEADERS, &c::TOTALS_HEADERS],
        ["sweep"] => vec![&a::SWEEP_HEADERS, &a::SWEEP_TOOL_HEADERS],
        ["compare"] => vec![&a::COMPARE_HEADERS],
        ["cost"] => vec![&a::COST_HEADERS, &a::COST_EVENT_HEADERS],
        ["calibrate"] => vec![&a::CALIBRATION_HEADERS],
        ["reconcile"] => vec![&r::FIT_HEADERS, &r::FORMAT_HEADERS, &r::REQUEST_HEADERS],
        ["reconcile", "--per-request"] => {
            vec![&r::FIT_HEADERS, &r::FORMAT_HEADERS, &r::REQUEST_HEADERS, &r::REQUEST_HEADERS]
        }
        ["recommend"] => vec![&m::RUNNERS_UP_HEADERS, &m::TOOLS_HEADERS, &m::BEST_HEADERS],
        other => panic!("no columns listed for {other:?}"),
    }
}

/// A table's header with what runs that compacted add left out (docs/compaction.md, "Compaction
/// in the outputs"): the five columns appended to a table, and the tables of compacting runs and
/// of summarisation calls (`None`).
fn without_compactions(mut header: Vec<String>) -> Option<Vec<String>> {
    use ctxbudget::export::compaction::{COMPACTION_HEADERS, RUNS_HEADERS};
    if header == RUNS_HEADERS
        || header.last().is_some_and(|h| h == "cost_usd")
            && header.contains(&"read_tokens".into())
            && header.contains(&"request".into())
    {
        return None;
    }
    if header.len() > COMPACTION_HEADERS.len()
        && header[header.len() - COMPACTION_HEADERS.len()..] == COMPACTION_HEADERS
    {
        header.truncate(header.len() - COMPACTION_HEADERS.len());
    }
    Some(header)
}

#[test]
fn wide_tables_keep_every_column_in_one_header_line() {
    for input in inputs() {
        for args in COMMANDS {
            let wide = table(args, &input, Some("80"), true);
            let headers: Vec<Vec<String>> = wide
                .lines()
                .zip(wide.lines().skip(1))
                .filter(|(_, rule)| rule.starts_with('╞'))
                .map(|(header, _)| {
                    header.split(['│', '┆']).map(|c| c.trim().to_owned()).filter(|c| !c.is_empty()).collect()
                })
                .filter_map(without_compactions)
                .collect();
            let expected: Vec<Vec<String>> =
                every_column(args).iter().map(|t| t.iter().map(|h| h.to_string()).collect()).collect();
            assert_eq!(headers, expected, "{args:?} {}:\n{wide}", input.display());
            // Fitted, the same tables leave some columns out and are narrower.
            let fitted = table(args, &input, Some("80"), false);
            assert!(widest(&wide).0 > widest(&fitted).0, "{args:?} {}", input.display());
        }
    }
}

/// The fitted table docs/cli.md shows ("Terminal tables") is what `replay` prints.
#[test]
fn the_fitted_table_of_the_docs_is_what_replay_prints() {
    let command = "ctxbudget replay traces/explore-split.jsonl traces/non-ascii-review.jsonl --policy none --policy keep-turns:n=3";
    let page = std::fs::read_to_string(common::root().join("docs/cli.md")).unwrap();
    let shown: Vec<&str> = page
        .lines()
        .skip_while(|l| *l != format!("$ {command}"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .collect();
    assert!(!shown.is_empty(), "docs/cli.md shows `{command}`");
    let mut cmd = ctxbudget();
    cmd.args(command.split(' ').skip(1)).env_remove("COLUMNS");
    let printed = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
    assert_eq!(shown, printed.lines().collect::<Vec<_>>());
}
