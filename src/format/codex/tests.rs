//! Unit tests of the Codex rollout importer (`super`): request boundaries and usage across
//! versions, hidden reasoning, typed prompts, compaction and tool outputs on hand-written rollout
//! lines; the counts of the repository's two rollout fixtures; detection.

use super::*;
use crate::format::with_head;

#[test]
fn the_exit_code_is_read_from_a_json_output_or_its_header_line() {
    assert_eq!(exit_code(r#"{"output":"ok\n","metadata":{"exit_code":2,"duration_seconds":0.1}}"#), Some(2));
    assert_eq!(exit_code(r#"{"output":"ok"}"#), None);
    assert_eq!(exit_code(r#"{"output":"ok","metadata":"none"}"#), None);
    assert_eq!(exit_code(r#"{"metadata":{"exit_code":"1"}}"#), None);
    // A key given twice: the last one, as a `Value` reads it.
    assert_eq!(exit_code(r#"{"metadata":{"exit_code":1},"metadata":{"exit_code":3}}"#), Some(3));
    // Not JSON after all: the header lines of a 0.12x output.
    assert_eq!(exit_code("{not json\nProcess exited with code 4\n"), Some(4));
    assert_eq!(exit_code("Chunk ID: 1\nWall time: 0.1\nProcess exited with code 0\nOutput:\n"), Some(0));
    assert_eq!(exit_code("plain"), None);
}

fn read(lines: &[String]) -> Trace {
    let text = lines.join("\n") + "\n";
    Codex.read(&mut text.as_bytes(), Path::new("rollout.jsonl")).unwrap()
}

fn line(kind: &str, payload: &str) -> String {
    format!(r#"{{"timestamp":"2025-09-25T21:12:14.114Z","type":"{kind}","payload":{payload}}}"#)
}
fn meta(instructions: &str) -> String {
    line(
        "session_meta",
        &format!(r#"{{"id":"s","cli_version":"0.125.0","base_instructions":{{"text":"{instructions}"}}}}"#),
    )
}
fn user(text: &str) -> String {
    line(
        "response_item",
        &format!(r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}"#),
    )
}
fn prompt(text: &str) -> String {
    line("event_msg", &format!(r#"{{"type":"user_message","message":"{text}"}}"#))
}
fn call(id: &str) -> String {
    line(
        "response_item",
        &format!(r#"{{"type":"function_call","name":"shell","arguments":"{{}}","call_id":"{id}"}}"#),
    )
}
fn output(id: &str, out: &str) -> String {
    line("response_item", &format!(r#"{{"type":"function_call_output","call_id":"{id}","output":{out}}}"#))
}
fn reasoning(summary: &str) -> String {
    line(
        "response_item",
        &format!(
            r#"{{"type":"reasoning","summary":[{{"type":"summary_text","text":"{summary}"}}],"encrypted_content":"gAAAA"}}"#
        ),
    )
}
fn answer(text: &str) -> String {
    line(
        "response_item",
        &format!(
            r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}]}}"#
        ),
    )
}
fn tokens(total: u64, last: u64) -> String {
    line(
        "event_msg",
        &format!(
            r#"{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{total},"cached_input_tokens":0,"output_tokens":1,"total_tokens":{total}}},"last_token_usage":{{"input_tokens":{last},"cached_input_tokens":8,"output_tokens":1,"total_tokens":{last}}}}}}}"#
        ),
    )
}
fn turn_context() -> String {
    line("turn_context", r#"{"cwd":"/r","model":"gpt-5-codex"}"#)
}

fn recorded(t: &Trace) -> Vec<Option<u64>> {
    t.conversations[0]
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Request(r) => Some(r.usage.map(|u| u.input_tokens)),
            _ => None,
        })
        .collect()
}

/// The shared kinds, with harness-injected user text told apart as `meta`.
fn kinds(t: &Trace) -> Vec<&'static str> {
    let kind = |i: &Item| match i {
        Item::User { meta: true, .. } => "meta",
        other => crate::format::shared::testing::kind(other),
    };
    t.conversations[0].items.iter().map(kind).collect()
}

/// A `token_count` whose call produced `reasoning` reasoning tokens.
fn tokens_reasoning(total: u64, last: u64, reasoning: u64) -> String {
    tokens(total, last).replace(
        &format!(r#""output_tokens":1,"total_tokens":{last}"#),
        &format!(r#""output_tokens":1,"reasoning_output_tokens":{reasoning},"total_tokens":{last}"#),
    )
}

fn unseen(t: &Trace) -> Vec<(UnseenKind, u64)> {
    let items = &t.conversations[0].items;
    items
        .iter()
        .filter_map(|i| if let Item::Unseen { kind, tokens } = i { Some((*kind, *tokens)) } else { None })
        .collect()
}

#[test]
fn hidden_reasoning_is_sized_from_its_calls_reasoning_tokens_whichever_comes_first() {
    // 0.40: the event comes before the call's items; 0.12x: after them.
    let before = read(&[
        user("fix it"),
        turn_context(),
        tokens_reasoning(100, 100, 64),
        reasoning("Looking"),
        call("c1"),
        output("c1", r#""ok""#),
        turn_context(),
        tokens_reasoning(250, 150, 0),
        reasoning("Done"),
        answer("done"),
    ]);
    let after = read(&[
        user("fix it"),
        reasoning("Looking"),
        call("c1"),
        output("c1", r#""ok""#),
        tokens_reasoning(100, 100, 64),
        reasoning("Done"),
        answer("done"),
        tokens_reasoning(250, 150, 0),
    ]);
    for t in [before, after] {
        assert_eq!(
            kinds(&t),
            ["user", "request", "thinking", "unseen", "call", "result", "request", "thinking", "assistant"],
        );
        assert_eq!(unseen(&t), [(UnseenKind::Reasoning, 64)], "no item for a call without reasoning tokens");
        assert_eq!(recorded(&t), [Some(100), Some(150)]);
    }
    // A call whose event records no reasoning tokens at all, or a run without a reasoning
    // item: nothing unseen.
    let t =
        read(&[user("fix it"), reasoning("Looking"), call("c1"), output("c1", r#""ok""#), tokens(100, 100)]);
    assert!(unseen(&t).is_empty());
    let t = read(&[user("fix it"), call("c1"), output("c1", r#""ok""#), tokens_reasoning(100, 100, 64)]);
    assert!(unseen(&t).is_empty());
}

#[test]
fn layout_040_token_count_before_the_items_belongs_to_the_call_that_follows() {
    let t = read(&[
        meta("").replace("0.125.0", "0.40.0"),
        user("<environment_context>cwd</environment_context>"),
        user("fix it"),
        prompt("fix it"),
        turn_context(),
        tokens(100, 100),
        reasoning("Looking"),
        call("c1"),
        output("c1", r#""{\"output\":\"ok\\n\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.1}}""#),
        turn_context(),
        tokens(250, 150),
        answer("done"),
    ]);
    assert_eq!(kinds(&t), ["meta", "user", "request", "thinking", "call", "result", "request", "assistant"]);
    assert_eq!(recorded(&t), [Some(100), Some(150)]);
    let Item::ToolResult(r) = &t.conversations[0].items[5] else { panic!() };
    // The whole JSON string is what the model saw.
    assert_eq!(
        r.output.full_text(),
        r#"{"output":"ok\n","metadata":{"exit_code":1,"duration_seconds":0.1}}"#
    );
    assert!(r.is_error);
    assert_eq!(r.name.as_deref(), Some("shell"));
}

#[test]
fn layout_012x_token_count_after_the_outputs_belongs_to_the_call_before() {
    let t = read(&[
        meta("You are Codex."),
        prompt("fix it"),
        turn_context(),
        user("fix it"),
        call("c1"),
        call("c2"),
        output(
            "c1",
            r#""Chunk ID: a\nWall time: 0.1 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\nx""#,
        ),
        output("c2", r#""Chunk ID: b\nProcess exited with code 2\nOutput:\ny""#),
        tokens(100, 100),
        tokens(100, 100),
        answer("done"),
        tokens(220, 120),
    ]);
    assert_eq!(
        kinds(&t),
        ["system", "user", "request", "call", "call", "result", "result", "request", "assistant"]
    );
    assert_eq!(recorded(&t), [Some(100), Some(120)], "the repeated event is not a call");
    let errors: Vec<bool> = t.conversations[0]
        .items
        .iter()
        .filter_map(|i| if let Item::ToolResult(r) = i { Some(r.is_error) } else { None })
        .collect();
    assert_eq!(errors, [false, true]);
}

#[test]
fn a_call_without_items_is_a_request_where_its_usage_stands() {
    let t = read(&[
        user("go"),
        turn_context(),
        tokens(100, 100),
        line("event_msg", r#"{"type":"turn_aborted","reason":"interrupted"}"#),
        user("again"),
        turn_context(),
        tokens(300, 200),
        answer("ok"),
    ]);
    assert_eq!(kinds(&t), ["user", "request", "user", "request", "assistant"]);
    assert_eq!(recorded(&t), [Some(100), Some(200)]);
}

#[test]
fn null_info_carries_no_usage() {
    let t = read(&[
        user("go"),
        answer("ok"),
        line("event_msg", r#"{"type":"token_count","info":null,"rate_limits":{}}"#),
    ]);
    assert_eq!(recorded(&t), [None]);
}

#[test]
fn prompts_only_in_events_are_the_user_text_and_start_a_new_call() {
    let t = read(&[meta("sys"), prompt("first"), answer("one"), prompt("second"), answer("two")]);
    assert_eq!(kinds(&t), ["system", "user", "request", "assistant", "user", "request", "assistant"]);
    let texts: Vec<&str> = t.conversations[0]
        .items
        .iter()
        .filter_map(|i| if let Item::User { text, .. } = i { Some(text.as_str()) } else { None })
        .collect();
    assert_eq!(texts, ["first", "second"]);
}

#[test]
fn custom_tools_web_search_and_developer_items() {
    let t = read(&[
        line(
            "response_item",
            r#"{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>x"}]}"#,
        ),
        user("patch it"),
        line(
            "response_item",
            r#"{"type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}"#,
        ),
        line(
            "response_item",
            r#"{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch","call_id":"p1"}"#,
        ),
        line("response_item", r#"{"type":"custom_tool_call_output","call_id":"p1","output":"Success."}"#),
    ]);
    // The search's results stand before the request of the run that searched: that call's own
    // recorded prompt holds them.
    assert_eq!(kinds(&t), ["system", "user", "unseen", "request", "call", "call", "result"]);
    let c = &t.conversations[0];
    assert_eq!(c.tool_results(), 1);
    let Item::ToolCall { name, arguments, .. } = &c.items[4] else { panic!() };
    assert_eq!((name.as_str(), arguments.as_str()), ("web_search", r#"{"query":"q","type":"search"}"#));
    // The search's results: not in the rollout, sized later by the calibration.
    assert_eq!(unseen(&t), [(UnseenKind::ServerSide, 0)]);
    let Item::ToolResult(r) = &c.items[6] else { panic!() };
    assert_eq!(r.name.as_deref(), Some("apply_patch"));
}

#[test]
fn compacted_replaces_the_context_and_instructions_are_sent_again() {
    let t = read(&[
        meta("sys"),
        user("go"),
        answer("ok"),
        line("compacted", r#"{"message":"summary of it"}"#),
        user("more"),
        answer("ok"),
    ]);
    assert_eq!(
        kinds(&t),
        ["system", "user", "request", "assistant", "compaction", "system", "user", "request", "assistant"]
    );
    assert!(
        matches!(&t.conversations[0].items[4], Item::Compaction { summary: Some(s) } if s == "summary of it")
    );
}

fn fixture(name: &str) -> Trace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    with_head(&path, text.as_bytes(), true, |h| assert!(Codex.detect(h)));
    Codex.read(&mut text.as_bytes(), &path).unwrap()
}

fn count(t: &Trace, kind: &str) -> usize {
    kinds(t).iter().filter(|k| **k == kind).count()
}

#[test]
fn fixture_rollout_0_40_counts() {
    // Expected numbers: tests/fixtures/codex/EXPECTED.md.
    let t = fixture("rollout-0.40.jsonl");
    assert_eq!(t.conversations.len(), 1);
    assert_eq!(recorded(&t), [Some(1000), Some(1100), Some(1200), Some(1350), Some(1400)]);
    let c = &t.conversations[0];
    assert_eq!(c.tool_results(), 2);
    let results: Vec<&ToolResult> =
        c.items.iter().filter_map(|i| if let Item::ToolResult(r) = i { Some(r) } else { None }).collect();
    assert_eq!(
        results[0].output.full_text(),
        r#"{"output":"a.txt\nb.txt\n","metadata":{"exit_code":0,"duration_seconds":0.1}}"#
    );
    assert_eq!((results[0].is_error, results[1].is_error), (false, true));
    assert_eq!((count(&t, "user"), count(&t, "meta"), count(&t, "system")), (3, 1, 0));
    assert_eq!(count(&t, "thinking"), 1);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn fixture_rollout_0_125_counts() {
    let t = fixture("rollout-0.125.jsonl");
    assert_eq!(recorded(&t), [Some(1500), Some(1700), Some(1800), None]);
    let c = &t.conversations[0];
    assert_eq!((count(&t, "call"), c.tool_results()), (3, 2));
    assert_eq!((count(&t, "system"), count(&t, "user"), count(&t, "meta")), (3, 2, 2));
    assert_eq!((count(&t, "compaction"), count(&t, "thinking")), (1, 0));
    assert!(c.items.iter().any(
        |i| matches!(i, Item::Compaction { summary: Some(s) } if s.starts_with("Summary: the user asked"))
    ));
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn detects_rollouts_but_not_claude_code_or_native_lines() {
    with_head(Path::new("r.jsonl"), meta("x").as_bytes(), true, |h| assert!(Codex.detect(h)));
    with_head(Path::new("r.jsonl"), br#"{"type":"user","text":"hi"}"#, true, |h| assert!(!Codex.detect(h)));
    let claude = br#"{"type":"user","sessionId":"s","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}"#;
    with_head(Path::new("r.jsonl"), claude, true, |h| assert!(!Codex.detect(h)));
    with_head(Path::new("r.jsonl"), meta("x").as_bytes(), true, |h| {
        assert!(!crate::format::claude_code::ClaudeCode.detect(h));
        assert!(!crate::format::native::Native.detect(h));
        assert!(!crate::format::claude_stream::ClaudeStream.detect(h));
    });
}

/// A `shell` call and its 0.40-style JSON output under `version` and `model`.
fn shell_run(version: &str, model: &str, out: &str) -> Trace {
    read(&[
        meta("").replace("0.125.0", version),
        turn_context().replace("gpt-5-codex", model),
        user("fix it"),
        call("c1"),
        output("c1", out),
        tokens(100, 100),
    ])
}

fn result_text(t: &Trace) -> String {
    let result = t.conversations[0].items.iter().find_map(|i| match i {
        Item::ToolResult(r) => Some(r),
        _ => None,
    });
    result.expect("a tool result").output.full_text().into_owned()
}

#[test]
fn from_0_45_a_freeform_models_shell_output_is_the_text_codex_sent_not_the_recorded_json() {
    // The layout of a real 0.58 `gpt-5.1-codex` rollout: Codex truncated the output and
    // recorded a `Total output lines` header in it.
    let json = r#""{\"output\":\"Total output lines: 295\\n\\nline 1\\n[... omitted 39 of 295 lines ...]\\n\",\"metadata\":{\"exit_code\":2,\"duration_seconds\":0.0}}""#;
    let t = shell_run("0.58.0", "gpt-5.1-codex", json);
    assert_eq!(
        result_text(&t),
        "Exit code: 2\nWall time: 0 seconds\nTotal output lines: 295\nOutput:\nline 1\n[... omitted 39 of 295 lines ...]\n"
    );
    let Some(Item::ToolResult(r)) =
        t.conversations[0].items.iter().find(|i| matches!(i, Item::ToolResult(_)))
    else {
        panic!()
    };
    assert!(r.is_error, "the exit code is still read from the JSON");
    // Without the header the output follows `Output:` as it is; a fraction of a second prints
    // as Rust prints an f32.
    let json = r#""{\"output\":\"a.txt\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":1.5}}""#;
    let t = shell_run("0.128.0-alpha.1", "gpt-5-codex", json);
    assert_eq!(result_text(&t), "Exit code: 0\nWall time: 1.5 seconds\nOutput:\na.txt\n");
}

#[test]
fn before_0_45_or_for_a_model_without_the_freeform_tool_the_json_is_what_was_sent() {
    let json = r#""{\"output\":\"a.txt\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}""#;
    let as_recorded = r#"{"output":"a.txt\n","metadata":{"exit_code":0,"duration_seconds":0.1}}"#;
    assert_eq!(result_text(&shell_run("0.40.0", "gpt-5-codex", json)), as_recorded);
    assert_eq!(result_text(&shell_run("0.58.0", "gpt-4.1", json)), as_recorded);
    // Output that is not the shell JSON is left as recorded.
    assert_eq!(result_text(&shell_run("0.58.0", "gpt-5.1-codex", r#""plain""#)), "plain");
}

#[test]
fn versions_read_as_major_and_minor() {
    assert_eq!(major_minor("0.58.0"), Some((0, 58)));
    assert_eq!(major_minor("0.128.0-alpha.1"), Some((0, 128)));
    assert_eq!(major_minor("1.2"), Some((1, 2)));
    assert_eq!(major_minor("dev"), None);
}

#[test]
fn a_ghost_snapshot_is_not_sent_and_not_reported_as_unknown() {
    let t = read(&[
        meta(""),
        user("fix it"),
        line("response_item", r#"{"type":"ghost_snapshot","ghost_commit":{"id":"a0"}}"#),
        answer("done"),
        tokens(100, 100),
    ]);
    assert_eq!(kinds(&t), ["user", "request", "assistant"]);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

#[test]
fn a_remote_compactions_encrypted_summary_is_not_reported_as_unknown() {
    // Codex Desktop 0.104: `replacement_history` ends with the encrypted summary.
    let history = r#"{"replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]},{"type":"compaction","encrypted_content":"gAAAAB"}]}"#;
    let t = read(&[meta(""), user("fix it"), answer("done"), tokens(100, 100), line("compacted", history)]);
    assert_eq!(kinds(&t), ["user", "request", "assistant", "compaction", "user"]);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    // Any other item type is still named.
    let other = history.replace("\"compaction\"", "\"mystery\"");
    let t = read(&[meta(""), user("fix it"), answer("done"), tokens(100, 100), line("compacted", &other)]);
    assert!(t.warnings.iter().any(|w| w.contains("mystery")), "{:?}", t.warnings);
}

#[test]
fn a_search_after_reasoning_goes_before_its_request_and_the_reasoning_is_still_sized() {
    let search = || line("response_item", r#"{"type":"web_search_call","status":"completed","action":{}}"#);
    // 0.12x: reasoning, two searches and an answer in one call, its usage after them.
    let t = read(&[
        user("look it up"),
        reasoning("Searching"),
        search(),
        search(),
        answer("found"),
        tokens_reasoning(900, 900, 40),
    ]);
    assert_eq!(
        kinds(&t),
        ["user", "unseen", "unseen", "request", "thinking", "unseen", "call", "call", "assistant"]
    );
    assert_eq!(
        unseen(&t),
        [(UnseenKind::ServerSide, 0), (UnseenKind::ServerSide, 0), (UnseenKind::Reasoning, 40)]
    );
    assert_eq!(recorded(&t), [Some(900)]);
    // In a compaction's replacement history a search is context, not a call: its results follow it.
    let t = read(&[
        user("go"),
        answer("ok"),
        line(
            "compacted",
            r#"{"replacement_history":[{"type":"web_search_call","status":"completed","action":{}}]}"#,
        ),
    ]);
    assert_eq!(kinds(&t), ["user", "request", "assistant", "compaction", "call", "unseen"]);
}
