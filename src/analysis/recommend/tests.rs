use super::*;
use crate::analysis::compare::{CompareSettings, compare};
use crate::analysis::cost::Prices;
use crate::analysis::testing::{self, cache_trap};

fn settings(policies: &[&str], window: Tokens) -> RecommendSettings {
    RecommendSettings {
        policies: policies.iter().map(|p| PolicySpec::parse(p).unwrap()).collect(),
        thresholds: vec![1000, 16],
        cache: CacheModel { prices: Prices::anthropic(), ttl_ms: Some(300_000) },
        window,
        max_reuse: Some(DEFAULT_MAX_REUSE),
        top_tools: 3,
    }
}

const POLICIES: [&str; 3] = ["none", "keep-turns:n=2", "keep-results:n=0"];

/// USD per input-token equivalent: the test conversations name no model, so they are priced as
/// the fallback `claude-sonnet-4-5` ($3 input, $3.75 5-minute write, $0.30 read per million
/// tokens: the anthropic preset's 1.25 and 0.1 times $3), and record no output.
const USD: f64 = 3.0 / 1e6;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn the_cheapest_pair_wins_against_the_sessions_as_recorded_by_a_hand_count() {
    let meter = testing::meter().0;
    let m = testing::measured(cache_trap([None; 4]), &meter);
    let r = recommend(&[&m], &settings(&POLICIES, 200_000), &meter);
    // As recorded: "hi" and the whole 100-byte result (102), then the 1,000-byte message: 102,
    // 1102, 1102, 1102; cost 102×1.25 + (1000×1.25 + 102×0.1) + 2 × 1102×0.1 = 1608.1.
    let base = &r.candidates[0];
    assert_eq!((base.policy.as_str(), base.threshold, base.input_tokens), ("none", None, 3408));
    assert!(close(base.cost, 1608.1 * USD), "{}", base.cost);
    // keep-results:n=0 at 16 bytes prunes the content before anything is cached: 95, 1095 × 3;
    // 95×1.25 + (1000×1.25 + 95×0.1) + 2 × 1095×0.1 = 1597.25, the cheapest.
    let rec = r.recommendation.as_ref().unwrap();
    assert_eq!((rec.pick.policy.as_str(), rec.pick.threshold), ("keep-results:n=0", Some(16)));
    assert_eq!(rec.pick.input_tokens, 3380);
    assert!(close(rec.pick.cost, 1597.25 * USD) && close(rec.pick.cost_change, 1597.25 / 1608.1 - 1.0));
    assert!(close(rec.pick.savings, 1.0 - 3380.0 / 3408.0));
    assert_eq!(rec.baseline, *base);
    assert!(
        r.sentence.starts_with("Ship keep-results:n=0 with SUMMARY_THRESHOLD = 16 bytes: \u{2212}0.8% input"),
        "{}",
        r.sentence
    );
    // One candidate per pair after the baseline; each runner-up costs more than the pick.
    assert_eq!(r.candidates.len(), 1 + POLICIES.len() * 2);
    assert!(r.runners_up.iter().all(|u| u.extra_cost > 0.0), "{:?}", r.runners_up);
    assert!(r.interval.is_none(), "no interval from one conversation");
}

#[test]
fn a_window_rules_out_the_pairs_whose_peak_exceeds_it() {
    let meter = testing::meter().0;
    let m = testing::measured(cache_trap([None; 4]), &meter);
    // Peaks: as recorded 1102, keep-results:n=0 at 16 bytes 1095, every other pair at least 1102.
    let r = recommend(&[&m], &settings(&POLICIES, 1100), &meter);
    assert!(!r.candidates[0].meets_constraints);
    let rec = r.recommendation.as_ref().unwrap();
    assert_eq!((rec.pick.policy.as_str(), rec.pick.peak_context_tokens), ("keep-results:n=0", 1095));
    let none = recommend(&[&m], &settings(&POLICIES, 1000), &meter);
    assert!(none.recommendation.is_none());
    assert!(none.sentence.contains("no pair tried meets the constraints"), "{}", none.sentence);
}

#[test]
fn a_tie_goes_to_the_larger_threshold_and_so_to_the_sessions_as_recorded() {
    let meter = testing::meter().0;
    // Idle 19 minutes before request 2: the cache is cold there, and keep-turns' prune is free but
    // the split's summary overhead still costs more than the recorded output.
    let times = [
        Some("2025-01-01T00:00:00Z"),
        Some("2025-01-01T00:01:00Z"),
        Some("2025-01-01T00:20:00Z"),
        Some("2025-01-01T00:21:00Z"),
    ];
    let m = testing::measured(cache_trap(times), &meter);
    let r = recommend(&[&m], &settings(&["none", "keep-turns:n=2"], 200_000), &meter);
    // At 1000 bytes nothing is split, so both policies cost what the baseline does.
    let rec = r.recommendation.as_ref().unwrap();
    assert_eq!((rec.pick.policy.as_str(), rec.pick.threshold), ("none", None));
    assert!(r.candidates.iter().filter(|c| c.threshold == Some(1000)).all(|c| c.cost == rec.pick.cost));
    assert!(r.sentence.starts_with("Ship no prune and no split"), "{}", r.sentence);
}

#[test]
fn every_candidate_is_the_comparison_of_its_pair() {
    let meter = testing::meter().0;
    let conversations: Vec<MeasuredConversation> = [None, Some("2025-01-01T00:00:00Z")]
        .into_iter()
        .map(|at| testing::measured(cache_trap([at; 4]), &meter))
        .collect();
    let refs: Vec<&MeasuredConversation> = conversations.iter().collect();
    let s = settings(&POLICIES, 200_000);
    let r = recommend(&refs, &s, &meter);
    let pairs: Vec<(&str, &MeasuredConversation)> = refs.iter().map(|c| ("t", *c)).collect();
    for threshold in [16, 1000] {
        let c = compare(
            &pairs,
            &CompareSettings {
                policies: s.policies.clone(),
                threshold,
                window: s.window,
                cache: s.cache.clone(),
            },
            &meter,
        );
        for p in &c.policies {
            let cand = r.candidates[1..]
                .iter()
                .find(|x| x.policy == p.policy && x.threshold == Some(threshold))
                .unwrap();
            assert_eq!(
                (cand.input_tokens, cand.peak_context_tokens),
                (p.total_input_tokens, p.peak_context_tokens)
            );
            assert!(close(cand.cost, p.cost.cost_usd), "{} at {threshold}", p.policy);
        }
    }
    // Two conversations: an interval, the same at every call, around the point estimate.
    let i = r.interval.as_ref().unwrap();
    let rec = r.recommendation.as_ref().unwrap();
    assert!(i.cost_change[0] <= rec.pick.cost_change && rec.pick.cost_change <= i.cost_change[1], "{i:?}");
    assert_eq!(recommend(&refs, &s, &meter).interval.as_ref(), Some(i));
}

#[test]
fn a_low_memory_recommendation_is_the_held_one() {
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cache-trap/session.jsonl");
    std::fs::copy(fixture, dir.path().join("session.jsonl")).unwrap();
    let found = crate::input::discover(&[dir.path().to_owned()]);
    let meter = testing::meter().0;
    let s = settings(&POLICIES, 200_000);
    let job = crate::pipeline::Job::default();
    let low = crate::pass::recommend(&found, &job, &meter, &s, true, &|| {});
    let held = crate::pass::recommend(&found, &job, &meter, &s, false, &|| {});
    assert_eq!((low.read, low.errors.len()), (1, 0), "{:?}", low.errors);
    assert!(!low.output.per_tool.is_empty(), "the fixture has a tool");
    assert_eq!(low.output, held.output);
}

#[test]
fn the_grid_prices_the_rows_a_pricing_reads_to_the_bit_of_the_full_rows() {
    use crate::analysis::cost::cost_of_run;
    use crate::result::RequestRow;
    let meter = testing::meter().0;
    let times =
        [Some("2025-01-01T00:00:00Z"), Some("2025-01-01T00:01:00Z"), Some("2025-01-01T00:20:00Z"), None];
    let m = testing::measured(cache_trap(times), &meter);
    let cache = CacheModel { prices: Prices::anthropic(), ttl_ms: Some(300_000) };
    for policy in ["none", "keep-turns:n=2", "keep-results:n=0", "anthropic"] {
        for threshold in [16, 1000] {
            let spec = PolicySpec::parse(policy).unwrap();
            let full = crate::replay::replay(&m, threshold, &mut *spec.build(), &meter);
            let priced = replay_keeping(&m, threshold, &mut *spec.build(), &meter, Keep::Priced);
            assert!(full.rows.iter().any(|r| r.timestamp.is_some() && r.gap_ms.is_some()));
            let unlabelled: Vec<RequestRow> =
                full.rows.iter().map(|r| RequestRow { id: None, timestamp: None, ..r.clone() }).collect();
            assert_eq!(priced.rows, unlabelled, "{policy} at {threshold}");
            assert_eq!(priced.summary, full.summary, "{policy} at {threshold}");
            let usd = cost_of_run(&full.rows, &cache).0.cost_usd;
            assert!(usd > 0.0);
            assert_eq!(price(&priced, &cache).to_bits(), usd.to_bits(), "{policy} at {threshold}");
        }
    }
}

#[test]
fn a_candidates_compaction_fields_sit_in_place_and_read_back_inside_the_recommendation() {
    let pick = Candidate {
        policy: "compact:codex".into(),
        threshold: Some(256),
        prune_events: 2,
        compaction: CompactionTotals {
            compactions: 1,
            summarized_tokens: 900,
            summary_tokens: 40,
            summarization_input_tokens: 1_000,
            summarization_output_tokens: 40,
        },
        never_fired_reason: Some("x".into()),
        ..Candidate::default()
    };
    let json = serde_json::to_string(&pick).unwrap();
    crate::result::assert_flattened_between(&json, "meets_constraints", "never_fired_reason");
    assert_eq!(serde_json::from_str::<Candidate>(&json).unwrap(), pick);
    let recommended = Recommended { pick: pick.clone(), baseline: Candidate::default() };
    let back: Recommended = serde_json::from_str(&serde_json::to_string(&recommended).unwrap()).unwrap();
    assert_eq!(back, recommended);
    let unknown = json.replacen('{', "{\"extra\":1,", 1);
    assert!(serde_json::from_str::<Candidate>(&unknown).is_err(), "an unknown field is refused");
    let older = json.replace(",\"summarization_output_tokens\":40", "");
    let read = serde_json::from_str::<Candidate>(&older).unwrap();
    assert_eq!(read.compaction.summarization_output_tokens, 0, "a missing compaction field reads as 0");
}

#[test]
fn a_forked_runs_price_goes_on_from_its_parents_to_the_bit_of_its_own_replay() {
    use crate::replay::replay_forked;
    use testing::{request, result, user};
    let meter = testing::meter().0;
    // Three results, each split by fewer of the thresholds: forks at each, chained; the last two
    // results come with no request between them (a fork with no row of its own before it forks).
    let at = |m: u32| Some(format!("2025-01-01T00:{m:02}:00Z"));
    let items = vec![
        user("hi"),
        request(at(0).as_deref()),
        result("a", "read", "x".repeat(50)),
        request(at(1).as_deref()),
        user(&"y".repeat(300)),
        result("b", "read", "x".repeat(200)),
        result("c", "read", "x".repeat(800)),
        request(at(2).as_deref()),
        request(at(30).as_deref()),
        request(None),
    ];
    let m = testing::measured(items, &meter);
    let s = RecommendSettings { thresholds: vec![0, 100, 400, 1000], ..settings(&POLICIES, 200_000) };
    let (_, firsts) = m.split_plan(&s.swept());
    assert_eq!(firsts.len(), 4, "each threshold splits the results its own way");
    for spec in &s.policies {
        let fresh = || Recording::new(spec.fresh());
        let runs = replay_forked(&m, &firsts, &fresh, &Recording::fork, &meter, Keep::Priced);
        let shared: Vec<usize> = runs.iter().filter_map(|f| f.forked_from.map(|(_, n)| n)).collect();
        assert_eq!(shared.len(), 3, "{}: {shared:?}", spec.as_str());
        assert!(shared.iter().any(|&n| n > 0), "{}: {shared:?}", spec.as_str());
        let cells = policy_cells(&m, &firsts, spec, &s, &meter);
        for (cell, &threshold) in cells.iter().zip(&firsts) {
            let own = run_cell(&m, threshold, spec, &s, &meter);
            assert!(cell.cost > 0.0);
            assert_eq!(cell.cost.to_bits(), own.cost.to_bits(), "{} at {threshold}", spec.as_str());
            assert_eq!(*cell, own, "{} at {threshold}", spec.as_str());
        }
    }
}
