//! Compaction in every output (docs/compaction.md, "Compaction in the outputs"): on the corpus
//! session that recorded a compaction, the JSON of `replay`, `compare`, `cost` and `recommend`
//! carries per run `compactions`, `summarized_tokens`, `summary_tokens`,
//! `summarization_input_tokens` and `summarization_output_tokens` (0 for a policy that does not
//! compact); the summarisation calls are billed in `cost` and in the USD `recommend` ranks by; and
//! prune, compaction and combined policies are ranked on that one cost scale. The tables carry the
//! columns when a run compacted. Corpus tests: they fail when `CI` is set and the corpus is
//! missing, and are skipped with a printed reason otherwise.

use serde_json::Value;

use crate::common;

/// The corpus session that recorded a compaction (Claude Code 2.0.76).
const SESSION: &str = "claude-code/codemie-code/session-624a4a58.jsonl";

/// The per-run compaction fields every JSON output carries.
const FIELDS: [&str; 5] = [
    "compactions",
    "summarized_tokens",
    "summary_tokens",
    "summarization_input_tokens",
    "summarization_output_tokens",
];

/// The brief's three policies: prune, compact, both.
const TRIPLE: [&str; 3] = ["keep-turns:n=3", "compact:claude-code", "keep-turns:n=3+compact:claude-code"];

fn session() -> Option<String> {
    let corpus = common::corpus_root()?;
    Some(corpus.join(SESSION).to_str().expect("a UTF-8 path").to_owned())
}

/// `command` on `path` with `policies` and `extra` arguments, as `format`.
fn run(command: &str, path: &str, policies: &[&str], extra: &[&str], format: &str) -> Vec<u8> {
    let mut cmd = common::ctxbudget();
    cmd.args([command, path, "--format", format]).args(extra);
    for p in policies {
        cmd.args(["--policy", p]);
    }
    let out = cmd.output().expect("the binary runs");
    assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn json(command: &str, path: &str, policies: &[&str], extra: &[&str]) -> Value {
    serde_json::from_slice(&run(command, path, policies, extra, "json")).expect("JSON")
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("`{key}` is a count in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("`{key}` is a number in {v}"))
}

/// The compaction fields of one run, in [`FIELDS`] order.
fn fields(v: &Value) -> [u64; 5] {
    FIELDS.map(|k| n(v, k))
}

/// The row of `policy` in a list of rows keyed by `policy`.
fn row<'a>(rows: &'a Value, policy: &str) -> &'a Value {
    let rows = rows.as_array().expect("a list of rows");
    rows.iter().find(|r| r["policy"] == policy).unwrap_or_else(|| panic!("a row for {policy}"))
}

/// A compacting run's fields: one compaction at least, a summary smaller than what it replaced,
/// a summarisation call that sent more than it summarised away (the context, plus the prompt)
/// and returned the summary.
fn assert_compacted(c: [u64; 5], what: &str) {
    let [compactions, summarized, summary, input, output] = c;
    assert!(compactions >= 1, "{what} compacts: {c:?}");
    assert!(summary > 0 && summary < summarized, "{what}: the summary replaces more than itself: {c:?}");
    assert!(input > summarized, "{what}: the call sends the context and its prompt: {c:?}");
    assert_eq!(output, summary, "{what}: the call's output is the summary: {c:?}");
}

#[test]
fn the_json_of_replay_compare_cost_and_recommend_carries_each_runs_compactions() {
    let Some(path) = session() else { return };
    let policies = ["none", "keep-turns:n=3", "compact:claude-code"];
    // `off`: the log's own compaction dropped and no trigger run beside a prune policy, so only
    // the compaction policy compacts.
    let off = ["--harness-compaction", "off"];
    let replay = json("replay", &path, &policies, &off);
    let compare = json("compare", &path, &policies, &off);
    let cost = json("cost", &path, &policies, &off);
    let recommend = json("recommend", &path, &policies, &off);
    let replayed = fields(row(&replay["runs"], "compact:claude-code"));
    assert_compacted(replayed, "replay");
    assert_eq!(fields(row(&replay["runs"], "keep-turns:n=3")), [0; 5], "a prune policy: all 0");
    assert_eq!(fields(row(&replay["runs"], "none")), [0; 5], "none under `off`: all 0");
    for (name, doc) in [("compare", &compare), ("cost", &cost)] {
        // The same run at the same threshold (256): the same counts as the replay's.
        assert_eq!(fields(row(&doc["policies"], "compact:claude-code")), replayed, "{name}");
        for quiet in ["none", "keep-turns:n=3"] {
            let r = row(&doc["policies"], quiet);
            assert_eq!(fields(r), [0; 5], "{name}: {quiet}");
            assert_eq!(f(&r["cost"], "summarization_cost"), 0.0, "{name}: {quiet} pays no summary");
        }
        let billed = &row(&doc["policies"], "compact:claude-code")["cost"];
        assert!(f(billed, "summarization_cost") > 0.0, "{name} bills the call: {billed}");
        assert!(f(billed, "summarization_cost") < f(billed, "cost"), "{name}: part of the cost");
        assert!(f(billed, "summarization_cost_usd") > 0.0, "{name} bills it in USD: {billed}");
        assert!(f(billed, "cost_usd") > f(billed, "summarization_cost_usd") + f(billed, "output_cost_usd"));
        // Per event: one priced summarisation call per compaction, adding up to the run's.
        let events: Vec<&Value> = doc["compaction_events"]
            .as_array()
            .expect("compaction_events")
            .iter()
            .filter(|e| e["policy"] == "compact:claude-code")
            .map(|e| &e["event"])
            .collect();
        assert_eq!(events.len() as u64, replayed[0], "{name}: one event per compaction");
        assert!(
            doc["compaction_events"].as_array().unwrap().iter().all(|e| e["policy"] == "compact:claude-code")
        );
        let (cost, usd) =
            events.iter().fold((0.0, 0.0), |(c, u), e| (c + f(e, "cost"), u + f(e, "cost_usd")));
        assert!((cost - f(billed, "summarization_cost")).abs() < 1e-6, "{name}: {cost}");
        assert!((usd - f(billed, "summarization_cost_usd")).abs() < 1e-9, "{name}: {usd}");
        let input: u64 = events.iter().map(|e| n(e, "input_tokens")).sum();
        let output: u64 = events.iter().map(|e| n(e, "output_tokens")).sum();
        assert_eq!((input, output), (replayed[3], replayed[4]), "{name}: the calls' tokens");
    }
    let candidates = recommend["candidates"].as_array().expect("candidates");
    for c in candidates {
        let counts = fields(c);
        if c["policy"] == "compact:claude-code" {
            assert_compacted(counts, &format!("recommend at {}", c["threshold"]));
        } else {
            assert_eq!(counts, [0; 5], "recommend: {c}");
        }
    }
    // recommend ranks in USD: its candidate at 256 bytes is compare's run, summarisation included.
    let at_256 = candidates
        .iter()
        .find(|c| c["policy"] == "compact:claude-code" && c["threshold"] == 256)
        .expect("the candidate at 256 bytes");
    assert_eq!(fields(at_256), replayed);
    let usd = f(&row(&compare["policies"], "compact:claude-code")["cost"], "cost_usd");
    assert!(
        (f(at_256, "cost_usd") - usd).abs() < 1e-9,
        "recommend's {} against compare's {usd}",
        at_256["cost_usd"]
    );
}

/// Checks that `compare`'s rows and `recommend`'s candidates stand on one scale: every cost change
/// against the one baseline, and the recommendation the cheapest candidate within the constraints.
fn assert_one_scale(compare: &Value, recommend: &Value) {
    let base = f(compare, "baseline_cost");
    for p in compare["policies"].as_array().expect("rows") {
        let change = f(&p["cost"], "cost") / base - 1.0;
        assert!((f(p, "cost_change") - change).abs() < 1e-12, "{}: cost_change on the baseline", p["policy"]);
    }
    let pick = &recommend["recommendation"];
    let cheapest = recommend["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .filter(|c| c["meets_constraints"] == true)
        .map(|c| f(c, "cost_usd"))
        .fold(f64::INFINITY, f64::min);
    assert_eq!(f(pick, "cost_usd"), cheapest, "the pick is the cheapest candidate of every kind");
    let base_usd = f(&recommend["recommendation"]["baseline"], "cost_usd");
    for c in recommend["candidates"].as_array().expect("candidates") {
        let change = if base_usd == 0.0 { 0.0 } else { f(c, "cost_usd") / base_usd - 1.0 };
        assert!((f(c, "cost_change") - change).abs() < 1e-12, "{c}: cost_change on the baseline");
    }
}

#[test]
fn compare_and_recommend_rank_prune_compact_and_combined_policies_on_one_cost_scale() {
    let Some(path) = session() else { return };
    // Under the default `simulated`, Claude Code's trigger runs beside the prune policy, so the
    // prune policy alone and with `compact:claude-code` are the same run; under `off` the prune
    // policy alone never compacts.
    for (mode, prune_compacts) in [("simulated", true), ("off", false)] {
        let extra = ["--harness-compaction", mode];
        let compare = json("compare", &path, &TRIPLE, &extra);
        let recommend = json("recommend", &path, &TRIPLE, &extra);
        assert_one_scale(&compare, &recommend);
        let rows = &compare["policies"];
        assert_compacted(fields(row(rows, "compact:claude-code")), mode);
        // keep-turns:n=3 keeps the context under Claude Code's 155,000-token trigger.
        assert!(n(row(rows, "keep-turns:n=3"), "peak_context_tokens") < 155_000);
        assert_eq!(fields(row(rows, "keep-turns:n=3+compact:claude-code")), [0; 5], "{mode}");
        let (prune, both) = (row(rows, "keep-turns:n=3"), row(rows, TRIPLE[2]));
        assert_eq!(prune["cost"], both["cost"], "{mode}: the trigger never fires on the pruned context");
        let none = fields(row(rows, "none"));
        assert_eq!(none[0] > 0, prune_compacts, "{mode}: none compacts only under the agent's trigger");
    }
    // With a trigger the pruned context reaches (50% of the window), the combination compacts
    // too, and pays for its summaries where the prune policy alone does not.
    let policies =
        ["keep-turns:n=3", "compact:claude-code:pct=50", "keep-turns:n=3+compact:claude-code:pct=50"];
    let extra = ["--harness-compaction", "off"];
    let compare = json("compare", &path, &policies, &extra);
    let recommend = json("recommend", &path, &policies, &extra);
    assert_one_scale(&compare, &recommend);
    let rows = &compare["policies"];
    let (prune, compact, both) = (row(rows, policies[0]), row(rows, policies[1]), row(rows, policies[2]));
    assert_eq!(fields(prune), [0; 5]);
    assert_compacted(fields(compact), policies[1]);
    assert_compacted(fields(both), policies[2]);
    assert!(f(&both["cost"], "summarization_cost_usd") > 0.0);
}

#[test]
fn the_tables_show_the_compaction_columns_when_a_run_compacted_and_only_then() {
    let Some(path) = session() else { return };
    let off = ["--harness-compaction", "off"];
    for command in ["compare", "cost", "recommend"] {
        let csv = String::from_utf8(run(command, &path, &TRIPLE, &off, "csv")).expect("UTF-8");
        let header = csv.lines().next().expect("a header");
        for field in FIELDS {
            assert!(header.contains(field), "{command}: `{field}` in {header}");
        }
        let quiet = String::from_utf8(run(command, &path, &["keep-turns:n=3"], &off, "csv")).expect("UTF-8");
        assert!(!quiet.lines().next().expect("a header").contains("compactions"), "{command}: {quiet}");
    }
    let text = String::from_utf8(run("replay", &path, &TRIPLE, &off, "markdown")).expect("UTF-8");
    let (_, compacted) = text.split_once("## Compactions per run").expect("the compactions table");
    assert!(compacted.contains("| compact:claude-code |"), "{compacted}");
    assert!(!compacted.contains("keep-turns"), "only runs that compacted: {compacted}");
    let quiet = String::from_utf8(run("replay", &path, &["keep-turns:n=3"], &off, "table")).expect("UTF-8");
    assert!(!quiet.contains("Compactions per run"), "{quiet}");
}
