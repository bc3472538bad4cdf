//! The recommendation in words: the one sentence that answers, and why each runner-up lost, with
//! the trade-off in tokens and cost as well as in percent. Pure: builds strings, prints nothing.

use super::{Candidate, Recommendation, RunnerUp};

/// A signed percentage with one decimal and a true minus sign: "−41.0%", "+3.2%".
pub fn signed_pct(v: f64) -> String {
    let p = v * 100.0;
    if p.abs() < 0.05 {
        "0.0%".to_owned()
    } else if p < 0.0 {
        format!("\u{2212}{:.1}%", -p)
    } else {
        format!("+{p:.1}%")
    }
}

/// A cost in its unit: four decimals in USD, whole numbers of token equivalents otherwise.
pub fn cost(v: f64, unit: &str) -> String {
    if unit == "USD" { format!("${v:.4}") } else { format!("{v:.0}") }
}

/// A token count rounded for a sentence: 61k, 1.2M, or the number under 10,000.
pub fn tokens(n: u64) -> String {
    match n {
        0..10_000 => n.to_string(),
        10_000..1_000_000 => format!("{}k", (n + 500) / 1000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// "`policy` with SUMMARY_THRESHOLD = 512 bytes", or the baseline's words.
pub fn pair(c: &Candidate) -> String {
    match c.threshold {
        None if c.policy == "none" => "no prune and no split (the sessions as recorded)".to_owned(),
        None => format!("{} with nothing split", c.policy),
        Some(t) => format!("{} with SUMMARY_THRESHOLD = {t} bytes", c.policy),
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// The answer in one sentence, against the as-recorded baseline.
pub fn sentence(r: &Recommendation) -> String {
    let Some(rec) = &r.recommendation else {
        if r.requests == 0 {
            return "No recommendation: no request was replayed.".to_owned();
        }
        let smallest = r.candidates.iter().min_by_key(|c| c.peak_context_tokens);
        let tail = smallest.map_or_else(String::new, |c| {
            format!(" (the smallest peak tried: {} tokens, {})", c.peak_context_tokens, pair(c))
        });
        return format!(
            "No recommendation: no pair tried meets the constraints, a peak context within {} tokens{tail}.",
            r.window
        );
    };
    let (pick, base) = (&rec.pick, &rec.baseline);
    let over = format!("over {}, {}", plural(r.conversations, "conversation"), plural(r.requests, "request"));
    let unit = if r.cost_unit == "USD" { String::new() } else { format!(" {}", r.cost_unit) };
    let peak = format!("peak context {} of {}", tokens(pick.peak_context_tokens), tokens(r.window));
    if pick.threshold.is_none() && pick.policy == "none" {
        return format!(
            "Ship {}: no pair tried that meets the constraints costs less ({}{unit} {over}); {peak}.",
            pair(pick),
            cost(base.cost, &r.cost_unit)
        );
    }
    format!(
        "Ship {}: {} input tokens, {} cost ({} \u{2192} {}{unit} {over}); {peak}.",
        pair(pick),
        signed_pct(-pick.savings),
        signed_pct(pick.cost_change),
        cost(base.cost, &r.cost_unit),
        cost(pick.cost, &r.cost_unit),
    )
}

/// Why `c` lost to `chosen`: the constraint it breaks, or what it costs more, in the unit, in
/// percent and in tokens.
pub fn runner_up(c: &Candidate, chosen: &Candidate, unit: &str, window: u64) -> RunnerUp {
    let extra_cost = c.cost - chosen.cost;
    let extra_tokens = c.input_tokens as i64 - chosen.input_tokens as i64;
    let relative = if chosen.cost == 0.0 { 0.0 } else { extra_cost / chosen.cost };
    let tokens_said = match extra_tokens {
        0 => "the same input tokens".to_owned(),
        n if n > 0 => format!("{n} more input tokens"),
        n => format!("{} fewer input tokens", -n),
    };
    let reason = if c.peak_context_tokens > window {
        format!("its peak context, {} tokens, exceeds the window of {window}", c.peak_context_tokens)
    } else if !c.meets_constraints {
        let share = c.reuse_share.map_or_else(String::new, |s| format!(" ({:.1}%)", s * 100.0));
        format!("its reuse share{share} exceeds the bound")
    } else {
        format!("costs {} more ({}), with {tokens_said}", cost(extra_cost, unit), signed_pct(relative))
    };
    RunnerUp { policy: c.policy.clone(), threshold: c.threshold, extra_cost, extra_tokens, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_carry_their_sign_and_round_to_zero_without_one() {
        assert_eq!(signed_pct(-0.41), "\u{2212}41.0%");
        assert_eq!(signed_pct(0.032), "+3.2%");
        assert_eq!(signed_pct(-0.0004), "0.0%");
    }

    #[test]
    fn token_counts_are_rounded_for_a_sentence() {
        assert_eq!(tokens(9770), "9770");
        assert_eq!(tokens(61_499), "61k");
        assert_eq!(tokens(200_000), "200k");
        assert_eq!(tokens(1_250_000), "1.2M");
    }
}
