//! Snapshot tests (insta) of every rendered report format, on the small hand-made fixture.
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always cargo test` and read the diff).

use crate::common;

use common::ctxbudget;

fn render(args: &[&str]) -> String {
    let out = ctxbudget()
        .args(["replay", "tests/fixtures/native/small.jsonl", "--threshold", "8"])
        .args(["--policy", "none", "--policy", "keep-turns:n=1"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn table() {
    insta::assert_snapshot!(render(&[]));
}

#[test]
fn table_per_request() {
    insta::assert_snapshot!(render(&["--per-request"]));
}

#[test]
fn csv() {
    insta::assert_snapshot!(render(&["--format", "csv"]));
}

#[test]
fn csv_per_request() {
    insta::assert_snapshot!(render(&["--format", "csv", "--per-request"]));
}

#[test]
fn json() {
    insta::assert_snapshot!(render(&["--format", "json"]));
}

#[test]
fn json_per_request() {
    insta::assert_snapshot!(render(&["--format", "json", "--per-request"]));
}

#[test]
fn markdown() {
    insta::assert_snapshot!(render(&["--format", "markdown"]));
}
