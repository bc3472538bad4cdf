//! Images in the OpenAI formats, sized by OpenAI's per-model rules: the hand-written fixtures of
//! `tests/fixtures/openai-images/` (their README gives every number), replayed through the binary.

use crate::common::{replay_none_per_request as replay, root, timeline_contexts};

fn images_column(file: &str) -> (String, Vec<u64>, Vec<u64>) {
    let path = root().join("tests/fixtures/openai-images").join(file);
    let (report, warnings) = replay(&path, &["--tokenizer", "estimate", "--overhead", "0"]);
    assert!(!warnings.contains("not replayed"), "{file}: {warnings}");
    let run = &report["runs"][0];
    let images = run["timeline"].as_array().unwrap().iter().map(|r| r["images"].as_u64().unwrap()).collect();
    (run["format"].as_str().unwrap().to_owned(), images, timeline_contexts(&report))
}

#[test]
fn a_codex_screenshot_is_sized_for_the_model_of_the_request_that_sends_it() {
    let (format, images, contexts) = images_column("rollout-images.jsonl");
    assert_eq!(format, "codex");
    // gpt-5.2-codex (named after the prompt): 70 + 6 tiles · 140; then a URL in a tool output, of
    // unknown size, counted as 1024 × 1024: 70 + 4 · 140.
    assert_eq!(images, [910, 910 + 630]);
    assert!(contexts.iter().zip(&images).all(|(c, i)| c > i), "{contexts:?}");
}

#[test]
fn chat_image_parts_follow_their_detail_on_the_bodys_model() {
    let (format, images, _) = images_column("chat-body.json");
    assert_eq!(format, "openai-chat");
    // gpt-4o: the PNG at high detail 85 + 6 · 170, a low-detail URL 85; then the PNG again.
    assert_eq!(images, [1105 + 85, 1105 + 85 + 1105]);
}

#[test]
fn a_patch_model_counts_patches_whatever_the_detail() {
    let (format, images, _) = images_column("responses-body.json");
    assert_eq!(format, "openai-responses");
    // o4-mini: 35 × 19 patches of 32 px, times 1.72, rounded.
    assert_eq!(images, [1144]);
}
