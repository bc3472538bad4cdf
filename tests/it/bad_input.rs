//! The bad-input suite: what ctxbudget says, and which exit code it gives, for every kind of
//! broken input a user can hand it — half-written sessions, hand edits, files that are not
//! traces, huge or deeply nested content, unreadable files, bad specs and bad output paths.
//!
//! Each case asserts the exact message (built from the temporary path it wrote) and the exit code:
//! 0 when every file was read (warnings do not fail a run), 1 when some file failed (the others are
//! still reported), 2 for usage errors (detected before any work). Errors are printed once, on
//! stderr, prefixed `error: `; warnings `warning: `. Files are made in a temporary directory by
//! each test; the fixtures under `tests/fixtures/` are only read.
//!
//! Cost: the 200 MB single line is written, read and replayed with the default tokenizer in about
//! 6 s and 700 MB of memory (`/usr/bin/time ctxbudget replay huge.jsonl --policy none`; 0.4 s and
//! 400 MB with `--tokenizer estimate`), the 20 MB word in under a second; every other case is small.

use crate::common;

use std::path::{Path, PathBuf};

use common::{ctxbudget, root};
use ctxbudget::result::ReplayReport;

/// What one run of `ctxbudget replay … --format json` gave.
struct Outcome {
    code: Option<i32>,
    stderr: String,
    report: ReplayReport,
}

/// `ctxbudget replay PATHS --tokenizer estimate --policy none --format json EXTRA`.
fn replay(paths: &[&Path], extra: &[&str]) -> Outcome {
    let mut cmd = ctxbudget();
    cmd.arg("replay").args(paths).args(["--tokenizer", "estimate", "--policy", "none", "--format", "json"]);
    let out = cmd.args(extra).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the JSON report reads back ({e}); stderr:\n{stderr}"));
    Outcome { code: out.status.code(), stderr, report }
}

/// The only problem is `error`: exit 1, once in the report and once on stderr.
#[track_caller]
fn assert_error(o: &Outcome, error: &str) {
    assert_eq!(o.report.errors, [error], "stderr:\n{}", o.stderr);
    assert_eq!(o.code, Some(1), "{error}");
    assert_eq!(o.stderr.matches(&format!("error: {error}\n")).count(), 1, "stderr:\n{}", o.stderr);
    assert!(o.report.warnings.is_empty(), "{:?}", o.report.warnings);
}

/// One file was replayed, `good` (beside the bad one, which did not stop it).
#[track_caller]
fn assert_only_replayed(o: &Outcome, good: &Path) {
    assert_eq!(o.report.runs.len(), 1);
    assert_eq!(o.report.runs[0].trace, shown(good));
}

/// The file was read: exit 0, and these are the warnings, in the report and on stderr.
#[track_caller]
fn assert_warnings(o: &Outcome, warnings: &[String]) {
    assert!(o.report.errors.is_empty(), "{:?}", o.report.errors);
    assert_eq!(o.code, Some(0), "stderr:\n{}", o.stderr);
    assert_eq!(o.report.warnings, warnings);
    for w in warnings {
        assert_eq!(o.stderr.matches(&format!("warning: {w}\n")).count(), 1, "stderr:\n{}", o.stderr);
    }
}

/// A usage error: exit 2 and exactly this one line on stderr, nothing on stdout.
#[track_caller]
fn assert_usage(args: &[&std::ffi::OsStr], error: &str) {
    let out = ctxbudget().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stderr).unwrap(), format!("error: {error}\n"));
    assert!(out.stdout.is_empty());
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(root().join("tests/fixtures").join(name)).unwrap()
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

const NATIVE_FORMATS: &str = "claude-code, swe-agent, mini-swe-agent, openhands, gemini-cli, claude-stream, \
                              codex, codex-exec, codex-legacy, cline, aider, aider-chat, opencode, native, openai-chat, \
                              anthropic-messages, openai-responses, cassette, inspect, inspect-eval";

const NATIVE_TYPES: &str = "(types: conversation, system, user, assistant, thinking, tool_call, tool_result, request, unseen, compaction)";
const INCOMPLETE: &str =
    "last line is incomplete (a session still being written?); replayed what is complete";
const FIX_LINE: &str =
    "fix or delete this line (only the last line of a session still being written may be cut off)";
const RESAVE: &str = "session logs are UTF-8 text: re-save the file as UTF-8";

const CC_USER: &str = r#"{"type":"user","sessionId":"s","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"list files"}}"#;

fn cc_assistant(id: &str, block: &str) -> String {
    format!(
        r#"{{"type":"assistant","sessionId":"s","message":{{"id":"{id}","content":[{block}],"usage":{{"input_tokens":5,"output_tokens":1}}}}}}"#
    )
}

fn cc_result(call: &str) -> String {
    format!(
        r#"{{"type":"user","sessionId":"s","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{call}","content":"a\nb"}}]}}}}"#
    )
}

// --- Half-written sessions: the complete part is replayed, with a warning ---------------------

#[test]
fn a_truncated_last_line_of_a_native_session_is_a_warning_and_the_rest_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "live.jsonl",
        "{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"request\"}\n{\"type\":\"tool_result\",\"call_id\":\"c1\",\"out",
    );
    let o = replay(&[&p], &[]);
    assert_warnings(&o, &[format!("{}:3: {INCOMPLETE}", shown(&p))]);
    assert_eq!((o.report.runs[0].requests, o.report.runs[0].tool_results), (1, 0));
}

#[test]
fn a_last_line_cut_in_the_middle_of_a_character_is_a_cut_off_line_not_invalid_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let live = b"{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"request\"}\n{\"type\":\"assistant\",\"text\":\"ok\"}\n\
                 {\"type\":\"user\",\"text\":\"caf\xc3";
    let p = write(dir.path(), "live.jsonl", live);
    let o = replay(&[&p], &[]);
    assert_warnings(&o, &[format!("{}:4: {INCOMPLETE}", shown(&p))]);
    assert_eq!(o.report.runs[0].requests, 1);
}

#[test]
fn a_cut_line_that_ends_in_a_newline_is_an_error_at_its_column() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "cut.jsonl", "{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"request\",\n");
    // It said `at line 2 column 0`: the line's newline was parsed.
    assert_error(
        &replay(&[&p], &[]),
        &format!("{}:2: invalid JSON: EOF while parsing a value at column 18; {FIX_LINE}", shown(&p)),
    );
}

#[test]
fn a_truncated_last_line_of_a_claude_code_session_is_a_warning_and_the_rest_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let call = r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}"#;
    let cut = cc_assistant("m2", r#"{"type":"text","text":"done"}"#);
    let text = format!("{CC_USER}\n{}\n{}\n{}", cc_assistant("m1", call), cc_result("t1"), &cut[..40]);
    let p = write(dir.path(), "live.jsonl", text);
    let o = replay(&[&p], &[]);
    assert_warnings(&o, &[format!("{}:4: {INCOMPLETE}", shown(&p))]);
    assert_eq!((o.report.runs[0].requests, o.report.runs[0].tool_results), (1, 1));
}

#[test]
fn a_truncated_last_line_of_a_codex_rollout_is_a_warning_and_the_rest_is_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let whole = fixture("codex/rollout-0.40.jsonl");
    let lines = whole.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
    // Cut the last line in the middle, as a rollout still being written is.
    let cut = whole.len() - 1 - whole.iter().rev().skip(1).position(|&b| b == b'\n').unwrap() / 2;
    let p = write(dir.path(), "rollout.jsonl", &whole[..cut]);
    let full = replay(&[&write(dir.path(), "whole.jsonl", &whole)], &[]);
    let o = replay(&[&p], &[]);
    assert_warnings(&o, &[format!("{}:{lines}: {INCOMPLETE}", shown(&p))]);
    assert!(o.report.runs[0].requests <= full.report.runs[0].requests);
    assert!(o.report.runs[0].requests > 0);
}

#[test]
fn a_cut_off_json_document_says_it_ends_early_and_where() {
    let dir = tempfile::tempdir().unwrap();
    let whole = fixture("gemini-cli/session-merged.json");
    let text = String::from_utf8(whole).unwrap();
    // Cut right after the second message, as a copy taken mid-write would be.
    let cut = text.match_indices("\n    },").nth(1).unwrap().0 + "\n    },".len();
    let line = text[..cut].lines().count();
    let p = write(dir.path(), "session.json", &text[..cut]);
    let o = replay(&[&p], &[]);
    assert_error(
        &o,
        &format!(
            "{}:{line}: the JSON document ends early, at line {line} column 6 (a session still being written, or a \
             cut-off copy?); nothing was replayed",
            shown(&p)
        ),
    );
}

// --- Malformed content: an error naming the file and line, the other files still reported ---

#[test]
fn malformed_json_in_the_middle_of_a_codex_rollout_names_the_line_and_the_other_files_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let whole = String::from_utf8(fixture("codex/rollout-0.40.jsonl")).unwrap();
    let mut lines: Vec<&str> = whole.lines().collect();
    lines[4] =
        r#"{"timestamp":"2026-05-11T10:00:01.000Z","type":"response_item","payload":{"type":"message",}}"#;
    let bad = write(dir.path(), "bad.jsonl", lines.join("\n") + "\n");
    let good = write(dir.path(), "good.jsonl", &whole);
    let o = replay(&[&bad, &good], &[]);
    let column = lines[4].find(",}").unwrap() + 2;
    assert_error(
        &o,
        &format!("{}:5: invalid JSON: trailing comma at column {column}; {FIX_LINE}", shown(&bad)),
    );
    assert_only_replayed(&o, &good);
}

#[test]
fn a_key_given_twice_in_a_claude_code_line_names_the_line_and_the_other_files_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let twice = r#"{"type":"user","type":"assistant","sessionId":"s","message":{"content":"x"}}"#;
    let bad = write(dir.path(), "bad.jsonl", format!("{CC_USER}\n{twice}\n"));
    let good = write(dir.path(), "good.jsonl", format!("{CC_USER}\n"));
    let o = replay(&[&bad, &good], &[]);
    // serde_json names the column where the second key ends.
    let column = twice.find(r#""type":"assistant""#).unwrap() + r#""type""#.len();
    assert_error(
        &o,
        &format!("{}:2: invalid JSON: duplicate field `type` at column {column}; {FIX_LINE}", shown(&bad)),
    );
    assert_only_replayed(&o, &good);
}

#[test]
fn malformed_json_in_a_pretty_printed_document_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(fixture("openai-chat/messages.json")).unwrap();
    // Drop the comma at the end of line 6 (a hand edit gone wrong).
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert_eq!(lines[5], "  ]},");
    lines[5].pop();
    let p = write(dir.path(), "messages.json", lines.join("\n"));
    let o = replay(&[&p], &[]);
    assert_error(
        &o,
        &format!(
            "{}:7: invalid JSON (the file must be one JSON document): expected `,` or `]` at line 7 column 3",
            shown(&p)
        ),
    );
}

#[test]
fn invalid_utf8_in_a_json_lines_session_names_the_line_and_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = format!("{CC_USER}\n").into_bytes();
    text.extend_from_slice(
        b"{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"caf\xe9\"}}\n",
    );
    let p = write(dir.path(), "latin1.jsonl", text);
    let o = replay(&[&p], &[]);
    assert_error(&o, &format!("{}:2: invalid UTF-8 at byte 70 of the line; {RESAVE}", shown(&p)));
}

#[test]
fn invalid_utf8_in_a_json_document_names_the_line_and_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = fixture("swe-agent/v1-function-calling.traj");
    let at = bytes.windows(6).position(|w| w == b"README").unwrap();
    bytes[at] = 0xff;
    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let p = write(dir.path(), "run.traj", bytes);
    let o = replay(&[&p], &[]);
    assert_error(&o, &format!("{}:{line}: invalid UTF-8 at byte {at} of the file; {RESAVE}", shown(&p)));
}

#[test]
fn a_utf8_byte_order_mark_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(fixture("native/small.jsonl"));
    let with_bom = write(dir.path(), "bom.jsonl", bytes);
    let plain = write(dir.path(), "plain.jsonl", fixture("native/small.jsonl"));
    let (a, b) = (replay(&[&with_bom], &[]), replay(&[&plain], &[]));
    assert_warnings(&a, &[]);
    assert_eq!(a.report.runs[0].total_input_tokens, b.report.runs[0].total_input_tokens);
    assert_eq!(a.report.runs[0].requests, 5);
}

#[test]
fn crlf_line_endings_read_like_lf() {
    let dir = tempfile::tempdir().unwrap();
    let lf = String::from_utf8(fixture("native/small.jsonl")).unwrap();
    let crlf = write(dir.path(), "crlf.jsonl", lf.replace('\n', "\r\n"));
    let plain = write(dir.path(), "lf.jsonl", &lf);
    let (a, b) = (replay(&[&crlf], &[]), replay(&[&plain], &[]));
    assert_warnings(&a, &[]);
    assert_eq!(a.report.runs[0].total_input_tokens, b.report.runs[0].total_input_tokens);
}

// --- Broken call/result links: warnings naming the conversation and the request --------------

#[test]
fn a_tool_result_with_no_matching_call_is_a_warning_naming_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{CC_USER}\n{}\n{}\n",
        cc_assistant("m1", r#"{"type":"text","text":"ok"}"#),
        cc_result("toolu_gone")
    );
    let p = write(dir.path(), "orphan.jsonl", text);
    let o = replay(&[&p], &[]);
    assert_warnings(
        &o,
        &[format!(
            "{}: conversation `main`: tool result for call `toolu_gone` (after request 1) has no matching call",
            shown(&p)
        )],
    );
    assert_eq!(o.report.runs[0].tool_results, 1, "the orphan result is still counted");
}

#[test]
fn a_call_with_no_result_is_a_warning_naming_the_tool_and_the_request() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"[
  {"role": "user", "content": "list"},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
  {"role": "assistant", "content": "never mind"}
]"#;
    let p = write(dir.path(), "chat.json", text);
    let o = replay(&[&p], &[]);
    assert_warnings(
        &o,
        &[format!("{}: conversation `main`: call `call_1` (bash, after request 1) has no result", shown(&p))],
    );
}

#[test]
fn duplicate_call_ids_and_second_results_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let text = concat!(
        "{\"type\":\"user\",\"text\":\"go\"}\n",
        "{\"type\":\"request\"}\n",
        "{\"type\":\"tool_call\",\"call_id\":\"c1\",\"name\":\"bash\",\"arguments\":\"{}\"}\n",
        "{\"type\":\"tool_result\",\"call_id\":\"c1\",\"output\":\"one\"}\n",
        "{\"type\":\"request\"}\n",
        "{\"type\":\"tool_call\",\"call_id\":\"c1\",\"name\":\"bash\",\"arguments\":\"{}\"}\n",
        "{\"type\":\"tool_result\",\"call_id\":\"c1\",\"output\":\"two\"}\n",
        "{\"type\":\"tool_result\",\"call_id\":\"c1\",\"output\":\"three\"}\n",
        "{\"type\":\"request\"}\n",
    );
    let p = write(dir.path(), "dup.jsonl", text);
    let o = replay(&[&p], &[]);
    let at = shown(&p);
    assert_warnings(
        &o,
        &[
            format!("{at}: conversation `main`: call id `c1` is used again (after request 2)"),
            format!("{at}: conversation `main`: call `c1` has a second result (after request 2)"),
        ],
    );
    assert_eq!(o.report.runs[0].tool_results, 3);
}

// --- Unknown types, missing fields, wrong types ----------------------------------------------

#[test]
fn an_unknown_line_type_in_the_native_format_is_an_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "t.jsonl",
        "{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"holler\",\"text\":\"x\"}\n",
    );
    let o = replay(&[&p], &[]);
    assert_error(
        &o,
        &format!(
            "{}:2: not a native item: unknown variant `holler`, expected one of `system`, `user`, `assistant`, \
             `thinking`, `tool_call`, `tool_result`, `request`, `unseen`, `compaction` {NATIVE_TYPES}",
            shown(&p)
        ),
    );
}

#[test]
fn a_mistake_on_the_first_line_of_a_native_session_names_the_line_as_on_any_other() {
    let dir = tempfile::tempdir().unwrap();
    let rest = "{\"type\":\"request\"}\n{\"type\":\"assistant\",\"text\":\"ok\"}\n";
    let typo = "{\"type\":\"user\",\"txt\":\"hi\"}\n";
    let unknown = "not a native item: unknown field `txt`, expected one of `text`, `meta`, `images`";
    // On line 2 and on line 1 alike (line 1 said `not a recognised trace format` before).
    for (line, text) in
        [(2, format!("{{\"type\":\"user\",\"text\":\"hi\"}}\n{typo}{rest}")), (1, format!("{typo}{rest}"))]
    {
        let sub = dir.path().join(format!("line-{line}"));
        std::fs::create_dir(&sub).unwrap();
        let p = write(&sub, "session.jsonl", &text);
        let error = format!("{}:{line}: {unknown} {NATIVE_TYPES}", shown(&p));
        assert_error(&replay(&[&p], &[]), &error);
        // In a folder too: an error, not a file skipped with a warning (exit 0, before).
        let good = write(&sub, "small.jsonl", fixture("native/small.jsonl"));
        let o = replay(&[&sub], &[]);
        assert_eq!((o.code, o.report.errors.clone()), (Some(1), vec![error]), "stderr:\n{}", o.stderr);
        assert!(o.report.warnings.is_empty(), "{:?}", o.report.warnings);
        assert_only_replayed(&o, &good);
    }
}

#[test]
fn unknown_item_and_line_types_of_agent_logs_are_counted_in_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let codex = concat!(
        "{\"timestamp\":\"2025-09-24T19:22:20.000Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\",\"cwd\":\"/\",\"cli_version\":\"0.40.0\"}}\n",
        "{\"timestamp\":\"2025-09-24T19:22:21.000Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"hi\"}]}}\n",
        "{\"timestamp\":\"2025-09-24T19:22:22.000Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"hologram\",\"x\":1}}\n",
    );
    let p = write(dir.path(), "rollout.jsonl", codex);
    let o = replay(&[&p], &[]);
    assert_warnings(
        &o,
        &[format!("{}: 1 `response_item hologram` item(s) not replayed (unknown item type)", shown(&p))],
    );

    let future = r#"{"type":"hologram","sessionId":"s","uuid":"h"}"#;
    let p = write(dir.path(), "session.jsonl", format!("{CC_USER}\n{future}\n{future}\n"));
    let o = replay(&[&p], &[]);
    assert_warnings(
        &o,
        &[format!(
            "{}: 2 line(s) of type `hologram` not replayed (unknown line type; a newer Claude Code version?)",
            shown(&p)
        )],
    );
}

#[test]
fn a_missing_required_field_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let no_id = r#"{"type":"assistant","sessionId":"s","message":{"content":[{"type":"text","text":"x"}]}}"#;
    let p = write(dir.path(), "session.jsonl", format!("{CC_USER}\n{no_id}\n"));
    assert_error(&replay(&[&p], &[]), &format!("{}:2: assistant line has no `message.id`", shown(&p)));

    let body = r#"{
  "model": "claude-sonnet-4",
  "max_tokens": 1024,
  "messages": [
    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    {"role": "assistant", "content": [
      {"type": "tool_use", "name": "bash", "input": {}}
    ]}
  ]
}"#;
    let p = write(dir.path(), "body.json", body);
    assert_error(
        &replay(&[&p], &[]),
        &format!("{}:7: messages[1].content[0]: a tool_use needs a string `id`", shown(&p)),
    );
}

#[test]
fn a_value_of_the_wrong_type_names_the_line_and_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let p =
        write(dir.path(), "t.jsonl", "{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"user\",\"text\":5}\n");
    assert_error(
        &replay(&[&p], &[]),
        &format!(
            "{}:2: not a native item: invalid type: integer `5`, expected a string {NATIVE_TYPES}",
            shown(&p)
        ),
    );

    let chat = "[\n  {\"role\": \"system\", \"content\": \"sys\"},\n  {\"role\": \"user\", \"content\": 42},\n  {\"role\": \"assistant\", \"content\": \"ok\"}\n]\n";
    let p = write(dir.path(), "chat.json", chat);
    assert_error(
        &replay(&[&p], &[]),
        &format!("{}:3: [1].content: expected null, a string or a list of parts, found a number", shown(&p)),
    );
}

#[test]
fn recorded_usage_no_provider_could_report_is_a_warning_and_read_as_unrecorded() {
    let dir = tempfile::tempdir().unwrap();
    let request = |n: u64| format!("{{\"type\":\"request\",\"usage\":{{\"input_tokens\":{n}}}}}\n");
    let big = 1u64 << 63;
    let text =
        format!("{{\"type\":\"user\",\"text\":\"hi\"}}\n{}{}{}", request(10), request(big), request(big));
    let p = write(dir.path(), "t.jsonl", text);
    let o = replay(&[&p], &[]);
    assert_warnings(
        &o,
        &[format!(
            "{}: conversation `main`: recorded usage of 2 request(s) is above 4294967296 tokens, more than any \
             provider reports (first: request 1: prompt tokens {big}); read as unrecorded",
            shown(&p)
        )],
    );
    let run = &o.report.runs[0];
    assert_eq!((run.recorded_input_tokens, run.recorded_requests), (Some(10), 1), "two 2^63 would wrap to 0");
}

#[test]
fn a_negative_or_string_usage_field_is_a_warning_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    // Claude Code: a negative cache read would shrink the recorded prompt of the request.
    let usage = |id: &str, usage: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s","message":{{"id":"{id}","content":[{{"type":"text","text":"x"}}],"usage":{usage}}}}}"#
        )
    };
    let lines = [
        CC_USER.to_owned(),
        usage("m1", r#"{"input_tokens":5,"cache_read_input_tokens":-64547,"output_tokens":1}"#),
        CC_USER.replace("u1", "u2"),
        usage("m2", r#"{"input_tokens":9,"cache_read_input_tokens":1.5,"output_tokens":1}"#),
        CC_USER.replace("u1", "u3"),
        usage("m3", r#"{"input_tokens":12,"output_tokens":1}"#),
    ];
    let p = write(dir.path(), "cc.jsonl", lines.join("\n") + "\n");
    let o = replay(&[&p], &[]);
    assert_warnings(
        &o,
        &[format!(
            "{}:2: usage field `cache_read_input_tokens` is -64547 (a negative number), not a token count; that \
             request's usage is read as unrecorded (1 more such usage record(s) in this file)",
            shown(&p)
        )],
    );
    assert_eq!((o.report.runs[0].recorded_input_tokens, o.report.runs[0].recorded_requests), (Some(12), 1));
    // Codex: a count given as a string.
    let rollout = String::from_utf8(fixture("codex/rollout-0.40.jsonl")).unwrap();
    let good = replay(&[&write(dir.path(), "good.jsonl", &rollout)], &[]);
    let bad = rollout.replacen(
        r#""last_token_usage":{"input_tokens":1100"#,
        r#""last_token_usage":{"input_tokens":"1100""#,
        1,
    );
    assert_ne!(bad, rollout);
    let p = write(dir.path(), "rollout.jsonl", bad);
    let o = replay(&[&p], &[]);
    assert_warnings(
        &o,
        &[format!(
            "{}:12: usage field `input_tokens` is \"1100\" (a string), not a token count; that request's usage \
             is read as unrecorded",
            shown(&p)
        )],
    );
    assert_eq!(o.report.runs[0].recorded_requests + 1, good.report.runs[0].recorded_requests);
}

#[test]
fn a_file_of_only_summaries_is_a_warning_not_silence() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "s.jsonl",
        "{\"type\":\"summary\",\"summary\":\"Fix the build\",\"leafUuid\":\"u1\"}\n",
    );
    let o = replay(&[&p], &[]);
    assert_warnings(
        &o,
        &[format!(
            "{}: read as `claude-code`, it holds nothing to replay (no message, no model request)",
            shown(&p)
        )],
    );
    assert!(o.report.runs.is_empty());
}

#[test]
fn a_json_array_in_a_jsonl_file_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.jsonl", "[{\"type\":\"user\",\"text\":\"hi\"},{\"type\":\"request\"}]\n");
    assert_error(
        &replay(&[&p], &[]),
        &format!(
            "{}: not a recognised trace format (tried {NATIVE_FORMATS}); it holds one JSON array, not JSON Lines \
             (one object per line): write each element on its own line, or rename it to .json if it is a JSON \
             document; pass --input-format to choose one",
            shown(&p)
        ),
    );
}

#[cfg(unix)]
#[test]
fn escape_sequences_from_a_path_or_log_reach_the_terminal_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "\u{1b}]0;owned\u{7}\u{1b}[2J.jsonl", "");
    let out = ctxbudget().arg("replay").arg(&p).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains('\u{1b}') && !stderr.contains('\u{7}'), "{stderr:?}");
    assert!(stderr.contains("\\u{1b}]0;owned\\u{7}\\u{1b}[2J.jsonl"), "{stderr:?}");
}

#[test]
fn a_forced_format_that_finds_no_request_says_what_the_file_reads_as() {
    let native = root().join("traces/build-and-test.jsonl");
    let o = replay(&[&native], &["--input-format", "codex"]);
    assert_warnings(
        &o,
        &[format!(
            "{}: read as `codex` (--input-format), it holds no request: it reads as `native`",
            shown(&native)
        )],
    );
    let o = replay(&[&native], &["--input-format", "native"]);
    assert_warnings(&o, &[]);
}

// --- Files that are not traces -----------------------------------------------------------------

#[test]
fn a_document_broken_before_its_format_shows_says_where_its_json_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "resp.json", "{\n  \"id\": \"resp_1\",\nnull\n  \"object\": \"response\"\n}\n");
    assert_error(
        &replay(&[&p], &[]),
        &format!(
            "{}: not a recognised trace format (tried {NATIVE_FORMATS}); its JSON breaks at line 3, column 1: \
             key must be a string; pass --input-format to choose one",
            shown(&p)
        ),
    );
    // JSON Lines whose lines are JSON but no format's: nothing is broken, nothing is said.
    let p = write(dir.path(), "other.jsonl", "{\"a\": 1}\n{\"b\": 2}\n");
    assert_error(
        &replay(&[&p], &[]),
        &format!(
            "{}: not a recognised trace format (tried {NATIVE_FORMATS}); pass --input-format to choose one",
            shown(&p)
        ),
    );
}

#[test]
fn an_empty_file_is_an_error_when_named_and_skipped_in_a_walk() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "empty.jsonl", "");
    let empty = format!("{}: the file is empty; nothing to replay (a session not written yet?)", shown(&p));
    assert_error(&replay(&[&p], &[]), &empty);
    // A forced format does not make it a session with no request (exit 0 and an empty row, before).
    assert_error(&replay(&[&p], &["--input-format", "native"]), &empty);
    let blank = write(dir.path(), "blank.jsonl", "\n  \n");
    write(dir.path(), "small.jsonl", fixture("native/small.jsonl"));
    // A walk passes them over by their content, in one line naming them.
    let o = replay(&[dir.path()], &[]);
    assert_warnings(&o, &[passed_over(dir.path(), "blank.jsonl: empty; empty.jsonl: empty", 2)]);
    assert_eq!(o.report.runs.len(), 1);
    // With a format forced, each is read, and skipped with its own warning.
    let skipped = [
        format!("{}: skipped: the file is empty", shown(&blank)),
        format!("{}: skipped: the file is empty", shown(&p)),
    ];
    let o = replay(&[dir.path()], &["--input-format", "native"]);
    assert_warnings(&o, &skipped);
    assert_eq!(o.report.runs.len(), 1);
}

/// The one line a walk of `dir` gives for the `n` files it passed over by their content, `named`.
fn passed_over(dir: &Path, named: &str, n: usize) -> String {
    format!(
        "{}: {n} file(s) passed over as no agent log, by their content ({named}); name a file to read it anyway",
        shown(dir)
    )
}

#[test]
fn a_binary_file_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10");
    let binary = format!(
        "{}: not a text file (binary data: a NUL byte at byte 8); ctxbudget reads session logs written as JSON, \
         JSON Lines or YAML",
        shown(&p)
    );
    assert_error(&replay(&[&p], &[]), &binary);
    // Forced through a format, the same (it was invalid UTF-8 at its first line).
    assert_error(&replay(&[&p], &["--input-format", "native"]), &binary);
}

#[test]
fn a_utf16_file_says_to_re_save_it_as_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(fixture("native/small.jsonl")).unwrap();
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let p = write(dir.path(), "saved-by-powershell.jsonl", bytes);
    let utf16 = format!(
        "{}: UTF-16 text (the file starts with a UTF-16 byte-order mark); session logs are UTF-8: re-save the \
         file as UTF-8",
        shown(&p)
    );
    assert_error(&replay(&[&p], &[]), &utf16);
    assert_error(&replay(&[&p], &["--input-format", "native"]), &utf16);
}

#[test]
fn a_file_that_matches_no_format_is_an_error_when_named_and_a_warning_in_a_walk() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "data.csv", "name,tokens\nx,1\n");
    assert_error(
        &replay(&[&p], &[]),
        &format!(
            "{}: not a recognised trace format (tried {NATIVE_FORMATS}); pass --input-format to choose one",
            shown(&p)
        ),
    );
    let nothing_left = format!(
        "{}: no file to read in this folder (hidden files, `*.md`, `*.meta.json` and folders such as `.git` are \
         passed over)",
        shown(dir.path())
    );
    assert_warnings(
        &replay(&[dir.path()], &[]),
        &[passed_over(dir.path(), "data.csv: no format recognises it", 1), nothing_left],
    );
}

#[test]
fn a_folder_with_no_file_to_read_is_a_warning_and_the_other_inputs_are_replayed() {
    let empty = tempfile::tempdir().unwrap();
    let passed_over = tempfile::tempdir().unwrap();
    write(passed_over.path(), "NOTES.md", "# notes\n");
    write(passed_over.path(), ".hidden.jsonl", "{\"type\":\"user\",\"text\":\"hi\"}\n");
    std::fs::create_dir(passed_over.path().join(".git")).unwrap();
    write(&passed_over.path().join(".git"), "HEAD", "ref: refs/heads/main\n");
    let good_dir = tempfile::tempdir().unwrap();
    let good = write(good_dir.path(), "s.jsonl", "{\"type\":\"user\",\"text\":\"hi\"}\n");
    let why = "no file to read in this folder (hidden files, `*.md`, `*.meta.json` and folders such as `.git` are passed over)";
    let o = replay(&[empty.path(), passed_over.path(), good_dir.path()], &[]);
    assert_warnings(
        &o,
        &[format!("{}: {why}", shown(empty.path())), format!("{}: {why}", shown(passed_over.path()))],
    );
    assert_only_replayed(&o, &good);
    // Every command says so: the analyses, reconcile, and a per-request table read twice.
    let commands: [&[&str]; 6] = [
        &["sweep", "--format", "json"],
        &["compare", "--format", "json"],
        &["cost", "--format", "json"],
        &["calibrate", "--format", "json"],
        &["reconcile", "--format", "json"],
        &["replay", "--per-request", "--low-memory"],
    ];
    for args in commands {
        let command = args[0];
        let out = ctxbudget()
            .args(args)
            .args([empty.path(), good_dir.path()])
            .args(["--tokenizer", "estimate"])
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(0), "{command}: {stderr}");
        let warning = format!("warning: {}: {why}\n", shown(empty.path()));
        assert_eq!(stderr.matches(&warning).count(), 1, "{command}: {stderr}");
    }
}

/// The last error of a run that found nothing to read (`cmd::NOTHING_READ`).
const NOTHING_READ: &str = "no input could be read: nothing written";

#[test]
fn an_input_that_gives_nothing_to_read_leaves_every_output_and_report_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    // Three ways to read nothing, each with what stderr says before the last line.
    let missing = dir.path().join("sesions");
    let named = write(dir.path(), "data.csv", "name,tokens\nx,1\n");
    let folder = dir.path().join("day");
    std::fs::create_dir(&folder).unwrap();
    let bad = write(&folder, "a.jsonl", "{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"user\"}\n");
    write(&folder, "b.csv", "name,tokens\nx,1\n");
    let cases = [
        (missing.clone(), format!("error: {}: no such file or directory\n", shown(&missing))),
        (
            named.clone(),
            format!(
                "error: {}: not a recognised trace format (tried {NATIVE_FORMATS}); pass --input-format to \
                 choose one\n",
                shown(&named)
            ),
        ),
        (
            folder.clone(),
            format!(
                "warning: {}\nerror: {}:2: not a native item: missing field `text` {NATIVE_TYPES}\n",
                passed_over(&folder, "b.csv: no format recognises it", 1),
                shown(&bad)
            ),
        ),
    ];
    let commands: [&[&str]; 9] = [
        &["replay", "--format", "csv"],
        &["replay", "--format", "json"],
        &["replay", "--format", "table"],
        &["replay", "--per-request", "--low-memory", "--format", "markdown"],
        &["sweep", "--format", "json"],
        &["compare", "--format", "json"],
        &["cost", "--format", "csv"],
        &["calibrate", "--format", "json"],
        &["reconcile", "--format", "json"],
    ];
    let out_dir = tempfile::tempdir().unwrap();
    let new_report = out_dir.path().join("new/report");
    let old_report = out_dir.path().join("old-report");
    std::fs::create_dir(&old_report).unwrap();
    let index = write(&old_report, "index.html", "<p>the previous report</p>\n");
    // Its report.json marks it as a report (a folder without one is refused before any input is
    // read: `a_report_into_a_folder_of_user_files_is_refused_without_force`).
    write(&old_report, "report.json", "{}\n");
    for (input, said) in &cases {
        let expected = format!("{said}error: {NOTHING_READ}\n");
        for args in commands {
            let output = write(out_dir.path(), "out.txt", "the previous run's output\n");
            let mut cmd = ctxbudget();
            let out = cmd.args(args).arg(input).arg("-o").arg(&output).args(["--tokenizer", "estimate"]);
            let out = out.output().unwrap();
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert_eq!(
                (out.status.code(), stderr.as_str()),
                (Some(1), expected.as_str()),
                "{args:?} {input:?}"
            );
            assert!(out.stdout.is_empty(), "{args:?}");
            assert_eq!(std::fs::read_to_string(&output).unwrap(), "the previous run's output\n", "{args:?}");
        }
        // A report directory is neither created nor touched.
        for report_dir in [&new_report, &old_report] {
            let out = ctxbudget().arg("report").arg(input).arg("--out").arg(report_dir).output().unwrap();
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert_eq!((out.status.code(), stderr.as_str()), (Some(1), expected.as_str()), "{input:?}");
            assert!(out.stdout.is_empty());
        }
        assert!(!out_dir.path().join("new").exists(), "{input:?}");
        assert_eq!(std::fs::read_dir(&old_report).unwrap().count(), 2, "{input:?}");
        assert_eq!(std::fs::read_to_string(&index).unwrap(), "<p>the previous report</p>\n");
        // No temporary file is left beside the outputs.
        let names: Vec<_> =
            std::fs::read_dir(out_dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
    // Standard output still gets the report of a file that could not be read (with its error)...
    let o = replay(&[&named], &[]);
    assert_eq!(o.code, Some(1));
    assert_eq!(o.report.errors.len(), 1);
    assert!(!o.stderr.contains(NOTHING_READ), "{}", o.stderr);
    // ... but not of a path that does not exist: nothing is read or written.
    let out = ctxbudget().args(["replay", "--format", "json"]).arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    // Beside an input that is read, the others are named and the report written as ever.
    let good = write(dir.path(), "s.jsonl", fixture("native/small.jsonl"));
    let o = replay(&[&missing, &named, &good], &[]);
    assert_eq!(o.report.errors.len(), 2, "{:?}", o.report.errors);
    assert_eq!(o.code, Some(1));
    assert_only_replayed(&o, &good);
    let output = out_dir.path().join("out.txt");
    let mut cmd = ctxbudget();
    let out = cmd.args(["sweep", "--format", "json", "-o"]).arg(&output).arg(&folder).arg(&good);
    assert_eq!(out.output().unwrap().status.code(), Some(1));
    assert!(std::fs::read_to_string(&output).unwrap().starts_with('{'));
}

#[test]
fn one_bad_file_among_good_ones_exits_1_and_every_good_one_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a-good.jsonl", fixture("native/small.jsonl"));
    let bad = write(dir.path(), "b-bad.jsonl", "{\"type\":\"user\",\"text\":\"hi\"}\n{\"type\":\"user\"}\n");
    write(dir.path(), "c-good.jsonl", fixture("codex/rollout-0.40.jsonl"));
    write(dir.path(), "d-notes.txt", "not a trace\n");
    let o = replay(&[dir.path()], &[]);
    assert_eq!(
        o.report.errors,
        [format!("{}:2: not a native item: missing field `text` {NATIVE_TYPES}", shown(&bad))]
    );
    assert_eq!(o.report.warnings, [passed_over(dir.path(), "d-notes.txt: no format recognises it", 1)]);
    // The files found, each with what was read of it: the bad one with no format.
    let formats: Vec<Option<&str>> = o.report.inputs.iter().map(|i| i.format.as_deref()).collect();
    assert_eq!(formats, [Some("native"), None, Some("codex")], "{:?}", o.report.inputs);
    assert_eq!(o.code, Some(1));
    let traces: Vec<&str> = o.report.runs.iter().map(|r| r.trace.as_str()).collect();
    assert_eq!(traces.len(), 2);
    assert!(traces[0].ends_with("a-good.jsonl") && traces[1].ends_with("c-good.jsonl"), "{traces:?}");
}

// --- Huge and deep content ---------------------------------------------------------------------

#[test]
fn a_tool_output_of_a_million_spaces_is_counted_exactly_with_a_real_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let output = format!("{}x", " ".repeat(1_000_000));
    let item = serde_json::json!({"type": "tool_result", "call_id": "c1", "output": output});
    let text = format!(
        "{{\"type\":\"tool_call\",\"call_id\":\"c1\",\"name\":\"bash\",\"arguments\":\"{{}}\"}}\n{item}\n{{\"type\":\"request\"}}\n"
    );
    let p = write(dir.path(), "spaces.jsonl", text);
    let out = ctxbudget()
        .args(["replay", "--tokenizer", "o200k", "--policy", "none", "--format", "json"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: ReplayReport = serde_json::from_slice(&out.stdout).unwrap();
    let run = &report.runs[0];
    assert_eq!(run.tool_output_bytes, 1_000_001);
    // An independent count: bpe-openai directly, the reference for texts tiktoken-rs cannot take.
    assert_eq!(run.tool_output_tokens, bpe_openai::o200k_base().count(&output) as u64);
}

#[test]
fn a_single_200_mb_line_is_read_and_replayed() {
    const MB: usize = 1_000_000;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.jsonl");
    // 18 bytes in the file, 17 in the output (`\n` is one escaped byte).
    let unit = "0123456789abcdef\\n";
    let units = 200 * MB / unit.len();
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        f.write_all(b"{\"type\":\"tool_call\",\"call_id\":\"c1\",\"name\":\"cat\",\"arguments\":\"{}\"}\n")
            .unwrap();
        f.write_all(b"{\"type\":\"tool_result\",\"call_id\":\"c1\",\"output\":\"").unwrap();
        let chunk = unit.repeat(10_000);
        for _ in 0..units / 10_000 {
            f.write_all(chunk.as_bytes()).unwrap();
        }
        f.write_all(unit.repeat(units % 10_000).as_bytes()).unwrap();
        f.write_all(b"\"}\n{\"type\":\"request\"}\n").unwrap();
    }
    assert!(std::fs::metadata(&p).unwrap().len() > 200 * MB as u64 - 100);
    // With the default tokenizer (provider: o200k as is for a log that names no provider), as a
    // user would run it.
    let out = ctxbudget().args(["replay", "--policy", "none", "--format", "json"]).arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: ReplayReport = serde_json::from_slice(&out.stdout).unwrap();
    let run = &report.runs[0];
    let bytes = (units * (unit.len() - 1)) as u64;
    assert_eq!(run.tool_output_bytes, bytes);
    // Each line of the output is its own run of pieces: the count is the count of one line times
    // the number of lines (checked on three lines first).
    let line = "0123456789abcdef\n";
    let one = bpe_openai::o200k_base().count(line) as u64;
    assert_eq!(bpe_openai::o200k_base().count(&line.repeat(3)) as u64, 3 * one);
    assert_eq!(run.tool_output_tokens, units as u64 * one);
    assert_eq!((run.requests, run.split_results), (1, 1));
}

#[test]
fn a_4_mb_word_is_counted_exactly() {
    // tiktoken-rs alone took 575 s and 10 GB for a 200 MB word. The default `tiktoken` crate counts
    // one long piece in O(n log n), about 1 s of CPU per MB (docs/performance.md, "One counter by
    // default", where its speed is measured, not here); a build with `counter-bpe` gives it to
    // bpe-openai, the independent count below.
    let dir = tempfile::tempdir().unwrap();
    let word = "abcdefghij".repeat(400_000);
    let text = format!(
        "{{\"type\":\"tool_call\",\"call_id\":\"c1\",\"name\":\"cat\",\"arguments\":\"{{}}\"}}\n\
         {{\"type\":\"tool_result\",\"call_id\":\"c1\",\"output\":\"{word}\"}}\n{{\"type\":\"request\"}}\n"
    );
    let p = write(dir.path(), "word.jsonl", text);
    let out = ctxbudget().args(["replay", "--policy", "none", "--format", "json"]).arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: ReplayReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.runs[0].tool_output_tokens, bpe_openai::o200k_base().count(&word) as u64);
}

#[cfg(unix)]
#[test]
fn a_stream_with_no_end_is_refused_not_read_until_memory_runs_out() {
    // 4.5 GB of memory in 5 s before, and no end. About half a second and 1 GB here.
    let message = "more than 1 GiB of text (a stream with no end?); count and split hold the whole text in \
                   memory: pass a smaller text";
    for command in ["count", "split"] {
        let out = ctxbudget().args([command, "/dev/zero"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert_eq!(String::from_utf8(out.stderr).unwrap(), format!("error: /dev/zero: {message}\n"));
        assert!(out.stdout.is_empty());
    }
    // A policies file is read up to 16 MiB (3 GB in 8 s before); a count cache must be a file.
    let traces = root().join("traces");
    assert_usage(
        &[os("compare"), traces.as_os_str(), os("--policies"), os("/dev/zero")],
        "/dev/zero: cannot read: more than 16 MiB (a stream with no end?)",
    );
    assert_usage(
        &[os("compare"), traces.as_os_str(), os("--count-cache"), os("/dev/zero")],
        "--count-cache: /dev/zero is not a regular file (a device or a pipe); give a file name",
    );
}

#[test]
fn json_nested_100000_deep_is_refused_quickly_whatever_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let p = write(dir.path(), "deep.json", &deep);
    let started = std::time::Instant::now();
    assert_error(
        &replay(&[&p], &[]),
        &format!(
            "{}: not a recognised trace format (tried {NATIVE_FORMATS}); pass --input-format to choose one",
            shown(&p)
        ),
    );
    // Detection used to build a path string per nesting level: 13 s and 4.4 GB for this file.
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    assert_error(
        &replay(&[&p], &["--input-format", "openai-chat"]),
        &format!(
            "{}:1: invalid JSON (the file must be one JSON document): recursion limit exceeded at line 1 column \
             128 (values nested more than 128 deep; no trace format nests that deep)",
            shown(&p)
        ),
    );
    let line = format!("{{\"type\":\"user\",\"text\":{deep}}}");
    let p = write(dir.path(), "deep.jsonl", format!("{{\"type\":\"user\",\"text\":\"hi\"}}\n{line}\n"));
    assert_error(
        &replay(&[&p], &[]),
        &format!(
            "{}:2: invalid JSON: recursion limit exceeded at column 149 (values nested more than 128 deep; no trace \
             format nests that deep); {FIX_LINE}",
            shown(&p)
        ),
    );
    let p = write(dir.path(), "deep.yaml", format!("interactions: {deep}\n"));
    assert_error(
        &replay(&[&p], &["--input-format", "cassette"]),
        &format!("{}:1: invalid YAML: recursion limit exceeded (column 270)", shown(&p)),
    );
}

// --- The file system: links, unreadable files, special files -----------------------------------

#[cfg(unix)]
#[test]
fn a_directory_symlink_loop_is_walked_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    write(&dir.path().join("d"), "small.jsonl", fixture("native/small.jsonl"));
    std::os::unix::fs::symlink(dir.path(), dir.path().join("d/up")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("d"), dir.path().join("d/self")).unwrap();
    let o = replay(&[dir.path()], &[]);
    assert_warnings(&o, &[]);
    assert_eq!(o.report.runs.len(), 1);
}

#[cfg(unix)]
#[test]
fn a_file_symlink_loop_is_an_error_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let loop_msg = "too many levels of symbolic links (a symlink loop: fix or remove the link)";
    // Named alone, it leaves nothing to read: nothing is written.
    let out = ctxbudget().args([os("replay"), a.as_os_str(), os("--format"), os("json")]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("error: {}: {loop_msg}\nerror: {NOTHING_READ}\n", shown(&a))
    );
    assert!(out.stdout.is_empty());
    // In a walk too: the link is named, and the walk goes on.
    write(dir.path(), "c.jsonl", fixture("native/small.jsonl"));
    let o = replay(&[dir.path()], &[]);
    assert_eq!(o.report.errors, [format!("{}: {loop_msg}", shown(&a)), format!("{}: {loop_msg}", shown(&b))]);
    assert_eq!((o.code, o.report.runs.len()), (Some(1), 1));
}

#[cfg(unix)]
#[test]
fn a_broken_symlink_is_an_error_saying_so_when_named_and_in_a_walk() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("moved.jsonl");
    std::os::unix::fs::symlink("../archive/moved.jsonl", &link).unwrap();
    let broken = format!(
        "{}: broken symbolic link (it points to ../archive/moved.jsonl, which does not exist: fix or remove \
         the link)",
        shown(&link)
    );
    // Found in a folder, it is named, and the walk goes on.
    write(dir.path(), "small.jsonl", fixture("native/small.jsonl"));
    let o = replay(&[dir.path()], &[]);
    assert_eq!(o.report.errors, std::slice::from_ref(&broken));
    assert_eq!((o.code, o.report.runs.len()), (Some(1), 1));
    // Named alone, it leaves nothing to read.
    let out =
        ctxbudget().args([os("replay"), link.as_os_str(), os("--format"), os("json")]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stderr).unwrap(), format!("error: {broken}\nerror: {NOTHING_READ}\n"));
}

/// Whether this process runs as root (then permissions do not stop it from reading).
#[cfg(unix)]
fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_an_error_naming_the_permission() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = write(dir.path(), "secret.jsonl", fixture("native/small.jsonl"));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    let expected = format!("{}: cannot read: permission denied (check the file's permissions)", shown(&p));
    let bin = assert_cmd::cargo::cargo_bin("ctxbudget");
    let args = ["replay", "--tokenizer", "estimate", "--policy", "none", "--format", "json"];
    let out = if !is_root() {
        std::process::Command::new(&bin).args(args).arg(&p).output().unwrap()
    } else {
        // Root reads any file: drop to `nobody` for this run, so the permission bits count.
        let as_nobody = || {
            let mut c = std::process::Command::new("/usr/bin/setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(&bin).current_dir("/");
            c
        };
        // `nobody` must be able to run the binary (a checkout under a private home may not allow it).
        if !as_nobody().arg("--version").output().is_ok_and(|o| o.status.success()) {
            println!(
                "skipped: running as root, and `nobody` cannot run {} through /usr/bin/setpriv, so no file \
                 can be made unreadable to the program",
                bin.display()
            );
            return;
        }
        as_nobody().args(args).arg(&p).output().unwrap()
    };
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report: ReplayReport = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.errors, std::slice::from_ref(&expected));
    assert_eq!(String::from_utf8(out.stderr).unwrap(), format!("error: {expected}\n"));
}

#[cfg(target_os = "linux")]
#[test]
fn a_file_whose_read_fails_is_an_error_saying_what_failed() {
    // /proc/self/mem opens but cannot be read at offset 0 (EIO), as root too: a real read failure.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mem.jsonl");
    std::os::unix::fs::symlink("/proc/self/mem", &p).unwrap();
    assert_error(
        &replay(&[&p], &[]),
        &format!(
            "{}: cannot read: input/output error (the device or file system failed to read it; copy the file \
             elsewhere and retry)",
            shown(&p)
        ),
    );
}

#[cfg(unix)]
#[test]
fn a_named_pipe_with_a_mistake_is_an_error_not_a_run_that_waits_for_ever() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("session.json");
    if !std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        println!("skipped: mkfifo is not available");
        return;
    }
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ctxbudget"))
        .args([os("replay"), fifo.as_os_str(), os("--tokenizer"), os("estimate"), os("--format"), os("csv")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The writer opens the pipe once the reader has, writes a document with a mistake and closes.
    let chat =
        "[\n  {\"role\": \"system\", \"content\": \"sys\"},\n  {\"role\": \"user\", \"content\": 42}\n]\n";
    std::fs::write(&fifo, chat).unwrap();
    // Finding the error's line opened the pipe again, and waited for a writer for ever.
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("still running after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let error = format!(
        "error: {}: [1].content: expected null, a string or a list of parts, found a number\n",
        shown(&fifo)
    );
    assert_eq!(String::from_utf8(out.stderr).unwrap(), error);
}

#[cfg(unix)]
#[test]
fn a_named_pipe_with_no_writer_is_an_error_and_the_files_beside_it_are_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("session.jsonl");
    if !std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        println!("skipped: mkfifo is not available");
        return;
    }
    let good = write(dir.path(), "good.jsonl", fixture("native/small.jsonl"));
    let started = std::time::Instant::now();
    // Before: opening the pipe waited for a writer for ever (the test's own timeout ended it).
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ctxbudget"))
        .args([os("replay"), fifo.as_os_str(), good.as_os_str()])
        .args(["--tokenizer", "estimate", "--policy", "none", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("still running after 30 s: opening the pipe blocked");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let report: ReplayReport = serde_json::from_slice(&out.stdout).unwrap();
    let error = format!(
        "{}: cannot read: a named pipe that nothing writes to (nothing came within 2 s): start the program \
         that writes it first, or pass a regular file",
        shown(&fifo)
    );
    assert_eq!(report.errors, [error]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(report.runs.len(), 1);
    assert_eq!(report.runs[0].trace, shown(&good));
    // `count` too ends, with the same reason.
    let out =
        ctxbudget().arg("count").arg(&fifo).timeout(std::time::Duration::from_secs(30)).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a named pipe that nothing writes to"));
}

#[cfg(unix)]
#[test]
fn links_out_of_a_walked_folder_are_followed_only_with_follow() {
    let (inside, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(outside.path(), "elsewhere.jsonl", fixture("native/small.jsonl"));
    write(inside.path(), "here.jsonl", fixture("native/small.jsonl"));
    let link = inside.path().join("out");
    std::os::unix::fs::symlink(outside.path(), &link).unwrap();
    // A link inside the folder to a place inside it is followed (and its file read once).
    std::os::unix::fs::symlink(inside.path().join("here.jsonl"), inside.path().join("again.jsonl")).unwrap();
    // So is a link to a folder inside it, whose files are read once, with the warning docs/cli.md
    // ("Inputs") promises.
    std::fs::create_dir(inside.path().join("sub")).unwrap();
    write(&inside.path().join("sub"), "x.jsonl", fixture("native/small.jsonl"));
    std::os::unix::fs::symlink(inside.path().join("sub"), inside.path().join("sub2")).unwrap();
    let o = replay(&[inside.path()], &[]);
    assert_warnings(
        &o,
        &[
            format!(
                "{}: given or found more than once (first as {}); read once",
                shown(&inside.path().join("sub2")),
                shown(&inside.path().join("sub"))
            ),
            format!(
                "{}: 1 symbolic link(s) leading out of this folder not followed (first: {}); pass --follow to \
                 read through them",
                shown(inside.path()),
                shown(&link)
            ),
            format!(
                "{}: given or found more than once (first as {}); read once",
                shown(&inside.path().join("here.jsonl")),
                shown(&inside.path().join("again.jsonl"))
            ),
        ],
    );
    assert_eq!(o.report.runs.len(), 2);
    let o = replay(&[inside.path()], &["--follow"]);
    assert_eq!(o.report.runs.len(), 3, "{:?}", o.report.warnings);
}

#[cfg(unix)]
#[test]
fn a_socket_is_an_error_when_named_and_passed_over_in_a_walk() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("agent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&p).unwrap();
    assert_error(
        &replay(&[&p], &[]),
        &format!(
            "{}: cannot read: no such device or address (a socket or a device, not a file: pass a regular file)",
            shown(&p)
        ),
    );
    write(dir.path(), "small.jsonl", fixture("native/small.jsonl"));
    let o = replay(&[dir.path()], &[]);
    assert_warnings(&o, &[]);
    assert_eq!(o.report.runs.len(), 1);
}

// --- Usage errors: exit 2 before any work ------------------------------------------------------

const SMALL: &str = "tests/fixtures/native/small.jsonl";
const POLICIES: &str = "none, keep-turns, keep-results, budget, anthropic, langchain, opencode, gemini, swe-agent, \
                        complexity-trap, openhands, openhands-amortized, openclaw, claude-code-micro, \
                        compact:claude-code, compact:codex, compact:opencode, compact:anthropic-sdk, \
                        compact:openhands, compact:goose, compact:goose-tools";

#[test]
fn a_policy_spec_with_an_unknown_name_key_or_bad_value_is_a_usage_error() {
    let run =
        |spec: &str, error: &str| assert_usage(&[os("replay"), os(SMALL), os("--policy"), os(spec)], error);
    run(
        "keep-last:n=3",
        &format!(
            "unknown policy `keep-last` in `keep-last:n=3`; valid policies: {POLICIES}; did you mean \
             `keep-results` or `keep-turns`?"
        ),
    );
    run(
        "budget:max=10,goal=5",
        "policy `budget` has no parameter `goal` (in `budget:max=10,goal=5`); valid keys: max, target",
    );
    run(
        "keep-turns:n=three",
        "bad value for `n` in `keep-turns:n=three`: `three`: invalid digit found in string",
    );
    run(
        "keep-turns:n",
        "cannot parse `keep-turns:n`: `n` is not key=value (expected `name` or `name:key=value,key=value`)",
    );
    // Given twice, the last value would run under a label showing the first.
    run(
        "keep-turns:n=3,n=4",
        "cannot parse `keep-turns:n=3,n=4`: `n` is given twice (expected `name` or `name:key=value,key=value`)",
    );
    let cost = |prices: &str, error: &str| {
        assert_usage(&[os("cost"), os(SMALL), os("--prices"), os(prices)], &format!("--prices: {error}"))
    };
    cost("input=1,input=2", "price `input` is given twice in `input=1,input=2`");
    cost(
        "input=1e308",
        "price `1e308` in `input=1e308` is not a number from 0 to 1000000 (USD per million tokens)",
    );
    assert_usage(
        &[os("replay"), os(SMALL), os("--transform"), os("truncate:aider")],
        "unknown transform `truncate:aider`; valid transforms: truncate:codex, truncate:codex-policy, truncate:mini, spill",
    );
}

#[test]
fn a_policies_file_with_a_mistake_is_a_usage_error_naming_the_file_and_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "p.toml",
        "[[policy]]\nkind = \"none\"\n\n[[policy]]\nkind = \"budget\"\ngoal = 5\n",
    );
    assert_usage(
        &[os("replay"), os(SMALL), os("--policies"), file.as_os_str()],
        &format!(
            "{}: policy #2: policy `budget` has no parameter `goal` (in `budget:goal=5`); valid keys: max, target",
            shown(&file)
        ),
    );
    // Two of one name, or a pruning policy named `none`, found once every policy is known: named
    // by the file and the table too.
    let file = write(dir.path(), "n.toml", "[[policy]]\nkind = \"keep-turns\"\nname = \"none\"\n");
    assert_usage(
        &[os("replay"), os(SMALL), os("--policies"), file.as_os_str()],
        &format!(
            "{}: policy #1 (`keep-turns`): `name` is `none`, the name of the baseline every saving is measured \
             against; give this one another name",
            shown(&file)
        ),
    );
    let file =
        write(dir.path(), "k.toml", "[[policy]]\nkind = \"none\"\n\n[[policy]]\nkind = \"keep-turns\"\n");
    assert_usage(
        &[os("replay"), os(SMALL), os("--policy"), os("keep-turns"), os("--policies"), file.as_os_str()],
        &format!(
            "{}: policy #2 (`keep-turns`): `keep-turns` is already the name of a policy given by --policy: each \
             policy's name labels its rows, so names must differ (give this one a `name = \"...\"`)",
            shown(&file)
        ),
    );
    let file = write(dir.path(), "q.toml", "[[policy]]\nkind = \"none\"\nname = \n");
    let out = ctxbudget().args(["replay", SMALL, "--policies"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let expected = format!(
        "error: {}: not valid TOML: line 3, column 8: string values must be quoted, expected literal string\n",
        shown(&file)
    );
    assert_eq!(stderr, expected);
    // The error names the place; it does not echo the line (here 200 KB long).
    let deep = format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let file = write(dir.path(), "deep.toml", deep);
    let out = ctxbudget().args(["replay", SMALL, "--policies"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!("error: {}: not valid TOML: line 1, column ", shown(&file))),
        "{stderr}"
    );
    assert!(stderr.len() < 300, "{} bytes", stderr.len());
}

#[test]
fn an_unknown_input_format_is_a_usage_error_listing_the_valid_ones() {
    assert_usage(
        &[os("replay"), os(SMALL), os("--input-format"), os("jsonl")],
        &format!("unknown input format `jsonl`; valid: auto, {NATIVE_FORMATS}"),
    );
}

#[test]
fn an_output_in_a_missing_directory_is_a_usage_error_for_every_command() {
    let out = "/no/such/dir/out.csv";
    let error =
        "cannot write /no/such/dir/out.csv: the directory /no/such/dir does not exist; create it first";
    for command in ["replay", "reconcile", "sweep", "compare", "cost", "calibrate"] {
        assert_usage(&[os(command), os(SMALL), os("--output"), os(out)], error);
    }
}

#[test]
fn an_output_that_is_a_directory_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    assert_usage(
        &[os("replay"), os(SMALL), os("--output"), dir.path().as_os_str()],
        &format!(
            "cannot write {}: it is a directory; give a file name (or `-` for stdout)",
            shown(dir.path())
        ),
    );
}

#[test]
fn an_output_equal_to_an_input_is_refused_and_the_input_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "t.jsonl", fixture("native/small.jsonl"));
    let before = std::fs::read(&input).unwrap();
    for command in ["replay", "reconcile", "sweep", "compare", "cost", "calibrate"] {
        assert_usage(
            &[os(command), input.as_os_str(), os("--output"), input.as_os_str()],
            &format!(
                "refusing to write {}: it is an input (or inside one); choose another output path",
                shown(&input)
            ),
        );
    }
    let new = dir.path().join("new.txt");
    assert_usage(
        &[os("replay"), dir.path().as_os_str(), os("--output"), new.as_os_str()],
        &format!(
            "refusing to write {}: it is an input (or inside one); choose another output path",
            shown(&new)
        ),
    );
    assert!(!new.exists(), "a refused output is not created among the inputs");
    let inside = dir.path().join("report");
    let canonical = dir.path().canonicalize().unwrap();
    assert_usage(
        &[os("report"), dir.path().as_os_str(), os("--out"), inside.as_os_str()],
        &format!(
            "refusing to write the report into {}: it overlaps the input {}; choose another --out",
            shown(&canonical.join("report")),
            shown(dir.path())
        ),
    );
    assert!(!inside.exists(), "a refused report leaves nothing among the inputs");
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

#[cfg(unix)]
#[test]
fn an_output_that_is_a_file_found_through_a_link_in_a_folder_is_refused() {
    // walk/l.jsonl -> ../ext/real.jsonl: ext/real.jsonl is an input, though no path given names it
    // (with --follow: by default a link out of the folder walked is not followed).
    let dir = tempfile::tempdir().unwrap();
    let (walk, ext) = (dir.path().join("walk"), dir.path().join("ext"));
    std::fs::create_dir(&walk).unwrap();
    std::fs::create_dir(&ext).unwrap();
    let real = write(&ext, "real.jsonl", fixture("native/small.jsonl"));
    let link = walk.join("l.jsonl");
    std::os::unix::fs::symlink("../ext/real.jsonl", &link).unwrap();
    let before = std::fs::read(&real).unwrap();
    let found_as = |output: &Path| {
        format!(
            "refusing to write {}: it is an input (found as {}); choose another output path",
            shown(output),
            shown(&link)
        )
    };
    for command in ["replay", "reconcile", "sweep", "compare", "cost", "calibrate"] {
        let args = [os(command), walk.as_os_str(), os("--follow"), os("--format"), os("csv")];
        assert_usage(&[&args[..], &[os("-o"), real.as_os_str()]].concat(), &found_as(&real));
        assert_usage(
            &[&args[..], &[os("--count-cache"), real.as_os_str()]].concat(),
            &format!("--count-cache: {}", found_as(&real)),
        );
    }
    // A report directory that holds it.
    let canonical = ext.canonicalize().unwrap();
    assert_usage(
        &[os("report"), walk.as_os_str(), os("--follow"), os("--out"), ext.as_os_str()],
        &format!(
            "refusing to write the report into {}: it holds {}, an input (found as {}); choose another --out",
            shown(&canonical),
            shown(&canonical.join("real.jsonl")),
            shown(&link)
        ),
    );
    assert!(!ext.join("charts").exists(), "a refused report creates nothing");
    assert_eq!(std::fs::read(&real).unwrap(), before);
    // Another file of that folder is no input: written as ever.
    let other = ext.join("report.csv");
    let out =
        ctxbudget().args([os("replay"), walk.as_os_str(), os("-o"), other.as_os_str()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(other.exists());
}

#[cfg(unix)]
#[test]
fn an_output_equal_to_the_file_standard_input_reads_is_refused_as_dev_stdin_is() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "in.jsonl", fixture("native/small.jsonl"));
    let before = std::fs::read(&input).unwrap();
    // `ctxbudget COMMAND - -o in.jsonl < in.jsonl`: stdin is the file itself, not a pipe.
    let run = |args: &[&std::ffi::OsStr]| {
        let stdin = std::fs::File::open(&input).unwrap();
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("ctxbudget"))
            .args(args)
            .stdin(stdin)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap(), out.stdout)
    };
    let refused = format!(
        "error: refusing to write {}: it is an input (or inside one); choose another output path\n",
        shown(&input)
    );
    for command in ["replay", "reconcile", "sweep", "compare", "cost", "calibrate"] {
        for stdin in ["-", "/dev/stdin"] {
            let got = run(&[os(command), os(stdin), os("--format"), os("csv"), os("-o"), input.as_os_str()]);
            assert_eq!(got, (Some(2), refused.clone(), Vec::new()), "{command} {stdin}");
        }
    }
    let got = run(&[os("report"), os("-"), os("--out"), dir.path().as_os_str()]);
    let canonical = dir.path().canonicalize().unwrap();
    let overlaps = format!(
        "error: refusing to write the report into {}: it overlaps the input /dev/stdin; choose another --out\n",
        shown(&canonical)
    );
    assert_eq!(got, (Some(2), overlaps, Vec::new()));
    assert!(!dir.path().join("charts").exists(), "a refused report creates nothing");
    assert_eq!(std::fs::read(&input).unwrap(), before);
}

#[test]
fn a_report_directory_that_cannot_be_created_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "occupied", "a file, not a directory");
    let out = file.join("report");
    assert_usage(
        &[os("report"), os(SMALL), os("--out"), out.as_os_str()],
        &format!(
            "cannot create the report directory {}: not a directory (a file stands where a directory is needed: \
             choose another path)",
            shown(&out)
        ),
    );
    // A file where the report's charts/ goes is named, not the folder around it.
    let out = dir.path().join("report");
    std::fs::create_dir(&out).unwrap();
    let charts = write(&out, "charts", "a file");
    assert_usage(
        &[os("report"), os(SMALL), os("--out"), out.as_os_str(), os("--force")],
        &format!(
            "cannot create {}: a file of that name is in the way (move it away, or choose another --out)",
            shown(&charts)
        ),
    );
}
