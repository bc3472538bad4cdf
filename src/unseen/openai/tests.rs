use base64::Engine as _;
use serde_json::json;

use super::*;
use crate::model::Request;

const GPT_4O: Rule = Rule::Tiles { base: 85, tile: 170 };

fn png_url(width: u32, height: u32) -> String {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    png.extend_from_slice(&width.to_be_bytes());
    png.extend_from_slice(&height.to_be_bytes());
    png.extend_from_slice(&[8, 6, 0, 0, 0]);
    format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(&png))
}

#[test]
fn tile_models_follow_the_guides_worked_examples() {
    // "Cost calculation examples (for gpt-4o)": 1024 × 1024 high → 768 × 768, 4 tiles, 765;
    // 2048 × 4096 high → 1024 × 2048 → 768 × 1536, 6 tiles, 1105; 4096 × 8192 low, 85.
    assert_eq!(GPT_4O.tokens((1024, 1024), Detail::High), 765);
    assert_eq!(GPT_4O.tokens((2048, 4096), Detail::High), 1105);
    assert_eq!(GPT_4O.tokens((4096, 8192), Detail::Low), 85);
    // Small images are not scaled up: one tile.
    assert_eq!(GPT_4O.tokens((100, 100), Detail::High), 255);
    assert_eq!(GPT_4O.tokens((512, 513), Detail::High), 85 + 2 * 170);
}

#[test]
fn patch_models_follow_the_guides_worked_examples() {
    let one = Rule::Patches { multiplier: 1.0 };
    // "A 1024 x 1024 image is 1024 tokens"; "A 1800 x 2400 image is 1452 tokens" (scaled to
    // 1056 × 1408, 33 × 44 patches).
    assert_eq!(one.tokens((1024, 1024), Detail::High), 1024);
    assert_eq!(one.tokens((1800, 2400), Detail::High), 1452);
    assert_eq!(one.tokens((100, 100), Detail::High), 16);
    // Never over the cap, whatever the aspect ratio; low detail changes nothing.
    for (w, h) in [(4000, 1474), (10_000, 10_000), (1, 100_000), (3000, 2000), (1537 * 32, 32)] {
        let n = one.tokens((w, h), Detail::High);
        assert!(n > 0 && n <= 1536, "{w}×{h}: {n}");
        assert_eq!(one.tokens((w, h), Detail::Low), n);
    }
    assert_eq!(Rule::Patches { multiplier: 1.62 }.tokens((1024, 1024), Detail::High), 1659, "1658.88");
    assert_eq!(Rule::Patches { multiplier: 2.46 }.tokens((1800, 2400), Detail::High), 3572, "3571.92");
}

#[test]
fn each_model_family_has_its_rule() {
    let tiles = |base, tile| Rule::Tiles { base, tile };
    let patches = |multiplier| Rule::Patches { multiplier };
    let cases = [
        ("gpt-5", tiles(70, 140)),
        ("gpt-5-chat-latest", tiles(70, 140)),
        ("gpt-5.2-codex", tiles(70, 140)),
        ("gpt-5-mini", patches(1.62)),
        ("gpt-5.1-codex-mini", patches(1.62)),
        ("gpt-5-nano-2025-08-07", patches(2.46)),
        ("gpt-4.1", GPT_4O),
        ("GPT-4.1-mini", patches(1.62)),
        ("gpt-4.1-nano", patches(2.46)),
        ("o4-mini", patches(1.72)),
        ("codex-mini-latest", patches(1.72)),
        ("openai/gpt-4o", GPT_4O),
        ("gpt-4o-2024-08-06", GPT_4O),
        ("gpt-4.5-preview", GPT_4O),
        ("gpt-4o-mini", tiles(2833, 5667)),
        ("o1", tiles(75, 150)),
        ("o1-pro", tiles(75, 150)),
        ("o3-2025-04-16", tiles(75, 150)),
        ("computer-use-preview", tiles(65, 129)),
        ("o10", GPT_4O),
        ("some-local-model", GPT_4O),
    ];
    for (model, rule) in cases {
        assert_eq!(rule_for(Some(model)), rule, "{model}");
    }
    assert_eq!(rule_for(None), GPT_4O);
    assert_eq!(rule_for(Some("gpt-5")).tokens((1024, 1024), Detail::High), 70 + 4 * 140);
    assert_eq!(rule_for(Some("gpt-4o-mini")).tokens((1024, 1024), Detail::Low), 2833);
}

#[test]
fn parts_give_the_size_from_data_urls_and_the_detail() {
    let responses = json!({"type": "input_image", "image_url": png_url(1298, 614)});
    assert_eq!(
        OpenAiImage::of_part(&responses),
        OpenAiImage { size: Some((1298, 614)), detail: Detail::High }
    );
    let chat = json!({"type": "image_url", "image_url": {"url": png_url(640, 480), "detail": "low"}});
    assert_eq!(OpenAiImage::of_part(&chat), OpenAiImage { size: Some((640, 480)), detail: Detail::Low });
    let auto = json!({"type": "input_image", "image_url": png_url(8, 8), "detail": "auto"});
    assert_eq!(OpenAiImage::of_part(&auto).detail, Detail::High);
    for unknown in [
        json!({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}),
        json!({"type": "image_url", "image_url": "https://example.com/a.png"}),
        json!({"type": "input_image", "file_id": "file-1"}),
        json!({"type": "input_image", "image_url": "data:image/png;base64,%%%"}),
        json!({"type": "input_image", "image_url": "data:image/png,not-base64"}),
        json!({"type": "input_image", "image_url": 7}),
    ] {
        assert_eq!(OpenAiImage::of_part(&unknown).size, None, "{unknown}");
    }
}

#[test]
fn an_image_of_unknown_size_is_a_1024_square_by_its_models_rule() {
    let unknown = OpenAiImage::default();
    assert_eq!(unknown.tokens(None), 765);
    assert_eq!(unknown.tokens(Some("gpt-5.2-codex")), 630);
    assert_eq!(unknown.tokens(Some("o4-mini")), 1761, "1024 patches × 1.72");
    let low = OpenAiImage { size: None, detail: Detail::Low };
    assert_eq!(low.tokens(Some("o3")), 75);
}

#[test]
fn images_are_sized_for_the_model_of_the_request_that_first_sends_them() {
    let request = |model: Option<&str>| {
        Item::Request(Request { model: model.map(str::to_owned), ..Default::default() })
    };
    let image = || Item::Unseen { kind: UnseenKind::Image, tokens: 0 };
    let mut items =
        vec![image(), request(None), request(Some("gpt-4o")), image(), request(Some("gpt-5")), image()];
    let big = OpenAiImage { size: Some((2048, 4096)), detail: Detail::High };
    let images = [vec![big, OpenAiImage::default()], vec![big], vec![OpenAiImage::default()]];
    size_images(&mut items, &images, Some("o1"));
    let tokens: Vec<Tokens> = items
        .iter()
        .filter_map(|i| match i {
            Item::Unseen { tokens, .. } => Some(*tokens),
            _ => None,
        })
        .collect();
    // gpt-4o: 1105 + 765; gpt-5: 70 + 6 · 140; after the last request, the fallback o1: 75 + 4 · 150.
    assert_eq!(tokens, [1870, 910, 675]);
}
