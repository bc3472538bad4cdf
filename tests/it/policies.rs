//! Black-box tests of the policy library through the binary: `ctxbudget policies`, `replay` with
//! `--policy`, `--policies FILE`, `--transform` and `--decide-with`, on the hand-made fixture in
//! `tests/fixtures/policies/` (expected numbers in its `EXPECTED.md`).

use crate::common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use ctxbudget::result::ReplayReport;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policies/session.jsonl")
}

fn ctxbudget() -> Command {
    Command::cargo_bin("ctxbudget").unwrap()
}

/// Runs `replay --format json` with `args` on the fixture and reads the report back strictly.
fn replay_json(args: &[&str]) -> ReplayReport {
    let out =
        ctxbudget().arg("replay").arg(fixture()).args(["--format", "json"]).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn policies_lists_every_policy_and_transform_with_parameters_and_source() {
    let out = ctxbudget().arg("policies").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let entries: Vec<&str> = text.split("\n\n").collect();
    for k in ctxbudget::policy::registry() {
        let entry = entries
            .iter()
            .find(|e| e.starts_with(&format!("{}\n", k.name)))
            .unwrap_or_else(|| panic!("{}", k.name));
        assert!(entry.contains(&format!("source: {}", k.source)), "{}", k.name);
        for p in k.params {
            assert!(entry.contains(&format!("    {}=", p.key)), "{}: {}", k.name, p.key);
        }
    }
    for k in ctxbudget::transform::registry() {
        assert!(text.contains(&format!("\n{}\n    {}\n", k.name, k.about)), "{}", k.name);
    }
    assert!(text.contains("    placeholder=[cleared]  "), "LangChain's placeholder is listed as its default");
}

#[test]
fn replay_combines_command_line_and_file_policies_and_records_transforms() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policies.toml");
    std::fs::write(
        &file,
        "[[policy]]\nkind = \"anthropic\"\nname = \"anthropic-small\"\ntrigger = 5000\nkeep = 1\n\n\
         [[policy]]\nkind = \"swe-agent\"\nn = 1\n",
    )
    .unwrap();
    let report = replay_json(&["--policy", "none", "--policies", file.to_str().unwrap()]);
    let labels: Vec<&str> = report.runs.iter().map(|r| r.policy.as_str()).collect();
    assert_eq!(labels, ["none", "anthropic-small", "swe-agent:n=1"]);
    assert!(report.runs.iter().all(|r| r.decide_with == "anchor" && r.transforms.is_empty()));
    assert!(report.runs.iter().all(|r| r.tool_output_bytes == 30_803), "EXPECTED.md");
    let none = &report.runs[0];
    for run in &report.runs[1..] {
        assert!(run.prune_events > 0 && run.pruned_tokens > 0, "{}", run.policy);
        assert!(run.total_input_tokens < none.total_input_tokens, "{}", run.policy);
    }

    let report = replay_json(&["--policy", "none", "--transform", "truncate:mini", "--decide-with", "real"]);
    assert_eq!(report.runs[0].transforms, ["truncate:mini"]);
    assert_eq!(report.runs[0].tool_output_bytes, 20_761, "EXPECTED.md");
    assert_eq!(report.runs[0].decide_with, "real");
    let report = replay_json(&["--policy", "none", "--transform", "truncate:mini:template=default"]);
    assert_eq!(report.runs[0].tool_output_bytes, 21_205, "EXPECTED.md");
}

#[test]
fn time_based_policies_warn_on_a_trace_without_timestamps() {
    let out = ctxbudget()
        .arg("replay")
        .arg(fixture())
        .args(["--format", "json", "--policy", "openclaw", "--policy", "claude-code-micro"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let report: ReplayReport = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.runs.iter().all(|r| r.prune_events == 0));
    let shown = fixture().display().to_string();
    assert_eq!(
        report.warnings,
        [
            format!(
                "{shown}: conversation `main`: policy `openclaw`: the trace records no timestamps, so \
                 `openclaw` (which prunes after an idle gap) never fires"
            ),
            format!(
                "{shown}: conversation `main`: policy `claude-code-micro`: the trace records no timestamps, so \
                 `claude-code-micro` (which prunes after an idle gap) never fires"
            ),
        ]
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("warning: ") && stderr.contains("never fires"), "{stderr}");
}

#[test]
fn a_bad_policies_file_is_a_usage_error_naming_the_file_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[[policy]]\nkind = \"opencode\"\nprotect = -5\n").unwrap();
    let out = ctxbudget().arg("replay").arg(fixture()).arg("--policies").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!(
            "error: {}: policy #1: bad value for `protect` in `opencode:protect=-5`",
            file.display()
        )),
        "{stderr}"
    );
    let out =
        ctxbudget().arg("replay").arg(fixture()).args(["--transform", "truncate:claude"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn two_policies_of_one_name_or_a_pruning_policy_named_none_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let usage = |args: &[&str], file: Option<(&str, &str)>, expected: &str| {
        let mut c = ctxbudget();
        c.arg("compare").arg(fixture()).args(args);
        if let Some((name, text)) = file {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            c.arg("--policies").arg(path);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with(expected), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing is replayed");
    };
    // Their rows, totals and events would be added into one another under the one name.
    let twice = "error: policy `keep-turns:n=3` is given twice by --policy";
    usage(&["--policy", "keep-turns:n=3", "--policy", "keep-turns:n=3"], None, twice);
    // A policy of a file is named by the file and its table.
    let named = ("named.toml", "[[policy]]\nkind = \"keep-results\"\nname = \"keep-turns:n=3\"\n");
    let file = dir.path().join(named.0);
    let clash = format!(
        "error: {}: policy #1 (`keep-results`): `keep-turns:n=3` is already the name of a policy given by --policy",
        file.display()
    );
    usage(&["--policy", "keep-turns:n=3"], Some(named), &clash);
    // It would replace the baseline that every saving is measured against.
    let none = ("none.toml", "[[policy]]\nkind = \"keep-turns\"\nname = \"none\"\nn = 1\n");
    let file = dir.path().join(none.0);
    usage(&[], Some(none), &format!("error: {}: policy #1 (`keep-turns`): `name` is `none`", file.display()));
    // `none` itself, named or not, is the baseline.
    let report = replay_json(&["--policy", "none", "--policy", "keep-turns:n=3"]);
    let policies: std::collections::BTreeSet<&str> = report.runs.iter().map(|r| r.policy.as_str()).collect();
    assert_eq!(policies.into_iter().collect::<Vec<_>>(), ["keep-turns:n=3", "none"]);
}

/// Every policy, at its defaults and with triggers small enough to fire on the corpus sessions,
/// on whole outputs (the anchors' default) and on the seed's contents.
const CORPUS_POLICIES: [&str; 28] = [
    "none",
    "keep-turns",
    "keep-results",
    "budget:max=20000,target=10000",
    "anthropic",
    "anthropic:trigger=20000",
    "anthropic:trigger=20000,clear_at_least=5000,clear_tool_inputs=true",
    "langchain",
    "langchain:trigger=20000",
    "opencode",
    "opencode:protect=5000,minimum=1000",
    "gemini",
    "gemini:protect=5000,minimum=1000,shell_tools=Bash",
    "swe-agent",
    "complexity-trap",
    "openhands",
    "openhands:attention_window=10",
    "openhands-amortized:max_size=20",
    "openclaw",
    "openclaw:ttl=1m,context_window=20000",
    "openclaw:ttl=1m,context_window=20000,sticky=true",
    "claude-code-micro",
    "claude-code-micro:gap=1m",
    "anthropic:trigger=20000,on=content",
    "langchain:trigger=20000,on=content",
    "opencode:protect=5000,minimum=1000,on=content",
    "swe-agent:on=content",
    "openhands:attention_window=10,on=content",
];

/// Whether `spec` only ever puts text smaller than what it replaces: on the seed's contents (over
/// the threshold) every placeholder is; on whole outputs a placeholder may be longer than a short
/// output it replaces, as the agents' own are, except Gemini's, which masks only when it saves.
fn never_grows(spec: &str) -> bool {
    let name = spec.split(':').next().unwrap_or(spec);
    spec.contains("on=content") || ["none", "keep-turns", "keep-results", "budget", "gemini"].contains(&name)
}

#[test]
fn on_the_corpus_no_policy_sends_more_than_none_and_each_scaled_one_fires() {
    let Some(corpus) = common::corpus("claude-code") else { return };
    let mut cmd = ctxbudget();
    // The log's compactions kept where they were recorded: what a policy's own edits send, against
    // none's. Under `simulated` the agent's trigger follows each policy's context, and a policy
    // that prunes below the trigger can send more than `none`, which compacts (session-624a4a58).
    cmd.arg("replay").arg(&corpus).args(["--format", "json", "--harness-compaction", "recorded"]);
    for p in CORPUS_POLICIES {
        cmd.args(["--policy", p]);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: ReplayReport = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    // Runs come per conversation, policies in the order given.
    for runs in report.runs.chunks(CORPUS_POLICIES.len()) {
        let none = &runs[0];
        assert_eq!(none.policy, "none");
        for run in runs {
            assert_eq!((&run.trace, &run.conversation), (&none.trace, &none.conversation));
            if !never_grows(&run.policy) {
                continue;
            }
            // Placeholders and previews are only put where they are smaller than what they replace.
            assert!(
                run.total_input_tokens <= none.total_input_tokens,
                "{} {}: {}",
                run.trace,
                run.conversation,
                run.policy
            );
            assert!(
                run.peak_context_tokens <= none.peak_context_tokens,
                "{} {}: {}",
                run.trace,
                run.conversation,
                run.policy
            );
        }
    }
    for p in CORPUS_POLICIES.iter().filter(|p| p.contains(':')) {
        let events: usize = report.runs.iter().filter(|r| r.policy == *p).map(|r| r.prune_events).sum();
        assert!(events > 0, "{p} never fired on the corpus");
    }
}
