//! Black-box tests of `sweep`, `compare`, `cost` and `calibrate` on the hand-made cache-trap fixture
//! (expected numbers derived in `tests/fixtures/cache-trap/EXPECTED.md`), JSON read back through the
//! strict result types, snapshots of the rendered tables, and invariants on the corpus.

use crate::common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use ctxbudget::analysis::calibration::Calibration;
use ctxbudget::analysis::compare::Comparison;
use ctxbudget::analysis::sweep::Sweep;
use ctxbudget::result::Enveloped;

fn ctxbudget() -> Command {
    Command::cargo_bin("ctxbudget").unwrap()
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cache-trap")
}

/// Runs from the crate root with the fixture's relative path, so snapshots hold no machine paths.
fn run(args: &[&str]) -> String {
    let out = ctxbudget()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .arg("tests/fixtures/cache-trap")
        .args(["--tokenizer", "estimate"])
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

const TRAP: [&str; 3] = ["--policy", "keep-turns:n=2", "--format"];

#[test]
fn the_comparison_matches_the_hand_count_and_flags_the_costly_prune() {
    let c: Comparison =
        serde_json::from_str::<Enveloped<Comparison>>(&run(&["compare", TRAP[0], TRAP[1], TRAP[2], "json"]))
            .unwrap()
            .result;
    let names: Vec<&str> = c.policies.iter().map(|p| p.policy.as_str()).collect();
    assert_eq!(names, ["none", "keep-turns:n=2"]);
    let (none, pruned) = (&c.policies[0], &c.policies[1]);
    assert_eq!((none.total_input_tokens, none.peak_context_tokens), (3892, 1223));
    assert_eq!((pruned.total_input_tokens, pruned.prune_events), (3692, 1));
    // Savings are against the sessions as recorded: the 100-byte result whole, 3800 tokens.
    assert_eq!(c.baseline_input_tokens, 3800);
    assert!((pruned.savings - (1.0 - 3692.0 / 3800.0)).abs() < 1e-12);
    assert!((none.cost.cost - 1795.65).abs() < 1e-9, "{}", none.cost.cost);
    assert!((pruned.cost.cost - 2925.65).abs() < 1e-9, "{}", pruned.cost.cost);
    assert!(pruned.saves_tokens_costs_more);
    assert_eq!(c.events.len(), 1);
    let e = &c.events[0].event;
    assert_eq!((e.request, e.freed_tokens, e.rewritten_tokens, e.cold), (2, 100, 1000, false));
    assert!((e.rewrite_cost - 1150.0).abs() < 1e-9 && (e.break_even_requests.unwrap() - 115.0).abs() < 1e-9);
}

#[test]
fn a_ttl_shorter_than_the_gaps_makes_every_request_cold_and_the_prune_cheaper() {
    let c: Comparison = serde_json::from_str::<Enveloped<Comparison>>(&run(&[
        "cost",
        TRAP[0],
        TRAP[1],
        "--cache-ttl",
        "30s",
        TRAP[2],
        "json",
    ]))
    .unwrap()
    .result;
    assert!((c.policies[0].cost.cost - 4865.0).abs() < 1e-9);
    assert!((c.policies[1].cost.cost - 4615.0).abs() < 1e-9);
    assert_eq!((c.policies[0].cost.cold_requests, c.policies[1].saves_tokens_costs_more), (4, false));
    let usd: Comparison = serde_json::from_str::<Enveloped<Comparison>>(&run(&[
        "cost",
        "--prices",
        "input=2,write=2.5,read=0.2",
        TRAP[2],
        "json",
    ]))
    .unwrap()
    .result;
    // none in USD: (223 + 1000) written × 2.5 + (223 + 1223 + 1223) read × 0.2, per million tokens.
    assert!((usd.policies[0].cost.cost - (1223.0 * 2.5 + 2669.0 * 0.2) / 1e6).abs() < 1e-12);
    assert_eq!(usd.cache.prices.unit, "USD");
    // Anthropic's cache beyond 5 minutes is its 1-hour cache: writes at 2× instead of 1.25×.
    let hour: Comparison = serde_json::from_str::<Enveloped<Comparison>>(&run(&[
        "cost",
        TRAP[0],
        TRAP[1],
        "--cache-ttl",
        "1h",
        TRAP[2],
        "json",
    ]))
    .unwrap()
    .result;
    assert_eq!((hour.cache.prices.name.as_str(), hour.cache.prices.write), ("anthropic", 2.0));
    assert!((hour.policies[0].cost.cost - (1223.0 * 2.0 + 2669.0 * 0.1)).abs() < 1e-9);
}

#[test]
fn the_sweep_matches_the_hand_count() {
    let s: Sweep = serde_json::from_str::<Enveloped<Sweep>>(&run(&[
        "sweep",
        "--thresholds",
        "64,256,512",
        TRAP[0],
        TRAP[1],
        TRAP[2],
        "json",
    ]))
    .unwrap()
    .result;
    assert_eq!(s.baseline_total_tokens, 3800);
    let got: Vec<(usize, u64, u64, u64, u64)> = s
        .rows
        .iter()
        .map(|r| (r.threshold, r.total_input_tokens, r.summary_tokens, r.overhead_tokens, r.content_tokens))
        .collect();
    assert_eq!(got, [(64, 3692, 92, 46, 200), (256, 3692, 92, 46, 200), (512, 3800, 0, 0, 0)]);
    let rec = s.recommendation.unwrap();
    assert_eq!((rec.threshold, rec.best_threshold), (256, 256));
    assert!((rec.savings - (1.0 - 3692.0 / 3800.0)).abs() < 1e-12);
}

#[test]
fn calibration_reads_back_and_counts_every_output() {
    let c: Calibration =
        serde_json::from_str::<Enveloped<Calibration>>(&run(&["calibrate", "--format", "json"]))
            .unwrap()
            .result;
    let all = c.rows.iter().find(|r| r.group == "all").unwrap();
    // Measured with the estimate itself, len/4 is exact.
    assert_eq!((all.results, all.bytes, all.tokens), (1, 400, 100));
    assert!(all.error.abs() < 1e-12 && (all.bytes_per_token - 4.0).abs() < 1e-12);
}

#[test]
fn tables_are_stable() {
    insta::assert_snapshot!("sweep", run(&["sweep", "--thresholds", "64,256,512", TRAP[0], TRAP[1]]));
    insta::assert_snapshot!("compare", run(&["compare", TRAP[0], TRAP[1]]));
    insta::assert_snapshot!("cost", run(&["cost", TRAP[0], TRAP[1], "--format", "markdown"]));
    insta::assert_snapshot!("calibrate", run(&["calibrate"]));
}

#[test]
fn csv_gives_the_main_table() {
    let csv = run(&["compare", TRAP[0], TRAP[1], "--format", "csv"]);
    let mut lines = csv.lines();
    assert!(
        lines.next().unwrap().starts_with("policy,requests,peak_context_tokens,total_input_tokens,savings")
    );
    assert!(lines.next().unwrap().starts_with("none,4,1223,3892,-2.4%"));
    assert!(lines.next().unwrap().starts_with("keep-turns:n=2,4,1223,3692,2.8%"));
}

#[test]
fn a_policy_that_never_fires_says_so_with_its_trigger_and_the_peak_it_did_not_reach() {
    // anthropic's default trigger (100000 tokens) is far above this fixture's contexts;
    // keep-turns:n=2 prunes once.
    let args = ["compare", "--policy", "anthropic", TRAP[0], TRAP[1]];
    let json: serde_json::Value =
        serde_json::from_str(&run(&[&args[..], &["--format", "json"]].concat())).expect("compare JSON");
    let row = |name: &str| {
        let rows = json["policies"].as_array().expect("policies");
        rows.iter().find(|p| p["policy"] == name).unwrap_or_else(|| panic!("no row {name}")).clone()
    };
    let anthropic = row("anthropic");
    assert_eq!(anthropic["prune_events"], 0);
    let peak = anthropic["peak_context_tokens"].as_u64().expect("a peak");
    assert!(peak < 100_000, "{anthropic}");
    let reason = format!("trigger 100000 tokens > peak {peak}");
    assert_eq!(anthropic["never_fired_reason"], reason.as_str());
    let fired = row("keep-turns:n=2");
    assert!(fired["prune_events"].as_u64() > Some(0), "{fired}");
    assert!(fired["never_fired_reason"].is_null(), "{fired}");
    assert!(row("none")["never_fired_reason"].is_null());
    // The table says the same in its note.
    let csv = run(&[&args[..], &["--format", "csv"]].concat());
    let rows: Vec<&str> = csv.lines().collect();
    assert!(
        rows[2].starts_with("anthropic,") && rows[2].ends_with(&format!(",never fired: {reason}")),
        "{}",
        rows[2]
    );
    assert!(!rows[3].contains("never fired"), "{}", rows[3]);
}

#[test]
fn on_the_corpus_anthropic_uncalibrated_never_fires_and_its_row_names_trigger_and_peak() {
    // The session docs/calibration.md compares: with --overhead 0 its contexts stay under
    // anthropic's trigger; opencode, whose prune waits for a new human turn, names its own unit.
    let Some(dir) = common::corpus("claude-code/codemie-code") else { return };
    let file = dir.join("session-3fe1b6bc.jsonl");
    let file = file.to_str().expect("a UTF-8 path");
    let json = |args: &[&str]| -> serde_json::Value {
        let out = ctxbudget().args(["compare", file, "--format", "json"]).args(args).assert().success();
        serde_json::from_slice(&out.get_output().stdout).expect("compare JSON")
    };
    let uncalibrated = json(&["--policy", "anthropic", "--policy", "opencode", "--overhead", "0"]);
    let rows = uncalibrated["policies"].as_array().expect("policies");
    let anthropic = rows.iter().find(|p| p["policy"] == "anthropic").expect("anthropic");
    let peak = anthropic["peak_context_tokens"].as_u64().expect("a peak");
    assert_eq!(anthropic["prune_events"], 0);
    assert_eq!(anthropic["never_fired_reason"], format!("trigger 100000 tokens > peak {peak}").as_str());
    let opencode = rows.iter().find(|p| p["policy"] == "opencode").expect("opencode");
    assert_eq!(opencode["prune_events"], 0);
    let reason = opencode["never_fired_reason"].as_str().expect("opencode says why");
    assert!(
        reason.contains("newest 40000 tokens") && reason.contains("pass 20000 tokens; peak "),
        "{reason}"
    );
    // Calibrated (the default), anthropic fires: no reason.
    let calibrated = json(&["--policy", "anthropic"]);
    let anthropic = &calibrated["policies"][1];
    assert!(anthropic["prune_events"].as_u64() > Some(0), "{anthropic}");
    assert!(anthropic["never_fired_reason"].is_null());
}

#[test]
fn bad_settings_are_usage_errors() {
    for args in [
        &["sweep", "--thresholds", "64..16"][..],
        &["sweep", "--tolerance", "150%"],
        &["compare", "--prices", "antropic"],
        &["cost", "--cache-ttl", "5 minutes"],
        &["compare", "--policy", "keep-last"],
    ] {
        ctxbudget().args(args).arg(fixture()).assert().code(2);
    }
}

fn corpus() -> Option<PathBuf> {
    common::corpus("claude-code")
}

#[test]
fn on_the_corpus_the_recommendation_obeys_its_rule() {
    let Some(corpus) = corpus() else { return };
    let out = ctxbudget()
        .arg("sweep")
        .arg(&corpus)
        .args(["--format", "json", "--tolerance", "5"])
        .assert()
        .success();
    let s: Sweep = serde_json::from_slice::<Enveloped<Sweep>>(&out.get_output().stdout).unwrap().result;
    let rec = s.recommendation.expect("the corpus has tool results");
    let best = s.rows.iter().map(|r| r.savings).fold(f64::MIN, f64::max);
    assert_eq!(rec.best_savings, best);
    assert!(rec.savings >= best - 0.05 * best.abs());
    // Every larger threshold falls outside the tolerance.
    for r in s.rows.iter().filter(|r| r.threshold > rec.threshold) {
        assert!(r.savings < best - 0.05 * best.abs(), "{} would qualify", r.threshold);
    }
    // The split share can only fall as the threshold grows.
    assert!(s.rows.windows(2).all(|w| w[0].split_share >= w[1].split_share));
    // Every tool row sweeps the same thresholds.
    assert!(s.per_tool.iter().all(|t| t.rows.len() == s.rows.len()));
}

#[test]
fn on_the_corpus_compare_and_cost_agree_with_replay() {
    let Some(corpus) = corpus() else { return };
    let out = ctxbudget().arg("compare").arg(&corpus).args(["--format", "json"]).assert().success();
    let c: Comparison =
        serde_json::from_slice::<Enveloped<Comparison>>(&out.get_output().stdout).unwrap().result;
    let replay = ctxbudget().arg("replay").arg(&corpus).args(["--format", "json"]).assert().success();
    let r: serde_json::Value = serde_json::from_slice(&replay.get_output().stdout).unwrap();
    for p in &c.policies {
        let total: u64 = r["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|run| run["policy"] == p.policy.as_str())
            .map(|run| run["total_input_tokens"].as_u64().unwrap())
            .sum();
        assert_eq!(total, p.total_input_tokens, "{}", p.policy);
        // Reads and writes split each request's context exactly.
        assert_eq!(p.cost.read_tokens + p.cost.write_tokens, p.total_input_tokens);
        assert!(p.cost.rewritten_tokens <= p.cost.write_tokens);
    }
}

/// `sweep` without holding its inputs (what it does above 256 MB of input: each file's tools swept
/// as it is read, the files whose guess missed read again) gives what it gives holding them.
fn sweep_streamed_matches(inputs: &Path) {
    let sweep = |extra: &[&str]| {
        let out = ctxbudget()
            .arg("sweep")
            .arg(inputs)
            .args(["--format", "json", "-j", "2", "--tools", "3"])
            .args(extra)
            .assert()
            .success();
        (out.get_output().stdout.clone(), out.get_output().stderr.clone())
    };
    let (held, streamed) = (sweep(&[]), sweep(&["--low-memory"]));
    assert!(held == streamed, "{}", String::from_utf8_lossy(&streamed.1));
    let s: Sweep = serde_json::from_slice::<Enveloped<Sweep>>(&held.0).unwrap().result;
    assert!(!s.per_tool.is_empty() && s.per_tool.iter().all(|t| t.rows.len() == s.rows.len()));
}

#[test]
fn a_sweep_that_does_not_hold_its_inputs_gives_the_same_bytes() {
    sweep_streamed_matches(&fixture());
}

#[test]
fn on_the_corpus_a_sweep_that_does_not_hold_its_inputs_gives_the_same_bytes() {
    let Some(corpus) = corpus() else { return };
    sweep_streamed_matches(corpus.parent().unwrap());
}

/// JSON is written as it is serialised, to stdout or through a temporary file: the same bytes,
/// ending with a newline, and no temporary file left beside the output.
#[test]
fn json_written_to_a_file_is_the_json_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    for command in ["sweep", "compare", "cost", "calibrate"] {
        let stdout = run(&[command, "--format", "json"]);
        let file = dir.path().join(format!("{command}.json"));
        ctxbudget()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([command, "tests/fixtures/cache-trap", "--tokenizer", "estimate", "--format", "json", "-o"])
            .arg(&file)
            .assert()
            .success();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), stdout, "{command}");
        assert!(stdout.ends_with("}\n"), "{command}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4, "no temporary file left");
}

/// `cost` draws its prune events one row at a time in the table and Markdown formats; the bytes
/// are the sections' rendering of the same comparison (read back from its JSON), with every
/// event listed, on the fixture and on traces/ (more events, several policies).
#[test]
fn cost_tables_drawn_row_by_row_are_the_rendering_of_the_comparison() {
    use ctxbudget::export::ExportFormat;
    use ctxbudget::export::analysis::{cost_sections, render};
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    for input in [fixture(), traces] {
        let cost = |format: &str| {
            let out = ctxbudget().arg("cost").arg(&input).args(["--format", format]).assert().success();
            out.get_output().stdout.clone()
        };
        let c: Comparison = serde_json::from_slice::<Enveloped<Comparison>>(&cost("json")).unwrap().result;
        assert!(!c.events.is_empty(), "{}: prune events to list", input.display());
        for (format, name) in
            [(ExportFormat::Table(Default::default()), "table"), (ExportFormat::Markdown, "markdown")]
        {
            let whole = render(format, &cost_sections(&c), &c).unwrap();
            assert!(cost(name) == whole, "{name} of {}", input.display());
        }
    }
}

/// Nothing replayed: no recommendation, no "cheapest policy", no calibration finding, and no `-0`.
#[test]
fn a_trace_without_tool_results_gets_no_recommendation_from_no_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("chat.jsonl");
    std::fs::write(&trace, "{\"type\":\"user\",\"text\":\"a question never sent\"}\n").unwrap();
    let output = |args: &[&str]| {
        let out = ctxbudget().args(args).arg(&trace).args(["--tokenizer", "estimate"]).assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let sweep: Sweep =
        serde_json::from_str::<Enveloped<Sweep>>(&output(&["sweep", "--format", "json"])).unwrap().result;
    assert_eq!((sweep.requests, sweep.recommendation), (0, None));
    assert!(output(&["sweep"]).contains("No recommendation: nothing to sweep."));
    let calibrate = output(&["calibrate", "--format", "csv"]);
    assert!(!calibrate.contains("-0"), "{calibrate}");
    let out = dir.path().join("report");
    let report = output(&["report", "--out", out.to_str().unwrap()]);
    assert!(report.contains("No threshold recommendation"), "{report}");
    assert!(!report.contains("Cheapest policy") && !report.contains("len/4 is"), "{report}");
}

/// The sweep's tolerance in absolute terms, recomputed from its own JSON on the bundled traces:
/// the tokens and USD the recommended threshold takes beyond the best's are the differences of
/// their rows, the tolerance in tokens is what separates the rows within it from those beyond,
/// and the sentence and the CSV say the same numbers.
#[test]
fn the_sweeps_tolerance_in_tokens_and_usd_is_recomputed_from_its_own_json() {
    let json = ctxbudget().args(["sweep", "traces", "--format", "json"]).assert().success();
    let s: Sweep = serde_json::from_slice::<Enveloped<Sweep>>(&json.get_output().stdout).unwrap().result;
    let rec = s.recommendation.as_ref().expect("a recommendation on the bundled traces");
    let row = |t: usize| s.rows.iter().find(|r| r.threshold == t).unwrap();
    let (chosen, best) = (row(rec.threshold), row(rec.best_threshold));
    assert_ne!(rec.threshold, rec.best_threshold, "the bundled traces use the tolerance");
    assert_eq!(rec.extra_input_tokens, chosen.total_input_tokens - best.total_input_tokens);
    let (c, b) = (chosen.cost_usd.unwrap(), best.cost_usd.unwrap());
    assert_eq!(rec.extra_cost_usd, Some(c - b));
    // Within the tolerance exactly when a row sends at most `tolerance_tokens` more than the best.
    let allowed = rec.tolerance * rec.best_savings * s.baseline_total_tokens as f64;
    assert!(rec.tolerance_tokens.abs_diff(allowed.floor() as u64) <= 1, "{allowed}");
    for r in &s.rows {
        let within = r.savings >= rec.best_savings - rec.tolerance * rec.best_savings;
        let extra = r.total_input_tokens.saturating_sub(best.total_input_tokens);
        assert_eq!(within, extra <= rec.tolerance_tokens, "at {}", r.threshold);
        assert!(!(within && r.threshold > rec.threshold), "a larger row within: {}", r.threshold);
    }
    // Every row is priced, and nothing split is the baseline, to the pico-USD.
    assert!(s.rows.iter().all(|r| r.cost_usd.is_some_and(|c| c > 0.0)));
    let unsplit = s.rows.iter().find(|r| r.split_results == 0 && r.prune_events == 0);
    if let Some(r) = unsplit {
        assert!((r.cost_usd.unwrap() - s.baseline_cost_usd).abs() < 1e-9);
    }
    let usd = |v: f64| if v.abs() < 1.0 { format!("${v:.4}") } else { format!("${v:.2}") };
    let more = if c > b { "more" } else { "less" };
    let said = format!(
        "it sends {} input tokens more than the best, of the {} the tolerance allows, and costs {} {more}",
        rec.extra_input_tokens,
        rec.tolerance_tokens,
        usd((c - b).abs())
    );
    assert!(rec.reason.contains(&said), "{}\n{said}", rec.reason);
    // The CSV's cost_usd column is the JSON's, row by row.
    let csv = ctxbudget().args(["sweep", "traces", "--format", "csv"]).assert().success();
    let csv = String::from_utf8(csv.get_output().stdout.clone()).unwrap();
    let mut lines = csv.lines();
    let column = lines.next().unwrap().split(',').position(|h| h == "cost_usd").expect("a cost_usd column");
    for (line, r) in lines.zip(&s.rows) {
        assert_eq!(line.split(',').nth(column), Some(format!("{:.4}", r.cost_usd.unwrap()).as_str()));
    }
}

/// The sweep's bill does not depend on the thread count: the rows add whole pico-USD.
#[test]
fn the_sweeps_usd_figures_are_the_same_bytes_on_one_and_four_threads() {
    let on = |threads: &str| {
        let out = ctxbudget().args(["sweep", "traces", "--format", "json", "-j", threads]).assert().success();
        out.get_output().stdout.clone()
    };
    let one = on("1");
    assert!(String::from_utf8_lossy(&one).contains("\"extra_cost_usd\""));
    assert_eq!(one, on("4"));
}
