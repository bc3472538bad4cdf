//! The price of the summarisation calls compaction policies make (docs/compaction.md), added to a
//! request's cost by [`super::cost::cost_of_run`]: the call sends the context at that point (its
//! prefix, cached by the previous request, is read from the cache on a warm cache; the rest and
//! the summarisation instructions are written) and returns the summary, priced at the output
//! price. The request after it then writes its whole new context (the replay gives it no
//! previous context, so the cost model counts it cold).
//!
//! Output is priced relative to uncached input by the providers' list prices: Anthropic's output
//! is 5× its input on every current model (Sonnet $3/$15, Opus $5/$25, Haiku $1/$5 per million,
//! platform.claude.com/docs/en/about-claude/pricing), OpenAI's GPT-5 8× ($1.25/$10,
//! developers.openai.com/api/docs/pricing); with no cache (`none`) every token is 1; with explicit
//! USD prices, which give no output price, output is taken at Anthropic's 5× the input price.
//! Pure: no I/O.

use super::cost::{CacheModel, Prices};
use crate::result::RequestRow;

/// Price of an output token, in the unit of `prices`.
pub fn output_price(prices: &Prices) -> f64 {
    let ratio = match prices.name.as_str() {
        "openai" => 8.0,
        "none" => 1.0,
        _ => 5.0,
    };
    ratio * prices.input
}

/// The cost of the summarisation call made before `row`'s request (0 without one).
pub fn summarization_cost(row: &RequestRow, model: &CacheModel) -> f64 {
    if row.summarization_input_tokens == 0 {
        return 0.0;
    }
    let expired = matches!((model.ttl_ms, row.gap_ms), (Some(ttl), Some(gap)) if gap > ttl);
    let read = if expired { 0 } else { row.summarization_cached_tokens.min(row.summarization_input_tokens) };
    let written = row.summarization_input_tokens - read;
    let p = &model.prices;
    p.cost(read, written) + row.summarization_output_tokens as f64 * output_price(p) / p.per_tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compacted(input: u64, cached: u64, output: u64, gap_ms: Option<i64>) -> RequestRow {
        RequestRow {
            summarization_input_tokens: input,
            summarization_cached_tokens: cached,
            summarization_output_tokens: output,
            gap_ms,
            ..RequestRow::default()
        }
    }

    #[test]
    fn a_warm_summarisation_reads_its_prefix_and_pays_output_at_five_times_input() {
        let model = CacheModel::default();
        // 90k read at 0.1, 10k written at 1.25, 3k output at 5.
        let cost = summarization_cost(&compacted(100_000, 90_000, 3_000, Some(1_000)), &model);
        assert!((cost - (9_000.0 + 12_500.0 + 15_000.0)).abs() < 1e-6, "{cost}");
    }

    #[test]
    fn past_the_ttl_the_whole_input_is_written_and_no_call_costs_nothing() {
        let model = CacheModel::default();
        let cost = summarization_cost(&compacted(100_000, 90_000, 0, Some(600_000)), &model);
        assert!((cost - 125_000.0).abs() < 1e-6, "{cost}");
        assert_eq!(summarization_cost(&RequestRow::default(), &model), 0.0);
    }
}
