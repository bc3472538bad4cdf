//! The same output bytes at any thread count, on the whole shared corpus (skipped when it is
//! absent): files, the texts of a conversation, the replays of a conversation × threshold × policy
//! grid and a sweep's conversations all run in parallel, and their results are put back in a fixed
//! order. The same replay with either exact counter: `tests/counters.rs`.

use crate::common;

use common::stdout_of as stdout;

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
