//! The bill in USD from the command line: a log's recorded cost read and shown beside the
//! baseline, a prices file taking over the built-in table, and a bad prices file refused.

use serde_json::Value;

use crate::common::{ctxbudget, root};

const CLINE: &str = "tests/fixtures/cline/task/api_conversation_history.json";

fn cost_json(args: &[&str]) -> Value {
    let out = ctxbudget().args(["cost", CLINE, "--format", "json"]).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn none_cost(v: &Value) -> &Value {
    let none = &v["policies"][0];
    assert_eq!(none["policy"], "none");
    &none["cost"]
}

#[test]
fn the_cost_a_cline_task_recorded_is_summed_beside_the_baseline_bill() {
    // Independently of the importer: every `api_req_started` entry that records a `cost`.
    let ui: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/cline/task/ui_messages.json")).unwrap(),
    )
    .unwrap();
    let costs: Vec<f64> = ui
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["say"] == "api_req_started")
        .filter_map(|m| serde_json::from_str::<Value>(m["text"].as_str()?).ok()?["cost"].as_f64())
        .collect();
    let cost = none_cost(&cost_json(&[])).clone();
    assert_eq!(cost["recorded_cost_requests"], costs.len());
    let recorded = cost["recorded_cost_usd"].as_f64().unwrap();
    assert!((recorded - costs.iter().sum::<f64>()).abs() < 1e-9, "{recorded}");
    assert!(cost["cost_usd"].as_f64().unwrap() > cost["output_cost_usd"].as_f64().unwrap());
    // The fixture names no model: priced at the fallback, and said so.
    assert_eq!(cost["fallback_models"]["(none)"], 5);
    // Wide: its lines are not wrapped.
    let text = ctxbudget().args(["cost", CLINE, "--wide"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("The log records $0.0500 for the 5 requests that record a cost"), "{text}");
    assert!(text.contains("no model named (5 requests)"), "{text}");
}

#[test]
fn a_prices_file_prices_the_bill_in_place_of_the_built_in_table() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.toml");
    // Every token at 1 USD per million, the fallback too: the bill is then tokens / 1e6.
    std::fs::write(&file, "fallback = \"flat\"\n[[model]]\nmodel = \"flat\"\ninput = 1\noutput = 1\n")
        .unwrap();
    let cost = none_cost(&cost_json(&["--prices", file.to_str().unwrap()])).clone();
    let tokens = cost["input_tokens"].as_u64().unwrap() + cost["output_tokens"].as_u64().unwrap();
    assert!((cost["cost_usd"].as_f64().unwrap() - tokens as f64 / 1e6).abs() < 1e-12, "{cost}");
    // The relative cost is the default preset's, as without the file.
    assert_eq!(cost["cost"], none_cost(&cost_json(&[]))["cost"]);
}

#[test]
fn a_bad_prices_file_is_a_usage_error_naming_the_file_and_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.json");
    std::fs::write(&file, r#"{"gpt-4o": {"input_cost_per_token": -1}}"#).unwrap();
    let out = ctxbudget().args(["cost", CLINE, "--prices", file.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("p.json: `gpt-4o`: input price -1"), "{err}");
}
