//! The sweep's recommendation: the largest threshold whose savings stay within the tolerance of
//! the best threshold's, overall or for one tool, and why, in words. The tolerance is relative
//! (a share of the best savings), so it is also stated in absolute terms: the input tokens it
//! allows beyond the best threshold's ([`Recommendation::tolerance_tokens`]), the tokens the
//! recommended threshold sends beyond them, and, where the rows are priced, what that costs in
//! USD ([`Recommendation::extra_cost_usd`]). Pure: no I/O.

use super::{Recommendation, SweepRow, savings};
use crate::model::Tokens;

/// [`recommend`], but none when the rows swept no tool result: with nothing to split, every
/// threshold "saves" 0% and the largest one would be recommended from no evidence.
pub(super) fn recommend_if_any(
    rows: &[SweepRow],
    tolerance: f64,
    baseline: Tokens,
) -> Option<Recommendation> {
    rows.iter().any(|r| r.tool_results > 0).then(|| recommend(rows, tolerance, baseline)).flatten()
}

/// The largest threshold whose savings are within `tolerance` (relative) of the best; `baseline`
/// is the input tokens the savings are a share of.
pub fn recommend(rows: &[SweepRow], tolerance: f64, baseline: Tokens) -> Option<Recommendation> {
    let (i, chosen, best) = choose(rows, tolerance, 0.0)?;
    let next = rows.get(i + 1).map(|r| (r.threshold, r.savings));
    let reason = if best.savings <= 0.0 {
        format!(
            "no threshold saves input tokens (best: {} at {} bytes), so splitting does not pay off under \
             this policy on these traces; {} bytes is the largest threshold tried within {} of the best",
            pct(best.savings),
            best.threshold,
            chosen.threshold,
            pct(tolerance)
        )
    } else {
        let tail = match next {
            Some((t, s)) => format!("the next larger threshold tried, {t} bytes, saves {}", pct(s)),
            None => "it is the largest threshold tried".to_owned(),
        };
        let within = if chosen.threshold == best.threshold {
            "the best of all thresholds tried".to_owned()
        } else {
            format!(
                "within {} of the best ({} at {} bytes): it sends {} input tokens more than the best, of the {} \
                 the tolerance allows{}",
                pct(tolerance),
                pct(best.savings),
                best.threshold,
                extra_tokens(chosen, best),
                allowed_tokens(tolerance, best, 0.0, baseline),
                cost_beyond_best(chosen, best)
            )
        };
        format!(
            "{} bytes saves {} of input tokens, {within}; it leaves every output of up to {} bytes whole; {tail}",
            chosen.threshold,
            pct(chosen.savings),
            chosen.threshold
        )
    };
    Some(recommendation(rows, i, best, tolerance, allowed_tokens(tolerance, best, 0.0, baseline), reason))
}

/// What the chosen row costs beyond the best's, where both are priced: ", and costs $0.0003 more
/// (+0.4%)", ", at the same cost"; empty where they are not.
fn cost_beyond_best(chosen: &SweepRow, best: &SweepRow) -> String {
    let (Some(c), Some(b)) = (chosen.cost_usd, best.cost_usd) else { return String::new() };
    if c == b {
        return ", at the same cost".to_owned();
    }
    let more = if c > b { "more" } else { "less" };
    let change = if b > 0.0 { format!(" ({})", signed_pct(c / b - 1.0)) } else { String::new() };
    if (c - b).abs() < 0.0001 {
        format!(", and costs less than $0.0001 {more}{change}")
    } else {
        format!(", and costs {} {more}{change}", usd((c - b).abs()))
    }
}

/// Input tokens `chosen` sends beyond `best` (0 when it sends fewer).
fn extra_tokens(chosen: &SweepRow, best: &SweepRow) -> Tokens {
    chosen.total_input_tokens.saturating_sub(best.total_input_tokens)
}

/// The input tokens the tolerance allows beyond the best's: `tolerance × |best − zero| × baseline`,
/// rounded down, since savings are `1 − total / baseline`. Then moved by a token where the
/// floating-point test of [`choose`] says otherwise, so a row is within the tolerance exactly when
/// it sends at most this many tokens more than `best`.
fn allowed_tokens(tolerance: f64, best: &SweepRow, zero: f64, baseline: Tokens) -> Tokens {
    if baseline == 0 {
        return 0;
    }
    let floor = floor(best.savings, tolerance, zero);
    let within = |n: Tokens| savings(best.total_input_tokens.saturating_add(n), baseline) >= floor;
    let mut n = (tolerance * (best.savings - zero).abs() * baseline as f64).floor() as Tokens;
    for _ in 0..2 {
        if n > 0 && !within(n) {
            n -= 1;
        } else if within(n + 1) {
            n += 1;
        }
    }
    n
}

/// The least savings within `tolerance` of `best`, the tolerance being relative to the gain above
/// `zero`.
fn floor(best: f64, tolerance: f64, zero: f64) -> f64 {
    best - tolerance * (best - zero).abs()
}

/// USD with cents, or with four decimals below a dollar: "$12.40", "$0.0003".
pub fn usd(v: f64) -> String {
    if v.abs() < 1.0 { format!("${v:.4}") } else { format!("${v:.2}") }
}

/// A signed percentage with one decimal: "+0.4%", "−1.2%" (a true minus sign).
fn signed_pct(v: f64) -> String {
    crate::analysis::recommend::signed_pct(v)
}

/// The recommendation for one tool: the largest threshold that keeps the tool's own contribution
/// (savings minus `unsplit`, the savings with this tool never split) within `tolerance` of its best.
/// `unsplit_splits` is how many outputs that never-split row splits (the other tools'), so what a
/// row splits beyond it is this tool's; `baseline` is the input tokens the savings are a share of.
pub fn recommend_tool(
    rows: &[SweepRow],
    tolerance: f64,
    baseline: Tokens,
    tool: &str,
    unsplit: f64,
    unsplit_splits: usize,
) -> Option<Recommendation> {
    let (i, chosen, best) = choose(rows, tolerance, unsplit)?;
    let points = |v: f64| format!("{:.1} points", (v - unsplit) * 100.0);
    let split_here = chosen.split_results.saturating_sub(unsplit_splits);
    let reason = if best.savings <= unsplit && split_here == 0 {
        format!(
            "splitting {tool} outputs saves nothing under this policy; {} bytes keeps them whole",
            chosen.threshold
        )
    } else if best.savings <= unsplit {
        // A threshold tried that kept them whole would save what the never-split row saves, so be
        // within the tolerance of the best, and the chosen threshold would be at least as large.
        format!(
            "splitting {tool} outputs saves nothing under this policy, and every threshold tried splits \
             some of them ({split_here} still split at {} bytes, the largest within {} of the best); a \
             threshold above their largest output keeps them whole",
            chosen.threshold,
            pct(tolerance)
        )
    } else {
        format!(
            "splitting {tool} outputs adds at best {} of savings (at {} bytes); {} bytes keeps {} of it, \
             within {} of that best",
            points(best.savings),
            best.threshold,
            chosen.threshold,
            points(chosen.savings),
            pct(tolerance)
        )
    };
    let allowed = allowed_tokens(tolerance, best, unsplit, baseline);
    Some(recommendation(rows, i, best, tolerance, allowed, reason))
}

pub(super) fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// `(index, chosen row, best row)`: the best savings (largest threshold on a tie) and the largest
/// threshold whose savings above `zero` are within `tolerance` of the best's.
fn choose(rows: &[SweepRow], tolerance: f64, zero: f64) -> Option<(usize, &SweepRow, &SweepRow)> {
    // `max_by` keeps the last of equal elements: the largest threshold on a tie.
    let best = rows.iter().max_by(|a, b| a.savings.total_cmp(&b.savings))?;
    let floor = floor(best.savings, tolerance, zero);
    let (i, chosen) = rows.iter().enumerate().rev().find(|(_, r)| r.savings >= floor)?;
    Some((i, chosen, best))
}

fn recommendation(
    rows: &[SweepRow],
    i: usize,
    best: &SweepRow,
    tolerance: f64,
    tolerance_tokens: Tokens,
    reason: String,
) -> Recommendation {
    let chosen = &rows[i];
    Recommendation {
        threshold: chosen.threshold,
        savings: chosen.savings,
        best_threshold: best.threshold,
        best_savings: best.savings,
        tolerance,
        tolerance_tokens,
        extra_input_tokens: extra_tokens(chosen, best),
        extra_cost_usd: chosen.cost_usd.zip(best.cost_usd).map(|(c, b)| c - b),
        next: rows.get(i + 1).map(|r| (r.threshold, r.savings)),
        reason,
    }
}
