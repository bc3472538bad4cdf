//! `recommend` rendered: the answer in words with its bootstrap interval, the runners-up and why
//! each lost, the tools whose own threshold would differ, and the candidates (in a table or
//! Markdown, each policy's best, the recommended row marked; in CSV, every pair tried). JSON is
//! the [`Recommendation`] verbatim. Percentages in the lines of text carry a true minus sign
//! ("−11.7%"), as the sentence does; the tables keep the other commands' ASCII one.

use super::analysis::{Section, money, pct};
use super::columns::Tabular;
use crate::analysis::recommend::{Candidate, Recommendation, signed_pct};

/// The columns of every pair tried (the CSV).
pub const CANDIDATE_HEADERS: [&str; 10] = [
    "policy",
    "threshold",
    "input_tokens",
    "savings",
    "cost_usd",
    "cost_change",
    "peak_context_tokens",
    "prune_events",
    "reuse_share",
    "meets_constraints",
];

/// The columns of each policy's best: [`CANDIDATE_HEADERS`] and a mark on the recommended row.
pub const BEST_HEADERS: [&str; 11] = {
    let mut headers = ["mark"; 11];
    let mut i = 0;
    while i < CANDIDATE_HEADERS.len() {
        headers[i] = CANDIDATE_HEADERS[i];
        i += 1;
    }
    headers
};

/// The columns of the runners-up.
pub const RUNNERS_UP_HEADERS: [&str; 5] =
    ["policy", "threshold", "extra_cost_usd", "extra_input_tokens", "why_it_lost"];

/// The columns of the per-tool table.
pub const TOOLS_HEADERS: [&str; 7] =
    ["tool", "results", "output_tokens", "own_threshold", "cost_usd", "cost_change", "differs"];

/// A share in words with a true minus sign when negative, without a plus: "−11.7%", "36.9%".
fn share(v: f64) -> String {
    let s = signed_pct(v);
    s.strip_prefix('+').map_or(s.clone(), str::to_owned)
}

fn threshold(t: Option<usize>) -> String {
    t.map_or_else(|| "as recorded".to_owned(), |t| t.to_string())
}

/// The interval in words, and whether the runner-up lies within it.
fn interval_line(r: &Recommendation) -> Option<String> {
    let i = r.interval.as_ref()?;
    let mut line = format!(
        "{:.0}% bootstrap interval over the {} conversations ({} draws, seed {}): savings {} to {}, cost change {} to {}.",
        i.level * 100.0,
        r.conversations,
        i.resamples,
        i.seed,
        share(i.savings[0]),
        share(i.savings[1]),
        share(i.cost_change[0]),
        share(i.cost_change[1]),
    );
    if let (Some(first), Some(change)) = (r.runners_up.first(), i.runner_up_cost_change) {
        let cheaper = i.pick_cheaper_share.unwrap_or(0.0);
        let firm = if i.runner_up_within {
            "lies within it: these conversations do not separate the two"
        } else {
            "lies outside it"
        };
        line.push_str(&format!(
            " The runner-up, {} at {}, changes cost by {} and {firm}; the pick is cheaper in {} of the draws.",
            first.policy,
            threshold(first.threshold),
            share(change),
            share(cheaper)
        ));
    }
    Some(line)
}

/// The rows of `candidates`; with `pick`, the [`BEST_HEADERS`] with the row of that candidate
/// marked, else the [`CANDIDATE_HEADERS`].
fn candidate_rows(candidates: &[&Candidate], unit: &str, pick: Option<Option<&Candidate>>) -> Tabular {
    let t = Tabular {
        headers: match pick {
            Some(_) => BEST_HEADERS.to_vec(),
            None => CANDIDATE_HEADERS.to_vec(),
        },
        rows: candidates
            .iter()
            .map(|c| {
                let mut row = vec![
                    c.policy.clone(),
                    threshold(c.threshold),
                    c.input_tokens.to_string(),
                    pct(c.savings),
                    money(c.cost, unit),
                    pct(c.cost_change),
                    c.peak_context_tokens.to_string(),
                    c.prune_events.to_string(),
                    c.reuse_share.map(pct).unwrap_or_default(),
                    c.meets_constraints.to_string(),
                ];
                if let Some(pick) = pick {
                    let marked = pick.is_some_and(|p| p.policy == c.policy && p.threshold == c.threshold);
                    row.push(if marked { "recommended".to_owned() } else { String::new() });
                }
                row
            })
            .collect(),
    };
    let totals: Vec<_> = candidates.iter().map(|c| c.compaction).collect();
    super::compaction::append(t, &totals)
}

/// The best candidate of each policy, in grid order (the baseline's own row first), and the
/// recommended one after its policy's best when that is not it (the best breaks a constraint).
fn best_per_policy(r: &Recommendation) -> Vec<&Candidate> {
    let mut out = cheapest_per_policy(r);
    if let Some(pick) = r.recommendation.as_ref().map(|x| &x.pick)
        && !out.iter().any(|c| c.policy == pick.policy && c.threshold == pick.threshold)
    {
        let at = out.iter().rposition(|c| c.policy == pick.policy).map_or(out.len(), |i| i + 1);
        out.insert(at, pick);
    }
    out
}

/// The cheapest candidate of each policy, in grid order (the baseline's own row first).
fn cheapest_per_policy(r: &Recommendation) -> Vec<&Candidate> {
    let mut out: Vec<&Candidate> = vec![&r.candidates[0]];
    for c in &r.candidates[1..] {
        match out[1..].iter_mut().find(|b| b.policy == c.policy) {
            // Thresholds ascend: the larger of equal costs, as the recommendation prefers.
            Some(b) if c.cost <= b.cost => *b = c,
            Some(_) => {}
            None => out.push(c),
        }
    }
    out
}

/// The sections of `r`: with `every_pair`, the first table lists every candidate (the CSV),
/// otherwise each policy's best, after the runners-up and the tools.
pub fn sections(r: &Recommendation, every_pair: bool) -> Vec<Section> {
    let unit = &r.cost_unit;
    let all: Vec<&Candidate> = r.candidates.iter().collect();
    if every_pair {
        return vec![Section {
            title: "Candidates".into(),
            text: Vec::new(),
            table: Some(candidate_rows(&all, unit, None)),
        }];
    }
    let mut text = vec![r.sentence.clone()];
    text.extend(interval_line(r));
    // A relative preset (`anthropic`, `openai`, `none`) does not price in USD: the bill is then at
    // each request's model price; explicit prices apply to every model (docs/prices.md).
    let prices = if r.cache.prices.unit == "USD" {
        "the prices given".to_owned()
    } else {
        "each request's model price (docs/prices.md)".to_owned()
    };
    text.push(format!(
        "Costs in {unit}, the whole bill at {prices}; cache TTL {}; baseline: the sessions as recorded (none, nothing split); constraints: peak context within {} tokens{}.",
        crate::analysis::cost::format_ttl(r.cache.ttl_ms),
        r.window,
        r.max_reuse.map_or_else(String::new, |m| format!(", reuse share at most {} where known", pct(m)))
    ));
    let mut out = vec![Section { title: "Recommendation".into(), text, table: None }];
    let runners = Tabular {
        headers: RUNNERS_UP_HEADERS.to_vec(),
        rows: r
            .runners_up
            .iter()
            .map(|u| {
                vec![
                    u.policy.clone(),
                    threshold(u.threshold),
                    money(u.extra_cost, unit),
                    u.extra_tokens.to_string(),
                    u.reason.clone(),
                ]
            })
            .collect(),
    };
    if !runners.rows.is_empty() {
        out.push(Section { title: "Runners-up".into(), text: Vec::new(), table: Some(runners) });
    }
    out.extend(tools_section(r));
    let best = best_per_policy(r);
    out.push(Section {
        title: "Each policy at its cheapest threshold".into(),
        text: vec!["Every pair tried is in `--format csv` and `--format json`.".into()],
        table: Some(candidate_rows(&best, unit, Some(r.recommendation.as_ref().map(|x| &x.pick)))),
    });
    out
}

/// Per dominant tool, where its own cheapest threshold lands.
fn tools_section(r: &Recommendation) -> Option<Section> {
    if r.per_tool.is_empty() {
        return None;
    }
    let unit = &r.cost_unit;
    let overall = r.recommendation.as_ref().and_then(|x| x.pick.threshold);
    let moved: Vec<String> = r
        .per_tool
        .iter()
        .filter(|t| t.differs)
        .map(|t| format!("{} → {} bytes ({})", t.tool, t.threshold, share(t.cost_change)))
        .collect();
    let text = if moved.is_empty() {
        vec!["No dominant tool's own threshold costs less than the recommendation's.".to_owned()]
    } else {
        vec![format!("Per tool, its own threshold would cost less: {}.", moved.join(", "))]
    };
    let table = Tabular {
        headers: TOOLS_HEADERS.to_vec(),
        rows: r
            .per_tool
            .iter()
            .map(|t| {
                vec![
                    t.tool.clone(),
                    t.results.to_string(),
                    t.output_tokens.to_string(),
                    t.threshold.to_string(),
                    money(t.cost, unit),
                    pct(t.cost_change),
                    (t.differs && Some(t.threshold) != overall).to_string(),
                ]
            })
            .collect(),
    };
    Some(Section { title: "Per tool (only that tool's threshold varies)".into(), text, table: Some(table) })
}
