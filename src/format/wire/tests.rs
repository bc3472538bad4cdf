//! Tests of the wire-format helpers: head documents, classification, usage, chains, builders.

use super::*;
use crate::format::with_head;
use serde_json::json;
use std::path::Path;

fn head(text: &str, whole: bool) -> Option<Value> {
    with_head(Path::new("x.json"), text.as_bytes(), whole, head_document)
}

#[test]
fn a_whole_document_is_parsed_as_it_is() {
    assert_eq!(head("\u{feff} {\"a\": [1, 2]}\n", true), Some(json!({"a": [1, 2]})));
}

#[test]
fn a_document_with_a_syntax_error_is_described_up_to_the_error() {
    let text = "[\n{\"role\": \"user\", \"content\": \"hi\"},\n{\"role\": \"assistant\", \"content\": \"a\"}\n{\"role\": \"user\"}\n]";
    let doc = head(text, true).unwrap();
    assert_eq!(doc.as_array().map(Vec::len), Some(2), "{doc}");
}

#[test]
fn a_truncated_document_is_closed_at_its_last_complete_value() {
    let v = head("[{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assi", false).unwrap();
    assert_eq!(v, json!([{"role": "user", "content": "hi"}]));
    let v = head("{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"a,\\\"b", false);
    assert_eq!(v, Some(json!({"model": "m", "messages": [{"role": "user"}]})));
}

#[test]
fn json_lines_and_non_json_have_no_head_document() {
    assert_eq!(head("{\"type\":\"user\"}\n{\"type\":\"user\"}\n", true), None);
    assert_eq!(head("interactions:\n- request:\n", true), None);
}

#[test]
fn message_lists_are_classified_by_their_markers() {
    let plain = json!([{"role": "user", "content": "hi"}]);
    assert_eq!(classify(plain.as_array().unwrap()), Some(Family::Plain));
    let chat = json!([{"role": "assistant", "content": null, "tool_calls": []}]);
    assert_eq!(classify(chat.as_array().unwrap()), Some(Family::Chat));
    let anthropic = json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]);
    assert_eq!(classify(anthropic.as_array().unwrap()), Some(Family::Anthropic));
    let responses = json!([{"role": "user", "content": "hi"}, {"type": "function_call", "call_id": "c"}]);
    assert_eq!(classify(responses.as_array().unwrap()), Some(Family::Responses));
    let mixed = json!([{"role": "tool", "content": "x"}, {"type": "function_call"}]);
    assert_eq!(classify(mixed.as_array().unwrap()), None);
    let gemini_cli = json!([{"type": "user", "content": "hi"}]);
    assert_eq!(classify(gemini_cli.as_array().unwrap()), None);
    let openhands = json!([{"id": 0, "source": "user", "action": "message"}]);
    assert_eq!(classify(openhands.as_array().unwrap()), None);
}

#[test]
fn a_body_with_other_agents_keys_has_no_family() {
    let mini =
        json!({"messages": [{"role": "user", "content": "x"}], "trajectory_format": "mini-swe-agent-1"});
    assert_eq!(classify_body(mini.as_object().unwrap()), None);
    let anthropic = json!({"system": "s", "messages": [{"role": "user", "content": "x"}]});
    assert_eq!(classify_body(anthropic.as_object().unwrap()), Some(Family::Anthropic));
}

#[test]
fn usage_is_normalised_per_provider() {
    let anthropic = json!({"type": "message", "usage": {"input_tokens": 3, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 100, "output_tokens": 7}});
    let u = usage_of_response(&anthropic).unwrap().unwrap();
    assert_eq!((u.input_tokens, u.cache_read_tokens, u.output_tokens), (113, Some(100), Some(7)));
    let chat = json!({"usage": {"prompt_tokens": 104, "completion_tokens": 16, "prompt_tokens_details": {"cached_tokens": 64}}});
    let u = usage_of_response(&chat).unwrap().unwrap();
    assert_eq!((u.input_tokens, u.cache_read_tokens), (104, Some(64)));
    let responses = json!({"usage": {"input_tokens": 335, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 44}});
    assert_eq!(usage_of_response(&responses).unwrap().unwrap().input_tokens, 335);
    let gemini = json!({"usageMetadata": {"promptTokenCount": 23, "candidatesTokenCount": 5}});
    assert_eq!(usage_of_response(&gemini).unwrap().unwrap().input_tokens, 23);
    let zero = json!({"usage": {"input_tokens": 0, "output_tokens": 0}});
    assert!(usage_of_response(&zero).unwrap().is_err());
    assert!(usage_of_response(&json!({"id": "x"})).is_none());
}

#[test]
fn chains_place_one_boundary_where_each_call_history_ended() {
    let user = |t: &str| Item::User { text: t.into(), meta: false, images: 0 };
    let asst = |t: &str| Item::Assistant { text: t.into() };
    let req = |id: &str| Request { id: Some(id.into()), ..Default::default() };
    let mut chains = Chains::default();
    chains.push("chat", vec![user("a")], req("r1"), vec![asst("b")], vec![]);
    chains.push("chat", vec![user("a"), asst("b"), user("c")], req("r2"), vec![asst("d")], vec![]);
    chains.push("chat", vec![user("other")], req("r3"), vec![], vec![]);
    let (cs, _) = chains.finish(|_, id| id.to_owned());
    assert_eq!(cs.len(), 2);
    assert_eq!(cs[0].id, "chat");
    assert_eq!(cs[1].id, "chat-2");
    let ids: Vec<String> = cs[0]
        .items
        .iter()
        .map(|i| match i {
            Item::Request(r) => r.id.clone().unwrap(),
            Item::User { text, .. } | Item::Assistant { text } => text.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(ids, ["a", "r1", "b", "c", "r2", "d"]);
}

#[test]
fn a_chain_is_extended_only_while_push_would_choose_it() {
    let user = |t: &str| Item::User { text: t.into(), meta: false, images: 0 };
    let (mut pushed, mut extended) = (Chains::default(), Chains::default());
    for chains in [&mut pushed, &mut extended] {
        chains.push("chat", vec![user("x")], Request::default(), vec![], vec![]);
    }
    pushed.push("chat", vec![user("a")], Request::default(), vec![], vec![]);
    let mark = extended.push("chat", vec![user("a")], Request::default(), vec![], vec![]);
    assert!(extended.can_extend(mark));
    pushed.push("chat", vec![user("a"), user("b")], Request::default(), vec![user("t")], vec!["w".into()]);
    extended.extend(mark, vec![user("b")], Request::default(), vec![user("t")], vec!["w".into()]);
    assert_eq!(pushed.finish(|_, id| id.to_owned()), extended.finish(|_, id| id.to_owned()));
    // Another call pushed since, or a later chain of the same flow: push must compare.
    let mut chains = Chains::default();
    let first = chains.push("chat", vec![user("a")], Request::default(), vec![], vec![]);
    chains.push("other", vec![user("z")], Request::default(), vec![], vec![]);
    assert!(!chains.can_extend(first));
    let later = chains.push("chat", vec![user("q")], Request::default(), vec![], vec![]);
    assert!(chains.can_extend(later));
    let mut chains = Chains::default();
    chains.push("chat", vec![user("a")], Request::default(), vec![], vec![]);
    chains.push("chat", vec![user("b")], Request::default(), vec![], vec![]);
    let back = chains.push("chat", vec![user("a"), user("c")], Request::default(), vec![], vec![]);
    assert!(!chains.can_extend(back), "a later chat chain exists");
}

#[test]
fn results_take_the_name_of_their_call() {
    let mut b = Builder::default();
    b.call("c1".into(), "bash".into(), "{}".into());
    b.result("c1".into(), Some("ignored".into()), "ok".into(), false);
    b.result("c9".into(), Some("hint".into()), "ok".into(), false);
    let names: Vec<Option<String>> = b
        .items
        .iter()
        .filter_map(|i| match i {
            Item::ToolResult(r) => Some(r.name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(names, [Some("bash".into()), Some("hint".into())]);
    assert_eq!(b.warnings("x"), ["x: 1 tool result(s) answer no earlier call (name taken from the result)"]);
}
