//! `--tokenizer provider`: an OpenAI model's log is counted with its own tokenizer (cl100k for
//! gpt-4, o200k for gpt-4o), exactly, and the run's calibration names the tokenizer it used.

use crate::common;

use serde_json::Value;

/// An OpenAI chat request body naming `model`, with text that o200k and cl100k count apart
/// (Japanese: cl100k packs it worse).
fn chat_log(model: &str) -> String {
    let text = "日本語の文章を数えます。東京都の天気は晴れで、気温は二十五度です。";
    serde_json::json!({
        "model": model,
        "messages": [
            {"role": "system", "content": "Answer in Japanese."},
            {"role": "user", "content": text},
            {"role": "assistant", "content": text},
            {"role": "user", "content": format!("{text} {text}")},
        ]
    })
    .to_string()
}

/// `replay FILE --format json --tokenizer TOKENIZER`'s first run (no `--tokenizer` for "").
fn run(file: &std::path::Path, tokenizer: &str) -> Value {
    let mut cmd = common::ctxbudget();
    cmd.args(["replay", file.to_str().unwrap(), "--format", "json"]);
    if !tokenizer.is_empty() {
        cmd.args(["--tokenizer", tokenizer]);
    }
    let out = cmd.output().expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    json["runs"][0].clone()
}

#[test]
fn provider_counts_a_gpt_4_log_with_cl100k_and_a_gpt_4o_log_with_o200k() {
    let dir = tempfile::tempdir().unwrap();
    for (model, own, other) in [("gpt-4-0613", "cl100k", "o200k"), ("gpt-4o-2024-08-06", "o200k", "cl100k")] {
        let file = dir.path().join(format!("{model}.json"));
        std::fs::write(&file, chat_log(model)).unwrap();
        let provider = run(&file, "provider");
        let (own_run, other_run) = (run(&file, own), run(&file, other));
        let total = |r: &Value| r["total_input_tokens"].as_u64().expect("a total");
        assert_eq!(total(&provider), total(&own_run), "{model}: provider counts with {own}");
        assert_ne!(total(&own_run), total(&other_run), "{model}: the text tells the two apart");
        assert_eq!(provider["tokenizer"], "provider");
        assert_eq!(provider["calibration"]["tokenizer"], own, "{model}: {provider}");
        // No usage recorded in a chat request body: nothing is fitted, the counts are exact.
        assert_eq!(provider["calibration"]["method"], "none", "{model}: {provider}");
        assert!(own_run["calibration"].get("tokenizer").is_none(), "written only for provider");
    }
}

#[test]
fn provider_is_the_default_and_counts_a_gpt_4_log_with_cl100k() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gpt-4.json");
    std::fs::write(&file, chat_log("gpt-4-0613")).unwrap();
    let (default, cl100k, o200k) = (run(&file, ""), run(&file, "cl100k"), run(&file, "o200k"));
    assert_eq!(default["tokenizer"], "provider", "{default}");
    assert_eq!(default["calibration"]["tokenizer"], "cl100k", "{default}");
    let total = |r: &Value| r["total_input_tokens"].as_u64().expect("a total");
    assert_eq!(total(&default), total(&cl100k), "exact: the model's own tokenizer");
    // `--tokenizer o200k` still counts every text in o200k, which gpt-4 does not use.
    assert_eq!(o200k["tokenizer"], "o200k");
    assert_ne!(total(&default), total(&o200k));
    // len/4 stays beside the count under every tokenizer (per request, `context_estimate`).
    let estimate = |tokenizer: &str| {
        let out = common::ctxbudget()
            .args(["replay", file.to_str().unwrap(), "--per-request", "--format", "json"])
            .args(["--policy", "none", "--tokenizer", tokenizer])
            .output()
            .expect("the binary runs");
        let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        json["runs"][0]["timeline"][1]["context_estimate"].as_u64().expect("an estimate")
    };
    assert!(estimate("provider") > 0);
    assert_eq!(estimate("provider"), estimate("o200k"));
}

#[test]
fn count_refuses_provider_which_needs_a_log() {
    let out =
        common::ctxbudget().args(["count", "--tokenizer", "provider"]).write_stdin("hello").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--tokenizer provider"), "{err}");
}
