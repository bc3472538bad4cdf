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
