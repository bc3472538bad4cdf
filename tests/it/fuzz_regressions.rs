//! Every crash the fuzzers found, kept as a regression test: each input under
//! `tests/fixtures/fuzz/<target>/` goes through the body of that fuzz target (the same code,
//! included from `fuzz/src/lib.rs`, so the checks are the fuzzers' own), and the crashes that
//! reached the command line are run through the binary too. See `tests/fixtures/fuzz/README.md`.

use crate::common;

#[allow(dead_code)]
#[path = "../../fuzz/src/lib.rs"]
mod harness;

use common::{ctxbudget, root};

/// Runs `data` through the body of fuzz target `target`.
fn run_target(target: &str, data: &[u8]) {
    match target {
        "detect" => harness::detect(data),
        "split" => harness::split(data),
        "policy_spec" => harness::policy_spec(data),
        "policy_file" => harness::policy_file(data),
        "transform_spec" => harness::transform_spec(data),
        other => {
            let format =
                other.strip_prefix("format_").unwrap_or_else(|| panic!("unknown fuzz target {other}"));
            harness::importer(&format.replace('_', "-"), data);
        }
    }
}

#[test]
fn every_kept_crash_input_runs_through_its_fuzz_target_without_a_panic() {
    let dir = root().join("tests/fixtures/fuzz");
    let mut ran = 0;
    for target in std::fs::read_dir(&dir).unwrap() {
        let target = target.unwrap().path();
        if !target.is_dir() {
            continue;
        }
        let name = target.file_name().unwrap().to_str().unwrap().to_owned();
        for input in std::fs::read_dir(&target).unwrap() {
            let input = input.unwrap().path();
            run_target(&name, &std::fs::read(&input).unwrap());
            // Detection must not panic on it either.
            harness::detect(&std::fs::read(&input).unwrap());
            ran += 1;
        }
    }
    assert!(ran >= 2, "{ran} inputs");
}

#[test]
fn reconcile_of_a_session_whose_recorded_prompts_are_all_zero_tokens_fits_without_an_error_summary() {
    for file in [
        "tests/fixtures/fuzz/format_claude_code/zero-usage-reconcile.jsonl",
        "tests/fixtures/fuzz/format_claude_stream/zero-usage-reconcile.jsonl",
    ] {
        let out = ctxbudget()
            .args(["reconcile", file, "--tokenizer", "estimate", "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let c = &v["conversations"][0];
        assert_eq!(c["basis"], "per_request", "{file}: {c}");
        assert!(c["error"].is_null(), "{file}: {c}");
    }
}
