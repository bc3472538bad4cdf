//! The reuse of pruned results (docs/reuse.md) on real Claude Code and Codex sessions: bounds,
//! the baseline prunes nothing, and a policy that prunes the same results earlier (and more of
//! them) loses at least as many the agent reused. Prints the measured shares for the docs.

use serde_json::Value;

use crate::common::{self, ctxbudget};

/// Policies compared, from the most to the least aggressive of the seed's, then the agents'.
const POLICIES: &[&str] = &[
    "keep-results:n=0",
    "keep-turns:n=1",
    "keep-turns:n=3",
    "keep-turns:n=10",
    "keep-results:n=5",
    "anthropic",
    "gemini",
    "openhands",
    "swe-agent",
    "langchain",
    "openclaw",
];

/// `compare --format json` on `path` with [`POLICIES`]: each policy's row, `none` first.
fn rows(path: &std::path::Path) -> Vec<Value> {
    let mut cmd = ctxbudget();
    cmd.arg("compare").arg(path).args(["--format", "json"]);
    for p in POLICIES {
        cmd.args(["--policy", p]);
    }
    let out = cmd.assert().success();
    let json: Value = serde_json::from_slice(&out.get_output().stdout).expect("compare writes JSON");
    json["policies"].as_array().expect("a list of policies").clone()
}

fn number(row: &Value, key: &str) -> u64 {
    row[key].as_u64().unwrap_or_else(|| panic!("{key} in {row}"))
}

fn row<'a>(rows: &'a [Value], policy: &str) -> &'a Value {
    rows.iter().find(|r| r["policy"] == policy).unwrap_or_else(|| panic!("{policy} compared"))
}

/// The properties every comparison must have, and the measured numbers printed.
fn check(name: &str, rows: &[Value]) {
    println!("{name}: policy, pruned_results, reused_results, reuse_share, reused_tokens");
    for r in rows {
        let (pruned, reused) = (number(r, "pruned_results"), number(r, "reused_results"));
        let share = r["reuse_share"].as_f64().expect("reuse_share");
        println!(
            "  {}, {pruned}, {reused}, {:.1}%, {}",
            r["policy"],
            100.0 * share,
            number(r, "reused_tokens")
        );
        assert!(reused <= pruned, "{r}");
        assert!((0.0..=1.0).contains(&share), "{r}");
        let expected = if pruned == 0 { 0.0 } else { reused as f64 / pruned as f64 };
        assert!((share - expected).abs() < 1e-12, "{r}");
        assert_eq!(reused == 0, number(r, "reused_tokens") == 0, "tokens only with results: {r}");
    }
    let none = row(rows, "none");
    assert_eq!((number(none, "pruned_results"), number(none, "reused_results")), (0, 0));
    // keep-turns:n=1 prunes every result keep-turns:n=10 prunes, no later (and keep-results:n=0
    // every result, at the first request after it): a term lost under the later one is lost
    // under the earlier, so it reuses at least as many.
    let reused = |p| number(row(rows, p), "reused_results");
    assert!(reused("keep-turns:n=1") >= reused("keep-turns:n=3"), "{name}");
    assert!(reused("keep-turns:n=3") >= reused("keep-turns:n=10"), "{name}");
    assert!(reused("keep-results:n=0") >= reused("keep-turns:n=1"), "{name}");
}

#[test]
fn on_claude_code_sessions_reuse_is_bounded_and_grows_with_how_early_a_policy_prunes() {
    let Some(dir) = common::corpus("claude-code") else { return };
    let rows = rows(&dir);
    check("claude-code", &rows);
    let share = |p| row(&rows, p)["reuse_share"].as_f64().unwrap();
    assert!(share("keep-turns:n=1") > share("keep-turns:n=10"), "the corpus reuses what n=1 prunes early");
    assert!(
        number(row(&rows, "keep-turns:n=1"), "reused_results") > 0,
        "the agent reuses some pruned results"
    );
}

#[test]
fn on_codex_sessions_reuse_is_bounded_and_grows_with_how_early_a_policy_prunes() {
    let Some(dir) = common::corpus("codex-cli") else { return };
    check("codex-cli", &rows(&dir));
}

#[test]
fn on_one_long_claude_code_session_keep_turns_1_loses_more_reused_results_than_keep_turns_10() {
    let Some(dir) = common::corpus("claude-code") else { return };
    let session = dir.join("codemie-code/session-624a4a58.jsonl");
    let rows = rows(&session);
    check("session-624a4a58", &rows);
    // The count grows strictly here; the share need not (n=10 prunes fewer results, and those it
    // prunes are old ones the agent comes back to): docs/reuse.md.
    let reused = |p| number(row(&rows, p), "reused_results");
    assert!(reused("keep-turns:n=1") > reused("keep-turns:n=10"));
}
