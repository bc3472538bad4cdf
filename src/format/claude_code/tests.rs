//! Unit tests of the Claude Code importer (`super`): request merging and usage, images, sidechains,
//! compaction, harness text, the typed records' strictness and detection, each on a few
//! hand-written transcript lines.

use super::*;
use crate::format::with_head;

fn read(lines: &[&str]) -> Trace {
    let text = lines.join("\n") + "\n";
    ClaudeCode.read(&mut text.as_bytes(), Path::new("s.jsonl")).unwrap()
}

const USER: &str = r#"{"type":"user","sessionId":"s","uuid":"u1","parentUuid":null,"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"list files"}}"#;

fn asst(id: &str, block: &str, out: u64) -> String {
    format!(
        r#"{{"type":"assistant","sessionId":"s","timestamp":"2025-01-01T00:00:01Z","message":{{"id":"{id}","model":"claude","content":[{block}],"usage":{{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":{out}}}}}}}"#
    )
}

fn result(id: &str, content: &str) -> String {
    format!(
        r#"{{"type":"user","sessionId":"s","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":{content}}}]}}}}"#
    )
}

#[test]
fn one_response_over_several_lines_is_one_request_with_usage_once() {
    let t = read(&[
        USER,
        &asst("m1", r#"{"type":"thinking","thinking":"hmm"}"#, 5),
        &asst("m1", r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}"#, 30),
        &result("t1", r#""a\nb""#),
        &asst("m2", r#"{"type":"text","text":"done"}"#, 2),
    ]);
    let c = &t.conversations[0];
    assert_eq!(c.requests(), 2);
    let Item::Request(r) = &c.items[1] else { panic!("{:?}", c.items[1]) };
    let u = r.usage.unwrap();
    assert_eq!(u.input_tokens, 1103);
    assert_eq!(u.output_tokens, Some(30));
    assert_eq!(r.timestamp, parse_rfc3339("2025-01-01T00:00:01Z"));
    match &c.items[4] {
        Item::ToolResult(tr) => {
            assert_eq!(tr.name.as_deref(), Some("Bash"));
            assert_eq!(tr.output, Output::Raw { output: "a\nb".into() });
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_usage_without_a_prompt_size_is_unrecorded_until_a_line_of_the_response_has_one() {
    let line = |id: &str, usage: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s","message":{{"id":"{id}","content":[{{"type":"text","text":"x"}}],"usage":{usage}}}}}"#
        )
    };
    let t = read(&[
        USER,
        &line("m1", r#"{"output_tokens":5}"#),
        &line("m2", r#"{"input_tokens":"12","cache_read_input_tokens":null,"output_tokens":1}"#),
        &line("m2", r#"{"input_tokens":7,"output_tokens":4}"#),
    ]);
    let usages: Vec<Option<Usage>> = t.conversations[0]
        .items
        .iter()
        .filter_map(|i| if let Item::Request(r) = i { Some(r.usage) } else { None })
        .collect();
    assert_eq!(usages[0], None, "only output tokens: no prompt size");
    let u = usages[1].expect("the second line of m2 records one");
    assert_eq!((u.input_tokens, u.output_tokens), (7, Some(4)));
}

#[test]
fn interleaved_blocks_of_one_response_stay_before_its_tool_results() {
    let t = read(&[
        USER,
        &asst("m1", r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#, 1),
        &result("t1", r#""one""#),
        &asst("m1", r#"{"type":"tool_use","id":"t2","name":"Read","input":{}}"#, 2),
        &result("t2", r#""two""#),
    ]);
    let kinds = crate::format::shared::testing::kinds(&t.conversations[0].items);
    assert_eq!(kinds, ["user", "request", "call", "call", "result", "result"]);
}

#[test]
fn result_text_blocks_are_joined_and_images_counted() {
    let t = read(&[
        USER,
        &asst("m1", r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#, 1),
        &result(
            "t1",
            r#"[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]"#,
        ),
    ]);
    let Item::ToolResult(tr) = &t.conversations[0].items[3] else { panic!() };
    assert_eq!(tr.output, Output::Raw { output: "a\nb".into() });
    assert_eq!(tr.images, 1);
}

#[test]
fn tool_reference_blocks_are_counted_in_a_warning_that_says_their_schemas_are_missing() {
    let reference = |tool: &str| format!(r#"{{"type":"tool_reference","tool_name":"{tool}"}}"#);
    let t = read(&[
        USER,
        &asst("m1", r#"{"type":"tool_use","id":"t1","name":"ToolSearch","input":{}}"#, 1),
        &result("t1", &format!("[{},{}]", reference("WebSearch"), reference("WebFetch"))),
        &asst("m2", r#"{"type":"tool_use","id":"t2","name":"ToolSearch","input":{}}"#, 1),
        &result("t2", &format!(r#"[{{"type":"text","text":"found"}},{}]"#, reference("TaskGet"))),
    ]);
    assert_eq!(
        t.warnings,
        ["3 `tool_reference` block(s) in tool results load tool schemas the file does not hold: \
          the requests after them are replayed smaller than sent"]
    );
    let outputs: Vec<String> =
        t.conversations[0]
            .items
            .iter()
            .filter_map(|i| {
                if let Item::ToolResult(r) = i { Some(r.output.full_text().into_owned()) } else { None }
            })
            .collect();
    assert_eq!(outputs, ["", "found"], "the results stay, with the text they hold");
    assert!(read(&[USER]).warnings.is_empty());
}

#[test]
fn synthetic_lines_are_not_requests() {
    let synthetic = r#"{"type":"assistant","sessionId":"s","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"No response requested."}]}}"#;
    let t = read(&[USER, synthetic]);
    assert_eq!(t.conversations[0].requests(), 0);
}

#[test]
fn sidechains_are_conversations_of_their_own() {
    let side_root = r#"{"type":"user","isSidechain":true,"sessionId":"s","uuid":"s1","parentUuid":null,"message":{"role":"user","content":"sub task"}}"#;
    let side_reply = r#"{"type":"assistant","isSidechain":true,"sessionId":"s","uuid":"s2","parentUuid":"s1","message":{"id":"ms","content":[{"type":"text","text":"ok"}]}}"#;
    let agent = r#"{"type":"user","isSidechain":true,"agentId":"abc","sessionId":"s","message":{"role":"user","content":"hi"}}"#;
    let t = read(&[USER, side_root, side_reply, agent]);
    let ids: Vec<&str> = t.conversations.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["main", "sidechain-1", "agent-abc"]);
    assert_eq!(t.conversations[1].requests(), 1);
}

#[test]
fn compact_boundary_is_a_compaction_marker() {
    let boundary = r#"{"type":"system","subtype":"compact_boundary","sessionId":"s","compactMetadata":{"trigger":"auto","preTokens":1}}"#;
    let summary = r#"{"type":"user","sessionId":"s","isCompactSummary":true,"message":{"role":"user","content":"summary"}}"#;
    let t = read(&[USER, boundary, summary]);
    assert!(matches!(t.conversations[0].items[1], Item::Compaction { summary: None }));
    assert!(matches!(&t.conversations[0].items[2], Item::User { text, .. } if text == "summary"));
}

#[test]
fn harness_written_user_text_is_kept_as_meta_but_a_slash_command_starts_a_turn() {
    let user = |fields: &str, content: &str| {
        format!(
            r#"{{"type":"user","sessionId":"s"{fields},"message":{{"role":"user","content":{content}}}}}"#
        )
    };
    let t = read(&[
        USER,
        &user("", r#""<command-name>/clear</command-name>\n<command-message>clear</command-message>""#),
        &user("", r#""<command-message>review</command-message>\n<command-name>/review</command-name>""#),
        &user("", r#""<local-command-stdout>done</local-command-stdout>""#),
        &user("", r#""<local-command-stderr>oops</local-command-stderr>""#),
        &user("", r#"[{"type":"text","text":"[Request interrupted by user for tool use]"}]"#),
        &user(r#","isCompactSummary":true"#, r#""This session is being continued…""#),
        &user(r#","isMeta":true"#, r#""<local-command-caveat>Caveat</local-command-caveat>""#),
        &user("", r#""why is [Request interrupted by user] shown?""#),
    ]);
    let meta: Vec<bool> = t.conversations[0]
        .items
        .iter()
        .map(|i| match i {
            Item::User { meta, .. } => *meta,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(meta, [false, false, false, true, true, true, true, true, false]);
}

#[test]
fn unknown_line_types_are_counted_in_a_warning() {
    let future = r#"{"type":"hologram","sessionId":"s","uuid":"h"}"#;
    let title = r#"{"type":"ai-title","sessionId":"s","title":"t"}"#;
    let t = read(&[USER, future, title, future]);
    assert_eq!(
        t.warnings,
        ["2 line(s) of type `hologram` not replayed (unknown line type; a newer Claude Code version?)"]
    );
    assert_eq!(t.conversations[0].items.len(), 1);
}

#[test]
fn missing_message_id_is_an_error_naming_the_line() {
    let bad = r#"{"type":"assistant","sessionId":"s","message":{"content":[]}}"#;
    let text = format!("{USER}\n{bad}\n");
    let e = ClaudeCode.read(&mut text.as_bytes(), Path::new("s.jsonl")).unwrap_err();
    assert_eq!(e.to_string(), "s.jsonl:2: assistant line has no `message.id`");
}

fn error(lines: &[&str]) -> String {
    let text = lines.join("\n") + "\n";
    ClaudeCode.read(&mut text.as_bytes(), Path::new("s.jsonl")).unwrap_err().to_string()
}

#[test]
fn fields_the_reader_skips_are_still_checked_as_json() {
    let bad = r#"{"type":"user","message":{"role":"user","content":"hi"},"toolUseResult":{"stdout":[1,}}"#;
    let e = error(&[USER, bad]);
    assert!(e.starts_with("s.jsonl:2: invalid JSON: "), "{e}");
    let skipped = r#"{"type":"user","message":{"role":"user","content":"hi"},"toolUseResult":{"x":[{"y":null}]},"other":[1,"a"]}"#;
    assert_eq!(read(&[USER, skipped]).conversations[0].items.len(), 2);
}

#[test]
fn fields_of_an_unexpected_type_read_as_absent() {
    // A non-boolean isSidechain is not a sidechain; a non-string text block is empty text;
    // null tool input is the text `null`; a null message has no id.
    let t = read(&[
        r#"{"type":"user","isSidechain":"yes","isMeta":1,"message":{"content":[{"type":"text","text":7},{"type":"image"}]}}"#,
        &asst("m1", r#"{"type":"tool_use","id":"t1","name":"Bash","input":null}"#, 1),
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},3,{"type":"text"}],"is_error":"no"}]}}"#,
    ]);
    assert_eq!(t.conversations.len(), 1);
    let items = &t.conversations[0].items;
    assert_eq!(items[0], Item::User { text: String::new(), meta: false, images: 1 });
    // An image without a source: the documented default.
    assert_eq!(items[1], Item::Unseen { kind: UnseenKind::Image, tokens: unseen::ANTHROPIC_IMAGE_DEFAULT });
    assert!(matches!(&items[3], Item::ToolCall { arguments, .. } if arguments == "null"), "{:?}", items[3]);
    let Item::ToolResult(r) = &items[4] else { panic!("{:?}", items[4]) };
    assert_eq!((&r.output, r.is_error), (&Output::Raw { output: "a\n".into() }, false));
    assert_eq!(
        error(&[r#"{"type":"assistant","message":null}"#]),
        "s.jsonl:1: assistant line has no `message.id`"
    );
    assert_eq!(
        error(&[r#"{"type":"user","message":{"content":5}}"#]),
        "s.jsonl:1: user `message.content` is neither text nor a list"
    );
    assert_eq!(error(&[r#"{"type":"user","isSidechain":true}"#]), "s.jsonl:1: user line has no `message`");
    assert_eq!(error(&[r#"{"type":"assistant"}"#]), "s.jsonl:1: assistant line has no `message`");
    assert_eq!(error(&[r#"{"type":7}"#]), "s.jsonl:1: expected an object with a string `type`");
    assert_eq!(error(&["[1,2]"]), "s.jsonl:1: expected an object with a string `type`");
}

#[test]
fn a_key_given_twice_is_an_error_naming_the_line() {
    let e = error(&[USER, r#"{"type":"user","type":"assistant","message":{"content":"x"}}"#]);
    assert!(e.starts_with("s.jsonl:2: invalid JSON: duplicate field `type`"), "{e}");
}

#[test]
fn detects_session_lines() {
    with_head(Path::new("a"), USER.as_bytes(), true, |h| assert!(ClaudeCode.detect(h)));
    with_head(Path::new("a"), b"{\"type\":\"user\",\"text\":\"x\"}", true, |h| {
        assert!(!ClaudeCode.detect(h))
    });
}
