//! Unit tests of the threshold sweep and its recommendations.

use super::*;
use crate::analysis::testing::{self, meter, request, result, user};
use std::sync::atomic::Ordering;

/// "hi" (2 tokens); a 100-byte `read` result (automatic summary 93 bytes); request; a 40-byte
/// `ls` result (summary "1 lines | " + 40 + "…" = 53); request; two more requests.
fn measured(meter: &Meter) -> MeasuredConversation {
    let items = vec![
        user("hi"),
        result("a", "read", "x".repeat(100)),
        request(None),
        result("b", "ls", "y".repeat(40)),
        request(None),
        request(None),
        request(None),
    ];
    testing::measured(items, meter)
}

fn settings(thresholds: Vec<usize>, spec: &str) -> SweepSettings {
    SweepSettings {
        thresholds,
        policy: PolicySpec::parse(spec).unwrap(),
        tolerance: DEFAULT_TOLERANCE,
        top_tools: 5,
        cache: Default::default(),
    }
}

#[test]
fn threshold_lists_take_numbers_and_ranges() {
    assert_eq!(parse_thresholds("256, 0,64").unwrap(), [0, 64, 256]);
    assert_eq!(parse_thresholds("64..1024:x2").unwrap(), [64, 128, 256, 512, 1024]);
    assert_eq!(parse_thresholds("0..300:+100,1000").unwrap(), [0, 100, 200, 300, 1000]);
    assert_eq!(parse_thresholds(DEFAULT_THRESHOLDS).unwrap().len(), 12);
    for bad in ["", "a", "64..16", "64..128", "0..64:x2", "1..9:x1", "1..9:+0", "1..9:y2", "0..100000:+1"] {
        assert!(parse_thresholds(bad).is_err(), "{bad}");
    }
}

#[test]
fn sweep_numbers_match_a_hand_count() {
    let (meter, _) = meter();
    let m = measured(&meter);
    let s = sweep(&[&m], &settings(vec![200, 50, 16], "keep-turns:n=2"), &meter);
    // Baseline (none, nothing split): 102, 142, 142, 142.
    assert_eq!(s.baseline_total_tokens, 528);
    assert_eq!(s.baseline_peak_tokens, 142);
    let at: Vec<usize> = s.rows.iter().map(|r| r.threshold).collect();
    assert_eq!(at, [16, 50, 200]);
    // Threshold 16: both split. Contexts: 2+193=195; +53+40 → 288; request 2 prunes a (−100)
    // → 188; request 3 prunes b (−40) → 148. Total 819.
    let r = &s.rows[0];
    assert_eq!(
        (r.split_results, r.total_input_tokens, r.peak_context_tokens, r.prune_events),
        (2, 819, 288, 2)
    );
    // Summaries resident: 93, 93+53, 93+53, 93+53 = 531; overhead while content present:
    // 93, 93+53, 53 (a pruned before request 2), 0 = 292; contents: 100, 140, 40, 0 = 280.
    assert_eq!((r.summary_tokens, r.overhead_tokens, r.content_tokens), (531, 292, 280));
    assert!((r.savings - (1.0 - 819.0 / 528.0)).abs() < 1e-12);
    // Threshold 50: only a splits. 195, 235, 135, 135 = 700.
    let r = &s.rows[1];
    assert_eq!((r.split_results, r.total_input_tokens), (1, 700));
    assert_eq!((r.summary_tokens, r.overhead_tokens, r.content_tokens), (4 * 93, 2 * 93, 200));
    assert!((r.split_share - 0.5).abs() < 1e-12);
    // Threshold 200: nothing splits: the baseline itself.
    assert_eq!((s.rows[2].split_results, s.rows[2].total_input_tokens, s.rows[2].savings), (0, 528, 0.0));
    // Best is 200 (0%, the others cost more than they save), so it is recommended.
    let rec = s.recommendation.as_ref().unwrap();
    assert_eq!(rec.threshold, 200);
    assert!(rec.reason.contains("no threshold saves input tokens"), "{}", rec.reason);
}

#[test]
fn rows_over_several_conversations_are_the_sums_of_each_swept_alone() {
    let (meter, _) = meter();
    // Conversations with different numbers of distinct splits (2, 1 and none).
    let a = measured(&meter);
    let b = testing::measured(vec![user("go"), result("c", "cat", "z".repeat(300)), request(None)], &meter);
    let c = testing::measured(vec![user("only text"), request(None), request(None)], &meter);
    let at = settings(vec![0, 16, 50, 200, 400], "keep-turns:n=1");
    let together = sweep(&[&a, &b, &c], &at, &meter);
    let alone: Vec<Sweep> = [&a, &b, &c].iter().map(|m| sweep(&[*m], &at, &meter)).collect();
    for (i, row) in together.rows.iter().enumerate() {
        let sum = |f: fn(&SweepRow) -> Tokens| alone.iter().map(|s| f(&s.rows[i])).sum::<Tokens>();
        assert_eq!(row.total_input_tokens, sum(|r| r.total_input_tokens), "at {}", row.threshold);
        assert_eq!(row.summary_tokens, sum(|r| r.summary_tokens), "at {}", row.threshold);
        assert_eq!(row.content_tokens, sum(|r| r.content_tokens), "at {}", row.threshold);
        let splits: usize = alone.iter().map(|s| s.rows[i].split_results).sum();
        assert_eq!(row.split_results, splits, "at {}", row.threshold);
        // Bills add up in whole pico-USD, exactly, in any order.
        let pico = |r: &SweepRow| pico_usd(r.cost_usd.expect("every row of a sweep is priced"));
        assert!(pico(row) > 0, "at {}", row.threshold);
        assert_eq!(pico(row), alone.iter().map(|s| pico(&s.rows[i])).sum::<u128>(), "at {}", row.threshold);
    }
    let baselines: u128 = alone.iter().map(|s| pico_usd(s.baseline_cost_usd)).sum();
    assert_eq!(pico_usd(together.baseline_cost_usd), baselines);
    assert_ne!(together.rows[0].total_input_tokens, together.rows[4].total_input_tokens);
}

#[test]
fn the_recommendation_is_the_largest_threshold_within_tolerance_of_the_best() {
    // Against a baseline of 10,000 input tokens, each row priced.
    let row = |threshold, total: Tokens, cost| SweepRow {
        threshold,
        total_input_tokens: total,
        savings: savings(total, 10_000),
        cost_usd: Some(cost),
        ..Default::default()
    };
    let rows = [
        row(0, 5000, 1.10),
        row(64, 4800, 1.00),
        row(128, 5000, 0.98),
        row(256, 5050, 1.0312),
        row(512, 6000, 1.20),
    ];
    // Best 52% at 64; 5% of it is 2.6 points, 260 input tokens: 256 (49.5%, 250 tokens more) is
    // within, 512 (40%) is not.
    let r = recommend(&rows, 0.05, 10_000).unwrap();
    assert_eq!((r.threshold, r.best_threshold, r.next), (256, 64, Some((512, 0.40))));
    assert_eq!((r.tolerance_tokens, r.extra_input_tokens), (260, 250));
    assert_eq!(r.extra_cost_usd, Some(1.0312 - 1.00));
    assert!(
        r.reason.starts_with(
            "256 bytes saves 49.5% of input tokens, within 5.0% of the best (52.0% at 64 bytes): it sends 250 \
             input tokens more than the best, of the 260 the tolerance allows, and costs $0.0312 more (+3.1%); \
             it leaves every output of up to 256 bytes whole; the next larger threshold tried, 512 bytes, saves \
             40.0%"
        ),
        "{}",
        r.reason
    );
    assert_eq!(recommend(&rows, 0.0, 10_000).unwrap().threshold, 64);
    assert_eq!(recommend(&rows, 0.5, 10_000).unwrap().threshold, 512);
    assert_eq!(recommend(&[], 0.05, 10_000), None);
}

#[test]
fn the_tolerance_in_tokens_is_exactly_what_separates_the_rows_within_it() {
    // At every tolerance, a row is within it exactly when it sends at most `tolerance_tokens`
    // more than the best; a row 1 token beyond that edge is not.
    for baseline in [997, 10_000, 123_457] {
        for tolerance in [0.0, 0.013, 0.05, 0.1, 0.333] {
            let edge = baseline / 2;
            let allowed = |rows: &[SweepRow]| recommend(rows, tolerance, baseline).unwrap().tolerance_tokens;
            let row = |threshold, total: Tokens| SweepRow {
                threshold,
                total_input_tokens: total,
                savings: savings(total, baseline),
                ..Default::default()
            };
            let n = allowed(&[row(0, edge)]);
            let at_edge = recommend(&[row(0, edge), row(1, edge + n)], tolerance, baseline).unwrap();
            assert_eq!((at_edge.threshold, at_edge.extra_input_tokens), (1, n), "{baseline} {tolerance}");
            let beyond = recommend(&[row(0, edge), row(1, edge + n + 1)], tolerance, baseline).unwrap();
            assert_eq!(beyond.threshold, 0, "{baseline} {tolerance}: {n}");
            let expected = (tolerance * savings(edge, baseline) * baseline as f64).floor() as Tokens;
            assert!(n.abs_diff(expected) <= 1, "{n} {expected}");
        }
    }
}

#[test]
fn a_tool_whose_split_saves_nothing_is_kept_whole_only_by_a_threshold_that_splits_none_of_it() {
    let row = |threshold, savings, split_results| SweepRow {
        threshold,
        savings,
        split_results,
        ..Default::default()
    };
    // Never splitting the tool saves 30%, with 5 outputs of other tools split. Splitting it
    // saves less at every threshold; at 1024 none of its outputs is split any more.
    let rows = [row(256, 0.28, 9), row(512, 0.29, 7), row(1024, 0.30, 5)];
    let r = recommend_tool(&rows, 0.05, 1000, "Read", 0.30, 5).unwrap();
    assert_eq!(r.threshold, 1024);
    assert_eq!(
        r.reason,
        "splitting Read outputs saves nothing under this policy; 1024 bytes keeps them whole"
    );
    // Up to 512 only: every threshold tried still splits some, and the reason says so.
    let r = recommend_tool(&rows[..2], 0.05, 1000, "Read", 0.30, 5).unwrap();
    assert_eq!(r.threshold, 512);
    assert!(
        r.reason.contains("every threshold tried splits some of them (2 still split at 512 bytes"),
        "{}",
        r.reason
    );
    assert!(!r.reason.contains("keeps them whole;"), "{}", r.reason);
}

#[test]
fn counting_cost_does_not_grow_with_the_number_of_thresholds() {
    let (meter, calls) = meter();
    let m = measured(&meter);
    let after_measuring = calls.load(Ordering::SeqCst);
    assert!(after_measuring > 0);
    let few = sweep(&[&m], &settings(vec![64], "keep-results:n=1"), &meter);
    assert_eq!(calls.load(Ordering::SeqCst), after_measuring, "a one-threshold sweep recounted");
    let many = sweep(&[&m], &settings(parse_thresholds("0..4096:+16").unwrap(), "keep-results:n=1"), &meter);
    assert_eq!(calls.load(Ordering::SeqCst), after_measuring, "a 257-threshold sweep recounted");
    assert_eq!(many.rows.len(), 257);
    assert_eq!(few.rows[0], many.rows.iter().find(|r| r.threshold == 64).unwrap().clone());
    // Every text was counted exactly once, when it was measured.
    assert_eq!(after_measuring, meter.distinct_texts());
}

#[test]
fn per_tool_sweeps_vary_one_tool_and_keep_the_others_at_the_recommendation() {
    let (meter, _) = meter();
    let m = measured(&meter);
    let s = sweep(&[&m], &settings(vec![16, 50, 200], "keep-turns:n=2"), &meter);
    let names: Vec<&str> = s.per_tool.iter().map(|t| t.tool.as_str()).collect();
    assert_eq!(names, ["read", "ls"]);
    assert_eq!((s.per_tool[0].results, s.per_tool[0].output_tokens), (1, 100));
    assert!((s.per_tool[0].output_share - 100.0 / 140.0).abs() < 1e-12);
    // Varying only `ls` with `read` fixed at 200 (unsplit): threshold 16 splits ls alone.
    // Contexts: 102, 102+93, 102+93, 102+53 = 545 (ls pruned before request 3).
    let ls = &s.per_tool[1];
    assert_eq!(ls.rows[0].total_input_tokens, 102 + 195 + 195 + 155);
    assert_eq!(ls.rows[2].total_input_tokens, 528);
    assert_eq!(ls.recommendation.as_ref().unwrap().threshold, 200);
}

#[test]
fn a_speculation_settles_to_the_held_sweep_whichever_guesses_held() {
    let (meter, _) = meter();
    // `long` gains from splitting and pruning its large outputs; `short` only pays the summary
    // overhead, so alone it recommends splitting nothing (its guess has the right tools, the
    // wrong threshold); the second file has no conversation.
    let mut items = vec![user("go")];
    for (k, tool) in ["cat", "grep", "cat", "find"].iter().enumerate() {
        items.push(result(&format!("c{k}"), tool, format!("{k} ").repeat(150)));
        items.push(request(None));
        items.push(user("next"));
    }
    items.extend([request(None), request(None), request(None)]);
    let long = testing::measured(items, &meter);
    let short = testing::measured(
        vec![
            user("hi"),
            result("a", "cat", "x".repeat(100)),
            request(None),
            result("b", "grep", "y".repeat(40)),
        ],
        &meter,
    );
    let files: Vec<Vec<&MeasuredConversation>> = vec![vec![&short], vec![], vec![&long], vec![&short, &long]];
    let mut at = settings(vec![0, 16, 50, 200, 400], "keep-turns:n=1");
    at.top_tools = 2;
    let all: Vec<&MeasuredConversation> = files.iter().flatten().copied().collect();
    let held = sweep(&all, &at, &meter);
    assert!(held.per_tool.len() == 2 && held.recommendation.as_ref().unwrap().threshold < 400);
    assert_eq!(sweep(&[&short], &at, &meter).recommendation.unwrap().threshold, 400, "short alone");
    let mut read_again = Vec::new();
    for order in [[0, 1, 2, 3], [2, 3, 0, 1], [1, 0, 3, 2], [3, 2, 1, 0]] {
        let speculation = Speculation::new(files.len());
        let mut totals_of_all = SweepTotals::default();
        for i in order {
            let part = totals(&files[i], &at, &meter);
            speculation.offer(i, &files[i], &part, &at, &meter);
            totals_of_all.add(part);
        }
        let plan = plan(&totals_of_all, &at);
        let (mut per_tool, left) = speculation.settle(&plan, &at, |i| !files[i].is_empty());
        for (i, tools) in &left {
            assert!(*i != 1, "a file without conversations is not read again");
            for &t in tools {
                let rows = tool_rows(&files[*i], &plan.tools[t].0, plan.overall(), &at, &meter);
                per_tool.add_tool(t, &rows);
            }
        }
        assert_eq!(finish(totals_of_all, &plan, per_tool, &at), held, "order {order:?}");
        read_again.push(left);
    }
    // `short` first guesses the threshold wrong and is read again. `long` first ranks `find`
    // second (a tie with `grep`, broken by name) where the final plan has `grep` (with
    // `short`'s): it is read again for `grep` alone. After both, every guess holds.
    let (short_both, long_grep) = ((0, vec![0, 1]), (2, vec![1]));
    assert_eq!(read_again, [vec![short_both.clone()], vec![long_grep], vec![short_both], vec![]]);
}

#[test]
fn fixing_other_tools_keeps_their_split_at_any_threshold() {
    let (meter, _) = meter();
    let m = measured(&meter);
    let fixed = fix_other_tools(&m, "ls", 16);
    let none = PolicySpec::parse("none").unwrap();
    // read is split (fixed at 16) even when replayed at a huge threshold.
    let (r, _) = row_at(&[&fixed], 10_000, &none, &meter, None);
    assert_eq!(r.split_results, 1);
    let unsplit = fix_other_tools(&m, "ls", 1_000);
    assert_eq!(row_at(&[&unsplit], 0, &none, &meter, None).0.split_results, 1, "only ls splits");
    // Fixing how a raw output splits does not change what the tool produced (anchors that
    // measure the whole output see the same, not summary + text).
    let outputs = |c: &MeasuredConversation| -> Vec<crate::tokens::TextSize> {
        results(c).map(|(sizes, _)| sizes.output()).collect()
    };
    assert_eq!(outputs(&fixed), outputs(&m));
    assert_eq!(outputs(&unsplit), outputs(&m));
}
