//! The JSON contract: every key path of every command's JSON output, read from the output itself
//! (not through the production structs, which would ignore a field they do not know and cannot
//! miss one they lost), against the list kept in `snapshots/`. Adding, renaming or removing a field
//! anywhere in a command's JSON fails one of these tests; accepting the change means reviewing the
//! new list (`cargo insta review`, or `INSTA_UPDATE=always`), which is the point: the JSON is a
//! contract with scripts that read it.
//!
//! A path is the keys from the root joined with `.`, every array element written `[]`, so
//! `runs.[].timeline.[].context_tokens`. The inputs are chosen so that optional parts appear: a
//! file that is not a trace (an entry in `errors`), the per-request rows, every anchor policy.

use std::collections::BTreeSet;
use std::path::Path;

use ctxbudget::result::{InputFile, Problem};
use serde_json::Value;

use crate::common::{ctxbudget, root};

/// The bundled traces plus a file that is not a trace, so that `errors` has an element.
const INPUTS: [&str; 2] = ["traces", "Cargo.toml"];

/// Every key path of `v`, one per line, sorted.
fn key_paths(v: &Value) -> String {
    fn walk(v: &Value, at: &str, out: &mut BTreeSet<String>) {
        let child = |key: &str| if at.is_empty() { key.to_owned() } else { format!("{at}.{key}") };
        match v {
            Value::Object(map) => {
                for (key, value) in map {
                    let path = child(key);
                    out.insert(path.clone());
                    walk(value, &path, out);
                }
            }
            Value::Array(items) => {
                let path = child("[]");
                for item in items {
                    walk(item, &path, out);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    walk(v, "", &mut out);
    out.into_iter().collect::<Vec<_>>().join("\n")
}

/// The JSON a command writes to stdout, whatever its exit code (a bad input is reported in the
/// JSON and makes the exit code 1).
fn json_of(args: &[&str]) -> Value {
    let out = ctxbudget().args(args).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e})"))
}

fn with_inputs<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec![args[0]];
    all.extend(INPUTS);
    all.extend(&args[1..]);
    all
}

#[test]
fn replay_json_has_exactly_the_contracted_keys() {
    insta::assert_snapshot!("replay", key_paths(&json_of(&with_inputs(&["replay", "--format", "json"]))));
}

#[test]
fn replay_per_request_json_has_exactly_the_contracted_keys() {
    let args = with_inputs(&["replay", "--per-request", "--format", "json"]);
    insta::assert_snapshot!("replay_per_request", key_paths(&json_of(&args)));
}

#[test]
fn sweep_json_has_exactly_the_contracted_keys() {
    insta::assert_snapshot!("sweep", key_paths(&json_of(&with_inputs(&["sweep", "--format", "json"]))));
}

#[test]
fn compare_json_has_exactly_the_contracted_keys() {
    let mut args = with_inputs(&["compare", "--format", "json"]);
    for policy in
        ["none", "opencode", "anthropic", "gemini", "swe-agent", "openhands", "langchain", "openclaw"]
    {
        args.extend(["--policy", policy]);
    }
    args.extend(["--policy", "keep-turns:n=3", "--policy", "budget:max=40000,target=20000"]);
    insta::assert_snapshot!("compare", key_paths(&json_of(&args)));
}

#[test]
fn cost_json_has_exactly_the_contracted_keys() {
    insta::assert_snapshot!("cost", key_paths(&json_of(&with_inputs(&["cost", "--format", "json"]))));
}

#[test]
fn calibrate_json_has_exactly_the_contracted_keys() {
    insta::assert_snapshot!(
        "calibrate",
        key_paths(&json_of(&with_inputs(&["calibrate", "--format", "json"])))
    );
}

#[test]
fn reconcile_json_has_exactly_the_contracted_keys() {
    let args = with_inputs(&["reconcile", "--per-request", "--format", "json"]);
    insta::assert_snapshot!("reconcile", key_paths(&json_of(&args)));
}

#[test]
fn split_json_has_exactly_the_contracted_keys() {
    let input = root().join("traces/build-and-test.jsonl");
    let args = ["split", input.to_str().unwrap(), "--json"];
    insta::assert_snapshot!("split", key_paths(&json_of(&args)));
}

#[test]
fn the_reports_json_has_exactly_the_contracted_keys() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let status = ctxbudget().args(["report", "traces", "--out"]).arg(&out).output().unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let text = std::fs::read(Path::new(&out).join("report.json")).unwrap();
    insta::assert_snapshot!("report", key_paths(&serde_json::from_slice(&text).unwrap()));
}

#[test]
fn recommend_json_has_exactly_the_contracted_keys() {
    let args = with_inputs(&["recommend", "--format", "json"]);
    insta::assert_snapshot!("recommend", key_paths(&json_of(&args)));
}

/// Every command that writes `--format json`.
const COMMANDS: [&str; 7] = ["replay", "sweep", "compare", "cost", "calibrate", "recommend", "reconcile"];

/// A folder of one trace, one trace broken at its second line (a recognised format: an error)
/// and one file that is no log (passed over in the walk: a warning). Returns it and the paths of
/// the broken file and of the one passed over.
fn folder_with_a_bad_file() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("traces/build-and-test.jsonl"), dir.path().join("a-good.jsonl")).unwrap();
    let bad = dir.path().join("b-bad.jsonl");
    std::fs::write(&bad, "{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"user\"}\n").unwrap();
    let notes = dir.path().join("c-notes.json");
    std::fs::write(&notes, "these are notes, not JSON\n").unwrap();
    let shown = |p: &Path| p.display().to_string();
    (dir, shown(&bad), shown(&notes))
}

/// `v[key]`, which must be there.
fn key<'v>(v: &'v Value, key: &str, what: &str) -> &'v Value {
    v.get(key).unwrap_or_else(|| panic!("{what}: no `{key}` in {}", key_paths(v)))
}

/// The common keys of one command's JSON, with their types: `inputs` (path, format or null,
/// conversations, requests) and `errors` (file, line, request, message), each read through its
/// strict type, which refuses any other key or type; `settings` (an object naming the tokenizer);
/// `warnings` (strings). Returns (inputs, errors, warnings).
fn common_keys(v: &Value, what: &str) -> (Vec<InputFile>, Vec<Problem>, Vec<String>) {
    let inputs = serde_json::from_value(key(v, "inputs", what).clone())
        .unwrap_or_else(|e| panic!("{what}: inputs: {e}"));
    let settings = key(v, "settings", what).as_object().unwrap_or_else(|| panic!("{what}: settings"));
    assert!(settings.get("tokenizer").is_some_and(Value::is_string), "{what}: {settings:?}");
    let errors = serde_json::from_value(key(v, "errors", what).clone())
        .unwrap_or_else(|e| panic!("{what}: errors: {e}"));
    let list = key(v, "warnings", what).as_array().unwrap_or_else(|| panic!("{what}: warnings not an array"));
    let warnings = list
        .iter()
        .map(|s| s.as_str().unwrap_or_else(|| panic!("{what}: warnings holds {s}")).to_owned())
        .collect();
    (inputs, errors, warnings)
}

#[test]
fn every_command_writes_its_inputs_settings_errors_and_warnings_beside_its_results() {
    let (dir, bad, notes) = folder_with_a_bad_file();
    for command in COMMANDS {
        let out = ctxbudget().args([command, "traces", "--format", "json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{command}: {}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let (inputs, errors, _) = common_keys(&v, command);
        assert!(errors.is_empty(), "{command}: {errors:?}");
        let names: Vec<&str> = inputs.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            names,
            ["traces/build-and-test.jsonl", "traces/explore-split.jsonl", "traces/non-ascii-review.jsonl"],
            "{command}"
        );
        // build-and-test.jsonl holds two conversations; every file was read and has requests.
        assert_eq!(inputs[0].conversations, 2, "{command}");
        let read = |i: &InputFile| i.format.as_deref() == Some("native") && i.requests > 0;
        assert!(inputs.iter().all(read), "{command}: {inputs:?}");

        let out = ctxbudget().args([command]).arg(dir.path()).args(["--format", "json"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}: {stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let (inputs, errors, warnings) = common_keys(&v, command);
        let broken = errors.iter().find(|e| e.file.as_deref() == Some(bad.as_str()));
        let broken = broken.unwrap_or_else(|| panic!("{command}: {errors:?}"));
        assert_eq!((broken.line, broken.request), (Some(2), None), "{command}: {broken:?}");
        assert!(!broken.message.is_empty() && !broken.message.starts_with(&bad), "{command}: {broken:?}");
        let passed_over =
            warnings.iter().any(|w| w.contains("passed over as no agent log") && w.contains("c-notes.json"));
        assert!(passed_over, "{command}: {warnings:?}");
        let found: Vec<(&str, Option<&str>)> =
            inputs.iter().map(|i| (i.path.as_str(), i.format.as_deref())).collect();
        let good = dir.path().join("a-good.jsonl").display().to_string();
        assert_eq!(found, [(good.as_str(), Some("native")), (bad.as_str(), None)], "{command}");
        assert!(!inputs.iter().any(|i| i.path == notes), "{command}");
        // What the JSON carries is what stderr says.
        for line in errors
            .iter()
            .map(|e| format!("error: {e}"))
            .chain(warnings.iter().map(|w| format!("warning: {w}")))
        {
            assert!(stderr.contains(&line), "{command}: {line} not on stderr:\n{stderr}");
        }
    }
}

#[test]
fn the_reports_json_carries_the_same_inputs_settings_errors_and_warnings() {
    let (dir, bad, notes) = folder_with_a_bad_file();
    assert!(notes.ends_with("c-notes.json"));
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report");
    let run = ctxbudget().arg("report").arg(dir.path()).arg("--out").arg(&report).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let v: Value = serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    let (inputs, errors, warnings) = common_keys(&v, "report");
    let found: Vec<(&str, Option<&str>)> =
        inputs.iter().map(|i| (i.path.as_str(), i.format.as_deref())).collect();
    let good = dir.path().join("a-good.jsonl").display().to_string();
    assert_eq!(found, [(good.as_str(), Some("native")), (bad.as_str(), None)]);
    assert_eq!(inputs[0].conversations, 2);
    let broken: Vec<(Option<&str>, Option<usize>)> =
        errors.iter().map(|e| (e.file.as_deref(), e.line)).collect();
    assert_eq!(broken, [(Some(bad.as_str()), Some(2))]);
    assert!(
        warnings.iter().any(|w| w.contains("passed over as no agent log") && w.contains("c-notes.json")),
        "{warnings:?}"
    );
    for line in
        errors.iter().map(|e| format!("error: {e}")).chain(warnings.iter().map(|w| format!("warning: {w}")))
    {
        assert!(stderr.contains(&line), "{line} not on stderr:\n{stderr}");
    }
    let s = &v["settings"];
    assert_eq!((s["policy"].as_str(), s["threshold"].as_u64()), (Some("keep-turns:n=3"), Some(256)));
    assert_eq!(s["harness_compaction"], "simulated");
}

#[test]
fn settings_name_the_options_that_changed_the_numbers() {
    let settings = |args: &[&str]| {
        let out = ctxbudget().args(args).args(["--format", "json"]).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["settings"].clone()
    };
    let s = settings(&[
        "replay",
        "traces",
        "--policy",
        "keep-turns:n=3",
        "--threshold",
        "1k",
        "--tokenizer",
        "cl100k",
    ]);
    assert_eq!(
        (&s["policies"], &s["threshold"], &s["tokenizer"]),
        (&serde_json::json!(["keep-turns:n=3"]), &serde_json::json!(1000), &serde_json::json!("cl100k"))
    );
    let s = settings(&["compare", "traces", "--cache-ttl", "1h", "--overhead", "1200"]);
    assert_eq!((s["cache_ttl_ms"].as_i64(), s["overhead"].as_u64()), (Some(3_600_000), Some(1200)));
    assert_eq!(s["prices"]["name"], "anthropic");
    let s = settings(&["sweep", "traces", "--tolerance", "2%", "--thresholds", "0,1k"]);
    assert_eq!((s["tolerance"].as_f64(), &s["thresholds"]), (Some(0.02), &serde_json::json!([0, 1000])));
    let s = settings(&["recommend", "traces", "--max-reuse", "10%"]);
    assert_eq!(s["max_reuse"].as_f64(), Some(0.1));
    for mode in ["recorded", "simulated", "off"] {
        let s = settings(&["cost", "traces", "--harness-compaction", mode]);
        assert_eq!(s["harness_compaction"], mode);
    }
}

#[test]
fn cost_writes_the_comparison_and_the_payoff_of_each_policys_prune_events() {
    let json = |command: &str| -> Value {
        let out = ctxbudget().args([command, "traces", "--format", "json"]).output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (mut cost, compare) = (json("cost"), json("compare"));
    let payoff = cost.as_object_mut().unwrap().remove("payoff").expect("cost has a payoff");
    assert!(compare.get("payoff").is_none());
    // Without it, the same document: one comparison, shown two ways.
    assert_eq!(cost, compare);
    let policies: Vec<&str> =
        compare["policies"].as_array().unwrap().iter().map(|p| p["policy"].as_str().unwrap()).collect();
    let payoff = payoff.as_array().unwrap();
    assert_eq!(payoff.iter().map(|p| p["policy"].as_str().unwrap()).collect::<Vec<_>>(), policies);
    for p in payoff {
        let policy = p["policy"].as_str().unwrap();
        let events = compare["events"].as_array().unwrap().iter().filter(|e| e["policy"] == policy);
        let paying = events
            .filter(|e| {
                let e = &e["event"];
                e["rewrite_cost"] == 0.0
                    || e["break_even_requests"]
                        .as_f64()
                        .is_some_and(|b| e["later_requests"].as_f64().unwrap() >= b)
            })
            .count();
        assert_eq!(p["events_paying_off"].as_u64(), Some(paying as u64), "{policy}");
        assert!(p["events_paying_off"].as_u64() <= p["prune_events"].as_u64(), "{policy}");
    }
}
