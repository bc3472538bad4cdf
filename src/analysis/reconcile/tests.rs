//! Unit tests of `analysis::reconcile` (a sibling file, so `reconcile.rs` stays under 800 lines).
use super::*;
use crate::measure::MeasureOptions;
use crate::model::{Output, RecordedTotal, Request, ToolResult, Usage};
use crate::policy::PolicySpec;
use crate::tokens::testing::bytes_meter as meter;

fn request(recorded: Option<Tokens>) -> Item {
    Item::Request(Request {
        usage: recorded.map(|input_tokens| Usage { input_tokens, ..Default::default() }),
        ..Default::default()
    })
}

fn result(out: &str, images: u32) -> Item {
    Item::ToolResult(ToolResult {
        call_id: "c".into(),
        name: None,
        output: Output::Raw { output: out.into() },
        is_error: false,
        images,
    })
}

fn conversation(items: Vec<Item>) -> Conversation {
    Conversation { id: "main".into(), items, recorded_total: None }
}

fn contexts(c: &Conversation) -> Vec<RequestFit> {
    contexts_in("t", c)
}

fn samples_of(c: &Conversation) -> Vec<Sample> {
    calibrate::samples(&MeasuredConversation::new(c, &meter(), &MeasureOptions::default()))
}

fn contexts_in(trace: &str, c: &Conversation) -> Vec<RequestFit> {
    let meter = meter();
    let m = MeasuredConversation::new(c, &meter, &MeasureOptions::default());
    sent_contexts(trace, c, &m)
}

#[test]
fn outputs_count_as_recorded_whatever_their_size() {
    let c = conversation(vec![
        Item::System { text: "sys".into() },
        request(None),
        result(&"x".repeat(1000), 2),
        request(None),
        Item::Compaction { summary: Some("sum".into()) },
        request(None),
    ]);
    let r = contexts(&c);
    let replayed: Vec<Tokens> = r.iter().map(|r| r.replayed).collect();
    assert_eq!(replayed, [3, 1003, 3]);
    assert_eq!(r[1].parts.tool_outputs, 1000);
    assert_eq!(r[1].parts.images, 2);
    assert_eq!(r[2].parts.images, 0);
}

#[test]
fn the_replayed_context_is_what_the_engine_gives_for_policy_none_when_nothing_is_split() {
    let c = conversation(vec![
        Item::User { text: "hello".into(), meta: false, images: 0 },
        request(Some(10)),
        Item::ToolCall { call_id: "c".into(), name: "bash".into(), arguments: "{}".into() },
        result("short", 0),
        request(Some(20)),
        result("another output", 0),
        Item::Unseen { kind: crate::model::UnseenKind::Reasoning, tokens: 40 },
        Item::Unseen { kind: crate::model::UnseenKind::Image, tokens: 7 },
        Item::Assistant { text: "ok".into() },
        request(Some(30)),
        Item::User { text: "a new turn drops the hidden reasoning".into(), meta: false, images: 0 },
        request(Some(40)),
    ]);
    let meter = meter();
    let m = MeasuredConversation::new(&c, &meter, &MeasureOptions::default());
    let mut none = PolicySpec::parse("none").unwrap().build();
    // 1000 bytes: longer than every output here, so the engine splits nothing.
    let run = crate::replay::replay(&m, 1000, &mut *none, &meter);
    let engine: Vec<Tokens> = run.rows.iter().map(|r| r.context_tokens).collect();
    let fits = sent_contexts("t", &c, &m);
    let ours: Vec<Tokens> = fits.iter().map(|r| r.replayed).collect();
    assert_eq!(ours, engine);
    // The calibration fits the same context (it once kept earlier turns' hidden reasoning).
    let samples: Vec<Tokens> = crate::calibrate::samples(&m).iter().map(|s| s.replayed).collect();
    assert_eq!(samples, engine);
    let hidden: Vec<Tokens> = fits.iter().map(|r| r.parts.hidden_reasoning).collect();
    assert_eq!(hidden, [0, 0, 40, 0]);
    assert_eq!(fits[3].parts.image_tokens, 7, "images stay");
}

#[test]
fn an_exact_line_is_recovered_with_zero_error() {
    // recorded = 500 + 2·replayed.
    let points = [(10.0, 520.0), (20.0, 540.0), (40.0, 580.0)];
    let l = fit(&points).unwrap();
    assert!((l.a - 500.0).abs() < 1e-9 && (l.b - 2.0).abs() < 1e-9, "{l:?}");
    assert_eq!(l.r2, Some(1.0));
}

#[test]
fn least_squares_matches_a_hand_computation() {
    // x = 0, 1, 2; y = 1, 3, 2: mean x 1, mean y 2, sxy = 1, sxx = 2 → b = 0.5, a = 1.5.
    // Residuals -0.5, 1, -0.5: ss_res 1.5, ss_tot 2 → r² = 0.25.
    let l = fit(&[(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)]).unwrap();
    assert_eq!((l.a, l.b, l.r2), (1.5, 0.5, Some(0.25)));
}

#[test]
fn one_point_fixes_the_slope_at_one() {
    let l = fit(&[(100.0, 130.0)]).unwrap();
    assert_eq!((l.a, l.b, l.r2), (30.0, 1.0, None));
    assert!(fit(&[]).is_none());
}

#[test]
fn nearest_rank_percentiles() {
    let v: Vec<f64> = (1..=10).map(f64::from).collect();
    assert_eq!(nearest_rank(&v, 0.5), 5.0);
    assert_eq!(nearest_rank(&v, 0.9), 9.0);
    assert_eq!(nearest_rank(&v, 1.0), 10.0);
    assert_eq!(nearest_rank(&[7.0], 0.9), 7.0);
}

#[test]
fn a_conversation_is_fitted_and_its_worst_requests_listed() {
    let c = conversation(vec![
        Item::User { text: "0123456789".into(), meta: false, images: 0 },
        request(Some(110)),
        result(&"y".repeat(10), 0),
        request(Some(120)),
        result(&"z".repeat(20), 0),
        request(Some(150)),
    ]);
    let (fit, rows) = reconcile("t", "codex", &c, contexts(&c), &samples_of(&c), Tokenizer::O200k);
    // Points (10,110), (20,120), (40,150): means 70/3, 380/3; sxx = 1400/3, sxy = 1900/3 → b = 19/14.
    assert_eq!(fit.basis, Basis::PerRequest);
    assert!((fit.b.unwrap() - 19.0 / 14.0).abs() < 1e-9, "{fit:?}");
    assert!(fit.tokenizer_exact);
    assert_eq!((fit.replayed_total, fit.recorded_total), (70, Some(380)));
    let e = fit.error.unwrap();
    let mut errs: Vec<f64> = rows.iter().map(|r| r.error.unwrap().abs()).collect();
    errs.sort_by(f64::total_cmp);
    assert_eq!((e.median_abs, e.max_abs), (errs[1], errs[2]));
    let w = worst(&rows, 1);
    assert_eq!(w[0].error.unwrap().abs(), errs[2]);
}

#[test]
fn errors_are_pooled_per_format() {
    let c = conversation(vec![
        Item::User { text: "0123456789".into(), meta: false, images: 0 },
        request(Some(110)),
        result(&"y".repeat(10), 0),
        request(Some(120)),
        result(&"z".repeat(20), 0),
        request(Some(150)),
    ]);
    let (f1, r1) = reconcile("a", "codex", &c, contexts_in("a", &c), &samples_of(&c), Tokenizer::O200k);
    let (f2, r2) = reconcile("b", "codex", &c, contexts_in("b", &c), &samples_of(&c), Tokenizer::O200k);
    let (f3, r3) =
        reconcile("c", "claude-code", &conversation(vec![request(None)]), Vec::new(), &[], Tokenizer::O200k);
    let rows: Vec<RequestFit> = [r1, r2, r3].concat();
    let s = by_format(&[f1.clone(), f2, f3], &rows);
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].conversations, s[0].fitted_conversations, s[0].recorded_requests), (2, 2, 6));
    // Two identical conversations: the pooled quantiles are the single conversation's.
    assert_eq!(s[0].error, f1.error);
    assert_eq!((s[1].format.as_str(), s[1].recorded_requests, s[1].error), ("claude-code", 0, None));
}

#[test]
fn the_calibrated_error_predicts_each_request_without_it() {
    // Three requests at 100 + x exactly (codex, bytes as tokens: b = 1), one 30 above.
    let c = conversation(vec![
        Item::User { text: "0123456789".into(), meta: false, images: 0 },
        request(Some(110)),
        result(&"y".repeat(10), 0),
        request(Some(120)),
        result(&"z".repeat(20), 0),
        request(Some(140)),
        Item::Assistant { text: "ok".into() },
        request(Some(172)),
    ]);
    let (fit, rows) = reconcile("t", "codex", &c, contexts(&c), &samples_of(&c), Tokenizer::O200k);
    let predicted: Vec<Option<f64>> = rows.iter().map(|r| r.calibrated).collect();
    // Left out, the last request is predicted from the gaps 100, 100, 100: 100 + 42; the
    // others from two gaps of 100 and the last one's 130 (median 100).
    assert_eq!(predicted, [Some(110.0), Some(120.0), Some(140.0), Some(142.0)]);
    let k = &fit.calibrated;
    assert_eq!(
        (k.requests, k.median_rel, k.max_rel, k.reason.as_deref()),
        (4, Some(0.0), Some(30.0 / 172.0), None)
    );
    assert_eq!(k.total_ratio, Some(542.0 / 512.0));
    assert_eq!(fit.calibration.method, calibrate::Method::Exact);
    assert_eq!(fit.calibration.overhead, 100);
}

#[test]
fn fewer_than_three_recorded_requests_give_no_calibrated_error_and_say_why() {
    let c = conversation(vec![request(Some(10)), request(Some(12)), request(None)]);
    let (fit, rows) = reconcile("t", "codex", &c, contexts(&c), &samples_of(&c), Tokenizer::O200k);
    let k = &fit.calibrated;
    assert_eq!((k.median_rel, k.p90_rel, k.total_ratio), (None, None, None));
    assert_eq!(k.reason.as_deref(), Some("2 recorded request(s), fewer than 3"));
    assert!(rows.iter().all(|r| r.calibrated.is_none()));
    let pooled = by_format(&[fit], &rows);
    assert!(pooled[0].calibrated.reason.is_some() && pooled[0].calibrated.median_rel.is_none());
}

#[test]
fn totals_are_compared_when_only_totals_are_recorded() {
    let mut c = conversation(vec![Item::User { text: "abcd".into(), meta: false, images: 0 }, request(None)]);
    c.recorded_total = Some(RecordedTotal { input_tokens: 40, calls: 1 });
    let (fit, _) = reconcile("t", "claude-stream", &c, contexts(&c), &samples_of(&c), Tokenizer::O200k);
    assert_eq!(fit.basis, Basis::Totals);
    assert_eq!((fit.replayed_total, fit.recorded_total, fit.total_ratio), (4, Some(40), Some(10.0)));
    assert!(!fit.tokenizer_exact);
    assert_eq!(fit.provider, "Anthropic");
}

#[test]
fn proxy_tokenizers_are_said_plainly() {
    let ratio = Method::Ratio;
    assert!(tokenizer_note("Anthropic", Tokenizer::O200k, ratio).unwrap().contains("not public"));
    assert!(tokenizer_note("Google", Tokenizer::O200k, ratio).unwrap().contains("not public"));
    assert_eq!(tokenizer_note("OpenAI", Tokenizer::O200k, ratio), None);
}

#[test]
fn provider_notes_say_how_each_conversation_was_counted() {
    let note = |provider, method| tokenizer_note(provider, Tokenizer::Provider, method);
    assert_eq!(note("OpenAI", Method::Exact), None, "exact: nothing to warn of");
    let fitted = note("Anthropic", Method::Kinds).unwrap();
    assert!(
        fitted.starts_with("Anthropic: the tokenizer is not public;") && fitted.contains("fitted"),
        "{fitted}"
    );
    assert_eq!(note("Anthropic", Method::Ratio), Some(fitted), "one note for both fitted methods");
    let default = note("Google", Method::Default).unwrap();
    assert!(default.contains("default ratio") && default.contains("an estimate"), "{default}");
    let none = note("unknown", Method::None).unwrap();
    assert!(none.starts_with("provider not known:") && none.contains("o200k as is"), "{none}");
}
