//! `recommend`: its JSON read back through strict types local to this test (an added or renamed
//! field fails here), and the recommended pair recomputed from the candidates, on the bundled
//! traces (black box), on every real session of the shared corpus (through the library, each
//! file measured once) and on the whole corpus at once (black box). Corpus tests: they fail when
//! `CI` is set and the corpus is missing.

use std::path::Path;

use serde::Deserialize;

use crate::common;
use ctxbudget::analysis::recommend::{self as rec, RecommendSettings};
use ctxbudget::analysis::sweep::{DEFAULT_THRESHOLDS, parse_thresholds};
use ctxbudget::pipeline::Job;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pair {
    policy: String,
    threshold: Option<u64>,
    input_tokens: u64,
    #[serde(rename = "cost_usd")]
    cost: f64,
    peak_context_tokens: u64,
    reuse_share: Option<f64>,
    savings: f64,
    cost_change: f64,
    prune_events: u64,
    meets_constraints: bool,
    compactions: u64,
    summarized_tokens: u64,
    summary_tokens: u64,
    summarization_input_tokens: u64,
    summarization_output_tokens: u64,
    never_fired_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Picked {
    policy: String,
    threshold: Option<u64>,
    input_tokens: u64,
    #[serde(rename = "cost_usd")]
    cost: f64,
    peak_context_tokens: u64,
    reuse_share: Option<f64>,
    savings: f64,
    cost_change: f64,
    prune_events: u64,
    meets_constraints: bool,
    compactions: u64,
    summarized_tokens: u64,
    summary_tokens: u64,
    summarization_input_tokens: u64,
    summarization_output_tokens: u64,
    never_fired_reason: Option<String>,
    baseline: Pair,
}

#[derive(Debug, Deserialize)]
struct Output {
    window: u64,
    max_reuse: Option<f64>,
    sentence: String,
    recommendation: Option<Picked>,
    candidates: Vec<Pair>,
}

/// The pair a reader would pick from the candidates alone: within the window and the reuse bound
/// (where known), the cheapest; on a tie the larger threshold (none: nothing split), then the first.
fn pick(out: &Output) -> Option<&Pair> {
    let fits = |c: &&Pair| {
        c.peak_context_tokens <= out.window
            && match (c.reuse_share, out.max_reuse) {
                (Some(s), Some(m)) => s <= m,
                _ => true,
            }
    };
    let mut best: Option<&Pair> = None;
    for c in out.candidates.iter().filter(fits) {
        let better = best.is_none_or(|b| {
            c.cost < b.cost
                || (c.cost == b.cost && c.threshold.unwrap_or(u64::MAX) > b.threshold.unwrap_or(u64::MAX))
        });
        if better {
            best = Some(c);
        }
    }
    best
}

/// Checks `out`'s recommendation against the candidates and the baseline; `what` names the input.
fn check(out: &Output, what: &str) {
    let Some(r) = &out.recommendation else {
        assert!(
            out.candidates.iter().all(|c| c.input_tokens == 0),
            "{what}: no pick, yet requests were replayed"
        );
        return;
    };
    let expected = pick(out).unwrap_or_else(|| panic!("{what}: the baseline always fits"));
    assert_eq!(
        (&r.policy, r.threshold, r.cost, r.input_tokens),
        (&expected.policy, expected.threshold, expected.cost, expected.input_tokens),
        "{what}"
    );
    assert!(r.meets_constraints && r.peak_context_tokens <= out.window, "{what}");
    assert_eq!(
        r.never_fired_reason, expected.never_fired_reason,
        "{what}: the pick's row is its candidate's"
    );
    let base = &out.candidates[0];
    assert_eq!((base.policy.as_str(), base.threshold), ("none", None), "{what}: the baseline comes first");
    assert_eq!((r.baseline.input_tokens, r.baseline.cost), (base.input_tokens, base.cost), "{what}");
    assert!(r.cost <= base.cost, "{what}: the pick never costs more than the sessions as recorded");
    assert_eq!(base.prune_events, 0, "{what}: nothing is pruned as recorded");
    assert_eq!(base.compactions, 0, "{what}: the baseline's compactions are the log's own, not counted");
    for c in out.candidates.iter().chain([&r.baseline]) {
        // A candidate that pruned says nothing of never firing; one that neither pruned nor
        // compacted (and is not the baseline's `none`) says why.
        let quiet = c.prune_events == 0 && c.compactions == 0 && c.policy != "none" && c.input_tokens > 0;
        if c.prune_events > 0 || c.policy == "none" {
            assert!(c.never_fired_reason.is_none(), "{what}: {c:?}");
        } else if quiet {
            assert!(c.never_fired_reason.is_some(), "{what}: {c:?}");
        }
        let calls = (c.summarization_input_tokens, c.summarization_output_tokens);
        let made = (c.compactions, c.summarized_tokens, c.summary_tokens);
        assert_eq!(c.compactions == 0, calls == (0, 0), "{what}: {} calls only when it compacts", c.policy);
        assert_eq!(
            made.0 == 0,
            (made.1, made.2) == (0, 0),
            "{what}: {} summarises only when it compacts",
            c.policy
        );
    }
    let picked =
        (r.summarized_tokens, r.summary_tokens, r.summarization_input_tokens, r.summarization_output_tokens);
    assert_eq!(r.compactions == 0, picked == (0, 0, 0, 0), "{what}: the pick's summaries");
    for c in &out.candidates {
        let savings = 1.0 - c.input_tokens as f64 / base.input_tokens as f64;
        let change = c.cost / base.cost - 1.0;
        assert!(
            (c.savings - savings).abs() < 1e-12 && (c.cost_change - change).abs() < 1e-12,
            "{what}: {c:?}"
        );
    }
    let savings = 1.0 - r.input_tokens as f64 / base.input_tokens as f64;
    assert!(
        (r.savings - savings).abs() < 1e-12 && (r.cost_change - (r.cost / base.cost - 1.0)).abs() < 1e-12,
        "{what}"
    );
    // The command builds the reuse index: every candidate's share is known, and the pick's is
    // within --max-reuse (25%).
    assert!(out.candidates.iter().all(|c| c.reuse_share.is_some_and(|s| (0.0..=1.0).contains(&s))), "{what}");
    assert!(r.reuse_share.is_some_and(|s| s <= 0.25) && r.prune_events <= r.input_tokens, "{what}");
    assert!(out.sentence.starts_with("Ship "), "{what}: {}", out.sentence);
}

#[test]
fn the_recommended_pair_is_the_cheapest_candidate_within_the_window_on_the_bundled_traces() {
    for window in ["200000", "9000"] {
        let run = common::ctxbudget()
            .args(["recommend", "traces", "--format", "json", "--window", window])
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        let out: Output = serde_json::from_slice(&run.stdout).unwrap();
        check(&out, &format!("traces, window {window}"));
        if window == "9000" {
            // The baseline peaks at 9770 tokens: a window below it rules it out.
            assert!(!out.candidates[0].meets_constraints);
            assert!(out.recommendation.as_ref().unwrap().peak_context_tokens <= 9000);
        }
    }
}

/// The meter `recommend` uses by default, and the files under `corpus`.
fn corpus_meter_and_files(corpus: &Path) -> (ctxbudget::Meter, ctxbudget::input::Discovered) {
    let meter = ctxbudget::Meter::new(ctxbudget::Tokenizer::O200k, ctxbudget::Tokenizer::Estimate)
        .deciding(ctxbudget::DecideWith::Anchor);
    (meter, ctxbudget::input::discover(&[corpus.to_owned()]))
}

#[test]
fn the_recommended_pair_is_the_cheapest_candidate_on_every_real_session() {
    let Some(corpus) = common::corpus_root() else { return };
    let (meter, found) = corpus_meter_and_files(&corpus);
    let job = Job { calibrate: true, reuse: true, ..Job::default() };
    let files = ctxbudget::pipeline::measure_files(&found, &job, &meter, &|| {});
    let settings = RecommendSettings {
        policies: ctxbudget::config::recommend_policies(),
        thresholds: parse_thresholds(DEFAULT_THRESHOLDS).unwrap(),
        cache: ctxbudget::CacheModel::default(),
        window: 200_000,
        max_reuse: Some(rec::DEFAULT_MAX_REUSE),
        top_tools: 0,
    };
    let mut sessions = 0;
    for file in files.iter().filter(|f| !f.conversations.is_empty()) {
        let conversations: Vec<_> = file.conversations.iter().collect();
        let result = rec::recommend(&conversations, &settings, &meter);
        let out: Output = serde_json::from_value(serde_json::to_value(&result).unwrap()).unwrap();
        let name = Path::new(&file.path)
            .strip_prefix(&corpus)
            .map_or(file.path.clone(), |p| p.display().to_string());
        check(&out, &name);
        sessions += 1;
    }
    assert!(sessions >= 40, "{sessions} sessions recommended on");
}

#[test]
fn the_recommended_pair_is_the_cheapest_candidate_over_the_whole_corpus_from_the_command() {
    let Some(corpus) = common::corpus_root() else { return };
    let run = common::ctxbudget()
        .args(["recommend", "--format", "json", "--tools", "0"])
        .arg(&corpus)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let out: Output = serde_json::from_slice(&run.stdout).unwrap();
    check(&out, "the whole corpus");
    // The default grid: the baseline, then every policy at each default threshold.
    let policies = ctxbudget::config::recommend_policies().len();
    let thresholds = parse_thresholds(DEFAULT_THRESHOLDS).unwrap().len();
    assert_eq!(out.candidates.len(), 1 + policies * thresholds);
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let run = common::ctxbudget().args(args).output().unwrap();
    assert!(run.status.success(), "{args:?}: {}", String::from_utf8_lossy(&run.stderr));
    serde_json::from_slice(&run.stdout).unwrap()
}

#[test]
fn sweep_compare_and_recommend_agree_to_the_digit_on_one_baseline() {
    let policy = "keep-turns:n=3";
    let sweep = json_of(&["sweep", "traces", "--format", "json", "--policy", policy]);
    let compare =
        json_of(&["compare", "traces", "--format", "json", "--policy", policy, "--threshold", "256"]);
    let recommend = json_of(&["recommend", "traces", "--format", "json", "--policy", policy]);
    let row = sweep["rows"].as_array().unwrap().iter().find(|r| r["threshold"] == 256).unwrap();
    let compared = compare["policies"].as_array().unwrap().iter().find(|p| p["policy"] == policy).unwrap();
    let candidate = recommend["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["policy"] == policy && c["threshold"] == 256)
        .unwrap();
    // One baseline: the sessions as recorded, in all three.
    assert_eq!(sweep["baseline_total_tokens"], compare["baseline_input_tokens"]);
    assert_eq!(sweep["baseline_total_tokens"], recommend["recommendation"]["baseline"]["input_tokens"]);
    assert_eq!(row["total_input_tokens"], compared["total_input_tokens"]);
    assert_eq!(row["total_input_tokens"], candidate["input_tokens"]);
    assert_eq!(row["savings"], compared["savings"], "the same savings, to the last digit");
    assert_eq!(row["savings"], candidate["savings"]);
    // Costs: recommend ranks by the whole bill in USD, which compare gives beside its preset cost.
    assert_eq!(compared["cost"]["cost_usd"], candidate["cost_usd"]);
    assert_eq!(compare["baseline_cost_usd"], recommend["recommendation"]["baseline"]["cost_usd"]);
    let usd = |v: &serde_json::Value| v.as_f64().unwrap();
    let change = usd(&compared["cost"]["cost_usd"]) / usd(&compare["baseline_cost_usd"]) - 1.0;
    assert!((usd(&candidate["cost_change"]) - change).abs() < 1e-12, "{change} {}", candidate["cost_change"]);
    // The sweep prices its rows as recommend prices a pair; it adds each conversation's bill in
    // whole pico-USD (the same sum at any thread count), so it may differ below a pico-USD per
    // conversation, and never in the four decimals shown.
    let conversations = sweep["conversations"].as_f64().unwrap();
    let close =
        |a: f64, b: f64| (a - b).abs() <= 1e-12 * conversations && format!("{a:.4}") == format!("{b:.4}");
    let baseline = usd(&recommend["recommendation"]["baseline"]["cost_usd"]);
    assert!(close(usd(&sweep["baseline_cost_usd"]), baseline), "{} {baseline}", sweep["baseline_cost_usd"]);
    assert!(
        close(usd(&row["cost_usd"]), usd(&candidate["cost_usd"])),
        "{} {}",
        row["cost_usd"],
        candidate["cost_usd"]
    );
    for t in [&sweep["recommendation"]["threshold"], &sweep["recommendation"]["best_threshold"]] {
        let priced = |rows: &serde_json::Value| {
            rows.as_array()
                .unwrap()
                .iter()
                .find(|c| &c["threshold"] == t && c.get("policy").is_none_or(|p| p == policy))
                .map(|c| usd(&c["cost_usd"]))
        };
        let (swept, recommended) =
            (priced(&sweep["rows"]).unwrap(), priced(&recommend["candidates"]).unwrap());
        assert!(close(swept, recommended), "at {t}: {swept} {recommended}");
    }
}

/// The terminal answer on the bundled traces: the pick's row of the best-per-policy table is the
/// one marked, and the interval's percentages carry the sentence's minus sign (U+2212), not `-`.
#[test]
fn the_terminal_table_marks_the_recommended_row_and_one_minus_sign_is_used() {
    let json: Output = serde_json::from_value(json_of(&["recommend", "traces", "--format", "json"])).unwrap();
    let pick = json.recommendation.expect("a pick on the bundled traces");
    let run = common::ctxbudget().args(["recommend", "traces"]).env_remove("COLUMNS").output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let text = String::from_utf8(run.stdout).unwrap();
    let marked: Vec<&str> = text.lines().filter(|l| l.contains("recommended")).collect();
    assert_eq!(marked.len(), 1, "one row marked:\n{text}");
    let threshold = pick.threshold.map_or_else(|| "as recorded".to_owned(), group);
    assert!(marked[0].contains(&pick.policy) && marked[0].contains(&threshold), "{}", marked[0]);
    let interval = text.lines().skip_while(|l| !l.starts_with("95% bootstrap")).take(4).collect::<String>();
    assert!(interval.contains('\u{2212}'), "{interval}");
    let ascii_minus = interval.as_bytes().windows(2).any(|w| w[0] == b'-' && w[1].is_ascii_digit());
    assert!(!ascii_minus, "an ASCII minus before a number: {interval}");
}

/// `n` with thousands separated by commas, as the terminal table draws it.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What [`on_every_real_session`] calls: conversation, thresholds, policy, meter, mode.
type OnSession<'a> = dyn FnMut(
        &ctxbudget::measure::MeasuredConversation,
        &[usize],
        &ctxbudget::policy::PolicySpec,
        &ctxbudget::Meter,
        ctxbudget::harness::HarnessCompaction,
    ) + 'a;

/// Calls `each` with every real session (measured under every harness compaction mode), the
/// thresholds `0..7936:+256` and every policy `recommend` tries plus a compacting combination; false
/// when the corpus is missing (skipped).
fn on_every_real_session(each: &mut OnSession<'_>) -> bool {
    use ctxbudget::harness::HarnessCompaction;
    let Some(corpus) = common::corpus_root() else { return false };
    let (meter, found) = corpus_meter_and_files(&corpus);
    let thresholds = parse_thresholds("0..7936:+256").unwrap();
    let mut policies = ctxbudget::config::recommend_policies();
    policies.push(ctxbudget::policy::PolicySpec::parse("keep-turns:n=3+compact:claude-code").unwrap());
    for mode in [HarnessCompaction::Simulated, HarnessCompaction::Recorded, HarnessCompaction::Off] {
        let job = Job { calibrate: true, reuse: true, harness_compaction: mode, ..Job::default() };
        let files = ctxbudget::pipeline::measure_files(&found, &job, &meter, &|| {});
        for c in files.iter().flat_map(|f| f.conversations.iter()) {
            for spec in &policies {
                each(c, &thresholds, spec, &meter, mode);
            }
        }
    }
    true
}

/// The grid replays each policy once per conversation and forks the replay where its thresholds
/// first split a result differently (`replay_forked`): every forked run must be the run replayed
/// from the start at its threshold, rows and reuse included, under every policy (those that cannot
/// be copied take the other path) and every harness compaction mode, on every real session.
#[test]
fn forked_replays_equal_replays_from_the_start_on_every_real_session() {
    use ctxbudget::analysis::reuse::{Recording, replay_with_reuse};
    use ctxbudget::replay::{Keep, replay_forked};
    let (mut runs, mut forks) = (0, 0);
    let ran = on_every_real_session(&mut |c, thresholds, spec, meter, mode| {
        let (_, firsts) = c.split_plan(thresholds);
        let fresh = || Recording::new(spec.build());
        let forked = replay_forked(c, &firsts, &fresh, &Recording::fork, meter, Keep::Rows);
        assert_eq!(forked.len(), firsts.len(), "{}: one run per split", c.id);
        for (k, f) in forked.into_iter().enumerate() {
            let what = format!("{} under {} at {} ({mode:?})", c.id, spec.as_str(), firsts[k]);
            assert_eq!(f.thresholds, k..k + 1, "{what}");
            let (run, reuse, unfired) = replay_with_reuse(c, firsts[k], spec.build(), meter, Keep::Rows);
            assert_eq!(f.run, run, "{what}: the run");
            assert_eq!(f.policy.reuse(c, firsts[k]), (reuse, unfired), "{what}: reuse and trigger");
            runs += 1;
        }
        forks += firsts.len().saturating_sub(1);
    });
    assert!(!ran || (runs > 10_000 && forks > 5_000), "{runs} runs, {forks} forked");
}

/// The sweep replays each conversation's distinct splits as one replay forked where they first
/// split a result differently: every row of a conversation's sweep must be the row of a sweep at
/// that threshold alone (one replay from the start), counts and bill included, under every policy
/// and every harness compaction mode, on every real session.
#[test]
fn forked_sweep_rows_equal_sweeps_at_each_threshold_alone_on_every_real_session() {
    use ctxbudget::analysis::sweep::{DEFAULT_TOLERANCE, SweepRow, SweepSettings, sweep};
    let settings = |policy: &ctxbudget::policy::PolicySpec, thresholds: Vec<usize>| SweepSettings {
        thresholds,
        policy: policy.clone(),
        tolerance: DEFAULT_TOLERANCE,
        top_tools: 0,
        cache: ctxbudget::CacheModel::default(),
    };
    let (mut rows, mut forked) = (0, 0);
    let ran = on_every_real_session(&mut |c, thresholds, spec, meter, mode| {
        let (slots, firsts) = c.split_plan(thresholds);
        let all = sweep(&[c], &settings(spec, thresholds.to_vec()), meter);
        assert_eq!(all.rows.len(), thresholds.len());
        let alone: Vec<SweepRow> =
            firsts.iter().map(|&t| sweep(&[c], &settings(spec, vec![t]), meter).rows.remove(0)).collect();
        for (i, row) in all.rows.iter().enumerate() {
            let what = format!("{} under {} at {} ({mode:?})", c.id, spec.as_str(), thresholds[i]);
            let expected = SweepRow { threshold: thresholds[i], ..alone[slots[i]].clone() };
            assert!(row.cost_usd.is_some(), "{what}: priced");
            assert_eq!(*row, expected, "{what}");
            rows += 1;
        }
        forked += firsts.len().saturating_sub(1);
    });
    assert!(!ran || (rows > 10_000 && forked > 5_000), "{rows} rows, {forked} forks");
}
