//! Unit tests of `calibrate` (a sibling file, so `calibrate.rs` stays under 800 lines).
use super::*;

fn close(got: Fit, want: (f64, f64)) {
    let ok = (got.overhead - want.0).abs() < 1e-6 && (got.ratio - want.1).abs() < 1e-9;
    assert!(ok, "{got:?} != {want:?}");
}

/// What a fit is asked, with no ratio per kind.
pub(super) fn ins(exact: bool, default_ratio: f64) -> Inputs {
    Inputs { exact, default_ratio, kinds: false }
}

/// A recorded request with no items, kinds or markers.
pub(super) fn s(replayed: Tokens, recorded: Tokens) -> Sample {
    Sample {
        replayed,
        recorded: Some(recorded),
        after_compaction: false,
        items: 0,
        by_kind: [0; KINDS],
        marks: 0,
        unscaled: 0,
    }
}

/// recorded = 10 000 + 1.3·replayed, exactly.
fn line(xs: &[Tokens]) -> Vec<Sample> {
    xs.iter().map(|&x| s(x, 10_000 + (13 * x) / 10)).collect()
}

#[test]
fn an_exact_line_is_recovered() {
    let v = line(&[100, 1_100, 2_100, 4_100, 8_100]);
    close(fit(&v, &ins(false, 1.0), None).unwrap(), (10_000.0, 1.3));
    // b fixed at 1: a is the median gap, 10 000 + 0.3·2 100.
    close(fit(&v, &ins(true, 1.0), None).unwrap(), (10_630.0, 1.0));
}

#[test]
fn one_outlier_moves_neither_parameter() {
    let mut v = line(&[100, 1_100, 2_100, 3_100, 4_100, 5_100, 6_100]);
    // A cache miss recorded as half the prompt, and a reminder of 9 000 tokens once.
    v[3].recorded = Some(v[3].recorded.unwrap() / 2);
    v[5].recorded = Some(v[5].recorded.unwrap() + 9_000);
    close(fit(&v, &ins(false, 1.0), None).unwrap(), (10_000.0, 1.3));
}

#[test]
fn a_compaction_is_no_delta_and_fits_the_same_overhead() {
    let mut v = line(&[1_000, 5_000, 9_000, 13_000, 200, 4_200, 8_200]);
    v[4].after_compaction = true;
    close(fit(&v, &ins(false, 1.0), None).unwrap(), (10_000.0, 1.3));
    // Were the drop taken as a delta, it would be negative and still skipped (y falls).
    v[4].after_compaction = false;
    close(fit(&v, &ins(false, 1.0), None).unwrap(), (10_000.0, 1.3));
}

#[test]
fn small_appends_and_no_usage_fall_back_to_the_default_ratio() {
    let v = vec![s(100, 500), s(120, 530), Sample { recorded: None, ..s(200, 0) }];
    assert_eq!(fit(&v, &ins(false, 1.25), None).unwrap().ratio, 1.25);
    let none = vec![Sample { recorded: None, ..s(1, 0) }];
    assert_eq!(fit(&none, &ins(false, 1.0), None), None);
}

#[test]
fn leave_one_out_really_leaves_the_request_out() {
    // Two requests at 10 000 + x and a third 5 000 above: with it in, its own gap sits in the
    // median of three; left out, the other two decide and it is predicted 5 000 short.
    let v = vec![s(0, 10_000), s(1_000, 11_000), s(3_000, 19_000)];
    let p = leave_one_out(&v, &ins(true, 1.0));
    assert_eq!(p[2], Some(10_000.0 + 3_000.0));
    // The ratio is also refitted without the request's deltas: only 0→1 remains (b = 1).
    let q = leave_one_out(&v, &ins(false, 1.0));
    assert_eq!(q[2], Some(13_000.0));
    let with_it = fit(&v, &ins(false, 1.0), None).unwrap();
    assert_eq!(with_it.ratio, 4.0, "the delta 1→2 (ratio 4, twice the weight) decides when kept");
}

#[test]
fn a_request_without_usage_is_not_predicted() {
    let v = vec![s(0, 100), Sample { recorded: None, ..s(5, 0) }, s(10, 110)];
    assert_eq!(leave_one_out(&v, &ins(true, 1.0)), vec![Some(100.0), None, Some(110.0)]);
}

#[test]
fn weighted_median_takes_the_heavier_half() {
    assert_eq!(weighted_median(vec![(1.0, 1.0), (2.0, 10.0), (3.0, 1.0)]), Some(2.0));
    assert_eq!(weighted_median(vec![(1.0, 10.0), (5.0, 1.0)]), Some(1.0));
    assert_eq!(weighted_median(Vec::new()), None);
}

/// recorded = 3 000 + replayed + 12·items, exactly: an exact tokenizer with framing.
fn framed_line(points: &[(Tokens, Tokens)]) -> Vec<Sample> {
    let at = |&(x, n): &(Tokens, Tokens)| Sample {
        replayed: x,
        recorded: Some(3_000 + x + 12 * n),
        after_compaction: false,
        items: n,
        by_kind: [0; KINDS],
        marks: 0,
        unscaled: 0,
    };
    points.iter().map(at).collect()
}

#[test]
fn framing_is_fitted_where_the_tokenizer_is_exact_and_nowhere_else() {
    let v = framed_line(&[(100, 1), (900, 3), (1_000, 6), (4_000, 8), (4_100, 11), (7_000, 14)]);
    let f = fit(&v, &ins(true, 1.0), None).unwrap();
    assert!((f.framing - 12.0).abs() < 1e-9 && (f.overhead - 3_000.0).abs() < 1e-9, "{f:?}");
    for (s, at) in v.iter().zip(positions(&v)) {
        assert!((f.predict(s, at) - s.recorded.unwrap() as f64).abs() < 1e-6);
    }
    // Left out, each request is still predicted exactly: the model holds without it.
    for (p, s) in leave_one_out(&v, &ins(true, 1.0)).iter().zip(&v) {
        assert!((p.unwrap() - s.recorded.unwrap() as f64).abs() < 1e-6);
    }
    // With a proxy tokenizer the ratio takes the framing in and none is fitted.
    assert_eq!(fit(&v, &ins(false, 1.0), None).unwrap().framing, 0.0);
}

#[test]
fn framing_is_never_negative() {
    // The provider's appends fall short of the report's count: no negative framing.
    let v = vec![
        Sample {
            replayed: 0,
            recorded: Some(1_000),
            after_compaction: false,
            items: 1,
            by_kind: [0; KINDS],
            marks: 0,
            unscaled: 0,
        },
        Sample {
            replayed: 1_000,
            recorded: Some(1_900),
            after_compaction: false,
            items: 3,
            by_kind: [0; KINDS],
            marks: 0,
            unscaled: 0,
        },
        Sample {
            replayed: 2_000,
            recorded: Some(2_800),
            after_compaction: false,
            items: 5,
            by_kind: [0; KINDS],
            marks: 0,
            unscaled: 0,
        },
    ];
    assert_eq!(fit(&v, &ins(true, 1.0), None).unwrap().framing, 0.0);
}

/// recorded = overhead of the segment + 1.3·replayed + 200·step, a compaction before `cut`.
fn growing(xs: &[Tokens], cut: usize) -> Vec<Sample> {
    let at = |(i, &x): (usize, &Tokens)| {
        let (a, step) = if i < cut { (20_000, i) } else { (12_000, i - cut) };
        Sample {
            replayed: x,
            recorded: Some(a + (13 * x) / 10 + 200 * step as Tokens),
            after_compaction: i == cut,
            items: 0,
            by_kind: [0; KINDS],
            marks: 0,
            unscaled: 0,
        }
    };
    xs.iter().enumerate().map(at).collect()
}

/// Appends of 10 tokens (too small for the ratio) and a few large ones, in each segment.
const APPENDS: [Tokens; 14] =
    [0, 10, 20, 100_020, 100_030, 100_040, 200_040, 200_050, 100, 110, 50_110, 50_120, 100_120, 100_130];

#[test]
fn each_segment_has_its_own_overhead_and_the_growth_is_fitted() {
    let v = growing(&APPENDS, 8);
    let at: Vec<(usize, Tokens)> = positions(&v);
    assert_eq!(at[7], (0, 7));
    assert_eq!(at[8..], [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5)]);
    let f = fit(&v, &ins(false, 1.0), None).unwrap();
    // The large appends carry the growth too: b = (130 000 + 200) / 100 000, 0.002 too many per
    // token, so the gap's slope is 200 − 0.002·Δx per request: −0.02 less over a small append,
    // 200 less over a large one. The trend of each segment's slopes (its median) is below 200:
    // 133.32 before the compaction (4 large appends in 8 requests), 149.99 after (2 in 6).
    assert!((f.ratio - 1.302).abs() < 1e-9, "{f:?}");
    let near = |x: f64, want: f64| (x - want).abs() < 0.01;
    assert!(near(f.segment_growth[0], 133.32) && near(f.segment_growth[1], 149.99), "{f:?}");
    assert!(near(f.growth, 149.985), "the slopes of both segments pooled: {f:?}");
    assert!((f.segments[0] - 20_000.0).abs() < 250.0 && (f.segments[1] - 12_000.0).abs() < 150.0, "{f:?}");
    // Left out, each request is still predicted within 1.5% (the ratio's 0.002 too many per
    // token leaves the first requests of each segment a few tens of tokens off).
    for (p, s) in leave_one_out(&v, &ins(false, 1.0)).iter().zip(&v) {
        let y = s.recorded.unwrap() as f64;
        assert!((p.unwrap() - y).abs() < 0.015 * y, "{p:?} {s:?}");
    }
    // Where the tokenizer is exact, no growth is fitted (the framing per item takes its place).
    assert_eq!(fit(&v, &ins(true, 1.0), None).unwrap().growth, 0.0);
}

#[test]
fn a_segment_with_too_few_requests_takes_the_conversation_overhead() {
    let v = growing(&APPENDS[..10], 8);
    let f = fit(&v, &ins(false, 1.0), None).unwrap();
    assert_eq!(f.segments.len(), 2);
    assert_eq!(f.segments[1], f.overhead, "{f:?}");
    // Its left-out request is predicted from the other segment's overhead: about 8 000 over.
    let p = leave_one_out(&v, &ins(false, 1.0))[9].unwrap();
    assert!((p - v[9].recorded.unwrap() as f64 - 8_000.0).abs() < 500.0, "{p}");
}

/// Items and measures the `apply` tests build on (bytes as tokens).
pub(super) mod build {
    use crate::measure::{Category, MeasureOptions, MeasuredConversation, MeasuredItem};
    use crate::model::{Conversation, Item, Request, Tokens, Usage};

    /// Assistant text of `t` ten times (10 bytes for one letter).
    pub fn text(t: &str) -> Item {
        Item::Assistant { text: t.repeat(10) }
    }

    /// A request whose recorded prompt is `input_tokens`.
    pub fn request(input_tokens: Tokens) -> Item {
        Item::Request(Request {
            usage: Some(Usage { input_tokens, ..Usage::default() }),
            ..Request::default()
        })
    }

    /// `items` measured with the bytes meter.
    pub fn measured(items: Vec<Item>) -> MeasuredConversation {
        let c = Conversation { id: "main".into(), items, recorded_total: None };
        MeasuredConversation::new(&c, &crate::tokens::testing::bytes_meter(), &MeasureOptions::default())
    }

    /// The sizes of `m`'s texts of `category`, in order.
    pub fn of(m: &MeasuredConversation, category: Category) -> Vec<Tokens> {
        let texts = m.items.iter().filter_map(|i| match i {
            MeasuredItem::Text { category: c, measure, .. } if *c == category => Some(measure.tokens),
            _ => None,
        });
        texts.collect()
    }

    /// The context before each request of `m` (texts and calls; a compaction empties it).
    pub fn sent(m: &MeasuredConversation) -> Vec<Tokens> {
        let (mut context, mut sent) = (0, Vec::new());
        for item in &m.items {
            match item {
                MeasuredItem::Text { measure, .. } | MeasuredItem::ToolCall { measure, .. } => {
                    context += measure.tokens
                }
                MeasuredItem::Compaction { .. } => context = 0,
                MeasuredItem::Request { .. } => sent.push(context),
                _ => {}
            }
        }
        sent
    }
}

#[test]
fn apply_adds_each_segments_overhead_and_the_growth_before_each_request() {
    use crate::measure::MeasureOptions;
    use crate::model::{Conversation, Item};
    use build::{of, request, sent, text};
    // Bytes as tokens; the gap less 10 per step is 100 before the compaction and 40 after.
    let items = vec![
        text("a"),
        request(110),
        text("b"),
        request(130),
        text("c"),
        request(150),
        Item::Compaction { summary: None },
        text("d"),
        request(50),
        text("e"),
        request(70),
        text("f"),
        request(90),
    ];
    let c = Conversation { id: "main".into(), items, recorded_total: None };
    let meter = crate::tokens::testing::bytes_meter();
    let mut m = MeasuredConversation::new(&c, &meter, &MeasureOptions::default());
    let k = Calibration {
        method: Method::Ratio,
        overhead: 70,
        ratio: 1.0,
        framing: 0.0,
        growth: 10.0,
        ..Calibration::NONE
    };
    apply(&mut m, &k);
    assert_eq!(of(&m, Category::Unrecorded), [100, 40]);
    // The growth is structure spread over the messages, no message of its own: framing.
    assert_eq!(of(&m, Category::Framing), [10, 10, 10, 10]);
    // The context before each request is then the recorded size.
    assert_eq!(sent(&m), [110, 130, 150, 50, 70, 90]);
    // A calibration not fitted on the log (an override) adds its one overhead everywhere.
    let mut plain = MeasuredConversation::new(&c, &meter, &MeasureOptions::default());
    apply(&mut plain, &Calibration::fixed(70));
    let overheads = plain.items.iter().filter(|i| matches!(i, MeasuredItem::Text { category: Category::Unrecorded, measure, .. } if measure.tokens == 70));
    assert_eq!(overheads.count(), 2);
}

#[test]
fn the_provider_is_the_models_where_the_log_names_one() {
    let known = |m: &str| provider_of_model(m).map(|p| p.0);
    assert_eq!(known("claude-sonnet-4-5-20250929"), Some("Anthropic"));
    assert_eq!(known("us.anthropic.claude-3-5-sonnet-20241022-v2:0"), Some("Anthropic"));
    assert_eq!(known("openai/gpt-4o-mini"), Some("OpenAI"));
    assert_eq!(known("o3-mini"), Some("OpenAI"));
    assert_eq!(known("gpt-5-codex"), Some("OpenAI"));
    assert_eq!(known("google/gemini-3-pro-preview"), Some("Google"));
    assert_eq!(known("ollama/llama3"), None);
    assert_eq!(known("openhands"), None, "an o not followed by a digit is no o-series model");
    // The first model that names a provider decides; else the format's.
    assert_eq!(known_model(["local", "gpt-4.1", "claude-3-opus"].into_iter()), Some("gpt-4.1"));
    assert_eq!(provider("mini-swe-agent", Some("google/gemini-3-pro-preview")).0, "Google");
    assert_eq!(provider("codex", Some("claude-opus-4")), ("Anthropic", false));
    assert_eq!(provider("codex", None), ("OpenAI", true));
    assert_eq!(provider("inspect", None).0, "unknown");
}

#[test]
fn the_tokenizer_is_exact_only_for_an_openai_model_counted_with_its_own_encoding() {
    assert!(exact_for("inspect", Some("openai/gpt-4o-mini"), Tokenizer::O200k));
    assert!(!exact_for("inspect", None, Tokenizer::O200k), "an unknown provider is a proxy");
    assert!(!exact_for("codex", Some("claude-opus-4"), Tokenizer::O200k));
    assert!(exact_for("openai-chat", Some("gpt-4-0613"), Tokenizer::Cl100k));
    assert!(!exact_for("openai-chat", Some("gpt-4-0613"), Tokenizer::O200k), "gpt-4 counts with cl100k");
    assert!(exact_for("openai-chat", Some("gpt-4.1"), Tokenizer::O200k));
    assert!(exact_for("codex", None, Tokenizer::O200k), "no model named: the format's");
    // A conversation whose requests name an OpenAI model is fitted exact whatever its format.
    let v = line(&[100, 1_100, 2_100, 4_100, 8_100]);
    assert_eq!(from_samples(&v, "inspect", Some("gpt-4o"), Tokenizer::O200k).method, Method::Exact);
    assert_eq!(from_samples(&v, "inspect", None, Tokenizer::O200k).method, Method::Ratio);
}

#[test]
fn the_growth_is_the_gaps_trend_not_its_typical_step() {
    // Appends of 10 tokens (too small for the ratio: b is the default, 1). The gap rises by 10 at
    // four requests of five and falls by 100 at the fifth (a reminder that leaves): its trend is
    // (4·10 − 100) / 5 = −12 a request, so no growth, though the median step is +10. A second
    // segment's gap grows by 30 a request, its own growth.
    let mut gap = 5_000;
    let mut v: Vec<Sample> = (0..20)
        .map(|i| {
            gap = if i % 5 == 4 { gap - 100 } else { gap + 10 };
            s(10 * i, gap + 10 * i)
        })
        .collect();
    v.extend((0..8).map(|i| Sample { after_compaction: i == 0, ..s(10 * i, 2_000 + 40 * i) }));
    let f = fit(&v, &ins(false, 1.0), None).unwrap();
    assert_eq!((f.ratio, f.growth), (1.0, 0.0), "{f:?}");
    assert_eq!(f.segment_growth, [0.0, 30.0], "{f:?}");
    // The first segment's last request is over-predicted by its median gap less its last (4 910
    // − 4 760), not by a growth it does not have (with +10 a request: 220).
    let last = f.predict(&v[19], positions(&v)[19]) - v[19].recorded.unwrap() as f64;
    assert_eq!(last, 150.0, "{f:?}");
}

#[test]
fn a_compaction_in_the_replay_restarts_with_the_overhead_the_log_showed_after_its_own() {
    use crate::measure::MeasureOptions;
    use crate::model::{Conversation, Item, Request, Usage};
    use crate::policy::PolicySpec;
    let text = |t: &str| Item::Assistant { text: t.repeat(10) };
    let request = |input_tokens| {
        Item::Request(Request {
            usage: Some(Usage { input_tokens, ..Usage::default() }),
            ..Request::default()
        })
    };
    // Bytes as tokens: an overhead of 100 and no growth before the compaction, 40 after it.
    let mut items = Vec::new();
    for (i, y) in [110, 120, 130, 140].into_iter().enumerate() {
        items.extend([text(&char::from(b'a' + i as u8).to_string()), request(y)]);
    }
    items.push(Item::Compaction { summary: None });
    for y in [50, 60, 70] {
        items.extend([text("z"), request(y)]);
    }
    let c = Conversation { id: "main".into(), items, recorded_total: None };
    let meter = crate::tokens::testing::bytes_meter();
    let mut m = MeasuredConversation::new(&c, &meter, &MeasureOptions::default());
    let k = from_samples(&samples(&m), "native", None, Tokenizer::O200k);
    apply(&mut m, &k);
    assert_eq!(m.restart_overhead, Some(40));
    // A policy's compaction before request 3 (140 tokens) keeps 40 of unrecorded, not 100.
    let spec = "compact:anthropic-sdk:context_token_threshold=135,summary_tokens=5";
    let mut policy = PolicySpec::parse(spec).unwrap().build();
    let run = crate::replay::replay(&m, 16, &mut *policy, &meter);
    let unrecorded: Vec<Tokens> = run.rows.iter().map(|r| r.categories.unrecorded).collect();
    assert_eq!(unrecorded[..4], [100, 100, 100, 40], "{unrecorded:?}");
}

/// Requests appending prose (1.1 provider tokens per report token) and tool output (1.2, within
/// [`kinds::BAND`] of any single ratio between the two) in varied mixes over an overhead of
/// 5 000: `(prose, tool output)` appended before each.
fn two_kinds(appends: &[(Tokens, Tokens)]) -> Vec<Sample> {
    let (mut prose, mut tools) = (0, 0);
    let mut out = Vec::new();
    for &(p, t) in appends {
        (prose, tools) = (prose + p, tools + t);
        let recorded = 5_000 + (11 * prose + 12 * tools) / 10;
        let mut by_kind = [0; KINDS];
        (by_kind[Kind::Prose.index()], by_kind[Kind::ToolOutput.index()]) = (prose, tools);
        out.push(Sample { by_kind, ..s(prose + tools, recorded) });
    }
    out
}

#[test]
fn a_ratio_per_kind_recovers_two_kinds_with_different_ratios() {
    // Appends of thousands of tokens: evidence enough that the credibility weight keeps each
    // kind's own ratio (within 0.1% of it).
    let mixes = [(100, 0), (200, 900), (60, 400), (300, 100), (80, 2_000), (500, 500), (120, 50), (40, 700)]
        .map(|(p, t)| (1_000 * p, 1_000 * t));
    let v = two_kinds(&[&[(0, 0)][..], &mixes, &mixes].concat());
    let inputs = Inputs { exact: false, default_ratio: 1.0, kinds: true };
    let f = fit(&v, &inputs, None).unwrap();
    let r = f.kinds.expect("both kinds have enough appends");
    assert!((r[Kind::Prose.index()] - 1.1).abs() < 1e-3, "{r:?}");
    assert!((r[Kind::ToolOutput.index()] - 1.2).abs() < 1e-3, "{r:?}");
    // Kinds with no appends take the single ratio, a weighted median between the two.
    assert_eq!(r[Kind::Code.index()], f.ratio);
    assert!(f.ratio > 1.1 && f.ratio < 1.2, "{}", f.ratio);
    // The single ratio alone misses requests that the ratios per kind predict (errors relative
    // to the largest prompt, about 14 M).
    let largest = v.iter().filter_map(|s| s.recorded).max().unwrap() as f64;
    let single = fit(&v, &ins(false, 1.0), None).unwrap();
    let err = |f: &Fit| {
        let miss = |(s, p): (&Sample, _)| (f.predict(s, p) - s.recorded.unwrap() as f64).abs();
        v.iter().zip(positions(&v)).map(miss).fold(0.0, f64::max) / largest
    };
    assert!(err(&f) < 1e-4 && err(&single) > 1e-3, "{} {}", err(&f), err(&single));
    // Held out, each request is still predicted as closely.
    for (p, s) in leave_one_out(&v, &inputs).iter().zip(&v) {
        let y = s.recorded.unwrap() as f64;
        assert!((p.unwrap() - y).abs() < 1e-4 * largest, "{p:?} {y}");
    }
}

#[test]
fn a_kind_with_too_few_appends_takes_the_single_ratio() {
    // Tool output only in one append: too few to fit (kinds::MIN_PAIRS); prose alone is fitted,
    // on evidence enough to keep its own ratio.
    let mut mixes: Vec<(Tokens, Tokens)> =
        [100, 200, 60, 300, 80, 500].iter().map(|&p| (1_000 * p, 0)).collect();
    mixes.push((10, 3_000));
    let v = two_kinds(&[&[(0, 0)][..], &mixes].concat());
    let f = fit(&v, &Inputs { exact: false, default_ratio: 1.0, kinds: true }, None).unwrap();
    let r = f.kinds.expect("prose is fitted");
    assert_eq!(r[Kind::ToolOutput.index()], f.ratio);
    assert!((r[Kind::Prose.index()] - 1.1).abs() < 1e-3, "{r:?}");
    // With no kind that qualifies, no ratio per kind at all.
    let few = two_kinds(&[(0, 0), (100, 0), (100, 100)]);
    assert_eq!(
        fit(&few, &Inputs { exact: false, default_ratio: 1.0, kinds: true }, None).unwrap().kinds,
        None
    );
}

#[test]
fn code_is_told_from_other_outputs_by_its_line_shape() {
    let rust = "     1→fn main() {\n     2→    let x = 1;\n     3→    println!(\"{x}\");\n     4→}\n";
    assert!(kinds::looks_like_code(rust));
    assert!(kinds::looks_like_code("import os\n\ndef f(x):\n    return x\n"));
    assert!(!kinds::looks_like_code("total 8\ndrwxr-xr-x 2 u u 4096 a\n-rw-r--r-- 1 u u 10 b\n"));
    assert!(!kinds::looks_like_code("The build passed and all tests are green.\nNothing else to report.\n"));
    assert!(!kinds::looks_like_code(""));
}

#[test]
fn provider_counts_openai_models_with_their_own_tokenizer_and_others_with_o200k() {
    let p = Tokenizer::Provider;
    assert_eq!(counted_with("openai-chat", Some("gpt-4-0613"), p), Tokenizer::Cl100k);
    assert_eq!(counted_with("openai-chat", Some("gpt-3.5-turbo"), p), Tokenizer::Cl100k);
    assert_eq!(counted_with("inspect", Some("openai/gpt-4o-mini"), p), Tokenizer::O200k);
    assert_eq!(counted_with("codex", None, p), Tokenizer::O200k);
    assert_eq!(counted_with("claude-code", Some("claude-opus-4"), p), Tokenizer::O200k);
    assert_eq!(counted_with("openai-chat", Some("gpt-4-0613"), Tokenizer::O200k), Tokenizer::O200k);
    assert!(exact_for("openai-chat", Some("gpt-4-0613"), p));
    assert!(exact_for("codex", None, p));
    assert!(!exact_for("claude-code", Some("claude-opus-4"), p));
    let kinds = |f, m| fit_inputs(f, m, p).kinds;
    assert!(kinds("claude-code", Some("claude-opus-4")) && !kinds("codex", Some("gpt-5")));
    assert!(!fit_inputs("claude-code", None, Tokenizer::O200k).kinds, "o200k keeps one ratio");
}

#[test]
fn with_no_usage_and_no_agent_default_provider_takes_the_providers_default_ratio() {
    let none = [Sample { recorded: None, ..s(1_000, 0) }];
    let of = |model, tokenizer| from_samples(&none, "cassette", Some(model), tokenizer);
    let claude = of("claude-sonnet-4", Tokenizer::Provider);
    assert_eq!((claude.method, claude.overhead, claude.ratio), (Method::Default, 0, 1.25));
    assert_eq!(of("gemini-2.5-pro", Tokenizer::Provider).ratio, 1.07);
    // An OpenAI model is counted exactly; an unknown provider and o200k are left as measured.
    assert_eq!(of("gpt-4o", Tokenizer::Provider).method, Method::None);
    assert_eq!(of("llama-3", Tokenizer::Provider).method, Method::None);
    assert_eq!(of("claude-sonnet-4", Tokenizer::O200k), Calibration::NONE);
    // An agent's own default comes first.
    let code = from_samples(&none, "claude-code", Some("claude-sonnet-4"), Tokenizer::Provider);
    assert_eq!((code.method, code.overhead, code.ratio), (Method::Default, 17_200, 1.26));
}

/// Appends of prose at 1.2 provider tokens per report token and tool output at `tool_ratio`,
/// exactly: `(prose, tool output)` report tokens each.
fn exact_appends(pairs: &[(f64, f64)], tool_ratio: f64) -> Vec<kinds::Append> {
    let append = |&(p, t): &(f64, f64)| {
        let mut x = [0.0; KINDS];
        (x[Kind::Prose.index()], x[Kind::ToolOutput.index()]) = (p, t);
        (x, 1.2 * p + tool_ratio * t)
    };
    pairs.iter().map(append).collect()
}

#[test]
fn a_kind_fitted_on_few_tokens_is_pulled_toward_the_single_ratio_by_its_evidence() {
    let (single, tool) = (1.2, Kind::ToolOutput.index());
    // The credibility weight of `n` tokens of evidence, and the ratio it gives a kind whose
    // appends say `raw`.
    let credible = |n: f64, raw: f64| single + n / (n + kinds::CREDIBILITY) * (raw - single);
    // Six appends of 150 tokens of tool output at 1.5: 900 tokens say little.
    let varied = |t: f64| [500.0, 1_000.0, 2_000.0, 800.0, 1_500.0, 300.0].map(|p| (p, t));
    let few = exact_appends(&varied(150.0), 1.5);
    let r = kinds::fit(&few, single).expect("tool output qualifies");
    assert!((r[tool] - credible(6.0 * 150.0, 1.5)).abs() < 1e-6, "{r:?}");
    assert!(r[tool] < 1.3, "{r:?}: pulled most of the way to {single}");
    // Prose says what the single ratio says: unmoved.
    assert!((r[Kind::Prose.index()] - single).abs() < 1e-6, "{r:?}");
    // 100 times the evidence keeps (nearly) its own ratio.
    let many = exact_appends(&varied(15_000.0), 1.5);
    let r = kinds::fit(&many, single).expect("tool output qualifies");
    assert!((r[tool] - credible(6.0 * 15_000.0, 1.5)).abs() < 1e-6 && r[tool] > 1.48, "{r:?}");
}

#[test]
fn a_kind_ratio_is_clamped_to_the_band_the_corpus_shows_around_the_single_ratio() {
    let single = 1.2;
    // Ample evidence of tool output at 2.2 (1.83 times the single ratio, inside kinds::BOUNDS,
    // where a kind is dropped) is held at the band's top.
    let varied = |t: f64| [500.0, 1_000.0, 2_000.0, 800.0, 1_500.0, 300.0].map(|p| (p, t));
    let r = kinds::fit(&exact_appends(&varied(15_000.0), 2.2), single).expect("fitted");
    let top = kinds::BAND.1 * single;
    assert!((r[Kind::ToolOutput.index()] - top).abs() < 1e-9, "{r:?} against {top}");
    let r = kinds::fit(&exact_appends(&varied(15_000.0), 0.9), single).expect("fitted");
    let bottom = kinds::BAND.0 * single;
    assert!((r[Kind::ToolOutput.index()] - bottom).abs() < 1e-9, "{r:?} against {bottom}");
}

/// `text` appends of 100 report tokens, the second with an image of 1 600 provider tokens, each
/// before a request recording 1 000 + 1.3 · text + the image.
fn with_image() -> crate::measure::MeasuredConversation {
    use crate::model::{Item, UnseenKind};
    let image = Item::Unseen { kind: UnseenKind::Image, tokens: 1_600 };
    let mut items = Vec::new();
    for k in 1..=6 {
        items.push(build::text("0123456789"));
        if k == 2 {
            items.push(image.clone());
        }
        items.push(build::request(1_000 + 130 * k + if k >= 2 { 1_600 } else { 0 }));
    }
    build::measured(items)
}

#[test]
fn under_provider_an_image_is_provider_tokens_and_neither_scaled_nor_fitted_as_text() {
    use crate::model::Encoding;
    let m = with_image();
    let samples = samples_by_kind(&m);
    assert_eq!(
        samples.iter().map(|s| s.unscaled).collect::<Vec<_>>(),
        [0, 1_600, 1_600, 1_600, 1_600, 1_600]
    );
    assert_eq!(samples[5].replayed, 600, "the image is not a report-token count");
    // The image's step is not read as text: the ratio is the text's, and every request is
    // predicted exactly, held out too.
    let inputs = Inputs { exact: false, default_ratio: 1.0, kinds: true };
    let f = fit(&samples, &inputs, None).unwrap();
    assert!((f.ratio - 1.3).abs() < 1e-9, "{f:?}");
    for (p, s) in leave_one_out(&samples, &inputs).iter().zip(&samples) {
        assert!((p.unwrap() - s.recorded.unwrap() as f64).abs() < 1e-6, "{p:?} {s:?}");
    }
    // Applied under provider the image keeps its 1 600 tokens; the texts are scaled.
    let provider = Calibration {
        method: Method::Ratio,
        ratio: 1.3,
        tokenizer: Some(Encoding::O200k),
        ..Calibration::NONE
    };
    let mut applied = with_image();
    apply(&mut applied, &provider);
    assert_eq!(build::of(&applied, Category::Images), [1_600]);
    assert_eq!(build::of(&applied, Category::Assistant), [130; 6]);
    // `--tokenizer o200k` is as it was: everything scaled by the one ratio.
    let mut o200k = with_image();
    apply(&mut o200k, &Calibration { tokenizer: None, ..provider });
    assert_eq!(build::of(&o200k, Category::Images), [2_080]);
}
