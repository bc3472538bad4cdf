//! Black-box tests of the `ctxbudget` binary: arguments in, bytes and exit codes out, JSON read back
//! through the strict result types.

use crate::common;

use std::collections::BTreeMap;

use common::{ctxbudget, root};
use ctxbudget::result::ReplayReport;
use predicates::prelude::*;
use serde::Deserialize;

const SMALL: &str = "tests/fixtures/native/small.jsonl";

#[derive(Debug, Deserialize)]
struct Expected {
    contexts: Vec<u64>,
    peak: u64,
    total: u64,
    #[serde(rename = "final")]
    final_context: u64,
    split_results: usize,
}

fn report(args: &[&str]) -> ReplayReport {
    let out = ctxbudget().args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the JSON output reads back through the strict types")
}

#[test]
fn replay_of_the_small_fixture_matches_the_independent_python_oracle() {
    let text = std::fs::read_to_string(root().join("tests/fixtures/native/small.expected.json")).unwrap();
    let expected: BTreeMap<String, Expected> = serde_json::from_str(&text).unwrap();
    assert_eq!(expected.len(), 4);
    for (key, want) in expected {
        let (policy, threshold) = key.split_once('@').unwrap();
        let r = report(&[
            "replay",
            SMALL,
            "--tokenizer",
            "estimate",
            "--threshold",
            threshold,
            "--policy",
            policy,
            "--format",
            "json",
            "--per-request",
        ]);
        assert_eq!(r.runs.len(), 1, "{key}");
        let run = &r.runs[0];
        let contexts: Vec<u64> =
            run.timeline.as_ref().unwrap().iter().map(|row| row.context_tokens).collect();
        assert_eq!(contexts, want.contexts, "{key}");
        assert_eq!(run.peak_context_tokens, want.peak, "{key}");
        assert_eq!(run.total_input_tokens, want.total, "{key}");
        assert_eq!(run.final_context_tokens, want.final_context, "{key}");
        assert_eq!(run.split_results, want.split_results, "{key}");
        assert_eq!((run.requests, run.tool_results), (5, 3), "{key}");
        assert_eq!(run.recorded_input_tokens, Some(92), "{key}: 40 + 52 recorded");
        assert_eq!(run.recorded_requests, 2, "{key}");
    }
}

#[test]
fn every_timeline_row_is_the_sum_of_its_categories() {
    let r = report(&["replay", "traces", "--format", "json", "--per-request", "--policy", "keep-turns:n=2"]);
    assert!(!r.runs.is_empty());
    for run in &r.runs {
        for row in run.timeline.as_ref().unwrap() {
            assert_eq!(row.categories.total(), row.context_tokens);
            assert!(row.shared_prefix_tokens <= row.previous_context_tokens);
            // What is kept of the previous context lies between the shared prefix and both
            // contexts (keep-turns:n=2 writes no placeholder, so it never grows).
            assert!(row.shared_prefix_tokens <= row.previous_kept_tokens);
            assert!(row.previous_kept_tokens <= row.previous_context_tokens.min(row.context_tokens));
        }
    }
    // Under `none` nothing is removed: every request sends the previous context whole.
    let r = report(&["replay", "traces", "--format", "json", "--per-request", "--policy", "none"]);
    for run in &r.runs {
        for row in run.timeline.as_ref().unwrap() {
            assert_eq!(row.previous_kept_tokens, row.previous_context_tokens);
        }
    }
}

#[test]
fn replay_without_arguments_reads_the_bundled_traces() {
    // Wide enough that no path is shortened.
    let out = ctxbudget().arg("replay").env("COLUMNS", "200").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    for trace in
        ["traces/build-and-test.jsonl", "traces/explore-split.jsonl", "traces/non-ascii-review.jsonl"]
    {
        assert!(text.contains(trace), "{trace} missing from:\n{text}");
    }
    assert!(text.contains("Totals per policy"));
}

#[test]
fn a_bad_file_among_good_ones_exits_1_and_the_good_ones_are_still_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"type\":\"user\",\"text\":\"hi\"}\n{not json}\n").unwrap();
    let out = ctxbudget().args(["replay", SMALL]).arg(&bad).args(["--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: ReplayReport = serde_json::from_slice(&out.stdout).unwrap();
    assert!(r.runs.iter().all(|run| run.trace == SMALL));
    assert_eq!(r.runs.len(), 4, "the default policies on the good file");
    assert_eq!(r.errors.len(), 1);
    assert!(
        r.errors[0].ends_with(
            "bad.jsonl:2: invalid JSON: key must be a string at column 2; fix or delete this line (only the last \
             line of a session still being written may be cut off)"
        ),
        "{:?}",
        r.errors
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("error: ") && stderr.contains("bad.jsonl:2:"), "{stderr}");
}

#[test]
fn usage_errors_exit_2_and_say_what_is_valid() {
    ctxbudget().args(["replay", SMALL, "--policy", "keep-last:n=3"]).assert().code(2).stderr(
        predicate::str::contains("unknown policy `keep-last`").and(predicate::str::contains("keep-turns")),
    );
    ctxbudget()
        .args(["replay", SMALL, "--policy", "keep-turns:m=3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no parameter `m`"));
    ctxbudget().args(["replay", SMALL, "--tokenizer", "gpt2"]).assert().code(2);
    ctxbudget()
        .args(["replay", SMALL, "--output", "/no/such/dir/out.csv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/no/such/dir does not exist"));
    ctxbudget()
        .args(["replay", SMALL, "--overhead", "4294967297"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--overhead must be at most 4294967296 tokens"));
    for jobs in ["0", "257", "18446744073709551615"] {
        ctxbudget()
            .args(["replay", SMALL, "-j", jobs])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("--jobs must be between 1 and 256, not {jobs}")));
    }
}

#[test]
fn an_empty_count_cache_variable_is_no_count_cache() {
    let plain = ctxbudget().args(["replay", SMALL, "--format", "csv"]).output().unwrap();
    let out = ctxbudget()
        .args(["replay", SMALL, "--format", "csv"])
        .env("CTXBUDGET_COUNT_CACHE", "")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, plain.stdout);
}

#[test]
fn an_output_path_equal_to_an_input_is_refused_and_the_input_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.jsonl");
    std::fs::copy(root().join(SMALL), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    ctxbudget().arg("replay").arg(&input).arg("--output").arg(&input).assert().code(2);
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

#[test]
fn csv_output_goes_to_the_file_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("runs.csv");
    ctxbudget()
        .args(["replay", SMALL, "--format", "csv", "--output"])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let mut reader = csv::Reader::from_path(&out).unwrap();
    let headers = reader.headers().unwrap().clone();
    assert_eq!(&headers[0], "trace");
    assert!(headers.iter().any(|h| h == "recorded_input_tokens"));
    assert_eq!(reader.records().count(), 4);
}

#[test]
fn stdout_dash_is_stdout() {
    ctxbudget()
        .args(["replay", SMALL, "--format", "markdown", "--output", "-"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("## Runs\n\n| trace |"));
}

#[test]
fn split_shows_how_the_seed_splits_one_output() {
    ctxbudget()
        .args(["split", "--threshold", "8"])
        .write_stdin("first line\nsecond line\n")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("23 bytes > threshold 8: split (2 lines).")
                .and(predicate::str::contains("2 lines | first line…")),
        );
    let out =
        ctxbudget().args(["split", "--threshold", "100", "--json"]).write_stdin("short").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["split"], false);
    assert_eq!(v["summary"], "short");
    assert!(v["content"].is_null());
}

#[test]
fn count_shows_real_tokens_beside_the_estimate() {
    let out = ctxbudget().args(["count"]).write_stdin("hello world").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let field = |name: &str| -> String {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name} in {text}"));
        line.split_whitespace().nth(1).unwrap().to_owned()
    };
    assert_eq!(field("bytes"), "11");
    assert_eq!(field("estimate"), "2");
    assert_eq!(field("o200k"), "2");
    assert_eq!(field("cl100k"), "2");
    let dash = ctxbudget().args(["count", "-"]).write_stdin("hello world").output().unwrap();
    assert_eq!(String::from_utf8(dash.stdout).unwrap(), text, "`-` is stdin");
    ctxbudget()
        .args(["count", "--tokenizer", "cl100k"])
        .write_stdin("x")
        .assert()
        .success()
        .stdout(predicate::str::contains("cl100k").and(predicate::str::contains("o200k").not()));
}

#[test]
fn output_is_the_same_bytes_at_one_and_many_threads() {
    let run = |jobs: &str| {
        let out = ctxbudget()
            .args(["replay", "traces", SMALL, "--format", "json", "--per-request", "-j", jobs])
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    assert_eq!(run("1"), run("4"));
}

#[test]
fn policies_lists_every_policy_with_its_defaults() {
    ctxbudget().arg("policies").assert().success().stdout(
        predicate::str::contains("keep-turns")
            .and(predicate::str::contains("n=3"))
            .and(predicate::str::contains("budget")),
    );
}

#[test]
fn broken_call_links_are_warnings_naming_the_conversation_and_request() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("links.jsonl");
    std::fs::write(
        &file,
        concat!(
            "{\"type\":\"user\",\"text\":\"go\"}\n",
            "{\"type\":\"request\"}\n",
            "{\"type\":\"tool_call\",\"call_id\":\"c1\",\"name\":\"bash\",\"arguments\":\"{}\"}\n",
            "{\"type\":\"tool_result\",\"call_id\":\"zz\",\"output\":\"orphan\"}\n",
            "{\"type\":\"request\"}\n",
        ),
    )
    .unwrap();
    let out = ctxbudget().arg("replay").arg(&file).args(["--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "warnings do not fail a run");
    let r: ReplayReport = serde_json::from_slice(&out.stdout).unwrap();
    let shown = file.display().to_string();
    assert_eq!(
        r.warnings,
        [
            format!(
                "{shown}: conversation `main`: tool result for call `zz` (after request 1) has no matching call"
            ),
            format!("{shown}: conversation `main`: call `c1` (bash, after request 1) has no result"),
        ]
    );
    assert_eq!(r.runs[0].tool_results, 1, "the orphan result is still counted");
}

#[test]
fn overhead_adds_the_unrecorded_prefix_to_every_request_and_policies_see_it() {
    let text = std::fs::read_to_string(root().join("tests/fixtures/native/small.expected.json")).unwrap();
    let expected: BTreeMap<String, Expected> = serde_json::from_str(&text).unwrap();
    let base = &expected["none@8"].contexts;
    let args =
        ["replay", SMALL, "--tokenizer", "estimate", "--threshold", "8", "--format", "json", "--per-request"];
    let r = report(&[&args[..], &["--policy", "none", "--overhead", "1000"]].concat());
    let rows = r.runs[0].timeline.as_ref().unwrap();
    let contexts: Vec<u64> = rows.iter().map(|row| row.context_tokens).collect();
    assert_eq!(contexts, base.iter().map(|c| c + 1000).collect::<Vec<_>>());
    assert!(rows.iter().all(|row| row.categories.unrecorded == 1000));
    // The overhead is the start of every context, so the prompt cache serves it.
    assert!(rows[1..].iter().all(|row| row.shared_prefix_tokens >= 1000));
    // A budget of 1100 tokens is never crossed by the recorded context (peak 250)…
    let budget = ["--policy", "budget:max=1100,target=1050"];
    let without = report(&[&args[..], &budget].concat());
    assert_eq!(without.runs[0].prune_events, 0);
    // …but is once the unrecorded prefix is counted.
    let with = report(&[&args[..], &budget, &["--overhead", "1000"]].concat());
    assert_eq!(with.runs[0].prune_events, 1);
}

/// `replay --format json`, with and without `--per-request`, is written as the files are replayed;
/// its bytes are what the JSON exporter renders from the whole report (read back from the same
/// output), at any thread count, with a failed file's error in it.
#[test]
fn per_request_json_written_as_it_goes_is_the_exporters_document_of_the_same_runs() {
    use ctxbudget::export::Exporter;
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"type\": \"request\"}\nnot json\n").unwrap();
    let bad = bad.to_str().unwrap();
    let inputs = ["traces", bad, "tests/fixtures/cache-trap", SMALL];
    let per_request = |jobs: &str| {
        let out = ctxbudget()
            .args([&["replay"][..], &inputs, &["--format", "json", "--per-request", "-j", jobs]].concat())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "the bad file fails: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let streamed = per_request("2");
    assert!(streamed == per_request("1"), "-j 1 and -j 2 differ");
    let r: ReplayReport = serde_json::from_slice(&streamed).expect("the streamed JSON reads back");
    assert!(
        r.runs.len() > 3 && r.runs.iter().all(|run| run.timeline.as_ref().is_some_and(|t| !t.is_empty()))
    );
    assert!(r.errors.len() == 1 && r.errors[0].contains("bad.jsonl"), "{:?}", r.errors);
    assert!(!r.warnings.is_empty());
    // The same bytes as the exporter writes for what it holds ...
    let whole = ctxbudget::export::json::JsonExporter.render(&r, true).unwrap();
    assert!(streamed == whole, "{}", String::from_utf8_lossy(&streamed));
    // ... and the same runs, errors and warnings as the report of one row per conversation, which
    // is written as it goes too: the same bytes at any thread count, the exporter's bytes of what
    // it holds.
    let summaries = |jobs: &str| {
        let args = [&["replay"][..], &inputs, &["--format", "json", "-j", jobs]].concat();
        ctxbudget().args(args).output().unwrap().stdout
    };
    let streamed = summaries("2");
    assert!(streamed == summaries("1"), "-j 1 and -j 2 differ without --per-request");
    let summaries: ReplayReport = serde_json::from_slice(&streamed).unwrap();
    let whole = ctxbudget::export::json::JsonExporter.render(&summaries, false).unwrap();
    assert!(streamed == whole, "{}", String::from_utf8_lossy(&streamed));
    let mut without_rows = r.clone();
    without_rows.runs.iter_mut().for_each(|run| run.timeline = None);
    assert_eq!(without_rows, summaries);
}

/// `replay --per-request --format csv` is written as the files are replayed; its bytes are what the
/// CSV exporter renders from the whole report (read back from the JSON of the same run), at any
/// thread count, and to a file as to stdout.
#[test]
fn per_request_csv_written_as_it_goes_is_the_csv_of_the_whole_report() {
    use ctxbudget::export::Exporter;
    let inputs = ["traces", "tests/fixtures/cache-trap", SMALL];
    let r = report(&[&["replay"][..], &inputs, &["--format", "json", "--per-request"]].concat());
    assert!(r.runs.len() > 3 && r.runs.iter().all(|run| run.timeline.is_some()));
    let whole = ctxbudget::export::csv::CsvExporter.render(&r, true).unwrap();
    for jobs in ["1", "2"] {
        let out = ctxbudget()
            .args([&["replay"][..], &inputs, &["--format", "csv", "--per-request", "-j", jobs]].concat())
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stdout == whole, "-j {jobs}: {}", String::from_utf8_lossy(&out.stdout));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.csv");
    let out = ctxbudget()
        .args([&["replay"][..], &inputs, &["--format", "csv", "--per-request", "-o"]].concat())
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::read(&file).unwrap() == whole);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
}

/// `replay --format csv` without `--per-request` (one row per run) is written as the files are
/// replayed too; its bytes are what the CSV exporter renders from the whole report, at any thread
/// count, with several conversations per file and a file that fails.
#[test]
fn run_csv_written_as_it_goes_is_the_csv_of_the_whole_report() {
    use ctxbudget::export::Exporter;
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"type\": \"request\"}\nnot json\n").unwrap();
    let inputs = ["traces", bad.to_str().unwrap(), "tests/fixtures/cache-trap", SMALL];
    let replay = |format: &str, jobs: &str| {
        let out = ctxbudget()
            .args([&["replay"][..], &inputs, &["--format", format, "-j", jobs]].concat())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "the bad file fails");
        out.stdout
    };
    let r: ReplayReport = serde_json::from_slice(&replay("json", "2")).unwrap();
    assert!(r.runs.len() > 3 && r.errors.len() == 1);
    assert!(
        r.runs.iter().any(|a| r.runs.iter().any(|b| a.trace == b.trace && a.conversation != b.conversation))
    );
    let whole = ctxbudget::export::csv::CsvExporter.render(&r, false).unwrap();
    for jobs in ["1", "2"] {
        let streamed = replay("csv", jobs);
        assert!(streamed == whole, "-j {jobs}: {}", String::from_utf8_lossy(&streamed));
    }
}

#[test]
fn per_request_table_and_markdown_read_twice_are_the_tables_of_the_whole_report() {
    use ctxbudget::export::Exporter;
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{not json}\n").unwrap();
    let inputs = ["traces", "tests/fixtures/cache-trap", SMALL, "tests/fixtures/no-such-file"];
    let held = ctxbudget()
        .args([&["replay"][..], &inputs, &["--format", "json", "--per-request"]].concat())
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(held.status.code(), Some(1), "the bad file is an error, the others are reported");
    let r: ReplayReport = serde_json::from_slice(&held.stdout).unwrap();
    assert!(
        r.runs.len() > 3 && !r.warnings.is_empty() && r.errors.len() == 2,
        "{:?}",
        (r.warnings, r.errors)
    );
    for (format, exporter) in [
        ("table", &ctxbudget::export::table::TableExporter::new(Default::default()) as &dyn Exporter),
        ("markdown", &ctxbudget::export::markdown::MarkdownExporter),
    ] {
        let whole = exporter.render(&r, true).unwrap();
        let drawn_from_held = ctxbudget()
            .args([&["replay"][..], &inputs, &["--format", format, "--per-request"]].concat())
            .arg(&bad)
            .output()
            .unwrap();
        assert!(drawn_from_held.stdout == whole, "{format}: the exporter's bytes");
        for jobs in ["1", "2"] {
            let twice = ctxbudget()
                .args(
                    [
                        &["replay"][..],
                        &inputs,
                        &["--format", format, "--per-request", "--low-memory", "-j", jobs],
                    ]
                    .concat(),
                )
                .arg(&bad)
                .output()
                .unwrap();
            assert_eq!(twice.status.code(), Some(1));
            assert!(twice.stdout == whole, "{format} -j {jobs}:\n{}", String::from_utf8_lossy(&twice.stdout));
            assert_eq!(twice.stderr, drawn_from_held.stderr, "{format}: the same warnings and errors, once");
        }
    }
}

/// Every command, in every format, with its standard output closed before it writes (`| head`
/// that has read enough, `| true`): exit 0 and nothing on stderr, as a closed pipe is the reader's
/// choice, not a failure. The JSON of `sweep` and `calibrate` used to end with `error: cannot
/// write stdout: Broken pipe (os error 32)` and exit 1: serde_json's error hid the pipe's.
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    use std::process::{Command, Stdio};
    let small = root().join(SMALL);
    let small = small.to_str().unwrap();
    let mut runs: Vec<Vec<&str>> = Vec::new();
    for format in ["json", "csv", "table", "markdown"] {
        for command in ["replay", "sweep", "compare", "cost", "calibrate", "reconcile"] {
            runs.push(vec![command, small, "--format", format]);
        }
        runs.push(vec!["replay", small, "--per-request", "--format", format]);
    }
    runs.push(vec!["count", small]);
    runs.push(vec!["split", small]);
    runs.push(vec!["policies"]);
    for args in runs {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("ctxbudget"))
            .args(&args)
            .args(if matches!(args[0], "policies" | "split") {
                &[][..]
            } else {
                &["--tokenizer", "estimate"][..]
            })
            .env_remove("CTXBUDGET_COUNT_CACHE")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!((out.status.code(), stderr.as_str()), (Some(0), ""), "{args:?}");
    }
}

/// `-` among the paths reads standard input (shown as /dev/stdin): the same report as the file.
#[cfg(unix)]
#[test]
fn a_dash_reads_the_session_from_stdin() {
    let args = ["--format", "csv", "--tokenizer", "estimate"];
    for command in ["replay", "sweep"] {
        let from_file = ctxbudget().arg(command).arg(SMALL).args(args).output().unwrap();
        assert!(from_file.status.success());
        let from_stdin = ctxbudget()
            .arg(command)
            .arg("-")
            .args(args)
            .pipe_stdin(root().join(SMALL))
            .unwrap()
            .output()
            .unwrap();
        assert!(from_stdin.status.success(), "{}", String::from_utf8_lossy(&from_stdin.stderr));
        let (file, stdin) =
            (String::from_utf8(from_file.stdout).unwrap(), String::from_utf8(from_stdin.stdout).unwrap());
        assert_eq!(stdin.replace("/dev/stdin", SMALL), file, "{command}");
        assert!(command == "sweep" || stdin.contains("/dev/stdin,"), "{stdin}");
    }
}

/// Standard input is read once even where the inputs are read twice (`--low-memory`, or above 256
/// MB): it is held, so the per-request table, the sweep and the report are the bytes of a run that
/// holds everything. Read twice, the table had no rows (and a warning that the file "read
/// differently the second time"), and a sweep beside a folder lost its per-tool rows.
#[cfg(unix)]
#[test]
fn standard_input_is_held_not_read_twice() {
    let session = root().join("tests/fixtures/cache-trap/session.jsonl");
    let run = |args: &[&str]| {
        let out = ctxbudget()
            .args(args)
            .args(["--tokenizer", "estimate"])
            .pipe_stdin(&session)
            .unwrap()
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success() && !stderr.contains("second time"), "{args:?}: {stderr}");
        (String::from_utf8(out.stdout).unwrap(), stderr)
    };
    for format in ["table", "markdown"] {
        let args = ["replay", "-", "traces", "--per-request", "--format", format];
        let held = run(&args);
        assert!(held.0.contains("/dev/stdin"), "{}", held.0);
        assert!(run(&[&args[..], &["--low-memory"]].concat()) == held, "{format}");
    }
    let sweep = ["sweep", "-", "traces", "--format", "json"];
    assert_eq!(run(&[&sweep[..], &["--low-memory"]].concat()), run(&sweep));
    let dir = tempfile::tempdir().unwrap();
    let report = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        run(&[&["report", "-", "traces", "--timelines", "1", "--out", out.to_str().unwrap()][..], extra]
            .concat());
        std::fs::read_to_string(out.join("sweep-tools.csv")).unwrap()
    };
    assert_eq!(report("streamed", &["--low-memory"]), report("held", &[]));
}

/// A stderr that cannot be written (here /dev/full; a closed pipe after `2>&1 | head` alike) loses
/// the warnings and errors but not the exit code: it used to be a panic, exit 101.
#[cfg(unix)]
#[test]
fn an_unwritable_stderr_keeps_the_exit_code() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        println!("skipped: /dev/full is not available");
        return;
    };
    // A folder with no session in it is a warning, exit 0.
    let empty = tempfile::tempdir().unwrap();
    let warned = empty.path().to_str().unwrap();
    let cases: [(&[&str], i32); 3] = [
        (&["replay", "no/such/session.jsonl"], 1),
        (&["replay", warned, "--format", "csv", "--tokenizer", "estimate"], 0),
        (&["replay", "--policy", "keep-last:n=3"], 2),
    ];
    for (args, code) in cases {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("ctxbudget"))
            .current_dir(root())
            .env_remove("CTXBUDGET_COUNT_CACHE")
            .args(args)
            .stderr(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
    }
    // The warned file does warn: its warning is what stderr could not take.
    let out = ctxbudget().args(cases[1].0).output().unwrap();
    assert!(String::from_utf8(out.stderr).unwrap().starts_with("warning: "));
}

/// The settings line of every analysis's text names `--harness-compaction` when it applies (some
/// input is the log of an agent that compacts by itself: here Codex), and only then.
#[test]
fn the_text_names_the_harness_compaction_mode_where_it_applies() {
    let codex = "tests/fixtures/codex/rollout-0.40.jsonl";
    let text = |args: &[&str]| {
        let out = ctxbudget().args(args).args(["--format", "markdown"]).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    for command in ["compare", "cost", "sweep", "recommend"] {
        let simulated = text(&[command, codex]);
        assert!(
            simulated.contains("Harness compaction: simulated (--harness-compaction)")
                && simulated.contains("(compact:codex on codex logs)"),
            "{command}: {simulated}"
        );
        for mode in ["recorded", "off"] {
            let out = text(&[command, codex, "--harness-compaction", mode]);
            assert_eq!(out.matches("Harness compaction: ").count(), 1, "{command} {mode}: {out}");
            assert!(out.contains(&format!("Harness compaction: {mode} (--harness-compaction)")), "{command}");
        }
        // The bundled traces are native logs: no agent's compaction applies, and nothing is said.
        assert!(!text(&[command, "traces"]).contains("Harness compaction"), "{command}");
    }
}
