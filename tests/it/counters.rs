//! Without the `counter-tiktoken-rs` feature, `--counter tiktoken-rs` is refused with the feature
//! named. The tests that need every counter built (the differential tests) are their own test
//! binary, `tests/counters.rs`, which `.ci/run` runs with `--features all-counters`.

#[cfg(not(feature = "counter-tiktoken-rs"))]
#[test]
fn a_counter_that_is_not_built_is_refused_with_the_feature_that_builds_it() {
    let out = assert_cmd::Command::cargo_bin("ctxbudget")
        .unwrap()
        .args(["replay", "traces", "--counter", "tiktoken-rs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("--features counter-tiktoken-rs"), "{stderr}");
    assert!(out.stdout.is_empty());
}
