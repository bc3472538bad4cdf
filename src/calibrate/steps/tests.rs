//! Unit tests of `calibrate::steps`.
use super::super::{Calibration, Inputs, Method, Sample, apply as calibrate_apply, fit, leave_one_out};
use super::*;
use crate::model::{Item, UnseenKind};

fn s(replayed: Tokens, recorded: Tokens, marks: u32) -> Sample {
    Sample { marks, ..super::super::tests::s(replayed, recorded) }
}

fn ratio(default_ratio: f64) -> Inputs {
    super::super::tests::ins(false, default_ratio)
}

/// The worst relative error of the leave-one-out predictions of `v`.
fn worst(v: &[Sample]) -> f64 {
    let p = leave_one_out(v, &ratio(1.0));
    v.iter()
        .zip(p)
        .filter_map(|(s, p)| Some((p? - s.recorded? as f64).abs() / s.recorded? as f64))
        .fold(0.0, f64::max)
}

#[test]
fn a_marker_takes_the_step_the_replay_does_not_explain_and_stays() {
    // recorded = 1 000 + 2·replayed, and 5 000 more from the marker (between requests 2 and 3) on.
    let xs = [100, 300, 600, 900, 1_300, 1_600];
    let v: Vec<Sample> = xs
        .iter()
        .enumerate()
        .map(|(k, &x)| {
            let marked = k >= 3;
            s(x, 1_000 + 2 * x + 5_000 * Tokens::from(marked), u32::from(marked))
        })
        .collect();
    let f = fit(&v, &ratio(1.0), None).unwrap();
    // The append across the marker is no ratio pair: b stays 2, the overhead 1 000.
    assert_eq!((f.ratio, f.overhead), (2.0, 1_000.0));
    assert_eq!(f.steps, vec![vec![5_000.0]]);
    assert!(worst(&v) < 1e-9, "{}", worst(&v));
    // Without the marker the overhead is a median across the step: 5 000 off on one side.
    let unmarked: Vec<Sample> = v.iter().map(|s| Sample { marks: 0, ..*s }).collect();
    assert!(worst(&unmarked) > 0.5, "{}", worst(&unmarked));
}

#[test]
fn the_request_after_a_marker_is_predicted_without_its_own_size() {
    // As above, but request 3 is recorded 700 above the line: its own step would size the marker
    // 5 700; left out, the marker is sized from requests 2 and 4 (5 000), so it is 700 off.
    let xs = [100, 300, 600, 900, 1_300, 1_600];
    let mut v: Vec<Sample> = xs
        .iter()
        .enumerate()
        .map(|(k, &x)| s(x, 1_000 + 2 * x + 5_000 * Tokens::from(k >= 3), u32::from(k >= 3)))
        .collect();
    v[3].recorded = Some(v[3].recorded.unwrap() + 700);
    let p = leave_one_out(&v, &ratio(1.0))[3].unwrap();
    assert!((p - (1_000.0 + 1_800.0 + 5_000.0)).abs() < 1e-6, "{p}");
    // Fitted with it, the marker is its step: 5 700.
    assert_eq!(fit(&v, &ratio(1.0), None).unwrap().steps, vec![vec![5_700.0]]);
}

#[test]
fn a_marker_with_no_recorded_request_after_it_takes_the_median_of_the_others_or_nothing() {
    let v = vec![s(100, 1_200, 0), s(300, 1_600, 0), s(600, 2_200, 0), s(900, 2_800, 1)];
    // Predicting request 3 without it: no step sizes its marker and no other marker is sized.
    let p = leave_one_out(&v, &ratio(1.0))[3].unwrap();
    assert!((p - 2_800.0).abs() < 1e-6, "{p}");
    let sizes = sizes(&v, (2.0, None, 0.0), Some(3), &[vec![300]]);
    assert_eq!(sizes, vec![vec![300.0]], "its own size where it has one");
    let v2 = vec![s(100, 1_200, 0), s(300, 4_600, 1), s(600, 5_200, 1), s(900, 5_800, 2)];
    assert_eq!(super::sizes(&v2, (2.0, None, 0.0), Some(3), &[]), vec![vec![3_000.0, 3_000.0]]);
}

#[test]
fn the_measured_plan_mode_step_of_a_real_session() {
    // `marot/spotter` (MIT) `test/fixtures/transcripts/8463c716-…jsonl` @8cc42b0bd39d, Claude Code
    // 2.1.39, requests 0–23: (replayed o200k, recorded) from `ctxbudget reconcile FILE --format
    // json --per-request` (`requests_detail[].replayed`, `.recorded`). `EnterPlanMode` is called
    // at request 9; from request 10 on the recorded prompt is about 23 k above the replay's line.
    let measured: [(Tokens, Tokens); 24] = [
        (36, 25897),
        (1012, 27246),
        (1812, 28298),
        (5903, 32915),
        (6029, 33327),
        (22317, 51884),
        (29886, 60540),
        (30221, 61411),
        (30542, 62122),
        (31748, 63568),
        (37364, 93277),
        (38553, 94674),
        (40523, 95983),
        (42460, 98237),
        (52282, 109109),
        (53103, 110182),
        (56053, 113372),
        (59308, 117096),
        (59609, 117755),
        (59728, 118093),
        (60212, 119081),
        (60320, 119350),
        (60551, 119699),
        (63147, 122750),
    ];
    let v: Vec<Sample> =
        measured.iter().enumerate().map(|(k, &(x, y))| s(x, y, u32::from(k >= 10))).collect();
    let f = fit(&v, &ratio(1.0), None).unwrap();
    let step = f.steps[0][0];
    assert!((20_000.0..26_000.0).contains(&step), "{step}");
    assert!(worst(&v) < 0.05, "{}", worst(&v));
    let unmarked: Vec<Sample> = v.iter().map(|s| Sample { marks: 0, ..*s }).collect();
    assert!(worst(&unmarked) > 0.5, "{}", worst(&unmarked));
}

#[test]
fn apply_sizes_server_content_in_place_and_adds_an_injection_before_the_next_request() {
    use super::super::tests::build::{measured, of, request, sent, text};
    let call =
        |name: &str| Item::ToolCall { call_id: name.into(), name: name.into(), arguments: String::new() };
    // Bytes as tokens, ratio 1, overhead 100: a search adds 500 at request 1, plan mode 900 at 3.
    let recorded =
        [110, 120 + 10 + 500, 130 + 10 + 500, 140 + 10 + 13 + 500 + 900, 150 + 10 + 13 + 500 + 900];
    let items = vec![
        text("a"),
        request(recorded[0]),
        text("b"),
        call("web_search"),
        Item::Unseen { kind: UnseenKind::ServerSide, tokens: 0 },
        request(recorded[1]),
        text("c"),
        request(recorded[2]),
        call(PLAN_MODE_TOOL),
        text("d"),
        request(recorded[3]),
        text("e"),
        request(recorded[4]),
    ];
    let mut m = measured(items);
    let k = Calibration { method: Method::Ratio, overhead: 100, ratio: 1.0, ..Calibration::NONE };
    calibrate_apply(&mut m, &k);
    assert_eq!(of(&m, Category::ServerSide), [500]);
    assert_eq!(of(&m, Category::Unrecorded), [100, 900], "the injection before request 3");
    assert_eq!(sent(&m), recorded);
}

#[test]
fn running_sums_are_what_the_markers_in_context_add_up_to() {
    let sizes = vec![vec![300.0, 50.0], vec![], vec![7.0]];
    let sums = running_sums(&sizes);
    assert_eq!(sums, vec![vec![0.0, 300.0, 350.0], vec![0.0], vec![0.0, 7.0]]);
    for marks in 0..3 {
        let at = s(0, 0, marks);
        assert_eq!(sums[0][marks as usize], in_context(&sizes, 0, &at));
    }
}

#[test]
fn content_sent_with_one_request_only_is_not_kept_after_it() {
    // recorded = 1 000 + 2·replayed, and 5 000 more at request 3 only (a search whose results
    // leave at the next call): the marker is what stays, 0, so requests 4 and 5 are on the line.
    let xs = [100, 300, 600, 900, 1_300, 1_600, 1_800];
    let v: Vec<Sample> = xs
        .iter()
        .enumerate()
        .map(|(k, &x)| s(x, 1_000 + 2 * x + 5_000 * Tokens::from(k == 3), u32::from(k >= 3)))
        .collect();
    let f = fit(&v, &ratio(1.0), None).unwrap();
    assert_eq!(f.steps, vec![vec![0.0]]);
    let p = leave_one_out(&v, &ratio(1.0));
    for k in [0, 1, 2, 4, 5, 6] {
        let (p, y) = (p[k].unwrap(), v[k].recorded.unwrap() as f64);
        assert!((p - y).abs() < 1e-6, "request {k}: {p} against {y}");
    }
    // The request that sent it is under by what it sent.
    assert!((v[3].recorded.unwrap() as f64 - p[3].unwrap() - 5_000.0).abs() < 1e-6);
    // A fall of less than half the step is noise: a step of 5 000 that falls by 400 stays 5 000.
    let mut kept = v.clone();
    for (k, s) in kept.iter_mut().enumerate().skip(3) {
        s.recorded = Some(1_000 + 2 * xs[k] + 5_000 - 400 * Tokens::from(k > 3));
    }
    assert_eq!(fit(&kept, &ratio(1.0), None).unwrap().steps, vec![vec![5_000.0]]);
}
