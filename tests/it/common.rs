//! Helpers shared by the black-box tests: the binary, the fixtures and the shared corpus.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `ctxbudget` binary, run from the repository root.
pub fn ctxbudget() -> Command {
    let mut c = Command::cargo_bin("ctxbudget").expect("the binary is built for integration tests");
    c.current_dir(root());
    // A count cache named in the developer's environment must not be read or written by tests.
    c.env_remove("CTXBUDGET_COUNT_CACHE");
    c
}

/// The stdout of `ctxbudget ARGS`, checking that it succeeded and wrote something (the corpus has
/// files no format reads, which are warnings, not errors).
pub fn stdout_of(args: &[&str]) -> Vec<u8> {
    let out = ctxbudget().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.is_empty(), "{args:?}: no output");
    out.stdout
}

/// The shared corpus beside the checkout (`../shared/corpus`), or `None` (after printing why) when
/// it is absent. Under CI (`CI` set) the corpus is always laid beside the checkout, so its absence
/// is a failure, not a skip: a corpus test must never pass green by returning early there.
pub fn corpus_root() -> Option<PathBuf> {
    present_or_skip(root().join("../shared/corpus"), "../shared/corpus")
}

/// One folder of the shared corpus, as [`corpus_root`] (a failure under CI when it is absent).
pub fn corpus(sub: &str) -> Option<PathBuf> {
    present_or_skip(root().join("../shared/corpus").join(sub), &format!("../shared/corpus/{sub}"))
}

fn present_or_skip(dir: PathBuf, shown: &str) -> Option<PathBuf> {
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{shown} not found, and CI is set: the corpus tests must run in CI"
    );
    println!("skipped: {shown} not found");
    None
}

/// Every file under `dir` whose name ends with one of `suffixes`, sorted, hidden folders included.
pub fn files_under(dir: &Path, suffixes: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable corpus directory") {
            let p = e.expect("readable entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if suffixes.iter().any(|s| p.to_string_lossy().ends_with(s)) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The "tool results" column of PROVENANCE.md for a file path relative to the corpus root.
pub fn provenance_tool_results(relative: &str) -> Option<u64> {
    let text = std::fs::read_to_string(root().join("../shared/corpus/PROVENANCE.md")).ok()?;
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() > 7 && cells[1] == format!("`{relative}`") {
            return cells[6].replace(',', "").parse().ok();
        }
    }
    None
}

/// proptest's defaults, except that failing seeds are kept beside the test's module
/// (`determinism.rs` → `determinism.proptest-regressions`): proptest's own default would put them
/// in a `proptest-regressions/` folder beside `tests/it/`, away from the tests they replay.
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, FileFailurePersistence};
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..Config::default()
    }
}

/// `replay FILE --policy none --format json --per-request` with `extra` arguments: the report and
/// the stderr (the run must succeed).
pub fn replay_none_per_request(file: &Path, extra: &[&str]) -> (serde_json::Value, String) {
    let out = ctxbudget()
        .arg("replay")
        .arg(file)
        .args(["--policy", "none", "--format", "json", "--per-request"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (serde_json::from_slice(&out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// The `context_tokens` of each request of a report's first run.
pub fn timeline_contexts(report: &serde_json::Value) -> Vec<u64> {
    report["runs"][0]["timeline"]
        .as_array()
        .expect("a timeline")
        .iter()
        .map(|row| row["context_tokens"].as_u64().unwrap())
        .collect()
}
