//! Unit tests of the shared importer helpers (`super`): the head outline, JSON paths and line
//! numbers, message content and usage conversions.

use super::*;

#[test]
fn outline_records_keys_by_path_and_short_values() {
    let o = Outline::scan(
        r#"{"info": {"exit_status": "Submitted", "n": 3}, "messages": [{"role": "system", "content": "x"}, {"role": "user"}], "fmt": "mini-swe-agent-1"}"#,
    );
    assert!(o.is_object() && o.complete());
    assert_eq!(o.first_key(), Some("info"));
    assert!(o.has(".info.exit_status") && o.has(".messages[].role") && o.has(".fmt"));
    assert!(!o.has(".role") && !o.has(".messages.role"));
    assert_eq!(o.values(".messages[].role").collect::<Vec<_>>(), ["system", "user"]);
    assert_eq!(o.value(".fmt"), Some("mini-swe-agent-1"));
    assert_eq!(o.keys("").collect::<Vec<_>>(), ["fmt", "info", "messages"]);
}

#[test]
fn outline_of_a_cut_off_head_keeps_what_it_saw() {
    let o = Outline::scan(
        "[\n  {\n    \"id\": 0,\n    \"source\": \"user\",\n    \"message\": \"a \\\"quoted\\\" te",
    );
    assert!(o.is_array() && !o.complete());
    assert!(o.has("[].id") && o.has("[].source") && o.has("[].message"));
    assert_eq!(o.value("[].source"), Some("user"));
}

#[test]
fn outline_walks_only_the_first_line_of_json_lines() {
    let o = Outline::scan("{\"a\":1}\n{\"b\":2}\n");
    assert!(o.has(".a") && !o.has(".b") && o.complete());
}

#[test]
fn outline_of_non_json_is_empty() {
    for text in ["interactions:\n- request: {}", "", "  \"just a string\"", "42"] {
        let o = Outline::scan(text);
        assert!(!o.is_object() && !o.is_array(), "{text}");
    }
}

#[test]
fn a_document_error_names_the_line() {
    let e = parse_document("{\n  \"a\": 1,\n  oops\n}", Path::new("t.json")).unwrap_err().to_string();
    assert!(e.starts_with("t.json:3: invalid JSON"), "{e}");
    let mut bad: &[u8] = b"{\n\"a\": \"\xff\"}";
    let e = read_document(&mut bad, Path::new("t.json")).unwrap_err().to_string();
    assert!(e.starts_with("t.json:2: invalid UTF-8"), "{e}");
}

#[test]
fn a_json_path_is_found_on_its_line() {
    let text =
        "[\n  {\"role\": \"user\", \"content\": \"a\"},\n  {\"role\": \"user\",\n   \"content\": 42}\n]";
    assert_eq!(line_of_json_path(text, "[1]"), Some(3));
    assert_eq!(line_of_json_path(text, "[1].content"), Some(4));
    assert_eq!(line_of_json_path(text, "[0].content"), Some(2));
    assert_eq!(line_of_json_path(text, "[2]"), None);
    let doc = "{\"messages\": [\n{\"content\": [{\"x\": {\"y\": [1, 2]}},\n{\"type\": \"tool_use\"}]}]}";
    assert_eq!(line_of_json_path(doc, "messages[0].content[1]"), Some(3));
    assert_eq!(line_of_json_path(doc, "messages"), Some(1));
    assert_eq!(line_of_json_path(doc, "messages[0].content[0].x.y[1]"), Some(2));
    for not_a_path in ["expected an object", "", "a b", "[x]", "."] {
        assert_eq!(line_of_json_path(doc, not_a_path), None, "{not_a_path}");
    }
}

#[test]
fn a_cut_off_document_says_it_ends_early() {
    let e = parse_document("[{\"role\": \"user\"},\n", Path::new("t.json")).unwrap_err().to_string();
    assert!(e.starts_with("t.json:2: the JSON document ends early, at line 2 column 0"), "{e}");
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let e = parse_document(&deep, Path::new("t.json")).unwrap_err().to_string();
    assert!(e.contains("recursion limit exceeded") && e.contains("nested more than 128 deep"), "{e}");
}

#[test]
fn content_parts_are_joined_and_images_counted() {
    let v: Value = serde_json::from_str(
        r#"[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},"b",{"inlineData":{}}]"#,
    )
    .unwrap();
    assert_eq!(content_text(Some(&v)), ("a\nb".to_owned(), 2));
    assert_eq!(content_text(None), (String::new(), 0));
}

#[test]
fn usage_fields_that_are_not_token_counts_are_named_with_their_value() {
    let u: Value = serde_json::from_str(
        r#"{"a":-5,"b":1.5,"c":1e30,"d":"12","e":null,"f":7,"g":18446744073709551616,"h":-0.5}"#,
    )
    .unwrap();
    let why = |k: &str| recorded_count(&u, k).unwrap_err();
    assert_eq!(why("a"), "usage field `a` is -5 (a negative number), not a token count");
    assert_eq!(why("b"), "usage field `b` is 1.5 (a fractional number), not a token count");
    assert_eq!(why("c"), "usage field `c` is 1e+30 (above 2^64), not a token count");
    assert_eq!(why("d"), "usage field `d` is \"12\" (a string), not a token count");
    assert!(why("g").ends_with("e+19 (above 2^64), not a token count"), "{}", why("g"));
    assert_eq!(why("h"), "usage field `h` is -0.5 (a negative number), not a token count");
    assert_eq!(recorded_count(&u, "e"), Ok(None));
    assert_eq!(recorded_count(&u, "f"), Ok(Some(7)));
    assert_eq!(recorded_count(&u, "missing"), Ok(None));
    let long = serde_json::json!({"k": "\u{1b}[31m".repeat(20)});
    let why = recorded_count(&long, "k").unwrap_err();
    assert!(why.starts_with("usage field `k` is \"\\u001b[31m") && why.contains('…'), "{why}");
    let nested = serde_json::json!({"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": -1}});
    assert_eq!(
        first_bad_count(&nested, &names_tokens).unwrap(),
        "usage field `cached_tokens` is -1 (a negative number), not a token count"
    );
    assert!(openai_usage(&nested).unwrap().is_err());
}

#[test]
fn openai_usage_takes_prompt_tokens_whole_and_cached_as_a_subset() {
    let v: Value = serde_json::from_str(
        r#"{"prompt_tokens":100,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":60},"cache_creation_input_tokens":30}"#,
    )
    .unwrap();
    let u = openai_usage(&v).unwrap().unwrap();
    assert_eq!(
        (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens),
        (100, Some(60), Some(30), Some(7))
    );
    assert_eq!(openai_usage(&serde_json::json!({"completion_tokens": 1})), None);
}

#[test]
fn split_action_takes_the_last_occurrence_out() {
    let (rest, action) = split_action("run ls\n```\nls\n```", "ls\n");
    assert_eq!((rest.as_str(), action.as_str()), ("run ls\n```\n\n```", "ls"));
    assert_eq!(rest.len() + action.len(), "run ls\n```\nls\n```".len());
    let (rest, _) = split_action("no action here", "cat x");
    assert_eq!(rest, "no action here");
}

#[test]
fn unix_seconds_become_milliseconds() {
    assert_eq!(unix_seconds(Some(&serde_json::json!(1_763_511_296))), Some(1_763_511_296_000));
    assert_eq!(unix_seconds(Some(&serde_json::json!(1.5))), Some(1500));
    assert_eq!(unix_seconds(Some(&serde_json::json!("x"))), None);
}
