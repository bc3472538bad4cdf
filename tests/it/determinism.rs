//! The output does not depend on the thread count or on the order of the input files.
//!
//! **What "the same" means (decision).** At 1 and at N threads, with the inputs in the same order,
//! every command writes the same bytes. When the input files come in another order:
//! - each file's and each conversation's results are identical (the same bytes in the JSON), and
//!   they come in the new input order: output follows input;
//! - totals over all files are equal: counts (tokens, requests, events) exactly, and numbers computed
//!   in floating point (costs, ratios, mean errors) to 9 significant digits, because a sum of floats
//!   depends on the order of its terms in the last bits (`compare` costs were seen to differ in the
//!   16th digit). Rows keep the order the command gives them; rows about files or conversations
//!   follow the input order, so they are compared as a set.
//!
//! Proptest picks the orders; each case runs the binary, so there are few cases. Each command's
//! output on the files in their own order at one thread is computed once and is the reference of
//! both the thread-count test and every case.

use crate::common;

use std::sync::OnceLock;

use common::{ctxbudget, root};
use proptest::prelude::*;
use serde_json::Value;

/// Inputs in six formats (the fixtures and a bundled trace).
const FILES: &[&str] = &[
    "tests/fixtures/native/small.jsonl",
    "tests/fixtures/codex/rollout-0.40.jsonl",
    "tests/fixtures/claude-stream/agent_log_raw.txt",
    "tests/fixtures/openai-chat/messages.json",
    "tests/fixtures/gemini-cli/session-merged.json",
    "tests/fixtures/swe-agent/v1-function-calling.traj",
    "traces/build-and-test.jsonl",
];

/// The analysis commands, each with its JSON output.
const COMMANDS: &[&[&str]] = &[
    &[
        "replay",
        "--per-request",
        "--policy",
        "none",
        "--policy",
        "keep-turns:n=1",
        "--policy",
        "anthropic:trigger=500,keep=1",
    ],
    &["sweep"],
    &["compare"],
    &["cost"],
    &["calibrate"],
    &["reconcile"],
];

fn output(command: &[&str], files: &[&str], jobs: &str) -> Vec<u8> {
    let out = ctxbudget()
        .args(&command[..1])
        .args(files)
        .args(&command[1..])
        .args(["--format", "json", "-j", jobs])
        .output()
        .unwrap();
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Each command's output on `FILES` in that order at one thread, in `COMMANDS` order: run once,
/// whichever test asks first.
fn at_one_thread() -> &'static [Vec<u8>] {
    static OUTPUTS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    OUTPUTS.get_or_init(|| COMMANDS.iter().map(|command| output(command, FILES, "1")).collect())
}

#[test]
fn every_command_writes_the_same_bytes_at_one_and_at_four_threads() {
    for (command, one) in COMMANDS.iter().zip(at_one_thread()) {
        assert_eq!(*one, output(command, FILES, "4"), "{command:?}");
    }
}

#[test]
fn the_report_is_the_same_bytes_at_one_and_at_four_threads() {
    let dir = tempfile::tempdir().unwrap();
    let files_of = |jobs: &str| {
        let out = dir.path().join(format!("report-{jobs}"));
        ctxbudget().arg("report").args(FILES).arg("--out").arg(&out).args(["-j", jobs]).assert().success();
        let files = common::files_under(&out, &[""]);
        files
            .iter()
            .map(|p| (p.strip_prefix(&out).unwrap().to_owned(), std::fs::read(p).unwrap()))
            .collect::<Vec<_>>()
    };
    let (one, four) = (files_of("1"), files_of("4"));
    assert!(one.len() > 10, "{} files", one.len());
    assert_eq!(one.len(), four.len());
    for ((name, a), (other, b)) in one.iter().zip(&four) {
        assert_eq!(name, other);
        assert!(a == b, "{} differs", name.display());
    }
}

/// `v` with every float written to 9 significant digits and every array sorted, for comparing
/// outputs whose file-level rows come in input order and whose float sums may differ in the last
/// bits.
fn normalised(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => Value::String(format!("{:.8e}", n.as_f64().unwrap())),
        Value::Array(items) => {
            let mut items: Vec<Value> = items.iter().map(normalised).collect();
            items.sort_by_key(|i| i.to_string());
            Value::Array(items)
        }
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), normalised(v))).collect()),
        other => other.clone(),
    }
}

/// The replay runs of each trace, in the order the traces come.
fn runs_by_trace(bytes: &[u8]) -> Vec<(String, Vec<Value>)> {
    let v: Value = serde_json::from_slice(bytes).unwrap();
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    for run in v["runs"].as_array().unwrap() {
        let trace = run["trace"].as_str().unwrap().to_owned();
        match out.last_mut() {
            Some((t, runs)) if *t == trace => runs.push(run.clone()),
            _ => out.push((trace, vec![run.clone()])),
        }
    }
    out
}

proptest! {
    #![proptest_config(crate::common::proptest_config(6))]

    #[test]
    fn another_input_order_gives_the_same_results_in_that_order(
        order in Just((0..FILES.len()).collect::<Vec<_>>()).prop_shuffle(),
        jobs in prop_oneof![Just("2"), Just("3")],
    ) {
        // The reference ran at one thread: each case changes the thread count and the order at once.
        let reference = at_one_thread();
        let shuffled: Vec<&str> = order.iter().map(|&i| FILES[i]).collect();
        // Replay: each file's runs are identical, and they follow the input order.
        let reference_runs = runs_by_trace(&reference[0]);
        let got = runs_by_trace(&output(COMMANDS[0], &shuffled, jobs));
        let traces: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
        prop_assert_eq!(&traces, &shuffled);
        for (trace, runs) in &got {
            let (_, want) = reference_runs.iter().find(|(t, _)| t == trace).unwrap();
            prop_assert_eq!(runs, want, "{}", trace);
        }
        // The analyses: the same rows and totals.
        for (command, one) in COMMANDS.iter().zip(reference).skip(1) {
            let a: Value = serde_json::from_slice(one).unwrap();
            let b: Value = serde_json::from_slice(&output(command, &shuffled, jobs)).unwrap();
            prop_assert_eq!(normalised(&a), normalised(&b), "{:?}", command);
        }
    }
}

#[test]
fn the_files_exist() {
    for f in FILES {
        assert!(root().join(f).is_file(), "{f}");
    }
}
