//! The same output bytes at any thread count, on the whole shared corpus (skipped when it is
//! absent): files, the texts of a conversation, the replays of a conversation × threshold × policy
//! grid and a sweep's conversations all run in parallel, and their results are put back in a fixed
//! order. The same replay with either exact counter: `tests/counters.rs`.

use crate::common;

use common::ctxbudget;

/// Runs `ctxbudget ARGS` and returns its stdout, checking that it succeeded (the corpus has files
/// no format reads, which are warnings, not errors).
fn stdout(args: &[&str]) -> Vec<u8> {
    let out = ctxbudget().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.is_empty(), "{args:?}: no output");
    out.stdout
}

#[test]
fn replay_sweep_and_compare_print_the_same_bytes_on_one_and_four_threads() {
    let Some(corpus) = common::corpus("") else { return };
    let corpus = corpus.to_str().unwrap();
    let policies = [
        "--policy",
        "none",
        "--policy",
        "keep-turns:n=3",
        "--policy",
        "swe-agent",
        "--policy",
        "anthropic:trigger=20000",
    ];
    let commands: Vec<Vec<&str>> = vec![
        [&["replay", corpus, "--format", "json", "--per-request"][..], &policies].concat(),
        vec!["sweep", corpus, "--format", "json", "--policy", "langchain:trigger=20000"],
        [&["compare", corpus, "--format", "json"][..], &policies].concat(),
    ];
    for command in commands {
        let one = stdout(&[&command[..], &["-j", "1"]].concat());
        let four = stdout(&[&command[..], &["-j", "4"]].concat());
        assert!(one == four, "{command:?}: -j 1 and -j 4 differ");
    }
}
