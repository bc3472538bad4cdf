//! `ctxbudget report`: the files it writes, the page's content, the default traces/ → reports/ run,
//! and the page opened in headless Chromium (Debian's `chromium`; `.ci/run` installs it, locally the
//! test says it is skipped when the browser is missing).

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use assert_cmd::Command;

use crate::common;

fn ctxbudget() -> Command {
    Command::cargo_bin("ctxbudget").unwrap()
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cache-trap")
}

fn report(out: &Path) -> String {
    let done = ctxbudget()
        .arg("report")
        .arg(fixture())
        .args(["--tokenizer", "estimate", "--policy", "keep-turns:n=2", "--out"])
        .arg(out)
        .assert()
        .success();
    String::from_utf8(done.get_output().stdout.clone()).unwrap()
}

#[test]
fn the_report_writes_every_file_and_says_the_recommendation_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    let said = report(&out);
    assert!(said.starts_with("Ship no prune and no split (the sessions as recorded)"), "{said}");
    assert!(
        said.contains("By input tokens (the tolerance priced with the prompt cache), under keep-turns:n=3"),
        "{said}"
    );
    assert!(
        said.contains(
            "keep-turns:n=2 at threshold 256 saves 2.8% of input tokens against the sessions as recorded, but costs 66.2% more"
        ),
        "{said}"
    );
    // With --tokenizer estimate there are no real tokens to set len/4 against.
    assert!(said.contains("len/4 is the report's own tokenizer here (--tokenizer estimate)"), "{said}");
    assert!(!said.contains("off real estimate tokens"), "{said}");
    for (file, _) in ctxbudget::report::DATA_FILES {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    for stem in ["charts/sweep", "charts/policies", "charts/timeline-001"] {
        for ext in ["svg", "png"] {
            let p = out.join(format!("{stem}.{ext}"));
            assert!(std::fs::metadata(&p).is_ok_and(|m| m.len() > 1000), "{} missing or tiny", p.display());
        }
    }
    // Under --tokenizer estimate the calibration chart would set len/4 against itself: a
    // placeholder says so, in its place and in its caption.
    let calibration = std::fs::read_to_string(out.join("charts/calibration.svg")).unwrap();
    assert!(
        calibration.contains("Not drawn: with --tokenizer estimate there are no real tokens"),
        "{calibration}"
    );
    assert!(!calibration.contains("real (estimate)"), "{calibration}");
    assert!(out.join("charts/calibration.png").is_file());
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("Estimate versus real tokens per tool: not drawn, with --tokenizer estimate"));
    assert_eq!(html.matches("<figure>").count(), 4);
    assert_eq!(html.matches("<svg ").count(), 4, "charts are inline");
    for needle in [
        "Findings",
        "Threshold sweep",
        "Policies and cost",
        "Estimate versus real",
        "Inputs and settings",
        "cache TTL",
        // The setting says what it means, not just the option's value.
        "<td>anchor (each policy's own estimator, as the agent it comes from counts)</td>",
    ] {
        assert!(html.contains(needle), "{needle} missing");
    }
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"), "the page must be self-contained");
    // Same inputs, same bytes.
    let again = dir.path().join("again");
    report(&again);
    for f in ["index.html", "report.json", "charts/sweep.svg", "charts/policies.png"] {
        assert_eq!(std::fs::read(out.join(f)).unwrap(), std::fs::read(again.join(f)).unwrap(), "{f} differs");
    }
    let timeline = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    assert_eq!(timeline.lines().count(), 1 + 2 * 4, "header + 2 policies × 4 requests");
}

#[test]
fn with_nothing_replayed_each_chart_is_a_placeholder_that_says_why() {
    let empty = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    ctxbudget().arg("report").arg(empty.path()).arg("--out").arg(&out).assert().success();
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(html.matches("<figure>").count(), 3);
    assert_eq!(html.matches("</figure>").count(), 3);
    for (stem, reason) in [
        ("sweep", "the inputs hold no tool results to sweep"),
        ("policies", "nothing was replayed, the inputs hold no requests"),
        ("calibration", "the inputs hold no tool results to calibrate"),
    ] {
        assert!(html.contains(&format!(": not drawn, {reason} (<a href=\"charts/{stem}.svg\">")), "{stem}");
        let svg = std::fs::read_to_string(out.join(format!("charts/{stem}.svg"))).unwrap();
        assert!(svg.contains(&format!("Not drawn: {reason}.")), "{stem}: {svg}");
        assert!(out.join(format!("charts/{stem}.png")).is_file(), "{stem}.png");
    }
    // No policy drawn at 100% of a none of nothing, no bare axes.
    assert!(
        !html.contains("as recorded = 100%") && !html.contains("SUMMARY_THRESHOLD (bytes"),
        "a chart was drawn"
    );
}

#[test]
fn with_no_arguments_it_reports_the_bundled_traces_into_reports() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("traces")).unwrap();
    std::fs::copy(fixture().join("session.jsonl"), dir.path().join("traces/session.jsonl")).unwrap();
    ctxbudget().current_dir(dir.path()).args(["report", "--tokenizer", "estimate"]).assert().success();
    assert!(dir.path().join("reports/index.html").is_file());
    assert!(dir.path().join("reports/charts/sweep.svg").is_file());
}

#[test]
fn a_report_inside_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture().join("session.jsonl"), dir.path().join("session.jsonl")).unwrap();
    ctxbudget().arg("report").arg(dir.path()).arg("--out").arg(dir.path().join("rep")).assert().code(2);
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| Process::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
}

#[test]
fn the_report_renders_its_charts_and_tables_in_headless_chromium() {
    let Some(browser) = chromium() else {
        println!("skipped: chromium not found (apt-get install chromium; .ci/run installs it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rep");
    report(&out);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let (figures, tables) = (html.matches("<figure>").count(), html.matches("<table>").count());
    let page = format!("file://{}", out.join("index.html").display());
    let profile = tempfile::tempdir().unwrap();
    let browse = |extra: &[&str]| {
        Process::new(browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--enable-logging=stderr",
                "--virtual-time-budget=10000",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(&page)
            .output()
            .unwrap()
    };
    // At a desktop width and at a phone's (390 px): every chart laid out with a non-empty box (the
    // page's own script counts them), nothing outside a table's scroll box wider than the screen,
    // no text under 14 px, no script error and nothing fetched from a network.
    for width in [1400, 390] {
        let dom = browse(&["--dump-dom", &format!("--window-size={width},900")]);
        assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
        let dom_text = String::from_utf8_lossy(&dom.stdout);
        let expected = format!("data-rendered=\"charts={figures}/{figures} tables={tables}\"");
        assert!(dom_text.contains(&expected), "{width} px: expected {expected} in the rendered DOM");
        let layout = dom_text
            .split("data-layout=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| panic!("{width} px: the page's script wrote no layout"));
        let minfont: f64 = layout.split("minfont=").nth(1).unwrap().parse().unwrap();
        assert!(layout.starts_with("overflow=0 "), "{width} px: elements wider than the screen: {layout}");
        assert!(minfont >= 14.0, "{width} px: text at {minfont} px");
        let log = String::from_utf8_lossy(&dom.stderr);
        assert!(!log.contains("Uncaught"), "{width} px: script error: {log}");
        assert!(!log.contains("http://") && !log.contains("https://"), "{width} px: a network load: {log}");
    }
    for outside in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!html.contains(outside), "the page loads something from outside itself: {outside}");
    }
    let shot = dir.path().join("shot.png");
    let taken = browse(&[&format!("--screenshot={}", shot.display()), "--window-size=1200,2400"]);
    assert!(taken.status.success(), "{}", String::from_utf8_lossy(&taken.stderr));
    assert!(std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000), "empty screenshot");
}

#[test]
fn timelines_are_drawn_for_the_largest_peaks_and_savings_unless_all_are_asked_for() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let dir = tempfile::tempdir().unwrap();
    let charts = |timelines: &str| -> Vec<String> {
        let out = dir.path().join(format!("rep-{timelines}"));
        report_with_timelines(&traces, &out, timelines);
        let names: Vec<String> = chart_files(&out)
            .into_iter()
            .filter(|n| n.starts_with("timeline-") && n.ends_with(".png"))
            .collect();
        let html = std::fs::read_to_string(out.join("index.html")).unwrap();
        assert_eq!(html.matches("<figure>").count(), 3 + names.len(), "--timelines {timelines}");
        names
    };
    // The bundled traces hold four conversations, in input order with 11, 3, 7 and 5 requests and
    // peaks of 10144, 3931, 2780 and 7580 tokens under `none` by the report's `--tokenizer estimate`
    // (a replay of traces/ says so);
    // the two largest peaks are the first and the fourth, though the third has more requests.
    // Each chart keeps its place among all four in its name.
    let (requests, peaks): (Vec<u64>, Vec<u64>) = {
        let done = ctxbudget()
            .arg("replay")
            .arg(&traces)
            .args(["--tokenizer", "estimate", "--policy", "none", "--format", "json"])
            .assert()
            .success();
        let report: serde_json::Value = serde_json::from_slice(&done.get_output().stdout).unwrap();
        let runs = report["runs"].as_array().unwrap();
        runs.iter()
            .map(|r| (r["requests"].as_u64().unwrap(), r["peak_context_tokens"].as_u64().unwrap()))
            .unzip()
    };
    assert_eq!(requests, [11, 3, 7, 5]);
    assert_eq!(peaks, [10144, 3931, 2780, 7580]);
    // The most input tokens one of the report's policies saves on each, against none, at the
    // comparison's threshold (replays of traces/ under each say so).
    let totals = |policy: &str| -> Vec<u64> {
        let done = ctxbudget()
            .arg("replay")
            .arg(&traces)
            .args(["--tokenizer", "estimate", "--threshold", "256", "--format", "json", "--policy", policy])
            .assert()
            .success();
        let report: serde_json::Value = serde_json::from_slice(&done.get_output().stdout).unwrap();
        report["runs"].as_array().unwrap().iter().map(|r| r["total_input_tokens"].as_u64().unwrap()).collect()
    };
    let none = totals("none");
    let policies: Vec<Vec<u64>> =
        ["keep-turns:n=3", "keep-results:n=5", "budget:max=100000,target=50000"].map(totals).into();
    let saved: Vec<u64> = (0..4).map(|k| policies.iter().map(|p| none[k] - p[k]).max().unwrap()).collect();
    assert_eq!(saved, [37374, 0, 2575, 1069]);
    // Two timelines: the largest peak (the first), then the largest saving among the others (the
    // third), not the second largest peak (the fourth).
    assert_eq!(charts("2"), ["timeline-001.png", "timeline-003.png"]);
    assert_eq!(charts("3"), ["timeline-001.png", "timeline-003.png", "timeline-004.png"]);
    assert_eq!(
        charts("all"),
        ["timeline-001.png", "timeline-002.png", "timeline-003.png", "timeline-004.png"]
    );
    assert_eq!(charts("0"), Vec::<String>::new());
    let html = std::fs::read_to_string(dir.path().join("rep-0/index.html")).unwrap();
    assert!(
        html.contains("No timeline drawn (<code>--timelines 0</code>); the requests of all 4 conversations")
    );
    assert!(!html.contains("the 0 of 4"));
}

#[test]
fn a_report_written_again_keeps_only_the_timeline_charts_it_shows() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let write = |timelines: &str| report_with_timelines(&traces, &out, timelines);
    let charts = || chart_files(&out);
    write("all");
    assert_eq!(charts().iter().filter(|n| n.starts_with("timeline-")).count(), 8, "{:?}", charts());
    // A file of the user's own, even one named like a chart, is not the report's.
    for own in ["notes.txt", "timeline-001.svg.orig", "timeline-draft.png"] {
        std::fs::write(out.join("charts").join(own), "mine").unwrap();
    }
    write("1");
    let after = charts();
    let timelines: Vec<&String> = after.iter().filter(|n| n.starts_with("timeline-")).collect();
    assert_eq!(
        timelines,
        ["timeline-001.png", "timeline-001.svg", "timeline-001.svg.orig", "timeline-draft.png"]
    );
    assert!(after.contains(&"notes.txt".to_owned()));
    for fixed in ["sweep", "policies", "calibration"] {
        assert!(
            after.contains(&format!("{fixed}.svg")) && after.contains(&format!("{fixed}.png")),
            "{after:?}"
        );
    }
    // Every chart the page shows is there.
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(html.matches("<figure>").count(), 3 + 1);
}

/// Writes a report of `traces` into `out` (estimated tokens) with `--timelines timelines`.
fn report_with_timelines(traces: &Path, out: &Path, timelines: &str) {
    ctxbudget()
        .arg("report")
        .arg(traces)
        .args(["--tokenizer", "estimate", "--timelines", timelines, "--out"])
        .arg(out)
        .assert()
        .success();
}

/// The file names in a report's `charts/`, sorted.
fn chart_files(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every file under `dir` (path relative to it → bytes).
fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    common::files_under(dir, &[""])
        .into_iter()
        .map(|path| (path.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&path).unwrap()))
        .collect()
}

/// A report that does not hold its inputs (what it does above 256 MB of input: the sweep's
/// per-tool rows swept as each file is read, the files whose guess missed read again) writes the
/// same files and prints the same lines as one that holds them.
fn report_streamed_matches(traces: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let out = tmp.path().join(name);
        let done = ctxbudget()
            .arg("report")
            .arg(traces)
            .args(["-j", "2", "--tools", "3", "--out"])
            .arg(&out)
            .args(extra)
            .assert()
            .success();
        let printed = String::from_utf8(done.get_output().stdout.clone()).unwrap().replace(name, "OUT");
        (tree(&out), printed, done.get_output().stderr.clone())
    };
    let (held, streamed) = (run("held", &[]), run("streamed", &["--low-memory"]));
    assert!(held.0.len() > 5 && held.0.keys().eq(streamed.0.keys()), "{:?}", streamed.0.keys());
    for (name, bytes) in &held.0 {
        assert!(streamed.0[name] == *bytes, "{} differs", name.display());
    }
    assert_eq!((&held.1, &held.2), (&streamed.1, &streamed.2));
}

#[test]
fn a_report_that_does_not_hold_its_inputs_writes_the_same_files() {
    report_streamed_matches(&Path::new(env!("CARGO_MANIFEST_DIR")).join("traces"));
}

#[test]
fn on_the_corpus_a_report_that_does_not_hold_its_inputs_writes_the_same_files() {
    if let Some(corpus) = common::corpus("") {
        report_streamed_matches(&corpus);
    }
}

/// The top of the page says which models the logs name and when their requests were sent, from a
/// log whose model name and file name are markup: both reach the page escaped, in text and in the
/// timeline's tooltip.
#[test]
fn the_page_top_names_the_models_and_dates_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex/rollout-0.125.jsonl");
    let text = std::fs::read_to_string(source).unwrap();
    assert_eq!(text.matches("\"model\":\"gpt-5.5\"").count(), 2, "the fixture names its model twice");
    let hostile = "<img src=x onerror=alert(1)>&amp;";
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    std::fs::write(input.join("<b>rollout.jsonl"), text.replace("gpt-5.5", hostile)).unwrap();
    let out = dir.path().join("rep");
    ctxbudget()
        .arg("report")
        .arg(&input)
        .args(["--tokenizer", "estimate", "--out"])
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("Conversations per model: &lt;img src=x onerror=alert(1)&gt;&amp;amp; 1."),
        "{}",
        &html[..html.len().min(4000)]
    );
    assert!(html.contains("Requests sent on 2026-05-11 (UTC, from the logs' timestamps)."));
    assert!(!html.contains("<img") && !html.contains("<b>rollout"), "markup from the log reached the page");
    let svg = std::fs::read_to_string(out.join("charts/timeline-001.svg")).unwrap();
    assert!(svg.contains("&lt;b&gt;rollout.jsonl, conversation"), "no escaped tooltip");
    assert!(!svg.contains("<img") && !svg.contains("<b>"), "markup from the log reached the chart");
}

/// The findings' note on conversations calibrated with defaults names the provider's default
/// ratio only where a conversation took it: under `--tokenizer provider` a Claude cassette (no
/// agent default) does, under `--tokenizer o200k` nothing can, and only the Claude Code session's
/// agent defaults are left.
#[test]
fn on_the_corpus_the_defaults_note_names_the_provider_ratio_only_under_provider() {
    let Some(corpus) = common::corpus("") else { return };
    let inputs = [
        "api-wire-cassettes/pydantic-ai/tests/models/cassettes/test_anthropic/test_multiple_parallel_tool_calls.yaml",
        "claude-code/daaain-claude-code-log/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
    ];
    let note = |tokenizer: &str| {
        let dir = tempfile::tempdir().unwrap();
        let done = ctxbudget()
            .arg("report")
            .args(inputs.iter().map(|i| corpus.join(i)))
            .args(["--tokenizer", tokenizer, "--timelines", "0", "--out"])
            .arg(dir.path().join("rep"))
            .assert()
            .success();
        let said = String::from_utf8(done.get_output().stdout.clone()).unwrap();
        said.lines().find(|l| l.contains("record fewer than 3 prompt sizes")).map(str::to_owned)
    };
    let provider = note("provider").expect("a note under provider");
    assert!(provider.starts_with("2 conversation(s)"), "{provider}");
    assert!(provider.contains("no overhead and the provider's default ratio"), "{provider}");
    let o200k = note("o200k").expect("a note under o200k");
    assert_eq!(
        o200k,
        "1 conversation(s) record fewer than 3 prompt sizes: their unrecorded overhead and token ratio are \
         the agent's defaults (docs/calibration.md), an estimate."
    );
}
